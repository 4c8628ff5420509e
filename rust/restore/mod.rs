//! Restoring a backup into a stopped broker's log directory with every offset, timestamp,
//! header, transaction and committed group offset as it was (docs/restore.md).
//!
//! | file | what |
//! |---|---|
//! | `target.rs` | the broker's log directory: refused while locked or without `meta.properties`; its topic ids and leader epochs; checkpoints and the clean-shutdown marker |
//! | `partition.rs` | one partition laid in: the backup's batches copied, leader epochs capped, the log cut, open transactions aborted, an empty producer snapshot; swapped in atomically |
//! | `groups.rs` | the backup's committed offsets written into the target's `__consumer_offsets` |
//!
//! The order of a restore: every partition of the backup is matched with the target's before
//! anything is written (a partition the target lacks is an error naming it); the target's
//! clean-shutdown marker is set aside; each partition is swapped in and its checkpoint entries
//! written; the groups' commits are appended; the marker comes back. Each step is atomic and
//! the output a function of the backup and the target alone, so a restore killed anywhere and
//! run again ends as one that ran through.

pub mod groups;
pub mod partition;
pub mod target;

use crate::error::{Error, Result};
use crate::format::topic::is_internal;
use crate::log::visibility::Checkpoints;
use crate::read::files::{resolve_topics, TopicFilter};
use crate::storage::Storage;
use groups::GroupReport;
use partition::{restore_partition, PartitionReport, PartitionSource};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use target::Target;

/// What to restore, and how.
#[derive(Clone, Debug, Default)]
pub struct RestoreOptions {
    /// Only topics this regular expression takes (Kafka's consumer's rule, as `read`'s
    /// `topics`); `None`: every topic. Internal topics are restored only where it names them,
    /// `__cluster_metadata` never (the target keeps its own).
    pub topics: Option<String>,
    /// Cut each partition at its last whole batch whose max timestamp is at or before this
    /// (ms since the epoch).
    pub until_ms: Option<i64>,
    /// Write the backup's committed offsets into the target's `__consumer_offsets`.
    pub groups: bool,
    /// Only report what would be written.
    pub plan: bool,
    /// fsync what is written before it counts as done (on by default in the bindings).
    pub fsync: bool,
}

/// What a restore wrote (or would write).
#[derive(Clone, Debug, Default)]
pub struct RestoreReport {
    /// The target log directory.
    pub target: PathBuf,
    /// Each partition restored, in topic and partition order.
    pub partitions: Vec<PartitionReport>,
    /// The backup's partitions the target does not have (planning only; a restore refuses
    /// them), as `(topic, partition)`.
    pub missing: Vec<(String, i32)>,
    /// Each group whose commits were restored.
    pub groups: Vec<GroupReport>,
    /// Commits left out because their group's offsets had expired in the backup.
    pub expired_commits: usize,
    /// What was passed over and why, one line each.
    pub notes: Vec<String>,
    /// Whether this was only a plan.
    pub plan: bool,
}

