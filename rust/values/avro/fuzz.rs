//! The fuzz target `avro_value` (`fuzz/`, `crate::fuzzing::avro_value`): hostile payloads
//! through the compiled Avro decoder, compared with `arrow-avro`'s (the oracle).
//!
//! Schemas with every type, logical type and resolution rule both decoders take (two writer
//! versions resolving to the reader: promotions, enum symbols mapped with a default, fields
//! added with defaults, writer fields of every type skipped, unions to unions and to plain
//! types, reordered fields). For each payload: the compiled decoder (the whole batch at once)
//! and the oracle (the payload alone) both decode it, and then give the same value; or only
//! the oracle does, where the compiled decoder is stricter than `arrow-avro` (a union tag out
//! of range that `arrow-avro` reads as a value for a `[null, T]` union, an enum index out of
//! range that it reads as the reader's default, the limits on items that take no bytes and on
//! depth); never only the compiled one. A second decoder, with the schemas `arrow-avro` does
//! not take (a recursive record, fields of the `null` type, records of no fields, arrays of
//! items that take no bytes), is only checked to give a valid column.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::values::avro::decoder::decoder;
use crate::values::avro::oracle::oracle;
use crate::values::decoder::{Payload, PayloadDecoder, SchemaText, SchemaType};

const READER: &str = r#"{"type":"record","name":"R","namespace":"fz","fields":[
    {"name":"b","type":"boolean"},
    {"name":"i","type":"long"},
    {"name":"f","type":"double"},
    {"name":"s","type":"string"},
    {"name":"by","type":"bytes","default":"\u00ff\u0000"},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"],"default":"A"}},
    {"name":"fx","type":{"type":"fixed","name":"F","size":3}},
    {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
    {"name":"decf","type":{"type":"fixed","name":"DF","size":20,"logicalType":"decimal",
      "precision":45,"scale":0}},
    {"name":"dur","type":{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}},
    {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
    {"name":"day","type":{"type":"int","logicalType":"date"}},
    {"name":"arr","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
      {"name":"k","type":"string"},{"name":"v","type":["null","double"]}]}}},
    {"name":"m","type":{"type":"map","values":["int","long"]}},
    {"name":"u","type":["null","string","Item",{"type":"array","items":"float"}]},
    {"name":"fd","type":["float","double","null"]},
    {"name":"n","type":["null",{"type":"map","values":"E"}],"default":null},
    {"name":"nested","type":{"type":"record","name":"In","fields":[
      {"name":"x","type":["string","null"]},
      {"name":"y","type":{"type":"array","items":{"type":"array","items":"int"}}}]}}]}"#;

/// Promotions, a renamed enum symbol set, a field the reader adds, fields it drops, a
/// record's field it drops, a union reordered.
const WRITER_1: &str = r#"{"type":"record","name":"R","namespace":"fz","fields":[
    {"name":"gone","type":{"type":"record","name":"Gone","fields":[
      {"name":"a","type":{"type":"map","values":{"type":"array","items":["null","long",
        {"type":"enum","name":"G","symbols":["P","Q"]}]}}},
      {"name":"b","type":{"type":"fixed","name":"GF","size":4}},
      {"name":"c","type":["string","double","boolean"]},
      {"name":"d","type":"float"}]}},
    {"name":"b","type":"boolean"},
    {"name":"i","type":"int"},
    {"name":"f","type":"float"},
    {"name":"s","type":"bytes"},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["C","B","Z"]}},
    {"name":"fx","type":{"type":"fixed","name":"F","size":3}},
    {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
    {"name":"decf","type":{"type":"fixed","name":"DF","size":20,"logicalType":"decimal",
      "precision":45,"scale":0}},
    {"name":"dur","type":{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}},
    {"name":"ts","type":"long"},
    {"name":"day","type":"int"},
    {"name":"arr","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
      {"name":"extra","type":{"type":"map","values":"string"}},
      {"name":"v","type":["null","double"]},{"name":"k","type":"string"}]}}},
    {"name":"m","type":{"type":"map","values":["long","int"]}},
    {"name":"u","type":["null",{"type":"array","items":"float"},"string","Item"]},
    {"name":"fd","type":["null","double","float"]},
    {"name":"nested","type":{"type":"record","name":"In","fields":[
      {"name":"y","type":{"type":"array","items":{"type":"array","items":"int"}}},
      {"name":"x","type":["string","null"]}]}},
    {"name":"tail","type":"string"}]}"#;

