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

/// What tells a file that is not a Kafka segment (a text file, a Parquet file, random bytes)
/// from a segment, by its first entry (the bytes at position 0), before any of it is taken
/// for a torn batch (a file read as an empty log with a partial batch at its end) or a
/// corrupt one. Kafka's rules for an entry's header:
///
/// - its offsets are the segment's: the last offset is the segment's base offset (from the
///   file name) plus a relative offset of 0 to `Int.MaxValue`, as `LogSegment.recover`
///   requires of each batch (`ensureOffsetInRange(batch.lastOffset())`; the indexes store
///   offsets relative to the base as 4-byte integers); without a name, not negative;
/// - its size field is at least [`MIN_ENTRY_SIZE`] (`FileLogInputStream.nextBatch`);
/// - its magic byte is 0, 1 or 2 (`ByteBufferLogInputStream`: "Invalid magic found").
///
/// Kafka still reads some segments that break one of them, and so does kafkalog: one whose
/// offsets are not its name's but whose batches are whole (its `LogLoader` splits it into
/// segments named by their offsets, `splitOverflowedSegment`), and a real segment whose first
/// batch was damaged (a corrupt batch, reported as one). What is not a segment is a first
/// entry that breaks a rule and cannot be a batch either:
///
/// - [`check_segment_start`]: offsets not the segment's, and a size or magic byte no entry has;
/// - [`torn_first_entry`]: any rule broken, and the entry runs past the end of the file (a
///   crash tears a batch's end, never the header it wrote first);
/// - [`undecodable_first_entry`]: offsets not the segment's, and the entry does not decode.
///
/// A file whose name is not a log's (`other_name`: not a segment's, a tiered segment
/// object's or a KRaft snapshot's, see [`named_like_a_log`]) has no name to vouch for it: its
/// first entry breaking any one rule makes it not a segment (a Parquet file, whose size
/// field or magic byte is no entry's), and so does a first entry running past the end of the
/// file, the file shorter than the smallest entry ([`SMALLEST_ENTRY`]: `/etc/hostname`) among
/// them ([`torn_first_entry`]). A torn tail after complete batches stays a torn tail. Bytes
/// with no file (in memory, a Fetch response's records) are judged as a named file's.
///
/// Leading zeros (a preallocated segment never written) are none of these. The error is
/// [`ErrorKind::NotASegment`] at position 0, naming what at the start cannot be Kafka's.
///
/// [`ErrorKind::NotASegment`]: crate::error::ErrorKind::NotASegment
pub fn check_segment_start(head: &[u8], segment_base: Option<i64>, other_name: bool) -> Result<()> {
    match (offset_fault(head, segment_base), header_fault(head)) {
        (Some(offsets), Some(header)) => Err(not_a_segment(head, &format!("{offsets}; {header}"))),
        (Some(why), None) | (None, Some(why)) if other_name => Err(not_a_segment(head, &why)),
        _ => Ok(()),
    }
}

/// The fewest bytes an entry takes: its offset and size, and the smallest entry Kafka writes
/// (a v0 message with no key and no value).
pub const SMALLEST_ENTRY: usize = LOG_OVERHEAD + MIN_ENTRY_SIZE as usize;

/// Whether `path` is named as Kafka names a file of log entries: a segment
/// (`00000000000000001234.log`, or any suffix after those digits), a tiered-storage segment
/// object, a KRaft snapshot (`<offset>-<epoch>.checkpoint`). A file named otherwise is judged
/// more strictly ([`check_segment_start`]).
pub fn named_like_a_log(path: &Path) -> bool {
    base_offset_from_name(path).is_some() || kraft_snapshot_id(path).is_some()
}

/// The error for a first entry (its bytes `head`, the whole rest of a file of `len` bytes)
/// that runs past the end of the file and breaks one of Kafka's rules (see
/// [`check_segment_start`]), or is in a file named otherwise than a log (`other_name`: a
/// crash tears the last batch of a segment, which only a segment's name vouches for when it
/// is also the first); `None` when it is neither: a torn batch.
pub fn torn_first_entry(
    head: &[u8],
    segment_base: Option<i64>,
    len: u64,
    other_name: bool,
) -> Option<Error> {
    if other_name && len < SMALLEST_ENTRY as u64 {
        let size = match len {
            0 => "empty".to_string(),
            1 => "1 byte".to_string(),
            n => format!("{n} bytes"),
        };
        return Some(not_a_segment(
            head,
            &format!(
                "the file is {size}, less than the smallest entry Kafka writes ({SMALLEST_ENTRY} \
                 bytes), and its name is not a segment's"
            ),
        ));
    }
    let name_fault = || other_name.then(|| "its name is not a segment's".to_string());
    let why = offset_fault(head, segment_base)
        .or_else(|| header_fault(head))
        .or_else(name_fault)?;
    let size = head
        .get(8..12)
        .map(|b| i32::from_be_bytes(b.try_into().unwrap()));
    let torn = match size {
        Some(size) => format!(
            "; its first entry of {size} bytes (after its offset and size) runs past the end \
             of the file ({len} bytes)"
        ),
        None => format!("; the file is only {len} bytes"),
    };
    Some(not_a_segment(head, &format!("{why}{torn}")))
}

