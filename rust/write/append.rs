//! Appending records to a partition directory as a broker appends a producer's batches: each
//! new batch gets the next offsets (its base offset rewritten; a v2 batch's CRC does not cover
//! it, so nothing is re-encoded), goes at the end of the active segment until that reaches
//! `segment_bytes`, then into new segments, with their indexes.
//!
//! The result is published in one atomic step, as every write is: the new directory is built
//! beside the old one (closed segments hard-linked, never copied; the active segment copied
//! and extended) and swapped in under the partition's lock, so a reader sees the directory
//! before the append or after it, never half of it. A writer may leave a mark in the same step
//! (its id and a sequence number, e.g. a streaming sink's batch id): an append whose mark is
//! already there is skipped, so a replayed micro-batch is written once.
//!
//! In an object store ([`append_remote`]) there is neither rename nor append. The partition's
//! manifest is the atomic step (one conditional put, If-Match on the version read, holding
//! the writers' marks too), the `.kafkalog-writing` marker a lease that keeps a second writer
//! out, and the active segment grows by being uploaded again under its own name with its
//! published bytes (and index entries) as an unchanged prefix, while it is smaller than
//! `max_rewrite_bytes` (64 MiB by default); past that, appends start new segments. Why: a
//! segment per micro-batch would leave thousands of tiny segments that every reader pays for
//! per object and that no broker writes, while a store charges a rewrite the same requests
//! as a new object and only bandwidth, bounded by `max_rewrite_bytes` per append. The
//! function's documentation has the steps and what a writer killed midway leaves.

use crate::arrow::encoder::Encoded;
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
use crate::format::index::SegmentIndexer;
use crate::format::segment::segment_file_name;
use crate::format::segment::{base_offset_from_name, next_entry, Frame};
use crate::log::discover::discover;
use crate::log::manifest::{manifest_text_with_marks, parse_manifest_with_marks, MANIFEST};
use crate::log::offsets::end_offset;
use crate::log::scan::{for_each_entry, Access};
use crate::storage::{Local, PutMode, Stat, Storage};
use crate::write::lease::Marker;
use crate::write::writer::{PartitionWriter, WriteOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file in a partition directory that holds writers' marks: one line `<id> <sequence>`
/// per writer. Kafka ignores files it does not know in a partition directory.
pub const WRITER_MARKS: &str = ".kafkalog-writers";

/// How an append writes into an existing partition directory: the topic configs that decide
/// segment rolling and index spacing, and durability.
#[derive(Clone, Debug)]
pub struct AppendOptions {
    /// `segment.bytes`: roll to a new segment before the active one would pass this size.
    pub segment_bytes: u64,
    /// `index.interval.bytes`: log bytes between offset and time index entries.
    pub index_interval_bytes: u64,
    /// Flush files and directories to disk before the append counts as done (`fsync`).
    pub fsync: bool,
}

/// What an append did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The writer's mark was there already: nothing was written.
    pub skipped: bool,
    /// The offset of the first record appended (the log end offset before).
    pub start_offset: i64,
    /// The log end offset after.
    pub next_offset: i64,
    /// Records appended.
    pub records: u64,
    /// Batches appended.
    pub batches: u64,
    /// Bytes after the active segment's last complete batch that were left out (a torn tail,
    /// which a broker's recovery truncates the same way).
    pub truncated_bytes: u64,
}

