//! The native reader behind `kafkalog.read` and `kafkalog.read_bytes`: options in, a Python
//! iterator of Arrow record batches out (handed over through the Arrow PyCapsule interface).
//! Decoding runs with the GIL released.

use super::errors::{detach, issue_dict, to_py, warn, IntoPyResult};
use super::options::options_from_dict;
use super::storage::storage;
use super::values::{warn_values, ValueArgs};
use crate::arrow::decoder::DEFAULT_BATCH_SIZE;
use crate::arrow::output::Output;
use crate::arrow::schema::Projection;
use crate::error::Error;
use crate::format::batch::{CrcPolicy, DEFAULT_MAX_DECOMPRESSED_SIZE};
use crate::format::index::DEFAULT_INDEX_INTERVAL_BYTES;
use crate::log::bounds::Bounds;
use crate::log::issues::Issue;
use crate::log::issues::OnCorrupt;
use crate::log::origin::Origin;
use crate::log::plan::{plan_items, WorkItem};
use crate::log::visibility::Visibility;
use crate::read::files::{resolve_topics, typed_topics, TopicFilter};
use crate::read::parallel::ParallelReader;
use crate::read::pieces::PIECE_BYTES;
use crate::read::reader::{
    decode_buffer, decode_bytes, list_batches_in_bytes, LogReader, ReaderBuilder,
};
use crate::read::values::ValueStep;
use crate::storage::{Stat, Storage};
use arrow_array::RecordBatch;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyList;
use pyo3_arrow::{PyRecordBatch, PySchema};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::sync::Arc;

/// Reader options as Python passes them: a dict whose keys are these fields' names. Every key
/// may be left out; its default is in `Default` below (and `kafkalog.read`'s).
pub struct Options {
    columns: Option<Vec<String>>,
    batch_metadata: bool,
    batch_size: usize,
    include_control: bool,
    check_crc: bool,
    on_corrupt: String,
    max_decompressed_size: usize,
    topic: Option<String>,
    partition: Option<i32>,
    /// Only the topics whose whole name matches this regular expression (Spark's
    /// `subscribePattern`; `read::files::TopicFilter`).
    topics: Option<String>,
    /// One row per batch instead of per record.
    list_batches: bool,
    /// Byte range of a single segment file to read (batch boundaries).
    start_position: Option<u64>,
    end_position: Option<u64>,
    start_offset: Option<i64>,
    end_offset: Option<i64>,
    start_timestamp: Option<i64>,
    end_timestamp: Option<i64>,
    read_committed: bool,
    /// `"consumer"` (within the broker's checkpoints) or `"all"`.
    visibility: Option<String>,
    /// Worker threads for reading several files (None: one per core).
    threads: Option<usize>,
    /// Object-store configuration (keys of `object_store`'s builders).
    storage_options: Option<BTreeMap<String, String>>,
    /// A `pyarrow.fs.FileSystem` to read through instead.
    filesystem: Option<Py<PyAny>>,
    /// `key` and `value` as `binary_view` columns pointing into the bytes read.
    binary_view: bool,
    /// Keys and values decoded (formats, schemas, `on_value_error`).
    values: Option<ValueArgs>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            columns: None,
            batch_metadata: false,
            batch_size: DEFAULT_BATCH_SIZE,
            include_control: false,
            check_crc: true,
            on_corrupt: "error".to_owned(),
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
            topic: None,
            partition: None,
            topics: None,
            list_batches: false,
            start_position: None,
            end_position: None,
            start_offset: None,
            end_offset: None,
            start_timestamp: None,
            end_timestamp: None,
            read_committed: false,
            visibility: None,
            threads: None,
            storage_options: None,
            filesystem: None,
            binary_view: false,
            values: None,
        }
    }
}

options_from_dict!(Options {
    columns,
    batch_metadata,
    batch_size,
    include_control,
    check_crc,
    on_corrupt,
    max_decompressed_size,
    topic,
    partition,
    topics,
    list_batches,
    start_position,
    end_position,
    start_offset,
    end_offset,
    start_timestamp,
    end_timestamp,
    read_committed,
    visibility,
    threads,
    storage_options,
    filesystem,
    binary_view,
    values,
});

