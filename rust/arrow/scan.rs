//! Walking the log entries of a segment file without decoding them into Arrow: for the
//! passes that look at batches only (finding an offset by timestamp, following transactions,
//! verifying and rebuilding indexes). Reads in chunks; memory is bounded by the largest entry.

use crate::error::{Error, Result};
use crate::format::batch::annotate;
use crate::format::segment::{next_entry, Frame};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const CHUNK: usize = 1 << 20;

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
    path: &Path,
    start: u64,
    mut visit: impl FnMut(u64, &[u8]) -> Result<bool>,
) -> Result<ScanEnd> {
    let mut file = File::open(path).map_err(|e| Error::io(e, path))?;
    let len = file.metadata().map_err(|e| Error::io(e, path))?.len();
    file.seek(SeekFrom::Start(start))
        .map_err(|e| Error::io(e, path))?;
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
        match next_entry(&buf[begin..end]) {
            Ok(Frame::Entry(n)) => {
                if !visit(position, &buf[begin..begin + n]).map_err(|e| e.with_path(path))? {
                    return Ok(ScanEnd {
                        position,
                        trailing: 0,
                    });
                }
                begin += n;
                position += n as u64;
            }
            Ok(Frame::Incomplete { need }) => {
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
                let target =
                    end + (CHUNK.max(need).saturating_sub(end).max(1) as u64).min(unread) as usize;
                buf.resize(target, 0);
                file.read_exact(&mut buf[end..target])
                    .map_err(|e| Error::io(e, path))?;
                unread -= (target - end) as u64;
                end = target;
            }
            Err(err) => {
                let rest = &buf[begin..end];
                if rest[..12].iter().all(|&b| b == 0) {
                    zeros_from.get_or_insert(position);
                    continue;
                }
                return Err(annotate(err, rest, position).with_path(path));
            }
        }
    }
}
