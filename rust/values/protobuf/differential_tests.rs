//! The decoder against its oracle (`prost-reflect` dynamic messages, then columns) on random
//! schemas and random messages: a writer version and a reader version evolved from it (fields
//! dropped, added, renamed, retyped to a type of the same wire type or not), messages of the
//! writer version encoded by `prost-reflect`, merged by concatenation (the last value wins, an
//! embedded message merges), and cut or flipped into hostile bytes. Every payload must decode
//! to the same row (or be refused by both), except those the Protobuf runtimes read otherwise
//! than the oracle: which ones, the test judges from the wire and the reader's schema
//! (`runtimes_differ`), never from the decoder under test.

use std::sync::Arc;

use proptest::prelude::*;
use prost::Message;
use prost_reflect::{DynamicMessage, Kind, MapKey, MessageDescriptor, Value};

use super::*;
use crate::values::wanted_tests::{agrees, random_wanted};

/// A small deterministic generator (xorshift), seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const SCALARS: &[&str] = &[
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
    "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes", "E",
];
const WELL_KNOWN: &[&str] = &[
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
    "google.protobuf.Int64Value",
    "google.protobuf.StringValue",
    "google.protobuf.BoolValue",
    "google.protobuf.Struct",
];
const KEYS: &[&str] = &[
    "int32", "int64", "uint32", "sint64", "fixed32", "bool", "string",
];

/// Types of the same wire type as `ty`, one of which a reader may read it as.
fn same_wire(ty: &str) -> &'static [&'static str] {
    match ty {
        "int32" | "int64" | "uint32" | "uint64" | "bool" | "E" => {
            &["int32", "int64", "uint32", "uint64", "bool", "E"]
        }
        "sint32" | "sint64" => &["sint32", "sint64"],
        "fixed32" | "sfixed32" | "float" => &["fixed32", "sfixed32", "float"],
        "fixed64" | "sfixed64" | "double" => &["fixed64", "sfixed64", "double"],
        "string" | "bytes" => &["string", "bytes"],
        _ => &[],
    }
}

#[derive(Clone, Debug)]
struct FieldDef {
    name: String,
    number: u32,
    ty: String,
    /// "", "optional", "repeated", or "map<K," (the type is the map's value).
    label: String,
    oneof: Option<usize>,
}

#[derive(Clone, Debug)]
struct Schema {
    proto2: bool,
    /// Message `M{i}` has fields `messages[i]`; a field of message type names a later one.
    messages: Vec<Vec<FieldDef>>,
}

impl Schema {
    fn random(rng: &mut Rng) -> Schema {
        let proto2 = rng.chance(30);
        let count = 1 + rng.below(3) as usize;
        let mut messages = Vec::new();
        for m in 0..count {
            let mut fields: Vec<FieldDef> = Vec::new();
            let mut numbers: Vec<u32> = Vec::new();
            let n = 1 + rng.below(8);
            let mut oneofs = 0;
            for f in 0..n {
                let number = loop {
                    let candidate = match rng.below(10) {
                        0 => 1000 + rng.below(5) as u32,
                        1 => 70_000 + rng.below(3) as u32,
                        _ => 1 + rng.below(30) as u32,
                    };
                    if !numbers.contains(&candidate) {
                        break candidate;
                    }
                };
                numbers.push(number);
                let nested = m + 1 < count && rng.chance(25);
                let ty = if nested {
                    format!("M{}", m + 1 + rng.below((count - m - 1) as u64) as usize)
                } else if rng.chance(15) {
                    rng.pick(WELL_KNOWN).to_string()
                } else {
                    rng.pick(SCALARS).to_string()
                };
                let mut label = match rng.below(10) {
                    0..=1 => "repeated".to_string(),
                    2 => format!("map<{},", rng.pick(KEYS)),
                    3 if !proto2 => "optional".to_string(),
                    _ if proto2 => "optional".to_string(),
                    _ => String::new(),
                };
                let mut oneof = None;
                if label.is_empty() && rng.chance(30) {
                    if oneofs == 0 || rng.chance(50) {
                        oneofs += 1;
                    }
                    oneof = Some(oneofs - 1);
                } else if proto2 && label == "optional" && rng.chance(20) {
                    label.clear();
                    oneofs += 1;
                    oneof = Some(oneofs - 1);
                }
                fields.push(FieldDef {
                    name: format!("f{f}"),
                    number,
                    ty,
                    label,
                    oneof,
                });
            }
            messages.push(fields);
        }
        Schema { proto2, messages }
    }

