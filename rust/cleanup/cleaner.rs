//! The cleaner's second pass, as Kafka's `Cleaner` makes it: the offset map of the dirty
//! segments' keys, then each batch kept, emptied or removed (`MemoryRecords.filterTo`'s
//! decisions: the latest value of each key, tombstones and transaction markers until their
//! delete horizon, aborted transactions' records, producers' last batches), written again.

use crate::arrow::encoder::Encoded;
use crate::error::{Error, Result};
use crate::format::batch::{BatchDecoder, BatchInfo, Record, RecordSink};
use crate::format::control::{self, ControlType, FirstControl};
use crate::format::filter::{self, DecodedBatch};
use crate::format::index::AbortedTxn;
use crate::log::issues::OnCorrupt;
use crate::log::scan::{for_each_entry, Access};
use crate::storage::Local;
use crate::write::writer::PartitionWriter;
use std::collections::{HashMap, HashSet};

use crate::cleanup::survey::{decoder, guard, overlapping, Seg, Survey};

/// What cleaning read and wrote, for the report.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    pub(super) batches_read: u64,
    pub(super) batches_written: u64,
    pub(super) records_read: u64,
    pub(super) records_written: u64,
    pub(super) bytes_read: u64,
    pub(super) bytes_written: u64,
    pub(super) invalid_records: u64,
}

/// Kafka's `CleanedTransactionMetadata`: which batches and markers of transactions can go.
#[derive(Default)]
pub(super) struct TxnMetadata {
    pub(super) ongoing_committed: HashSet<i64>,
    /// producer id -> (the aborted transaction, whether a batch of it was seen).
    pub(super) ongoing_aborted: HashMap<i64, (AbortedTxn, bool)>,
    /// Aborted transactions not yet reached, the smallest first offset last.
    pub(super) pending: Vec<AbortedTxn>,
}

impl TxnMetadata {
    pub(super) fn new(aborted: impl IntoIterator<Item = AbortedTxn>) -> Self {
        let mut pending: Vec<AbortedTxn> = aborted.into_iter().collect();
        pending.sort_by_key(|t| std::cmp::Reverse(t.first_offset));
        TxnMetadata {
            pending,
            ..TxnMetadata::default()
        }
    }

    pub(super) fn consume_up_to(&mut self, offset: i64) {
        while self
            .pending
            .last()
            .is_some_and(|t| t.first_offset <= offset)
        {
            let txn = self.pending.pop().unwrap();
            self.ongoing_aborted
                .entry(txn.producer_id)
                .or_insert((txn, false));
        }
    }

    /// A marker; returns whether it may be discarded, and the `.txnindex` entry to keep.
    pub(super) fn on_control(
        &mut self,
        batch: &BatchInfo,
        kind: Option<ControlType>,
    ) -> (bool, Option<AbortedTxn>) {
        self.consume_up_to(batch.last_offset);
        match kind {
            // An empty control batch was cleaned before.
            None => (true, None),
            Some(ControlType::Abort) => match self.ongoing_aborted.remove(&batch.producer_id) {
                Some((txn, true)) => (false, Some(txn)),
                _ => (true, None),
            },
            Some(ControlType::Commit) => (!self.ongoing_committed.remove(&batch.producer_id), None),
            Some(_) => (false, None),
        }
    }

    /// A data batch; returns whether it belongs to an aborted transaction.
    pub(super) fn on_batch(&mut self, batch: &BatchInfo) -> bool {
        self.consume_up_to(batch.last_offset);
        if !batch.is_transactional {
            return false;
        }
        match self.ongoing_aborted.get_mut(&batch.producer_id) {
            Some((_, seen)) => {
                *seen = true;
                true
            }
            None => {
                self.ongoing_committed.insert(batch.producer_id);
                false
            }
        }
    }
}

/// Fills the offset map from one batch's records (those not aborted, with a key, from `start`).
pub(super) struct MapSink<'m> {
    pub(super) map: &'m mut HashMap<Vec<u8>, i64>,
    pub(super) start: i64,
    pub(super) txns: &'m mut TxnMetadata,
    pub(super) control: FirstControl,
}

impl RecordSink for MapSink<'_> {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        if batch.is_control {
            self.control.begin_batch(batch);
            return true;
        }
        !self.txns.on_batch(batch)
    }

    fn record(&mut self, batch: &BatchInfo, record: &Record<'_>) {
        if batch.is_control {
            self.control.record(batch, record);
            return;
        }
        if let Some(key) = record.key {
            if record.offset >= self.start {
                match self.map.get_mut(key) {
                    Some(o) => *o = record.offset,
                    None => {
                        self.map.insert(key.to_vec(), record.offset);
                    }
                }
            }
        }
    }
}

