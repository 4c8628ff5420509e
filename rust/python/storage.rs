//! Storage as Python passes it: `storage_options` for the object stores kafkalog reads
//! natively, or `filesystem`, a `pyarrow.fs.FileSystem` (the Python layer wraps an fsspec
//! filesystem in one) for stores `object_store` lacks (hdfs://, ...) and for users who
//! already hold one. A `filesystem` is called with the GIL taken for each request.

use crate::error::{Error, Result};
use crate::storage::tiered::Tiered;
use crate::storage::{Entry, Object, Router, Stat, Storage};
use pyo3::exceptions::{PyFileNotFoundError, PyPermissionError};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a native call reads from.
pub fn storage(
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> Arc<dyn Storage> {
    // Tiered-storage options (encryption keys) are the core's, not the store's.
    // A writer's lease (`kafkalog.lease_seconds`) is no concern of a read: the same options
    // serve both.
    let mut options: Vec<(String, String)> = storage_options
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k != crate::write::lease::LEASE_OPTION)
        .collect();
    let tiered = Tiered::from_options(&mut options).and_then(|keys| {
        Tiered::settings_from_options(&mut options).map(|settings| (keys, settings))
    });
    let inner: Arc<dyn Storage> = match filesystem {
        Some(fs) => Arc::new(PyStorage { fs }),
        None => Arc::new(Router::new(options.into_iter().collect())),
    };
    match tiered {
        Ok((keys, settings)) => Arc::new(Tiered::new(inner, keys).with_settings(settings)),
        Err(err) => Arc::new(Tiered::failing(inner, err)),
    }
}

/// A `pyarrow.fs.FileSystem`.
pub struct PyStorage {
    fs: Py<PyAny>,
}

impl std::fmt::Debug for PyStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PyStorage")
    }
}

/// The filesystem's own path for a location: a URI's scheme is dropped (`s3://b/k` is `b/k`),
/// as pyarrow's filesystems take them.
fn fs_path(path: &Path) -> String {
    let s = path.to_string_lossy();
    match crate::storage::scheme(path) {
        Some(scheme) => s[scheme.len() + 3..].to_string(),
        None => s.into_owned(),
    }
}

fn py_error(err: PyErr, path: &Path) -> Error {
    Python::attach(|py| {
        let kind = if err.is_instance_of::<PyFileNotFoundError>(py) {
            std::io::ErrorKind::NotFound
        } else if err.is_instance_of::<PyPermissionError>(py) {
            std::io::ErrorKind::PermissionDenied
        } else {
            std::io::ErrorKind::Other
        };
        Error::io(std::io::Error::new(kind, err.to_string()), path)
    })
}

impl Storage for PyStorage {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        Python::attach(|py| -> PyResult<Stat> {
            let info = self
                .fs
                .bind(py)
                .call_method1("get_file_info", (fs_path(path),))?;
            let kind: i64 = info.getattr("type")?.getattr("value")?.extract()?;
            // pyarrow.fs.FileType: NotFound 0, Unknown 1, File 2, Directory 3.
            Ok(match kind {
                2 => Stat::File {
                    size: info.getattr("size")?.extract::<Option<u64>>()?.unwrap_or(0),
                },
                3 => Stat::Dir,
                _ => Stat::Missing,
            })
        })
        .map_err(|e| py_error(e, path))
    }

    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        Python::attach(|py| -> PyResult<Vec<Entry>> {
            let selector = py
                .import("pyarrow.fs")?
                .getattr("FileSelector")?
                .call1((fs_path(dir),))?;
            let infos = self
                .fs
                .bind(py)
                .call_method1("get_file_info", (selector,))?;
            let mut out = Vec::new();
            for info in infos.try_iter()? {
                let info = info?;
                let name: String = info.getattr("base_name")?.extract()?;
                let kind: i64 = info.getattr("type")?.getattr("value")?.extract()?;
                if kind != 2 && kind != 3 {
                    continue;
                }
                out.push(Entry {
                    path: dir.join(name),
                    is_dir: kind == 3,
                    size: info.getattr("size")?.extract::<Option<u64>>()?.unwrap_or(0),
                });
            }
            Ok(out)
        })
        .map_err(|e| py_error(e, dir))
    }

    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        Python::attach(|py| -> PyResult<Box<dyn Object>> {
            let file = self
                .fs
                .bind(py)
                .call_method1("open_input_file", (fs_path(path),))?;
            let len: u64 = file.call_method0("size")?.extract()?;
            Ok(Box::new(PyFile {
                file: file.unbind(),
                len,
                path: path.to_path_buf(),
            }))
        })
        .map_err(|e| py_error(e, path))
    }
}

