//! Bindings of typed keys and values: the `values` option of a read (formats, schemas,
//! `on_value_error`) turned into the core's decoding step, the registry's table
//! (`kafkalog.schemas`), and the options resolved once on a driver (Spark) so that tasks
//! never read the registry's storage topic.

use super::errors::{detach, warn, IntoPyResult};
use super::options::options_from_dict;
use super::storage::storage;
use crate::error::Error;
use crate::log::discover::SegmentFile;
use crate::log::origin::Origin;
use crate::read::schemas::registry as read_registry;
pub use crate::read::values::ValueArgs;
use crate::values::decoder::SchemaType;
use crate::values::formats::Format;
use crate::values::registry::Reference;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};
use std::collections::BTreeMap;
use std::path::PathBuf;

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

/// A segment as the Spark driver names it: (path, topic, partition).
type FileArg = (PathBuf, Option<String>, Option<i32>);

/// The `values` option resolved once (on a Spark driver): the registry read and shipped as
/// schema rows, the reader schemas made explicit; with the Arrow types of the decoded `key`
/// and `value` (and their error columns) as a schema of the columns that change.
/// `files`: (path, topic, partition) of the segments read (each partition's first is enough),
/// where the Protobuf messages of sides that name none are found.
#[pyfunction]
#[pyo3(signature = (values, topic=None, storage_options=None, filesystem=None, files=None))]
pub fn resolve_values<'py>(
    py: Python<'py>,
    values: ValueArgs,
    topic: Option<String>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
    files: Option<Vec<FileArg>>,
) -> PyResult<(Bound<'py, PyDict>, PySchema)> {
    let storage = storage(storage_options, filesystem);
    let files: Vec<SegmentFile> = files
        .unwrap_or_default()
        .into_iter()
        .map(|(path, topic, partition)| SegmentFile::new(path, Origin { topic, partition }))
        .collect();
    let (resolved, schema) = detach(py, || values.resolve(&storage, &files, topic.as_deref()))?;
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
        let uses_registry = [&options.key, &options.value]
            .iter()
            .any(|o| o.format == Format::Avro);
        let registry = if uses_registry {
            values.registry(&storage)?.0
        } else {
            None
        };
        crate::write::values::ValueEncoder::new(options, registry).encode(
            side,
            &array,
            topic.as_deref(),
        )
    })?;
    Ok(pyo3_arrow::PyArray::from_array_ref(out))
}

/// Each value of `array` (a typed key or value column) as JSON text, `None` where null
/// (`crate::values::json::texts`).
#[pyfunction]
pub fn json_texts(py: Python<'_>, array: pyo3_arrow::PyArray) -> PyResult<Vec<Option<String>>> {
    let (array, _field) = array.into_inner();
    detach(py, || crate::values::json::texts::json_texts(&array))
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
            new.push(crate::values::registry::records::NewSchema {
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
        let (registry, records) = crate::values::registry::records::register(new)?;
        Ok((records, registry.table()?))
    })?;
    Ok((records, PyRecordBatch::new(table)))
}

/// The registry whose storage topic is under `path`, as the requests that import it into a
/// Schema Registry (JSON text each; `crate::values::registry::records::import_requests`).
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
        crate::values::registry::records::import_requests(&registry),
        registry.issues().to_vec(),
    ))
}
