//! Bindings for the command line (`kafkalog.cli`): the core's rules its commands print, so
//! that no Python module re-derives them: a segment's base offset from its file name, a KRaft
//! snapshot's id from its name, Kafka's sanity check of an offset or time index (`kafkalog
//! dump --index-sanity-check`), Kafka's offset index lookup (`--verify-index-only`), and the earliest timestamp a batch header gives (`kafkalog
//! info`).

use super::errors::detach;
use super::storage::storage;
use crate::error::{Error, Result};
use crate::format::batch::{first_record_timestamp, TimestampType};
use crate::format::index::{lookup_offset, read_offset_index, sanity_check};
use crate::format::segment::base_offset_from_name;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, RecordBatch};
use pyo3::prelude::*;
use pyo3_arrow::input::AnyRecordBatch;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The base offset in a segment or index file's name (`00000000000000001234.log` -> 1234; a
/// tiered-storage `<offset>-<segment id>.log` too), `None` where the name does not give one.
#[pyfunction]
#[pyo3(name = "base_offset_from_name")]
pub fn base_offset_of(path: PathBuf) -> Option<i64> {
    base_offset_from_name(&path)
}

/// A KRaft snapshot's `(end offset, epoch)` from its file name
/// (`<20-digit end offset>-<10-digit epoch>.checkpoint`), `None` for any other name.
#[pyfunction]
#[pyo3(name = "snapshot_id")]
pub fn snapshot_id_of(path: PathBuf) -> Option<(i64, i32)> {
    crate::format::segment::kraft_snapshot_id(&path)
}

/// Kafka's sanity check of the `.index` or `.timeindex` at `path` (`OffsetIndex.sanityCheck`,
/// `TimeIndex.sanityCheck`, as `kafka-dump-log --index-sanity-check` runs them), by the
/// core's checks: `None` when it passes, else what is wrong in `kafka-dump-log`'s words.
#[pyfunction]
#[pyo3(signature = (path, storage_options=None, filesystem=None))]
pub fn index_sanity_check(
    py: Python<'_>,
    path: PathBuf,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<Option<String>> {
    let storage = storage(storage_options, filesystem);
    detach(py, || {
        let bytes = storage.read(&path)?.ok_or_else(|| not_found(&path))?;
        sanity_check(&path, &bytes)
    })
}

fn not_found(path: &Path) -> Error {
    Error::io(std::io::Error::from(std::io::ErrorKind::NotFound), path)
}

/// Where Kafka's offset index lookup (`OffsetIndex.lookup`, format::index::lookup_offset) starts
/// the search for each of `offsets` in the `.index` at `index_path`: the position of the
/// largest entry at or below the offset, 0 where there is none or no index (as
/// `kafka-dump-log` checks a time index's entries against the log).
#[pyfunction]
#[pyo3(signature = (index_path, offsets, storage_options=None))]
pub fn index_lookup(
    py: Python<'_>,
    index_path: PathBuf,
    offsets: Vec<i64>,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<Vec<u64>> {
    let storage = storage(storage_options, None);
    detach(py, || {
        let bytes = storage.read(&index_path)?.unwrap_or_default();
        let base = base_offset_from_name(&index_path).unwrap_or(0);
        let entries = read_offset_index(&bytes, base);
        Ok(offsets
            .iter()
            .map(|&o| lookup_offset(&entries, o).map_or(0, |e| u64::from(e.position)))
            .collect())
    })
}

/// The earliest timestamp the header of each batch in `listing` (rows of
/// `kafkalog.read_batches`) gives for its records, -1 for none: a v2 CreateTime batch's base
/// timestamp (its first record's), unless the log cleaner has put a delete horizon in its place
/// (KIP-534); otherwise the batch's max timestamp (a LogAppendTime batch's records all carry
/// the append time; a v0/v1 entry is one message).
#[pyfunction]
pub fn batch_first_timestamps(py: Python<'_>, listing: AnyRecordBatch) -> PyResult<Vec<i64>> {
    let reader = listing.into_reader()?;
    detach(py, || {
        let mut out = Vec::new();
        for batch in reader {
            let batch = batch.map_err(|e| Error::invalid_argument(e.to_string()))?;
            first_timestamps(&batch, &mut out)?;
        }
        Ok(out)
    })
}

fn first_timestamps(batch: &RecordBatch, out: &mut Vec<i64>) -> Result<()> {
    let column = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| Error::invalid_argument(format!("a batch listing has a {name} column")))
    };
    let magic = column("magic")?.as_primitive_opt::<Int8Type>();
    let ts_type = column("timestampType")?.as_primitive_opt::<Int32Type>();
    let base = column("baseTimestamp")?.as_primitive_opt::<Int64Type>();
    let max = column("maxTimestamp")?.as_primitive_opt::<Int64Type>();
    let horizon = column("deleteHorizonMs")?.as_primitive_opt::<Int64Type>();
    let (Some(magic), Some(ts_type), Some(base), Some(max), Some(horizon)) =
        (magic, ts_type, base, max, horizon)
    else {
        return Err(Error::invalid_argument(
            "not a batch listing (kafkalog.read_batches' columns)",
        ));
    };
    for i in 0..batch.num_rows() {
        out.push(first_record_timestamp(
            magic.value(i),
            ts_type.value(i) == TimestampType::CreateTime as i32,
            base.value(i),
            max.value(i),
            horizon.is_valid(i),
        ));
    }
    Ok(())
}
