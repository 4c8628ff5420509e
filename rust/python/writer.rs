//! The native side of `kafkalog.write`: an Arrow stream (anything with `__arrow_c_stream__`)
//! into a partition directory, with the GIL released while encoding and writing; and the
//! placement rules Python needs for names that come from data (Kafka's topic rule, the safe
//! `<root>/<topic>-<partition>`, publishing a staged directory), so that Python holds none.

use super::errors::{detach, IntoPyResult};
use super::options::options_from_dict;
use crate::arrow::encoder::EncodeOptions;
use crate::error::Error;
use crate::write::placement;
use crate::write::target::{remote, PartitionTarget};
use crate::write::writer::WriteOptions;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_arrow::PyRecordBatch;

/// Writer options as Python passes them: a dict whose keys are these fields' names. Every key
/// may be left out; its default is the core's (`EncodeOptions`, `WriteOptions`), in `Default`.
pub struct Options {
    magic: Option<i8>,
    compression: Option<String>,
    compression_level: Option<i32>,
    timestamp_type: Option<String>,
    log_append_time: Option<i64>,
    base_offset: i64,
    batch_records: usize,
    batch_bytes: usize,
    preserve_batches: bool,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    partition_leader_epoch: i32,
    segment_bytes: u64,
    index_interval_bytes: u64,
    overwrite: bool,
    fsync: bool,
    /// For a target in an object store: `object_store` configuration keys.
    storage_options: Option<std::collections::BTreeMap<String, String>>,
}

/// The core's defaults (`WriteOptions::default()`), as the dict's keys leave them out. The
/// names of compression and timestamp type stay unset: the core picks them from the data.
impl Default for Options {
    fn default() -> Self {
        let WriteOptions {
            encode: e,
            segment_bytes,
            index_interval_bytes,
            overwrite,
            fsync,
            producer_snapshots: _,
        } = WriteOptions::default();
        Options {
            magic: e.magic,
            compression: None,
            compression_level: e.compression_level,
            timestamp_type: None,
            log_append_time: e.log_append_time,
            base_offset: e.base_offset,
            batch_records: e.batch_records,
            batch_bytes: e.batch_bytes,
            preserve_batches: e.preserve_batches,
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            base_sequence: e.base_sequence,
            transactional: e.transactional,
            partition_leader_epoch: e.partition_leader_epoch,
            segment_bytes,
            index_interval_bytes,
            overwrite,
            fsync,
            storage_options: None,
        }
    }
}

options_from_dict!(Options {
    magic,
    compression,
    compression_level,
    timestamp_type,
    log_append_time,
    base_offset,
    batch_records,
    batch_bytes,
    preserve_batches,
    producer_id,
    producer_epoch,
    base_sequence,
    transactional,
    partition_leader_epoch,
    segment_bytes,
    index_interval_bytes,
    overwrite,
    fsync,
    storage_options,
});

impl Options {
    fn resolve(&self) -> crate::Result<WriteOptions> {
        use crate::spark::write_options::{compression, timestamp_type};
        let compression = self.compression.as_deref().map(compression).transpose()?;
        let timestamp_type = self
            .timestamp_type
            .as_deref()
            .map(timestamp_type)
            .transpose()?;
        Ok(WriteOptions {
            encode: EncodeOptions {
                magic: self.magic,
                compression,
                compression_level: self.compression_level,
                timestamp_type,
                log_append_time: self.log_append_time,
                base_offset: self.base_offset,
                batch_records: self.batch_records,
                batch_bytes: self.batch_bytes,
                preserve_batches: self.preserve_batches,
                producer_id: self.producer_id,
                producer_epoch: self.producer_epoch,
                base_sequence: self.base_sequence,
                transactional: self.transactional,
                partition_leader_epoch: self.partition_leader_epoch,
            },
            segment_bytes: self.segment_bytes,
            index_interval_bytes: self.index_interval_bytes,
            overwrite: self.overwrite,
            fsync: self.fsync,
            producer_snapshots: true,
        })
    }
}

/// Writes a partition directory batch by batch. Python drives the loop over its input, so an
/// exception raised by the input reaches the caller as it is; encoding and writing run with
/// the GIL released. `abort` (or dropping the object) leaves nothing behind.
#[pyclass(module = "kafkalog._native")]
pub struct Writer {
    inner: Option<PartitionTarget>,
    path: std::path::PathBuf,
}

impl Writer {
    fn writer(&mut self) -> PyResult<&mut PartitionTarget> {
        self.inner.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("the writer is already finished or aborted")
        })
    }
}

