//! Writing a partition to an object store, where there is no rename: what a writer stages,
//! how it publishes, and what a reader may read.
//!
//! A partition prefix (`s3://bucket/kafka-logs/orders-0/`) written by kafkalog holds, besides
//! the segment files, one of two small objects:
//! - `.kafkalog-writing`: a write is under way (or died). It is taken with the store's
//!   conditional put (`If-None-Match: *`), so that of two writers exactly one gets it; the
//!   other fails with a [`ErrorKind::Conflict`] error. Objects under a prefix that has it and
//!   no manifest are not published: readers read none of them.
//! - `.kafkalog-manifest`: the published partition: the name and size of every file written.
//!   It is put (conditionally) only after every file is uploaded, so it appears at once, and a
//!   reader that finds it reads exactly the files it lists, at their listed sizes.
//!
//! A prefix with neither is a plain copy of a broker's directory and is read as listed.
//!
//! The writer encodes each segment into a local scratch directory (the same
//! [`PartitionWriter`] as local writes), uploads it as soon as it is complete (large files in
//! parts) and removes the local copy, so local disk holds about one segment. A failed write
//! removes what it uploaded and its marker; a killed one leaves its marker, so readers still
//! read nothing. The marker says which host and process hold it ([`WriterNote`]).
//!
//! ## Leases
//!
//! A marker is a lease ([`Marker`]): its holder rewrites it every third of the lease while it
//! writes (a thread of its own, so a slow input does not let it lapse), and checks that it
//! still holds it just before it publishes. A writer finding a marker takes it over, with a
//! conditional replace of the exact marker it read (the store's `If-Match`, so that of two
//! takers exactly one succeeds), when its holder is provably dead (a process of this host
//! that is gone) or when the marker was last refreshed longer ago than the lease (default
//! [`DEFAULT_LEASE`]; the storage option `kafkalog.lease_seconds` sets it). Anything else is a
//! [`ErrorKind::Conflict`] naming the holder's host, process and the marker's age.
//!
//! Ages are measured with the store's clock only: the marker's last-modified time against
//! the last-modified time of a small probe object the taker writes (and removes) beside it at
//! that moment. Neither the holder's nor the taker's clock enters, so hosts whose clocks
//! disagree still agree on an age; the holder's local clock only paces its refreshes (a
//! duration, not a date). The store's times have whole-second precision (HTTP dates), so a
//! marker must be older than the lease plus [`CLOCK_SLACK`] to be taken. A holder that finds
//! its marker taken (or gone) stops and fails before publishing. The one window a lease
//! cannot close is a holder that stalls for longer than the lease between its last check and
//! its publishing put; the manifest's own conditional put still refuses one of two publishes.

use crate::error::{Error, ErrorKind, Result};
use crate::format::segment::segment_file_name;
use crate::storage::{Entry, PutMode, Storage};
use crate::write::writer::{PartitionWriter, SegmentSummary, Summary, WriteOptions};
use arrow_array::RecordBatch;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How long a writer's marker holds without a refresh before another writer may take it over.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// What is added to a lease before a marker counts as stale: the precision of object stores'
/// last-modified times (whole seconds).
pub const CLOCK_SLACK: Duration = Duration::from_secs(1);
/// The storage option that sets the lease, in seconds (a core option, not the store's).
pub const LEASE_OPTION: &str = "kafkalog.lease_seconds";
/// The probe object a taker writes to read the store's clock (never data).
const CLOCK_PROBE: &str = ".kafkalog-clock";

/// The marker of a write under way.
pub const WRITING: &str = ".kafkalog-writing";
/// The list of what a write published.
pub const MANIFEST: &str = ".kafkalog-manifest";
const MANIFEST_HEADER: &str = "kafkalog-partition-manifest 1";

/// A manifest's text: a header line, the number of files, then `<name> <size>` per file.
pub fn manifest_text(files: &[(String, u64)]) -> String {
    manifest_text_with_marks(files, &[])
}

/// A manifest's text with writers' marks after the files (a streaming sink's: see
/// `arrow::append`): `marks <count>`, then `<writer id> <sequence>` per writer. Published in
/// the same put as the files, they say which appends the listed files hold.
pub fn manifest_text_with_marks(files: &[(String, u64)], marks: &[(String, i64)]) -> String {
    let mut out = format!("{MANIFEST_HEADER}\n{}\n", files.len());
    for (name, size) in files {
        out.push_str(&format!("{name} {size}\n"));
    }
    if !marks.is_empty() {
        out.push_str(&format!("marks {}\n", marks.len()));
        for (id, sequence) in marks {
            out.push_str(&format!("{id} {sequence}\n"));
        }
    }
    out
}

/// Parses a manifest, refusing anything that is not one (a name that is not a plain file
/// name, a wrong count).
pub fn parse_manifest(text: &str) -> Result<Vec<(String, u64)>> {
    parse_manifest_with_marks(text).map(|(files, _)| files)
}

