//! Object stores (S3 and S3-compatible servers, Google Cloud Storage, Azure, plain HTTP(S))
//! through Apache Arrow's `object_store` crate, as polars, delta-rs and DataFusion use it.
//!
//! - Credentials, regions and endpoints come from the usual environment variables
//!   (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`, `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_*`, ...)
//!   and from options, which take `object_store`'s configuration keys (`aws_endpoint`,
//!   `aws_allow_http`, `google_service_account`, `azure_storage_account_name`, `timeout`, ...).
//! - Every request has a timeout (30 s, 5 s to connect, unless options say otherwise) and is
//!   retried with backoff where that is safe (`max_retries`, `retry_timeout` in seconds), so a
//!   dropped connection neither hangs a read nor fails it at once.
//! - Writes are whole-object puts (conditional with `If-None-Match: *` where asked, the
//!   store's atomic create), deletes, and uploads of large files in 16 MiB parts, four in
//!   flight, aborted on failure so that no half object is ever visible.
//! - A sequential read ([`Object::will_read`]) that runs to the end of the object (a whole
//!   segment, or its rest) and is longer than 8 MiB, or any of 32 MiB or more, is one
//!   streaming GET of the range (open-ended when it runs to the end of the object), read while
//!   the caller decodes, with at most 16 MiB buffered ahead. Many ranged GETs cost a request
//!   each, and some servers serve ranges far slower than a stream. A stream that fails (a
//!   dropped connection, a timeout while the caller was slow) is started again from the next
//!   byte not yet received, three times without progress at most, then fails naming the
//!   object and the byte range.
//! - Other sequential reads fetch 8 MiB blocks ahead, four in flight; a random read (an
//!   index entry, a batch header) fetches exactly the range it asks for.

use super::{already_exists, not_found, Entry, Object, PutMode, Stat, Storage};
use crate::error::{Error, ErrorKind, Result};
use bytes::Bytes;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, ObjectStoreScheme, RetryConfig};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use url::Url;

/// Options for object stores: `object_store` configuration keys and values, plus
/// `max_retries` and `retry_timeout` (seconds).
pub type StorageOptions = Vec<(String, String)>;

/// Files up to this size are uploaded in one request; larger ones in parts of this size.
const PART: usize = 16 << 20;
/// Parts of one upload in flight.
const PARTS_IN_FLIGHT: usize = 4;

/// A bounded sequential read at least this long is one streaming GET.
const STREAM_MIN: u64 = 32 << 20;
/// A stream hands over its bytes in pieces of about this size...
const STREAM_PIECE: usize = 1 << 20;
/// ...and keeps at most this many pieces ahead of the reader.
const STREAM_AHEAD: usize = 16;
/// Failures of one stream in a row (no byte received in between) before a read fails.
const STREAM_RETRIES: u32 = 3;

/// Bytes one read-ahead request fetches.
const BLOCK: u64 = 8 << 20;
/// Read-ahead requests in flight per open object.
const DEPTH: usize = 4;

