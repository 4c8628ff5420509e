//! A partition whose old segments are in a tiered-storage bucket and whose recent ones are in a
//! broker's directory, read as one: the broker serves offsets from its local log from the local
//! log start offset on, and from remote storage below it. So remote segments from the first
//! local segment's base offset on are left out, and one that crosses it ends there.
//!
//! Also the `__remote_log_metadata` topic's segment states as the authoritative list of remote
//! segments, where its partitions are given ([`apply_remote_log_metadata`]).

use crate::error::{Error, Result};
use crate::format::tiered::{SegmentName, TieredDir};
use crate::internal::internal_tables::{
    Fold, FoldOptions, Kind, RemoteSegmentState, COPY_SEGMENT_FINISHED,
};
use crate::log::discover::{discover, SegmentFile};
use crate::log::origin::Origin;
use crate::log::seek::{by_partition, seek_position};
use crate::read::reader::ReaderBuilder;
use crate::storage::tiered::METADATA_OPTION;
use crate::storage::Storage;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// `files` (in reading order) with each partition that has both remote and local segments
/// made one offset-ordered run: its remote segments below the local log start offset, then its
/// local ones, where the partition first appears. Other files keep their order.
pub fn merge_remote_and_local(
    storage: &dyn Storage,
    files: Vec<SegmentFile>,
) -> Result<Vec<SegmentFile>> {
    let known = |o: &Origin| o.topic.is_some() && o.partition.is_some();
    let mut kinds: HashMap<Origin, (bool, bool)> = HashMap::new();
    for f in files.iter().filter(|f| known(&f.origin)) {
        let k = kinds.entry(f.origin.clone()).or_default();
        if f.is_tiered() {
            k.0 = true;
        } else {
            k.1 = true;
        }
    }
    let mixed: HashSet<Origin> = kinds
        .into_iter()
        .filter(|(_, (r, l))| *r && *l)
        .map(|(o, _)| o)
        .collect();
    if mixed.is_empty() {
        return Ok(files);
    }
    let mut out = Vec::with_capacity(files.len());
    let mut done: HashSet<Origin> = HashSet::new();
    for f in &files {
        if !mixed.contains(&f.origin) {
            out.push(f.clone());
            continue;
        }
        if !done.insert(f.origin.clone()) {
            continue;
        }
        let mut remote: Vec<SegmentFile> = Vec::new();
        let mut local: Vec<SegmentFile> = Vec::new();
        for g in files.iter().filter(|g| g.origin == f.origin) {
            if g.is_tiered() {
                remote.push(g.clone());
            } else {
                local.push(g.clone());
            }
        }
        remote.sort_by_key(|g| g.base_offset);
        let local_start = local.iter().filter_map(|g| g.base_offset).min();
        for mut r in remote {
            let (Some(base), Some(start)) = (r.base_offset, local_start) else {
                out.push(r);
                continue;
            };
            if base >= start {
                continue;
            }
            // Crossing the local log start: end where the local log begins.
            let end = seek_position(storage, &r.path, base, start, &mut Vec::new())?;
            let exact = end_at(storage, &r.path, end, start)?;
            if exact.is_some() {
                r.end = exact;
                r.size = None;
            }
            out.push(r);
        }
        out.extend(local);
    }
    Ok(out)
}

/// The position of the first entry at or after `from` holding an offset at or above `target`;
/// `None` when the log ends first (no cut needed).
fn end_at(
    storage: &dyn Storage,
    log: &std::path::Path,
    from: u64,
    target: i64,
) -> Result<Option<u64>> {
    let mut object = storage.open(log)?;
    let len = object.len();
    let mut at = from;
    while at + 12 <= len {
        let head = crate::storage::read_range(object.as_mut(), at..(at + 27).min(len))?;
        let base = i64::from_be_bytes(head[0..8].try_into().unwrap_or_default());
        let size = i32::from_be_bytes(head[8..12].try_into().unwrap_or_default());
        if size < 0 {
            return Ok(None);
        }
        let last = match head.get(16) {
            Some(2) if head.len() >= 27 => {
                base + i32::from_be_bytes(head[23..27].try_into().unwrap_or_default()) as i64
            }
            _ => base,
        };
        if last >= target {
            return Ok(Some(at));
        }
        at += 12 + size as u64;
    }
    Ok(None)
}

