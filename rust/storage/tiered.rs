//! Tiered-storage buckets read in place: a [`Storage`] over any other that shows each remote
//! segment as the files a broker keeps beside a segment, so that discovery, index-based
//! planning, bounds, read_committed and decoding work on them unchanged.
//!
//! A segment of Aiven's plugin is `<stem>.log`, `<stem>.indexes` and `<stem>.rsm-manifest`
//! (`<stem>` = `<20-digit offset>-<segment id>`; see `format/tiered/`). Through [`Tiered`]:
//! - `<stem>.log` is the segment's original bytes: a logical range maps onto the chunks that
//!   cover it through the manifest's chunk index; only those chunks are fetched (ranged reads
//!   of the inner storage, several adjacent chunks in one read when a range is announced with
//!   `will_read`), each decrypted (AES-256-GCM) and zstd-decompressed when the segment is, and
//!   the last few kept;
//! - `<stem>.index`, `.timeindex`, `.txnindex`, `.snapshot`, `.leader-epoch-checkpoint` are
//!   the index ranges of `<stem>.indexes`, decrypted when the segment is.
//!
//! Kafka's own LocalTieredStorage layout (`<topic>-<partition>-<topicId>/<offset>-<id>.log`,
//! `.index`, ...) needs no translation: its files are the broker's, under other names.
//!
//! When a partition holds the same offsets in two segments, [`discover`] leaves out the
//! duplicates and the segments that diverged from the leader-epoch lineage, and a kept segment
//! whose tail is served by another ends (its `.log` is shorter, its indexes cut to match), as
//! `format/tiered/lineage.rs` decides.
//!
//! Never a key, a data key or plaintext in an error or a log.

use super::{not_found, read_range, Entry, Object, PutMode, Stat, Storage};
use crate::error::{Error, ErrorKind, Result};
use crate::format::checkpoint::parse_leader_epoch_checkpoint;
use crate::format::index::{
    lookup_offset, read_offset_index, OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE, TXN_ENTRY_SIZE,
};
use crate::format::segment::first_entry_reaching;
use crate::format::tiered::lineage::{choose, Candidate, Choice};
use crate::format::tiered::names::{aiven_partition, SegmentName, TieredDir};
use crate::format::tiered::{IndexSlot, Manifest};
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// GCM's IV, before each encrypted chunk (the plugin's `ivSize`).
const IV_LEN: usize = 12;
/// GCM's tag, after each encrypted chunk (128 bits, Java's default).
const TAG_LEN: usize = 16;
/// Decoded chunks kept (shared by every open `.log` of a storage: planning's seeks and scans
/// and the read after them fetch a chunk once).
const CACHED_CHUNKS: usize = 8;
/// Bytes of decoded chunks kept, beyond those of the read in progress.
const CACHE_BYTES: usize = 64 << 20;
/// Segment bytes fetched and decoded in one read when a range was announced.
const READ_AHEAD: u64 = 8 << 20;
/// The largest chunk read (the plugin's chunks are a few MiB): a manifest claiming more is
/// refused rather than allocated.
const MAX_CHUNK: u64 = 256 << 20;

/// The RSA private keys that unwrap segments' data keys, by the key id the manifests name.
#[derive(Clone, Default)]
pub struct KeyRing {
    keys: HashMap<String, rsa::RsaPrivateKey>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<&String> = self.keys.keys().collect();
        ids.sort();
        write!(f, "KeyRing({ids:?})")
    }
}

impl KeyRing {
    /// Adds the key `id`: a PEM private key (PKCS#8, as the plugin reads its key files, or
    /// PKCS#1), or its DER bytes.
    pub fn add(&mut self, id: &str, key: &[u8]) -> Result<()> {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::pkcs8::DecodePrivateKey;
        let parsed = match std::str::from_utf8(key) {
            Ok(text) if text.contains("-----BEGIN") => rsa::RsaPrivateKey::from_pkcs8_pem(text)
                .ok()
                .or_else(|| rsa::RsaPrivateKey::from_pkcs1_pem(text).ok()),
            _ => rsa::RsaPrivateKey::from_pkcs8_der(key)
                .ok()
                .or_else(|| rsa::RsaPrivateKey::from_pkcs1_der(key).ok()),
        };
        let parsed = parsed.ok_or_else(|| {
            Error::new(
                ErrorKind::EncryptionKey,
                format!(
                "encryption key {id:?} is not an RSA private key (PEM or DER, PKCS#8 or PKCS#1)"
            ),
            )
        })?;
        self.keys.insert(id.to_string(), parsed);
        Ok(())
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Unwraps a data key as the plugin wraps it: RSA-OAEP, SHA3-512 as the digest and in
    /// MGF1 (BouncyCastle's `OAEPWithSHA3-512AndMGF1Padding`), no label.
    fn unwrap(&self, manifest: &Path, key_id: &str, wrapped: &[u8]) -> Result<[u8; 32]> {
        let key = self.keys.get(key_id).ok_or_else(|| {
            Error::new(
                ErrorKind::EncryptionKey,
                format!(
                    "segment is encrypted with key {key_id:?}, which was not given (pass \
                 encryption_keys={{{key_id:?}: <private key PEM or path>}})"
                ),
            )
            .with_path(manifest)
        })?;
        let unwrapped = key
            .decrypt(rsa::Oaep::new::<sha3::Sha3_512>(), wrapped)
            .map_err(|_| {
                Error::new(
                    ErrorKind::EncryptionKey,
                    format!(
                        "the data key could not be unwrapped with key {key_id:?} (a wrong key, or \
                     an altered manifest)"
                    ),
                )
                .with_path(manifest)
            })?;
        unwrapped.as_slice().try_into().map_err(|_| {
            Error::new(
                ErrorKind::Decryption,
                format!(
                    "the unwrapped data key has {} bytes, not 32 (AES-256)",
                    unwrapped.len()
                ),
            )
            .with_path(manifest)
        })
    }
}

/// A segment of Aiven's layout, ready to read.
struct Segment {
    manifest: Manifest,
    log: PathBuf,
    indexes: PathBuf,
    cipher: Option<(Aes256Gcm, Vec<u8>)>,
}

/// A segment's objects: `<dir>/<stem>.<suffix>`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split_once('.'))
        .map_or("", |(stem, _)| stem);
    path.with_file_name(format!("{stem}.{suffix}"))
}

