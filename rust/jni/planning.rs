//! The driver's native calls, as the Python data source makes them through
//! `kafkalog._native` (`segments`, `list_offsets`, `plan`): the core does discovery
//! (`read/files.rs`), ListOffsets (`log/offsets.rs`) and work items (`log/plan.rs`); the Java
//! side keeps only Spark's meaning of its options. Each takes and returns JSON.

use super::errors::{bad_request, Failure, ThrowKafkaLog};
use super::json::{array, flag, opt_i64, opt_str, opt_u64, parse, string_map, tuple, Request};
use crate::error::Error;
use crate::format::batch::{CrcPolicy, DecodeOptions, DEFAULT_MAX_DECOMPRESSED_SIZE};
use crate::log::bounds::Bounds;
use crate::log::discover::{by_partition, SegmentFile};
use crate::log::origin::Origin;
use crate::log::plan::{plan_items, WorkItem};
use crate::log::visibility::Visibility;
use crate::spark::common::Raw;
use crate::spark::selection::Subscription;
use crate::storage::tiered::Tiered;
use crate::storage::{Router, Storage};
use jni::objects::{JClass, JString};
use jni::EnvUnowned;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// Where a request reads from: its `storage` options (object stores, tiered storage's keys),
/// as `kafkalog.read`'s `storage_options`.
pub(super) fn storage_of(r: &Request) -> Result<Arc<dyn Storage>, Failure> {
    Ok(storage_from(string_map(r, "storage")?))
}

/// The storage of `storage` options (object stores, tiered storage's keys).
pub(super) fn storage_from(options: BTreeMap<String, String>) -> Arc<dyn Storage> {
    let mut options: Vec<(String, String)> = options
        .into_iter()
        .filter(|(k, _)| k != crate::write::lease::LEASE_OPTION)
        .collect();
    let tiered = Tiered::from_options(&mut options).and_then(|keys| {
        Tiered::settings_from_options(&mut options).map(|settings| (keys, settings))
    });
    let inner: Arc<dyn Storage> = Arc::new(Router::new(options.into_iter().collect()));
    match tiered {
        Ok((keys, settings)) => Arc::new(Tiered::new(inner, keys).with_settings(settings)),
        Err(err) => Arc::new(Tiered::failing(inner, err)),
    }
}

fn visibility_of(r: &Request) -> Result<Visibility, Failure> {
    let name = opt_str(r.get("visibility"), "visibility")?.unwrap_or("consumer");
    Ok(Visibility::from_name(name)?)
}

fn decode_options(r: &Request) -> Result<DecodeOptions, Failure> {
    let max = opt_u64(r.get("max_decompressed_size"), "max_decompressed_size")?
        .map_or(DEFAULT_MAX_DECOMPRESSED_SIZE, |m| m as usize);
    Ok(DecodeOptions {
        crc: CrcPolicy::Ignore,
        max_decompressed_size: max,
    })
}

/// `[[path, topic, partition, size], ...]` as segment files.
fn segments_of(r: &Request) -> Result<Vec<SegmentFile>, Failure> {
    array(r, "segments")?
        .iter()
        .map(|s| {
            let s = tuple(s, 4, "segment")?;
            let path = opt_str(Some(&s[0]), "segment path")?
                .ok_or_else(|| bad_request("segment without a path"))?;
            let origin = origin_of(&s[1], &s[2])?;
            Ok(SegmentFile {
                size: opt_u64(Some(&s[3]), "segment size")?,
                ..SegmentFile::new(PathBuf::from(path), origin)
            })
        })
        .collect()
}

fn origin_of(topic: &Value, partition: &Value) -> Result<Origin, Failure> {
    Ok(Origin {
        topic: opt_str(Some(topic), "topic")?.map(str::to_owned),
        partition: opt_i64(Some(partition), "partition")?
            .map(|p| i32::try_from(p).map_err(|_| bad_request("partition out of range")))
            .transpose()?,
    })
}

fn origin_json(o: &Origin) -> (Value, Value) {
    (json!(o.topic), json!(o.partition))
}

