//! The oracle of the JSON Schema decoder: JSON Schema payloads decoded by serde_json and
//! arrow-json (Arrow's own JSON decoder), the way kafkalog decoded them before its own decoder
//! (`decode.rs`). Kept for the differential tests and the fuzz target `json_value`, which
//! compare the two on generated and hostile payloads; reads never use it.
//!
//! A batch is decoded by arrow-json, fields matched by name. Each payload is first checked by
//! serde_json (invalid JSON, trailing bytes). When the type is a struct with no JSON-text
//! parts, the payloads go to arrow-json as they are; otherwise each is parsed into a
//! `serde_json::Value` (nesting deeper than serde_json's 128 is an error), its JSON-text parts
//! turned into strings, and the values given to arrow-json. arrow-json fails a whole batch on
//! one value of the wrong type, so then the batch is decoded again a row at a time.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray, UInt32Array};
use arrow_json::reader::Decoder;
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{Decoded, Payload, PayloadDecoder};
use crate::values::json::schema::Shape;

/// The name of the one column rows are wrapped in for arrow-json.
const COLUMN: &str = "value";

/// What must be rewritten in a row before arrow-json decodes it.
#[derive(Debug, Clone)]
enum Rewrite {
    /// Nothing below here.
    None,
    /// The value becomes its JSON text.
    Text,
    /// These properties of an object.
    Object(Vec<(String, Rewrite)>),
    /// Every item of an array.
    Items(Box<Rewrite>),
}

impl Rewrite {
    fn of(shape: &Shape) -> Rewrite {
        match shape {
            Shape::Text => Rewrite::Text,
            Shape::Struct(fields) => {
                let parts: Vec<(String, Rewrite)> = fields
                    .iter()
                    .map(|(name, shape)| (name.clone(), Rewrite::of(shape)))
                    .filter(|(_, r)| !matches!(r, Rewrite::None))
                    .collect();
                if parts.is_empty() {
                    Rewrite::None
                } else {
                    Rewrite::Object(parts)
                }
            }
            Shape::List(item) => match Rewrite::of(item) {
                Rewrite::None => Rewrite::None,
                r => Rewrite::Items(Box::new(r)),
            },
            _ => Rewrite::None,
        }
    }

    /// Applies the rewrite to `value`, in place.
    fn apply(&self, value: &mut Value) {
        match (self, value) {
            (Rewrite::None, _) | (_, Value::Null) => {}
            (Rewrite::Text, value) => *value = Value::String(value.to_string()),
            (Rewrite::Object(fields), Value::Object(map)) => {
                for (name, rewrite) in fields {
                    if let Some(v) = map.get_mut(name) {
                        rewrite.apply(v);
                    }
                }
            }
            (Rewrite::Items(rewrite), Value::Array(items)) => {
                for v in items {
                    rewrite.apply(v);
                }
            }
            _ => {}
        }
    }
}

/// The oracle decoder of payloads of `shape`.
pub fn decoder(shape: &Shape) -> Result<Arc<dyn PayloadDecoder>> {
    let data_type = shape.data_type();
    let rewrite = Rewrite::of(shape);
    let schema = Arc::new(Schema::new(vec![Field::new(
        COLUMN,
        decoding_type(&data_type),
        true,
    )]));
    ReaderBuilder::new(schema.clone())
        .build_decoder()
        .map_err(|e| Error::invalid_argument(format!("the JSON schema's Arrow type: {e}")))?;
    let direct = match (schema.field(0).data_type(), &rewrite) {
        (DataType::Struct(fields), Rewrite::None) => Some(Arc::new(Schema::new(fields.clone()))),
        _ => None,
    };
    Ok(Arc::new(OracleDecoder {
        data_type,
        schema,
        direct,
        rewrite,
    }))
}

struct OracleDecoder {
    data_type: DataType,
    /// `{value: <the type>}`: rows are decoded as `{"value": <payload>}`.
    schema: SchemaRef,
    /// When the type is a struct with nothing to rewrite: its fields as a schema, so that
    /// payloads go to arrow-json as they are.
    direct: Option<SchemaRef>,
    rewrite: Rewrite,
}

/// A batch's rows as arrow-json is given them.
trait Rows {
    fn feed(&self, decoder: &mut Decoder) -> std::result::Result<(), String>;
}

impl Rows for [Value] {
    fn feed(&self, decoder: &mut Decoder) -> std::result::Result<(), String> {
        decoder.serialize(self).map_err(|e| e.to_string())
    }
}

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

enum Kind {
    Object,
    Null,
    Other,
}

fn kind(bytes: &[u8]) -> Kind {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Kind::Object,
        Some(b'n') => Kind::Null,
        _ => Kind::Other,
    }
}

impl OracleDecoder {
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
            arrow_select::concat::concat(&parts)
                .map_err(|e| Error::new(ErrorKind::LimitExceeded, e.to_string()))?
        };
        Ok((array, kept))
    }
}

impl PayloadDecoder for OracleDecoder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        let mut from = Vec::with_capacity(payloads.len());
        let (decoded, kept) = if let Some(direct) = &self.direct {
            let mut rows: Vec<&[u8]> = Vec::with_capacity(payloads.len());
            for (i, payload) in payloads.iter().enumerate() {
                let Some(payload) = payload else { continue };
                if let Err(e) = serde_json::from_slice::<IgnoredAny>(payload.bytes) {
                    errors[i] = Some(format!("not JSON: {e}"));
                    continue;
                }
                match kind(payload.bytes) {
                    Kind::Object => {
                        rows.push(payload.bytes);
                        from.push(i);
                    }
                    Kind::Null => {}
                    Kind::Other => {
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
        let mut indices: Vec<Option<u32>> = vec![None; payloads.len()];
        for (row, &i) in kept.iter().enumerate() {
            indices[i] = u32::try_from(row).ok();
        }
        let indices = UInt32Array::from(indices);
        let array = arrow_select::take::take(decoded.as_ref(), &indices, None)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let array = arrow_array::make_array(relabel(array.to_data(), &self.data_type)?);
        Ok(Decoded { array, errors })
    }
}

/// The type arrow-json is asked to decode: `data_type` with timestamps' time zone left off
/// (arrow-json reads only offset time zones without chrono-tz; with none it reads a string's
/// own offset and takes one without as UTC, which is what the column holds).
fn decoding_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Timestamp(unit, Some(_)) => DataType::Timestamp(*unit, None),
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| {
                    f.as_ref()
                        .clone()
                        .with_data_type(decoding_type(f.data_type()))
                })
                .collect(),
        ),
        DataType::List(item) => DataType::List(Arc::new(
            item.as_ref()
                .clone()
                .with_data_type(decoding_type(item.data_type())),
        )),
        other => other.clone(),
    }
}

/// `data` (of [`decoding_type`]`(target)`) as `target`: the same buffers, the types renamed.
fn relabel(data: arrow_data::ArrayData, target: &DataType) -> Result<arrow_data::ArrayData> {
    if data.data_type() == target {
        return Ok(data);
    }
    let children = match target {
        DataType::Struct(fields) => data
            .child_data()
            .iter()
            .zip(fields.iter())
            .map(|(child, field)| relabel(child.clone(), field.data_type()))
            .collect::<Result<Vec<_>>>()?,
        DataType::List(item) => data
            .child_data()
            .iter()
            .map(|child| relabel(child.clone(), item.data_type()))
            .collect::<Result<Vec<_>>>()?,
        _ => data.child_data().to_vec(),
    };
    data.into_builder()
        .data_type(target.clone())
        .child_data(children)
        .build()
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}
