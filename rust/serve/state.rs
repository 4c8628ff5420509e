//! Committed offsets: first those the backup's `__consumer_offsets` holds (each group's last
//! commit, as a coordinator loads them, no expiry applied), then what consumers commit to the
//! endpoint, which is kept in the state directory (`--state DIR`) so that it outlives a
//! restart, or in memory without one. The backup itself is never written.
//!
//! The state directory holds `offsets.jsonl`: one JSON object per commit, appended and synced
//! before the commit is answered; on start it is read (the last commit of each partition
//! winning, a torn last line from a crash passed over) and written again compacted, atomically.

use crate::error::{Error, Result};
use crate::internal::fold::Fold;
use crate::internal::input::{FoldOptions, Kind};
use crate::log::issues::OnCorrupt;
use crate::read::internal_topics::internal_table;
use crate::storage::Storage;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::Array;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The file in the state directory.
pub const OFFSETS_FILE: &str = "offsets.jsonl";

/// One committed offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The group.
    pub group: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset committed (the next record the group reads).
    pub offset: i64,
    /// The leader epoch of the record before it, -1 when not known.
    pub leader_epoch: i32,
    /// The consumer's metadata string.
    pub metadata: String,
}

type Key = (String, String, i32);

/// Committed offsets, by group, topic and partition.
pub struct OffsetStore {
    offsets: Mutex<BTreeMap<Key, Commit>>,
    file: Option<(PathBuf, Mutex<std::fs::File>)>,
}

impl OffsetStore {
    /// The offsets `__consumer_offsets` holds under `paths`, then those in `state`'s file.
    pub fn load(
        storage: &Arc<dyn Storage>,
        paths: &[PathBuf],
        state: Option<&Path>,
    ) -> Result<Self> {
        let mut offsets = BTreeMap::new();
        for commit in backup_offsets(storage, paths)? {
            offsets.insert(key(&commit), commit);
        }
        let file = match state {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(e, dir))?;
                let path = dir.join(OFFSETS_FILE);
                if let Ok(text) = std::fs::read_to_string(&path) {
                    for line in text.lines() {
                        if let Some(commit) = parse_line(line) {
                            offsets.insert(key(&commit), commit);
                        }
                    }
                }
                // Compacted, then appended to.
                let seeded: Vec<&Commit> = offsets.values().collect();
                let tmp = dir.join(format!(".{OFFSETS_FILE}.tmp"));
                let mut text = String::new();
                for commit in seeded {
                    text.push_str(&line_of(commit));
                }
                write_synced(&tmp, text.as_bytes())?;
                std::fs::rename(&tmp, &path).map_err(|e| Error::io(e, &path))?;
                let handle = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .map_err(|e| Error::io(e, &path))?;
                Some((path, Mutex::new(handle)))
            }
            None => None,
        };
        Ok(OffsetStore {
            offsets: Mutex::new(offsets),
            file,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Commit>> {
        self.offsets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes commits: in the state file first (synced), then in memory.
    pub fn commit(&self, commits: Vec<Commit>) -> Result<()> {
        if let Some((path, file)) = &self.file {
            let mut text = String::new();
            for commit in &commits {
                text.push_str(&line_of(commit));
            }
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            file.write_all(text.as_bytes())
                .and_then(|_| file.sync_data())
                .map_err(|e| Error::io(e, path))?;
        }
        let mut offsets = self.lock();
        for commit in commits {
            offsets.insert(key(&commit), commit);
        }
        Ok(())
    }

    /// The commit of a group's partition.
    pub fn get(&self, group: &str, topic: &str, partition: i32) -> Option<Commit> {
        self.lock()
            .get(&(group.to_string(), topic.to_string(), partition))
            .cloned()
    }

    /// Every commit of a group.
    pub fn of_group(&self, group: &str) -> Vec<Commit> {
        self.lock()
            .values()
            .filter(|c| c.group == group)
            .cloned()
            .collect()
    }

    /// Whether a group has any commit.
    pub fn has_group(&self, group: &str) -> bool {
        self.lock().values().any(|c| c.group == group)
    }

    /// The groups with commits.
    pub fn groups(&self) -> BTreeSet<String> {
        self.lock().values().map(|c| c.group.clone()).collect()
    }
}

fn key(commit: &Commit) -> Key {
    (commit.group.clone(), commit.topic.clone(), commit.partition)
}

fn line_of(commit: &Commit) -> String {
    let mut line = serde_json::json!({
        "group": commit.group,
        "topic": commit.topic,
        "partition": commit.partition,
        "offset": commit.offset,
        "leader_epoch": commit.leader_epoch,
        "metadata": commit.metadata,
    })
    .to_string();
    line.push('\n');
    line
}

fn parse_line(line: &str) -> Option<Commit> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    Some(Commit {
        group: v.get("group")?.as_str()?.to_string(),
        topic: v.get("topic")?.as_str()?.to_string(),
        partition: i32::try_from(v.get("partition")?.as_i64()?).ok()?,
        offset: v.get("offset")?.as_i64()?,
        leader_epoch: i32::try_from(v.get("leader_epoch")?.as_i64()?).ok()?,
        metadata: v.get("metadata")?.as_str()?.to_string(),
    })
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = std::fs::File::create(path).map_err(|e| Error::io(e, path))?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(e, path))
}

/// Each group's last committed offsets in the backup's `__consumer_offsets` under `paths`.
fn backup_offsets(storage: &Arc<dyn Storage>, paths: &[PathBuf]) -> Result<Vec<Commit>> {
    let mut out = Vec::new();
    for path in paths {
        let mut fold = Fold::new(
            Kind::ConsumerOffsets,
            FoldOptions {
                skip_corrupt: true,
                ..FoldOptions::default()
            },
        );
        let (table, _) = internal_table(
            storage,
            &mut fold,
            "__consumer_offsets",
            path,
            OnCorrupt::Skip,
            false,
        )?;
        let column = |name: &str| {
            table
                .column_by_name(name)
                .cloned()
                .ok_or_else(|| Error::new(crate::error::ErrorKind::Internal, name.to_string()))
        };
        let (groups, topics, partitions, offsets, epochs, metadata) = (
            column("group")?,
            column("topic")?,
            column("partition")?,
            column("offset")?,
            column("leaderEpoch")?,
            column("metadata")?,
        );
        let (groups, topics, metadata) = (
            groups.as_string::<i32>(),
            topics.as_string::<i32>(),
            metadata.as_string::<i32>(),
        );
        let partitions = partitions.as_primitive::<Int32Type>();
        let (offsets, epochs) = (
            offsets.as_primitive::<Int64Type>(),
            epochs.as_primitive::<Int32Type>(),
        );
        for i in 0..table.num_rows() {
            if offsets.is_null(i) {
                continue;
            }
            out.push(Commit {
                group: groups.value(i).to_string(),
                topic: topics.value(i).to_string(),
                partition: partitions.value(i),
                offset: offsets.value(i),
                leader_epoch: if epochs.is_null(i) {
                    -1
                } else {
                    epochs.value(i)
                },
                metadata: if metadata.is_null(i) {
                    String::new()
                } else {
                    metadata.value(i).to_string()
                },
            });
        }
    }
    Ok(out)
}