/// The runtime that drives object-store requests: created on first use, and again in a
/// process forked after that (Spark's Python workers are forks).
fn runtime() -> Result<Arc<tokio::runtime::Runtime>> {
    static RUNTIME: Mutex<Option<(u32, Arc<tokio::runtime::Runtime>)>> = Mutex::new(None);
    let mut slot = RUNTIME
        .lock()
        .map_err(|_| Error::new(ErrorKind::Internal, "object-store runtime lock poisoned"))?;
    let pid = std::process::id();
    if let Some((owner, rt)) = slot.as_ref() {
        if *owner == pid {
            return Ok(rt.clone());
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kafkalog-io")
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot start the I/O runtime: {e}")))?;
    let rt = Arc::new(rt);
    if let Some((_, old)) = slot.replace((pid, rt.clone())) {
        // A runtime inherited through fork has no threads: dropping it would wait on them.
        std::mem::forget(old);
    }
    Ok(rt)
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    Ok(runtime()?.block_on(future))
}

/// A parsed object-store location: the store it is in and its key there.
struct Location {
    /// `scheme://authority[/bucket]`: which store.
    base: String,
    scheme: ObjectStoreScheme,
    url: Url,
    key: Key,
}

fn locate(path: &Path) -> Result<Location> {
    let text = path.to_str().ok_or_else(|| {
        Error::invalid_argument("the location is not valid UTF-8").with_path(path)
    })?;
    let url = Url::parse(text)
        .map_err(|e| Error::invalid_argument(format!("not a valid URI ({e})")).with_path(path))?;
    let (scheme, key_part) = ObjectStoreScheme::parse(&url).map_err(|_| {
        Error::invalid_argument(format!(
            "no object store for scheme '{}' (kafkalog reads s3://, s3a://, gs://, az://, \
             abfs(s)://, http(s)://; for others pass filesystem=, e.g. a pyarrow or fsspec \
             filesystem)",
            url.scheme()
        ))
        .with_path(path)
    })?;
    if matches!(scheme, ObjectStoreScheme::Memory | ObjectStoreScheme::Local) {
        return Err(Error::invalid_argument("not an object-store URI").with_path(path));
    }
    let key_part = key_part.to_string();
    let key = Key::from_url_path(&key_part)
        .map_err(|e| Error::invalid_argument(format!("bad object key ({e})")).with_path(path))?;
    // The store is everything before the key.
    let url_path = url.path();
    let prefix = url_path.strip_suffix(key_part.as_str()).unwrap_or("");
    let base = format!(
        "{}{}",
        &url[..url::Position::BeforePath],
        prefix.trim_end_matches('/')
    );
    Ok(Location {
        base,
        scheme,
        url,
        key,
    })
}

fn parse_key<K: std::str::FromStr>(name: &str, store: &str) -> Result<K> {
    name.to_ascii_lowercase().parse().map_err(|_| {
        Error::invalid_argument(format!(
            "unknown {store} storage option '{name}' (options take object_store's configuration \
             keys, e.g. aws_endpoint, aws_region, aws_allow_http, google_service_account, \
             azure_storage_account_name, timeout, connect_timeout; and max_retries, \
             retry_timeout)"
        ))
    })
}

fn build(location: &Location, options: &StorageOptions) -> Result<Arc<dyn ObjectStore>> {
    // rustls's cryptography for every store's TLS (Cargo.toml: ring, not aws-lc-rs). Without
    // a process default, reqwest would panic building its client. Err: one is installed
    // already (by this or by another library in the process), which serves as well.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut retry = RetryConfig::default();
    let mut rest = Vec::new();
    for (k, v) in options {
        let bad = |what: &str| Error::invalid_argument(format!("storage option {k}={v}: {what}"));
        match k.to_ascii_lowercase().as_str() {
            "max_retries" => retry.max_retries = v.parse().map_err(|_| bad("not a count"))?,
            "retry_timeout" => {
                let secs: f64 = v.parse().map_err(|_| bad("not a number of seconds"))?;
                retry.retry_timeout = Duration::from_secs_f64(secs.clamp(0.0, 3600.0));
            }
            _ => rest.push((k.as_str(), v.as_str())),
        }
    }
    let base = location.base.as_str();
    let store: Arc<dyn ObjectStore> = match location.scheme {
        ObjectStoreScheme::AmazonS3 => {
            let mut b = object_store::aws::AmazonS3Builder::from_env().with_url(base);
            for (k, v) in rest {
                b = b.with_config(parse_key(k, "S3")?, v);
            }
            Arc::new(
                b.with_retry(retry)
                    .build()
                    .map_err(|e| store_error(e, None))?,
            )
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let mut b = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(base);
            for (k, v) in rest {
                b = b.with_config(parse_key(k, "GCS")?, v);
            }
            Arc::new(
                b.with_retry(retry)
                    .build()
                    .map_err(|e| store_error(e, None))?,
            )
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let mut b = object_store::azure::MicrosoftAzureBuilder::from_env().with_url(base);
            for (k, v) in rest {
                b = b.with_config(parse_key(k, "Azure")?, v);
            }
            Arc::new(
                b.with_retry(retry)
                    .build()
                    .map_err(|e| store_error(e, None))?,
            )
        }
        ObjectStoreScheme::Http => {
            let mut b = object_store::http::HttpBuilder::new()
                .with_url(&location.url[..url::Position::BeforePath]);
            for (k, v) in rest {
                b = b.with_config(parse_key(k, "HTTP")?, v);
            }
            Arc::new(
                b.with_retry(retry)
                    .build()
                    .map_err(|e| store_error(e, None))?,
            )
        }
        _ => return Err(Error::invalid_argument("not an object-store URI")),
    };
    Ok(store)
}

/// An `object_store` error as ours, keeping whether the object was missing or refused.
fn store_error(err: object_store::Error, what: Option<(&Path, Option<&Range<u64>>)>) -> Error {
    use std::io::ErrorKind as Io;
    let kind = match &err {
        object_store::Error::NotFound { .. } => Io::NotFound,
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => Io::PermissionDenied,
        _ => Io::Other,
    };
    let text = describe(&err);
    let mut message = match what.and_then(|(_, r)| r) {
        Some(r) => format!("reading bytes {}..{} failed: {text}", r.start, r.end),
        None => text,
    };
    if kind == Io::NotFound {
        message = "No such file or directory (object not found)".into();
    }
    let mut e = Error::io_error(std::io::Error::new(kind, message));
    if let Some((path, _)) = what {
        e = e.with_path(path);
    }
    e
}

/// What went wrong, in one line, the cause last: `object_store`'s message names the request
/// and its retries but not why it failed (that is the deepest error of its `source()` chain:
/// "Connection refused", a DNS failure, a timeout), and a failure to fetch credentials from
/// the instance metadata endpoint (the last place the AWS builder looks) is reported as a
/// failed request to it rather than as no credentials found.
fn describe(err: &object_store::Error) -> String {
    let top = err.to_string();
    let mut root: &dyn std::error::Error = err;
    while let Some(next) = root.source() {
        root = next;
    }
    let cause = root.to_string();
    // "Error performing PUT http://169.254.169.254/latest/api/token in 1ms, after 10 retries..."
    let request = top.split_once("Error performing ").map(|(_, rest)| {
        let (request, rest) = rest.split_once(" in ").unwrap_or((rest, ""));
        let retries = rest
            .split(", ")
            .find(|part| part.starts_with("after "))
            .map(|part| format!(" ({part})"))
            .unwrap_or_default();
        (request.to_string(), retries)
    });
    if let Some((request, retries)) = &request {
        // The paths of AWS's instance metadata service (IMDSv2 token, role credentials).
        if request.contains("/latest/api/token") || request.contains("/latest/meta-data/") {
            let endpoint = request
                .split_whitespace()
                .nth(1)
                .and_then(|url| url.split("/latest/").next())
                .unwrap_or("http://169.254.169.254");
            return format!(
                "no AWS credentials found: tried storage_options and the environment \
                 (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE, \
                 AWS_CONTAINER_CREDENTIALS_RELATIVE_URI), then the instance metadata endpoint \
                 {endpoint}{retries}: {cause}"
            );
        }
        if cause != top && !top.ends_with(&cause) {
            return format!("{request} failed{retries}: {cause}");
        }
    }
    top
}

/// The object stores a read touches, built once per store with the same options.
#[derive(Default)]
pub struct ObjectStores {
    options: StorageOptions,
    stores: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
    /// What recent requests already said, so that planning a read does not ask again (each
    /// request costs a round trip, and against some servers milliseconds of their CPU).
    seen: Mutex<Seen>,
}

/// How long a listing's answers are used instead of asking again. Objects are written whole
/// and replaced whole; a size this old is as good as a HEAD's would be a moment before the GET.
const SEEN_FRESH: Duration = Duration::from_secs(10);

/// Answers of recent requests, each with when it was received.
#[derive(Default)]
struct Seen {
    /// A directory's listing, made by `stat` (to tell that it is one), for the `list` that
    /// usually follows.
    listings: HashMap<PathBuf, (Instant, Vec<Entry>)>,
    /// Object sizes from listings, for `open`, which would otherwise HEAD each object.
    sizes: HashMap<PathBuf, (Instant, u64)>,
}

impl Seen {
    fn forget_old(&mut self) {
        let fresh = |at: &Instant| at.elapsed() < SEEN_FRESH;
        self.listings.retain(|_, (at, _)| fresh(at));
        self.sizes.retain(|_, (at, _)| fresh(at));
    }
}

impl fmt::Debug for ObjectStores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Options may hold secrets: name the keys only.
        let keys: Vec<&str> = self.options.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ObjectStores")
            .field("options", &keys)
            .finish()
    }
}

