//! Retention as the broker applies it (`UnifiedLog.deleteOldSegments`; docs/format.md §8): whole
//! segments go, oldest first, by three rules applied in this order, each on what the previous
//! left:
//!
//! 1. log start offset: a segment goes when the next segment's base offset is at or below the
//!    log start offset;
//! 2. `retention.bytes`: while the partition's size less the segment's stays at or above the
//!    limit;
//! 3. `retention.ms`: while `now - largest timestamp > retention.ms`, the largest timestamp
//!    being the segment's max timestamp, or its file's modification time when it has none.
//!
//! Each rule stops at the first segment it keeps, never takes an empty last segment, nor a
//! segment whose upper bound (the next segment's base offset, or the log end offset) is past
//! the high watermark, so the log start offset never passes it (`UnifiedLog.deletableSegments`).
//! The high watermark and the log start offset are the partition's entries in the log
//! directory's `replication-offset-checkpoint` and `log-start-offset-checkpoint`, as a broker
//! loads them, unless given. When every segment goes, the broker first rolls
//! a new empty segment at the log end offset, so the partition keeps an active segment (here:
//! empty `.log`, `.index` and `.timeindex` files). The new log start offset is the base offset
//! of the first segment left. Rules 2 and 3 apply only with `cleanup.policy` including
//! `delete`.

use crate::error::{Error, Result};
use crate::format::batch::CrcPolicy;
use crate::format::checkpoint::{
    parse_offset_checkpoint, write_offset_checkpoint, OffsetEntry, LOG_START_OFFSET_CHECKPOINT,
};
use crate::format::segment::{base_offset_from_name, segment_file_name, topic_partition_from_dir};
use crate::format::{legacy, v2};
use crate::log::discover::discover;
use crate::log::scan::{for_each_entry, Access};
use crate::log::visibility::Checkpoints;
use crate::storage::Local;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The topic configs and state retention applies, as the broker's log retention check does.
#[derive(Clone, Debug)]
pub struct RetentionOptions {
    /// The broker's clock, in ms since the epoch; `None` reads the system clock.
    pub now_ms: Option<i64>,
    /// `retention.ms`; negative or `None`: no limit.
    pub retention_ms: Option<i64>,
    /// `retention.bytes`; negative or `None`: no limit.
    pub retention_bytes: Option<i64>,
    /// The log start offset; `None` reads the log directory's `log-start-offset-checkpoint`
    /// (when it has the partition), else the first segment's base offset.
    pub log_start_offset: Option<i64>,
    /// Segments reaching past it are kept, and the log start offset never passes it; `None`
    /// reads the log directory's `replication-offset-checkpoint` (when it has the partition),
    /// else the log end offset.
    pub high_watermark: Option<i64>,
    /// `cleanup.policy` includes `delete` (else only the log start offset rule applies).
    pub delete_policy: bool,
    /// Report only; touch nothing.
    pub dry_run: bool,
    /// Record the new log start offset in the log directory's `log-start-offset-checkpoint`.
    pub write_checkpoint: bool,
}

impl Default for RetentionOptions {
    fn default() -> Self {
        RetentionOptions {
            now_ms: None,
            retention_ms: None,
            retention_bytes: None,
            log_start_offset: None,
            high_watermark: None,
            delete_policy: true,
            dry_run: true,
            write_checkpoint: false,
        }
    }
}

/// A segment retention removes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removed {
    /// The segment's `.log` file.
    pub path: PathBuf,
    /// Its base offset (from its name).
    pub base_offset: i64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The largest timestamp in it, which `retention.ms` is measured from.
    pub largest_timestamp: i64,
    /// `"log_start_offset"`, `"retention_bytes"` or `"retention_ms"`.
    pub reason: &'static str,
}

/// What retention does to one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRetention {
    /// The partition directory.
    pub dir: PathBuf,
    /// Its topic, from the directory name.
    pub topic: Option<String>,
    /// Its partition number, from the directory name.
    pub partition: Option<i32>,
    /// The segments removed (or, dry run, to remove), oldest first.
    pub removed: Vec<Removed>,
    /// The log start offset before retention ran.
    pub log_start_offset_before: i64,
    /// The log start offset after retention, moved past the removed segments as the broker
    /// moves it when it deletes them.
    pub log_start_offset: i64,
    /// The log end offset (unchanged by retention).
    pub log_end_offset: i64,
    /// Segments that remain.
    pub segments_left: usize,
    /// Bytes of log that remain.
    pub bytes_left: u64,
    /// Every segment went and an empty one was rolled at the log end offset.
    pub rolled: bool,
    /// Nothing was deleted: the report says what would be.
    pub dry_run: bool,
}

