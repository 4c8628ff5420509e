//! Reading segment files on several cores, in order.
//!
//! A cutter thread reads the files in order and cuts them into pieces, each a run of whole log
//! entries holding about one output batch of records; threads of a pool shared by the process
//! decode pieces into Arrow batches; the reader hands the batches out in piece order. Pieces
//! rather than whole files are the unit of work, so that one large segment, or a partition read
//! while the previous one is still being drained, keeps every core busy. The pool's threads
//! live as long as the process, so the memory their allocator holds is reused from one read to
//! the next instead of fresh pages being faulted in for every read.
//!
//! The output is exactly the records, issues and errors the sequential [`LogReader`] gives, in
//! the same order (only where output batches end may differ). What decoding one piece could
//! decide differently from reading straight through is kept from happening:
//! - a piece ends only after an entry whose size field frames it; where framing fails (a
//!   corrupt size, zeros, a torn tail) the cutter reads the rest of the file itself, exactly as
//!   the sequential reader does;
//! - once a piece stops (a corrupt batch under `on_corrupt="stop"`) or passes the end offset,
//!   the file's later pieces are dropped unread, and after a stop the partition's later files
//!   too.
//!
//! Memory stays bounded: at most `2 * threads` pieces (and their decoded batches) wait for the
//! reader. A pool thread never blocks: it decodes a whole piece and hands over the batches, so
//! readers sharing the pool cannot starve each other.

use super::decoder::{Decoder, Issue, IssueKind};
use super::reader::{LogReader, ReaderBuilder, SegmentFile};
use super::seek::Planned;
use crate::arrow::builder::Origin;
use crate::error::{catch_panic, Error, Result};
use crate::format::segment::{next_entry, Frame};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// The most bytes of segment in a piece, by default. Pieces are cut at about one output batch
/// of records; this bounds them where records are large.
pub const PIECE_BYTES: usize = 8 << 20;

/// Batches the cutter's own reading of a damaged file's rest may hold ahead of the reader.
const DEPTH: usize = 2;

enum Msg {
    Batch(RecordBatch),
    Issues(Vec<Issue>),
    /// The piece ended its file: it stopped at a corrupt batch or passed the end offset.
    EndsFile,
    Error(Error),
}

/// A piece, as the reader sees it: where its batches arrive.
struct Slot {
    file: usize,
    origin: Origin,
    messages: Receiver<Msg>,
}

/// Files (by index) and partitions whose remaining pieces nobody wants.
#[derive(Default)]
struct Finished {
    files: HashSet<usize>,
    partitions: HashSet<Origin>,
}

impl Finished {
    fn contains(&self, file: usize, origin: &Origin) -> bool {
        self.files.contains(&file) || (origin.topic.is_some() && self.partitions.contains(origin))
    }
}

pub struct ParallelReader {
    schema: SchemaRef,
    slots: Option<Receiver<Slot>>,
    current: Option<Slot>,
    finished: Arc<Mutex<Finished>>,
    issues: Vec<Issue>,
    cutter: Option<JoinHandle<()>>,
    done: bool,
}

