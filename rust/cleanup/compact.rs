//! Log compaction as Kafka's log cleaner does one cleaning round (`LogCleaner.Cleaner`,
//! `LogCleanerManager.cleanableOffsets`, `MemoryRecords.filterTo`; docs/format.md §8), from a
//! partition directory into a new one. The input is only read.
//!
//! - The cleanable range runs from the first dirty offset (the log start offset unless a
//!   cleaner checkpoint is given) to the first uncleanable offset: the lowest of the last stable
//!   offset, the active segment's base offset and the first segment still inside
//!   `min.compaction.lag.ms`, rounded down to a segment's base offset.
//! - The offset map (key -> last offset) is built over the dirty segments, leaving out records
//!   of aborted transactions. Every segment below the end of the map is then cleaned, in groups
//!   of consecutive segments up to `segment.bytes` and the maximum index size; each group
//!   becomes one segment named after its first. Later segments are copied unchanged.
//! - A record is kept when it is past the map, or has a key whose last offset it is and is not a
//!   tombstone whose delete horizon has passed. Records without a key are removed (the cleaner
//!   counts them as invalid). Offsets are never changed.
//! - Tombstones and markers: a v2 batch that keeps a tombstone, or a marker whose transaction
//!   has no data left, is stamped with the delete horizon `now + delete.retention.ms` the first
//!   time; they go once a later round runs past that horizon. v0/v1 tombstones go when their
//!   segment was last modified before the last clean segment's modification time minus
//!   `delete.retention.ms`.
//! - Transactions: batches of aborted transactions are removed; an ABORT marker stays while
//!   its transaction still had batches in this round (and its `.txnindex` entry is written), a
//!   COMMIT marker while its transaction had batches; empty batches are kept where they hold
//!   a producer's last sequence or epoch, and for the last batch of the round.
//!
//! Differences from a broker, by design of an offline tool: the offset map holds every key
//! (a broker's bounded map may need several rounds for the same result); indexes of cleaned
//! segments get an entry per `index.interval.bytes` of batches, as recovery builds them (the
//! cleaner indexes per I/O chunk); aborted transactions are found from the markers in the log
//! (what the `.txnindex` files hold). The log start offset and the high watermark are the
//! partition's entries in its log directory's `log-start-offset-checkpoint` and
//! `replication-offset-checkpoint` unless given (without them: the first base offset and the
//! log end offset).

