//! Tests of the Protobuf decoder: payloads framed by Confluent's serializer, compared with
//! what Confluent's deserializer and the protobuf runtime decode them to
//! (`tests/values/protobuf/fixtures.json`, written by `tests/values/make_fixtures.py`), and
//! hostile bytes.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use serde_json::{json, Value as Json};

use super::*;
use crate::values::decoder::SchemaType;

const FIXTURES: &str = include_str!("../../../tests/values/protobuf/fixtures.json");

/// One value of an Arrow array as the fixtures' plain JSON (maps as sorted `[key, value]`
/// pairs, binary as hex, timestamps and durations as their integer).
pub(crate) fn to_json(array: &dyn Array, i: usize) -> Json {
    if array.is_null(i) {
        return Json::Null;
    }
    match array.data_type() {
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let mut out = serde_json::Map::new();
            for (f, column) in fields.iter().zip(s.columns()) {
                out.insert(f.name().clone(), to_json(column.as_ref(), i));
            }
            Json::Object(out)
        }
        DataType::List(_) => {
            let l = array.as_list::<i32>().value(i);
            Json::Array((0..l.len()).map(|j| to_json(l.as_ref(), j)).collect())
        }
        DataType::Map(_, _) => {
            let m = array.as_map().value(i);
            (0..m.len())
                .map(|j| {
                    json!([
                        to_json(m.column(0).as_ref(), j),
                        to_json(m.column(1).as_ref(), j)
                    ])
                })
                .collect()
        }
        DataType::Boolean => json!(array.as_boolean().value(i)),
        DataType::Int32 => json!(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt32 => json!(array.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => json!(array.as_primitive::<UInt64Type>().value(i)),
        DataType::Float32 => json!(f64::from(array.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => json!(array.as_primitive::<Float64Type>().value(i)),
        DataType::Date32 => json!(array.as_primitive::<Date32Type>().value(i)),
        DataType::Utf8 => json!(array.as_string::<i32>().value(i)),
        DataType::Binary => {
            let b = array.as_binary::<i32>().value(i);
            json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>())
        }
        DataType::Timestamp(_, _) => {
            json!(array.as_primitive::<TimestampMicrosecondType>().value(i))
        }
        DataType::Duration(_) => json!(array.as_primitive::<DurationMicrosecondType>().value(i)),
        other => panic!("no JSON for {other}"),
    }
}

/// Writer schemas from a map.
pub(crate) struct Registry(pub HashMap<i64, Arc<SchemaText>>);

impl WriterSchemas for Registry {
    fn writer(&self, id: i64) -> Option<Arc<SchemaText>> {
        self.0.get(&id).cloned()
    }
}

fn protobuf(schema: &str, references: Vec<(String, String)>) -> SchemaText {
    SchemaText {
        schema_type: SchemaType::Protobuf,
        schema: schema.to_owned(),
        references,
    }
}

fn pairs(value: &Json) -> Vec<(String, String)> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_owned(),
                p[1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn zigzag_varint(bytes: &[u8], pos: &mut usize) -> i64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*pos];
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Confluent's framing taken off: (schema id, message indexes, body offset).
pub(crate) fn unframe(framed: &[u8]) -> (i64, Vec<i64>, usize) {
    assert_eq!(framed[0], 0, "magic byte");
    let id = i64::from(i32::from_be_bytes(framed[1..5].try_into().unwrap()));
    let mut pos = 5;
    let count = zigzag_varint(framed, &mut pos);
    let indexes = if count == 0 {
        vec![0]
    } else {
        (0..count)
            .map(|_| zigzag_varint(framed, &mut pos))
            .collect()
    };
    (id, indexes, pos)
}

fn fixture() -> (Json, Arc<Registry>) {
    let fixture: Json = serde_json::from_str(FIXTURES).unwrap();
    let registry = fixture["schemas"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, s)| {
            let text = protobuf(s["schema"].as_str().unwrap(), pairs(&s["references"]));
            (id.parse().unwrap(), Arc::new(text))
        })
        .collect();
    (fixture, Arc::new(Registry(registry)))
}

#[test]
fn decodes_what_confluents_serializer_wrote_as_the_runtime_does() {
    let (fixture, registry) = fixture();
    let cases = fixture["cases"].as_array().unwrap();
    let framed: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            let hex = c["framed"].as_str().unwrap();
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect();
    let unframed: Vec<(i64, Vec<i64>, usize)> = framed.iter().map(|f| unframe(f)).collect();
    let payloads: Vec<Option<Payload<'_>>> = framed
        .iter()
        .zip(&unframed)
        .map(|(f, (id, indexes, at))| {
            Some(Payload {
                bytes: &f[*at..],
                schema_id: Some(*id),
                message_indexes: indexes,
            })
        })
        .collect();
    // The reader as `.proto` text, and as the registry holds it (a base64 descriptor).
    let text = protobuf(
        fixture["reader_proto"].as_str().unwrap(),
        pairs(&fixture["reader_references"]),
    );
    let registered = registry.writer(3).unwrap();
    for reader in [&text, registered.as_ref()] {
        let decoder = decoder(reader, Some("fixtures.Order"), registry.clone()).unwrap();
        let decoded = decoder.decode(&payloads).unwrap();
        assert_eq!(decoded.array.data_type(), decoder.data_type());
        decoded.array.to_data().validate_full().unwrap();
        for (i, case) in cases.iter().enumerate() {
            if case["error"].as_bool().unwrap() {
                let why = decoded.errors[i].as_deref().unwrap();
                assert!(why.contains("fixtures.Other"), "{why}");
                assert!(decoded.array.is_null(i));
            } else {
                assert_eq!(decoded.errors[i], None);
                assert_eq!(
                    to_json(decoded.array.as_ref(), i),
                    case["expected"],
                    "case {i}"
                );
            }
        }
    }
}

#[test]
fn maps_types_as_documented() {
    let (fixture, registry) = fixture();
    let reader = protobuf(
        fixture["reader_proto"].as_str().unwrap(),
        pairs(&fixture["reader_references"]),
    );
    let decoder = decoder(&reader, None, registry).unwrap();
    let DataType::Struct(fields) = decoder.data_type() else {
        panic!("a struct")
    };
    let ty = |name: &str| fields.find(name).unwrap().1.data_type().clone();
    assert_eq!(ty("id"), DataType::Int64);
    assert_eq!(ty("status"), DataType::Utf8);
    assert_eq!(ty("big"), DataType::UInt64);
    assert_eq!(ty("blob"), DataType::Binary);
    assert_eq!(ty("note"), DataType::Utf8);
    assert_eq!(ty("score"), DataType::Int64);
    assert_eq!(
        ty("created"),
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        ty("ttl"),
        DataType::Duration(arrow_schema::TimeUnit::Microsecond)
    );
    assert!(matches!(ty("lines"), DataType::List(_)));
    assert!(matches!(ty("counters"), DataType::Map(_, false)));
    assert!(matches!(ty("cash"), DataType::Struct(_)));
}

fn simple(schema: &str) -> Arc<dyn PayloadDecoder> {
    decoder(
        &protobuf(schema, vec![]),
        None,
        Arc::new(Registry(HashMap::new())),
    )
    .unwrap()
}

fn decode_one(decoder: &dyn PayloadDecoder, bytes: &[u8]) -> (Json, Option<String>) {
    let decoded = decoder
        .decode(&[Some(Payload {
            bytes,
            schema_id: None,
            message_indexes: &[],
        })])
        .unwrap();
    decoded.array.to_data().validate_full().unwrap();
    (
        to_json(decoded.array.as_ref(), 0),
        decoded.errors[0].clone(),
    )
}

#[test]
fn bad_payloads_are_row_errors() {
    let d = simple(
        "syntax = \"proto3\"; message M { string s = 1; int64 n = 2; M child = 3; bytes b = 4; }",
    );
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("truncated varint", vec![0x10, 0xff]),
        ("truncated string", vec![0x0a, 0x05, b'a']),
        ("wire type 6", vec![0x0e, 1]),
        ("an end-group tag with no group", vec![0x0c]),
        ("an unknown group not closed", vec![0x2b, 0x30, 0x01]),
        ("invalid utf-8", vec![0x0a, 0x02, 0xff, 0xfe]),
        ("huge length", vec![0x22, 0xff, 0xff, 0xff, 0xff, 0x0f, 1]),
        ("field number 0", vec![0x00, 0x01]),
    ];
    // Nesting far past prost's limit of 100: `child { child { ... } }`.
    let mut deep = Vec::new();
    for _ in 0..10_000 {
        let mut outer = vec![0x1a];
        let mut len = deep.len();
        while len >= 0x80 {
            outer.push((len as u8) | 0x80);
            len >>= 7;
        }
        outer.push(len as u8);
        outer.extend_from_slice(&deep);
        deep = outer;
        if deep.len() > 30_000 {
            break;
        }
    }
    let mut all = bad;
    all.push(("deep nesting", deep));
    let payloads: Vec<Option<Payload<'_>>> = all
        .iter()
        .map(|(_, bytes)| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .chain([None])
        .collect();
    let decoded = d.decode(&payloads).unwrap();
    decoded.array.to_data().validate_full().unwrap();
    for (i, (what, _)) in all.iter().enumerate() {
        assert!(decoded.array.is_null(i), "{what}");
        assert!(decoded.errors[i].is_some(), "{what}");
    }
    let last = all.len();
    assert!(decoded.array.is_null(last));
    assert_eq!(decoded.errors[last], None, "a null payload is not an error");
    // A field of another wire type than its type's is an unknown field, as protobuf-java and
    // upb read it (Confluent's deserializers run them): skipped, not an error.
    let (value, error) = decode_one(d.as_ref(), &[0x0d, 1, 2, 3, 4, 0x10, 0x07]);
    assert_eq!(error, None);
    assert_eq!(
        (value["s"].clone(), value["n"].clone()),
        (json!(""), json!(7))
    );
    // And a good one beside them.
    let (value, error) = decode_one(d.as_ref(), &[0x0a, 0x01, b'x', 0x1a, 0x00]);
    assert_eq!(error, None);
    assert_eq!(value["s"], "x");
    // M inside M: the child is its protobuf JSON, as text.
    assert_eq!(value["child"], "{}");
}

#[test]
fn unknown_ids_and_indexes_are_row_errors() {
    let mut writers = HashMap::new();
    let avro = SchemaText {
        schema_type: SchemaType::Avro,
        schema: "\"string\"".into(),
        references: vec![],
    };
    writers.insert(4, Arc::new(avro));
    let broken = protobuf("syntax = \"proto3\"; message M { Missing m = 1; }", vec![]);
    writers.insert(5, Arc::new(broken));
    let d = decoder(
        &protobuf("syntax = \"proto3\"; message M { string s = 1; }", vec![]),
        None,
        Arc::new(Registry(writers)),
    )
    .unwrap();
    let payload = |id, indexes: &'static [i64]| {
        Some(Payload {
            bytes: &[],
            schema_id: id,
            message_indexes: indexes,
        })
    };
    let decoded = d
        .decode(&[
            payload(Some(9), &[0]),
            payload(None, &[3]),
            payload(None, &[0]),
        ])
        .unwrap();
    assert!(decoded.errors[0]
        .as_deref()
        .unwrap()
        .contains("schema id 9"));
    assert!(decoded.errors[1].as_deref().unwrap().contains("[3]"));
    assert_eq!(decoded.errors[2], None);
}

