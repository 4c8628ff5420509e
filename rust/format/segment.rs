//! A segment (`.log` file) is log entries back to back: `offset i64 | size i32 | size bytes`,
//! whatever the magic. The same framing holds for the `records` field of a Fetch response.
//! This module finds entry boundaries the way Kafka's `FileLogInputStream` does (docs/format.md
//! §1.5), without doing any I/O: callers hand it bytes and it says what they hold.
//!
//! It also knows the names of segment files and partition directories (docs/format.md §5.1).

use crate::error::{Error, Result};
use std::path::Path;

/// offset + size: the bytes before each entry's message or batch.
pub const LOG_OVERHEAD: usize = 12;
/// Kafka reads offset, size, leader epoch and magic before deciding anything.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// The smallest size field Kafka accepts: a v0 message's overhead (`RECORD_OVERHEAD_V0`), the
/// smallest entry of any magic.
pub const MIN_ENTRY_SIZE: i32 = 14;

/// What the bytes at the front of a buffer hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete entry of this many bytes (including the 12 bytes of offset and size).
    Entry(usize),
    /// Too few bytes to tell, or an entry longer than the bytes given: `need` bytes in all
    /// would complete it. At the end of a file this is a torn tail.
    Incomplete {
        /// Bytes needed in all, from the start of the entry.
        need: usize,
    },
}

/// Frames the entry at the start of `buf`.
pub fn next_entry(buf: &[u8]) -> Result<Frame> {
    // Kafka stops when 17 bytes or fewer remain.
    if buf.len() <= HEADER_SIZE_UP_TO_MAGIC {
        return Ok(Frame::Incomplete {
            need: HEADER_SIZE_UP_TO_MAGIC + 1,
        });
    }
    let size = i32::from_be_bytes(buf[8..12].try_into().unwrap());
    if size < MIN_ENTRY_SIZE {
        let mut err = Error::corrupt(format!(
            "found record size {size} smaller than minimum record overhead ({MIN_ENTRY_SIZE})"
        ));
        if size == 0 && buf.iter().all(|&b| b == 0) {
            err.message
                .push_str(" (zero bytes: preallocated or never written)");
        }
        return Err(err);
    }
    let total = LOG_OVERHEAD + size as usize;
    if total > buf.len() {
        return Ok(Frame::Incomplete { need: total });
    }
    Ok(Frame::Entry(total))
}

/// The bytes at an entry's start that [`entry_last_offset`] reads: offset, size, leader epoch,
/// magic, and a v2 batch's CRC, attributes and last offset delta.
pub const ENTRY_SPAN_BYTES: usize = 27;

/// The size (with its 12 bytes of offset and size) and last offset of the entry whose first
/// bytes are `head` (up to [`ENTRY_SPAN_BYTES`] of them): a v2 batch's base offset plus its last
/// offset delta, a v0/v1 entry's own offset (a wrapper's offset is its last inner message's).
/// `None` when `head` is shorter than the 12 bytes of offset and size, or the size is negative.
/// The batch is not checked: this is for walking a log whose batches are checked elsewhere.
pub fn entry_last_offset(head: &[u8]) -> Option<(u64, i64)> {
    let base = i64::from_be_bytes(head.get(0..8)?.try_into().ok()?);
    let size = i32::from_be_bytes(head.get(8..12)?.try_into().ok()?);
    let size = u64::try_from(size).ok()?;
    let last = match (head.get(16), head.get(23..27)) {
        (Some(2), Some(delta)) => {
            base.wrapping_add(i32::from_be_bytes(delta.try_into().ok()?) as i64)
        }
        _ => base,
    };
    Some((LOG_OVERHEAD as u64 + size, last))
}

/// The position of the first entry at or after `at` (a position where an entry starts) whose
/// last offset reaches `target`, in a log of `len` bytes read through `read` (a byte range in,
/// its bytes out, fewer at the end); `None` when the log ends first or a size field is broken.
pub fn first_entry_reaching(
    len: u64,
    mut at: u64,
    target: i64,
    mut read: impl FnMut(std::ops::Range<u64>) -> Result<Vec<u8>>,
) -> Result<Option<u64>> {
    while at + LOG_OVERHEAD as u64 <= len {
        let head = read(at..(at + ENTRY_SPAN_BYTES as u64).min(len))?;
        let Some((size, last)) = entry_last_offset(&head) else {
            return Ok(None);
        };
        if last >= target {
            return Ok(Some(at));
        }
        at += size;
    }
    Ok(None)
}