    /// A reader version: fields dropped, renamed, retyped, added.
    fn evolve(&self, rng: &mut Rng) -> Schema {
        let mut out = self.clone();
        for (m, fields) in out.messages.iter_mut().enumerate() {
            fields.retain(|_| !rng.chance(15));
            for f in fields.iter_mut() {
                if rng.chance(10) {
                    f.name = format!("{}_renamed", f.name);
                }
                let plain = !f.label.starts_with("map");
                if plain && rng.chance(10) {
                    let options = same_wire(&f.ty);
                    if !options.is_empty() {
                        f.ty = rng.pick(options).to_string();
                    } else if rng.chance(30) {
                        // Another wire type altogether: the runtimes skip it as unknown.
                        f.ty = "int64".into();
                    }
                }
                if f.ty == "E" && f.label == "repeated" && rng.chance(20) {
                    // A list written, one value read: the last one wins.
                    f.label = if self.proto2 {
                        "optional".into()
                    } else {
                        String::new()
                    };
                }
            }
            for k in 0..rng.below(3) {
                let number = 200 + (m as u32) * 10 + k as u32;
                fields.push(FieldDef {
                    name: format!("added{k}"),
                    number,
                    ty: rng.pick(SCALARS).to_string(),
                    label: if rng.chance(30) {
                        "repeated".into()
                    } else if self.proto2 {
                        "optional".into()
                    } else {
                        String::new()
                    },
                    oneof: None,
                });
            }
        }
        out
    }

    fn text(&self) -> String {
        let mut s = String::new();
        s += if self.proto2 {
            "syntax = \"proto2\";\n"
        } else {
            "syntax = \"proto3\";\n"
        };
        s += "package diff;\n";
        for import in ["timestamp", "duration", "wrappers", "struct"] {
            s += &format!("import \"google/protobuf/{import}.proto\";\n");
        }
        s += "enum E { E0 = 0; E1 = 1; E2 = 2; E5 = 5; }\n";
        for (m, fields) in self.messages.iter().enumerate() {
            s += &format!("message M{m} {{\n");
            let mut oneofs: Vec<usize> = fields.iter().filter_map(|f| f.oneof).collect();
            oneofs.dedup();
            for f in fields.iter().filter(|f| f.oneof.is_none()) {
                let ty = &f.ty;
                if let Some(key) = f.label.strip_prefix("map<") {
                    let ty = if ty == "google.protobuf.Struct" {
                        "string"
                    } else {
                        ty
                    };
                    s += &format!("  map<{key} {ty}> {} = {};\n", f.name, f.number);
                } else {
                    s += &format!("  {} {ty} {} = {};\n", f.label, f.name, f.number);
                }
            }
            let mut seen = Vec::new();
            for g in oneofs {
                if seen.contains(&g) {
                    continue;
                }
                seen.push(g);
                s += &format!("  oneof o{g} {{\n");
                for f in fields.iter().filter(|f| f.oneof == Some(g)) {
                    s += &format!("    {} {} = {};\n", f.ty, f.name, f.number);
                }
                s += "  }\n";
            }
            s += "}\n";
        }
        s
    }
}

fn compile(text: &str) -> MessageDescriptor {
    let schema = SchemaText::new(SchemaType::Protobuf, text);
    let file = schema::compile(&schema).unwrap_or_else(|e| panic!("{e}\n{text}"));
    schema::reader_message(&file, Some("diff.M0")).unwrap()
}

fn scalar(kind: &Kind, rng: &mut Rng) -> Value {
    let small = rng.chance(50);
    let n = if small { rng.below(300) } else { rng.next() };
    match kind {
        Kind::Double => Value::F64(if small {
            n as f64 / 4.0
        } else {
            f64::from_bits(n)
        }),
        Kind::Float => Value::F32(if small {
            n as f32 / 4.0
        } else {
            f32::from_bits(n as u32)
        }),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(n as i32),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(n as i64),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(n as u32),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(n),
        Kind::Bool => Value::Bool(n % 2 == 0),
        Kind::String => {
            let s: String = (0..rng.below(6))
                .map(|_| *rng.pick(&['a', 'z', 'é', '☃', '0']))
                .collect();
            Value::String(s)
        }
        Kind::Bytes => Value::Bytes((0..rng.below(6)).map(|_| rng.next() as u8).collect()),
        Kind::Enum(_) => Value::EnumNumber(*rng.pick(&[0, 1, 2, 5])),
        Kind::Message(m) => Value::Message(random_message(m, rng, 3)),
    }
}

