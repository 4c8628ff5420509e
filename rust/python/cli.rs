//! Bindings for the command line (`kafkalog.cli`): the core's rules its commands print, so
//! that no Python module re-derives them: a segment's base offset from its file name, a KRaft
//! snapshot's id from its name, Kafka's sanity check of an offset or time index (`kafkalog
//! dump --index-sanity-check`), Kafka's offset index lookup (`--verify-index-only`), and the earliest timestamp a batch header gives (`kafkalog
//! info`).

use super::errors::detach;
use super::storage::storage;
use crate::error::{Error, Result};
use crate::format::batch::TimestampType;
use crate::format::index::{
    check_offset_index, check_time_index, lookup_offset, read_offset_index, read_time_index,
    OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE,
};
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

/// A KRaft snapshot's id from its file name, `<20-digit end offset>-<10-digit epoch>.checkpoint`
/// as Kafka's `Snapshots` names them: `(end offset, epoch)`, `None` for any other name.
pub(super) fn snapshot_id(path: &Path) -> Option<(i64, i32)> {
    let name = path.file_name()?.to_str()?;
    let (offset, epoch) = name.strip_suffix(".checkpoint")?.split_once('-')?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(offset, 20) || !digits(epoch, 10) {
        return None;
    }
    Some((offset.parse().ok()?, epoch.parse().ok()?))
}

/// A KRaft snapshot's `(end offset, epoch)` from its file name
/// (`<20-digit end offset>-<10-digit epoch>.checkpoint`), `None` for any other name.
#[pyfunction]
#[pyo3(name = "snapshot_id")]
pub fn snapshot_id_of(path: PathBuf) -> Option<(i64, i32)> {
    snapshot_id(&path)
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
        sanity_problem(&path, &bytes)
    })
}

fn not_found(path: &Path) -> Error {
    Error::io(std::io::Error::from(std::io::ErrorKind::NotFound), path)
}

/// What is wrong with an index file's `bytes`, in `kafka-dump-log`'s words for the checks
/// Kafka makes (the size, the last entry against the base offset and first timestamp), in the
/// core's for the ordering a lookup relies on, which the core checks as well.
fn sanity_problem(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    let shown = path.display();
    let base = base_offset_from_name(path).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{shown}: cannot take the base offset from the file name"
        ))
    })?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".timeindex") {
        let entries = read_time_index(bytes, base);
        let Some(problem) = check_time_index(bytes.len(), &entries, base) else {
            return Ok(None);
        };
        let (first, last) = (entries.first(), entries.last());
        return Ok(Some(if bytes.len() % TIME_ENTRY_SIZE != 0 {
            format!(
                "Time index file {shown} is corrupt, found {} bytes which is neither positive \
                 nor a multiple of {TIME_ENTRY_SIZE}",
                bytes.len()
            )
        } else if let (Some(first), Some(last)) = (first, last) {
            if last.timestamp < first.timestamp {
                format!(
                    "Corrupt time index found, time index file ({shown}) has non-zero size but \
                     the last timestamp is {} which is less than the first timestamp {}",
                    last.timestamp, first.timestamp
                )
            } else if last.offset < base {
                format!(
                    "Corrupt time index found, time index file ({shown}) has non-zero size but \
                     the last offset is {} which is less than the first offset {base}",
                    last.offset
                )
            } else {
                format!("Time index file {shown} is corrupt: {problem}")
            }
        } else {
            format!("Time index file {shown} is corrupt: {problem}")
        }));
    }
    if !name.ends_with(".index") {
        return Err(Error::invalid_argument(format!(
            "{shown}: not an offset index (.index) or time index (.timeindex)"
        )));
    }
    let entries = read_offset_index(bytes, base);
    let Some(problem) = check_offset_index(bytes.len(), &entries, base) else {
        return Ok(None);
    };
    Ok(Some(match entries.last() {
        _ if bytes.len() % OFFSET_ENTRY_SIZE != 0 => format!(
            "Index file {shown} is corrupt, found {} bytes which is neither positive nor a \
             multiple of {OFFSET_ENTRY_SIZE}",
            bytes.len()
        ),
        Some(last) if last.offset < base => format!(
            "Corrupt index found, index file {shown} has non-zero size but the last offset is \
             {} which is less than the base offset {base}",
            last.offset
        ),
        _ => format!("Index file {shown} is corrupt: {problem}"),
    }))
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
        let create_time = ts_type.value(i) == TimestampType::CreateTime as i32;
        let first = if magic.value(i) >= 2 && create_time && horizon.is_null(i) {
            base.value(i)
        } else {
            max.value(i)
        };
        out.push(first);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_index(entries: &[(u32, u32)]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|(rel, pos)| [rel.to_be_bytes(), pos.to_be_bytes()].concat())
            .collect()
    }

    #[test]
    fn snapshot_ids_are_taken_from_kafkas_names_only() {
        let id = |n: &str| snapshot_id(Path::new(n));
        assert_eq!(
            id("/m/00000000000000001234-0000000007.checkpoint"),
            Some((1234, 7))
        );
        assert_eq!(id("/m/bootstrap.checkpoint"), None);
        assert_eq!(id("/m/1234-7.checkpoint"), None);
        assert_eq!(id("/m/00000000000000001234-0000000007.log"), None);
    }

    #[test]
    fn an_index_of_whole_entries_in_order_passes() {
        let path = Path::new("/x/00000000000000000100.index");
        let bytes = offset_index(&[(0, 0), (5, 4096)]);
        assert_eq!(sanity_problem(path, &bytes).unwrap(), None);
    }

    #[test]
    fn kafkas_checks_are_worded_as_kafka_dump_log_words_them() {
        let path = Path::new("/x/00000000000000000100.index");
        let mut bytes = offset_index(&[(0, 0)]);
        bytes.push(0);
        let problem = sanity_problem(path, &bytes).unwrap().unwrap();
        assert!(problem.ends_with("found 9 bytes which is neither positive nor a multiple of 8"));
        let time = Path::new("/x/00000000000000000100.timeindex");
        let mut bytes = Vec::new();
        for (ts, rel) in [(2_000i64, 1u32), (1_000, 2)] {
            bytes.extend_from_slice(&ts.to_be_bytes());
            bytes.extend_from_slice(&rel.to_be_bytes());
        }
        let problem = sanity_problem(time, &bytes).unwrap().unwrap();
        assert!(problem.contains("the last timestamp is 1000 which is less than the first"));
    }

    #[test]
    fn an_index_out_of_order_fails_by_the_cores_check() {
        let path = Path::new("/x/00000000000000000000.index");
        let bytes = offset_index(&[(5, 4096), (3, 8192)]);
        let problem = sanity_problem(path, &bytes).unwrap().unwrap();
        assert!(problem.contains("entries out of order"), "{problem}");
    }
}