#[derive(Clone, Debug)]
struct Seg {
    path: PathBuf,
    base: i64,
    size: u64,
    largest_timestamp: i64,
    next_offset: Option<i64>,
}

/// Applies retention to every partition under `path` (a partition directory or a log
/// directory), in the order [`discover`] finds them.
pub fn retain(path: &Path, options: &RetentionOptions) -> Result<Vec<PartitionRetention>> {
    let mut partitions: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut order = Vec::new();
    for file in discover(&Local, path)? {
        let dir = file
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if !partitions.contains_key(&dir) {
            order.push(dir.clone());
        }
        partitions.entry(dir).or_default().push(file.path);
    }
    let now = options.now_ms.unwrap_or_else(crate::clock::now_ms);
    order
        .into_iter()
        .map(|dir| {
            let paths = partitions.remove(&dir).unwrap_or_default();
            retain_partition(&dir, &paths, now, options)
        })
        .collect()
}

fn survey(path: &Path) -> Result<Seg> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(e, path))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    let mut max_timestamp = -1i64;
    let mut next_offset = None;
    for_each_entry(&Local, path, 0, Access::Whole, |position, entry| {
        // Header fields only: the max timestamp and last offset need no decompression.
        let (last, max_ts) = if entry.get(16) == Some(&2) {
            let info =
                v2::parse_header(entry, position, CrcPolicy::Ignore).map_err(|e| e.at(position))?;
            (info.last_offset, info.max_timestamp)
        } else {
            let m = legacy::parse_message(entry).map_err(|e| e.at(position))?;
            (m.offset, m.timestamp)
        };
        max_timestamp = max_timestamp.max(max_ts);
        next_offset = Some(last.wrapping_add(1));
        Ok(true)
    })?;
    Ok(Seg {
        path: path.to_path_buf(),
        base: base_offset_from_name(path).unwrap_or(0),
        size: meta.len(),
        largest_timestamp: if max_timestamp >= 0 {
            max_timestamp
        } else {
            mtime
        },
        next_offset,
    })
}

fn checkpoint_path(dir: &Path) -> Option<PathBuf> {
    log_dir_file(dir, LOG_START_OFFSET_CHECKPOINT)
}

/// The file `name` in the log directory holding the partition directory `dir`.
fn log_dir_file(dir: &Path, name: &str) -> Option<PathBuf> {
    dir.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(|p| p.join(name))
}

fn retain_partition(
    dir: &Path,
    paths: &[PathBuf],
    now: i64,
    options: &RetentionOptions,
) -> Result<PartitionRetention> {
    let mut segs = paths
        .iter()
        .map(|p| survey(p))
        .collect::<Result<Vec<_>>>()?;
    segs.sort_by_key(|s| s.base);
    let tp = topic_partition_from_dir(dir);
    let first_base = segs.first().map_or(0, |s| s.base);
    let log_end = segs
        .iter()
        .rev()
        .find_map(|s| s.next_offset)
        .unwrap_or(0)
        .max(segs.last().map_or(0, |s| s.base));
    // The broker's checkpoints in the log directory (see `log::visibility`).
    let checkpointed = Checkpoints::new().visible(&Local, dir)?;
    let mut log_start = options
        .log_start_offset
        .or(checkpointed.log_start)
        .unwrap_or(first_base)
        .max(first_base);
    let log_start_before = log_start;
    // The high watermark a broker starts the partition with: its entry in
    // `replication-offset-checkpoint`, kept within [log start, log end]
    // (`UnifiedLog.updateHighWatermark`). Without one, an offline tool takes the log end.
    let hw = match options.high_watermark {
        Some(hw) => hw,
        None => checkpointed.high_watermark.unwrap_or(log_end),
    }
    .min(log_end)
    .max(log_start);
    let mut removed: Vec<Removed> = Vec::new();
    let mut rolled = false;

    // UnifiedLog.deletableSegments + deleteSegments, for one rule.
    let mut apply = |segs: &mut Vec<Seg>,
                     log_start: &mut i64,
                     reason: &'static str,
                     pred: &mut dyn FnMut(&Seg, Option<&Seg>, i64) -> bool| {
        let mut n = 0;
        while n < segs.len() {
            let next = segs.get(n + 1);
            let upper = next.map_or(log_end, |s| s.base);
            let last_and_empty = next.is_none() && segs[n].size == 0;
            if !(hw >= upper && pred(&segs[n], next, *log_start)) || last_and_empty {
                break;
            }
            n += 1;
        }
        if n == 0 {
            return;
        }
        let gone: Vec<Seg> = segs.drain(..n).collect();
        if segs.is_empty() {
            // The broker rolls a new (empty) active segment first.
            segs.push(Seg {
                path: dir.join(segment_file_name(log_end, "log")),
                base: log_end,
                size: 0,
                largest_timestamp: now,
                next_offset: None,
            });
            rolled = true;
        }
        *log_start = (*log_start).max(segs[0].base);
        removed.extend(gone.into_iter().map(|s| Removed {
            path: s.path,
            base_offset: s.base,
            bytes: s.size,
            largest_timestamp: s.largest_timestamp,
            reason,
        }));
    };

    apply(
        &mut segs,
        &mut log_start,
        "log_start_offset",
        &mut |_, next, start| next.is_some_and(|n| n.base <= start),
    );
    if options.delete_policy {
        if let Some(limit) = options.retention_bytes.filter(|&b| b >= 0) {
            let size: u64 = segs.iter().map(|s| s.size).sum();
            if size as i64 >= limit {
                let mut diff = size as i64 - limit;
                apply(
                    &mut segs,
                    &mut log_start,
                    "retention_bytes",
                    &mut |s, _, _| {
                        if diff - s.size as i64 >= 0 {
                            diff -= s.size as i64;
                            true
                        } else {
                            false
                        }
                    },
                );
            }
        }
        if let Some(limit) = options.retention_ms.filter(|&ms| ms >= 0) {
            apply(&mut segs, &mut log_start, "retention_ms", &mut |s, _, _| {
                now.saturating_sub(s.largest_timestamp) > limit
            });
        }
    }

    if !options.dry_run {
        if options.write_checkpoint {
            write_checkpoint(dir, tp.as_ref(), log_start)?;
        }
        if rolled {
            for ext in ["log", "index", "timeindex"] {
                let p = dir.join(segment_file_name(log_end, ext));
                std::fs::File::create(&p).map_err(|e| Error::io(e, &p))?;
            }
        }
        for r in &removed {
            remove_segment(dir, r.base_offset)?;
        }
    }
    Ok(PartitionRetention {
        dir: dir.to_path_buf(),
        topic: tp.as_ref().map(|(t, _)| t.clone()),
        partition: tp.as_ref().map(|(_, p)| *p),
        removed,
        log_start_offset_before: log_start_before,
        log_start_offset: log_start,
        log_end_offset: log_end,
        segments_left: segs.len(),
        bytes_left: segs.iter().map(|s| s.size).sum(),
        rolled,
        dry_run: options.dry_run,
    })
}

