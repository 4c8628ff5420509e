//! Protobuf payloads (Confluent's `KafkaProtobufSerializer` and its Python/Go/.NET kin) decoded
//! into one Arrow struct column.
//!
//! The column's type is the reader's message (see `protobuf_arrow.rs`). Each payload's message
//! indexes are resolved against its WRITER schema (by the schema id the framing carried) to
//! the message it was written as; that must be the reader's message (by full name), and the
//! bytes are then decoded with the reader's descriptor, so that schema evolution is protobuf's
//! own: fields matched by number, fields the reader does not know dropped, fields the writer
//! did not write absent. Decoding is `prost-reflect`'s, on top of `prost` (its nesting limit
//! of 100 messages, lengths checked against the bytes left).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_schema::DataType;
use prost_reflect::{DynamicMessage, FileDescriptor, MessageDescriptor, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, WriterSchemas,
};
use crate::values::protobuf_arrow::{self, MessagePlan};
use crate::values::protobuf_schema::{self, message_at};

/// A decoder of Protobuf payloads into the reader schema's `message` (its full name; `None`:
/// the first message of the reader's file).
pub fn decoder(
    reader: &SchemaText,
    message: Option<&str>,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    let file = protobuf_schema::compile(reader)?;
    let message = protobuf_schema::reader_message(&file, message)?;
    let plan = MessagePlan::new(&message);
    Ok(Arc::new(ProtobufDecoder {
        data_type: plan.data_type(),
        plan,
        file,
        message,
        writers,
        compiled: Mutex::new(HashMap::new()),
    }))
}

struct ProtobufDecoder {
    data_type: DataType,
    plan: Arc<MessagePlan>,
    /// The reader's file: message indexes of payloads without a schema id resolve in it.
    file: FileDescriptor,
    message: MessageDescriptor,
    writers: Arc<dyn WriterSchemas>,
    /// Writer schemas compiled so far, by id, or why an id has none.
    compiled: Mutex<HashMap<i64, std::result::Result<FileDescriptor, String>>>,
}

impl ProtobufDecoder {
    /// The writer's file for `id`, compiled once; `Err(why)` inside when the id is not a
    /// Protobuf schema the registry has (that payload's fault, not the batch's).
    fn writer(&self, id: i64) -> Result<std::result::Result<FileDescriptor, String>> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = compiled.get(&id) {
            return Ok(file.clone());
        }
        let file = match self.writers.writer(id) {
            Some(text) if text.schema_type == SchemaType::Protobuf => {
                Ok(protobuf_schema::compile(&text).map_err(|e| {
                    Error::invalid_argument(format!("writer schema id {id}: {}", e.message))
                })?)
            }
            Some(text) => Err(format!(
                "schema id {id} is a {:?} schema, not Protobuf",
                text.schema_type
            )),
            None => Err(format!("schema id {id} is not in the registry")),
        };
        compiled.insert(id, file.clone());
        Ok(file)
    }

    /// Checks that `payload` was written as the reader's message.
    fn check_message(&self, payload: &Payload<'_>) -> Result<std::result::Result<(), String>> {
        let (file, whose) = match payload.schema_id {
            Some(id) => match self.writer(id)? {
                Ok(file) => (file, format!("writer schema id {id}")),
                Err(why) => return Ok(Err(why)),
            },
            None if payload.message_indexes.is_empty() => return Ok(Ok(())),
            None => (self.file.clone(), "the reader schema".to_owned()),
        };
        Ok(match message_at(&file, payload.message_indexes) {
            Some(written) if written.full_name() == self.message.full_name() => Ok(()),
            Some(written) => Err(format!(
                "written as message {}, the column holds {}",
                written.full_name(),
                self.message.full_name()
            )),
            None => Err(format!(
                "message indexes {:?} name no message of {whose}",
                payload.message_indexes
            )),
        })
    }

    fn decode_one(&self, payload: &Payload<'_>) -> Result<std::result::Result<Value, String>> {
        if let Err(why) = self.check_message(payload)? {
            return Ok(Err(why));
        }
        let message = match DynamicMessage::decode(self.message.clone(), payload.bytes) {
            Ok(message) => message,
            Err(e) => {
                return Ok(Err(format!(
                    "not a valid {}: {e}",
                    self.message.full_name()
                )))
            }
        };
        Ok(protobuf_arrow::check(&self.plan, &message).map(|()| Value::Message(message)))
    }
}

impl PayloadDecoder for ProtobufDecoder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut values = Vec::with_capacity(payloads.len());
        let mut errors = Vec::with_capacity(payloads.len());
        for payload in payloads {
            match payload {
                None => {
                    values.push(None);
                    errors.push(None);
                }
                Some(payload) => match self.decode_one(payload)? {
                    Ok(value) => {
                        values.push(Some(value));
                        errors.push(None);
                    }
                    Err(why) => {
                        values.push(None);
                        errors.push(Some(why));
                    }
                },
            }
        }
        let refs: Vec<Option<&Value>> = values.iter().map(Option::as_ref).collect();
        let array = protobuf_arrow::build_struct(&self.plan, &refs).map_err(|why| {
            Error::new(
                ErrorKind::LimitExceeded,
                format!("{why}: decode fewer Protobuf payloads at a time"),
            )
        })?;
        Ok(Decoded { array, errors })
    }
}

/// A schema with every kind of field the mapping knows, for the fuzz target.
const FUZZ_SCHEMA: &str = r#"
syntax = "proto3";
package fuzz;
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message All {
  enum E { ZERO = 0; ONE = 1; }
  message Inner { string s = 1; repeated sint64 n = 2; All again = 3; }
  double f64 = 1; float f32 = 2; int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6;
  sint32 s32 = 7; sint64 s64 = 8; fixed32 x32 = 9; fixed64 x64 = 10; sfixed32 sx32 = 11;
  sfixed64 sx64 = 12; bool b = 13; string str = 14; bytes raw = 15; E e = 16;
  optional int32 maybe = 17; Inner inner = 18; repeated Inner inners = 19;
  repeated int32 packed = 20; map<string, Inner> by_name = 21; map<int64, E> by_id = 22;
  oneof pick { string one = 23; Inner other = 24; }
  google.protobuf.Timestamp at = 25; google.protobuf.Duration took = 26;
  google.protobuf.Int64Value w64 = 27; google.protobuf.StringValue wstr = 28;
  google.protobuf.Struct attrs = 29; google.protobuf.Any any = 30;
  repeated google.protobuf.Timestamp ats = 31; map<bool, bytes> flags = 32;
}
"#;

/// The decoder the fuzz target `kafkalog::fuzzing::protobuf_value` feeds arbitrary payloads to:
/// the fuzz schema, which has every kind of field, and no writer schemas.
#[doc(hidden)]
pub fn fuzz_decoder() -> Arc<dyn PayloadDecoder> {
    static DECODER: std::sync::OnceLock<Arc<dyn PayloadDecoder>> = std::sync::OnceLock::new();
    DECODER
        .get_or_init(|| {
            let schema = SchemaText::new(SchemaType::Protobuf, FUZZ_SCHEMA);
            let writers = std::collections::HashMap::<i64, Arc<SchemaText>>::new();
            decoder(&schema, None, Arc::new(writers)).expect("the fuzz schema compiles")
        })
        .clone()
}

#[cfg(test)]
#[path = "protobuf_tests.rs"]
pub(crate) mod tests;
