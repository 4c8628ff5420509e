//! Bindings of the internal-topic tables (`arrow::internal_tables`) and of kafka-dump-log's
//! internal-topic decoders (`format::internal::dump`). [`internal_table`] loads a table from
//! paths in one call (discovery, reads and the fold all in the core), for `kafkalog.internal`,
//! and [`cluster_state_tables`] the cluster's state from KRaft metadata.

use super::errors::{detach, warn, IntoPyResult};
use super::storage::storage;
use crate::error::Error;
use crate::format::internal::dump::{control_string, dump_json, dump_strings};
use crate::format::internal::Topic;
use crate::internal::fold::Fold;
use crate::internal::input::{FoldIssue, FoldOptions, Kind};
use crate::log::issues::OnCorrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::PyRecordBatch;
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    let skip_corrupt =
        OnCorrupt::from_name_among(on_corrupt, &[OnCorrupt::Error, OnCorrupt::Skip])?
            == OnCorrupt::Skip;
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
    issues: Vec<FoldIssue>,
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

/// What kafka-dump-log prints for a KRaft control record's value (`SnapshotHeader {...}`, ...),
/// or `None` for other control types and values that do not decode.
#[pyfunction]
#[pyo3(signature = (control_type, value))]
pub fn dump_control_record(control_type: i16, value: Option<&[u8]>) -> Option<String> {
    control_string(control_type, value)
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
    // The fold's policy holds for the reads too (`new_fold` refused any other).
    let read_on_corrupt = OnCorrupt::from_name(on_corrupt).py_err()?;
    let (batch, read_issues) = detach(py, || {
        crate::read::internal_topics::internal_table(
            &storage,
            &mut fold,
            topic,
            &path,
            read_on_corrupt,
            log_ends,
        )
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
        crate::read::internal_topics::cluster_state(&storage, &path)
    })?;
    for issue in &read_issues {
        warn(py, issue)?;
    }
    Ok(tables
        .into_iter()
        .map(|(n, b)| (n, PyRecordBatch::new(b)))
        .collect())
}
