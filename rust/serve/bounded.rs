//! Requests decoded with every element count checked against the bytes left, before the
//! protocol crate reserves room for the elements.
//!
//! `kafka-protocol` (0.18) reserves an array's declared element count (`Vec::with_capacity`)
//! before it reads the first element. A request of a few bytes declaring 2³¹ elements would ask
//! for hundreds of gigabytes at once, and a failed allocation aborts the process: no error, no
//! unwinding. Every element of a Kafka array takes at least one byte on the wire, so a count
//! above the bytes left is never valid; Kafka's own broker refuses it too (the readers
//! generated from its message schemas check an array's length against the bytes remaining
//! before making the collection).
//!
//! The crate's decoders are generic over the buffer, so the check sits in the buffer: a first
//! pass decodes through [`Probe`], which sees every count as it is read.
//! - An unsigned varint (a flexible version's array, string and bytes lengths, tag numbers and
//!   sizes) larger than the bytes left plus one ends the pass with an error. No valid request
//!   has one, except a tag number above [`TAG_ROOM`], which no Kafka schema has.
//! - A 4-byte integer is an array count or a bytes length in the versions before flexible
//!   ones, but it is also any plain `int32` field (`max_bytes`, `session_id`, ...), which may
//!   well exceed the bytes left. So the probe cannot refuse it; it hands the decoder the bytes
//!   left plus one instead. Used as a count or a length, that value cannot fit, and the pass
//!   fails; used as a plain field, only that field's value is changed, and no field's value
//!   changes how the fields after it are read.
//!
//! When the first pass succeeds without changing a value, its result is the request. When it
//! changed a plain field, a second pass decodes the same bytes unchanged: it reads the same
//! fields in the same order with the same counts, each already found to fit. Either way no
//! array is reserved larger than the bytes left, so a request's decoded size is bounded by its
//! frame's size times the largest element's size.

use bytes::{Buf, Bytes, TryGetError};
use kafka_protocol::protocol::buf::ByteBuf;
use kafka_protocol::protocol::Decodable;
use std::ops::Range;

/// The largest tag number a flexible version's tagged field may carry regardless of the bytes
/// left. Kafka's schemas number tags from 0, and no request has more than a handful.
pub const TAG_ROOM: u64 = 1 << 16;

/// Decodes a request body (or header) of type `T` at `version`, its counts checked first.
pub fn decode<T: Decodable>(bytes: &Bytes, version: i16) -> anyhow::Result<T> {
    let mut probe = Probe {
        bytes: bytes.clone(),
        start: bytes.len(),
        changed: None,
        refused: None,
    };
    let first = T::decode(&mut probe, version);
    if let Some(reason) = probe.refused {
        anyhow::bail!("{reason}");
    }
    let first = match (first, &probe.changed) {
        (Ok(first), _) => first,
        (Err(e), None) => return Err(e),
        (Err(e), Some(first_changed)) => anyhow::bail!("{e} ({first_changed})"),
    };
    if probe.changed.is_none() {
        return Ok(first);
    }
    drop(first);
    T::decode(&mut bytes.clone(), version)
}

/// The buffer the first pass reads through (see the module's text).
struct Probe {
    bytes: Bytes,
    /// The body's length, to say where a refused count sits.
    start: usize,
    /// The first 4-byte value replaced, said as a reason the request may have failed.
    changed: Option<String>,
    /// Why the pass was ended, when a varint count could not fit.
    refused: Option<String>,
}

impl Probe {
    fn position(&self) -> usize {
        self.start - self.bytes.len()
    }
}

/// The unsigned varint starting at `bytes[0]` as `kafka-protocol` reads it (at most five
/// bytes, the seven low bits of each), and how many bytes it takes; None when the bytes end
/// inside it (the crate's own read then fails).
fn peek_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(5).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 || i == 4 {
            return Some((value & u64::from(u32::MAX), i + 1));
        }
    }
    None
}

impl Buf for Probe {
    fn remaining(&self) -> usize {
        self.bytes.len()
    }

