//! Bindings of the internal-topic tables (`arrow::internal_tables`) and of kafka-dump-log's
//! internal-topic decoders (`format::internal::dump`). [`internal_table`] loads a table from
//! paths in one call (discovery, reads and the fold all in the core), for `kafkalog.internal`,
//! and [`cluster_state_tables`] the cluster's state from KRaft metadata.

use super::errors::{detach, warn, IntoPyResult};
use super::storage::storage;
use crate::arrow::cluster_state::ClusterState;
use crate::arrow::decoder::OnCorrupt;
use crate::arrow::discover::SegmentFile;
use crate::arrow::internal_tables::{Fold, FoldOptions, Kind};
use crate::arrow::reader::ReaderBuilder;
use crate::arrow::schema::Projection;
use crate::arrow::seek::{by_partition, Bounds};
use crate::arrow::visibility::Visibility;
use crate::error::Error;
use crate::format::batch::CrcPolicy;
use crate::format::internal::dump::{dump_json, dump_strings};
use crate::format::internal::Topic;
use crate::storage::{Stat, Storage};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::PyRecordBatch;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A fold of an internal topic's record batches into one of its tables.
#[pyclass(module = "kafkalog._native")]
pub struct InternalFold {
    inner: Fold,
}

#[pymethods]
impl InternalFold {
    #[new]
    #[pyo3(signature = (kind, *, history = false, on_corrupt = "error", as_of = None, retention_ms = None))]
    fn new(
        kind: &str,
        history: bool,
        on_corrupt: &str,
        as_of: Option<i64>,
        retention_ms: Option<i64>,
    ) -> PyResult<Self> {
        let inner = new_fold(kind, history, on_corrupt, as_of, retention_ms).py_err()?;
        Ok(InternalFold { inner })
    }

    /// Folds a record batch or a stream of them, read from `path` (for error messages; with
    /// `files`, a list of (base offset, segment path), the segment holding the offset).
    #[pyo3(signature = (data, path = None, files = None))]
    fn feed(
        &mut self,
        py: Python<'_>,
        data: AnyRecordBatch,
        path: Option<PathBuf>,
        files: Option<Vec<(i64, PathBuf)>>,
    ) -> PyResult<()> {
        let reader = data.into_reader()?;
        self.inner.set_files(files.unwrap_or_default());
        let inner = &mut self.inner;
        detach(py, || {
            for batch in reader {
                let batch = batch.map_err(|e| Error::invalid_argument(e.to_string()))?;
                inner.feed(&batch, path.as_deref())?;
            }
            Ok(())
        })
    }

    /// Notes a data partition's log end offset (for the lag column).
    fn set_log_end(&mut self, topic: &str, partition: i32, log_end: i64) {
        self.inner.set_log_end(topic, partition, log_end);
    }

    /// The table, as one record batch.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyRecordBatch> {
        let inner = &mut self.inner;
        let batch = detach(py, || inner.finish())?;
        Ok(PyRecordBatch::new(batch))
    }

    /// What was passed over since the last call: dicts with message, path, position, offset,
    /// key, value (raw bytes) and corrupt.
    fn take_issues<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        fold_issue_dicts(py, self.inner.take_issues())
    }
}

/// A fold of the internal topic `kind` (`Kind::from_name`); `on_corrupt` is `"error"` or
/// `"skip"`.
fn new_fold(
    kind: &str,
    history: bool,
    on_corrupt: &str,
    as_of: Option<i64>,
    retention_ms: Option<i64>,
) -> crate::Result<Fold> {
    let kind = Kind::from_name(kind)?;
    let skip_corrupt = match on_corrupt {
        "error" => false,
        "skip" => true,
        other => {
            return Err(Error::invalid_argument(format!(
                "on_corrupt must be \"error\" or \"skip\", not {other:?}"
            )))
        }
    };
    let options = FoldOptions {
        history,
        skip_corrupt,
        as_of,
        retention_ms,
    };
    Ok(Fold::new(kind, options))
}

/// The issues of a fold as dicts: message, path, position, offset, key, value (raw bytes)
/// and corrupt.
fn fold_issue_dicts<'py>(
    py: Python<'py>,
    issues: Vec<crate::arrow::internal_tables::FoldIssue>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    issues
        .into_iter()
        .map(|issue| {
            let d = PyDict::new(py);
            d.set_item("message", &issue.message)?;
            d.set_item("path", issue.path.map(|p| p.to_string_lossy().into_owned()))?;
            d.set_item("position", issue.position)?;
            d.set_item("offset", issue.offset)?;
            d.set_item("key", issue.key.map(|k| pyo3::types::PyBytes::new(py, &k)))?;
            d.set_item(
                "value",
                issue.value.map(|v| pyo3::types::PyBytes::new(py, &v)),
            )?;
            d.set_item("corrupt", issue.corrupt)?;
            Ok(d)
        })
        .collect()
}

