//! [`AvroDecoder`], the decoder through `arrow-avro` (Apache Arrow's Avro crate) that came
//! before the compiled one (`decoder.rs`), kept as the oracle it is tested against
//! ([`oracle`]): every writer schema resolved to the one reader schema by `arrow-avro`, a
//! batch at a time. Built for the tests, and with the feature `oracles` for the fuzz target
//! and the benchmark; no release library carries it.
//!
//! The oracle is fed one payload at a time, its schema's framing (`0` and an 8-byte key) then
//! its own bytes, not copied (`feed.rs`), so each must decode to exactly one record using
//! exactly its own bytes. A payload that does not (truncated, trailing bytes, bad union
//! branch, ...) is null with its reason; the decoder, whose builders it may have left
//! half-filled, is built again and the good payloads since the last flush are decoded again.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, UInt32Array};
use arrow_avro::reader::Decoder;
use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore};
use arrow_schema::DataType;

use crate::error::{Error, ErrorKind, Result};
use crate::values::avro::arrow::{avro_error, build, plain, retype, wrapped, READER_ID};
use crate::values::avro::feed::{by_schema, decode_one, try_flush, Keys, Span};
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, WriterSchemas,
};

/// An Avro decoder for one reader schema.
pub struct AvroDecoder {
    reader: String,
    data_type: DataType,
    writers: Arc<dyn WriterSchemas>,
    state: Mutex<State>,
}

struct State {
    /// The wrapped writer schemas known so far, by schema id (the reader's: [`READER_ID`]).
    known: HashMap<u64, String>,
    /// The store the decoder is built from: each known schema under its key.
    store: SchemaStore,
    /// A schema id's key in `store` is the id XOR this, picked at random (see `feed.rs`).
    seed: u64,
    /// Ids whose writer schema cannot be used, and why.
    bad: HashMap<u64, String>,
    decoder: Decoder,
}

/// The same column through `arrow-avro`'s own decoder: the oracle of the tests, the fuzz
/// target and the benchmark.
pub fn oracle(
    reader: &SchemaText,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    // The column users get (Spark's shapes of unions) from arrow-avro's.
    let inner = AvroDecoder::new(reader, writers)?;
    let shaper = crate::values::avro::shape::Shaper::new(inner.data_type());
    Ok(crate::values::avro::shape::shaped(Arc::new(inner), shaper))
}

/// The store of the `known` schemas under `seed`'s keys.
fn keyed_store(known: &HashMap<u64, String>, seed: u64) -> Result<SchemaStore> {
    let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id64);
    for (&id, text) in known {
        store
            .set(Fingerprint::Id64(id ^ seed), AvroSchema::new(text.clone()))
            .map_err(avro_error)?;
    }
    Ok(store)
}

impl AvroDecoder {
    /// The decoder of `reader` through `arrow-avro` (see [`oracle`]).
    pub fn new(reader: &SchemaText, writers: Arc<dyn WriterSchemas>) -> Result<AvroDecoder> {
        if reader.schema_type != SchemaType::Avro {
            return Err(Error::invalid_argument(format!(
                "the reader schema is {}, not Avro",
                reader.schema_type.name()
            )));
        }
        let reader = wrapped(reader)?;
        let known = HashMap::from([(READER_ID, reader.clone())]);
        let seed = Keys::seed(0);
        let store = keyed_store(&known, seed)?;
        let decoder = build(&reader, &store)?;
        let schema = decoder.schema();
        let data_type = plain(schema.field(0).data_type());
        Ok(AvroDecoder {
            reader,
            data_type,
            writers,
            state: Mutex::new(State {
                known,
                store,
                seed,
                bad: HashMap::new(),
                decoder,
            }),
        })
    }