impl Options {
    fn crc(&self) -> CrcPolicy {
        match (self.check_crc, self.list_batches) {
            (false, _) => CrcPolicy::Ignore,
            // A listing reports each batch's CRC, as kafka-dump-log's `isvalid` does.
            (true, true) => CrcPolicy::Report,
            (true, false) => CrcPolicy::Verify,
        }
    }

    fn storage(&self) -> Arc<dyn Storage> {
        let fs = self
            .filesystem
            .as_ref()
            .map(|f| Python::attach(|py| f.clone_ref(py)));
        storage(self.storage_options.clone(), fs)
    }

    /// The decoding of keys and values the options ask for (None: none): the columns it
    /// needs added to the projection, and dropped again after it.
    fn value_columns(&mut self) -> Vec<String> {
        let Some(values) = &self.values else {
            return Vec::new();
        };
        if !values.any() || self.list_batches {
            return Vec::new();
        }
        // The default columns named, so that those decoding needs can be added and dropped.
        let default = Projection::default_with_metadata(self.batch_metadata).schema();
        let columns = self
            .columns
            .get_or_insert_with(|| default.fields().iter().map(|f| f.name().clone()).collect());
        let mut added = Vec::new();
        for name in values.needed_columns() {
            if !columns.iter().any(|c| c == name) {
                columns.push(name.to_string());
                added.push(name.to_string());
            }
        }
        added
    }

    /// The files of a read of `paths`: those of the topics asked for, and for typed keys or
    /// values over several topics, without Kafka's internal topics and the registry's storage
    /// topic (`read::files::typed_topics`).
    fn files(
        &self,
        storage: &Arc<dyn Storage>,
        paths: &[std::path::PathBuf],
    ) -> crate::Result<(Vec<crate::log::discover::SegmentFile>, Vec<String>)> {
        let filter = TopicFilter::new(self.topics.as_deref())?;
        let (files, notes) = resolve_topics(storage, paths, &filter)?;
        match &self.values {
            Some(values) if values.any() && !self.list_batches => Ok((
                typed_topics(files, &filter, values.schemas_topic()).0,
                notes,
            )),
            _ => Ok((files, notes)),
        }
    }

    /// The decoding step for a read of `files`.
    fn value_step(
        &self,
        py: Python<'_>,
        files: &[crate::log::discover::SegmentFile],
        drop: Vec<String>,
    ) -> PyResult<Option<ValueStep>> {
        let Some(values) = &self.values else {
            return Ok(None);
        };
        if self.list_batches {
            return Ok(None);
        }
        let storage = self.storage();
        let topic = self.topic.as_deref();
        let made = detach(py, || ValueStep::new(values, &storage, files, topic, drop))?;
        let Some((step, issues)) = made else {
            return Ok(None);
        };
        for issue in &issues {
            warn(py, issue)?;
        }
        Ok(Some(step))
    }

    fn builder(&self) -> crate::Result<ReaderBuilder> {
        let projection = match &self.columns {
            Some(names) => Projection::from_names(names)?,
            None => Projection::default_with_metadata(self.batch_metadata),
        };
        let mut builder = ReaderBuilder::new()
            .with_projection(projection.with_binary_view(self.binary_view))
            .with_batch_size(self.batch_size)
            .with_include_control(self.include_control)
            .with_crc(self.crc())
            .with_on_corrupt(OnCorrupt::from_name(&self.on_corrupt)?)
            .with_max_decompressed_size(self.max_decompressed_size)?
            .with_storage(self.storage());
        let bounds = Bounds {
            start_offset: self.start_offset,
            end_offset: self.end_offset,
            start_timestamp: self.start_timestamp,
            end_timestamp: self.end_timestamp,
            read_committed: self.read_committed,
            visibility: Visibility::from_name(self.visibility.as_deref().unwrap_or("consumer"))?,
        };
        bounds.check()?;
        builder = builder.with_bounds(bounds);
        if self.topic.is_some() || self.partition.is_some() {
            builder = builder.with_origin(Origin {
                topic: self.topic.clone(),
                partition: self.partition,
            });
        }
        Ok(builder)
    }
}

/// A file reader of records or of batches, behind one face.
trait FileStream: Send + Sync {
    fn next_batch(&mut self) -> Option<crate::Result<RecordBatch>>;
    fn take_issues(&mut self) -> Vec<Issue>;
}

