//! Finding tiered segments under a prefix: the layouts (a broker's, Aiven's plugin, Kafka's
//! LocalTieredStorage), their settings, and the segments kept after the lineage choice.
use crate::error::{Error, Result};
use crate::format::checkpoint::parse_leader_epoch_checkpoint;
use crate::format::tiered::lineage::{choose, Candidate, Choice};
use crate::format::tiered::names::{aiven_partition, SegmentName, TieredDir};
use crate::format::tiered::Manifest;
use crate::storage::{not_found, Entry, Storage};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{settings_of, sibling};

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

/// How a [`super::Tiered`] storage reads tiered-storage layouts, from its storage options.
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
pub(super) struct Listed {
    pub(super) log: PathBuf,
    pub(super) topic: Option<String>,
    pub(super) partition: Option<i32>,
    pub(super) size: Option<u64>,
    pub(super) candidate: Candidate,
}

/// The segments of one tiered partition directory (either layout), with what the lineage
/// needs, from its listing. Orphans are not among them (see [`partition_orphans`]).
pub(super) fn partition_candidates(
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
pub(super) fn partition_orphans(listed: &[Entry]) -> Vec<String> {
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

pub(super) fn epochs_of(bytes: &[u8]) -> Vec<(i32, i64)> {
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
pub(super) fn aiven_origin(dir: &Path) -> (Option<String>, Option<i32>) {
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

pub(super) fn has_segment_objects(listed: &[Entry]) -> bool {
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