/// Appends the v2 batches of the partition directories `staged` (in order, each in offset
/// order, as `kafkalog.write` leaves them) to the partition directory `target` (created if
/// missing). With `mark = (writer id, sequence)`, an append whose writer already marked this
/// sequence or a later one is skipped.
pub fn append_staged(
    target: &Path,
    staged: &[PathBuf],
    mark: Option<(&str, i64)>,
    options: &AppendOptions,
) -> Result<Appended> {
    if let Some((id, _)) = mark {
        if id.is_empty() || id.contains(char::is_whitespace) {
            return Err(Error::invalid_argument(format!(
                "a writer id is a non-empty word, not {id:?}"
            )));
        }
    }
    let exists = matches!(Local.stat(target)?, Stat::Dir);
    let mut writer = PartitionWriter::create(
        target,
        WriteOptions {
            segment_bytes: options.segment_bytes,
            index_interval_bytes: options.index_interval_bytes,
            overwrite: exists,
            fsync: options.fsync,
            // The existing snapshots are linked in; the copied segment's producers are not
            // followed, so a new snapshot could miss a transaction left open before it.
            producer_snapshots: false,
            ..WriteOptions::default()
        },
    )?;
    // Under the partition's lock from here on.
    let marks_path = target.join(WRITER_MARKS);
    let mut marks = match std::fs::read_to_string(&marks_path) {
        Ok(text) => parse_marks(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(e, &marks_path)),
    };
    let segments = if exists {
        discover(&Local, target)?
    } else {
        Vec::new()
    };
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Verify,
        max_decompressed_size: 256 << 20,
    });
    let mut next = 0i64;
    let mut truncated = 0u64;
    // The active segment, if it has room, is copied and extended; a full one is closed.
    let active = segments
        .last()
        .filter(|s| s.size.unwrap_or(u64::MAX) < options.segment_bytes && s.base_offset.is_some());
    let active_files: Vec<String> = active
        .and_then(|s| s.base_offset)
        .map(|base| {
            ["log", "index", "timeindex"]
                .iter()
                .map(|ext| segment_file_name(base, ext))
                .collect()
        })
        .unwrap_or_default();
    if exists {
        for entry in Local.list(target)? {
            let name = entry
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if entry.is_dir || name.starts_with('.') {
                continue; // the marks are rewritten; staging and lock files are not data
            }
            let of_active = active_files.contains(&name);
            if !of_active {
                writer.link_in(&entry.path)?;
            }
        }
        if let Some(last) = segments.last() {
            next = last.base_offset.unwrap_or(0);
        }
        // The log end offset: after the last batch of the last segment that has one.
        // (From each segment's last offset-index entry, not a scan of the segment.)
        let mut noted = Vec::new();
        for seg in segments.iter().rev() {
            if let Some(end) = end_offset(&Local, seg, &mut decoder, &mut noted)? {
                next = next.max(end);
                break;
            }
        }
    }
    if let Some(seg) = active {
        let base = seg.base_offset.unwrap_or(0);
        writer.start_segment(base)?;
        let scan = for_each_entry(&Local, &seg.path, 0, Access::Whole, |position, entry| {
            let info = decoder.header(entry, position)?;
            writer.append_encoded(
                entry,
                &Encoded {
                    magic: info.magic,
                    base_offset: info.base_offset,
                    last_offset: info.last_offset,
                    max_timestamp: info.max_timestamp,
                    records: info.record_count.max(0) as u32,
                    // Copied as it is: its transactions are in the `.txnindex` linked in.
                    producer_id: -1,
                    is_transactional: false,
                    control: None,
                },
            )?;
            Ok(true)
        })?;
        truncated = scan.trailing;
    }
    let mine = mark.and_then(|(id, _)| marks.iter().find(|(w, _)| w == id).map(|m| m.1));
    if let (Some((_, sequence)), Some(done)) = (mark, mine) {
        if done >= sequence {
            drop(writer); // removes the staging directory
            return Ok(Appended {
                skipped: true,
                start_offset: next,
                next_offset: next,
                records: 0,
                batches: 0,
                truncated_bytes: 0,
            });
        }
    }
    let start = next;
    let (next, records, batches) =
        each_staged_batch(&Local, staged, &mut decoder, start, |bytes, encoded| {
            writer.append_encoded(bytes, encoded)
        })?;
    if let Some((id, sequence)) = mark {
        marks.retain(|(w, _)| w != id);
        marks.push((id.to_string(), sequence));
        let text: String = marks.iter().map(|(w, s)| format!("{w} {s}\n")).collect();
        writer.put_file(WRITER_MARKS, text.as_bytes())?;
    }
    writer.finish()?;
    Ok(Appended {
        skipped: false,
        start_offset: start,
        next_offset: next,
        records,
        batches,
        truncated_bytes: truncated,
    })
}

