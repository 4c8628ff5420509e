//! Where bytes live: the one abstraction every read in kafkalog goes through. Nothing outside
//! this module (and the writer, which creates local files) opens a file.
//!
//! A location is a [`Path`]: a local path (`/backup/kafka-logs/orders-0/...log`, or a
//! `file://` URI) or an object-store URI (`s3://bucket/kafka-logs/orders-0/...log`,
//! `gs://`, `az://`/`abfss://`, `http(s)://`). URIs are kept as paths so that the names
//! Kafka's layout is built on (a segment's directory, the `.index` beside a `.log`) work the
//! same everywhere: `parent()`, `with_extension()` and `file_name()` act on the URI's key.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the [`Storage`] and [`Object`] traits (reads, and atomic writes: put, conditional put, delete, upload), the [`Router`] that picks a store by scheme, byte counting |
//! | `local.rs` | local files |
//! | `object.rs` | object stores through Apache Arrow's `object_store` crate, with read-ahead |
//! | `glob.rs` | glob patterns expanded over any store |
//! | `tiered/` | tiered-storage buckets (KIP-405 plugins' layouts) shown as broker files: `keys.rs` (decryption), `chunks.rs` (a segment's chunks), `discovery.rs` (layouts and settings) |
//!
//! The Python bindings add a third kind: any `pyarrow.fs.FileSystem` or fsspec filesystem.

pub mod glob;
mod local;
#[cfg(feature = "object-store")]
mod object;
pub mod tiered;

pub use local::{Local, Mapped};
#[cfg(feature = "object-store")]
pub use object::{ObjectStores, StorageOptions};

/// Options for object stores: configuration keys and values.
#[cfg(not(feature = "object-store"))]
pub type StorageOptions = Vec<(String, String)>;

/// Without the `object-store` feature: every URI is refused, naming the feature.
#[cfg(not(feature = "object-store"))]
#[derive(Debug, Default)]
pub struct ObjectStores;

#[cfg(not(feature = "object-store"))]
impl ObjectStores {
    /// The stand-in: its options are ignored, as it reads nothing.
    pub fn new(_: StorageOptions) -> Self {
        ObjectStores
    }

    fn refuse(path: &Path) -> Error {
        Error::invalid_argument(
            "this build of kafkalog reads no object stores (built without the object-store \
             feature); pass filesystem=",
        )
        .with_path(path)
    }
}

#[cfg(not(feature = "object-store"))]
impl Storage for ObjectStores {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        Err(Self::refuse(path))
    }
    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        Err(Self::refuse(dir))
    }
    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        Err(Self::refuse(path))
    }
}

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What is at a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    /// A file, or an object.
    File {
        /// Its size in bytes.
        size: u64,
    },
    /// A directory, or an object-store prefix that has objects under it.
    Dir,
    /// Nothing there.
    Missing,
}

/// One child of a directory or prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The child's full location.
    pub path: PathBuf,
    /// Whether the child is a directory (a prefix) rather than a file.
    pub is_dir: bool,
    /// Bytes, for a file.
    pub size: u64,
}

/// A place bytes live: list, size, read a byte range.
pub trait Storage: Send + Sync + fmt::Debug {
    /// What is at `path`.
    fn stat(&self, path: &Path) -> Result<Stat>;

    /// The children of a directory (prefix), in no particular order.
    fn list(&self, dir: &Path) -> Result<Vec<Entry>>;

    /// Opens a file (object) for reading byte ranges. A missing one is an I/O error of kind
    /// `NotFound` naming it.
    fn open(&self, path: &Path) -> Result<Box<dyn Object>>;

    /// A whole small file (an index, a checkpoint), or `None` when there is none.
    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        let mut object = match self.open(path) {
            Ok(object) => object,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let len = object.len();
        let mut out = Vec::with_capacity(len as usize);
        let mut at = 0u64;
        while at < len {
            let n = object.read_into(at, (len - at) as usize, &mut out)?;
            if n == 0 {
                break; // shorter than it was
            }
            at += n as u64;
        }
        Ok(Some(out))
    }

