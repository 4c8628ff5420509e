//! What the endpoint serves, found once at start: each topic with its id, each partition with
//! its segments and the offsets a broker would know after loading the log (log start, high
//! watermark, last stable offset, aborted transactions, leader epochs). Several brokers'
//! directories holding replicas of one partition serve the replica that reaches furthest.

use crate::error::{Error, Result};
use crate::format::batch::{CrcPolicy, DecodeOptions};
use crate::format::checkpoint::{
    parse_leader_epoch_checkpoint, parse_partition_metadata, EpochEntry, LEADER_EPOCH_CHECKPOINT,
    PARTITION_METADATA,
};
use crate::format::segment::entry_last_offset;
use crate::format::topic::is_internal;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::log::offsets::{first_offset, list_offsets};
use crate::log::scan::{for_each_entry, Access};
use crate::log::transactions::{partition_transactions, Transactions};
use crate::log::visibility::Visibility;
use crate::read::files::{resolve_topics, TopicFilter};
use crate::storage::{Mapped, Object, Storage};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// KRaft's metadata log: a broker keeps it beside the partitions, but it is no topic a client
/// can fetch.
const CLUSTER_METADATA: &str = "__cluster_metadata";

/// One segment of a served partition.
pub struct Segment {
    /// The file, as discovery found it.
    pub file: SegmentFile,
    /// The offset of its first batch (from its name, else its first batch).
    pub base_offset: i64,
    /// Its bytes when the catalog was built; later bytes (a live log) are not served.
    pub len: u64,
    source: OnceLock<Source>,
}

/// How a segment's bytes are read: in place from a memory map, or by ranges from a store.
pub enum Source {
    /// A local file, mapped: slices are served without a copy.
    Mapped(Mapped),
    /// An object in a store (or a file that could not be mapped), read in order through
    /// `fetch.rs`'s reader, with what was read past the last answer.
    Object(Mutex<Stored>),
}

/// A segment in a store, as the fetches of its partition read it: in order, one stream after
/// another, each fetch starting inside the bytes the one before read past its end.
pub struct Stored {
    /// The object.
    pub object: Box<dyn Object>,
    /// Where `bytes` starts in the segment.
    pub at: u64,
    /// Bytes read and not yet passed; the object's next read in order starts after them.
    pub bytes: Vec<u8>,
    /// Where the range the object was last told it would read ends (see `Object::will_read`).
    pub told_end: u64,
}

impl Segment {
    /// The segment's bytes source, opened on first use.
    pub fn source(&self, storage: &dyn Storage) -> Result<&Source> {
        if let Some(source) = self.source.get() {
            return Ok(source);
        }
        let mut object = storage.open(&self.file.path)?;
        let source = match object.mapped() {
            Some(map) => Source::Mapped(map),
            None => Source::Object(Mutex::new(Stored {
                object,
                at: 0,
                bytes: Vec::new(),
                told_end: 0,
            })),
        };
        Ok(self.source.get_or_init(|| source))
    }
}

/// One served partition.
pub struct Partition {
    /// Its number.
    pub index: i32,
    /// Its segments in offset order.
    pub segments: Vec<Segment>,
    /// The first offset a consumer may fetch.
    pub log_start: i64,
    /// The high watermark: the log end offset, or the broker's checkpointed high watermark.
    pub high_watermark: i64,
    /// The last stable offset: the high watermark, or the first offset of the earliest
    /// transaction still open.
    pub last_stable: i64,
    /// The aborted transactions, for `read_committed` fetches.
    pub transactions: Transactions,
    /// The leader epochs, oldest first (`leader-epoch-checkpoint`, else the batches').
    pub epochs: Vec<EpochEntry>,
    /// Where the partition's files are (for messages).
    pub dir: PathBuf,
}

impl Partition {
    /// The current leader epoch: the latest the log knows, 0 for a log that has none.
    pub fn leader_epoch(&self) -> i32 {
        self.epochs.last().map_or(0, |e| e.epoch.max(0))
    }

    /// The index of the segment holding `offset` (the last whose base offset is at or below it).
    pub fn segment_for(&self, offset: i64) -> usize {
        self.segments
            .partition_point(|s| s.base_offset <= offset)
            .saturating_sub(1)
    }
}

/// One served topic.
pub struct Topic {
    /// Its name.
    pub name: String,
    /// Its id: the broker's `partition.metadata`, else one derived from the name.
    pub id: [u8; 16],
    /// Whether it is one of Kafka's internal topics.
    pub internal: bool,
    /// Its partitions, by number.
    pub partitions: BTreeMap<i32, Arc<Partition>>,
}