/// Plain types into the reader's unions, fields reordered.
const WRITER_2: &str = r#"{"type":"record","name":"R","namespace":"fz","fields":[
    {"name":"u","type":"string"},
    {"name":"fd","type":"int"},
    {"name":"m","type":{"type":"map","values":"int"}},
    {"name":"b","type":"boolean"},
    {"name":"i","type":"long"},
    {"name":"f","type":"long"},
    {"name":"s","type":"string"},
    {"name":"by","type":"string"},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
    {"name":"fx","type":{"type":"fixed","name":"F","size":3}},
    {"name":"dec","type":"bytes"},
    {"name":"decf","type":{"type":"fixed","name":"DF","size":20}},
    {"name":"dur","type":{"type":"fixed","name":"Dur","size":12}},
    {"name":"ts","type":"long"},
    {"name":"day","type":"int"},
    {"name":"arr","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
      {"name":"k","type":"bytes"},{"name":"v","type":"float"}]}}},
    {"name":"n","type":{"type":"map","values":"E"}},
    {"name":"nested","type":{"type":"record","name":"In","fields":[
      {"name":"x","type":"string"},
      {"name":"y","type":{"type":"array","items":{"type":"array","items":"int"}}}]}}]}"#;

/// What `arrow-avro` does not read: a recursive record skipped, `null` fields, records of
/// no fields, arrays of items that take no bytes, a fixed of size 0.
const ZERO_READER: &str = r#"{"type":"record","name":"Z","fields":[
    {"name":"n","type":"null"},
    {"name":"nulls","type":{"type":"array","items":"null"}},
    {"name":"empties","type":{"type":"array","items":{"type":"record","name":"E0","fields":[]}}},
    {"name":"f0","type":{"type":"map","values":{"type":"fixed","name":"F0","size":0}}},
    {"name":"keep","type":["null","long"]}]}"#;

const ZERO_WRITER: &str = r#"{"type":"record","name":"Z","fields":[
    {"name":"list","type":{"type":"record","name":"Node","fields":[
      {"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}},
    {"name":"n","type":"null"},
    {"name":"nulls","type":{"type":"array","items":"null"}},
    {"name":"empties","type":{"type":"array","items":{"type":"record","name":"E0","fields":[]}}},
    {"name":"f0","type":{"type":"map","values":{"type":"fixed","name":"F0","size":0}}},
    {"name":"skipped","type":{"type":"array","items":{"type":"array","items":"null"}}},
    {"name":"keep","type":["null","long"]}]}"#;

struct Decoders {
    compiled: Arc<dyn PayloadDecoder>,
    oracle: Arc<dyn PayloadDecoder>,
    zero: Arc<dyn PayloadDecoder>,
}

fn decoders() -> &'static Decoders {
    static DECODERS: OnceLock<Decoders> = OnceLock::new();
    DECODERS.get_or_init(|| {
        let avro = |s: &str| SchemaText::new(SchemaType::Avro, s);
        let writers: Arc<HashMap<i64, Arc<SchemaText>>> = Arc::new(HashMap::from([
            (1, Arc::new(avro(WRITER_1))),
            (2, Arc::new(avro(WRITER_2))),
            (3, Arc::new(avro(READER))),
        ]));
        let zero: Arc<HashMap<i64, Arc<SchemaText>>> =
            Arc::new(HashMap::from([(1, Arc::new(avro(ZERO_WRITER)))]));
        Decoders {
            compiled: decoder(&avro(READER), writers.clone()).expect("the schemas compile"),
            oracle: oracle(&avro(READER), writers).expect("the schemas compile"),
            zero: decoder(&avro(ZERO_READER), zero).expect("the schemas compile"),
        }
    })
}

/// Arbitrary bytes as payloads: the first byte cuts the rest into pieces (4 bytes a step),
/// then the rest whole; the pieces' writer ids take turns (1, 2, 3, none).
fn pieces(data: &[u8]) -> Vec<Option<Payload<'_>>> {
    let Some((&cut, rest)) = data.split_first() else {
        return Vec::new();
    };
    let size = usize::from(cut).max(1) * 4;
    rest.chunks(size)
        .take(64)
        .chain([rest])
        .enumerate()
        .map(|(i, bytes)| {
            Some(Payload {
                bytes,
                schema_id: [Some(1), Some(2), Some(3), None][i % 4],
                message_indexes: &[],
            })
        })
        .chain([None])
        .collect()
}