/// A manifest's files and writers' marks (see [`manifest_text_with_marks`]).
#[allow(clippy::type_complexity)]
pub fn parse_manifest_with_marks(text: &str) -> Result<(Vec<(String, u64)>, Vec<(String, i64)>)> {
    let bad = |what: &str| Error::corrupt(format!("not a kafkalog partition manifest: {what}"));
    let mut lines = text.lines();
    if lines.next() != Some(MANIFEST_HEADER) {
        return Err(bad("unknown header"));
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or_else(|| bad("no file count"))?;
    let mut files = Vec::new();
    for _ in 0..count {
        let line = lines
            .next()
            .ok_or_else(|| bad("the file count does not match"))?;
        let (name, size) = line
            .split_once(' ')
            .ok_or_else(|| bad("a malformed line"))?;
        let plain = !name.is_empty()
            && name != "."
            && name != ".."
            && !name.contains(['/', '\\'])
            && !name.starts_with(".kafkalog-");
        if !plain {
            return Err(bad("a name that is not a file of the partition"));
        }
        let size = size.parse().map_err(|_| bad("a malformed size"))?;
        files.push((name.to_string(), size));
    }
    let mut marks = Vec::new();
    if let Some(line) = lines.next() {
        let n: usize = line
            .strip_prefix("marks ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad("the file count does not match"))?;
        for _ in 0..n {
            let (id, sequence) = lines
                .next()
                .and_then(|l| l.split_once(' '))
                .ok_or_else(|| bad("a malformed mark"))?;
            let sequence = sequence.parse().map_err(|_| bad("a malformed mark"))?;
            marks.push((id.to_string(), sequence));
        }
        if lines.next().is_some() {
            return Err(bad("lines after the marks"));
        }
    }
    Ok((files, marks))
}

/// What a reader may read of a listed partition directory (see the module documentation):
/// the listing itself for a plain copy; the files the manifest lists for a published write;
/// nothing for a write not yet published.
pub fn published(storage: &dyn Storage, dir: &Path, listed: Vec<Entry>) -> Result<Vec<Entry>> {
    let has = |name: &str| {
        listed
            .iter()
            .any(|e| !e.is_dir && e.path.file_name().is_some_and(|n| n == name))
    };
    if has(MANIFEST) {
        let path = dir.join(MANIFEST);
        let Some(bytes) = storage.read(&path)? else {
            return Ok(Vec::new()); // removed since the listing: being rewritten
        };
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| Error::corrupt("the manifest is not UTF-8").with_path(&path))?;
        let files = parse_manifest(text).map_err(|e| e.with_path(&path))?;
        return Ok(files
            .into_iter()
            .map(|(name, size)| Entry {
                path: dir.join(name),
                is_dir: false,
                size,
            })
            .collect());
    }
    if has(WRITING) {
        return Ok(Vec::new());
    }
    Ok(listed)
}

/// Publishes at `target` the partition a kafkalog write published at `staged` (both prefixes
/// in `storage`, e.g. a Spark task's staging prefix and the job's output): claims `target`'s
/// marker, unpublishes an old partition there (only with `overwrite`), copies the staged files
/// server-side, then puts the manifest. Readers see the old partition (or nothing), then the
/// new one, never a mix; a failure before the manifest leaves nothing readable at `target`
/// and removes the copies.
pub fn publish_staged(
    storage: Arc<dyn Storage>,
    staged: &Path,
    target: &Path,
    overwrite: bool,
    lease: Duration,
) -> Result<()> {
    let listed = match storage.list(staged) {
        Ok(listed) => listed,
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e),
    };
    if !listed
        .iter()
        .any(|e| e.path.file_name().is_some_and(|n| n == MANIFEST))
    {
        return Err(Error::invalid_argument(
            "nothing published to stage from (no kafkalog manifest there)",
        )
        .with_path(staged));
    }
    let files = published(storage.as_ref(), staged, listed)?;
    let name = name_of(target);
    if name.is_empty() || name.starts_with('.') {
        return Err(Error::invalid_argument(
            "the target does not end in a partition directory name",
        )
        .with_path(target));
    }
    let mut writer = ObjectStoreWriter {
        storage: storage.clone(),
        target: target.to_path_buf(),
        scratch: PathBuf::new(),
        inner: None,
        uploaded: Vec::new(),
        marker: None,
        lease,
    };
    writer.claim(overwrite)?;
    for entry in &files {
        let file = name_of(&entry.path);
        storage.copy(&entry.path, &target.join(&file))?;
        writer.uploaded.push((file, entry.size));
    }
    writer.check_marker()?;
    storage.put(
        &target.join(MANIFEST),
        manifest_text(&writer.uploaded).into_bytes(),
        PutMode::Create,
    )?;
    writer.uploaded.clear();
    if let Some(marker) = writer.marker.take() {
        marker.release();
    }
    Ok(())
}

