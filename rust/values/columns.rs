//! A reader's batches with `key` and `value` decoded: the framing taken off each (prefix or
//! header), the payloads handed to the format's decoder a batch at a time, and what did not
//! decode either failing the read or left null with its reason (`on_value_error`).
//!
//! The reader schema, one per side and read, is chosen here from the options: an explicit
//! schema, a subject (and version) of the registry, or the subject named by the topic
//! (`<topic>-key`, `<topic>-value`, Confluent's default `TopicNameStrategy`), latest version.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{Error, ErrorKind, Result};
use crate::format::confluent::{
    header_schema, message_indexes, unframe, IdWidth, MessageIndexes, SchemaRef as WireSchema,
    KEY_SCHEMA_ID_HEADER, NO_MESSAGE, VALUE_SCHEMA_ID_HEADER,
};
use crate::values::decoder::{Payload, PayloadDecoder, SchemaText, SchemaType, Wanted};
use crate::values::formats::{decoder, pruned_decoder, Format};
use crate::values::registry::{Registry, RegistrySchemas};

/// A key or value with its framing off: the writer schema's id (None: no framing), the
/// Protobuf message indexes, and the payload.
type Unframed<'a> = (Option<i64>, MessageIndexes, &'a [u8]);

/// What a bad key or value does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnValueError {
    /// Fail the read, naming file, offset, schema id and why.
    #[default]
    Error,
    /// Leave it null; `<side>_error` says why and `<side>_raw` keeps its bytes.
    Null,
}

impl OnValueError {
    /// `"error"` or `"null"`.
    pub fn from_name(name: &str) -> Result<OnValueError> {
        match name {
            "error" => Ok(OnValueError::Error),
            "null" => Ok(OnValueError::Null),
            _ => Err(Error::invalid_argument(format!(
                "on_value_error must be \"error\" or \"null\", not {name:?}"
            ))),
        }
    }
}

/// How one side (key or value) is to be read.
#[derive(Clone, Debug, Default)]
pub struct SideOptions {
    /// The format.
    pub format: Format,
    /// The subject whose schema is the column's (default `<topic>-key`/`<topic>-value`).
    pub subject: Option<String>,
    /// Subjects of several record types read into one column (see
    /// [`crate::values::record_types`]); empty: one subject.
    pub subjects: Vec<String>,
    /// Its version (default the latest not deleted).
    pub version: Option<i32>,
    /// A schema given explicitly: the column's type, and the writer schema of payloads that
    /// carry no framing.
    pub schema: Option<SchemaText>,
    /// The payloads carry no framing (only with an explicit schema).
    pub unframed: bool,
    /// Apicurio's 8-byte ids instead of Confluent's 4.
    pub id_width: IdWidth,
    /// The Protobuf message (full name) of the column.
    pub message: Option<String>,
    /// The parts of the column the read asks for (None: all); see [`Wanted`].
    pub wanted: Option<Wanted>,
}

/// Options of decoding keys and values.
#[derive(Clone, Debug, Default)]
pub struct ValueOptions {
    /// The key.
    pub key: SideOptions,
    /// The value.
    pub value: SideOptions,
    /// What a bad key or value does.
    pub on_error: OnValueError,
}

impl ValueOptions {
    /// Whether anything is decoded.
    pub fn any(&self) -> bool {
        self.key.format != Format::Binary || self.value.format != Format::Binary
    }
}

/// One side being decoded.
struct Side {
    name: &'static str,
    header: &'static str,
    decoder: Arc<dyn PayloadDecoder>,
    /// The schema language read (None: string).
    schema_type: Option<SchemaType>,
    /// `auto`: each id's registered type says whether message indexes follow it.
    auto: bool,
    unframed: bool,
    id_width: IdWidth,
}

/// Registry lookups of one batch, made once per id or GUID.
#[derive(Default)]
struct Lookups {
    protobuf: std::collections::HashMap<i64, bool>,
    guids: std::collections::HashMap<[u8; 16], Option<i64>>,
}

/// Decodes keys and values of a reader's batches.
pub struct ValueDecoding {
    sides: Vec<Side>,
    registry: Option<Arc<Registry>>,
    on_error: OnValueError,
}

/// The columns that place a record's batch in its file, read (when a batch has them) so that
/// an error names the batch as every other error does: its byte position and base offset.
pub const LOCATING_COLUMNS: [&str; 2] = ["batchPosition", "baseOffset"];

