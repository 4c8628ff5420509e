//! A partition's offsets as a consumer's `ListOffsets` request sees them, from the files: the
//! earliest offset (the log start), the latest (the log end offset, or under `read_committed`
//! the last stable offset), and the offset for a timestamp. Spark's Kafka source resolves `earliest`/`latest` and a streaming
//! query's progress through exactly these; here they come from segment names, offset indexes
//! and the tail of the last segment, never from whole logs.

use crate::error::Result;
use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
use crate::format::checkpoint::{parse_offset_checkpoint, CLEANER_OFFSET_CHECKPOINT};
use crate::log::discover::by_partition;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::log::origin::Origin;
use crate::log::position::{offset_for_timestamp, seek_position};
use crate::log::scan::{for_each_entry, Access};
use crate::log::transactions::partition_transactions;
use crate::log::visibility::{Checkpoints, Visibility, Visible};

/// The offsets of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionOffsets {
    /// The partition these offsets are of.
    pub origin: Origin,
    /// The log start offset: the first segment's base offset (from its name, else its first
    /// batch). `None` for a partition without a batch and without a segment name.
    pub earliest: Option<i64>,
    /// The offset the next record would get (the log end offset); under `read_committed`, no
    /// more than the last stable offset. `None` as for `earliest`.
    pub latest: Option<i64>,
    /// For the timestamp asked about: the earliest offset whose record timestamp is at or
    /// after it (as `ListOffsets` with a timestamp answers), `None` when no record is.
    pub for_timestamp: Option<i64>,
    /// Offsets missing between two segments, `[from, to)`, that compaction cannot explain:
    /// where the log directory has the cleaner's checkpoint and the partition was not cleaned
    /// past the gap (without that checkpoint nothing is reported: a cleaner may have made it).
    pub gaps: Vec<(i64, i64)>,
}

/// The offsets of each partition among `files` (in reading order, as
/// [`crate::log::discover::discover`] lists them; whole partitions, so that the last segment is the
/// partition's last). `timestamp_of` gives the timestamp to look up in a partition, if any.
/// With [`Visibility::Consumer`], the broker's checkpoints beside the partition directories
/// bound both ends as they bound a consumer's fetch: earliest no lower than the log start
/// offset, latest no higher than the high watermark.
pub fn list_offsets(
    storage: &dyn crate::storage::Storage,
    files: Vec<SegmentFile>,
    read_committed: bool,
    visibility: Visibility,
    timestamp_of: &dyn Fn(&Origin) -> Option<i64>,
    options: &DecodeOptions,
) -> Result<(Vec<PartitionOffsets>, Vec<Issue>)> {
    let mut checkpoints = Checkpoints::new();
    let mut out = Vec::new();
    let mut issues = Vec::new();
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Ignore,
        ..options.clone()
    });
    for group in by_partition(files) {
        let origin = group[0].origin.clone();
        // A partition's checkpoints are its broker's: beside its last (local) segments.
        let visible = match (visibility, group[group.len() - 1].path.parent()) {
            (Visibility::Consumer, Some(dir)) => checkpoints.visible(storage, dir)?,
            _ => Visible::default(),
        };
        let first = &group[0];
        let mut earliest = match first.base_offset {
            Some(base) => Some(base),
            None => first_offset(storage, first, &mut decoder)?,
        };
        // The log end offset: after the last batch of the last segment that has one; a segment
        // rolled but still empty holds the next offset in its name.
        let mut latest = None;
        for file in group.iter().rev() {
            if let Some(end) = end_offset(storage, file, &mut decoder, &mut issues)? {
                latest = Some(end);
                break;
            }
            if let Some(base) = file.base_offset {
                latest = Some(base);
                break;
            }
        }
        if let Some(hw) = visible.high_watermark {
            latest = latest.map(|l| l.min(hw));
        }
        if let Some(log_start) = visible.log_start {
            earliest = earliest.map(|e| e.max(log_start));
            latest = latest.map(|l| l.max(log_start));
        }
        if read_committed && latest.is_some() {
            let txns = partition_transactions(
                storage,
                &group,
                visible.high_watermark,
                options,
                &mut issues,
            )?;
            if let Some(lso) = txns.last_stable_offset {
                latest = latest.map(|l| l.min(lso));
            }
        }
        let for_timestamp = match timestamp_of(&origin) {
            Some(ts) => {
                let refs: Vec<&SegmentFile> = group.iter().collect();
                offset_for_timestamp(storage, &refs, ts, i64::MIN, options, &mut issues)?
            }
            None => None,
        };
        let gaps = unexplained_gaps(storage, &group, &mut decoder, &mut issues)?;
        out.push(PartitionOffsets {
            origin,
            earliest,
            latest,
            for_timestamp,
            gaps,
        });
    }
    Ok((out, issues))
}

/// Gaps between consecutive segments (one ends before the next begins) that the cleaner's
/// checkpoint does not cover. Retention deletes whole segments from the start and a broker
/// rolls a segment at the next offset, so inside a log only compaction leaves such a gap, and
/// only below the offset it has cleaned to.
fn unexplained_gaps(
    storage: &dyn crate::storage::Storage,
    group: &[SegmentFile],
    decoder: &mut BatchDecoder,
    issues: &mut Vec<Issue>,
) -> Result<Vec<(i64, i64)>> {
    // The broker's log directory: that of the partition's last (local) segments.
    let last = &group[group.len() - 1];
    let Some((topic, partition)) = last
        .path
        .parent()
        .and_then(crate::format::segment::topic_partition_from_dir)
    else {
        return Ok(Vec::new());
    };
    let Some(log_dir) = last.path.parent().and_then(|d| d.parent()) else {
        return Ok(Vec::new());
    };
    let checkpoint = log_dir.join(CLEANER_OFFSET_CHECKPOINT);
    let Some(bytes) = storage.read(&checkpoint)? else {
        return Ok(Vec::new());
    };
    let cleaned_to = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| parse_offset_checkpoint(text).ok())
        .and_then(|entries| {
            entries
                .into_iter()
                .filter(|e| e.topic == topic && e.partition == partition)
                .map(|e| e.offset)
                .next_back()
        })
        .unwrap_or(i64::MIN);
    let mut gaps = Vec::new();
    for pair in group.windows(2) {
        let (Some(next_base), Some(base)) = (pair[1].base_offset, pair[0].base_offset) else {
            continue;
        };
        let end = end_offset(storage, &pair[0], decoder, issues)?.unwrap_or(base);
        if end < next_base && next_base > cleaned_to {
            gaps.push((end, next_base));
        }
    }
    Ok(gaps)
}