impl ParallelReader {
    /// Reads `files` (planned, in order) on `threads` threads of the pool, in pieces of about
    /// one output batch and at most `piece_bytes`.
    pub fn new(
        builder: ReaderBuilder,
        files: Vec<Planned>,
        issues: Vec<Issue>,
        threads: usize,
        piece_bytes: usize,
    ) -> Self {
        let schema = builder.schema();
        let threads = threads.max(1);
        let pool = pool(threads);
        let (slot_tx, slot_rx) = sync_channel(threads * 2);
        let finished = Arc::new(Mutex::new(Finished::default()));
        static READS: AtomicU64 = AtomicU64::new(0);
        let cutter = Cutter {
            read: READS.fetch_add(1, Ordering::Relaxed),
            piece_rows: builder.batch_size(),
            builder: Arc::new(builder),
            slots: slot_tx,
            pool,
            finished: Arc::clone(&finished),
            piece_bytes: piece_bytes.max(1),
        };
        let cutter = std::thread::spawn(move || cutter.run(files));
        ParallelReader {
            schema,
            slots: Some(slot_rx),
            current: None,
            finished,
            issues,
            cutter: Some(cutter),
            done: false,
        }
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub fn take_issues(&mut self) -> Vec<Issue> {
        std::mem::take(&mut self.issues)
    }

    /// Stops all work: the cutter stops at its next piece; pieces being decoded are dropped
    /// when done.
    fn cancel(&mut self) {
        self.current = None;
        self.slots = None;
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if self.current.is_none() {
                let Some(slot) = self.slots.as_ref().and_then(|s| s.recv().ok()) else {
                    return Ok(None);
                };
                let unwanted = self
                    .finished
                    .lock()
                    .is_ok_and(|f| f.contains(slot.file, &slot.origin));
                if !unwanted {
                    self.current = Some(slot);
                }
                continue;
            }
            let slot = self.current.as_ref().unwrap();
            match slot.messages.recv() {
                Ok(Msg::Batch(batch)) => return Ok(Some(batch)),
                Ok(Msg::Issues(issues)) => {
                    let stopped = issues.iter().any(|i| i.kind == IssueKind::Stopped);
                    if stopped {
                        if let Ok(mut f) = self.finished.lock() {
                            f.files.insert(slot.file);
                            f.partitions.insert(slot.origin.clone());
                        }
                    }
                    self.issues.extend(issues);
                }
                Ok(Msg::EndsFile) => {
                    if let Ok(mut f) = self.finished.lock() {
                        f.files.insert(slot.file);
                    }
                }
                Ok(Msg::Error(err)) => return Err(err),
                // The piece is finished.
                Err(_) => self.current = None,
            }
        }
    }
}

type Task = Box<dyn FnOnce() + Send>;

/// The process's decoding threads: a queue of tasks and how many threads take from it.
struct Pool {
    tasks: Mutex<Sender<Task>>,
    queue: Arc<Mutex<Receiver<Task>>>,
    threads: Mutex<usize>,
}

/// The shared pool, with at least `threads` threads.
fn pool(threads: usize) -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let (tx, rx) = channel::<Task>();
        Pool {
            tasks: Mutex::new(tx),
            queue: Arc::new(Mutex::new(rx)),
            threads: Mutex::new(0),
        }
    });
    if let Ok(mut running) = pool.threads.lock() {
        while *running < threads {
            let queue = Arc::clone(&pool.queue);
            let spawned = std::thread::Builder::new()
                .name("kafkalog-decode".into())
                .spawn(move || loop {
                    let Some(task) = queue.lock().ok().and_then(|q| q.recv().ok()) else {
                        return;
                    };
                    task();
                });
            if spawned.is_err() {
                break; // fewer threads than asked for; the ones there still work
            }
            *running += 1;
        }
    }
    pool
}

impl Pool {
    fn submit(&self, task: Task) {
        if let Ok(tasks) = self.tasks.lock() {
            let _ = tasks.send(task);
        }
    }
}

/// Piece buffers no longer in use, kept for the next pieces (of this read or a later one) so
/// that the cutter does not fault in fresh pages for each.
static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Reads files in order, cuts them into pieces and queues them on the pool.
struct Cutter {
    /// Which read this is: pool threads keep one decoder per read.
    read: u64,
    builder: Arc<ReaderBuilder>,
    slots: SyncSender<Slot>,
    pool: &'static Pool,
    finished: Arc<Mutex<Finished>>,
    piece_bytes: usize,
    piece_rows: usize,
}

impl Cutter {
    fn run(self, files: Vec<Planned>) {
        for (index, planned) in files.into_iter().enumerate() {
            let file = Arc::new(planned);
            match catch_panic(|| self.cut(index, &file)) {
                Ok(true) => {}
                // The reader is gone.
                Ok(false) => return,
                Err(err) => {
                    // Handed over in order, like any piece; reading ends there.
                    let (tx, rx) = sync_channel(1);
                    let _ = tx.send(Msg::Error(err));
                    let _ = self.slot(index, &file, rx);
                    return;
                }
            }
        }
    }

