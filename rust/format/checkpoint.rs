//! Kafka's text checkpoint files (`CheckpointFile`): a version line, a line with the number
//! of entries, then one entry per line, fields separated by whitespace. Version 0 is the only
//! one Kafka writes for these files.
//!
//! - `leader-epoch-checkpoint` (in a partition directory): `<epoch> <start offset>`;
//! - offset checkpoints (in a log directory, one line per partition of that directory):
//!   `<topic> <partition> <offset>`. `replication-offset-checkpoint` holds each partition's
//!   high watermark (records at or above it were never acknowledged to a producer and no
//!   consumer could fetch them); `log-start-offset-checkpoint` holds each partition's log start
//!   offset (records below it were removed by retention or DeleteRecords, even where their
//!   segment is still on disk); `recovery-point-offset-checkpoint` and
//!   `cleaner-offset-checkpoint` have the same shape.
//!
//! Reading follows Kafka's reader: an empty file, or one with only a version line, has no
//! entries; every line after the count is an entry (a line that does not split into the
//! expected fields is malformed); the number of entries must equal the count.

use crate::error::{Error, Result};

/// The names of the offset checkpoint files a broker keeps in each log directory.
pub const REPLICATION_OFFSET_CHECKPOINT: &str = "replication-offset-checkpoint";
/// The log start offset checkpoint: per partition, the first offset consumers may fetch.
pub const LOG_START_OFFSET_CHECKPOINT: &str = "log-start-offset-checkpoint";
/// The log cleaner's checkpoint in a log directory: per partition, the offset compaction has
/// cleaned up to (its first dirty offset).
pub const CLEANER_OFFSET_CHECKPOINT: &str = "cleaner-offset-checkpoint";

/// The only version Kafka writes.
const VERSION: i32 = 0;

fn malformed(line: &str) -> Error {
    Error::corrupt(format!("malformed line in checkpoint file: {line:?}"))
}

/// An integer line, read as Java's `Integer.parseInt` reads it (no surrounding spaces).
fn int_line(line: &str) -> Result<i32> {
    line.parse().map_err(|_| malformed(line))
}

/// Parses a text checkpoint file into the whitespace-separated fields of each entry (each
/// exactly `fields` of them), checking the version and the count.
pub fn parse_checkpoint(text: &str, fields: usize) -> Result<Vec<Vec<String>>> {
    let mut lines = text.lines();
    let Some(version) = lines.next() else {
        return Ok(Vec::new());
    };
    let version = int_line(version)?;
    if version != VERSION {
        return Err(Error::corrupt(format!(
            "unrecognised checkpoint version {version}, expected version: {VERSION}"
        )));
    }
    let Some(count) = lines.next() else {
        return Ok(Vec::new());
    };
    let count = int_line(count)?;
    let mut entries = Vec::new();
    for line in lines {
        // Java's split on `\s+` keeps a leading empty field: a line that starts with
        // whitespace has one field too many.
        let parts: Vec<String> = if line.starts_with(char::is_whitespace) {
            std::iter::once(String::new())
                .chain(line.split_whitespace().map(str::to_string))
                .collect()
        } else {
            line.split_whitespace().map(str::to_string).collect()
        };
        if parts.len() != fields {
            return Err(malformed(line));
        }
        entries.push(parts);
    }
    if usize::try_from(count).ok() != Some(entries.len()) {
        return Err(Error::corrupt(format!(
            "expected [{count}] entries in checkpoint file, but found only [{}]",
            entries.len()
        )));
    }
    Ok(entries)
}

/// A partition's leader-epoch checkpoint file, in its partition directory.
pub const LEADER_EPOCH_CHECKPOINT: &str = "leader-epoch-checkpoint";

/// One entry of a `leader-epoch-checkpoint`: the first offset written in a leader epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochEntry {
    /// The leader epoch.
    pub epoch: i32,
    /// The first offset of that epoch.
    pub start_offset: i64,
}

/// Parses a `leader-epoch-checkpoint` (`<epoch> <start offset>` per entry), in file order.
pub fn parse_leader_epoch_checkpoint(text: &str) -> Result<Vec<EpochEntry>> {
    parse_checkpoint(text, 2)?
        .into_iter()
        .map(|fields| {
            let line = fields.join(" ");
            Ok(EpochEntry {
                epoch: fields[0].parse().map_err(|_| malformed(&line))?,
                start_offset: fields[1].parse().map_err(|_| malformed(&line))?,
            })
        })
        .collect()
}