pub(super) type OffsetMap = HashMap<Vec<u8>, i64>;

/// `Cleaner.buildOffsetMap`: the last offset of every key in the dirty segments, and the
/// map's latest offset (the end of the dirty range, less one; -1 when it is empty).
pub(super) fn build_offset_map(
    segs: &[Seg],
    start: i64,
    end: i64,
    sv: &Survey,
    on_corrupt: OnCorrupt,
    max_decompressed_size: usize,
) -> Result<(OffsetMap, i64)> {
    let mut map = OffsetMap::new();
    let mut latest = -1i64;
    let dirty = overlapping(segs, start, end);
    let mut txns = TxnMetadata::new(
        sv.aborted
            .iter()
            .filter(|t| t.last_offset >= start && t.first_offset < end)
            .copied(),
    );
    let mut decoder = decoder(max_decompressed_size);
    // Undecodable batches were reported by the survey already.
    let mut skipped = Vec::new();
    let mut sink = MapSink {
        map: &mut map,
        start,
        txns: &mut txns,
        control: FirstControl::default(),
    };
    for k in dirty.clone() {
        for_each_entry(
            &Local,
            &segs[k].path,
            0,
            Access::Whole,
            |position, entry| {
                let decoded = decoder.decode(entry, position, &mut sink);
                let Some(info) = guard(decoded, on_corrupt, &mut skipped)? else {
                    return Ok(true);
                };
                if info.is_control {
                    let kind = if sink.control.is_empty() {
                        None
                    } else {
                        sink.control.kind()
                    };
                    sink.txns.on_control(&info, kind);
                }
                Ok(true)
            },
        )?;
        // The map's latest offset reaches the next segment's base (or the end), gaps included.
        latest = if k + 1 < dirty.end {
            segs[k + 1].base
        } else {
            end
        } - 1;
    }
    Ok((map, latest))
}

/// Kafka's `RecordFilter.BatchRetention`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum BatchRetention {
    Delete,
    RetainEmpty,
    DeleteEmpty,
}

pub(super) struct Cleaner {
    pub(super) map: OffsetMap,
    pub(super) latest: i64,
    pub(super) now: i64,
    pub(super) delete_retention_ms: i64,
    /// The first uncleanable offset: the batch ending just before it is kept even if empty.
    pub(super) upper_bound: i64,
    pub(super) txns: TxnMetadata,
    pub(super) active_producers: HashMap<i64, (Option<i64>, i16)>,
    pub(super) decoder: BatchDecoder,
    pub(super) batch: DecodedBatch,
    pub(super) keep: Vec<bool>,
    pub(super) out: Vec<u8>,
    pub(super) scratch: Vec<u8>,
    pub(super) on_corrupt: OnCorrupt,
    /// What cleaning read and wrote so far.
    pub(super) tally: Tally,
}

impl Cleaner {
    pub(super) fn clean_segment(
        &mut self,
        seg: &Seg,
        retain_legacy_deletes: bool,
        writer: &mut PartitionWriter,
    ) -> Result<()> {
        // Undecodable batches were reported by the survey already.
        let mut skipped = Vec::new();
        for_each_entry(&Local, &seg.path, 0, Access::Whole, |position, entry| {
            self.tally.bytes_read += entry.len() as u64;
            self.tally.batches_read += 1;
            let decoded = self.batch.decode(&mut self.decoder, entry, position);
            let Some(info) = guard(decoded, self.on_corrupt, &mut skipped)? else {
                return Ok(true);
            };
            self.tally.records_read += self.batch.len() as u64;
            self.clean_batch(entry, &info, retain_legacy_deletes, writer)
                .map_err(|e| {
                    if e.position.is_none() {
                        e.at(position)
                    } else {
                        e
                    }
                })?;
            Ok(true)
        })?;
        Ok(())
    }