/// Storage that shows tiered segments as broker files. See the module documentation.
pub struct Tiered {
    inner: Arc<dyn Storage>,
    keys: KeyRing,
    /// Parsed manifests, by manifest path (`None`: there is none).
    manifests: Mutex<HashMap<PathBuf, Option<Arc<Manifest>>>>,
    /// Segments ready to read (data key unwrapped), by `.log` path.
    segments: Mutex<HashMap<PathBuf, Arc<Segment>>>,
    /// Length of each `.log` whose tail another segment serves, by partition directory.
    windows: Mutex<HashMap<PathBuf, Arc<HashMap<PathBuf, u64>>>>,
    /// Recently decoded chunks, by `.log` path and chunk id.
    chunks: ChunkCache,
    /// Manifest bytes, by path (`None`: there is none).
    raw_manifests: Mutex<HashMap<PathBuf, Option<Vec<u8>>>>,
    /// The layout to assume and where `__remote_log_metadata` is.
    settings: TieredSettings,
    /// Why every request fails (options that did not parse).
    broken: Option<Error>,
}

impl std::fmt::Debug for Tiered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiered")
            .field("inner", &self.inner)
            .field("keys", &self.keys)
            .finish()
    }
}

impl Tiered {
    /// Tiered storage over `inner`, decrypting encrypted segments with `keys`.
    pub fn new(inner: Arc<dyn Storage>, keys: KeyRing) -> Self {
        Tiered {
            inner,
            keys,
            settings: TieredSettings::default(),
            manifests: Mutex::default(),
            segments: Mutex::default(),
            windows: Mutex::default(),
            raw_manifests: Mutex::default(),
            chunks: ChunkCache::default(),
            broken: None,
        }
    }

    /// A storage that refuses every request with `err` (options that did not parse).
    pub fn failing(inner: Arc<dyn Storage>, err: Error) -> Self {
        Tiered {
            broken: Some(err),
            ..Tiered::new(inner, KeyRing::default())
        }
    }

    fn check(&self) -> Result<()> {
        match &self.broken {
            Some(err) => Err(err.clone()),
            None => Ok(()),
        }
    }

    /// This storage with `settings` (from [`Tiered::settings_from_options`]).
    pub fn with_settings(mut self, settings: TieredSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Takes [`LAYOUT_OPTION`] and [`METADATA_OPTION`] out of storage options.
    pub fn settings_from_options(options: &mut Vec<(String, String)>) -> Result<TieredSettings> {
        let mut settings = TieredSettings::default();
        let mut rest = Vec::with_capacity(options.len());
        for (k, v) in options.drain(..) {
            if k == LAYOUT_OPTION {
                settings.layout = Layout::from_name(&v)?;
            } else if k == METADATA_OPTION {
                settings.remote_log_metadata = v
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
                    .collect();
            } else {
                rest.push((k, v));
            }
        }
        *options = rest;
        Ok(settings)
    }

    /// Takes the tiered-storage options out of storage options: `kafkalog.encryption_key.<id>`,
    /// a private key (PEM) by the key id manifests name.
    pub fn from_options(inner_options: &mut Vec<(String, String)>) -> Result<KeyRing> {
        let mut keys = KeyRing::default();
        let mut rest = Vec::with_capacity(inner_options.len());
        for (k, v) in inner_options.drain(..) {
            match k.strip_prefix(KEY_OPTION) {
                Some(id) => keys.add(id, v.as_bytes())?,
                None => rest.push((k, v)),
            }
        }
        *inner_options = rest;
        Ok(keys)
    }

    /// The manifest beside a segment object, parsed and cached.
    fn manifest(&self, path: &Path) -> Result<Option<Arc<Manifest>>> {
        let key = sibling(path, "rsm-manifest");
        if let Some(m) = self
            .manifests
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(m);
        }
        let parsed = match self.read(&key)? {
            None => None,
            Some(bytes) => Some(Arc::new(
                Manifest::parse(&bytes).map_err(|e| e.with_path(&key))?,
            )),
        };
        if let Ok(mut m) = self.manifests.lock() {
            m.insert(key, parsed.clone());
        }
        Ok(parsed)
    }

    /// The Aiven segment whose `.log` or index `path` names, or `None` (not a tiered name, not
    /// a file this storage shows, no manifest).
    fn segment(&self, path: &Path) -> Result<Option<Arc<Segment>>> {
        // Only Aiven's layout is reassembled from chunks.
        if matches!(self.settings.layout, Layout::Broker | Layout::Kafka) {
            return Ok(None);
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return Ok(None);
        };
        match SegmentName::parse(name) {
            Some(n) if n.suffix == "log" || IndexSlot::from_suffix(n.suffix).is_some() => {}
            _ => return Ok(None),
        }
        let log = sibling(path, "log");
        if let Some(s) = self.segments.lock().ok().and_then(|s| s.get(&log).cloned()) {
            return Ok(Some(s));
        }
        let Some(manifest) = self.manifest(path)? else {
            return Ok(None);
        };
        let manifest_path = sibling(path, "rsm-manifest");
        let cipher = match &manifest.encryption {
            None => None,
            Some(e) => {
                let key = self
                    .keys
                    .unwrap(&manifest_path, &e.key_id, &e.wrapped_key)?;
                let cipher = Aes256Gcm::new_from_slice(&key)
                    .map_err(|_| Error::new(ErrorKind::Internal, "AES-256 key of 32 bytes"))?;
                Some((cipher, e.aad.clone()))
            }
        };
        let segment = Arc::new(Segment {
            manifest: (*manifest).clone(),
            indexes: sibling(path, "indexes"),
            log: log.clone(),
            cipher,
        });
        if let Ok(mut s) = self.segments.lock() {
            s.insert(log, segment.clone());
        }
        Ok(Some(segment))
    }

