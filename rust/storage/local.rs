//! Local files. A `file://` URI is read as the path it names.

use super::{already_exists, Entry, Object, PutMode, Stat, Storage};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The local file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

/// The path a local location names (`file:///x` is `/x`).
pub fn local(path: &Path) -> PathBuf {
    match path.to_str().and_then(|s| s.strip_prefix("file://")) {
        Some(rest) => PathBuf::from(rest),
        None => path.to_path_buf(),
    }
}

impl Local {
    /// The path a local location names (`file:///x` is `/x`).
    pub fn local_path_of(path: &Path) -> PathBuf {
        local(path)
    }
}

impl Storage for Local {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        match std::fs::metadata(local(path)) {
            Ok(m) if m.is_dir() => Ok(Stat::Dir),
            Ok(m) => Ok(Stat::File { size: m.len() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Stat::Missing),
            Err(e) => Err(Error::io(e, path)),
        }
    }

    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(local(dir)).map_err(|e| Error::io(e, dir))? {
            let entry = entry.map_err(|e| Error::io(e, dir))?;
            // Follow symlinks as a broker does (a log directory may link its partitions).
            let Ok(meta) = std::fs::metadata(entry.path()) else {
                continue; // a dangling link, or gone since the listing
            };
            out.push(Entry {
                path: dir.join(entry.file_name()),
                is_dir: meta.is_dir(),
                size: meta.len(),
            });
        }
        Ok(out)
    }

    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        let file = File::open(local(path)).map_err(|e| Error::io(e, path))?;
        let meta = file.metadata().map_err(|e| Error::io(e, path))?;
        if meta.is_dir() {
            return Err(Error::invalid_argument("a directory, not a file").with_path(path));
        }
        Ok(Box::new(LocalFile {
            file,
            len: meta.len(),
            at: 0,
            path: path.to_path_buf(),
            mapped: None,
        }))
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        match std::fs::read(local(path)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(e, path)),
        }
    }

    fn local_path(&self, path: &Path) -> Option<PathBuf> {
        Some(local(path))
    }

    fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
        let target = local(path);
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(e, path))?;
        }
        match mode {
            PutMode::Create => {
                let mut file = match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                {
                    Ok(file) => file,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        return Err(already_exists(path))
                    }
                    Err(e) => return Err(Error::io(e, path)),
                };
                file.write_all(&bytes).map_err(|e| Error::io(e, path))?;
                file.sync_all().map_err(|e| Error::io(e, path))
            }
            PutMode::Overwrite => {
                // Beside the target, then renamed over it: never half an object.
                let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
                let tmp = target.with_file_name(format!(
                    ".{}.{}.tmp",
                    name.unwrap_or_default(),
                    std::process::id()
                ));
                std::fs::write(&tmp, &bytes).map_err(|e| Error::io(e, path))?;
                std::fs::rename(&tmp, &target).map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    Error::io(e, path)
                })
            }
        }
    }

    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        let target = local(path);
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
        let tmp = target.with_file_name(format!(
            ".{}.{}.tmp",
            name.unwrap_or_default(),
            std::process::id()
        ));
        std::fs::copy(from, &tmp).map_err(|e| Error::io(e, path))?;
        std::fs::rename(&tmp, &target).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(e, path)
        })
    }

    fn delete(&self, path: &Path) -> Result<()> {
        match std::fs::remove_file(local(path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(e, path)),
            _ => Ok(()),
        }
    }
}

struct LocalFile {
    file: File,
    len: u64,
    /// Where the file's cursor is, to skip a seek on sequential reads.
    at: u64,
    path: PathBuf,
    /// Its map, once one was asked for and made.
    mapped: Option<Mapped>,
}

