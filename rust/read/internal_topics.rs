//! Kafka's internal topics read from paths into tables, as their coordinators load them: the
//! topic's partitions found as any read finds files ([`crate::read::files::resolve`]), read
//! `read_committed` within what a consumer could fetch, and folded ([`crate::internal`]);
//! and KRaft's cluster state from the latest snapshot plus the log after it.

use crate::arrow::schema::Projection;
use crate::error::Result;
use crate::format::batch::CrcPolicy;
use crate::format::internal::Topic;
use crate::format::segment::kraft_snapshot_id;
use crate::internal::cluster_state::ClusterState;
use crate::internal::fold::{log_end_offset, Fold};
use crate::log::bounds::Bounds;
use crate::log::discover::{by_partition, SegmentFile};
use crate::log::issues::{Issue, OnCorrupt};
use crate::log::visibility::Visibility;
use crate::read::files::resolve;
use crate::read::reader::ReaderBuilder;
use crate::read::topic_fold::fold_partition;
use crate::storage::{Stat, Storage};
use arrow_array::RecordBatch;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The columns of an internal topic's records a fold reads.
const FOLD_COLUMNS: [&str; 7] = [
    "key",
    "value",
    "topic",
    "partition",
    "offset",
    "timestamp",
    "batchPosition",
];

/// What an internal topic's table is read from: for each of its partitions, the name errors
/// give it and its segment files.
type Sources = Vec<(PathBuf, Vec<SegmentFile>)>;

/// The partitions of `topic` under `path` (as `kafkalog.segments` finds them; a file is taken
/// as given, whatever its topic), and for the `__cluster_metadata` topic with no log, the KRaft
/// snapshots (`.checkpoint`) directly in `path`, each read as a file.
fn topic_sources(storage: &Arc<dyn Storage>, path: &Path, topic: &str) -> Result<Sources> {
    let is_file = matches!(storage.stat(path)?, Stat::File { .. });
    // A directory holding only KRaft snapshots has no segment: not worth the warning here.
    let (files, _notes) = resolve(storage, &[path.to_path_buf()])?;
    let named = |f: &SegmentFile| is_file || f.origin.topic.as_deref().is_none_or(|t| t == topic);
    let files: Vec<SegmentFile> = files.into_iter().filter(named).collect();
    let mut out: Sources = by_partition(files)
        .into_iter()
        .map(|group| {
            let first = &group[0].path;
            let source = if is_file {
                first.clone()
            } else {
                first
                    .parent()
                    .map_or_else(|| first.clone(), Path::to_path_buf)
            };
            (source, group)
        })
        .collect();
    if Topic::from_name(topic) == Some(Topic::ClusterMetadata) && out.is_empty() && !is_file {
        for snapshot in checkpoint_files(storage, path)? {
            let (files, _) = resolve(storage, std::slice::from_ref(&snapshot))?;
            out.push((snapshot, files));
        }
    }
    Ok(out)
}

/// The files named `*.checkpoint` directly in `path` (KRaft snapshots), sorted.
fn checkpoint_files(storage: &Arc<dyn Storage>, path: &Path) -> Result<Vec<PathBuf>> {
    let mut snapshots: Vec<PathBuf> = storage
        .list(path)?
        .into_iter()
        .filter(|e| !e.is_dir && e.path.to_string_lossy().ends_with(".checkpoint"))
        .map(|e| e.path)
        .collect();
    snapshots.sort();
    Ok(snapshots)
}

/// Each data partition's (not an internal topic's) last segment under `path`.
fn last_segments(storage: &Arc<dyn Storage>, path: &Path) -> Result<Vec<SegmentFile>> {
    if matches!(storage.stat(path)?, Stat::File { .. }) {
        return Ok(Vec::new());
    }
    let (files, _) = resolve(storage, &[path.to_path_buf()])?;
    let mut last: Vec<SegmentFile> = Vec::new();
    for f in files {
        let (Some(topic), Some(_)) = (&f.origin.topic, f.origin.partition) else {
            continue;
        };
        if topic.starts_with("__") {
            continue;
        }
        match last.iter_mut().find(|l| l.origin == f.origin) {
            Some(l) => *l = f,
            None => last.push(f),
        }
    }
    Ok(last)
}