impl<O: Output + Send + Sync> FileStream for LogReader<O> {
    fn next_batch(&mut self) -> Option<crate::Result<RecordBatch>> {
        self.next()
    }
    fn take_issues(&mut self) -> Vec<Issue> {
        LogReader::take_issues(self)
    }
}

/// The parallel reader's channel receivers are not `Sync`; a Python object must be.
impl FileStream for std::sync::Mutex<ParallelReader> {
    fn next_batch(&mut self) -> Option<crate::Result<RecordBatch>> {
        self.get_mut().map_or(None, |r| r.next())
    }
    fn take_issues(&mut self) -> Vec<Issue> {
        self.get_mut().map(|r| r.take_issues()).unwrap_or_default()
    }
}

enum Source {
    Files(Box<dyn FileStream>),
    Decoded(VecDeque<RecordBatch>),
}

/// An iterator of record batches. Issues (torn tails, skipped batches) become Python
/// warnings as they are met, and stay readable from `issues`.
#[pyclass(module = "kafkalog._native")]
pub struct Reader {
    source: Source,
    schema: arrow_schema::SchemaRef,
    issues: Vec<Issue>,
    /// Keys and values decoded, when asked for.
    values: Option<ValueStep>,
}

impl Reader {
    fn new(schema: arrow_schema::SchemaRef, source: Source, values: Option<ValueStep>) -> Self {
        let schema = match &values {
            Some(step) => step.schema(&schema),
            None => schema,
        };
        Reader {
            source,
            schema,
            issues: Vec::new(),
            values,
        }
    }

    fn note(&mut self, py: Python<'_>, issues: Vec<Issue>) -> PyResult<()> {
        for issue in &issues {
            warn(py, issue)?;
        }
        self.issues.extend(issues);
        Ok(())
    }
}

#[pymethods]
impl Reader {
    /// Opens every segment under `path` (a `.log` file, a partition directory or a log directory).
    #[staticmethod]
    #[pyo3(signature = (paths, options=None))]
    fn open(
        py: Python<'_>,
        paths: Vec<std::path::PathBuf>,
        options: Option<Options>,
    ) -> PyResult<Self> {
        let mut options = options.unwrap_or_default();
        let drop = options.value_columns();
        let builder = options.builder().py_err()?;
        let storage = builder.storage().clone();
        let (mut files, notes) = detach(py, || options.files(&storage, &paths))?;
        warn_all(py, &notes)?;
        let values = options.value_step(py, &files, drop)?;
        if options.start_position.is_some() || options.end_position.is_some() {
            let single = paths.len() == 1
                && matches!(detach(py, || storage.stat(&paths[0]))?, Stat::File { .. });
            if !single {
                return Err(to_py(
                    py,
                    Error::invalid_argument("a byte range needs a single segment file"),
                ));
            }
            files[0].start = options.start_position.unwrap_or(0);
            files[0].end = options.end_position;
        }
        let (schema, source): (_, Box<dyn FileStream>) = if options.list_batches {
            let reader = detach(py, || builder.build_batch_listing(files))?;
            (reader.schema(), Box::new(reader))
        } else {
            let threads = options.threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            let (planned, issues) = detach(py, || builder.plan(files))?;
            if threads > 1 && detach(py, || Ok(worth_parallel(storage.as_ref(), &planned)))? {
                let reader = ParallelReader::new(builder, planned, issues, threads, PIECE_BYTES);
                (reader.schema(), Box::new(std::sync::Mutex::new(reader)))
            } else {
                let reader = builder.build_planned(planned, issues);
                (reader.schema(), Box::new(reader))
            }
        };
        let source = Source::Files(source);
        Ok(Reader::new(schema, source, values))
    }