    /// Hands the reader the next piece's messages; waits while enough pieces are ahead of it.
    /// False when the reader is gone.
    fn slot(&self, index: usize, file: &Planned, messages: Receiver<Msg>) -> bool {
        let slot = Slot {
            file: index,
            origin: file.0.origin.clone(),
            messages,
        };
        self.slots.send(slot).is_ok()
    }

    /// Queues a piece of whole entries; false when the reader is gone.
    fn queue(&self, index: usize, file: &Arc<Planned>, piece: Piece) -> bool {
        let (tx, rx) = channel();
        if !self.slot(index, file, rx) {
            return false;
        }
        let (builder, file, read) = (Arc::clone(&self.builder), Arc::clone(file), self.read);
        self.pool.submit(Box::new(move || {
            decode_piece(read, &builder, &file.0, &file, piece, &tx);
        }));
        true
    }

    fn unwanted(&self, index: usize, origin: &Origin) -> bool {
        self.finished
            .lock()
            .is_ok_and(|f| f.contains(index, origin))
    }

    /// Cuts one file into pieces. Returns false when the reader is gone.
    fn cut(&self, index: usize, file: &Arc<Planned>) -> Result<bool> {
        let segment: &SegmentFile = &file.0;
        let path = &segment.path;
        let mut f = File::open(path).map_err(|e| Error::io(e, path))?;
        let len = f.metadata().map_err(|e| Error::io(e, path))?.len();
        let end = segment.end.map_or(len, |e| e.min(len));
        let mut position = segment.start;
        if position > 0 {
            f.seek(SeekFrom::Start(position))
                .map_err(|e| Error::io(e, path))?;
        }
        // Bytes from `position` on, read but not yet queued.
        let mut buf = spare_buffer(self.piece_bytes);
        let mut need = 0usize;
        let mut eof = false;
        loop {
            if self.unwanted(index, &segment.origin) {
                return Ok(true);
            }
            let unread = end - position - buf.len() as u64;
            let want = self.piece_bytes.max(need);
            if buf.len() < want && unread > 0 && !eof {
                let take = ((want - buf.len()) as u64).min(unread);
                buf.reserve(take as usize);
                // Reads into the spare capacity: no zeroing first.
                let n = (&mut f)
                    .take(take)
                    .read_to_end(&mut buf)
                    .map_err(|e| Error::io(e, path))?;
                if (n as u64) < take {
                    eof = true; // shorter than it was: treat as its end
                }
            }
            let at_end = eof || position + buf.len() as u64 >= end;
            let (whole, framing) = frame(&buf, self.piece_bytes, self.piece_rows);
            match framing {
                Framing::Bad if whole == 0 => {
                    recycle(buf);
                    return Ok(self.read_rest(index, file, position));
                }
                Framing::Incomplete(n) if whole == 0 && !at_end => {
                    need = n;
                    continue;
                }
                _ => {}
            }
            let last = at_end && !matches!(framing, Framing::Bad);
            let mut next = spare_buffer(self.piece_bytes);
            if !last {
                next.extend_from_slice(&buf[whole..]);
                buf.truncate(whole);
            }
            let bytes = std::mem::replace(&mut buf, next);
            let piece_len = bytes.len() as u64;
            let piece = Piece {
                bytes,
                position,
                last,
            };
            if !self.queue(index, file, piece) {
                return Ok(false);
            }
            if last {
                recycle(buf);
                return Ok(true);
            }
            position += piece_len;
            need = 0;
        }
    }

    /// Reads the rest of a file from `position` as the sequential reader does, on this thread
    /// (it may be long, and it holds the reader's attention until done). False when the reader
    /// is gone.
    fn read_rest(&self, index: usize, file: &Arc<Planned>, position: u64) -> bool {
        let (tx, rx) = sync_channel(DEPTH);
        if !self.slot(index, file, rx) {
            return false;
        }
        let mut rest = file.0.clone();
        rest.start = position;
        let mut reader: LogReader = ReaderBuilder::clone(&self.builder)
            .build_planned(vec![(rest, file.1.clone())], Vec::new());
        loop {
            let next = reader.next();
            let issues = reader.take_issues();
            if !issues.is_empty() && tx.send(Msg::Issues(issues)).is_err() {
                return true; // the reader skipped this piece: go on with the next file
            }
            let sent = match next {
                None => return true,
                Some(Ok(batch)) => tx.send(Msg::Batch(batch)),
                Some(Err(err)) => {
                    let _ = tx.send(Msg::Error(err));
                    return true;
                }
            };
            if sent.is_err() {
                return true;
            }
        }
    }
}