#[test]
fn recursive_and_dynamic_types_are_json_text() {
    let d = simple(
        "syntax = \"proto3\"; import \"google/protobuf/struct.proto\";\n\
         message Node { string name = 1; repeated Node kids = 2; google.protobuf.Struct attrs = 3; }",
    );
    let DataType::Struct(fields) = d.data_type() else {
        panic!()
    };
    assert_eq!(fields.find("attrs").unwrap().1.data_type(), &DataType::Utf8);
    // kids: Node inside Node, so a list of JSON text (each kid whole).
    let DataType::List(item) = fields.find("kids").unwrap().1.data_type() else {
        panic!()
    };
    assert_eq!(item.data_type(), &DataType::Utf8);
    // name "a", kids [{name "b", kids [{name "c"}]}]
    let c = [0x0a, 0x01, b'c'];
    let mut b = vec![0x0a, 0x01, b'b', 0x12, c.len() as u8];
    b.extend_from_slice(&c);
    let mut a = vec![0x0a, 0x01, b'a', 0x12, b.len() as u8];
    a.extend_from_slice(&b);
    let (value, error) = decode_one(d.as_ref(), &a);
    assert_eq!(error, None);
    assert_eq!(value["name"], "a");
    let text = value["kids"][0].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Json>(text).unwrap(),
        json!({"name": "b", "kids": [{"name": "c"}]})
    );
}