#[pymethods]
impl Writer {
    #[new]
    fn new(py: Python<'_>, path: std::path::PathBuf, options: Options) -> PyResult<Self> {
        let resolved = options.resolve().py_err()?;
        let storage_options = options.storage_options;
        let inner = detach(py, || {
            PartitionTarget::create(&path, resolved, storage_options)
        })?;
        Ok(Writer {
            inner: Some(inner),
            path,
        })
    }

    /// Encodes and appends one Arrow record batch.
    fn write(&mut self, py: Python<'_>, batch: PyRecordBatch) -> PyResult<()> {
        let batch = batch.into_inner();
        let path = self.path.clone();
        let writer = self.writer()?;
        detach(py, || writer.write(&batch).map_err(|e| e.with_path(&path)))
    }

    /// Completes the write and moves the directory into place; returns one dict per segment.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let writer = self.inner.take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("the writer is already finished or aborted")
        })?;
        let summary = detach(py, || writer.finish())?;
        let items = summary
            .segments
            .iter()
            .map(|s| -> PyResult<_> {
                let d = PyDict::new(py);
                d.set_item("path", s.path.to_string_lossy().into_owned())?;
                d.set_item("base_offset", s.base_offset)?;
                d.set_item("last_offset", s.last_offset)?;
                d.set_item("batches", s.batches)?;
                d.set_item("records", s.records)?;
                d.set_item("bytes", s.bytes)?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Gives up: removes everything written so far.
    fn abort(&mut self) {
        self.inner = None;
    }
}

/// `<root>/<topic>-<partition>` for a topic and partition taken from data, checked as Kafka
/// checks them (`InvalidArgumentError` naming the value otherwise), under the root's real
/// path, and never a symbolic link.
#[pyfunction]
pub fn partition_dir(root: std::path::PathBuf, topic: &str, partition: i64) -> PyResult<String> {
    if !crate::storage::is_local(&root) {
        // An object-store prefix: the checked name is one key segment under it.
        return crate::format::segment::partition_dir_name(topic, partition)
            .map(|name| root.join(name).to_string_lossy().into_owned())
            .py_err();
    }
    placement::partition_dir(&root, topic, partition)
        .map(|p| p.to_string_lossy().into_owned())
        .py_err()
}

/// Whether a directory name is a kafkalog staging directory (never data).
#[pyfunction]
pub fn is_staging_dir_name(name: &str) -> bool {
    crate::format::segment::is_staging_dir_name(name)
}

/// Moves the complete directory `staged` to `target` (a path from [`partition_dir`]) under the
/// target's lock: a new directory, or with `overwrite` an atomic swap with the one there. For
/// an object-store `target`, `staged` is a prefix a kafkalog write published: its files are
/// copied to `target` and published there with a manifest (see `arrow::publish`).
#[pyfunction]
#[pyo3(signature = (staged, target, overwrite, fsync=true, storage_options=None))]
pub fn publish(
    py: Python<'_>,
    staged: std::path::PathBuf,
    target: std::path::PathBuf,
    overwrite: bool,
    fsync: bool,
    storage_options: Option<std::collections::BTreeMap<String, String>>,
) -> PyResult<()> {
    if !crate::storage::is_local(&target) {
        let (storage, lease) = remote(storage_options).py_err()?;
        return detach(py, || {
            crate::write::publish::publish_staged(storage, &staged, &target, overwrite, lease)
        });
    }
    detach(py, || {
        placement::publish(&staged, &target, overwrite, fsync)
    })
}

/// The store a job's remote staging and publishing goes to (plain objects, no tiered layer).
fn remote_storage(
    storage_options: Option<std::collections::BTreeMap<String, String>>,
) -> PyResult<std::sync::Arc<dyn crate::storage::Storage>> {
    Ok(remote(storage_options).py_err()?.0)
}

/// Creates a job's staging directory in `parent` (see `placement::create_job_staging`). In an
/// object store it is only a name (`<parent>/.<tag>.kafkalog-job.<unique>.tmp`, which readers
/// skip): prefixes need no creating.
#[pyfunction]
pub fn create_job_staging(
    py: Python<'_>,
    parent: std::path::PathBuf,
    tag: String,
) -> PyResult<String> {
    if !crate::storage::is_local(&parent) {
        crate::format::segment::validate_topic(&tag).py_err()?;
        let name =
            crate::format::segment::job_staging_dir_name(&tag, &crate::write::placement::unique());
        return Ok(parent.join(name).to_string_lossy().into_owned());
    }
    detach(py, || placement::create_job_staging(&parent, &tag))
        .map(|p| p.to_string_lossy().into_owned())
}

/// The targets (object-store prefixes) that hold something already (see `write::publish`).
#[pyfunction]
#[pyo3(signature = (targets, storage_options=None))]
pub fn existing_targets(
    py: Python<'_>,
    targets: Vec<std::path::PathBuf>,
    storage_options: Option<std::collections::BTreeMap<String, String>>,
) -> PyResult<Vec<String>> {
    let storage = remote_storage(storage_options)?;
    let there = detach(py, || {
        crate::write::publish::existing(storage.as_ref(), &targets)
    })?;
    Ok(there
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}

/// Removes a job's staging directory, local or in an object store (every object under the
/// prefix); one already gone is not an error.
#[pyfunction]
#[pyo3(signature = (path, storage_options=None))]
pub fn remove_staging(
    py: Python<'_>,
    path: std::path::PathBuf,
    storage_options: Option<std::collections::BTreeMap<String, String>>,
) -> PyResult<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !crate::format::segment::is_staging_dir_name(&name) {
        return Err(super::errors::to_py(
            py,
            Error::invalid_argument("not a kafkalog staging directory").with_path(&path),
        ));
    }
    if crate::storage::is_local(&path) {
        return detach(py, || match std::fs::remove_dir_all(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(e, &path)),
            _ => Ok(()),
        });
    }
    let storage = remote_storage(storage_options)?;
    detach(py, || {
        crate::write::publish::remove_prefix(storage.as_ref(), &path)
    })
}