fn spare_buffer(piece_bytes: usize) -> Vec<u8> {
    let found = SPARE.lock().ok().and_then(|mut s| s.pop());
    let mut buf = found.unwrap_or_else(|| Vec::with_capacity(piece_bytes));
    buf.clear();
    buf
}

/// Keeps a piece buffer for later, unless enough are kept or a large entry made it much
/// larger than a piece.
fn recycle(buf: Vec<u8>) {
    if buf.capacity() > 2 * PIECE_BYTES {
        return;
    }
    if let Ok(mut spare) = SPARE.lock() {
        if spare.len() < 8 {
            spare.push(buf);
        }
    }
}

/// Whole entries of a file, in memory, starting at `position`. `last`: they run to the end of
/// the file's range, and bytes after the last whole entry are its tail.
struct Piece {
    bytes: Vec<u8>,
    position: u64,
    last: bool,
}

enum Framing {
    /// Stopped at a limit or at the end of the bytes.
    Clean,
    /// The next entry needs this many bytes in all.
    Incomplete(usize),
    /// The next entry cannot be framed (a corrupt size, zeros).
    Bad,
}

/// How many bytes at the front of `buf` are whole entries, taking entries until at least
/// `max_bytes` bytes or about `max_rows` records are covered, and why it stopped there.
/// Records are counted from v2 headers; a v0/v1 message is one, and a compressed v0/v1 wrapper
/// is taken to hold one per 32 of its bytes.
fn frame(buf: &[u8], max_bytes: usize, max_rows: usize) -> (usize, Framing) {
    let (mut pos, mut rows) = (0, 0usize);
    while pos < max_bytes && rows < max_rows && pos < buf.len() {
        match next_entry(&buf[pos..]) {
            Ok(Frame::Entry(len)) => {
                rows += records_in(&buf[pos..pos + len]);
                pos += len;
            }
            Ok(Frame::Incomplete { need }) => return (pos, Framing::Incomplete(need)),
            Err(_) => return (pos, Framing::Bad),
        }
    }
    (pos, Framing::Clean)
}

/// About how many records a framed entry holds (see [`frame`]).
fn records_in(entry: &[u8]) -> usize {
    match entry.get(16) {
        Some(2) => entry.get(57..61).map_or(0, |c| {
            i32::from_be_bytes(c.try_into().unwrap()).max(0) as usize
        }),
        Some(_) if entry.get(17).is_some_and(|a| a & 0x07 != 0) => entry.len() / 32,
        _ => 1,
    }
}

thread_local! {
    /// The decoder this pool thread used last, with the read it belongs to: that read's next
    /// piece reuses it, so that its buffers start at their size rather than grow again.
    /// (Boxed: a shared library's static thread-local space is small.)
    static DECODER: RefCell<Option<Box<(u64, Decoder)>>> = const { RefCell::new(None) };
}

/// Decodes a whole piece and sends its batches (never waiting: the channel is unbounded, and
/// a piece holds about one batch).
fn decode_piece(
    read: u64,
    builder: &ReaderBuilder,
    segment: &SegmentFile,
    file: &Planned,
    piece: Piece,
    out: &Sender<Msg>,
) {
    DECODER.with_borrow_mut(|cached| {
        let origin = segment.origin.clone();
        let bounds = file.1.clone();
        let decoder = match cached {
            Some(c) if c.0 == read => {
                builder.restart_decoder(&mut c.1, origin, bounds, piece.position);
                &mut c.1
            }
            _ => {
                let d = builder.records_decoder(origin, bounds, piece.position);
                &mut cached.insert(Box::new((read, d))).1
            }
        };
        let decoded = catch_panic(|| Ok(decode_into(decoder, segment, &piece, out)));
        if let Err(err) = decoded {
            let _ = out.send(Msg::Error(err.with_path(&segment.path)));
            *cached = None; // its state is unknown
        }
    });
    recycle(piece.bytes);
}