impl Object for LocalFile {
    fn mapped(&mut self) -> Option<Mapped> {
        if self.mapped.is_none() {
            self.mapped = Mapped::of(&self.file, self.len, &self.path);
        }
        self.mapped.clone()
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let take = (len as u64).min(self.len.saturating_sub(offset));
        if take == 0 {
            return Ok(0);
        }
        if offset != self.at {
            self.file
                .seek(SeekFrom::Start(offset))
                .map_err(|e| Error::io(e, &self.path))?;
            self.at = offset;
        }
        out.reserve(take as usize);
        // Reads into the spare capacity: no zeroing first.
        let n = (&mut self.file)
            .take(take)
            .read_to_end(out)
            .map_err(|e| Error::io(e, &self.path))?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Files at least this large are memory-mapped rather than read (see [`Mapped`]); for smaller
/// ones a map's set-up and page-table work costs more than the copy it saves.
pub const MAP_MIN: u64 = 1 << 20;

/// A local file's bytes, memory-mapped: the decoders read the page cache in place, where
/// `read(2)` would first copy every byte into a buffer (14-23 ns a record, issue 18).
///
/// The hazard of a map is a file truncated under it (a broker truncates a segment on a leader
/// change or in recovery; retention deletes whole files, which leaves a map intact): touching a
/// page past the new end raises SIGBUS, which would kill the Python process. So a process-wide
/// SIGBUS handler (installed on the first map, chaining to the handler before it) looks the
/// faulting address up among the live maps: if it is in one, the rest of that map is replaced by
/// zero pages, the map is marked truncated and the reader continues over zeros until its next
/// [`Mapped::check`], which turns the truncation into a typed I/O error. `check` also compares
/// the file's size with the map's, which catches a truncation past the pages the reader touched
/// (no fault). A file truncated and grown back to its size before any fault is not detected; its
/// bytes are then what the broker wrote since. A fault anywhere else goes to the previous handler.
///
/// Only files of at least `MAP_MIN` (1 MiB) bytes are mapped, and only when a slot of the handler's
/// table is free and `KAFKALOG_MMAP` is not `0`; everything else (and every platform other than
/// Unix) is read as before.
#[derive(Clone)]
pub struct Mapped(std::sync::Arc<MapInner>);

struct MapInner {
    map: memmap2::Mmap,
    file: File,
    path: PathBuf,
    /// Index in the SIGBUS handler's table.
    #[cfg(unix)]
    slot: usize,
}

impl Mapped {
    /// The file's bytes as they were mapped (its size when it was opened).
    pub fn bytes(&self) -> &[u8] {
        &self.0.map
    }

    /// The map as an Arrow buffer that keeps it (and its SIGBUS slot) alive: for `binary_view`
    /// columns that point into the file instead of copying it. The map outlives the reader for
    /// as long as any array holds such a buffer; a file deleted meanwhile (retention, the
    /// cleaner's swap) keeps its bytes. The one change it can see is the broker truncating the
    /// file in place: bytes of the truncated pages then read as zeros once touched (the guard
    /// below), or as what the broker wrote there since if the file grew back before they were
    /// touched. Either is wrong data, never a fault.
    pub fn buffer(&self) -> arrow_buffer::Buffer {
        let bytes = self.bytes();
        let Some(ptr) = std::ptr::NonNull::new(bytes.as_ptr().cast_mut()) else {
            return arrow_buffer::Buffer::default();
        };
        // SAFETY: `ptr..ptr + len` is the map, which stays mapped (read-only, never moved) for
        // as long as the `MapInner` that owns it lives; the buffer holds an `Arc` of it. Its
        // bytes change only as described above (see `Mapped::of`), which makes values wrong,
        // never out of bounds: the buffer's length is fixed, and a truncated page is replaced
        // by a readable zero page rather than unmapped.
        unsafe { arrow_buffer::Buffer::from_custom_allocation(ptr, bytes.len(), self.0.clone()) }
    }

    /// An error when the file was truncated under the map since it was mapped: bytes read from
    /// it since then may be zeros or newer bytes and must not be trusted.
    pub fn check(&self) -> Result<()> {
        let truncated = self.truncated()
            || self
                .0
                .file
                .metadata()
                .map_or(true, |m| m.len() < self.0.map.len() as u64);
        if truncated {
            return Err(Error::io(
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file was truncated while it was being read",
                ),
                &self.0.path,
            ));
        }
        Ok(())
    }

    #[cfg(unix)]
    fn truncated(&self) -> bool {
        guard::truncated(self.0.slot)
    }

    #[cfg(not(unix))]
    fn truncated(&self) -> bool {
        false
    }

    /// Maps `file` when it is large enough and the SIGBUS guard can watch it.
    #[cfg(unix)]
    fn of(file: &File, len: u64, path: &Path) -> Option<Mapped> {
        if len < MAP_MIN || usize::try_from(len).is_err() || !mapping_allowed() {
            return None;
        }
        let file = file.try_clone().ok()?;
        // SAFETY: the map is read-only and private to this process. The bytes under it can
        // change only if the file is modified in place: Kafka appends to a segment and never
        // rewrites its bytes; the one change it makes is truncation, which the SIGBUS guard
        // (below) and `check` turn into an error. The decoders index the map with bounds
        // checks against its fixed length, so changed bytes give wrong values, never an
        // access outside the map.
        let map = unsafe { memmap2::MmapOptions::new().len(len as usize).map(&file) }.ok()?;
        let _ = map.advise(memmap2::Advice::Sequential);
        let range = map.as_ptr() as usize..map.as_ptr() as usize + map.len();
        let slot = guard::watch(range)?;
        Some(Mapped(std::sync::Arc::new(MapInner {
            map,
            file,
            path: path.to_path_buf(),
            slot,
        })))
    }

    #[cfg(not(unix))]
    fn of(_: &File, _: u64, _: &Path) -> Option<Mapped> {
        None
    }
}

/// `KAFKALOG_MMAP=0` in the environment turns mapping off (every file is read): for comparing
/// the two, or for a process whose own SIGBUS handling must not be chained.
fn mapping_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var_os("KAFKALOG_MMAP").is_none_or(|v| v != "0"))
}

