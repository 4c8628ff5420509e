//! Tests of the JSON Schema decoder: payloads framed by Confluent's JSONSerializer, compared
//! with what the json module reads (`tests/values/json/fixtures.json`, written by
//! `tests/values/make_fixtures.py`); bad payloads; schema ids; and kafkalog's decoder against
//! its oracle (serde_json and arrow-json, `oracle.rs`) on generated schemas and payloads.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use proptest::prelude::*;
use serde_json::{json, Value as Json};

use super::*;

const FIXTURES: &str = include_str!("../../../tests/values/json/fixtures.json");

/// One value of an Arrow array as plain JSON (timestamps and dates as their integer).
fn to_json(array: &dyn Array, i: usize) -> Json {
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
        DataType::Boolean => json!(array.as_boolean().value(i)),
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(i)),
        DataType::Float64 => json!(array.as_primitive::<Float64Type>().value(i)),
        DataType::Date32 => json!(array.as_primitive::<Date32Type>().value(i)),
        DataType::Utf8 => json!(array.as_string::<i32>().value(i)),
        DataType::Timestamp(_, _) => {
            json!(array.as_primitive::<TimestampMicrosecondType>().value(i))
        }
        other => panic!("no JSON for {other}"),
    }
}

/// Equal as the fixtures mean it: numbers by value (`7` is `7.0`).
fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn json_schema(schema: &str, references: Vec<(String, String)>) -> SchemaText {
    SchemaText {
        schema_type: SchemaType::Json,
        schema: schema.to_owned(),
        references,
    }
}

fn no_writers() -> Arc<dyn WriterSchemas> {
    Arc::new(HashMap::<i64, Arc<SchemaText>>::new())
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn payload(bytes: &[u8]) -> Option<Payload<'_>> {
    Some(Payload {
        bytes,
        schema_id: None,
        message_indexes: &[],
    })
}

#[test]
fn decodes_what_confluents_serializer_wrote_as_the_json_module_does() {
    decodes_fixtures(&[]);
}

/// The same without the reader's JSON-text properties (the oracle's other way).
#[test]
fn decodes_fixtures_without_json_text() {
    decodes_fixtures(&["attrs", "extra"]);
}