    fn chunk(&self) -> &[u8] {
        &self.bytes
    }

    fn advance(&mut self, cnt: usize) {
        self.bytes.advance(cnt)
    }

    /// A byte read is a boolean or a byte of an unsigned varint; read as the start of a varint,
    /// it must fit in what follows it. A varint's later bytes, read in turn, start smaller
    /// varints ending at the same place, so they pass when the first did.
    fn try_get_u8(&mut self) -> Result<u8, TryGetError> {
        if let Some((value, len)) = peek_varint(&self.bytes) {
            let left = (self.bytes.len() - len) as u64;
            if value > (left + 1).max(TAG_ROOM) {
                self.refused = Some(format!(
                    "a length or count of {value} at byte {} of the body, where {left} bytes \
                     remain after it",
                    self.position()
                ));
                return Err(TryGetError {
                    requested: len,
                    available: 0,
                });
            }
        }
        self.bytes.try_get_u8()
    }

    fn get_u8(&mut self) -> u8 {
        self.try_get_u8().unwrap_or_else(|e| panic!("{e}"))
    }

    /// A 4-byte integer larger than the bytes left is handed over as the bytes left plus one
    /// (see the module's text).
    fn try_get_i32(&mut self) -> Result<i32, TryGetError> {
        let value = self.bytes.try_get_i32()?;
        let left = self.bytes.len();
        if value > 0 && value as usize > left {
            if self.changed.is_none() {
                self.changed = Some(format!(
                    "the 4-byte value {value} at byte {} of the body is more than the {left} \
                     bytes after it: as a count or a length it cannot fit",
                    self.position() - 4
                ));
            }
            return Ok(i32::try_from(left + 1).unwrap_or(i32::MAX));
        }
        Ok(value)
    }

    fn get_i32(&mut self) -> i32 {
        self.try_get_i32().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl ByteBuf for Probe {
    fn peek_bytes(&mut self, r: Range<usize>) -> Bytes {
        self.bytes.peek_bytes(r)
    }

    fn get_bytes(&mut self, size: usize) -> Bytes {
        self.bytes.get_bytes(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{FetchRequest, MetadataRequest};
    use kafka_protocol::protocol::Encodable;

    #[test]
    fn a_huge_non_flexible_count_is_an_error_not_an_allocation() {
        // Metadata v1's topic array declaring 0x0e000000 topics, then nothing.
        let body = Bytes::from_static(&[0x0e, 0x00, 0x00, 0x00]);
        assert!(decode::<MetadataRequest>(&body, 1).is_err());
        let body = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0, 0]);
        assert!(decode::<MetadataRequest>(&body, 4).is_err());
    }

    #[test]
    fn a_huge_compact_count_is_refused_with_its_place() {
        // Metadata v12: a compact topic array of 2^32 - 2 elements.
        let body = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
        let e = decode::<MetadataRequest>(&body, 12)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at byte 0"), "{e}");
    }

    #[test]
    fn plain_fields_larger_than_the_body_keep_their_values() {
        let mut request = FetchRequest::default();
        request.max_wait_ms = 500;
        request.min_bytes = 1;
        request.max_bytes = 52_428_800;
        request.session_id = 0x7fff_0000;
        for version in [4, 12, 17] {
            let mut out = bytes::BytesMut::new();
            request.encode(&mut out, version).unwrap();
            let got: FetchRequest = decode(&out.freeze(), version).unwrap();
            assert_eq!(got.max_bytes, 52_428_800);
            if version >= 7 {
                assert_eq!(got.session_id, 0x7fff_0000);
            }
        }
    }

    #[test]
    fn varints_are_read_as_the_crate_reads_them() {
        assert_eq!(peek_varint(&[0x05]), Some((5, 1)));
        assert_eq!(peek_varint(&[0xc8, 0x01]), Some((200, 2)));
        assert_eq!(peek_varint(&[0x80, 0x80]), None);
        assert_eq!(peek_varint(&[0xff; 6]), Some((u64::from(u32::MAX), 5)));
    }
}
