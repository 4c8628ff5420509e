//! Spark's writes, once for both Spark sources: what a write task does with its rows, and
//! what the driver does when the job (or a streaming query's micro-batch) commits or aborts.
//! The JVM source (`rust/jni/writer.rs`) and the Python data source
//! (`python/kafkalog/spark/writing.py`, through `rust/python/spark_writer.rs`) only move rows
//! and commit messages; the rules are these.
//!
//! **A batch job** (`df.write.format("kafkalog")`): the driver makes the job's staging
//! directory in the target ([`job_staging`]). Each task ([`TaskWriter`]) writes the
//! topic-partitions of its rows as complete partition directories under
//! `<staging>/<task>/`, through the core's writer, and reports them ([`TaskMessage`]). The
//! driver's [`commit`] makes each topic-partition one log (the pieces several tasks wrote
//! appended in Spark's partition order) and publishes it at `<path>/<topic>-<partition>`
//! atomically (a rename, or a manifest in an object store); a topic-partition already there is
//! appended to (`mode("append")`, as a producer continues a log) or replaced
//! (`mode("overwrite")`; topic-partitions not written are left alone). [`abort`] and the end
//! of a commit remove the staging directory: a reader sees no partition of a job before its
//! commit, and none of a job that failed.
//!
//! **A streaming query** (`writeStream.format("kafkalog")`): each task stages its rows in a
//! staging directory of its own, and [`commit_stream`] appends each partition's staged batches
//! atomically, marked with the query's writer id and the micro-batch (epoch) id, so a
//! micro-batch Spark replays after a failure is not appended twice.
//!
//! **Rows.** `topic` and `partition` columns (else the `topic`/`partition` options; never
//! null) place each row; names are checked as Kafka checks them before anything is written.
//! `key` and `value` are binary or string (written as UTF-8), or typed columns encoded as
//! `keyFormat`/`valueFormat` say ([`ValueEncoder`]). A task's rows of one topic-partition are
//! written in `offset` order (input order without that column). Without the batch-metadata
//! columns, records are batched afresh, keeping their timestamps (a `timestampType` column is
//! then dropped: `timestampType=LogAppendTime` asks for append times).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use serde_json::{json, Value};

use crate::arrow::schema::Column;
use crate::error::{Error, Result};
use crate::format::segment::partition_dir_name;
use crate::read::values::ValueArgs;
use crate::spark::write_options::SparkWriteOptions;
use crate::write::append::{append_remote, append_staged, AppendOptions, RemoteAppendOptions};
use crate::write::placement;
use crate::write::target::{remote, PartitionTarget};
use crate::write::values::ValueEncoder;
use crate::write::writer::WriteOptions;

/// One topic-partition a task wrote: a complete partition directory in staging.
#[derive(Clone, Debug, PartialEq)]
pub struct Staged {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i64,
    /// The partition directory in staging.
    pub dir: PathBuf,
    /// Records written.
    pub records: u64,
}

/// What one task reports to the driver (Spark's commit message).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskMessage {
    /// The topic-partitions written.
    pub partitions: Vec<Staged>,
    /// (streaming) the task's own staging directory.
    pub staging: Option<PathBuf>,
}

impl TaskMessage {
    /// As JSON: `{"partitions": [[topic, partition, dir, records], ...], "staging": ...}`.
    pub fn to_json(&self) -> Value {
        json!({
            "partitions": self.partitions.iter().map(|s| json!([
                s.topic, s.partition, s.dir.to_string_lossy(), s.records
            ])).collect::<Vec<_>>(),
            "staging": self.staging.as_ref().map(|s| s.to_string_lossy().into_owned()),
        })
    }

