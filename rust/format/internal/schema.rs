//! A small interpreter of Kafka's message-schema encoding, driven by tables.
//!
//! Kafka describes each internal record (a `__consumer_offsets` key, a KRaft metadata record, ...)
//! as a list of fields, each present in a range of versions. A [`Message`] here is that list in
//! kafkalog's own form: the fields of version `v` are those whose `versions` contain `v`, so one
//! table yields the field table of every version. [`decode`] reads one message at a version:
//! fixed-width integers (big-endian), strings and byte arrays with an int16/int32 length, arrays
//! with an int32 count; in the message's *flexible* versions lengths and counts are unsigned
//! varints holding length + 1 (0 = null) and every struct ends in a tagged-field section (a
//! count, then per field its tag, its size and its bytes). Tagged fields unknown to the table are
//! skipped, as Kafka skips them.
//!
//! The result is a [`Value`] tree that borrows strings and bytes from the input, and [`to_json`]
//! writes it as Kafka's generated JSON converters do (field order of the table, tagged fields only
//! when they differ from their default, bytes in base64, UUIDs in Kafka's base64url form).

use std::fmt::Write as _;

/// A range of versions, both ends included; `V(1, 0)` (see [`NONE`]) is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V(pub i16, pub i16);

/// Upper end of an open range ("this version and later").
pub const MAX: i16 = i16::MAX;
/// The empty range.
pub const NONE: V = V(1, 0);

impl V {
    pub fn contains(self, version: i16) -> bool {
        self.0 <= version && version <= self.1
    }
}

/// A field's type.
#[derive(Debug)]
pub enum Type {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    // Kafka's schema language has uint32; none of the tables here has a field of it yet.
    #[allow(dead_code)]
    Uint32,
    Int64,
    Float64,
    Str,
    Bytes,
    Uuid,
    Array(&'static Type),
    Struct(&'static [Field]),
}

/// One field of a message or struct.
#[derive(Debug)]
pub struct Field {
    /// The name as Kafka's JSON converters write it.
    pub name: &'static str,
    pub ty: Type,
    /// Versions the field exists in.
    pub versions: V,
    /// Versions in which it may be null (strings, bytes, arrays, structs).
    pub nullable: V,
    /// Tag and versions in which the field is tagged (read from the tagged section).
    pub tag: u32,
    pub tagged: V,
    /// The default as the definition states it ("" when it states none).
    pub default: &'static str,
}

/// Builds a field: name, type, versions. Chain [`Field::nullable`], [`Field::tagged`],
/// [`Field::default`] for the rest.
pub const fn f(name: &'static str, ty: Type, versions: V) -> Field {
    Field {
        name,
        ty,
        versions,
        nullable: NONE,
        tag: 0,
        tagged: NONE,
        default: "",
    }
}

impl Field {
    pub const fn nullable(mut self, versions: V) -> Field {
        self.nullable = versions;
        self
    }
    pub const fn tagged(mut self, tag: u32, versions: V) -> Field {
        self.tag = tag;
        self.tagged = versions;
        self
    }
    pub const fn default(mut self, default: &'static str) -> Field {
        self.default = default;
        self
    }
}

/// A message: its name, its API key (KRaft and remote-log-metadata records; -1 otherwise), the
/// versions Kafka defines, the flexible ones, and its fields.
#[derive(Debug)]
pub struct Message {
    pub name: &'static str,
    pub api_key: i16,
    pub valid: V,
    pub flexible: V,
    pub fields: &'static [Field],
}

/// A decoded field value. Strings and bytes borrow from the input.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Uuid([u8; 16]),
    Array(Vec<Value<'a>>),
    Struct(Struct<'a>),
}

/// A decoded struct: its fields in the table's order (tagged fields only when present and not
/// at their default, as Kafka's JSON converters write them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Struct<'a> {
    pub fields: Vec<(&'static str, Value<'a>)>,
}

impl<'a> Struct<'a> {
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        self.fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value<'a>> {
        self.fields
            .iter_mut()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }
    pub fn str(&self, name: &str) -> Option<&'a str> {
        match self.get(name) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }
}

impl<'a> Value<'a> {
    pub fn as_struct(&self) -> Option<&Struct<'a>> {
        match self {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> &[Value<'a>] {
        match self {
            Value::Array(items) => items,
            _ => &[],
        }
    }
}

/// Why bytes do not decode as a message version: what, and where in the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub message: String,
    pub at: usize,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.at)
    }
}

pub type DecodeResult<T> = Result<T, DecodeError>;