#[test]
fn timestamps_out_of_range_are_row_errors() {
    let d = simple(
        "syntax = \"proto3\"; import \"google/protobuf/timestamp.proto\";\n\
         message M { google.protobuf.Timestamp at = 1; }",
    );
    // at { seconds: i64::MAX }
    let mut body = vec![0x08];
    body.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    let mut bytes = vec![0x0a, body.len() as u8];
    bytes.extend_from_slice(&body);
    let (value, error) = decode_one(d.as_ref(), &bytes);
    assert_eq!(value, Json::Null);
    assert!(error.unwrap().contains("out of range"));
}

#[test]
fn proto2_presence_and_unknown_enum_numbers() {
    let d = simple(
        "syntax = \"proto2\"; message M { optional int32 a = 1; optional string b = 2 [default = \"d\"];\n\
         enum E { X = 1; } optional E e = 3; }",
    );
    let (value, error) = decode_one(d.as_ref(), &[0x08, 0x00]);
    assert_eq!(error, None);
    assert_eq!(value, json!({"a": 0, "b": null, "e": null}));
    // A closed (proto2) enum keeps an unknown number as an unknown field: absent.
    let (value, _) = decode_one(d.as_ref(), &[0x18, 0x05]);
    assert_eq!(value["e"], Json::Null);
    let open = simple("syntax = \"proto3\"; message M { enum E { Z = 0; } E e = 1; }");
    let (value, _) = decode_one(open.as_ref(), &[0x08, 0x05]);
    assert_eq!(value["e"], "5");
}
