//! A backup's committed consumer-group offsets written into the target's `__consumer_offsets`,
//! so that consumers resume where they stood.
//!
//! The backup's `__consumer_offsets` is folded as its group coordinator loads it (the last
//! commit of each group, topic and partition; tombstones delete; expired commits left out,
//! judged at the backup's last commit). Each group's commits for the restored topics go to the
//! partition Kafka's coordinator reads the group from, `abs(hashCode(group)) % partitions`
//! (the target's partition count, from its metadata), appended at that partition's log end as
//! one batch per group: `OffsetCommitKey` v1 / `OffsetCommitValue` v3 records, stamped with
//! the partition leader's epoch. The coordinator replays them when it loads the partition; a
//! group it does not know becomes an empty classic group holding those offsets, as after
//! an admin's offset commit. A partition this log directory does not hold is another broker's:
//! restore into that broker's directory too.
//!
//! The append is atomic (`write/append.rs`) and marked with a hash of what it writes: running
//! the restore again does not append the same commits twice.

use crate::arrow::encoder::Encoded;
use crate::error::{Error, Result};
use crate::format::batch::TimestampType;
use crate::format::compression::Compression;
use crate::format::internal::offset_commits::{
    group_partition, offset_commit_key, offset_commit_value,
};
use crate::format::v2::{self, BatchHeader};
use crate::internal::fold::Fold;
use crate::internal::input::{FoldOptions, Kind};
use crate::log::issues::OnCorrupt;
use crate::read::internal_topics::internal_table;
use crate::restore::target::Target;
use crate::storage::Storage;
use crate::write::append::{append_staged, AppendOptions};
use crate::write::writer::{PartitionWriter, WriteOptions};
use arrow_array::TimestampMicrosecondArray;
use arrow_array::{Array, BooleanArray, Int32Array, Int64Array, StringArray};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One committed offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The group.
    pub group: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset (the next record the group reads).
    pub offset: i64,
    /// The leader epoch the commit carried, -1 for none.
    pub leader_epoch: i32,
    /// The commit's metadata string.
    pub metadata: String,
    /// When it was committed (ms).
    pub commit_timestamp: i64,
}

/// What happened to one group's commits.
#[derive(Clone, Debug)]
pub struct GroupReport {
    /// The group.
    pub group: String,
    /// Its `__consumer_offsets` partition in the target.
    pub offsets_partition: i32,
    /// The commits restored (or, planning, to restore).
    pub commits: Vec<Commit>,
    /// Where they went: the offset of the batch in `__consumer_offsets`; `None` when not
    /// written (planning, written by an earlier run, or a partition this directory does not
    /// hold).
    pub written_at: Option<i64>,
    /// Why they were not written, when they were not.
    pub note: Option<String>,
}

/// The backup's committed offsets for topics `keep` takes, from the `__consumer_offsets` under
/// `sources`. Later sources win over earlier ones for the same group, topic and partition.
pub fn backup_commits(
    storage: &Arc<dyn Storage>,
    sources: &[PathBuf],
    keep: &dyn Fn(&str) -> bool,
) -> Result<(Vec<Commit>, usize)> {
    let mut all: BTreeMap<(String, String, i32), Commit> = BTreeMap::new();
    let mut expired = 0usize;
    for source in sources {
        let mut fold = Fold::new(Kind::ConsumerOffsets, FoldOptions::default());
        let (table, _) = internal_table(
            storage,
            &mut fold,
            "__consumer_offsets",
            source,
            OnCorrupt::Error,
            false,
        )?;
        let col = |name: &str| {
            table.column_by_name(name).cloned().ok_or_else(|| {
                Error::new(
                    crate::error::ErrorKind::Internal,
                    format!("the committed offsets have no {name} column"),
                )
            })
        };
        let (group, topic, partition, offset, epoch, metadata, commit, gone) = (
            col("group")?,
            col("topic")?,
            col("partition")?,
            col("offset")?,
            col("leaderEpoch")?,
            col("metadata")?,
            col("commitTimestamp")?,
            col("expired")?,
        );
        let internal = || Error::new(crate::error::ErrorKind::Internal, "unexpected column type");
        let group = group
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(internal)?;
        let topic = topic
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(internal)?;
        let partition = partition
            .as_any()
            .downcast_ref::<Int32Array>()
            .ok_or_else(internal)?;
        let offset = offset
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(internal)?;
        let epoch = epoch
            .as_any()
            .downcast_ref::<Int32Array>()
            .ok_or_else(internal)?;
        let metadata = metadata
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(internal)?;
        let commit = commit
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .ok_or_else(internal)?;
        let gone = gone
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(internal)?;
        for i in 0..table.num_rows() {
            if offset.is_null(i) || !keep(topic.value(i)) {
                continue;
            }
            if !gone.is_null(i) && gone.value(i) {
                expired += 1;
                continue;
            }
            let c = Commit {
                group: group.value(i).to_string(),
                topic: topic.value(i).to_string(),
                partition: partition.value(i),
                offset: offset.value(i),
                leader_epoch: if epoch.is_null(i) { -1 } else { epoch.value(i) },
                metadata: if metadata.is_null(i) {
                    String::new()
                } else {
                    metadata.value(i).to_string()
                },
                commit_timestamp: if commit.is_null(i) {
                    -1
                } else {
                    commit.value(i) / 1000
                },
            };
            all.insert((c.group.clone(), c.topic.clone(), c.partition), c);
        }
    }
    Ok((all.into_values().collect(), expired))
}

