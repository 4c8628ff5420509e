//! Schema Registry's wire framing of a key or value: which writer schema a payload was written
//! with, found before the payload or in a record header (docs/values.md, "Framing").
//!
//! - Confluent's prefix: magic byte `0`, the schema id as 4 bytes big-endian, then (Protobuf
//!   only) the message-index path, then the payload.
//! - The 8-byte variant (Apicurio's `Legacy8ByteIdHandler` framing): magic `0` and an 8-byte id.
//! - Newer Confluent serializers may put the schema in a header instead (`__key_schema_id`,
//!   `__value_schema_id`): magic `1` and the schema's 16-byte GUID, or magic `0` and a 4-byte
//!   id, then (Protobuf) the message indexes; the payload is then the whole key or value.
//!
//! The message-index path says which message of a `.proto` file the payload is: a zig-zag
//! varint count, then that many zig-zag varint indexes; the single byte `0` (count 0) means the
//! first message, `[0]`.

use crate::format::varint::read_varlong;

/// The header naming a key's schema (newer Confluent serializers).
pub const KEY_SCHEMA_ID_HEADER: &str = "__key_schema_id";
/// The header naming a value's schema.
pub const VALUE_SCHEMA_ID_HEADER: &str = "__value_schema_id";

/// The magic byte before a numeric schema id.
pub const MAGIC_ID: u8 = 0;
/// The magic byte before a schema GUID (in a header).
pub const MAGIC_GUID: u8 = 1;

/// How wide the schema id after the magic byte is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IdWidth {
    /// Confluent's 4 bytes.
    #[default]
    Four,
    /// Apicurio's 8 bytes.
    Eight,
}

/// The writer schema a payload names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemaRef {
    /// A registry id.
    Id(i64),
    /// A schema's GUID (the registry's MD5 of it), from a header.
    Guid([u8; 16]),
}

/// A Protobuf message-index path. The first message's (`[0]`, written as the one byte 0),
/// which nearly every payload names, is borrowed: reading it allocates nothing.
pub type MessageIndexes = std::borrow::Cow<'static, [i64]>;

/// The path of no message (formats other than Protobuf).
pub const NO_MESSAGE: MessageIndexes = MessageIndexes::Borrowed(&[]);

/// A key or value with its framing taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Framed<'a> {
    /// The writer schema.
    pub schema: SchemaRef,
    /// Protobuf's message-index path (empty for other formats).
    pub message_indexes: MessageIndexes,
    /// The payload after the framing.
    pub payload: &'a [u8],
}

/// Takes Confluent's prefix framing off `bytes`; `protobuf` reads the message indexes too.
/// Errors say what is wrong, for a person (the caller adds file and offset).
pub fn unframe(bytes: &[u8], width: IdWidth, protobuf: bool) -> Result<Framed<'_>, String> {
    let Some(&magic) = bytes.first() else {
        return Err("empty, so no schema framing (magic byte 0 and a schema id)".into());
    };
    if magic != MAGIC_ID {
        return Err(format!(
            "magic byte {magic} where the schema framing has 0 (not written by a \
             Schema Registry serializer?)"
        ));
    }
    let (schema, mut pos) = match width {
        IdWidth::Four => {
            let id = bytes.get(1..5).ok_or("ends inside the 4-byte schema id")?;
            let id = u32::from_be_bytes(id.try_into().expect("4 bytes"));
            (SchemaRef::Id(i64::from(id)), 5)
        }
        IdWidth::Eight => {
            let id = bytes.get(1..9).ok_or("ends inside the 8-byte schema id")?;
            let id = i64::from_be_bytes(id.try_into().expect("8 bytes"));
            (SchemaRef::Id(id), 9)
        }
    };
    let message_indexes = if protobuf {
        message_indexes(bytes, &mut pos)?
    } else {
        NO_MESSAGE
    };
    Ok(Framed {
        schema,
        message_indexes,
        payload: &bytes[pos..],
    })
}