    /// Opens the whole `.log` of a segment (no window).
    fn open_log(&self, segment: &Arc<Segment>) -> Result<TieredLog> {
        let index = &segment.manifest.chunk_index;
        if index.original_chunk_size > MAX_CHUNK {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "chunks of {} bytes: kafkalog reads chunks of at most {MAX_CHUNK}",
                    index.original_chunk_size
                ),
            )
            .with_path(&sibling(&segment.log, "rsm-manifest")));
        }
        let object = self.inner.open(&segment.log)?;
        if object.len() != index.transformed_size() {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                    "the chunk index ({} chunks, {}) describes {} bytes of object, it has {}",
                    index.count(),
                    index.kind,
                    index.transformed_size(),
                    object.len()
                ),
            )
            .with_path(&segment.log));
        }
        Ok(TieredLog {
            segment: segment.clone(),
            len: index.original_file_size,
            object,
            cache: self.chunks.clone(),
            ahead: None,
            streak: 0,
            next_at: 0,
        })
    }

    /// One index of a segment, from `.indexes`, decrypted.
    fn index_bytes(&self, segment: &Segment, slot: IndexSlot) -> Result<Option<Vec<u8>>> {
        let Some((position, size)) = segment.manifest.index(slot) else {
            return Ok(None);
        };
        let mut object = self.inner.open(&segment.indexes)?;
        let range = position..position.saturating_add(size);
        let bytes = if range.end <= object.len() {
            read_range(object.as_mut(), range.clone())?
        } else {
            Vec::new()
        };
        if bytes.len() as u64 != size {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                    "the manifest puts the {} index at bytes {}..{} of the object, which has {}",
                    slot.suffix(),
                    range.start,
                    range.end,
                    object.len()
                ),
            )
            .with_path(&segment.indexes));
        }
        match &segment.cipher {
            None => Ok(Some(bytes)),
            Some((cipher, aad)) => decrypt(cipher, aad, &bytes).map(Some).map_err(|e| {
                Error::new(
                    ErrorKind::Decryption,
                    format!(
                        "{} index (bytes {}..{}): {e}",
                        slot.suffix(),
                        range.start,
                        range.end
                    ),
                )
                .with_path(&segment.indexes)
            }),
        }
    }

    /// The length of `log` to show: shorter when another segment serves its tail.
    fn window(&self, segment: &Arc<Segment>) -> Result<u64> {
        let full = segment.manifest.chunk_index.original_file_size;
        let Some(dir) = segment.log.parent() else {
            return Ok(full);
        };
        let cached = self.windows.lock().ok().and_then(|w| w.get(dir).cloned());
        let windows = match cached {
            Some(w) => w,
            None => {
                let w = Arc::new(self.compute_windows(dir)?);
                if let Ok(mut all) = self.windows.lock() {
                    all.insert(dir.to_path_buf(), w.clone());
                }
                w
            }
        };
        Ok(windows.get(&segment.log).copied().unwrap_or(full))
    }

    fn compute_windows(&self, dir: &Path) -> Result<HashMap<PathBuf, u64>> {
        let listed = self.inner.list(dir)?;
        let found = partition_candidates(self, &listed, self.settings.layout)?;
        let mut out = HashMap::new();
        let choices = choose(
            &found
                .iter()
                .map(|f| f.candidate.clone())
                .collect::<Vec<_>>(),
        );
        for (f, choice) in found.iter().zip(choices) {
            let Choice::Keep { last: Some(last) } = choice else {
                continue;
            };
            let Some(segment) = self.segment(&f.log)? else {
                continue;
            };
            let mut log = self.open_log(&segment)?;
            let offsets = self
                .index_bytes(&segment, IndexSlot::Offset)?
                .map(|b| read_offset_index(&b, f.candidate.base_offset))
                .unwrap_or_default();
            let from = lookup_offset(&offsets, last + 1).map_or(0, |e| e.position as u64);
            let end = first_batch_reaching(&mut log, from, last + 1)?;
            out.insert(f.log.clone(), end);
        }
        Ok(out)
    }
}

/// Where the first entry holding an offset at or after `target` starts, scanning entry
/// headers from `from`; the length when none does.
/// The position of the first entry at or after `at` reaching offset `target` (the log's
/// length when none does).
fn first_batch_reaching(log: &mut TieredLog, at: u64, target: i64) -> Result<u64> {
    let len = log.len;
    let found = first_entry_reaching(len, at, target, |range| read_range(log, range))?;
    Ok(found.unwrap_or(len))
}

fn decrypt(cipher: &Aes256Gcm, aad: &[u8], bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    if bytes.len() < IV_LEN + TAG_LEN {
        return Err(format!(
            "{} bytes cannot hold a GCM IV and tag",
            bytes.len()
        ));
    }
    cipher
        .decrypt(
            Nonce::from_slice(&bytes[..IV_LEN]),
            Payload {
                msg: &bytes[IV_LEN..],
                aad,
            },
        )
        .map_err(|_| "AES-GCM authentication failed (a wrong key, or altered bytes)".to_string())
}

/// Keeps the index entries of a `.log` cut at `len` bytes ending at offset `last`.
fn cut_index(slot: IndexSlot, bytes: Vec<u8>, base: i64, len: u64, last: Option<i64>) -> Vec<u8> {
    let keep = |chunk: &[u8]| -> bool {
        match slot {
            IndexSlot::Offset => {
                (u32::from_be_bytes(chunk[4..8].try_into().unwrap_or_default()) as u64) < len
            }
            IndexSlot::Timestamp => last.is_none_or(|l| {
                base + i32::from_be_bytes(chunk[8..12].try_into().unwrap_or_default()) as i64 <= l
            }),
            IndexSlot::Transaction => last.is_none_or(|l| {
                i64::from_be_bytes(chunk[10..18].try_into().unwrap_or_default()) <= l
            }),
            _ => true,
        }
    };
    let size = match slot {
        IndexSlot::Offset => OFFSET_ENTRY_SIZE,
        IndexSlot::Timestamp => TIME_ENTRY_SIZE,
        IndexSlot::Transaction => TXN_ENTRY_SIZE,
        _ => return bytes,
    };
    bytes
        .chunks_exact(size)
        .take_while(|c| keep(c))
        .flatten()
        .copied()
        .collect()
}

/// The offset a window ends at: the last offset before position `len`, from the offset index
/// and a scan, for cutting the time and transaction indexes. `None`: no cut.
fn window_last(tiered: &Tiered, segment: &Arc<Segment>, len: u64) -> Result<Option<i64>> {
    if len >= segment.manifest.chunk_index.original_file_size {
        return Ok(None);
    }
    let mut log = tiered.open_log(segment)?;
    if len + 12 > log.len {
        return Ok(None);
    }
    let head = read_range(&mut log, len..len + 8)?;
    Ok(Some(
        i64::from_be_bytes(head[0..8].try_into().unwrap_or_default()) - 1,
    ))
}

/// How `storage` reads tiered-storage layouts: its settings when it is a [`Tiered`] storage,
/// `None` for a storage that does not read them.
pub fn settings_of(storage: &dyn Storage) -> Option<&TieredSettings> {
    storage
        .as_any()
        .downcast_ref::<Tiered>()
        .map(|tiered| &tiered.settings)
}