    /// From [`Self::to_json`]'s form.
    pub fn from_json(v: &Value) -> Result<Self> {
        let bad =
            || Error::invalid_argument(format!("not a kafkalog writer's commit message: {v}"));
        let partitions = v
            .get("partitions")
            .and_then(Value::as_array)
            .ok_or_else(bad)?
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([t, n, d, r]) => Some(Staged {
                    topic: t.as_str()?.to_owned(),
                    partition: n.as_i64()?,
                    dir: PathBuf::from(d.as_str()?),
                    records: r.as_u64()?,
                }),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let staging = match v.get("staging") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(PathBuf::from(s)),
            Some(_) => return Err(bad()),
        };
        Ok(TaskMessage {
            partitions,
            staging,
        })
    }
}

/// A write job, made on the driver from Spark's options and handed to every task and to the
/// commit (as JSON: Spark's options, whether it streams, a batch job's staging directory).
#[derive(Clone, Debug)]
pub struct Job {
    /// Spark's options as given.
    pub raw: BTreeMap<String, String>,
    /// A streaming query's sink (else a batch job).
    pub streaming: bool,
    /// A batch job's staging directory.
    pub staging: Option<PathBuf>,
    /// The options, checked.
    pub options: Arc<SparkWriteOptions>,
    /// The typed-value options with the registry read (on the driver) and carried as schema
    /// rows: tasks never read the registry's storage topic.
    pub values: Option<ValueArgs>,
}

impl Job {
    /// The job of Spark's options: checked (a bad option fails the write before any task
    /// runs); a batch job's staging directory made, a stream's target directory.
    pub fn create(raw: BTreeMap<String, String>, streaming: bool) -> Result<Job> {
        let options = Arc::new(SparkWriteOptions::parse(&raw, streaming)?);
        let values = match &options.values {
            Some(args) => Some(resolve_values(args, &options)?),
            None => None,
        };
        let staging = if streaming {
            prepare_stream(&options)?;
            None
        } else {
            Some(job_staging(&options, "spark")?)
        };
        Ok(Job {
            raw,
            streaming,
            staging,
            options,
            values,
        })
    }

    /// As JSON, for the tasks and the commit.
    pub fn to_json(&self) -> Value {
        json!({
            "options": self.raw,
            "streaming": self.streaming,
            "staging": self.staging.as_ref().map(|s| s.to_string_lossy().into_owned()),
            "values": self.values.as_ref().map(ValueArgs::to_json),
        })
    }

    /// From [`Self::to_json`]'s form.
    pub fn from_json(v: &Value) -> Result<Job> {
        let bad = |what: &str| Error::invalid_argument(format!("a kafkalog write job: {what}"));
        let raw = match v.get("options") {
            Some(Value::Object(o)) => o
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    _ => Err(bad("an option that is not a string")),
                })
                .collect::<Result<BTreeMap<_, _>>>()?,
            _ => return Err(bad("no options")),
        };
        let streaming = v.get("streaming").and_then(Value::as_bool).unwrap_or(false);
        let staging = match v.get("staging") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(PathBuf::from(s)),
            Some(_) => return Err(bad("staging")),
        };
        if !streaming && staging.is_none() {
            return Err(bad("a batch job without its staging directory"));
        }
        let values = match v.get("values") {
            None | Some(Value::Null) => None,
            Some(v) => Some(ValueArgs::from_json(v)?),
        };
        let mut options = SparkWriteOptions::parse(&raw, streaming)?;
        options.values = values.clone(); // resolved on the driver
        Ok(Job {
            options: Arc::new(options),
            raw,
            streaming,
            staging,
            values,
        })
    }

    /// A task's writer (with the job's typed-value encoder).
    pub fn task(&self) -> Result<TaskWriter> {
        let values = match &self.values {
            Some(args) => {
                let storage: Arc<dyn crate::storage::Storage> =
                    Arc::new(crate::storage::Router::default());
                let (registry, _) = args.registry(&storage)?;
                Some(ValueEncoder::new(args.options()?, registry))
            }
            None => None,
        };
        match &self.staging {
            Some(staging) if !self.streaming => {
                Ok(TaskWriter::batch(self.options.clone(), staging, values))
            }
            _ => TaskWriter::stream(self.options.clone(), values),
        }
    }

    fn staging(&self) -> Result<&Path> {
        self.staging
            .as_deref()
            .ok_or_else(|| Error::invalid_argument("a streaming sink has no job to commit"))
    }

    /// Commits a batch job (see [`commit`]).
    pub fn commit(&self, overwrite: bool, messages: &[TaskMessage]) -> Result<()> {
        commit(&self.options, self.staging()?, overwrite, messages)
    }

    /// Aborts a batch job (see [`abort`]).
    pub fn abort(&self) -> Result<()> {
        abort(&self.options, self.staging()?)
    }

    /// Commits a streaming micro-batch (see [`commit_stream`]).
    pub fn commit_stream(&self, epoch: i64, messages: &[TaskMessage]) -> Result<()> {
        commit_stream(&self.options, epoch, messages)
    }

    /// Aborts a streaming micro-batch (see [`abort_stream`]).
    pub fn abort_stream(&self, messages: &[TaskMessage]) {
        abort_stream(&self.options, messages)
    }
}

