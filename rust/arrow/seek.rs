//! Reading part of a partition the way a broker serves a fetch: pick the segments by their
//! base offsets, seek inside the first with its offset index, turn timestamps into offsets with
//! the time index, and bound the read at the last stable offset for `read_committed`.
//! Indexes are trusted only after a check; a missing, stale or corrupt one means scanning
//! from the segment's start, with an [`Issue`] saying so.
//!
//! Bounds follow Spark's Kafka source: the end offset is exclusive; a start timestamp starts
//! at the earliest offset whose timestamp is at or after it; an end timestamp ends before the
//! earliest offset whose timestamp is at or after it.

use super::decoder::{Issue, IssueKind};
use super::reader::SegmentFile;
use super::scan::for_each_entry;
use super::transactions::{scan_transactions, Transactions};
use crate::error::{Error, Result};
use crate::format::batch::{BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, Record, RecordSink};
use crate::format::index::{
    check_offset_index, check_time_index, last_time_entry_below, lookup_offset, read_offset_index,
    read_time_index, OffsetEntry, TimeEntry,
};
use crate::format::segment::{next_entry, Frame};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    pub start_offset: Option<i64>,
    /// Exclusive.
    pub end_offset: Option<i64>,
    pub start_timestamp: Option<i64>,
    pub end_timestamp: Option<i64>,
    pub read_committed: bool,
}

impl Bounds {
    pub fn is_unbounded(&self) -> bool {
        *self == Bounds::default()
    }
}

/// What the reader applies to one file's records after planning.
#[derive(Clone, Debug, Default)]
pub struct FileBounds {
    /// Records with offsets in `[start, end)` are kept; `None`: no end (so that a record at
    /// `i64::MAX` is not lost to a sentinel).
    pub start: i64,
    pub end: Option<i64>,
    /// For `read_committed`: the partition's aborted transactions.
    pub transactions: Option<Arc<Transactions>>,
}

impl FileBounds {
    pub fn all() -> Self {
        FileBounds {
            start: i64::MIN,
            end: None,
            transactions: None,
        }
    }
}

/// A segment's offset index, if it exists and passes the checks a lookup relies on.
fn offset_index(
    log: &Path,
    base_offset: i64,
    log_len: u64,
    issues: &mut Vec<Issue>,
) -> Option<Vec<OffsetEntry>> {
    let path = log.with_extension("index");
    let Ok(bytes) = std::fs::read(&path) else {
        issues.push(index_issue(&path, "it is missing"));
        return None;
    };
    let entries = read_offset_index(&bytes, base_offset);
    let problem = check_offset_index(bytes.len(), &entries, base_offset).or_else(|| {
        entries
            .iter()
            .find(|e| e.position as u64 >= log_len.max(1))
            .map(|e| {
                format!(
                    "entry for offset {} points at position {}, past the end of the log",
                    e.offset, e.position
                )
            })
    });
    match problem {
        None => Some(entries),
        Some(problem) => {
            issues.push(index_issue(&path, &problem));
            None
        }
    }
}

fn time_index(log: &Path, base_offset: i64, issues: &mut Vec<Issue>) -> Option<Vec<TimeEntry>> {
    let path = log.with_extension("timeindex");
    let Ok(bytes) = std::fs::read(&path) else {
        issues.push(index_issue(&path, "it is missing"));
        return None;
    };
    let entries = read_time_index(&bytes, base_offset);
    match check_time_index(bytes.len(), &entries, base_offset) {
        None => Some(entries),
        Some(problem) => {
            issues.push(index_issue(&path, &problem));
            None
        }
    }
}

fn index_issue(path: &Path, problem: &str) -> Issue {
    Issue {
        kind: IssueKind::IndexIgnored,
        message: format!("index not used ({problem}); scanning the segment instead"),
        path: Some(path.to_path_buf()),
        position: 0,
        offset: None,
        bytes: 0,
    }
}

/// The position to start reading `log` at for records at or after `target`: from its offset
/// index, checked against the log, else 0.
fn seek_position(
    log: &Path,
    base_offset: i64,
    target: i64,
    issues: &mut Vec<Issue>,
) -> Result<u64> {
    let log_len = std::fs::metadata(log).map_err(|e| Error::io(e, log))?.len();
    let Some(entries) = offset_index(log, base_offset, log_len, issues) else {
        return Ok(0);
    };
    let Some(entry) = lookup_offset(&entries, target) else {
        return Ok(0);
    };
    // The entry must point at a batch that starts at or before the target.
    let mut header = [0u8; 61];
    let ok = (|| -> std::io::Result<bool> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(log)?;
        f.seek(SeekFrom::Start(entry.position as u64))?;
        let n = f.read(&mut header)?;
        let h = &header[..n];
        let base = h
            .get(0..8)
            .map(|b| i64::from_be_bytes(b.try_into().unwrap()));
        let framed = matches!(
            next_entry(h),
            Ok(Frame::Incomplete { .. }) | Ok(Frame::Entry(_))
        );
        let magic_ok = h.get(16).is_some_and(|&m| m <= 2);
        // The batch there starts at or before the entry's offset (which may be the last offset
        // of a later batch of the same append), and inside this segment.
        Ok(framed && magic_ok && base.is_some_and(|b| b <= entry.offset && b >= base_offset))
    })()
    .unwrap_or(false);
    if ok {
        Ok(entry.position as u64)
    } else {
        issues.push(index_issue(
            &log.with_extension("index"),
            &format!(
                "entry for offset {} does not point at a batch boundary",
                entry.offset
            ),
        ));
        Ok(0)
    }
}

