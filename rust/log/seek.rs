//! Reading part of a partition the way a broker serves a fetch: pick the segments by their
//! base offsets, seek inside the first with its offset index, turn timestamps into offsets with
//! the time index, and bound the read at the last stable offset for `read_committed`.
//! Indexes are trusted only after a check; a missing, stale or corrupt one means scanning
//! from the segment's start, with an [`Issue`] saying so.
//!
//! Bounds follow Spark's Kafka source: the end offset is exclusive; a start timestamp starts
//! at the earliest offset whose timestamp is at or after it; an end timestamp ends before the
//! earliest offset whose timestamp is at or after it.

use crate::error::Result;
use crate::format::batch::{BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, Record, RecordSink};
use crate::format::index::{
    check_offset_index, check_time_index, last_time_entry_below, lookup_offset, read_offset_index,
    read_time_index, OffsetEntry, TimeEntry,
};
use crate::format::segment::topic_partition_from_dir;
use crate::log::discover::SegmentFile;
use crate::log::issues::{Issue, IssueKind};
use crate::log::scan::{for_each_entry, Access};
use crate::log::transactions::{partition_transactions, Transactions};
use crate::log::visibility::{Checkpoints, Visibility, Visible};
use crate::storage::{Object, Storage};
use std::path::Path;
use std::sync::Arc;

/// Where a read starts and ends, as a consumer would seek: by offset or timestamp (as
/// `ListOffsets` resolves one), and its isolation level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// Keep records at or after this offset.
    pub start_offset: Option<i64>,
    /// Exclusive.
    pub end_offset: Option<i64>,
    /// Start at the first record whose timestamp is at or after this (epoch ms), as
    /// `offsetsForTimes` finds it.
    pub start_timestamp: Option<i64>,
    /// End before the first record whose timestamp is at or after this (epoch ms).
    pub end_timestamp: Option<i64>,
    /// `isolation.level=read_committed`: leave out aborted transactions' records and stop at
    /// the last stable offset.
    pub read_committed: bool,
    /// What a consumer could fetch (the default), or every record on disk (see
    /// [`crate::log::visibility`]).
    pub visibility: Visibility,
}

impl Bounds {
    /// Whether the read asks for no offset, timestamp or isolation bound of its own (the
    /// broker's checkpoints may still bound it, see [`crate::log::visibility`]).
    pub fn is_unbounded(&self) -> bool {
        Bounds {
            visibility: Visibility::default(),
            ..*self
        } == Bounds::default()
    }
}

/// What the reader applies to one file's records after planning.
#[derive(Clone, Debug, Default)]
pub struct FileBounds {
    /// Records with offsets in `[start, end)` are kept; `None`: no end (so that a record at
    /// `i64::MAX` is not lost to a sentinel).
    pub start: i64,
    /// Exclusive end offset; `None`: no end.
    pub end: Option<i64>,
    /// For `read_committed`: the partition's aborted transactions.
    pub transactions: Option<Arc<Transactions>>,
}

impl FileBounds {
    /// Every record of the file: no offset bound, no transactions to drop.
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
    storage: &dyn Storage,
    log: &Path,
    base_offset: i64,
    log_len: u64,
    issues: &mut Vec<Issue>,
) -> Result<Option<Vec<OffsetEntry>>> {
    let path = log.with_extension("index");
    let Some(bytes) = storage.read(&path)? else {
        issues.push(index_issue(&path, "it is missing"));
        return Ok(None);
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
        None => Ok(Some(entries)),
        Some(problem) => {
            issues.push(index_issue(&path, &problem));
            Ok(None)
        }
    }
}