/// A cursor over the bytes of one key or value.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn error(&self, message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
            at: self.pos,
        }
    }

    pub fn take(&mut self, n: usize, what: &str) -> DecodeResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "{what} needs {n} bytes, {} remain",
                self.remaining()
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> DecodeResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn i16(&mut self, what: &str) -> DecodeResult<i16> {
        Ok(i16::from_be_bytes(self.array(what)?))
    }

    pub fn i32(&mut self, what: &str) -> DecodeResult<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    /// An unsigned varint of at most 32 bits, as Kafka's `readUnsignedVarint`.
    pub fn uvarint(&mut self, what: &str) -> DecodeResult<u32> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.take(1, what)?[0];
            if i == 4 && b > 0x0f {
                return Err(self.error(format!("{what}: varint longer than 32 bits")));
            }
            value |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.error(format!("{what}: varint longer than 5 bytes")))
    }
}

/// Decodes `message` at `version` from the cursor. The version must be one of `message.valid`.
pub fn decode<'a>(
    message: &Message,
    version: i16,
    cursor: &mut Cursor<'a>,
) -> DecodeResult<Struct<'a>> {
    let flexible = message.flexible.contains(version);
    read_struct(message.fields, version, flexible, cursor)
}

fn read_struct<'a>(
    fields: &'static [Field],
    version: i16,
    flexible: bool,
    cursor: &mut Cursor<'a>,
) -> DecodeResult<Struct<'a>> {
    let mut values: Vec<Option<Value<'a>>> = Vec::with_capacity(fields.len());
    for field in fields {
        if field.versions.contains(version) && !field.tagged.contains(version) {
            let nullable = field.nullable.contains(version);
            let value = read_value(field, &field.ty, version, flexible, nullable, cursor)?;
            values.push(Some(value));
        } else {
            values.push(None);
        }
    }
    if flexible {
        let count = cursor.uvarint("tagged field count")?;
        let mut last_tag: Option<u32> = None;
        for _ in 0..count {
            let tag = cursor.uvarint("tag")?;
            if last_tag.is_some_and(|t| tag <= t) {
                return Err(cursor.error(format!("tagged fields out of order: tag {tag}")));
            }
            last_tag = Some(tag);
            let size = cursor.uvarint("tagged field size")? as usize;
            let bytes = cursor.take(size, "tagged field")?;
            let known = fields
                .iter()
                .position(|fl| fl.tagged.contains(version) && fl.tag == tag);
            if let Some(i) = known {
                let field = &fields[i];
                let mut inner = Cursor::new(bytes);
                let nullable = field.nullable.contains(version);
                let value = read_value(field, &field.ty, version, flexible, nullable, &mut inner)
                    .map_err(|e| DecodeError {
                    message: format!("tagged field {}: {}", field.name, e.message),
                    at: cursor.pos - size + e.at,
                })?;
                if !is_default(field, &value) {
                    values[i] = Some(value);
                }
            }
        }
    }
    Ok(Struct {
        fields: fields
            .iter()
            .zip(values)
            .filter_map(|(field, v)| v.map(|v| (field.name, v)))
            .collect(),
    })
}

fn read_value<'a>(
    field: &Field,
    ty: &'static Type,
    version: i16,
    flexible: bool,
    nullable: bool,
    cursor: &mut Cursor<'a>,
) -> DecodeResult<Value<'a>> {
    let name = field.name;
    Ok(match ty {
        Type::Bool => Value::Bool(cursor.take(1, name)?[0] != 0),
        Type::Int8 => Value::Int(i64::from(cursor.take(1, name)?[0] as i8)),
        Type::Int16 => Value::Int(i64::from(cursor.i16(name)?)),
        Type::Uint16 => Value::Int(i64::from(u16::from_be_bytes(cursor.array(name)?))),
        Type::Int32 => Value::Int(i64::from(cursor.i32(name)?)),
        Type::Uint32 => Value::Int(i64::from(u32::from_be_bytes(cursor.array(name)?))),
        Type::Int64 => Value::Int(i64::from_be_bytes(cursor.array(name)?)),
        Type::Float64 => Value::Float(f64::from_be_bytes(cursor.array(name)?)),
        Type::Uuid => Value::Uuid(cursor.array(name)?),
        Type::Str | Type::Bytes => {
            let len = if flexible {
                i64::from(cursor.uvarint(name)?) - 1
            } else if matches!(ty, Type::Str) {
                i64::from(cursor.i16(name)?)
            } else {
                i64::from(cursor.i32(name)?)
            };
            if len < 0 {
                if len != -1 || !nullable {
                    return Err(cursor.error(format!("{name}: invalid length {len}")));
                }
                Value::Null
            } else {
                let bytes = cursor.take(len as usize, name)?;
                if matches!(ty, Type::Str) {
                    let at = cursor.pos - bytes.len();
                    Value::Str(std::str::from_utf8(bytes).map_err(|_| DecodeError {
                        message: format!("{name}: not valid UTF-8"),
                        at,
                    })?)
                } else {
                    Value::Bytes(bytes)
                }
            }
        }
        Type::Array(element) => {
            let count = if flexible {
                i64::from(cursor.uvarint(name)?) - 1
            } else {
                i64::from(cursor.i32(name)?)
            };
            if count < 0 {
                if count != -1 || !nullable {
                    return Err(cursor.error(format!("{name}: invalid array count {count}")));
                }
                return Ok(Value::Null);
            }
            // Every element takes at least one byte: a count beyond the bytes left is corrupt,
            // and must not reserve memory.
            if count as usize > cursor.remaining() {
                return Err(cursor.error(format!(
                    "{name}: array of {count} elements in {} bytes",
                    cursor.remaining()
                )));
            }
            let mut items = Vec::with_capacity(count as usize);
            for _ in 0..count {
                // Elements are never null; only the array itself may be.
                items.push(read_value(
                    field, element, version, flexible, false, cursor,
                )?);
            }
            Value::Array(items)
        }
        Type::Struct(fields) => {
            if nullable {
                // A nullable struct is preceded by a presence byte (-1 = null).
                if cursor.take(1, name)?[0] as i8 == -1 {
                    return Ok(Value::Null);
                }
            }
            Value::Struct(read_struct(fields, version, flexible, cursor)?)
        }
    })
}