    /// Reads work items made by `plan` (in order), without planning again.
    #[staticmethod]
    #[pyo3(signature = (items, options=None))]
    fn open_items(py: Python<'_>, items: Vec<Item>, options: Option<Options>) -> PyResult<Self> {
        let mut options = options.unwrap_or_default();
        let drop = options.value_columns();
        let builder = options.builder().py_err()?;
        let planned: Vec<_> = items.into_iter().map(|i| i.0.to_planned()).collect();
        let files: Vec<_> = planned.iter().map(|p| p.file.clone()).collect();
        let values = options.value_step(py, &files, drop)?;
        let threads = options.threads.unwrap_or(1);
        let storage = builder.storage().clone();
        let (schema, source): (_, Box<dyn FileStream>) = if threads > 1
            && detach(py, || Ok(worth_parallel(storage.as_ref(), &planned)))?
        {
            let reader = ParallelReader::new(builder, planned, Vec::new(), threads, PIECE_BYTES);
            (reader.schema(), Box::new(std::sync::Mutex::new(reader)))
        } else {
            let reader = builder.build_planned(planned, Vec::new());
            (reader.schema(), Box::new(reader))
        };
        Ok(Reader::new(schema, Source::Files(source), values))
    }

    /// Decodes log entries already in memory.
    #[staticmethod]
    #[pyo3(signature = (data, options=None))]
    fn from_bytes(py: Python<'_>, data: PyBackedBytes, options: Option<Options>) -> PyResult<Self> {
        let mut options = options.unwrap_or_default();
        let drop = options.value_columns();
        let builder = options.builder().py_err()?;
        let values = options.value_step(py, &[], drop)?;
        let origin = Origin {
            topic: options.topic.clone(),
            partition: options.partition,
        };
        let schema = if options.list_batches {
            crate::arrow::batches::batch_schema()
        } else {
            builder.schema()
        };
        let (batches, issues) = if options.list_batches {
            detach(py, || list_batches_in_bytes(&builder, &data, origin))?
        } else if options.binary_view {
            // The columns point into the Python bytes object, which the arrays keep alive.
            let buffer = python_bytes_buffer(data);
            detach(py, || decode_buffer(&builder, buffer, origin))?
        } else {
            detach(py, || decode_bytes(&builder, &data, origin))?
        };
        let mut reader = Reader::new(schema, Source::Decoded(batches.into()), values);
        reader.note(py, issues)?;
        Ok(reader)
    }

    /// The schema of the batches, as an Arrow PyCapsule-exporting object.
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema::new(self.schema.clone())
    }

    /// What was passed over so far: a list of dicts (kind, message, path, position, offset, bytes).
    #[getter]
    fn issues<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        issue_list(py, &self.issues)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<PyRecordBatch>> {
        let next = match &mut self.source {
            Source::Decoded(batches) => batches.pop_front().map(Ok),
            Source::Files(reader) => {
                let next = detach(py, || Ok(reader.next_batch()))?;
                let issues = reader.take_issues();
                self.note(py, issues)?;
                next
            }
        };
        let next = next.transpose().py_err()?;
        let Some(step) = &mut self.values else {
            return Ok(next.map(PyRecordBatch::new));
        };
        match next {
            Some(batch) => {
                let decoded = detach(py, || step.apply(&batch))?;
                Ok(Some(PyRecordBatch::new(decoded)))
            }
            None => {
                if step.bad > 0 {
                    warn_values(py, std::mem::take(&mut step.bad))?;
                }
                Ok(None)
            }
        }
    }
}

/// A Python bytes-like object's bytes as an Arrow buffer that keeps the object alive (no copy).
fn python_bytes_buffer(data: PyBackedBytes) -> arrow_buffer::Buffer {
    let bytes: &[u8] = &data;
    let (ptr, len) = (bytes.as_ptr(), bytes.len());
    match std::ptr::NonNull::new(ptr.cast_mut()) {
        // SAFETY: `PyBackedBytes` holds an immutable `bytes` object (or an owned copy of a
        // `bytearray`), whose buffer neither moves nor changes while it is held; the Arrow
        // buffer holds it through the `Arc` until the last array pointing into it is dropped
        // (only to keep it: it is never touched through the `Arc`, hence `AssertUnwindSafe`).
        Some(ptr) if len > 0 => unsafe {
            let owner = Arc::new(std::panic::AssertUnwindSafe(data));
            arrow_buffer::Buffer::from_custom_allocation(ptr, len, owner)
        },
        _ => arrow_buffer::Buffer::default(),
    }
}