/// Where a record is, for an error: (topic, partition, offset) to the file holding it.
pub type Locate<'a> = &'a dyn Fn(Option<&str>, Option<i32>, i64) -> Option<PathBuf>;

impl ValueDecoding {
    /// Decoding as `options` say, schemas from `registry`, for records of `topic` (which names
    /// the default subjects). `None` when nothing is to be decoded.
    pub fn new(
        options: &ValueOptions,
        registry: Option<Arc<Registry>>,
        topic: Option<&str>,
    ) -> Result<Option<ValueDecoding>> {
        if !options.any() {
            return Ok(None);
        }
        let mut sides = Vec::new();
        for (name, header, side) in [
            ("key", KEY_SCHEMA_ID_HEADER, &options.key),
            ("value", VALUE_SCHEMA_ID_HEADER, &options.value),
        ] {
            if side.format == Format::Binary {
                continue;
            }
            let writers = || -> Arc<dyn crate::values::decoder::WriterSchemas> {
                match &registry {
                    Some(r) => Arc::new(RegistrySchemas::new(r.clone())),
                    None => no_writers(),
                }
            };
            let several = match side.format {
                Format::Avro | Format::Auto => {
                    several_subjects(name, side, registry.as_deref(), topic)?
                }
                _ if !side.subjects.is_empty() => {
                    return Err(Error::invalid_argument(format!(
                        "{name}_subjects (several record types in one column) are read as Avro \
                         only, not {:?}",
                        side.format
                    )))
                }
                _ => None,
            };
            let (decoder, schema_type) = if side.format == Format::String {
                (decoder(Format::String, &empty(), None, no_writers())?, None)
            } else if let (Some(subjects), Some(r)) = (&several, &registry) {
                let d = crate::values::record_types::decoder(name, subjects, r, writers())?;
                (d, Some(SchemaType::Avro))
            } else {
                let reader = reader_schema(name, side, registry.as_deref(), topic)?;
                let d = pruned_decoder(
                    side.format,
                    &reader,
                    side.message.as_deref(),
                    writers(),
                    side.wanted.as_ref(),
                )?;
                (d, side.format.schema_type(&reader))
            };
            if side.unframed && side.schema.is_none() && side.format != Format::String {
                return Err(Error::invalid_argument(format!(
                    "{name}s without framing need their schema given explicitly"
                )));
            }
            sides.push(Side {
                name,
                header,
                decoder,
                schema_type,
                auto: side.format == Format::Auto,
                unframed: side.unframed,
                id_width: side.id_width,
            });
        }
        Ok(Some(ValueDecoding {
            sides,
            registry,
            on_error: options.on_error,
        }))
    }