    /// Adds the writer schemas of `ids` not known yet; those that cannot be used go to `bad`.
    fn learn(&self, state: &mut State, ids: &HashSet<u64>) -> Result<()> {
        let mut changed = false;
        for &id in ids {
            if state.known.contains_key(&id) || state.bad.contains_key(&id) {
                continue;
            }
            let why = match self.writers.writer(id as i64) {
                None => Err(format!("schema id {id} is not in the registry")),
                Some(w) if w.schema_type != SchemaType::Avro => Err(format!(
                    "schema id {id} is {}, not Avro",
                    w.schema_type.name()
                )),
                Some(w) => self
                    .check_writer(&w)
                    .map_err(|e| format!("schema id {id}: {e}")),
            };
            match why {
                Ok(text) => {
                    state
                        .store
                        .set(
                            Fingerprint::Id64(id ^ state.seed),
                            AvroSchema::new(text.clone()),
                        )
                        .map_err(avro_error)?;
                    state.known.insert(id, text);
                    changed = true;
                }
                Err(why) => {
                    state.bad.insert(id, why);
                }
            }
        }
        if changed {
            state.decoder = build(&self.reader, &state.store)?;
        }
        Ok(())
    }

    /// Picks a seed under which no payload of `payloads` ends with a known schema's framing
    /// (see `feed.rs`), and builds the decoder again if it changed.
    fn rekey(&self, state: &mut State, payloads: &[Option<Payload<'_>>]) -> Result<()> {
        let clash = |seed: u64| {
            payloads
                .iter()
                .flatten()
                .any(|p| Keys::ends_framed(p.bytes, seed, &state.known))
        };
        if !clash(state.seed) {
            return Ok(());
        }
        for salt in 1..=16u64 {
            let seed = Keys::seed(salt);
            if !clash(seed) {
                state.seed = seed;
                state.store = keyed_store(&state.known, seed)?;
                state.decoder = build(&self.reader, &state.store)?;
                return Ok(());
            }
        }
        Err(Error::new(
            ErrorKind::Internal,
            "no Avro schema key that no payload ends with".to_string(),
        ))
    }

    /// The wrapped writer schema, if it resolves to the reader schema.
    fn check_writer(&self, writer: &SchemaText) -> std::result::Result<String, String> {
        let text = wrapped(writer).map_err(|e| e.message)?;
        let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id64);
        store
            .set(Fingerprint::Id64(0), AvroSchema::new(text.clone()))
            .map_err(|e| e.to_string())?;
        build(&self.reader, &store)
            .map_err(|e| format!("does not resolve to the reader schema: {}", e.message))?;
        Ok(text)
    }
}

impl AvroDecoder {
    /// Flushes what the decoder holds (the `pending` spans) into `pieces`. If the column does
    /// not build, the spans are decoded and flushed one at a time to find the bad ones, whose
    /// errors are noted.
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &self,
        state: &mut State,
        payloads: &[Option<Payload<'_>>],
        spans: &[Span],
        pending: &mut Vec<usize>,
        pieces: &mut Vec<ArrayRef>,
        errors: &mut [Option<String>],
    ) -> Result<()> {
        match try_flush(&mut state.decoder) {
            Ok(piece) => pieces.extend(piece),
            Err(_) => {
                state.decoder = build(&self.reader, &state.store)?;
                for &j in pending.iter() {
                    let (i, _, prefix) = spans[j];
                    let one = decode_one(&mut state.decoder, &prefix, bytes_of(payloads, i))
                        .and_then(|()| try_flush(&mut state.decoder));
                    match one {
                        Ok(piece) => pieces.extend(piece),
                        Err(why) => {
                            errors[i] = Some(why);
                            state.decoder = build(&self.reader, &state.store)?;
                        }
                    }
                }
            }
        }
        pending.clear();
        Ok(())
    }
}

/// The bytes of payload `i` (one the spans were made of).
fn bytes_of<'a>(payloads: &[Option<Payload<'a>>], i: usize) -> &'a [u8] {
    payloads[i].map_or(&[], |p| p.bytes)
}