/// See the module's documentation.
pub(crate) fn fuzz(data: &[u8]) {
    if data.len() > 1 << 16 {
        return;
    }
    let d = decoders();
    let payloads = pieces(data);
    let ours = d
        .compiled
        .decode(&payloads)
        .expect("decoding never fails a batch");
    assert_eq!(ours.array.len(), payloads.len());
    assert_eq!(ours.array.data_type(), d.compiled.data_type());
    ours.array.to_data().validate_full().expect("a valid array");
    for (i, p) in payloads.iter().enumerate() {
        let theirs = d
            .oracle
            .decode(std::slice::from_ref(p))
            .expect("decoding never fails a batch");
        match (&ours.errors[i], &theirs.errors[0]) {
            (None, None) => assert_eq!(
                ours.array.slice(i, 1).to_data(),
                theirs.array.to_data(),
                "payload {i} decodes to another value than arrow-avro's"
            ),
            (None, Some(why)) => {
                panic!("payload {i} decodes, and does not with arrow-avro: {why}")
            }
            (Some(_), _) => {}
        }
    }
    // The schemas arrow-avro does not take: a valid column, nothing more.
    let zero = d
        .zero
        .decode(&payloads)
        .expect("decoding never fails a batch");
    zero.array.to_data().validate_full().expect("a valid array");
    assert_eq!(zero.array.len(), payloads.len());
}

#[cfg(test)]
mod tests {
    use crate::values::avro::tests::{s, zz};

    #[test]
    fn the_fuzz_entry_takes_good_values_and_garbage() {
        let common = |i: i64| [vec![1], zz(i), 1.5f32.to_le_bytes().to_vec(), s("str")].concat();
        // Writer 1: gone (a map of one array of two branches, a fixed, a union, a float), ...
        let gone = [
            zz(1),
            s("k"),
            zz(2),
            zz(1),
            zz(7),
            [zz(2), zz(1)].concat(),
            zz(0),
            zz(0),
            b"gfix".to_vec(),
            [zz(2), vec![1]].concat(),
            0.5f32.to_le_bytes().to_vec(),
        ]
        .concat();
        let tail = [
            zz(2),
            b"fix".to_vec(),
            s("\u{1}"),
            vec![0; 20],
            vec![0; 12],
            zz(99),
            zz(3),
            // arr: one item (extra map, v null, k)
            zz(1),
            zz(0),
            zz(0),
            s("k"),
            zz(0),
            // m: one entry, long branch
            zz(1),
            s("x"),
            zz(0),
            zz(5),
            zz(0),
            // u: string; fd: float
            [zz(2), s("u")].concat(),
            [zz(2), 2.5f32.to_le_bytes().to_vec()].concat(),
            // nested: y [[1]], x string
            [zz(1), zz(1), zz(1), zz(0), zz(0)].concat(),
            [zz(0), s("x")].concat(),
            s("tail"),
        ]
        .concat();
        let one = [gone, common(4), tail].concat();
        // Writer 2: u, fd, m first; f a long.
        let two = [
            s("u"),
            zz(3),
            zz(0),
            vec![0],
            zz(5),
            zz(7),
            s("str"),
            s("by"),
            zz(1),
            b"fix".to_vec(),
            s("d"),
            vec![0; 20],
            vec![0; 12],
            zz(9),
            zz(9),
            [zz(1), s("k"), 1f32.to_le_bytes().to_vec(), zz(0)].concat(),
            [zz(1), s("a"), zz(2), zz(0)].concat(),
            [s("x"), zz(0)].concat(),
        ]
        .concat();
        // One piece, the whole value (writer 1), then the rest whole again (writer 2).
        for value in [&one, &two] {
            assert!(value.len() < 1020);
            let mut data = vec![255];
            data.extend(value.iter());
            super::fuzz(&data);
            // The same value as writer 2's: the second piece.
        }
        let mut data = vec![255];
        data.extend(&two);
        let payloads = super::pieces(&data);
        assert_eq!(payloads[1].unwrap().schema_id, Some(2));
        let out = super::decoders().compiled.decode(&payloads).unwrap();
        assert!(out.errors[1].is_none(), "{:?}", out.errors);
        let data = [&[255u8][..], &one].concat();
        let payloads = super::pieces(&data);
        let out = super::decoders().compiled.decode(&payloads).unwrap();
        assert!(out.errors[0].is_none(), "{:?}", out.errors);
        for cut in [1u8, 2, 3, 7, 255] {
            let mut data = vec![cut];
            data.extend((0..700u32).map(|i| (i * 31 % 251) as u8));
            super::fuzz(&data);
        }
        super::fuzz(&[]);
    }
}
