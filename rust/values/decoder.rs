//! The contract between the framing (which finds a payload's schema) and a format's decoder
//! (which turns payloads into one Arrow array).
//!
//! A decoder is built for one reader schema (the one column type of a read). It is handed a
//! batch's payloads with the framing already removed, and the writer schema's id when the
//! framing carried one; writer schemas it needs (Avro resolution, Protobuf message indexes) it
//! asks of a [`WriterSchemas`]. A payload that does not decode never fails the batch: it is
//! null in the array and its reason is in [`Decoded::errors`]; the caller decides whether that
//! is an error (naming file, offset and schema id) or a null with a `value_error`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::DataType;

use crate::error::Result;

/// The schema languages Schema Registry stores (`schemaType`; absent means Avro).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// Apache Avro (`"AVRO"`, or no `schemaType`).
    Avro,
    /// Protocol Buffers (`"PROTOBUF"`): `.proto` text, or a serialized `FileDescriptorProto`
    /// in base64.
    Protobuf,
    /// JSON Schema (`"JSON"`).
    Json,
}

/// A schema as registered: its language, its text and the schemas it references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaText {
    /// The language.
    pub schema_type: SchemaType,
    /// The schema itself, as the registry stores it.
    pub schema: String,
    /// Each reference, resolved transitively by the caller: the name the schema imports it by
    /// (a `.proto` file name, an Avro full name, a JSON `$ref` URL) and that schema's text.
    pub references: Vec<(String, String)>,
}

impl SchemaText {
    /// A schema of `schema_type` that references no other.
    pub fn new(schema_type: SchemaType, schema: impl Into<String>) -> SchemaText {
        SchemaText {
            schema_type,
            schema: schema.into(),
            references: Vec::new(),
        }
    }
}

/// Writer schemas by id, as the registry (or the user) knows them.
pub trait WriterSchemas: Send + Sync {
    /// The schema registered under `id`, or `None` if the registry does not have it.
    fn writer(&self, id: i64) -> Option<Arc<SchemaText>>;
}

/// Writer schemas given as a map from id to schema.
impl WriterSchemas for HashMap<i64, Arc<SchemaText>> {
    fn writer(&self, id: i64) -> Option<Arc<SchemaText>> {
        self.get(&id).cloned()
    }
}

/// One payload: a key's or a value's bytes after the framing.
#[derive(Debug, Clone, Copy)]
pub struct Payload<'a> {
    /// The bytes after the magic byte, the schema id and (Protobuf) the message indexes.
    pub bytes: &'a [u8],
    /// The writer schema's id, when the framing or a record header carried one.
    pub schema_id: Option<i64>,
    /// Protobuf: the message indexes the framing carried (`[0]` for its single 0 byte: the
    /// first message of the file). Empty for other formats.
    pub message_indexes: &'a [i64],
}

/// What a batch of payloads decoded into.
#[derive(Debug)]
pub struct Decoded {
    /// One value per payload, of the decoder's [`PayloadDecoder::data_type`]; null where the
    /// payload was `None` or did not decode.
    pub array: ArrayRef,
    /// For each payload, why it did not decode (`None`: it decoded, or was `None`).
    pub errors: Vec<Option<String>>,
}

/// A format's decoder for one reader schema.
pub trait PayloadDecoder: Send + Sync {
    /// The Arrow type every decoded value has.
    fn data_type(&self) -> &DataType;

    /// Decodes `payloads` into an array of the same length (`None` stays null). `Err` only for
    /// what is not one payload's fault (a writer schema that does not compile, say).
    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded>;
}

/// The parts of a column's type a read asks for (Spark's nested-column pruning): a struct's
/// fields by name, each with the parts of it asked for; a list's or map's parts are those of
/// its items (a map's values). A decoder may leave out what is not asked for (skip it on the
/// wire rather than build it): its column then has at least the parts asked for, and the
/// reader drops the rest. What is left out is not checked either, as Spark's own sources
/// do not parse columns they prune.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Everything.
    All,
    /// These fields of a struct (by name), and what of each.
    Fields(Vec<(String, Wanted)>),
}

impl Wanted {
    /// What of field `name` is asked for (None: nothing).
    pub fn field(&self, name: &str) -> Option<&Wanted> {
        match self {
            Wanted::All => Some(&Wanted::All),
            Wanted::Fields(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, w)| w),
        }
    }
}