/// The work item as the Java side keeps it: `[path, start, end, topic, partition,
/// base_offset, size, start_offset, end_offset, aborted]`.
pub(super) fn item_json(i: &WorkItem) -> Value {
    let (topic, partition) = origin_json(&i.origin);
    json!([
        i.path.to_string_lossy(),
        i.start,
        i.end,
        topic,
        partition,
        i.base_offset,
        i.size,
        i.start_offset,
        i.end_offset,
        i.aborted
    ])
}

/// The work item of [`item_json`]'s form.
pub(super) fn item_of(v: &Value) -> Result<WorkItem, Failure> {
    let f = tuple(v, 10, "work item")?;
    let path = opt_str(Some(&f[0]), "item path")?.ok_or_else(|| bad_request("item path"))?;
    let aborted = match &f[9] {
        Value::Null => None,
        Value::Array(a) => Some(
            a.iter()
                .map(|t| {
                    let t = tuple(t, 3, "aborted transaction")?;
                    let n = |v: &Value| {
                        opt_i64(Some(v), "aborted")?.ok_or_else(|| bad_request("aborted"))
                    };
                    Ok((n(&t[0])?, n(&t[1])?, n(&t[2])?))
                })
                .collect::<Result<Vec<_>, Failure>>()?,
        ),
        _ => return Err(bad_request("aborted is not an array")),
    };
    Ok(WorkItem {
        path: PathBuf::from(path),
        start: opt_u64(Some(&f[1]), "start")?.ok_or_else(|| bad_request("item start"))?,
        end: opt_u64(Some(&f[2]), "end")?,
        origin: origin_of(&f[3], &f[4])?,
        base_offset: opt_i64(Some(&f[5]), "base_offset")?,
        size: opt_u64(Some(&f[6]), "size")?.unwrap_or(0),
        start_offset: opt_i64(Some(&f[7]), "start_offset")?,
        end_offset: opt_i64(Some(&f[8]), "end_offset")?,
        aborted,
    })
}

/// The logs under `paths` that the options' subscription takes (`options`: the data source's
/// options), one group of files per log the core sees (a partition's remote and local segments
/// are one); with what resolving the paths noted.
pub(super) fn discover_files(
    storage: &Arc<dyn Storage>,
    paths: &[String],
    options: &Raw,
) -> Result<(Vec<Vec<SegmentFile>>, Vec<String>), Failure> {
    let subscription = Subscription::of(options)?;
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    if paths.is_empty() {
        return Err(Error::invalid_argument("no path given").into());
    }
    let (files, notes) = crate::read::files::resolve(storage, &paths)?;
    let mut groups: Vec<Vec<SegmentFile>> = by_partition(files)
        .into_iter()
        .filter(|g| subscription.takes(g[0].origin.topic.as_deref(), g[0].origin.partition))
        .collect();
    // A typed read leaves out the registry's storage topic and Kafka's own (the core's rule).
    if let Some(values) = crate::spark::common::values(options)? {
        let mut found: Vec<&str> = Vec::new();
        for t in groups.iter().filter_map(|g| g[0].origin.topic.as_deref()) {
            if !found.contains(&t) {
                found.push(t);
            }
        }
        let left_out = subscription.typed_left_out(&found, values.schemas_topic());
        groups.retain(|g| {
            g[0].origin
                .topic
                .as_deref()
                .is_none_or(|t| !left_out.iter().any(|l| l == t))
        });
    }
    Ok((groups, notes))
}

/// A discovery request: where, which paths, the data source's options (its subscription).
pub(super) struct Discover {
    storage: Arc<dyn Storage>,
    paths: Vec<String>,
    options: Raw,
}