/// One v2 batch (uncompressed, no producer) of a group's commits, at offsets from 0.
fn commit_batch(commits: &[&Commit], leader_epoch: i32) -> Result<(Vec<u8>, Encoded)> {
    let base_ts = commits
        .iter()
        .map(|c| c.commit_timestamp)
        .min()
        .unwrap_or(0);
    let max_ts = commits
        .iter()
        .map(|c| c.commit_timestamp)
        .max()
        .unwrap_or(0);
    let mut records = Vec::new();
    for (i, c) in commits.iter().enumerate() {
        let key = offset_commit_key(&c.group, &c.topic, c.partition)?;
        // The epoch a commit carries is of the data partition's leader; restored partitions'
        // epochs are capped at the target's, so the commit's is left out rather than kept
        // above them.
        let value = offset_commit_value(c.offset, -1, &c.metadata, c.commit_timestamp)?;
        v2::write_record(
            &mut records,
            i as i32,
            c.commit_timestamp - base_ts,
            Some(&key),
            Some(&value),
            std::iter::empty(),
        );
    }
    let n = commits.len() as i32;
    let header = BatchHeader {
        base_offset: 0,
        partition_leader_epoch: leader_epoch,
        compression: Compression::None,
        timestamp_type: TimestampType::CreateTime,
        is_transactional: false,
        is_control: false,
        delete_horizon: false,
        last_offset_delta: n - 1,
        base_timestamp: base_ts,
        max_timestamp: max_ts,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
    };
    let mut out = Vec::new();
    v2::write_batch(&mut out, &header, &records, n, None)?;
    let info = Encoded {
        magic: 2,
        base_offset: 0,
        last_offset: (n - 1) as i64,
        max_timestamp: max_ts,
        records: n as u32,
        producer_id: -1,
        is_transactional: false,
        control: None,
    };
    Ok((out, info))
}

/// Writes `commits` into the target's `__consumer_offsets` (or, when `write` is false, only
/// says where they would go).
pub fn restore_commits(
    commits: &[Commit],
    target: &Target,
    write: bool,
    fsync: bool,
) -> Result<Vec<GroupReport>> {
    let mut by_group: BTreeMap<&str, Vec<&Commit>> = BTreeMap::new();
    for c in commits {
        by_group.entry(&c.group).or_default().push(c);
    }
    if by_group.is_empty() {
        return Ok(Vec::new());
    }
    let partitions = target
        .partition_count("__consumer_offsets")
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{} has no __consumer_offsets: the target cluster has not created its offsets \
             topic yet (it does when a consumer group first commits or looks for its \
             coordinator); start the broker, let a group commit once, stop it, then restore \
             --groups",
                target.dir.display()
            ))
        })?;
    let mut reports = Vec::new();
    for (group, commits) in by_group {
        let p = group_partition(group, partitions)?;
        let mut report = GroupReport {
            group: group.to_string(),
            offsets_partition: p,
            commits: commits.iter().map(|c| (*c).clone()).collect(),
            written_at: None,
            note: None,
        };
        let Some(offsets) = target.partition("__consumer_offsets", p)? else {
            report.note = Some(format!(
                "__consumer_offsets-{p} is not in this log directory: restore --groups into the \
                 log directory of each broker holding a replica of it"
            ));
            reports.push(report);
            continue;
        };
        if write {
            let (batch, info) = commit_batch(&commits, offsets.leader_epoch)?;
            let appended = append_batch(&offsets.dir, &batch, &info, fsync)?;
            match appended {
                Some(at) => {
                    report.written_at = Some(at);
                    let end = at + commits.len() as i64;
                    target.set_checkpoints("__consumer_offsets", p, end, None)?;
                }
                None => {
                    report.note = Some("already written by an earlier restore".to_string());
                }
            }
        }
        reports.push(report);
    }
    Ok(reports)
}

/// Appends one batch to the partition directory `dir` atomically, marked with a hash of the
/// batch; `None` when the same batch was appended before.
fn append_batch(dir: &Path, batch: &[u8], info: &Encoded, fsync: bool) -> Result<Option<i64>> {
    let staged_root = std::env::temp_dir().join(format!(
        "kafkalog-restore-groups-{}",
        crate::write::placement::unique()
    ));
    let staged = staged_root.join("__consumer_offsets-0");
    let result = (|| {
        let mut writer = PartitionWriter::create(
            &staged,
            WriteOptions {
                fsync: false,
                producer_snapshots: false,
                ..WriteOptions::default()
            },
        )?
        .manual_layout();
        writer.start_segment(0)?;
        writer.append_encoded(batch, info)?;
        writer.finish()?;
        let mark = format!("kafkalog-restore-{:08x}", crate::format::crc::crc32c(batch));
        let appended = append_staged(
            dir,
            std::slice::from_ref(&staged),
            Some((&mark, 1)),
            &AppendOptions {
                // `offsets.topic.segment.bytes`' default.
                segment_bytes: 100 * 1024 * 1024,
                index_interval_bytes: crate::format::index::DEFAULT_INDEX_INTERVAL_BYTES,
                fsync,
            },
        )?;
        Ok(if appended.skipped {
            None
        } else {
            Some(appended.start_offset)
        })
    })();
    let _ = std::fs::remove_dir_all(&staged_root);
    result
}
