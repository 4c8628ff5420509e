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

use arrow_array::{Array, ArrayRef, UInt32Array};
use arrow_json::reader::Decoder;
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde_json::Value;

use crate::error::{Error, Result};
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
    Ok(Arc::new(JsonDecoder {
        data_type,
        schema,
        rewrite,
    }))
}

struct JsonDecoder {
    data_type: DataType,
    /// `{value: <the type>}`: rows are decoded as `{"value": <payload>}`.
    schema: SchemaRef,
    rewrite: Rewrite,
}

impl JsonDecoder {
    fn arrow_decoder(&self, rows: usize) -> Decoder {
        ReaderBuilder::new(self.schema.clone())
            .with_batch_size(rows.max(1))
            .build_decoder()
            .expect("the type was checked when the decoder was built")
    }

    /// Decodes `rows` into one array, or says why not.
    fn decode_rows(&self, rows: &[Value]) -> std::result::Result<ArrayRef, String> {
        let mut decoder = self.arrow_decoder(rows.len());
        decoder.serialize(rows).map_err(|e| e.to_string())?;
        match decoder.flush().map_err(|e| e.to_string())? {
            Some(batch) => Ok(batch.column(0).clone()),
            None => Ok(arrow_array::new_empty_array(
                self.schema.field(0).data_type(),
            )),
        }
    }
}

impl PayloadDecoder for JsonDecoder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        // Each parsed row, wrapped, and the payload it came from.
        let mut rows = Vec::with_capacity(payloads.len());
        let mut from = Vec::with_capacity(payloads.len());
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
        let (decoded, kept) = match self.decode_rows(&rows) {
            Ok(array) => (array, from),
            Err(_) => {
                // A row arrow-json refuses: find it (and any other) a row at a time.
                let mut parts: Vec<ArrayRef> = Vec::new();
                let mut kept = Vec::new();
                for (row, i) in rows.iter().zip(from) {
                    match self.decode_rows(std::slice::from_ref(row)) {
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
                    arrow_select::concat::concat(&parts)
                        .map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))?
                };
                (array, kept)
            }
        };
        // Every payload's place: its decoded row, or null.
        let mut indices: Vec<Option<u32>> = vec![None; payloads.len()];
        for (row, &i) in kept.iter().enumerate() {
            indices[i] = Some(u32::try_from(row).expect("a batch's rows fit u32"));
        }
        let indices = UInt32Array::from(indices);
        let array = arrow_select::take::take(decoded.as_ref(), &indices, None)
            .map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))?;
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

/// Fuzz entry (`kafkalog::fuzzing::json_value`): arbitrary bytes as payloads of a schema with
/// every kind of type; the first byte cuts the rest into payloads. Any panic is a bug, and the
/// array must be valid Arrow of the decoder's type.
#[doc(hidden)]
pub fn fuzz_payloads(data: &[u8]) {
    static DECODER: std::sync::OnceLock<Arc<dyn PayloadDecoder>> = std::sync::OnceLock::new();
    struct NoWriters;
    impl WriterSchemas for NoWriters {
        fn writer(&self, _id: i64) -> Option<Arc<SchemaText>> {
            None
        }
    }
    if data.len() > 1 << 16 {
        return;
    }
    let decoder = DECODER.get_or_init(|| {
        let schema = SchemaText {
            schema_type: SchemaType::Json,
            schema: FUZZ_SCHEMA.to_owned(),
            references: Vec::new(),
        };
        decoder(&schema, Arc::new(NoWriters)).expect("the fuzz schema is usable")
    });
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(cut).max(1) * 4;
    let payloads: Vec<Option<Payload<'_>>> = rest
        .chunks(size)
        .chain([rest])
        .map(|bytes| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .chain([None])
        .collect();
    let decoded = decoder
        .decode(&payloads)
        .expect("decoding never fails a batch");
    assert_eq!(decoded.array.len(), payloads.len());
    assert_eq!(decoded.array.data_type(), decoder.data_type());
    decoded
        .array
        .to_data()
        .validate_full()
        .expect("a valid array");
}

#[cfg(test)]
#[path = "json_schema_tests.rs"]
mod tests;
