//! gzip (RFC 1952). Kafka reads with Java's `GZIPInputStream`, which accepts several
//! concatenated members, so we do too; it writes one member.

use super::{codec_error, read_capped};
use crate::error::Result;
use flate2::bufread::{GzEncoder, MultiGzDecoder};
use std::io::Read;

pub(super) fn decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.is_empty() {
        return Err(codec_error("gzip", "empty stream"));
    }
    read_capped(MultiGzDecoder::new(input), limit, out, "gzip")
}

pub(super) fn compress(input: &[u8], level: Option<i32>, out: &mut Vec<u8>) -> Result<()> {
    // Kafka's default (-1) is zlib's default, 6.
    let level = match level {
        None | Some(-1) => flate2::Compression::default(),
        Some(l @ 0..=9) => flate2::Compression::new(l as u32),
        Some(l) => {
            return Err(crate::error::Error::invalid_argument(format!(
                "gzip level must be 1..9 or -1, not {l}"
            )))
        }
    };
    GzEncoder::new(input, level)
        .read_to_end(out)
        .map_err(|e| codec_error("gzip", e))?;
    Ok(())
}
