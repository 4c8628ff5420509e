//! Protobuf payloads (Confluent's `KafkaProtobufSerializer` and its Python/Go/.NET kin) decoded
//! into one Arrow struct column.
//!
//! The column's type is the reader's message (see `arrow.rs`), or, when several are
//! named, a struct with a field per message full name (the shape topics of several Avro
//! record types get, `record_types.rs`). Each payload's message indexes are resolved against
//! its WRITER schema (by the schema id the framing carried) to the message it was written as,
//! as Confluent's deserializer resolves them; that message's full name picks the reader's
//! message of the same name (the column's, or its field), and the bytes are decoded with the
//! reader's descriptor, so that schema evolution is protobuf's own: fields matched by number,
//! fields the reader does not know dropped, fields the writer did not write absent.
//!
//! Decoding runs a program compiled once per reader message (`program.rs`) from the
//! wire straight into column builders kept from batch to batch (`columns.rs`);
//! `prost-reflect` (through `arrow::oracle`) is its oracle in the differential tests
//! and the fuzz target.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};
use prost_reflect::{FileDescriptor, MessageDescriptor};

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, Wanted, WriterSchemas,
};
use crate::values::protobuf::arrow::{self, MessagePlan};
use crate::values::protobuf::program::{self, Program, State};
use crate::values::protobuf::schema::{self, message_at};
use crate::values::protobuf::wire::Why;

/// A decoder of Protobuf payloads into the reader schema's `message`: a full name, or several
/// separated by commas (a column with a field per message); `None`: the first message of the
/// reader's file.
pub fn decoder(
    reader: &SchemaText,
    message: Option<&str>,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    Ok(Arc::new(ProtobufDecoder::new(reader, message, writers)?))
}

/// [`decoder`] building only what `wanted` asks for of the column (the rest skipped on the
/// wire, see [`Wanted`]); several messages: `wanted` names the messages' fields.
pub fn pruned_decoder(
    reader: &SchemaText,
    message: Option<&str>,
    writers: Arc<dyn WriterSchemas>,
    wanted: &Wanted,
) -> Result<Arc<dyn PayloadDecoder>> {
    Ok(Arc::new(ProtobufDecoder::pruned(
        reader, message, writers, wanted,
    )?))
}