impl ObjectStores {
    /// No store built yet; each will be built with `options`.
    pub fn new(options: StorageOptions) -> Self {
        ObjectStores {
            options,
            stores: Mutex::default(),
            seen: Mutex::default(),
        }
    }

    fn store(&self, path: &Path) -> Result<(Arc<dyn ObjectStore>, Location)> {
        let location = locate(path)?;
        let mut stores = self
            .stores
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "object store cache poisoned"))?;
        if let Some(store) = stores.get(&location.base) {
            return Ok((store.clone(), location));
        }
        let store = build(&location, &self.options).map_err(|e| e.with_path(path))?;
        stores.insert(location.base.clone(), store.clone());
        Ok((store, location))
    }
}

impl ObjectStores {
    /// Forgets what listings said: this writer is changing the store.
    fn forget(&self) {
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Seen::default();
        }
    }

    /// Lists `dir` with one request, remembering the sizes of the objects in it for `open`.
    fn list_now(
        &self,
        dir: &Path,
        store: &Arc<dyn ObjectStore>,
        prefix: Option<&Key>,
    ) -> Result<Vec<Entry>> {
        let listed = block_on(store.list_with_delimiter(prefix))?
            .map_err(|e| store_error(e, Some((dir, None))))?;
        let child = |key: &Key| -> Option<PathBuf> { key.filename().map(|name| dir.join(name)) };
        let mut out = Vec::new();
        for p in &listed.common_prefixes {
            if let Some(path) = child(p) {
                out.push(Entry {
                    path,
                    is_dir: true,
                    size: 0,
                });
            }
        }
        for meta in &listed.objects {
            if let Some(path) = child(&meta.location) {
                out.push(Entry {
                    path,
                    is_dir: false,
                    size: meta.size,
                });
            }
        }
        if let Ok(mut seen) = self.seen.lock() {
            seen.forget_old();
            let now = Instant::now();
            for e in out.iter().filter(|e| !e.is_dir) {
                seen.sizes.insert(e.path.clone(), (now, e.size));
            }
        }
        Ok(out)
    }
}

