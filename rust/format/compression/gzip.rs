//! gzip (RFC 1952). Kafka reads with Java's `GZIPInputStream`, which accepts several
//! concatenated members, so we do too; it writes one member.

use super::{codec_error, read_capped};
use crate::error::Result;
use flate2::bufread::{GzDecoder, GzEncoder};
use std::io::Read;

/// The two bytes every gzip member starts with.
const MAGIC: [u8; 2] = [0x1f, 0x8b];

pub(super) fn decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.is_empty() {
        return Err(codec_error("gzip", "empty stream"));
    }
    // Member by member, as Java's GZIPInputStream reads: after a complete member, bytes that
    // do not start another member are ignored.
    let mut rest = input;
    loop {
        let mut member = GzDecoder::new(rest);
        read_capped(&mut member, limit.saturating_sub(out.len()), out, "gzip").map_err(|e| {
            if e.kind == crate::ErrorKind::LimitExceeded {
                super::limit_error(limit)
            } else {
                e
            }
        })?;
        rest = member.into_inner();
        if !rest.starts_with(&MAGIC) {
            return Ok(());
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_member_and_ignores_trailing_garbage_as_java_does() {
        let mut packed = Vec::new();
        compress(b"first ", None, &mut packed).unwrap();
        compress(b"second", None, &mut packed).unwrap();
        packed.extend_from_slice(b"not gzip");
        let mut out = Vec::new();
        decompress(&packed, usize::MAX, &mut out).unwrap();
        assert_eq!(out, b"first second");
        // The limit counts every member together.
        assert!(decompress(&packed, 8, &mut Vec::new()).is_err());
    }
}