/// Finds the first record at or after a timestamp (and at or after `min_offset`).
struct FirstAtOrAfter {
    timestamp: i64,
    min_offset: i64,
    found: Option<i64>,
}

impl RecordSink for FirstAtOrAfter {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        self.found.is_none() && !batch.is_control && batch.max_timestamp >= self.timestamp
    }

    fn record(&mut self, _: &BatchInfo, r: &Record<'_>) {
        if self.found.is_none() && r.timestamp >= self.timestamp && r.offset >= self.min_offset {
            self.found = Some(r.offset);
        }
    }
}

/// The earliest offset (at or after `min_offset`) whose record timestamp is at or after
/// `timestamp`, or `None` when no record is.
fn offset_for_timestamp(
    segments: &[&SegmentFile],
    timestamp: i64,
    min_offset: i64,
    options: &DecodeOptions,
    issues: &mut Vec<Issue>,
) -> Result<Option<i64>> {
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Ignore,
        ..options.clone()
    });
    for segment in segments {
        let log = &segment.path;
        let base = segment.base_offset.unwrap_or(0);
        // Records up to an entry whose (running maximum) timestamp is below the target are all
        // below it: start after the last such entry.
        let after = time_index(log, base, issues)
            .and_then(|e| last_time_entry_below(&e, timestamp))
            .map_or(min_offset, |e| (e.offset + 1).max(min_offset));
        let start = if after > base {
            seek_position(log, base, after, issues)?
        } else {
            0
        };
        let mut sink = FirstAtOrAfter {
            timestamp,
            min_offset: after,
            found: None,
        };
        for_each_entry(log, start, |position, entry| {
            decoder.decode(entry, position, &mut sink)?;
            Ok(sink.found.is_none())
        })?;
        if sink.found.is_some() {
            return Ok(sink.found);
        }
    }
    Ok(None)
}

/// A file to read, with the bounds of its records.
pub type Planned = (SegmentFile, FileBounds);

/// Plans the reading of `files` (in reading order) within `bounds`: drops segments outside the
/// bounds, sets each file's start position and record bounds. Returns the files to read with
/// their bounds, and what was noted on the way (indexes not used).
pub fn plan(
    files: Vec<SegmentFile>,
    bounds: &Bounds,
    options: &DecodeOptions,
) -> Result<(Vec<Planned>, Vec<Issue>)> {
    let mut issues = Vec::new();
    if bounds.is_unbounded() {
        return Ok((
            files.into_iter().map(|f| (f, FileBounds::all())).collect(),
            issues,
        ));
    }
    let mut planned = Vec::with_capacity(files.len());
    // Group the files by partition (consecutive files of one directory).
    let mut groups: Vec<Vec<SegmentFile>> = Vec::new();
    for f in files {
        match groups.last_mut() {
            Some(g) if g[0].path.parent() == f.path.parent() && g[0].origin == f.origin => {
                g.push(f)
            }
            _ => groups.push(vec![f]),
        }
    }
    for group in groups {
        let refs: Vec<&SegmentFile> = group.iter().collect();
        let mut start = bounds.start_offset.unwrap_or(i64::MIN);
        let mut end = bounds.end_offset;
        if let Some(ts) = bounds.start_timestamp {
            match offset_for_timestamp(&refs, ts, start, options, &mut issues)? {
                Some(offset) => start = start.max(offset),
                None => continue, // nothing at or after the start timestamp
            }
        }
        if let Some(ts) = bounds.end_timestamp {
            if let Some(offset) = offset_for_timestamp(&refs, ts, i64::MIN, options, &mut issues)? {
                end = Some(end.map_or(offset, |e| e.min(offset)));
            }
        }
        let transactions = if bounds.read_committed {
            let paths: Vec<PathBuf> = group.iter().map(|f| f.path.clone()).collect();
            let txns = scan_transactions(&paths, options.max_decompressed_size)?;
            if let Some(lso) = txns.last_stable_offset {
                end = Some(end.map_or(lso, |e| e.min(lso)));
            }
            Some(Arc::new(txns))
        } else {
            None
        };
        if end.is_some_and(|e| start >= e) {
            continue;
        }
        let n = group.len();
        let bases: Vec<Option<i64>> = group.iter().map(|f| f.base_offset).collect();
        let mut first = true;
        for (i, mut file) in group.into_iter().enumerate() {
            // A segment holds offsets below the next segment's base offset.
            let next_base = bases.get(i + 1).copied().flatten();
            if i + 1 < n && next_base.is_some_and(|b| b <= start) {
                continue;
            }
            if file.base_offset.zip(end).is_some_and(|(b, e)| b >= e) {
                break;
            }
            if first && start != i64::MIN {
                if let Some(base) = file.base_offset {
                    if start > base && file.start == 0 {
                        file.start = seek_position(&file.path, base, start, &mut issues)?;
                    }
                }
            }
            first = false;
            planned.push((
                file,
                FileBounds {
                    start,
                    end,
                    transactions: transactions.clone(),
                },
            ));
        }
    }
    Ok((planned, issues))
}