/// The schema named by a `__key_schema_id`/`__value_schema_id` header's value, and (Protobuf)
/// the message indexes after it.
pub fn header_schema(value: &[u8], protobuf: bool) -> Result<(SchemaRef, MessageIndexes), String> {
    let (schema, mut pos) = match value.first() {
        Some(&MAGIC_ID) => {
            let id = value
                .get(1..5)
                .ok_or("schema id header ends inside its 4-byte id")?;
            let id = u32::from_be_bytes(id.try_into().expect("4 bytes"));
            (SchemaRef::Id(i64::from(id)), 5)
        }
        Some(&MAGIC_GUID) => {
            let guid = value
                .get(1..17)
                .ok_or("schema id header ends inside its 16-byte GUID")?;
            (SchemaRef::Guid(guid.try_into().expect("16 bytes")), 17)
        }
        Some(other) => {
            return Err(format!(
                "schema id header has magic byte {other}, not 0 or 1"
            ))
        }
        None => return Err("schema id header is empty".into()),
    };
    let indexes = if protobuf {
        message_indexes(value, &mut pos)?
    } else {
        NO_MESSAGE
    };
    if pos != value.len() {
        return Err(format!(
            "schema id header has {} bytes after the schema id",
            value.len() - pos
        ));
    }
    Ok((schema, indexes))
}

/// Reads a message-index path at `*pos`. The count cannot exceed the bytes left (each index
/// takes at least one), so hostile counts allocate nothing.
pub fn message_indexes(bytes: &[u8], pos: &mut usize) -> Result<MessageIndexes, String> {
    let bad = |e| format!("message indexes do not decode ({e:?})");
    let count = read_varlong(bytes, pos).map_err(bad)?;
    if count == 0 {
        return Ok(MessageIndexes::Borrowed(&[0]));
    }
    let left = bytes.len().saturating_sub(*pos);
    if count < 0 || count as u64 > left as u64 {
        return Err(format!(
            "message-index count {count} with {left} bytes left"
        ));
    }
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let index = read_varlong(bytes, pos).map_err(bad)?;
        if index < 0 {
            return Err(format!("negative message index {index}"));
        }
        out.push(index);
    }
    Ok(MessageIndexes::Owned(out))
}

/// Confluent's prefix for schema `id`: magic 0 and the id (4 bytes, big-endian), appended to
/// `out`.
pub fn write_prefix(out: &mut Vec<u8>, id: u32) {
    out.push(MAGIC_ID);
    out.extend_from_slice(&id.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confluent_prefix() {
        let f = unframe(&[0, 0, 0, 1, 2, 9, 9], IdWidth::Four, false).unwrap();
        assert_eq!(f.schema, SchemaRef::Id(258));
        assert_eq!(f.payload, &[9, 9]);
        let f = unframe(&[0, 0, 0, 0, 0, 0, 0, 0, 7, 1], IdWidth::Eight, false).unwrap();
        assert_eq!(f.schema, SchemaRef::Id(7));
        assert_eq!(f.payload, &[1]);
        assert!(unframe(&[], IdWidth::Four, false).is_err());
        assert!(unframe(&[1, 0, 0, 0, 1], IdWidth::Four, false)
            .unwrap_err()
            .contains("magic byte 1"));
        assert!(unframe(&[0, 0, 0], IdWidth::Four, false).is_err());
    }

    #[test]
    fn protobuf_indexes() {
        // Single 0: the first message.
        let f = unframe(&[0, 0, 0, 0, 3, 0, 8, 1], IdWidth::Four, true).unwrap();
        assert_eq!(f.message_indexes, vec![0]);
        assert_eq!(f.payload, &[8, 1]);
        // Count 2 (zig-zag 4), indexes 1 (2) and 3 (6).
        let f = unframe(&[0, 0, 0, 0, 3, 4, 2, 6, 8], IdWidth::Four, true).unwrap();
        assert_eq!(f.message_indexes, vec![1, 3]);
        assert_eq!(f.payload, &[8]);
        // A huge count with few bytes left.
        let mut pos = 0;
        assert!(message_indexes(&[0xfe, 0xff, 0xff, 0xff, 0x0f], &mut pos).is_err());
        let mut pos = 0;
        assert!(message_indexes(&[3], &mut pos).is_err());
    }

    #[test]
    fn headers() {
        let mut guid = vec![1];
        guid.extend(1..=16);
        let (s, i) = header_schema(&guid, false).unwrap();
        assert_eq!(s, SchemaRef::Guid(core::array::from_fn(|i| i as u8 + 1)));
        assert!(i.is_empty());
        assert_eq!(
            header_schema(&[0, 0, 0, 0, 5], false).unwrap().0,
            SchemaRef::Id(5)
        );
        guid.push(0);
        assert_eq!(header_schema(&guid, true).unwrap().1, vec![0]);
        assert!(header_schema(&guid, false).is_err());
        assert!(header_schema(&[2], false).is_err());
    }
}
