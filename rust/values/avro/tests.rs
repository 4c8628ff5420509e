//! The compiled Avro decoder (`decoder.rs`) against the specification's resolution
//! rules, one rule a test, and against `arrow-avro` (the oracle, `oracle::oracle`) where both
//! read the same way; hostile payloads.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::values::avro::decoder::decoder;
use crate::values::avro::oracle::oracle;
use crate::values::decoder::{Decoded, Payload, PayloadDecoder, SchemaText, SchemaType};

pub(crate) fn avro(s: &str) -> SchemaText {
    SchemaText::new(SchemaType::Avro, s)
}

pub(crate) fn zz(v: i64) -> Vec<u8> {
    let mut out = Vec::new();
    crate::format::varint::write_varlong(&mut out, v);
    out
}

pub(crate) fn s(text: &str) -> Vec<u8> {
    let mut out = zz(text.len() as i64);
    out.extend(text.as_bytes());
    out
}

/// Writer schemas by id.
pub(crate) fn writers(list: &[(i64, &str)]) -> Arc<HashMap<i64, Arc<SchemaText>>> {
    Arc::new(
        list.iter()
            .map(|(id, text)| (*id, Arc::new(avro(text))))
            .collect(),
    )
}

/// `values` (schema id, bytes; None: a tombstone) decoded by `d`.
pub(crate) fn run(d: &dyn PayloadDecoder, values: &[Option<(i64, Vec<u8>)>]) -> Decoded {
    let payloads: Vec<Option<Payload<'_>>> = values
        .iter()
        .map(|v| {
            v.as_ref().map(|(id, bytes)| Payload {
                bytes,
                schema_id: Some(*id),
                message_indexes: &[],
            })
        })
        .collect();
    let out = d.decode(&payloads).unwrap();
    assert_eq!(out.array.len(), values.len());
    assert_eq!(out.array.data_type(), d.data_type());
    out.array.to_data().validate_full().unwrap();
    out
}

/// Reads `values` with `reader`, the writers' schemas by id `writers`.
fn read(reader: &str, w: &[(i64, &str)], values: &[Option<(i64, Vec<u8>)>]) -> Decoded {
    let d = decoder(&avro(reader), writers(w)).unwrap();
    run(d.as_ref(), values)
}

/// The same through the compiled decoder (all the payloads in one batch) and the oracle
/// (each payload alone: its recovery from a bad payload in a batch has faults of its own):
/// the same rows fail, the others are equal.
pub(crate) fn same_as_oracle(
    reader: &str,
    w: &[(i64, &str)],
    values: &[Option<(i64, Vec<u8>)>],
) -> ArrayRef {
    let ours = read(reader, w, values);
    let oracle = oracle(&avro(reader), writers(w)).unwrap();
    for (i, v) in values.iter().enumerate() {
        let theirs = run(oracle.as_ref(), std::slice::from_ref(v));
        assert_eq!(
            ours.errors[i].is_some(),
            theirs.errors[0].is_some(),
            "row {i}: {:?} / {:?}",
            ours.errors[i],
            theirs.errors[0]
        );
        assert_eq!(
            ours.array.slice(i, 1).to_data(),
            theirs.array.to_data(),
            "row {i}"
        );
    }
    ours.array
}

fn one(id: i64, bytes: Vec<u8>) -> Option<(i64, Vec<u8>)> {
    Some((id, bytes))
}