/// Whether a tagged field's value is its default (then Kafka's JSON converters leave it out).
fn is_default(field: &Field, value: &Value<'_>) -> bool {
    let d = field.default;
    match value {
        Value::Null => d == "null",
        Value::Bool(b) => *b == (d == "true"),
        Value::Int(i) => {
            let parsed = if let Some(hex) = d.strip_prefix("0x") {
                i64::from_str_radix(hex, 16).ok()
            } else if d.is_empty() {
                Some(0)
            } else {
                d.parse().ok()
            };
            parsed == Some(*i)
        }
        Value::Float(x) => *x == d.parse().unwrap_or(0.0),
        Value::Str(s) => d != "null" && *s == d,
        Value::Bytes(b) => d != "null" && b.is_empty(),
        Value::Uuid(u) => *u == [0; 16],
        Value::Array(items) => d != "null" && items.is_empty(),
        Value::Struct(_) => false,
    }
}

/// The snake-case upper name Kafka gives a record type (`TopicRecord` -> `TOPIC_RECORD`): an
/// underscore before each capital that follows a lower-case letter or digit.
pub fn upper_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut prev_capital = true;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if !prev_capital {
                out.push('_');
            }
            out.push(c);
            prev_capital = true;
        } else {
            out.push(c.to_ascii_uppercase());
            prev_capital = false;
        }
    }
    out
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64(out: &mut String, bytes: &[u8], alphabet: &[u8; 64], pad: bool) {
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
}

/// A UUID as Kafka's `Uuid.toString` writes it: base64url of the 16 bytes, without padding.
pub fn uuid_string(uuid: &[u8; 16]) -> String {
    let mut out = String::with_capacity(22);
    base64(&mut out, uuid, BASE64_URL, false);
    out
}

/// Bytes as Jackson writes a binary node: standard base64 with padding.
#[cfg(test)]
pub fn base64_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    base64(&mut out, bytes, BASE64, true);
    out
}

/// A JSON string literal, escaped as Jackson escapes (quotes, backslash, control characters).
pub fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A double as Java's `Double.toString` writes it (what Jackson prints for a double node).
fn java_double(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("\"NaN\"");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else if x == 0.0 || (1e-3..1e7).contains(&x.abs()) {
        let s = format!("{x}");
        out.push_str(&s);
        if !s.contains('.') {
            out.push_str(".0");
        }
    } else {
        let s = format!("{x:e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        out.push_str(mantissa);
        if !mantissa.contains('.') {
            out.push_str(".0");
        }
        out.push('E');
        out.push_str(exponent);
    }
}

/// Writes a value as compact JSON, in Kafka's JSON converters' form.
pub fn to_json(out: &mut String, value: &Value<'_>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(x) => java_double(out, *x),
        Value::Str(s) => json_string(out, s),
        Value::Bytes(b) => {
            out.push('"');
            base64(out, b, BASE64, true);
            out.push('"');
        }
        Value::Uuid(u) => {
            out.push('"');
            base64(out, u, BASE64_URL, false);
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                to_json(out, item);
            }
            out.push(']');
        }
        Value::Struct(s) => struct_json(out, s),
    }
}