/// The full names `message` names: one, or several separated by commas; none: the file's first.
pub fn message_names(message: Option<&str>) -> Vec<String> {
    message
        .into_iter()
        .flat_map(|m| m.split(','))
        .map(|m| m.trim().trim_start_matches('.').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// One message of the column.
struct Part {
    name: String,
    message: MessageDescriptor,
    plan: Arc<MessagePlan>,
    program: Program,
    /// Empty builders of the program, for a state of its own.
    template: State,
}

/// Where a payload's message indexes lead: a part, or why none.
type Route = std::result::Result<usize, String>;

/// (writer schema id, message indexes): the key of a resolved [`Route`].
type RouteKey = (Option<i64>, Vec<i64>);

pub(crate) struct ProtobufDecoder {
    data_type: DataType,
    parts: Vec<Part>,
    /// Several messages named: the column is a struct of them.
    several: bool,
    /// The reader's file: message indexes of payloads without a schema id resolve in it.
    file: FileDescriptor,
    writers: Arc<dyn WriterSchemas>,
    /// Writer schemas compiled so far, by id, or why an id has none.
    compiled: Mutex<HashMap<i64, std::result::Result<FileDescriptor, String>>>,
    /// (writer id, message indexes) resolved so far.
    routes: Mutex<HashMap<RouteKey, Route>>,
    /// The builders, kept from batch to batch (one state per part).
    states: Mutex<Vec<State>>,
}

impl ProtobufDecoder {
    pub(crate) fn new(
        reader: &SchemaText,
        message: Option<&str>,
        writers: Arc<dyn WriterSchemas>,
    ) -> Result<ProtobufDecoder> {
        ProtobufDecoder::pruned(reader, message, writers, &Wanted::All)
    }

    pub(crate) fn pruned(
        reader: &SchemaText,
        message: Option<&str>,
        writers: Arc<dyn WriterSchemas>,
        wanted: &Wanted,
    ) -> Result<ProtobufDecoder> {
        let file = schema::compile(reader)?;
        let names = message_names(message);
        let messages = if names.is_empty() {
            vec![schema::reader_message(&file, None)?]
        } else {
            names
                .iter()
                .map(|n| schema::reader_message(&file, Some(n)))
                .collect::<Result<Vec<_>>>()?
        };
        let mut parts: Vec<Part> = Vec::new();
        let several = messages.len() > 1;
        static NOTHING: Wanted = Wanted::Fields(Vec::new());
        for message in messages {
            if parts.iter().any(|p| p.name == message.full_name()) {
                return Err(Error::invalid_argument(format!(
                    "the Protobuf message {} is named twice",
                    message.full_name()
                )));
            }
            // Several messages: a struct with a field per message, each pruned as its field is
            // (one asked for by nobody keeps no fields: its records still route to it).
            let within = if several {
                wanted.field(message.full_name()).unwrap_or(&NOTHING)
            } else {
                wanted
            };
            let plan = MessagePlan::new(&message).pruned(within);
            let mut template = State::default();
            let program = Program::new(&plan, &mut template.cols);
            parts.push(Part {
                name: message.full_name().to_owned(),
                message,
                plan,
                program,
                template,
            });
        }
        let data_type = if several {
            let fields: Vec<Field> = parts
                .iter()
                .map(|p| Field::new(p.name.clone(), p.plan.data_type(), true))
                .collect();
            DataType::Struct(Fields::from(fields))
        } else {
            parts[0].plan.data_type()
        };
        let states = parts.iter().map(|p| fresh(&p.template)).collect();
        Ok(ProtobufDecoder {
            data_type,
            parts,
            several,
            file,
            writers,
            compiled: Mutex::new(HashMap::new()),
            routes: Mutex::new(HashMap::new()),
            states: Mutex::new(states),
        })
    }

    /// The writer's file for `id`, compiled once; `Err(why)` inside when the id is not a
    /// Protobuf schema the registry has (that payload's fault, not the batch's).
    fn writer(&self, id: i64) -> Result<std::result::Result<FileDescriptor, String>> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = compiled.get(&id) {
            return Ok(file.clone());
        }
        let file = match self.writers.writer(id) {
            Some(text) if text.schema_type == SchemaType::Protobuf => Ok(schema::compile(&text)
                .map_err(|e| {
                    Error::invalid_argument(format!("writer schema id {id}: {}", e.message))
                })?),
            Some(text) => Err(format!(
                "schema id {id} is a {:?} schema, not Protobuf",
                text.schema_type
            )),
            None => Err(format!("schema id {id} is not in the registry")),
        };
        compiled.insert(id, file.clone());
        Ok(file)
    }

    /// The part `payload` was written as: its message indexes resolved in its writer schema
    /// (or the reader's, without a schema id) to a message, found by full name among the
    /// column's.
    fn route(&self, payload: &Payload<'_>) -> Result<Route> {
        let key = (payload.schema_id, payload.message_indexes.to_vec());
        if let Some(found) = self
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(found.clone());
        }
        let found = self.resolve(payload)?;
        self.routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, found.clone());
        Ok(found)
    }

    fn resolve(&self, payload: &Payload<'_>) -> Result<Route> {
        let (file, whose) = match payload.schema_id {
            Some(id) => match self.writer(id)? {
                Ok(file) => (file, format!("writer schema id {id}")),
                Err(why) => return Ok(Err(why)),
            },
            None if payload.message_indexes.is_empty() => return Ok(Ok(0)),
            None => (self.file.clone(), "the reader schema".to_owned()),
        };
        let Some(written) = message_at(&file, payload.message_indexes) else {
            return Ok(Err(format!(
                "message indexes {:?} name no message of {whose}",
                payload.message_indexes
            )));
        };
        if let Some(k) = self
            .parts
            .iter()
            .position(|p| p.name == written.full_name())
        {
            return Ok(Ok(k));
        }
        let held: Vec<&str> = self.parts.iter().map(|p| p.name.as_str()).collect();
        Ok(Err(if self.several {
            format!(
                "written as message {}, not one of the messages read ({})",
                written.full_name(),
                held.join(", ")
            )
        } else {
            format!(
                "written as message {}, the column holds {} (name the column's message, or \
                 several, with the message option)",
                written.full_name(),
                held[0]
            )
        }))
    }

    /// Decodes `payloads`; with `lenient`, also says of each whether it was read as the
    /// runtimes read it where the oracle reads it otherwise (`State::lenient` in `program.rs`).
    pub(crate) fn decode_tracked(
        &self,
        payloads: &[Option<Payload<'_>>],
        mut lenient: Option<&mut Vec<bool>>,
    ) -> Result<Decoded> {
        // Another thread decoding with this decoder has the kept builders: fresh ones then.
        let mut guard = self.states.try_lock().ok();
        let mut own: Vec<State>;
        let states: &mut Vec<State> = match guard.as_deref_mut() {
            Some(states) => states,
            None => {
                own = self.parts.iter().map(|p| fresh(&p.template)).collect();
                &mut own
            }
        };
        for st in states.iter_mut() {
            st.cols.reserve(payloads.len());
            st.track = lenient.is_some();
        }
        let n = payloads.len();
        let mut errors: Vec<Option<String>> = vec![None; n];
        let mut owner: Vec<Option<usize>> = vec![None; n];
        let mut last: Option<(Option<i64>, &[i64], usize)> = None;
        for (i, payload) in payloads.iter().enumerate() {
            let mut read_lenient = false;
            let part = match payload {
                None => None,
                Some(p) => match last {
                    Some((id, indexes, k))
                        if id == p.schema_id && same(indexes, p.message_indexes) =>
                    {
                        Some(k)
                    }
                    _ => match self.route(p)? {
                        Ok(k) => {
                            last = Some((p.schema_id, p.message_indexes, k));
                            Some(k)
                        }
                        Err(why) => {
                            errors[i] = Some(why);
                            None
                        }
                    },
                },
            };
            for (k, (part_, st)) in self.parts.iter().zip(states.iter_mut()).enumerate() {
                let root = part_.program.root_col();
                if part != Some(k) {
                    st.cols.push_null(root);
                    continue;
                }
                let bytes = payload.map_or(&[][..], |p| p.bytes);
                let rows = st.cols.len(root);
                st.lenient = false;
                match program::decode(&part_.program, st, bytes) {
                    Ok(()) => owner[i] = Some(k),
                    Err(why) => {
                        st.cols.truncate(root, rows);
                        st.cols.push_null(root);
                        errors[i] = Some(match why {
                            Why::Value(why) => why,
                            why => format!("not a valid {}: {why}", part_.name),
                        });
                    }
                }
                read_lenient = st.lenient;
            }
            if let Some(flags) = lenient.as_deref_mut() {
                flags.push(read_lenient);
            }
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.parts.len());
        for (part, st) in self.parts.iter().zip(states.iter_mut()) {
            let finished = st.cols.finish(part.program.root_col());
            st.cols.batch_done(n);
            match finished {
                Ok(array) => columns.push(array),
                Err(_) => {
                    // What is left of the builders is of no use: start again.
                    for (part, st) in self.parts.iter().zip(states.iter_mut()) {
                        *st = fresh(&part.template);
                    }
                    return Err(Error::new(
                        ErrorKind::LimitExceeded,
                        "the batch's values overflow an Arrow column's 32-bit offsets: decode \
                         fewer Protobuf payloads at a time",
                    ));
                }
            }
        }
        let array = if self.several {
            let DataType::Struct(fields) = &self.data_type else {
                unreachable!("several messages are a struct")
            };
            let valid: NullBuffer = owner.iter().map(Option::is_some).collect();
            Arc::new(
                StructArray::try_new(fields.clone(), columns, Some(valid))
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?,
            )
        } else {
            columns.pop().expect("one part")
        };
        Ok(Decoded { array, errors })
    }

    /// What the oracle (`prost-reflect`) decodes `payloads` to, as [`PayloadDecoder::decode`]
    /// does (message indexes resolved the same way).
    pub(crate) fn oracle(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        let mut values: Vec<Vec<Option<prost_reflect::Value>>> =
            vec![vec![None; payloads.len()]; self.parts.len()];
        for (i, payload) in payloads.iter().enumerate() {
            let Some(p) = payload else { continue };
            match self.route(p)? {
                Err(why) => errors[i] = Some(why),
                Ok(k) => {
                    let part = &self.parts[k];
                    match arrow::oracle(&part.plan, &part.message, p.bytes) {
                        Ok(v) => values[k][i] = Some(v),
                        Err(why) => errors[i] = Some(why),
                    }
                }
            }
        }
        let mut columns = Vec::new();
        for (part, values) in self.parts.iter().zip(&values) {
            let refs: Vec<Option<&prost_reflect::Value>> =
                values.iter().map(Option::as_ref).collect();
            columns.push(
                arrow::build_struct(&part.plan, &refs)
                    .map_err(|why| Error::new(ErrorKind::LimitExceeded, why))?,
            );
        }
        let array = if self.several {
            let DataType::Struct(fields) = &self.data_type else {
                unreachable!("several messages are a struct")
            };
            let valid: NullBuffer = (0..payloads.len())
                .map(|i| values.iter().any(|v| v[i].is_some()))
                .collect();
            Arc::new(
                StructArray::try_new(fields.clone(), columns, Some(valid))
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?,
            )
        } else {
            columns.pop().expect("one part")
        };
        Ok(Decoded { array, errors })
    }
}