/// `files` with the remote segments that `__remote_log_metadata` does not list as served left
/// out, when the storage names that topic's partitions ([`TieredSettings`]'s
/// `remote_log_metadata`): there its segment states are the authoritative list, as a broker's
/// `RemoteLogMetadataCache` is. For each topic-partition the metadata covers, a remote segment
/// is read only in state COPY_SEGMENT_FINISHED; one copying, being deleted or deleted, one the
/// metadata does not know (an upload that failed before its metadata was written), and every
/// segment of a partition whose remote data is being deleted, are left out, noted in
/// `skipped`, as is a finished segment missing from the bucket. Partitions the metadata does
/// not cover, and local segments, are kept as they are (the listing's heuristic applies).
///
/// [`TieredSettings`]: crate::storage::tiered::TieredSettings
pub fn apply_remote_log_metadata(
    storage: &Arc<dyn Storage>,
    files: Vec<SegmentFile>,
    skipped: &mut Vec<String>,
) -> Result<Vec<SegmentFile>> {
    let paths = match storage.tiered_settings() {
        Some(s) if !s.remote_log_metadata.is_empty() => s.remote_log_metadata.clone(),
        _ => return Ok(files),
    };
    let mut fold = Fold::new(Kind::RemoteLogMetadata, FoldOptions::default());
    for path in &paths {
        let metadata = discover(storage.as_ref(), path)?;
        if metadata.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{METADATA_OPTION}: no segment of __remote_log_metadata under {}",
                path.display()
            )));
        }
        for partition in by_partition(metadata) {
            let reader = ReaderBuilder::new()
                .with_storage(storage.clone())
                .build_files(partition)?;
            for batch in reader {
                let batch = batch.map_err(|e| Error::corrupt(e.to_string()))?;
                fold.feed(&batch, None)?;
            }
        }
    }
    let states = fold.remote_segment_states();
    // Kafka keeps a remote log per topic id and partition: a topic deleted and created again
    // under its name has a new id, so a delete marker of the old one says nothing of the new.
    let deletes = fold.deleted_partitions();
    let deleted: HashSet<(&str, i32)> =
        deletes.iter().map(|(_, id, p)| (id.as_str(), *p)).collect();
    let covered: HashSet<(&str, i32)> = states
        .iter()
        .map(|s| (s.topic_id.as_str(), s.partition))
        .chain(deleted.iter().copied())
        .collect();
    // A name-keyed view, for a segment whose path does not say its topic id.
    let covered_names: HashSet<(&str, i32)> = states
        .iter()
        .map(|s| (s.topic.as_str(), s.partition))
        .chain(deletes.iter().map(|(t, _, p)| (t.as_str(), *p)))
        .collect();
    let by_id: HashMap<&str, &RemoteSegmentState> =
        states.iter().map(|s| (s.segment_id.as_str(), s)).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut listed: HashSet<(String, i32)> = HashSet::new();
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let (topic, partition) = match (&f.origin.topic, f.origin.partition) {
            (Some(t), Some(p)) => (t.clone(), p),
            _ => {
                out.push(f);
                continue;
            }
        };
        let name = f.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(id) = SegmentName::parse(name).map(|n| n.segment_id.to_string()) else {
            out.push(f); // a broker's own segment
            continue;
        };
        let state = by_id.get(id.as_str()).copied();
        // The segment's topic id: the metadata's, else its directories'.
        let topic_id = state
            .map(|s| s.topic_id.clone())
            .or_else(|| path_topic_id(&f.path));
        let is_covered = match &topic_id {
            Some(t) => covered.contains(&(t.as_str(), partition)),
            None => covered_names.contains(&(topic.as_str(), partition)),
        };
        if !is_covered {
            out.push(f);
            continue;
        }
        let shown = f.path.display();
        let is_deleted = match &topic_id {
            Some(t) => deleted.contains(&(t.as_str(), partition)),
            None => deletes
                .iter()
                .any(|(n, _, p)| *n == topic && *p == partition),
        };
        if is_deleted {
            skipped.push(format!(
                "{shown}: __remote_log_metadata marks {topic}-{partition}'s remote data \
                 deleted; skipped"
            ));
            continue;
        }
        match state {
            Some(s) if s.state == COPY_SEGMENT_FINISHED => {
                seen.insert(id);
                listed.insert((s.topic_id.clone(), partition));
                out.push(f);
            }
            Some(s) => skipped.push(format!(
                "{shown}: __remote_log_metadata has it in state {} ({}), not \
                 COPY_SEGMENT_FINISHED; skipped",
                s.state,
                state_name(s.state)
            )),
            None => skipped.push(format!(
                "{shown}: not in __remote_log_metadata (an upload whose metadata was never \
                 written); skipped"
            )),
        }
    }
    for s in &states {
        let key = (s.topic_id.as_str(), s.partition);
        if s.state == COPY_SEGMENT_FINISHED
            && !seen.contains(&s.segment_id)
            && !deleted.contains(&key)
            && listed.contains(&(s.topic_id.clone(), s.partition))
        {
            skipped.push(format!(
                "{}-{}: __remote_log_metadata lists segment {} (offsets {}..={}) as copied, \
                 but it is not among the paths read",
                s.topic, s.partition, s.segment_id, s.start_offset, s.end_offset
            ));
        }
    }
    Ok(out)
}

/// The topic id in the directories above a remote segment: LocalTieredStorage's
/// `<topic>-<partition>-<topicId>` holding it, or Aiven's `<topic>-<topicId>/<partition>/`.
fn path_topic_id(path: &std::path::Path) -> Option<String> {
    fn dir(p: Option<&std::path::Path>) -> Option<&str> {
        p?.file_name()?.to_str()
    }
    let parent = path.parent();
    if let Some(TieredDir::LocalPartition { topic_id, .. }) =
        dir(parent).and_then(TieredDir::local_partition)
    {
        return Some(topic_id);
    }
    match dir(parent.and_then(|p| p.parent())).and_then(TieredDir::aiven_topic) {
        Some(TieredDir::AivenTopic { topic_id, .. }) => Some(topic_id),
        _ => None,
    }
}

fn state_name(state: i64) -> &'static str {
    match state {
        0 => "COPY_SEGMENT_STARTED",
        1 => "COPY_SEGMENT_FINISHED",
        2 => "DELETE_SEGMENT_STARTED",
        3 => "DELETE_SEGMENT_FINISHED",
        _ => "unknown",
    }
}
