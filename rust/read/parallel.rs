//! Reading segment files on several cores, in order.
//!
//! The files are cut, in order, into pieces: runs of whole log entries holding about one
//! output batch of records. A piece is read by the thread that then decodes it, so its bytes
//! are still in that core's cache: threads of a pool shared by the process take turns reading
//! the next piece (under a lock, which keeps pieces in file order) and decode in parallel. The
//! reader hands out the batches in piece order. Pieces rather than whole files are the unit of
//! work, so that one large segment, or a partition read while the previous one is still being
//! drained, keeps every core busy. The pool's threads live as long as the process, so the
//! memory their allocator holds is reused from one read to the next.
//!
//! The output is exactly the records, issues and errors the sequential [`LogReader`] gives, in
//! the same order (only where output batches end may differ). What decoding one piece could
//! decide differently from reading straight through is kept from happening:
//! - a piece ends only after an entry whose size field frames it; where framing fails (a
//!   corrupt size, zeros, a torn tail) the reader reads the rest of the file itself, exactly as
//!   the sequential reader does;
//! - once a piece stops (a corrupt batch under `on_corrupt="stop"`) or passes the end offset,
//!   the file's later pieces are dropped unread, and after a stop the partition's later files
//!   too.
//!
//! Memory stays bounded: at most `2 * threads` pieces (and their decoded batches) are ahead of
//! the reader. A pool thread never waits on the reader: it decodes a whole piece and hands over
//! the batches, so readers sharing the pool cannot starve each other.

use crate::arrow::decoder::Decoder;
use crate::error::{catch_panic, Error, Result};
use crate::format::batch::entry_magic;
use crate::format::segment::{next_entry, Frame};
use crate::log::bounds::Planned;
use crate::log::discover::SegmentFile;
use crate::log::issues::{Issue, IssueKind};
use crate::log::origin::Origin;
use crate::read::reader::{LogReader, ReaderBuilder};
use crate::storage::{Mapped, Object, Storage};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

/// The most bytes of segment in a piece, by default. Pieces are cut at about one output batch
/// of records; this bounds them where records are large.
pub const PIECE_BYTES: usize = 8 << 20;

enum Msg {
    Batch(RecordBatch),
    Issues(Vec<Issue>),
    /// The piece ended its file: it stopped at a corrupt batch or passed the end offset.
    EndsFile,
    Error(Error),
}

/// What comes next, in reading order.
enum Next {
    /// A piece being decoded: its batches arrive here.
    Piece(Receiver<Msg>),
    /// The rest of a file from a position where framing failed, for the reader to read as the
    /// sequential reader does.
    Rest(Arc<Planned>, u64),
    /// Opening or reading a file failed; reading ends there.
    Error(Error),
    /// Every file is cut.
    End,
}