/// The error for a first entry (`entry`) that does not decode (`why`) and whose offsets are
/// not the segment's (see [`check_segment_start`]); `None` when they are: a corrupt batch.
pub fn undecodable_first_entry(
    entry: &[u8],
    segment_base: Option<i64>,
    why: &str,
) -> Option<Error> {
    let offsets = offset_fault(entry, segment_base)?;
    Some(not_a_segment(
        entry,
        &format!("{offsets}; its first entry does not decode: {why}"),
    ))
}

/// A [`ErrorKind::NotASegment`] error at position 0: `why`, and the file's first bytes.
///
/// [`ErrorKind::NotASegment`]: crate::error::ErrorKind::NotASegment
fn not_a_segment(head: &[u8], why: &str) -> Error {
    let starts = match head.len() {
        0 => String::new(),
        n => format!(
            " (the file starts with {})",
            shown_bytes(&head[..n.min(16)])
        ),
    };
    Error::new(
        crate::error::ErrorKind::NotASegment,
        format!("not a Kafka segment: {why}{starts}"),
    )
    .at(0)
}

/// Why the first entry's offsets are not the segment's (see [`check_segment_start`]), when
/// its first 8 bytes (or 27, for a v2 batch's last offset) say so.
fn offset_fault(head: &[u8], segment_base: Option<i64>) -> Option<String> {
    if head.iter().take(LOG_OVERHEAD).all(|&b| b == 0) {
        return None;
    }
    let base = i64::from_be_bytes(head.get(0..8)?.try_into().ok()?);
    let Some(segment) = segment_base else {
        return (base < 0).then(|| format!("the offset at byte 0 is negative ({base})"));
    };
    let fits = |r: Option<i64>| r.is_some_and(|r| (0..=i32::MAX as i64).contains(&r));
    let last_known = match head.get(HEADER_SIZE_UP_TO_MAGIC - 1) {
        Some(&magic) => magic < 2 || head.len() >= ENTRY_SPAN_BYTES,
        None => false,
    };
    let (_, last) = entry_last_offset(head).unwrap_or((0, base));
    if last_known && fits(last.checked_sub(segment)) {
        return None;
    }
    // A v2 batch's last offset unseen: it is 0 to Int.MaxValue past its base offset.
    let reach = base.checked_add(i32::MAX as i64).unwrap_or(i64::MAX);
    if !last_known && (fits(base.checked_sub(segment)) || fits(reach.checked_sub(segment))) {
        return None;
    }
    let at = if last == base {
        format!("the offset at byte 0 is {base}")
    } else {
        format!("the first batch's last offset is {last} (base offset {base} at byte 0)")
    };
    Some(format!(
        "{at}, not the segment's base offset {segment} (its file name) plus a relative offset \
         of 0 to {}",
        i32::MAX
    ))
}

/// What in the first entry's size or magic byte cannot be Kafka's, when its first 12 (or
/// 17) bytes say so.
fn header_fault(head: &[u8]) -> Option<String> {
    if head.iter().take(LOG_OVERHEAD).all(|&b| b == 0) {
        return None;
    }
    let size = i32::from_be_bytes(head.get(8..12)?.try_into().ok()?);
    if size < MIN_ENTRY_SIZE {
        return Some(format!(
            "the size at byte 8 is {size}, smaller than the smallest entry ({MIN_ENTRY_SIZE} \
             bytes)"
        ));
    }
    let magic = *head.get(HEADER_SIZE_UP_TO_MAGIC - 1)?;
    (magic > 2).then(|| {
        format!(
            "the magic byte at byte 16 is {}, where Kafka writes 0, 1 or 2",
            magic as i8
        )
    })
}