/// Refuses, before anything is published, targets that hold something already (a job that
/// publishes several partitions and may not replace any checks them all first).
pub fn check_absent(storage: &dyn Storage, targets: &[PathBuf]) -> Result<()> {
    let mut there = Vec::new();
    for target in targets {
        match storage.list(target) {
            Ok(listed) if !listed.is_empty() => there.push(target.display().to_string()),
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    if there.is_empty() {
        return Ok(());
    }
    there.sort();
    Err(Error::invalid_argument(format!(
        "{} already exist: kafkalog cannot append to a partition directory; use \
         mode(\"overwrite\") to replace them",
        there.join(", ")
    )))
}

/// Removes every object under `prefix` (a job's staging prefix); none there is not an error.
pub fn remove_prefix(storage: &dyn Storage, prefix: &Path) -> Result<()> {
    let listed = match storage.list(prefix) {
        Ok(listed) => listed,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in listed {
        if entry.is_dir {
            remove_prefix(storage, &entry.path)?;
        } else {
            storage.delete(&entry.path)?;
        }
    }
    Ok(())
}

/// What a writer's marker says about it: an id of this write, the host and process that hold
/// it, when it was taken, and how many times it was refreshed since (so that each refresh
/// changes the object, and its version).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterNote {
    /// A unique id of this write (also in the names of the objects it stages).
    pub owner: String,
    /// The host name of the writing process, as the operating system reports it.
    pub host: String,
    /// The writing process's id on that host.
    pub pid: u32,
    /// When the marker was taken, in milliseconds since the Unix epoch (the holder's clock:
    /// for people reading it, never for leases).
    pub created_ms: u128,
    /// Refreshes so far.
    pub beat: u64,
}

const NOTE_HEADER: &str = "kafkalog-writer 1";

impl WriterNote {
    /// This process's note for a new marker.
    pub fn mine() -> Self {
        WriterNote {
            owner: crate::write::placement::unique(),
            host: host_name(),
            pid: std::process::id(),
            created_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis()),
            beat: 0,
        }
    }

    /// The marker's contents: a header line, then one `name value` line per field.
    pub fn text(&self) -> String {
        format!(
            "{NOTE_HEADER}\nowner {}\nhost {}\npid {}\ncreated_ms {}\nbeat {}\n",
            self.owner, self.host, self.pid, self.created_ms, self.beat
        )
    }

    /// A note, or `None` for a marker that is not one (an older kafkalog's, or foreign): such
    /// a marker is never taken over. A note without `beat` (written before leases) has 0.
    pub fn parse(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        if lines.next()? != NOTE_HEADER {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            let line = lines.next()?;
            let (key, value) = line.split_once(' ')?;
            (key == name).then(|| value.to_string())
        };
        let mut note = WriterNote {
            owner: field("owner")?,
            host: field("host")?,
            pid: field("pid")?.parse().ok()?,
            created_ms: field("created_ms")?.parse().ok()?,
            beat: 0,
        };
        if let Some(beat) = field("beat") {
            note.beat = beat.parse().ok()?;
        }
        Some(note)
    }

    /// Whether the writer is provably dead: it ran on this host, and no process has its id.
    pub fn is_dead_here(&self) -> bool {
        !self.host.is_empty() && self.host == host_name() && !process_alive(self.pid)
    }
}

/// A held `.kafkalog-writing` marker: a lease on a partition prefix (see the module
/// documentation). A thread refreshes it every third of the lease until the marker is
/// released or dropped (which removes it).
pub struct Marker {
    storage: Arc<dyn Storage>,
    path: PathBuf,
    note: WriterNote,
    /// Refreshes written, shared with the refreshing thread.
    beat: Arc<AtomicU64>,
    /// Set when a refresh found the marker taken over or gone.
    lost: Arc<AtomicBool>,
    stop: Option<mpsc::Sender<()>>,
    keeper: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Marker")
            .field("path", &self.path)
            .field("note", &self.note)
            .finish()
    }
}