/// The typed-value options of a write resolved on the driver: the registry read once (from
/// where `schemaRegistry` says, with the write's storage options) and carried as schema rows.
fn resolve_values(args: &ValueArgs, options: &SparkWriteOptions) -> Result<ValueArgs> {
    let storage: Arc<dyn crate::storage::Storage> = Arc::new(crate::storage::Router::new(
        options
            .storage
            .iter()
            .filter(|(k, _)| k.as_str() != crate::write::lease::LEASE_OPTION)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ));
    args.options()?; // the formats checked here, not in every task
    let (registry, _) = args.registry(&storage)?;
    let mut resolved = args.clone();
    resolved.schemas_path = None;
    if let Some(r) = &registry {
        resolved.schemas = Some(r.rows().map(crate::read::values::row).collect());
    }
    Ok(resolved)
}

/// Commit messages as JSON (a list; null for a task that sent none).
pub fn messages_from_json(v: &Value) -> Result<Vec<TaskMessage>> {
    let Value::Array(list) = v else {
        return Err(Error::invalid_argument("commit messages: not a JSON list"));
    };
    list.iter()
        .filter(|m| !m.is_null())
        .map(TaskMessage::from_json)
        .collect()
}

/// `<root>/<topic>-<partition>`, the names checked as Kafka checks them (a name from data
/// never leaves `root`).
pub fn partition_target(root: &Path, topic: &str, partition: i64) -> Result<PathBuf> {
    if crate::storage::is_local(root) {
        placement::partition_dir(root, topic, partition)
    } else {
        Ok(root.join(partition_dir_name(topic, partition)?))
    }
}

/// A job's (or a streaming task's) staging directory in the target (`tag`: `spark` for batch
/// jobs, `stream` for streaming tasks); in an object store only a name.
pub fn job_staging(options: &SparkWriteOptions, tag: &str) -> Result<PathBuf> {
    if !options.remote {
        return placement::create_job_staging(&options.path, tag);
    }
    crate::format::segment::validate_topic(tag)?;
    Ok(options
        .path
        .join(crate::format::segment::job_staging_dir_name(
            tag,
            &placement::unique(),
        )))
}

/// Removes a staging directory (local, or every object under a prefix); one already gone is
/// not an error.
pub fn remove_staging(options: &SparkWriteOptions, dir: &Path) -> Result<()> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !crate::format::segment::is_staging_dir_name(&name) {
        return Err(Error::invalid_argument("not a kafkalog staging directory").with_path(dir));
    }
    if !options.remote {
        return match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(e, dir)),
            _ => Ok(()),
        };
    }
    let (storage, _) = remote(options.storage_options())?;
    crate::write::publish::remove_prefix(storage.as_ref(), dir)
}

/// Rows of one batch placed: each row's topic-partition, and the columns written.
struct Placed {
    topics: StringArray,
    partitions: Vec<i64>,
    data: RecordBatch,
}

