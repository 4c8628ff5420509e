//! Positions inside a segment, found through its indexes as a broker finds them: where to
//! start reading for an offset (the offset index), the first offset at or after a timestamp
//! (the time index, then the log), and where to cut a segment into pieces for parallel reads.
//! Indexes are trusted only after a check; a missing, stale or corrupt one means scanning
//! from the segment's start, with an [`Issue`] saying so (docs/format.md §5.6, §5.7).

use crate::error::Result;
use crate::format::batch::{BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, Record, RecordSink};
use crate::format::index::{
    check_offset_index, check_time_index, last_time_entry_below, lookup_offset, read_offset_index,
    read_time_index, OffsetEntry, TimeEntry,
};
use crate::log::discover::SegmentFile;
use crate::log::issues::{Issue, IssueKind};
use crate::log::scan::{for_each_entry, Access};
use crate::storage::{Object, Storage};
use std::path::Path;

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
    /// The record found: its offset and timestamp.
    found: Option<(i64, i64)>,
}

impl RecordSink for FirstAtOrAfter {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        // Every batch counts, transaction markers included, as in Kafka's searchForTimestamp.
        self.found.is_none() && batch.max_timestamp >= self.timestamp
    }

    fn record(&mut self, _: &BatchInfo, r: &Record<'_>) {
        if self.found.is_none() && r.timestamp >= self.timestamp && r.offset >= self.min_offset {
            self.found = Some((r.offset, r.timestamp));
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
    record_for_timestamp(storage, segments, timestamp, min_offset, options, issues)
        .map(|found| found.map(|(offset, _)| offset))
}

/// [`offset_for_timestamp`] with the record's own timestamp, as `ListOffsets` answers:
/// `(offset, timestamp)`.
pub(crate) fn record_for_timestamp(
    storage: &dyn Storage,
    segments: &[&SegmentFile],
    timestamp: i64,
    min_offset: i64,
    options: &DecodeOptions,
    issues: &mut Vec<Issue>,
) -> Result<Option<(i64, i64)>> {
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
