//! The native side of `kafkalog.restore`: a backup laid into a stopped broker's log directory
//! (`crate::restore`), with the GIL released while it runs. The report comes back as a dict.

use super::errors::detach;
use super::storage::storage;
use crate::restore::{restore as run, RestoreOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn path_str(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Restores `sources` into the log directory `to`; returns the report as a dict.
#[pyfunction]
#[pyo3(signature = (
    sources, to, *, topics=None, until_ms=None, groups=false, plan=false, fsync=true,
    storage_options=None
))]
#[allow(clippy::too_many_arguments)]
pub fn restore<'py>(
    py: Python<'py>,
    sources: Vec<PathBuf>,
    to: PathBuf,
    topics: Option<String>,
    until_ms: Option<i64>,
    groups: bool,
    plan: bool,
    fsync: bool,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let store = storage(storage_options, None);
    let options = RestoreOptions {
        topics,
        until_ms,
        groups,
        plan,
        fsync,
    };
    let r = detach(py, || run(&store, &sources, &to, &options))?;
    let d = PyDict::new(py);
    d.set_item("target", path_str(&r.target))?;
    d.set_item("plan", r.plan)?;
    let parts = PyList::empty(py);
    for p in &r.partitions {
        let x = PyDict::new(py);
        x.set_item("topic", &p.topic)?;
        x.set_item("partition", p.partition)?;
        x.set_item("dir", path_str(&p.dir))?;
        x.set_item("log_start_offset", p.log_start_offset)?;
        x.set_item("log_end_offset", p.log_end_offset)?;
        x.set_item("segments", p.segments)?;
        x.set_item("batches", p.batches)?;
        x.set_item("records", p.records)?;
        x.set_item("bytes", p.bytes)?;
        x.set_item("leader_epoch", p.leader_epoch)?;
        x.set_item("epochs_lowered", p.epochs_lowered)?;
        x.set_item("cut", p.cut.map(|c| c.name()))?;
        let aborted = PyList::empty(py);
        for a in &p.aborted {
            let y = PyDict::new(py);
            y.set_item("producer_id", a.producer_id)?;
            y.set_item("producer_epoch", a.producer_epoch)?;
            y.set_item("first_offset", a.first_offset)?;
            y.set_item("marker_offset", a.marker_offset)?;
            aborted.append(y)?;
        }
        x.set_item("aborted", aborted)?;
        parts.append(x)?;
    }
    d.set_item("partitions", parts)?;
    let missing: Vec<(String, i32)> = r.missing.clone();
    d.set_item("missing", missing)?;
    let groups = PyList::empty(py);
    for g in &r.groups {
        let x = PyDict::new(py);
        x.set_item("group", &g.group)?;
        x.set_item("offsets_partition", g.offsets_partition)?;
        x.set_item("written_at", g.written_at)?;
        x.set_item("note", g.note.as_deref())?;
        let commits = PyList::empty(py);
        for c in &g.commits {
            let y = PyDict::new(py);
            y.set_item("topic", &c.topic)?;
            y.set_item("partition", c.partition)?;
            y.set_item("offset", c.offset)?;
            y.set_item("metadata", &c.metadata)?;
            y.set_item("commit_timestamp", c.commit_timestamp)?;
            commits.append(y)?;
        }
        x.set_item("commits", commits)?;
        groups.append(x)?;
    }
    d.set_item("groups", groups)?;
    d.set_item("expired_commits", r.expired_commits)?;
    d.set_item("notes", r.notes.clone())?;
    Ok(d)
}