/// A write task: its rows in, complete partition directories in staging out.
pub struct TaskWriter {
    options: Arc<SparkWriteOptions>,
    values: Option<ValueEncoder>,
    streaming: bool,
    /// Where the task's partition directories go.
    dir: PathBuf,
    /// (streaming) the task's own staging directory, removed if the task fails.
    staging: Option<PathBuf>,
    /// Rows held until [`Self::finish`] (rows not grouped by topic-partition).
    held: Vec<Placed>,
    /// (grouped) the topic-partition being written.
    current: Option<((String, i64), PartitionTarget, PathBuf)>,
    done: HashSet<(String, i64)>,
    staged: Vec<Staged>,
}

impl TaskWriter {
    /// A task of a batch job whose staging directory is `job_staging`: it writes under
    /// `<job_staging>/<unique>/`.
    pub fn batch(
        options: Arc<SparkWriteOptions>,
        job_staging: &Path,
        values: Option<ValueEncoder>,
    ) -> Self {
        let dir = job_staging.join(placement::unique());
        Self::new(options, dir, None, values, false)
    }

    /// A task of a streaming query's micro-batch: it makes a staging directory of its own.
    pub fn stream(options: Arc<SparkWriteOptions>, values: Option<ValueEncoder>) -> Result<Self> {
        let staging = job_staging(&options, "stream")?;
        Ok(Self::new(
            options,
            staging.clone(),
            Some(staging),
            values,
            true,
        ))
    }

    fn new(
        options: Arc<SparkWriteOptions>,
        dir: PathBuf,
        staging: Option<PathBuf>,
        values: Option<ValueEncoder>,
        streaming: bool,
    ) -> Self {
        TaskWriter {
            options,
            values: values.filter(ValueEncoder::any),
            streaming,
            dir,
            staging,
            held: Vec::new(),
            current: None,
            done: HashSet::new(),
            staged: Vec::new(),
        }
    }

