//! The stopped broker's log directory a restore writes into.
//!
//! - **Refused** unless it is a broker's (`meta.properties`, written when `kafka-storage.sh
//!   format` prepared it) and the broker is stopped: a running broker holds a lock on
//!   `<dir>/.lock` (Java's `FileChannel.tryLock`, a POSIX record lock on Linux). The restore
//!   takes that same lock for as long as it writes, so a broker started meanwhile refuses the
//!   directory instead of loading half a restore.
//! - **What the target keeps**: its `meta.properties`, each partition's `partition.metadata`
//!   (the topic id the cluster's metadata knows it by), the partitions not restored.
//! - **Leader epochs**: the epoch each partition's leader had when the target stopped, from the
//!   KRaft metadata in the directory (`__cluster_metadata-0`, as the controller replays it)
//!   and from the partition's `leader-epoch-checkpoint`, whichever is higher. A restored
//!   batch may not carry a higher epoch than the leader that will serve it (see
//!   `partition.rs`).
//! - **Checkpoints** (`recovery-point-offset-checkpoint`, `replication-offset-checkpoint`,
//!   `log-start-offset-checkpoint`; `cleaner-offset-checkpoint` loses the partition's entry)
//!   are rewritten as Kafka writes them: a temporary file, fsynced, renamed over the old one.
//! - **An interrupted restore is visible**: while it runs the broker's clean-shutdown marker
//!   (`.kafka_cleanshutdown`) is set aside (its bytes kept in `.kafkalog-restore.cleanshutdown`
//!   beside `.kafkalog-restore`), so a broker started on a half-restored directory recovers
//!   its logs from their recovery points instead of trusting them; leftover staging
//!   directories (which Kafka refuses to load) make it stop with an error instead. Running the
//!   restore again finishes it: the marker comes back only when every partition is in place.

use crate::error::{Error, ErrorKind, Result};
use crate::format::checkpoint::{
    parse_leader_epoch_checkpoint, parse_offset_checkpoint, write_offset_checkpoint, OffsetEntry,
    CLEANER_OFFSET_CHECKPOINT, LEADER_EPOCH_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
};
use crate::format::segment::partition_dir_name;
use crate::storage::Storage;
use crate::write::placement::{clean_stale, sync_dir};
use arrow_array::{Array, Int32Array, StringArray};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file `kafka-storage.sh format` writes: what makes a directory a broker's.
pub const META_PROPERTIES: &str = "meta.properties";
/// The broker's lock file in each log directory.
pub const BROKER_LOCK: &str = ".lock";
/// Kafka's clean-shutdown marker in a log directory.
pub const CLEAN_SHUTDOWN: &str = ".kafka_cleanshutdown";
/// The topic id file of a partition directory.
pub const PARTITION_METADATA: &str = "partition.metadata";
/// Present while a restore is under way (a killed one leaves it).
pub const RESTORE_MARKER: &str = ".kafkalog-restore";
/// The clean-shutdown marker's bytes, kept while a restore is under way.
pub const SAVED_CLEAN_SHUTDOWN: &str = ".kafkalog-restore.cleanshutdown";

/// What the target knows of one of its partitions.
#[derive(Clone, Debug)]
pub struct TargetPartition {
    /// Its directory.
    pub dir: PathBuf,
    /// Its `partition.metadata` (the topic id), kept as it is.
    pub partition_metadata: Option<Vec<u8>>,
    /// The highest leader epoch the target knew for it.
    pub leader_epoch: i32,
}

/// A broker's log directory, checked and (unless only planning) locked.
#[derive(Debug)]
pub struct Target {
    /// The directory, resolved.
    pub dir: PathBuf,
    lock: Option<File>,
    /// Leader epochs and partition counts from the directory's KRaft metadata, when readable.
    metadata_epochs: HashMap<(String, i32), i32>,
    partition_counts: HashMap<String, i32>,
    /// Why the KRaft metadata could not be read, when it could not.
    pub metadata_note: Option<String>,
}

