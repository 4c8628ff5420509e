//! JSON Schema payloads (Confluent's `KafkaJsonSchemaSerializer` and its kin: UTF-8 JSON after
//! the framing) decoded into one Arrow column whose type the reader's JSON Schema gives
//! (`schema.rs`).
//!
//! JSON names its fields, so values are matched to the reader's type by name (properties the
//! reader does not have are dropped, those a payload lacks are null) and writer schemas are
//! not needed to decode. The schema id a payload carries is still checked, as Confluent's
//! `KafkaJsonSchemaDeserializer` checks it: an id the registry does not have, or the id of
//! another language's schema, makes that payload a bad value.
//!
//! Decoding is kafkalog's own (`decode.rs`, `scan.rs`): the reader's type compiled
//! once into a plan, each payload tokenized straight into the column's builders, which are
//! kept from batch to batch. serde_json and arrow-json, which decoded payloads before, are the
//! oracle its tests and fuzz target compare it with (`oracle.rs`).

use crate::values::decoder::Wanted;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[cfg(any(test, feature = "oracles"))]
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, WriterSchemas,
};
use crate::values::json::decode::State;
use crate::values::json::plan::Plan;
use crate::values::json::schema::{Deriver, Shape};

/// A decoder of JSON Schema payloads into the type `reader` describes; `writers` says which
/// schema ids are JSON Schemas.
pub fn decoder(
    reader: &SchemaText,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    pruned_decoder(reader, writers, &Wanted::All)
}

/// [`decoder`] building only the properties `wanted` asks for (at least; see [`Wanted`]):
/// the others are skipped in each payload (their JSON syntax still checked), not built.
pub fn pruned_decoder(
    reader: &SchemaText,
    writers: Arc<dyn WriterSchemas>,
    wanted: &Wanted,
) -> Result<Arc<dyn PayloadDecoder>> {
    let shape = shape(reader)?;
    Ok(Arc::new(JsonDecoder::new(&shape, wanted, writers)))
}

/// The shape (Arrow type, JSON-text parts) of a reader schema.
pub fn shape(reader: &SchemaText) -> Result<Shape> {
    if reader.schema_type != SchemaType::Json {
        return Err(Error::invalid_argument(format!(
            "a {:?} schema given to the JSON Schema decoder",
            reader.schema_type
        )));
    }
    let shape = Deriver::new(&reader.schema, &reader.references)?.derive()?;
    // An object every property of which is left out has no Arrow struct to be: JSON text.
    Ok(match shape {
        Shape::Struct(fields) if fields.is_empty() => Shape::Text,
        shape => shape,
    })
}

struct JsonDecoder {
    plan: Plan,
    writers: Arc<dyn WriterSchemas>,
    /// Why each schema id seen so far is not a JSON Schema's (`None`: it is).
    ids: Mutex<HashMap<i64, Option<String>>>,
    /// Builders and scratch buffers of finished batches, for the next (one per thread that
    /// decodes at once).
    states: Mutex<Vec<State>>,
}

impl JsonDecoder {
    fn new(shape: &Shape, wanted: &Wanted, writers: Arc<dyn WriterSchemas>) -> JsonDecoder {
        JsonDecoder {
            plan: Plan::new(shape, wanted),
            writers,
            ids: Mutex::new(HashMap::new()),
            states: Mutex::new(Vec::new()),
        }
    }

    /// Why payloads framed with schema `id` are bad values, as Confluent's deserializer
    /// refuses them (it asks the registry for a `JsonSchema` by id); `None` when they are not.
    fn refused(&self, id: i64) -> Option<String> {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        ids.entry(id)
            .or_insert_with(|| match self.writers.writer(id) {
                None => Some(format!("schema id {id} is not in the registry")),
                Some(text) if text.schema_type != SchemaType::Json => Some(format!(
                    "schema id {id} is registered as {}, not a JSON Schema",
                    text.schema_type.name()
                )),
                Some(_) => None,
            })
            .clone()
    }