/// The base offset from a segment or index file name (`00000000000000001234.log` -> 1234).
pub fn base_offset_from_name(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    let digits = &name[..name.find('.')?];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        // A tiered-storage segment: `<offset>-<segment id>.log` (see `tiered/names.rs`).
        return super::tiered::SegmentName::parse(name).map(|n| n.base_offset);
    }
    digits.parse().ok()
}

/// Whether `offset`, read from a batch header at some position of a segment whose name says
/// it starts at `segment_base`, can be an offset of that segment: offsets are never negative,
/// and a broker keeps every offset of a segment within `Int.MaxValue` of its base offset (its
/// indexes store offsets relative to the base as 4-byte integers; docs/format.md §5.1). An
/// offset outside that range was read from bytes that are not a batch header, and is not
/// reported as an offset. `None`: the base is not known (bytes in memory), only the sign is
/// checked.
pub fn offset_fits_segment(offset: i64, segment_base: Option<i64>) -> bool {
    offset >= 0 && segment_base.is_none_or(|base| offset.abs_diff(base) <= i32::MAX as u64)
}

/// What a file beside the segments is, by its suffix, when it is one of the files Kafka keeps
/// next to a `.log` and not a log itself: `.index` (offset index), `.timeindex`, `.txnindex`
/// (aborted transactions) and `.snapshot` (producer state). `None` for anything else (a `.log`,
/// a KRaft `.checkpoint` snapshot, a tiered segment object or a renamed file, all read as logs).
pub fn not_a_log(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let suffix = &name[name.rfind('.')? + 1..];
    match suffix {
        "index" => Some("an offset index"),
        "timeindex" => Some("a time index"),
        "txnindex" => Some("a transaction index"),
        "snapshot" => Some("a producer snapshot"),
        _ => None,
    }
}

/// A KRaft snapshot's id from its file name, `<20-digit end offset>-<10-digit epoch>.checkpoint`
/// as Kafka's `Snapshots` names them: `(end offset, epoch)`; `None` for any other name (a
/// `bootstrap.checkpoint` among them).
pub fn kraft_snapshot_id(path: &Path) -> Option<(i64, i32)> {
    let name = path.file_name()?.to_str()?;
    let (offset, epoch) = name.strip_suffix(".checkpoint")?.split_once('-')?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(offset, 20) || !digits(epoch, 10) {
        return None;
    }
    Some((offset.parse().ok()?, epoch.parse().ok()?))
}

/// The segment file name for a base offset: 20 digits, zero padded.
pub fn segment_file_name(base_offset: i64, suffix: &str) -> String {
    format!("{base_offset:020}.{suffix}")
}

/// Topic and partition from a partition directory name `<topic>-<partition>`. Topic names may
/// contain dots, dashes and underscores; the partition is what follows the last dash. Names of
/// directories Kafka is deleting or moving (`...-delete`, `...-future`, `...-stray`) are not
/// partition directories, nor are kafkalog's own staging directories
/// ([`is_staging_dir_name`]).
pub fn topic_partition_from_dir(dir: &Path) -> Option<(String, i32)> {
    let name = dir.file_name()?.to_str()?;
    if is_staging_dir_name(name) {
        return None;
    }
    let (topic, partition) = name.rsplit_once('-')?;
    if topic.is_empty() || partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((topic.to_string(), partition.parse().ok()?))
}

/// The longest topic name Kafka accepts (`Topic.validate`): 249, so that the partition
/// directory name, and the `-delete`/`-future` names Kafka derives from it, fit in a file
/// system's 255 bytes.
pub const MAX_TOPIC_LENGTH: usize = 249;

/// Checks a topic name as Kafka's `Topic.validate` does: not empty, not `.` or `..`, at most
/// [`MAX_TOPIC_LENGTH`] characters, and only ASCII letters, digits, `.`, `_` and `-`. A name
/// that passes is one file-name component that cannot climb out of its directory.
pub fn validate_topic(topic: &str) -> Result<()> {
    let reason = if topic.is_empty() {
        "it is empty".to_string()
    } else if topic == "." || topic == ".." {
        format!("{topic:?} is not allowed")
    } else if topic.chars().count() > MAX_TOPIC_LENGTH {
        format!(
            "{topic:?} has {} characters, more than the {MAX_TOPIC_LENGTH} allowed",
            topic.chars().count()
        )
    } else if !topic
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        format!("{topic:?} has characters other than ASCII letters, digits, '.', '_' and '-'")
    } else {
        return Ok(());
    };
    Err(Error::invalid_argument(format!(
        "topic name is invalid: {reason}"
    )))
}