/// `{"paths": [...], "options": {...}, "storage": {...}}`, checked.
pub(super) fn discover_request(r: &Request) -> Result<Discover, Failure> {
    let storage = storage_of(r)?;
    let paths: Vec<String> = array(r, "paths")?
        .iter()
        .map(|p| opt_str(Some(p), "path").map(|p| p.unwrap_or_default().to_owned()))
        .collect::<Result<_, _>>()?;
    let options = match r.get("options") {
        None | Some(Value::Null) => Raw::default(),
        Some(v) => Raw::from_json(v)?,
    };
    // The subscription checked before any file is listed.
    Subscription::of(&options)?;
    Ok(Discover {
        storage,
        paths,
        options,
    })
}

/// `{"paths": [...], "options": {...}, "storage": {...}}` -> `{"partitions": [{"topic",
/// "partition", "segments": [[path, size], ...]}, ...], "notes": [...]}`: the logs under the
/// paths that the options' subscription takes, one entry per log the core sees.
fn discover(r: &Request) -> Result<Value, Failure> {
    let q = discover_request(r)?;
    let (groups, notes) = discover_files(&q.storage, &q.paths, &q.options)?;
    let partitions: Vec<Value> = groups
        .into_iter()
        .map(|group| {
            let (topic, partition) = origin_json(&group[0].origin);
            let segments: Vec<Value> = group
                .iter()
                .map(|f| json!([f.path.to_string_lossy(), f.size]))
                .collect();
            json!({"topic": topic, "partition": partition, "segments": segments})
        })
        .collect();
    Ok(json!({"partitions": partitions, "notes": notes}))
}

/// A ListOffsets request.
pub(super) struct ListOffsets {
    storage: Arc<dyn Storage>,
    files: Vec<SegmentFile>,
    timestamps: HashMap<Origin, i64>,
    read_committed: bool,
    visibility: Visibility,
    decode: DecodeOptions,
}

/// `{"segments", "read_committed", "visibility", "timestamps": [[topic, partition, ts]],
/// "max_decompressed_size", "storage"}`, checked.
pub(super) fn list_offsets_request(r: &Request) -> Result<ListOffsets, Failure> {
    let mut timestamps = HashMap::new();
    for t in array(r, "timestamps")? {
        let t = tuple(t, 3, "timestamp")?;
        let ts = opt_i64(Some(&t[2]), "timestamp")?.ok_or_else(|| bad_request("timestamp"))?;
        timestamps.insert(origin_of(&t[0], &t[1])?, ts);
    }
    Ok(ListOffsets {
        storage: storage_of(r)?,
        files: segments_of(r)?,
        timestamps,
        read_committed: flag(r, "read_committed")?,
        visibility: visibility_of(r)?,
        decode: decode_options(r)?,
    })
}

/// `{"segments", "read_committed", "visibility", "timestamps": [[topic, partition, ts]],
/// "max_decompressed_size", "storage"}` -> `[{"topic", "partition", "earliest", "latest",
/// "for_timestamp", "gaps"}]`, one per partition in order.
fn list_offsets(r: &Request) -> Result<Value, Failure> {
    let q = list_offsets_request(r)?;
    let timestamp_of = |o: &Origin| q.timestamps.get(o).copied();
    let (parts, _issues) = crate::log::offsets::list_offsets(
        q.storage.as_ref(),
        q.files,
        q.read_committed,
        q.visibility,
        &timestamp_of,
        &q.decode,
    )?;
    Ok(Value::Array(
        parts
            .into_iter()
            .map(|p| {
                let (topic, partition) = origin_json(&p.origin);
                json!({"topic": topic, "partition": partition, "earliest": p.earliest,
                    "latest": p.latest, "for_timestamp": p.for_timestamp, "gaps": p.gaps})
            })
            .collect(),
    ))
}

/// A request for work items.
pub(super) struct Plan {
    storage: Arc<dyn Storage>,
    files: Vec<SegmentFile>,
    ranges: HashMap<Origin, (Option<i64>, Option<i64>)>,
    read_committed: bool,
    visibility: Visibility,
    target_bytes: Option<u64>,
    decode: DecodeOptions,
}

