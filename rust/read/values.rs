//! A read's typed keys and values: the `values` options every surface takes (formats, the
//! registry's storage topic or schemas given directly, subjects, versions, schemas, framing,
//! `on_value_error`), the registry they name read, the options resolved once (on a Spark
//! driver) so that tasks never read the registry's storage topic, and the decoding step applied
//! to each batch a reader gives. The Python bindings, the JNI bindings and Spark's options
//! (`rust/spark/`) all build and use [`ValueArgs`]; the decoding itself is `rust/values/`.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde_json::{json, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::format::confluent::IdWidth;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::read::schemas::registry as read_registry;
use crate::storage::Storage;
use crate::values::columns::{OnValueError, SideOptions, ValueDecoding, ValueOptions};
use crate::values::decoder::{SchemaText, SchemaType, Wanted};
use crate::values::formats::Format;
use crate::values::registry::{Reference, Registered, Registry};

/// A schema as given: (type, text, references as (name, text)).
pub type SchemaArg = (String, String, Vec<(String, String)>);

/// A registered schema as it is shipped to tasks: (id, subject, version, type, schema,
/// references as (name, subject, version), deleted, md5).
pub type SchemaRow = (
    i64,
    String,
    i32,
    String,
    String,
    Vec<(String, String, i32)>,
    bool,
    Option<Vec<u8>>,
);

/// The `values` option of a read.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueArgs {
    /// `binary`, `string`, `avro`, `protobuf`, `json`, `auto`.
    pub key_format: String,
    /// As `key_format`.
    pub value_format: String,
    /// The registry's storage topic: a path or URI read like the data.
    pub schemas_path: Option<String>,
    /// Its topic name (default `_schemas`).
    pub schemas_topic: Option<String>,
    /// Schemas given directly (or resolved on a driver).
    pub schemas: Option<Vec<SchemaRow>>,
    /// `error` or `null`.
    pub on_value_error: String,
    /// The key column's subject (default `<topic>-key`).
    pub key_subject: Option<String>,
    /// The value column's subject (default `<topic>-value`).
    pub value_subject: Option<String>,
    /// Subjects of several record types read into the key column.
    pub key_subjects: Option<Vec<String>>,
    /// Subjects of several record types read into the value column.
    pub value_subjects: Option<Vec<String>>,
    /// The key subject's version (default its latest).
    pub key_version: Option<i32>,
    /// The value subject's version (default its latest).
    pub value_version: Option<i32>,
    /// The key column's schema, given explicitly.
    pub key_schema: Option<SchemaArg>,
    /// The value column's schema, given explicitly.
    pub value_schema: Option<SchemaArg>,
    /// `confluent` (magic 0, 4-byte id), `apicurio` (8-byte id), `none` (explicit schema).
    pub framing: String,
    /// The Protobuf message (full name) of the key column.
    pub key_message: Option<String>,
    /// The Protobuf message (full name) of the value column.
    pub value_message: Option<String>,
}

impl Default for ValueArgs {
    fn default() -> Self {
        ValueArgs {
            key_format: "binary".into(),
            value_format: "binary".into(),
            schemas_path: None,
            schemas_topic: None,
            schemas: None,
            on_value_error: "error".into(),
            key_subject: None,
            value_subject: None,
            key_subjects: None,
            value_subjects: None,
            key_version: None,
            value_version: None,
            key_schema: None,
            value_schema: None,
            framing: "confluent".into(),
            key_message: None,
            value_message: None,
        }
    }
}

fn schema_text((kind, text, references): &SchemaArg) -> Result<SchemaText> {
    let schema_type = SchemaType::from_registry(Some(&kind.to_ascii_uppercase()))
        .map_err(Error::invalid_argument)?;
    Ok(SchemaText {
        schema_type,
        schema: text.clone(),
        references: references.clone(),
    })
}

