//! The pieces a parallel read is cut into, and their decoding on a pool thread: runs of whole
//! log entries of one file, about one output batch of records each, cut in file order under a
//! lock and decoded where they were read (see [`crate::read::parallel`]).

use crate::arrow::decoder::Decoder;
use crate::error::{catch_panic, Error, Result};
use crate::format::batch::entry_magic;
use crate::format::segment::{next_entry, Frame};
use crate::log::bounds::Planned;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::log::origin::Origin;
use crate::read::reader::ReaderBuilder;
use crate::storage::{Mapped, Object, Storage};
use arrow_array::RecordBatch;
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// The most bytes of segment in a piece, by default. Pieces are cut at about one output batch
/// of records; this bounds them where records are large.
pub const PIECE_BYTES: usize = 8 << 20;

pub(super) enum Msg {
    Batch(RecordBatch),
    Issues(Vec<Issue>),
    /// The piece ended its file: it stopped at a corrupt batch or passed the end offset.
    EndsFile,
    Error(Error),
}

/// What comes next, in reading order.
pub(super) enum Next {
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

pub(super) struct Slot {
    pub(super) file: usize,
    pub(super) origin: Origin,
    pub(super) next: Next,
}

/// Files (by index) and partitions whose remaining pieces nobody wants.
#[derive(Default)]
pub(super) struct Finished {
    pub(super) files: HashSet<usize>,
    pub(super) partitions: HashSet<Origin>,
}

impl Finished {
    pub(super) fn contains(&self, file: usize, origin: &Origin) -> bool {
        self.files.contains(&file) || (origin.topic.is_some() && self.partitions.contains(origin))
    }
}

/// What the pool threads of one read share.
pub(super) struct Shared {
    /// Which read this is: pool threads keep one decoder per read.
    pub(super) read: u64,
    pub(super) builder: ReaderBuilder,
    pub(super) piece_bytes: usize,
    pub(super) piece_rows: usize,
    pub(super) finished: Mutex<Finished>,
    pub(super) cutting: Mutex<Cutting>,
    /// Where slots go, in order (sent while `cutting` is held).
    pub(super) slots: Sender<Slot>,
}

/// The files still to cut, and the one being cut.
pub(super) struct Cutting {
    pub(super) files: VecDeque<(usize, Arc<Planned>)>,
    pub(super) open: Option<Open>,
    pub(super) done: bool,
}

pub(super) struct Open {
    pub(super) index: usize,
    pub(super) file: Arc<Planned>,
    pub(super) handle: Box<dyn Object>,
    /// End of the range to read.
    pub(super) end: u64,
    /// Position of the first byte not yet in a piece.
    pub(super) position: u64,
    /// Bytes from `position` on, read but not yet in a piece.
    pub(super) carry: Vec<u8>,
    pub(super) eof: bool,
    /// A local file's map: pieces are then ranges of it, read by the decoders in place.
    pub(super) map: Option<Mapped>,
}

/// Piece buffers no longer in use, kept for the next pieces (of this read or a later one) so
/// that reading does not fault in fresh pages for each.
pub(super) static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A pool task: takes its turn at cutting the next piece, hands the reader its slot, then
/// decodes the piece.
pub(super) fn cut_and_decode(shared: &Shared) {
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
pub(super) type Work = Option<(Piece, Arc<Planned>, Sender<Msg>)>;

pub(super) fn slot(index: usize, file: &Planned, next: Next) -> Slot {
    Slot {
        file: index,
        origin: file.file.origin.clone(),
        next,
    }
}

pub(super) fn end_slot() -> Slot {
    Slot {
        file: usize::MAX,
        origin: Origin::default(),
        next: Next::End,
    }
}

/// Cuts the next piece: its slot for the reader, and the piece to decode (none for the end,
/// an error, or the rest of a damaged file, which the reader reads itself).
pub(super) fn cut_next(shared: &Shared, cutting: &mut Cutting) -> (Slot, Work) {
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

pub(super) enum Cut {
    Piece(Piece),
    /// Framing failed at this position.
    Rest(u64),
}

/// Reads and frames the next piece of an open file.
pub(super) fn next_piece(shared: &Shared, open: &mut Open) -> Result<Cut> {
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
pub(super) fn next_mapped_piece(
    shared: &Shared,
    position: u64,
    end: u64,
    map: &Mapped,
) -> Option<Piece> {
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

pub(super) fn spare_buffer(piece_bytes: usize) -> Vec<u8> {
    let found = SPARE.lock().ok().and_then(|mut s| s.pop());
    let mut buf = found.unwrap_or_else(|| Vec::with_capacity(piece_bytes));
    buf.clear();
    buf
}

/// Keeps a piece buffer for later, unless enough are kept or a large entry made it much
/// larger than a piece.
pub(super) fn recycle(buf: Vec<u8>) {
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
pub(super) enum Bytes {
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
pub(super) struct Piece {
    pub(super) bytes: Bytes,
    pub(super) position: u64,
    pub(super) last: bool,
}

pub(super) enum Framing {
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
pub(super) fn frame(buf: &[u8], max_bytes: usize, max_rows: usize) -> (usize, Framing) {
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
pub(super) fn records_in(entry: &[u8]) -> usize {
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
pub(super) fn decode_piece(shared: &Shared, file: &Planned, mut piece: Piece, out: &Sender<Msg>) {
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
        decoder.set_file_name(&segment.path);
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
pub(super) struct Gone;

pub(super) fn decode_into(
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
            let finished = decoder.finish(&bytes[pos..]);
            if let Some(err) = truncated() {
                return send(Msg::Error(err));
            }
            if let Err(err) = finished {
                return send(Msg::Error(err.with_path(&segment.path)));
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
