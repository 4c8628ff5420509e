//! The cleaner's first pass over a partition: each segment's facts (sizes, times, offsets),
//! the producers' state and the aborted transactions, as a broker knows them after loading the
//! log; and the pieces both passes share (decoding, the policy for corrupt batches, which
//! segments overlap a range).

use crate::error::{Error, ErrorKind, Result};
use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
use crate::format::control::{ControlType, FirstControl};
use crate::format::index::AbortedTxn;
use crate::format::segment::base_offset_from_name;
use crate::log::issues::OnCorrupt;
use crate::log::scan::{for_each_entry, Access};
use crate::storage::Local;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One input segment and what the first pass learned about it.
#[derive(Clone, Debug)]
pub(super) struct Seg {
    pub(super) path: PathBuf,
    pub(super) base: i64,
    pub(super) size: u64,
    pub(super) mtime_ms: i64,
    pub(super) index_size: u64,
    pub(super) time_index_size: u64,
    pub(super) max_timestamp: i64,
    pub(super) first_batch_timestamp: Option<i64>,
    pub(super) next_offset: Option<i64>,
}

impl Seg {
    /// `LogSegment.largestTimestamp`: the max timestamp, or the file's modification time.
    pub(super) fn largest_timestamp(&self) -> i64 {
        if self.max_timestamp >= 0 {
            self.max_timestamp
        } else {
            self.mtime_ms
        }
    }
}

/// A producer as the broker's producer state holds it after loading the log.
#[derive(Clone, Debug)]
pub(super) struct Producer {
    pub(super) epoch: i16,
    pub(super) last_data_offset: Option<i64>,
    pub(super) last_timestamp: i64,
    pub(super) txn_open: bool,
}

pub(super) fn mtime_ms(path: &Path) -> Result<i64> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(e, path))?;
    Ok(meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64))
}

pub(super) fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Applies [`OnCorrupt`] to the result of decoding one batch.
pub(super) fn guard<T>(
    result: Result<T>,
    policy: OnCorrupt,
    skipped: &mut Vec<Error>,
) -> Result<Option<T>> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(e)
            if policy == OnCorrupt::Skip
                && matches!(
                    e.kind,
                    ErrorKind::Corrupt
                        | ErrorKind::CrcMismatch
                        | ErrorKind::Decompression
                        | ErrorKind::LimitExceeded
                ) =>
        {
            skipped.push(e);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The first pass: segment facts, producer state, aborted transactions, the last stable offset.
pub(super) struct Survey {
    pub(super) segs: Vec<Seg>,
    pub(super) producers: HashMap<i64, Producer>,
    pub(super) aborted: Vec<AbortedTxn>,
    /// First offset of the earliest transaction still open at the end of the log.
    pub(super) first_unstable: Option<i64>,
    pub(super) log_end_offset: i64,
}

pub(super) fn survey(
    paths: &[PathBuf],
    on_corrupt: OnCorrupt,
    max_decompressed_size: usize,
    skipped: &mut Vec<Error>,
) -> Result<Survey> {
    let mut decoder = decoder(max_decompressed_size);
    let mut control = FirstControl::default();
    let mut producers: HashMap<i64, Producer> = HashMap::new();
    let mut open: BTreeMap<i64, i64> = BTreeMap::new();
    let mut aborted = Vec::new();
    let mut segs = Vec::with_capacity(paths.len());
    for path in paths {
        let base = base_offset_from_name(path).unwrap_or(0);
        let mut seg = Seg {
            path: path.clone(),
            base,
            size: file_len(path),
            mtime_ms: mtime_ms(path)?,
            index_size: file_len(&path.with_extension("index")),
            time_index_size: file_len(&path.with_extension("timeindex")),
            max_timestamp: -1,
            first_batch_timestamp: None,
            next_offset: None,
        };
        for_each_entry(&Local, path, 0, Access::Whole, |position, entry| {
            let decoded = decoder.decode(entry, position, &mut control);
            let Some(info) = guard(decoded, on_corrupt, skipped)? else {
                return Ok(true);
            };
            seg.max_timestamp = seg.max_timestamp.max(info.max_timestamp);
            seg.first_batch_timestamp.get_or_insert(info.max_timestamp);
            seg.next_offset = Some(info.last_offset.wrapping_add(1));
            if info.magic < 2 || info.producer_id < 0 {
                return Ok(true);
            }
            let marker = control.kind();
            let p = producers.entry(info.producer_id).or_insert(Producer {
                epoch: info.producer_epoch,
                last_data_offset: None,
                last_timestamp: -1,
                txn_open: false,
            });
            if p.epoch != info.producer_epoch {
                // A new epoch clears the producer's batch metadata.
                p.last_data_offset = None;
                p.epoch = info.producer_epoch;
            }
            p.last_timestamp = info.max_timestamp;
            match marker {
                Some(kind @ (ControlType::Abort | ControlType::Commit)) => {
                    p.txn_open = false;
                    if info.is_transactional {
                        if let Some(first_offset) = open.remove(&info.producer_id) {
                            if kind == ControlType::Abort {
                                aborted.push(AbortedTxn {
                                    version: 0,
                                    producer_id: info.producer_id,
                                    first_offset,
                                    last_offset: info.last_offset,
                                    last_stable_offset: open
                                        .values()
                                        .copied()
                                        .min()
                                        .unwrap_or(info.last_offset + 1),
                                });
                            }
                        }
                    }
                }
                Some(_) => {}
                None if info.is_control => {}
                None => {
                    p.last_data_offset = Some(info.last_offset);
                    if info.is_transactional {
                        p.txn_open = true;
                        open.entry(info.producer_id).or_insert(info.base_offset);
                    }
                }
            }
            Ok(true)
        })?;
        segs.push(seg);
    }
    let log_end_offset = segs
        .iter()
        .rev()
        .find_map(|s| s.next_offset)
        .unwrap_or_else(|| segs.last().map_or(0, |s| s.base))
        .max(segs.last().map_or(0, |s| s.base));
    Ok(Survey {
        segs,
        producers,
        aborted,
        first_unstable: open.values().copied().min(),
        log_end_offset,
    })
}

pub(super) fn decoder(max_decompressed_size: usize) -> BatchDecoder {
    BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Verify,
        max_decompressed_size,
    })
}

/// Kafka's `LogSegments.values(from, to)`: the segments overlapping `[from, to)`, as a range of
/// indexes (the segment holding `from` first).
pub(super) fn overlapping(segs: &[Seg], from: i64, to: i64) -> std::ops::Range<usize> {
    if from >= to {
        return 0..0;
    }
    let start = segs.iter().rposition(|s| s.base <= from).unwrap_or(0);
    let end = segs.iter().position(|s| s.base >= to).unwrap_or(segs.len());
    start..end.max(start)
}
