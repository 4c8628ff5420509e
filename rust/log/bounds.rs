//! The bounds of a read, applied the way a broker serves a fetch: pick the segments by their
//! base offsets, start inside the first at its offset index's position, turn timestamps into
//! offsets, keep within what a consumer could fetch (the checkpoints), and stop at the last
//! stable offset for `read_committed`. The result is the segments to read, each with the
//! record bounds the reader applies ([`Planned`]).
//!
//! Bounds follow Spark's Kafka source: the end offset is exclusive; a start timestamp starts
//! at the earliest offset whose timestamp is at or after it; an end timestamp ends before the
//! earliest offset whose timestamp is at or after it.

use crate::error::{Error, Result};
use crate::format::batch::DecodeOptions;
use crate::format::segment::topic_partition_from_dir;
use crate::log::discover::{by_partition, SegmentFile};
use crate::log::issues::Issue;
use crate::log::position::{offset_for_timestamp, seek_position};
use crate::log::transactions::{partition_transactions, Transactions};
use crate::log::visibility::{Checkpoints, Visibility, Visible};
use crate::storage::Storage;
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
    /// Refuses bounds that end before they start (an end offset below the start offset, an
    /// end timestamp below the start timestamp): a read of nothing asked for by mistake.
    /// Equal bounds are an empty read, as Spark's Kafka source has them.
    pub fn check(&self) -> Result<()> {
        let pairs = [
            (
                "start_offset",
                self.start_offset,
                "end_offset",
                self.end_offset,
            ),
            (
                "start_timestamp",
                self.start_timestamp,
                "end_timestamp",
                self.end_timestamp,
            ),
        ];
        for (start_name, start, end_name, end) in pairs {
            if let (Some(start), Some(end)) = (start, end) {
                if end < start {
                    return Err(Error::invalid_argument(format!(
                        "{end_name}={end} is before {start_name}={start}: the end comes after \
                         the start (it is exclusive)"
                    )));
                }
            }
        }
        Ok(())
    }

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
        (Visibility::Consumer, Some(dir)) => checkpoints.visible(storage, dir).map_err(|e| {
            let message = format!(
                "{}; pass visibility='all' to read every record on disk without it",
                e.message
            );
            crate::error::Error { message, ..e }
        }),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverted_bounds_are_refused() {
        let inverted = Bounds {
            start_offset: Some(10),
            end_offset: Some(5),
            ..Default::default()
        };
        let err = inverted.check().unwrap_err();
        assert!(err
            .to_string()
            .contains("end_offset=5 is before start_offset=10"));
        let times = Bounds {
            start_timestamp: Some(2),
            end_timestamp: Some(1),
            ..Default::default()
        };
        assert!(times.check().is_err());
        let empty = Bounds {
            start_offset: Some(5),
            end_offset: Some(5),
            ..Default::default()
        };
        assert!(empty.check().is_ok());
        assert!(Bounds::default().check().is_ok());
    }
}