#[test]
fn resolves_versions_and_isolates_bad_payloads() {
    let v1 = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}"#;
    let v2 = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},
        {"name":"b","type":"string","default":"x"}]}"#;
    let mut w = (*writers(&[(1, v1), (2, v2)])).clone();
    w.insert(3, Arc::new(SchemaText::new(SchemaType::Json, "{}")));
    let d = decoder(&avro(v2), Arc::new(w)).unwrap();
    let two = [zz(6), s("yz")].concat();
    let truncated = [zz(7), zz(10), b"ab".to_vec()].concat();
    let trailing = [zz(8), vec![0]].concat();
    let values = vec![
        one(1, zz(5)),
        one(2, two.clone()),
        None,
        one(2, truncated),
        one(1, zz(5)),
        one(9, zz(5)),
        one(1, trailing),
        one(3, zz(5)),
        one(2, two),
    ];
    let out = run(d.as_ref(), &values);
    let st = out.array.as_struct();
    let a = st.column(0).as_primitive::<Int64Type>();
    let b = st.column(1).as_string::<i32>();
    let ok: Vec<usize> = (0..9).filter(|&i| st.is_valid(i)).collect();
    assert_eq!(ok, vec![0, 1, 4, 8]);
    assert_eq!((a.value(0), b.value(0)), (5, "x"));
    assert_eq!((a.value(1), b.value(1)), (6, "yz"));
    assert_eq!((a.value(4), a.value(8)), (5, 6));
    // A null row is null in its fields too.
    assert!(a.is_null(3) && b.is_null(3) && a.is_null(2));
    let errors: Vec<bool> = out.errors.iter().map(Option::is_some).collect();
    assert_eq!(
        errors,
        vec![false, false, false, true, false, true, true, true, false]
    );
    let e = |i: usize| out.errors[i].clone().unwrap();
    assert!(e(3).contains("truncated"), "{}", e(3));
    assert!(e(5).contains("not in the registry"));
    assert!(e(7).contains("not Avro"));
    assert!(e(6).contains("1 bytes left after"), "{}", e(6));
}

#[test]
fn strings_that_are_not_utf8_are_bad_values_alone() {
    let out = read(
        r#""string""#,
        &[(1, r#""string""#)],
        &[
            one(1, s("ok")),
            one(1, vec![4, 0xff, 0xfe]),
            one(1, s("ok")),
        ],
    );
    let st = out.array.as_string::<i32>();
    assert_eq!(
        (st.value(0), st.is_null(1), st.value(2)),
        ("ok", true, "ok")
    );
    assert!(out.errors[1].as_ref().unwrap().contains("UTF-8"));
}

#[test]
fn payloads_without_an_id_are_the_readers_and_references_are_written_in() {
    let d = decoder(&avro(r#""string""#), writers(&[])).unwrap();
    let bytes = s("hi");
    let out = d
        .decode(&[Some(Payload {
            bytes: &bytes,
            schema_id: None,
            message_indexes: &[],
        })])
        .unwrap();
    assert_eq!(out.array.as_string::<i32>().value(0), "hi");

    let text = SchemaText {
        schema_type: SchemaType::Avro,
        schema: r#"{"type":"record","name":"P","namespace":"a","fields":[
            {"name":"home","type":"Address"},{"name":"work","type":"a.Address"}]}"#
            .into(),
        references: vec![(
            "a.Address".into(),
            r#"{"type":"record","name":"Address","namespace":"a","fields":[
                {"name":"city","type":"string"}]}"#
                .into(),
        )],
    };
    let d = decoder(&text, writers(&[])).unwrap();
    let bytes = [s("Lyon"), s("Oslo")].concat();
    let out = d
        .decode(&[Some(Payload {
            bytes: &bytes,
            schema_id: None,
            message_indexes: &[],
        })])
        .unwrap();
    let st = out.array.as_struct();
    let city = |i: usize| {
        st.column(i)
            .as_struct()
            .column(0)
            .as_string::<i32>()
            .value(0)
            .to_string()
    };
    assert_eq!((city(0), city(1)), ("Lyon".to_string(), "Oslo".to_string()));
}