impl Storage for Tiered {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        self.check()?;
        let Some(segment) = self.segment(path)? else {
            return self.inner.stat(path);
        };
        let suffix = suffix_of(path);
        if suffix == "log" {
            return Ok(Stat::File {
                size: self.window(&segment)?,
            });
        }
        match IndexSlot::from_suffix(suffix) {
            Some(_) => match self.read(path)? {
                Some(bytes) => Ok(Stat::File {
                    size: bytes.len() as u64,
                }),
                None => Ok(Stat::Missing),
            },
            None => self.inner.stat(path),
        }
    }

    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        self.check()?;
        self.inner.list(dir)
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        self.check()?;
        if suffix_of(path) == "rsm-manifest" {
            // Discovery, windows and opens all want the manifests: fetched once.
            if let Some(bytes) = self
                .raw_manifests
                .lock()
                .ok()
                .and_then(|m| m.get(path).cloned())
            {
                return Ok(bytes);
            }
            let bytes = self.inner.read(path)?;
            if let Ok(mut m) = self.raw_manifests.lock() {
                m.insert(path.to_path_buf(), bytes.clone());
            }
            return Ok(bytes);
        }
        if self.segment(path)?.is_none() {
            return self.inner.read(path);
        }
        let mut object = match self.open(path) {
            Ok(object) => object,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let len = object.len();
        read_range(object.as_mut(), 0..len).map(Some)
    }

    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        self.check()?;
        let Some(segment) = self.segment(path)? else {
            return self.inner.open(path);
        };
        let suffix = suffix_of(path);
        if suffix == "log" {
            let len = self.window(&segment)?;
            let mut log = self.open_log(&segment)?;
            log.len = len;
            return Ok(Box::new(log));
        }
        let Some(slot) = IndexSlot::from_suffix(suffix) else {
            return self.inner.open(path);
        };
        let Some(bytes) = self.index_bytes(&segment, slot)? else {
            return Err(not_found(path));
        };
        if matches!(slot, IndexSlot::LeaderEpoch | IndexSlot::ProducerSnapshot) {
            // Not cut by a window (and what windows are computed from).
            return Ok(Box::new(Bytes(bytes)));
        }
        let len = self.window(&segment)?;
        let bytes = match window_last(self, &segment, len)? {
            None => bytes,
            Some(last) => {
                let base =
                    SegmentName::parse(path.file_name().and_then(|n| n.to_str()).unwrap_or(""))
                        .map_or(0, |n| n.base_offset);
                cut_index(slot, bytes, base, len, Some(last))
            }
        };
        Ok(Box::new(Bytes(bytes)))
    }

    fn local_path(&self, path: &Path) -> Option<PathBuf> {
        match self.segment(path) {
            Ok(None) => self.inner.local_path(path),
            _ => None,
        }
    }

    // Writes go to the store underneath: a tiered layout is only ever read.
    fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
        self.inner.put(path, bytes, mode)
    }

    fn delete(&self, path: &Path) -> Result<()> {
        self.inner.delete(path)
    }

    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        self.inner.upload(path, from)
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

fn suffix_of(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split_once('.'))
        .map_or("", |(_, s)| s)
}

/// Bytes in memory, as an object.
struct Bytes(Vec<u8>);

impl Object for Bytes {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let start = (offset as usize).min(self.0.len());
        let end = start.saturating_add(len).min(self.0.len());
        out.extend_from_slice(&self.0[start..end]);
        Ok(end - start)
    }
}

/// Decoded chunks, most recent last.
#[derive(Clone, Default)]
struct ChunkCache(Arc<Mutex<VecDeque<CachedChunk>>>);

/// A decoded chunk: its `.log`, its id, its bytes.
type CachedChunk = (PathBuf, usize, Arc<Vec<u8>>);

impl ChunkCache {
    fn get(&self, log: &Path, id: usize) -> Option<Arc<Vec<u8>>> {
        let c = self.0.lock().ok()?;
        c.iter()
            .find(|(p, i, _)| *i == id && p == log)
            .map(|(_, _, b)| b.clone())
    }

    /// Keeps a chunk; at least `keep` (the chunks of the read in progress) stay.
    fn put(&self, log: &Path, id: usize, bytes: Arc<Vec<u8>>, keep: usize) {
        if let Ok(mut c) = self.0.lock() {
            let mut total: usize = c.iter().map(|(_, _, b)| b.len()).sum::<usize>() + bytes.len();
            while c.len() >= keep.max(1)
                && (c.len() >= CACHED_CHUNKS.max(keep) || total > CACHE_BYTES)
            {
                if let Some((_, _, old)) = c.pop_front() {
                    total -= old.len();
                }
            }
            c.push_back((log.to_path_buf(), id, bytes));
        }
    }
}

/// A segment's original bytes, read chunk by chunk from its `.log` object.
struct TieredLog {
    segment: Arc<Segment>,
    /// Bytes shown (the window).
    len: u64,
    object: Box<dyn Object>,
    /// Recently decoded chunks, by id.
    cache: ChunkCache,
    /// The range announced with `will_read`.
    ahead: Option<std::ops::Range<u64>>,
    /// Bytes read in order up to `next_at`: the read-ahead grows with it, so that a read that
    /// stops early (an offset or timestamp bound) fetches little more than it used.
    streak: u64,
    next_at: u64,
}

