//! A segment (`.log` file) is log entries back to back: `offset i64 | size i32 | size bytes`,
//! whatever the magic. The same framing holds for the `records` field of a Fetch response.
//! This module finds entry boundaries the way Kafka's `FileLogInputStream` does (FORMAT.md
//! §1.5), without doing any I/O: callers hand it bytes and it says what they hold.
//!
//! It also knows the names of segment files and partition directories (FORMAT.md §5.1).

use crate::error::{Error, Result};
use std::path::Path;

/// offset + size: the bytes before each entry's message or batch.
pub const LOG_OVERHEAD: usize = 12;
/// Kafka reads offset, size, leader epoch and magic before deciding anything.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// The smallest size field Kafka accepts.
pub const MIN_ENTRY_SIZE: i32 = 14;

/// What the bytes at the front of a buffer hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete entry of this many bytes (including the 12 bytes of offset and size).
    Entry(usize),
    /// Too few bytes to tell, or an entry longer than the bytes given: `need` bytes in all
    /// would complete it. At the end of a file this is a torn tail.
    Incomplete { need: usize },
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

/// The base offset from a segment or index file name (`00000000000000001234.log` -> 1234).
pub fn base_offset_from_name(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    let digits = &name[..name.find('.')?];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The segment file name for a base offset: 20 digits, zero padded.
pub fn segment_file_name(base_offset: i64, suffix: &str) -> String {
    format!("{base_offset:020}.{suffix}")
}

/// Topic and partition from a partition directory name `<topic>-<partition>`. Topic names may
/// contain dots, dashes and underscores; the partition is what follows the last dash. Names of
/// directories Kafka is deleting or moving (`...-delete`, `...-future`, `...-stray`) are not
/// partition directories.
pub fn topic_partition_from_dir(dir: &Path) -> Option<(String, i32)> {
    let name = dir.file_name()?.to_str()?;
    let (topic, partition) = name.rsplit_once('-')?;
    if topic.is_empty() || partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((topic.to_string(), partition.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