#[test]
fn promotions_of_the_specification() {
    let w = r#"{"type":"record","name":"R","fields":[
        {"name":"a","type":"int"},{"name":"b","type":"int"},{"name":"c","type":"int"},
        {"name":"d","type":"long"},{"name":"e","type":"long"},{"name":"f","type":"float"},
        {"name":"g","type":"string"},{"name":"h","type":"bytes"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[
        {"name":"a","type":"long"},{"name":"b","type":"float"},{"name":"c","type":"double"},
        {"name":"d","type":"float"},{"name":"e","type":"double"},{"name":"f","type":"double"},
        {"name":"g","type":"bytes"},{"name":"h","type":"string"}]}"#;
    let big = (1i64 << 53) + 1;
    let value = [
        zz(-7),
        zz(16_777_217),
        zz(-3),
        zz(big),
        zz(big),
        1.5f32.to_le_bytes().to_vec(),
        s("é"),
        s("b"),
    ]
    .concat();
    let array = same_as_oracle(r, &[(1, w)], &[one(1, value)]);
    let st = array.as_struct();
    assert_eq!(st.column(0).as_primitive::<Int64Type>().value(0), -7);
    assert_eq!(
        st.column(1).as_primitive::<Float32Type>().value(0),
        16_777_216.0
    );
    assert_eq!(st.column(2).as_primitive::<Float64Type>().value(0), -3.0);
    assert_eq!(
        st.column(3).as_primitive::<Float32Type>().value(0),
        big as f32
    );
    assert_eq!(
        st.column(4).as_primitive::<Float64Type>().value(0),
        big as f64
    );
    assert_eq!(st.column(5).as_primitive::<Float64Type>().value(0), 1.5);
    assert_eq!(st.column(6).as_binary::<i32>().value(0), "é".as_bytes());
    assert_eq!(st.column(7).as_string::<i32>().value(0), "b");
}

#[test]
fn names_and_aliases_of_records_fields_enums_and_fixed() {
    // The writer's names in another namespace (the specification matches unqualified names);
    // a renamed record, field, enum and fixed found through the reader's aliases.
    let w = r#"{"type":"record","name":"Old","namespace":"w","fields":[
        {"name":"id","type":"long"},
        {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
        {"name":"sum","type":{"type":"fixed","name":"Sum","size":2}},
        {"name":"inner","type":{"type":"record","name":"In","fields":[{"name":"x","type":"int"}]}}]}"#;
    let r = r#"{"type":"record","name":"New","namespace":"r","aliases":["w.Old"],"fields":[
        {"name":"key","type":"long","aliases":["id"]},
        {"name":"kind","type":{"type":"enum","name":"Kind2","aliases":["w.Kind"],
          "symbols":["B","A"]}},
        {"name":"sum","type":{"type":"fixed","name":"Sum","size":2}},
        {"name":"inner","type":{"type":"record","name":"In","fields":[{"name":"x","type":"int"}]}}]}"#;
    let value = [zz(42), zz(0), vec![7, 8], zz(-1)].concat();
    let out = read(r, &[(1, w)], &[one(1, value)]);
    assert!(out.errors[0].is_none(), "{:?}", out.errors);
    let st = out.array.as_struct();
    assert_eq!(st.column(0).as_primitive::<Int64Type>().value(0), 42);
    let kind = st.column(1).as_dictionary::<Int32Type>();
    assert_eq!(kind.keys().value(0), 1, "A is the reader's symbol 1");
    assert_eq!(st.column(2).as_fixed_size_binary().value(0), [7, 8]);
    let inner = st.column(3).as_struct();
    assert_eq!(inner.column(0).as_primitive::<Int32Type>().value(0), -1);

    // Names that do not match: every value that reaches them is an error.
    let r2 = r#"{"type":"record","name":"Other","fields":[{"name":"id","type":"long"}]}"#;
    let out = read(r2, &[(1, w)], &[one(1, zz(1))]);
    assert!(
        out.errors[0].as_ref().unwrap().contains("is not record"),
        "{:?}",
        out.errors
    );
}