impl Storage for ObjectStores {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// One GET of the whole object (no HEAD first): an index, a checkpoint, a snapshot.
    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        let (store, loc) = self.store(path)?;
        let got = block_on(async {
            match store.get(&loc.key).await {
                Ok(result) => result.bytes().await,
                Err(e) => Err(e),
            }
        })?;
        match got {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_error(e, Some((path, None)))),
        }
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        let (store, loc) = self.store(path)?;
        if loc.key.as_ref().is_empty() {
            return Ok(Stat::Dir); // the bucket itself
        }
        match block_on(store.head(&loc.key))? {
            Ok(meta) => return Ok(Stat::File { size: meta.size }),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(store_error(e, Some((path, None)))),
        }
        let entries = self.list_now(path, &store, Some(&loc.key))?;
        if entries.is_empty() {
            return Ok(Stat::Missing);
        }
        if let Ok(mut seen) = self.seen.lock() {
            seen.forget_old();
            seen.listings
                .insert(path.to_path_buf(), (Instant::now(), entries));
        }
        Ok(Stat::Dir)
    }

    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        let listed = self.seen.lock().ok().and_then(|mut seen| {
            let (at, entries) = seen.listings.remove(dir)?;
            (at.elapsed() < SEEN_FRESH).then_some(entries)
        });
        if let Some(entries) = listed {
            return Ok(entries);
        }
        let (store, loc) = self.store(dir)?;
        let prefix = (!loc.key.as_ref().is_empty()).then_some(&loc.key);
        self.list_now(dir, &store, prefix)
    }

    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        let (store, loc) = self.store(path)?;
        let listed = self.seen.lock().ok().and_then(|mut seen| {
            let (at, size) = seen.sizes.remove(path)?;
            (at.elapsed() < SEEN_FRESH).then_some(size)
        });
        let size = match listed {
            Some(size) => size,
            None => match block_on(store.head(&loc.key))? {
                Ok(meta) => meta.size,
                Err(object_store::Error::NotFound { .. }) => return Err(not_found(path)),
                Err(e) => return Err(store_error(e, Some((path, None)))),
            },
        };
        Ok(Box::new(RemoteObject {
            store,
            key: loc.key,
            path: path.to_path_buf(),
            len: size,
            stream: None,
            current: None,
            ahead: VecDeque::new(),
            next_fetch: 0,
            limit: 0,
        }))
    }

    fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
        self.forget();
        let (store, loc) = self.store(path)?;
        let options = object_store::PutOptions {
            mode: match mode {
                PutMode::Overwrite => object_store::PutMode::Overwrite,
                PutMode::Create => object_store::PutMode::Create,
            },
            ..Default::default()
        };
        match block_on(store.put_opts(&loc.key, bytes.into(), options))? {
            Ok(_) => Ok(()),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Err(already_exists(path)),
            Err(e) => Err(store_error(e, Some((path, None)))),
        }
    }

    fn delete(&self, path: &Path) -> Result<()> {
        self.forget();
        let (store, loc) = self.store(path)?;
        match block_on(store.delete(&loc.key))? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_error(e, Some((path, None)))),
        }
    }

    fn read_versioned(&self, path: &Path) -> Result<Option<(Vec<u8>, Option<String>)>> {
        let (store, loc) = self.store(path)?;
        let got = block_on(async {
            match store.get(&loc.key).await {
                Ok(result) => {
                    let e_tag = result.meta.e_tag.clone();
                    result.bytes().await.map(|b| (b, e_tag))
                }
                Err(e) => Err(e),
            }
        })?;
        match got {
            Ok((bytes, e_tag)) => Ok(Some((bytes.to_vec(), e_tag))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_error(e, Some((path, None)))),
        }
    }

    fn replace_if(&self, path: &Path, bytes: Vec<u8>, version: &str) -> Result<()> {
        self.forget();
        let (store, loc) = self.store(path)?;
        let options = object_store::PutOptions {
            mode: object_store::PutMode::Update(object_store::UpdateVersion {
                e_tag: Some(version.to_string()),
                version: None,
            }),
            ..Default::default()
        };
        match block_on(store.put_opts(&loc.key, bytes.into(), options))? {
            Ok(_) => Ok(()),
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. }
                | object_store::Error::NotFound { .. },
            ) => Err(already_exists(path)),
            Err(e) => Err(store_error(e, Some((path, None)))),
        }
    }

    fn modified_ms(&self, path: &Path) -> Result<Option<u64>> {
        let (store, loc) = self.store(path)?;
        match block_on(store.head(&loc.key))? {
            Ok(meta) => Ok(u64::try_from(meta.last_modified.timestamp_millis()).ok()),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_error(e, Some((path, None)))),
        }
    }

    fn copy(&self, from: &Path, to: &Path) -> Result<()> {
        self.forget();
        let (store, src) = self.store(from)?;
        let (_, dst) = self.store(to)?;
        if src.base != dst.base {
            let bytes = self.read(from)?.ok_or_else(|| not_found(from))?;
            return self.put(to, bytes, PutMode::Overwrite);
        }
        match block_on(store.copy(&src.key, &dst.key))? {
            Ok(()) => Ok(()),
            Err(e) => Err(store_error(e, Some((from, None)))),
        }
    }

    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        self.forget();
        use std::io::Read;
        let mut file = std::fs::File::open(from).map_err(|e| Error::io(e, from))?;
        let size = file.metadata().map_err(|e| Error::io(e, from))?.len();
        if size <= PART as u64 {
            let mut bytes = Vec::with_capacity(size as usize);
            file.read_to_end(&mut bytes)
                .map_err(|e| Error::io(e, from))?;
            return self.put(path, bytes, PutMode::Overwrite);
        }
        let (store, loc) = self.store(path)?;
        let failed = |e: object_store::Error| store_error(e, Some((path, None)));
        block_on(async {
            let upload = store.put_multipart(&loc.key).await.map_err(failed)?;
            let mut parts = object_store::WriteMultipart::new_with_chunk_size(upload, PART);
            let mut buf = vec![0u8; PART];
            loop {
                if let Err(e) = parts.wait_for_capacity(PARTS_IN_FLIGHT).await {
                    let _ = parts.abort().await;
                    return Err(failed(e));
                }
                let n = match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) => {
                        let _ = parts.abort().await;
                        return Err(Error::io(e, from));
                    }
                };
                parts.write(&buf[..n]);
            }
            // Completing the upload is what makes the object appear, whole.
            parts.finish().await.map(|_| ()).map_err(failed)
        })?
    }
}

