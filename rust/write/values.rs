//! Typed keys and values written back, as the options of a write say: `string` columns as
//! UTF-8 bytes, `avro` columns (of the type a read gives for the subject's schema) encoded
//! with the subject's registered schema and framed with its id (`values/avro/encode.rs`).
//! `kafkalog.write` (`rust/python/values.rs`) and both Spark sources (`rust/spark/writing.rs`)
//! encode through [`ValueEncoder`]: one copy of these rules.

use std::collections::HashMap;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

use crate::error::{Error, Result};
use crate::values::columns::{registered, SideOptions, ValueOptions};
use crate::values::decoder::SchemaText;
use crate::values::formats::Format;
use crate::values::registry::Registry;

/// Encodes the `key` and `value` columns of batches to be written.
pub struct ValueEncoder {
    options: ValueOptions,
    registry: Option<Registry>,
    /// Each (side, topic)'s schema and id, found once.
    schemas: HashMap<(&'static str, Option<String>), (SchemaText, u32)>,
    /// Each (side, topic)'s type as a read gives it ([`Self::read_type`]), found once: building
    /// it parses the schema with arrow-avro, too dear for every batch written.
    read_types: HashMap<(&'static str, Option<String>), DataType>,
}

impl ValueEncoder {
    /// An encoder of `options`'s formats, with the registry that holds their schemas.
    pub fn new(options: ValueOptions, registry: Option<Registry>) -> Self {
        ValueEncoder {
            options,
            registry,
            schemas: HashMap::new(),
            read_types: HashMap::new(),
        }
    }

    /// Whether either column is encoded (not written as the bytes it holds).
    pub fn any(&self) -> bool {
        self.options.key.format != Format::Binary || self.options.value.format != Format::Binary
    }

    /// The format of the `side` column.
    pub fn format(&self, side: &str) -> Format {
        if side == "key" {
            self.options.key.format
        } else {
            self.options.value.format
        }
    }

    /// The `side` (`key` or `value`) column `array` encoded, for rows of topic `topic` (whose
    /// subject is `<topic>-<side>` unless one is named).
    pub fn encode(
        &mut self,
        side: &str,
        array: &ArrayRef,
        topic: Option<&str>,
    ) -> Result<ArrayRef> {
        let (name, options): (&'static str, &SideOptions) = match side {
            "key" => ("key", &self.options.key),
            "value" => ("value", &self.options.value),
            other => {
                return Err(Error::invalid_argument(format!(
                    "side must be key or value, not {other:?}"
                )))
            }
        };
        match options.format {
            Format::Binary => Ok(array.clone()),
            Format::String => arrow_cast::cast(array, &DataType::Binary)
                .map_err(|e| Error::invalid_argument(format!("{name}: {e}"))),
            Format::Avro if !options.subjects.is_empty() => Err(Error::invalid_argument(format!(
                "writing {name}s of several record types ({name}_subjects) is not built: write \
                 each type with its own {name}_subject"
            ))),
            Format::Avro => {
                let (schema, id) = self.schema(name, topic)?;
                // Timestamps as a read names them ("UTC") back to arrow-avro's "+00:00".
                let array = crate::values::columns::avro_named(array.clone())?;
                crate::values::avro::encode::encode(&array, schema, id)
            }
            other => Err(Error::invalid_argument(format!(
                "kafkalog writes keys and values as binary, string or avro, not {other:?}"
            ))),
        }
    }

    /// The registered schema (and its id) that the `name` (`key` or `value`) column of `topic`'s
    /// rows is encoded with, found once.
    fn schema(&mut self, name: &'static str, topic: Option<&str>) -> Result<(&SchemaText, u32)> {
        let options = if name == "key" {
            &self.options.key
        } else {
            &self.options.value
        };
        let key = (name, topic.map(str::to_owned));
        if !self.schemas.contains_key(&key) {
            let registry = self.registry.as_ref().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "writing {name}s as Avro needs the registry (schemas=<path>): their \
                     schema's id goes into the framing"
                ))
            })?;
            let found = registered(name, options, registry, topic)?;
            let id = u32::try_from(found.id).map_err(|_| {
                Error::invalid_argument(format!("schema id {} does not fit 4 bytes", found.id))
            })?;
            self.schemas
                .insert(key.clone(), (registry.text(found)?, id));
        }
        let (schema, id) = &self.schemas[&key];
        Ok((schema, *id))
    }

    /// The type a read gives the `side` column of `topic`'s rows where it is encoded with a
    /// schema (Avro): what [`Self::encode`] takes, and what a caller holding another shape of
    /// the same values (Spark's) turns its column into first. `None` for binary and string.
    pub fn read_type(&mut self, side: &str, topic: Option<&str>) -> Result<Option<DataType>> {
        let name = if side == "key" { "key" } else { "value" };
        let options = if name == "key" {
            &self.options.key
        } else {
            &self.options.value
        };
        if options.format != Format::Avro || !options.subjects.is_empty() {
            return Ok(None);
        }
        let key = (name, topic.map(str::to_owned));
        if let Some(t) = self.read_types.get(&key) {
            return Ok(Some(t.clone()));
        }
        let (schema, _) = self.schema(name, topic)?;
        let native = crate::values::avro::arrow::native_type(schema)?;
        let shaper =
            crate::values::avro::shape::Shaper::new(&crate::values::avro::arrow::plain(&native));
        let t = shaper.data_type().clone();
        self.read_types.insert(key, t.clone());
        Ok(Some(t))
    }

    /// `batch` with its `key` and `value` columns encoded (see [`Self::encode`]).
    pub fn encode_batch(
        &mut self,
        batch: &RecordBatch,
        topic: Option<&str>,
    ) -> Result<RecordBatch> {
        let schema = batch.schema();
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut columns = batch.columns().to_vec();
        for side in ["key", "value"] {
            if self.format(side) == Format::Binary {
                continue;
            }
            if let Ok(i) = schema.index_of(side) {
                columns[i] = self.encode(side, &columns[i], topic)?;
                fields[i] = Field::new(side, columns[i].data_type().clone(), true);
            }
        }
        RecordBatch::try_new(
            std::sync::Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
            columns,
        )
        .map_err(|e| Error::invalid_argument(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, BinaryArray, StringArray};
    use std::sync::Arc;

    #[test]
    fn strings_become_bytes_and_avro_needs_a_registry() {
        let options = ValueOptions {
            key: SideOptions {
                format: Format::String,
                ..SideOptions::default()
            },
            value: SideOptions {
                format: Format::Avro,
                ..SideOptions::default()
            },
            ..ValueOptions::default()
        };
        let mut encoder = ValueEncoder::new(options, None);
        assert!(encoder.any());
        let keys: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
        let out = encoder.encode("key", &keys, Some("t")).unwrap();
        let out = out.as_any().downcast_ref::<BinaryArray>().unwrap();
        assert_eq!((out.value(0), out.is_null(1)), (&b"a"[..], true));
        let err = encoder.encode("value", &keys, Some("t")).unwrap_err();
        assert!(
            err.message.contains("needs the registry"),
            "{}",
            err.message
        );
        let err = encoder.encode("headers", &keys, None).unwrap_err();
        assert!(err.message.contains("side must be key or value"));
    }
}