struct Slot {
    file: usize,
    origin: Origin,
    next: Next,
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

/// What the pool threads of one read share.
struct Shared {
    /// Which read this is: pool threads keep one decoder per read.
    read: u64,
    builder: ReaderBuilder,
    piece_bytes: usize,
    piece_rows: usize,
    finished: Mutex<Finished>,
    cutting: Mutex<Cutting>,
    /// Where slots go, in order (sent while `cutting` is held).
    slots: Sender<Slot>,
}

/// The files still to cut, and the one being cut.
struct Cutting {
    files: VecDeque<(usize, Arc<Planned>)>,
    open: Option<Open>,
    done: bool,
}

struct Open {
    index: usize,
    file: Arc<Planned>,
    handle: Box<dyn Object>,
    /// End of the range to read.
    end: u64,
    /// Position of the first byte not yet in a piece.
    position: u64,
    /// Bytes from `position` on, read but not yet in a piece.
    carry: Vec<u8>,
    eof: bool,
    /// A local file's map: pieces are then ranges of it, read by the decoders in place.
    map: Option<Mapped>,
}

/// Reads segment files on the pool's threads; an iterator of batches in reading order.
pub struct ParallelReader {
    schema: SchemaRef,
    shared: Arc<Shared>,
    slots: Receiver<Slot>,
    pool: &'static Pool,
    /// Pieces asked of the pool and not yet taken by the reader.
    ahead: usize,
    limit: usize,
    /// Every file is cut: ask for no more.
    cut: bool,
    current: Option<Current>,
    issues: Vec<Issue>,
    done: bool,
}

enum Current {
    Piece {
        file: usize,
        origin: Origin,
        messages: Receiver<Msg>,
    },
    Rest {
        file: usize,
        origin: Origin,
        reader: Box<LogReader>,
    },
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
        static READS: AtomicU64 = AtomicU64::new(0);
        let threads = threads.max(1);
        let (tx, rx) = channel();
        let shared = Shared {
            read: READS.fetch_add(1, Ordering::Relaxed),
            piece_rows: builder.batch_size(),
            builder,
            piece_bytes: piece_bytes.max(1),
            finished: Mutex::new(Finished::default()),
            cutting: Mutex::new(Cutting {
                files: files.into_iter().map(Arc::new).enumerate().collect(),
                open: None,
                done: false,
            }),
            slots: tx,
        };
        ParallelReader {
            schema: shared.builder.schema(),
            shared: Arc::new(shared),
            slots: rx,
            pool: pool(threads),
            ahead: 0,
            limit: 2 * threads,
            cut: false,
            current: None,
            issues,
            done: false,
        }
    }

    /// The schema of every batch this reader yields.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// What the reads passed over so far (torn tails, skipped batches), in file order.
    pub fn take_issues(&mut self) -> Vec<Issue> {
        std::mem::take(&mut self.issues)
    }

    /// Stops all work: nothing more is cut; pieces being decoded are dropped when done.
    fn cancel(&mut self) {
        self.current = None;
        if let Ok(mut cutting) = self.shared.cutting.lock() {
            cutting.done = true;
        }
    }

    fn finish_file(&self, file: usize, partition: Option<&Origin>) {
        if let Ok(mut f) = self.shared.finished.lock() {
            f.files.insert(file);
            if let Some(origin) = partition {
                f.partitions.insert(origin.clone());
            }
        }
    }