fn broker_lock_held(path: &Path, file: &File, set: bool) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    let _ = path;
    // SAFETY: a zeroed flock is a valid value; the fields that matter are set below.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 0; // the whole file, as Java's tryLock() takes it
    let cmd = if set { libc::F_SETLK } else { libc::F_GETLK };
    // SAFETY: fcntl on a descriptor this `File` owns, with a valid flock.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut lock) };
    if rc == -1 {
        let err = std::io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::EACCES | libc::EAGAIN) => Ok(true),
            _ => Err(err),
        };
    }
    Ok(!set && lock.l_type != libc::F_UNLCK as libc::c_short)
}

fn lock_refused(dir: &Path) -> Error {
    Error::new(
        ErrorKind::Conflict,
        format!(
            "{} is locked by a running broker ({} is held): stop the broker before restoring \
             into its log directory",
            dir.display(),
            dir.join(BROKER_LOCK).display()
        ),
    )
}

impl Target {
    /// Opens the log directory `dir`: refused without `meta.properties` or while a broker
    /// holds its lock. Unless `plan_only`, takes the broker's lock until [`Target::finish`].
    pub fn open(storage: &Arc<dyn Storage>, dir: &Path, plan_only: bool) -> Result<Target> {
        let dir = std::fs::canonicalize(dir).map_err(|e| Error::io(e, dir))?;
        if !dir.is_dir() {
            return Err(Error::invalid_argument(format!(
                "{} is not a directory: name a stopped broker's log directory",
                dir.display()
            )));
        }
        if !dir.join(META_PROPERTIES).is_file() {
            return Err(Error::invalid_argument(format!(
                "{} has no {META_PROPERTIES}: it is not a Kafka broker's log directory (a \
                 broker writes it when kafka-storage.sh formats the directory; create the \
                 cluster and its topics first, stop the broker, then restore into its log \
                 directory)",
                dir.display()
            )));
        }
        let lock_path = dir.join(BROKER_LOCK);
        let lock = if plan_only {
            // Only a look: nothing is created.
            if let Ok(file) = File::open(&lock_path) {
                if broker_lock_held(&lock_path, &file, false)
                    .map_err(|e| Error::io(e, &lock_path))?
                {
                    return Err(lock_refused(&dir));
                }
            }
            None
        } else {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock_path)
                .map_err(|e| Error::io(e, &lock_path))?;
            if broker_lock_held(&lock_path, &file, true).map_err(|e| Error::io(e, &lock_path))? {
                return Err(lock_refused(&dir));
            }
            Some(file)
        };
        let mut target = Target {
            dir,
            lock,
            metadata_epochs: HashMap::new(),
            partition_counts: HashMap::new(),
            metadata_note: None,
        };
        target.read_metadata(storage);
        Ok(target)
    }

    /// Leader epochs and partition counts from the KRaft metadata in the directory.
    fn read_metadata(&mut self, storage: &Arc<dyn Storage>) {
        if !self.dir.join("__cluster_metadata-0").is_dir() {
            self.metadata_note = Some(format!(
                "{} holds no __cluster_metadata-0 (metadata.log.dir elsewhere?): leader epochs \
                 taken from each partition's leader-epoch-checkpoint",
                self.dir.display()
            ));
            return;
        }
        let state = match crate::read::internal_topics::cluster_state(storage, &self.dir) {
            Ok((tables, _)) => tables,
            Err(e) => {
                self.metadata_note = Some(format!("the KRaft metadata could not be read: {e}"));
                return;
            }
        };
        let Some((_, table)) = state.iter().find(|(name, _)| *name == "partitions") else {
            return;
        };
        let column = |name: &str| table.column_by_name(name).cloned();
        let (Some(topic), Some(partition), Some(epoch)) =
            (column("topic"), column("partition"), column("leaderEpoch"))
        else {
            return;
        };
        let (Some(topic), Some(partition), Some(epoch)) = (
            topic.as_any().downcast_ref::<StringArray>(),
            partition.as_any().downcast_ref::<Int32Array>(),
            epoch.as_any().downcast_ref::<Int32Array>(),
        ) else {
            return;
        };
        for i in 0..table.num_rows() {
            if topic.is_null(i) {
                continue;
            }
            let name = topic.value(i).to_string();
            let count = self.partition_counts.entry(name.clone()).or_insert(0);
            *count = (*count).max(partition.value(i) + 1);
            self.metadata_epochs
                .insert((name, partition.value(i)), epoch.value(i));
        }
    }

    /// How many partitions the cluster's metadata gives `topic`, when known.
    pub fn partition_count(&self, topic: &str) -> Option<i32> {
        self.partition_counts.get(topic).copied().or_else(|| {
            // Without metadata: the partition directories of the topic in this directory.
            let mut max = None;
            for entry in std::fs::read_dir(&self.dir).ok()?.flatten() {
                let name = entry.file_name();
                let Some((t, p)) = name.to_str().and_then(|n| n.rsplit_once('-')) else {
                    continue;
                };
                if t == topic {
                    if let Ok(p) = p.parse::<i32>() {
                        max = Some(max.unwrap_or(0).max(p + 1));
                    }
                }
            }
            max
        })
    }

    /// The partition `topic`-`partition` of the target; `None` when this directory does not
    /// hold it.
    pub fn partition(&self, topic: &str, partition: i32) -> Result<Option<TargetPartition>> {
        let dir = self.dir.join(partition_dir_name(topic, partition as i64)?);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::invalid_argument(format!(
                    "{} is not a directory",
                    dir.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(e, &dir)),
        }
        let partition_metadata = read_optional(&dir.join(PARTITION_METADATA))?;
        let mut leader_epoch = self
            .metadata_epochs
            .get(&(topic.to_string(), partition))
            .copied()
            .unwrap_or(0);
        let checkpoint = dir.join(LEADER_EPOCH_CHECKPOINT);
        if let Some(bytes) = read_optional(&checkpoint)? {
            let text = String::from_utf8_lossy(&bytes);
            let entries =
                parse_leader_epoch_checkpoint(&text).map_err(|e| e.with_path(&checkpoint))?;
            if let Some(last) = entries.last() {
                leader_epoch = leader_epoch.max(last.epoch);
            }
        }
        Ok(Some(TargetPartition {
            dir,
            partition_metadata,
            leader_epoch: leader_epoch.max(0),
        }))
    }

    /// Marks the restore as under way: the clean-shutdown marker set aside (its bytes kept),
    /// unless a killed restore already did.
    pub fn begin(&self) -> Result<()> {
        let marker = self.dir.join(RESTORE_MARKER);
        if marker.exists() {
            return Ok(()); // a restore that did not finish: its saved marker stands
        }
        let clean = self.dir.join(CLEAN_SHUTDOWN);
        if let Some(bytes) = read_optional(&clean)? {
            write_atomically(&self.dir.join(SAVED_CLEAN_SHUTDOWN), &bytes)?;
        }
        write_atomically(
            &marker,
            b"a kafkalog restore is under way; run it again to finish\n",
        )?;
        match std::fs::remove_file(&clean) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(e, &clean)),
        }
        sync_dir(&self.dir)
    }

    /// Sets the partition's entries in the log directory's checkpoints: its recovery point and
    /// high watermark, its log start offset (`None` removes the entry: the first segment's
    /// base), and removes its cleaner checkpoint (the cleaner starts again from the log start).
    pub fn set_checkpoints(
        &self,
        topic: &str,
        partition: i32,
        log_end: i64,
        log_start: Option<i64>,
    ) -> Result<()> {
        for (name, value) in [
            (RECOVERY_POINT_OFFSET_CHECKPOINT, Some(log_end)),
            (REPLICATION_OFFSET_CHECKPOINT, Some(log_end)),
            (LOG_START_OFFSET_CHECKPOINT, log_start),
            (CLEANER_OFFSET_CHECKPOINT, None),
        ] {
            self.set_entry(name, topic, partition, value)?;
        }
        Ok(())
    }

    fn set_entry(&self, name: &str, topic: &str, partition: i32, value: Option<i64>) -> Result<()> {
        let path = self.dir.join(name);
        let existing = read_optional(&path)?;
        if existing.is_none() && value.is_none() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(existing.as_deref().unwrap_or_default()).into_owned();
        let mut entries = parse_offset_checkpoint(&text).map_err(|e| e.with_path(&path))?;
        // In place when the partition has an entry (the file's order kept, so that running
        // the restore again writes the same bytes), else at the end.
        match (
            entries
                .iter()
                .position(|e| e.topic == topic && e.partition == partition),
            value,
        ) {
            (Some(i), Some(offset)) => entries[i].offset = offset,
            (Some(i), None) => {
                entries.remove(i);
            }
            (None, Some(offset)) => entries.push(OffsetEntry {
                topic: topic.to_string(),
                partition,
                offset,
            }),
            (None, None) => {}
        }
        write_atomically(&path, write_offset_checkpoint(&entries).as_bytes())
    }

    /// Ends the restore: staging directories left by killed runs removed (Kafka would refuse
    /// them), the clean-shutdown marker put back, the broker's lock released.
    pub fn finish(mut self) -> Result<()> {
        clean_stale(&self.dir, None);
        let saved = self.dir.join(SAVED_CLEAN_SHUTDOWN);
        if let Some(bytes) = read_optional(&saved)? {
            write_atomically(&self.dir.join(CLEAN_SHUTDOWN), &bytes)?;
            std::fs::remove_file(&saved).map_err(|e| Error::io(e, &saved))?;
        }
        let marker = self.dir.join(RESTORE_MARKER);
        match std::fs::remove_file(&marker) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(e, &marker)),
        }
        sync_dir(&self.dir)?;
        if let Some(file) = self.lock.take() {
            // As a broker at shutdown: the lock file removed while still held, then released.
            let _ = std::fs::remove_file(self.dir.join(BROKER_LOCK));
            drop(file);
        }
        Ok(())
    }
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(e, path)),
    }
}