    /// Takes the rows of `batch`. Rows arriving grouped by topic-partition (`rowsGrouped`) are
    /// written as they come; others are held (checked) until [`Self::finish`].
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let placed = self.place(batch)?;
        if self.options.grouped && !self.streaming {
            self.write_runs(placed)
        } else {
            self.held.push(placed);
            Ok(())
        }
    }

    /// Writes what is held, completes every partition directory, and reports them.
    pub fn finish(mut self) -> Result<TaskMessage> {
        let result = self.finish_rows();
        if result.is_err() {
            self.remove_own_staging();
        }
        result
    }

    fn finish_rows(&mut self) -> Result<TaskMessage> {
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            self.write_held(held)?;
        }
        self.close_current()?;
        Ok(TaskMessage {
            partitions: std::mem::take(&mut self.staged),
            staging: self.staging.clone(),
        })
    }

    /// Gives up: nothing the task wrote is left (its partition directories were staged only).
    pub fn abort(mut self) {
        self.current = None;
        self.remove_own_staging();
    }

    fn remove_own_staging(&mut self) {
        if let Some(staging) = self.staging.take() {
            let _ = remove_staging(&self.options, &staging);
        }
    }

    /// The rows' topic-partitions (checked as Kafka checks names) and the columns to write.
    fn place(&self, batch: &RecordBatch) -> Result<Placed> {
        let n = batch.num_rows();
        let o = &self.options;
        let topics = match batch.column_by_name("topic") {
            Some(c) => arrow_cast::cast(c, &DataType::Utf8)
                .map_err(|e| Error::invalid_argument(format!("column topic: {e}")))?
                .as_string::<i32>()
                .clone(),
            None => {
                let topic = o.topic.as_deref().ok_or_else(|| {
                    Error::invalid_argument("the rows have no 'topic' column and no topic option")
                })?;
                StringArray::from(vec![topic; n])
            }
        };
        let partitions: Vec<i64> = match batch.column_by_name("partition") {
            Some(c) => {
                let c = arrow_cast::cast(c, &DataType::Int64)
                    .map_err(|e| Error::invalid_argument(format!("column partition: {e}")))?;
                if c.null_count() > 0 {
                    return Err(Error::invalid_argument(
                        "a row to write has a null partition",
                    ));
                }
                c.as_primitive::<Int64Type>().values().to_vec()
            }
            None => {
                let p = o.partition.ok_or_else(|| {
                    Error::invalid_argument(
                        "the rows have no 'partition' column and no partition option",
                    )
                })?;
                vec![p; n]
            }
        };
        if topics.null_count() > 0 {
            return Err(Error::invalid_argument("a row to write has a null topic"));
        }
        let mut checked: HashSet<(&str, i64)> = HashSet::new();
        for (i, &p) in partitions.iter().enumerate() {
            if checked.insert((topics.value(i), p)) {
                partition_dir_name(topics.value(i), p)?;
            }
        }
        let data = self.columns(batch)?;
        Ok(Placed {
            topics,
            partitions,
            data,
        })
    }

    /// The columns written: all but `topic` and `partition`; in a stream, no `offset` nor
    /// batch metadata (records get the next offsets, magic 2 batches); `timestampType` only
    /// with the batch metadata; `key` and `value` bytes (text cast; typed columns need their
    /// format); a missing `key` null.
    fn columns(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let metadata: HashSet<&str> = Column::METADATA.iter().map(|c| c.name()).collect();
        let keep_timestamp_type = names.contains(&"baseOffset") && !self.streaming;
        let mut fields = Vec::new();
        let mut columns: Vec<ArrayRef> = Vec::new();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let name = field.name().as_str();
            let dropped = name == "topic"
                || name == "partition"
                || (name == "timestampType" && !keep_timestamp_type)
                || (self.streaming && (name == "offset" || metadata.contains(name)));
            if dropped {
                continue;
            }
            let mut column = column.clone();
            if name == "key" || name == "value" {
                let typed = self
                    .values
                    .as_ref()
                    .is_some_and(|v| v.format(name) != crate::values::formats::Format::Binary);
                match column.data_type() {
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View if !typed => {
                        column = arrow_cast::cast(&column, &DataType::Binary)
                            .map_err(|e| Error::invalid_argument(format!("{name}: {e}")))?;
                    }
                    DataType::Binary
                    | DataType::LargeBinary
                    | DataType::BinaryView
                    | DataType::FixedSizeBinary(_)
                    | DataType::Null
                    | DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View => {}
                    other if !typed => {
                        let option = if name == "key" {
                            "keyFormat"
                        } else {
                            "valueFormat"
                        };
                        return Err(Error::invalid_argument(format!(
                            "column {name} is {other}, not bytes or text: write typed {name}s \
                             with {option} (avro) and schemaRegistry"
                        )));
                    }
                    _ => {}
                }
            }
            fields.push(Field::new(name, column.data_type().clone(), true));
            columns.push(column);
        }
        if !names.contains(&"key") {
            fields.push(Field::new("key", DataType::Binary, true));
            columns.push(arrow_array::new_null_array(
                &DataType::Binary,
                batch.num_rows(),
            ));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| Error::invalid_argument(e.to_string()))
    }

    /// Rows grouped by topic-partition: each run written as it comes.
    fn write_runs(&mut self, placed: Placed) -> Result<()> {
        let n = placed.partitions.len();
        let mut start = 0;
        while start < n {
            let key = (placed.topics.value(start), placed.partitions[start]);
            let mut end = start + 1;
            while end < n && (placed.topics.value(end), placed.partitions[end]) == key {
                end += 1;
            }
            let owned = (key.0.to_owned(), key.1);
            let same = matches!(&self.current, Some((k, _, _)) if *k == owned);
            if !same {
                self.close_current()?;
                if !self.done.insert(owned.clone()) {
                    return Err(Error::invalid_argument(format!(
                        "the rows of {}-{} are not together in this task: sort them by topic, \
                         partition and offset first (kafkalog.spark.write does)",
                        owned.0, owned.1
                    )));
                }
                self.open(owned)?;
            }
            let piece = placed.data.slice(start, end - start);
            self.write_piece(&piece)?;
            start = end;
        }
        Ok(())
    }

    /// Held rows: each topic-partition's in offset order (stable: input order otherwise).
    fn write_held(&mut self, held: Vec<Placed>) -> Result<()> {
        let schema = held[0].data.schema();
        if let Some(other) = held.iter().find(|p| p.data.schema() != schema) {
            return Err(Error::invalid_argument(format!(
                "the task's batches differ in their columns: {} and {}",
                schema,
                other.data.schema()
            )));
        }
        let data = arrow_select::concat::concat_batches(&schema, held.iter().map(|p| &p.data))
            .map_err(|e| Error::invalid_argument(e.to_string()))?;
        let mut keys: Vec<(&str, i64)> = Vec::with_capacity(data.num_rows());
        for p in &held {
            for i in 0..p.partitions.len() {
                keys.push((p.topics.value(i), p.partitions[i]));
            }
        }
        let offsets = match data.column_by_name("offset") {
            Some(c) if !self.streaming => Some(
                arrow_cast::cast(c, &DataType::Int64)
                    .map_err(|e| Error::invalid_argument(format!("column offset: {e}")))?,
            ),
            _ => None,
        };
        let offset = |i: usize| {
            offsets
                .as_ref()
                .map(|o| {
                    let o = o.as_primitive::<Int64Type>();
                    if o.is_null(i) {
                        i64::MIN
                    } else {
                        o.value(i)
                    }
                })
                .unwrap_or(0)
        };
        let mut order: Vec<u32> = (0..data.num_rows() as u32).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            keys[a].cmp(&keys[b]).then(offset(a).cmp(&offset(b)))
        });
        let mut start = 0;
        while start < order.len() {
            let key = keys[order[start] as usize];
            let mut end = start + 1;
            while end < order.len() && keys[order[end] as usize] == key {
                end += 1;
            }
            let indices = arrow_array::UInt32Array::from(order[start..end].to_vec());
            let piece = arrow_select::take::take_record_batch(&data, &indices)
                .map_err(|e| Error::invalid_argument(e.to_string()))?;
            self.open((key.0.to_owned(), key.1))?;
            self.write_piece(&piece)?;
            self.close_current()?;
            start = end;
        }
        Ok(())
    }

    fn open(&mut self, key: (String, i64)) -> Result<()> {
        let target = partition_target(&self.dir, &key.0, key.1)?;
        let options = WriteOptions {
            overwrite: false,
            ..self.options.write.clone()
        };
        let writer = PartitionTarget::create(&target, options, self.options.storage_options())?;
        self.current = Some((key, writer, target));
        Ok(())
    }

    fn write_piece(&mut self, piece: &RecordBatch) -> Result<()> {
        let Some(((topic, _), writer, target)) = self.current.as_mut() else {
            return Err(Error::invalid_argument("no partition open"));
        };
        let encoded;
        let batch = match self.values.as_mut() {
            Some(v) => {
                let unshaped = from_spark_shapes(v, piece, topic)?;
                encoded = v.encode_batch(&unshaped, Some(topic))?;
                &encoded
            }
            None => piece,
        };
        writer.write(batch).map_err(|e| e.with_path(target))
    }

    fn close_current(&mut self) -> Result<()> {
        if let Some(((topic, partition), writer, dir)) = self.current.take() {
            let summary = writer.finish()?;
            self.staged.push(Staged {
                topic,
                partition,
                dir,
                records: summary.segments.iter().map(|s| s.records).sum(),
            });
        }
        Ok(())
    }
}

