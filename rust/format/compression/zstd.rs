//! zstd (magic v2 only). Standard zstd frames; Kafka's writer (zstd-jni streaming) leaves out
//! the content size, so decoding streams rather than trusting a size in the header. The
//! decoder's window is capped by zstd's default limit (128 MiB), which bounds its memory.
//!
//! Each thread keeps one decompression context: creating one per batch cost more than a tenth
//! of decoding a 1000-record batch (issue 18). The output is written straight into the spare
//! capacity of `out`, grown as the stream asks, never past the limit.

use super::{codec_error, limit_error, read_capped};
use crate::error::{Error, Result};
use ::zstd::zstd_safe::{self, DCtx, InBuffer, OutBuffer, ResetDirective};
use std::cell::RefCell;

/// Kafka's default level.
const DEFAULT_LEVEL: i32 = 3;
/// A context holding more than this (its window buffer sized by the last frame) is dropped
/// after use. Kafka's producers write windows of a few MiB.
const KEEP_CONTEXT_BYTES: usize = 16 << 20;
/// The first output reserved for a stream, in multiples of its input; doubled as needed.
const FIRST_GUESS_RATIO: usize = 4;

thread_local! {
    static DCTX: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

pub(super) fn decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    DCTX.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            *cell = DCtx::try_create();
        }
        match cell.as_mut() {
            Some(dctx) => {
                let result = stream(dctx, input, limit, out);
                if dctx.sizeof() > KEEP_CONTEXT_BYTES {
                    // A frame with a large window (up to 128 MiB) left its buffers in the
                    // context: free them rather than keep them for the thread's life.
                    *cell = None;
                }
                result
            }
            None => {
                // No context (out of memory): the reader that makes its own.
                let decoder = ::zstd::stream::read::Decoder::with_buffer(input)
                    .map_err(|e| codec_error("zstd", e))?;
                read_capped(decoder, limit, out, "zstd")
            }
        }
    })
}

fn zstd_error(code: zstd_safe::ErrorCode) -> Error {
    codec_error("zstd", zstd_safe::get_error_name(code))
}

/// Decodes every frame of `input` onto `out`, as zstd-jni's input stream reads them one after
/// another; fails on a frame cut short, on bytes that are not a frame, and past `limit`.
fn stream(dctx: &mut DCtx<'static>, input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    dctx.reset(ResetDirective::SessionOnly)
        .map_err(zstd_error)?;
    let start = out.len();
    let mut src = InBuffer::around(input);
    loop {
        let produced = out.len() - start;
        if out.len() == out.capacity() {
            // One byte past the limit is room enough to learn the stream goes past it.
            let allowed = limit.saturating_add(1) - produced;
            if allowed == 0 {
                return Err(limit_error(limit));
            }
            let guess = if produced == 0 {
                input.len().saturating_mul(FIRST_GUESS_RATIO)
            } else {
                produced
            };
            out.reserve_exact(guess.max(64 << 10).min(allowed));
        }
        let (hint, full) = {
            let pos = out.len();
            let mut dst = OutBuffer::around_pos(out, pos);
            let hint = dctx
                .decompress_stream(&mut dst, &mut src)
                .map_err(zstd_error)?;
            (hint, dst.pos() == dst.capacity())
        };
        if out.len() - start > limit {
            return Err(limit_error(limit));
        }
        if src.pos() == input.len() {
            if hint == 0 {
                return Ok(());
            }
            if !full {
                // All input taken, room left, and the frame not done: it was cut short.
                return Err(codec_error("zstd", "incomplete frame"));
            }
        }
    }
}

pub(super) fn compress(input: &[u8], level: Option<i32>, out: &mut Vec<u8>) -> Result<()> {
    let level = level.unwrap_or(DEFAULT_LEVEL);
    if !::zstd::compression_level_range().contains(&level) {
        return Err(Error::invalid_argument(format!(
            "zstd level {level} is out of range"
        )));
    }
    // Streaming, as zstd-jni writes it: no content size in the frame header.
    let mut encoder = ::zstd::stream::write::Encoder::new(std::mem::take(out), level)
        .map_err(|e| codec_error("zstd", e))?;
    encoder
        .include_contentsize(false)
        .map_err(|e| codec_error("zstd", e))?;
    std::io::Write::write_all(&mut encoder, input).map_err(|e| codec_error("zstd", e))?;
    *out = encoder.finish().map_err(|e| codec_error("zstd", e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        compress(data, None, &mut out).unwrap();
        out
    }

    #[test]
    fn frames_in_a_row_cut_short_and_junk_behind() {
        let data: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i % 113).to_le_bytes())
            .collect();
        let one = packed(&data);
        let mut two = one.clone();
        two.extend_from_slice(&packed(b"tail"));
        let mut out = Vec::new();
        decompress(&two, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), data.len() + 4);
        assert_eq!(&out[data.len()..], b"tail");

        for cut in [1, 7, one.len() / 2] {
            let err = decompress(&one[..one.len() - cut], usize::MAX, &mut out).unwrap_err();
            assert_eq!(err.kind, crate::ErrorKind::Decompression, "cut {cut}");
        }
        let mut junk = one.clone();
        junk.extend_from_slice(b"not a frame");
        assert!(decompress(&junk, usize::MAX, &mut out).is_err());
        assert!(decompress(b"", usize::MAX, &mut out).is_err());

        // The limit, exactly: the whole output is allowed, one byte less is not.
        out.clear();
        decompress(&one, data.len(), &mut out).unwrap();
        assert!(out == data);
        out.clear();
        let err = decompress(&one, data.len() - 1, &mut out).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::LimitExceeded);
        // A frame with a 64 MiB window: decoded, and its context not kept.
        let big: Vec<u8> = (0..(40u32 << 20) / 4)
            .flat_map(|i| (i % 7919).to_le_bytes())
            .collect();
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::WindowLog(26))
            .unwrap();
        cctx.set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
            .unwrap();
        let mut packed_big = Vec::with_capacity(big.len());
        cctx.compress2(&mut packed_big, &big).unwrap();
        out.clear();
        decompress(&packed_big, usize::MAX, &mut out).unwrap();
        assert!(out == big);
        assert!(DCTX.with(|c| c.borrow().is_none()));

        // The context is reused after an error.
        out.clear();
        decompress(&one, usize::MAX, &mut out).unwrap();
        assert!(out == data);
        assert!(
            DCTX.with(|c| c.borrow().is_some()),
            "a small window's context is kept"
        );
    }
}
