//! Protobuf's wire format read from a payload: varints, tags, fixed-width values, lengths, and
//! fields skipped, as the encoding specification and the runtimes (protobuf-java, upb) read
//! them. Every read is checked against the end of what it reads in, so a hostile payload is an
//! error here, never a read past its end.
//!
//! Positions are offsets into the whole payload; `buf` is the payload cut at the end of the
//! message being read (a length-delimited field's end, or the payload's).

/// Why a payload is not a valid message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// Bytes end inside a value.
    Truncated,
    /// A varint of more than 10 bytes.
    VarintTooLong,
    /// A tag above `u32::MAX`, field number 0, or wire type 6 or 7.
    BadTag(u64),
    /// An end-group tag with no group open, or closing another group.
    EndGroup(u32),
    /// A length past the end of the message.
    Length(u64),
    /// Messages and groups nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A `string` field that is not UTF-8.
    Utf8(String),
    /// A value that has no Arrow value (a Timestamp out of range, a JSON rendering failed).
    Value(String),
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Truncated => write!(f, "the bytes end inside a value"),
            Why::VarintTooLong => write!(f, "a varint longer than 10 bytes"),
            Why::BadTag(key) => write!(
                f,
                "invalid tag {key} (field number {}, wire type {})",
                key >> 3,
                key & 7
            ),
            Why::EndGroup(n) => write!(f, "an end-group tag of field {n} with no such group open"),
            Why::Length(n) => write!(f, "a length of {n} bytes past the end of the message"),
            Why::TooDeep => write!(f, "messages nested deeper than {MAX_DEPTH}"),
            Why::Utf8(field) => write!(f, "field {field}: a string that is not UTF-8"),
            Why::Value(why) => write!(f, "{why}"),
        }
    }
}

/// Nesting of messages and groups below the payload's message, as prost (and so
/// `prost-reflect`, the decoder's oracle) and the runtimes (100 in protobuf-java and upb) allow.
pub(crate) const MAX_DEPTH: usize = 100;

pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const START_GROUP: u8 = 3;
pub(crate) const END_GROUP: u8 = 4;
pub(crate) const FIXED32: u8 = 5;

/// A varint. Up to 10 bytes; a tenth byte's bits past the 64th are dropped, as protobuf-java
/// and upb drop them (`prost`, the oracle, refuses them).
#[inline(always)]
pub(crate) fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, Why> {
    match buf.get(*pos) {
        Some(&b) if b < 0x80 => {
            *pos += 1;
            Ok(u64::from(b))
        }
        _ => varint_long(buf, pos),
    }
}

#[inline(never)]
fn varint_long(buf: &[u8], pos: &mut usize) -> Result<u64, Why> {
    let mut value = 0u64;
    for i in 0..10 {
        let Some(&b) = buf.get(*pos + i) else {
            return Err(Why::Truncated);
        };
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos += i + 1;
            return Ok(value);
        }
    }
    Err(Why::VarintTooLong)
}

/// Whether the varint at `pos` has a tenth byte with bits past the 64th (read by the runtimes,
/// refused by `prost`).
pub(crate) fn overlong_varint(buf: &[u8], pos: usize) -> bool {
    buf.get(pos..pos + 10)
        .is_some_and(|b| b[..9].iter().all(|&x| x >= 0x80) && b[9] > 1)
}

/// A field's tag: (field number, wire type). Field number 0, wire types 6 and 7 and tags past
/// 32 bits are malformed, as in every runtime.
#[inline(always)]
pub(crate) fn tag(buf: &[u8], pos: &mut usize) -> Result<(u32, u8), Why> {
    let key = varint(buf, pos)?;
    let number = key >> 3;
    let wire = (key & 7) as u8;
    if key > u64::from(u32::MAX) || number == 0 || wire > 5 {
        return Err(Why::BadTag(key));
    }
    Ok((number as u32, wire))
}

#[inline(always)]
pub(crate) fn fixed32(buf: &[u8], pos: &mut usize) -> Result<u32, Why> {
    let bytes = buf.get(*pos..*pos + 4).ok_or(Why::Truncated)?;
    *pos += 4;
    Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
}

#[inline(always)]
pub(crate) fn fixed64(buf: &[u8], pos: &mut usize) -> Result<u64, Why> {
    let bytes = buf.get(*pos..*pos + 8).ok_or(Why::Truncated)?;
    *pos += 8;
    Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
}

/// A length-delimited value's span `(start, end)`, its length checked against the bytes left.
#[inline(always)]
pub(crate) fn delimited(buf: &[u8], pos: &mut usize) -> Result<(usize, usize), Why> {
    let len = varint(buf, pos)?;
    let left = buf.len() - *pos;
    if len > left as u64 {
        return Err(Why::Length(len));
    }
    let start = *pos;
    *pos += len as usize;
    Ok((start, *pos))
}