fn map_key(kind: &Kind, rng: &mut Rng) -> MapKey {
    match scalar(kind, rng) {
        Value::Bool(b) => MapKey::Bool(b),
        Value::I32(v) => MapKey::I32(v % 4),
        Value::I64(v) => MapKey::I64(v % 4),
        Value::U32(v) => MapKey::U32(v % 4),
        Value::U64(v) => MapKey::U64(v % 4),
        Value::String(s) => MapKey::String(s.chars().take(1).collect()),
        other => panic!("not a key: {other:?}"),
    }
}

fn random_message(desc: &MessageDescriptor, rng: &mut Rng, depth: u32) -> DynamicMessage {
    let mut m = DynamicMessage::new(desc.clone());
    if depth == 0 {
        return m;
    }
    match desc.full_name() {
        "google.protobuf.Timestamp" | "google.protobuf.Duration" => {
            m.set_field_by_number(
                1,
                Value::I64(rng.below(4_000_000_000) as i64 - 2_000_000_000),
            );
            m.set_field_by_number(2, Value::I32(rng.below(1_000_000_000) as i32));
            if rng.chance(3) {
                m.set_field_by_number(1, Value::I64(i64::MAX));
            }
            return m;
        }
        "google.protobuf.Struct" => return m,
        _ => {}
    }
    for field in desc.fields() {
        if !rng.chance(60) {
            continue;
        }
        let kind = field.kind();
        let value = if field.is_map() {
            let entry = kind.as_message().unwrap();
            let (k, v) = (entry.map_entry_key_field(), entry.map_entry_value_field());
            let entries = (0..rng.below(4))
                .map(|_| (map_key(&k.kind(), rng), value_of(&v.kind(), rng, depth)))
                .collect();
            Value::Map(entries)
        } else if field.is_list() {
            Value::List(
                (0..rng.below(4))
                    .map(|_| value_of(&kind, rng, depth))
                    .collect(),
            )
        } else {
            value_of(&kind, rng, depth)
        };
        m.set_field(&field, value);
    }
    m
}

fn value_of(kind: &Kind, rng: &mut Rng, depth: u32) -> Value {
    match kind {
        Kind::Message(m) => Value::Message(random_message(m, rng, depth - 1)),
        k => scalar(k, rng),
    }
}

/// Payloads of `writer` messages: each one or two messages encoded and concatenated, some cut
/// short or with a byte changed.
fn payloads(writer: &MessageDescriptor, rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..12)
        .map(|_| {
            let mut bytes = random_message(writer, rng, 3).encode_to_vec();
            if rng.chance(30) {
                bytes.extend(random_message(writer, rng, 3).encode_to_vec());
            }
            if !bytes.is_empty() && rng.chance(15) {
                let at = rng.below(bytes.len() as u64) as usize;
                if rng.chance(50) {
                    bytes.truncate(at);
                } else {
                    bytes[at] ^= 1 << rng.below(8);
                }
            }
            bytes
        })
        .collect()
}

/// The wire type a field of `kind` is written with.
fn wire_of(kind: &Kind) -> u64 {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 1,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 5,
        Kind::String | Kind::Bytes | Kind::Message(_) => 2,
        _ => 0,
    }
}

/// The test's own reading of a payload's wire against the reader's message, with nothing of
/// the decoder's: where it reads.
struct Wire<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Wire<'_> {
    /// A varint; `Err(true)` for a tenth byte with bits past the 64th (the runtimes drop
    /// them, prost refuses the payload), `Err(false)` where the bytes end.
    fn varint(&mut self) -> Result<u64, bool> {
        let mut v = 0u64;
        for i in 0..10 {
            let &b = self.bytes.get(self.pos).ok_or(false)?;
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(true);
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(false)
    }

    fn take(&mut self, n: u64) -> Option<&[u8]> {
        let end = self.pos.checked_add(usize::try_from(n).ok()?)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }
}