/// How an append to an object store grows the active segment (see [`append_remote`]).
#[derive(Clone, Debug)]
pub struct RemoteAppendOptions {
    /// The active segment is rewritten (extended) only while it is smaller than this; past
    /// it, the next append starts a new segment. Bounds what each append uploads again.
    pub max_rewrite_bytes: u64,
    /// The lease of the writer's marker (see `arrow::publish`).
    pub lease: std::time::Duration,
}

/// The default [`RemoteAppendOptions::max_rewrite_bytes`]: 64 MiB.
pub const DEFAULT_MAX_REWRITE_BYTES: u64 = 64 << 20;

impl Default for RemoteAppendOptions {
    fn default() -> Self {
        RemoteAppendOptions {
            max_rewrite_bytes: DEFAULT_MAX_REWRITE_BYTES,
            lease: crate::write::lease::DEFAULT_LEASE,
        }
    }
}

/// Appends, as [`append_staged`] does, to a partition prefix in an object store that a
/// kafkalog write published (or to none yet): the batches of the partitions kafkalog wrote at
/// the prefixes `staged` get the next offsets of `target`.
///
/// An object store cannot append to an object, and readers read only what the partition's
/// manifest lists, at the listed sizes (`arrow::publish`). So an append:
/// 1. takes the partition's `.kafkalog-writing` marker (a lease: two writers cannot both
///    hold it; the loser gets a `Conflict` error);
/// 2. reads the manifest (and its version), the writers' marks it holds (a mark already at
///    this sequence or later: nothing is written), and the log end offset;
/// 3. extends the active segment, when it is smaller than `max_rewrite_bytes` and than
///    `segment_bytes`, by uploading it again under its own name: its first bytes, and the
///    first entries of its `.index` and `.timeindex`, exactly as they were, followed by the
///    new batches and their index entries (as a broker restarted on that segment continues
///    it). A reader of the old manifest reads the old sizes, so the same bytes;
/// 4. writes the rest into new segments rolled at `segment_bytes` and uploads them;
/// 5. publishes everything, marks included, with one conditional put of the manifest (If-Match
///    on the version read): readers see the partition before or after the append, never half.
///
/// Why rewrite rather than a new segment per append: a streaming sink appends every few
/// seconds, and a segment per micro-batch would leave a partition of thousands of tiny
/// segments (four objects each), which every reader pays for in requests and index lookups,
/// and which no broker would write. Object stores charge writes per request, not per byte,
/// so rewriting costs the same requests as a new segment and only upload bandwidth: at most
/// `max_rewrite_bytes` per append. Segments thus grow to at least `max_rewrite_bytes` (or
/// `segment_bytes`, when smaller) and roll at `segment_bytes` as a broker's do.
///
/// A writer killed before step 5 leaves the old manifest: its rewritten objects only have
/// more bytes after the listed sizes (never read), its new segments are not listed, and the
/// next writer (once the marker's lease expires, or at once on the same host) reads only the
/// listed bytes and writes over them.
pub fn append_remote(
    storage: Arc<dyn Storage>,
    target: &Path,
    staged: &[PathBuf],
    mark: Option<(&str, i64)>,
    options: &AppendOptions,
    remote: &RemoteAppendOptions,
) -> Result<Appended> {
    append_remote_with(storage, target, staged, mark, options, remote, || Ok(()))
}