impl ValueArgs {
    /// The core's decoding options.
    pub fn options(&self) -> Result<ValueOptions> {
        let (unframed, id_width) = match self.framing.as_str() {
            "confluent" => (false, IdWidth::Four),
            "apicurio" => (false, IdWidth::Eight),
            "none" => (true, IdWidth::Four),
            other => {
                return Err(Error::invalid_argument(format!(
                    "framing must be \"confluent\", \"apicurio\" or \"none\", not {other:?}"
                )))
            }
        };
        let side = |format: &str,
                    subject: &Option<String>,
                    subjects: &Option<Vec<String>>,
                    version: Option<i32>,
                    schema: &Option<SchemaArg>,
                    message: &Option<String>|
         -> Result<SideOptions> {
            Ok(SideOptions {
                format: Format::from_name(format)?,
                subject: subject.clone(),
                subjects: subjects.clone().unwrap_or_default(),
                version,
                schema: schema.as_ref().map(schema_text).transpose()?,
                unframed,
                id_width,
                message: message.clone(),
                wanted: None,
            })
        };
        Ok(ValueOptions {
            key: side(
                &self.key_format,
                &self.key_subject,
                &self.key_subjects,
                self.key_version,
                &self.key_schema,
                &self.key_message,
            )?,
            value: side(
                &self.value_format,
                &self.value_subject,
                &self.value_subjects,
                self.value_version,
                &self.value_schema,
                &self.value_message,
            )?,
            on_error: OnValueError::from_name(&self.on_value_error)?,
        })
    }

    /// The registry the options name, if any, and what reading its log passed over.
    pub fn registry(&self, storage: &Arc<dyn Storage>) -> Result<(Option<Registry>, Vec<Issue>)> {
        let mut registry: Option<Registry> = None;
        let mut issues = Vec::new();
        if let Some(path) = &self.schemas_path {
            let (r, i) =
                read_registry(storage, &PathBuf::from(path), self.schemas_topic.as_deref())?;
            registry = Some(r);
            issues = i;
        }
        if let Some(rows) = &self.schemas {
            let r = registry.get_or_insert_with(Registry::new);
            for row in rows {
                r.insert(registered(row)?);
            }
        }
        Ok((registry, issues))
    }

    /// Whether anything is decoded.
    pub fn any(&self) -> bool {
        self.key_format != "binary" || self.value_format != "binary"
    }

    /// The registry's storage topic named (`kafkastore.topic`), if another than `_schemas`.
    pub fn schemas_topic(&self) -> Option<&str> {
        self.schemas_topic.as_deref()
    }

