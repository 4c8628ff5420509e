//! Tests of the JSON Schema decoder: payloads framed by Confluent's JSONSerializer, compared
//! with what the json module reads (`tests/values/json/fixtures.json`, written by
//! `tests/values/make_fixtures.py`), and bad payloads.

use std::collections::HashMap;

use serde_json::{json, Value as Json};

use super::*;
use crate::values::protobuf::tests::{to_json, Registry};

const FIXTURES: &str = include_str!("../../tests/values/json/fixtures.json");

/// Equal as the fixtures mean it: numbers by value (`7` is `7.0`).
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
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
    Arc::new(Registry(HashMap::new()))
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn decodes_what_confluents_serializer_wrote_as_the_json_module_does() {
    decodes_fixtures(&[]);
}

/// The same without the reader's JSON-text properties: a struct with nothing to rewrite, whose
/// payloads go to arrow-json as they are.
#[test]
fn decodes_fixtures_on_the_direct_path() {
    decodes_fixtures(&["attrs", "extra"]);
}

fn decodes_fixtures(without: &[&str]) {
    let fixture: Json = serde_json::from_str(FIXTURES).unwrap();
    let references = fixture["reader_references"]
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
    let mut schema: Json = serde_json::from_str(fixture["reader"].as_str().unwrap()).unwrap();
    for name in without {
        schema["properties"].as_object_mut().unwrap().remove(*name);
    }
    let reader = json_schema(&schema.to_string(), references);
    let decoder = build(&reader).unwrap();
    assert_eq!(decoder.direct.is_some(), !without.is_empty());
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
    payloads.insert(
        2,
        Some(Payload {
            bytes: br#"{"id": "three"}"#,
            schema_id: None,
            message_indexes: &[],
        }),
    );
    payloads.insert(0, None);
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
        assert!(same(&got, &expected), "row {row}: {got} != {expected}");
    }
}

fn decode_all(schema: &str, payloads: &[&[u8]]) -> (Vec<Json>, Vec<Option<String>>) {
    let decoder = decoder(&json_schema(schema, vec![]), no_writers()).unwrap();
    let payloads: Vec<Option<Payload<'_>>> = payloads
        .iter()
        .map(|bytes| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .collect();
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
    ];
    let mut all = bad.clone();
    all.push(br#"{"n": 7, "s": "ok", "unknown": [1, {"deep": true}], "kids": [{"n": 1}, {}]}"#);
    all.push(b"null");
    let (values, errors) = decode_all(schema, &all);
    for (i, bytes) in bad.iter().enumerate() {
        assert_eq!(
            values[i],
            Json::Null,
            "{}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
        );
        assert!(
            errors[i].is_some(),
            "{}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
        );
    }
    let good = bad.len();
    assert_eq!(errors[good], None);
    assert_eq!(
        values[good],
        json!({"n": 7, "s": "ok", "t": null, "kids": [{"n": 1}, {"n": null}]})
    );
    // JSON null is a null value, not an error.
    assert_eq!(errors[good + 1], None);
    assert_eq!(values[good + 1], Json::Null);
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
    let avro = SchemaText {
        schema_type: SchemaType::Avro,
        schema: "\"int\"".into(),
        references: vec![],
    };
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
        ],
    );
    assert_eq!(values[0], json!({"n": i64::MAX}));
    assert!(errors[1].is_some(), "{:?}", values[1]);
    // arrow-json's reading of a number with a fraction as an integer (documented).
    assert_eq!(values[2], json!({"n": 1}));
    assert_eq!(values[3], json!({"n": 2}));
    assert_eq!(&errors[2..], &[None, None]);
}
