//! Reading segment files into Arrow: options ([`ReaderBuilder`]), the segments under a path
//! (found by [`crate::read::files::resolve`]), and the streaming reader ([`LogReader`]), a thin loop that reads a file
//! in chunks and feeds a [`Decoder`]. Memory stays bounded by the chunk, the largest batch and
//! the output batch, never by the file.

use crate::arrow::batches::BatchColumns;
use crate::arrow::builder::{RecordColumns, RecordFilter};
use crate::arrow::decoder::{Decoder, DecoderOptions};
use crate::arrow::output::Output;
use crate::arrow::schema::Projection;
use crate::error::{Error, Result};
use crate::format::batch::CrcPolicy;
use crate::log::bounds::{plan, Bounds, FileBounds, Planned};
use crate::log::discover::SegmentFile;
use crate::log::issues::OnCorrupt;
use crate::log::issues::{Issue, IssueKind};
use crate::log::origin::Origin;
use crate::storage::{default_storage, Mapped, Object, Storage};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_buffer::Buffer;
use arrow_schema::{ArrowError, SchemaRef};
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

/// Bytes read from a file at a time.
const CHUNK: usize = 4 << 20;
/// The first read of a segment.
const FIRST_FILL: usize = 64 << 10;

/// Options for reading, after arrow-rs's `ReaderBuilder`.
#[derive(Clone, Debug)]
pub struct ReaderBuilder {
    options: DecoderOptions,
    origin: Option<Origin>,
    bounds: Bounds,
    storage: Arc<dyn Storage>,
}

impl Default for ReaderBuilder {
    fn default() -> Self {
        ReaderBuilder {
            options: DecoderOptions::default(),
            origin: None,
            bounds: Bounds::default(),
            storage: default_storage(),
        }
    }
}

impl ReaderBuilder {
    /// Defaults: every column of Spark's Kafka source, 65536-row batches, CRCs checked, errors
    /// raised, control batches hidden, no bounds, [`crate::storage::default_storage`].
    pub fn new() -> Self {
        ReaderBuilder::default()
    }

    /// Where the bytes are read from (default: local files and object stores configured from
    /// the environment).
    pub fn with_storage(mut self, storage: Arc<dyn Storage>) -> Self {
        self.storage = storage;
        self
    }

    /// Where files are read from (see [`ReaderBuilder::with_storage`]).
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Whether `key` and `value` are `binary_view` columns (see [`Self::with_binary_view`]).
    pub fn binary_view(&self) -> bool {
        self.options.projection.binary_view()
    }

    /// Target rows per output batch.
    pub fn batch_size(&self) -> usize {
        self.options.batch_size
    }

    /// Target rows per output batch (default 65536).
    pub fn with_batch_size(mut self, rows: usize) -> Self {
        self.options.batch_size = rows;
        self
    }

    /// Whether `key` and `value` are `binary_view` columns pointing into the bytes read (a
    /// local file's map, read buffers, decompressed batches) instead of `binary` copies. See
    /// `views.rs`, and [`crate::storage::Mapped::buffer`] for what a truncation does to them.
    pub fn with_binary_view(mut self, on: bool) -> Self {
        self.options.projection = self.options.projection.with_binary_view(on);
        self
    }

    /// The columns to read (default: all of Spark's Kafka source columns).
    pub fn with_projection(mut self, projection: Projection) -> Self {
        // Either order of `with_binary_view` and this keeps the option.
        let binary_view = self.options.projection.binary_view() || projection.binary_view();
        self.options.projection = projection.with_binary_view(binary_view);
        self
    }

    /// Whether batch CRCs are checked (Kafka's consumer checks them by default, `check.crcs`).
    pub fn with_crc(mut self, policy: CrcPolicy) -> Self {
        self.options.decode.crc = policy;
        self
    }

    /// What to do at a batch that fails to decode (default: raise the error).
    pub fn with_on_corrupt(mut self, policy: OnCorrupt) -> Self {
        self.options.on_corrupt = policy;
        self
    }

    /// Whether the records of control batches (transaction markers) are returned; a consumer
    /// never sees them.
    pub fn with_include_control(mut self, include: bool) -> Self {
        self.options.filter.include_control = include;
        self
    }