/// Reads an index-like file (`.index`, `.timeindex`, `.txnindex`, `.snapshot`,
/// `leader-epoch-checkpoint`) into a record batch.
#[pyfunction]
#[pyo3(signature = (path, base_offset=None, storage_options=None, filesystem=None))]
pub fn read_index(
    py: Python<'_>,
    path: std::path::PathBuf,
    base_offset: Option<i64>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<PyRecordBatch> {
    let storage = storage(storage_options, filesystem);
    let batch = detach(py, || {
        crate::arrow::index_tables::read_index_file(storage.as_ref(), &path, None, base_offset)
    })?;
    Ok(PyRecordBatch::new(batch))
}

fn path_str(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Verifies everything under `path`: returns a dict with `ok`, `segments`, `problems`, `notes`.
#[pyfunction]
#[pyo3(signature = (path, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED_SIZE, storage_options=None,
    filesystem=None))]
pub fn verify<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    max_decompressed_size: usize,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    use pyo3::types::PyDict;
    let storage = storage(storage_options, filesystem);
    let report = detach(py, || {
        crate::cleanup::verify::verify(storage.as_ref(), &path, max_decompressed_size)
    })?;
    let findings = |list: &[crate::cleanup::verify::Finding]| -> PyResult<Bound<'py, PyList>> {
        let items = list
            .iter()
            .map(|f| -> PyResult<_> {
                let d = PyDict::new(py);
                d.set_item("kind", f.kind.name())?;
                d.set_item("message", &f.message)?;
                d.set_item("path", path_str(&f.path))?;
                d.set_item("position", f.position)?;
                d.set_item("offset", f.offset)?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    };
    let segments = report
        .segments
        .iter()
        .map(|s| -> PyResult<_> {
            let d = PyDict::new(py);
            d.set_item("path", path_str(&s.path))?;
            d.set_item("topic", &s.topic)?;
            d.set_item("partition", s.partition)?;
            d.set_item("base_offset", s.base_offset)?;
            d.set_item("bytes", s.bytes)?;
            d.set_item("batches", s.batches)?;
            d.set_item("records", s.records)?;
            d.set_item("first_offset", s.first_offset)?;
            d.set_item("last_offset", s.last_offset)?;
            d.set_item("max_timestamp", s.max_timestamp)?;
            d.set_item("trailing_bytes", s.trailing_bytes)?;
            d.set_item("index_entries", s.index_entries)?;
            d.set_item("time_index_entries", s.time_index_entries)?;
            d.set_item("aborted_transactions", s.aborted_transactions)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    let out = PyDict::new(py);
    out.set_item("ok", report.ok())?;
    out.set_item("segments", PyList::new(py, segments)?)?;
    out.set_item("problems", findings(&report.problems)?)?;
    out.set_item("notes", findings(&report.notes)?)?;
    Ok(out)
}

/// Regenerates the index files of every segment under `path`; one dict per segment.
#[pyfunction]
#[pyo3(signature = (path, index_interval_bytes=DEFAULT_INDEX_INTERVAL_BYTES,
    max_decompressed_size=DEFAULT_MAX_DECOMPRESSED_SIZE))]