/// Checks a partition number: Kafka's partitions are 0 to 2^31-1 (an `int32` that is never
/// negative).
pub fn validate_partition(partition: i64) -> Result<i32> {
    i32::try_from(partition)
        .ok()
        .filter(|p| *p >= 0)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "partition {partition} is invalid: a partition is 0 to {}",
                i32::MAX
            ))
        })
}

/// The partition directory name `<topic>-<partition>` (Kafka's `UnifiedLog.logDirName`), after
/// checking both parts with [`validate_topic`] and [`validate_partition`].
pub fn partition_dir_name(topic: &str, partition: i64) -> Result<String> {
    validate_topic(topic)?;
    let partition = validate_partition(partition)?;
    Ok(format!("{topic}-{partition}"))
}

/// What marks a kafkalog staging directory: `.<owner>.kafkalog-staging.<unique>.tmp`, where
/// `<owner>` is the name of the directory being written (or a job's tag). The name starts with
/// a dot and does not end in `-<digits>`, so it is never taken for a partition directory.
const STAGING_MARK: &str = ".kafkalog-staging.";
/// A job's staging directory (`.<tag>.kafkalog-job.<unique>.tmp`), holding the work of many
/// tasks until the job commits (the Spark writer).
const JOB_MARK: &str = ".kafkalog-job.";
const STAGING_END: &str = ".tmp";

/// The staging directory name for writing `owner` (a partition directory name), made unique
/// by `unique`. A long owner is shortened ([`owner_key`]) so that the name fits in 255 bytes.
pub fn staging_dir_name(owner: &str, unique: &str) -> String {
    format!(".{}{STAGING_MARK}{unique}{STAGING_END}", owner_key(owner))
}

/// The part of a staging (or lock) file name that stands for the directory `owner`: the name
/// itself, or for a name too long to leave room for the rest (a 249-character topic), its
/// start and a hash of the whole. The same owner always gives the same key, and a key is its
/// own key.
pub fn owner_key(owner: &str) -> std::borrow::Cow<'_, str> {
    const KEEP: usize = 150;
    if owner.len() <= 170 {
        return owner.into();
    }
    // FNV-1a, 64 bits: stable across runs and versions.
    let hash = owner.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut cut = KEEP;
    while !owner.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}~{hash:016x}", &owner[..cut]).into()
}

/// The staging directory name for a job of many tasks (`tag`: a plain name).
pub fn job_staging_dir_name(tag: &str, unique: &str) -> String {
    format!(".{tag}{JOB_MARK}{unique}{STAGING_END}")
}

/// Whether a directory name is a kafkalog staging directory ([`staging_dir_name`],
/// [`job_staging_dir_name`]): a write in progress, or one a killed writer left behind. Readers
/// skip these; they are never data.
pub fn is_staging_dir_name(name: &str) -> bool {
    staging_dir_owner(name).is_some() || is_job_staging_dir_name(name)
}

/// Whether a directory name is a job's staging directory ([`job_staging_dir_name`]).
pub fn is_job_staging_dir_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(STAGING_END))
        .and_then(|n| n.rsplit_once(JOB_MARK))
        .is_some_and(|(tag, unique)| !tag.is_empty() && !unique.is_empty())
}