    /// Cap on one batch's decompressed bytes (default 256 MiB, at most 1 GiB).
    pub fn with_max_decompressed_size(mut self, bytes: usize) -> Result<Self> {
        if bytes > 1 << 30 {
            return Err(Error::invalid_argument(
                "max_decompressed_size may be at most 1 GiB (1073741824)",
            ));
        }
        self.options.decode.max_decompressed_size = bytes;
        Ok(self)
    }

    /// Topic and partition for the records, overriding what file and directory names say.
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Offsets, timestamps and isolation level to read within (see [`crate::log::bounds`]).
    pub fn with_bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// Which batches' records reach the output (see [`RecordFilter`]).
    pub fn with_filter(mut self, filter: RecordFilter) -> Self {
        self.options.filter = filter;
        self
    }

    /// The schema of the batches a reader built from these options yields.
    pub fn schema(&self) -> SchemaRef {
        self.options.projection.schema()
    }

    /// A decoder for bytes that start at `position` of a stream from `origin`.
    pub fn build_decoder(&self, origin: Origin, position: u64) -> Decoder {
        Decoder::new(
            self.options.clone(),
            self.origin.clone().unwrap_or(origin),
            position,
        )
    }

    fn decoder_for<O: Output>(
        &self,
        make: MakeOutput<O>,
        origin: Origin,
        bounds: FileBounds,
        position: u64,
    ) -> Decoder<O> {
        let output = make(&self.options, self.origin.clone().unwrap_or(origin), bounds);
        Decoder::with_output(self.options.clone(), output, position)
    }

    /// A decoder of records for a file's bytes from `position` on.
    pub(crate) fn records_decoder(
        &self,
        origin: Origin,
        bounds: FileBounds,
        position: u64,
    ) -> Decoder {
        self.decoder_for(record_columns, origin, bounds, position)
    }

    /// Sets a decoder made by [`Self::records_decoder`] (and flushed) to start over at
    /// `position` of another file or piece, keeping its buffers.
    pub(crate) fn restart_decoder(
        &self,
        decoder: &mut Decoder,
        origin: Origin,
        bounds: FileBounds,
        position: u64,
    ) {
        decoder.restart(self.origin.clone().unwrap_or(origin), bounds, position);
    }

    /// A reader of the given segment files (or byte ranges of them), in order, within the
    /// bounds (planning may read indexes and, for timestamps or `read_committed`, batches).
    pub fn build_files(self, files: Vec<SegmentFile>) -> Result<LogReader> {
        self.reader(files, record_columns)
    }

    /// A reader listing the batches (one row each, see [`crate::arrow::batches`]) of the given files.
    pub fn build_batch_listing(self, files: Vec<SegmentFile>) -> Result<LogReader<BatchColumns>> {
        self.reader(files, batch_columns)
    }

    /// Plans `files` within the bounds (see [`crate::log::bounds::plan`]).
    pub fn plan(&self, files: Vec<SegmentFile>) -> Result<(Vec<Planned>, Vec<Issue>)> {
        plan(
            self.storage.as_ref(),
            files,
            &self.bounds,
            &self.options.decode,
        )
    }

    /// A reader of the records of files already planned.
    pub fn build_planned(self, files: Vec<Planned>, issues: Vec<Issue>) -> LogReader {
        self.planned_reader(files, issues, record_columns)
    }

    fn reader<O: Output>(
        self,
        files: Vec<SegmentFile>,
        make: MakeOutput<O>,
    ) -> Result<LogReader<O>> {
        let (files, issues) = self.plan(files)?;
        Ok(self.planned_reader(files, issues, make))
    }

    fn planned_reader<O: Output>(
        self,
        files: Vec<Planned>,
        issues: Vec<Issue>,
        make: MakeOutput<O>,
    ) -> LogReader<O> {
        LogReader {
            schema: make(&self.options, Origin::default(), FileBounds::all()).schema(),
            make,
            builder: self,
            files: files.into(),
            current: None,
            ahead: None,
            stopped_partitions: HashSet::new(),
            issues,
            done: false,
        }
    }
}