impl Marker {
    /// Takes the marker of the partition prefix `dir`: a conditional create, or a take-over
    /// of a dead or expired holder's marker (If-Match). Returns the marker and whether it was
    /// taken over from another writer (whose unpublished objects may be there).
    pub fn claim(storage: Arc<dyn Storage>, dir: &Path, lease: Duration) -> Result<(Self, bool)> {
        let path = dir.join(WRITING);
        let note = WriterNote::mine();
        let took_over = match storage.put(&path, note.text().into_bytes(), PutMode::Create) {
            Ok(()) => false,
            Err(e) if e.io_kind == Some(std::io::ErrorKind::AlreadyExists) => {
                take_over(storage.as_ref(), dir, &path, &note, lease)?
            }
            Err(e) => return Err(e),
        };
        let beat = Arc::new(AtomicU64::new(0));
        let lost = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = mpsc::channel::<()>();
        let keeper = {
            let (storage, held, note) = (storage.clone(), path.clone(), note.clone());
            let (beat, lost) = (beat.clone(), lost.clone());
            let every = (lease / 3).max(Duration::from_millis(10));
            std::thread::Builder::new()
                .name("kafkalog-lease".into())
                .spawn(move || {
                    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                        if refresh(storage.as_ref(), &held, &note, &beat).is_err() {
                            lost.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                })
                .map_err(|e| Error::io(e, &path))?
        };
        Ok((
            Marker {
                storage,
                path,
                note,
                beat,
                lost,
                stop: Some(stop),
                keeper: Some(keeper),
            },
            took_over,
        ))
    }

    /// Refreshes the marker now, failing with a [`ErrorKind::Conflict`] when it is no longer
    /// this writer's: called just before publishing.
    pub fn check(&self) -> Result<()> {
        let lost = || {
            Error::new(
                ErrorKind::Conflict,
                format!(
                    "this writer's lease on {} lapsed and another writer took it over (or the                      marker was removed): nothing was published",
                    self.path.parent().unwrap_or(&self.path).display()
                ),
            )
            .with_path(&self.path)
        };
        if self.lost.load(Ordering::SeqCst) {
            return Err(lost());
        }
        match refresh(self.storage.as_ref(), &self.path, &self.note, &self.beat) {
            Ok(()) => Ok(()),
            Err(e) if e.kind == ErrorKind::Conflict => {
                self.lost.store(true, Ordering::SeqCst);
                Err(lost())
            }
            Err(e) => Err(e),
        }
    }

    fn stop_keeper(&mut self) {
        self.stop = None; // wakes the thread, which ends
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
    }

    /// Stops refreshing and removes the marker (a failure to remove it is left to the lease).
    pub fn release(mut self) {
        self.stop_keeper();
        if !self.lost.load(Ordering::SeqCst) {
            let _ = self.storage.delete(&self.path);
        }
        self.lost.store(true, Ordering::SeqCst); // nothing more for drop to do
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        self.stop_keeper();
        if !self.lost.load(Ordering::SeqCst) {
            let _ = self.storage.delete(&self.path);
        }
    }
}

/// Rewrites the marker at `path` with the next beat of `note`, only if it still holds
/// `note` (If-Match on the version read): a [`ErrorKind::Conflict`] otherwise.
fn refresh(storage: &dyn Storage, path: &Path, note: &WriterNote, beat: &AtomicU64) -> Result<()> {
    let gone = || Error::new(ErrorKind::Conflict, "the marker is no longer this writer's");
    let Some((bytes, version)) = storage.read_versioned(path)? else {
        return Err(gone());
    };
    let held = WriterNote::parse(&String::from_utf8_lossy(&bytes));
    if held.as_ref().map(|h| &h.owner) != Some(&note.owner) {
        return Err(gone());
    }
    let next = WriterNote {
        beat: beat.load(Ordering::SeqCst) + 1,
        ..note.clone()
    };
    match version {
        Some(version) => match storage.replace_if(path, next.text().into_bytes(), &version) {
            Ok(()) => {}
            Err(e) if e.io_kind == Some(std::io::ErrorKind::AlreadyExists) => return Err(gone()),
            Err(e) => return Err(e),
        },
        // A store without versions cannot be taken over by expiry either: a plain rewrite.
        None => storage.put(path, next.text().into_bytes(), PutMode::Overwrite)?,
    }
    beat.store(next.beat, Ordering::SeqCst);
    Ok(())
}

/// How long ago the object at `path` was last written, by the store's clock: its
/// last-modified time against that of a probe object put beside it now. `None` when the
/// store does not tell times (or the object is gone).
fn store_age(storage: &dyn Storage, dir: &Path, path: &Path) -> Result<Option<Duration>> {
    let Some(then) = storage.modified_ms(path)? else {
        return Ok(None);
    };
    let probe = dir.join(format!(
        "{CLOCK_PROBE}-{}",
        crate::write::placement::unique()
    ));
    storage.put(&probe, Vec::new(), PutMode::Overwrite)?;
    let now = storage.modified_ms(&probe);
    let _ = storage.delete(&probe);
    Ok(now?.map(|now| Duration::from_millis(now.saturating_sub(then))))
}

/// Takes over the marker at `marker` (see [`Marker::claim`]); a [`ErrorKind::Conflict`]
/// naming its holder when it may not. Returns whether a holder's marker was replaced (false:
/// the marker had gone, and was claimed afresh).
fn take_over(
    storage: &dyn Storage,
    dir: &Path,
    marker: &Path,
    note: &WriterNote,
    lease: Duration,
) -> Result<bool> {
    let conflict = |why: String| {
        Error::new(
            ErrorKind::Conflict,
            format!(
                "another writer is writing {} (its marker {WRITING} is there{why}); only one \
                 writer at a time may write a partition",
                dir.display()
            ),
        )
        .with_path(marker)
    };
    let Some((bytes, version)) = storage.read_versioned(marker)? else {
        // Removed since: its writer finished or gave up. Claim it afresh.
        return storage
            .put(marker, note.text().into_bytes(), PutMode::Create)
            .map(|()| false)
            .map_err(|e| {
                if e.io_kind == Some(std::io::ErrorKind::AlreadyExists) {
                    conflict(String::new())
                } else {
                    e
                }
            });
    };
    let Some(held) = WriterNote::parse(&String::from_utf8_lossy(&bytes)) else {
        return Err(conflict(
            ", and it is not a kafkalog writer's note: delete it if no writer is running"
                .to_string(),
        ));
    };
    let holder = format!("held by process {} on host {:?}", held.pid, held.host);
    if !held.is_dead_here() {
        let age = store_age(storage, dir, marker)?;
        let Some(age) = age else {
            return Err(conflict(format!(
                ", {holder}; this store does not tell how old it is, so its lease cannot \
                 expire: delete it if that writer is gone"
            )));
        };
        if age <= lease + CLOCK_SLACK {
            return Err(conflict(format!(
                ", {holder}, last refreshed {:.1} s ago by the store's clock; its lease of \
                 {} s has not expired",
                age.as_secs_f64(),
                lease.as_secs_f64()
            )));
        }
    }
    let Some(version) = version else {
        return Err(conflict(format!(
            ", {holder}, which is gone; this store cannot replace it conditionally"
        )));
    };
    match storage.replace_if(marker, note.text().into_bytes(), &version) {
        Ok(()) => Ok(true),
        Err(e) if e.io_kind == Some(std::io::ErrorKind::AlreadyExists) => Err(conflict(format!(
            ", {holder}, and another writer took it over first"
        ))),
        Err(e) => Err(e),
    }
}

/// This machine's host name ("" when it has none).
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Whether a process with this id exists (`kill(pid, 0)`; one we may not signal exists too).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Writes one partition directory to an object store (see the module documentation).
pub struct ObjectStoreWriter {
    storage: Arc<dyn Storage>,
    target: PathBuf,
    scratch: PathBuf,
    inner: Option<PartitionWriter>,
    /// Files uploaded so far: name and size.
    uploaded: Vec<(String, u64)>,
    /// The marker this writer holds (dropping it removes it).
    marker: Option<Marker>,
    /// How long its marker holds without a refresh.
    lease: Duration,
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl ObjectStoreWriter {
    /// Claims `target` (a partition prefix in `storage`) and starts a write. An existing
    /// partition there is replaced only with `overwrite`, and then unpublished first: readers
    /// see the old partition, then nothing, then the new one, never a mix.
    pub fn create(storage: Arc<dyn Storage>, target: &Path, options: WriteOptions) -> Result<Self> {
        Self::create_leased(storage, target, options, DEFAULT_LEASE)
    }

    /// [`Self::create`] with the marker's lease (see the module documentation).
    pub fn create_leased(
        storage: Arc<dyn Storage>,
        target: &Path,
        options: WriteOptions,
        lease: Duration,
    ) -> Result<Self> {
        let name = name_of(target);
        if name.is_empty() || name.starts_with('.') {
            return Err(Error::invalid_argument(
                "the target does not end in a partition directory name",
            )
            .with_path(target));
        }
        let scratch = std::env::temp_dir().join(format!(
            "kafkalog-upload-{}",
            crate::write::placement::unique()
        ));
        std::fs::create_dir_all(&scratch).map_err(|e| Error::io(e, &scratch))?;
        let mut writer = ObjectStoreWriter {
            storage,
            target: target.to_path_buf(),
            inner: None,
            uploaded: Vec::new(),
            marker: None,
            lease,
            scratch,
        };
        let local = WriteOptions {
            fsync: false, // the scratch copy is uploaded, not kept
            overwrite: false,
            ..options.clone()
        };
        writer.inner = Some(PartitionWriter::create(&writer.scratch.join(&name), local)?);
        writer.claim(options.overwrite)?;
        Ok(writer)
    }

    fn claim(&mut self, overwrite: bool) -> Result<()> {
        let (marker, took_over) = Marker::claim(self.storage.clone(), &self.target, self.lease)?;
        self.marker = Some(marker);
        let existing: Vec<Entry> = match self.storage.list(&self.target) {
            Ok(listed) => listed
                .into_iter()
                .filter(|e| {
                    e.path.file_name().is_some_and(|n| {
                        n != WRITING && !n.to_string_lossy().starts_with(CLOCK_PROBE)
                    })
                })
                .collect(),
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(e),
        };
        if existing.is_empty() {
            return Ok(());
        }
        let published = existing
            .iter()
            .any(|e| e.path.file_name().is_some_and(|n| n == MANIFEST));
        if took_over && !published {
            // The dead writer's uploads, never published (never read): they go, whatever
            // `overwrite` says; with the marker gone they would read as a plain copy.
            for entry in existing.iter().filter(|e| !e.is_dir) {
                self.storage.delete(&entry.path)?;
            }
            return Ok(());
        }
        if !overwrite {
            return Err(Error::invalid_argument(format!(
                "{} exists; pass overwrite=True to replace it",
                self.target.display()
            )));
        }
        // Unpublish first (the manifest goes, so readers see nothing), then clear the rest.
        self.storage.delete(&self.target.join(MANIFEST))?;
        for entry in existing {
            if entry.is_dir {
                return Err(Error::invalid_argument(
                    "the partition prefix holds sub-prefixes; kafkalog replaces only \
                     partition directories",
                )
                .with_path(&entry.path));
            }
            self.storage.delete(&entry.path)?;
        }
        Ok(())
    }

    fn check_marker(&self) -> Result<()> {
        match &self.marker {
            Some(marker) => marker.check(),
            None => Err(Error::invalid_argument("the writer holds no marker")),
        }
    }

    fn writer(&mut self) -> Result<&mut PartitionWriter> {
        self.inner
            .as_mut()
            .ok_or_else(|| Error::invalid_argument("the writer is already finished"))
    }

    /// Encodes and appends the rows of `batch`; segments completed are uploaded.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer()?.write(batch)?;
        self.upload_closed()
    }

