//! The bytes of a JSON payload classified many at a time, for the tokenizer (`scan.rs`):
//! eight at a time in a word (SWAR), and, on x86_64, 32 or 64 at a time with SSE2 where one
//! look settles the usual number or string (anything else is left to the exact, byte by byte
//! paths, which also give every fault).

pub const ONES: u64 = 0x0101_0101_0101_0101;
pub const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `w` equal to `b` (the lowest flagged byte is exact).
#[inline(always)]
fn bytes_equal(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * u64::from(b));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Where strings stop being plain: `"`, `\` or a control character (the lowest flagged byte).
#[inline(always)]
pub fn string_stops(w: u64) -> u64 {
    bytes_equal(w, b'"') | bytes_equal(w, b'\\') | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
}

/// How many of the bytes from `i` on are ASCII digits (eight at a time where eight are left).
#[inline(always)]
pub fn digit_run(buf: &[u8], i: usize) -> usize {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = ONES * 0x30;
    let mut j = i;
    while let Some(chunk) = buf.get(j..j + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // A digit is 0x30..=0x39: its high nibble is 3, also after adding 6. A carry out of a
        // byte comes only from a byte that is no digit, and moves up (to later bytes): the
        // lowest byte flagged is exact.
        let off =
            ((w & HIGH_NIBBLES) ^ THREES) | ((w.wrapping_add(ONES * 6) & HIGH_NIBBLES) ^ THREES);
        // The high bit of every byte of `off` that is not zero.
        let other = (((off & !HIGHS).wrapping_add(!HIGHS)) | off) & HIGHS;
        if other != 0 {
            return j - i + (other.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while buf.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
    }
    j - i
}

/// Bit `i`: `w[i]` is an ASCII digit.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn digits32(w: &[u8; 32]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
        _mm_sub_epi8,
    };
    // SAFETY: SSE2 is in every x86_64 processor; both unaligned loads are within `w`.
    unsafe {
        let p = w.as_ptr().cast::<__m128i>();
        let zero = _mm_set1_epi8(b'0' as i8);
        let nine = _mm_set1_epi8(9);
        // A digit less '0' is at most 9 (unsigned): the minimum with 9 leaves it as it is.
        let a = _mm_sub_epi8(_mm_loadu_si128(p), zero);
        let b = _mm_sub_epi8(_mm_loadu_si128(p.add(1)), zero);
        let a = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(a, nine), a)) as u32;
        let b = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(b, nine), b)) as u32;
        u64::from(a & 0xffff) | u64::from(b & 0xffff) << 16
    }
}

/// Elsewhere no byte counts as a digit here: every number takes the exact path.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn digits32(_: &[u8; 32]) -> u64 {
    0
}

/// Bits of the 64 bytes `w`: where a string stops being plain (`"`, `\`, a control byte),
/// and where a byte is not ASCII.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn string_bytes64(w: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let (mut stops, mut high) = (0u64, 0u64);
    // SAFETY: SSE2 is in every x86_64 processor; the four unaligned loads are within `w`.
    unsafe {
        let p = w.as_ptr().cast::<__m128i>();
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let control = _mm_set1_epi8(0x1f);
        for k in 0..4 {
            let v = _mm_loadu_si128(p.add(k));
            let stop = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                _mm_cmpeq_epi8(_mm_min_epu8(v, control), v),
            );
            stops |= u64::from(_mm_movemask_epi8(stop) as u32 & 0xffff) << (16 * k);
            high |= u64::from(_mm_movemask_epi8(v) as u32 & 0xffff) << (16 * k);
        }
    }
    (stops, high)
}

/// Elsewhere every byte stops a string here: every string takes the exact path.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn string_bytes64(_: &[u8; 64]) -> (u64, u64) {
    (1, 0)
}

/// Where the string whose content starts at `start` ends (past its closing quote), found from
/// one look at 64 bytes when its content is plain ASCII and its quote is among them. None:
/// read it as `Cursor::string` does (escapes, other UTF-8, and every fault).
#[inline(always)]
pub fn short_string_end(buf: &[u8], start: usize) -> Option<usize> {
    let w: &[u8; 64] = buf.get(start..start + 64)?.try_into().ok()?;
    let (stops, high) = string_bytes64(w);
    let end = stops.trailing_zeros() as usize;
    if *w.get(end)? != b'"' || high & ((1u64 << end) - 1) != 0 {
        return None;
    }
    Some(start + end + 1)
}

/// Where the number at `start` ends, found from one look at its 32 bytes when it has the
/// usual shape: an optional `-`, digits (no leading zero), optionally `.` and digits, no
/// exponent, and a byte after it within the 32. None: read it byte by byte (anything else,
/// and every fault).
#[inline(always)]
pub fn short_number_end(buf: &[u8], start: usize) -> Option<usize> {
    let w: &[u8; 32] = buf.get(start..start + 32)?.try_into().ok()?;
    let minus = usize::from(w[0] == b'-');
    // Bit k: the byte k after the sign is a digit (bits past the window are 0).
    let digits = digits32(w) >> minus;
    let int = digits.trailing_ones() as usize;
    if int == 0 || (int > 1 && w[minus] == b'0') {
        return None;
    }
    let mut end = minus + int;
    if *w.get(end)? == b'.' {
        let frac = (digits >> (int + 1)).trailing_ones() as usize;
        if frac == 0 {
            return None;
        }
        end += 1 + frac;
    }
    match w.get(end)? {
        b'e' | b'E' => None,
        _ => Some(start + end),
    }
}