    /// The columns decoding needs, beyond those asked for.
    pub fn needed_columns(&self) -> Vec<&'static str> {
        let mut out = vec!["topic", "partition", "offset"];
        if self.framing != "none" {
            out.push("headers");
        }
        if self.on_value_error != "null" {
            // A value that fails the read names its batch's position and base offset.
            out.extend(crate::values::columns::LOCATING_COLUMNS);
        }
        out
    }

    /// The options resolved once for tasks that must not read the registry's storage topic
    /// (a Spark driver's): the registry read and carried as schema rows, each column's reader
    /// schema made explicit (or its subjects of several record types named), for records of
    /// `topic` (which names the default subjects). With the Arrow types of the decoded `key`
    /// and `value` (and their error columns), as a schema of the columns that change.
    ///
    /// `files` (the read's, or a sample of them) are where the Protobuf messages of sides
    /// that name none are found ([`ValueArgs::messages_from_records`]).
    pub fn resolve(
        &self,
        storage: &Arc<dyn Storage>,
        files: &[SegmentFile],
        topic: Option<&str>,
    ) -> Result<(ValueArgs, SchemaRef)> {
        let (registry, _) = self.registry(storage)?;
        let registry = registry.map(Arc::new);
        let mut resolved = self.clone();
        resolved.messages_from_records(storage, files, registry.as_ref(), topic)?;
        let options = resolved.options()?;
        resolved.schemas_path = None;
        if let Some(r) = &registry {
            resolved.schemas = Some(r.rows().map(row).collect());
        }
        for (name, side, slot, several) in [
            (
                "key",
                &options.key,
                &mut resolved.key_schema,
                &mut resolved.key_subjects,
            ),
            (
                "value",
                &options.value,
                &mut resolved.value_schema,
                &mut resolved.value_subjects,
            ),
        ] {
            let found = match side.format {
                Format::Avro | Format::Auto => crate::values::columns::several_subjects(
                    name,
                    side,
                    registry.as_deref(),
                    topic,
                )?,
                _ => None,
            };
            if let Some(subjects) = found {
                // The tasks read each subject's latest version from the rows shipped.
                *several = Some(subjects);
            } else if side.format.needs_schema() && slot.is_none() {
                let text =
                    crate::values::columns::reader_schema(name, side, registry.as_deref(), topic)?;
                *slot = Some((
                    text.schema_type.name().to_string(),
                    text.schema,
                    text.references,
                ));
            }
        }
        let decoding = ValueDecoding::new(&options, registry, topic)?;
        let base = crate::arrow::schema::Projection::from_names(&["key", "value"])?.schema();
        let schema = match decoding {
            Some(d) => d.schema(&base),
            None => base,
        };
        Ok((resolved, schema))
    }

    /// Sets the Protobuf message of each side that names none (`key_message`,
    /// `value_message`) as Confluent's deserializers choose it: by the message indexes the
    /// records carry. The first [`MESSAGE_SAMPLE`] records of each partition of `files` are
    /// read; the messages they were written as (resolved in their writer schemas), by full
    /// name in the order first met, those the side's reader schema has, become the column's:
    /// one, or several (a struct with a field per message). Without such records the column
    /// holds the reader schema's first message, and a record written as another is a bad
    /// value that names both. Either way the message is then named, so that tasks given the
    /// options a driver resolved never look again (and find another type).
    pub fn messages_from_records(
        &mut self,
        storage: &Arc<dyn Storage>,
        files: &[SegmentFile],
        registry: Option<&Arc<Registry>>,
        topic: Option<&str>,
    ) -> Result<()> {
        let options = self.options()?;
        let mut wanted = Vec::new();
        for (name, side, named) in [
            ("key", &options.key, self.key_message.is_some()),
            ("value", &options.value, self.value_message.is_some()),
        ] {
            if named {
                // The message named is the column's: nothing to compile or sample.
                continue;
            }
            let has = crate::values::columns::reader_messages(
                name,
                side,
                registry.map(|r| r.as_ref()),
                topic,
            );
            // A reader schema that cannot be had fails the read itself, with its reason.
            if let Ok(Some(has)) = has {
                wanted.push((name, has));
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let Some(decoding) = ValueDecoding::new(&options, registry.cloned(), topic)? else {
            return Ok(());
        };
        let mut found = Vec::new();
        let mut partitions = std::collections::HashSet::new();
        let columns = crate::arrow::schema::Projection::from_names(&["key", "value", "headers"])?;
        for file in files {
            if !partitions.insert((file.origin.topic.as_deref(), file.origin.partition)) {
                continue;
            }
            let reader = crate::read::reader::ReaderBuilder::new()
                .with_storage(storage.clone())
                .with_projection(columns.clone())
                .with_batch_size(MESSAGE_SAMPLE)
                .build_files(vec![file.clone()]);
            // What does not read here fails (or is skipped by) the read itself.
            if let Ok(Some(Ok(batch))) = reader.map(|mut r| r.next()) {
                decoding.messages_written(&batch, &mut found);
            }
        }
        for (name, has) in wanted {
            let names: Vec<&str> = found
                .iter()
                .filter(|(side, n)| *side == name && has.contains(n))
                .map(|(_, n)| n.as_str())
                .collect();
            let names = if names.is_empty() {
                vec![has[0].as_str()]
            } else {
                names
            };
            let slot = match name {
                "key" => &mut self.key_message,
                _ => &mut self.value_message,
            };
            *slot = Some(names.join(","));
        }
        Ok(())
    }

    /// The options as JSON (what a driver ships to its tasks).
    pub fn to_json(&self) -> Value {
        let schema = |s: &Option<SchemaArg>| -> Value {
            s.as_ref().map_or(Value::Null, |(kind, text, refs)| {
                json!([
                    kind,
                    text,
                    refs.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>()
                ])
            })
        };
        let rows = self.schemas.as_ref().map(|rows| {
            rows.iter()
                .map(|(id, subject, version, kind, text, refs, deleted, md5)| {
                    let refs: Vec<Value> = refs.iter().map(|(n, s, v)| json!([n, s, v])).collect();
                    let md5 = md5.as_ref().map(|m| hex(m));
                    json!([id, subject, version, kind, text, refs, deleted, md5])
                })
                .collect::<Vec<_>>()
        });
        json!({
            "key_format": self.key_format,
            "value_format": self.value_format,
            "schemas_path": self.schemas_path,
            "schemas_topic": self.schemas_topic,
            "schemas": rows,
            "on_value_error": self.on_value_error,
            "key_subject": self.key_subject,
            "value_subject": self.value_subject,
            "key_subjects": self.key_subjects,
            "value_subjects": self.value_subjects,
            "key_version": self.key_version,
            "value_version": self.value_version,
            "key_schema": schema(&self.key_schema),
            "value_schema": schema(&self.value_schema),
            "framing": self.framing,
            "key_message": self.key_message,
            "value_message": self.value_message,
        })
    }

    /// The options [`ValueArgs::to_json`] wrote. Anything else is an error naming the field.
    pub fn from_json(v: &Value) -> Result<ValueArgs> {
        let Value::Object(o) = v else {
            return Err(bad("not an object"));
        };
        let mut out = ValueArgs::default();
        let text = |name: &str| -> Result<Option<String>> {
            match o.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(format!("{name} is not a string"))),
            }
        };
        let version = |name: &str| -> Result<Option<i32>> {
            match o.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| bad(format!("{name} is not a version"))),
            }
        };
        let list = |name: &str| -> Result<Option<Vec<String>>> {
            match o.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|s| s.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .map(Some)
                    .ok_or_else(|| bad(format!("{name} is not a list of strings"))),
                Some(_) => Err(bad(format!("{name} is not a list"))),
            }
        };
        if let Some(f) = text("key_format")? {
            out.key_format = f;
        }
        if let Some(f) = text("value_format")? {
            out.value_format = f;
        }
        if let Some(f) = text("on_value_error")? {
            out.on_value_error = f;
        }
        if let Some(f) = text("framing")? {
            out.framing = f;
        }
        out.schemas_path = text("schemas_path")?;
        out.schemas_topic = text("schemas_topic")?;
        out.key_subject = text("key_subject")?;
        out.value_subject = text("value_subject")?;
        out.key_subjects = list("key_subjects")?;
        out.value_subjects = list("value_subjects")?;
        out.key_version = version("key_version")?;
        out.value_version = version("value_version")?;
        out.key_message = text("key_message")?;
        out.value_message = text("value_message")?;
        out.key_schema = schema_arg(o.get("key_schema"), "key_schema")?;
        out.value_schema = schema_arg(o.get("value_schema"), "value_schema")?;
        out.schemas = match o.get("schemas") {
            None | Some(Value::Null) => None,
            Some(Value::Array(rows)) => Some(rows.iter().map(schema_row).collect::<Result<_>>()?),
            Some(_) => return Err(bad("schemas is not a list")),
        };
        Ok(out)
    }
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("typed-value options: {what}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn str_of<'a>(v: &'a Value, what: &str) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| bad(format!("{what} is not a string")))
}