pub fn struct_json(out: &mut String, s: &Struct<'_>) {
    out.push('{');
    for (i, (name, value)) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(out, name);
        out.push(':');
        to_json(out, value);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    static NESTED: Message = Message {
        name: "Nested",
        api_key: -1,
        valid: V(0, 2),
        flexible: V(2, MAX),
        fields: &[
            f("id", Type::Int32, V(0, MAX)),
            f("name", Type::Str, V(0, MAX)).nullable(V(1, MAX)),
            f("extra", Type::Int64, V(1, 1)).default("-1"),
            f(
                "items",
                Type::Array(&Type::Struct(&[f("p", Type::Int16, V(0, MAX))])),
                V(0, MAX),
            ),
            f("note", Type::Str, NONE)
                .tagged(0, V(2, MAX))
                .default("null")
                .nullable(V(2, MAX)),
            f("level", Type::Int32, NONE)
                .tagged(1, V(2, MAX))
                .default("-1"),
        ],
    };

    fn json(s: &Struct<'_>) -> String {
        let mut out = String::new();
        struct_json(&mut out, s);
        out
    }

    #[test]
    fn fixed_versions() {
        let mut b = vec![0, 0, 0, 7, 0, 2, b'a', b'b'];
        b.extend_from_slice(&5i64.to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 1, 0, 9]);
        let s = decode(&NESTED, 1, &mut Cursor::new(&b)).unwrap();
        assert_eq!(
            json(&s),
            r#"{"id":7,"name":"ab","extra":5,"items":[{"p":9}]}"#
        );
        // Version 0: no `extra`; the null name is invalid there.
        let b0 = [0, 0, 0, 7, 0xff, 0xff, 0, 0, 0, 0];
        assert!(decode(&NESTED, 0, &mut Cursor::new(&b0)).is_err());
        let b1 = [0, 0, 0, 7, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let s = decode(&NESTED, 1, &mut Cursor::new(&b1)).unwrap();
        assert_eq!(json(&s), r#"{"id":7,"name":null,"extra":0,"items":[]}"#);
    }

    #[test]
    fn flexible_versions_and_tags() {
        // id, compact name "x", one item (its own empty tag section), then tags: 1 -> level 3,
        // 5 -> unknown (skipped).
        let b = [
            0, 0, 0, 1, 2, b'x', 2, 0, 4, 0, 2, 1, 4, 0, 0, 0, 3, 5, 1, 0xaa,
        ];
        let s = decode(&NESTED, 2, &mut Cursor::new(&b)).unwrap();
        assert_eq!(
            json(&s),
            r#"{"id":1,"name":"x","items":[{"p":4}],"level":3}"#
        );
        // A tagged field at its default is left out, as Kafka's JSON converters leave it.
        let b = [0, 0, 0, 1, 0, 1, 0, 1, 1, 4, 0xff, 0xff, 0xff, 0xff];
        let s = decode(&NESTED, 2, &mut Cursor::new(&b)).unwrap();
        assert_eq!(json(&s), r#"{"id":1,"name":null,"items":[]}"#);
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        for len in 0..12 {
            let b = [0u8, 0, 0, 1, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0, 0];
            let _ = decode(&NESTED, 1, &mut Cursor::new(&b[..len]));
        }
        // A huge array count must not allocate.
        let b = [0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff];
        let e = decode(&NESTED, 0, &mut Cursor::new(&b)).unwrap_err();
        assert!(e.message.contains("array"), "{e}");
    }

    static NULLABLE_ARRAY: Message = Message {
        name: "NullableArray",
        api_key: -1,
        valid: V(0, 0),
        flexible: NONE,
        fields: &[f(
            "items",
            Type::Array(&Type::Struct(&[f("p", Type::Int16, V(0, MAX))])),
            V(0, MAX),
        )
        .nullable(V(0, MAX))],
    };

    #[test]
    fn elements_of_a_nullable_array_are_not_nullable() {
        let b = [0, 0, 0, 2, 0, 1, 0, 2];
        let s = decode(&NULLABLE_ARRAY, 0, &mut Cursor::new(&b)).unwrap();
        assert_eq!(json(&s), r#"{"items":[{"p":1},{"p":2}]}"#);
        let b = [0xff, 0xff, 0xff, 0xff];
        let s = decode(&NULLABLE_ARRAY, 0, &mut Cursor::new(&b)).unwrap();
        assert_eq!(json(&s), r#"{"items":null}"#);
    }

    #[test]
    fn names_and_encodings() {
        assert_eq!(upper_snake("TopicRecord"), "TOPIC_RECORD");
        assert_eq!(
            upper_snake("ZkMigrationStateRecord"),
            "ZK_MIGRATION_STATE_RECORD"
        );
        assert_eq!(uuid_string(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(base64_string(b"ab"), "YWI=");
        let mut out = String::new();
        java_double(&mut out, 100.0);
        java_double(&mut out, 1e10);
        assert_eq!(out, "100.01.0E10");
    }
}