    fn run(&self, state: &mut State, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let plan = &self.plan;
        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        state.reserve(plan, payloads.len());
        // Arrow's 32-bit offsets: output is at most a few times the input (numbers in JSON
        // text may print longer), so only batches of that size are checked row by row.
        let bytes: usize = payloads.iter().flatten().map(|p| p.bytes.len()).sum();
        let check = bytes.saturating_mul(8) >= i32::MAX as usize;
        let mut last: Option<(i64, Option<String>)> = None;
        for (i, payload) in payloads.iter().enumerate() {
            let Some(payload) = payload else {
                state.null_row(plan);
                continue;
            };
            if let Some(id) = payload.schema_id {
                let refused = match &last {
                    Some((seen, why)) if *seen == id => why.clone(),
                    _ => {
                        let why = self.refused(id);
                        last = Some((id, why.clone()));
                        why
                    }
                };
                if let Some(why) = refused {
                    errors[i] = Some(why);
                    state.null_row(plan);
                    continue;
                }
            }
            if let Err(fault) = state.row(plan, payload.bytes) {
                errors[i] = Some(fault.message());
            }
            if check && state.too_large() {
                return Err(Error::new(
                    ErrorKind::LimitExceeded,
                    "the JSON values of one batch hold more than 2 GiB of text: decode fewer \
                     JSON payloads at a time",
                ));
            }
        }
        let array = state.finish(plan)?;
        Ok(Decoded { array, errors })
    }
}

impl PayloadDecoder for JsonDecoder {
    fn data_type(&self) -> &DataType {
        self.plan.data_type()
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let taken = self.states.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut state = taken.unwrap_or_else(|| State::new(&self.plan));
        let result = self.run(&mut state, payloads);
        if result.is_err() {
            state.clear(&self.plan);
        }
        self.states
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(state);
        result
    }
}

/// A schema with every kind of type the mapping knows, for the fuzz target.
const FUZZ_SCHEMA: &str = r##"{
  "type": "object",
  "definitions": {"Node": {"type": "object", "properties": {
    "v": {"type": "integer"}, "next": {"$ref": "#/definitions/Node"}}}},
  "properties": {
    "i": {"type": "integer"}, "f": {"type": ["number", "null"]}, "b": {"type": "boolean"},
    "s": {"type": "string"}, "t": {"type": "string", "format": "date-time"},
    "d": {"type": "string", "format": "date"},
    "list": {"type": "array", "items": {"$ref": "#/definitions/Node"}},
    "opt": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "integer"}}]},
    "bag": {"type": "object", "additionalProperties": true},
    "any": {}
  }
}"##;

#[cfg(any(test, feature = "oracles"))]
/// The fuzz schema without its JSON-text parts: the oracle takes the other way there (the
/// payloads straight to arrow-json, not through serde_json's values).
const FUZZ_SCHEMA_TYPED: &str = r##"{
  "type": "object",
  "properties": {
    "i": {"type": "integer"}, "f": {"type": ["number", "null"]}, "b": {"type": "boolean"},
    "s": {"type": "string"}, "t": {"type": "string", "format": "date-time"},
    "d": {"type": "string", "format": "date"},
    "n": {"type": "object", "properties": {"v": {"type": "integer"},
      "w": {"type": "array", "items": {"type": "string"}}}},
    "list": {"type": "array", "items": {"type": "object", "properties": {
      "v": {"type": "number"}, "d": {"type": "string", "format": "date"}}}}
  }
}"##;

/// The decoder the fuzz target `kafkalog::fuzzing::json_value` feeds arbitrary payloads to:
/// the fuzz schema, which has every kind of type, and no writer schemas.
#[doc(hidden)]
pub fn fuzz_decoder() -> Arc<dyn PayloadDecoder> {
    static DECODER: std::sync::OnceLock<Arc<dyn PayloadDecoder>> = std::sync::OnceLock::new();
    DECODER
        .get_or_init(|| {
            let schema = SchemaText::new(SchemaType::Json, FUZZ_SCHEMA);
            let writers = HashMap::<i64, Arc<SchemaText>>::new();
            decoder(&schema, Arc::new(writers)).expect("the fuzz schema compiles")
        })
        .clone()
}