    /// The local file behind `path`, when there is one (writers and in-place tools need it).
    fn local_path(&self, _path: &Path) -> Option<PathBuf> {
        None
    }

    /// This storage as [`std::any::Any`], for the few places that depend on what kind of store
    /// it is (a tiered-storage store's settings: [`tiered::settings_of`]).
    fn as_any(&self) -> &dyn std::any::Any;

    // Writing. Each call is atomic: a reader sees the whole new object or none of it.

    /// Writes a whole object. With [`PutMode::Create`] it must not exist yet: then an object
    /// already there is an I/O error of kind `AlreadyExists` (the store's conditional put, so
    /// that of two writers exactly one succeeds).
    fn put(&self, path: &Path, _bytes: Vec<u8>, _mode: PutMode) -> Result<()> {
        Err(read_only(path))
    }

    /// Removes an object; one already gone is not an error.
    fn delete(&self, path: &Path) -> Result<()> {
        Err(read_only(path))
    }

    /// Copies the local file `from` to the object `path` (overwriting), in parts for a large
    /// file, so that memory stays bounded by a few parts.
    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        let bytes = std::fs::read(from).map_err(|e| Error::io(e, from))?;
        self.put(path, bytes, PutMode::Overwrite)
    }

    /// Reads a whole object with its version (an object store's ETag), for a later
    /// [`Storage::replace_if`]; `None` when it is not there. Stores without versions give
    /// `None` for the version.
    fn read_versioned(&self, path: &Path) -> Result<Option<(Vec<u8>, Option<String>)>> {
        Ok(self.read(path)?.map(|bytes| (bytes, None)))
    }

    /// Replaces an object only if it is still at `version` (a compare-and-swap: the store's
    /// `If-Match`), so that of two writers replacing the same version exactly one succeeds;
    /// the other gets an I/O error of kind `AlreadyExists`. Stores without it refuse.
    fn replace_if(&self, path: &Path, _bytes: Vec<u8>, _version: &str) -> Result<()> {
        Err(
            Error::invalid_argument("this store cannot replace an object conditionally")
                .with_path(path),
        )
    }

    /// When the object was last written, by the store's own clock (an object store's
    /// `Last-Modified`; a local file's modification time), in milliseconds since the Unix
    /// epoch; `None` when it is not there or the store does not say. Leases are measured with
    /// it, so that writers on hosts whose clocks disagree still agree on an age.
    fn modified_ms(&self, path: &Path) -> Result<Option<u64>> {
        let Some(local) = self.local_path(path) else {
            return Ok(None);
        };
        match std::fs::metadata(&local) {
            Ok(meta) => Ok(meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as u64)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(e, &local)),
        }
    }

    /// Copies the object `from` to `to` (overwriting) in the same store. Object stores copy
    /// server-side; the default reads the object and puts it.
    fn copy(&self, from: &Path, to: &Path) -> Result<()> {
        let bytes = self.read(from)?.ok_or_else(|| not_found(from))?;
        self.put(to, bytes, PutMode::Overwrite)
    }
}

/// How [`Storage::put`] treats an object already at the location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutMode {
    /// Replace whatever is there.
    Overwrite,
    /// Only if nothing is there (a conditional put: `If-None-Match: *`, `O_EXCL`).
    Create,
}

fn read_only(path: &Path) -> Error {
    Error::invalid_argument("this storage cannot be written to").with_path(path)
}

/// The error for a conditional create that found an object there.
pub fn already_exists(path: &Path) -> Error {
    Error::io(
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the object already exists",
        ),
        path,
    )
}

/// A file (object) open for reading.
pub trait Object: Send + Sync {
    /// Its size when it was opened; reads stop there.
    fn len(&self) -> u64;

    /// Whether the object has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends up to `len` bytes from `offset` to `out`; fewer only at the end of the object.
    /// Returns how many.
    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize>;

    /// Says that `range` will be read in order, so that a remote store can fetch ahead.
    fn will_read(&mut self, _range: std::ops::Range<u64>) {}