/// A send that failed: the reader is gone or skipped the piece.
struct Gone;

fn decode_into(
    decoder: &mut Decoder,
    segment: &SegmentFile,
    piece: &Piece,
    out: &Sender<Msg>,
) -> Result<(), Gone> {
    let send = |msg: Msg| out.send(msg).map_err(|_| Gone);
    let send_issues = |decoder: &mut Decoder| {
        let mut issues = decoder.take_issues();
        if issues.is_empty() {
            return Ok(());
        }
        for issue in &mut issues {
            issue.path = Some(segment.path.clone());
        }
        send(Msg::Issues(issues))
    };
    let bytes = &piece.bytes;
    let mut pos = 0;
    loop {
        match decoder.decode(&bytes[pos..]) {
            Ok(n) => pos += n,
            Err(err) => return send(Msg::Error(err.with_path(&segment.path))),
        }
        if decoder.is_full() {
            let batch = decoder.flush();
            send_issues(decoder)?;
            if let Some(batch) = batch {
                send(Msg::Batch(batch))?;
            }
            continue;
        }
        if piece.last {
            decoder.finish(&bytes[pos..]);
        }
        let batch = decoder.flush();
        send_issues(decoder)?;
        if let Some(batch) = batch {
            send(Msg::Batch(batch))?;
        }
        if decoder.is_stopped() {
            send(Msg::EndsFile)?;
        }
        return Ok(());
    }
}

impl Iterator for ParallelReader {
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
                self.cancel();
                Some(Err(e))
            }
        }
    }
}

