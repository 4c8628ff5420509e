//! Bindings of the internal-topic tables (`crate::internal`) and of kafka-dump-log's
//! internal-topic decoders (`format::internal::dump`).

use super::errors::{detach, IntoPyResult};
use crate::error::Error;
use crate::format::internal::dump::{control_string, dump_json, dump_strings};
use crate::format::internal::Topic;
use crate::internal::cluster_state::ClusterState;
use crate::internal::fold::Fold;
use crate::internal::input::{FoldOptions, Kind};
use crate::log::issues::OnCorrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::PyRecordBatch;
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
        let kind = Kind::from_name(kind).py_err()?;
        let skip_corrupt =
            OnCorrupt::from_name_among(on_corrupt, &[OnCorrupt::Error, OnCorrupt::Skip])
                .py_err()?
                == OnCorrupt::Skip;
        Ok(InternalFold {
            inner: Fold::new(
                kind,
                FoldOptions {
                    history,
                    skip_corrupt,
                    as_of,
                    retention_ms,
                },
            ),
        })
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
        self.inner
            .take_issues()
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
}

/// KRaft metadata records replayed into the cluster's state.
#[pyclass(module = "kafkalog._native")]
pub struct ClusterStateFold {
    inner: ClusterState,
}

#[pymethods]
impl ClusterStateFold {
    #[new]
    fn new() -> Self {
        ClusterStateFold {
            inner: ClusterState::new(),
        }
    }

    /// Replays a record batch or a stream of them (with a `value` column), in log order.
    fn feed(&mut self, py: Python<'_>, data: AnyRecordBatch) -> PyResult<()> {
        let reader = data.into_reader()?;
        let inner = &mut self.inner;
        detach(py, || {
            for batch in reader {
                let batch = batch.map_err(|e| Error::invalid_argument(e.to_string()))?;
                inner.feed(&batch)?;
            }
            Ok(())
        })
    }

    /// The state: (name, record batch) for topics, partitions, configs, brokers, features.
    fn tables(&self, py: Python<'_>) -> PyResult<Vec<(&'static str, PyRecordBatch)>> {
        let inner = &self.inner;
        let tables = detach(py, || inner.tables())?;
        Ok(tables
            .into_iter()
            .map(|(n, b)| (n, PyRecordBatch::new(b)))
            .collect())
    }
}

fn topic(name: &str) -> PyResult<Topic> {
    Topic::from_name(name)
        .ok_or_else(|| Error::invalid_argument(format!("unknown internal topic {name:?}")))
        .py_err()
}

/// A partition's log end offset from the batch listing of its last segment (see
/// `kafkalog.read_batches`) and that segment's base offset.
#[pyfunction]
pub fn log_end_offset(py: Python<'_>, listing: AnyRecordBatch, base_offset: i64) -> PyResult<i64> {
    let reader = listing.into_reader()?;
    detach(py, || {
        crate::internal::fold::log_end_offset(
            reader.map(|b| b.map_err(|e| Error::invalid_argument(e.to_string()))),
            base_offset,
        )
    })
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
