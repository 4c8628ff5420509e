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
//! When a partition holds the same offsets in two segments, [`discovery::discover`] leaves out the
//! duplicates and the segments that diverged from the leader-epoch lineage, and a kept segment
//! whose tail is served by another ends (its `.log` is shorter, its indexes cut to match), as
//! `format/tiered/lineage.rs` decides.
//!
//! Never a key, a data key or plaintext in an error or a log.

use super::{not_found, read_range, Entry, Object, PutMode, Stat, Storage};
use crate::error::{Error, ErrorKind, Result};
use crate::format::index::{
    lookup_offset, read_offset_index, OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE, TXN_ENTRY_SIZE,
};
use crate::format::segment::first_entry_reaching;
use crate::format::tiered::lineage::{choose, Choice};
use crate::format::tiered::names::SegmentName;
use crate::format::tiered::{IndexSlot, Manifest};
use aes_gcm::aead::KeyInit;
use aes_gcm::Aes256Gcm;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chunks::{ChunkCache, TieredLog, MAX_CHUNK};
use discovery::{partition_candidates, Layout, TieredSettings, LAYOUT_OPTION, METADATA_OPTION};
use keys::{decrypt, KeyRing, KEY_OPTION};

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

/// The position of the first entry at or after `at` reaching offset `target` (the log's
/// length when none does).
fn first_batch_reaching(log: &mut TieredLog, at: u64, target: i64) -> Result<u64> {
    let len = log.len;
    let found = first_entry_reaching(len, at, target, |range| read_range(log, range))?;
    Ok(found.unwrap_or(len))
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

pub mod chunks;
pub mod discovery;
pub mod keys;
#[cfg(test)]
mod tests;