/// Whether the Protobuf runtimes (protobuf-java, upb) read `bytes` as a `desc` otherwise than
/// `prost-reflect`, the oracle, does, judged from the wire and the reader's descriptor alone:
/// a field of the reader written with another wire type (the runtimes skip it as unknown;
/// prost refuses it), a varint with bits past the 64th, a closed enum's undeclared number in
/// a field holding one value or a map (the runtimes keep it as unknown; prost keeps the
/// number), a map key written twice (only the last entry counts for prost; the runtimes check
/// every entry's value), nesting near the depth limit (counted differently). Where the bytes
/// stop making sense the reading stops: the rest is for both decoders to refuse.
fn runtimes_differ(desc: &MessageDescriptor, bytes: &[u8], depth: usize) -> bool {
    use crate::values::protobuf::wire::MAX_DEPTH;
    if depth + 4 >= MAX_DEPTH {
        return true;
    }
    let mut w = Wire { bytes, pos: 0 };
    let mut map_keys: HashMap<u32, Vec<Vec<u8>>> = HashMap::new();
    while w.pos < bytes.len() {
        let key = match w.varint() {
            Ok(k) => k,
            Err(overlong) => return overlong,
        };
        let (number, wire) = ((key >> 3) as u32, key & 7);
        let field = desc.get_field(number);
        if let Some(f) = &field {
            let kind = f.kind();
            let packed = f.is_list() && wire == 2 && wire_of(&kind) != 2;
            if wire != wire_of(&kind) && !packed {
                return true;
            }
        }
        match wire {
            0 => {
                let v = match w.varint() {
                    Ok(v) => v,
                    Err(overlong) => return overlong,
                };
                if let Some(Kind::Enum(e)) = field.as_ref().map(|f| f.kind()) {
                    let closed = e.parent_file().syntax() == prost_reflect::Syntax::Proto2;
                    let one = !field.as_ref().is_some_and(|f| f.is_list());
                    if closed && one && e.get_value(v as i32).is_none() {
                        return true;
                    }
                }
            }
            1 => {
                if w.take(8).is_none() {
                    return false;
                }
            }
            5 => {
                if w.take(4).is_none() {
                    return false;
                }
            }
            2 => {
                let Ok(len) = w.varint() else { return false };
                let Some(inner) = w.take(len) else {
                    return false;
                };
                let Some(f) = &field else { continue };
                match f.kind() {
                    Kind::Message(m) => {
                        if m.is_map_entry() {
                            if entry_differs(&m, inner, depth + 1) {
                                return true;
                            }
                            let key = entry_key(inner);
                            let seen = map_keys.entry(number).or_default();
                            if seen.contains(&key) {
                                return true;
                            }
                            seen.push(key);
                        } else if runtimes_differ(&m, inner, depth + 1) {
                            return true;
                        }
                    }
                    kind if f.is_list() && wire_of(&kind) == 0 => {
                        // Packed varints: each one checked as above.
                        let mut p = Wire {
                            bytes: inner,
                            pos: 0,
                        };
                        while p.pos < inner.len() {
                            match p.varint() {
                                Ok(_) => {}
                                Err(overlong) => return overlong,
                            }
                        }
                    }
                    _ => {}
                }
            }
            // Groups and the rest: the oracle and the decoder both read or both refuse
            // them; this reading stops.
            _ => return false,
        }
    }
    false
}

/// A map entry: its fields as a message's, a closed enum value of any number the enum does
/// not declare, and the entry's own fields of another wire type.
fn entry_differs(entry: &MessageDescriptor, bytes: &[u8], depth: usize) -> bool {
    if runtimes_differ(entry, bytes, depth) {
        return true;
    }
    let value = entry.map_entry_value_field();
    if let Kind::Enum(e) = value.kind() {
        let closed = e.parent_file().syntax() == prost_reflect::Syntax::Proto2;
        let mut w = Wire { bytes, pos: 0 };
        while let Ok(key) = w.varint() {
            match key & 7 {
                0 => match w.varint() {
                    Ok(v) if key >> 3 == 2 && closed && e.get_value(v as i32).is_none() => {
                        return true
                    }
                    Ok(_) => {}
                    Err(_) => break,
                },
                1 if w.take(8).is_some() => {}
                5 if w.take(4).is_some() => {}
                2 => match w.varint().ok().and_then(|n| w.take(n)) {
                    Some(_) => {}
                    None => break,
                },
                _ => break,
            }
        }
    }
    false
}

/// The bytes of a map entry's key field (field 1), the last one written; none for a
/// missing key (the default).
fn entry_key(bytes: &[u8]) -> Vec<u8> {
    let mut w = Wire { bytes, pos: 0 };
    let mut out = Vec::new();
    while let Ok(key) = w.varint() {
        let start = w.pos;
        let ok = match key & 7 {
            0 => w.varint().is_ok(),
            1 => w.take(8).is_some(),
            5 => w.take(4).is_some(),
            2 => w.varint().ok().and_then(|n| w.take(n)).is_some(),
            _ => false,
        };
        if !ok {
            break;
        }
        if key >> 3 == 1 {
            out = bytes[start..w.pos].to_vec();
        }
    }
    out
}

