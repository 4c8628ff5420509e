//! JSON Schema payloads (Confluent's `KafkaJsonSchemaSerializer` and its kin: UTF-8 JSON after
//! the framing) decoded into one Arrow column whose type the reader's JSON Schema gives
//! (`json_schema_arrow.rs`).
//!
//! A batch is decoded by arrow-json, fields matched by name (evolution by name: properties the
//! reader does not have are dropped, those a payload lacks are null). Each payload is first
//! parsed by serde_json (invalid JSON or UTF-8, trailing bytes, and nesting deeper than
//! serde_json's limit of 128 are that row's error); arrow-json fails a whole batch on one value
//! of the wrong type, so when it fails, the batch is decoded again a row at a time to find the
//! rows to blame, and the others are kept.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray, UInt32Array};
use arrow_json::reader::Decoder;
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, WriterSchemas,
};
use crate::values::json_schema_arrow::{self, Deriver, Rewrite};

/// The name of the one column rows are wrapped in for arrow-json.
const COLUMN: &str = "value";

/// A decoder of JSON Schema payloads into the type `reader` describes. Writer schemas are not
/// needed (JSON carries its field names), so `writers` is not asked.
pub fn decoder(
    reader: &SchemaText,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    let _ = writers;
    Ok(Arc::new(build(reader)?))
}

fn build(reader: &SchemaText) -> Result<JsonDecoder> {
    if reader.schema_type != SchemaType::Json {
        return Err(Error::invalid_argument(format!(
            "a {:?} schema given to the JSON Schema decoder",
            reader.schema_type
        )));
    }
    let (data_type, rewrite) = Deriver::new(&reader.schema, &reader.references)?.derive()?;
    let schema = Arc::new(Schema::new(vec![Field::new(
        COLUMN,
        json_schema_arrow::decoding_type(&data_type),
        true,
    )]));
    // The type must be one arrow-json decodes: checked once here rather than per batch.
    ReaderBuilder::new(schema.clone())
        .build_decoder()
        .map_err(|e| Error::invalid_argument(format!("the JSON schema's Arrow type: {e}")))?;
    let direct = match (schema.field(0).data_type(), &rewrite) {
        (DataType::Struct(fields), Rewrite::None) => Some(Arc::new(Schema::new(fields.clone()))),
        _ => None,
    };
    Ok(JsonDecoder {
        data_type,
        schema,
        direct,
        rewrite,
    })
}

struct JsonDecoder {
    data_type: DataType,
    /// `{value: <the type>}`: rows are decoded as `{"value": <payload>}`.
    schema: SchemaRef,
    /// When the type is a struct with nothing to rewrite: its fields as a schema, so that
    /// payloads go to arrow-json as they are, without being parsed into values first.
    direct: Option<SchemaRef>,
    rewrite: Rewrite,
}

/// A batch's rows as arrow-json is given them.
trait Rows {
    fn feed(&self, decoder: &mut Decoder) -> std::result::Result<(), String>;
}

/// Parsed and rewritten rows, each wrapped as `{"value": ...}`.
impl Rows for [Value] {
    fn feed(&self, decoder: &mut Decoder) -> std::result::Result<(), String> {
        decoder.serialize(self).map_err(|e| e.to_string())
    }
}

/// Payloads checked to be one JSON object each, given as they are.
impl Rows for [&[u8]] {
    fn feed(&self, decoder: &mut Decoder) -> std::result::Result<(), String> {
        for row in self {
            let used = decoder.decode(row).map_err(|e| e.to_string())?;
            let end = decoder.decode(b"\n").map_err(|e| e.to_string())?;
            if used != row.len() || end != 1 {
                return Err("arrow-json did not take the whole row".into());
            }
        }
        Ok(())
    }
}

/// How a payload is given to arrow-json on the direct path: a JSON object, JSON `null` (a null
/// row), or not an object (that row's error).
enum Shape {
    Object,
    Null,
    Other,
}

fn shape(bytes: &[u8]) -> Shape {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Shape::Object,
        Some(b'n') => Shape::Null,
        _ => Shape::Other,
    }
}

impl JsonDecoder {
    /// Decodes `rows` with `schema` into one array, or says why not.
    fn decode_rows<R: Rows + ?Sized>(
        &self,
        schema: &SchemaRef,
        rows: &R,
        count: usize,
    ) -> std::result::Result<ArrayRef, String> {
        let mut decoder = ReaderBuilder::new(schema.clone())
            .with_batch_size(count.max(1))
            .build_decoder()
            .map_err(|e| e.to_string())?;
        rows.feed(&mut decoder)?;
        let batch = decoder.flush().map_err(|e| e.to_string())?;
        let direct = !Arc::ptr_eq(schema, &self.schema);
        Ok(match (batch, direct) {
            (Some(batch), false) => batch.column(0).clone(),
            (Some(batch), true) => Arc::new(StructArray::from(batch)),
            (None, _) => arrow_array::new_empty_array(self.schema.field(0).data_type()),
        })
    }

