//! Planning a read as work items: which byte ranges of which segments a read needs, within its
//! bounds, cut into pieces of about a target size at batch boundaries. The Spark data source
//! plans on the driver and hands the items to tasks; a task decodes its item without planning
//! again (`read::reader::ReaderBuilder::build_planned`).
//!
//! Planning reads indexes, producer snapshots and the few log bytes that confirm them (see
//! [`crate::log::bounds`], [`crate::log::position`] and [`crate::log::transactions`]), never whole logs.

use crate::error::Result;
use crate::format::batch::DecodeOptions;
use crate::log::bounds::{plan_with, Bounds, FileBounds, Planned};
use crate::log::discover::by_partition;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::log::origin::Origin;
use crate::log::position::split_points;
use crate::log::transactions::Transactions;
use crate::log::visibility::Checkpoints;
use crate::storage::{Stat, Storage};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A piece of one segment file to decode in one task: entries from byte `start` to `end`
/// (exclusive; `None` for the end of the file), both batch boundaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkItem {
    /// The segment file, as `storage` names it.
    pub path: PathBuf,
    /// First byte to read: a batch boundary.
    pub start: u64,
    /// Exclusive end: a batch boundary, or `None` for the end of the file.
    pub end: Option<u64>,
    /// The topic and partition of the item's records.
    pub origin: Origin,
    /// No record in the item has a lower offset (from the file name or the offset index).
    pub base_offset: Option<i64>,
    /// Bytes of log in the item.
    pub size: u64,
    /// Keep offsets at or after this.
    pub start_offset: Option<i64>,
    /// Keep offsets before this.
    pub end_offset: Option<i64>,
    /// Aborted transactions whose records the item leaves out: (producer id, first offset,
    /// last offset). `None`: the read is not `read_committed`.
    pub aborted: Option<Vec<(i64, i64, i64)>>,
}

impl WorkItem {
    /// The file and bounds a reader decodes this item with.
    pub fn to_planned(&self) -> Planned {
        let file = SegmentFile {
            path: self.path.clone(),
            base_offset: crate::format::segment::base_offset_from_name(&self.path),
            origin: self.origin.clone(),
            start: self.start,
            end: self.end,
            size: None,
        };
        let bounds = FileBounds {
            start: self.start_offset.unwrap_or(i64::MIN),
            end: self.end_offset,
            transactions: self
                .aborted
                .as_ref()
                .map(|a| Arc::new(Transactions::from_aborted(a.iter().copied()))),
        };
        Planned { file, bounds }
    }
}

/// Plans `files` (in reading order, as [`crate::log::discover::discover`] lists them), each
/// partition within the bounds `bounds_of` gives it, into items of about `target_bytes`
/// (`None`: one item per file).
///
/// Planning a partition directory into items of about 1 MiB, as the Spark data source does
/// on the driver:
///
/// ```
/// use kafkalog::log::discover::discover;
/// use kafkalog::log::plan::plan_items;
/// use kafkalog::log::bounds::Bounds;
/// use kafkalog::format::batch::DecodeOptions;
/// use kafkalog::storage::default_storage;
/// use std::path::Path;
///
/// let storage = default_storage();
/// let files = discover(storage.as_ref(), Path::new("examples/logs/orders-0"))?;
/// let every = |_: &_| Bounds::default();
/// let (items, _issues) =
///     plan_items(storage.as_ref(), files, &every, Some(1 << 20), &DecodeOptions::default())?;
/// assert!(!items.is_empty());
/// assert!(items.iter().all(|i| i.origin.topic.as_deref() == Some("orders")));
/// # Ok::<(), kafkalog::Error>(())
/// ```
pub fn plan_items(
    storage: &dyn Storage,
    files: Vec<SegmentFile>,
    bounds_of: &dyn Fn(&Origin) -> Bounds,
    target_bytes: Option<u64>,
    options: &DecodeOptions,
) -> Result<(Vec<WorkItem>, Vec<Issue>)> {
    let mut items = Vec::new();
    let mut issues = Vec::new();
    let mut checkpoints = Checkpoints::new();
    for group in by_partition(files) {
        let bounds = bounds_of(&group[0].origin);
        // A segment holds offsets below the next segment's base offset.
        let next_base: HashMap<PathBuf, Option<i64>> = group
            .iter()
            .zip(group.iter().skip(1).map(|f| f.base_offset).chain([None]))
            .map(|(f, next)| (f.path.clone(), next))
            .collect();
        let (planned, noted) = plan_with(storage, group, &bounds, options, &mut checkpoints)?;
        issues.extend(noted);
        for Planned {
            file,
            bounds: file_bounds,
        } in planned
        {
            let next_base = next_base.get(&file.path).copied().flatten();
            items.extend(cut(storage, file, &file_bounds, next_base, target_bytes)?);
        }
    }
    Ok((items, issues))
}