/// Everything served.
pub struct Catalog {
    /// Topics by name.
    pub topics: BTreeMap<String, Topic>,
    /// The cluster id (`meta.properties` of a served log directory, else derived).
    pub cluster_id: String,
    /// Where the storage reads from.
    pub storage: Arc<dyn Storage>,
    /// What building the catalog passed over, for the log.
    pub notes: Vec<String>,
}

impl Catalog {
    /// The topic with id `id`.
    pub fn topic_by_id(&self, id: &[u8; 16]) -> Option<&Topic> {
        self.topics.values().find(|t| &t.id == id)
    }

    /// The partition `topic`-`partition`.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&Arc<Partition>> {
        self.topics.get(topic)?.partitions.get(&partition)
    }

    /// How many partitions are served.
    pub fn partition_count(&self) -> usize {
        self.topics.values().map(|t| t.partitions.len()).sum()
    }

    /// The catalog of everything under `paths` that `topics` keeps.
    pub fn build(
        storage: Arc<dyn Storage>,
        paths: &[PathBuf],
        topics: &TopicFilter,
    ) -> Result<Catalog> {
        let (files, mut notes) = resolve_topics(&storage, paths, topics)?;
        // Group by topic-partition; a partition found in several directories (replicas on
        // several brokers' volumes) keeps the directory whose log reaches furthest.
        let mut groups: BTreeMap<(String, i32), Vec<Vec<SegmentFile>>> = BTreeMap::new();
        for file in files {
            let (Some(topic), Some(partition)) = (file.origin.topic.clone(), file.origin.partition)
            else {
                notes.push(format!(
                    "{}: not in a <topic>-<partition> directory, not served",
                    file.path.display()
                ));
                continue;
            };
            if topic == CLUSTER_METADATA {
                continue;
            }
            let replicas = groups.entry((topic, partition)).or_default();
            match replicas
                .iter_mut()
                .find(|r| r[0].path.parent() == file.path.parent() || file.is_tiered())
            {
                Some(replica) => replica.push(file),
                None => replicas.push(vec![file]),
            }
        }
        let options = DecodeOptions {
            crc: CrcPolicy::Ignore,
            ..DecodeOptions::default()
        };
        let mut catalog = Catalog {
            topics: BTreeMap::new(),
            cluster_id: String::new(),
            storage: storage.clone(),
            notes: Vec::new(),
        };
        let mut cluster_id = None;
        for ((topic, index), replicas) in groups {
            let mut best: Option<Partition> = None;
            for files in replicas {
                let partition = load_partition(storage.as_ref(), index, files, &options)?;
                if best.as_ref().is_none_or(|b| {
                    (partition.high_watermark, partition.log_start)
                        > (b.high_watermark, b.log_start)
                }) {
                    best = Some(partition);
                }
            }
            let Some(partition) = best else { continue };
            if cluster_id.is_none() {
                cluster_id = partition
                    .dir
                    .parent()
                    .and_then(|d| read_cluster_id(storage.as_ref(), d));
            }
            let id = match storage.read(&partition.dir.join(PARTITION_METADATA)) {
                Ok(Some(bytes)) => parse_partition_metadata(&String::from_utf8_lossy(&bytes))
                    .map_err(|e| e.with_path(&partition.dir.join(PARTITION_METADATA)))
                    .ok(),
                _ => None,
            };
            let entry = catalog
                .topics
                .entry(topic.clone())
                .or_insert_with(|| Topic {
                    id: id.unwrap_or_else(|| derived_topic_id(&topic)),
                    internal: is_internal(&topic),
                    name: topic.clone(),
                    partitions: BTreeMap::new(),
                });
            entry.partitions.insert(index, Arc::new(partition));
        }
        catalog.cluster_id = cluster_id.unwrap_or_else(|| {
            let id = derived_topic_id(
                &paths
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            base64_id(&id)
        });
        catalog.notes = notes;
        Ok(catalog)
    }
}