impl TieredLog {
    /// Chunk `id`, fetched with the chunks after it up to `need_end` (the end of the read
    /// asked for) and, inside an announced range, as far again as has been read in order.
    fn chunk(&mut self, id: usize, need_end: u64) -> Result<Arc<Vec<u8>>> {
        if let Some(c) = self.cache.get(&self.segment.log, id) {
            return Ok(c);
        }
        let index = &self.segment.manifest.chunk_index;
        let first = index
            .chunk(id)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "chunk past the index"))?;
        // Adjacent chunks of an announced range come in the same read.
        let mut last = first.clone();
        if let Some(ahead) = &self.ahead {
            if ahead.contains(&first.original.start) {
                let grown = first.original.start + self.streak.min(READ_AHEAD);
                let limit = ahead.end.min(need_end.max(grown));
                while let Some(next) = index.chunk(last.id + 1) {
                    if next.original.start >= limit
                        || next.original.end - first.original.start > READ_AHEAD
                    {
                        break;
                    }
                    last = next;
                }
            }
        }
        let range = first.transformed.start..last.transformed.end;
        let bytes = read_range(self.object.as_mut(), range.clone())?;
        if bytes.len() as u64 != range.end - range.start {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                format!(
                    "chunks {}..={} should be at bytes {}..{} of the object, which has {}",
                    first.id,
                    last.id,
                    range.start,
                    range.end,
                    self.object.len()
                ),
            )
            .with_path(&self.segment.log));
        }
        let mut wanted = None;
        for cid in first.id..=last.id {
            let c = index.chunk(cid).unwrap_or(first.clone());
            let raw = &bytes[(c.transformed.start - range.start) as usize
                ..(c.transformed.end - range.start) as usize];
            let decoded = Arc::new(self.detransform(&c, raw)?);
            if cid == id {
                wanted = Some(decoded.clone());
            }
            self.cache
                .put(&self.segment.log, cid, decoded, last.id - first.id + 1);
        }
        wanted.ok_or_else(|| Error::new(ErrorKind::Internal, "chunk not decoded"))
    }

    fn detransform(&self, c: &crate::format::tiered::Chunk, raw: &[u8]) -> Result<Vec<u8>> {
        let whose = |what: String| {
            format!(
                "chunk {} (object bytes {}..{}, segment bytes {}..{}): {what}",
                c.id, c.transformed.start, c.transformed.end, c.original.start, c.original.end
            )
        };
        let plain;
        let data: &[u8] = match &self.segment.cipher {
            None => raw,
            Some((cipher, aad)) => {
                plain = decrypt(cipher, aad, raw).map_err(|e| {
                    Error::new(ErrorKind::Decryption, whose(e))
                        .with_path(&self.segment.log)
                        .at(c.original.start)
                })?;
                &plain
            }
        };
        let want = (c.original.end - c.original.start) as usize;
        let out = if self.segment.manifest.compression {
            zstd::bulk::decompress(data, want).map_err(|e| {
                Error::new(ErrorKind::Decompression, whose(format!("zstd: {e}")))
                    .with_path(&self.segment.log)
                    .at(c.original.start)
            })?
        } else {
            data.to_vec()
        };
        if out.len() != want {
            return Err(Error::new(
                ErrorKind::TieredStorage,
                whose(format!(
                    "decodes to {} bytes, the chunk index says {want}",
                    out.len()
                )),
            )
            .with_path(&self.segment.log)
            .at(c.original.start));
        }
        Ok(out)
    }
}

impl Object for TieredLog {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let end = offset.saturating_add(len as u64).min(self.len);
        if offset != self.next_at {
            self.streak = 0;
        }
        let mut at = offset;
        while at < end {
            let Some(c) = self.segment.manifest.chunk_index.chunk_at(at) else {
                break;
            };
            let bytes = self.chunk(c.id, end)?;
            let from = (at - c.original.start) as usize;
            let to = ((end.min(c.original.end)) - c.original.start) as usize;
            out.extend_from_slice(&bytes[from..to]);
            at += (to - from) as u64;
        }
        self.streak += at - offset.min(at);
        self.next_at = at;
        Ok((at - offset.min(at)) as usize)
    }

    fn will_read(&mut self, range: std::ops::Range<u64>) {
        self.ahead = Some(range);
    }
}

/// Storage option naming an RSA private key (PEM) by its key id.
pub const KEY_OPTION: &str = "kafkalog.encryption_key.";
/// The storage option that forces a layout: `auto` (the default), `broker`, `aiven` or
/// `kafka` (see [`Layout`]).
pub const LAYOUT_OPTION: &str = "kafkalog.tiered_layout";
/// The storage option naming where the `__remote_log_metadata` topic's partitions are (a
/// partition directory or a log directory holding them; several separated by commas).
pub const METADATA_OPTION: &str = "kafkalog.remote_log_metadata";

/// Which naming of remote segments a path is read by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Detected per prefix: Aiven's plugin, Kafka's own naming, or a broker's directories.
    #[default]
    Auto,
    /// A broker's log directories only: tiered names are not interpreted.
    Broker,
    /// Aiven's tiered-storage-for-apache-kafka only (`.log`, `.indexes`, `.rsm-manifest`).
    Aiven,
    /// Kafka's own naming only (LocalTieredStorage: `<topic>-<partition>-<topicId>/...`).
    Kafka,
}

impl Layout {
    /// The layout an option value names.
    pub fn from_name(name: &str) -> Result<Layout> {
        match name {
            "auto" => Ok(Layout::Auto),
            "broker" => Ok(Layout::Broker),
            "aiven" => Ok(Layout::Aiven),
            "kafka" => Ok(Layout::Kafka),
            other => Err(Error::invalid_argument(format!(
                "{LAYOUT_OPTION}={other:?}: expected one of auto, broker, aiven, kafka"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Layout::Auto => "auto",
            Layout::Broker => "broker",
            Layout::Aiven => "aiven",
            Layout::Kafka => "kafka",
        }
    }
}

/// How a [`Tiered`] storage reads tiered-storage layouts, from its storage options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TieredSettings {
    /// The layout to assume ([`LAYOUT_OPTION`]).
    pub layout: Layout,
    /// Where `__remote_log_metadata`'s partitions are ([`METADATA_OPTION`]): when given, its
    /// segment states decide which remote segments are read.
    pub remote_log_metadata: Vec<PathBuf>,
}

/// One remote segment found by [`discover`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The `.log` to read.
    pub log: PathBuf,
    /// The segment's topic (from the remote segment's metadata or path).
    pub topic: Option<String>,
    /// Its partition.
    pub partition: Option<i32>,
    /// Its base offset (its first offset).
    pub base_offset: i64,
    /// Bytes of the segment, when known without reading (`None` when a window cuts it).
    pub size: Option<u64>,
}

/// What [`discover`] found under a prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    /// The segments, in reading order.
    pub segments: Vec<Found>,
    /// What was left out and why, one line each (object keys, never contents).
    pub skipped: Vec<String>,
}

/// A segment of a partition directory, before the lineage choice.
struct Listed {
    log: PathBuf,
    topic: Option<String>,
    partition: Option<i32>,
    size: Option<u64>,
    candidate: Candidate,
}

