//! Bindings of Spark's options and column shapes (`rust/spark/`) for the Python data source:
//! the options checked once (the answer as JSON, which the JVM source gets too), and kafkalog's
//! columns as Spark types (Spark's JSON of a `StructType`) and as the Arrow types of their
//! values.

use super::errors::IntoPyResult;
use crate::spark::common::Raw;
use crate::spark::options::{columns, ReadOptions};
use crate::spark::selection::{Bounds, Subscription, TopicPartition};
use crate::spark::shapes;
use pyo3::prelude::*;
use pyo3_arrow::PySchema;
use std::collections::BTreeMap;

/// The read options of the data source, checked (`streaming`: a stream's), as JSON.
#[pyfunction]
#[pyo3(signature = (options, streaming=false))]
pub fn spark_read_options(options: BTreeMap<String, String>, streaming: bool) -> PyResult<String> {
    let parsed = ReadOptions::parse(&Raw::new(options), streaming).py_err()?;
    Ok(parsed.to_json().to_string())
}

/// The typed keys and values the options ask for, with the paths and storage options, as
/// JSON `{"values", "paths", "storage"}` (None: keys and values as stored).
#[pyfunction]
pub fn spark_typed_options(options: BTreeMap<String, String>) -> PyResult<Option<String>> {
    let typed = crate::spark::options::typed(&Raw::new(options)).py_err()?;
    Ok(typed.map(|v| v.to_string()))
}

/// The columns the options read (asked for before batch or streaming is known).
#[pyfunction]
pub fn spark_columns(options: BTreeMap<String, String>) -> PyResult<Vec<String>> {
    columns(&Raw::new(options)).py_err()
}

/// The Spark schema of kafkalog's `columns` (with `key`/`value` of the types `decoded` gives,
/// and its error columns), as Spark's JSON of a `StructType`.
#[pyfunction]
#[pyo3(signature = (columns, decoded=None))]
pub fn spark_schema(columns: Vec<String>, decoded: Option<PySchema>) -> PyResult<String> {
    let decoded = decoded.map(PySchema::into_inner);
    let schema = shapes::spark_schema(&columns, decoded.as_deref()).py_err()?;
    Ok(schema.to_string())
}

/// The Arrow schema of the same columns in the types that hold Spark's values.
#[pyfunction]
#[pyo3(signature = (columns, decoded=None))]
pub fn spark_arrow_schema(columns: Vec<String>, decoded: Option<PySchema>) -> PyResult<PySchema> {
    let decoded = decoded.map(PySchema::into_inner);
    let schema = shapes::arrow_schema(&columns, decoded.as_deref()).py_err()?;
    Ok(PySchema::new(std::sync::Arc::new(schema)))
}

/// `true`/`false` (`1`/`0`, `yes`/`no`, any case) as the option `name`.
#[pyfunction]
pub fn spark_bool(value: &str, name: &str) -> PyResult<bool> {
    crate::spark::common::parse_bool(value, name).py_err()
}

/// Spark's `subscribe`, `subscribePattern`, `assign` and kafkalog's `partitions`, as their
/// option texts, checked; as JSON.
#[pyfunction]
#[pyo3(signature = (topics=None, pattern=None, assign=None, partitions=None))]
pub fn spark_subscription(
    topics: Option<&str>,
    pattern: Option<&str>,
    assign: Option<&str>,
    partitions: Option<&str>,
) -> PyResult<String> {
    let s = Subscription::make(topics, pattern, assign, partitions).py_err()?;
    Ok(s.to_json().to_string())
}

/// Which of `parts` (topic, partition) the subscription of those texts takes.
#[pyfunction]
#[pyo3(signature = (parts, topics=None, pattern=None, assign=None, partitions=None))]
pub fn spark_subscribed(
    parts: Vec<TopicPartition>,
    topics: Option<&str>,
    pattern: Option<&str>,
    assign: Option<&str>,
    partitions: Option<&str>,
) -> PyResult<Vec<bool>> {
    let s = Subscription::make(topics, pattern, assign, partitions).py_err()?;
    Ok(parts
        .iter()
        .map(|(t, p)| s.takes(t.as_deref(), *p))
        .collect())
}

/// The topics of `found` (each topic a typed read took, once) that the read leaves out, for
/// the subscription of those texts (`Subscription::typed_left_out`, as the JVM source's
/// discovery applies it).
#[pyfunction]
#[pyo3(signature = (found, topics=None, pattern=None, assign=None, partitions=None, schemas_topic=None))]
pub fn spark_typed_left_out(
    found: Vec<String>,
    topics: Option<&str>,
    pattern: Option<&str>,
    assign: Option<&str>,
    partitions: Option<&str>,
    schemas_topic: Option<&str>,
) -> PyResult<Vec<String>> {
    let s = Subscription::make(topics, pattern, assign, partitions).py_err()?;
    let found: Vec<&str> = found.iter().map(String::as_str).collect();
    Ok(s.typed_left_out(&found, schemas_topic))
}

/// Bounds of texts as Spark's options hold them (precedence already applied), checked; as
/// JSON.
#[pyfunction]
#[pyo3(signature = (start_offset=None, end_offset=None, start_timestamp=None, end_timestamp=None, strategy="error"))]
pub fn spark_bounds(
    start_offset: Option<&str>,
    end_offset: Option<&str>,
    start_timestamp: Option<&str>,
    end_timestamp: Option<&str>,
    strategy: &str,
) -> PyResult<String> {
    let b = Bounds::from_texts(
        start_offset,
        end_offset,
        start_timestamp,
        end_timestamp,
        strategy,
    )
    .py_err()?;
    Ok(b.to_json().to_string())
}

/// Per-partition bounds (JSON of `spark_bounds`) name partitions that are there (`found`)
/// and, with `require_all` (Spark's Kafka source), every partition read; an error otherwise.
#[pyfunction]
pub fn spark_check_partitions(
    bounds: &str,
    found: Vec<TopicPartition>,
    require_all: bool,
) -> PyResult<()> {
    let v: serde_json::Value = serde_json::from_str(bounds)
        .map_err(|e| crate::Error::invalid_argument(format!("bounds: {e}")))
        .py_err()?;
    let b = Bounds::from_json(&v).py_err()?;
    b.check_partitions_named(&found.into_iter().collect(), require_all)
        .py_err()
}

/// A batch's columns in the types that hold Spark's values (`rust/spark/shapes.rs`: times as
/// integers, unsigned integers as signed ones, timestamps in microseconds, ...).
#[pyfunction]
pub fn spark_batch(batch: pyo3_arrow::PyRecordBatch) -> PyResult<pyo3_arrow::PyRecordBatch> {
    let batch = batch.into_inner();
    let columns = batch
        .columns()
        .iter()
        .map(shapes::to_spark)
        .collect::<crate::Result<Vec<_>>>()
        .py_err()?;
    let fields: Vec<_> = batch
        .schema()
        .fields()
        .iter()
        .zip(&columns)
        .map(|(f, c)| arrow_schema::Field::new(f.name(), c.data_type().clone(), true))
        .collect();
    let out = arrow_array::RecordBatch::try_new(
        std::sync::Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )
    .map_err(|e| crate::Error::new(crate::error::ErrorKind::Internal, e.to_string()))
    .py_err()?;
    Ok(pyo3_arrow::PyRecordBatch::new(out))
}
