//! Finding the segment files under a path, as a broker's log manager would: a single file, a
//! partition directory `<topic>-<partition>`, a log directory of partitions, or a tiered-storage
//! prefix; each file with the topic and partition its records belong to ([`SegmentFile`]).

use crate::error::Result;
use crate::format::segment::{base_offset_from_name, topic_partition_from_dir};
use crate::log::origin::Origin;
use crate::storage::{Stat, Storage};
use std::path::{Path, PathBuf};

/// One segment file to read, with the topic and partition its records belong to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFile {
    /// Where the segment is: a local path, or an object-store path as `storage` names it.
    pub path: PathBuf,
    /// From the file name, when it is a segment name.
    pub base_offset: Option<i64>,
    /// The topic and partition its records belong to (from the partition directory's name,
    /// or a tiered-storage manifest).
    pub origin: Origin,
    /// Byte range to read: from `start` to `end` (exclusive; `None` = end of file). Both are
    /// batch boundaries; an entry that crosses `end` reads as a torn tail.
    pub start: u64,
    /// Exclusive end of the byte range; `None` reads to the end of the file.
    pub end: Option<u64>,
    /// The file's size when it was listed, when known.
    pub size: Option<u64>,
}

impl SegmentFile {
    /// The whole file at `path`, its base offset taken from its name (`<20-digit offset>.log`,
    /// as Kafka names segments) when it is one.
    pub fn new(path: PathBuf, origin: Origin) -> Self {
        SegmentFile {
            base_offset: base_offset_from_name(&path),
            path,
            origin,
            start: 0,
            end: None,
            size: None,
        }
    }

    /// Whether this is a segment in a tiered-storage layout (named `<offset>-<segment id>`,
    /// as a RemoteStorageManager names what it copied), not in a broker's log directory.
    pub fn is_tiered(&self) -> bool {
        self.path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(crate::format::tiered::SegmentName::parse)
            .is_some()
    }

    /// Whether `next`, listed right after this file, continues the same partition's log: the
    /// same topic-partition in the same directory, or its local segments following its
    /// tiered ones (a partition read from a bucket and a broker directory at once, which
    /// [`crate::log::remote_local::merge_remote_and_local`] puts in offset order).
    pub fn continued_by(&self, next: &SegmentFile) -> bool {
        self.origin == next.origin
            && (self.path.parent() == next.path.parent() || self.is_tiered() || next.is_tiered())
    }

    fn sized(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

fn is_segment(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "log") && base_offset_from_name(path).is_some()
}

fn list_sorted(storage: &dyn Storage, dir: &Path) -> Result<Vec<crate::storage::Entry>> {
    let mut entries = storage.list(dir)?;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// The segments of one partition directory, in offset order.
fn partition_segments(
    storage: &dyn Storage,
    dir: &Path,
    origin: &Origin,
) -> Result<Vec<SegmentFile>> {
    let listed = crate::log::manifest::published(storage, dir, list_sorted(storage, dir)?)?;
    let mut segments: Vec<SegmentFile> = listed
        .into_iter()
        .filter(|e| !e.is_dir && is_segment(&e.path))
        .map(|e| SegmentFile::new(e.path, origin.clone()).sized(e.size))
        .collect();
    segments.sort_by_key(|s| s.base_offset);
    Ok(segments)
}

/// The segment files under `path`, in reading order:
/// - a file: that file, with topic and partition from its directory's name when it is a
///   partition directory `<topic>-<partition>`;
/// - a directory holding `.log` segments: a partition directory, its segments in offset order;
/// - any other directory: a log directory; each partition directory in it, ordered by topic
///   and partition.
///
/// Segments being deleted, cleaned or swapped (`.log.deleted`, `.log.cleaned`, `.log.swap`)
/// and directories Kafka is deleting or moving are left out, as a broker would.
///
/// `path` is a local path or an object-store URI; `storage` reads it.
pub fn discover(storage: &dyn Storage, path: &Path) -> Result<Vec<SegmentFile>> {
    discover_noting(storage, path, &mut Vec::new())
}

/// [`discover`], also reading tiered-storage prefixes (`storage/tiered.rs`) and noting in
/// `skipped` what was left out there (orphaned uploads, duplicates), one line each.
pub fn discover_noting(
    storage: &dyn Storage,
    path: &Path,
    skipped: &mut Vec<String>,
) -> Result<Vec<SegmentFile>> {
    let stat = storage.stat(path)?;
    let dir_origin = |dir: Option<&Path>| {
        dir.and_then(topic_partition_from_dir)
            .map(|(topic, partition)| Origin {
                topic: Some(topic),
                partition: Some(partition),
            })
            .unwrap_or_default()
    };
    match stat {
        Stat::Missing => return Err(crate::storage::not_found(path)),
        Stat::File { size } => {
            if let Some(kind) = crate::format::segment::not_a_log(path) {
                return Err(crate::error::Error::invalid_argument(format!(
                    "{} is {kind}, not a log segment: read the partition directory or the \
                     .log file beside it (`kafkalog dump` prints index files)",
                    path.display()
                )));
            }
            let origin = match crate::storage::tiered::discovery::origin_of(storage, path)? {
                Some((topic, partition)) => Origin { topic, partition },
                None => dir_origin(path.parent()),
            };
            return Ok(vec![
                SegmentFile::new(path.to_path_buf(), origin).sized(size)
            ]);
        }
        Stat::Dir => {}
    }
    let listed = list_sorted(storage, path)?;
    if let Some(found) = crate::storage::tiered::discovery::discover(storage, path, &listed)? {
        skipped.extend(found.skipped);
        return Ok(found
            .segments
            .into_iter()
            .map(|f| SegmentFile {
                base_offset: Some(f.base_offset),
                size: f.size,
                ..SegmentFile::new(
                    f.log,
                    Origin {
                        topic: f.topic,
                        partition: f.partition,
                    },
                )
            })
            .collect());
    }
    // Only what a write to an object store published (a plain directory: all of it).
    let files = crate::log::manifest::published(storage, path, listed.clone())?;
    let mut segments: Vec<SegmentFile> = files
        .iter()
        .filter(|e| !e.is_dir && is_segment(&e.path))
        .map(|e| SegmentFile::new(e.path.clone(), dir_origin(Some(path))).sized(e.size))
        .collect();
    if !segments.is_empty() {
        segments.sort_by_key(|s| s.base_offset);
        return Ok(segments);
    }
    let mut partitions: Vec<(String, i32, PathBuf)> = listed
        .into_iter()
        .filter(|e| e.is_dir)
        .filter_map(|e| topic_partition_from_dir(&e.path).map(|(t, n)| (t, n, e.path)))
        .collect();
    partitions.sort();
    let mut all = Vec::new();
    for (topic, partition, dir) in partitions {
        all.extend(partition_segments(
            storage,
            &dir,
            &Origin {
                topic: Some(topic),
                partition: Some(partition),
            },
        )?);
    }
    Ok(all)
}

/// The files of each partition: consecutive files that continue one partition's log (see
/// [`SegmentFile::continued_by`]).
pub fn by_partition(files: Vec<SegmentFile>) -> Vec<Vec<SegmentFile>> {
    let mut groups: Vec<Vec<SegmentFile>> = Vec::new();
    for f in files {
        match groups.last_mut() {
            Some(g) if g[g.len() - 1].continued_by(&f) => g.push(f),
            _ => groups.push(vec![f]),
        }
    }
    groups
}
