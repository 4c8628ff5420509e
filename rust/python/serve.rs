//! Bindings of `kafkalog serve` (`rust/serve/`): a running endpoint as a Python object. The
//! server runs on its own threads; Python only starts it, asks its address and closes it.

use super::errors::detach;
use super::storage::storage;
use crate::serve::{Options, Server};
use pyo3::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most log lines kept for `log_lines()`.
const KEPT_LINES: usize = 1000;

/// A running `kafkalog serve` endpoint (`kafkalog.serve` wraps it).
#[pyclass(module = "kafkalog._native", name = "Server")]
pub struct PyServer {
    server: Mutex<Option<Server>>,
    address: (String, u16),
    topics: usize,
    partitions: usize,
    lines: Arc<Mutex<VecDeque<String>>>,
}

#[pymethods]
impl PyServer {
    /// Starts serving `paths`; returns once listening.
    #[new]
    #[pyo3(signature = (paths, listen, advertise=None, state=None, topics=None,
        storage_options=None, echo=false, idle_timeout_s=600.0, max_connections=1024,
        max_request_bytes=16777216))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        paths: Vec<String>,
        listen: String,
        advertise: Option<String>,
        state: Option<PathBuf>,
        topics: Option<String>,
        storage_options: Option<BTreeMap<String, String>>,
        echo: bool,
        idle_timeout_s: f64,
        max_connections: usize,
        max_request_bytes: usize,
    ) -> PyResult<Self> {
        let store = storage(storage_options, None);
        let options = Options {
            paths: paths.into_iter().map(PathBuf::from).collect(),
            listen,
            advertise,
            state,
            topics,
            idle_timeout: Duration::from_secs_f64(idle_timeout_s.max(0.001)),
            max_connections,
            max_request_bytes,
            ..Options::default()
        };
        let lines: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let kept = Arc::clone(&lines);
        let log = Box::new(move |line: &str| {
            if echo {
                eprintln!("kafkalog serve: {line}");
            }
            if let Ok(mut kept) = kept.lock() {
                if kept.len() == KEPT_LINES {
                    kept.pop_front();
                }
                kept.push_back(line.to_string());
            }
        });
        let server = detach(py, move || Server::start(store, options, log))?;
        let address = server.address();
        let catalog = server.catalog();
        Ok(PyServer {
            topics: catalog.topics.len(),
            partitions: catalog.partition_count(),
            address: (address.ip().to_string(), address.port()),
            server: Mutex::new(Some(server)),
            lines,
        })
    }

    /// `(host, port)` listened on.
    #[getter]
    fn address(&self) -> (String, u16) {
        self.address.clone()
    }

    /// How many topics are served.
    #[getter]
    fn topics(&self) -> usize {
        self.topics
    }

    /// How many partitions are served.
    #[getter]
    fn partitions(&self) -> usize {
        self.partitions
    }

    /// The server's recent log lines (refused requests, dropped connections, failed reads).
    fn log_lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Stops the server: no new connection, open ones closed. Idempotent.
    fn close(&self, py: Python<'_>) {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        if let Some(mut server) = server {
            py.detach(move || server.close());
        }
    }

    /// Whether the server is running.
    #[getter]
    fn running(&self) -> bool {
        self.server.lock().map(|s| s.is_some()).unwrap_or(false)
    }
}
