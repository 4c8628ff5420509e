//! What a `read_committed` consumer sees (docs/format.md §4): records of aborted transactions are
//! dropped, control records hidden, and nothing at or after the last stable offset (the first
//! offset of the earliest transaction still open at the end of the log) is returned.
//!
//! The aborted transactions come from the `.txnindex` files and the open ones from the latest
//! producer snapshot plus the log after it, as a broker loads them (see
//! [`partition_transactions`]); the log itself is scanned only where those files are missing.

use crate::error::Result;
use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
use crate::format::control::FirstControl;
use crate::format::index::{read_txn_index, AbortedTxn, TXN_ENTRY_SIZE};
use crate::format::segment::base_offset_from_name;
use crate::format::snapshot::parse_producer_snapshot;
use crate::format::txn_tracker::TxnTracker;
use crate::log::discover::SegmentFile;
use crate::log::issues::{Issue, IssueKind};
use crate::log::position::seek_position;
use crate::log::scan::{for_each_entry, Access};
use crate::storage::{Stat, Storage};
use std::collections::HashMap;
use std::path::Path;

/// The aborted transactions of a partition, by producer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transactions {
    /// producer id -> (first offset, ABORT marker offset) of each aborted transaction.
    aborted: HashMap<i64, Vec<(i64, i64)>>,
    /// The last stable offset, when a transaction is still open at the end of the log.
    pub last_stable_offset: Option<i64>,
}

impl Transactions {
    /// From a list of aborted transactions `(producer id, first offset, last offset)`, as a
    /// plan hands them to the tasks that read its items.
    pub fn from_aborted(aborted: impl IntoIterator<Item = (i64, i64, i64)>) -> Self {
        let mut map: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        for (producer_id, first, last) in aborted {
            map.entry(producer_id).or_default().push((first, last));
        }
        Transactions {
            aborted: map,
            last_stable_offset: None,
        }
    }

