//! The formats a key or value is read as (`key_format`, `value_format`), and the one place a
//! format's decoder is chosen for a reader schema.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, Wanted, WriterSchemas,
};

/// How a key or value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// The bytes as stored (the default).
    #[default]
    Binary,
    /// UTF-8 text (Kafka's `StringSerializer`); bytes that are not UTF-8 are a bad value.
    String,
    /// Avro with Schema Registry framing (or an explicit schema).
    Avro,
    /// Protobuf with Schema Registry framing.
    Protobuf,
    /// JSON Schema with Schema Registry framing.
    Json,
    /// By the type the registry holds for the reader schema (its subject's latest version).
    Auto,
}

impl Format {
    /// The format named `name` (`binary`, `string`, `avro`, `protobuf`, `json`, `auto`).
    pub fn from_name(name: &str) -> Result<Format> {
        Ok(match name {
            "binary" => Format::Binary,
            "string" => Format::String,
            "avro" => Format::Avro,
            "protobuf" => Format::Protobuf,
            "json" => Format::Json,
            "auto" => Format::Auto,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown format {name:?}; formats are binary, string, avro, protobuf, \
                     json, auto"
                )))
            }
        })
    }

    /// Whether the format reads a schema (and so a registry or an explicit schema).
    pub fn needs_schema(self) -> bool {
        matches!(
            self,
            Format::Avro | Format::Protobuf | Format::Json | Format::Auto
        )
    }

    /// The schema language of the format (`Auto`: the reader schema's).
    pub fn schema_type(self, reader: &SchemaText) -> Option<SchemaType> {
        match self {
            Format::Avro => Some(SchemaType::Avro),
            Format::Protobuf => Some(SchemaType::Protobuf),
            Format::Json => Some(SchemaType::Json),
            Format::Auto => Some(reader.schema_type),
            Format::Binary | Format::String => None,
        }
    }
}

/// The decoder of `format` for the reader schema `reader`; `message` picks a Protobuf
/// message by full name (default: the first of the file).
pub fn decoder(
    format: Format,
    reader: &SchemaText,
    message: Option<&str>,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    pruned_decoder(format, reader, message, writers, None)
}

/// [`decoder`] that may build only what `wanted` asks for of the column (the parts left out
/// are the reader's to drop; see [`Wanted`]): the rest is skipped in each payload.
pub fn pruned_decoder(
    format: Format,
    reader: &SchemaText,
    message: Option<&str>,
    writers: Arc<dyn WriterSchemas>,
    wanted: Option<&Wanted>,
) -> Result<Arc<dyn PayloadDecoder>> {
    match format.schema_type(reader) {
        Some(SchemaType::Avro) => {
            if reader.schema_type != SchemaType::Avro {
                return Err(Error::invalid_argument(format!(
                    "format avro, but the reader schema is {}",
                    reader.schema_type.name()
                )));
            }
            match wanted {
                Some(w) => crate::values::avro::decoder::pruned_decoder(reader, writers, w),
                None => crate::values::avro::decoder::decoder(reader, writers),
            }
        }
        Some(SchemaType::Protobuf) => match wanted {
            Some(w) => {
                crate::values::protobuf::decoder::pruned_decoder(reader, message, writers, w)
            }
            None => crate::values::protobuf::decoder::decoder(reader, message, writers),
        },
        Some(SchemaType::Json) => match wanted {
            Some(w) => crate::values::json::decoder::pruned_decoder(reader, writers, w),
            None => crate::values::json::decoder::decoder(reader, writers),
        },
        None => Ok(Arc::new(StringDecoder)),
    }
}

/// UTF-8 text: a payload that is not UTF-8 is a bad value.
pub struct StringDecoder;

impl PayloadDecoder for StringDecoder {
    fn data_type(&self) -> &DataType {
        &DataType::Utf8
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let bytes: usize = payloads.iter().flatten().map(|p| p.bytes.len()).sum();
        let mut out = StringBuilder::with_capacity(payloads.len(), bytes);
        let mut errors = vec![None; payloads.len()];
        for (i, p) in payloads.iter().enumerate() {
            match p.map(|p| std::str::from_utf8(p.bytes)) {
                None => out.append_null(),
                Some(Ok(s)) => out.append_value(s),
                Some(Err(e)) => {
                    out.append_null();
                    errors[i] = Some(format!("not UTF-8: {e}"));
                }
            }
        }
        Ok(Decoded {
            array: Arc::new(out.finish()),
            errors,
        })
    }
}