/// Skips a field of wire type `wire` whose tag was just read, in a message at `depth`.
pub(crate) fn skip(
    buf: &[u8],
    pos: &mut usize,
    number: u32,
    wire: u8,
    depth: usize,
) -> Result<(), Why> {
    match wire {
        VARINT => varint(buf, pos).map(|_| ()),
        FIXED64 => fixed64(buf, pos).map(|_| ()),
        LEN => delimited(buf, pos).map(|_| ()),
        START_GROUP => group(buf, pos, number, depth + 1).map(|_| ()),
        FIXED32 => fixed32(buf, pos).map(|_| ()),
        _ => Err(Why::EndGroup(number)),
    }
}

/// A group of field `number` whose start tag was just read: the span of its fields, `pos` left
/// after its end tag. `depth` is the group's own nesting.
pub(crate) fn group(
    buf: &[u8],
    pos: &mut usize,
    number: u32,
    depth: usize,
) -> Result<(usize, usize), Why> {
    if depth > MAX_DEPTH {
        return Err(Why::TooDeep);
    }
    let start = *pos;
    loop {
        if *pos >= buf.len() {
            return Err(Why::Truncated);
        }
        let at = *pos;
        let (n, wire) = tag(buf, pos)?;
        if wire == END_GROUP {
            if n != number {
                return Err(Why::EndGroup(n));
            }
            return Ok((start, at));
        }
        skip(buf, pos, n, wire, depth)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A varint read a byte at a time, as the wire format defines it.
    fn bytewise(buf: &[u8]) -> Result<(u64, usize), Why> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = *buf.get(i).ok_or(Why::Truncated)?;
            value |= u64::from(b & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
            if b < 0x80 {
                return Ok((value, i + 1));
            }
        }
        Err(Why::VarintTooLong)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// Any value written in any number of bytes (padded with high groups of zero, as some
        /// writers do), and any bytes after it or instead of it: read as byte by byte.
        #[test]
        fn varints_read_as_byte_by_byte(
            value in any::<u64>(),
            shift in 0u32..64,
            pad in 0usize..4,
            tail in proptest::collection::vec(any::<u8>(), 0..12),
            raw in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let value = value >> shift;
            let mut bytes = Vec::new();
            let mut v = value;
            loop {
                let more = v >= 0x80 || pad > 0 && bytes.len() < pad;
                bytes.push((v & 0x7f) as u8 | if more { 0x80 } else { 0 });
                v >>= 7;
                if !more {
                    break;
                }
            }
            for buf in [[&bytes[..], &tail].concat(), raw] {
                let mut pos = 0;
                let got = varint(&buf, &mut pos).map(|v| (v, pos));
                prop_assert_eq!(got, bytewise(&buf));
            }
        }
    }

    #[test]
    fn varints_as_the_runtimes_read_them() {
        let mut pos = 0;
        assert_eq!(varint(&[0xac, 0x02], &mut pos), Ok(300));
        assert_eq!(pos, 2);
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        pos = 0;
        assert_eq!(varint(&max, &mut pos), Ok(u64::MAX));
        // A tenth byte's high bits are dropped, not an error.
        let mut over = max;
        over[9] = 0x7f;
        pos = 0;
        assert_eq!(varint(&over, &mut pos), Ok(u64::MAX));
        assert!(overlong_varint(&over, 0) && !overlong_varint(&max, 0));
        let mut eleven = [0x80u8; 11];
        eleven[10] = 0;
        pos = 0;
        assert_eq!(varint(&eleven, &mut pos), Err(Why::VarintTooLong));
        pos = 0;
        assert_eq!(varint(&[0x80, 0x80], &mut pos), Err(Why::Truncated));
    }

    #[test]
    fn tags_lengths_and_groups() {
        let mut pos = 0;
        assert_eq!(tag(&[0x08], &mut pos), Ok((1, VARINT)));
        for bad in [
            &[0x00][..],
            &[0x0e],
            &[0x0f],
            &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
        ] {
            pos = 0;
            assert!(matches!(tag(bad, &mut pos), Err(Why::BadTag(_))), "{bad:?}");
        }
        pos = 0;
        assert_eq!(delimited(&[0x05, 1, 2], &mut pos), Err(Why::Length(5)));
        // Group 1 holding field 2 = 7 and an empty group 3, then its end.
        let g = [0x10, 0x07, 0x1b, 0x1c, 0x0c, 0xff];
        pos = 0;
        assert_eq!(group(&g, &mut pos, 1, 1), Ok((0, 4)));
        assert_eq!(pos, 5);
        // Closing the wrong group, or none.
        pos = 0;
        assert_eq!(group(&[0x14], &mut pos, 1, 1), Err(Why::EndGroup(2)));
        pos = 0;
        assert_eq!(skip(&[], &mut pos, 1, END_GROUP, 0), Err(Why::EndGroup(1)));
        pos = 0;
        assert_eq!(group(&[0x10], &mut pos, 1, 1), Err(Why::Truncated));
        pos = 0;
        assert_eq!(
            group(&[0x0c], &mut pos, 1, MAX_DEPTH + 1),
            Err(Why::TooDeep)
        );
    }
}