    /// Decodes rows together, or (when arrow-json refuses the batch) a row at a time, giving
    /// the array of the rows that decoded and which of `from` they were.
    fn decode_isolated<T>(
        &self,
        schema: &SchemaRef,
        rows: &[T],
        from: Vec<usize>,
        errors: &mut [Option<String>],
    ) -> Result<(ArrayRef, Vec<usize>)>
    where
        [T]: Rows,
    {
        if let Ok(array) = self.decode_rows(schema, rows, rows.len()) {
            return Ok((array, from));
        }
        let mut parts: Vec<ArrayRef> = Vec::new();
        let mut kept = Vec::new();
        for (row, i) in rows.iter().zip(from) {
            match self.decode_rows(schema, std::slice::from_ref(row), 1) {
                Ok(array) => {
                    parts.push(array);
                    kept.push(i);
                }
                Err(why) => errors[i] = Some(format!("does not fit the schema: {why}")),
            }
        }
        let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let array = if parts.is_empty() {
            arrow_array::new_empty_array(self.schema.field(0).data_type())
        } else {
            arrow_select::concat::concat(&parts).map_err(|e| {
                Error::new(
                    ErrorKind::LimitExceeded,
                    format!("{e}: decode fewer JSON payloads at a time"),
                )
            })?
        };
        Ok((array, kept))
    }
}

impl PayloadDecoder for JsonDecoder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        // The payloads that are rows, and where each came from.
        let mut from = Vec::with_capacity(payloads.len());
        let (decoded, kept) = if let Some(direct) = &self.direct {
            let mut rows: Vec<&[u8]> = Vec::with_capacity(payloads.len());
            for (i, payload) in payloads.iter().enumerate() {
                let Some(payload) = payload else { continue };
                if let Err(e) = serde_json::from_slice::<IgnoredAny>(payload.bytes) {
                    errors[i] = Some(format!("not JSON: {e}"));
                    continue;
                }
                match shape(payload.bytes) {
                    Shape::Object => {
                        rows.push(payload.bytes);
                        from.push(i);
                    }
                    Shape::Null => {}
                    Shape::Other => {
                        errors[i] = Some("does not fit the schema: not a JSON object".into());
                    }
                }
            }
            self.decode_isolated(direct, &rows, from, &mut errors)?
        } else {
            let mut rows = Vec::with_capacity(payloads.len());
            for (i, payload) in payloads.iter().enumerate() {
                let Some(payload) = payload else { continue };
                match serde_json::from_slice::<Value>(payload.bytes) {
                    Ok(mut value) => {
                        self.rewrite.apply(&mut value);
                        let mut row = serde_json::Map::with_capacity(1);
                        row.insert(COLUMN.to_owned(), value);
                        rows.push(Value::Object(row));
                        from.push(i);
                    }
                    Err(e) => errors[i] = Some(format!("not JSON: {e}")),
                }
            }
            self.decode_isolated(&self.schema, &rows, from, &mut errors)?
        };
        // Every payload's place: its decoded row, or null.
        let mut indices: Vec<Option<u32>> = vec![None; payloads.len()];
        for (row, &i) in kept.iter().enumerate() {
            indices[i] = Some(u32::try_from(row).expect("a batch's rows fit u32"));
        }
        let indices = UInt32Array::from(indices);
        let array = arrow_select::take::take(decoded.as_ref(), &indices, None)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let array = arrow_array::make_array(json_schema_arrow::relabel(
            array.to_data(),
            &self.data_type,
        )?);
        Ok(Decoded { array, errors })
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

/// The decoder the fuzz target `kafkalog::fuzzing::json_value` feeds arbitrary payloads to:
/// the fuzz schema, which has every kind of type, and no writer schemas.
#[doc(hidden)]
pub fn fuzz_decoder() -> Arc<dyn PayloadDecoder> {
    static DECODER: std::sync::OnceLock<Arc<dyn PayloadDecoder>> = std::sync::OnceLock::new();
    DECODER
        .get_or_init(|| {
            let schema = SchemaText::new(SchemaType::Json, FUZZ_SCHEMA);
            let writers = std::collections::HashMap::<i64, Arc<SchemaText>>::new();
            decoder(&schema, Arc::new(writers)).expect("the fuzz schema compiles")
        })
        .clone()
}

#[cfg(test)]
#[path = "json_schema_tests.rs"]
mod tests;