/// `fold` fed with the internal topic `topic`'s partitions under `path`: read `read_committed`
/// (a coordinator loads only committed transactional records) within what a consumer could
/// fetch, corrupt batches skipped when `on_corrupt` is `Skip`; with `log_ends`, each data
/// partition's log end offset taken from its last segment (for the lag of commits). Returns
/// the table and what the reads passed over; the fold keeps its own issues.
pub fn internal_table(
    storage: &Arc<dyn Storage>,
    fold: &mut Fold,
    topic: &str,
    path: &Path,
    on_corrupt: OnCorrupt,
    log_ends: bool,
) -> Result<(RecordBatch, Vec<Issue>)> {
    let mut read_issues = Vec::new();
    let builder = ReaderBuilder::new()
        .with_storage(storage.clone())
        .with_projection(Projection::from_names(&FOLD_COLUMNS)?)
        .with_on_corrupt(on_corrupt)
        .with_bounds(Bounds {
            read_committed: true,
            visibility: Visibility::Consumer,
            ..Bounds::default()
        });
    for (source, files) in topic_sources(storage, path, topic)? {
        read_issues.extend(fold_partition(&builder, &source, files, fold)?);
    }
    if log_ends {
        let listing = ReaderBuilder::new()
            .with_storage(storage.clone())
            .with_crc(CrcPolicy::Ignore)
            .with_on_corrupt(OnCorrupt::Skip);
        for last in last_segments(storage, path)? {
            let (Some(data_topic), Some(partition)) =
                (last.origin.topic.clone(), last.origin.partition)
            else {
                continue;
            };
            let base = last.base_offset.unwrap_or(0);
            let mut reader = listing.clone().build_batch_listing(vec![last])?;
            let end = log_end_offset(reader.by_ref(), base)?;
            read_issues.extend(reader.take_issues());
            fold.set_log_end(&data_topic, partition, end);
        }
    }
    Ok((fold.finish()?, read_issues))
}

/// The cluster's state from the KRaft metadata under `path`, as a controller rebuilds it: the
/// latest snapshot (`<end offset>-<epoch>.checkpoint`) when there is one, then the log's
/// records from the snapshot's end offset on. Given a log directory, its
/// `__cluster_metadata-0` partition (where a broker keeps its snapshots); `path` may also be a
/// single `.log` or `.checkpoint` file. Returns (name, table) for topics, partitions, configs,
/// brokers and features, and what the reads passed over.
#[allow(clippy::type_complexity)]
pub fn cluster_state(
    storage: &Arc<dyn Storage>,
    path: &Path,
) -> Result<(Vec<(&'static str, RecordBatch)>, Vec<Issue>)> {
    let builder = ReaderBuilder::new()
        .with_storage(storage.clone())
        .with_projection(Projection::from_names(&["value"])?);
    let mut state = ClusterState::new();
    let mut read_issues = Vec::new();
    let mut replay = |builder: ReaderBuilder, files: Vec<SegmentFile>| -> Result<()> {
        let mut reader = builder.build_files(files)?;
        for batch in reader.by_ref() {
            state.feed(&batch?)?;
        }
        read_issues.extend(reader.take_issues());
        Ok(())
    };
    let discover = |p: &Path| resolve(storage, &[p.to_path_buf()]);
    if matches!(storage.stat(path)?, Stat::File { .. }) {
        replay(builder, discover(path)?.0)?;
    } else {
        let partition = path.join("__cluster_metadata-0");
        let path = if matches!(storage.stat(&partition)?, Stat::Dir) {
            partition.as_path()
        } else {
            path
        };
        let latest = checkpoint_files(storage, path)?
            .into_iter()
            .filter_map(|p| kraft_snapshot_id(&p).map(|(end, _)| (p, end)))
            .next_back();
        let mut start = None;
        if let Some((snapshot, end)) = latest {
            replay(builder.clone(), discover(&snapshot)?.0)?;
            start = Some(end);
        }
        // A directory holding only KRaft snapshots has no segment: not worth a note.
        let (files, _) = discover(path)?;
        if !files.is_empty() {
            let bounds = Bounds {
                start_offset: start,
                ..Bounds::default()
            };
            replay(builder.with_bounds(bounds), files)?;
        }
    }
    Ok((state.tables()?, read_issues))
}