/// The owner part of a staging directory name (the directory it was going to become).
pub fn staging_dir_owner(name: &str) -> Option<&str> {
    let inner = name.strip_prefix('.')?.strip_suffix(STAGING_END)?;
    let (owner, unique) = inner.rsplit_once(STAGING_MARK)?;
    (!owner.is_empty() && !unique.is_empty()).then_some(owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_beside_a_segment_are_not_logs() {
        let kind = |n: &str| not_a_log(Path::new(n));
        assert_eq!(
            kind("/p/00000000000000000000.index"),
            Some("an offset index")
        );
        assert_eq!(
            kind("/p/00000000000000000000.timeindex"),
            Some("a time index")
        );
        assert_eq!(
            kind("/p/00000000000000000000.txnindex"),
            Some("a transaction index")
        );
        assert_eq!(
            kind("/p/00000000000000000000.snapshot"),
            Some("a producer snapshot")
        );
        assert_eq!(kind("/p/00000000000000000000.log"), None);
        assert_eq!(kind("/m/00000000000000001234-0000000007.checkpoint"), None);
        assert_eq!(kind("/p/segment"), None);
    }

    #[test]
    fn snapshot_ids_are_taken_from_kafkas_names_only() {
        let id = |n: &str| kraft_snapshot_id(Path::new(n));
        assert_eq!(
            id("/m/00000000000000001234-0000000007.checkpoint"),
            Some((1234, 7))
        );
        assert_eq!(id("/m/bootstrap.checkpoint"), None);
        assert_eq!(id("/m/1234-7.checkpoint"), None);
        assert_eq!(id("/m/00000000000000001234-0000000007.log"), None);
    }

    #[test]
    fn frames_entries() {
        let mut buf = vec![0u8; 40];
        buf[8..12].copy_from_slice(&20i32.to_be_bytes());
        assert_eq!(next_entry(&buf), Ok(Frame::Entry(32)));
        assert_eq!(next_entry(&buf[..31]), Ok(Frame::Incomplete { need: 32 }));
        assert_eq!(next_entry(&buf[..17]), Ok(Frame::Incomplete { need: 18 }));
        buf[8..12].copy_from_slice(&13i32.to_be_bytes());
        assert!(next_entry(&buf).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(
            base_offset_from_name(Path::new("/x/00000000000000030626.log")),
            Some(30626)
        );
        assert_eq!(
            base_offset_from_name(Path::new("leader-epoch-checkpoint")),
            None
        );
        assert_eq!(segment_file_name(12, "index"), "00000000000000000012.index");
        assert_eq!(
            topic_partition_from_dir(Path::new("/l/Retry.Test-Topic_x-12")),
            Some(("Retry.Test-Topic_x".into(), 12))
        );
        assert_eq!(
            topic_partition_from_dir(Path::new("/l/orders-3.abc-delete")),
            None
        );
        assert_eq!(topic_partition_from_dir(Path::new("/l/kafka-logs")), None);
        assert_eq!(
            topic_partition_from_dir(Path::new(&staging_dir_name("orders-3", "12-1"))),
            None
        );
    }

    #[test]
    fn topic_names_follow_kafka() {
        for ok in [
            "orders",
            "a",
            ".hidden",
            "Retry.Test-Topic_x",
            "__consumer_offsets",
            "...",
        ] {
            assert_eq!(validate_topic(ok), Ok(()), "{ok}");
        }
        assert!(validate_topic(&"x".repeat(249)).is_ok());
        for bad in [
            "",
            ".",
            "..",
            "../escaped",
            "../../a/escaped",
            "/tmp/x",
            "a/b",
            "a\\b",
            "caf\u{e9}",
            "a b",
            "a\0b",
            &"x".repeat(250),
        ] {
            let err = validate_topic(bad).unwrap_err();
            assert_eq!(err.kind, crate::error::ErrorKind::InvalidArgument, "{bad}");
            assert!(err.message.starts_with("topic name is invalid"), "{err}");
        }
        assert!(validate_topic("../escaped")
            .unwrap_err()
            .message
            .contains("\"../escaped\""));
        assert_eq!(validate_partition(0), Ok(0));
        assert_eq!(validate_partition(i32::MAX as i64), Ok(i32::MAX));
        assert!(validate_partition(-1).is_err());
        assert!(validate_partition(1 << 31).is_err());
        assert_eq!(partition_dir_name("orders", 7).unwrap(), "orders-7");
        assert!(partition_dir_name("..", 0).is_err());
    }

    #[test]
    fn staging_names() {
        let name = staging_dir_name("orders-3", "4411-9f");
        assert_eq!(name, ".orders-3.kafkalog-staging.4411-9f.tmp");
        assert!(is_staging_dir_name(&name));
        assert_eq!(staging_dir_owner(&name), Some("orders-3"));
        for not in [
            "orders-3",
            ".orders-3",
            ".kafkalog-staging..tmp",
            ".x.kafkalog-staging.1",
        ] {
            assert!(!is_staging_dir_name(not), "{not}");
        }
        let long = format!("{}-0", "t".repeat(249));
        let name = staging_dir_name(&long, "4411-9f-12345678901234567890");
        assert!(name.len() <= 230, "{}", name.len());
        let key = staging_dir_owner(&name).unwrap();
        assert_eq!(owner_key(&long), key);
        assert_eq!(owner_key(key), key);
        assert_ne!(owner_key(&format!("{}-1", "t".repeat(249))), key);
        let job = job_staging_dir_name("spark", "ab12");
        assert!(is_staging_dir_name(&job) && is_job_staging_dir_name(&job));
        assert_eq!(staging_dir_owner(&job), None);
        assert_eq!(topic_partition_from_dir(Path::new(&job)), None);
    }
}