impl PayloadDecoder for AvroDecoder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *guard;
        let id_of = |p: &Payload<'_>| p.schema_id.map_or(READER_ID, |id| id as u64);
        let ids: HashSet<u64> = payloads.iter().flatten().map(id_of).collect();
        self.learn(state, &ids)?;
        self.rekey(state, payloads)?;

        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        let mut spans: Vec<Span> = Vec::with_capacity(payloads.len());
        for (i, p) in payloads.iter().enumerate() {
            let Some(p) = p else { continue };
            let id = id_of(p);
            if let Some(why) = state.bad.get(&id) {
                errors[i] = Some(why.clone());
                continue;
            }
            spans.push((i, id, Keys::prefix(id, state.seed)));
        }
        // One run per writer schema (the decoder switches schema only between flushes):
        // values of interleaved versions are decoded by version, and put back in order below.
        let spans = by_schema(spans);

        let mut pieces: Vec<ArrayRef> = Vec::new();
        let mut rows: Vec<Option<u32>> = vec![None; payloads.len()];
        let mut decoded = 0u32;
        // The spans decoded since the last flush.
        let mut pending: Vec<usize> = Vec::new();
        let mut current: Option<u64> = None;
        for (k, &(i, id, prefix)) in spans.iter().enumerate() {
            if current != Some(id) || state.decoder.capacity() < 2 {
                self.settle(
                    state,
                    payloads,
                    &spans,
                    &mut pending,
                    &mut pieces,
                    &mut errors,
                )?;
                current = Some(id);
            }
            match decode_one(&mut state.decoder, &prefix, bytes_of(payloads, i)) {
                Ok(()) => pending.push(k),
                Err(why) => {
                    errors[i] = Some(why);
                    // The decoder may hold half a record: build it again, and decode again
                    // what it held.
                    state.decoder = build(&self.reader, &state.store)?;
                    for &j in &pending {
                        let (i, _, prefix) = spans[j];
                        decode_one(&mut state.decoder, &prefix, bytes_of(payloads, i)).map_err(
                            |why| {
                                Error::new(
                                    ErrorKind::Internal,
                                    format!("an Avro payload decoded once and not again: {why}"),
                                )
                            },
                        )?;
                    }
                    self.settle(
                        state,
                        payloads,
                        &spans,
                        &mut pending,
                        &mut pieces,
                        &mut errors,
                    )?;
                    current = None;
                }
            }
        }
        self.settle(
            state,
            payloads,
            &spans,
            &mut pending,
            &mut pieces,
            &mut errors,
        )?;
        // The payloads that decoded, in the order decoded, are the rows of the pieces
        // concatenated.
        for &(i, _, _) in &spans {
            if errors[i].is_none() {
                rows[i] = Some(decoded);
                decoded += 1;
            }
        }
        let array = assemble(&self.data_type, pieces, rows)?;
        Ok(Decoded { array, errors })
    }
}

/// The decoded rows put where their payloads were, null elsewhere.
fn assemble(
    data_type: &DataType,
    pieces: Vec<ArrayRef>,
    rows: Vec<Option<u32>>,
) -> Result<ArrayRef> {
    let internal = |e: arrow_schema::ArrowError| Error::new(ErrorKind::Internal, e.to_string());
    let pieces = pieces
        .into_iter()
        .map(|p| retype(p, data_type))
        .collect::<Result<Vec<_>>>()?;
    let pieces: Vec<ArrayRef> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
    let in_order = rows.iter().enumerate().all(|(i, r)| *r == Some(i as u32));
    match pieces.len() {
        0 => Ok(arrow_array::new_null_array(data_type, rows.len())),
        1 if in_order && pieces[0].len() == rows.len() => Ok(pieces[0].clone()),
        // Runs in order with no row between them (writer versions in runs): the pieces one
        // after the other, a copy by buffers rather than by rows.
        _ if in_order => {
            let refs: Vec<&dyn Array> = pieces.iter().map(|a| a.as_ref()).collect();
            let joined = arrow_select::concat::concat(&refs).map_err(internal)?;
            Ok(arrow_array::make_array(one_dictionary(joined.to_data())))
        }
        1 => {
            let indices = UInt32Array::from(rows);
            arrow_select::take::take(pieces[0].as_ref(), &indices, None).map_err(internal)
        }
        _ => {
            // Several runs (writer versions, or a bad value between good ones): the runs one
            // after the other (by buffers), then each row taken from there in one pass.
            let refs: Vec<&dyn Array> = pieces.iter().map(|a| a.as_ref()).collect();
            let all = arrow_select::concat::concat(&refs).map_err(internal)?;
            let indices = UInt32Array::from(rows);
            let joined =
                arrow_select::take::take(all.as_ref(), &indices, None).map_err(internal)?;
            Ok(arrow_array::make_array(one_dictionary(joined.to_data())))
        }
    }
}

