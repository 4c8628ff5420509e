//! snappy, in the two shapes found on disk (docs/format.md §3.2):
//! - snappy-java's stream ("xerial" framing): a 16-byte header starting with the magic
//!   `82 'SNAPPY' 00`, then chunks of `int32 BE length` + one raw snappy block. Kafka's Java
//!   clients write this. A chunk length equal to the magic's first four bytes starts another
//!   concatenated stream's header.
//! - one raw snappy block, as librdkafka writes. Kafka's reader falls back to it whenever the
//!   input is shorter than 16 bytes or does not start with the magic.

use super::{check_limit, codec_error, limit_error};
use crate::error::Result;

const MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const HEADER_LEN: usize = 16;
/// snappy-java writes blocks of at most 32 KiB of input.
const BLOCK_SIZE: usize = 32 * 1024;

pub(super) fn decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.len() < HEADER_LEN || input[..8] != MAGIC {
        return raw_block(input, limit, out);
    }
    let mut pos = HEADER_LEN;
    while pos < input.len() {
        let Some(len_bytes) = input.get(pos..pos + 4) else {
            // snappy-java treats a chunk-length field cut short as the end of the stream.
            break;
        };
        let len = u32::from_be_bytes(len_bytes.try_into().unwrap());
        pos += 4;
        if len == u32::from_be_bytes([0x82, b'S', b'N', b'A']) {
            // Header of a concatenated stream: the rest of its 16 bytes follow.
            pos += HEADER_LEN - 4;
            continue;
        }
        let len = len as usize;
        if len > i32::MAX as usize {
            return Err(codec_error("snappy", "negative chunk size"));
        }
        let chunk = input
            .get(pos..pos + len)
            .ok_or_else(|| codec_error("snappy", format!("chunk of {len} bytes is cut short")))?;
        raw_block(chunk, limit, out)?;
        pos += len;
    }
    Ok(())
}

/// Appends the decompression of one raw snappy block to `out`.
fn raw_block(block: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    let len = snap::raw::decompress_len(block).map_err(|e| codec_error("snappy", e))?;
    if out.len().saturating_add(len) > limit {
        return Err(limit_error(limit));
    }
    let start = out.len();
    out.resize(start + len, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| codec_error("snappy", e))?;
    out.truncate(start + written);
    check_limit(out.len(), limit)
}

/// Writes snappy-java's stream format, as Kafka's producer does.
pub(super) fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&1i32.to_be_bytes()); // version
    out.extend_from_slice(&1i32.to_be_bytes()); // minimum compatible version
    let mut encoder = snap::raw::Encoder::new();
    for block in input.chunks(BLOCK_SIZE) {
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let start = out.len();
        out.resize(start + snap::raw::max_compress_len(block.len()), 0);
        let n = encoder
            .compress(block, &mut out[start..])
            .map_err(|e| codec_error("snappy", e))?;
        out.truncate(start + n);
        out[len_at..len_at + 4].copy_from_slice(&(n as u32).to_be_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_raw_snappy_as_librdkafka_writes_it() {
        let data = b"hello hello hello hello snappy".repeat(10);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        let mut out = Vec::new();
        decompress(&raw, usize::MAX, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn reads_concatenated_xerial_streams() {
        let mut packed = Vec::new();
        compress(b"first ", &mut packed).unwrap();
        compress(b"second", &mut packed).unwrap();
        let mut out = Vec::new();
        decompress(&packed, usize::MAX, &mut out).unwrap();
        assert_eq!(out, b"first second");
    }
}