pub fn rebuild_indexes<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    index_interval_bytes: u64,
    max_decompressed_size: usize,
) -> PyResult<Bound<'py, PyList>> {
    use pyo3::types::PyDict;
    let rebuilt = detach(py, || {
        crate::cleanup::rebuild::rebuild_indexes(&path, index_interval_bytes, max_decompressed_size)
    })?;
    let items = rebuilt
        .iter()
        .map(|r| -> PyResult<_> {
            let d = PyDict::new(py);
            d.set_item("path", path_str(&r.path))?;
            d.set_item("index_entries", r.index_entries)?;
            d.set_item("time_index_entries", r.time_index_entries)?;
            d.set_item("aborted_transactions", r.aborted_transactions)?;
            d.set_item("valid_bytes", r.valid_bytes)?;
            d.set_item("log_bytes", r.log_bytes)?;
            d.set_item("stopped", &r.stopped)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// The segment files `read` reads for `path`, in its order, with their topic, partition and
/// base offset (from the file and directory names), and what a consumer could fetch of their
/// partition: the broker's checkpointed log start offset and high watermark (`None` where
/// no checkpoint lists the partition, or one cannot be parsed), and `hidden`, why a whole segment is outside that
/// (see `visibility::segment_hidden`), and `continues`: whether it continues the partition of
/// the segment before it (see `SegmentFile::continued_by`). Every segment on disk is listed,
/// hidden or not.
#[pyfunction]
#[pyo3(signature = (paths, storage_options=None, filesystem=None, topics=None))]
pub fn segments<'py>(
    py: Python<'py>,
    paths: Vec<std::path::PathBuf>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
    topics: Option<String>,
) -> PyResult<Bound<'py, PyList>> {
    use crate::log::visibility::{segment_hidden, Checkpoints, Visible};
    use pyo3::types::PyDict;
    let storage = storage(storage_options, filesystem);
    let (files, bounds, notes) = detach(py, || {
        let filter = TopicFilter::new(topics.as_deref())?;
        let (files, notes) = resolve_topics(&storage, &paths, &filter)?;
        let mut checkpoints = Checkpoints::new();
        let mut bounds: Vec<(Visible, Option<&'static str>, bool)> =
            Vec::with_capacity(files.len());
        // One log at a time, as reads group them (`by_partition`): its checkpoints are beside
        // its last (local) segments.
        for group in crate::log::discover::by_partition(files.clone()) {
            let last = &group[group.len() - 1];
            let dir = last.path.parent().unwrap_or(std::path::Path::new(""));
            // A listing of what is on disk: a checkpoint that cannot be read bounds nothing
            // here (a read with visibility='consumer' reports it).
            let visible = checkpoints
                .visible(storage.as_ref(), dir)
                .unwrap_or_default();
            for (j, f) in group.iter().enumerate() {
                let next = group.get(j + 1).and_then(|n| n.base_offset);
                bounds.push((
                    visible,
                    segment_hidden(f.base_offset, next, &visible),
                    j > 0,
                ));
            }
        }
        Ok::<_, crate::error::Error>((files, bounds, notes))
    })?;
    warn_all(py, &notes)?;
    let items = files
        .iter()
        .zip(&bounds)
        .map(|(f, (visible, hidden, continues))| -> PyResult<_> {
            let d = PyDict::new(py);
            d.set_item("continues", *continues)?;
            d.set_item("log_start_offset", visible.log_start)?;
            d.set_item("high_watermark", visible.high_watermark)?;
            d.set_item("hidden", *hidden)?;
            d.set_item("path", path_str(&f.path))?;
            d.set_item("topic", &f.origin.topic)?;
            d.set_item("partition", f.origin.partition)?;
            d.set_item("base_offset", f.base_offset)?;
            d.set_item("size", f.size)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// The topics a read of `paths` takes, in reading order, and those a typed read (`typed`)
/// leaves out (Kafka's internal topics and the registry's storage topic `schemas_topic`, when
/// the read spans several topics and `topics` does not name them): `read::files::typed_topics`.
#[pyfunction]
#[pyo3(signature = (paths, topics=None, typed=false, schemas_topic=None, storage_options=None,
    filesystem=None))]
pub fn read_topics(
    py: Python<'_>,
    paths: Vec<std::path::PathBuf>,
    topics: Option<String>,
    typed: bool,
    schemas_topic: Option<String>,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, Vec<String>)> {
    let storage = storage(storage_options, filesystem);
    let (kept, left_out, notes) = detach(py, || {
        let filter = TopicFilter::new(topics.as_deref())?;
        let (files, notes) = resolve_topics(&storage, &paths, &filter)?;
        let (files, left_out) = if typed {
            typed_topics(files, &filter, schemas_topic.as_deref())
        } else {
            (files, Vec::new())
        };
        let kept: Vec<String> = crate::read::files::distinct_topics(&files)
            .into_iter()
            .map(String::from)
            .collect();
        Ok::<_, crate::error::Error>((kept, left_out, notes))
    })?;
    warn_all(py, &notes)?;
    Ok((kept, left_out))
}

/// Whether there is more than one piece of work: several files, or one larger than a piece.
fn worth_parallel(storage: &dyn Storage, planned: &[crate::log::bounds::Planned]) -> bool {
    match planned {
        [] => false,
        [crate::log::bounds::Planned { file, .. }] => {
            let len = file.size.unwrap_or_else(|| match storage.stat(&file.path) {
                Ok(Stat::File { size }) => size,
                _ => 0,
            });
            file.end.unwrap_or(len).min(len).saturating_sub(file.start) > PIECE_BYTES as u64
        }
        _ => true,
    }
}

/// Gives each of `notes` to Python as a `UserWarning`. Raises what `warnings.warn` raises, so
/// a warnings filter set to "error" turns them into exceptions.
fn warn_all(py: Python<'_>, notes: &[String]) -> PyResult<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let warnings = py.import("warnings")?;
    for note in notes {
        warnings.call_method1(
            "warn",
            (note, py.get_type::<pyo3::exceptions::PyUserWarning>(), 3),
        )?;
    }
    Ok(())
}

/// A work item as it crosses to Python and back.
type ItemTuple = (
    String,
    u64,
    Option<u64>,
    Option<String>,
    Option<i32>,
    Option<i64>,
    u64,
    Option<i64>,
    Option<i64>,
    Option<Vec<(i64, i64, i64)>>,
);

/// A work item as Python hands it back: a tuple
/// `(path, start, end, topic, partition, base_offset, size, start_offset, end_offset, aborted)`.
pub struct Item(WorkItem);

impl<'py> FromPyObject<'_, 'py> for Item {
    type Error = PyErr;
    fn extract(ob: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        #[allow(clippy::type_complexity)]
        let (
            path,
            start,
            end,
            topic,
            partition,
            base_offset,
            size,
            start_offset,
            end_offset,
            aborted,
        ): ItemTuple = ob.extract()?;
        Ok(Item(WorkItem {
            path: path.into(),
            start,
            end,
            origin: Origin { topic, partition },
            base_offset,
            size,
            start_offset,
            end_offset,
            aborted,
        }))
    }
}