impl Drop for ParallelReader {
    fn drop(&mut self) {
        self.cancel();
        if let Some(cutter) = self.cutter.take() {
            let _ = cutter.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::decoder::OnCorrupt;
    use crate::arrow::schema::Column;
    use crate::format::batch::TimestampType;
    use crate::format::compression::Compression;
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use arrow_array::{Array, BinaryArray, Int64Array};
    use std::path::{Path, PathBuf};

    /// A v2 segment of `batches` batches of 7 records each, values "v<offset>".
    fn segment(base: i64, batches: i64) -> Vec<u8> {
        let mut out = Vec::new();
        for b in 0..batches {
            let mut records = Vec::new();
            for i in 0..7 {
                let v = format!("v{}", base + b * 7 + i);
                write_record(
                    &mut records,
                    i as i32,
                    i,
                    None,
                    Some(v.as_bytes()),
                    std::iter::empty(),
                );
            }
            let header = BatchHeader {
                base_offset: base + b * 7,
                partition_leader_epoch: 0,
                compression: if b % 3 == 0 {
                    Compression::Lz4
                } else {
                    Compression::None
                },
                timestamp_type: TimestampType::CreateTime,
                is_transactional: false,
                is_control: false,
                delete_horizon: false,
                last_offset_delta: 6,
                base_timestamp: 1_000,
                max_timestamp: 1_006,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
            };
            write_batch(&mut out, &header, &records, 7, None).unwrap();
        }
        out
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir()
                .join(format!("kafkalog-parallel-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("t-0")).unwrap();
            Dir(dir)
        }

        fn write(&self, base: i64, bytes: &[u8]) -> PathBuf {
            let path = self.0.join("t-0").join(format!("{base:020}.log"));
            std::fs::write(&path, bytes).unwrap();
            path
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    type Rows = Vec<(i64, Option<Vec<u8>>)>;
    type Seen = (
        Rows,
        Vec<(IssueKind, u64, Option<i64>, u64)>,
        Option<String>,
    );

    fn collect(batches: impl Iterator<Item = Result<RecordBatch>>) -> (Rows, Option<String>) {
        let mut rows = Vec::new();
        for batch in batches {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => return (rows, Some(e.to_string())),
            };
            let offsets = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            let values = batch
                .column(1)
                .as_any()
                .downcast_ref::<BinaryArray>()
                .unwrap();
            for i in 0..batch.num_rows() {
                let value = values.is_valid(i).then(|| values.value(i).to_vec());
                rows.push((offsets.value(i), value));
            }
        }
        (rows, None)
    }

    fn issues(issues: Vec<Issue>) -> Vec<(IssueKind, u64, Option<i64>, u64)> {
        issues
            .into_iter()
            .map(|i| (i.kind, i.position, i.offset, i.bytes))
            .collect()
    }

    fn builder(on_corrupt: OnCorrupt, start: i64, end: Option<i64>) -> ReaderBuilder {
        ReaderBuilder::new()
            .with_projection(
                crate::arrow::schema::Projection::new(vec![Column::Offset, Column::Value]).unwrap(),
            )
            .with_on_corrupt(on_corrupt)
            .with_batch_size(50)
            .with_bounds(crate::arrow::seek::Bounds {
                start_offset: (start > i64::MIN).then_some(start),
                end_offset: end,
                ..Default::default()
            })
    }

    fn planned(builder: &ReaderBuilder, paths: &[&Path]) -> (Vec<Planned>, Vec<Issue>) {
        let files = paths
            .iter()
            .map(|p| {
                SegmentFile::new(
                    p.to_path_buf(),
                    Origin {
                        topic: Some("t".into()),
                        partition: Some(0),
                    },
                )
            })
            .collect();
        builder.plan(files).unwrap()
    }

    fn sequential(builder: &ReaderBuilder, paths: &[&Path]) -> Seen {
        let (files, noted) = planned(builder, paths);
        let mut reader = builder.clone().build_planned(files, noted);
        let (rows, error) = collect(&mut reader);
        (rows, issues(reader.take_issues()), error)
    }

    fn parallel(builder: &ReaderBuilder, paths: &[&Path], piece: usize) -> Seen {
        let (files, noted) = planned(builder, paths);
        let mut reader = ParallelReader::new(builder.clone(), files, noted, 2, piece);
        let (rows, error) = collect(&mut reader);
        (rows, issues(reader.take_issues()), error)
    }

    /// Every piece size, from smaller than one entry to the whole file, every policy. Returns
    /// what the sequential reader saw, per policy (error, skip, stop).
    fn same_in_parallel(
        name: &str,
        first: &[u8],
        second: &[u8],
        start: i64,
        end: Option<i64>,
    ) -> Vec<Seen> {
        let dir = Dir::new(name);
        let a = dir.write(0, first);
        let b = dir.write(1_000_000, second);
        let mut seen = Vec::new();
        for policy in [OnCorrupt::Error, OnCorrupt::Skip, OnCorrupt::Stop] {
            let builder = builder(policy, start, end);
            let expected = sequential(&builder, &[&a, &b]);
            for piece in [1, 100, 333, 1000, 4096, 1 << 20] {
                let got = parallel(&builder, &[&a, &b], piece);
                let case = format!("{name}, {policy:?}, pieces of {piece} bytes");
                assert_eq!(got.1, expected.1, "issues: {case}");
                assert_eq!(got.2, expected.2, "error: {case}");
                if expected.2.is_none() {
                    assert!(got.0 == expected.0, "rows: {case}");
                } else {
                    // Rows before an error are those of the batches finished before it, and
                    // where batches end differs.
                    let n = got.0.len().min(expected.0.len());
                    assert!(got.0[..n] == expected.0[..n], "rows: {case}");
                }
            }
            seen.push(expected);
        }
        seen
    }

    fn kinds(seen: &Seen) -> Vec<IssueKind> {
        seen.1.iter().map(|i| i.0).collect()
    }

    #[test]
    fn clean_segments() {
        let seen = same_in_parallel(
            "clean",
            &segment(0, 60),
            &segment(1_000_000, 40),
            i64::MIN,
            None,
        );
        assert_eq!(seen[0].0.len(), 700);
        assert!(seen[0].1.is_empty() && seen[0].2.is_none());
    }

    #[test]
    fn offset_bounds() {
        let (a, b) = (segment(0, 60), segment(1_000_000, 40));
        let seen = same_in_parallel("bounds", &a, &b, 100, Some(300));
        assert_eq!(seen[0].0.len(), 200);
        let seen = same_in_parallel("bounds2", &a, &b, 350, Some(1_000_050));
        assert_eq!(seen[0].0.len(), 120);
    }

    #[test]
    fn corrupt_batch_inside_a_piece() {
        let mut a = segment(0, 60);
        let at = a.len() / 2;
        a[at] ^= 0x40; // a CRC mismatch, or a broken record
        let seen = same_in_parallel("crc", &a, &segment(1_000_000, 40), i64::MIN, None);
        assert!(seen[0].2.is_some());
        assert_eq!(kinds(&seen[1]), [IssueKind::SkippedBatch]);
        assert_eq!(kinds(&seen[2]), [IssueKind::Stopped]);
        assert_eq!(seen[1].0.len(), 693);
        assert_eq!(
            seen[2].0.len(),
            210,
            "the partition's later segment is not read"
        );
    }

    #[test]
    fn broken_size_field() {
        let mut a = segment(0, 60);
        // The size field of the 20th entry: framing fails there.
        let mut pos = 0;
        for _ in 0..20 {
            let size = i32::from_be_bytes(a[pos + 8..pos + 12].try_into().unwrap());
            pos += 12 + size as usize;
        }
        a[pos + 8..pos + 12].copy_from_slice(&3i32.to_be_bytes());
        let seen = same_in_parallel("size", &a, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[1]), [IssueKind::Stopped]);
        assert_eq!(seen[1].0.len(), 140);
        a[pos + 8..pos + 12].copy_from_slice(&i32::MAX.to_be_bytes());
        let seen = same_in_parallel("huge", &a, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[0]), [IssueKind::TornTail]);
    }

    #[test]
    fn torn_and_zero_tails() {
        let a = segment(0, 60);
        let torn = &a[..a.len() - 25];
        let seen = same_in_parallel("torn", torn, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[0]), [IssueKind::TornTail]);
        let short = &a[..a.len() - (a.len() - 12 * 7) % 200]; // a few bytes of an entry
        same_in_parallel("short", short, &segment(1_000_000, 4), i64::MIN, None);
        let mut zeros = a.clone();
        zeros.extend(std::iter::repeat_n(0u8, 5000));
        let seen = same_in_parallel("zeros", &zeros, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[0]), [IssueKind::ZeroTail]);
        let mut zeros_then_data = a[..a.len() / 2].to_vec();
        zeros_then_data.extend(std::iter::repeat_n(0u8, 300));
        zeros_then_data.extend_from_slice(&a[a.len() / 2..]);
        let seen = same_in_parallel("zeros-data", &zeros_then_data, &[], i64::MIN, None);
        assert_eq!(kinds(&seen[2]), [IssueKind::Stopped]);
    }

    #[test]
    fn missing_file_is_the_same_error() {
        let dir = Dir::new("missing");
        let a = dir.write(0, &segment(0, 30));
        let gone = dir.0.join("t-0").join("00000000000000000999.log");
        let builder = builder(OnCorrupt::Error, i64::MIN, None);
        let expected = sequential(&builder, &[&a, &gone]);
        assert!(expected.2.is_some());
        assert_eq!(parallel(&builder, &[&a, &gone], 500), expected);
    }

    #[test]
    fn an_abandoned_reader_stops_its_threads() {
        let dir = Dir::new("abandon");
        let a = dir.write(0, &segment(0, 300));
        let builder = builder(OnCorrupt::Error, i64::MIN, None);
        for _ in 0..20 {
            let (files, noted) = planned(&builder, &[&a]);
            let mut reader = ParallelReader::new(builder.clone(), files, noted, 2, 200);
            assert!(reader.next().unwrap().is_ok());
            drop(reader); // joins its threads: returning at all is the test
        }
    }
}