    /// The Protobuf messages the keys and values of `batch` were written as: each framed
    /// payload's message indexes resolved in its writer schema (by its id, as Confluent's
    /// deserializer resolves them) to a full name, added to `found` (side name, full name) in
    /// the order first met. Payloads that do not unframe, or whose id is not a Protobuf schema
    /// of the registry, name nothing (the read itself says why).
    pub fn messages_written(&self, batch: &RecordBatch, found: &mut Vec<(&'static str, String)>) {
        let Some(registry) = &self.registry else {
            return;
        };
        let writers = RegistrySchemas::new(registry.clone());
        let headers = batch
            .column_by_name("headers")
            .and_then(|h| h.as_list_opt::<i32>());
        for side in &self.sides {
            let protobuf = side.auto || side.schema_type == Some(SchemaType::Protobuf);
            let Some(raw) = batch.column_by_name(side.name).filter(|_| protobuf) else {
                continue;
            };
            let mut lookups = Lookups::default();
            let mut files = std::collections::HashMap::new();
            let mut seen = std::collections::HashSet::new();
            for row in 0..raw.len() {
                let Some(bytes) = binary_at(raw, row) else {
                    continue;
                };
                let Ok((Some(id), indexes, _)) =
                    self.unframe(side, bytes, headers, row, &mut lookups)
                else {
                    continue;
                };
                if !seen.insert((id, indexes.to_vec())) {
                    continue;
                }
                let file = files.entry(id).or_insert_with(|| {
                    use crate::values::decoder::WriterSchemas;
                    writers
                        .writer(id)
                        .filter(|t| t.schema_type == SchemaType::Protobuf)
                        .and_then(|t| crate::values::protobuf::schema::compile(&t).ok())
                });
                let Some(message) = file
                    .as_ref()
                    .and_then(|f| crate::values::protobuf::schema::message_at(f, &indexes))
                else {
                    continue;
                };
                let name = message.full_name().to_owned();
                if !found.iter().any(|(s, n)| *s == side.name && *n == name) {
                    found.push((side.name, name));
                }
            }
        }
    }

    /// The columns a batch must have for decoding (added to a read's projection if missing,
    /// and dropped again after).
    pub fn needed_columns(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self.sides.iter().map(|s| s.name).collect();
        out.extend(["topic", "partition", "offset"]);
        if self.on_error == OnValueError::Error {
            out.extend(LOCATING_COLUMNS);
        }
        if self
            .sides
            .iter()
            .any(|s| s.schema_type.is_some() && !s.unframed)
        {
            out.push("headers");
        }
        out
    }

    /// The schema of decoded batches, from the schema of the batches read.
    pub fn schema(&self, input: &Schema) -> SchemaRef {
        let mut fields: Vec<Field> = input
            .fields()
            .iter()
            .map(|f| match self.sides.iter().find(|s| s.name == f.name()) {
                Some(side) => Field::new(f.name(), utc_named(side.decoder.data_type()), true),
                None => f.as_ref().clone(),
            })
            .collect();
        if self.on_error == OnValueError::Null {
            for side in self.sides.iter().filter(|s| input.index_of(s.name).is_ok()) {
                fields.push(Field::new(
                    format!("{}_error", side.name),
                    DataType::Utf8,
                    true,
                ));
                fields.push(Field::new(
                    format!("{}_raw", side.name),
                    DataType::Binary,
                    true,
                ));
            }
        }
        Arc::new(Schema::new(fields))
    }

    /// `batch` with its key and value decoded; the number of bad keys and values left null.
    /// With `OnValueError::Error` the first bad one fails, located by `locate`.
    pub fn apply(&self, batch: &RecordBatch, locate: Locate<'_>) -> Result<(RecordBatch, usize)> {
        let schema = self.schema(batch.schema_ref());
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        let mut extra: Vec<ArrayRef> = Vec::new();
        let mut bad = 0;
        for side in &self.sides {
            let Some(index) = batch.schema_ref().index_of(side.name).ok() else {
                continue;
            };
            let raw = batch.column(index);
            let (array, errors) = self.decode_side(side, raw, batch)?;
            let failed = errors.iter().position(Option::is_some);
            if let (Some(row), OnValueError::Error) = (failed, self.on_error) {
                return Err(self.located(side, batch, row, errors[row].as_deref(), locate));
            }
            bad += errors.iter().filter(|e| e.is_some()).count();
            columns[index] = array;
            if self.on_error == OnValueError::Null {
                let mut why = StringBuilder::new();
                let mut kept = BinaryBuilder::new();
                for (row, e) in errors.iter().enumerate() {
                    why.append_option(e.as_deref());
                    match e {
                        Some(_) => kept.append_option(binary_at(raw, row)),
                        None => kept.append_null(),
                    }
                }
                extra.push(Arc::new(why.finish()));
                extra.push(Arc::new(kept.finish()));
            }
        }
        columns.extend(extra);
        let out = RecordBatch::try_new(schema, columns)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        Ok((out, bad))
    }

    fn located(
        &self,
        side: &Side,
        batch: &RecordBatch,
        row: usize,
        why: Option<&str>,
        locate: Locate<'_>,
    ) -> Error {
        let topic = batch.column_by_name("topic").and_then(|c| {
            c.as_string_opt::<i32>()
                .filter(|a| a.is_valid(row))
                .map(|a| a.value(row))
        });
        let partition = batch.column_by_name("partition").and_then(|c| {
            c.as_primitive_opt::<Int32Type>()
                .filter(|a| a.is_valid(row))
                .map(|a| a.value(row))
        });
        let long = |name: &str| {
            batch.column_by_name(name).and_then(|c| {
                c.as_primitive_opt::<Int64Type>()
                    .filter(|a| a.is_valid(row))
                    .map(|a| a.value(row))
            })
        };
        let offset = long("offset");
        let mut where_ = String::new();
        if let (Some(t), Some(p)) = (topic, partition) {
            where_ = format!(" of {t}-{p}");
        }
        let mut err = Error::new(
            ErrorKind::Value,
            format!(
                "{}{where_} at offset {} does not decode: {}",
                side.name,
                offset.map_or("?".into(), |o| o.to_string()),
                why.unwrap_or("?")
            ),
        );
        // The error's offset and position are its batch's, as for every error (the message
        // names the record's offset).
        if let (Some(position), Some(base)) = (long("batchPosition"), long("baseOffset")) {
            err = err.at(position as u64).with_offset(base);
        }
        if let Some(o) = offset {
            if let Some(path) = locate(topic, partition, o) {
                err = err.with_path(&path);
            }
        }
        err
    }

    fn decode_side(
        &self,
        side: &Side,
        raw: &ArrayRef,
        batch: &RecordBatch,
    ) -> Result<(ArrayRef, Vec<Option<String>>)> {
        let n = raw.len();
        let headers = batch
            .column_by_name("headers")
            .and_then(|h| h.as_list_opt::<i32>());
        let mut errors: Vec<Option<String>> = vec![None; n];
        // Per row: the schema id, the message indexes and the payload (None: null or bad).
        let mut framed: Vec<Option<Unframed<'_>>> = Vec::with_capacity(n);
        let mut lookups = Lookups::default();
        for (row, error) in errors.iter_mut().enumerate() {
            let Some(bytes) = binary_at(raw, row) else {
                framed.push(None);
                continue;
            };
            match self.unframe(side, bytes, headers, row, &mut lookups) {
                Ok(f) => framed.push(Some(f)),
                Err(why) => {
                    *error = Some(why);
                    framed.push(None);
                }
            }
        }
        let payloads: Vec<Option<Payload<'_>>> = framed
            .iter()
            .map(|f| {
                f.as_ref().map(|(id, indexes, bytes)| Payload {
                    bytes,
                    schema_id: *id,
                    message_indexes: indexes,
                })
            })
            .collect();
        let decoded = side.decoder.decode(&payloads)?;
        for (row, e) in decoded.errors.into_iter().enumerate() {
            if errors[row].is_none() {
                errors[row] = e.map(|why| match payloads[row].and_then(|p| p.schema_id) {
                    Some(id) if !why.contains("schema id") => format!("schema id {id}: {why}"),
                    _ => why,
                });
            }
        }
        Ok((utc_named_array(decoded.array)?, errors))
    }

    fn unframe<'a>(
        &self,
        side: &Side,
        bytes: &'a [u8],
        headers: Option<&arrow_array::ListArray>,
        row: usize,
        lookups: &mut Lookups,
    ) -> std::result::Result<Unframed<'a>, String> {
        if side.schema_type.is_none() || side.unframed {
            return Ok((None, NO_MESSAGE, bytes));
        }
        let (schema, indexes, payload) = match header_value(headers, row, side.header) {
            Some(h) => {
                let (schema, indexes) =
                    header_schema(h, side.schema_type == Some(SchemaType::Protobuf))?;
                (schema, Some(indexes), bytes)
            }
            None => {
                let f = unframe(bytes, side.id_width, false)?;
                (f.schema, None, f.payload)
            }
        };
        let id = match schema {
            WireSchema::Id(id) => id,
            WireSchema::Guid(guid) => {
                let registry = self.registry.as_ref();
                let id = *lookups
                    .guids
                    .entry(guid)
                    .or_insert_with(|| registry.and_then(|r| r.by_guid(&guid)).map(|r| r.id));
                id.ok_or_else(|| {
                    format!("schema GUID {} is not in the registry", guid_string(&guid))
                })?
            }
        };
        // Message indexes follow the id for Protobuf writer schemas.
        let is_protobuf = match side.schema_type {
            _ if side.auto => {
                let registry = self.registry.as_ref();
                *lookups.protobuf.entry(id).or_insert_with(|| {
                    registry
                        .and_then(|r| r.by_id(id))
                        .is_some_and(|r| r.schema_type == SchemaType::Protobuf)
                })
            }
            Some(SchemaType::Protobuf) => true,
            _ => false,
        };
        match indexes {
            Some(indexes) => Ok((Some(id), indexes, payload)),
            None if is_protobuf => {
                let mut pos = 0;
                let indexes = message_indexes(payload, &mut pos)?;
                Ok((Some(id), indexes, &payload[pos..]))
            }
            None => Ok((Some(id), NO_MESSAGE, payload)),
        }
    }
}