/// A segment as Python lists it for the native planners: `(path, topic, partition, size)`.
type SegmentTuple = (String, Option<String>, Option<i32>, Option<u64>);

/// The segment files of `segments` tuples (from `segments()`), in their order.
fn segment_files(segments: Vec<SegmentTuple>) -> Vec<crate::log::discover::SegmentFile> {
    segments
        .into_iter()
        .map(
            |(path, topic, partition, size)| crate::log::discover::SegmentFile {
                size,
                ..crate::log::discover::SegmentFile::new(path.into(), Origin { topic, partition })
            },
        )
        .collect()
}

/// Issues as a Python list of dicts.
fn issue_list<'py>(py: Python<'py>, issues: &[Issue]) -> PyResult<Bound<'py, PyList>> {
    let dicts = issues
        .iter()
        .map(|i| issue_dict(py, i))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, dicts)
}

/// Bounds of one partition, or of all: `(start_offset, end_offset, start_timestamp,
/// end_timestamp)`.
type BoundsTuple = (Option<i64>, Option<i64>, Option<i64>, Option<i64>);

/// Plans a read as work items (see `arrow::plan`): the segments `segments` lists (tuples
/// `(path, topic, partition, size)` from what `segments()` returns, in order), each
/// partition within its bounds (`bounds[(topic, partition)]`, else `default_bounds`). Returns
/// the items as tuples (see [`Item`]) and what was noted (indexes not used) as issue dicts.
#[pyfunction]
#[pyo3(signature = (segments, *, default_bounds=(None, None, None, None), bounds=None,
    read_committed=false, target_bytes=None, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED_SIZE,
    storage_options=None, filesystem=None, visibility="consumer"))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn plan<'py>(
    py: Python<'py>,
    segments: Vec<SegmentTuple>,
    default_bounds: BoundsTuple,
    bounds: Option<std::collections::HashMap<(Option<String>, Option<i32>), BoundsTuple>>,
    read_committed: bool,
    target_bytes: Option<u64>,
    max_decompressed_size: usize,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
    visibility: &str,
) -> PyResult<(Vec<ItemTuple>, Bound<'py, PyList>)> {
    let visibility = Visibility::from_name(visibility).map_err(|e| to_py(py, e))?;
    if target_bytes == Some(0) {
        return Err(to_py(
            py,
            Error::invalid_argument("target_bytes must be positive"),
        ));
    }
    let storage = storage(storage_options, filesystem);
    let files = segment_files(segments);
    let bounds = bounds.unwrap_or_default();
    let bounds_of = move |origin: &Origin| -> Bounds {
        let (so, eo, st, et) = bounds
            .get(&(origin.topic.clone(), origin.partition))
            .copied()
            .unwrap_or(default_bounds);
        Bounds {
            start_offset: so,
            end_offset: eo,
            start_timestamp: st,
            end_timestamp: et,
            read_committed,
            visibility,
        }
    };
    let options = crate::format::batch::DecodeOptions {
        crc: CrcPolicy::Ignore,
        max_decompressed_size,
    };
    let (items, issues) = detach(py, || {
        let files = crate::log::remote_local::merge_remote_and_local(storage.as_ref(), files)?;
        plan_items(storage.as_ref(), files, &bounds_of, target_bytes, &options)
    })?;
    let items = items
        .into_iter()
        .map(|i| {
            (
                i.path.to_string_lossy().into_owned(),
                i.start,
                i.end,
                i.origin.topic,
                i.origin.partition,
                i.base_offset,
                i.size,
                i.start_offset,
                i.end_offset,
                i.aborted,
            )
        })
        .collect();
    let issues = issue_list(py, &issues)?;
    Ok((items, issues))
}