fn topic(name: &str) -> PyResult<Topic> {
    Topic::from_name(name)
        .ok_or_else(|| Error::invalid_argument(format!("unknown internal topic {name:?}")))
        .py_err()
}

/// What kafka-dump-log prints for a record's key and payload with the decoder of `topic`
/// (`None` where it prints nothing).
#[pyfunction]
#[pyo3(signature = (topic_name, key, value, offset))]
pub fn dump_internal_record(
    topic_name: &str,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> PyResult<(Option<String>, Option<String>)> {
    Ok(dump_strings(topic(topic_name)?, key, value, offset))
}

/// The record decoded as one JSON object (`{"key": ..., "value": ...}`).
#[pyfunction]
#[pyo3(signature = (topic_name, key, value))]
pub fn decode_internal_record(
    topic_name: &str,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> PyResult<String> {
    Ok(dump_json(topic(topic_name)?, key, value))
}

/// The columns of an internal topic's records a fold reads.
const FOLD_COLUMNS: [&str; 7] = [
    "key",
    "value",
    "topic",
    "partition",
    "offset",
    "timestamp",
    "batchPosition",
];

/// What an internal topic's table is read from: for each of its partitions, the name errors
/// give it and its segment files.
type Sources = Vec<(PathBuf, Vec<SegmentFile>)>;

/// The partitions of `topic` under `path` (as `kafkalog.segments` finds them; a file is taken
/// as given, whatever its topic), and for the `__cluster_metadata` topic with no log, the KRaft
/// snapshots (`.checkpoint`) directly in `path`, each read as a file.
fn topic_sources(storage: &Arc<dyn Storage>, path: &Path, topic: &str) -> crate::Result<Sources> {
    let is_file = matches!(storage.stat(path)?, Stat::File { .. });
    // A directory holding only KRaft snapshots has no segment: not worth the warning here.
    let (files, _notes) = super::reader::discover_all(storage, &[path.to_path_buf()])?;
    let named = |f: &SegmentFile| is_file || f.origin.topic.as_deref().is_none_or(|t| t == topic);
    let files: Vec<SegmentFile> = files.into_iter().filter(named).collect();
    let mut out: Sources = by_partition(files)
        .into_iter()
        .map(|group| {
            let first = &group[0].path;
            let source = if is_file {
                first.clone()
            } else {
                first
                    .parent()
                    .map_or_else(|| first.clone(), Path::to_path_buf)
            };
            (source, group)
        })
        .collect();
    if Topic::from_name(topic) == Some(Topic::ClusterMetadata) && out.is_empty() && !is_file {
        for snapshot in checkpoint_files(storage, path)? {
            let (files, _) = super::reader::discover_all(storage, std::slice::from_ref(&snapshot))?;
            out.push((snapshot, files));
        }
    }
    Ok(out)
}

/// The files named `*.checkpoint` directly in `path` (KRaft snapshots), sorted.
fn checkpoint_files(storage: &Arc<dyn Storage>, path: &Path) -> crate::Result<Vec<PathBuf>> {
    let mut snapshots: Vec<PathBuf> = storage
        .list(path)?
        .into_iter()
        .filter(|e| !e.is_dir && e.path.to_string_lossy().ends_with(".checkpoint"))
        .map(|e| e.path)
        .collect();
    snapshots.sort();
    Ok(snapshots)
}

/// Each data partition's (not an internal topic's) last segment under `path`.
fn last_segments(storage: &Arc<dyn Storage>, path: &Path) -> crate::Result<Vec<SegmentFile>> {
    if matches!(storage.stat(path)?, Stat::File { .. }) {
        return Ok(Vec::new());
    }
    let (files, _) = super::reader::discover_all(storage, &[path.to_path_buf()])?;
    let mut last: Vec<SegmentFile> = Vec::new();
    for f in files {
        let (Some(topic), Some(_)) = (&f.origin.topic, f.origin.partition) else {
            continue;
        };
        if topic.starts_with("__") {
            continue;
        }
        match last.iter_mut().find(|l| l.origin == f.origin) {
            Some(l) => *l = f,
            None => last.push(f),
        }
    }
    Ok(last)
}

/// An internal topic's table from the partitions under `path`, loaded as its coordinator
/// loads them, all in the core: the paths' segment files found as `kafkalog.read` finds them,
/// the topic's partitions read `read_committed` (a coordinator loads only committed
/// transactional records) within what a consumer could fetch, and folded (see `InternalFold`);
/// with `log_ends`, each data partition's log end offset is taken from its last segment (for
/// the lag column). `kind` is the fold's (`consumer_offsets`, ...), `topic` the internal topic.
///
/// Returns the table and the fold's issues (dicts, as `InternalFold.take_issues` gives them);
/// what the reads passed over (torn tails, skipped batches) is warned as `kafkalog.read` warns.
#[pyfunction]
#[pyo3(signature = (kind, topic, path, *, history = false, on_corrupt = "error", as_of = None,
    retention_ms = None, log_ends = false, storage_options = None))]