/// Bytes as text a person recognises: printable ASCII as is, the rest as `\xNN`.
fn shown_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
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
    fn a_segment_start_must_be_kafkas() {
        use crate::error::ErrorKind;
        // A v2 batch header at offset 100: offset, size 61, leader epoch, magic 2, crc,
        // attributes, last offset delta 4.
        let mut head = vec![0u8; 27];
        head[0..8].copy_from_slice(&100i64.to_be_bytes());
        head[8..12].copy_from_slice(&61i32.to_be_bytes());
        head[16] = 2;
        head[23..27].copy_from_slice(&4i32.to_be_bytes());
        // Kafka checks the last offset (base + delta): a batch starting before the segment's
        // base but ending in it fits; one ending before it, or more than Int.MaxValue past
        // it, does not.
        for base in [
            None,
            Some(0),
            Some(100),
            Some(101),
            Some(104 - i32::MAX as i64),
        ] {
            assert_eq!(check_segment_start(&head, base, false), Ok(()), "{base:?}");
            // A torn batch: whatever part of its header there is, it is one.
            for n in [1, 7, 8, 12, 16, 17, 20, 27] {
                assert_eq!(
                    torn_first_entry(&head[..n], base, n as u64, false),
                    None,
                    "{n}"
                );
            }
            assert_eq!(undecodable_first_entry(&head, base, "crc"), None);
        }
        let not = |err: Option<Error>| {
            let err = err.expect("refused");
            assert_eq!(err.kind, ErrorKind::NotASegment);
            assert_eq!(err.position, Some(0));
            err.message
        };
        // Offsets not the name's: a whole batch is read (Kafka splits such a segment), a torn
        // or undecodable one is not a segment.
        assert_eq!(check_segment_start(&head, Some(105), false), Ok(()));
        let msg = not(torn_first_entry(&head, Some(105), 27, false));
        assert!(
            msg.contains(
                "last offset is 104 (base offset 100 at byte 0), not the segment's base offset 105"
            ),
            "{msg}"
        );
        assert!(msg.contains("its first entry of 61 bytes (after its offset and size) runs past the end of the file (27 bytes)"), "{msg}");
        let msg = not(undecodable_first_entry(
            &head,
            Some(103 - i32::MAX as i64),
            "crc",
        ));
        assert!(msg.ends_with("; its first entry does not decode: crc (the file starts with \"\\x00\\x00\\x00\\x00\\x00\\x00\\x00d\\x00\\x00\\x00=\\x00\\x00\\x00\\x00\")"), "{msg}");
        // Text: its offset is no segment's, nor is its magic byte.
        let text = b"# kafkalog\n\nRead Apache Kafka's on-disk log";
        let msg = not(check_segment_start(text, Some(0), false).err());
        assert!(msg.starts_with("not a Kafka segment: the offset at byte 0 is 2531141056656531820, not the segment's base offset 0"), "{msg}");
        assert!(
            msg.contains("; the magic byte at byte 16 is 32, where Kafka writes 0, 1 or 2"),
            "{msg}"
        );
        // Without a name a positive offset is one; torn, the magic byte is not.
        let text = b"root:x:0:0:root:/root:/bin/bash\n";
        assert_eq!(check_segment_start(text, None, false), Ok(()));
        let msg = not(torn_first_entry(text, None, 32, false));
        assert!(msg.contains("magic byte at byte 16 is 47"), "{msg}");
        assert!(msg.contains("starts with \"root:x:0:0:root:\")"), "{msg}");
        // A negative offset (seen in 8 bytes); a size below 14 with it.
        let mut bad = head.clone();
        bad[0] = 0xff;
        assert!(not(torn_first_entry(&bad[..8], None, 8, false)).contains("negative"));
        bad[8..12].copy_from_slice(&13i32.to_be_bytes());
        assert!(not(check_segment_start(&bad, None, false).err()).contains("size at byte 8 is 13"));
        // A damaged header with the segment's offsets is a corrupt batch, not this.
        let mut bad = head.clone();
        bad[16] = 0xfe;
        assert_eq!(check_segment_start(&bad, Some(100), false), Ok(()));
        // Zeros (a preallocated segment) and nothing at all are none of these.
        assert_eq!(check_segment_start(&[0u8; 40], Some(500), false), Ok(()));
        assert_eq!(torn_first_entry(&[0u8; 40], Some(500), 40, false), None);
        assert_eq!(torn_first_entry(&[], Some(500), 0, false), None);

        // Named otherwise than a log: one broken rule is enough, a short file is not a
        // segment; a plausible header is still read (a renamed segment), a torn one torn.
        // The size field (bytes 8 to 12) negative, as in a Parquet file the issue met.
        let parquet = b"PAR1\x15\x04\x15\x80\xc1\x02\x15\x84L\x15\x02\x15\x00\x12\x00\x00";
        assert_eq!(check_segment_start(parquet, None, false), Ok(()));
        let msg = not(check_segment_start(parquet, None, true).err());
        assert!(
            msg.starts_with("not a Kafka segment: the size at byte 8 is "),
            "{msg}"
        );
        assert!(msg.contains("starts with \"PAR1"), "{msg}");
        assert_eq!(check_segment_start(&head, None, true), Ok(()));
        let msg = not(torn_first_entry(&head, None, 27, true));
        assert!(msg.contains("its name is not a segment's; its first entry of 61 bytes (after its offset and size) runs past the end of the file (27 bytes)"), "{msg}");
        let msg = not(torn_first_entry(b"vm\n", None, 3, true));
        assert!(msg.contains("the file is 3 bytes, less than the smallest entry Kafka writes (26 bytes), and its name is not a segment's (the file starts with \"vm\\x0a\")"), "{msg}");
        assert_eq!(torn_first_entry(b"vm\n", Some(0), 3, false), None);
        assert_eq!(torn_first_entry(b"vm\n", None, 3, false), None);
        assert!(not(torn_first_entry(&[], None, 0, true)).ends_with("the file is empty, less than the smallest entry Kafka writes (26 bytes), and its name is not a segment's"));
        assert!(named_like_a_log(Path::new(
            "/d/t-0/00000000000000000012.log"
        )));
        assert!(named_like_a_log(Path::new(
            "/s/00000000000000000100-0000000001.checkpoint"
        )));
        assert!(!named_like_a_log(Path::new("/d/sensors.parquet")));
        assert!(!named_like_a_log(Path::new("/etc/hostname")));
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