type Fetch = tokio::task::JoinHandle<object_store::Result<Bytes>>;

/// An object open for ranged reads, with read-ahead for sequential ones.
struct RemoteObject {
    store: Arc<dyn ObjectStore>,
    key: Key,
    path: PathBuf,
    len: u64,
    /// The streaming GET of a long sequential read.
    stream: Option<Streaming>,
    /// The block last fetched, from its start position.
    current: Option<(u64, Bytes)>,
    /// Blocks being fetched, in order, contiguous from `current` on.
    ahead: VecDeque<(Range<u64>, Fetch)>,
    next_fetch: u64,
    /// Read-ahead stops here (0: no read-ahead).
    limit: u64,
}

/// A streaming GET of one byte range, handed over in order through a bounded channel.
struct Streaming {
    rx: tokio::sync::mpsc::Receiver<object_store::Result<Vec<Bytes>>>,
    task: tokio::task::JoinHandle<()>,
    /// Chunks received and not yet handed to the reader, in order.
    pending: VecDeque<Bytes>,
    /// Where the next byte the stream hands over sits in the object.
    next: u64,
    end: u64,
    /// Failures since the last byte received.
    failures: u32,
}

impl Drop for Streaming {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a streaming GET of `range` of an object of `len` bytes.
fn stream(
    store: &Arc<dyn ObjectStore>,
    key: &Key,
    range: Range<u64>,
    len: u64,
    failures: u32,
) -> Result<Streaming> {
    let (tx, rx) = tokio::sync::mpsc::channel(STREAM_AHEAD);
    let (store, key) = (store.clone(), key.clone());
    let get = if range.end >= len {
        object_store::GetRange::Offset(range.start)
    } else {
        object_store::GetRange::Bounded(range.clone())
    };
    let task = runtime()?.spawn(async move {
        let options = object_store::GetOptions {
            range: Some(get),
            ..Default::default()
        };
        let mut body = match store.get_opts(&key, options).await {
            Ok(result) => result.into_stream(),
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
        };
        // The body's chunks are handed over as they are (no copy), grouped so that one
        // hand-over carries about a piece's worth of bytes.
        let mut group = Vec::new();
        let mut grouped = 0;
        loop {
            match std::future::poll_fn(|cx| body.as_mut().poll_next(cx)).await {
                Some(Ok(chunk)) => {
                    grouped += chunk.len();
                    group.push(chunk);
                    if grouped >= STREAM_PIECE {
                        grouped = 0;
                        if tx.send(Ok(std::mem::take(&mut group))).await.is_err() {
                            return; // the reader is gone
                        }
                    }
                }
                end => {
                    if !group.is_empty() && tx.send(Ok(group)).await.is_err() {
                        return;
                    }
                    if let Some(Err(e)) = end {
                        let _ = tx.send(Err(e)).await;
                    }
                    return;
                }
            }
        }
    });
    Ok(Streaming {
        rx,
        task,
        pending: VecDeque::new(),
        next: range.start,
        end: range.end,
        failures,
    })
}

impl RemoteObject {
    /// Makes `current` hold the stream's next bytes, when the stream is where `at` is.
    /// Returns false when there is no stream there (or it has ended).
    fn advance_stream(&mut self, at: u64) -> Result<bool> {
        let Some(s) = &mut self.stream else {
            return Ok(false);
        };
        if s.next != at || s.next >= s.end {
            self.stream = None; // off its track, or done
            return Ok(false);
        }
        if s.pending.is_empty() {
            match s.rx.blocking_recv() {
                Some(Ok(group)) => s
                    .pending
                    .extend(group.into_iter().filter(|c| !c.is_empty())),
                Some(Err(e)) => return self.restart_stream(Some(e)),
                None => return self.restart_stream(None), // ended early: the connection dropped
            }
        }
        let Some(s) = &mut self.stream else {
            return Ok(false);
        };
        match s.pending.pop_front() {
            Some(bytes) => {
                let start = s.next;
                s.next += bytes.len() as u64;
                s.failures = 0;
                self.current = Some((start, bytes));
                Ok(true)
            }
            None => self.restart_stream(None),
        }
    }

