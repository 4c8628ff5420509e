//! The Python data source's writes (`python/kafkalog/spark/writing.py`) through the same core as
//! the JVM source's (`rust/spark/writing.rs`): a job from Spark's options on the driver, a task
//! writer fed the Arrow batches Spark's Python worker gets, and the commits. Jobs and commit
//! messages cross as JSON text, as they do for the JVM source.

use super::errors::{detach, IntoPyResult};
use crate::error::Error;
use crate::spark::writing::{messages_from_json, Job, TaskWriter};
use pyo3::prelude::*;
use pyo3_arrow::PyRecordBatch;
use std::collections::BTreeMap;

fn job_of(text: &str) -> crate::Result<Job> {
    let v = serde_json::from_str(text)
        .map_err(|e| Error::invalid_argument(format!("a kafkalog write job: {e}")))?;
    Job::from_json(&v)
}

fn messages_of(
    messages: &[Option<String>],
) -> crate::Result<Vec<crate::spark::writing::TaskMessage>> {
    let values = messages
        .iter()
        .map(|m| match m {
            None => Ok(serde_json::Value::Null),
            Some(text) => serde_json::from_str(text).map_err(|e| {
                Error::invalid_argument(format!("not a kafkalog writer's commit message: {e}"))
            }),
        })
        .collect::<crate::Result<Vec<_>>>()?;
    messages_from_json(&serde_json::Value::Array(values))
}

/// The job of Spark's write options (names in any case): checked, a batch job's staging
/// directory made; its JSON for the tasks and the commit.
#[pyfunction]
pub fn spark_write_job(
    py: Python<'_>,
    options: BTreeMap<String, String>,
    streaming: bool,
) -> PyResult<String> {
    detach(py, || {
        Ok(Job::create(options, streaming)?.to_json().to_string())
    })
}

/// A write task of a job: `write` each Arrow batch, then `finish` (its commit message, JSON)
/// or `abort`.
#[pyclass(module = "kafkalog._native")]
pub struct SparkTaskWriter {
    inner: Option<TaskWriter>,
}

#[pymethods]
impl SparkTaskWriter {
    #[new]
    fn new(py: Python<'_>, job: &str) -> PyResult<Self> {
        let job = job_of(job).py_err()?;
        let writer = detach(py, || job.task())?;
        Ok(SparkTaskWriter {
            inner: Some(writer),
        })
    }

    fn write(&mut self, py: Python<'_>, batch: PyRecordBatch) -> PyResult<()> {
        let batch = batch.into_inner();
        let writer = self.inner.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("the task writer is finished")
        })?;
        detach(py, || writer.write(&batch))
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<String> {
        let writer = self.inner.take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("the task writer is finished")
        })?;
        detach(py, || Ok(writer.finish()?.to_json().to_string()))
    }

    fn abort(&mut self) {
        if let Some(writer) = self.inner.take() {
            writer.abort();
        }
    }
}

/// Commits a batch job with its tasks' messages (None for a task that sent none).
#[pyfunction]
pub fn spark_write_commit(
    py: Python<'_>,
    job: &str,
    messages: Vec<Option<String>>,
    overwrite: bool,
) -> PyResult<()> {
    let job = job_of(job).py_err()?;
    detach(py, || job.commit(overwrite, &messages_of(&messages)?))
}

/// Aborts a batch job.
#[pyfunction]
pub fn spark_write_abort(py: Python<'_>, job: &str) -> PyResult<()> {
    let job = job_of(job).py_err()?;
    detach(py, || job.abort())
}

/// Commits a streaming micro-batch `epoch`.
#[pyfunction]
pub fn spark_stream_commit(
    py: Python<'_>,
    job: &str,
    messages: Vec<Option<String>>,
    epoch: i64,
) -> PyResult<()> {
    let job = job_of(job).py_err()?;
    detach(py, || job.commit_stream(epoch, &messages_of(&messages)?))
}

/// Aborts a streaming micro-batch.
#[pyfunction]
pub fn spark_stream_abort(
    py: Python<'_>,
    job: &str,
    messages: Vec<Option<String>>,
) -> PyResult<()> {
    let job = job_of(job).py_err()?;
    detach(py, || {
        job.abort_stream(&messages_of(&messages)?);
        Ok(())
    })
}
