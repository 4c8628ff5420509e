//! Kafka's names and kafkalog's defaults, defined once in the core and exposed to Python: the
//! control record types and timestamp types by id, a control record's parsed key and value
//! (so that Python never reads Kafka's bytes itself), and the default of every option that
//! the Python API repeats in its signatures.

use crate::format::batch::TimestampType;
use crate::format::control::{self, ControlType};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Target rows per record batch of `kafkalog.read` and friends.
pub const DEFAULT_BATCH_SIZE: usize = crate::arrow::decoder::DEFAULT_BATCH_SIZE;
/// Cap on one batch's decompressed bytes.
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize =
    crate::format::batch::DEFAULT_MAX_DECOMPRESSED_SIZE;
/// Kafka's `index.interval.bytes`.
pub const DEFAULT_INDEX_INTERVAL_BYTES: u64 = crate::format::index::DEFAULT_INDEX_INTERVAL_BYTES;
/// Kafka's `log.segment.bytes`.
pub const DEFAULT_SEGMENT_BYTES: u64 = crate::write::writer::DEFAULT_SEGMENT_BYTES;
/// Most records in one fresh batch written by `kafkalog.write`.
pub const DEFAULT_BATCH_RECORDS: usize = crate::arrow::encoder::DEFAULT_BATCH_RECORDS;
/// Most uncompressed bytes in one fresh batch (the producer's `batch.size`).
pub const DEFAULT_BATCH_BYTES: usize = crate::arrow::encoder::DEFAULT_BATCH_BYTES;
/// Bytes of log per work item of `kafkalog.plan` (and a Spark task).
pub const DEFAULT_TARGET_BYTES: u64 = crate::spark::options::DEFAULT_TARGET_BYTES;
/// Kafka's `delete.retention.ms`.
pub const DEFAULT_DELETE_RETENTION_MS: i64 = crate::cleanup::compact::DEFAULT_DELETE_RETENTION_MS;

/// A control record, parsed as Kafka parses it: its type (Kafka's enum name and id) and, for
/// a transaction marker (ABORT, COMMIT), the coordinator epoch.
#[pyclass(module = "kafkalog._native", frozen, get_all)]
pub struct ControlRecord {
    /// Kafka's `ControlRecordType` name: ABORT, COMMIT, LEADER_CHANGE, ..., or UNKNOWN.
    #[pyo3(name = "type")]
    kind: &'static str,
    /// The type's id as stored in the key.
    type_id: i16,
    /// The end-transaction marker's coordinator epoch; `None` for other control records.
    coordinator_epoch: Option<i32>,
}

#[pymethods]
impl ControlRecord {
    fn __repr__(&self) -> String {
        format!(
            "ControlRecord(type={:?}, type_id={}, coordinator_epoch={:?})",
            self.kind, self.type_id, self.coordinator_epoch
        )
    }
}

/// Parses a control record's key and value (`CorruptRecordError` where Kafka would fail).
#[pyfunction]
#[pyo3(signature = (key, value))]
pub fn control_record(key: Option<&[u8]>, value: Option<&[u8]>) -> PyResult<ControlRecord> {
    let kind = control::parse_key(key)?;
    let coordinator_epoch = if kind.is_transaction_marker() {
        Some(control::parse_end_txn_marker(value)?)
    } else {
        None
    };
    Ok(ControlRecord {
        kind: kind.name(),
        type_id: kind.id(),
        coordinator_epoch,
    })
}

/// Adds the names and defaults to the module.
pub fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let control_types = PyDict::new(py);
    let mut id = 0;
    while let known @ (ControlType::Abort
    | ControlType::Commit
    | ControlType::LeaderChange
    | ControlType::SnapshotHeader
    | ControlType::SnapshotFooter
    | ControlType::KRaftVersion
    | ControlType::KRaftVoters) = ControlType::from_id(id)
    {
        control_types.set_item(id, known.name())?;
        id += 1;
    }
    m.add("CONTROL_TYPES", control_types)?;
    let timestamp_types = PyDict::new(py);
    for t in [
        TimestampType::NoTimestamp,
        TimestampType::CreateTime,
        TimestampType::LogAppendTime,
    ] {
        timestamp_types.set_item(t as i8, t.name())?;
    }
    m.add("TIMESTAMP_TYPES", timestamp_types)?;
    let finding_kinds: Vec<&str> = crate::cleanup::verify::FindingKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    m.add("FINDING_KINDS", finding_kinds)?;
    m.add("DEFAULT_BATCH_SIZE", DEFAULT_BATCH_SIZE)?;
    m.add(
        "DEFAULT_MAX_DECOMPRESSED_SIZE",
        DEFAULT_MAX_DECOMPRESSED_SIZE,
    )?;
    m.add("DEFAULT_INDEX_INTERVAL_BYTES", DEFAULT_INDEX_INTERVAL_BYTES)?;
    m.add("DEFAULT_SEGMENT_BYTES", DEFAULT_SEGMENT_BYTES)?;
    m.add("DEFAULT_BATCH_RECORDS", DEFAULT_BATCH_RECORDS)?;
    m.add("DEFAULT_BATCH_BYTES", DEFAULT_BATCH_BYTES)?;
    m.add("DEFAULT_TARGET_BYTES", DEFAULT_TARGET_BYTES)?;
    m.add("DEFAULT_DELETE_RETENTION_MS", DEFAULT_DELETE_RETENTION_MS)?;
    m.add_class::<ControlRecord>()?;
    m.add_function(wrap_pyfunction!(control_record, m)?)?;
    m.add_function(wrap_pyfunction!(nearest_name, m)?)?;
    Ok(())
}

/// The name of `names` nearest to `given` (a misspelt option), or `None` when none is close:
/// the core's rule for every "did you mean" (`error::nearest_name`).
#[pyfunction]
pub fn nearest_name(given: &str, names: Vec<String>) -> Option<String> {
    crate::error::nearest_name(given, names.iter().map(String::as_str)).map(str::to_owned)
}