/// `data_type` with every timestamp at UTC named `"UTC"`, as the record columns name it:
/// `arrow-avro` names it `"+00:00"`, the same instant. Types a cast cannot relabel stay.
pub fn utc_named(data_type: &DataType) -> DataType {
    let renamed = renamed_zone(data_type, "+00:00", "UTC");
    if arrow_cast::can_cast_types(data_type, &renamed) {
        renamed
    } else {
        data_type.clone()
    }
}

/// `array` as [`utc_named`] types it: the same values, relabelled.
fn utc_named_array(array: ArrayRef) -> Result<ArrayRef> {
    let target = utc_named(array.data_type());
    relabel(array, &target)
}

/// `array` (of a type [`utc_named`] gives) with its UTC timestamps named as `arrow-avro` names
/// them, for its encoder.
pub fn avro_named(array: ArrayRef) -> Result<ArrayRef> {
    let target = renamed_zone(array.data_type(), "UTC", "+00:00");
    relabel(array, &target)
}

fn relabel(array: ArrayRef, target: &DataType) -> Result<ArrayRef> {
    if array.data_type() == target {
        return Ok(array);
    }
    arrow_cast::cast(&array, target).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}

/// `data_type` with the time zone `from` of its timestamps (at any depth) named `to`.
fn renamed_zone(data_type: &DataType, from: &str, to: &str) -> DataType {
    let field = |f: &arrow_schema::FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(renamed_zone(f.data_type(), from, to)),
        )
    };
    match data_type {
        DataType::Timestamp(unit, Some(tz)) if tz.as_ref() == from => {
            DataType::Timestamp(*unit, Some(to.into()))
        }
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Dictionary(k, v) => {
            DataType::Dictionary(k.clone(), Box::new(renamed_zone(v, from, to)))
        }
        other => other.clone(),
    }
}