fn int_of(v: &Value, what: &str) -> Result<i64> {
    v.as_i64()
        .ok_or_else(|| bad(format!("{what} is not an integer")))
}

fn items<'a>(v: &'a Value, len: Option<usize>, what: &str) -> Result<&'a [Value]> {
    match v {
        Value::Array(a) if len.is_none_or(|n| a.len() == n) => Ok(a),
        _ => Err(bad(format!("{what} is not a list of the right length"))),
    }
}

fn schema_arg(v: Option<&Value>, what: &str) -> Result<Option<SchemaArg>> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let f = items(v, Some(3), what)?;
    let refs = items(&f[2], None, what)?
        .iter()
        .map(|r| {
            let r = items(r, Some(2), what)?;
            Ok((
                str_of(&r[0], what)?.to_owned(),
                str_of(&r[1], what)?.to_owned(),
            ))
        })
        .collect::<Result<_>>()?;
    Ok(Some((
        str_of(&f[0], what)?.to_owned(),
        str_of(&f[1], what)?.to_owned(),
        refs,
    )))
}

fn schema_row(v: &Value) -> Result<SchemaRow> {
    let what = "a schema row";
    let f = items(v, Some(8), what)?;
    let refs = items(&f[5], None, what)?
        .iter()
        .map(|r| {
            let r = items(r, Some(3), what)?;
            let version = i32::try_from(int_of(&r[2], what)?).map_err(|_| bad(what))?;
            Ok((
                str_of(&r[0], what)?.to_owned(),
                str_of(&r[1], what)?.to_owned(),
                version,
            ))
        })
        .collect::<Result<_>>()?;
    let md5 = match &f[7] {
        Value::Null => None,
        v => Some(unhex(str_of(v, what)?).ok_or_else(|| bad("an md5 is not hex"))?),
    };
    Ok((
        int_of(&f[0], what)?,
        str_of(&f[1], what)?.to_owned(),
        i32::try_from(int_of(&f[2], what)?).map_err(|_| bad(what))?,
        str_of(&f[3], what)?.to_owned(),
        str_of(&f[4], what)?.to_owned(),
        refs,
        f[6].as_bool().ok_or_else(|| bad(what))?,
        md5,
    ))
}