impl Drop for MapInner {
    fn drop(&mut self) {
        // Out of the table before the map is unmapped (the field drops after this).
        #[cfg(unix)]
        guard::unwatch(self.slot);
    }
}

/// The SIGBUS handler that makes a truncation under a map an error rather than a crash.
#[cfg(unix)]
mod guard {
    use std::ops::Range;
    use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// At most this many files are mapped at once; more are read.
    const SLOTS: usize = 64;

    struct Slot {
        used: AtomicBool,
        /// The map's first byte; 0 while the slot holds no map.
        start: AtomicUsize,
        end: AtomicUsize,
        truncated: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Slot = Slot {
        used: AtomicBool::new(false),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        truncated: AtomicBool::new(false),
    };
    static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    /// The handler that was installed before ours (leaked: read by the handler at any time).
    static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
    static INSTALL: Mutex<()> = Mutex::new(());

    /// Takes a slot for the map at `range`, installing the handler if it is not the current
    /// one. None: no free slot or no handler, and the file is read instead.
    pub(super) fn watch(range: Range<usize>) -> Option<usize> {
        if !install() {
            return None;
        }
        let index = TABLE.iter().position(|s| {
            s.used
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        let slot = &TABLE[index];
        slot.truncated.store(false, Ordering::Release);
        slot.end.store(range.end, Ordering::Release);
        slot.start.store(range.start, Ordering::Release);
        Some(index)
    }

    pub(super) fn unwatch(index: usize) {
        let slot = &TABLE[index];
        slot.start.store(0, Ordering::Release);
        slot.end.store(0, Ordering::Release);
        slot.used.store(false, Ordering::Release);
    }

    pub(super) fn truncated(index: usize) -> bool {
        TABLE[index].truncated.load(Ordering::Acquire)
    }

    /// Makes `on_sigbus` the SIGBUS handler unless it is already; whether it is.
    fn install() -> bool {
        let Ok(_lock) = INSTALL.lock() else {
            return false;
        };
        // SAFETY: sigaction with a zeroed struct to query and a filled one to set; the old
        // action is leaked into PREVIOUS so that the handler can read it at any time.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut current) != 0 {
                return false;
            }
            if current.sa_sigaction == on_sigbus as *const () as usize {
                return true;
            }
            if PAGE.load(Ordering::Relaxed) == 0 {
                let page = libc::sysconf(libc::_SC_PAGESIZE);
                if page <= 0 {
                    return false;
                }
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_sigbus as *const () as usize;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut ours.sa_mask);
            let previous = Box::into_raw(Box::new(std::mem::zeroed::<libc::sigaction>()));
            if libc::sigaction(libc::SIGBUS, &ours, previous) != 0 {
                drop(Box::from_raw(previous));
                return false;
            }
            PREVIOUS.store(previous, Ordering::Release);
        }
        true
    }