/// A partition's offsets, transactions and epochs, as a broker loading `files` knows them.
fn load_partition(
    storage: &dyn Storage,
    index: i32,
    files: Vec<SegmentFile>,
    options: &DecodeOptions,
) -> Result<Partition> {
    let mut issues: Vec<Issue> = Vec::new();
    let dir = files[files.len() - 1]
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let (offsets, more) = list_offsets(
        storage,
        files.clone(),
        false,
        Visibility::Consumer,
        &|_| None,
        options,
    )?;
    issues.extend(more);
    let offsets = offsets.into_iter().next();
    let log_start = offsets.as_ref().and_then(|o| o.earliest).unwrap_or(0);
    let high_watermark = offsets.as_ref().and_then(|o| o.latest).unwrap_or(log_start);
    let transactions =
        partition_transactions(storage, &files, Some(high_watermark), options, &mut issues)?;
    let last_stable = transactions
        .last_stable_offset
        .map_or(high_watermark, |l| l.min(high_watermark));
    let mut segments = Vec::with_capacity(files.len());
    let mut decoder = crate::format::batch::BatchDecoder::new(options.clone());
    for file in files {
        let base_offset = match file.base_offset {
            Some(base) => base,
            None => match first_offset(storage, &file, &mut decoder)? {
                Some(base) => base,
                None => continue, // no batch at all
            },
        };
        let len = match file.size {
            Some(size) => size,
            None => storage.open(&file.path)?.len(),
        };
        segments.push(Segment {
            file,
            base_offset,
            len,
            source: OnceLock::new(),
        });
    }
    let epochs = match storage.read(&dir.join(LEADER_EPOCH_CHECKPOINT))? {
        Some(bytes) => parse_leader_epoch_checkpoint(&String::from_utf8_lossy(&bytes))
            .map_err(|e| e.with_path(&dir.join(LEADER_EPOCH_CHECKPOINT)))?,
        None => epochs_from_batches(storage, &segments)?,
    };
    Ok(Partition {
        index,
        segments,
        log_start,
        high_watermark,
        last_stable,
        transactions,
        epochs,
        dir,
    })
}

/// The leader epochs the v2 batches carry (their `partitionLeaderEpoch`), as entries of a
/// `leader-epoch-checkpoint`: where a partition directory has none (a copied or written log).
fn epochs_from_batches(storage: &dyn Storage, segments: &[Segment]) -> Result<Vec<EpochEntry>> {
    let mut epochs: Vec<EpochEntry> = Vec::new();
    for segment in segments {
        for_each_entry(storage, &segment.file.path, 0, Access::Whole, |_, entry| {
            if entry.len() >= 61 && entry[16] == 2 {
                let epoch = i32::from_be_bytes(entry[12..16].try_into().expect("4 bytes"));
                let base = i64::from_be_bytes(entry[0..8].try_into().expect("8 bytes"));
                if epoch >= 0 && epochs.last().is_none_or(|e| epoch > e.epoch) {
                    epochs.push(EpochEntry {
                        epoch,
                        start_offset: base,
                    });
                }
            }
            Ok(true)
        })?;
    }
    Ok(epochs)
}

/// `cluster.id` in a log directory's `meta.properties`.
fn read_cluster_id(storage: &dyn Storage, log_dir: &Path) -> Option<String> {
    let bytes = storage.read(&log_dir.join("meta.properties")).ok()??;
    String::from_utf8_lossy(&bytes).lines().find_map(|line| {
        line.trim()
            .strip_prefix("cluster.id=")
            .map(|v| v.trim().to_string())
    })
}

/// A stable topic id for a topic whose directory has no `partition.metadata`: the name's
/// SHA3-256, its first 16 bytes (never Kafka's zero id or the metadata topic's id 1).
pub fn derived_topic_id(name: &str) -> [u8; 16] {
    use sha3::Digest;
    let digest = sha3::Sha3_256::digest(format!("kafkalog topic id: {name}").as_bytes());
    let mut id: [u8; 16] = digest[..16].try_into().expect("16 bytes");
    if id[..15].iter().all(|&b| b == 0) && id[15] <= 1 {
        id[0] = 1;
    }
    id
}

/// An id as Kafka prints a `Uuid`: URL-safe base64, unpadded.
pub fn base64_id(id: &[u8; 16]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

/// The first and last offsets of a log entry from its first bytes (a v2 batch's base offset
/// and last offset; a v0/v1 entry's own offset for both), and its size.
pub fn entry_span(head: &[u8]) -> Option<(i64, i64, u64)> {
    let (size, last) = entry_last_offset(head)?;
    let first = if head.get(16) == Some(&2) {
        i64::from_be_bytes(head.get(0..8)?.try_into().ok()?)
    } else {
        last
    };
    Some((first, last, size))
}

/// An error naming the partition.
pub fn partition_error(partition: &Partition, message: impl Into<String>) -> Error {
    Error::invalid_argument(message).with_path(&partition.dir)
}