/// Removes a segment's files (and the producer snapshot at its base offset), each renamed to
/// `.deleted` first as the broker does, so an interrupted removal leaves only files a broker
/// ignores.
fn remove_segment(dir: &Path, base: i64) -> Result<()> {
    for ext in ["log", "index", "timeindex", "txnindex", "snapshot"] {
        let p = dir.join(segment_file_name(base, ext));
        if !p.exists() {
            continue;
        }
        let gone = dir.join(format!("{}.deleted", segment_file_name(base, ext)));
        std::fs::rename(&p, &gone).map_err(|e| Error::io(e, &p))?;
        std::fs::remove_file(&gone).map_err(|e| Error::io(e, &gone))?;
    }
    Ok(())
}

/// Sets the partition's entry in the log directory's `log-start-offset-checkpoint`, written to
/// a temporary file and renamed over the old one.
fn write_checkpoint(dir: &Path, tp: Option<&(String, i32)>, offset: i64) -> Result<()> {
    let Some((topic, partition)) = tp else {
        return Err(Error::invalid_argument(format!(
            "{} is not named <topic>-<partition>; cannot write its log start offset checkpoint",
            dir.display()
        )));
    };
    let Some(path) = checkpoint_path(dir) else {
        return Err(Error::invalid_argument(
            "no log directory to write the checkpoint in",
        ));
    };
    let mut entries: BTreeMap<(String, i32), i64> = BTreeMap::new();
    if path.is_file() {
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(e, &path))?;
        for e in parse_offset_checkpoint(&text).map_err(|e| e.with_path(&path))? {
            entries.insert((e.topic, e.partition), e.offset);
        }
    }
    entries.insert((topic.clone(), *partition), offset);
    let entries: Vec<OffsetEntry> = entries
        .into_iter()
        .map(|((topic, partition), offset)| OffsetEntry {
            topic,
            partition,
            offset,
        })
        .collect();
    let text = write_offset_checkpoint(&entries);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| Error::io(e, &tmp))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(e, &tmp))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(e, &path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::checkpoint::offset_of;

    #[test]
    fn checkpoint_entries_are_found_by_topic_and_partition() {
        let text = "0\n2\norders 0 15\norders 1 7\n";
        let entries = parse_offset_checkpoint(text).unwrap();
        assert_eq!(offset_of(&entries, "orders", 1), Some(7));
        assert_eq!(offset_of(&entries, "orders", 2), None);
    }
}
