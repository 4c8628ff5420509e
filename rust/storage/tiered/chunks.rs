//! A tiered segment's `.log` read through its chunk index: the chunks that cover a range
//! fetched (several adjacent ones in one read when a range is announced), decrypted and
//! decompressed, and the last few kept.
use crate::error::{Error, ErrorKind, Result};
use crate::storage::{read_range, Object};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::keys::decrypt;
use super::Segment;

/// Decoded chunks kept (shared by every open `.log` of a storage: planning's seeks and scans
/// and the read after them fetch a chunk once).
pub(super) const CACHED_CHUNKS: usize = 8;
/// Bytes of decoded chunks kept, beyond those of the read in progress.
pub(super) const CACHE_BYTES: usize = 64 << 20;
/// Segment bytes fetched and decoded in one read when a range was announced.
pub(super) const READ_AHEAD: u64 = 8 << 20;
/// The largest chunk read (the plugin's chunks are a few MiB): a manifest claiming more is
/// refused rather than allocated.
pub(super) const MAX_CHUNK: u64 = 256 << 20;

/// Decoded chunks, most recent last.
#[derive(Clone, Default)]
pub(super) struct ChunkCache(Arc<Mutex<VecDeque<CachedChunk>>>);

/// A decoded chunk: its `.log`, its id, its bytes.
pub(super) type CachedChunk = (PathBuf, usize, Arc<Vec<u8>>);

impl ChunkCache {
    fn get(&self, log: &Path, id: usize) -> Option<Arc<Vec<u8>>> {
        let c = self.0.lock().ok()?;
        c.iter()
            .find(|(p, i, _)| *i == id && p == log)
            .map(|(_, _, b)| b.clone())
    }

    /// Keeps a chunk; at least `keep` (the chunks of the read in progress) stay.
    fn put(&self, log: &Path, id: usize, bytes: Arc<Vec<u8>>, keep: usize) {
        if let Ok(mut c) = self.0.lock() {
            let mut total: usize = c.iter().map(|(_, _, b)| b.len()).sum::<usize>() + bytes.len();
            while c.len() >= keep.max(1)
                && (c.len() >= CACHED_CHUNKS.max(keep) || total > CACHE_BYTES)
            {
                if let Some((_, _, old)) = c.pop_front() {
                    total -= old.len();
                }
            }
            c.push_back((log.to_path_buf(), id, bytes));
        }
    }
}

/// A segment's original bytes, read chunk by chunk from its `.log` object.
pub(super) struct TieredLog {
    pub(super) segment: Arc<Segment>,
    /// Bytes shown (the window).
    pub(super) len: u64,
    pub(super) object: Box<dyn Object>,
    /// Recently decoded chunks, by id.
    pub(super) cache: ChunkCache,
    /// The range announced with `will_read`.
    pub(super) ahead: Option<std::ops::Range<u64>>,
    /// Bytes read in order up to `next_at`: the read-ahead grows with it, so that a read that
    /// stops early (an offset or timestamp bound) fetches little more than it used.
    pub(super) streak: u64,
    pub(super) next_at: u64,
}

impl TieredLog {
    /// Chunk `id`, fetched with the chunks after it up to `need_end` (the end of the read
    /// asked for) and, inside an announced range, as far again as has been read in order.
    fn chunk(&mut self, id: usize, need_end: u64) -> Result<Arc<Vec<u8>>> {
        if let Some(c) = self.cache.get(&self.segment.log, id) {
            return Ok(c);
        }
        let index = &self.segment.manifest.chunk_index;
        let first = index
            .chunk(id)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "chunk past the index"))?;
        // Adjacent chunks of an announced range come in the same read.
        let mut last = first.clone();
        if let Some(ahead) = &self.ahead {
            if ahead.contains(&first.original.start) {
                let grown = first.original.start + self.streak.min(READ_AHEAD);
                let limit = ahead.end.min(need_end.max(grown));
                while let Some(next) = index.chunk(last.id + 1) {
                    if next.original.start >= limit
                        || next.original.end - first.original.start > READ_AHEAD
                    {
                        break;
                    }
                    last = next;
                }
            }
        }
        let range = first.transformed.start..last.transformed.end;
        let bytes = read_range(self.object.as_mut(), range.clone())?;
        if bytes.len() as u64 != range.end - range.start {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                    "chunks {}..={} should be at bytes {}..{} of the object, which has {}",
                    first.id,
                    last.id,
                    range.start,
                    range.end,
                    self.object.len()
                ),
            )
            .with_path(&self.segment.log));
        }
        let mut wanted = None;
        for cid in first.id..=last.id {
            let c = index.chunk(cid).unwrap_or(first.clone());
            let raw = &bytes[(c.transformed.start - range.start) as usize
                ..(c.transformed.end - range.start) as usize];
            let decoded = Arc::new(self.detransform(&c, raw)?);
            if cid == id {
                wanted = Some(decoded.clone());
            }
            self.cache
                .put(&self.segment.log, cid, decoded, last.id - first.id + 1);
        }
        wanted.ok_or_else(|| Error::new(ErrorKind::Internal, "chunk not decoded"))
    }

    fn detransform(&self, c: &crate::format::tiered::Chunk, raw: &[u8]) -> Result<Vec<u8>> {
        let whose = |what: String| {
            format!(
                "chunk {} (object bytes {}..{}, segment bytes {}..{}): {what}",
                c.id, c.transformed.start, c.transformed.end, c.original.start, c.original.end
            )
        };
        let plain;
        let data: &[u8] = match &self.segment.cipher {
            None => raw,
            Some((cipher, aad)) => {
                plain = decrypt(cipher, aad, raw).map_err(|e| {
                    Error::new(ErrorKind::Decryption, whose(e))
                        .with_path(&self.segment.log)
                        .at(c.original.start)
                })?;
                &plain
            }
        };
        let want = (c.original.end - c.original.start) as usize;
        let out = if self.segment.manifest.compression {
            zstd::bulk::decompress(data, want).map_err(|e| {
                Error::new(ErrorKind::Decompression, whose(format!("zstd: {e}")))
                    .with_path(&self.segment.log)
                    .at(c.original.start)
            })?
        } else {
            data.to_vec()
        };
        if out.len() != want {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                whose(format!(
                    "decodes to {} bytes, the chunk index says {want}",
                    out.len()
                )),
            )
            .with_path(&self.segment.log)
            .at(c.original.start));
        }
        Ok(out)
    }
}

impl Object for TieredLog {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let end = offset.saturating_add(len as u64).min(self.len);
        if offset != self.next_at {
            self.streak = 0;
        }
        let mut at = offset;
        while at < end {
            let Some(c) = self.segment.manifest.chunk_index.chunk_at(at) else {
                break;
            };
            let bytes = self.chunk(c.id, end)?;
            let from = (at - c.original.start) as usize;
            let to = ((end.min(c.original.end)) - c.original.start) as usize;
            out.extend_from_slice(&bytes[from..to]);
            at += (to - from) as u64;
        }
        self.streak += at - offset.min(at);
        self.next_at = at;
        Ok((at - offset.min(at)) as usize)
    }

    fn will_read(&mut self, range: std::ops::Range<u64>) {
        self.ahead = Some(range);
    }
}
