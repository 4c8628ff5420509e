//! Walking the log entries of a segment file without decoding them into Arrow: for the
//! passes that look at batches only (finding an offset by timestamp, following transactions,
//! verifying and rebuilding indexes). Reads in chunks; memory is bounded by the largest entry.

use crate::error::{Error, Result};
use crate::format::batch::annotate;
use crate::format::segment::{
    base_offset_from_name, check_segment_start, named_like_a_log, next_entry, torn_first_entry,
    undecodable_first_entry, Frame,
};
use crate::storage::Storage;
use std::path::Path;

/// The most bytes read at a time.
const CHUNK: usize = 1 << 20;
/// The first read of a probe: most searches end within an index interval (4 KiB by default).
const PROBE: usize = 16 << 10;

/// How much of the file a scan expects to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// All of it from the start position (verifying, rebuilding): read in large chunks, ahead.
    Whole,
    /// Probably only a little (a search that stops early): read small, then more.
    Probe,
}

/// How a scan ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanEnd {
    /// Position after the last complete entry visited.
    pub position: u64,
    /// Bytes after it that do not form a complete entry (a torn tail or unwritten zeros).
    pub trailing: u64,
}

/// Calls `visit(position, entry)` for each complete entry from `start` on, until it returns
/// `false` or the file ends. A broken size field is an error naming its position.
pub fn for_each_entry(
    storage: &dyn Storage,
    path: &Path,
    start: u64,
    access: Access,
    mut visit: impl FnMut(u64, &[u8]) -> Result<bool>,
) -> Result<ScanEnd> {
    let mut file = storage.open(path)?;
    let len = file.len();
    let mut chunk = match access {
        Access::Whole => {
            file.will_read(start..len);
            CHUNK
        }
        Access::Probe => PROBE,
    };
    let mut read_to = start;
    let mut buf: Vec<u8> = Vec::new();
    let (mut begin, mut end) = (0usize, 0usize);
    let mut position = start;
    let mut unread = len.saturating_sub(start);
    // Where a run of zero bytes began: preallocated space if it lasts to the end.
    let mut zeros_from: Option<u64> = None;
    loop {
        if let Some(at) = zeros_from {
            let zeros = buf[begin..end].iter().take_while(|&&b| b == 0).count();
            begin += zeros;
            position += zeros as u64;
            if begin < end {
                let err =
                    Error::corrupt("found record size 0 smaller than minimum record overhead (14)");
                return Err(err.at(at).with_path(path));
            }
        }
        if position == 0 {
            // A file that is not a segment at all is refused, not read as a torn tail.
            let other_name = !named_like_a_log(path);
            check_segment_start(&buf[begin..end], base_offset_from_name(path), other_name)
                .map_err(|e| e.with_path(path))?;
        }
        match next_entry(&buf[begin..end]) {
            Ok(Frame::Entry(n)) => {
                let entry = &buf[begin..begin + n];
                let visited = visit(position, entry).map_err(|e| {
                    // Offsets not the segment's and a first entry that does not decode: not a
                    // segment Kafka could read at all.
                    let base = base_offset_from_name(path);
                    match undecodable_first_entry(entry, base, &e.message) {
                        Some(not) if position == 0 => not,
                        _ => e,
                    }
                    .with_path(path)
                })?;
                if !visited {
                    return Ok(ScanEnd {
                        position,
                        trailing: 0,
                    });
                }
                begin += n;
                position += n as u64;
            }
            Ok(Frame::Incomplete { need }) => {
                if unread == 0 && position == 0 && zeros_from.is_none() {
                    let base = base_offset_from_name(path);
                    let other_name = !named_like_a_log(path);
                    if let Some(e) = torn_first_entry(&buf[begin..end], base, len, other_name) {
                        return Err(e.with_path(path));
                    }
                }
                if unread == 0 {
                    let start = zeros_from.unwrap_or(position);
                    return Ok(ScanEnd {
                        position: start,
                        trailing: position - start + (end - begin) as u64,
                    });
                }
                buf.copy_within(begin..end, 0);
                end -= begin;
                begin = 0;
                let want = (chunk.max(need).saturating_sub(end).max(1) as u64).min(unread);
                chunk = (chunk * 2).min(CHUNK);
                buf.truncate(end);
                let n = file.read_into(read_to, want as usize, &mut buf)?;
                if n == 0 {
                    unread = 0; // the file is shorter than it was
                    continue;
                }
                read_to += n as u64;
                unread -= n as u64;
                end += n;
            }
            Err(err) => {
                let rest = &buf[begin..end];
                if rest[..12].iter().all(|&b| b == 0) {
                    zeros_from.get_or_insert(position);
                    continue;
                }
                return Err(
                    annotate(err, rest, position, base_offset_from_name(path)).with_path(path)
                );
            }
        }
    }
}