    /// The whole object as a memory map, for readers that can take the bytes in place; None
    /// (the default) when it is not mapped, and then it is read with `read_into`.
    fn mapped(&mut self) -> Option<Mapped> {
        None
    }
}

/// Reads exactly the bytes of `range` that exist (fewer at the end of the object).
pub fn read_range(object: &mut dyn Object, range: std::ops::Range<u64>) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity((range.end - range.start) as usize);
    let mut at = range.start;
    while at < range.end {
        let n = object.read_into(at, (range.end - at) as usize, &mut out)?;
        if n == 0 {
            break;
        }
        at += n as u64;
    }
    Ok(out)
}

/// The scheme of a URI location (`s3`, `gs`, ...), or `None` for a local path.
pub fn scheme(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    let (scheme, rest) = s.split_once("://")?;
    let ok = !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b));
    (ok && !rest.is_empty()).then_some(scheme)
}

/// Whether a location is on this machine's file system.
pub fn is_local(path: &Path) -> bool {
    matches!(scheme(path), None | Some("file"))
}

/// Local files and object stores behind one face: a location's scheme picks the store.
/// Object stores are built once per bucket (account, host) with the options and the usual
/// environment variables, and kept for the router's life.
#[derive(Debug, Default)]
pub struct Router {
    local: Local,
    objects: ObjectStores,
}

impl Router {
    /// Local files, and object stores built on first use with `options`.
    pub fn new(options: StorageOptions) -> Self {
        Router {
            local: Local,
            objects: ObjectStores::new(options),
        }
    }

    fn pick(&self, path: &Path) -> &dyn Storage {
        if is_local(path) {
            &self.local
        } else {
            &self.objects
        }
    }
}

impl Storage for Router {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        self.pick(path).stat(path)
    }
    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        self.pick(dir).list(dir)
    }
    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        self.pick(path).open(path)
    }
    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        self.pick(path).read(path)
    }
    fn local_path(&self, path: &Path) -> Option<PathBuf> {
        self.pick(path).local_path(path)
    }
    fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
        self.pick(path).put(path, bytes, mode)
    }
    fn delete(&self, path: &Path) -> Result<()> {
        self.pick(path).delete(path)
    }
    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        self.pick(path).upload(path, from)
    }
    fn read_versioned(&self, path: &Path) -> Result<Option<(Vec<u8>, Option<String>)>> {
        self.pick(path).read_versioned(path)
    }
    fn replace_if(&self, path: &Path, bytes: Vec<u8>, version: &str) -> Result<()> {
        self.pick(path).replace_if(path, bytes, version)
    }
    fn modified_ms(&self, path: &Path) -> Result<Option<u64>> {
        self.pick(path).modified_ms(path)
    }
    fn copy(&self, from: &Path, to: &Path) -> Result<()> {
        if is_local(from) == is_local(to) {
            self.pick(to).copy(from, to)
        } else {
            let bytes = self.read(from)?.ok_or_else(|| not_found(from))?;
            self.put(to, bytes, PutMode::Overwrite)
        }
    }
}

/// The default storage: local files, and object stores configured from the environment.
pub fn default_storage() -> Arc<dyn Storage> {
    Arc::new(tiered::Tiered::new(
        Arc::new(Router::default()),
        tiered::keys::KeyRing::default(),
    ))
}

/// Counts the bytes read through a storage, per file: for tests and benchmarks that hold
/// planning to its byte budget.
#[derive(Debug)]
pub struct Counting {
    inner: Arc<dyn Storage>,
    counts: Arc<Mutex<HashMap<PathBuf, u64>>>,
    requests: Arc<AtomicU64>,
}

impl Counting {
    /// Counts the reads through `inner`, starting at zero.
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        Counting {
            inner,
            counts: Arc::default(),
            requests: Arc::default(),
        }
    }

    /// Bytes read so far, per file.
    pub fn counts(&self) -> HashMap<PathBuf, u64> {
        self.counts.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// Bytes read so far from files whose name ends with `suffix` (e.g. `.log`).
    pub fn bytes_of(&self, suffix: &str) -> u64 {
        self.counts()
            .iter()
            .filter(|(p, _)| p.to_string_lossy().ends_with(suffix))
            .map(|(_, n)| n)
            .sum()
    }

    /// Read calls so far (each a request, for a remote store).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    fn add(counts: &Mutex<HashMap<PathBuf, u64>>, path: &Path, n: usize) {
        if let Ok(mut c) = counts.lock() {
            *c.entry(path.to_path_buf()).or_default() += n as u64;
        }
    }
}