/// Makes the output a decoder fills, from the options and a file's origin and bounds.
type MakeOutput<O> = fn(&DecoderOptions, Origin, FileBounds) -> O;

fn record_columns(options: &DecoderOptions, origin: Origin, bounds: FileBounds) -> RecordColumns {
    RecordColumns::with_bounds(
        options.projection.clone(),
        origin,
        options.filter.clone(),
        bounds,
    )
}

fn batch_columns(_: &DecoderOptions, origin: Origin, bounds: FileBounds) -> BatchColumns {
    BatchColumns::new(origin).within(bounds.start, bounds.end)
}

struct OpenFile<O> {
    segment: SegmentFile,
    file: Box<dyn Object>,
    /// Position in the file of `buf[end]`.
    read_to: u64,
    decoder: Decoder<O>,
    buf: Vec<u8>,
    /// `buf[start..end]` holds the bytes from the decoder's position on.
    start: usize,
    end: usize,
    /// Bytes of the range not yet read into `buf`.
    unread: u64,
    /// A local file's map: then the bytes are `map[start..end]`, all of the range at once, and
    /// `buf` stays empty.
    map: Option<Mapped>,
    /// `binary_view`: columns point into the bytes read, so each read goes into a new buffer
    /// (the bytes are `frozen[start..end]`, and `buf` stays empty) rather than reusing `buf`.
    views: bool,
    frozen: Option<Buffer>,
    /// Bytes the next read asks for: small first, doubling to `CHUNK`, so that a bounded read
    /// of a remote (tiered) segment fetches little more than it decodes.
    fill: usize,
}

/// Opens `segment`'s file and announces the range to be read, so that a remote store starts
/// fetching it. Returns the file and the end of the range.
fn open_range(storage: &dyn Storage, segment: &SegmentFile) -> Result<(Box<dyn Object>, u64)> {
    let mut file = storage.open(&segment.path)?;
    let len = file.len();
    let end = segment.end.map_or(len, |e| e.min(len));
    file.will_read(segment.start..end);
    Ok((file, end))
}

/// The next file, opened while the current one is read: its remote fetch (a GET's first
/// byte, which a store takes tens of milliseconds or more to send) overlaps decoding.
struct Ahead {
    path: PathBuf,
    start: u64,
    end: Option<u64>,
    opened: Result<(Box<dyn Object>, u64)>,
}

impl<O: Output> OpenFile<O> {
    fn open(
        segment: SegmentFile,
        bounds: FileBounds,
        builder: &ReaderBuilder,
        make: MakeOutput<O>,
        ahead: Option<Ahead>,
    ) -> Result<Self> {
        let (mut file, end) = match ahead {
            Some(a)
                if a.path == segment.path && a.start == segment.start && a.end == segment.end =>
            {
                a.opened?
            }
            _ => open_range(builder.storage.as_ref(), &segment)?,
        };
        let mut decoder = builder.decoder_for(make, segment.origin.clone(), bounds, segment.start);
        decoder.set_file_name(&segment.path);
        let map = file.mapped();
        let views = builder.options.projection.binary_view();
        if let (Some(map), true) = (&map, views) {
            decoder.set_backing(Some(map.buffer()));
        }
        if map.is_some() {
            return Ok(OpenFile {
                unread: 0,
                read_to: end,
                start: segment.start.min(end) as usize,
                end: end as usize,
                segment,
                file,
                decoder,
                buf: Vec::new(),
                map,
                views,
                frozen: None,
                fill: FIRST_FILL,
            });
        }
        Ok(OpenFile {
            unread: end.saturating_sub(segment.start),
            read_to: segment.start,
            segment,
            file,
            decoder,
            buf: Vec::new(),
            start: 0,
            end: 0,
            map: None,
            views,
            frozen: None,
            fill: FIRST_FILL,
        })
    }

    /// The bytes from the decoder's position on that are at hand.
    fn window(&self) -> &[u8] {
        match (&self.map, &self.frozen) {
            (Some(map), _) => &map.bytes()[self.start..self.end],
            (None, Some(frozen)) => &frozen[self.start..self.end],
            (None, None) => &self.buf[self.start..self.end],
        }
    }