    /// Starts the stream again from the next byte not yet received, after a failure.
    fn restart_stream(&mut self, failure: Option<object_store::Error>) -> Result<bool> {
        let Some(s) = &mut self.stream else {
            return Ok(false);
        };
        let range = s.next..s.end;
        if s.failures >= STREAM_RETRIES {
            let message = match failure {
                Some(e) => return Err(store_error(e, Some((&self.path, Some(&range))))),
                None => format!(
                    "reading bytes {}..{} failed: the stream ended early {} times",
                    range.start, range.end, s.failures
                ),
            };
            return Err(Error::new(ErrorKind::Io, message).with_path(&self.path));
        }
        // A GET is safe to repeat: start again from the next byte not yet received.
        let failures = s.failures + 1;
        self.stream = Some(stream(&self.store, &self.key, range, self.len, failures)?);
        Ok(true)
    }

    fn get(&self, range: Range<u64>) -> Result<Bytes> {
        block_on(self.store.get_range(&self.key, range.clone()))?
            .map_err(|e| store_error(e, Some((&self.path, Some(&range)))))
    }

    fn top_up(&mut self) -> Result<()> {
        if self.ahead.len() >= DEPTH || self.next_fetch >= self.limit {
            return Ok(());
        }
        let rt = runtime()?;
        while self.ahead.len() < DEPTH && self.next_fetch < self.limit {
            let range = self.next_fetch..(self.next_fetch + BLOCK).min(self.limit);
            let (store, key, r) = (self.store.clone(), self.key.clone(), range.clone());
            let fetch = rt.spawn(async move { store.get_range(&key, r).await });
            self.next_fetch = range.end;
            self.ahead.push_back((range, fetch));
        }
        Ok(())
    }