/// Spark Kafka's `maxOffsetsPerTrigger` (`log/rate_limit.rs`): each partition's end offset for
/// a micro-batch of at most `limit` offsets, from its `(start, latest)` in `ranges`.
#[pyfunction]
pub fn rate_limit(ranges: Vec<(i64, i64)>, limit: u64) -> Vec<i64> {
    crate::log::rate_limit::rate_limit(&ranges, limit)
}

/// Each partition's offsets, as a consumer's `ListOffsets` sees them (see `arrow::offsets`):
/// tuples `(topic, partition, earliest, latest, for_timestamp, gaps)` for the segments `segments`
/// lists (tuples `(path, topic, partition, size)` of whole partitions, in order), with the
/// offset for `timestamps[(topic, partition)]` (else `timestamp`), and what was noted.
#[pyfunction]
#[pyo3(signature = (segments, *, read_committed=false, timestamp=None, timestamps=None,
    max_decompressed_size=DEFAULT_MAX_DECOMPRESSED_SIZE, storage_options=None, filesystem=None,
    visibility="consumer"))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn list_offsets<'py>(
    py: Python<'py>,
    segments: Vec<SegmentTuple>,
    read_committed: bool,
    timestamp: Option<i64>,
    timestamps: Option<std::collections::HashMap<(Option<String>, Option<i32>), i64>>,
    max_decompressed_size: usize,
    storage_options: Option<BTreeMap<String, String>>,
    filesystem: Option<Py<PyAny>>,
    visibility: &str,
) -> PyResult<(
    Vec<(
        Option<String>,
        Option<i32>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Vec<(i64, i64)>,
    )>,
    Bound<'py, PyList>,
)> {
    let visibility = Visibility::from_name(visibility).map_err(|e| to_py(py, e))?;
    let storage = storage(storage_options, filesystem);
    let files = segment_files(segments);
    let options = crate::format::batch::DecodeOptions {
        crc: CrcPolicy::Ignore,
        max_decompressed_size,
    };
    let timestamps = timestamps.unwrap_or_default();
    let timestamp_of = move |origin: &Origin| -> Option<i64> {
        timestamps
            .get(&(origin.topic.clone(), origin.partition))
            .copied()
            .or(timestamp)
    };
    let (parts, issues) = detach(py, || {
        crate::log::offsets::list_offsets(
            storage.as_ref(),
            files,
            read_committed,
            visibility,
            &timestamp_of,
            &options,
        )
    })?;
    let parts = parts
        .into_iter()
        .map(|p| {
            let o = p.origin;
            (
                o.topic,
                o.partition,
                p.earliest,
                p.latest,
                p.for_timestamp,
                p.gaps,
            )
        })
        .collect();
    let issues = issue_list(py, &issues)?;
    Ok((parts, issues))
}

/// What a segment file's location says, as discovery reads it: `(topic, partition,
/// base_offset)` from `<topic>-<partition>/<20-digit offset>.log` (`None` where it does not
/// say). For bytes that arrive without their directory (Spark's `binaryFile`).
#[pyfunction]
pub fn segment_origin(path: std::path::PathBuf) -> (Option<String>, Option<i32>, Option<i64>) {
    let tp = path
        .parent()
        .and_then(crate::format::segment::topic_partition_from_dir);
    let base = crate::format::segment::base_offset_from_name(&path);
    match tp {
        Some((topic, partition)) => (Some(topic), Some(partition), base),
        None => (None, None, base),
    }
}