    fn note(&mut self, file: usize, origin: &Origin, issues: Vec<Issue>) {
        if issues.iter().any(|i| i.kind == IssueKind::Stopped) {
            self.finish_file(file, Some(origin));
        }
        self.issues.extend(issues);
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            match self.current.take() {
                None => {
                    while !self.cut && self.ahead < self.limit {
                        let shared = Arc::clone(&self.shared);
                        self.pool.submit(Box::new(move || cut_and_decode(&shared)));
                        self.ahead += 1;
                    }
                    let Ok(slot) = self.slots.recv() else {
                        return Ok(None);
                    };
                    self.ahead -= 1;
                    let unwanted = self
                        .shared
                        .finished
                        .lock()
                        .is_ok_and(|f| f.contains(slot.file, &slot.origin));
                    let (file, origin) = (slot.file, slot.origin);
                    match slot.next {
                        Next::End => {
                            self.cut = true;
                            if self.ahead == 0 {
                                return Ok(None);
                            }
                        }
                        Next::Error(err) => return Err(err),
                        _ if unwanted => {}
                        Next::Piece(messages) => {
                            self.current = Some(Current::Piece {
                                file,
                                origin,
                                messages,
                            })
                        }
                        Next::Rest(planned, position) => {
                            let mut rest = planned.as_ref().clone();
                            rest.file.start = position;
                            let reader = self
                                .shared
                                .builder
                                .clone()
                                .build_planned(vec![rest], Vec::new());
                            self.current = Some(Current::Rest {
                                file,
                                origin,
                                reader: Box::new(reader),
                            });
                        }
                    }
                }
                Some(Current::Piece {
                    file,
                    origin,
                    messages,
                }) => {
                    // A closed channel: the piece is finished.
                    if let Ok(msg) = messages.recv() {
                        let batch = match msg {
                            Msg::Batch(batch) => Some(batch),
                            Msg::Issues(issues) => {
                                self.note(file, &origin, issues);
                                None
                            }
                            Msg::EndsFile => {
                                self.finish_file(file, None);
                                None
                            }
                            Msg::Error(err) => return Err(err),
                        };
                        self.current = Some(Current::Piece {
                            file,
                            origin,
                            messages,
                        });
                        if batch.is_some() {
                            return Ok(batch);
                        }
                    }
                }
                Some(Current::Rest {
                    file,
                    origin,
                    mut reader,
                }) => {
                    let next = reader.next();
                    let issues = reader.take_issues();
                    self.note(file, &origin, issues);
                    match next {
                        None => {}
                        Some(Err(err)) => return Err(err),
                        Some(Ok(batch)) => {
                            self.current = Some(Current::Rest {
                                file,
                                origin,
                                reader,
                            });
                            return Ok(Some(batch));
                        }
                    }
                }
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
/// that reading does not fault in fresh pages for each.
static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A pool task: takes its turn at cutting the next piece, hands the reader its slot, then
/// decodes the piece.
fn cut_and_decode(shared: &Shared) {
    let work = {
        let Ok(mut cutting) = shared.cutting.lock() else {
            return;
        };
        let (slot, work) = match catch_panic(|| Ok(cut_next(shared, &mut cutting))) {
            Ok(found) => found,
            Err(err) => {
                cutting.done = true;
                let slot = Slot {
                    file: usize::MAX,
                    origin: Origin::default(),
                    next: Next::Error(err),
                };
                (slot, None)
            }
        };
        if shared.slots.send(slot).is_err() {
            cutting.done = true; // the reader is gone
            None
        } else {
            work
        }
    };
    if let Some((piece, file, out)) = work {
        decode_piece(shared, &file, piece, &out);
    }
}

/// A piece to decode, with its file and where its batches go.
type Work = Option<(Piece, Arc<Planned>, Sender<Msg>)>;

fn slot(index: usize, file: &Planned, next: Next) -> Slot {
    Slot {
        file: index,
        origin: file.file.origin.clone(),
        next,
    }
}

fn end_slot() -> Slot {
    Slot {
        file: usize::MAX,
        origin: Origin::default(),
        next: Next::End,
    }
}

/// Cuts the next piece: its slot for the reader, and the piece to decode (none for the end,
/// an error, or the rest of a damaged file, which the reader reads itself).
fn cut_next(shared: &Shared, cutting: &mut Cutting) -> (Slot, Work) {
    let unwanted = |index: usize, origin: &Origin| {
        shared
            .finished
            .lock()
            .is_ok_and(|f| f.contains(index, origin))
    };
    loop {
        if cutting.done {
            return (end_slot(), None);
        }
        let open = match cutting.open.take() {
            Some(open) => open,
            None => {
                let Some((index, file)) = cutting.files.pop_front() else {
                    cutting.done = true;
                    return (end_slot(), None);
                };
                if unwanted(index, &file.file.origin) {
                    continue;
                }
                match Open::new(shared.builder.storage().as_ref(), index, Arc::clone(&file)) {
                    Ok(open) => open,
                    Err(err) => {
                        cutting.done = true;
                        return (slot(index, &file, Next::Error(err)), None);
                    }
                }
            }
        };
        let mut open = open;
        if unwanted(open.index, &open.file.file.origin) {
            continue; // its later pieces are dropped unread
        }
        match next_piece(shared, &mut open) {
            Err(err) => {
                cutting.done = true;
                return (slot(open.index, &open.file, Next::Error(err)), None);
            }
            Ok(Cut::Rest(position)) => {
                let next = Next::Rest(Arc::clone(&open.file), position);
                return (slot(open.index, &open.file, next), None);
            }
            Ok(Cut::Piece(piece)) => {
                let (tx, rx) = channel();
                let piece_slot = slot(open.index, &open.file, Next::Piece(rx));
                let file = Arc::clone(&open.file);
                if !piece.last {
                    cutting.open = Some(open);
                }
                return (piece_slot, Some((piece, file, tx)));
            }
        }
    }
}

impl Open {
    fn new(storage: &dyn Storage, index: usize, file: Arc<Planned>) -> Result<Open> {
        let segment: &SegmentFile = &file.file;
        let mut handle = storage.open(&segment.path)?;
        let len = handle.len();
        let end = segment.end.map_or(len, |e| e.min(len));
        let position = segment.start;
        handle.will_read(position..end);
        let map = handle.mapped();
        Ok(Open {
            index,
            handle,
            end,
            position,
            carry: Vec::new(),
            eof: false,
            file,
            map,
        })
    }
}

enum Cut {
    Piece(Piece),
    /// Framing failed at this position.
    Rest(u64),
}

/// Reads and frames the next piece of an open file.
fn next_piece(shared: &Shared, open: &mut Open) -> Result<Cut> {
    if let Some(map) = &open.map {
        return Ok(
            next_mapped_piece(shared, open.position, open.end, map).map_or(
                Cut::Rest(open.position),
                |piece| {
                    open.position += piece.bytes.len() as u64;
                    Cut::Piece(piece)
                },
            ),
        );
    }
    let mut buf = spare_buffer(shared.piece_bytes);
    buf.extend_from_slice(&open.carry);
    open.carry.clear();
    let mut need = 0usize;
    loop {
        let read_to = open.position + buf.len() as u64;
        let unread = open.end.saturating_sub(read_to);
        let want = shared.piece_bytes.max(need);
        if buf.len() < want && unread > 0 && !open.eof {
            let take = ((want - buf.len()) as u64).min(unread);
            let n = open.handle.read_into(read_to, take as usize, &mut buf)?;
            if (n as u64) < take {
                open.eof = true; // shorter than it was: treat as its end
            }
        }
        let at_end = open.eof || open.position + buf.len() as u64 >= open.end;
        let (whole, framing) = frame(&buf, shared.piece_bytes, shared.piece_rows);
        match framing {
            Framing::Bad if whole == 0 => {
                recycle(buf);
                return Ok(Cut::Rest(open.position));
            }
            Framing::Incomplete(n) if whole == 0 && !at_end => {
                need = n;
                continue;
            }
            _ => {}
        }
        let last = at_end && !matches!(framing, Framing::Bad);
        if !last {
            open.carry.extend_from_slice(&buf[whole..]);
            buf.truncate(whole);
        }
        let piece = Piece {
            position: open.position,
            last,
            bytes: Bytes::Read(buf),
        };
        open.position += piece.bytes.len() as u64;
        return Ok(Cut::Piece(piece));
    }
}

/// The next piece of a mapped file: whole entries from `position`, up to the end of the range
/// when they run to it. None when framing fails right at `position`.
fn next_mapped_piece(shared: &Shared, position: u64, end: u64, map: &Mapped) -> Option<Piece> {
    let from = position.min(end) as usize;
    let (whole, framing) = frame(
        &map.bytes()[from..end as usize],
        shared.piece_bytes,
        shared.piece_rows,
    );
    if whole == 0 && matches!(framing, Framing::Bad) {
        return None;
    }
    // The whole range is at hand: an incomplete entry is the file's tail.
    let last = match framing {
        Framing::Bad => false,
        Framing::Incomplete(_) => true,
        Framing::Clean => from + whole == end as usize,
    };
    let to = if last { end as usize } else { from + whole };
    Some(Piece {
        bytes: Bytes::Mapped(map.clone(), from..to),
        position,
        last,
    })
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

/// A piece's bytes: read into a buffer, or a range of a file's map. With `binary_view` a read
/// buffer becomes an Arrow buffer (`Owned`) that the columns point into.
enum Bytes {
    Read(Vec<u8>),
    Owned(arrow_buffer::Buffer),
    Mapped(Mapped, std::ops::Range<usize>),
}

impl Bytes {
    /// For `binary_view`: the bytes as the owned buffer they lie in, which the columns may
    /// point into (a read buffer is handed over, not copied; a map is shared whole).
    fn backing(&mut self) -> arrow_buffer::Buffer {
        match self {
            Bytes::Read(buf) => {
                let owned = arrow_buffer::Buffer::from_vec(std::mem::take(buf));
                *self = Bytes::Owned(owned.clone());
                owned
            }
            Bytes::Owned(buffer) => buffer.clone(),
            Bytes::Mapped(map, _) => map.buffer(),
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(buf) => buf,
            Bytes::Owned(buffer) => buffer,
            Bytes::Mapped(map, range) => &map.bytes()[range.clone()],
        }
    }
}

/// Whole entries of a file, in memory, starting at `position`. `last`: they run to the end of
/// the file's range, and bytes after the last whole entry are its tail.
struct Piece {
    bytes: Bytes,
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
    use crate::format::{legacy, v2};
    let at = |offset: usize, len: usize| entry.get(offset..offset + len);
    match entry_magic(entry) {
        Ok(2) => at(v2::RECORDS_COUNT_OFFSET, 4).map_or(0, |c| {
            i32::from_be_bytes(c.try_into().unwrap()).max(0) as usize
        }),
        Ok(_)
            if at(legacy::ATTRIBUTES_OFFSET, 1)
                .is_some_and(|a| a[0] & legacy::ATTR_COMPRESSION_MASK != 0) =>
        {
            entry.len() / 32
        }
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
fn decode_piece(shared: &Shared, file: &Planned, mut piece: Piece, out: &Sender<Msg>) {
    let segment = &file.file;
    let views = shared.builder.binary_view();
    DECODER.with_borrow_mut(|cached| {
        let origin = segment.origin.clone();
        let bounds = file.bounds.clone();
        let decoder = match cached {
            Some(c) if c.0 == shared.read => {
                shared
                    .builder
                    .restart_decoder(&mut c.1, origin, bounds, piece.position);
                &mut c.1
            }
            _ => {
                let d = shared
                    .builder
                    .records_decoder(origin, bounds, piece.position);
                &mut cached.insert(Box::new((shared.read, d))).1
            }
        };
        if views {
            decoder.set_backing(Some(piece.bytes.backing()));
        }
        let decoded = catch_panic(|| Ok(decode_into(decoder, segment, &piece, out)));
        if views {
            // The cached decoder must not keep the piece's buffer (or map) alive.
            decoder.set_backing(None);
        }
        if let Err(err) = decoded {
            let _ = out.send(Msg::Error(err.with_path(&segment.path)));
            *cached = None; // its state is unknown
        }
    });
    if let Bytes::Read(buf) = piece.bytes {
        recycle(buf);
    }
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
    // A truncation under the map makes what was decoded from it untrustworthy: it comes first.
    let truncated = || match &piece.bytes {
        Bytes::Mapped(map, _) => map.check().err(),
        Bytes::Read(_) | Bytes::Owned(_) => None,
    };
    let bytes = &piece.bytes;
    let mut pos = 0;
    loop {
        let decoded = decoder.decode(&bytes[pos..]);
        if let Some(err) = truncated() {
            return send(Msg::Error(err));
        }
        match decoded {
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
            if let Some(err) = truncated() {
                return send(Msg::Error(err));
            }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::schema::Column;
    use crate::format::batch::TimestampType;
    use crate::format::compression::Compression;
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use crate::log::issues::OnCorrupt;
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
            .with_bounds(crate::log::bounds::Bounds {
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
