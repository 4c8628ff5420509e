//! The native side of `kafkalog.compact` and `kafkalog.retain`: Kafka's log cleanup, with the
//! GIL released while it runs. Reports come back as plain dicts.

use super::errors::{detach, to_py};
use crate::cleanup::compact as cleaner;
use crate::cleanup::compact::CompactOptions;
use crate::cleanup::retention::{self as retention_rules, RetentionOptions};
use crate::error::Error;
use crate::log::issues::OnCorrupt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

fn path_str(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Compacts the partition directory `src` into `dst`; returns the report as a dict.
#[pyfunction]
#[pyo3(signature = (
    src, dst, *, now_ms=None, delete_retention_ms=cleaner::DEFAULT_DELETE_RETENTION_MS,
    min_compaction_lag_ms=0, max_compaction_lag_ms=i64::MAX, min_cleanable_ratio=None,
    segment_bytes=crate::write::writer::DEFAULT_SEGMENT_BYTES, max_index_size=cleaner::DEFAULT_MAX_INDEX_SIZE,
    index_interval_bytes=crate::format::index::DEFAULT_INDEX_INTERVAL_BYTES, log_start_offset=None, high_watermark=None, first_dirty_offset=None,
    producer_id_expiration_ms=Some(cleaner::DEFAULT_PRODUCER_ID_EXPIRATION_MS),
    max_decompressed_size=crate::format::batch::DEFAULT_MAX_DECOMPRESSED_SIZE, overwrite=false, on_corrupt="error",
    offset_map_keys=None, offset_map_offsets=None, plan_only=false
))]
#[allow(clippy::too_many_arguments)]
pub fn compact<'py>(
    py: Python<'py>,
    src: PathBuf,
    dst: PathBuf,
    now_ms: Option<i64>,
    delete_retention_ms: i64,
    min_compaction_lag_ms: i64,
    max_compaction_lag_ms: i64,
    min_cleanable_ratio: Option<f64>,
    segment_bytes: u64,
    max_index_size: u64,
    index_interval_bytes: u64,
    log_start_offset: Option<i64>,
    high_watermark: Option<i64>,
    first_dirty_offset: Option<i64>,
    producer_id_expiration_ms: Option<i64>,
    max_decompressed_size: usize,
    overwrite: bool,
    on_corrupt: &str,
    offset_map_keys: Option<Vec<Vec<u8>>>,
    offset_map_offsets: Option<Vec<i64>>,
    plan_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let offset_map = match (offset_map_keys, offset_map_offsets) {
        (Some(keys), Some(offsets)) if keys.len() == offsets.len() => {
            Some(keys.into_iter().zip(offsets).collect())
        }
        (None, None) => None,
        _ => {
            return Err(to_py(
                py,
                Error::invalid_argument("an offset map needs as many keys as offsets"),
            ))
        }
    };
    let on_corrupt = OnCorrupt::from_name_among(on_corrupt, &[OnCorrupt::Error, OnCorrupt::Skip])
        .map_err(|e| to_py(py, e))?;
    let options = CompactOptions {
        now_ms,
        delete_retention_ms,
        min_compaction_lag_ms,
        max_compaction_lag_ms,
        min_cleanable_ratio,
        segment_bytes,
        max_index_size,
        index_interval_bytes,
        log_start_offset,
        high_watermark,
        first_dirty_offset,
        producer_id_expiration_ms,
        max_decompressed_size,
        overwrite,
        on_corrupt,
        offset_map,
    };
    let r = detach(py, || {
        if plan_only {
            cleaner::plan(&src, &options)
        } else {
            cleaner::compact(&src, &dst, &options)
        }
    })?;
    let d = PyDict::new(py);
    d.set_item("cleaned", r.cleaned)?;
    d.set_item("now_ms", r.now_ms)?;
    d.set_item("log_start_offset", r.log_start_offset)?;
    d.set_item("log_end_offset", r.log_end_offset)?;
    d.set_item("first_dirty_offset", r.first_dirty_offset)?;
    d.set_item("first_uncleanable_offset", r.first_uncleanable_offset)?;
    d.set_item("next_dirty_offset", r.next_dirty_offset)?;
    d.set_item("cleanable_ratio", r.cleanable_ratio)?;
    d.set_item("delete_horizon_ms", r.delete_horizon_ms)?;
    d.set_item("segments_cleaned", r.segments_cleaned)?;
    d.set_item("records_read", r.records_read)?;
    d.set_item("records_written", r.records_written)?;
    d.set_item("batches_read", r.batches_read)?;
    d.set_item("batches_written", r.batches_written)?;
    d.set_item("bytes_read", r.bytes_read)?;
    d.set_item("bytes_written", r.bytes_written)?;
    d.set_item("invalid_records", r.invalid_records)?;
    let skipped = r
        .skipped
        .iter()
        .map(|e| -> PyResult<_> {
            let s = PyDict::new(py);
            s.set_item("kind", e.kind.name())?;
            s.set_item("message", &e.message)?;
            s.set_item("path", e.path.as_deref().map(path_str))?;
            s.set_item("position", e.position)?;
            s.set_item("offset", e.offset)?;
            Ok(s)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("skipped", PyList::new(py, skipped)?)?;
    let segments = r
        .summary
        .segments
        .iter()
        .map(|s| -> PyResult<_> {
            let e = PyDict::new(py);
            e.set_item("path", path_str(&s.path))?;
            e.set_item("base_offset", s.base_offset)?;
            e.set_item("last_offset", s.last_offset)?;
            e.set_item("batches", s.batches)?;
            e.set_item("records", s.records)?;
            e.set_item("bytes", s.bytes)?;
            Ok(e)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("segments", PyList::new(py, segments)?)?;
    Ok(d)
}

/// Applies retention to every partition under `path`; one dict per partition.
#[pyfunction]
#[pyo3(signature = (
    path, *, now_ms=None, retention_ms=None, retention_bytes=None, log_start_offset=None,
    high_watermark=None, delete_policy=true, dry_run=true, write_checkpoint=false
))]
#[allow(clippy::too_many_arguments)]
pub fn retain<'py>(
    py: Python<'py>,
    path: PathBuf,
    now_ms: Option<i64>,
    retention_ms: Option<i64>,
    retention_bytes: Option<i64>,
    log_start_offset: Option<i64>,
    high_watermark: Option<i64>,
    delete_policy: bool,
    dry_run: bool,
    write_checkpoint: bool,
) -> PyResult<Bound<'py, PyList>> {
    let options = RetentionOptions {
        now_ms,
        retention_ms,
        retention_bytes,
        log_start_offset,
        high_watermark,
        delete_policy,
        dry_run,
        write_checkpoint,
    };
    let partitions = detach(py, || retention_rules::retain(&path, &options))?;
    let items = partitions
        .iter()
        .map(|p| -> PyResult<_> {
            let d = PyDict::new(py);
            d.set_item("dir", path_str(&p.dir))?;
            d.set_item("topic", &p.topic)?;
            d.set_item("partition", p.partition)?;
            let removed = p
                .removed
                .iter()
                .map(|r| -> PyResult<_> {
                    let e = PyDict::new(py);
                    e.set_item("path", path_str(&r.path))?;
                    e.set_item("base_offset", r.base_offset)?;
                    e.set_item("bytes", r.bytes)?;
                    e.set_item("largest_timestamp", r.largest_timestamp)?;
                    e.set_item("reason", r.reason)?;
                    Ok(e)
                })
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("removed", PyList::new(py, removed)?)?;
            d.set_item("log_start_offset_before", p.log_start_offset_before)?;
            d.set_item("log_start_offset", p.log_start_offset)?;
            d.set_item("log_end_offset", p.log_end_offset)?;
            d.set_item("segments_left", p.segments_left)?;
            d.set_item("bytes_left", p.bytes_left)?;
            d.set_item("rolled", p.rolled)?;
            d.set_item("dry_run", p.dry_run)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}