/// The append options of a job's writes.
fn append_options(options: &SparkWriteOptions) -> AppendOptions {
    AppendOptions {
        segment_bytes: options.write.segment_bytes,
        index_interval_bytes: options.write.index_interval_bytes,
        fsync: options.write.fsync,
    }
}

/// Appends the batches of the staged directories `staged` to `target` (see
/// `write::append`), locally or in an object store.
fn append(
    options: &SparkWriteOptions,
    target: &Path,
    staged: &[PathBuf],
    mark: Option<(&str, i64)>,
) -> Result<()> {
    let append = append_options(options);
    if !options.remote {
        append_staged(target, staged, mark, &append)?;
        return Ok(());
    }
    let (storage, lease) = remote(options.storage_options())?;
    let remote = RemoteAppendOptions {
        max_rewrite_bytes: options.max_rewrite_bytes,
        lease,
    };
    append_remote(storage, target, staged, mark, &append, &remote)?;
    Ok(())
}

/// Commits a batch job: every task's topic-partitions published at `<path>/<topic>-<partition>`
/// (see the module's documentation); the job's staging directory removed in any case.
pub fn commit(
    options: &SparkWriteOptions,
    staging: &Path,
    overwrite: bool,
    messages: &[TaskMessage],
) -> Result<()> {
    let result = commit_pieces(options, overwrite, messages);
    let _ = remove_staging(options, staging); // else left for a later write's cleanup
    result
}