    /// SIGBUS in a watched map: its pages from the fault on become zero pages and the map is
    /// marked truncated; the faulting read then completes with zeros. Any other SIGBUS goes to
    /// the handler installed before (or to the default action, which ends the process).
    extern "C" fn on_sigbus(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo; only async-signal-safe calls follow
        // (atomics, mmap, sigaction), and mmap with MAP_FIXED replaces pages only inside a map
        // this process owns and still holds (a slot is cleared before its map is unmapped).
        unsafe {
            // Only faults (a positive code), not a SIGBUS another process or thread sent.
            let address = if (*info).si_code > 0 {
                (*info).si_addr() as usize
            } else {
                0
            };
            let page = PAGE.load(Ordering::Relaxed).max(1);
            for slot in &TABLE {
                let start = slot.start.load(Ordering::Acquire);
                let end = slot.end.load(Ordering::Acquire);
                if start == 0 || address < start || address >= end {
                    continue;
                }
                let from = address & !(page - 1);
                let zeros = libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                );
                if zeros != libc::MAP_FAILED {
                    slot.truncated.store(true, Ordering::Release);
                    return;
                }
            }
            let previous = PREVIOUS.load(Ordering::Acquire);
            if !previous.is_null() {
                let action = &*previous;
                let handler = action.sa_sigaction;
                if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
                    if action.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(handler);
                        f(signal, info, context);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                        f(signal);
                    }
                    return;
                }
            }
            // Not ours and no handler before: the default action, when the fault repeats.
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kafkalog-local-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4096) as u8).collect()
    }

    #[test]
    fn small_files_are_read_large_ones_mapped() {
        let dir = scratch("maps");
        let (small, large) = (dir.join("small.log"), dir.join("large.log"));
        std::fs::write(&small, pattern(1000)).unwrap();
        std::fs::write(&large, pattern(MAP_MIN as usize + 5)).unwrap();
        let mut object = Local.open(&small).unwrap();
        assert!(object.mapped().is_none());
        let mut out = Vec::new();
        assert_eq!(object.read_into(0, 2000, &mut out).unwrap(), 1000);
        assert_eq!(out, pattern(1000));
        let mut object = Local.open(&large).unwrap();
        let map = object.mapped().expect("a large local file is mapped");
        assert_eq!(map.bytes(), &pattern(MAP_MIN as usize + 5)[..]);
        map.check().unwrap();
        // Reading through the object still works beside the map.
        let mut out = Vec::new();
        object.read_into(MAP_MIN, 100, &mut out).unwrap();
        assert_eq!(out, &pattern(MAP_MIN as usize + 5)[MAP_MIN as usize..]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_truncated_under_its_map_is_an_error_not_a_crash() {
        let dir = scratch("truncated");
        let path = dir.join("00000000000000000000.log");
        let len = 4 * MAP_MIN as usize;
        std::fs::write(&path, pattern(len)).unwrap();
        let mut object = Local.open(&path).unwrap();
        let map = object.mapped().expect("mapped");
        assert_eq!(map.bytes()[..4096], pattern(4096)[..]);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        // Past the new end: without the guard, SIGBUS ends the test process here.
        let tail: u64 = map.bytes()[len / 2..].iter().map(|&b| u64::from(b)).sum();
        assert_eq!(tail, 0, "the truncated pages read as zeros");
        assert!(map.truncated());
        let err = map.check().unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Io);
        assert_eq!(err.path.as_deref(), Some(path.as_path()));
        assert!(err.message.contains("truncated"), "{err}");
        // Truncated without any fault on the map: the size check still sees it.
        std::fs::write(&path, pattern(len)).unwrap();
        let mut object = Local.open(&path).unwrap();
        let map = object.mapped().expect("mapped");
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(0).unwrap();
        assert!(map.check().is_err());
        drop(file);
        drop(map);
        drop(object);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