#[cfg(any(test, feature = "oracles"))]
/// kafkalog's decoder and the oracle of one fuzz schema, and whether the oracle reads its
/// payloads as serde_json values ([`by_value`]).
type Pair = (Arc<dyn PayloadDecoder>, Arc<dyn PayloadDecoder>, bool);

#[cfg(any(test, feature = "oracles"))]
/// The fuzz target's check: the payloads decoded by kafkalog's decoder and by the oracle,
/// with both fuzz schemas, agree row by row ([`agree`]). Panics where they do not.
#[doc(hidden)]
pub fn fuzz_compare(payloads: &[Option<Payload<'_>>]) {
    static PAIRS: std::sync::OnceLock<Vec<Pair>> = std::sync::OnceLock::new();
    let pairs = PAIRS.get_or_init(|| {
        [FUZZ_SCHEMA, FUZZ_SCHEMA_TYPED]
            .iter()
            .map(|text| {
                let reader = SchemaText::new(SchemaType::Json, *text);
                let shape = shape(&reader).expect("the fuzz schema compiles");
                let writers = Arc::new(HashMap::<i64, Arc<SchemaText>>::new());
                let ours: Arc<dyn PayloadDecoder> =
                    Arc::new(JsonDecoder::new(&shape, &Wanted::All, writers));
                let oracle =
                    crate::values::json::oracle::decoder(&shape).expect("the oracle builds");
                (ours, oracle, by_value(&shape))
            })
            .collect()
    });
    for (ours, oracle, values) in pairs {
        let a = ours.decode(payloads).expect("decoding never fails a batch");
        let b = oracle
            .decode(payloads)
            .expect("the oracle never fails a batch");
        a.array.to_data().validate_full().expect("a valid array");
        for (row, payload) in payloads.iter().enumerate() {
            let bytes = payload.map(|p| p.bytes).unwrap_or_default();
            if let Err(why) = agree(&a, &b, row, bytes, *values) {
                panic!(
                    "row {row} {:?}: {why}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
                );
            }
        }
    }
}

#[cfg(any(test, feature = "oracles"))]
/// Whether the oracle reads payloads of `shape` with serde_json's `Value` (anything but a
/// struct without JSON-text parts, whose payloads go to arrow-json as they are).
#[doc(hidden)]
pub fn by_value(shape: &Shape) -> bool {
    !matches!(shape, Shape::Struct(_)) || shape.has_text()
}

#[cfg(any(test, feature = "oracles"))]
/// Whether kafkalog's decoder (`ours`) and the oracle agree on row `row` (the payload
/// `bytes`): both refuse it, or both give the same value. `values`: the oracle read the
/// payload with serde_json's `Value` ([`by_value`]), which differs from kafkalog's reading
/// (and from the oracle's other way) in three places, where only kafkalog's answer is
/// checked for being a valid value:
///
/// - a number too large for a float (`1e400`) or nesting deeper than 127 outside the JSON-text
///   parts: serde_json's `Value` cannot hold the payload; kafkalog reads it as arrow-json
///   always did on the other way (`inf` in a number column, anything in a dropped property);
/// - a number with a fraction or an exponent in a date-time column: arrow-json refuses the
///   float serde_json made of it, and reads the number's text as microseconds; kafkalog does
///   the latter;
/// - floats that serde_json's fast reading rounds differently from the nearest double
///   (kafkalog's and lexical's): equal within a few units in the last place.
#[doc(hidden)]
pub fn agree(
    ours: &Decoded,
    oracle: &Decoded,
    row: usize,
    bytes: &[u8],
    values: bool,
) -> std::result::Result<(), String> {
    let (a, b) = (&ours.errors[row], &oracle.errors[row]);
    match (a, b) {
        (Some(_), Some(_)) => Ok(()),
        (None, None) => same(ours.array.as_ref(), oracle.array.as_ref(), row, row, values),
        (None, Some(why)) if values && serde_json_value_cannot_hold(bytes, why) => Ok(()),
        (None, Some(why)) if why.contains("expected primitive got ") => {
            // arrow-json's date-time column given a float by serde_json.
            let got = why.rsplit("expected primitive got ").next().unwrap_or("");
            if values && got.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                Ok(())
            } else {
                Err(format!("kafkalog decodes it, the oracle says {why}"))
            }
        }
        (None, Some(why)) => Err(format!("kafkalog decodes it, the oracle says {why}")),
        (Some(why), None) => Err(format!("the oracle decodes it, kafkalog says {why}")),
    }
}