fn commit_pieces(
    options: &SparkWriteOptions,
    overwrite: bool,
    messages: &[TaskMessage],
) -> Result<()> {
    // Spark passes the messages in its partitions' order: a topic-partition whose rows
    // several tasks wrote is made one log in that order.
    let mut pieces: Vec<((String, i64), Vec<PathBuf>)> = Vec::new();
    let mut at: BTreeMap<(String, i64), usize> = BTreeMap::new();
    for m in messages {
        for s in &m.partitions {
            let key = (s.topic.clone(), s.partition);
            let i = *at.entry(key.clone()).or_insert_with(|| {
                pieces.push((key, Vec::new()));
                pieces.len() - 1
            });
            pieces[i].1.push(s.dir.clone());
        }
    }
    let targets = pieces
        .iter()
        .map(|((t, p), _)| partition_target(&options.path, t, *p))
        .collect::<Result<Vec<_>>>()?;
    let there: HashSet<PathBuf> = if overwrite {
        HashSet::new()
    } else if options.remote {
        let (storage, _) = remote(options.storage_options())?;
        crate::write::publish::existing(storage.as_ref(), &targets)?
            .into_iter()
            .collect()
    } else {
        targets.iter().filter(|t| t.exists()).cloned().collect()
    };
    for ((_, dirs), target) in pieces.iter().zip(&targets) {
        let (first, rest) = dirs.split_first().expect("a piece has a directory");
        if !rest.is_empty() {
            // The first task's log continued in staging (offsets continue from it).
            append(options, first, rest, None)?;
        }
        if there.contains(target) {
            // mode("append") on a log that is there: continued, as a producer would.
            append(options, target, std::slice::from_ref(first), None)?;
            continue;
        }
        // Under the target's lock; an overwrite replaces the old partition in one step.
        if options.remote {
            let (storage, lease) = remote(options.storage_options())?;
            crate::write::publish::publish_staged(storage, first, target, overwrite, lease)?;
        } else {
            placement::publish(first, target, overwrite, options.write.fsync)?;
        }
    }
    Ok(())
}

/// Aborts a batch job: its staging directory removed.
pub fn abort(options: &SparkWriteOptions, staging: &Path) -> Result<()> {
    remove_staging(options, staging)
}