/// The oracle as a decoder: `prost-reflect` dynamic messages, then columns (the decoder
/// before issue 34), for the benchmark's comparison in one run.
#[doc(hidden)]
pub fn oracle_decoder(
    reader: &SchemaText,
    message: Option<&str>,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    Ok(Arc::new(Oracle(ProtobufDecoder::new(
        reader, message, writers,
    )?)))
}

struct Oracle(ProtobufDecoder);

impl PayloadDecoder for Oracle {
    fn data_type(&self) -> &DataType {
        &self.0.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        self.0.oracle(payloads)
    }
}

/// Whether two message-index paths are the same (a loop: they are a few numbers at most).
#[inline(always)]
fn same(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// A state with `template`'s (empty) builders.
fn fresh(template: &State) -> State {
    State::with_cols(template.cols.clone())
}

impl PayloadDecoder for ProtobufDecoder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        self.decode_tracked(payloads, None)
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

fn fuzz_protobuf() -> Arc<ProtobufDecoder> {
    static DECODER: std::sync::OnceLock<Arc<ProtobufDecoder>> = std::sync::OnceLock::new();
    DECODER
        .get_or_init(|| {
            let schema = SchemaText::new(SchemaType::Protobuf, FUZZ_SCHEMA);
            let writers = std::collections::HashMap::<i64, Arc<SchemaText>>::new();
            let decoder = ProtobufDecoder::new(&schema, None, Arc::new(writers));
            Arc::new(decoder.expect("the fuzz schema compiles"))
        })
        .clone()
}

/// The decoder the fuzz target `kafkalog::fuzzing::protobuf_value` feeds arbitrary payloads to:
/// the fuzz schema, which has every kind of field, and no writer schemas.
#[doc(hidden)]
pub fn fuzz_decoder() -> Arc<dyn PayloadDecoder> {
    fuzz_protobuf()
}

/// The fuzz target `protobuf_value`'s comparison: arbitrary bytes cut into payloads (the first
/// byte says where) decoded by the decoder and by its oracle (`prost-reflect`), which must
/// agree on each payload (both refuse it, or both give the same value), except on payloads the
/// decoder reads as the runtimes do where the oracle does not (`State::lenient` in `program.rs`).
#[doc(hidden)]
pub fn fuzz_differential(data: &[u8]) {
    if data.len() > 1 << 16 {
        return;
    }
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(cut).max(1);
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
        .collect();
    let decoder = fuzz_protobuf();
    let mut lenient = Vec::new();
    let ours = decoder
        .decode_tracked(&payloads, Some(&mut lenient))
        .expect("decoding never fails a batch");
    let oracle = decoder.oracle(&payloads).expect("the oracle decodes");
    ours.array.to_data().validate_full().expect("a valid array");
    assert_eq!(ours.array.data_type(), oracle.array.data_type());
    for i in 0..payloads.len() {
        if lenient[i] {
            continue;
        }
        assert_eq!(
            ours.errors[i].is_some(),
            oracle.errors[i].is_some(),
            "payload {i} ({:02x?}): ours {:?}, the oracle's {:?}",
            payloads[i].map(|p| p.bytes),
            ours.errors[i],
            oracle.errors[i]
        );
        let (a, b) = (ours.array.slice(i, 1), oracle.array.slice(i, 1));
        assert!(
            a.to_data() == b.to_data(),
            "payload {i} ({:02x?}): {a:?} != {b:?}",
            payloads[i].map(|p| p.bytes)
        );
    }
}

#[cfg(test)]
#[path = "tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "differential_tests.rs"]
mod differential_tests;