/// The segments of one tiered partition directory (either layout), with what the lineage
/// needs, from its listing. Orphans are not among them (see [`partition_orphans`]).
fn partition_candidates(
    storage: &dyn Storage,
    listed: &[Entry],
    layout: Layout,
) -> Result<Vec<Listed>> {
    let names: HashMap<String, &Entry> = listed
        .iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| Some((e.path.file_name()?.to_str()?.to_string(), e)))
        .collect();
    let mut out = Vec::new();
    for (name, entry) in &names {
        let Some(n) = SegmentName::parse(name) else {
            continue;
        };
        if n.suffix != "log" {
            continue;
        }
        let stem = &name[..name.len() - 4];
        let dir = entry.path.parent().unwrap_or(Path::new(""));
        let aiven = names.contains_key(&format!("{stem}.rsm-manifest"));
        let kafka = !aiven && names.contains_key(&format!("{stem}.snapshot"));
        if (aiven && layout == Layout::Kafka) || (kafka && layout == Layout::Aiven) {
            continue; // another layout than the one forced
        }
        if aiven {
            let key = dir.join(format!("{stem}.rsm-manifest"));
            let bytes = storage.read(&key)?.ok_or_else(|| not_found(&key))?;
            let m = Manifest::parse(&bytes).map_err(|e| e.with_path(&key))?;
            let (topic, partition, end, epochs) = match &m.metadata {
                Some(md) => (
                    Some(md.topic.clone()),
                    Some(md.partition),
                    Some(md.end_offset),
                    md.leader_epochs.clone(),
                ),
                None => {
                    let epochs = storage
                        .read(&dir.join(format!("{stem}.leader-epoch-checkpoint")))?
                        .map(|b| epochs_of(&b))
                        .unwrap_or_default();
                    let (t, p) = aiven_origin(dir);
                    (t, p, None, epochs)
                }
            };
            out.push(Listed {
                log: entry.path.clone(),
                topic,
                partition,
                size: Some(m.chunk_index.original_file_size),
                candidate: Candidate {
                    base_offset: n.base_offset,
                    end_offset: end,
                    leader_epochs: epochs,
                },
            });
        } else if kafka {
            // LocalTieredStorage: the producer snapshot is the last file it copies.
            let epochs = storage
                .read(&dir.join(format!("{stem}.leader_epoch_checkpoint")))?
                .map(|b| epochs_of(&b))
                .unwrap_or_default();
            let (topic, partition) = match dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(TieredDir::local_partition)
            {
                Some(TieredDir::LocalPartition {
                    topic, partition, ..
                }) => (Some(topic), Some(partition)),
                _ => (None, None),
            };
            out.push(Listed {
                log: entry.path.clone(),
                topic,
                partition,
                size: Some(entry.size),
                candidate: Candidate {
                    base_offset: n.base_offset,
                    end_offset: None,
                    leader_epochs: epochs,
                },
            });
        }
    }
    out.sort_by(|a, b| (a.candidate.base_offset, &a.log).cmp(&(b.candidate.base_offset, &b.log)));
    Ok(out)
}

/// Objects of segments whose upload did not finish: no manifest (Aiven), or no producer
/// snapshot (LocalTieredStorage, which copies it last).
fn partition_orphans(listed: &[Entry]) -> Vec<String> {
    let names: std::collections::HashSet<&str> = listed
        .iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| e.path.file_name()?.to_str())
        .collect();
    let aiven = names
        .iter()
        .any(|n| n.ends_with(".rsm-manifest") || n.ends_with(".indexes"));
    let mut orphans: Vec<String> = listed
        .iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| {
            let name = e.path.file_name()?.to_str()?;
            let n = SegmentName::parse(name)?;
            let stem = &name[..name.len() - n.suffix.len() - 1];
            let complete = if aiven {
                names.contains(format!("{stem}.rsm-manifest").as_str())
            } else {
                names.contains(format!("{stem}.snapshot").as_str())
            };
            (!complete).then(|| e.path.to_string_lossy().into_owned())
        })
        .collect();
    orphans.sort();
    orphans
}

fn epochs_of(bytes: &[u8]) -> Vec<(i32, i64)> {
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<(i32, i64)> = parse_leader_epoch_checkpoint(&text)
        .unwrap_or_default()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    out.sort_unstable();
    out
}

/// Topic and partition of an Aiven partition directory `<topic>-<topicId>/<partition>`.
fn aiven_origin(dir: &Path) -> (Option<String>, Option<i32>) {
    let partition = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(aiven_partition);
    let topic = dir
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .and_then(TieredDir::aiven_topic)
        .and_then(|t| match t {
            TieredDir::AivenTopic { topic, .. } => Some(topic),
            _ => None,
        });
    (topic, partition)
}

fn has_segment_objects(listed: &[Entry]) -> bool {
    listed.iter().any(|e| {
        !e.is_dir
            && e.path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(SegmentName::parse)
                .is_some()
    })
}

