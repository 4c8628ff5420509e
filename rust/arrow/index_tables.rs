//! The small files beside segments as Arrow tables: `.index`, `.timeindex`, `.txnindex`,
//! producer `.snapshot`s and `leader-epoch-checkpoint`.

use crate::error::{Error, Result};
use crate::format::checkpoint::parse_leader_epoch_checkpoint;
use crate::format::index::{read_offset_index, read_time_index, read_txn_index};
use crate::format::segment::base_offset_from_name;
use crate::format::snapshot::parse_producer_snapshot;
use arrow_array::{ArrayRef, Int16Array, Int32Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use std::path::Path;
use std::sync::Arc;

/// Which kind of file, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// An offset index, `<base offset>.index`.
    Offset,
    /// A time index, `<base offset>.timeindex`.
    Time,
    /// A transaction index of aborted transactions, `<base offset>.txnindex`.
    Txn,
    /// A producer state snapshot, `<offset>.snapshot`.
    Snapshot,
    /// The `leader-epoch-checkpoint` file.
    LeaderEpoch,
}

impl IndexKind {
    /// The kind of `path` from its name (extension, or `leader-epoch-checkpoint`); `None` for
    /// any other file.
    pub fn of(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        if name == "leader-epoch-checkpoint" {
            return Some(IndexKind::LeaderEpoch);
        }
        match path.extension()?.to_str()? {
            "index" => Some(IndexKind::Offset),
            "timeindex" => Some(IndexKind::Time),
            "txnindex" => Some(IndexKind::Txn),
            "snapshot" => Some(IndexKind::Snapshot),
            _ => None,
        }
    }
}

fn table(fields: Vec<(&str, DataType)>, columns: Vec<ArrayRef>) -> RecordBatch {
    let schema = Schema::new(
        fields
            .into_iter()
            .map(|(n, t)| Field::new(n, t, false))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), columns).expect("columns match their fields")
}

/// Reads one index-like file into a table; the kind comes from the name unless given.
pub fn read_index_file(
    storage: &dyn crate::storage::Storage,
    path: &Path,
    kind: Option<IndexKind>,
    base_offset: Option<i64>,
) -> Result<RecordBatch> {
    let kind = kind.or_else(|| IndexKind::of(path)).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: not an index file (.index, .timeindex, .txnindex, .snapshot, leader-epoch-checkpoint)",
            path.display()
        ))
    })?;
    let bytes = storage
        .read(path)?
        .ok_or_else(|| crate::storage::not_found(path))?;
    let base = || {
        base_offset
            .or_else(|| base_offset_from_name(path))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{}: give the base offset (the name does not say it)",
                    path.display()
                ))
            })
    };
    Ok(match kind {
        IndexKind::Offset => offset_index_table(&bytes, base()?),
        IndexKind::Time => time_index_table(&bytes, base()?),
        IndexKind::Txn => txn_index_table(&bytes),
        IndexKind::Snapshot => snapshot_table(&bytes).map_err(|e| e.with_path(path))?,
        IndexKind::LeaderEpoch => {
            let text = String::from_utf8_lossy(&bytes);
            leader_epoch_table(&text).map_err(|e| e.with_path(path))?
        }
    })
}

/// An offset index as a table: one row per entry, the relative offsets made absolute with
/// the segment's `base_offset`, with the log position each points at.
pub fn offset_index_table(bytes: &[u8], base_offset: i64) -> RecordBatch {
    let entries = read_offset_index(bytes, base_offset);
    table(
        vec![
            ("offset", DataType::Int64),
            ("relativeOffset", DataType::Int32),
            ("position", DataType::Int64),
        ],
        vec![
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.offset),
            )),
            Arc::new(Int32Array::from_iter_values(
                entries
                    .iter()
                    .map(|e| e.offset.wrapping_sub(base_offset) as i32),
            )),
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.position as i64),
            )),
        ],
    )
}

/// A time index as a table: one row per entry, a timestamp and the absolute offset of the
/// first record at or after it.
pub fn time_index_table(bytes: &[u8], base_offset: i64) -> RecordBatch {
    let entries = read_time_index(bytes, base_offset);
    table(
        vec![
            ("timestamp", DataType::Int64),
            ("offset", DataType::Int64),
            ("relativeOffset", DataType::Int32),
        ],
        vec![
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.timestamp),
            )),
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.offset),
            )),
            Arc::new(Int32Array::from_iter_values(
                entries
                    .iter()
                    .map(|e| e.offset.wrapping_sub(base_offset) as i32),
            )),
        ],
    )
}

/// A transaction index as a table: one row per aborted transaction (producer id, first and
/// last offset, the last stable offset when it was aborted).
pub fn txn_index_table(bytes: &[u8]) -> RecordBatch {
    let entries = read_txn_index(bytes);
    let col = |f: fn(&crate::format::index::AbortedTxn) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(entries.iter().map(f)))
    };
    table(
        vec![
            ("version", DataType::Int16),
            ("producerId", DataType::Int64),
            ("firstOffset", DataType::Int64),
            ("lastOffset", DataType::Int64),
            ("lastStableOffset", DataType::Int64),
        ],
        vec![
            Arc::new(Int16Array::from_iter_values(
                entries.iter().map(|e| e.version),
            )),
            col(|e| e.producer_id),
            col(|e| e.first_offset),
            col(|e| e.last_offset),
            col(|e| e.last_stable_offset),
        ],
    )
}

/// A producer state snapshot as a table: one row per producer (id, epoch, last sequence,
/// last offset, open transaction); fails on a bad CRC or version.
pub fn snapshot_table(bytes: &[u8]) -> Result<RecordBatch> {
    let entries = parse_producer_snapshot(bytes)?;
    Ok(table(
        vec![
            ("producerId", DataType::Int64),
            ("producerEpoch", DataType::Int16),
            ("coordinatorEpoch", DataType::Int32),
            ("currentTxnFirstOffset", DataType::Int64),
            ("lastTimestamp", DataType::Int64),
            ("firstSequence", DataType::Int32),
            ("lastSequence", DataType::Int32),
            ("lastOffset", DataType::Int64),
            ("offsetDelta", DataType::Int32),
        ],
        vec![
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.producer_id),
            )),
            Arc::new(Int16Array::from_iter_values(
                entries.iter().map(|e| e.producer_epoch),
            )),
            Arc::new(Int32Array::from_iter_values(
                entries.iter().map(|e| e.coordinator_epoch),
            )),
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.current_txn_first_offset),
            )),
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.timestamp),
            )),
            Arc::new(Int32Array::from_iter_values(
                entries.iter().map(|e| e.first_sequence()),
            )),
            Arc::new(Int32Array::from_iter_values(
                entries.iter().map(|e| e.last_sequence),
            )),
            Arc::new(Int64Array::from_iter_values(
                entries.iter().map(|e| e.last_offset),
            )),
            Arc::new(Int32Array::from_iter_values(
                entries.iter().map(|e| e.offset_delta),
            )),
        ],
    ))
}

/// A `leader-epoch-checkpoint` as a table: one row per (leader epoch, start offset).
pub fn leader_epoch_table(text: &str) -> Result<RecordBatch> {
    let entries = parse_leader_epoch_checkpoint(text)?;
    let epochs: Vec<i32> = entries.iter().map(|e| e.epoch).collect();
    let offsets: Vec<i64> = entries.iter().map(|e| e.start_offset).collect();
    Ok(table(
        vec![("epoch", DataType::Int32), ("startOffset", DataType::Int64)],
        vec![
            Arc::new(Int32Array::from(epochs)),
            Arc::new(Int64Array::from(offsets)),
        ],
    ))
}