/// Restores the backup at `sources` (anything `read` accepts) into the stopped broker's log
/// directory `to`.
pub fn restore(
    storage: &Arc<dyn Storage>,
    sources: &[PathBuf],
    to: &Path,
    options: &RestoreOptions,
) -> Result<RestoreReport> {
    if sources.is_empty() {
        return Err(Error::invalid_argument(
            "name at least one backup to restore",
        ));
    }
    let filter = TopicFilter::new(options.topics.as_deref())?.including_internal();
    let target = Target::open(storage, to, options.plan)?;
    let mut report = RestoreReport {
        target: target.dir.clone(),
        plan: options.plan,
        ..RestoreReport::default()
    };
    report.notes.extend(target.metadata_note.clone());
    let (files, notes) = resolve_topics(storage, sources, &filter)?;
    report.notes.extend(notes);
    // The backup's partitions, each with its files in offset order.
    let mut by_partition: BTreeMap<(String, i32), Vec<_>> = BTreeMap::new();
    for file in files {
        let (Some(topic), Some(partition)) = (file.origin.topic.clone(), file.origin.partition)
        else {
            return Err(Error::invalid_argument(format!(
                "{} is not in a partition directory (<topic>-<partition>): a restore needs \
                 to know each segment's topic and partition",
                file.path.display()
            )));
        };
        let names = filter.names(&topic);
        if topic == "__cluster_metadata"
            || (is_internal(&topic) || topic.starts_with("__")) && !names
        {
            let note = format!(
                "{topic}: an internal topic, not restored{}",
                if topic == "__consumer_offsets" {
                    " (--groups restores the committed offsets of the restored topics)"
                } else {
                    ""
                }
            );
            if !report.notes.contains(&note) {
                report.notes.push(note);
            }
            continue;
        }
        by_partition
            .entry((topic, partition))
            .or_default()
            .push(file);
    }
    // Every partition matched with the target's before anything is written.
    let mut matched = Vec::new();
    for ((topic, partition), files) in by_partition {
        match target.partition(&topic, partition)? {
            Some(t) => matched.push((topic, partition, files, t)),
            None => report.missing.push((topic, partition)),
        }
    }
    if !report.missing.is_empty() && !options.plan {
        let mut topics: BTreeMap<&str, (i32, Vec<i32>)> = BTreeMap::new();
        for (topic, partition) in &report.missing {
            let e = topics.entry(topic).or_default();
            e.1.push(*partition);
        }
        let listed: Vec<String> = topics
            .iter()
            .map(|(t, (_, ps))| {
                let ps: Vec<String> = ps.iter().map(|p| format!("{t}-{p}")).collect();
                ps.join(", ")
            })
            .collect();
        return Err(Error::invalid_argument(format!(
            "the target {} has no partition {}: create the topics first with as many \
             partitions as the backup has (and replicas on this broker), stop the broker, then \
             restore",
            target.dir.display(),
            listed.join(", ")
        )));
    }
    let write = !options.plan;
    if write {
        target.begin()?;
    }
    // What a consumer could fetch from each backup partition, from its log directory's
    // checkpoints (read once per directory).
    let mut checkpoints = Checkpoints::new();
    let mut jobs = Vec::new();
    for (topic, partition, files, t) in matched {
        let visible = match files[0].path.parent() {
            Some(dir) => checkpoints.visible(storage.as_ref(), dir)?,
            None => Default::default(),
        };
        let source = PartitionSource {
            topic,
            partition,
            files,
            visible,
        };
        jobs.push((source, t));
    }
    // Partitions are independent: restored on as many threads as there are cores (each
    // swapped in atomically on its own), then their checkpoint entries written in partition
    // order, so that the files are the same whatever the threads' timing.
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(jobs.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<PartitionReport>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((source, t)) = jobs.get(i) else {
                    break;
                };
                let r = crate::error::catch_panic(|| {
                    restore_partition(
                        storage.as_ref(),
                        source,
                        t,
                        options.until_ms,
                        write,
                        options.fsync,
                    )
                });
                let failed = r.is_err();
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                if failed {
                    // The others stop at their next partition.
                    next.store(jobs.len(), std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    for ((source, _), result) in jobs.iter().zip(results) {
        let Some(r) = result.into_inner().unwrap_or_else(|e| e.into_inner()) else {
            continue; // not started: an earlier partition failed, reported below
        };
        let r = r?;
        if write {
            let first_base = source.files[0].base_offset.unwrap_or(0);
            let log_start = (r.log_start_offset > first_base).then_some(r.log_start_offset);
            target.set_checkpoints(&source.topic, source.partition, r.log_end_offset, log_start)?;
        }
        report.partitions.push(r);
    }
    if options.groups {
        let restored: std::collections::HashSet<String> =
            report.partitions.iter().map(|p| p.topic.clone()).collect();
        let keep = |topic: &str| restored.contains(topic);
        let (commits, expired) = groups::backup_commits(storage, sources, &keep)?;
        report.expired_commits = expired;
        report.groups = groups::restore_commits(&commits, &target, write, options.fsync)?;
    }
    if write {
        target.finish()?;
    }
    Ok(report)
}