    /// The bytes at hand and the decoder, borrowed together.
    fn window_and_decoder(&mut self) -> (&[u8], &mut Decoder<O>) {
        let window = match (&self.map, &self.frozen) {
            (Some(map), _) => &map.bytes()[self.start..self.end],
            (None, Some(frozen)) => &frozen[self.start..self.end],
            (None, None) => &self.buf[self.start..self.end],
        };
        (window, &mut self.decoder)
    }

    /// A truncation under the map, which makes whatever was decoded from it untrustworthy,
    /// comes before the decoder's own result.
    fn settle<T>(&self, result: Result<T>) -> Result<T> {
        if let Some(map) = &self.map {
            map.check()?;
        }
        result.map_err(|e| e.with_path(&self.segment.path))
    }

    /// Reads more of the file: at least enough for the entry the decoder is waiting for, when
    /// the file has that many bytes. Returns false at the end of the range.
    fn fill(&mut self) -> Result<bool> {
        if self.unread == 0 {
            return Ok(false);
        }
        if self.views {
            return self.fill_new();
        }
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        let want = self.fill.max(self.decoder.need());
        self.fill = (self.fill * 2).min(CHUNK);
        // Never more than the bytes the file has: a size field claiming gigabytes is a torn tail
        // here, not an allocation.
        let take = (want.saturating_sub(self.end).max(1) as u64).min(self.unread) as usize;
        self.buf.truncate(self.end);
        let n = self.file.read_into(self.read_to, take, &mut self.buf)?;
        if n == 0 {
            // The file is shorter than it was: treat as its end.
            self.unread = 0;
        }
        self.end += n;
        self.read_to += n as u64;
        self.unread -= n as u64;
        Ok(true)
    }

    /// [`Self::fill`] for `binary_view`: the bytes not yet decoded and the next read go into a
    /// new buffer, which the decoder's columns may point into and keep; the last one is left
    /// to the arrays that point into it.
    fn fill_new(&mut self) -> Result<bool> {
        let rest = self.end - self.start;
        let want = self.fill.max(self.decoder.need());
        self.fill = (self.fill * 2).min(CHUNK);
        let take = (want.saturating_sub(rest).max(1) as u64).min(self.unread) as usize;
        let mut next = Vec::with_capacity(rest + take);
        next.extend_from_slice(self.window());
        let n = self.file.read_into(self.read_to, take, &mut next)?;
        if n == 0 {
            self.unread = 0;
        }
        let frozen = Buffer::from_vec(next);
        self.decoder.set_backing(Some(frozen.clone()));
        self.frozen = Some(frozen);
        self.start = 0;
        self.end = rest + n;
        self.read_to += n as u64;
        self.unread -= n as u64;
        Ok(true)
    }
}

/// Streams `RecordBatch`es from segment files. Also an arrow-rs `RecordBatchReader`.
pub struct LogReader<O = RecordColumns> {
    builder: ReaderBuilder,
    make: MakeOutput<O>,
    schema: SchemaRef,
    files: VecDeque<Planned>,
    current: Option<OpenFile<O>>,
    /// The file after `current`, already opened.
    ahead: Option<Ahead>,
    /// Partitions where reading stopped at a corrupt batch: their later segments are not read,
    /// as Kafka's recovery drops what follows a corruption.
    stopped_partitions: HashSet<Origin>,
    issues: Vec<Issue>,
    done: bool,
}

impl<O: Output> LogReader<O> {
    /// Opens the file after the current one, only where a store fetches ahead (an object
    /// store): a local file needs no head start. An error opening it is kept for the moment
    /// the file is read, as it would have come then.
    fn open_next(&mut self) {
        let Some(next) = self.files.front() else {
            return;
        };
        if self.builder.storage.local_path(&next.file.path).is_some() {
            return;
        }
        let segment = &next.file;
        self.ahead = Some(Ahead {
            path: segment.path.clone(),
            start: segment.start,
            end: segment.end,
            opened: open_range(self.builder.storage.as_ref(), segment),
        });
    }