/// [`append_remote`], calling `before_publish` when everything is uploaded and nothing is
/// published (tests make it fail, as a writer dying there would).
#[allow(clippy::too_many_arguments)]
pub fn append_remote_with(
    storage: Arc<dyn Storage>,
    target: &Path,
    staged: &[PathBuf],
    mark: Option<(&str, i64)>,
    options: &AppendOptions,
    remote: &RemoteAppendOptions,
    before_publish: impl FnOnce() -> Result<()>,
) -> Result<Appended> {
    check_writer_id(mark)?;
    let (marker, _) = Marker::claim(storage.clone(), target, remote.lease)?;
    let manifest_path = target.join(MANIFEST);
    let (mut files, mut marks, version) = match storage.read_versioned(&manifest_path)? {
        Some((bytes, version)) => {
            let text = std::str::from_utf8(&bytes).map_err(|_| {
                Error::corrupt("the manifest is not UTF-8").with_path(&manifest_path)
            })?;
            let (files, marks) =
                parse_manifest_with_marks(text).map_err(|e| e.with_path(&manifest_path))?;
            let version = version.ok_or_else(|| {
                Error::invalid_argument(
                    "this store cannot replace an object conditionally, so appends to it \
                     cannot be published atomically",
                )
                .with_path(&manifest_path)
            })?;
            (files, marks, Some(version))
        }
        None => {
            let data = match storage.list(target) {
                Ok(listed) => listed.into_iter().any(|e| {
                    e.is_dir
                        || e.path
                            .file_name()
                            .is_some_and(|n| base_offset_from_name(Path::new(n)).is_some())
                }),
                Err(e) if e.is_not_found() => false,
                Err(e) => return Err(e),
            };
            if data {
                return Err(Error::invalid_argument(
                    "the prefix holds segments that no kafkalog manifest lists (a copy of a \
                     broker's directory, or an unfinished first write); kafkalog appends only \
                     to partitions it published",
                )
                .with_path(target));
            }
            (Vec::new(), Vec::new(), None)
        }
    };
    let size_of = |files: &[(String, u64)], name: &str| {
        files.iter().find(|(n, _)| n == name).map(|(_, size)| *size)
    };
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Verify,
        max_decompressed_size: 256 << 20,
    });
    // The segments listed, by base offset; the last one is the active segment.
    let mut bases: Vec<i64> = files
        .iter()
        .filter(|(n, _)| n.ends_with(".log"))
        .filter_map(|(n, _)| base_offset_from_name(Path::new(n)))
        .collect();
    bases.sort_unstable();
    let active = bases.last().copied();
    let mut next = active.unwrap_or(0);
    // The active segment's bytes when it is carried (extended), else only its end.
    let mut carried: Option<Carried> = None;
    if let Some(base) = active {
        let log_name = segment_file_name(base, "log");
        let log_size = size_of(&files, &log_name).unwrap_or(0);
        let log_path = target.join(&log_name);
        let small = log_size < remote.max_rewrite_bytes.min(options.segment_bytes);
        let log = if small {
            read_listed(storage.as_ref(), &log_path, 0..log_size)?
        } else {
            // Only its tail, from the last offset-index entry listed.
            let index_name = segment_file_name(base, "index");
            let index_size = size_of(&files, &index_name).unwrap_or(0);
            let index = read_listed(
                storage.as_ref(),
                &target.join(&index_name),
                index_size.saturating_sub(8)..index_size,
            )?;
            let from = if index.len() == 8 {
                u64::from(u32::from_be_bytes([index[4], index[5], index[6], index[7]]))
            } else {
                0
            };
            let from = if from < log_size { from } else { 0 };
            let tail = read_listed(storage.as_ref(), &log_path, from..log_size)?;
            let (end, _) = scan_end(&mut decoder, &tail, from, &log_path)?;
            if let Some(end) = end {
                next = next.max(end);
            }
            Vec::new()
        };
        if small {
            let (end, complete) = scan_end(&mut decoder, &log, 0, &log_path)?;
            if let Some(end) = end {
                next = next.max(end);
            }
            if complete == log_size {
                let index_name = segment_file_name(base, "index");
                let time_name = segment_file_name(base, "timeindex");
                let index_size = size_of(&files, &index_name).unwrap_or(0);
                let time_size = size_of(&files, &time_name).unwrap_or(0);
                carried = Some(Carried {
                    base,
                    log,
                    index: read_listed(storage.as_ref(), &target.join(&index_name), 0..index_size)?,
                    time: read_listed(storage.as_ref(), &target.join(&time_name), 0..time_size)?,
                    indexer: SegmentIndexer::new(base, options.index_interval_bytes),
                    appended: 0,
                });
            }
            // A torn tail is not carried: a new segment starts after the complete batches.
        }
    }
    let done = mark.and_then(|(id, _)| marks.iter().find(|(w, _)| w == id).map(|m| m.1));
    if let (Some((_, sequence)), Some(done)) = (mark, done) {
        if done >= sequence {
            marker.release();
            return Ok(Appended {
                skipped: true,
                start_offset: next,
                next_offset: next,
                records: 0,
                batches: 0,
                truncated_bytes: 0,
            });
        }
    }
    let scratch = std::env::temp_dir().join(format!(
        "kafkalog-append-{}",
        crate::write::placement::unique()
    ));
    std::fs::create_dir_all(&scratch).map_err(|e| Error::io(e, &scratch))?;
    let _cleanup = RemoveOnDrop(scratch.clone());
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "partition".into());
    let mut writer = PartitionWriter::create(
        &scratch.join(&name),
        WriteOptions {
            segment_bytes: options.segment_bytes,
            index_interval_bytes: options.index_interval_bytes,
            overwrite: false,
            fsync: false,
            producer_snapshots: false,
            ..WriteOptions::default()
        },
    )?;
    let start = next;
    let mut rolled = false;
    let (next, records, batches) = each_staged_batch(
        storage.as_ref(),
        staged,
        &mut decoder,
        start,
        |bytes, encoded| {
            let fits = carried.as_ref().is_some_and(|c| {
                (c.log.len() + bytes.len()) as u64 <= options.segment_bytes
                    && encoded.last_offset - c.base <= i32::MAX as i64
            });
            match carried.as_mut() {
                Some(c) if fits && !rolled => c.append(bytes, encoded),
                _ => {
                    rolled = true;
                    writer.append_encoded(bytes, encoded)?;
                }
            }
            Ok(())
        },
    )?;
    let local = scratch.join(&name);
    let summary = writer.finish()?;
    // Still this writer's partition before it overwrites anything a reader may read (the
    // active segment's objects): a writer that stalled past its lease stops here.
    marker.check()?;
    // Upload: new segments first, then the active segment's rewrite (readers of the old
    // manifest read only its old sizes either way).
    for seg in summary.segments.iter().filter(|s| s.batches > 0) {
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let file_name = segment_file_name(seg.base_offset, ext);
            let file = local.join(&file_name);
            if !file.exists() {
                continue;
            }
            let size = std::fs::metadata(&file)
                .map_err(|e| Error::io(e, &file))?
                .len();
            storage.upload(&target.join(&file_name), &file)?;
            set_size(&mut files, file_name, size);
        }
    }
    if let Some(c) = carried.filter(|c| c.appended > 0) {
        let base = c.base;
        for (ext, bytes) in c.finish() {
            let file_name = segment_file_name(base, ext);
            let size = bytes.len() as u64;
            let file = scratch.join(&file_name);
            std::fs::write(&file, &bytes).map_err(|e| Error::io(e, &file))?;
            storage.upload(&target.join(&file_name), &file)?;
            set_size(&mut files, file_name, size);
        }
    }
    if let Some((id, sequence)) = mark {
        marks.retain(|(w, _)| w != id);
        marks.push((id.to_string(), sequence));
    }
    before_publish()?;
    marker.check()?;
    let text = manifest_text_with_marks(&files, &marks).into_bytes();
    let published = match &version {
        Some(version) => storage.replace_if(&manifest_path, text, version),
        None => storage.put(&manifest_path, text, PutMode::Create),
    };
    match published {
        Ok(()) => {}
        Err(e) if e.io_kind == Some(std::io::ErrorKind::AlreadyExists) => {
            return Err(Error::new(
                ErrorKind::Conflict,
                "another writer published this partition since this append read it; nothing \
                 was published",
            )
            .with_path(&manifest_path))
        }
        Err(e) => return Err(e),
    }
    marker.release();
    Ok(Appended {
        skipped: false,
        start_offset: start,
        next_offset: next,
        records,
        batches,
        truncated_bytes: 0,
    })
}

