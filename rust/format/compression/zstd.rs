//! zstd (magic v2 only). Standard zstd frames; Kafka's writer (zstd-jni streaming) leaves out
//! the content size, so decoding streams rather than trusting a size in the header. The
//! decoder's window is capped by zstd's default limit (128 MiB), which bounds its memory.

use super::{codec_error, read_capped};
use crate::error::{Error, Result};

/// Kafka's default level.
const DEFAULT_LEVEL: i32 = 3;

pub(super) fn decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    let decoder =
        ::zstd::stream::read::Decoder::with_buffer(input).map_err(|e| codec_error("zstd", e))?;
    read_capped(decoder, limit, out, "zstd")
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