/// Writes a `leader-epoch-checkpoint`'s text, as Kafka writes it: the inverse of
/// [`parse_leader_epoch_checkpoint`].
pub fn write_leader_epoch_checkpoint(entries: &[EpochEntry]) -> String {
    let mut out = format!("{VERSION}\n{}\n", entries.len());
    for e in entries {
        out.push_str(&format!("{} {}\n", e.epoch, e.start_offset));
    }
    out
}

/// The recovery point checkpoint in a log directory: per partition, the offset up to which
/// its log was flushed to disk (a broker's recovery after an unclean shutdown starts there).
pub const RECOVERY_POINT_OFFSET_CHECKPOINT: &str = "recovery-point-offset-checkpoint";

/// One entry of an offset checkpoint file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetEntry {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The checkpointed offset.
    pub offset: i64,
}

/// Parses an offset checkpoint file (`replication-offset-checkpoint`,
/// `log-start-offset-checkpoint`, ...). A partition listed twice keeps its last entry, as the
/// map Kafka reads the file into does.
pub fn parse_offset_checkpoint(text: &str) -> Result<Vec<OffsetEntry>> {
    let mut out: Vec<OffsetEntry> = Vec::new();
    for fields in parse_checkpoint(text, 3)? {
        let line = fields.join(" ");
        let partition: i32 = fields[1].parse().map_err(|_| malformed(&line))?;
        let offset: i64 = fields[2].parse().map_err(|_| malformed(&line))?;
        let topic = fields[0].clone();
        out.retain(|e| !(e.topic == topic && e.partition == partition));
        out.push(OffsetEntry {
            topic,
            partition,
            offset,
        });
    }
    Ok(out)
}

/// The offset an offset checkpoint's `entries` hold for a partition.
pub fn offset_of(entries: &[OffsetEntry], topic: &str, partition: i32) -> Option<i64> {
    entries
        .iter()
        .find(|e| e.topic == topic && e.partition == partition)
        .map(|e| e.offset)
}

/// Writes an offset checkpoint file's text, as Kafka writes it (`\n` line ends).
pub fn write_offset_checkpoint(entries: &[OffsetEntry]) -> String {
    let mut out = format!("{VERSION}\n{}\n", entries.len());
    for e in entries {
        out.push_str(&format!("{} {} {}\n", e.topic, e.partition, e.offset));
    }
    out
}

/// "No epoch" in Kafka's protocol (`RecordBatch.NO_PARTITION_LEADER_EPOCH`).
pub const UNDEFINED_EPOCH: i32 = -1;
/// "No offset" in Kafka's protocol (`UNDEFINED_EPOCH_OFFSET`).
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// What a leader answers an `OffsetsForLeaderEpoch` request for `requested` with (Kafka's
/// `LeaderEpochFileCache.endOffsetFor`): for the latest epoch, itself and the log end offset;
/// for an older one, the largest epoch at or below it and the start offset of the first epoch
/// above it (where it ended); for one older than every entry, itself and that start offset (the
/// history was truncated with the log). An epoch above every entry, an undefined one, or an
/// empty history give neither. `entries` are in file order (ascending epochs and offsets).
pub fn epoch_end_offset(entries: &[EpochEntry], requested: i32, log_end: i64) -> (i32, i64) {
    const NEITHER: (i32, i64) = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
    if requested == UNDEFINED_EPOCH {
        return NEITHER;
    }
    if entries
        .last()
        .is_some_and(|latest| latest.epoch == requested)
    {
        return (requested, log_end);
    }
    match entries.iter().position(|e| e.epoch > requested) {
        None => NEITHER,
        Some(0) => (requested, entries[0].start_offset),
        Some(i) => (entries[i - 1].epoch, entries[i].start_offset),
    }
}

/// A partition directory's topic id file (`PartitionMetadataFile`): `version: 0`, then
/// `topic_id: <id>`, the id as Kafka prints a `Uuid` (16 bytes in URL-safe base64, unpadded).
pub const PARTITION_METADATA: &str = "partition.metadata";