/// Hands `append` each batch of the partition directories `staged` (in order), given the next
/// offsets from `next` on: its bytes with the base offset rewritten (outside the v2 CRC, so
/// nothing is re-encoded) and what the index needs of it. Only magic 2 data batches are taken,
/// as a producer sends them. Returns the offset after the last batch, and the records and
/// batches appended.
fn each_staged_batch(
    storage: &dyn Storage,
    staged: &[PathBuf],
    decoder: &mut BatchDecoder,
    mut next: i64,
    mut append: impl FnMut(&[u8], &Encoded) -> Result<()>,
) -> Result<(i64, u64, u64)> {
    let (mut records, mut batches) = (0u64, 0u64);
    let mut bytes = Vec::new();
    for dir in staged {
        for seg in discover(storage, dir)? {
            for_each_entry(storage, &seg.path, 0, Access::Whole, |position, entry| {
                let info = decoder.header(entry, position)?;
                if info.magic < 2 || info.is_control {
                    return Err(Error::invalid_argument(
                        "only magic 2 data batches are appended (as a producer sends them)",
                    )
                    .at(position));
                }
                let delta = info.last_offset - info.base_offset;
                bytes.clear();
                bytes.extend_from_slice(entry);
                bytes[..8].copy_from_slice(&next.to_be_bytes());
                append(
                    &bytes,
                    &Encoded {
                        magic: info.magic,
                        base_offset: next,
                        last_offset: next + delta,
                        max_timestamp: info.max_timestamp,
                        records: info.record_count.max(0) as u32,
                        producer_id: info.producer_id,
                        is_transactional: info.is_transactional,
                        control: None,
                    },
                )?;
                next += delta + 1;
                records += info.record_count.max(0) as u64;
                batches += 1;
                Ok(true)
            })?;
        }
    }
    Ok((next, records, batches))
}

