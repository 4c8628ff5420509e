//! Bindings of typed keys and values: the `values` option of a read (formats, schemas,
//! `on_value_error`) turned into the core's decoding step, the registry's table
//! (`kafkalog.schemas`), and the options resolved once on a driver (Spark) so that tasks
//! never read the registry's storage topic.

use super::errors::{detach, warn, IntoPyResult};
use super::options::options_from_dict;
use super::storage::storage;
use crate::error::{Error, Result};
use crate::format::confluent::IdWidth;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::read::schemas::registry as read_registry;
use crate::storage::Storage;
use crate::values::columns::{OnValueError, SideOptions, ValueDecoding, ValueOptions};
use crate::values::decoder::{SchemaText, SchemaType};
use crate::values::formats::Format;
use crate::values::registry::{Reference, Registered, Registry};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A schema as Python gives it: (type, text, references as (name, text)).
type SchemaArg = (String, String, Vec<(String, String)>);

/// A registered schema as it crosses to Python and back: (id, subject, version, type, schema,
/// references as (name, subject, version), deleted, md5).
type SchemaRow = (
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
#[derive(Clone)]
pub struct ValueArgs {
    key_format: String,
    value_format: String,
    /// The registry's storage topic: a path or URI read like the data.
    schemas_path: Option<String>,
    /// Its topic name (default `_schemas`).
    schemas_topic: Option<String>,
    /// Schemas given directly (or resolved on a driver).
    schemas: Option<Vec<SchemaRow>>,
    on_value_error: String,
    key_subject: Option<String>,
    value_subject: Option<String>,
    /// Subjects of several record types read into one column.
    key_subjects: Option<Vec<String>>,
    value_subjects: Option<Vec<String>>,
    key_version: Option<i32>,
    value_version: Option<i32>,
    key_schema: Option<SchemaArg>,
    value_schema: Option<SchemaArg>,
    /// `confluent` (magic 0, 4-byte id), `apicurio` (8-byte id), `none` (explicit schema).
    framing: String,
    key_message: Option<String>,
    value_message: Option<String>,
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

options_from_dict!(ValueArgs {
    key_format,
    value_format,
    schemas_path,
    schemas_topic,
    schemas,
    on_value_error,
    key_subject,
    value_subject,
    key_subjects,
    value_subjects,
    key_version,
    value_version,
    key_schema,
    value_schema,
    framing,
    key_message,
    value_message,
});

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
    fn options(&self) -> Result<ValueOptions> {
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

    /// The registry the options name, if any.
    fn registry(&self, storage: &Arc<dyn Storage>) -> Result<(Option<Registry>, Vec<Issue>)> {
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
}

fn registered(row: &SchemaRow) -> Result<Registered> {
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

fn row(r: &Registered) -> SchemaRow {
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

/// The one topic of `files` (None if they have several or none).
fn single_topic(files: &[SegmentFile]) -> Option<String> {
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

/// The columns decoding needs, beyond those asked for.
pub fn needed_columns(args: &ValueArgs) -> Vec<&'static str> {
    let mut out = vec!["topic", "partition", "offset"];
    if args.framing != "none" {
        out.push("headers");
    }
    if args.on_value_error != "null" {
        // A value that fails the read names its batch's position and base offset.
        out.extend(crate::values::columns::LOCATING_COLUMNS);
    }
    out
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
        if !args.any() {
            return Ok(None);
        }
        let options = args.options()?;
        let (registry, issues) = args.registry(storage)?;
        let topic = topic.map(str::to_string).or_else(|| single_topic(files));
        let Some(decoding) =
            ValueDecoding::new(&options, registry.map(Arc::new), topic.as_deref())?
        else {
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
            .map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))
    }
}

/// Schema Registry's schemas under `path` (its storage topic, `_schemas` unless `topic`) as a
/// record batch, and what the fold and the read passed over.
#[pyfunction]
#[pyo3(signature = (path, topic=None, storage_options=None, filesystem=None))]
pub fn schemas_table<'py>(
    py: Python<'py>,
    path: PathBuf,
    topic: Option<String>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<(PyRecordBatch, Vec<(i64, String)>)> {
    let storage = storage(storage_options, filesystem);
    let (registry, issues) = detach(py, || read_registry(&storage, &path, topic.as_deref()))?;
    for issue in &issues {
        warn(py, issue)?;
    }
    let batch = registry.table().py_err()?;
    Ok((PyRecordBatch::new(batch), registry.issues().to_vec()))
}

/// The `values` option resolved once (on a Spark driver): the registry read and shipped as
/// schema rows, the reader schemas made explicit; with the Arrow types of the decoded `key`
/// and `value` (and their error columns) as a schema of the columns that change.
#[pyfunction]
#[pyo3(signature = (values, topic=None, storage_options=None, filesystem=None))]
pub fn resolve_values<'py>(
    py: Python<'py>,
    values: ValueArgs,
    topic: Option<String>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, PySchema)> {
    let storage = storage(storage_options, filesystem);
    let (resolved, schema) = detach(py, || {
        let options = values.options()?;
        let (registry, _) = values.registry(&storage)?;
        let mut resolved = values.clone();
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
                    registry.as_ref(),
                    topic.as_deref(),
                )?,
                _ => None,
            };
            if let Some(subjects) = found {
                // The tasks read each subject's latest version from the rows shipped.
                *several = Some(subjects);
            } else if side.format.needs_schema() && slot.is_none() {
                let text = crate::values::columns::reader_schema(
                    name,
                    side,
                    registry.as_ref(),
                    topic.as_deref(),
                )?;
                *slot = Some((
                    text.schema_type.name().to_string(),
                    text.schema,
                    text.references,
                ));
            }
        }
        let decoding = ValueDecoding::new(&options, registry.map(Arc::new), topic.as_deref())?;
        let base = crate::arrow::schema::Projection::from_names(&["key", "value"])?.schema();
        let schema = match decoding {
            Some(d) => d.schema(&base),
            None => base,
        };
        Ok((resolved, schema))
    })?;
    Ok((args_dict(py, &resolved)?, PySchema::new(schema)))
}