    /// The schema of every batch this reader yields.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// What was passed over so far (torn tails, skipped batches, ...), emptied by each call.
    pub fn take_issues(&mut self) -> Vec<Issue> {
        std::mem::take(&mut self.issues)
    }

    fn collect_issues(&mut self) {
        if let Some(f) = &mut self.current {
            let path = &f.segment.path;
            for mut issue in f.decoder.take_issues() {
                issue.path = Some(path.clone());
                if issue.kind == IssueKind::Stopped {
                    self.stopped_partitions.insert(f.segment.origin.clone());
                }
                self.issues.push(issue);
            }
        }
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if self.current.is_none() {
                let Some(Planned {
                    file: segment,
                    bounds,
                }) = self.files.pop_front()
                else {
                    return Ok(None);
                };
                if segment.origin.topic.is_some()
                    && self.stopped_partitions.contains(&segment.origin)
                {
                    continue;
                }
                let ahead = self.ahead.take();
                self.current = Some(OpenFile::open(
                    segment,
                    bounds,
                    &self.builder,
                    self.make,
                    ahead,
                )?);
                self.open_next();
            }
            let f = self.current.as_mut().unwrap();
            let (window, decoder) = f.window_and_decoder();
            let decoded = decoder.decode(window);
            let consumed = f.settle(decoded)?;
            f.start += consumed;
            if f.decoder.is_full() {
                let batch = f.decoder.flush();
                self.collect_issues();
                if batch.is_some() {
                    return Ok(batch);
                }
                continue;
            }
            let at_end = f.decoder.is_stopped() || !f.fill()?;
            if at_end {
                let (window, decoder) = f.window_and_decoder();
                let finished = decoder.finish(window);
                f.settle(finished)?;
                let batch = f.decoder.flush();
                self.collect_issues();
                self.current = None;
                if batch.is_some() {
                    return Ok(batch);
                }
            }
        }
    }
}

impl<O: Output> Iterator for LogReader<O> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.collect_issues();
                Some(Err(e))
            }
        }
    }
}

/// For arrow-rs consumers; errors become `ArrowError::ExternalError` carrying our [`Error`].
pub struct ArrowReader(pub LogReader);

impl Iterator for ArrowReader {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0
            .next()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for ArrowReader {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
}

/// Decodes a buffer already in memory (a segment's bytes, or a Fetch response's `records`):
/// every batch, then what was passed over.
pub fn decode_bytes(
    builder: &ReaderBuilder,
    bytes: &[u8],
    origin: Origin,
) -> Result<(Vec<RecordBatch>, Vec<Issue>)> {
    drain(
        builder.decoder_for(record_columns, origin, FileBounds::all(), 0),
        bytes,
    )
}

/// [`decode_bytes`] of an owned buffer: with the `binary_view` option the columns point into
/// `buffer` rather than copy it.
pub fn decode_buffer(
    builder: &ReaderBuilder,
    buffer: Buffer,
    origin: Origin,
) -> Result<(Vec<RecordBatch>, Vec<Issue>)> {
    let mut decoder = builder.decoder_for(record_columns, origin, FileBounds::all(), 0);
    decoder.set_backing(Some(buffer.clone()));
    drain(decoder, &buffer)
}

/// Lists the batches of a buffer already in memory.
pub fn list_batches_in_bytes(
    builder: &ReaderBuilder,
    bytes: &[u8],
    origin: Origin,
) -> Result<(Vec<RecordBatch>, Vec<Issue>)> {
    drain(
        builder.decoder_for(batch_columns, origin, FileBounds::all(), 0),
        bytes,
    )
}

fn drain<O: Output>(
    mut decoder: Decoder<O>,
    bytes: &[u8],
) -> Result<(Vec<RecordBatch>, Vec<Issue>)> {
    let mut batches = Vec::new();
    let mut pos = 0usize;
    loop {
        pos += decoder.decode(&bytes[pos..])?;
        if decoder.is_full() {
            batches.extend(decoder.flush());
            continue;
        }
        decoder.finish(&bytes[pos..])?;
        batches.extend(decoder.flush());
        return Ok((batches, decoder.take_issues()));
    }
}