    fn drop_ahead(&mut self) {
        for (_, fetch) in self.ahead.drain(..) {
            fetch.abort();
        }
    }

    /// Makes `current` hold `at`, from the read-ahead when it covers it.
    fn advance_to(&mut self, at: u64) -> Result<bool> {
        while let Some((range, _)) = self.ahead.front() {
            if range.end <= at {
                let (_, fetch) = self.ahead.pop_front().unwrap();
                fetch.abort();
                continue;
            }
            if range.start > at {
                break;
            }
            let (range, fetch) = self.ahead.pop_front().unwrap();
            let bytes = block_on(fetch)?
                .map_err(|e| {
                    Error::new(ErrorKind::Io, format!("read-ahead task failed: {e}"))
                        .with_path(&self.path)
                })?
                .map_err(|e| store_error(e, Some((&self.path, Some(&range)))))?;
            self.current = Some((range.start, bytes));
            self.top_up()?;
            return Ok(true);
        }
        Ok(false)
    }
}

impl Drop for RemoteObject {
    fn drop(&mut self) {
        self.drop_ahead();
    }
}

impl Object for RemoteObject {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let end = (offset + len as u64).min(self.len);
        let mut at = offset;
        while at < end {
            if let Some((start, bytes)) = &self.current {
                let block_end = start + bytes.len() as u64;
                if *start <= at && at < block_end {
                    let upto = end.min(block_end);
                    out.extend_from_slice(&bytes[(at - start) as usize..(upto - start) as usize]);
                    at = upto;
                    continue;
                }
            }
            if self.stream.is_some() && self.advance_stream(at)? {
                continue;
            }
            if at < self.limit {
                if self.advance_to(at)? {
                    continue;
                }
                // Off the read-ahead's track: start it again from here.
                self.drop_ahead();
                self.next_fetch = at;
                self.top_up()?;
                if self.advance_to(at)? {
                    continue;
                }
            }
            let bytes = self.get(at..end)?;
            if bytes.is_empty() {
                break; // shorter than it was
            }
            out.extend_from_slice(&bytes);
            at += bytes.len() as u64;
        }
        Ok((at - offset) as usize)
    }

    fn will_read(&mut self, range: Range<u64>) {
        self.drop_ahead();
        self.stream = None;
        self.current = None;
        let end = range.end.min(self.len);
        let long = end.saturating_sub(range.start);
        // To the end of the object (a whole segment, the rest of one): one stream when it is
        // more than a block; a bounded range only when it is long.
        if (end == self.len && long > BLOCK) || long >= STREAM_MIN {
            self.limit = 0;
            // Errors surface on the read that needs the bytes.
            self.stream = stream(&self.store, &self.key, range.start..end, self.len, 0).ok();
            return;
        }
        self.limit = end;
        self.next_fetch = range.start;
        // Errors surface on the read that needs the bytes.
        let _ = self.top_up();
    }
}