fn check_writer_id(mark: Option<(&str, i64)>) -> Result<()> {
    if let Some((id, _)) = mark {
        if id.is_empty() || id.contains(char::is_whitespace) {
            return Err(Error::invalid_argument(format!(
                "a writer id is a non-empty word, not {id:?}"
            )));
        }
    }
    Ok(())
}

fn set_size(files: &mut Vec<(String, u64)>, name: String, size: u64) {
    match files.iter_mut().find(|(n, _)| *n == name) {
        Some(entry) => entry.1 = size,
        None => files.push((name, size)),
    }
}

/// Exactly the listed bytes `range` of an object (an object may be longer than listed: a
/// writer that died rewriting it).
fn read_listed(storage: &dyn Storage, path: &Path, range: std::ops::Range<u64>) -> Result<Vec<u8>> {
    if range.is_empty() {
        return Ok(Vec::new());
    }
    let mut object = storage.open(path)?;
    let want = range.end - range.start;
    let got = crate::storage::read_range(object.as_mut(), range.clone())?;
    if (got.len() as u64) < want {
        return Err(Error::corrupt(format!(
            "shorter than its manifest says ({} bytes from {}, {want} listed)",
            got.len(),
            range.start
        ))
        .with_path(path));
    }
    Ok(got)
}

/// The offset after the last complete batch of `bytes` (log bytes from `position`), and where
/// the complete batches end.
fn scan_end(
    decoder: &mut BatchDecoder,
    bytes: &[u8],
    position: u64,
    path: &Path,
) -> Result<(Option<i64>, u64)> {
    let mut at = 0usize;
    let mut end = None;
    while let Ok(Frame::Entry(n)) = next_entry(&bytes[at..]) {
        let info = decoder
            .header(&bytes[at..at + n], position + at as u64)
            .map_err(|e| e.with_path(path))?;
        end = Some(info.last_offset + 1);
        at += n;
    }
    Ok((end, position + at as u64))
}

/// The active segment being extended: its listed bytes and index files, and the new
/// batches' index entries (kept apart: the old entries stay exactly as they were).
struct Carried {
    base: i64,
    log: Vec<u8>,
    index: Vec<u8>,
    time: Vec<u8>,
    indexer: SegmentIndexer,
    appended: u64,
}

impl Carried {
    fn append(&mut self, bytes: &[u8], info: &Encoded) {
        let position = self.log.len() as u32;
        self.indexer.append(
            position,
            bytes.len() as u32,
            info.last_offset,
            info.max_timestamp,
        );
        self.log.extend_from_slice(bytes);
        self.appended += 1;
    }

