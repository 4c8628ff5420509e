//! The chunk index of Aiven's plugin: the segment is cut into chunks of `originalChunkSize`
//! bytes (the last one shorter), each transformed (compressed, encrypted) on its own and the
//! results concatenated into the `.log` object. The index says where each chunk's transformed
//! bytes lie:
//! - `fixed`: every transformed chunk has `transformedChunkSize` bytes but the last, which has
//!   `finalTransformedChunkSize` (no compression: sizes only change by encryption's fixed
//!   overhead);
//! - `variable`: one size per chunk, stored as `transformedChunks`, the base64 of a
//!   zstd frame of the binary codec below.
//!
//! Binary codec (big-endian): `i32 count`; for `count == 1`, one `i32` value; for
//! `count >= 2`: `i32 base` (the smallest of all values but the last), `i8 width` (1 to 4
//! bytes), `count - 1` values minus `base` in `width` bytes each, then the last value as a full
//! `i32`.

use crate::error::{Error, ErrorKind, Result};
use std::ops::Range;

/// Cap on the decoded binary codec, as the plugin caps it (10 MiB).
const MAX_CODEC_BYTES: usize = 10 << 20;

/// One chunk: its bytes in the original segment and in the `.log` object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The chunk's number, from 0.
    pub id: usize,
    /// Its bytes in the segment as the broker wrote it.
    pub original: Range<u64>,
    /// Its bytes in the uploaded `.log` object (compressed and/or encrypted).
    pub transformed: Range<u64>,
}

/// Where transformed chunks lie.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Transformed {
    /// `count` chunks of `size` bytes but the last, of `last` (computed, never materialised: a
    /// manifest cannot make the reader allocate per chunk).
    Fixed { count: usize, size: u64, last: u64 },
    /// Start of each chunk's transformed bytes, and the total at the end (`count + 1` values).
    Starts(Vec<u64>),
}

/// Where each chunk of a segment lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkIndex {
    /// Bytes of each chunk of the original segment (the last may be shorter).
    pub original_chunk_size: u64,
    /// Bytes of the original segment.
    pub original_file_size: u64,
    transformed: Transformed,
    /// `fixed` or `variable`: which form of chunk index the manifest used, for messages.
    pub kind: &'static str,
}