fn time_index(
    storage: &dyn Storage,
    log: &Path,
    base_offset: i64,
    issues: &mut Vec<Issue>,
) -> Result<Option<Vec<TimeEntry>>> {
    let path = log.with_extension("timeindex");
    let Some(bytes) = storage.read(&path)? else {
        issues.push(index_issue(&path, "it is missing"));
        return Ok(None);
    };
    let entries = read_time_index(&bytes, base_offset);
    match check_time_index(bytes.len(), &entries, base_offset) {
        None => Ok(Some(entries)),
        Some(problem) => {
            issues.push(index_issue(&path, &problem));
            Ok(None)
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
pub(crate) fn seek_position(
    storage: &dyn Storage,
    log: &Path,
    base_offset: i64,
    target: i64,
    issues: &mut Vec<Issue>,
) -> Result<u64> {
    let mut object = storage.open(log)?;
    let log_len = object.len();
    let Some(entries) = offset_index(storage, log, base_offset, log_len, issues)? else {
        return Ok(0);
    };
    let Some(entry) = lookup_offset(&entries, target) else {
        return Ok(0);
    };
    let mut read_at = object_reader(object.as_mut());
    if batch_at(&mut read_at, log_len, base_offset, entry)
        .map(|b| b.is_some())
        .unwrap_or(false)
    {
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

/// Reads `length` bytes at a position of a log (fewer at its end).
pub type ReadAt<'a> = dyn FnMut(u64, usize) -> Result<Vec<u8>> + 'a;

/// A [`ReadAt`] over an open file or object.
fn object_reader(object: &mut dyn Object) -> impl FnMut(u64, usize) -> Result<Vec<u8>> + '_ {
    move |position: u64, length: usize| {
        crate::storage::read_range(object, position..position + length as u64)
    }
}

/// The offset field and magic of the batch an index entry points at, when the entry points at
/// a batch that starts at or before its offset and inside this segment, and that ends where
/// another entry starts (or at the end of the log): a position inside a record that happens to
/// hold batch-shaped bytes fails the last test.
fn batch_at(
    read_at: &mut ReadAt<'_>,
    log_len: u64,
    base_offset: i64,
    entry: OffsetEntry,
) -> Result<Option<(i64, i8)>> {
    let mut header_at = |position: u64| -> Result<Option<(i64, u64, i8)>> {
        use crate::format::segment::{HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_ENTRY_SIZE};
        let h = read_at(position, HEADER_SIZE_UP_TO_MAGIC)?;
        if h.len() < HEADER_SIZE_UP_TO_MAGIC || h[16] > 2 {
            return Ok(None);
        }
        let size = i32::from_be_bytes(h[8..12].try_into().unwrap());
        let offset = i64::from_be_bytes(h[0..8].try_into().unwrap());
        Ok((size >= MIN_ENTRY_SIZE).then_some((
            offset,
            LOG_OVERHEAD as u64 + size as u64,
            h[16] as i8,
        )))
    };
    let Some((base, size, magic)) = header_at(entry.position as u64)? else {
        return Ok(None);
    };
    // The entry's offset may be the last offset of a later batch of the same append.
    if base > entry.offset || base < base_offset {
        return Ok(None);
    }
    let next = entry.position as u64 + size;
    let ends_well = if next >= log_len {
        next == log_len
    } else {
        header_at(next)?.is_some_and(|(next_base, _, _)| next_base > base)
    };
    Ok(ends_well.then_some((base, magic)))
}

/// A cut of a segment for parallel reading: `(position, lower, upper)`, every offset from
/// `position` on at least `lower` (when known), every offset before it below `upper`.
pub type Cut = (u64, Option<i64>, Option<i64>);

/// Where to cut a segment of `log_len` bytes into pieces of about `target_bytes`: batch
/// starts taken from its offset index (`index` holds the `.index` file's bytes), each checked
/// against the log through `read_at`. The first cut is `(0, base offset, None)`. Works the
/// same for a local file and for one in object storage.
pub fn split_points_by(
    index: &[u8],
    base_offset: i64,
    log_len: u64,
    target_bytes: u64,
    read_at: &mut ReadAt<'_>,
) -> Result<Vec<Cut>> {
    let mut cuts: Vec<Cut> = vec![(0, Some(base_offset), None)];
    if log_len <= target_bytes {
        return Ok(cuts);
    }
    let entries = read_offset_index(index, base_offset);
    if check_offset_index(index.len(), &entries, base_offset).is_some() {
        return Ok(cuts);
    }
    let mut last = 0u64;
    for entry in entries {
        let position = entry.position as u64;
        if position >= log_len || position < last + target_bytes {
            continue;
        }
        if let Some((first, magic)) = batch_at(read_at, log_len, base_offset, entry)? {
            // A v2 header holds its base offset: offsets from here on are at least that, and
            // those before it below it. A v0/v1 header holds its last offset (a compressed
            // wrapper's inner records are below it): only an upper bound for what came before.
            let lower = if magic == 2 {
                Some(first)
            } else {
                cuts.last().and_then(|c| c.1)
            };
            cuts.push((position, lower, Some(first)));
            last = position;
        }
    }
    Ok(cuts)
}

/// [`split_points_by`] for a segment in a storage (no index: no cuts).
pub fn split_points(
    storage: &dyn Storage,
    log: &Path,
    base_offset: i64,
    target_bytes: u64,
) -> Result<Vec<Cut>> {
    let mut object = storage.open(log)?;
    let log_len = object.len();
    if log_len <= target_bytes {
        return Ok(vec![(0, Some(base_offset), None)]);
    }
    let Some(index) = storage.read(&log.with_extension("index"))? else {
        return Ok(vec![(0, Some(base_offset), None)]);
    };
    let mut read_at = object_reader(object.as_mut());
    split_points_by(&index, base_offset, log_len, target_bytes, &mut read_at)
}

/// Whether a time index entry agrees with the log: the batch holding its offset exists and
/// has no timestamp above the entry's (which is the running maximum up to that offset).
fn time_entry_holds(
    storage: &dyn Storage,
    log: &Path,
    base: i64,
    entry: TimeEntry,
    decoder: &mut BatchDecoder,
    issues: &mut Vec<Issue>,
) -> Result<bool> {
    let start = seek_position(storage, log, base, entry.offset, issues)?;
    let mut holds = false;
    for_each_entry(storage, log, start, Access::Probe, |position, bytes| {
        let info = decoder.header(bytes, position)?;
        if info.last_offset < entry.offset {
            return Ok(true);
        }
        holds = info.base_offset <= entry.offset && info.max_timestamp <= entry.timestamp;
        Ok(false)
    })?;
    Ok(holds)
}

/// Finds the first record at or after a timestamp (and at or after `min_offset`).
struct FirstAtOrAfter {
    timestamp: i64,
    min_offset: i64,
    found: Option<i64>,
}

impl RecordSink for FirstAtOrAfter {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        // Every batch counts, transaction markers included, as in Kafka's searchForTimestamp.
        self.found.is_none() && batch.max_timestamp >= self.timestamp
    }

    fn record(&mut self, _: &BatchInfo, r: &Record<'_>) {
        if self.found.is_none() && r.timestamp >= self.timestamp && r.offset >= self.min_offset {
            self.found = Some(r.offset);
        }
    }
}

/// The earliest offset (at or after `min_offset`) whose record timestamp is at or after
/// `timestamp`, or `None` when no record is.
pub(crate) fn offset_for_timestamp(
    storage: &dyn Storage,
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
        // below it: start after the last such entry, once the log confirms the entry.
        let entry = time_index(storage, log, base, issues)?
            .and_then(|e| last_time_entry_below(&e, timestamp));
        let after = match entry {
            Some(e) if time_entry_holds(storage, log, base, e, &mut decoder, issues)? => {
                (e.offset + 1).max(min_offset)
            }
            Some(e) => {
                issues.push(index_issue(
                    &log.with_extension("timeindex"),
                    &format!(
                        "entry ({}, {}) does not match the log",
                        e.timestamp, e.offset
                    ),
                ));
                min_offset
            }
            None => min_offset,
        };
        let start = if after > base {
            seek_position(storage, log, base, after, issues)?
        } else {
            0
        };
        let mut sink = FirstAtOrAfter {
            timestamp,
            min_offset: after,
            found: None,
        };
        for_each_entry(storage, log, start, Access::Probe, |position, entry| {
            decoder.decode(entry, position, &mut sink)?;
            Ok(sink.found.is_none())
        })?;
        if sink.found.is_some() {
            return Ok(sink.found);
        }
    }
    Ok(None)
}

/// Every segment of the partition the files of `group` belong to, in offset order: the
/// whole partition directory when they are in one, else just those files.
fn partition_segments(storage: &dyn Storage, group: &[SegmentFile]) -> Vec<SegmentFile> {
    let own = group.to_vec();
    let Some(dir) = group[0]
        .path
        .parent()
        .filter(|d| topic_partition_from_dir(d).is_some())
    else {
        return own;
    };
    match crate::log::discover::discover(storage, dir) {
        Ok(all) if !all.is_empty() => all,
        _ => own,
    }
}

/// The files of each partition: consecutive files that continue one partition's log (see
/// [`SegmentFile::continued_by`]).
pub fn by_partition(files: Vec<SegmentFile>) -> Vec<Vec<SegmentFile>> {
    let mut groups: Vec<Vec<SegmentFile>> = Vec::new();
    for f in files {
        match groups.last_mut() {
            Some(g) if g[g.len() - 1].continued_by(&f) => g.push(f),
            _ => groups.push(vec![f]),
        }
    }
    groups
}

/// A segment file to read (its byte range and origin), with the bounds its records are kept
/// within: what planning produces and the readers consume.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The file and the byte range of it to read.
    pub file: SegmentFile,
    /// The offsets and aborted transactions its records are kept within.
    pub bounds: FileBounds,
}

/// Plans the reading of `files` (in reading order) within `bounds`: drops segments outside the
/// bounds, sets each file's start position and record bounds. Returns the files to read with
/// their bounds, and what was noted on the way (indexes not used).
pub fn plan(
    storage: &dyn Storage,
    files: Vec<SegmentFile>,
    bounds: &Bounds,
    options: &DecodeOptions,
) -> Result<(Vec<Planned>, Vec<Issue>)> {
    plan_with(storage, files, bounds, options, &mut Checkpoints::new())
}

/// What a consumer could fetch from the partition a group of files is in.
fn visible_of(
    storage: &dyn Storage,
    group: &[SegmentFile],
    bounds: &Bounds,
    checkpoints: &mut Checkpoints,
) -> Result<Visible> {
    // A partition's checkpoints are its broker's: beside its last (local) segments.
    match (bounds.visibility, group[group.len() - 1].path.parent()) {
        (Visibility::Consumer, Some(dir)) => checkpoints.visible(storage, dir),
        _ => Ok(Visible::default()),
    }
}

/// [`plan`], reading each log directory's checkpoint files once into `checkpoints`.
pub fn plan_with(
    storage: &dyn Storage,
    files: Vec<SegmentFile>,
    bounds: &Bounds,
    options: &DecodeOptions,
    checkpoints: &mut Checkpoints,
) -> Result<(Vec<Planned>, Vec<Issue>)> {
    let mut issues = Vec::new();
    let mut planned = Vec::with_capacity(files.len());
    for group in by_partition(files) {
        let visible = visible_of(storage, &group, bounds, checkpoints)?;
        if bounds.is_unbounded() && visible.is_unbounded() {
            planned.extend(group.into_iter().map(|file| Planned {
                file,
                bounds: FileBounds::all(),
            }));
            continue;
        }
        let refs: Vec<&SegmentFile> = group.iter().collect();
        // The user's bounds, intersected with what a consumer could fetch.
        let mut start = bounds.start_offset.unwrap_or(i64::MIN);
        if let Some(log_start) = visible.log_start {
            start = start.max(log_start);
        }
        let mut end = bounds.end_offset;
        if let Some(hw) = visible.high_watermark {
            end = Some(end.map_or(hw, |e| e.min(hw)));
        }
        if end.is_some_and(|e| start >= e) {
            continue;
        }
        if let Some(ts) = bounds.start_timestamp {
            match offset_for_timestamp(storage, &refs, ts, start, options, &mut issues)? {
                Some(offset) => start = start.max(offset),
                None => continue, // nothing at or after the start timestamp
            }
        }
        if let Some(ts) = bounds.end_timestamp {
            if let Some(offset) =
                offset_for_timestamp(storage, &refs, ts, i64::MIN, options, &mut issues)?
            {
                end = Some(end.map_or(offset, |e| e.min(offset)));
            }
        }
        let transactions = if bounds.read_committed {
            // A transaction's markers may sit in another segment than its data: follow them
            // through the whole partition, even when only some of its segments are read.
            let segments = partition_segments(storage, &group);
            let txns = partition_transactions(
                storage,
                &segments,
                visible.high_watermark,
                options,
                &mut issues,
            )?;
            // The last stable offset never passes the high watermark (`end` is below it).
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
                        file.start = seek_position(storage, &file.path, base, start, &mut issues)?;
                    }
                }
            }
            first = false;
            planned.push(Planned {
                file,
                bounds: FileBounds {
                    start,
                    end,
                    transactions: transactions.clone(),
                },
            });
        }
    }
    Ok((planned, issues))
}