/// Decodes `payloads` with the decoder and the oracle; the number of payloads compared.
/// Which payloads are not compared the test decides from the wire and the reader's schema
/// (`runtimes_differ`), not the decoder under test.
fn compare(reader_text: &str, payloads: &[Vec<u8>]) -> usize {
    let schema = SchemaText::new(SchemaType::Protobuf, reader_text);
    let decoder = ProtobufDecoder::new(&schema, Some("diff.M0"), Arc::new(HashMap::new()))
        .unwrap_or_else(|e| panic!("{e}\n{reader_text}"));
    let reader = compile(reader_text);
    let framed: Vec<Option<Payload<'_>>> = payloads
        .iter()
        .map(|bytes| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .chain([None])
        .collect();
    let differ: Vec<bool> = framed
        .iter()
        .map(|p| p.is_some_and(|p| runtimes_differ(&reader, p.bytes, 0)))
        .collect();
    // Twice: the builders kept from the first batch must give the same second one.
    for _ in 0..2 {
        let ours = decoder.decode(&framed).unwrap();
        let oracle = decoder.oracle(&framed).unwrap();
        ours.array.to_data().validate_full().unwrap();
        assert_eq!(ours.array.data_type(), oracle.array.data_type());
        assert_eq!(ours.array.len(), framed.len());
        for i in 0..framed.len() {
            if differ[i] {
                continue;
            }
            let bytes = framed[i].map(|p| p.bytes);
            assert_eq!(
                ours.errors[i].is_some(),
                oracle.errors[i].is_some(),
                "payload {i} {bytes:02x?}: ours {:?}, the oracle's {:?}\n{reader_text}",
                ours.errors[i],
                oracle.errors[i]
            );
            let (a, b) = (ours.array.slice(i, 1), oracle.array.slice(i, 1));
            assert!(
                a.to_data() == b.to_data(),
                "payload {i} {bytes:02x?}:\nours   {a:?}\noracle {b:?}\n{reader_text}"
            );
        }
    }
    differ.iter().filter(|d| !**d).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_decoder_reads_what_the_oracle_reads(seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let writer = Schema::random(&mut rng);
        let reader = writer.evolve(&mut rng);
        let writer_desc = compile(&writer.text());
        let payloads = payloads(&writer_desc, &mut rng);
        // The writer's own version, then the reader's evolved one.
        compare(&writer.text(), &payloads);
        compare(&reader.text(), &payloads);
    }
}

#[test]
fn most_payloads_are_compared() {
    // For the writer's own schema and for each evolved reader schema: payloads the runtimes
    // read otherwise than the oracle (not compared) are the exception.
    let mut compared = [0, 0];
    let mut total = [0, 0];
    for seed in 1..40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let writer = Schema::random(&mut rng);
        let reader = writer.evolve(&mut rng);
        let writer_desc = compile(&writer.text());
        let payloads = payloads(&writer_desc, &mut rng);
        for (k, schema) in [&writer, &reader].into_iter().enumerate() {
            compared[k] += compare(&schema.text(), &payloads);
            total[k] += payloads.len() + 1;
        }
    }
    assert!(
        compared[0] * 10 >= total[0] * 9,
        "writer: {compared:?} of {total:?}"
    );
    assert!(
        compared[1] * 10 >= total[1] * 9,
        "reader: {compared:?} of {total:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// A decoder building only some fields (Spark's pruning) reads what the whole decoder
    /// reads of them: what it refuses the whole one refuses, and where the whole one reads a
    /// payload it reads the same parts of it (a field left out is not checked, so a payload
    /// bad only there reads).
    #[test]
    fn a_pruned_decoder_reads_the_parts_the_whole_one_reads(seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let writer = Schema::random(&mut rng);
        let reader = writer.evolve(&mut rng);
        let payloads = payloads(&compile(&writer.text()), &mut rng);
        let schema = SchemaText::new(SchemaType::Protobuf, reader.text());
        let whole = ProtobufDecoder::new(&schema, Some("diff.M0"), Arc::new(HashMap::new()))
            .unwrap();
        let wanted = random_wanted(whole.data_type(), &mut |n| rng.below(n));
        let pruned = ProtobufDecoder::pruned(
            &schema, Some("diff.M0"), Arc::new(HashMap::new()), &wanted,
        ).unwrap();
        let framed: Vec<Option<Payload<'_>>> = payloads
            .iter()
            .map(|bytes| Some(Payload { bytes, schema_id: None, message_indexes: &[] }))
            .collect();
        let (a, b) = (whole.decode(&framed).unwrap(), pruned.decode(&framed).unwrap());
        let shown = |i: usize| format!("payload {i} {:02x?}\n{}", payloads[i], reader.text());
        agrees(&a, &b, &wanted, &shown).map_err(TestCaseError::fail)?;
    }
}
