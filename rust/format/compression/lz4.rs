//! lz4, in Kafka's frame (docs/format.md §3.3): the LZ4 frame format with independent blocks, read
//! the way Kafka's `Lz4BlockInputStream` reads it.
//!
//! Kafka's quirks, which a general-purpose frame decoder would reject or get wrong:
//! - magic v0 frames carry a header checksum computed over the magic bytes as well (KAFKA-3160),
//!   so for magic 0 the checksum byte is skipped, for v1/v2 it is verified;
//! - the content checksum is read but not verified, and anything after the first frame's end
//!   mark is ignored.
//!
//! The blocks themselves are plain LZ4 blocks, decoded by `lz4_flex`.

use super::{codec_error, limit_error};
use crate::error::Result;
use std::cell::RefCell;
use twox_hash::XxHash32;

const MAGIC: u32 = 0x184D_2204;
const FLG_BLOCK_CHECKSUM: u8 = 1 << 4;
const FLG_CONTENT_SIZE: u8 = 1 << 3;
const FLG_BLOCK_INDEPENDENT: u8 = 1 << 5;
/// Kafka's writer: version 01, independent blocks, no checksums, no content size.
const KAFKA_FLG: u8 = 0x60;
/// Kafka's writer: 64 KiB blocks.
const KAFKA_BD: u8 = 0x40;
const KAFKA_BLOCK_SIZE: usize = 64 * 1024;
const UNCOMPRESSED_BIT: u32 = 0x8000_0000;

fn err(what: impl std::fmt::Display) -> crate::error::Error {
    codec_error("lz4", what)
}

pub(super) fn decompress(input: &[u8], magic: i8, limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.len() < 6 {
        return Err(err("stream ended prematurely"));
    }
    if u32::from_le_bytes(input[0..4].try_into().unwrap()) != MAGIC {
        return Err(err("stream unsupported (invalid magic bytes)"));
    }
    let flg = input[4];
    let bd = input[5];
    if flg & 0b11 != 0 {
        return Err(err("reserved bits must be 0"));
    }
    if flg >> 6 != 1 {
        return Err(err(format_args!("version {} is unsupported", flg >> 6)));
    }
    if flg & FLG_BLOCK_INDEPENDENT == 0 {
        return Err(err("dependent block stream is unsupported"));
    }
    if bd & 0x0f != 0 || bd & 0x80 != 0 {
        return Err(err("reserved bits of the block descriptor must be 0"));
    }
    let size_id = (bd >> 4) & 0x07;
    if !(4..=7).contains(&size_id) {
        return Err(err("block size id must be between 4 and 7"));
    }
    let max_block = 1usize << (2 * size_id as usize + 8);

    let descriptor_end = if flg & FLG_CONTENT_SIZE != 0 { 14 } else { 6 };
    let hc = *input
        .get(descriptor_end)
        .ok_or_else(|| err("stream ended prematurely"))?;
    if magic > 0 {
        let expected = (XxHash32::oneshot(0, &input[4..descriptor_end]) >> 8) as u8;
        if hc != expected {
            return Err(err("stream frame descriptor corrupted"));
        }
    }
    let mut pos = descriptor_end + 1;

    loop {
        let size_bytes = input
            .get(pos..pos + 4)
            .ok_or_else(|| err("stream ended prematurely"))?;
        let raw = u32::from_le_bytes(size_bytes.try_into().unwrap());
        pos += 4;
        if raw == 0 {
            // End mark. A content checksum may follow; Kafka reads it without checking it.
            return Ok(());
        }
        let stored = raw & UNCOMPRESSED_BIT != 0;
        let size = (raw & !UNCOMPRESSED_BIT) as usize;
        if size > max_block {
            return Err(err(format_args!(
                "block size {size} exceeded max: {max_block}"
            )));
        }
        let block = input
            .get(pos..pos + size)
            .ok_or_else(|| err("stream ended prematurely"))?;
        pos += size;
        if flg & FLG_BLOCK_CHECKSUM != 0 {
            let sum = input
                .get(pos..pos + 4)
                .ok_or_else(|| err("stream ended prematurely"))?;
            pos += 4;
            if u32::from_le_bytes(sum.try_into().unwrap()) != XxHash32::oneshot(0, block) {
                return Err(err("block checksum mismatch"));
            }
        }
        let start = out.len();
        if stored {
            if start.saturating_add(size) > limit {
                return Err(limit_error(limit));
            }
            out.extend_from_slice(block);
        } else {
            let room = max_block.min(limit.saturating_sub(start));
            BLOCK.with(|cell| {
                let mut scratch = cell.borrow_mut();
                if scratch.len() < max_block {
                    scratch.resize(max_block, 0);
                }
                let result = match lz4_flex::block::decompress_into(block, &mut scratch[..room]) {
                    Ok(n) => {
                        out.extend_from_slice(&scratch[..n]);
                        Ok(())
                    }
                    // A block that does not fit below the limit but fits a full block is a bomb.
                    Err(_) if room < max_block && decodes_within(block, max_block) => {
                        Err(limit_error(limit))
                    }
                    Err(e) => Err(err(e)),
                };
                if scratch.len() > KEEP_BLOCK_BYTES {
                    *scratch = Vec::new();
                }
                result
            })?;
        }
    }
}