fn decodes_fixtures(without: &[&str]) {
    let fixture: Json = serde_json::from_str(FIXTURES).unwrap();
    let references: Vec<(String, String)> = fixture["reader_references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_owned(),
                p[1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut text = fixture["reader"].as_str().unwrap().to_owned();
    for name in without {
        // Each property is on a line of its own in the fixture's schema.
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("\"{name}\"")))
            .unwrap()
            .to_owned();
        text = text.replace(&format!("{line}\n"), "");
    }
    // The comma of what is now the last property.
    let text = text.replace(",\n  },\n  \"definitions\"", "\n  },\n  \"definitions\"");
    let reader = json_schema(&text, references);
    // The ids the serializer framed the payloads with are JSON Schemas of the registry.
    let writers: HashMap<i64, Arc<SchemaText>> = fixture["schemas"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, s)| {
            let schema = json_schema(s["schema"].as_str().unwrap(), vec![]);
            (id.parse().unwrap(), Arc::new(schema))
        })
        .collect();
    let decoder = decoder(&reader, Arc::new(writers)).unwrap();
    // Fields in the order the schema declares them (issue 34).
    let DataType::Struct(fields) = decoder.data_type() else {
        panic!()
    };
    let mut order: Vec<&str> = vec![
        "id", "customer", "amount", "paid", "created", "lines", "ship_to", "day", "note", "tags",
        "attrs", "coupon", "extra",
    ];
    order.retain(|n| !without.contains(n));
    let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, order);
    let cases = fixture["cases"].as_array().unwrap();
    let framed: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| hex(c["framed"].as_str().unwrap()))
        .collect();
    // JSON framing: magic byte and schema id, then the document.
    let mut payloads: Vec<Option<Payload<'_>>> = framed
        .iter()
        .map(|f| {
            assert_eq!(f[0], 0);
            Some(Payload {
                bytes: &f[5..],
                schema_id: Some(i64::from(i32::from_be_bytes(f[1..5].try_into().unwrap()))),
                message_indexes: &[],
            })
        })
        .collect();
    // A bad row in the middle must not lose the others.
    payloads.insert(2, payload(br#"{"id": "three"}"#));
    payloads.insert(0, None);
    for _ in 0..2 {
        // Twice: the builders kept from the first batch serve the second.
        let decoded = decoder.decode(&payloads).unwrap();
        assert_eq!(decoded.array.data_type(), decoder.data_type());
        decoded.array.to_data().validate_full().unwrap();
        assert!(decoded.array.is_null(0));
        assert_eq!(decoded.errors[0], None);
        assert!(decoded.array.is_null(3));
        assert!(decoded.errors[3]
            .as_deref()
            .unwrap()
            .contains("does not fit"));
        let rows = [1, 2, 4, 5];
        for (case, row) in cases.iter().zip(rows) {
            assert_eq!(decoded.errors[row], None);
            let got = to_json(decoded.array.as_ref(), row);
            let mut expected = case["expected"].clone();
            for name in without {
                expected.as_object_mut().unwrap().remove(*name);
            }
            assert!(same_json(&got, &expected), "row {row}: {got} != {expected}");
        }
    }
}

fn decode_all(schema: &str, payloads: &[&[u8]]) -> (Vec<Json>, Vec<Option<String>>) {
    let decoder = decoder(&json_schema(schema, vec![]), no_writers()).unwrap();
    let payloads: Vec<Option<Payload<'_>>> = payloads.iter().map(|b| payload(b)).collect();
    let decoded = decoder.decode(&payloads).unwrap();
    decoded.array.to_data().validate_full().unwrap();
    let values = (0..payloads.len())
        .map(|i| to_json(decoded.array.as_ref(), i))
        .collect();
    (values, decoded.errors)
}

#[test]
fn bad_payloads_are_row_errors() {
    let schema = r#"{"type": "object", "properties": {"n": {"type": "integer"},
        "s": {"type": "string"}, "t": {"type": "string", "format": "date-time"},
        "kids": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}}}"#;
    let mut deep = "[".repeat(100_000);
    deep.push_str(&"]".repeat(100_000));
    let bad: Vec<&[u8]> = vec![
        b"{\"n\": 1",
        b"",
        b"{\"s\": \"\xff\xfe\"}",
        b"{\"n\": \"x\"}",
        b"{\"t\": \"yesterday\"}",
        b"{\"kids\": {\"n\": 1}}",
        b"{\"n\": 1} {\"n\": 2}",
        b"[1, 2]",
        deep.as_bytes(),
        b"{\"n\": 1e999999}",
        // Invalid UTF-8 or a lone surrogate in a property no one reads, a control character.
        b"{\"zz\": \"\xc3\"}",
        b"{\"zz\": \"\\ud800\"}",
        b"{\"zz\": \"\\udc00x\"}",
        b"{\"s\": \"a\x01\"}",
        b"{\"n\": 01}",
        b"{\"n\": 1,}",
        b"{\"n\" 1}",
        b"\xef\xbb\xbf{\"n\": 1}",
    ];
    let mut all = bad.clone();
    all.push(br#"{"n": 7, "s": "ok", "unknown": [1, {"deep": true}], "kids": [{"n": 1}, {}]}"#);
    all.push(b"null");
    all.push(b" \t\r\n null \n");
    let (values, errors) = decode_all(schema, &all);
    for (i, bytes) in bad.iter().enumerate() {
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]);
        assert_eq!(values[i], Json::Null, "{shown}");
        assert!(errors[i].is_some(), "{shown}");
    }
    let good = bad.len();
    assert_eq!(errors[good], None);
    assert_eq!(
        values[good],
        json!({"n": 7, "s": "ok", "t": null, "kids": [{"n": 1}, {"n": null}]})
    );
    // JSON null is a null value, not an error.
    assert_eq!(&errors[good + 1..], &[None, None]);
    assert_eq!(&values[good + 1..], &[Json::Null, Json::Null]);
}