    fn upload_file(&mut self, local: &Path) -> Result<()> {
        let name = name_of(local);
        let size = std::fs::metadata(local)
            .map_err(|e| Error::io(e, local))?
            .len();
        self.storage.upload(&self.target.join(&name), local)?;
        self.uploaded.push((name, size));
        std::fs::remove_file(local).map_err(|e| Error::io(e, local))
    }

    /// Uploads the files of every segment completed since the last call.
    fn upload_closed(&mut self) -> Result<()> {
        let (dir, bases): (PathBuf, Vec<i64>) = {
            let inner = self.writer()?;
            let bases = inner
                .closed_segments()
                .iter()
                .map(|s: &SegmentSummary| s.base_offset)
                .collect();
            (inner.staging_dir().to_path_buf(), bases)
        };
        for base in bases {
            for ext in ["log", "index", "timeindex", "txnindex"] {
                let file = dir.join(segment_file_name(base, ext));
                if file.exists() {
                    self.upload_file(&file)?;
                }
            }
        }
        Ok(())
    }

    /// Uploads the rest and publishes the partition: one conditional put of its manifest.
    pub fn finish(self) -> Result<Summary> {
        self.finish_with(|| Ok(()))
    }

    /// [`Self::finish`], calling `before_publish` when everything is uploaded and nothing is
    /// published yet (tests make it fail, as a writer dying there would).
    pub fn finish_with(mut self, before_publish: impl FnOnce() -> Result<()>) -> Result<Summary> {
        let inner = self
            .inner
            .take()
            .ok_or_else(|| Error::invalid_argument("the writer is already finished"))?;
        let local_target = self.scratch.join(name_of(&self.target));
        let mut summary = inner.finish()?;
        let mut rest: Vec<PathBuf> = std::fs::read_dir(&local_target)
            .map_err(|e| Error::io(e, &local_target))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        rest.sort();
        for file in rest {
            self.upload_file(&file)?;
        }
        before_publish()?;
        self.check_marker()?;
        let manifest = manifest_text(&self.uploaded);
        self.storage.put(
            &self.target.join(MANIFEST),
            manifest.into_bytes(),
            PutMode::Create,
        )?;
        // Published. The marker goes; a failure to remove it leaves the partition readable.
        self.uploaded.clear();
        if let Some(marker) = self.marker.take() {
            marker.release();
        }
        for s in &mut summary.segments {
            s.path = self.target.join(name_of(&s.path));
        }
        Ok(summary)
    }
}

impl Drop for ObjectStoreWriter {
    /// An unfinished write removes what it uploaded, then its marker.
    fn drop(&mut self) {
        self.inner = None;
        for (name, _) in std::mem::take(&mut self.uploaded) {
            let _ = self.storage.delete(&self.target.join(name));
        }
        self.marker = None; // removes it
        if !self.scratch.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.scratch);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The protocol against any storage with a conditional put: local files stand in for a
    //! bucket here (tests/test_object_store_write.py runs it against an S3 server).
    use super::*;
    use crate::arrow::schema::Projection;
    use crate::format::batch::TimestampType;
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use crate::format::Compression;
    use crate::log::discover::discover;
    use crate::log::origin::Origin;
    use crate::read::reader::{decode_bytes, ReaderBuilder};
    use crate::storage::Local;