/// The partition directory name `<topic>-<partition>`, checked as Kafka checks both parts.
#[pyfunction]
pub fn partition_dir_name(topic: &str, partition: i64) -> PyResult<String> {
    crate::format::segment::partition_dir_name(topic, partition).py_err()
}

/// Appends the batches of the staged partition directories `staged` to the partition
/// directory `target` as a broker appends (see `arrow::append`), atomically; with
/// `writer_id` and `sequence`, an append already marked by that writer is skipped. An
/// object-store `target` (with `storage_options`) is appended to as `arrow::append::append_remote`
/// says, its active segment rewritten while below `max_rewrite_bytes`. Returns a
/// dict: skipped, start_offset, next_offset, records, batches, truncated_bytes.
#[pyfunction]
#[pyo3(signature = (target, staged, *, writer_id=None, sequence=None,
    segment_bytes=crate::write::writer::DEFAULT_SEGMENT_BYTES,
    index_interval_bytes=crate::format::index::DEFAULT_INDEX_INTERVAL_BYTES, fsync=true,
    storage_options=None, max_rewrite_bytes=crate::write::append::DEFAULT_MAX_REWRITE_BYTES))]
#[allow(clippy::too_many_arguments)]
pub fn append<'py>(
    py: Python<'py>,
    target: std::path::PathBuf,
    staged: Vec<std::path::PathBuf>,
    writer_id: Option<String>,
    sequence: Option<i64>,
    segment_bytes: u64,
    index_interval_bytes: u64,
    fsync: bool,
    storage_options: Option<std::collections::BTreeMap<String, String>>,
    max_rewrite_bytes: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let mark = match (writer_id.as_deref(), sequence) {
        (Some(id), Some(seq)) => Some((id, seq)),
        (None, None) => None,
        _ => {
            return Err(super::errors::to_py(
                py,
                Error::invalid_argument("give both writer_id and sequence, or neither"),
            ))
        }
    };
    let options = crate::write::append::AppendOptions {
        segment_bytes,
        index_interval_bytes,
        fsync,
    };
    let done = if crate::storage::is_local(&target) {
        detach(py, || {
            crate::write::append::append_staged(&target, &staged, mark, &options)
        })?
    } else {
        // An object-store partition: staged at object-store prefixes, published by manifest.
        let (storage, lease) = remote(storage_options).py_err()?;
        let remote = crate::write::append::RemoteAppendOptions {
            max_rewrite_bytes,
            lease,
        };
        detach(py, || {
            crate::write::append::append_remote(storage, &target, &staged, mark, &options, &remote)
        })?
    };
    let out = PyDict::new(py);
    out.set_item("skipped", done.skipped)?;
    out.set_item("start_offset", done.start_offset)?;
    out.set_item("next_offset", done.next_offset)?;
    out.set_item("records", done.records)?;
    out.set_item("batches", done.batches)?;
    out.set_item("truncated_bytes", done.truncated_bytes)?;
    Ok(out)
}

/// Copies the local file `source` to `target` (an object-store URI or a local path) as one
/// atomic object: a single put, or a multipart upload that appears only when complete.
#[pyfunction]
#[pyo3(signature = (source, target, storage_options=None))]
pub fn upload_file(
    py: Python<'_>,
    source: std::path::PathBuf,
    target: std::path::PathBuf,
    storage_options: Option<std::collections::BTreeMap<String, String>>,
) -> PyResult<()> {
    let storage = super::storage::storage(storage_options, None);
    detach(py, || storage.upload(&target, &source))
}
