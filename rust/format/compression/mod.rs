//! Compression codecs as Kafka stores them on disk (docs/format.md §3).
//!
//! The codec id is bits 0-2 of a batch's attributes. Each codec has its own file; this one
//! dispatches and holds what they share: the cap on decompressed bytes that keeps a
//! decompression bomb from exhausting memory.

mod gzip;
mod lz4;
mod snappy;
mod zstd;

use crate::error::{Error, ErrorKind, Result};

/// A batch's codec, as the low three bits of its attributes name it (`compression.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Uncompressed.
    None = 0,
    /// gzip (a gzip stream, as Java's `GZIPOutputStream` writes it).
    Gzip = 1,
    /// Snappy, in xerial's framed format that Kafka's producer writes.
    Snappy = 2,
    /// LZ4 frames (KIP-57: v1+ with the correct header checksum).
    Lz4 = 3,
    /// Zstandard (v2 batches only, KIP-110).
    Zstd = 4,
}

impl Compression {
    /// The codec for an attribute id (bits 0-2), or an error for 5, 6 and 7 as in Kafka.
    pub fn from_id(id: u8) -> Result<Self> {
        Ok(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            other => {
                return Err(Error::corrupt(format!(
                    "unknown compression type id {other}"
                )))
            }
        })
    }

    /// Kafka's lower-case name (`CompressionType.name`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// The codec named as in `compression.type` (`none`, `gzip`, `snappy`, `lz4`, `zstd`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "none" | "uncompressed" => Compression::None,
            "gzip" => Compression::Gzip,
            "snappy" => Compression::Snappy,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::Zstd,
            _ => return None,
        })
    }
}

/// Decompresses `input` (one batch's or wrapper's compressed records) into `out`, replacing its
/// contents. `magic` matters for lz4 only (magic 0 frames carry a wrongly computed header
/// checksum). At most `limit` bytes are produced; more is a [`ErrorKind::LimitExceeded`] error.
pub fn decompress(
    codec: Compression,
    input: &[u8],
    magic: i8,
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    match codec {
        Compression::None => {
            check_limit(input.len(), limit)?;
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => gzip::decompress(input, limit, out),
        Compression::Snappy => snappy::decompress(input, limit, out),
        Compression::Lz4 => lz4::decompress(input, magic, limit, out),
        Compression::Zstd => zstd::decompress(input, limit, out),
    }
}

/// Compresses `input` as Kafka's producer would for a batch of `magic`, appending to `out`.
/// `level` is the codec's own level; `None` takes Kafka's default.
pub fn compress(
    codec: Compression,
    input: &[u8],
    magic: i8,
    level: Option<i32>,
    out: &mut Vec<u8>,
) -> Result<()> {
    match codec {
        Compression::None => {
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => gzip::compress(input, level, out),
        Compression::Snappy => snappy::compress(input, out),
        Compression::Lz4 => lz4::compress(input, magic, out),
        Compression::Zstd => zstd::compress(input, level, out),
    }
}

fn check_limit(len: usize, limit: usize) -> Result<()> {
    if len > limit {
        return Err(limit_error(limit));
    }
    Ok(())
}

fn limit_error(limit: usize) -> Error {
    Error::new(
        ErrorKind::LimitExceeded,
        format!(
            "decompressed data exceeds the limit of {limit} bytes (raise max_decompressed_size \
             if the batch is genuine)"
        ),
    )
}

fn codec_error(codec: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::Decompression,
        format!("corrupt {codec} stream: {what}"),
    )
}

/// Appends all of `reader` to `out`, failing once more than `limit` bytes come out.
fn read_capped(
    mut reader: impl std::io::Read,
    limit: usize,
    out: &mut Vec<u8>,
    codec: &str,
) -> Result<()> {
    use std::io::Read;
    let start = out.len();
    let mut capped = (&mut reader).take((limit as u64).saturating_add(1));
    capped.read_to_end(out).map_err(|e| codec_error(codec, e))?;
    check_limit(out.len() - start, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for magic in [0i8, 1, 2] {
                let mut packed = Vec::new();
                compress(codec, &data, magic, None, &mut packed).unwrap();
                let mut out = Vec::new();
                decompress(codec, &packed, magic, usize::MAX, &mut out).unwrap();
                assert_eq!(out, data, "{codec:?} magic {magic}");
            }
        }
    }

    #[test]
    fn every_codec_honours_the_limit() {
        let data = vec![7u8; 1 << 20];
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut packed = Vec::new();
            compress(codec, &data, 2, None, &mut packed).unwrap();
            let mut out = Vec::new();
            let err = decompress(codec, &packed, 2, 1000, &mut out).unwrap_err();
            assert_eq!(err.kind, ErrorKind::LimitExceeded, "{codec:?}");
            assert!(
                out.capacity() < 1 << 20,
                "{codec:?} allocated past the limit"
            );
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let junk: Vec<u8> = (0..300u32).map(|i| (i * 37 % 256) as u8).collect();
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut out = Vec::new();
            for len in 0..junk.len() {
                let _ = decompress(codec, &junk[..len], 1, 1 << 20, &mut out);
            }
        }
    }
}