    /// The segment's three files: the old bytes, then the new entries. As a broker reopening
    /// a segment, no time entry goes in that is not later than the last one there.
    fn finish(mut self) -> [(&'static str, Vec<u8>); 3] {
        self.indexer.finish();
        let mut index = self.index;
        index.extend_from_slice(&self.indexer.offset_index_bytes());
        let last_time = self.time.chunks_exact(12).last().map_or(i64::MIN, |e| {
            i64::from_be_bytes(e[..8].try_into().unwrap_or([0; 8]))
        });
        let mut time = self.time;
        for entry in self.indexer.time_index_bytes().chunks_exact(12) {
            let ts = i64::from_be_bytes(entry[..8].try_into().unwrap_or([0; 8]));
            if ts > last_time {
                time.extend_from_slice(entry);
            }
        }
        [("log", self.log), ("index", index), ("timeindex", time)]
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn parse_marks(text: &str) -> Vec<(String, i64)> {
    text.lines()
        .filter_map(|line| {
            let (id, seq) = line.trim().split_once(' ')?;
            Some((id.to_string(), seq.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::reader::ReaderBuilder;
    use crate::write::writer::PartitionWriter;
    use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch};
    use std::sync::Arc;

    fn write_dir(dir: &Path, values: &[&str], base: i64) {
        let value: BinaryArray = values.iter().map(|v| Some(v.as_bytes())).collect();
        let schema = arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "value",
            arrow_schema::DataType::Binary,
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(value)]).unwrap();
        let mut options = WriteOptions {
            fsync: false,
            segment_bytes: 200,
            ..WriteOptions::default()
        };
        options.encode.base_offset = base;
        options.encode.batch_records = 2;
        let mut w = PartitionWriter::create(dir, options).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }

    fn offsets_values(dir: &Path) -> Vec<(i64, String)> {
        let reader = ReaderBuilder::new().build(dir).unwrap();
        let mut out = Vec::new();
        for b in reader {
            let b = b.unwrap();
            let offsets = b
                .column_by_name("offset")
                .unwrap()
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone();
            let values = b
                .column_by_name("value")
                .unwrap()
                .as_any()
                .downcast_ref::<BinaryArray>()
                .unwrap()
                .clone();
            for i in 0..b.num_rows() {
                out.push((
                    offsets.value(i),
                    String::from_utf8(values.value(i).to_vec()).unwrap(),
                ));
            }
        }
        out
    }

    #[test]
    fn appends_continue_the_offsets_roll_segments_and_skip_marked_replays() {
        let tmp = std::env::temp_dir().join(format!("kafkalog-append-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let target = tmp.join("t-0");
        write_dir(&target, &["a", "b", "c"], 0);
        let staged = tmp.join("s1").join("t-0");
        std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
        write_dir(&staged, &["d", "e", "f", "g", "h"], 0);
        let options = AppendOptions {
            segment_bytes: 200,
            index_interval_bytes: 64,
            fsync: false,
        };
        let done = append_staged(
            &target,
            std::slice::from_ref(&staged),
            Some(("q", 0)),
            &options,
        )
        .unwrap();
        assert_eq!(
            (done.start_offset, done.next_offset, done.records),
            (3, 8, 5)
        );
        let got = offsets_values(&target);
        let want: Vec<(i64, String)> = "abcdefgh"
            .chars()
            .enumerate()
            .map(|(i, c)| (i as i64, c.to_string()))
            .collect();
        assert_eq!(got, want);
        let logs = std::fs::read_dir(&target)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("log".as_ref()))
            .count();
        assert!(logs >= 2, "segments roll at segment_bytes");
        // The same mark again: skipped, nothing doubled.
        let again = append_staged(&target, &[staged], Some(("q", 0)), &options).unwrap();
        assert!(again.skipped);
        assert_eq!(offsets_values(&target).len(), 8);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    mod remote {
        use super::super::*;
        use crate::log::manifest::WRITING;
        use crate::write::publish::tests::{batches, offsets, scratch, Versioned};
        use crate::write::publish::ObjectStoreWriter;

        fn stage(storage: &Arc<dyn Storage>, dir: &Path, n: i64) -> PathBuf {
            let mut w =
                ObjectStoreWriter::create(storage.clone(), dir, WriteOptions::default()).unwrap();
            for b in batches(n) {
                w.write(&b).unwrap();
            }
            w.finish().unwrap();
            dir.to_path_buf()
        }

        fn options() -> AppendOptions {
            AppendOptions {
                segment_bytes: 6000,
                index_interval_bytes: 1000,
                fsync: false,
            }
        }

        fn sizes(dir: &Path) -> Vec<(String, Vec<u8>)> {
            let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap())
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect();
            out.sort();
            out
        }

        #[test]
        fn appends_extend_the_active_segment_in_place_and_publish_marks_with_the_files() {
            let root = scratch("remote-append");
            let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
            let target = root.join("out").join("t-0");
            let remote = RemoteAppendOptions::default();
            let mut total = 0;
            let mut before: Vec<(String, Vec<u8>)> = Vec::new();
            for seq in 0..6 {
                let staged = stage(&storage, &root.join(format!("s{seq}")).join("t-0"), 10);
                let done = append_remote(
                    storage.clone(),
                    &target,
                    &[staged],
                    Some(("q", seq)),
                    &options(),
                    &remote,
                )
                .unwrap();
                assert_eq!((done.start_offset, done.next_offset), (total, total + 10));
                total += 10;
                // Each file published before is a prefix of what is there now.
                let now = sizes(&target);
                for (name, old) in &before {
                    let new = &now.iter().find(|(n, _)| n == name).unwrap().1;
                    assert_eq!(&new[..old.len()], &old[..], "{name}");
                }
                before = now;
            }
            assert_eq!(offsets(&storage, &target), (0..total).collect::<Vec<_>>());
            let logs = before.iter().filter(|(n, _)| n.ends_with(".log")).count();
            assert!((2..6).contains(&logs), "{logs} segments for 6 appends");
            // Replayed: skipped, and the marks are in the manifest, not a file of their own.
            let staged = stage(&storage, &root.join("again").join("t-0"), 10);
            let again = append_remote(
                storage.clone(),
                &target,
                std::slice::from_ref(&staged),
                Some(("q", 5)),
                &options(),
                &remote,
            )
            .unwrap();
            assert!(again.skipped);
            let manifest = std::fs::read_to_string(target.join(MANIFEST)).unwrap();
            assert!(manifest.ends_with("marks 1\nq 5\n"), "{manifest}");
            // A writer holding the marker: a conflict, nothing written.
            std::fs::write(target.join(WRITING), "kafkalog write of another kind\n").unwrap();
            let err = append_remote(
                storage.clone(),
                &target,
                &[staged],
                Some(("q", 6)),
                &options(),
                &remote,
            )
            .unwrap_err();
            assert_eq!(err.kind, ErrorKind::Conflict);
            assert_eq!(offsets(&storage, &target).len() as i64, total);
            std::fs::remove_dir_all(&root).unwrap();
        }

        #[test]
        fn a_writer_dying_before_it_publishes_leaves_the_old_partition() {
            let root = scratch("remote-die");
            let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
            let target = root.join("out").join("t-0");
            let remote = RemoteAppendOptions::default();
            let first = stage(&storage, &root.join("s0").join("t-0"), 20);
            append_remote(
                storage.clone(),
                &target,
                &[first],
                Some(("q", 0)),
                &options(),
                &remote,
            )
            .unwrap();
            let manifest = std::fs::read(target.join(MANIFEST)).unwrap();
            let second = stage(&storage, &root.join("s1").join("t-0"), 40);
            let err = append_remote_with(
                storage.clone(),
                &target,
                std::slice::from_ref(&second),
                Some(("q", 1)),
                &options(),
                &remote,
                || Err(Error::invalid_argument("died")),
            )
            .unwrap_err();
            assert_eq!(err.message, "died");
            // Uploaded (the active segment is longer, a new segment is there), not published.
            assert!(sizes(&target).len() > 3);
            assert_eq!(std::fs::read(target.join(MANIFEST)).unwrap(), manifest);
            assert_eq!(offsets(&storage, &target), (0..20).collect::<Vec<_>>());
            // Spark replays the micro-batch: written once, after the listed bytes.
            let done = append_remote(
                storage.clone(),
                &target,
                &[second],
                Some(("q", 1)),
                &options(),
                &remote,
            )
            .unwrap();
            assert_eq!((done.start_offset, done.next_offset), (20, 60));
            assert_eq!(offsets(&storage, &target), (0..60).collect::<Vec<_>>());
            std::fs::remove_dir_all(&root).unwrap();
        }
    }
}
