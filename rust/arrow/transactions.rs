//! What a `read_committed` consumer sees (FORMAT.md §4): records of aborted transactions are
//! dropped, control records hidden, and nothing at or after the last stable offset (the first
//! offset of the earliest transaction still open at the end of the log) is returned.
//!
//! One pass over a partition's batch headers finds the transactions from the markers in the
//! log itself (the `.txnindex` holds the same facts, for aborted transactions only, and cannot
//! tell which transactions are still open).

use super::scan::for_each_entry;
use crate::error::Result;
use crate::format::batch::{BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, Record, RecordSink};
use crate::format::control::{self, ControlType};
use crate::format::index::AbortedTxn;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// The aborted transactions of a partition, by producer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transactions {
    /// producer id -> (first offset, ABORT marker offset) of each aborted transaction.
    aborted: HashMap<i64, Vec<(i64, i64)>>,
    /// The last stable offset, when a transaction is still open at the end of the log.
    pub last_stable_offset: Option<i64>,
}

impl Transactions {
    /// Whether a transactional batch of `producer_id` starting at `base_offset` belongs to an
    /// aborted transaction.
    pub fn is_aborted(&self, producer_id: i64, base_offset: i64) -> bool {
        self.aborted.get(&producer_id).is_some_and(|ranges| {
            ranges
                .iter()
                .any(|&(first, last)| first <= base_offset && base_offset <= last)
        })
    }

    pub fn aborted_count(&self) -> usize {
        self.aborted.values().map(Vec::len).sum()
    }
}

/// Follows transactions batch by batch, as a broker does when it appends or recovers: the
/// first transactional data batch of a producer opens its transaction, its marker closes it.
/// An ABORT marker for a transaction with data yields the `.txnindex` entry for it.
#[derive(Clone, Debug, Default)]
pub struct TxnTracker {
    /// producer id -> first offset of its open transaction.
    open: BTreeMap<i64, i64>,
}

impl TxnTracker {
    /// Takes in one batch; returns the aborted transaction an ABORT marker closes.
    pub fn on_batch(
        &mut self,
        producer_id: i64,
        is_transactional: bool,
        control: Option<ControlType>,
        base_offset: i64,
        last_offset: i64,
    ) -> Option<AbortedTxn> {
        if producer_id < 0 || !is_transactional {
            return None;
        }
        match control {
            Some(kind @ (ControlType::Abort | ControlType::Commit)) => {
                let first_offset = self.open.remove(&producer_id)?;
                (kind == ControlType::Abort).then(|| AbortedTxn {
                    version: 0,
                    producer_id,
                    first_offset,
                    last_offset,
                    // The first offset of the earliest transaction still open, else the next.
                    last_stable_offset: self
                        .open
                        .values()
                        .copied()
                        .min()
                        .unwrap_or(last_offset + 1),
                })
            }
            Some(_) => None,
            None => {
                self.open.entry(producer_id).or_insert(base_offset);
                None
            }
        }
    }

    /// The last stable offset: the first offset of the earliest transaction still open.
    pub fn last_stable_offset(&self) -> Option<i64> {
        self.open.values().copied().min()
    }
}

/// Reads the control type of a control batch's first record.
#[derive(Default)]
pub(crate) struct ControlKind(pub(crate) Option<ControlType>);

impl RecordSink for ControlKind {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        self.0 = None;
        batch.is_control
    }

    fn record(&mut self, _: &BatchInfo, record: &Record<'_>) {
        if self.0.is_none() {
            self.0 = control::parse_key(record.key).ok();
        }
    }
}

/// Follows the transactions through a partition's segments (in offset order).
pub fn scan_transactions(
    segments: &[PathBuf],
    max_decompressed_size: usize,
) -> Result<Transactions> {
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Ignore,
        max_decompressed_size,
    });
    let mut tracker = TxnTracker::default();
    let mut aborted: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    let mut kind = ControlKind::default();
    for path in segments {
        for_each_entry(path, 0, |position, entry| {
            // Only v2 batches can be transactional; their header tells all but a marker's type.
            if entry.get(16) != Some(&2) {
                return Ok(true);
            }
            let attributes = entry.get(22).copied().unwrap_or(0) as i16;
            let transactional = attributes & crate::format::v2::ATTR_TRANSACTIONAL != 0;
            if !transactional {
                return Ok(true);
            }
            let info = decoder.decode(entry, position, &mut kind)?;
            let control = if info.is_control { kind.0 } else { None };
            if let Some(txn) = tracker.on_batch(
                info.producer_id,
                true,
                control,
                info.base_offset,
                info.last_offset,
            ) {
                aborted
                    .entry(txn.producer_id)
                    .or_default()
                    .push((txn.first_offset, txn.last_offset));
            }
            Ok(true)
        })?;
    }
    Ok(Transactions {
        aborted,
        last_stable_offset: tracker.last_stable_offset(),
    })
}