/// The first batch's base offset of a file (for files whose names do not say).
pub(crate) fn first_offset(
    storage: &dyn crate::storage::Storage,
    file: &SegmentFile,
    decoder: &mut BatchDecoder,
) -> Result<Option<i64>> {
    let mut found = None;
    for_each_entry(
        storage,
        &file.path,
        file.start,
        Access::Probe,
        |position, entry| {
            found = Some(decoder.header(entry, position)?.base_offset);
            Ok(false)
        },
    )?;
    Ok(found)
}

/// One past the last offset of the file's last complete batch, scanning from its offset
/// index's last entry; `None` when it holds no batch.
pub(crate) fn end_offset(
    storage: &dyn crate::storage::Storage,
    file: &SegmentFile,
    decoder: &mut BatchDecoder,
    issues: &mut Vec<Issue>,
) -> Result<Option<i64>> {
    let start = match file.base_offset {
        Some(base) if file.start == 0 => {
            seek_position(storage, &file.path, base, i64::MAX, issues)?
        }
        _ => file.start,
    };
    let mut last = None;
    for_each_entry(
        storage,
        &file.path,
        start,
        Access::Probe,
        |position, entry| {
            if file.end.is_some_and(|end| position >= end) {
                return Ok(false);
            }
            last = Some(decoder.header(entry, position)?.last_offset);
            Ok(true)
        },
    )?;
    Ok(last.map(|l| l + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::discover::discover;
    use crate::storage::default_storage;
    use std::path::Path;

    fn listed(path: &Path, read_committed: bool) -> Vec<PartitionOffsets> {
        let storage = default_storage();
        let files = discover(storage.as_ref(), path).unwrap();
        let options = DecodeOptions {
            crc: CrcPolicy::Ignore,
            max_decompressed_size: 256 << 20,
        };
        let visibility = Visibility::Consumer;
        list_offsets(
            storage.as_ref(),
            files,
            read_committed,
            visibility,
            &|_| None,
            &options,
        )
        .unwrap()
        .0
    }

    fn offsets(path: &Path, read_committed: bool) -> Vec<(String, i32, i64, i64)> {
        listed(path, read_committed)
            .into_iter()
            .map(|p| {
                let (earliest, latest) = (p.earliest.unwrap(), p.latest.unwrap());
                (
                    p.origin.topic.unwrap(),
                    p.origin.partition.unwrap(),
                    earliest,
                    latest,
                )
            })
            .collect()
    }

    fn got_gaps(path: &Path) -> Vec<(i64, i64)> {
        listed(path, false)
            .into_iter()
            .flat_map(|p| p.gaps)
            .collect()
    }

    #[test]
    fn a_gap_between_segments_is_loss_unless_the_cleaner_made_it() {
        let logs = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/logs/orders-0");
        let root = std::env::temp_dir().join(format!("kafkalog-gaps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let part = root.join("orders-0");
        std::fs::create_dir_all(&part).unwrap();
        // orders-0's first segment ends at 15; its second renamed to start at 20.
        std::fs::copy(
            logs.join("00000000000000000000.log"),
            part.join("00000000000000000000.log"),
        )
        .unwrap();
        let second = std::fs::read(logs.join("00000000000000000015.log")).unwrap();
        std::fs::write(part.join("00000000000000000020.log"), second).unwrap();
        assert!(
            got_gaps(&part).is_empty(),
            "no cleaner checkpoint: nothing known"
        );
        std::fs::write(root.join(CLEANER_OFFSET_CHECKPOINT), "0\n0\n").unwrap();
        assert_eq!(
            got_gaps(&part),
            [(15, 20)],
            "never cleaned: the gap is loss"
        );
        std::fs::write(root.join(CLEANER_OFFSET_CHECKPOINT), "0\n1\norders 0 25\n").unwrap();
        assert!(
            got_gaps(&part).is_empty(),
            "cleaned past it: compaction explains it"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_examples_offsets_are_their_segments_ends() {
        let logs = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/logs");
        let got = offsets(&logs, false);
        let orders0 = got.iter().find(|p| p.0 == "orders" && p.1 == 0).unwrap();
        assert_eq!((orders0.2, orders0.3), (0, 33));
        let orders1 = got.iter().find(|p| p.0 == "orders" && p.1 == 1).unwrap();
        // Its last entry is a transaction marker (offset 7): the end is after it.
        assert_eq!((orders1.2, orders1.3), (0, 8));
        let users = got.iter().find(|p| p.0 == "users" && p.1 == 0).unwrap();
        assert_eq!((users.2, users.3), (0, 15)); // compacted: 8 records, offsets to 14
        assert!(
            got_gaps(&logs).is_empty(),
            "no cleaner checkpoint: no gap is reported"
        );
        // Every transaction there is closed: read_committed ends at the same place.
        assert_eq!(offsets(&logs.join("orders-1"), true)[0].3, 8);
    }
}
