//! Zig-zag varints and varlongs as magic v2 records use them (Kafka's `ByteUtils`).
//!
//! Base-128 groups, least significant first, high bit = "more follows". A varint has at most 5
//! bytes and a varlong at most 10; a final byte that still has its high bit set is an error.
//! Like Kafka, bits that do not fit the 32 or 64-bit result are dropped, not rejected.

/// Why a varint could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The buffer ended inside the varint.
    Truncated,
    /// The last allowed byte still had its continuation bit set.
    TooLong,
}

/// Reads a zig-zag varint (int32) at `*pos`, advancing `*pos` past it.
#[inline(always)]
pub fn read_varint(buf: &[u8], pos: &mut usize) -> Result<i32, VarintError> {
    let raw = read_unsigned(buf, pos, 5)? as u32;
    Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
}

/// Reads a zig-zag varlong (int64) at `*pos`, advancing `*pos` past it.
#[inline(always)]
pub fn read_varlong(buf: &[u8], pos: &mut usize) -> Result<i64, VarintError> {
    let raw = read_unsigned(buf, pos, 10)?;
    Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
}

#[inline(always)]
fn read_unsigned(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Result<u64, VarintError> {
    // One-byte values are by far the most common (small deltas, short keys): keep them cheap.
    let first = *buf.get(*pos).ok_or(VarintError::Truncated)?;
    if first < 0x80 {
        *pos += 1;
        return Ok(first as u64);
    }
    // Two bytes: lengths of 64 to 8191 bytes (typical values and record sizes).
    let second = *buf.get(*pos + 1).ok_or(VarintError::Truncated)?;
    let mut value = (first & 0x7f) as u64 | ((second & 0x7f) as u64) << 7;
    if second < 0x80 {
        *pos += 2;
        return Ok(value);
    }
    for i in 2..max_bytes {
        let byte = *buf.get(*pos + i).ok_or(VarintError::Truncated)?;
        // Shifts past 63 would overflow; Kafka drops those bits, and so do we.
        if i * 7 < 64 {
            value |= ((byte & 0x7f) as u64) << (i * 7);
        }
        if byte < 0x80 {
            *pos += i + 1;
            return Ok(value);
        }
    }
    Err(VarintError::TooLong)
}

/// Appends `value` as a zig-zag varint.
#[inline]
pub fn write_varint(out: &mut Vec<u8>, value: i32) {
    write_unsigned(out, ((value << 1) ^ (value >> 31)) as u32 as u64);
}

/// Appends `value` as a zig-zag varlong.
#[inline]
pub fn write_varlong(out: &mut Vec<u8>, value: i64) {
    write_unsigned(out, ((value << 1) ^ (value >> 63)) as u64);
}

#[inline]
fn write_unsigned(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes [`write_varint`] uses for `value`.
pub fn varint_size(value: i32) -> usize {
    unsigned_size(((value << 1) ^ (value >> 31)) as u32 as u64)
}

/// Bytes [`write_varlong`] uses for `value`.
pub fn varlong_size(value: i64) -> usize {
    unsigned_size(((value << 1) ^ (value >> 63)) as u64)
}

fn unsigned_size(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edges() {
        for v in [0, 1, -1, 63, -64, 64, 300, -300, i32::MAX, i32::MIN] {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out.len(), varint_size(v), "size of {v}");
            let mut pos = 0;
            assert_eq!(read_varint(&out, &mut pos), Ok(v));
            assert_eq!(pos, out.len());
        }
        for v in [0i64, -1, 1 << 40, -(1 << 40), i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            write_varlong(&mut out, v);
            assert_eq!(out.len(), varlong_size(v));
            let mut pos = 0;
            assert_eq!(read_varlong(&out, &mut pos), Ok(v));
        }
    }

    #[test]
    fn null_marker_is_one_byte() {
        let mut out = Vec::new();
        write_varint(&mut out, -1);
        assert_eq!(out, [0x01]);
    }

    #[test]
    fn rejects_unterminated_and_truncated() {
        let mut pos = 0;
        assert_eq!(read_varint(&[0x80; 5], &mut pos), Err(VarintError::TooLong));
        assert_eq!(
            read_varlong(&[0xff; 10], &mut pos),
            Err(VarintError::TooLong)
        );
        assert_eq!(
            read_varint(&[0x80, 0x80], &mut pos),
            Err(VarintError::Truncated)
        );
        assert_eq!(read_varint(&[], &mut pos), Err(VarintError::Truncated));
        assert_eq!(pos, 0, "a failed read does not move the position");
    }

    #[test]
    fn drops_bits_beyond_32_like_kafka() {
        // Fifth byte 0x7f: only its low 4 bits fit an int32; Kafka ignores the rest.
        let mut pos = 0;
        let v = read_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f], &mut pos).unwrap();
        assert_eq!(v, i32::MIN);
    }
}