/// The topic id in a `partition.metadata` file, as its 16 bytes.
pub fn parse_partition_metadata(text: &str) -> Result<[u8; 16]> {
    use base64::Engine;
    let mut lines = text.lines();
    let bad = |what: &str| Error::corrupt(format!("malformed {PARTITION_METADATA}: {what}"));
    match lines.next().map(str::trim) {
        Some("version: 0") => {}
        other => return Err(bad(&format!("version line {other:?}"))),
    }
    let id = lines
        .next()
        .and_then(|l| l.trim().strip_prefix("topic_id: "))
        .ok_or_else(|| bad("no topic_id line"))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(id.trim())
        .map_err(|_| bad(&format!("topic id {id:?} is not base64")))?;
    bytes
        .try_into()
        .map_err(|_| bad(&format!("topic id {id:?} is not 16 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leader_epoch_checkpoint_written_as_read() {
        let entries = [
            EpochEntry {
                epoch: 0,
                start_offset: 0,
            },
            EpochEntry {
                epoch: 3,
                start_offset: 120,
            },
        ];
        let text = write_leader_epoch_checkpoint(&entries);
        assert_eq!(text, "0\n2\n0 0\n3 120\n");
        assert_eq!(parse_leader_epoch_checkpoint(&text).unwrap(), entries);
    }

    #[test]
    fn leader_epoch_shape() {
        assert_eq!(
            parse_checkpoint("0\n2\n0 0\n3 120\n", 2).unwrap(),
            [["0", "0"], ["3", "120"]]
        );
        assert_eq!(parse_checkpoint("", 2).unwrap().len(), 0);
        assert_eq!(parse_checkpoint("0\n", 2).unwrap().len(), 0);
        assert_eq!(parse_checkpoint("0\n0\n", 2).unwrap().len(), 0);
    }

    #[test]
    fn refused_as_kafka_refuses() {
        for bad in [
            "1\n0\n",           // another version
            "0 \n0\n",          // Integer.parseInt takes no spaces
            "x\n0\n",           // not a number
            "0\nx\n",           // count not a number
            "0\n2\n0 0\n",      // fewer entries than the count
            "0\n1\n0 0\n1 1\n", // more entries than the count
            "0\n1\n0 0 0\n",    // a field too many
            "0\n1\n 0 0\n",     // leading whitespace: an empty first field
            "0\n2\n0 0\n\n",    // an empty line is an entry, and malformed
            "0\n-1\n",          // a negative count never matches
        ] {
            assert!(parse_checkpoint(bad, 2).is_err(), "{bad:?}");
        }
        // Any whitespace separates fields.
        assert_eq!(
            parse_checkpoint("0\n1\n3\t 120\n", 2).unwrap(),
            [["3", "120"]]
        );
    }

    #[test]
    fn offset_checkpoints() {
        let text = "0\n3\norders 0 120\norders 1 7\norders 0 130\n";
        let entries = parse_offset_checkpoint(text).unwrap();
        assert_eq!(
            entries,
            [
                OffsetEntry {
                    topic: "orders".into(),
                    partition: 1,
                    offset: 7
                },
                OffsetEntry {
                    topic: "orders".into(),
                    partition: 0,
                    offset: 130
                },
            ]
        );
        assert!(parse_offset_checkpoint("0\n1\norders x 1\n").is_err());
        assert!(parse_offset_checkpoint("0\n1\norders 0 1.5\n").is_err());
        let written = write_offset_checkpoint(&entries);
        assert_eq!(written, "0\n2\norders 1 7\norders 0 130\n");
        assert_eq!(parse_offset_checkpoint(&written).unwrap(), entries);
    }

    #[test]
    fn epoch_end_offsets_as_a_leader_answers() {
        let e = |epoch, start_offset| EpochEntry {
            epoch,
            start_offset,
        };
        let h = [e(0, 0), e(2, 100), e(5, 300)];
        assert_eq!(epoch_end_offset(&h, 5, 400), (5, 400));
        assert_eq!(epoch_end_offset(&h, 7, 400), (-1, -1));
        assert_eq!(epoch_end_offset(&h, 0, 400), (0, 100));
        assert_eq!(epoch_end_offset(&h, 1, 400), (0, 100));
        assert_eq!(epoch_end_offset(&h, 3, 400), (2, 300));
        assert_eq!(epoch_end_offset(&[e(3, 10)], 1, 50), (1, 10));
        assert_eq!(epoch_end_offset(&[], 1, 50), (-1, -1));
        assert_eq!(epoch_end_offset(&h, -1, 400), (-1, -1));
    }

    #[test]
    fn partition_metadata_topic_id() {
        let id =
            parse_partition_metadata("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n").unwrap();
        assert_eq!(id[15], 1);
        assert!(id[..15].iter().all(|&b| b == 0));
        assert!(parse_partition_metadata("version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").is_err());
        assert!(parse_partition_metadata("version: 0\n").is_err());
        assert!(parse_partition_metadata("version: 0\ntopic_id: AAAA").is_err());
    }
}