struct CountingObject {
    inner: Box<dyn Object>,
    path: PathBuf,
    counts: Arc<Mutex<HashMap<PathBuf, u64>>>,
    requests: Arc<AtomicU64>,
}

impl Object for CountingObject {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let n = self.inner.read_into(offset, len, out)?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        Counting::add(&self.counts, &self.path, n);
        Ok(n)
    }
    fn will_read(&mut self, range: std::ops::Range<u64>) {
        self.inner.will_read(range)
    }
}

impl Storage for Counting {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        self.inner.stat(path)
    }
    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        self.inner.list(dir)
    }
    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        Ok(Box::new(CountingObject {
            inner: self.inner.open(path)?,
            path: path.to_path_buf(),
            counts: self.counts.clone(),
            requests: self.requests.clone(),
        }))
    }
    fn local_path(&self, path: &Path) -> Option<PathBuf> {
        self.inner.local_path(path)
    }
    fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
        self.inner.put(path, bytes, mode)
    }
    fn delete(&self, path: &Path) -> Result<()> {
        self.inner.delete(path)
    }
    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        self.inner.upload(path, from)
    }
    fn copy(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.copy(from, to)
    }
    fn read_versioned(&self, path: &Path) -> Result<Option<(Vec<u8>, Option<String>)>> {
        self.inner.read_versioned(path)
    }
    fn replace_if(&self, path: &Path, bytes: Vec<u8>, version: &str) -> Result<()> {
        self.inner.replace_if(path, bytes, version)
    }
    fn modified_ms(&self, path: &Path) -> Result<Option<u64>> {
        self.inner.modified_ms(path)
    }
}

/// The error for a location that is not there.
pub fn not_found(path: &Path) -> Error {
    Error::io(
        std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory"),
        path,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(scheme(Path::new("s3://b/k")), Some("s3"));
        assert_eq!(scheme(Path::new("file:///tmp/x")), Some("file"));
        assert_eq!(scheme(Path::new("/tmp/x")), None);
        assert_eq!(scheme(Path::new("relative/a://b")), None);
        assert!(is_local(Path::new("file:///tmp")));
        assert!(!is_local(Path::new("gs://b/")));
        // Kafka's layout works on URIs as on paths.
        let log = Path::new("s3://b/logs/orders-0/00000000000000000000.log");
        assert_eq!(
            log.with_extension("index"),
            Path::new("s3://b/logs/orders-0/00000000000000000000.index")
        );
        assert_eq!(log.parent().unwrap(), Path::new("s3://b/logs/orders-0"));
    }

    #[test]
    fn local_reads_and_counts() {
        let dir = std::env::temp_dir().join(format!("kafkalog-storage-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.log"), b"0123456789").unwrap();
        let counting = Counting::new(default_storage());
        assert_eq!(
            counting.stat(&dir.join("a.log")).unwrap(),
            Stat::File { size: 10 }
        );
        assert_eq!(counting.stat(&dir).unwrap(), Stat::Dir);
        assert_eq!(counting.stat(&dir.join("nope")).unwrap(), Stat::Missing);
        let mut listed = counting.list(&dir).unwrap();
        listed.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(listed.len(), 2);
        assert!(!listed[0].is_dir && listed[0].size == 10);
        let mut object = counting.open(&dir.join("a.log")).unwrap();
        assert_eq!(read_range(object.as_mut(), 3..7).unwrap(), b"3456");
        assert_eq!(read_range(object.as_mut(), 8..20).unwrap(), b"89");
        assert_eq!(counting.bytes_of(".log"), 6);
        let err = counting.open(&dir.join("nope")).err().unwrap();
        assert!(err.is_not_found());
        assert!(counting.read(&dir.join("nope")).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
