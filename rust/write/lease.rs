//! Leases on a writer's marker in an object store.
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
use crate::log::manifest::WRITING;
use crate::storage::{PutMode, Storage};
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
pub(crate) const CLOCK_PROBE: &str = ".kafkalog-clock";

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