/// Writes `path` as Kafka writes its checkpoints: `<path>.tmp`, fsynced, renamed over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let mut file = File::create(&tmp).map_err(|e| Error::io(e, &tmp))?;
    file.write_all(bytes).map_err(|e| Error::io(e, &tmp))?;
    file.sync_all().map_err(|e| Error::io(e, &tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(e, path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::default_storage;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("kafkalog-target-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn refuses_a_directory_without_meta_properties() {
        let d = dir("nometa");
        let err = Target::open(&default_storage(), &d, false).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArgument);
        assert!(err.message.contains("meta.properties"), "{}", err.message);
        assert!(!d.join(BROKER_LOCK).exists(), "nothing is written into it");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn checkpoints_keep_other_partitions_and_replace_this_ones() {
        let d = dir("checkpoints");
        std::fs::write(d.join(META_PROPERTIES), "node.id=1\n").unwrap();
        std::fs::write(
            d.join(REPLICATION_OFFSET_CHECKPOINT),
            "0\n2\nother 0 7\norders 1 3\n",
        )
        .unwrap();
        std::fs::write(d.join(CLEANER_OFFSET_CHECKPOINT), "0\n1\norders 1 2\n").unwrap();
        std::fs::write(d.join(CLEAN_SHUTDOWN), "{\"brokerEpoch\":5}").unwrap();
        let target = Target::open(&default_storage(), &d, false).unwrap();
        target.begin().unwrap();
        assert!(!d.join(CLEAN_SHUTDOWN).exists());
        target.set_checkpoints("orders", 1, 120, Some(10)).unwrap();
        let hw = std::fs::read_to_string(d.join(REPLICATION_OFFSET_CHECKPOINT)).unwrap();
        assert_eq!(hw, "0\n2\nother 0 7\norders 1 120\n");
        let start = std::fs::read_to_string(d.join(LOG_START_OFFSET_CHECKPOINT)).unwrap();
        assert_eq!(start, "0\n1\norders 1 10\n");
        let cleaner = std::fs::read_to_string(d.join(CLEANER_OFFSET_CHECKPOINT)).unwrap();
        assert_eq!(cleaner, "0\n0\n");
        target.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join(CLEAN_SHUTDOWN)).unwrap(),
            "{\"brokerEpoch\":5}"
        );
        assert!(!d.join(RESTORE_MARKER).exists() && !d.join(SAVED_CLEAN_SHUTDOWN).exists());
        std::fs::remove_dir_all(&d).ok();
    }
}