fn args_dict<'py>(py: Python<'py>, a: &ValueArgs) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key_format", &a.key_format)?;
    d.set_item("value_format", &a.value_format)?;
    d.set_item("schemas_path", &a.schemas_path)?;
    d.set_item("schemas_topic", &a.schemas_topic)?;
    d.set_item("schemas", &a.schemas)?;
    d.set_item("on_value_error", &a.on_value_error)?;
    d.set_item("key_subject", &a.key_subject)?;
    d.set_item("value_subject", &a.value_subject)?;
    d.set_item("key_subjects", &a.key_subjects)?;
    d.set_item("value_subjects", &a.value_subjects)?;
    d.set_item("key_version", a.key_version)?;
    d.set_item("value_version", a.value_version)?;
    d.set_item("key_schema", &a.key_schema)?;
    d.set_item("value_schema", &a.value_schema)?;
    d.set_item("framing", &a.framing)?;
    d.set_item("key_message", &a.key_message)?;
    d.set_item("value_message", &a.value_message)?;
    Ok(d)
}

/// Warns (`UndecodedValueWarning`, at the caller's line) that `count` keys or values were left
/// null.
pub fn warn_values(py: Python<'_>, count: usize) -> PyResult<()> {
    let errors = py.import("kafkalog.errors")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("count", count)?;
    let warning = errors.getattr("UndecodedValueWarning")?.call(
        (format!(
            "{count} keys or values did not decode and were left null (the key_error and \
             value_error columns say why; key_raw and value_raw keep their bytes)"
        ),),
        Some(&kwargs),
    )?;
    errors.getattr("warn")?.call1((warning,))?;
    Ok(())
}