use crate::cleanup::cleaner::{build_offset_map, Cleaner, Tally, TxnMetadata};
use crate::cleanup::survey::{decoder, overlapping, survey, Producer, Seg, Survey};
use crate::error::{Error, Result};
use crate::format::filter::DecodedBatch;
use crate::format::index::DEFAULT_INDEX_INTERVAL_BYTES;
use crate::format::segment::{base_offset_from_name, segment_file_name};
use crate::log::discover::discover;
use crate::log::issues::OnCorrupt;
use crate::log::visibility::Checkpoints;
use crate::storage::Local;
use crate::write::writer::{PartitionWriter, Summary, WriteOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// `delete.retention.ms`'s default: one day.
pub const DEFAULT_DELETE_RETENTION_MS: i64 = 86_400_000;
/// `segment.index.bytes`' default (`log.index.size.max.bytes`).
pub const DEFAULT_MAX_INDEX_SIZE: u64 = 10 * 1024 * 1024;
/// `producer.id.expiration.ms`' default.
pub const DEFAULT_PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

/// One round of Kafka's log cleaner on a partition: the topic configs it runs with (named
/// after them) and where it starts.
#[derive(Clone, Debug)]
pub struct CompactOptions {
    /// The cleaner's clock, in ms since the epoch; `None` reads the system clock.
    pub now_ms: Option<i64>,
    /// `delete.retention.ms`: how long tombstones and transaction markers are kept after the
    /// round that first sees them cleanable.
    pub delete_retention_ms: i64,
    /// `min.compaction.lag.ms`: records younger than this are not cleaned.
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`: a segment older than this is cleaned whatever the dirty ratio.
    pub max_compaction_lag_ms: i64,
    /// Clean only when the dirty ratio is above this (or `max.compaction.lag.ms` forces it),
    /// as the broker picks logs; `None` cleans whenever something is cleanable.
    pub min_cleanable_ratio: Option<f64>,
    /// `segment.bytes`: cleaned segments are grouped up to this size, as the cleaner does.
    pub segment_bytes: u64,
    /// `segment.index.bytes`: the largest offset or time index a cleaned segment may have.
    pub max_index_size: u64,
    /// `index.interval.bytes`: log bytes between index entries in the rewritten indexes.
    pub index_interval_bytes: u64,
    /// The log start offset; at least the first segment's base offset. `None` reads the log
    /// directory's `log-start-offset-checkpoint` (when it has the partition), as `LogLoader`
    /// does, else the first segment's base offset.
    pub log_start_offset: Option<i64>,
    /// The high watermark, which caps the last stable offset cleaning stops at; `None` reads
    /// the log directory's `replication-offset-checkpoint` (when it has the partition), else
    /// the log end offset.
    pub high_watermark: Option<i64>,
    /// Where the last cleaning stopped (`cleaner-offset-checkpoint`); `None` = the log start.
    pub first_dirty_offset: Option<i64>,
    /// Producers idle this long (and with no open transaction) are no longer active, as after
    /// a broker restart; `None` keeps every producer active.
    pub producer_id_expiration_ms: Option<i64>,
    /// Cap on one batch's decompressed bytes.
    pub max_decompressed_size: usize,
    /// Replace an existing output directory instead of failing.
    pub overwrite: bool,
    /// What to do at a batch that fails to decode.
    pub on_corrupt: OnCorrupt,
    /// The offset map (key -> last offset in the dirty range, records of aborted transactions
    /// left out), when computed elsewhere; `None` builds it (Kafka's `buildOffsetMap`).
    pub offset_map: Option<HashMap<Vec<u8>, i64>>,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            now_ms: None,
            delete_retention_ms: DEFAULT_DELETE_RETENTION_MS,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            min_cleanable_ratio: None,
            segment_bytes: 1 << 30,
            max_index_size: DEFAULT_MAX_INDEX_SIZE,
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            log_start_offset: None,
            high_watermark: None,
            first_dirty_offset: None,
            producer_id_expiration_ms: Some(DEFAULT_PRODUCER_ID_EXPIRATION_MS),
            max_decompressed_size: 256 << 20,
            overwrite: false,
            on_corrupt: OnCorrupt::Error,
            offset_map: None,
        }
    }
}

/// What a compaction did.
#[derive(Clone, Debug, Default)]
pub struct CompactReport {
    /// Whether a cleaning round ran (false: nothing cleanable, or the ratio was not reached;
    /// the output is then a copy).
    pub cleaned: bool,
    /// The cleaner's clock for this round (ms since the epoch).
    pub now_ms: i64,
    /// The partition's log start offset.
    pub log_start_offset: i64,
    /// The log end offset: one past the last offset in the log.
    pub log_end_offset: i64,
    /// Where the round started (the cleaner checkpoint's offset, or the log start).
    pub first_dirty_offset: i64,
    /// Where cleaning had to stop: the active segment, the last stable offset, or the
    /// compaction lag, whichever comes first (Kafka's `firstUncleanableOffset`).
    pub first_uncleanable_offset: i64,
    /// Where the next round would start (the end of the offset map).
    pub next_dirty_offset: i64,
    /// Dirty bytes over all bytes of the cleanable part, as the broker ranks logs to clean.
    pub cleanable_ratio: f64,
    /// The horizon stamped on batches that got one in this round.
    pub delete_horizon_ms: i64,
    /// Segments rewritten.
    pub segments_cleaned: usize,
    /// Records decoded from the input.
    pub records_read: u64,
    /// Records in the output.
    pub records_written: u64,
    /// Batches decoded from the input.
    pub batches_read: u64,
    /// Batches in the output.
    pub batches_written: u64,
    /// Log bytes read.
    pub bytes_read: u64,
    /// Log bytes written.
    pub bytes_written: u64,
    /// Records without a key, removed.
    pub invalid_records: u64,
    /// Batches left out under [`OnCorrupt::Skip`].
    pub skipped: Vec<Error>,
    /// The segments written.
    pub summary: Summary,
}

/// The segments of the partition directory `dir`, through the reader's discovery.
fn partition_segments(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(Error::invalid_argument(format!(
            "{} is not a partition directory",
            dir.display()
        )));
    }
    let files = discover(&Local, dir)?;
    let mut paths: Vec<(i64, PathBuf)> = Vec::new();
    for f in files {
        if f.path.parent() != Some(dir) {
            return Err(Error::invalid_argument(format!(
                "{} holds more than one partition; compact takes one partition directory",
                dir.display()
            )));
        }
        paths.push((f.base_offset.unwrap_or(0), f.path));
    }
    paths.sort();
    Ok(paths.into_iter().map(|(_, p)| p).collect())
}

/// Kafka's `groupSegmentsBySize`: consecutive segments whose logs fit `max_size`, whose
/// indexes fit `max_index_size`, and whose offsets stay within an int of the group's base.
fn group_segments(
    segs: &[Seg],
    max_size: u64,
    max_index_size: u64,
    first_uncleanable: i64,
) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let start = i;
        let (mut log, mut index, mut time) =
            (segs[i].size, segs[i].index_size, segs[i].time_index_size);
        i += 1;
        while i < segs.len() {
            let s = &segs[i];
            let last_offset = if i + 1 < segs.len() {
                segs[i + 1].base - 1
            } else {
                first_uncleanable - 1
            };
            let fits = log + s.size <= max_size
                && index + s.index_size <= max_index_size
                && time + s.time_index_size <= max_index_size
                && (s.size == 0 || last_offset - segs[start].base <= i32::MAX as i64);
            if !fits {
                break;
            }
            log += s.size;
            index += s.index_size;
            time += s.time_index_size;
            i += 1;
        }
        groups.push(start..i);
    }
    groups
}

/// Files of a partition directory kept beside the segments (copied as they are).
fn is_partition_metadata(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    match name.as_deref() {
        Some("leader-epoch-checkpoint" | "partition.metadata") => true,
        Some(n) => n.ends_with(".snapshot") && base_offset_from_name(path).is_some(),
        None => false,
    }
}

/// Compacts the partition directory `src` into `dst` as one round of Kafka's log cleaner.
pub fn compact(src: &Path, dst: &Path, options: &CompactOptions) -> Result<CompactReport> {
    let (sv, mut report, picked) = prepare(src, options)?;
    write(src, dst, options, &sv, &mut report, picked)?;
    Ok(report)
}

/// What a compaction of `src` would clean, without writing: `cleaned` says whether a round
/// would run, with its offsets (`first_dirty_offset`, `first_uncleanable_offset`). Records
/// from the first dirty offset up to the first uncleanable offset feed the offset map.
pub fn plan(src: &Path, options: &CompactOptions) -> Result<CompactReport> {
    let (sv, mut report, picked) = prepare(src, options)?;
    let dirty = overlapping(
        &sv.segs,
        report.first_dirty_offset,
        report.first_uncleanable_offset,
    );
    report.cleaned = picked && !dirty.is_empty();
    if report.cleaned {
        report.next_dirty_offset = report.first_uncleanable_offset;
    }
    Ok(report)
}

/// The first pass and the cleanable range: the survey, a report with the offsets filled, and
/// whether the broker would pick the log for cleaning.
fn prepare(src: &Path, options: &CompactOptions) -> Result<(Survey, CompactReport, bool)> {
    if options.delete_retention_ms < 0 {
        return Err(Error::invalid_argument(
            "delete_retention_ms must not be negative",
        ));
    }
    let paths = partition_segments(src)?;
    if paths.is_empty() {
        return Err(Error::invalid_argument(format!(
            "{} holds no segments",
            src.display()
        )));
    }
    let now = options.now_ms.unwrap_or_else(crate::clock::now_ms);
    let mut report = CompactReport {
        now_ms: now,
        delete_horizon_ms: now.saturating_add(options.delete_retention_ms),
        ..CompactReport::default()
    };
    let sv = survey(
        &paths,
        options.on_corrupt,
        options.max_decompressed_size,
        &mut report.skipped,
    )?;
    let segs = &sv.segs;
    let active = segs.len() - 1;
    let active_base = segs[active].base;
    let leo = sv.log_end_offset;
    // The broker's checkpoints in the log directory (see `log::visibility`).
    let checkpointed = Checkpoints::new().visible(&Local, src)?;
    // LogLoader: the larger of the checkpointed log start offset and the first base offset.
    let log_start = options
        .log_start_offset
        .or(checkpointed.log_start)
        .unwrap_or(segs[0].base)
        .max(segs[0].base);
    // UnifiedLog.updateHighWatermark keeps it within [log start, log end].
    let hw = options
        .high_watermark
        .or(checkpointed.high_watermark)
        .unwrap_or(leo)
        .min(leo)
        .max(log_start);
    let first_dirty = match options.first_dirty_offset {
        Some(o) if o >= log_start && o <= leo => o,
        _ => log_start,
    };

    // LogCleanerManager.cleanableOffsets: the last stable offset (the first unstable offset,
    // capped by the high watermark: UnifiedLog.lastStableOffset), the active segment, and the
    // first segment still within the minimum compaction lag.
    let mut uncleanable = sv.first_unstable.unwrap_or(hw).min(hw).min(active_base);
    if options.min_compaction_lag_ms > 0 {
        let limit = now.saturating_sub(options.min_compaction_lag_ms);
        let range = overlapping(segs, first_dirty, active_base);
        if let Some(s) = segs[range].iter().find(|s| s.largest_timestamp() > limit) {
            uncleanable = uncleanable.min(s.base);
        }
    }
    let uncleanable = uncleanable.max(first_dirty);
    // calculateCleanableBytes rounds it down to the base of the segment holding it.
    let non_active = overlapping(segs, uncleanable, active_base);
    let first_uncleanable = if non_active.is_empty() {
        active_base
    } else {
        segs[non_active.start].base
    };
    let size_of = |r: std::ops::Range<usize>| segs[r].iter().map(|s| s.size).sum::<u64>();
    let cleanable_bytes = size_of(overlapping(
        segs,
        first_dirty.min(first_uncleanable),
        first_uncleanable,
    ));
    let clean_bytes = size_of(overlapping(segs, -1, first_dirty));
    let total = clean_bytes + cleanable_bytes;
    report.cleanable_ratio = if total > 0 {
        cleanable_bytes as f64 / total as f64
    } else {
        0.0
    };
    report.log_start_offset = log_start;
    report.log_end_offset = leo;
    report.first_dirty_offset = first_dirty;
    report.first_uncleanable_offset = first_uncleanable;
    report.next_dirty_offset = first_dirty;

    // LogCleanerManager.maxCompactionDelay: a dirty segment older than the maximum lag forces
    // a cleaning whatever the ratio.
    let need_now = {
        let range = overlapping(segs, first_dirty, active_base);
        let earliest = segs[range]
            .iter()
            .filter_map(|s| s.first_batch_timestamp.filter(|&t| t > 0))
            .min()
            .unwrap_or(i64::MAX);
        earliest < now.saturating_sub(options.max_compaction_lag_ms.max(0))
    };
    let picked = match options.min_cleanable_ratio {
        None => cleanable_bytes > 0,
        Some(ratio) => (need_now && cleanable_bytes > 0) || report.cleanable_ratio > ratio,
    };
    Ok((sv, report, picked))
}

/// The cleaning round (when `picked`) and the copy of what it does not reach.
fn write(
    src: &Path,
    dst: &Path,
    options: &CompactOptions,
    sv: &Survey,
    report: &mut CompactReport,
    picked: bool,
) -> Result<()> {
    let segs = &sv.segs;
    let now = report.now_ms;
    let (first_dirty, first_uncleanable) =
        (report.first_dirty_offset, report.first_uncleanable_offset);
    let mut writer = PartitionWriter::create(
        dst,
        WriteOptions {
            index_interval_bytes: options.index_interval_bytes,
            overwrite: options.overwrite,
            // The cleaner leaves the producer snapshots as they are.
            producer_snapshots: false,
            ..WriteOptions::default()
        },
    )?
    .manual_layout();
    let mut mtimes: Vec<(PathBuf, i64)> = Vec::new();
    let mut cleaned_until = 0usize;
    if picked {
        let (map, latest) = match &options.offset_map {
            // Computed elsewhere (a Spark job): the same map, the same latest offset.
            Some(map) => {
                let dirty = overlapping(segs, first_dirty, first_uncleanable);
                let latest = if dirty.is_empty() {
                    -1
                } else {
                    first_uncleanable - 1
                };
                (map.clone(), latest)
            }
            None => build_offset_map(
                segs,
                first_dirty,
                first_uncleanable,
                sv,
                options.on_corrupt,
                options.max_decompressed_size,
            )?,
        };
        let end_offset = latest + 1;
        report.next_dirty_offset = end_offset;
        let to_clean = overlapping(segs, 0, end_offset);
        if !to_clean.is_empty() {
            report.cleaned = true;
            cleaned_until = to_clean.end;
            report.segments_cleaned = to_clean.len();
            let mut cleaner = Cleaner {
                map,
                latest,
                now,
                delete_retention_ms: options.delete_retention_ms,
                upper_bound: first_uncleanable,
                txns: TxnMetadata::new(sv.aborted.iter().copied()),
                active_producers: active_producers(&sv.producers, now, options),
                decoder: decoder(options.max_decompressed_size),
                batch: DecodedBatch::default(),
                keep: Vec::new(),
                out: Vec::new(),
                scratch: Vec::new(),
                on_corrupt: options.on_corrupt,
                tally: Tally::default(),
            };
            // The v0/v1 delete horizon: the last clean segment's modification time, less the
            // delete retention.
            let before_dirty = overlapping(segs, 0, first_dirty);
            let legacy_horizon = if before_dirty.is_empty() {
                0
            } else {
                segs[before_dirty.end - 1].mtime_ms - options.delete_retention_ms
            };
            let cleaned = &segs[to_clean.clone()];
            for group in group_segments(
                cleaned,
                options.segment_bytes,
                options.max_index_size,
                first_uncleanable,
            ) {
                let group = &cleaned[group];
                writer.start_segment(group[0].base)?;
                for seg in group {
                    let retain_legacy = seg.mtime_ms > legacy_horizon;
                    cleaner.clean_segment(seg, retain_legacy, &mut writer)?;
                }
                mtimes.push((
                    dst.join(segment_file_name(group[0].base, "log")),
                    group[group.len() - 1].mtime_ms,
                ));
            }
            let t = cleaner.tally;
            report.batches_read += t.batches_read;
            report.batches_written += t.batches_written;
            report.records_read += t.records_read;
            report.records_written += t.records_written;
            report.bytes_read += t.bytes_read;
            report.bytes_written += t.bytes_written;
            report.invalid_records += t.invalid_records;
        }
    }
    // Segments the round did not reach are copied as they are, with their indexes.
    for seg in &segs[cleaned_until..] {
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let p = seg.path.with_extension(ext);
            if ext == "log" || p.is_file() {
                writer.copy_in(&p)?;
            }
        }
        mtimes.push((dst.join(segment_file_name(seg.base, "log")), seg.mtime_ms));
    }
    for entry in std::fs::read_dir(src).map_err(|e| Error::io(e, src))? {
        let path = entry.map_err(|e| Error::io(e, src))?.path();
        if path.is_file() && is_partition_metadata(&path) {
            writer.copy_in(&path)?;
        }
    }
    report.summary = writer.finish()?;
    for (path, ms) in mtimes {
        set_mtime(&path, ms)?;
    }
    Ok(())
}

fn set_mtime(path: &Path, ms: i64) -> Result<()> {
    let time = UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(e, path))?;
    file.set_modified(time).map_err(|e| Error::io(e, path))
}

/// `UnifiedLog.lastRecordsOfActiveProducers`: producer id -> (last data offset, epoch).
fn active_producers(
    producers: &HashMap<i64, Producer>,
    now: i64,
    options: &CompactOptions,
) -> HashMap<i64, (Option<i64>, i16)> {
    producers
        .iter()
        .filter(|(_, p)| match options.producer_id_expiration_ms {
            Some(expiration) => p.txn_open || now.saturating_sub(p.last_timestamp) < expiration,
            None => true,
        })
        .map(|(&pid, p)| (pid, (p.last_data_offset, p.epoch)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::BatchInfo;
    use crate::format::control::ControlType;
    use crate::format::index::AbortedTxn;

    fn seg(base: i64, size: u64) -> Seg {
        Seg {
            path: PathBuf::new(),
            base,
            size,
            mtime_ms: 0,
            index_size: 0,
            time_index_size: 0,
            max_timestamp: -1,
            first_batch_timestamp: None,
            next_offset: None,
        }
    }

    #[test]
    fn overlapping_is_kafkas_values_range() {
        let segs = [seg(0, 1), seg(10, 1), seg(20, 1)];
        assert_eq!(overlapping(&segs, 0, 20), 0..2);
        assert_eq!(overlapping(&segs, 15, 20), 1..2);
        assert_eq!(overlapping(&segs, 15, 21), 1..3);
        assert_eq!(overlapping(&segs, 5, 5), 0..0);
        assert_eq!(overlapping(&segs, -1, 10), 0..1);
        assert_eq!(overlapping(&segs, 20, 20), 0..0);
    }

    #[test]
    fn groups_fill_up_to_segment_bytes() {
        let segs = [
            seg(0, 40),
            seg(10, 40),
            seg(20, 30),
            seg(30, 50),
            seg(40, 0),
        ];
        let groups = group_segments(&segs, 100, 1 << 20, 50);
        assert_eq!(groups, vec![0..2, 2..5]);
        // Offsets more than an int apart never share a segment.
        let far = [seg(0, 1), seg(i32::MAX as i64 + 5, 1)];
        assert_eq!(
            group_segments(&far, 100, 1 << 20, i32::MAX as i64 + 10),
            vec![0..1, 1..2]
        );
    }

    #[test]
    fn aborted_marker_stays_while_its_batches_were_seen() {
        let txn = AbortedTxn {
            version: 0,
            producer_id: 5,
            first_offset: 10,
            last_offset: 12,
            last_stable_offset: 13,
        };
        let info = |offset: i64, control: bool| BatchInfo {
            position: 0,
            size: 0,
            magic: 2,
            base_offset: offset,
            last_offset: offset,
            crc: 0,
            crc_valid: None,
            attributes: 0,
            compression: crate::format::Compression::None,
            timestamp_type: crate::format::TimestampType::CreateTime,
            base_timestamp: 0,
            max_timestamp: 0,
            partition_leader_epoch: 0,
            producer_id: 5,
            producer_epoch: 0,
            base_sequence: 0,
            record_count: 1,
            is_transactional: true,
            is_control: control,
            delete_horizon: false,
        };
        let mut m = TxnMetadata::new([txn]);
        assert!(m.on_batch(&info(10, false)));
        assert_eq!(
            m.on_control(&info(12, true), Some(ControlType::Abort)),
            (false, Some(txn))
        );
        // Next round: the batches are gone, the marker may go.
        let mut m = TxnMetadata::new([txn]);
        assert_eq!(
            m.on_control(&info(12, true), Some(ControlType::Abort)),
            (true, None)
        );
        // A committed transaction's marker stays while its batches are there.
        let mut m = TxnMetadata::default();
        assert!(!m.on_batch(&info(20, false)));
        assert_eq!(
            m.on_control(&info(21, true), Some(ControlType::Commit)),
            (false, None)
        );
        assert_eq!(
            m.on_control(&info(23, true), Some(ControlType::Commit)),
            (true, None)
        );
    }
}