/// The remote segments under `path` (whose listing is `listed`) when it is a tiered-storage
/// prefix of either layout: a bucket prefix holding topic (Aiven) or partition
/// (LocalTieredStorage) directories, an Aiven topic directory, or a partition directory.
/// `None` when nothing there is named as tiered storage. Partitions come in topic, partition
/// order, segments in offset order, each offset once (see `format/tiered/lineage.rs`).
pub fn discover(
    storage: &dyn Storage,
    path: &Path,
    listed: &[Entry],
) -> Result<Option<Discovered>> {
    let layout = settings_of(storage).map_or(Layout::Auto, |s| s.layout);
    if layout == Layout::Broker {
        return Ok(None);
    }
    let mut found = Discovered::default();
    let mut partitions: Vec<Vec<Entry>> = Vec::new();
    if has_segment_objects(listed) {
        partitions.push(listed.to_vec());
    } else {
        let is_topic_dir = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(TieredDir::aiven_topic)
            .is_some();
        let mut dirs: Vec<(String, i32, PathBuf)> = Vec::new();
        for e in listed.iter().filter(|e| e.is_dir) {
            let Some(name) = e.path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if is_topic_dir {
                if let Some(p) = aiven_partition(name) {
                    dirs.push((String::new(), p, e.path.clone()));
                }
            } else if let Some(d) = TieredDir::parse(name) {
                let (topic, partition) = match d {
                    TieredDir::LocalPartition {
                        topic, partition, ..
                    } => (topic, partition),
                    TieredDir::AivenTopic { topic, .. } => (topic, -1),
                };
                dirs.push((topic, partition, e.path.clone()));
            }
        }
        if dirs.is_empty() {
            return Ok(None);
        }
        dirs.sort();
        for (_, _, dir) in dirs {
            let inner = storage.list(&dir)?;
            if has_segment_objects(&inner) {
                partitions.push(inner);
                continue;
            }
            // An Aiven topic directory: its partitions.
            let mut parts: Vec<(i32, PathBuf)> = inner
                .iter()
                .filter(|e| e.is_dir)
                .filter_map(|e| {
                    Some((
                        aiven_partition(e.path.file_name()?.to_str()?)?,
                        e.path.clone(),
                    ))
                })
                .collect();
            parts.sort();
            for (_, p) in parts {
                partitions.push(storage.list(&p)?);
            }
        }
    }
    let mut any = false;
    for listing in partitions {
        let mut listing = listing;
        listing.sort_by(|a, b| a.path.cmp(&b.path));
        any |= has_segment_objects(&listing);
        for orphan in partition_orphans(&listing) {
            found.skipped.push(format!(
                "{orphan}: no manifest (an upload that did not finish); skipped"
            ));
        }
        let segments = partition_candidates(storage, &listing, layout)?;
        let choices = choose(
            &segments
                .iter()
                .map(|s| s.candidate.clone())
                .collect::<Vec<_>>(),
        );
        for (s, choice) in segments.into_iter().zip(choices) {
            let log = s.log.to_string_lossy().into_owned();
            match choice {
                Choice::Keep { last } => found.segments.push(Found {
                    log: s.log,
                    topic: s.topic,
                    partition: s.partition,
                    base_offset: s.candidate.base_offset,
                    size: if last.is_some() { None } else { s.size },
                }),
                Choice::Duplicate => found.skipped.push(format!(
                    "{log}: its offsets are served by other segments (a duplicate upload); skipped"
                )),
                Choice::Diverged => found.skipped.push(format!(
                    "{log}: its records are not on the leader-epoch lineage (a replica later \
                     truncated uploaded them); skipped"
                )),
            }
        }
    }
    if !any && found.skipped.is_empty() {
        return Ok(None);
    }
    if any && found.segments.is_empty() && matches!(layout, Layout::Aiven | Layout::Kafka) {
        return Err(Error::invalid_argument(format!(
            "{LAYOUT_OPTION}={:?}, but the tiered-storage segments under {} are of another \
             layout",
            layout.name(),
            path.display()
        )));
    }
    // Partition order: topic, partition (directories sort by name, not number).
    let mut order: Vec<(Option<String>, Option<i32>)> = Vec::new();
    for s in &found.segments {
        let k = (s.topic.clone(), s.partition);
        if !order.contains(&k) {
            order.push(k);
        }
    }
    order.sort();
    let mut sorted = Vec::with_capacity(found.segments.len());
    for k in order {
        let mut part: Vec<Found> = found
            .segments
            .iter()
            .filter(|s| (s.topic.clone(), s.partition) == k)
            .cloned()
            .collect();
        part.sort_by_key(|s| s.base_offset);
        sorted.extend(part);
    }
    found.segments = sorted;
    Ok(Some(found))
}

/// Topic and partition of one tiered `.log` given by its key: from its manifest, else from its
/// directories. `None` when the name is not a tiered segment's.
pub fn origin_of(
    storage: &dyn Storage,
    log: &Path,
) -> Result<Option<(Option<String>, Option<i32>)>> {
    let Some(name) = log.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    if SegmentName::parse(name).is_none() {
        return Ok(None);
    }
    let key = sibling(log, "rsm-manifest");
    if let Some(bytes) = storage.read(&key)? {
        let m = Manifest::parse(&bytes).map_err(|e| e.with_path(&key))?;
        if let Some(md) = m.metadata {
            return Ok(Some((Some(md.topic), Some(md.partition))));
        }
    }
    let dir = log.parent().unwrap_or(Path::new(""));
    if let Some(TieredDir::LocalPartition {
        topic, partition, ..
    }) = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(TieredDir::local_partition)
    {
        return Ok(Some((Some(topic), Some(partition))));
    }
    Ok(Some(aiven_origin(dir)))
}