/// The `side` (`"key"` or `"value"`) column `array` encoded as the `values` option says
/// (`avro`: with the subject's registered schema and Confluent's framing; `string`: UTF-8),
/// for a write of topic `topic` (default: the topic of the partition directory `path`).
#[pyfunction]
#[pyo3(signature = (array, values, side, topic=None, path=None, storage_options=None))]
#[allow(clippy::too_many_arguments)]
pub fn encode_values(
    py: Python<'_>,
    array: pyo3_arrow::PyArray,
    values: ValueArgs,
    side: &str,
    topic: Option<String>,
    path: Option<PathBuf>,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<pyo3_arrow::PyArray> {
    let storage = storage(storage_options, None);
    let topic = topic.or_else(|| {
        path.as_deref()
            .and_then(crate::format::segment::topic_partition_from_dir)
            .map(|(t, _)| t)
    });
    let (array, _field) = array.into_inner();
    let out = detach(py, || {
        let options = values.options()?;
        let (name, side_options) = match side {
            "key" => ("key", &options.key),
            "value" => ("value", &options.value),
            other => {
                return Err(Error::invalid_argument(format!(
                    "side must be key or value, not {other:?}"
                )))
            }
        };
        match side_options.format {
            Format::Binary => Ok(array),
            Format::String => arrow_cast::cast(&array, &arrow_schema::DataType::Binary)
                .map_err(|e| Error::invalid_argument(format!("{name}: {e}"))),
            Format::Avro if !side_options.subjects.is_empty() => {
                Err(Error::invalid_argument(format!(
                    "writing {name}s of several record types ({name}_subjects) is not built: \
                     write each type with its own {name}_subject"
                )))
            }
            Format::Avro => {
                let (registry, _) = values.registry(&storage)?;
                let registry = registry.ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "writing {name}s as Avro needs the registry (schemas=<path>): their \
                         schema's id goes into the framing"
                    ))
                })?;
                let registered = crate::values::columns::registered(
                    name,
                    side_options,
                    &registry,
                    topic.as_deref(),
                )?;
                let id = u32::try_from(registered.id).map_err(|_| {
                    Error::invalid_argument(format!(
                        "schema id {} does not fit 4 bytes",
                        registered.id
                    ))
                })?;
                // Timestamps as a read names them ("UTC") back to arrow-avro's "+00:00".
                let array = crate::values::columns::avro_named(array)?;
                crate::values::avro_encode::encode(&array, &registry.text(registered)?, id)
            }
            other => Err(Error::invalid_argument(format!(
                "kafkalog writes keys and values as binary, string or avro, not {other:?}"
            ))),
        }
    })?;
    Ok(pyo3_arrow::PyArray::from_array_ref(out))
}

/// Each value of `array` (a typed key or value column) as JSON text, `None` where null
/// (`crate::values::json_text`).
#[pyfunction]
pub fn json_texts(py: Python<'_>, array: pyo3_arrow::PyArray) -> PyResult<Vec<Option<String>>> {
    let (array, _field) = array.into_inner();
    detach(py, || crate::values::json_text::json_texts(&array))
}

/// A schema to register, as Python gives it: (subject, version, id, type, schema, references as
/// (name, subject, version), deleted).
type NewSchemaRow = (
    String,
    Option<i32>,
    Option<i64>,
    String,
    String,
    Vec<(String, String, i32)>,
    bool,
);

/// `schemas` registered in order as Schema Registry registers them: the records of its storage
/// topic (key, value) and the registry they make, as `schemas_table` gives it.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn registry_records(
    py: Python<'_>,
    schemas: Vec<NewSchemaRow>,
) -> PyResult<(Vec<(Vec<u8>, Option<Vec<u8>>)>, PyRecordBatch)> {
    let (records, table) = detach(py, || {
        let mut new = Vec::with_capacity(schemas.len());
        for (subject, version, id, kind, schema, references, deleted) in schemas {
            let schema_type = SchemaType::from_registry(Some(&kind.to_ascii_uppercase()))
                .map_err(|why| Error::invalid_argument(format!("subject {subject:?}: {why}")))?;
            new.push(crate::values::registry_records::NewSchema {
                subject,
                version,
                id,
                schema_type,
                schema,
                references: references
                    .into_iter()
                    .map(|(name, subject, version)| Reference {
                        name,
                        subject,
                        version,
                    })
                    .collect(),
                deleted,
            });
        }
        let (registry, records) = crate::values::registry_records::register(new)?;
        Ok((records, registry.table()?))
    })?;
    Ok((records, PyRecordBatch::new(table)))
}

/// The registry whose storage topic is under `path`, as the requests that import it into a
/// Schema Registry (JSON text each; `crate::values::registry_records::import_requests`).
#[pyfunction]
#[pyo3(signature = (path, topic=None, storage_options=None, filesystem=None))]
#[allow(clippy::type_complexity)]
pub fn registry_import_requests(
    py: Python<'_>,
    path: PathBuf,
    topic: Option<String>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, Vec<(i64, String)>)> {
    let storage = storage(storage_options, filesystem);
    let (registry, issues) = detach(py, || read_registry(&storage, &path, topic.as_deref()))?;
    for issue in &issues {
        warn(py, issue)?;
    }
    Ok((
        crate::values::registry_records::import_requests(&registry),
        registry.issues().to_vec(),
    ))
}