/// `data` with every enum's dictionary (each piece decoded brings its own copy of the
/// symbols, and concatenating them repeats them) reduced to the symbols once, in their order,
/// as one decode gives it: what Parquet, Spark and the Avro encoder expect.
fn one_dictionary(data: arrow_data::ArrayData) -> arrow_data::ArrayData {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    let children: Vec<arrow_data::ArrayData> = data
        .child_data()
        .iter()
        .map(|c| one_dictionary(c.clone()))
        .collect();
    let is_enum = matches!(data.data_type(), DataType::Dictionary(k, v)
        if **k == DataType::Int32 && **v == DataType::Utf8);
    if !is_enum {
        if children.is_empty() {
            return data;
        }
        let builder = data.into_builder().child_data(children);
        // SAFETY: each child keeps its type and length; only its dictionary values shrink,
        // with its keys remapped to them.
        return unsafe { builder.build_unchecked() };
    }
    let array = arrow_array::make_array(data.clone());
    let dict = array.as_dictionary::<Int32Type>();
    let values = dict.values().as_string::<i32>();
    let mut index: HashMap<&str, i32> = HashMap::new();
    let mut remap = Vec::with_capacity(values.len());
    let mut symbols = arrow_array::builder::StringBuilder::new();
    for v in values.iter() {
        let v = v.unwrap_or_default();
        let next = index.len() as i32;
        let i = *index.entry(v).or_insert_with(|| {
            symbols.append_value(v);
            next
        });
        remap.push(i);
    }
    if index.len() == values.len() {
        return data;
    }
    let keys: arrow_array::Int32Array = dict
        .keys()
        .iter()
        .map(|k| k.and_then(|k| remap.get(k as usize).copied()))
        .collect();
    match arrow_array::DictionaryArray::<Int32Type>::try_new(keys, Arc::new(symbols.finish())) {
        Ok(one) => one.to_data(),
        Err(_) => data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;

    fn avro(s: &str) -> SchemaText {
        SchemaText::new(SchemaType::Avro, s)
    }

    fn zigzag(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        crate::format::varint::write_varlong(&mut out, v);
        out
    }

    #[test]
    fn resolves_versions_and_isolates_bad_payloads() {
        let v1 = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}"#;
        let v2 = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},
            {"name":"b","type":"string","default":"x"}]}"#;
        let writers = HashMap::<i64, Arc<SchemaText>>::from([
            (1, Arc::new(avro(v1))),
            (2, Arc::new(avro(v2))),
            (
                3,
                Arc::new(SchemaText {
                    schema_type: SchemaType::Json,
                    schema: "{}".into(),
                    references: vec![],
                }),
            ),
        ]);
        let d = AvroDecoder::new(&avro(v2), Arc::new(writers)).unwrap();
        let one = zigzag(5);
        let mut two = zigzag(6);
        two.extend(zigzag(2));
        two.extend(b"yz");
        let truncated = {
            let mut t = zigzag(7);
            t.extend(zigzag(10));
            t.extend(b"ab");
            t
        };
        let mut trailing = zigzag(8);
        trailing.push(0);
        let p = |bytes: &'static [u8], id: i64| {
            Some(Payload {
                bytes,
                schema_id: Some(id),
                message_indexes: &[],
            })
        };
        let one: &'static [u8] = one.leak();
        let two: &'static [u8] = two.leak();
        let truncated: &'static [u8] = truncated.leak();
        let trailing: &'static [u8] = trailing.leak();
        let payloads = vec![
            p(one, 1),
            p(two, 2),
            None,
            p(truncated, 2),
            p(one, 1),
            p(one, 9),
            p(trailing, 1),
            p(one, 3),
            p(two, 2),
        ];
        let out = d.decode(&payloads).unwrap();
        let s = out.array.as_struct();
        assert_eq!(s.len(), 9);
        let a = s.column(0).as_primitive::<Int64Type>();
        let b = s.column(1).as_string::<i32>();
        let ok: Vec<usize> = (0..9).filter(|&i| s.is_valid(i)).collect();
        assert_eq!(ok, vec![0, 1, 4, 8]);
        assert_eq!((a.value(0), b.value(0)), (5, "x"));
        assert_eq!((a.value(1), b.value(1)), (6, "yz"));
        assert_eq!(a.value(4), 5);
        assert_eq!(a.value(8), 6);
        let errors: Vec<bool> = out.errors.iter().map(Option::is_some).collect();
        assert_eq!(
            errors,
            vec![false, false, false, true, false, true, true, true, false]
        );
        assert!(out.errors[5]
            .as_ref()
            .unwrap()
            .contains("not in the registry"));
        assert!(out.errors[7].as_ref().unwrap().contains("not Avro"));
        assert!(out.errors[6].as_ref().unwrap().contains("left after"));
    }

    #[test]
    fn strings_that_are_not_utf8_are_bad_values_alone() {
        let d = AvroDecoder::new(
            &avro(r#""string""#),
            Arc::new(HashMap::<i64, Arc<SchemaText>>::new()),
        )
        .unwrap();
        let good = [4u8, b'o', b'k'];
        let bad = [4u8, 0xff, 0xfe];
        let p = |bytes: &'static [u8]| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        };
        let good: &'static [u8] = good.to_vec().leak();
        let bad: &'static [u8] = bad.to_vec().leak();
        let out = d.decode(&[p(good), p(bad), p(good)]).unwrap();
        let s = out.array.as_string::<i32>();
        assert_eq!((s.value(0), s.is_null(1), s.value(2)), ("ok", true, "ok"));
        assert!(out.errors[1].as_ref().unwrap().contains("UTF-8"));
    }

    #[test]
    fn bytes_left_that_look_like_framing_are_still_bytes_left() {
        let schema = r#"{"type":"record","name":"F","fields":[{"name":"a","type":"long"},
            {"name":"f","type":{"type":"fixed","name":"E","size":8}}]}"#;
        let d = AvroDecoder::new(
            &avro(schema),
            Arc::new(HashMap::<i64, Arc<SchemaText>>::new()),
        )
        .unwrap();
        let seed = d.state.lock().unwrap().seed;
        let framing = Keys::prefix(READER_ID, seed);
        // A record (a = 1, f = 8 bytes) and, after it, exactly a known schema's framing: fed
        // as is, the decoder takes those bytes for the next record's framing and reports the
        // payload whole (what `decode` must not let happen).
        let mut trailing = vec![2u8, 1, 2, 3, 4, 5, 6, 7, 8];
        trailing.extend(framing);
        {
            let mut state = d.state.lock().unwrap();
            assert!(decode_one(&mut state.decoder, &framing, &trailing).is_ok());
            state.decoder = build(&d.reader, &state.store).unwrap();
        }
        // A good record whose bytes are exactly the framing (a = 0, f = the key's bytes).
        let good: &'static [u8] = framing.to_vec().leak();
        let trailing: &'static [u8] = trailing.leak();
        let p = |bytes: &'static [u8]| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        };
        let out = d.decode(&[p(good), p(trailing), p(good)]).unwrap();
        assert_ne!(d.state.lock().unwrap().seed, seed, "a new seed");
        let s = out.array.as_struct();
        let ok: Vec<bool> = (0..3).map(|i| s.is_valid(i)).collect();
        assert_eq!(ok, vec![true, false, true]);
        assert_eq!(s.column(0).as_primitive::<Int64Type>().value(2), 0);
        let f = s.column(1).as_fixed_size_binary();
        assert_eq!(f.value(0), &framing[1..]);
        assert!(out.errors[1].as_ref().unwrap().contains("not valid Avro"));
    }

    #[test]
    fn primitive_schemas_and_references() {
        let d = AvroDecoder::new(
            &avro(r#""string""#),
            Arc::new(HashMap::<i64, Arc<SchemaText>>::new()),
        )
        .unwrap();
        assert_eq!(d.data_type(), &DataType::Utf8);
        let bytes = [4u8, b'h', b'i'];
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
        let d = AvroDecoder::new(&text, Arc::new(HashMap::<i64, Arc<SchemaText>>::new())).unwrap();
        let DataType::Struct(fields) = d.data_type() else {
            panic!("a struct")
        };
        assert_eq!(fields.len(), 2);
    }
}
