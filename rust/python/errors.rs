//! Rust errors and issues as Python exceptions and warnings, in one place. The classes live in
//! `kafkalog/errors.py`, where their docstrings are; this maps [`ErrorKind`] and [`IssueKind`]
//! onto them and fills their attributes (path, position, offset).

use crate::error::{Error, ErrorKind};
use crate::log::issues::{Issue, IssueKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// A class of `kafkalog.errors`, imported on first use and kept: a cell and the class's name.
type Class = (&'static PyOnceLock<Py<PyType>>, &'static str);

macro_rules! class {
    ($name:literal) => {{
        static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        (&CELL, $name)
    }};
}

fn error_class(err: &Error) -> Class {
    match err.io_kind {
        Some(std::io::ErrorKind::NotFound) => return class!("KafkaLogFileNotFoundError"),
        Some(std::io::ErrorKind::PermissionDenied) => return class!("KafkaLogPermissionError"),
        _ => {}
    }
    match err.kind {
        ErrorKind::Corrupt => class!("CorruptRecordError"),
        ErrorKind::CrcMismatch => class!("CrcMismatchError"),
        ErrorKind::Decompression => class!("DecompressionError"),
        ErrorKind::LimitExceeded => class!("LimitExceededError"),
        ErrorKind::InvalidArgument => class!("InvalidArgumentError"),
        ErrorKind::Io => class!("KafkaLogIOError"),
        ErrorKind::Conflict => class!("ConcurrentWriteError"),
        ErrorKind::Internal => class!("KafkaLogError"),
        ErrorKind::TieredStorage => class!("TieredStorageError"),
        ErrorKind::Decryption => class!("DecryptionError"),
        ErrorKind::EncryptionKey => class!("EncryptionKeyError"),
        ErrorKind::Value => class!("ValueDecodeError"),
        ErrorKind::NotASegment => class!("NotASegmentError"),
    }
}

fn issue_class(kind: IssueKind) -> Class {
    match kind {
        IssueKind::TornTail | IssueKind::ZeroTail => class!("TruncatedSegmentWarning"),
        IssueKind::SkippedBatch => class!("SkippedBatchWarning"),
        IssueKind::Stopped => class!("StoppedAtCorruptionWarning"),
        IssueKind::IndexIgnored => class!("IndexNotUsedWarning"),
    }
}

fn get<'py>(py: Python<'py>, (cell, name): Class) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, "kafkalog.errors", name)
}

/// The Python exception for `err`, with `path`, `position`, `offset` and `kind` attributes.
pub fn to_py(py: Python<'_>, err: Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = get(py, error_class(&err))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item(
            "path",
            err.path.as_ref().map(|p| p.to_string_lossy().into_owned()),
        )?;
        kwargs.set_item("position", err.position)?;
        kwargs.set_item("offset", err.offset)?;
        kwargs.set_item("kind", err.kind.name())?;
        let instance = class.call((err.to_string(),), Some(&kwargs))?;
        if let Some(errno) = err.errno {
            // KafkaLogIOError is an OSError: keep the errno a program tests (ENOSPC, EROFS).
            instance.setattr("errno", errno)?;
        }
        Ok(PyErr::from_value(instance))
    };
    // If the Python side cannot even be imported, say so rather than lose the error.
    build().unwrap_or_else(|import_err| PyValueError::new_err(format!("{err} ({import_err})")))
}

/// So that `?` turns a kafkalog error into its Python exception.
impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        Python::attach(|py| to_py(py, err))
    }
}

/// Converts a result, acquiring the GIL only on the error path.
pub trait IntoPyResult<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(PyErr::from)
    }
}

/// Emits an issue as a Python warning of its class.
pub fn warn(py: Python<'_>, issue: &Issue) -> PyResult<()> {
    let class = get(py, issue_class(issue.kind))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("kind", issue.kind.name())?;
    kwargs.set_item(
        "path",
        issue
            .path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
    )?;
    kwargs.set_item("position", issue.position)?;
    kwargs.set_item("offset", issue.offset)?;
    kwargs.set_item("bytes", issue.bytes)?;
    let warning = class.call((issue.to_string(),), Some(&kwargs))?;
    // Pointing at the user's line, the first frame outside kafkalog (see `errors.warn`).
    py.import("kafkalog.errors")?
        .call_method1("warn", (warning,))?;
    Ok(())
}

/// The issues as dicts, for programs that want them without the warnings machinery.
pub fn issue_dict<'py>(py: Python<'py>, issue: &Issue) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", issue.kind.name())?;
    d.set_item("message", issue.to_string())?;
    d.set_item(
        "path",
        issue
            .path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
    )?;
    d.set_item("position", issue.position)?;
    d.set_item("offset", issue.offset)?;
    d.set_item("bytes", issue.bytes)?;
    Ok(d)
}

/// Runs `f` without the GIL, turning a panic (a kafkalog bug) into an error instead of letting
/// it reach Python as a `PanicException`, which no `except Exception` catches.
pub fn detach<T: Send>(py: Python<'_>, f: impl FnOnce() -> crate::Result<T> + Send) -> PyResult<T> {
    py.detach(|| crate::error::catch_panic(f)).py_err()
}