/// A file open through a Python filesystem (`pyarrow.NativeFile`).
struct PyFile {
    file: Py<PyAny>,
    len: u64,
    path: PathBuf,
}

impl Object for PyFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let take = (len as u64).min(self.len.saturating_sub(offset)) as usize;
        if take == 0 {
            return Ok(0);
        }
        Python::attach(|py| -> PyResult<usize> {
            let mut data = self.file.bind(py).call_method1("read_at", (take, offset))?;
            if data.hasattr("to_pybytes")? {
                data = data.call_method0("to_pybytes")?;
            }
            let bytes: &[u8] = data.extract()?;
            out.extend_from_slice(bytes);
            Ok(bytes.len())
        })
        .map_err(|e| py_error(e, &self.path))
    }
}

impl Drop for PyFile {
    fn drop(&mut self) {
        Python::attach(|py| {
            let _ = self.file.bind(py).call_method0("close");
        });
    }
}

/// The size of one file or object, through the storage a read would use (a missing one is a
/// `KafkaLogIOError` that is also a `FileNotFoundError`).
#[pyfunction]
#[pyo3(signature = (path, storage_options=None, filesystem=None))]
pub fn file_size(
    py: Python<'_>,
    path: PathBuf,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<u64> {
    let storage = storage(storage_options, filesystem);
    super::errors::detach(py, || Ok(storage.open(&path)?.len()))
}

/// The bytes `start..start + length` of one file or object (fewer at its end), through the
/// storage a read would use.
#[pyfunction]
#[pyo3(signature = (path, start, length, storage_options=None, filesystem=None))]
pub fn read_range(
    py: Python<'_>,
    path: PathBuf,
    start: u64,
    length: u64,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<pyo3::Py<pyo3::types::PyBytes>> {
    let storage = storage(storage_options, filesystem);
    let bytes = super::errors::detach(py, || {
        let mut object = storage.open(&path)?;
        let end = start.saturating_add(length).min(object.len());
        crate::storage::read_range(object.as_mut(), start.min(end)..end)
    })?;
    Ok(pyo3::types::PyBytes::new(py, &bytes).unbind())
}

/// What is at `path`, through the storage a read would use: `"file"`, `"dir"` (a directory,
/// or an object-store prefix with objects under it) or `"missing"`.
#[pyfunction]
#[pyo3(signature = (path, storage_options=None, filesystem=None))]
pub fn path_kind(
    py: Python<'_>,
    path: PathBuf,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<&'static str> {
    let storage = storage(storage_options, filesystem);
    super::errors::detach(py, || {
        Ok(match storage.stat(&path)? {
            Stat::File { .. } => "file",
            Stat::Dir => "dir",
            Stat::Missing => "missing",
        })
    })
}

/// The files directly in the directory (prefix) `path`, as (full path, size), sorted by path.
#[pyfunction]
#[pyo3(signature = (path, storage_options=None, filesystem=None))]
pub fn list_files(
    py: Python<'_>,
    path: PathBuf,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<Vec<(String, u64)>> {
    let storage = storage(storage_options, filesystem);
    super::errors::detach(py, || {
        let mut files: Vec<(String, u64)> = storage
            .list(&path)?
            .into_iter()
            .filter(|e| !e.is_dir)
            .map(|e| (e.path.to_string_lossy().into_owned(), e.size))
            .collect();
        files.sort();
        Ok(files)
    })
}