/// Cuts one planned file into items.
fn cut(
    storage: &dyn Storage,
    file: SegmentFile,
    bounds: &FileBounds,
    next_base: Option<i64>,
    target_bytes: Option<u64>,
) -> Result<Vec<WorkItem>> {
    let size = match file.size {
        Some(size) => size,
        None => match storage.stat(&file.path)? {
            Stat::File { size } => size,
            _ => return Err(crate::storage::not_found(&file.path)),
        },
    };
    let end = file.end.map_or(size, |e| e.min(size));
    let whole = vec![(file.start, file.base_offset, None)];
    // A tiered segment is fetched in chunks: no piece smaller than one.
    let target_bytes = match target_bytes {
        Some(t) => Some(
            crate::storage::tiered::discovery::split_unit(storage, &file.path)?
                .map_or(t, |u| t.max(u)),
        ),
        None => None,
    };
    let cuts = match (target_bytes, file.base_offset) {
        (Some(target), Some(base)) if end - file.start > target => {
            let mut cuts: Vec<_> = split_points(storage, &file.path, base, target)?
                .into_iter()
                .filter(|(position, _, _)| *position >= file.start && *position < end)
                .collect();
            if cuts.first().is_none_or(|c| c.0 != file.start) {
                cuts.insert(0, (file.start, file.base_offset, None));
            }
            cuts
        }
        _ => whole,
    };
    let start_offset = (bounds.start != i64::MIN).then_some(bounds.start);
    let mut items = Vec::new();
    for (k, &(position, lower, _)) in cuts.iter().enumerate() {
        let stop = cuts.get(k + 1).map(|c| c.0);
        // Every offset in the item is below this (a segment's, below the next segment's).
        let upper = match cuts.get(k + 1) {
            Some(c) => c.2,
            None => next_base,
        };
        if upper.zip(start_offset).is_some_and(|(u, s)| u <= s) {
            continue;
        }
        if lower.zip(bounds.end).is_some_and(|(l, e)| l >= e) {
            continue;
        }
        let item_end = stop.or(file.end);
        items.push(WorkItem {
            path: file.path.clone(),
            start: position,
            end: item_end,
            origin: file.origin.clone(),
            base_offset: lower,
            size: item_end.unwrap_or(size).min(size) - position,
            start_offset,
            end_offset: bounds.end,
            aborted: bounds
                .transactions
                .as_ref()
                .map(|t| t.aborted_within(lower, upper)),
        });
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    //! Planning reads indexes, not logs: a byte-counting storage holds it to its budget.
    use super::*;
    use crate::format::batch::TimestampType;
    use crate::format::control::{end_txn_marker_bytes, key_bytes, ControlType};
    use crate::format::index::{write_txn_entry, AbortedTxn, SegmentIndexer};
    use crate::format::snapshot::{write_producer_snapshot, ProducerEntry};
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use crate::format::Compression;
    use crate::storage::{default_storage, Counting};
    use std::path::Path;

    const RECORDS: i64 = 50;
    /// An item's start and end offsets and aborted transactions.
    type Planned3 = (Option<i64>, Option<i64>, Option<Vec<(i64, i64, i64)>>);
    const TXN_PRODUCER: i64 = 9;

    fn batch(out: &mut Vec<u8>, base: i64, pid: i64, txn: bool, control: Option<ControlType>) {
        let mut records = Vec::new();
        let n = if control.is_some() { 1 } else { RECORDS };
        for i in 0..n {
            let (key, value): (Vec<u8>, Vec<u8>) = match control {
                Some(kind) => (key_bytes(kind).to_vec(), end_txn_marker_bytes(0).to_vec()),
                None => (
                    format!("k{}", base + i).into_bytes(),
                    vec![(base + i) as u8; 100],
                ),
            };
            write_record(
                &mut records,
                i as i32,
                i,
                Some(&key),
                Some(&value),
                std::iter::empty(),
            );
        }
        let ts = 1_000_000 + base;
        let header = BatchHeader {
            base_offset: base,
            partition_leader_epoch: 0,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: txn,
            is_control: control.is_some(),
            delete_horizon: false,
            last_offset_delta: (n - 1) as i32,
            base_timestamp: ts,
            max_timestamp: ts + n - 1,
            producer_id: pid,
            producer_epoch: if pid >= 0 { 0 } else { -1 },
            base_sequence: if pid >= 0 { 0 } else { -1 },
        };
        write_batch(out, &header, &records, n as i32, None).unwrap();
    }

    /// A partition of `segments` segments of about `segment_bytes`, with a transaction of
    /// producer 9 every 40 batches (every other one aborted), one left open at the end, and
    /// (with `indexes`) the index files and a producer snapshot a broker writes at shutdown.
    fn partition(dir: &Path, segments: usize, segment_bytes: usize, indexes: bool) {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        let mut offset = 0i64;
        let mut open: Option<i64> = None;
        let mut txns = 0;
        for s in 0..segments {
            let base = offset;
            let mut log = Vec::new();
            let mut indexer = SegmentIndexer::new(base, 4096);
            let mut aborted = Vec::new();
            let mut k = 0;
            while log.len() < segment_bytes {
                let position = log.len();
                let before = offset;
                let last_segment = s + 1 == segments;
                let (pid, txn, control) = if k % 40 == 7 && open.is_none() {
                    open = Some(offset);
                    (TXN_PRODUCER, true, None)
                } else if k % 40 == 9 && open.is_some() && !(last_segment && k > 40) {
                    txns += 1;
                    let kind = if txns % 2 == 0 {
                        ControlType::Abort
                    } else {
                        ControlType::Commit
                    };
                    if kind == ControlType::Abort {
                        aborted.push(AbortedTxn {
                            version: 0,
                            producer_id: TXN_PRODUCER,
                            first_offset: open.unwrap(),
                            last_offset: offset,
                            last_stable_offset: offset + 1,
                        });
                    }
                    open = None;
                    (TXN_PRODUCER, true, Some(kind))
                } else {
                    (-1, false, None)
                };
                batch(&mut log, offset, pid, txn, control);
                offset += if control.is_some() { 1 } else { RECORDS };
                let size = (log.len() - position) as u32;
                indexer.append(position as u32, size, offset - 1, 1_000_000 + offset - 1);
                let _ = before;
                k += 1;
            }
            indexer.finish();
            let name = |ext: &str| dir.join(format!("{base:020}.{ext}"));
            std::fs::write(name("log"), &log).unwrap();
            if indexes {
                std::fs::write(name("index"), indexer.offset_index_bytes()).unwrap();
                std::fs::write(name("timeindex"), indexer.time_index_bytes()).unwrap();
                if !aborted.is_empty() {
                    let mut bytes = Vec::new();
                    for a in &aborted {
                        write_txn_entry(&mut bytes, a);
                    }
                    std::fs::write(name("txnindex"), bytes).unwrap();
                }
            }
        }
        assert!(
            open.is_some(),
            "the test wants a transaction open at the end"
        );
        if indexes {
            let entry = ProducerEntry {
                producer_id: TXN_PRODUCER,
                producer_epoch: 0,
                last_sequence: 0,
                last_offset: open.unwrap() + RECORDS - 1,
                offset_delta: 0,
                timestamp: 0,
                coordinator_epoch: 0,
                current_txn_first_offset: open.unwrap(),
            };
            std::fs::write(
                dir.join(format!("{offset:020}.snapshot")),
                write_producer_snapshot(&[entry]),
            )
            .unwrap();
        }
    }

    fn plan_of(storage: &dyn Storage, dir: &Path, bounds: Bounds) -> Vec<WorkItem> {
        let files = crate::log::discover::discover(storage, dir).unwrap();
        let options = DecodeOptions::default();
        plan_items(storage, files, &|_| bounds, Some(1 << 20), &options)
            .unwrap()
            .0
    }

    #[test]
    fn planning_reads_under_two_percent_of_the_log() {
        let root = std::env::temp_dir().join(format!("kafkalog-plan-{}", std::process::id()));
        let (indexed, bare) = (root.join("t-0"), root.join("bare").join("t-0"));
        partition(&indexed, 4, 4 << 20, true);
        partition(&bare, 4, 4 << 20, false);
        let log_bytes: u64 = std::fs::read_dir(&indexed)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        let cases = [
            Bounds {
                read_committed: true,
                ..Bounds::default()
            },
            Bounds {
                start_timestamp: Some(1_000_000 + 150_000),
                end_timestamp: Some(1_000_000 + 250_000),
                ..Bounds::default()
            },
            Bounds {
                start_timestamp: Some(1_000_000 + 50_000),
                read_committed: true,
                ..Bounds::default()
            },
        ];
        for bounds in cases {
            let counting = Counting::new(default_storage());
            let planned = plan_of(&counting, &indexed, bounds);
            let read = counting.bytes_of(".log");
            eprintln!(
                "planning {bounds:?}: {read} of {log_bytes} .log bytes ({:.3}%), {} reads",
                read as f64 * 100.0 / log_bytes as f64,
                counting.requests()
            );
            assert!(
                read * 50 < log_bytes,
                "{bounds:?}: planning read {read} of {log_bytes} log bytes"
            );
            // The same plan as a full scan of a copy without index files gives.
            let scanned = plan_of(default_storage().as_ref(), &bare, bounds);
            let strip = |items: Vec<WorkItem>| -> Vec<_> {
                items
                    .into_iter()
                    .map(|i| (i.start_offset, i.end_offset, i.aborted))
                    .collect()
            };
            let (a, b) = (strip(planned), strip(scanned));
            // Split points need an index: compare the bounds and the transactions only.
            let ends = |v: &[Planned3]| v.first().map(|x| (x.0, x.1));
            assert_eq!(ends(&a), ends(&b), "{bounds:?}");
            if bounds.read_committed {
                let all = |v: &[Planned3]| {
                    let mut set: Vec<(i64, i64, i64)> =
                        v.iter().flat_map(|x| x.2.clone().unwrap()).collect();
                    set.sort();
                    set.dedup();
                    set
                };
                assert!(!all(&a).is_empty());
                assert_eq!(all(&a), all(&b), "{bounds:?}");
                assert!(
                    a.iter().all(|x| x.1.is_some()),
                    "the last stable offset bounds it"
                );
            }
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_high_watermark_below_the_snapshot_is_planned_as_a_scan_would() {
        use crate::format::checkpoint::{write_offset_checkpoint, OffsetEntry};
        let root = std::env::temp_dir().join(format!("kafkalog-plan-hw-{}", std::process::id()));
        let (indexed, bare) = (root.join("t-0"), root.join("bare").join("t-0"));
        partition(&indexed, 2, 1 << 20, true);
        partition(&bare, 2, 1 << 20, false);
        let committed = Bounds {
            read_committed: true,
            ..Bounds::default()
        };
        let full = plan_of(default_storage().as_ref(), &bare, committed);
        let lso = full.last().unwrap().end_offset.unwrap();
        let aborted = full[0].aborted.clone().unwrap();
        assert!(aborted.len() >= 2);
        // High watermarks inside aborted transactions (their markers not yet acknowledged:
        // still open), between transactions, and below the last one.
        let inside = |t: &(i64, i64, i64)| t.1 + (t.2 - t.1) / 2;
        for hw in [
            inside(&aborted[0]),
            inside(&aborted[1]),
            aborted[1].2 + 1,
            lso - 1,
            100,
        ] {
            let checkpoint = write_offset_checkpoint(&[OffsetEntry {
                topic: "t".into(),
                partition: 0,
                offset: hw,
            }]);
            std::fs::write(root.join("replication-offset-checkpoint"), &checkpoint).unwrap();
            std::fs::write(
                root.join("bare").join("replication-offset-checkpoint"),
                &checkpoint,
            )
            .unwrap();
            let summary = |items: Vec<WorkItem>| -> (Option<i64>, Vec<(i64, i64, i64)>) {
                let end = items.iter().filter_map(|i| i.end_offset).min();
                let mut aborted: Vec<_> = items
                    .into_iter()
                    .flat_map(|i| i.aborted.unwrap_or_default())
                    .collect();
                aborted.sort();
                aborted.dedup();
                (end, aborted)
            };
            let (a, b) = (
                summary(plan_of(default_storage().as_ref(), &indexed, committed)),
                summary(plan_of(default_storage().as_ref(), &bare, committed)),
            );
            // The last stable offset: never past the high watermark, and the same whether it
            // came from the snapshot (taken above the high watermark: not used) or a scan.
            assert!(a.0.is_some_and(|e| e <= hw), "{hw}: {a:?}");
            if aborted.iter().any(|t| t.1 < hw && hw <= t.2) {
                assert!(
                    a.0 < Some(hw),
                    "{hw}: a transaction open at the high watermark"
                );
            }
            assert_eq!(a.0, b.0, "{hw}");
            let below = |v: &[(i64, i64, i64)]| -> Vec<(i64, i64, i64)> {
                let end = a.0.unwrap();
                v.iter().copied().filter(|t| t.1 < end).collect()
            };
            assert_eq!(below(&a.1), below(&b.1), "{hw}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
