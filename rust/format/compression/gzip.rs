//! gzip (RFC 1952). Kafka reads with Java's `GZIPInputStream`, which accepts several
//! concatenated members, so we do too; it writes one member.
//!
//! A batch's records are one whole buffer, so the fast path inflates a member in one call with
//! libdeflate into an output sized from the member's trailer (ISIZE, the size mod 2^32). That
//! size is only a guess: it is trusted no further than the limit and than what deflate's
//! greatest ratio allows for the bytes there are, so a hostile trailer cannot make a large
//! allocation. Whatever the fast path does not finish cleanly (a wrong guess, several members,
//! corrupt data) is decoded again by the streaming zlib path, which decides the result and the
//! error exactly as before.

use super::{codec_error, read_capped};
use crate::error::Result;
use flate2::bufread::{GzDecoder, GzEncoder};
use std::cell::RefCell;
use std::io::Read;
use std::ptr::NonNull;

/// The two bytes every gzip member starts with.
const MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The header flag saying a CRC-16 of the header follows it.
const FHCRC: u8 = 0x02;
/// The smallest member: a 10-byte header, an empty deflate block (2 bytes) and the 8-byte
/// trailer.
const MIN_MEMBER: usize = 20;
/// Deflate expands at most 258 bytes per length/distance pair, which costs at least 2 bits: an
/// input of n bytes inflates to less than 1032 n bytes (plus a little for the last block).
const MAX_RATIO: usize = 1032;

pub(super) fn decompress(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
    if input.is_empty() {
        return Err(codec_error("gzip", "empty stream"));
    }
    let mut rest = input;
    while let Some(used) = inflate_member(rest, limit, out) {
        rest = &rest[used..];
        if !rest.starts_with(&MAGIC) {
            return Ok(());
        }
    }
    // Member by member, as Java's GZIPInputStream reads: after a complete member, bytes that
    // do not start another member are ignored.
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

/// Inflates the member at the start of `input` onto `out` with libdeflate when the size in the
/// last four bytes of `input` is exactly its output (the usual case: one member, the whole
/// buffer). Returns the bytes of `input` it used, or `None` (with `out` as it was) for the
/// streaming path to handle.
fn inflate_member(input: &[u8], limit: usize, out: &mut Vec<u8>) -> Option<usize> {
    let trailer: [u8; 4] = input.get(input.len().checked_sub(4)?..)?.try_into().ok()?;
    // libdeflate skips a header CRC (FHCRC) without checking it; Java checks it, and so does
    // the streaming path, so such a member goes there.
    if input.len() < MIN_MEMBER || input[3] & FHCRC != 0 {
        return None;
    }
    let guess = u32::from_le_bytes(trailer) as usize;
    let room = limit.saturating_sub(out.len());
    if guess > room || guess > input.len().saturating_mul(MAX_RATIO).saturating_add(1024) {
        return None;
    }
    let start = out.len();
    out.resize(start + guess, 0);
    let done = INFLATER.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            *cell = Inflater::new();
        }
        cell.as_mut()?.gzip_member(input, &mut out[start..])
    });
    match done {
        Some((used, n)) if n == guess => Some(used),
        _ => {
            out.truncate(start);
            None
        }
    }
}

thread_local! {
    /// One libdeflate decompressor per thread (it holds ~10 KB of tables, set up per call).
    static INFLATER: RefCell<Option<Inflater>> = const { RefCell::new(None) };
}

/// An owned libdeflate decompressor.
struct Inflater(NonNull<libdeflate_sys::libdeflate_decompressor>);

impl Inflater {
    fn new() -> Option<Self> {
        // SAFETY: no preconditions; a null return (out of memory) is turned into None.
        NonNull::new(unsafe { libdeflate_sys::libdeflate_alloc_decompressor() }).map(Inflater)
    }

    /// Inflates the gzip member at the start of `input` into `out`, checking its CRC-32 and
    /// ISIZE. Returns (bytes of `input` used, bytes written), or None for bad data or an `out`
    /// too small.
    fn gzip_member(&mut self, input: &[u8], out: &mut [u8]) -> Option<(usize, usize)> {
        let (mut used, mut written) = (0usize, 0usize);
        // SAFETY: the decompressor is live and owned by `self` (not shared: `&mut self`, and
        // Inflater is neither Send nor Sync). libdeflate reads at most `input.len()` bytes from
        // `input` and writes at most `out.len()` bytes to `out`, both valid for the call, and
        // writes the two counts through pointers to locals.
        let result = unsafe {
            libdeflate_sys::libdeflate_gzip_decompress_ex(
                self.0.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
                &mut used,
                &mut written,
            )
        };
        (result == libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS
            && used <= input.len()
            && written <= out.len())
        .then_some((used, written))
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_decompressor and freed once, here.
        unsafe { libdeflate_sys::libdeflate_free_decompressor(self.0.as_ptr()) }
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

    #[test]
    fn the_fast_path_reads_one_member_and_hands_the_rest_on() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        let mut one = Vec::new();
        compress(&data, None, &mut one).unwrap();
        let mut out = vec![9u8; 3];
        out.clear();
        assert_eq!(inflate_member(&one, usize::MAX, &mut out), Some(one.len()));
        assert_eq!(out, data);

        // Two identical members: the last four bytes are the size of each, and both are read.
        let mut two = one.clone();
        two.extend_from_slice(&one);
        let mut out = Vec::new();
        decompress(&two, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 2 * data.len());

        // A trailer claiming more than the limit, or more than deflate can make of the input,
        // is not believed: no allocation of that size, and the streaming path decides.
        let mut lying = one.clone();
        let n = lying.len();
        lying[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut out = Vec::new();
        assert_eq!(inflate_member(&lying, 1 << 20, &mut out), None);
        assert_eq!(inflate_member(&lying, usize::MAX, &mut out), None);
        assert!(out.capacity() < 1 << 24, "{}", out.capacity());
        assert!(decompress(&lying, usize::MAX, &mut out).is_err());

        // Over the limit: the streaming path's limit error, whatever the trailer says.
        let err = decompress(&one, 1000, &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::LimitExceeded);

        // A header CRC is checked, as Java's GZIPInputStream checks it.
        let with_hcrc = |crc: u16| {
            let mut m = one[..10].to_vec();
            m[3] |= FHCRC;
            m.extend_from_slice(&crc.to_le_bytes());
            m.extend_from_slice(&one[10..]);
            m
        };
        let mut header = one[..10].to_vec();
        header[3] |= FHCRC;
        let good = (crc32fast::hash(&header) & 0xffff) as u16;
        let mut out = Vec::new();
        decompress(&with_hcrc(good), usize::MAX, &mut out).unwrap();
        assert!(out == data);
        assert!(decompress(&with_hcrc(good ^ 1), usize::MAX, &mut Vec::new()).is_err());

        // Trailing bytes that start no member are ignored, as by Java.
        let mut tail = one.clone();
        tail.extend_from_slice(b"junk");
        let mut out = Vec::new();
        decompress(&tail, usize::MAX, &mut out).unwrap();
        assert_eq!(out, data);
    }
}