#[test]
fn enum_symbols_by_name_and_the_readers_default() {
    let w = r#"{"type":"enum","name":"E","symbols":["A","B","C","D"]}"#;
    let with_default = r#"{"type":"enum","name":"E","symbols":["D","B","X"],"default":"X"}"#;
    let without = r#"{"type":"enum","name":"E","symbols":["D","B","X"]}"#;
    let values: Vec<_> = (0..4)
        .map(|i| one(1, zz(i)))
        .chain([one(1, zz(4))])
        .collect();
    let out = read(with_default, &[(1, w)], &values);
    let keys = out.array.as_dictionary::<Int32Type>();
    let got: Vec<Option<i32>> = keys.keys().iter().collect();
    assert_eq!(got, [Some(2), Some(1), Some(2), Some(0), None]);
    assert!(out.errors[4].as_ref().unwrap().contains("enum index 4"));
    let values = keys.values().as_string::<i32>();
    assert_eq!(values.iter().flatten().collect::<Vec<_>>(), ["D", "B", "X"]);

    let out = read(without, &[(1, w)], &values_of(&[0, 1, 3]));
    let bad: Vec<bool> = out.errors.iter().map(Option::is_some).collect();
    assert_eq!(bad, [true, false, false]);
    assert!(
        out.errors[0].as_ref().unwrap().contains("enum symbol A"),
        "{:?}",
        out.errors
    );
}

fn values_of(ints: &[i64]) -> Vec<Option<(i64, Vec<u8>)>> {
    ints.iter().map(|&i| one(1, zz(i))).collect()
}

#[test]
fn defaults_of_every_type() {
    let w = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},
        {"name":"b","type":"boolean","default":true},
        {"name":"l","type":"long","default":-5},
        {"name":"f","type":"float","default":1.25},
        {"name":"d","type":"double","default":2.5},
        {"name":"by","type":"bytes","default":"\u00ff\u0001"},
        {"name":"s","type":"string","default":"héllo"},
        {"name":"fx","type":{"type":"fixed","name":"F","size":3},"default":"abc"},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"]},"default":"Y"},
        {"name":"arr","type":{"type":"array","items":"int"},"default":[1,2,3]},
        {"name":"m","type":{"type":"map","values":"string"},"default":{"k":"v"}},
        {"name":"rec","type":{"type":"record","name":"In","fields":[
            {"name":"x","type":"int"},{"name":"y","type":"string","default":"dflt"}]},
         "default":{"x":9}},
        {"name":"n","type":["null","string"],"default":null},
        {"name":"u","type":["null","string"],"default":"second branch"},
        {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2},
         "default":"\u0001\u0000"},
        {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"},"default":7}]}"#;
    let out = read(r, &[(1, w)], &[one(1, zz(3)), one(1, zz(4))]);
    assert!(out.errors.iter().all(Option::is_none), "{:?}", out.errors);
    let st = out.array.as_struct();
    let col = |name: &str| st.column_by_name(name).unwrap().clone();
    assert!(col("b").as_boolean().value(1));
    assert_eq!(col("l").as_primitive::<Int64Type>().value(0), -5);
    assert_eq!(col("f").as_primitive::<Float32Type>().value(0), 1.25);
    assert_eq!(col("d").as_primitive::<Float64Type>().value(0), 2.5);
    assert_eq!(col("by").as_binary::<i32>().value(0), [0xff, 1]);
    assert_eq!(col("s").as_string::<i32>().value(1), "héllo");
    assert_eq!(col("fx").as_fixed_size_binary().value(0), b"abc");
    assert_eq!(col("e").as_dictionary::<Int32Type>().keys().value(0), 1);
    let arr = col("arr");
    let arr = arr.as_list::<i32>().value(1);
    assert_eq!(arr.as_primitive::<Int32Type>().values(), &[1, 2, 3]);
    let m = col("m");
    let m = m.as_map();
    assert_eq!(m.keys().as_string::<i32>().value(0), "k");
    assert_eq!(m.values().as_string::<i32>().value(1), "v");
    let rec = col("rec");
    let rec = rec.as_struct();
    assert_eq!(rec.column(0).as_primitive::<Int32Type>().value(0), 9);
    assert_eq!(rec.column(1).as_string::<i32>().value(0), "dflt");
    assert!(col("n").is_null(0));
    assert_eq!(col("u").as_string::<i32>().value(0), "second branch");
    let dec = col("dec");
    assert_eq!(
        dec.as_primitive::<arrow_array::types::Decimal128Type>()
            .value(0),
        256
    );
    assert_eq!(
        col("ts")
            .as_primitive::<arrow_array::types::TimestampMillisecondType>()
            .value(1),
        7
    );
}