impl ChunkIndex {
    fn check_sizes(original_chunk_size: i64, original_file_size: i64) -> Result<(u64, u64)> {
        if original_chunk_size <= 0 || original_chunk_size > i32::MAX as i64 {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                    "chunk index: originalChunkSize {original_chunk_size} is not a positive int"
                ),
            ));
        }
        if !(0..=i32::MAX as i64).contains(&original_file_size) {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                    "chunk index: originalFileSize {original_file_size} is not a non-negative int"
                ),
            ));
        }
        Ok((original_chunk_size as u64, original_file_size as u64))
    }

    fn original_count(original_chunk_size: u64, original_file_size: u64) -> usize {
        original_file_size.div_ceil(original_chunk_size) as usize
    }

    /// A `fixed` index.
    pub fn fixed(
        original_chunk_size: i64,
        original_file_size: i64,
        transformed_chunk_size: i64,
        final_transformed_chunk_size: i64,
    ) -> Result<Self> {
        let (chunk, file) = Self::check_sizes(original_chunk_size, original_file_size)?;
        if transformed_chunk_size < 0 || final_transformed_chunk_size < 0 {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                "chunk index: a transformed chunk size is negative",
            ));
        }
        let count = Self::original_count(chunk, file);
        Ok(ChunkIndex {
            original_chunk_size: chunk,
            original_file_size: file,
            transformed: Transformed::Fixed {
                count,
                size: transformed_chunk_size as u64,
                last: final_transformed_chunk_size as u64,
            },
            kind: "fixed",
        })
    }

    /// A `variable` index from the decoded sizes.
    pub fn variable(
        original_chunk_size: i64,
        original_file_size: i64,
        sizes: &[i32],
    ) -> Result<Self> {
        let (chunk, file) = Self::check_sizes(original_chunk_size, original_file_size)?;
        let count = Self::original_count(chunk, file);
        if sizes.len() != count {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                "chunk index: {} transformed chunk sizes for {count} chunks of {chunk} bytes in \
                 {file} bytes",
                sizes.len()
            ),
            ));
        }
        let mut starts = Vec::with_capacity(count + 1);
        let mut at = 0u64;
        for &s in sizes {
            if s < 0 {
                return Err(Error::new(
                    ErrorKind::TieredStorage,
                    "chunk index: a transformed chunk size is negative",
                ));
            }
            starts.push(at);
            at += s as u64;
        }
        starts.push(at);
        Ok(ChunkIndex {
            original_chunk_size: chunk,
            original_file_size: file,
            transformed: Transformed::Starts(starts),
            kind: "variable",
        })
    }

    /// Chunks in the segment.
    pub fn count(&self) -> usize {
        match &self.transformed {
            Transformed::Fixed { count, .. } => *count,
            Transformed::Starts(starts) => starts.len() - 1,
        }
    }

    /// Bytes of the `.log` object the index describes.
    pub fn transformed_size(&self) -> u64 {
        match &self.transformed {
            Transformed::Fixed { count: 0, .. } => 0,
            Transformed::Fixed { count, size, last } => (*count as u64 - 1) * size + last,
            Transformed::Starts(starts) => *starts.last().unwrap_or(&0),
        }
    }

    /// Chunk `id`'s byte ranges; `None` past the last chunk.
    pub fn chunk(&self, id: usize) -> Option<Chunk> {
        if id >= self.count() {
            return None;
        }
        let start = id as u64 * self.original_chunk_size;
        Some(Chunk {
            id,
            original: start..(start + self.original_chunk_size).min(self.original_file_size),
            transformed: match &self.transformed {
                Transformed::Fixed { count, size, last } => {
                    let start = id as u64 * size;
                    start..start + if id + 1 == *count { *last } else { *size }
                }
                Transformed::Starts(starts) => starts[id]..starts[id + 1],
            },
        })
    }

    /// The chunk holding original byte `position`.
    pub fn chunk_at(&self, position: u64) -> Option<Chunk> {
        if position >= self.original_file_size {
            return None;
        }
        self.chunk((position / self.original_chunk_size) as usize)
    }

    /// Where chunks start in the original segment: the split points a reader may cut at.
    pub fn boundaries(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.count()).map(|i| i as u64 * self.original_chunk_size)
    }
}

/// Decodes the binary codec of variable transformed chunk sizes.
pub fn decode_chunk_sizes(bytes: &[u8]) -> Result<Vec<i32>> {
    let bad = |what: &str| {
        Error::new(
            ErrorKind::TieredStorage,
            format!("chunk index: transformedChunks {what}"),
        )
    };
    let int = |at: usize| -> Result<i32> {
        bytes
            .get(at..at + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| bad("is truncated"))
    };
    let count = int(0)?;
    match count {
        c if c < 0 => Err(bad("has a negative count")),
        0 => Ok(Vec::new()),
        1 => Ok(vec![int(4)?]),
        _ => {
            let count = count as usize;
            let base = int(4)?;
            let width = *bytes.get(8).ok_or_else(|| bad("is truncated"))? as usize;
            if !(1..=4).contains(&width) {
                return Err(bad(&format!("has {width} bytes per value")));
            }
            let body = (count - 1)
                .checked_mul(width)
                .filter(|n| 9 + n + 4 <= bytes.len())
                .ok_or_else(|| bad("is truncated"))?;
            let mut out = Vec::with_capacity(count);
            for v in bytes[9..9 + body].chunks_exact(width) {
                let mut full = [0u8; 4];
                full[4 - width..].copy_from_slice(v);
                out.push(i32::from_be_bytes(full).wrapping_add(base));
            }
            out.push(int(9 + body)?);
            Ok(out)
        }
    }
}