/// Commits a streaming query's micro-batch `epoch`: each partition's staged batches appended
/// under the query's mark (`writerId`, `epoch`), a replayed epoch skipped; the tasks' staging
/// directories removed in any case.
pub fn commit_stream(
    options: &SparkWriteOptions,
    epoch: i64,
    messages: &[TaskMessage],
) -> Result<()> {
    let result = (|| {
        let mut by_partition: BTreeMap<(String, i64), Vec<PathBuf>> = BTreeMap::new();
        for m in messages {
            for s in &m.partitions {
                by_partition
                    .entry((s.topic.clone(), s.partition))
                    .or_default()
                    .push(s.dir.clone());
            }
        }
        for ((topic, partition), dirs) in &by_partition {
            let target = partition_target(&options.path, topic, *partition)?;
            append(options, &target, dirs, Some((&options.writer_id, epoch)))?;
        }
        Ok(())
    })();
    abort_stream(options, messages);
    result
}

/// Aborts a streaming micro-batch: the tasks' staging directories removed (best effort: never
/// read as data).
pub fn abort_stream(options: &SparkWriteOptions, messages: &[TaskMessage]) {
    for m in messages {
        if let Some(staging) = &m.staging {
            let _ = remove_staging(options, staging);
        }
    }
}

/// Makes sure a streaming target directory exists (a local one; prefixes need none).
pub fn prepare_stream(options: &SparkWriteOptions) -> Result<()> {
    if !options.remote {
        std::fs::create_dir_all(&options.path).map_err(|e| Error::io(e, &options.path))?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "writing_tests.rs"]
mod tests;

/// `batch` with its typed `key` and `value` columns turned from Spark's shapes (a typed read's
/// columns as Spark holds them: times as numbers, timestamps in microseconds, `fixed` as
/// binary, ...) back into the types a read gives, which the encoder takes.
fn from_spark_shapes(
    values: &mut ValueEncoder,
    batch: &RecordBatch,
    topic: &str,
) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    let mut columns = batch.columns().to_vec();
    let mut changed = false;
    for side in ["key", "value"] {
        let Ok(i) = schema.index_of(side) else {
            continue;
        };
        let Some(target) = values.read_type(side, Some(topic))? else {
            continue;
        };
        if columns[i].data_type() == &target {
            continue;
        }
        columns[i] = crate::spark::shapes::from_spark(&columns[i], &target)
            .map_err(|e| Error::invalid_argument(format!("{side}: {e}")))?;
        fields[i] = Arc::new(arrow_schema::Field::new(side, target, true));
        changed = true;
    }
    if !changed {
        return Ok(batch.clone());
    }
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns)
        .map_err(|e| Error::invalid_argument(e.to_string()))
}

/// Rows as Spark hands them to a write, unvalidated (the JVM source decodes Spark's Arrow IPC
/// without Arrow's checks), validated in full: a top-level string column whose bytes are not
/// all UTF-8 is taken as the binary it is (Spark's strings are bytes: `CAST(value AS STRING)`
/// of a binary value keeps them, and Spark's Kafka sink writes them as they are); anything
/// else that does not validate is an error.
pub fn validated_rows(batch: RecordBatch) -> Result<RecordBatch> {
    let bad = |e: arrow_schema::ArrowError| {
        Error::invalid_argument(format!("the rows from Spark are not valid Arrow: {e}"))
    };
    let schema = batch.schema();
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    let mut columns = batch.columns().to_vec();
    for (i, column) in columns.iter_mut().enumerate() {
        let data = column.to_data();
        if data.validate_full().is_ok() {
            continue;
        }
        let binary = match column.data_type() {
            DataType::Utf8 => DataType::Binary,
            DataType::LargeUtf8 => DataType::LargeBinary,
            DataType::Utf8View => DataType::BinaryView,
            _ => return Err(bad(data.validate_full().unwrap_err())),
        };
        let data = data
            .into_builder()
            .data_type(binary.clone())
            .build()
            .map_err(bad)?;
        *column = arrow_array::make_array(data);
        fields[i] = Arc::new(fields[i].as_ref().clone().with_data_type(binary));
    }
    RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
    )
    .map_err(bad)
}