#[cfg(any(test, feature = "oracles"))]
/// Whether serde_json refused `bytes` as a `Value` only because a value holds a number out of
/// float range or nests too deep, the bytes being JSON otherwise.
fn serde_json_value_cannot_hold(bytes: &[u8], why: &str) -> bool {
    (why.contains("number out of range") || why.contains("recursion limit exceeded"))
        && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

#[cfg(any(test, feature = "oracles"))]
/// Row `i` of `a` equals row `j` of `b` (floats within a few units in the last place when
/// `loose`).
fn same(
    a: &dyn Array,
    b: &dyn Array,
    i: usize,
    j: usize,
    loose: bool,
) -> std::result::Result<(), String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Float64Type, Int64Type, TimestampMicrosecondType};
    if a.data_type() != b.data_type() {
        return Err(format!("types {} and {}", a.data_type(), b.data_type()));
    }
    match (a.is_null(i), b.is_null(j)) {
        (true, true) => return Ok(()),
        (false, false) => {}
        (x, _) => {
            return Err(if x {
                "kafkalog has null, the oracle a value".into()
            } else {
                "kafkalog has a value, the oracle null".into()
            })
        }
    }
    let differ = |what: String| Err(what);
    match a.data_type() {
        DataType::Int64 => {
            let (x, y) = (
                a.as_primitive::<Int64Type>().value(i),
                b.as_primitive::<Int64Type>().value(j),
            );
            if x != y {
                return differ(format!("{x} != {y}"));
            }
        }
        DataType::Timestamp(..) => {
            let (x, y) = (
                a.as_primitive::<TimestampMicrosecondType>().value(i),
                b.as_primitive::<TimestampMicrosecondType>().value(j),
            );
            if x != y {
                return differ(format!("{x} != {y}"));
            }
        }
        DataType::Date32 => {
            let (x, y) = (
                a.as_primitive::<Date32Type>().value(i),
                b.as_primitive::<Date32Type>().value(j),
            );
            if x != y {
                return differ(format!("{x} != {y}"));
            }
        }
        DataType::Float64 => {
            let (x, y) = (
                a.as_primitive::<Float64Type>().value(i),
                b.as_primitive::<Float64Type>().value(j),
            );
            let ulps = (x.to_bits() as i64)
                .wrapping_sub(y.to_bits() as i64)
                .unsigned_abs();
            let equal = x == y || (x.is_nan() && y.is_nan()) || (loose && ulps <= 4);
            if !equal {
                return differ(format!("{x:?} != {y:?}"));
            }
        }
        DataType::Boolean => {
            let (x, y) = (a.as_boolean().value(i), b.as_boolean().value(j));
            if x != y {
                return differ(format!("{x} != {y}"));
            }
        }
        DataType::Utf8 => {
            let (x, y) = (a.as_string::<i32>().value(i), b.as_string::<i32>().value(j));
            if x != y {
                return differ(format!("{x:?} != {y:?}"));
            }
        }
        DataType::List(_) => {
            let (x, y) = (a.as_list::<i32>(), b.as_list::<i32>());
            let (xs, ys): (ArrayRef, ArrayRef) = (x.value(i), y.value(j));
            if xs.len() != ys.len() {
                return differ(format!("{} items != {}", xs.len(), ys.len()));
            }
            for k in 0..xs.len() {
                same(xs.as_ref(), ys.as_ref(), k, k, loose)
                    .map_err(|e| format!("item {k}: {e}"))?;
            }
        }
        DataType::Struct(fields) => {
            let (x, y) = (a.as_struct(), b.as_struct());
            for (k, field) in fields.iter().enumerate() {
                same(x.column(k).as_ref(), y.column(k).as_ref(), i, j, loose)
                    .map_err(|e| format!("{}: {e}", field.name()))?;
            }
        }
        other => return differ(format!("no comparison of {other}")),
    }
    Ok(())
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