/// The original bytes of one chunk of a tiered `.log` (Aiven's layout): a piece of the
/// segment smaller than this still fetches and decodes whole chunks, so planning cuts no
/// smaller. `None` for any other file.
pub fn split_unit(storage: &dyn Storage, log: &Path) -> Result<Option<u64>> {
    let Some(name) = log.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    if SegmentName::parse(name).is_none_or(|n| n.suffix != "log") {
        return Ok(None);
    }
    let key = sibling(log, "rsm-manifest");
    match storage.read(&key)? {
        Some(bytes) => Ok(Some(
            Manifest::parse(&bytes)
                .map_err(|e| e.with_path(&key))?
                .chunk_index
                .original_chunk_size,
        )),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Local;
    use base64::Engine;

    fn codec(values: &[u32]) -> Vec<u8> {
        // Every value in 4 bytes: valid for the codec, whatever the sizes.
        let mut out = (values.len() as i32).to_be_bytes().to_vec();
        if values.len() == 1 {
            out.extend(values[0].to_be_bytes());
        } else if values.len() > 1 {
            out.extend(0i32.to_be_bytes());
            out.push(4);
            for v in values {
                out.extend(v.to_be_bytes());
            }
        }
        out
    }

    /// Writes a compressed segment of Aiven's layout; returns its `.log` path.
    fn write_segment(
        dir: &Path,
        base: i64,
        id: &str,
        log: &[u8],
        chunk: usize,
        epochs: &str,
        end: i64,
    ) -> PathBuf {
        let chunks: Vec<Vec<u8>> = log
            .chunks(chunk)
            .map(|c| zstd::bulk::compress(c, 1).unwrap())
            .collect();
        let sizes: Vec<u32> = chunks.iter().map(|c| c.len() as u32).collect();
        let b64 = base64::engine::general_purpose::STANDARD;
        let manifest = format!(
            r#"{{"version":"1","chunkIndex":{{"type":"variable","originalChunkSize":{chunk},
            "originalFileSize":{},"transformedChunks":"{}"}},"segmentIndexes":{{
            "offset":{{"position":0,"size":0}},"timestamp":{{"position":0,"size":0}},
            "producerSnapshot":{{"position":0,"size":0}},"leaderEpoch":{{"position":0,"size":0}},
            "transaction":null}},"compression":true,"remoteLogSegmentMetadata":{{
            "remoteLogSegmentId":{{"topicIdPartition":{{"topicId":"MWJ6FHTfRYy67jzwZdeqSQ",
            "topicPartition":{{"topic":"t","partition":2}}}},"id":"{id}"}},"startOffset":{base},
            "endOffset":{end},"segmentLeaderEpochs":{epochs}}}}}"#,
            log.len(),
            b64.encode(zstd::bulk::compress(&codec(&sizes), 1).unwrap()),
        );
        let stem = format!("{base:020}-{id}");
        std::fs::write(dir.join(format!("{stem}.log")), chunks.concat()).unwrap();
        std::fs::write(dir.join(format!("{stem}.indexes")), b"").unwrap();
        std::fs::write(dir.join(format!("{stem}.rsm-manifest")), manifest).unwrap();
        dir.join(format!("{stem}.log"))
    }

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kafkalog-tiered-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ").join("2");
        std::fs::create_dir_all(&part).unwrap();
        dir
    }

    #[test]
    fn chunks_reassemble_byte_for_byte() {
        let dir = temp("bytes");
        let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ/2");
        let original: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let log = write_segment(&part, 0, "AAAAAAAAAAAAAAAAAAAAAA", &original, 999, "{}", 9);
        let tiered = Tiered::new(Arc::new(Local), KeyRing::default());
        assert_eq!(tiered.stat(&log).unwrap(), Stat::File { size: 10_000 });
        assert_eq!(tiered.read(&log).unwrap().unwrap(), original);
        let mut object = tiered.open(&log).unwrap();
        for (a, b) in [
            (0, 1),
            (998, 1001),
            (1500, 7000),
            (9990, 20_000),
            (10_000, 10_005),
        ] {
            let got = read_range(object.as_mut(), a..b).unwrap();
            assert_eq!(
                got,
                original[a as usize..(b as usize).min(10_000)],
                "{a}..{b}"
            );
        }
        object.will_read(0..10_000);
        assert_eq!(read_range(object.as_mut(), 0..10_000).unwrap(), original);
        // The manifest and other objects pass through; discovery takes topic and partition
        // from the manifest.
        let found = discover(&tiered, &dir, &tiered.list(&dir).unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(found.segments.len(), 1);
        assert_eq!(
            (
                found.segments[0].topic.as_deref(),
                found.segments[0].partition
            ),
            (Some("t"), Some(2))
        );
        // A chunk index that disagrees with the object is an error naming the object.
        let bytes = std::fs::read(&log).unwrap();
        std::fs::write(&log, &bytes[..bytes.len() - 1]).unwrap();
        let tiered = Tiered::new(Arc::new(Local), KeyRing::default());
        let err = tiered.open(&log).err().unwrap();
        assert_eq!(err.kind, ErrorKind::TieredStorage);
        assert_eq!(err.path.as_deref(), Some(log.as_path()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn duplicates_and_orphans_are_skipped() {
        let dir = temp("dups");
        let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ/2");
        write_segment(
            &part,
            0,
            "AAAAAAAAAAAAAAAAAAAAAA",
            b"x",
            10,
            r#"{"0":0}"#,
            9,
        );
        write_segment(
            &part,
            0,
            "BBBBBBBBBBBBBBBBBBBBBB",
            b"x",
            10,
            r#"{"0":0}"#,
            9,
        );
        write_segment(
            &part,
            10,
            "CCCCCCCCCCCCCCCCCCCCCC",
            b"y",
            10,
            r#"{"0":0}"#,
            19,
        );
        std::fs::write(
            part.join("00000000000000000020-DDDDDDDDDDDDDDDDDDDDDD.log"),
            b"z",
        )
        .unwrap();
        let tiered = Tiered::new(Arc::new(Local), KeyRing::default());
        let found = discover(&tiered, &dir, &tiered.list(&dir).unwrap())
            .unwrap()
            .unwrap();
        let bases: Vec<i64> = found.segments.iter().map(|s| s.base_offset).collect();
        assert_eq!(bases, vec![0, 10]);
        assert_eq!(found.skipped.len(), 2, "{:?}", found.skipped);
        assert!(found
            .skipped
            .iter()
            .any(|s| s.contains("DDDD") && s.contains("no manifest")));
        assert!(found
            .skipped
            .iter()
            .any(|s| s.contains("BBBB") && s.contains("duplicate")));
        // A plain directory is not tiered.
        assert!(discover(&tiered, &part.join("nothing"), &[])
            .unwrap()
            .is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A store that counts the bytes read from it.
    #[derive(Debug, Default)]
    struct Counting(Arc<std::sync::atomic::AtomicU64>);

    struct CountingObject(Box<dyn Object>, Arc<std::sync::atomic::AtomicU64>);

    impl Object for CountingObject {
        fn len(&self) -> u64 {
            self.0.len()
        }
        fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
            let n = self.0.read_into(offset, len, out)?;
            self.1
                .fetch_add(n as u64, std::sync::atomic::Ordering::SeqCst);
            Ok(n)
        }
    }

    impl Storage for Counting {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }

        fn stat(&self, path: &Path) -> Result<Stat> {
            Local.stat(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
            Local.list(dir)
        }
        fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
            Ok(Box::new(CountingObject(Local.open(path)?, self.0.clone())))
        }
    }

    #[test]
    fn read_ahead_grows_only_with_reads_in_order() {
        let dir = temp("ahead");
        let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ/2");
        // Bytes that do not compress, so that fetched bytes track chunks read.
        let mut x = 1u64;
        let original: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let log = write_segment(
            &part,
            0,
            "AAAAAAAAAAAAAAAAAAAAAA",
            &original,
            999,
            "{}",
            1000,
        );
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let tiered = Tiered::new(Arc::new(Counting(counter.clone())), KeyRing::default());
        let mut object = tiered.open(&log).unwrap();
        let chunk_log = std::fs::metadata(&log).unwrap().len();
        let before = counter.load(std::sync::atomic::Ordering::SeqCst);
        // A whole-object read is announced, but only the first chunk is used.
        object.will_read(0..100_000);
        assert_eq!(read_range(object.as_mut(), 0..10).unwrap(), original[..10]);
        let first = counter.load(std::sync::atomic::Ordering::SeqCst) - before;
        assert!(first > 1000 && first < 1100, "{first} of {chunk_log}");
        // Reading on, the fetches grow with what has been read in order.
        assert_eq!(
            read_range(object.as_mut(), 10..3000).unwrap(),
            original[10..3000]
        );
        let second = counter.load(std::sync::atomic::Ordering::SeqCst) - before - first;
        assert!(second < 4 * 1100, "{second}");
        assert_eq!(
            read_range(object.as_mut(), 3000..100_000).unwrap(),
            original[3000..]
        );
        let all = counter.load(std::sync::atomic::Ordering::SeqCst) - before;
        assert!(all <= chunk_log, "{all} of {chunk_log}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keys_are_never_printed() {
        let mut ring = KeyRing::default();
        let err = ring.add(
            "k1",
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        );
        assert!(err.unwrap_err().message.contains("k1"));
        assert_eq!(format!("{ring:?}"), "KeyRing([])");
        let err = ring
            .unwrap(Path::new("m.rsm-manifest"), "k2", b"xx")
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::EncryptionKey);
    }
}