thread_local! {
    /// Each thread's block buffer. A block is decoded into it, then copied onto the output,
    /// rather than decoded into the output directly: `lz4_flex` writes into an initialised
    /// slice of a whole block's size, and growing the output by that much meant zeroing 64 KiB
    /// for every block whatever its size (four times the bytes of a batch of Kafka's default
    /// 16 KiB), which took more time than the decoding itself (`perf` on the JVM source's scan
    /// of an lz4 log). This buffer is zeroed once, when it grows.
    static BLOCK: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A block buffer larger than this (frames may declare blocks of up to 4 MiB; Kafka's are
/// 64 KiB) is freed after use rather than kept for the thread's life.
const KEEP_BLOCK_BYTES: usize = 1 << 20;

fn decodes_within(block: &[u8], max_block: usize) -> bool {
    let mut scratch = vec![0u8; max_block];
    lz4_flex::block::decompress_into(block, &mut scratch).is_ok()
}

/// Writes Kafka's lz4 frame. For magic 0 the header checksum is computed the broken way
/// Kafka's v0 writer did, which is what v0 readers expect.
pub(super) fn compress(input: &[u8], magic: i8, out: &mut Vec<u8>) -> Result<()> {
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.push(KAFKA_FLG);
    out.push(KAFKA_BD);
    let hashed: &[u8] = if magic == 0 {
        &[0x04, 0x22, 0x4D, 0x18, KAFKA_FLG, KAFKA_BD]
    } else {
        &[KAFKA_FLG, KAFKA_BD]
    };
    out.push((XxHash32::oneshot(0, hashed) >> 8) as u8);
    for block in input.chunks(KAFKA_BLOCK_SIZE) {
        let compressed = lz4_flex::block::compress(block);
        if compressed.len() < block.len() {
            out.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
            out.extend_from_slice(&compressed);
        } else {
            out.extend_from_slice(&(block.len() as u32 | UNCOMPRESSED_BIT).to_le_bytes());
            out.extend_from_slice(block);
        }
    }
    out.extend_from_slice(&[0; 4]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checksums_match_kafka() {
        // docs/format.md §3.3: v1/v2 frames start 04 22 4D 18 60 40 82,
        // v0 frames 04 22 4D 18 60 40 1A.
        for (magic, hc) in [(0i8, 0x1Au8), (1, 0x82), (2, 0x82)] {
            let mut out = Vec::new();
            compress(b"x", magic, &mut out).unwrap();
            assert_eq!(&out[..7], &[0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, hc]);
        }
    }

    #[test]
    fn blocks_decode_through_the_reused_buffer_as_lz4_flex_decodes_them() {
        // Blocks of repeats (long matches), of noise (stored), a short last one; then a short
        // frame after the long one, and a frame declaring 4 MiB blocks: each decodes to its
        // input, onto whatever `out` already held, and no earlier block's bytes leak in.
        let mut input = Vec::new();
        let mut x = 0x9e37_79b9u32;
        for i in 0..(3 * KAFKA_BLOCK_SIZE + 1234) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let noisy = (i / 20_000) % 2 == 1;
            input.push(if noisy { x as u8 } else { b"abcabcab"[i % 8] });
        }
        let mut frame = Vec::new();
        compress(&input, 2, &mut frame).unwrap();
        let mut out = b"kept".to_vec();
        decompress(&frame, 2, usize::MAX, &mut out).unwrap();
        assert!(out[4..] == input[..] && &out[..4] == b"kept");
        let mut short = Vec::new();
        compress(b"abcabcabcabcabcabcabc!", 2, &mut short).unwrap();
        out.clear();
        decompress(&short, 2, usize::MAX, &mut out).unwrap();
        assert_eq!(out, b"abcabcabcabcabcabcabc!");
        // Block size id 7 (4 MiB blocks), one block of the whole input: its header checksum
        // recomputed.
        let mut big = frame[..7].to_vec();
        big[5] = 0x70;
        big[6] = (XxHash32::oneshot(0, &big[4..6]) >> 8) as u8;
        let block = lz4_flex::block::compress(&input);
        big.extend_from_slice(&(block.len() as u32).to_le_bytes());
        big.extend_from_slice(&block);
        big.extend_from_slice(&[0; 4]);
        out.clear();
        decompress(&big, 2, usize::MAX, &mut out).unwrap();
        assert!(out == input);
        BLOCK.with(|b| assert!(b.borrow().len() <= KEEP_BLOCK_BYTES));
        // Past the limit, whichever way the block is stored.
        out.clear();
        assert!(decompress(&frame, 2, input.len() - 1, &mut out).is_err());
        out.clear();
        assert!(decompress(&big, 2, input.len() - 1, &mut out).is_err());
    }

    #[test]
    fn v0_skips_the_header_checksum_and_v2_checks_it() {
        let mut frame = Vec::new();
        compress(b"payload", 2, &mut frame).unwrap();
        frame[6] ^= 0xff;
        let mut out = Vec::new();
        assert!(decompress(&frame, 2, usize::MAX, &mut out).is_err());
        out.clear();
        decompress(&frame, 0, usize::MAX, &mut out).unwrap();
        assert_eq!(out, b"payload");
    }
}