/// `{"segments", "bounds": [[topic, partition, start, end]], "read_committed", "visibility",
/// "target_bytes", "max_decompressed_size", "storage"}`, checked.
pub(super) fn plan_request(r: &Request) -> Result<Plan, Failure> {
    let target_bytes = opt_u64(r.get("target_bytes"), "target_bytes")?;
    if target_bytes == Some(0) {
        return Err(Error::invalid_argument("targetBytes must be positive").into());
    }
    let mut ranges = HashMap::new();
    for b in array(r, "bounds")? {
        let b = tuple(b, 4, "bounds")?;
        let start = opt_i64(Some(&b[2]), "start")?;
        let end = opt_i64(Some(&b[3]), "end")?;
        ranges.insert(origin_of(&b[0], &b[1])?, (start, end));
    }
    Ok(Plan {
        storage: storage_of(r)?,
        files: segments_of(r)?,
        ranges,
        read_committed: flag(r, "read_committed")?,
        visibility: visibility_of(r)?,
        target_bytes,
        decode: decode_options(r)?,
    })
}

/// `{"segments", "bounds": [[topic, partition, start, end]], "read_committed", "visibility",
/// "target_bytes", "max_decompressed_size", "storage"}` -> `{"items": [...], "issues":
/// [...]}`: each partition's `[start, end)` as work items of about `target_bytes` of log;
/// a partition without bounds reads nothing.
fn plan(r: &Request) -> Result<Value, Failure> {
    let q = plan_request(r)?;
    let bounds_of = |o: &Origin| -> Bounds {
        let (start, end) = q.ranges.get(o).copied().unwrap_or((Some(0), Some(0)));
        Bounds {
            start_offset: start,
            end_offset: end,
            start_timestamp: None,
            end_timestamp: None,
            read_committed: q.read_committed,
            visibility: q.visibility,
        }
    };
    let files = crate::log::remote_local::merge_remote_and_local(q.storage.as_ref(), q.files)?;
    let (items, issues) = plan_items(
        q.storage.as_ref(),
        files,
        &bounds_of,
        q.target_bytes,
        &q.decode,
    )?;
    let items: Vec<Value> = items.iter().map(item_json).collect();
    let issues: Vec<String> = issues.iter().map(|i| i.message.clone()).collect();
    Ok(json!({"items": items, "issues": issues}))
}

/// `{"ranges": [[start, latest], ...], "limit": n}`: each partition's end offset for a
/// micro-batch of at most `n` offsets (`log/rate_limit.rs`), `[end, ...]`.
pub(super) fn rate_limit(r: &Request) -> Result<Value, Failure> {
    let limit = opt_u64(r.get("limit"), "limit")?.ok_or_else(|| bad_request("limit is missing"))?;
    let mut ranges = Vec::new();
    for x in array(r, "ranges")? {
        let x = tuple(x, 2, "range")?;
        let start = opt_i64(Some(&x[0]), "start")?;
        let latest = opt_i64(Some(&x[1]), "latest")?;
        match (start, latest) {
            (Some(s), Some(l)) => ranges.push((s, l)),
            _ => return Err(bad_request("a range is [start, latest]")),
        }
    }
    Ok(json!(crate::log::rate_limit::rate_limit(&ranges, limit)))
}

/// Runs a JSON-in, JSON-out call.
pub(super) fn call<'local>(
    mut env: EnvUnowned<'local>,
    request: JString<'local>,
    f: fn(&Request) -> Result<Value, Failure>,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, Failure> {
        let text = request.try_to_string(env)?;
        let answer = f(&parse(&text)?)?;
        Ok(env.new_string(answer.to_string())?)
    })
    .resolve::<ThrowKafkaLog>()
}

/// `Native.discover(String)`: see [`discover`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_discover<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    call(env, request, discover)
}

/// `Native.listOffsets(String)`: see [`list_offsets`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_listOffsets<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    call(env, request, list_offsets)
}

/// `Native.plan(String)`: see [`plan`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_plan<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    call(env, request, plan)
}

/// `Native.rateLimit(String)`: see [`rate_limit`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_rateLimit<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    call(env, request, rate_limit)
}