/// The bytes of row `row` of a `binary` or `binary_view` column (None: null).
fn binary_at(array: &ArrayRef, row: usize) -> Option<&[u8]> {
    if array.is_null(row) {
        return None;
    }
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => Some(array.as_binary_view().value(row)),
        DataType::Utf8 => Some(array.as_string::<i32>().value(row).as_bytes()),
        _ => None,
    }
}

/// The value of the first header named `name` of row `row` (as Confluent's deserializers
/// take it).
fn header_value<'a>(
    headers: Option<&'a arrow_array::ListArray>,
    row: usize,
    name: &str,
) -> Option<&'a [u8]> {
    let headers = headers?;
    if headers.is_null(row) {
        return None;
    }
    let entries = headers.values().as_struct();
    let keys = entries.column(0).as_string::<i32>();
    let values = entries.column(1).as_binary::<i32>();
    let offsets = headers.value_offsets();
    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
    (start..end)
        .find(|&i| keys.is_valid(i) && keys.value(i) == name)
        .and_then(|i| values.is_valid(i).then(|| values.value(i)))
}

fn guid_string(g: &[u8; 16]) -> String {
    let hex: String = g.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn empty() -> SchemaText {
    SchemaText {
        schema_type: SchemaType::Avro,
        schema: String::new(),
        references: Vec::new(),
    }
}

struct NoWriters;
impl crate::values::decoder::WriterSchemas for NoWriters {
    fn writer(&self, _id: i64) -> Option<Arc<SchemaText>> {
        None
    }
}

fn no_writers() -> Arc<dyn crate::values::decoder::WriterSchemas> {
    Arc::new(NoWriters)
}

/// The subjects of one side read as several record types (named, or found as the topic's
/// `<topic>-<full name>` subjects when it has no `<topic>-<side>`); `None`: one schema.
pub fn several_subjects(
    side_name: &str,
    side: &SideOptions,
    registry: Option<&Registry>,
    topic: Option<&str>,
) -> Result<Option<Vec<String>>> {
    let one_named = side.subject.is_some() || side.version.is_some() || side.schema.is_some();
    let found = crate::values::record_types::subjects(
        side_name,
        &side.subjects,
        one_named,
        registry,
        topic,
    )?;
    if found.is_some() && registry.is_none() {
        return Err(Error::invalid_argument(format!(
            "{side_name}_subjects need the registry (schemas=<path>)"
        )));
    }
    Ok(found)
}

/// The messages (full names) a side's Protobuf reader schema can read, its references' among
/// them, its file's first message first; `None` when the side's reader schema is not Protobuf
/// (or it reads unframed payloads, which carry no message indexes).
pub fn reader_messages(
    side_name: &str,
    side: &SideOptions,
    registry: Option<&Registry>,
    topic: Option<&str>,
) -> Result<Option<Vec<String>>> {
    if side.unframed || !matches!(side.format, Format::Protobuf | Format::Auto) {
        return Ok(None);
    }
    let reader = reader_schema(side_name, side, registry, topic)?;
    if reader.schema_type != SchemaType::Protobuf {
        return Ok(None);
    }
    let file = crate::values::protobuf::schema::compile(&reader)?;
    let first = crate::values::protobuf::schema::reader_message(&file, None)?;
    let first = first.full_name();
    let others = file.parent_pool().all_messages();
    let others = others.filter(|m| m.full_name() != first);
    Ok(Some(
        std::iter::once(first.to_owned())
            .chain(others.map(|m| m.full_name().to_owned()))
            .collect(),
    ))
}

/// The reader schema of one side: given explicitly, or a subject version of the registry.
pub fn reader_schema(
    side_name: &str,
    side: &SideOptions,
    registry: Option<&Registry>,
    topic: Option<&str>,
) -> Result<SchemaText> {
    if let Some(schema) = &side.schema {
        return Ok(schema.clone());
    }
    let Some(registry) = registry else {
        return Err(Error::invalid_argument(format!(
            "{side_name}s as {:?} need schemas: the registry's storage topic (schemas=<path>), \
             schemas by id, or a schema",
            side.format
        )));
    };
    let found = registered(side_name, side, registry, topic)?;
    if let Some(wrong) = wrong_language(side_name, side.format, found) {
        return Err(wrong);
    }
    registry.text(found)
}

/// The error for a registered schema in another language than the side's format reads (a
/// Protobuf read of a subject holding Avro): which subject, version and id, what it holds,
/// and the format that reads it. `None` when they agree (or the format takes any).
fn wrong_language(
    side_name: &str,
    format: Format,
    found: &crate::values::registry::Registered,
) -> Option<Error> {
    let name = |t: SchemaType| match t {
        SchemaType::Avro => ("Avro", "avro"),
        SchemaType::Protobuf => ("Protobuf", "protobuf"),
        SchemaType::Json => ("JSON Schema", "json"),
    };
    let wanted = match format {
        Format::Avro => SchemaType::Avro,
        Format::Protobuf => SchemaType::Protobuf,
        Format::Json => SchemaType::Json,
        Format::Binary | Format::String | Format::Auto => return None,
    };
    if found.schema_type == wanted {
        return None;
    }
    let ((held, reads), (asked, flag)) = (name(found.schema_type), name(wanted));
    Some(Error::invalid_argument(format!(
        "the {side_name} format is {flag}, but subject {:?} version {} (schema id {}) holds \
         a{} {held} schema, not a {asked} one: the {side_name} format {reads} reads it \
         (--{side_name}-format {reads}; {side_name}_format=\"{reads}\" in Python, \
         {side_name}Format in Spark), or auto, which follows the registry",
        found.subject,
        found.version,
        found.id,
        if held == "Avro" { "n" } else { "" },
    )))
}

/// The registered schema of one side's subject: the one named (at the version named), or
/// `<topic>-key`/`<topic>-value`'s latest version that is not deleted.
pub fn registered<'r>(
    side_name: &str,
    side: &SideOptions,
    registry: &'r Registry,
    topic: Option<&str>,
) -> Result<&'r crate::values::registry::Registered> {
    let subject = match (&side.subject, topic) {
        (Some(s), _) => s.clone(),
        (None, Some(t)) => format!("{t}-{side_name}"),
        (None, None) => {
            return Err(Error::invalid_argument(format!(
                "the {side_name} column's schema is that of subject <topic>-{side_name}, but \
                 the read has no single topic: name the subject"
            )))
        }
    };
    let found = match side.version {
        Some(v) => registry.version(&subject, v),
        None => registry.latest(&subject),
    };
    found
        .or_else(|| fallback(registry, side.subject.is_none()))
        .ok_or_else(|| {
            let subjects = registry.subjects();
            Error::invalid_argument(format!(
                "subject {subject:?}{} is not in the registry (subjects: {})",
                side.version
                    .map_or(String::new(), |v| format!(" version {v}")),
                if subjects.is_empty() {
                    "none".to_string()
                } else {
                    subjects.join(", ")
                }
            ))
        })
}

/// Schemas given by id only (no subjects): the one with the highest id is the column's.
fn fallback(
    registry: &Registry,
    default_subject: bool,
) -> Option<&crate::values::registry::Registered> {
    if !default_subject {
        return None;
    }
    let subjects = registry.subjects();
    if subjects != [""] {
        return None;
    }
    registry
        .versions()
        .filter(|r| r.id >= 0)
        .max_by_key(|r| r.id)
}