/// A schema row as the registry takes it.
pub fn registered(row: &SchemaRow) -> Result<Registered> {
    let (id, subject, version, kind, schema, references, deleted, md5) = row;
    Ok(Registered {
        subject: subject.clone(),
        version: *version,
        id: *id,
        schema_type: SchemaType::from_registry(Some(kind)).map_err(Error::invalid_argument)?,
        schema: schema.clone(),
        references: references
            .iter()
            .map(|(name, subject, version)| Reference {
                name: name.clone(),
                subject: subject.clone(),
                version: *version,
            })
            .collect(),
        deleted: *deleted,
        md5: md5
            .as_ref()
            .and_then(|m| <[u8; 16]>::try_from(m.as_slice()).ok()),
        offset: -1,
    })
}

/// A registered schema as a row.
pub fn row(r: &Registered) -> SchemaRow {
    (
        r.id,
        r.subject.clone(),
        r.version,
        r.schema_type.name().to_string(),
        r.schema.clone(),
        r.references
            .iter()
            .map(|x| (x.name.clone(), x.subject.clone(), x.version))
            .collect(),
        r.deleted,
        r.md5.map(|m| m.to_vec()),
    )
}

/// Records read from the start of each partition to find the Protobuf messages its records
/// name ([`ValueArgs::messages_from_records`]).
pub const MESSAGE_SAMPLE: usize = 1000;

/// The one topic of `files` (None if they have several or none).
pub fn single_topic(files: &[SegmentFile]) -> Option<String> {
    let mut topics = files.iter().filter_map(|f| f.origin.topic.as_deref());
    let first = topics.next()?;
    topics.all(|t| t == first).then(|| first.to_string())
}

/// The decoding step of a read: applied to each batch the reader gives.
pub struct ValueStep {
    decoding: ValueDecoding,
    /// Columns read only for decoding, dropped after.
    drop: Vec<String>,
    /// (topic, partition, base offset, path) of the files read, to name the one of an error.
    files: Vec<(Option<String>, Option<i32>, i64, PathBuf)>,
    /// Keys and values left null so far.
    pub bad: usize,
}

impl ValueStep {
    /// The step for a read of `files` (topic `topic` if given) with `args`; `drop` are the
    /// columns added to the projection for it. Returns the step and what reading the
    /// registry passed over.
    pub fn new(
        args: &ValueArgs,
        storage: &Arc<dyn Storage>,
        files: &[SegmentFile],
        topic: Option<&str>,
        drop: Vec<String>,
    ) -> Result<Option<(ValueStep, Vec<Issue>)>> {
        ValueStep::pruned(args, storage, files, topic, drop, &[])
    }