    /// The aborted transactions that overlap offsets `[lower, upper)` (`None`: unbounded).
    pub fn aborted_within(&self, lower: Option<i64>, upper: Option<i64>) -> Vec<(i64, i64, i64)> {
        let mut out: Vec<(i64, i64, i64)> = self
            .aborted
            .iter()
            .flat_map(|(&pid, ranges)| ranges.iter().map(move |&(f, l)| (pid, f, l)))
            .filter(|&(_, first, last)| {
                upper.is_none_or(|u| first < u) && lower.is_none_or(|l| last >= l)
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Whether a transactional batch of `producer_id` starting at `base_offset` belongs to an
    /// aborted transaction.
    pub fn is_aborted(&self, producer_id: i64, base_offset: i64) -> bool {
        self.aborted.get(&producer_id).is_some_and(|ranges| {
            ranges
                .iter()
                .any(|&(first, last)| first <= base_offset && base_offset <= last)
        })
    }

    /// How many aborted transactions were found, over every producer.
    pub fn aborted_count(&self) -> usize {
        self.aborted.values().map(Vec::len).sum()
    }
}

/// The transactions of a partition, from its segments (in offset order), as a broker knows
/// them after loading the log:
/// - aborted transactions from each segment's `.txnindex` (Kafka writes one only for a segment
///   where a transaction was aborted, so a segment that has its `.index` but no `.txnindex` had
///   none); a segment with no index files at all is scanned instead;
/// - transactions still open at the end of the log from the latest producer snapshot
///   (`<offset>.snapshot`, taken at each segment roll and at a clean shutdown), then the batches
///   after it, as Kafka's log loading replays them. Without a snapshot, every segment is scanned.
///
/// So a bounded `read_committed` plan reads indexes, a snapshot and the log's tail, not the log.
///
/// With a `high_watermark`, batches at or above it are left out, as they are for a consumer: a
/// transaction whose marker is not yet acknowledged is still open (Kafka keeps it unstable
/// until the high watermark passes its marker), so the last stable offset never passes the high
/// watermark's view of the log. A snapshot taken above it is not used.
pub fn partition_transactions(
    storage: &dyn Storage,
    segments: &[SegmentFile],
    high_watermark: Option<i64>,
    options: &DecodeOptions,
    issues: &mut Vec<Issue>,
) -> Result<Transactions> {
    let mut aborted: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    let mut add = |txn: &AbortedTxn| {
        let ranges = aborted.entry(txn.producer_id).or_default();
        if !ranges.contains(&(txn.first_offset, txn.last_offset)) {
            ranges.push((txn.first_offset, txn.last_offset));
        }
    };
    let snapshot = latest_snapshot(storage, segments, high_watermark, issues)?;
    // Where replaying batches starts: the snapshot's segment and offset, else the beginning.
    let (replay_from, mut tracker, min_offset) = match &snapshot {
        Some((offset, open)) => {
            let i = segments
                .iter()
                .rposition(|s| s.base_offset.is_some_and(|b| b <= *offset))
                .unwrap_or(0);
            (i, TxnTracker::with_open(open.iter().copied()), *offset)
        }
        None => (0, TxnTracker::default(), i64::MIN),
    };
    // Aborts before the snapshot: from the indexes (the snapshot's own segment included, for
    // the part before the snapshot's offset; the replay below finds the rest).
    let indexed = if snapshot.is_some() {
        replay_from + 1
    } else {
        0
    };
    for segment in &segments[..indexed.min(segments.len())] {
        let log = &segment.path;
        match storage.read(&log.with_extension("txnindex"))? {
            Some(bytes) if bytes.len() % TXN_ENTRY_SIZE == 0 => {
                for txn in read_txn_index(&bytes) {
                    add(&txn);
                }
            }
            Some(_) => {
                issues.push(txn_index_issue(
                    log,
                    "its size is not a whole number of entries",
                ));
                scan(
                    storage,
                    log,
                    (0, i64::MIN, high_watermark),
                    options,
                    &mut TxnTracker::default(),
                    &mut add,
                )?;
            }
            None if storage.stat(&log.with_extension("index"))? != Stat::Missing => {}
            None => {
                scan(
                    storage,
                    log,
                    (0, i64::MIN, high_watermark),
                    options,
                    &mut TxnTracker::default(),
                    &mut add,
                )?;
            }
        }
    }
    for (i, segment) in segments.iter().enumerate().skip(replay_from) {
        if segment
            .base_offset
            .zip(high_watermark)
            .is_some_and(|(b, h)| b >= h)
        {
            break;
        }
        let start = match (i == replay_from, segment.base_offset) {
            (true, Some(base)) if min_offset > base => {
                seek_position(storage, &segment.path, base, min_offset, issues)?
            }
            _ => 0,
        };
        scan(
            storage,
            &segment.path,
            (start, min_offset, high_watermark),
            options,
            &mut tracker,
            &mut add,
        )?;
    }
    Ok(Transactions {
        aborted,
        last_stable_offset: tracker.last_stable_offset(),
    })
}

fn txn_index_issue(log: &Path, problem: &str) -> Issue {
    Issue {
        kind: IssueKind::IndexIgnored,
        message: format!("index not used ({problem}); scanning the segment instead"),
        path: Some(log.with_extension("txnindex")),
        position: 0,
        offset: None,
        bytes: 0,
    }
}

/// A producer snapshot's offset and the transactions open then: (producer id, first offset).
type Snapshot = (i64, Vec<(i64, i64)>);

/// The latest readable producer snapshot of the partition the segments are in: its offset and
/// the transactions open then (producer id, first offset).
fn latest_snapshot(
    storage: &dyn Storage,
    segments: &[SegmentFile],
    high_watermark: Option<i64>,
    issues: &mut Vec<Issue>,
) -> Result<Option<Snapshot>> {
    let Some(dir) = segments.first().and_then(|s| s.path.parent()) else {
        return Ok(None);
    };
    let first_base = segments[0].base_offset.unwrap_or(0);
    let mut snapshots: Vec<(i64, std::path::PathBuf)> = storage
        .list(dir)?
        .into_iter()
        .filter(|e| !e.is_dir && e.path.extension().is_some_and(|x| x == "snapshot"))
        .filter_map(|e| base_offset_from_name(&e.path).map(|o| (o, e.path)))
        .filter(|(o, _)| *o >= first_base && high_watermark.is_none_or(|h| *o <= h))
        .collect();
    snapshots.sort();
    while let Some((offset, path)) = snapshots.pop() {
        let Some(bytes) = storage.read(&path)? else {
            continue;
        };
        match parse_producer_snapshot(&bytes) {
            Ok(entries) => {
                let open = entries
                    .iter()
                    .filter(|e| e.current_txn_first_offset >= 0)
                    .map(|e| (e.producer_id, e.current_txn_first_offset))
                    .collect();
                return Ok(Some((offset, open)));
            }
            Err(err) => issues.push(Issue {
                kind: IssueKind::IndexIgnored,
                message: format!(
                    "producer snapshot not used ({}); using an older one",
                    err.message
                ),
                path: Some(path),
                position: 0,
                offset: None,
                bytes: 0,
            }),
        }
    }
    Ok(None)
}

/// Follows the transactional batches of one segment from byte `start`, those at or after
/// `min_offset` and below `below` (a high watermark), reporting each aborted transaction.
fn scan(
    storage: &dyn Storage,
    log: &Path,
    (start, min_offset, below): (u64, i64, Option<i64>),
    options: &DecodeOptions,
    tracker: &mut TxnTracker,
    aborted: &mut impl FnMut(&AbortedTxn),
) -> Result<()> {
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Ignore,
        max_decompressed_size: options.max_decompressed_size,
    });
    let mut kind = FirstControl::default();
    for_each_entry(storage, log, start, Access::Whole, |position, entry| {
        if let (Some(h), Some(base)) = (below, entry.get(0..8)) {
            if i64::from_be_bytes(base.try_into().unwrap()) >= h {
                return Ok(false); // not acknowledged: no consumer sees it
            }
        }
        // Only v2 batches can be transactional; their header tells all but a marker's type.
        if entry.get(16) != Some(&2) {
            return Ok(true);
        }
        let attributes = entry.get(22).copied().unwrap_or(0) as i16;
        if attributes & crate::format::v2::ATTR_TRANSACTIONAL == 0 {
            return Ok(true);
        }
        let info = decoder.decode(entry, position, &mut kind)?;
        if info.base_offset < min_offset {
            return Ok(true);
        }
        let control = kind.kind();
        if let Some(txn) = tracker.on_batch(
            info.producer_id,
            true,
            control,
            info.base_offset,
            info.last_offset,
        ) {
            aborted(&txn);
        }
        Ok(true)
    })?;
    Ok(())
}