#[test]
fn top_level_scalars_arrays_and_json_text() {
    let (values, errors) = decode_all(r#"{"type": "integer"}"#, &[b"5", b"\"x\"", b"-1"]);
    assert_eq!(values, vec![json!(5), Json::Null, json!(-1)]);
    assert!(errors[1].is_some());
    let (values, _) = decode_all(
        r#"{"type": "array", "items": {"type": "string", "format": "date"}}"#,
        &[br#"["1970-01-02", null]"#],
    );
    assert_eq!(values[0], json!([1, null]));
    let (values, errors) = decode_all(
        r#"{"type": "object"}"#,
        &[br#"{"b": 1, "a": [true]}"#, b"3"],
    );
    assert_eq!(values, vec![json!(r#"{"a":[true],"b":1}"#), json!("3")]);
    assert_eq!(errors, vec![None, None]);
}

#[test]
fn refuses_schemas_it_cannot_use() {
    assert!(decoder(&json_schema("{", vec![]), no_writers()).is_err());
    assert!(decoder(
        &json_schema(r##"{"$ref": "#/nowhere"}"##, vec![]),
        no_writers()
    )
    .is_err());
    let avro = SchemaText::new(SchemaType::Avro, "\"int\"");
    assert!(decoder(&avro, no_writers()).is_err());
}

#[test]
fn integers_past_int64_are_row_errors_and_fractions_truncated() {
    let (values, errors) = decode_all(
        r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#,
        &[
            br#"{"n": 9223372036854775807}"#,
            br#"{"n": 9223372036854775808}"#,
            br#"{"n": 1.5}"#,
            br#"{"n": 2.0}"#,
            br#"{"n": -9223372036854775808}"#,
            br#"{"n": 1e3}"#,
            br#"{"n": "12"}"#,
            br#"{"n": 5590691956105942.51}"#,
        ],
    );
    assert_eq!(values[0], json!({"n": i64::MAX}));
    assert!(errors[1].is_some(), "{:?}", values[1]);
    // arrow-json's reading of a number with a fraction as an integer (documented).
    assert_eq!(values[2], json!({"n": 1}));
    assert_eq!(values[3], json!({"n": 2}));
    assert_eq!(values[4], json!({"n": i64::MIN}));
    assert_eq!(values[5], json!({"n": 1000}));
    assert_eq!(values[6], json!({"n": 12}));
    // Read as the nearest double first (the one above the digits), then truncated.
    assert_eq!(values[7], json!({"n": 5590691956105943_i64}));
    assert_eq!(errors[2..], [None, None, None, None, None, None]);
}

/// A key given twice holds its last value, as serde_json, arrow-json and Python's json read
/// it, even when the first would not fit; properties the reader does not have are skipped
/// however deep they nest.
#[test]
fn duplicate_keys_and_unknown_properties() {
    let mut deep = String::from(r#"{"skip": "#);
    deep.push_str(&"[{\"a\":".repeat(50_000));
    deep.push('1');
    deep.push_str(&"}]".repeat(50_000));
    deep.push_str(r#", "n": 3}"#);
    let (values, errors) = decode_all(
        r#"{"type": "object", "properties": {"n": {"type": "integer"},
            "o": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "l": {"type": "array", "items": {"type": "integer"}}, "t": {}}}"#,
        &[
            br#"{"n": "x", "n": 2}"#,
            br#"{"n": 1, "n": "x"}"#,
            br#"{"o": {"x": "bad"}, "o": {"x": 5}, "l": [1, "x"], "l": [3]}"#,
            br#"{"t": {"b": 1, "a": 2, "b": 3}, "t": [1, {"z": null, "a": "\u00e9\n"}]}"#,
            br#"{"\u006e": 4, "o\u0000": 1}"#,
            deep.as_bytes(),
        ],
    );
    assert_eq!(values[0], json!({"n": 2, "o": null, "l": null, "t": null}));
    assert!(errors[1]
        .as_deref()
        .unwrap()
        .contains("does not fit the schema: n: "));
    assert_eq!(
        values[2],
        json!({"n": null, "o": {"x": 5}, "l": [3], "t": null})
    );
    assert_eq!(values[3]["t"], json!("[1,{\"a\":\"é\\n\",\"z\":null}]"));
    assert_eq!(values[4], json!({"n": 4, "o": null, "l": null, "t": null}));
    assert_eq!(values[5]["n"], json!(3));
    assert_eq!(errors[0], None);
    assert_eq!(errors[2..], [None, None, None, None]);
}

/// Numbers of more digits than a double holds read to the nearest double in the decoder and
/// in its oracle alike (serde_json reads them so with `float_roundtrip`; without it, this one
/// came out one below).
#[test]
fn long_numbers_agree_with_the_oracle() {
    let docs = [
        b"5590691956105942.51".to_vec(),
        b"0.30000000000000004441".to_vec(),
    ];
    differential(&S::Int, &docs).unwrap();
    differential(&S::Num, &docs).unwrap();
}

/// A pruned decoder keeps the properties it skips in its tables: keys in a changing order,
/// skipped and kept keys given twice, keys written with escapes or cut short, and values of
/// any type under a skipped property (not checked against its type) read as the whole decoder
/// reads them.
#[test]
fn a_pruned_decoder_follows_keys_in_any_order() {
    let schema = json_schema(
        r#"{"type": "object", "properties": {"id": {"type": "integer"},
            "name": {"type": "string"}, "a_long_name": {"type": "integer"},
            "geo": {"type": "object", "properties": {"lat": {"type": "number"},
                "lon": {"type": "number"}}},
            "tags": {"type": "array", "items": {"type": "string"}}}}"#,
        vec![],
    );
    let wanted = Wanted::Fields(vec![
        ("id".into(), Wanted::All),
        ("a_long_name".into(), Wanted::All),
        (
            "geo".into(),
            Wanted::Fields(vec![("lon".into(), Wanted::All)]),
        ),
    ]);
    let docs: [&[u8]; 12] = [
        br#"{"id": 1, "name": "a", "a_long_name": 10, "geo": {"lat": 1.5, "lon": 2.5}, "tags": []}"#,
        br#"{"id": 2, "name": "b", "a_long_name": 20, "geo": {"lat": 1.5, "lon": 3.5}, "tags": ["x"]}"#,
        br#"{"tags": ["y"], "geo": {"lon": 4.5, "lat": 0}, "a_long_name": 30, "name": "c", "id": 3}"#,
        br#"{"id": 4, "name": {"not": ["a string"]}, "name": 5, "a_long_name": 40}"#,
        br#"{"id": 5, "a_long_name": 50, "geo": {"lon": 5.5}}"#,
        br#"{"id": 6, "a_long_nam": 1, "a_long_name_": 2, "a_long_name": 60, "id": 7}"#,
        br#"{"id": 8, "name": "unclosed, "a_long_name": 80}"#,
        br#"{"id": 9, "name": tru, "a_long_name": 90}"#,
        br#"{"id": 10, "geo": {"lat": "x", "lon": 10.5, "lon": 11.5}, "tags": "not a list"}"#,
        // Space before the colons, or none after them; a key in the last 8 bytes.
        b"{\"id\" : 11, \"a_long_name\"\n:\t110,\"geo\":{\"lon\":12.5}}",
        br#"{"a_long_name":120,"id":12}"#,
        br#"{"id" 13, "a_long_name": 130}"#,
    ];
    let payloads: Vec<Option<Payload<'_>>> = docs.iter().map(|d| payload(d)).collect();
    let whole = decoder(&schema, no_writers())
        .unwrap()
        .decode(&payloads)
        .unwrap();
    let pruned = pruned_decoder(&schema, no_writers(), &wanted)
        .unwrap()
        .decode(&payloads)
        .unwrap();
    pruned.array.to_data().validate_full().unwrap();
    let got: Vec<Json> = (0..docs.len())
        .map(|i| to_json(pruned.array.as_ref(), i))
        .collect();
    let row = |id: i64, long: i64, lon: Option<f64>| json!({"id": id, "a_long_name": long, "geo": lon.map(|l| json!({"lon": l}))});
    assert_eq!(got[0], row(1, 10, Some(2.5)));
    assert_eq!(got[1], row(2, 20, Some(3.5)));
    assert_eq!(got[2], row(3, 30, Some(4.5)));
    assert_eq!(got[3], row(4, 40, None));
    assert_eq!(got[4], row(5, 50, Some(5.5)));
    assert_eq!(got[5], row(7, 60, None));
    assert_eq!(
        got[8],
        json!({"id": 10, "a_long_name": null, "geo": {"lon": 11.5}})
    );
    assert_eq!(got[9], row(11, 110, Some(12.5)));
    assert_eq!(got[10], row(12, 120, None));
    // Not JSON: an error whatever is kept, at the same byte as the whole decoder's.
    for i in [6, 7, 11] {
        assert_eq!(got[i], Json::Null);
        assert!(pruned.errors[i].as_deref().unwrap().starts_with("not JSON"));
        assert_eq!(pruned.errors[i], whole.errors[i]);
    }
    // Left out, a property is not checked against its type (the whole decoder refuses these).
    assert!(whole.errors[8].is_some());
    assert!(pruned.errors[..6]
        .iter()
        .chain(&pruned.errors[8..11])
        .all(Option::is_none));
}

/// JSON text is serde_json's: nesting deeper than 127 containers in all is refused there, as
/// serde_json refuses it.
#[test]
fn json_text_nesting_is_bounded() {
    let nested = |levels: usize| {
        let mut s = String::from(r#"{"t": "#);
        s.push_str(&"[".repeat(levels - 1));
        s.push_str(&"]".repeat(levels - 1));
        s.push('}');
        s
    };
    let ok = nested(127);
    let deep = nested(128);
    let (values, errors) = decode_all(
        r#"{"type": "object", "properties": {"t": {}}}"#,
        &[ok.as_bytes(), deep.as_bytes()],
    );
    assert_eq!(errors[0], None);
    assert_eq!(values[0]["t"].as_str().unwrap().len(), 2 * 126);
    assert!(errors[1].as_deref().unwrap().contains("nesting"));
    for payload in [&ok, &deep] {
        let serde = serde_json::from_str::<Json>(payload);
        assert_eq!(serde.is_ok(), payload == &ok);
    }
}

/// Issue 35: the schema id a payload carries is checked as Confluent's deserializer checks it
/// (`getSchemaById`, then a `JsonSchema`): an id the registry does not have, or another
/// language's schema, is a bad value; payloads without an id decode.
#[test]
fn schema_ids_must_be_json_schemas_of_the_registry() {
    let reader = json_schema(
        r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#,
        vec![],
    );
    let mut writers = HashMap::new();
    writers.insert(1, Arc::new(reader.clone()));
    writers.insert(2, Arc::new(SchemaText::new(SchemaType::Avro, "\"long\"")));
    writers.insert(
        3,
        Arc::new(SchemaText::new(
            SchemaType::Protobuf,
            "syntax = \"proto3\";",
        )),
    );
    let decoder = decoder(&reader, Arc::new(writers)).unwrap();
    let body = br#"{"n": 5}"#;
    let framed = |id: Option<i64>| {
        Some(Payload {
            bytes: body,
            schema_id: id,
            message_indexes: &[],
        })
    };
    let payloads = [
        framed(Some(1)),
        framed(Some(2)),
        framed(Some(3)),
        framed(Some(4)),
        framed(Some(4)),
        framed(None),
        framed(Some(1)),
    ];
    let decoded = decoder.decode(&payloads).unwrap();
    let values: Vec<Json> = (0..payloads.len())
        .map(|i| to_json(decoded.array.as_ref(), i))
        .collect();
    let n5 = json!({"n": 5});
    assert_eq!(
        values,
        [
            n5.clone(),
            Json::Null,
            Json::Null,
            Json::Null,
            Json::Null,
            n5.clone(),
            n5
        ]
    );
    let errors: Vec<Option<&str>> = decoded.errors.iter().map(Option::as_deref).collect();
    assert_eq!(
        errors,
        [
            None,
            Some("schema id 2 is registered as AVRO, not a JSON Schema"),
            Some("schema id 3 is registered as PROTOBUF, not a JSON Schema"),
            Some("schema id 4 is not in the registry"),
            Some("schema id 4 is not in the registry"),
            None,
            None
        ]
    );
}

/// Numbers, strings and dates read as arrow-json read them (the same functions called).
#[test]
fn readings_of_numbers_strings_and_dates() {
    let (values, errors) = decode_all(
        r#"{"type": "object", "properties": {"f": {"type": "number"},
            "t": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "date"},
            "s": {"type": "string"}, "b": {"type": "boolean"}}}"#,
        &[
            br#"{"f": 0.1, "t": "2024-03-01T12:30:00.123456+02:00", "d": "2024-02-29", "s": "a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "b": true}"#,
            br#"{"f": "1.5", "t": 1.9, "d": 3, "s": "", "b": false}"#,
            br#"{"f": 1e400, "t": "1969-12-31 23:59:59", "d": "2024-02-30"}"#,
            br#"{"f": 123456789012345678901234567890, "t": 5}"#,
            br#"{"s": 5}"#,
            br#"{"b": "true"}"#,
            br#"{"f": -0.0e-7, "t": "2024-01-01T00:00:00"}"#,
        ],
    );
    assert_eq!(errors[..2], [None, None]);
    assert_eq!(values[0]["f"], json!(0.1));
    assert_eq!(values[0]["t"], json!(1_709_289_000_123_456i64));
    assert_eq!(values[0]["d"], json!(19782));
    assert_eq!(values[0]["s"], json!("a\"\\/\u{8}\u{c}\n\r\té😀"));
    assert_eq!(
        values[1],
        json!({"f": 1.5, "t": 1, "d": 3, "s": "", "b": false})
    );
    assert!(errors[2].as_deref().unwrap().contains("d: "));
    assert_eq!(values[3]["f"], json!(1.2345678901234568e29));
    assert_eq!(errors[3], None);
    assert!(errors[4].is_some() && errors[5].is_some());
    assert_eq!(values[6]["t"], json!(1_704_067_200_000_000i64));
}

// The differential property test: random schemas, random payloads (good, bad, and between),
// kafkalog's decoder against the oracle.

/// A schema being generated.
#[derive(Debug, Clone)]
enum S {
    Int,
    Num,
    Bool,
    Str,
    DateTime,
    Date,
    /// `{}`: JSON text.
    Any,
    /// `additionalProperties`: JSON text.
    Map,
    Obj(Vec<(String, S)>),
    Arr(Box<S>),
    /// `["null", T]` or `oneOf` with null.
    Nullable(Box<S>),
}

const NAMES: &[&str] = &[
    "a",
    "id",
    "b c",
    "é",
    "x\"y",
    "n\\m",
    "long_property_name_",
    // Names whose key and colon fill 8 bytes, and 15 (a prefix of the name above).
    "street",
    "long_property",
    "A",
    "tab\t",
];

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn schema_text(s: &S) -> String {
    match s {
        S::Int => r#"{"type": "integer"}"#.into(),
        S::Num => r#"{"type": "number"}"#.into(),
        S::Bool => r#"{"type": "boolean"}"#.into(),
        S::Str => r#"{"type": "string"}"#.into(),
        S::DateTime => r#"{"type": "string", "format": "date-time"}"#.into(),
        S::Date => r#"{"type": "string", "format": "date"}"#.into(),
        S::Any => "{}".into(),
        S::Map => r#"{"type": "object", "additionalProperties": {"type": "integer"}}"#.into(),
        S::Obj(fields) => {
            let props: Vec<String> = fields
                .iter()
                .map(|(n, s)| format!("{}: {}", quote(n), schema_text(s)))
                .collect();
            format!(
                r#"{{"type": "object", "properties": {{{}}}}}"#,
                props.join(", ")
            )
        }
        S::Arr(item) => format!(r#"{{"type": "array", "items": {}}}"#, schema_text(item)),
        S::Nullable(inner) => format!(
            r#"{{"oneOf": [{{"type": "null"}}, {}]}}"#,
            schema_text(inner)
        ),
    }
}

fn shapes() -> impl Strategy<Value = S> {
    let leaf = prop_oneof![
        Just(S::Int),
        Just(S::Num),
        Just(S::Bool),
        Just(S::Str),
        Just(S::DateTime),
        Just(S::Date),
        Just(S::Any),
        Just(S::Map),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec((prop::sample::select(NAMES), inner.clone()), 1..5).prop_map(
                |fields| {
                    let mut out: Vec<(String, S)> = Vec::new();
                    for (n, s) in fields {
                        if !out.iter().any(|(m, _)| m == n) {
                            out.push((n.to_string(), s));
                        }
                    }
                    S::Obj(out)
                }
            ),
            inner.clone().prop_map(|s| S::Arr(Box::new(s))),
            inner.prop_map(|s| S::Nullable(Box::new(s))),
        ]
    })
}

/// JSON string literals: plain, escaped in every way, non-ASCII raw.
fn strings() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z0-9 ]{0,6}".prop_map(|s| s),
        1 => Just("\\\"".to_string()),
        1 => Just("\\\\".to_string()),
        1 => Just("\\/".to_string()),
        1 => Just("\\n\\t\\r\\b\\f".to_string()),
        1 => Just("\\u0041\\u00e9\\u0001".to_string()),
        1 => Just("\\ud83d\\ude00".to_string()),
        1 => Just("é☃😀".to_string()),
        1 => Just("\u{7f}".to_string()),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|p| format!("\"{}\"", p.concat()))
}