/// `transformedChunks` as the manifest holds it: base64 of a zstd frame of the codec.
pub fn decode_transformed_chunks(text: &str) -> Result<Vec<i32>> {
    use base64::Engine;
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|_| {
            Error::new(
                ErrorKind::TieredStorage,
                "chunk index: transformedChunks is not base64",
            )
        })?;
    let mut out = Vec::new();
    let mut decoder = zstd::stream::read::Decoder::new(&compressed[..]).map_err(|_| {
        Error::new(
            ErrorKind::TieredStorage,
            "chunk index: transformedChunks is not a zstd frame",
        )
    })?;
    let read = std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut decoder, MAX_CODEC_BYTES as u64 + 1),
        &mut out,
    );
    if read.is_err() {
        return Err(Error::new(
            ErrorKind::TieredStorage,
            "chunk index: transformedChunks is not a valid zstd frame",
        ));
    }
    if out.len() > MAX_CODEC_BYTES {
        return Err(Error::new(
            ErrorKind::TieredStorage,
            "chunk index: transformedChunks is too large",
        ));
    }
    decode_chunk_sizes(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(values: &[i32]) -> Vec<u8> {
        let mut out = (values.len() as i32).to_be_bytes().to_vec();
        match values {
            [] => {}
            [v] => out.extend(v.to_be_bytes()),
            [init @ .., last] => {
                let base = *init.iter().min().unwrap();
                let width = init
                    .iter()
                    .map(|v| match (v - base) as u32 {
                        0..=0xFF => 1,
                        0x100..=0xFFFF => 2,
                        0x1_0000..=0xFF_FFFF => 3,
                        _ => 4,
                    })
                    .max()
                    .unwrap();
                out.extend(base.to_be_bytes());
                out.push(width as u8);
                for v in init {
                    out.extend(&((v - base) as u32).to_be_bytes()[4 - width..]);
                }
                out.extend(last.to_be_bytes());
            }
        }
        out
    }

    #[test]
    fn codec_round_trips() {
        for values in [
            vec![],
            vec![7],
            vec![100, 90],
            vec![100, 356, 5],
            vec![70000, 10, 1 << 20, 3],
            vec![0, i32::MAX, 1],
        ] {
            assert_eq!(decode_chunk_sizes(&encode(&values)).unwrap(), values);
        }
        // Truncated and malformed inputs are errors, never panics.
        let good = encode(&[100, 356, 5]);
        for n in 0..good.len() {
            assert!(decode_chunk_sizes(&good[..n]).is_err());
        }
        let mut bad = good.clone();
        bad[8] = 9;
        assert!(decode_chunk_sizes(&bad).is_err());
        assert!(decode_chunk_sizes(&[0xFF, 0, 0, 0]).is_err());
    }

    #[test]
    fn base64_zstd_wrapping() {
        use base64::Engine;
        let values = vec![1100, 1050, 1200, 77];
        let frame = zstd::bulk::compress(&encode(&values), 3).unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(frame);
        assert_eq!(decode_transformed_chunks(&text).unwrap(), values);
        assert!(decode_transformed_chunks("not base64!").is_err());
        assert!(decode_transformed_chunks("AAAA").is_err());
    }

    #[test]
    fn fixed_and_variable_layouts() {
        let fixed = ChunkIndex::fixed(100, 250, 128, 78).unwrap();
        assert_eq!(fixed.count(), 3);
        assert_eq!(fixed.transformed_size(), 128 * 2 + 78);
        assert_eq!(
            fixed.chunk_at(120).unwrap(),
            Chunk {
                id: 1,
                original: 100..200,
                transformed: 128..256
            }
        );
        assert_eq!(fixed.chunk(2).unwrap().original, 200..250);
        assert_eq!(fixed.chunk_at(250), None);
        assert_eq!(fixed.boundaries().collect::<Vec<_>>(), vec![0, 100, 200]);
        let empty = ChunkIndex::fixed(100, 0, 100, 0).unwrap();
        assert_eq!((empty.count(), empty.transformed_size()), (0, 0));

        let var = ChunkIndex::variable(100, 250, &[40, 60, 10]).unwrap();
        assert_eq!(var.chunk(1).unwrap().transformed, 40..100);
        assert_eq!(var.transformed_size(), 110);
        assert!(ChunkIndex::variable(100, 250, &[40, 60]).is_err());
        assert!(ChunkIndex::variable(100, 250, &[40, -1, 3]).is_err());
        assert!(ChunkIndex::fixed(0, 250, 1, 1).is_err());
        // A hostile manifest's chunk count costs nothing until chunks are read.
        let many = ChunkIndex::fixed(1, i32::MAX as i64, 2, 3).unwrap();
        assert_eq!(many.count(), i32::MAX as usize);
        assert_eq!(many.chunk(5).unwrap().transformed, 10..12);
        assert_eq!(many.transformed_size(), (i32::MAX as u64 - 1) * 2 + 3);
        assert!(ChunkIndex::fixed(10, -1, 1, 1).is_err());
    }
}