    pub(crate) fn batches(n: i64) -> Vec<RecordBatch> {
        let mut log = Vec::new();
        for base in (0..n).step_by(10) {
            let mut records = Vec::new();
            for i in 0..10 {
                let value = vec![(base + i) as u8; 200];
                write_record(
                    &mut records,
                    i as i32,
                    0,
                    Some(b"k"),
                    Some(&value),
                    std::iter::empty(),
                );
            }
            let header = BatchHeader {
                base_offset: base,
                partition_leader_epoch: 0,
                compression: Compression::None,
                timestamp_type: TimestampType::CreateTime,
                is_transactional: false,
                is_control: false,
                delete_horizon: false,
                last_offset_delta: 9,
                base_timestamp: 1000 + base,
                max_timestamp: 1000 + base,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
            };
            write_batch(&mut log, &header, &records, 10, None).unwrap();
        }
        let builder = ReaderBuilder::new()
            .with_projection(Projection::default_with_metadata(true))
            .with_batch_size(25);
        decode_bytes(&builder, &log, Origin::default()).unwrap().0
    }

    fn options() -> WriteOptions {
        WriteOptions {
            segment_bytes: 4096,
            ..WriteOptions::default()
        }
    }

    pub(crate) fn offsets(storage: &Arc<dyn Storage>, dir: &Path) -> Vec<i64> {
        let files = discover(storage.as_ref(), dir).unwrap();
        let reader = ReaderBuilder::new()
            .with_storage(storage.clone())
            .build_files(files)
            .unwrap();
        let mut out = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let column = batch.column_by_name("offset").unwrap();
            let column = column
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap();
            out.extend(column.values().iter().copied());
        }
        out
    }

    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kafkalog-publish-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    #[test]
    fn written_partition_reads_back_and_is_published_by_its_manifest() {
        let root = scratch("ok");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let mut writer = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        // Segments already uploaded, not published: a reader sees nothing.
        assert!(names(&target).iter().any(|n| n.ends_with(".log")));
        assert!(discover(storage.as_ref(), &target).unwrap().is_empty());
        let summary = writer.finish().unwrap();
        assert!(summary.segments.len() > 2);
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        assert!(names(&target).contains(&MANIFEST.to_string()));
        assert!(!names(&target).contains(&WRITING.to_string()));
        // A stray object beside a published partition is not read.
        std::fs::copy(
            target.join("00000000000000000000.log"),
            target.join("00000000000000099999.log"),
        )
        .unwrap();
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        // No overwrite without asking; with it, the new partition replaces the old.
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::InvalidArgument);
        let mut writer = ObjectStoreWriter::create(
            storage.clone(),
            &target,
            WriteOptions {
                overwrite: true,
                ..options()
            },
        )
        .unwrap();
        assert!(discover(storage.as_ref(), &target).unwrap().is_empty());
        for batch in batches(30) {
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        assert_eq!(offsets(&storage, &target), (0..30).collect::<Vec<_>>());
        assert!(!names(&target).contains(&"00000000000000099999.log".to_string()));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_write_failing_before_publish_leaves_nothing_readable() {
        let root = scratch("fail");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let mut writer = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        let err = writer
            .finish_with(|| Err(Error::new(ErrorKind::Io, "the writer died")))
            .unwrap_err();
        assert_eq!(err.message, "the writer died");
        assert_eq!(names(&target), Vec::<String>::new(), "cleaned up");
        // One that dies without cleaning up leaves its marker: still nothing to read, and
        // the next writer is told.
        let mut writer = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        std::mem::forget(writer);
        assert!(names(&target).len() > 2);
        assert!(discover(storage.as_ref(), &target).unwrap().is_empty());
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn two_writers_conflict() {
        let root = scratch("two");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let first = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        let overwrite = WriteOptions {
            overwrite: true,
            ..options()
        };
        let err = ObjectStoreWriter::create(storage.clone(), &target, overwrite).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        first.finish().unwrap();
        assert_eq!(offsets(&storage, &target), Vec::<i64>::new());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn manifests_name_only_files_of_the_partition() {
        let ok = manifest_text(&[("00000000000000000000.log".into(), 12)]);
        assert_eq!(parse_manifest(&ok).unwrap().len(), 1);
        for bad in [
            "kafkalog-partition-manifest 1\n1\n../x.log 1\n",
            "kafkalog-partition-manifest 1\n1\na/b.log 1\n",
            "kafkalog-partition-manifest 1\n1\n.. 1\n",
            "kafkalog-partition-manifest 1\n1\n.kafkalog-writing 1\n",
            "kafkalog-partition-manifest 1\n2\nx.log 1\n",
            "kafkalog-partition-manifest 1\n1\nx.log -1\n",
            "something else\n0\n",
        ] {
            assert!(parse_manifest(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn staged_partition_is_copied_and_published_and_the_staging_removed() {
        let root = scratch("staged");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let staged = root
            .join(".spark.kafkalog-job.x.tmp")
            .join("task")
            .join("orders-0");
        let mut writer = ObjectStoreWriter::create(storage.clone(), &staged, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        let target = root.join("out").join("orders-0");
        publish_staged(storage.clone(), &staged, &target, false, DEFAULT_LEASE).unwrap();
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        assert!(names(&target).contains(&MANIFEST.to_string()));
        assert!(!names(&target).contains(&WRITING.to_string()));
        // Not twice without overwrite (and the partition there stays readable).
        let err =
            publish_staged(storage.clone(), &staged, &target, false, DEFAULT_LEASE).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArgument);
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        assert!(!names(&target).contains(&WRITING.to_string()));
        // Another writer holding the target: a conflict, nothing changed.
        std::fs::write(target.join(WRITING), b"x").unwrap();
        let err =
            publish_staged(storage.clone(), &staged, &target, true, DEFAULT_LEASE).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        std::fs::remove_file(target.join(WRITING)).unwrap();
        // A prefix with nothing published is refused.
        let err = publish_staged(
            storage.clone(),
            &root.join("none-0"),
            &target,
            true,
            DEFAULT_LEASE,
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArgument);
        // The whole staging prefix goes.
        remove_prefix(storage.as_ref(), &root.join(".spark.kafkalog-job.x.tmp")).unwrap();
        assert!(names(
            &root
                .join(".spark.kafkalog-job.x.tmp")
                .join("task")
                .join("orders-0")
        )
        .iter()
        .all(|n| !n.ends_with(".log")));
        remove_prefix(storage.as_ref(), &root.join("missing")).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Local files with versions (a counter per object) and a compare-and-swap, as an object
    /// store's ETags and `If-Match`.
    #[derive(Debug, Default)]
    pub(crate) struct Versioned {
        versions: std::sync::Mutex<std::collections::HashMap<PathBuf, u64>>,
    }

    impl Storage for Versioned {
        fn stat(&self, path: &Path) -> Result<crate::storage::Stat> {
            Local.stat(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
            Local.list(dir)
        }
        fn open(&self, path: &Path) -> Result<Box<dyn crate::storage::Object>> {
            Local.open(path)
        }
        fn local_path(&self, path: &Path) -> Option<PathBuf> {
            Local.local_path(path)
        }
        fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
            let mut v = self.versions.lock().unwrap();
            Local.put(path, bytes, mode)?;
            *v.entry(path.to_path_buf()).or_default() += 1;
            Ok(())
        }
        fn delete(&self, path: &Path) -> Result<()> {
            let mut v = self.versions.lock().unwrap();
            v.remove(path);
            Local.delete(path)
        }
        fn read_versioned(&self, path: &Path) -> Result<Option<(Vec<u8>, Option<String>)>> {
            let v = self.versions.lock().unwrap();
            let version = v.get(path).copied().unwrap_or(0).to_string();
            Ok(Local.read(path)?.map(|b| (b, Some(version))))
        }
        fn replace_if(&self, path: &Path, bytes: Vec<u8>, version: &str) -> Result<()> {
            let mut v = self.versions.lock().unwrap();
            let now = v.get(path).copied().unwrap_or(0);
            if now.to_string() != version || Local.read(path)?.is_none() {
                return Err(crate::storage::already_exists(path));
            }
            // Give a racing writer time to read the same version.
            std::thread::sleep(std::time::Duration::from_millis(20));
            Local.put(path, bytes, PutMode::Overwrite)?;
            v.insert(path.to_path_buf(), now + 1);
            Ok(())
        }
    }

    pub(crate) fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn writer_notes_round_trip_and_tell_a_dead_writer() {
        let mine = WriterNote::mine();
        assert_eq!(WriterNote::parse(&mine.text()), Some(mine.clone()));
        assert!(!mine.is_dead_here(), "this process is alive");
        let dead = WriterNote {
            pid: dead_pid(),
            ..mine.clone()
        };
        assert!(dead.is_dead_here());
        let elsewhere = WriterNote {
            host: format!("{}-other", mine.host),
            ..dead.clone()
        };
        assert!(
            !elsewhere.is_dead_here(),
            "another host's process is not known dead"
        );
        assert_eq!(
            WriterNote::parse("kafkalog write started by process 1\n"),
            None
        );
        assert_eq!(
            WriterNote::parse(&mine.text().replace("pid ", "pid x")),
            None
        );
    }

    #[test]
    fn a_dead_writers_marker_is_taken_over_by_exactly_one_of_two_writers() {
        let root = scratch("takeover");
        let target = root.join("orders-0");
        std::fs::create_dir_all(&target).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
        // A live writer's marker (this process's) is a conflict.
        storage
            .put(
                &target.join(WRITING),
                WriterNote::mine().text().into_bytes(),
                PutMode::Create,
            )
            .unwrap();
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        // So is one from another host, or not a note at all.
        for text in [
            WriterNote {
                host: "elsewhere.example".into(),
                pid: dead_pid(),
                ..WriterNote::mine()
            }
            .text(),
            "kafkalog write started by process 1 at 0 ms\n".to_string(),
        ] {
            storage.delete(&target.join(WRITING)).unwrap();
            storage
                .put(&target.join(WRITING), text.into_bytes(), PutMode::Create)
                .unwrap();
            let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
            assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        }
        // A dead writer of this host: two writers race to take it over; one wins.
        storage.delete(&target.join(WRITING)).unwrap();
        let dead = WriterNote {
            pid: dead_pid(),
            ..WriterNote::mine()
        };
        storage
            .put(
                &target.join(WRITING),
                dead.text().into_bytes(),
                PutMode::Create,
            )
            .unwrap();
        let results: Vec<std::result::Result<ObjectStoreWriter, Error>> = std::thread::scope(|s| {
            let a = s.spawn(|| ObjectStoreWriter::create(storage.clone(), &target, options()));
            let b = s.spawn(|| ObjectStoreWriter::create(storage.clone(), &target, options()));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(|r| r.is_ok());
        assert_eq!((won.len(), lost.len()), (1, 1));
        assert_eq!(lost[0].as_ref().err().unwrap().kind, ErrorKind::Conflict);
        let mut writer = won.into_iter().next().unwrap().unwrap();
        let held = std::fs::read_to_string(target.join(WRITING)).unwrap();
        assert_eq!(WriterNote::parse(&held).unwrap().pid, std::process::id());
        for batch in batches(30) {
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        assert_eq!(offsets(&storage, &target), (0..30).collect::<Vec<_>>());
        assert!(!names(&target).contains(&WRITING.to_string()));
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Puts a marker whose note names `host` and ages it by `age` (its modification time).
    pub(crate) fn planted_marker(dir: &Path, host: &str, age: Duration) {
        std::fs::create_dir_all(dir).unwrap();
        let note = WriterNote {
            host: host.into(),
            pid: 4242,
            ..WriterNote::mine()
        };
        std::fs::write(dir.join(WRITING), note.text()).unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(dir.join(WRITING))
            .unwrap();
        file.set_modified(std::time::SystemTime::now() - age)
            .unwrap();
    }

    #[test]
    fn another_hosts_marker_holds_while_fresh_and_one_of_two_takes_it_once_stale() {
        let root = scratch("lease");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
        let lease = Duration::from_millis(500);
        // Fresh: a conflict naming the holder and the age.
        planted_marker(&target, "elsewhere.example", Duration::ZERO);
        let err = Marker::claim(storage.clone(), &target, lease).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        assert!(err
            .message
            .contains("process 4242 on host \"elsewhere.example\""));
        assert!(err.message.contains("has not expired"), "{}", err.message);
        // Older than the lease and the clock's slack: two takers race, exactly one wins.
        planted_marker(&target, "elsewhere.example", lease + CLOCK_SLACK + lease);
        let results: Vec<Result<(Marker, bool)>> = std::thread::scope(|s| {
            let a = s.spawn(|| Marker::claim(storage.clone(), &target, lease));
            let b = s.spawn(|| Marker::claim(storage.clone(), &target, lease));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(|r| r.is_ok());
        assert_eq!((won.len(), lost.len()), (1, 1));
        assert_eq!(lost[0].as_ref().err().unwrap().kind, ErrorKind::Conflict);
        let (marker, took_over) = won.into_iter().next().unwrap().unwrap();
        assert!(took_over);
        // No clock probe is left behind.
        assert_eq!(
            std::fs::read_dir(&target).unwrap().count(),
            1,
            "only the marker"
        );
        // The winner's marker is refreshed every third of the lease: after several leases
        // it is still held, and a third writer is refused.
        std::thread::sleep(lease * 3);
        let held =
            WriterNote::parse(&std::fs::read_to_string(target.join(WRITING)).unwrap()).unwrap();
        assert!(held.beat >= 3, "refreshed {} times", held.beat);
        let err = Marker::claim(storage.clone(), &target, lease).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        marker.check().unwrap();
        marker.release();
        assert!(!target.join(WRITING).exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_holder_whose_marker_was_taken_fails_its_check() {
        let root = scratch("lost");
        let target = root.join("orders-0");
        std::fs::create_dir_all(&target).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
        let (marker, took_over) = Marker::claim(storage.clone(), &target, DEFAULT_LEASE).unwrap();
        assert!(!took_over);
        marker.check().unwrap();
        // Another writer took it over (as after a long stall of this one).
        planted_marker(&target, "elsewhere.example", Duration::ZERO);
        let err = marker.check().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        assert!(err.message.contains("lease"), "{}", err.message);
        drop(marker); // leaves the other writer's marker alone
        assert!(std::fs::read_to_string(target.join(WRITING))
            .unwrap()
            .contains("elsewhere.example"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