fn numbers() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (-1000i64..1000).prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite() && f.abs() < 1e30)
            .prop_map(|f| format!("{f}")),
        (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b:03}")),
        Just("-0".to_string()),
        Just("9223372036854775808".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("18446744073709551616".to_string()),
        Just("1E5".to_string()),
        Just("2.5e-3".to_string()),
    ]
}

fn dates() -> impl Strategy<Value = String> {
    (1900i32..2100, 1u32..13, 1u32..29).prop_map(|(y, m, d)| format!("\"{y:04}-{m:02}-{d:02}\""))
}

fn date_times() -> impl Strategy<Value = String> {
    (
        1900i32..2100,
        1u32..13,
        1u32..29,
        0u32..24,
        0u32..60,
        0u32..60,
        prop::sample::select(&["", ".1", ".123456", ".123456789"][..]),
        prop::sample::select(&["Z", "+02:00", "-05:30", "", "z"][..]),
        prop::sample::select(&["T", " "][..]),
    )
        .prop_map(|(y, mo, d, h, mi, s, frac, zone, sep)| {
            format!("\"{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{zone}\"")
        })
}

/// Any JSON value, as text (keys may repeat, in any order).
fn any_json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        numbers(),
        strings(),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((prop::sample::select(NAMES), inner), 0..4).prop_map(|m| {
                let members: Vec<String> =
                    m.iter().map(|(k, v)| format!("{}:{v}", quote(k))).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// Payloads for schema `s`: mostly values of its type, sometimes of another, null, or other
/// readings (numbers as strings, integers as floats).
fn values(s: &S) -> BoxedStrategy<String> {
    let fitting: BoxedStrategy<String> = match s {
        S::Int => prop_oneof![
            4 => any::<i64>().prop_map(|n| n.to_string()),
            1 => numbers(),
            1 => any::<i32>().prop_map(|n| format!("\"{n}\"")),
        ]
        .boxed(),
        S::Num => prop_oneof![
            4 => numbers(),
            1 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("\"{f}\"")),
        ]
        .boxed(),
        S::Bool => prop_oneof![Just("true".to_string()), Just("false".to_string())].boxed(),
        S::Str => strings().boxed(),
        S::DateTime => prop_oneof![
            8 => date_times(),
            1 => dates(),
            1 => (-1_000_000_000i64..1_000_000_000).prop_map(|n| n.to_string()),
            1 => Just("\"2024-13-01T00:00:00Z\"".to_string()),
        ]
        .boxed(),
        S::Date => prop_oneof![
            8 => dates(),
            1 => (-100_000i64..100_000).prop_map(|n| n.to_string()),
            1 => Just("\"2023-02-29\"".to_string()),
        ]
        .boxed(),
        S::Any | S::Map => any_json().boxed(),
        S::Obj(fields) => {
            let members: Vec<BoxedStrategy<Option<String>>> = fields
                .iter()
                .map(|(name, s)| {
                    let key = quote(name);
                    prop::option::weighted(0.8, values(s).prop_map(move |v| format!("{key}: {v}")))
                        .boxed()
                })
                .collect();
            let unknown = prop::collection::vec(
                ("[a-z]{1,3}", any_json()).prop_map(|(k, v)| format!("\"zz{k}\":{v}")),
                0..2,
            );
            (members, unknown, any::<u64>(), any::<bool>())
                .prop_map(|(members, unknown, seed, twice)| {
                    let mut parts: Vec<String> = members.into_iter().flatten().collect();
                    parts.extend(unknown);
                    if twice && !parts.is_empty() {
                        let again = parts[seed as usize % parts.len()].clone();
                        parts.push(again);
                    }
                    // A shuffle from the seed.
                    let mut x = seed | 1;
                    for i in (1..parts.len()).rev() {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        parts.swap(i, x as usize % (i + 1));
                    }
                    format!("{{{}}}", parts.join(", "))
                })
                .boxed()
        }
        S::Arr(item) => prop::collection::vec(values(item), 0..4)
            .prop_map(|v| format!("[ {} ]", v.join(" , ")))
            .boxed(),
        S::Nullable(inner) => values(inner),
    };
    prop_oneof![
        12 => fitting,
        1 => Just("null".to_string()),
        1 => any_json(),
    ]
    .boxed()
}

/// Payloads, some cut short or with a byte changed.
fn payloads(s: &S) -> BoxedStrategy<Vec<Vec<u8>>> {
    let damaged = (values(s), any::<u16>(), any::<u8>(), 0u8..4).prop_map(|(v, at, byte, how)| {
        let mut b = v.into_bytes();
        let at = at as usize % (b.len() + 1);
        match how {
            0 => b.truncate(at),
            1 if at < b.len() => b[at] = byte,
            2 => b.insert(at, byte),
            _ => b.extend_from_slice(b" \n"),
        }
        b
    });
    prop::collection::vec(
        prop_oneof![6 => values(s).prop_map(String::into_bytes), 1 => damaged],
        1..10,
    )
    .boxed()
}

fn differential(s: &S, docs: &[Vec<u8>]) -> std::result::Result<(), TestCaseError> {
    let text = schema_text(s);
    let reader = json_schema(&text, vec![]);
    let shape = shape(&reader).unwrap();
    let ours = decoder(&reader, no_writers()).unwrap();
    let oracle = crate::values::json::oracle::decoder(&shape).unwrap();
    let payloads: Vec<Option<Payload<'_>>> = docs.iter().map(|d| payload(d)).collect();
    let b = oracle.decode(&payloads).unwrap();
    // The whole batch, then the same decoder again in two batches (its kept builders).
    let whole = ours.decode(&payloads).unwrap();
    let (left, right) = payloads.split_at(payloads.len() / 2);
    let halves = [ours.decode(left).unwrap(), ours.decode(right).unwrap()];
    whole.array.to_data().validate_full().unwrap();
    prop_assert_eq!(whole.array.data_type(), ours.data_type());
    for (row, doc) in docs.iter().enumerate() {
        let shown = || format!("schema {text}\npayload {:?}", String::from_utf8_lossy(doc));
        agree(&whole, &b, row, doc, by_value(&shape))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", shown())))?;
        let (half, at) = if row < left.len() {
            (&halves[0], row)
        } else {
            (&halves[1], row - left.len())
        };
        prop_assert_eq!(&half.errors[at], &whole.errors[row]);
        prop_assert_eq!(
            to_json(half.array.as_ref(), at),
            to_json(whole.array.as_ref(), row),
            "{}",
            shown()
        );
    }
    Ok(())
}

proptest! {
    // 400 cases by default (`PROPTEST_CASES` for more), each a schema and up to 10 payloads.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(400),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn agrees_with_the_oracle(case in shapes().prop_flat_map(|s| { let p = payloads(&s); (Just(s), p) })) {
        let (s, docs) = case;
        differential(&s, &docs)?;
    }

    /// JSON text as serde_json's `Value` prints it, whatever the value.
    #[test]
    fn json_text_is_serde_jsons(docs in prop::collection::vec(any_json(), 1..8)) {
        let bytes: Vec<&[u8]> = docs.iter().map(|d| d.as_bytes()).collect();
        let (values, errors) = decode_all("{}", &bytes);
        for (i, doc) in docs.iter().enumerate() {
            match serde_json::from_str::<Json>(doc) {
                Ok(Json::Null) => prop_assert_eq!(&values[i], &Json::Null),
                Ok(v) => prop_assert_eq!(&values[i], &json!(v.to_string()), "{}", doc),
                Err(_) => prop_assert!(errors[i].is_some(), "{}", doc),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The date-time fast path gives what arrow-cast's `string_to_datetime` gives, or leaves
    /// the string to it.
    #[test]
    fn date_times_read_as_arrow_cast_reads_them(
        (y, mo, d, h, mi, s) in (0i32..10000, 0u32..14, 0u32..33, 0u32..25, 0u32..61, 0u32..62),
        frac in prop::sample::select(&["", ".", ".1", ".12345", ".123456", ".123456789", ".1234567891"][..]),
        zone in prop::sample::select(&["", "Z", "z", "+02:00", "-05:30", "+23:59", "+24:00", "-00:00", "+0200", "+02", " UTC", "x"][..]),
        sep in prop::sample::select(&["T", "t", " ", "_"][..]),
    ) {
        let text = format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{zone}");
        let arrow = arrow_cast::parse::string_to_datetime(&chrono::Utc, &text)
            .ok()
            .map(|t| t.timestamp_micros());
        if let Some(fast) = crate::values::json::decode::date_time_micros(text.as_bytes()) {
            prop_assert_eq!(Some(fast), arrow, "{}", text);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(400),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A decoder building only some properties (Spark's pruning) reads what the whole decoder
    /// reads of them: what it refuses the whole one refuses, and where the whole one reads a
    /// payload it reads the same parts of it.
    #[test]
    fn a_pruned_decoder_reads_the_parts_the_whole_one_reads(
        case in shapes().prop_flat_map(|s| { let p = payloads(&s); (Just(s), p) }),
        seed in any::<u64>(),
    ) {
        use crate::values::wanted_tests::{agrees, die, random_wanted};
        let (s, docs) = case;
        let text = schema_text(&s);
        let reader = json_schema(&text, vec![]);
        let whole = decoder(&reader, no_writers()).unwrap();
        let wanted = random_wanted(whole.data_type(), &mut die(seed));
        let pruned = pruned_decoder(&reader, no_writers(), &wanted).unwrap();
        let payloads: Vec<Option<Payload<'_>>> = docs.iter().map(|d| payload(d)).collect();
        let (a, b) = (whole.decode(&payloads).unwrap(), pruned.decode(&payloads).unwrap());
        let shown = |i: usize| format!("schema {text}\npayload {:?}", String::from_utf8_lossy(&docs[i]));
        agrees(&a, &b, &wanted, &shown).map_err(TestCaseError::fail)?;
    }
}