    pub(super) fn clean_batch(
        &mut self,
        entry: &[u8],
        info: &BatchInfo,
        retain_legacy_deletes: bool,
        writer: &mut PartitionWriter,
    ) -> Result<bool> {
        let kind = if info.is_control && !self.batch.is_empty() {
            Some(control::batch_type(self.batch.record(0).key))
        } else {
            None
        };
        // checkBatchRetention
        let can_discard = if info.is_control {
            // The writer derives the output's `.txnindex` from the batches it keeps, as
            // recovery would (the cleaner copies the entries of markers it keeps).
            self.txns.on_control(info, kind).0
        } else {
            self.txns.on_batch(info)
        };
        let discard_records = if info.is_control {
            can_discard && info.delete_horizon_ms().is_some_and(|h| h <= self.now)
        } else {
            can_discard
        };
        let has_producer = info.magic >= 2 && info.producer_id >= 0;
        let last_of_producer = has_producer
            && self
                .active_producers
                .get(&info.producer_id)
                .is_some_and(|&(last_data, epoch)| match last_data {
                    Some(offset) => info.last_offset == offset,
                    None => info.is_control && info.producer_epoch == epoch,
                });
        let retention = if last_of_producer || info.last_offset.wrapping_add(1) == self.upper_bound
        {
            BatchRetention::RetainEmpty
        } else if discard_records {
            BatchRetention::Delete
        } else {
            BatchRetention::DeleteEmpty
        };
        let marker_for_empty_txn = can_discard && info.is_control;
        if retention == BatchRetention::Delete {
            return Ok(true);
        }

        // The records (shouldRetainRecord).
        self.keep.clear();
        let mut original = true;
        let mut tombstones = false;
        let mut max_kept_ts = -1i64;
        for i in 0..self.batch.len() {
            let r = self.batch.record(i);
            let keep = if discard_records {
                false
            } else if info.is_control || r.offset > self.latest {
                true
            } else if let Some(key) = r.key {
                let found = self.map.get(key).copied().unwrap_or(-1);
                let retain_deletes = if info.magic >= 2 {
                    info.delete_horizon_ms().is_none_or(|h| self.now < h)
                } else {
                    retain_legacy_deletes
                };
                r.offset >= found && (r.value.is_some() || retain_deletes)
            } else {
                self.tally.invalid_records += 1;
                false
            };
            if keep {
                if self.batch.magic_differs(i, info) {
                    original = false;
                }
                tombstones |= r.value.is_none();
                max_kept_ts = max_kept_ts.max(r.timestamp);
            } else {
                original = false;
            }
            self.keep.push(keep);
        }
        let kept = self.keep.iter().filter(|&&k| k).count();
        self.out.clear();
        let (base_offset, last_offset, max_timestamp) = if kept > 0 {
            let need_horizon = info.magic >= 2
                && (tombstones || marker_for_empty_txn)
                && info.delete_horizon_ms().is_none();
            if original && !need_horizon {
                self.out.extend_from_slice(entry);
                (info.base_offset, info.last_offset, info.max_timestamp)
            } else {
                let horizon = if need_horizon {
                    Some(self.now.saturating_add(self.delete_retention_ms))
                } else {
                    info.delete_horizon_ms()
                };
                filter::write_retained(
                    &mut self.out,
                    info,
                    &self.batch,
                    &self.keep,
                    horizon,
                    &mut self.scratch,
                )?;
                let log_append = info.timestamp_type == crate::format::TimestampType::LogAppendTime;
                let max_ts = if log_append {
                    info.max_timestamp
                } else {
                    max_kept_ts
                };
                if info.magic >= 2 {
                    (info.base_offset, info.last_offset, max_ts)
                } else {
                    let first = (0..self.batch.len()).find(|&i| self.keep[i]).unwrap();
                    let last = (0..self.batch.len()).rev().find(|&i| self.keep[i]).unwrap();
                    (
                        self.batch.record(first).offset,
                        self.batch.record(last).offset,
                        max_ts,
                    )
                }
            }
        } else if retention == BatchRetention::RetainEmpty {
            if info.magic < 2 {
                return Err(Error::invalid_argument(format!(
                    "Kafka's cleaner cannot clean this log: the v{} batch ending at offset {} is \
                     the last of the cleaning round and every record of it goes, but empty \
                     batches exist only in magic v2 (the broker fails the same way)",
                    info.magic, info.last_offset
                ))
                .with_offset(info.base_offset));
            }
            filter::write_empty_v2(&mut self.out, info)?;
            (info.base_offset, info.last_offset, info.max_timestamp)
        } else {
            return Ok(true);
        };
        writer.append_encoded(
            &self.out,
            &Encoded {
                magic: info.magic,
                base_offset,
                last_offset,
                max_timestamp,
                records: kept as u32,
                producer_id: info.producer_id,
                is_transactional: info.is_transactional,
                control: kind,
            },
        )?;
        self.tally.records_written += kept as u64;
        self.tally.batches_written += 1;
        self.tally.bytes_written += self.out.len() as u64;
        Ok(true)
    }
}