#[allow(clippy::too_many_arguments)]
pub fn internal_table<'py>(
    py: Python<'py>,
    kind: &str,
    topic: &str,
    path: PathBuf,
    history: bool,
    on_corrupt: &str,
    as_of: Option<i64>,
    retention_ms: Option<i64>,
    log_ends: bool,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<(PyRecordBatch, Vec<Bound<'py, PyDict>>)> {
    let mut fold = new_fold(kind, history, on_corrupt, as_of, retention_ms).py_err()?;
    let storage = storage(storage_options, None);
    let read_on_corrupt = if on_corrupt == "skip" {
        "skip"
    } else {
        "error"
    };
    let (batch, read_issues) = detach(py, || {
        let mut read_issues = Vec::new();
        let builder = ReaderBuilder::new()
            .with_storage(storage.clone())
            .with_projection(Projection::from_names(&FOLD_COLUMNS)?)
            .with_on_corrupt(OnCorrupt::from_name(read_on_corrupt)?)
            .with_bounds(Bounds {
                read_committed: true,
                visibility: Visibility::Consumer,
                ..Bounds::default()
            });
        for (source, files) in topic_sources(&storage, &path, topic)? {
            fold.set_files(
                files
                    .iter()
                    .map(|f| (f.base_offset.unwrap_or(0), f.path.clone()))
                    .collect(),
            );
            let mut reader = builder.clone().build_files(files)?;
            for batch in reader.by_ref() {
                fold.feed(&batch?, Some(&source))?;
            }
            read_issues.extend(reader.take_issues());
        }
        if log_ends {
            let listing = ReaderBuilder::new()
                .with_storage(storage.clone())
                .with_crc(CrcPolicy::Ignore)
                .with_on_corrupt(OnCorrupt::Skip);
            for last in last_segments(&storage, &path)? {
                let (Some(data_topic), Some(partition)) =
                    (last.origin.topic.clone(), last.origin.partition)
                else {
                    continue;
                };
                let base = last.base_offset.unwrap_or(0);
                let mut reader = listing.clone().build_batch_listing(vec![last])?;
                let end = crate::arrow::internal_tables::log_end_offset(reader.by_ref(), base)?;
                read_issues.extend(reader.take_issues());
                fold.set_log_end(&data_topic, partition, end);
            }
        }
        Ok((fold.finish()?, read_issues))
    })?;
    for issue in &read_issues {
        warn(py, issue)?;
    }
    let issues = fold_issue_dicts(py, fold.take_issues())?;
    Ok((PyRecordBatch::new(batch), issues))
}

/// The cluster's state from the KRaft metadata under `path`, as a controller rebuilds it, all
/// in the core: the latest snapshot (`<end offset>-<epoch>.checkpoint`) in `path` when there is
/// one, then the log's records from the snapshot's end offset on (`path` may also be a single
/// `.log` or `.checkpoint` file). Returns (name, table) for topics, partitions, configs,
/// brokers and features; what the reads passed over is warned as `kafkalog.read` warns.
#[pyfunction]
#[pyo3(signature = (path, storage_options = None))]
pub fn cluster_state_tables(
    py: Python<'_>,
    path: PathBuf,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<Vec<(&'static str, PyRecordBatch)>> {
    let storage = storage(storage_options, None);
    let (tables, read_issues) = detach(py, || {
        let builder = ReaderBuilder::new()
            .with_storage(storage.clone())
            .with_projection(Projection::from_names(&["value"])?);
        let mut state = ClusterState::new();
        let mut read_issues = Vec::new();
        let mut replay = |builder: ReaderBuilder, files: Vec<SegmentFile>| -> crate::Result<()> {
            let mut reader = builder.build_files(files)?;
            for batch in reader.by_ref() {
                state.feed(&batch?)?;
            }
            read_issues.extend(reader.take_issues());
            Ok(())
        };
        let discover = |p: &Path| super::reader::discover_all(&storage, &[p.to_path_buf()]);
        if matches!(storage.stat(&path)?, Stat::File { .. }) {
            replay(builder, discover(&path)?.0)?;
        } else {
            let latest = checkpoint_files(&storage, &path)?
                .into_iter()
                .filter_map(|p| super::cli::snapshot_id(&p).map(|(end, _)| (p, end)))
                .next_back();
            let mut start = None;
            if let Some((snapshot, end)) = latest {
                replay(builder.clone(), discover(&snapshot)?.0)?;
                start = Some(end);
            }
            // A directory holding only KRaft snapshots has no segment: not worth a warning.
            let (files, _) = discover(&path)?;
            if !files.is_empty() {
                let bounds = Bounds {
                    start_offset: start,
                    ..Bounds::default()
                };
                replay(builder.with_bounds(bounds), files)?;
            }
        }
        Ok((state.tables()?, read_issues))
    })?;
    for issue in &read_issues {
        warn(py, issue)?;
    }
    Ok(tables
        .into_iter()
        .map(|(n, b)| (n, PyRecordBatch::new(b)))
        .collect())
}