    /// [`ValueStep::new`] decoding of the `key` or `value` column only the parts `wanted`
    /// asks for (column name, parts; see [`Wanted`]): the batches' columns may hold more,
    /// which the caller drops.
    pub fn pruned(
        args: &ValueArgs,
        storage: &Arc<dyn Storage>,
        files: &[SegmentFile],
        topic: Option<&str>,
        drop: Vec<String>,
        wanted: &[(String, Wanted)],
    ) -> Result<Option<(ValueStep, Vec<Issue>)>> {
        if !args.any() {
            return Ok(None);
        }
        let (registry, issues) = args.registry(storage)?;
        let registry = registry.map(Arc::new);
        let topic = topic.map(str::to_string).or_else(|| single_topic(files));
        let mut args = args.clone();
        args.messages_from_records(storage, files, registry.as_ref(), topic.as_deref())?;
        let mut options = args.options()?;
        for (column, parts) in wanted {
            match column.as_str() {
                "key" => options.key.wanted = Some(parts.clone()),
                "value" => options.value.wanted = Some(parts.clone()),
                _ => {}
            }
        }
        let Some(decoding) = ValueDecoding::new(&options, registry, topic.as_deref())? else {
            return Ok(None);
        };
        let files = files
            .iter()
            .map(|f| {
                (
                    f.origin.topic.clone(),
                    f.origin.partition,
                    f.base_offset.unwrap_or(0),
                    f.path.clone(),
                )
            })
            .collect();
        Ok(Some((
            ValueStep {
                decoding,
                drop,
                files,
                bad: 0,
            },
            issues,
        )))
    }

    /// The schema of the batches out, from that of the batches read.
    pub fn schema(&self, input: &arrow_schema::Schema) -> SchemaRef {
        let decoded = self.decoding.schema(input);
        let fields: Vec<_> = decoded
            .fields()
            .iter()
            .filter(|f| !self.drop.iter().any(|d| d == f.name()))
            .cloned()
            .collect();
        Arc::new(arrow_schema::Schema::new(fields))
    }

    /// `batch` decoded.
    pub fn apply(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let files = &self.files;
        let locate = |topic: Option<&str>, partition: Option<i32>, offset: i64| {
            files
                .iter()
                .filter(|(t, p, base, _)| {
                    t.as_deref() == topic && *p == partition && *base <= offset
                })
                .max_by_key(|(_, _, base, _)| *base)
                .map(|(_, _, _, path)| path.clone())
        };
        let (out, bad) = self.decoding.apply(batch, &locate)?;
        self.bad += bad;
        if self.drop.is_empty() {
            return Ok(out);
        }
        let keep: Vec<usize> = (0..out.num_columns())
            .filter(|&i| !self.drop.iter().any(|d| d == out.schema().field(i).name()))
            .collect();
        out.project(&keep)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_cross_as_json_and_back() {
        let args = ValueArgs {
            key_format: "string".into(),
            value_format: "avro".into(),
            schemas: Some(vec![(
                3,
                "orders-value".into(),
                2,
                "AVRO".into(),
                "\"long\"".into(),
                vec![("a.proto".into(), "a".into(), 1)],
                true,
                Some(vec![0xab; 16]),
            )]),
            value_subjects: Some(vec!["a".into(), "b".into()]),
            key_version: Some(4),
            value_schema: Some((
                "AVRO".into(),
                "\"int\"".into(),
                vec![("n".into(), "t".into())],
            )),
            value_message: Some("shop.Order".into()),
            ..ValueArgs::default()
        };
        let text = args.to_json().to_string();
        let back = ValueArgs::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back, args);
    }

    #[test]
    fn malformed_json_is_an_error_not_a_panic() {
        for text in [
            "[]",
            r#"{"schemas": [[1]]}"#,
            r#"{"schemas": [[1, "s", 1, "AVRO", "x", [], false, "zz"]]}"#,
            r#"{"key_version": 99999999999}"#,
            r#"{"value_schema": ["AVRO"]}"#,
            r#"{"key_subjects": [1]}"#,
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            let err = ValueArgs::from_json(&v).unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidArgument, "{text}");
        }
    }
}