#[test]
fn a_field_the_writer_lacks_without_a_default_is_an_error() {
    // Even of a union with null first (Avro's Java reader and fastavro refuse it alike).
    let w = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},
        {"name":"b","type":["null","int"]}]}"#;
    let out = read(r, &[(1, w)], &[one(1, zz(3))]);
    let why = out.errors[0].as_ref().unwrap();
    assert!(
        why.contains("field b is not in the writer's schema and has no default"),
        "{why}"
    );
    // An invalid default is an error of the values that need it.
    let r = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},
        {"name":"b","type":"int","default":"x"}]}"#;
    let out = read(r, &[(1, w)], &[one(1, zz(3))]);
    assert!(
        out.errors[0].as_ref().unwrap().contains("default"),
        "{:?}",
        out.errors
    );
}

#[test]
fn writer_fields_of_every_type_skipped() {
    let w = r#"{"type":"record","name":"R","fields":[
        {"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"l","type":"long"},
        {"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"by","type":"bytes"},
        {"name":"s","type":"string"},{"name":"fx","type":{"type":"fixed","name":"F","size":3}},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"]}},
        {"name":"arr","type":{"type":"array","items":{"type":"map","values":"long"}}},
        {"name":"u","type":["null","string",{"type":"record","name":"In","fields":[
            {"name":"x","type":"int"}]}]},
        {"name":"keep","type":"string"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[{"name":"keep","type":"string"}]}"#;
    let arr = [
        zz(2), // two maps
        zz(1),
        s("k"),
        zz(5),
        zz(0),
        zz(-1), // a block with its size
        zz(3),
        s("k"),
        zz(6),
        zz(0),
        zz(0),
    ]
    .concat();
    let value = [
        vec![1],
        zz(-9),
        zz(1 << 40),
        1f32.to_le_bytes().to_vec(),
        2f64.to_le_bytes().to_vec(),
        s("xy"),
        s("str"),
        b"fix".to_vec(),
        zz(1),
        arr,
        zz(2),
        zz(77),
        s("kept"),
    ]
    .concat();
    let array = same_as_oracle(r, &[(1, w)], &[one(1, value.clone())]);
    assert_eq!(
        array.as_struct().column(0).as_string::<i32>().value(0),
        "kept"
    );
    // A recursive record (which arrow-avro does not take) skipped.
    let w2 = r#"{"type":"record","name":"R","fields":[
        {"name":"list","type":{"type":"record","name":"Node","fields":[
            {"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}},
        {"name":"keep","type":"string"}]}"#;
    let list = [zz(1), zz(1), zz(2), zz(1), zz(3), zz(0), s("k2")].concat();
    let out = read(r, &[(1, w2)], &[one(1, list)]);
    assert_eq!(
        out.array.as_struct().column(0).as_string::<i32>().value(0),
        "k2"
    );
    // Every prefix is an error, never a panic.
    let prefixes: Vec<_> = (0..value.len())
        .map(|n| one(1, value[..n].to_vec()))
        .collect();
    let out = read(r, &[(1, w)], &prefixes);
    assert!(out.errors.iter().all(Option::is_some));
}

#[test]
fn union_branches_matched_as_the_specification_says() {
    // A writer type to a reader union: the first branch of the same type, else a promotion.
    let array = same_as_oracle(
        r#"["null","string","long"]"#,
        &[(1, r#""int""#), (2, r#""bytes""#), (3, r#""string""#)],
        &[one(1, zz(-4)), one(2, s("b")), one(3, s("s"))],
    );
    let st = array.as_struct();
    assert_eq!(st.column(1).as_primitive::<Int64Type>().value(0), -4);
    assert_eq!(st.column(0).as_string::<i32>().value(1), "b");
    assert_eq!(st.column(0).as_string::<i32>().value(2), "s");
    // A writer union to a reader type: its branches resolved one by one, a `null` an error.
    let out = read(
        r#""double""#,
        &[(1, r#"["null","int","float"]"#)],
        &[
            one(1, [zz(1), zz(3)].concat()),
            one(1, [zz(2), 0.5f32.to_le_bytes().to_vec()].concat()),
            one(1, zz(0)),
        ],
    );
    let d = out.array.as_primitive::<Float64Type>();
    assert_eq!((d.value(0), d.value(1)), (3.0, 0.5));
    assert!(
        out.errors[2].as_ref().unwrap().contains("null"),
        "{:?}",
        out.errors
    );
    // Unions to unions, branches reordered; records by name.
    let w = r#"["null",{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]},
        {"type":"record","name":"B","fields":[{"name":"y","type":"string"}]}]"#;
    let r = r#"[{"type":"record","name":"B","fields":[{"name":"y","type":"string"}]},
        "null",{"type":"record","name":"A","fields":[{"name":"x","type":"long"}]}]"#;
    let array = same_as_oracle(
        r,
        &[(1, w)],
        &[
            one(1, [zz(1), zz(5)].concat()),
            one(1, [zz(2), s("q")].concat()),
            one(1, zz(0)),
        ],
    );
    let st = array.as_struct();
    assert!(st.is_null(2));
    let b = st.column(0).as_struct();
    let a = st.column(1).as_struct();
    assert_eq!(a.column(0).as_primitive::<Int64Type>().value(0), 5);
    assert_eq!(b.column(0).as_string::<i32>().value(1), "q");
    assert!(a.is_null(1) && b.is_null(0));
}

#[test]
fn writer_versions_interleaved_value_by_value() {
    let v1 = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#;
    let v2 = r#"{"type":"record","name":"R","fields":[{"name":"s","type":"string","default":"d"},
        {"name":"a","type":"long"},{"name":"z","type":["null","long"],"default":null}]}"#;
    let values: Vec<_> = (0..50)
        .map(|i| {
            if i % 2 == 0 {
                one(1, zz(i))
            } else {
                one(2, [s("x"), zz(i), zz(1), zz(i * 10)].concat())
            }
        })
        .collect();
    let array = same_as_oracle(v2, &[(1, v1), (2, v2)], &values);
    let a = array
        .as_struct()
        .column(1)
        .as_primitive::<Int64Type>()
        .clone();
    assert_eq!(a.values().to_vec(), (0..50).collect::<Vec<i64>>());
}

#[test]
fn types_of_every_kind_against_the_oracle() {
    let schema = r#"{"type":"record","name":"R","namespace":"n","fields":[
        {"name":"b","type":"boolean"},
        {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":40,"scale":3}},
        {"name":"dfx","type":{"type":"fixed","name":"D","size":5,"logicalType":"decimal",
          "precision":10,"scale":1}},
        {"name":"dur","type":{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}},
        {"name":"date","type":{"type":"int","logicalType":"date"}},
        {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
        {"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
        {"name":"tsn","type":{"type":"long","logicalType":"local-timestamp-nanos"}},
        {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
        {"name":"m","type":{"type":"map","values":["int","long","null"]}},
        {"name":"fd","type":["float","double"]},
        {"name":"only","type":["string"]}]}"#;
    let value = |i: i64| {
        [
            vec![(i % 2) as u8],
            s("\u{ff}\u{1}"),
            vec![0xff, 0, 0, 1, 2],
            [1u32, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect(),
            zz(i),
            zz(1000),
            zz(-1),
            zz(1 << 50),
            s("not a uuid"),
            zz(2),
            s("a"),
            [zz(0), zz(i)].concat(),
            s("b"),
            [zz(1), zz(1 << 33)].concat(),
            zz(0),
            [zz(1), 0.25f64.to_le_bytes().to_vec()].concat(),
            [zz(0), s("o")].concat(),
        ]
        .concat()
    };
    let values: Vec<_> = (0..5).map(|i| one(1, value(i))).chain([None]).collect();
    same_as_oracle(schema, &[(1, schema)], &values);
}

#[test]
fn hostile_counts_and_depths_are_errors_at_once() {
    // An array of 2^62 longs in a few bytes; a map of 2^40 entries; 2^20 nulls.
    let out = read(
        r#"{"type":"array","items":"long"}"#,
        &[(1, r#"{"type":"array","items":"long"}"#)],
        &[one(1, [zz(1 << 62), zz(1)].concat())],
    );
    assert!(out.errors[0]
        .as_ref()
        .unwrap()
        .contains("items of at least 1 bytes"));
    let nulls = r#"{"type":"array","items":"null"}"#;
    let out = read(
        nulls,
        &[(1, nulls)],
        &[one(1, [zz(1 << 20), zz(0)].concat())],
    );
    assert!(
        out.errors[0].as_ref().unwrap().contains("take no bytes"),
        "{:?}",
        out.errors
    );
    // Within the bound: decoded.
    let out = read(nulls, &[(1, nulls)], &[one(1, [zz(1000), zz(0)].concat())]);
    assert!(out.errors[0].is_none());
    // The bound is per value: many arrays of nulls together.
    let many = r#"{"type":"array","items":{"type":"array","items":"null"}}"#;
    let inner = [zz(60_000), zz(0)].concat();
    let value = [zz(3), inner.clone(), inner.clone(), inner, zz(0)].concat();
    let out = read(many, &[(1, many)], &[one(1, value)]);
    assert!(out.errors[0].is_some());
    // A recursive record skipped deeper than the limit.
    let w = r#"{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]},
        {"name":"keep","type":"int"}]}"#;
    let r = r#"{"type":"record","name":"Node","fields":[{"name":"keep","type":"int"}]}"#;
    let mut deep = Vec::new();
    for _ in 0..100_000 {
        deep.extend(zz(1));
    }
    deep.extend(zz(0));
    // On a stack of a JVM task thread's default size (1 MiB, where Spark runs the decoder):
    // optimized, the limit's depth takes under 128 KiB (measured); unoptimized frames are
    // many times larger, so a debug build gets more.
    let stack = if cfg!(debug_assertions) {
        16 << 20
    } else {
        1 << 20
    };
    let out = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || read(r, &[(1, w)], &[one(1, deep)]))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        out.errors[0].as_ref().unwrap().contains("deeper"),
        "{:?}",
        out.errors
    );
    // Negative lengths and block sizes.
    let out = read(r#""string""#, &[(1, r#""string""#)], &[one(1, zz(-3))]);
    assert!(out.errors[0].is_some());
    let out = read(
        r#"{"type":"array","items":"int"}"#,
        &[(1, r#"{"type":"array","items":"int"}"#)],
        &[one(1, [zz(-1), zz(-5), zz(1), zz(0)].concat())],
    );
    assert!(out.errors[0]
        .as_ref()
        .unwrap()
        .contains("block of -5 bytes"));
}

#[test]
fn batches_one_after_the_other_keep_their_builders() {
    let schema = r#"{"type":"record","name":"R","fields":[{"name":"s","type":"string"},
        {"name":"xs","type":{"type":"array","items":"string"}}]}"#;
    let d = decoder(&avro(schema), writers(&[(1, schema)])).unwrap();
    for round in 0..3 {
        let values: Vec<_> = (0..100 * (round + 1))
            .map(|i| {
                one(
                    1,
                    [s("x"), zz(i % 3), s("a"), s("b"), zz(0)].concat().to_vec(),
                )
            })
            .collect();
        // Each value's array has 0 to 2 items but its bytes always two: some are bad.
        let out = run(d.as_ref(), &values);
        let bad = out.errors.iter().filter(|e| e.is_some()).count();
        assert!(bad > 0 && bad < values.len());
    }
}

#[test]
fn reader_schemas_of_any_type_and_shapes() {
    // A `null` takes no bytes (arrow-avro's decoder, fed a payload at a time, cannot tell
    // an empty one consumed), and a `null` field is a null column (arrow-avro's fails to
    // build its struct).
    let out = read(r#""null""#, &[(1, r#""null""#)], &[one(1, vec![]), None]);
    assert!(out.errors.iter().all(Option::is_none));
    assert_eq!(out.array.data_type(), &DataType::Null);
    let r = r#"{"type":"record","name":"R","fields":[{"name":"n","type":"null"},
        {"name":"x","type":"int"}]}"#;
    let out = read(r, &[(1, r)], &[one(1, zz(4)), None]);
    let st = out.array.as_struct();
    assert_eq!(
        (st.column(0).len(), st.is_valid(0), st.is_null(1)),
        (2, true, true)
    );
    same_as_oracle(r#"["null"]"#, &[(1, r#"["null"]"#)], &[one(1, zz(0))]);
    let array = same_as_oracle(
        r#"["int","long","null"]"#,
        &[(1, r#"["int","long","null"]"#)],
        &[
            one(1, [zz(0), zz(-2)].concat()),
            one(1, [zz(1), zz(1 << 40)].concat()),
            one(1, zz(2)),
        ],
    );
    assert_eq!(array.data_type(), &DataType::Int64);
}

#[test]
fn promotions_into_logical_types() {
    // An int into a timestamp's long, a string into a decimal's bytes: resolution goes by
    // the types the logical types are on.
    let w = r#"{"type":"record","name":"R","fields":[{"name":"t","type":"int"},
        {"name":"d","type":"string"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[
        {"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}"#;
    let array = same_as_oracle(r, &[(1, w)], &[one(1, [zz(-5), s("\u{1}")].concat())]);
    let st = array.as_struct();
    let t = st.column(0);
    assert_eq!(
        t.as_primitive::<arrow_array::types::TimestampMillisecondType>()
            .value(0),
        -5
    );
    let d = st.column(1);
    assert_eq!(
        d.as_primitive::<arrow_array::types::Decimal128Type>()
            .value(0),
        1
    );
}

#[test]
fn strings_are_utf8_each_not_only_all_together() {
    // "\xc3" then "\xa9": not UTF-8 alone, "é" together (the column's bytes are checked at
    // once, and each string's first byte): both bad, the string between them good.
    let schema = r#"{"type":"record","name":"R","fields":[{"name":"s","type":"string"},
        {"name":"m","type":{"type":"map","values":"int"}}]}"#;
    let value = |text: &[u8], key: &[u8]| {
        [
            zz(text.len() as i64),
            text.to_vec(),
            zz(1),
            zz(key.len() as i64),
            key.to_vec(),
            zz(1),
            zz(0),
        ]
        .concat()
    };
    let out = read(
        schema,
        &[(1, schema)],
        &[
            one(1, value(b"\xc3", b"k")),
            one(1, value(b"\xa9", b"k")),
            one(1, value("é".as_bytes(), "ké".as_bytes())),
            one(1, value(b"a", b"\xc3")),
            one(1, value(b"b", b"\xa9")),
        ],
    );
    let bad: Vec<bool> = out.errors.iter().map(Option::is_some).collect();
    assert_eq!(bad, [true, true, false, true, true]);
    assert!(out.errors[3].as_ref().unwrap().contains("UTF-8"));
    let st = out.array.as_struct();
    assert_eq!(st.column(0).as_string::<i32>().value(2), "é");
}

#[test]
fn decimals_match_only_with_the_same_precision_and_scale() {
    let dec = |p: u32, s: u32| {
        format!(r#"{{"type":"bytes","logicalType":"decimal","precision":{p},"scale":{s}}}"#)
    };
    let (w, same, other) = (dec(9, 2), dec(9, 2), dec(9, 3));
    let value = [zz(2), vec![1, 0]].concat();
    let out = read(&same, &[(1, &w)], &[one(1, value.clone())]);
    assert!(out.errors[0].is_none());
    let out = read(&other, &[(1, &w)], &[one(1, value.clone())]);
    assert!(
        out.errors[0]
            .as_ref()
            .unwrap()
            .contains("decimal(9, 2) is not decimal(9, 3)"),
        "{:?}",
        out.errors
    );
    // Plain bytes into a decimal, and back: bytes are bytes.
    let out = read(&other, &[(1, r#""bytes""#)], &[one(1, value)]);
    assert!(out.errors[0].is_none());
}
