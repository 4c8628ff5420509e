//! What a consumer could fetch from a partition, as its broker would serve it: offsets from
//! the log start offset up to (not including) the high watermark.
//!
//! A broker keeps both in text checkpoint files in the log directory that holds the partition
//! directories (see [`crate::format::checkpoint`]):
//! - `replication-offset-checkpoint`: the high watermark. Records at or above it were written
//!   to this replica's log but never acknowledged by the in-sync replicas: a consumer cannot
//!   fetch them, and a new leader may truncate them away. The broker writes the file every few
//!   seconds (`replica.high.watermark.checkpoint.interval.ms`) and at a clean shutdown, so
//!   after a crash it may lag the true high watermark by those few seconds.
//! - `log-start-offset-checkpoint`: the log start offset, for partitions where it is above the
//!   first segment's base offset (retention or DeleteRecords moved it, and the segments or
//!   records below it are not yet deleted from disk). A consumer cannot fetch below it.
//!
//! A partition the files do not list is not bounded by them: a broker loading it without an
//! entry starts from the first segment and takes its high watermark from the replicas, so what
//! is on disk is the best answer kafkalog has. With [`Visibility::All`] nothing is bounded.

use crate::error::{Error, Result};
use crate::format::checkpoint::{
    parse_offset_checkpoint, OffsetEntry, LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
};
use crate::format::segment::topic_partition_from_dir;
use crate::storage::Storage;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which records a read returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// What a consumer could fetch: within the log start offset and the high watermark, when
    /// the broker's checkpoint files are there.
    #[default]
    Consumer,
    /// Every record on disk, acknowledged or not, deleted-but-present or not (forensics).
    All,
}

impl Visibility {
    /// The visibility named `consumer` or `all`, as the Python API spells it.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "consumer" => Ok(Visibility::Consumer),
            "all" => Ok(Visibility::All),
            other => Err(Error::invalid_argument(format!(
                "visibility must be 'consumer' or 'all', not {other:?}"
            ))),
        }
    }
}

/// The offsets a consumer could fetch from one partition: `[log_start, high_watermark)`,
/// each `None` when no checkpoint bounds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Visible {
    /// The log start offset from `log-start-offset-checkpoint`: offsets before it are deleted
    /// as far as consumers know.
    pub log_start: Option<i64>,
    /// The high watermark from `replication-offset-checkpoint`: offsets at or after it are not
    /// yet acknowledged by the in-sync replicas.
    pub high_watermark: Option<i64>,
}

impl Visible {
    /// Whether no checkpoint bounds the partition.
    pub fn is_unbounded(&self) -> bool {
        self.log_start.is_none() && self.high_watermark.is_none()
    }
}

/// Why a whole segment is outside what a consumer could fetch, when its offsets say so: its
/// base offset is at or above the high watermark (nothing in it was acknowledged), or the next
/// segment starts at or below the log start offset (retention or DeleteRecords removed all of
/// it; the broker deletes such a segment at its next retention check). `None` when some of
/// it may be fetchable (a segment the bounds cut through is `None` too: the bounds say where).
pub fn segment_hidden(
    base_offset: Option<i64>,
    next_base_offset: Option<i64>,
    visible: &Visible,
) -> Option<&'static str> {
    if let (Some(base), Some(hw)) = (base_offset, visible.high_watermark) {
        if base >= hw {
            return Some("above_high_watermark");
        }
    }
    if let (Some(next), Some(start)) = (next_base_offset, visible.log_start) {
        if next <= start {
            return Some("below_log_start");
        }
    }
    None
}

/// The checkpoint files of the log directories a plan touches, each read once.
#[derive(Debug, Default)]
pub struct Checkpoints {
    /// log directory -> (high watermarks, log start offsets) by (topic, partition).
    dirs: HashMap<PathBuf, Offsets>,
}

type Offsets = (HashMap<(String, i32), i64>, HashMap<(String, i32), i64>);

fn read_offsets(storage: &dyn Storage, path: &Path) -> Result<HashMap<(String, i32), i64>> {
    let Some(bytes) = storage.read(path)? else {
        return Ok(HashMap::new());
    };
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Error::corrupt("checkpoint file is not UTF-8 text").with_path(path))?;
    let entries = parse_offset_checkpoint(text).map_err(|e| {
        let message = format!("{} (a broker would not load this log directory)", e.message);
        Error { message, ..e }.with_path(path)
    })?;
    Ok(entries
        .into_iter()
        .map(
            |OffsetEntry {
                 topic,
                 partition,
                 offset,
             }| ((topic, partition), offset),
        )
        .collect())
}

impl Checkpoints {
    /// None read yet.
    pub fn new() -> Self {
        Checkpoints::default()
    }

    /// What a consumer could fetch from the partition in directory `partition_dir` (a
    /// `<topic>-<partition>` directory; any other path is not bounded).
    pub fn visible(&mut self, storage: &dyn Storage, partition_dir: &Path) -> Result<Visible> {
        let Some(key) = topic_partition_from_dir(partition_dir) else {
            return Ok(Visible::default());
        };
        let Some(log_dir) = partition_dir.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(Visible::default());
        };
        if !self.dirs.contains_key(log_dir) {
            let hw = read_offsets(storage, &log_dir.join(REPLICATION_OFFSET_CHECKPOINT))?;
            let start = read_offsets(storage, &log_dir.join(LOG_START_OFFSET_CHECKPOINT))?;
            self.dirs.insert(log_dir.to_path_buf(), (hw, start));
        }
        let (hw, start) = &self.dirs[log_dir];
        let log_start = start.get(&key).copied();
        // The broker keeps the high watermark at or above the log start offset.
        let high_watermark = hw.get(&key).map(|&h| log_start.map_or(h, |s| h.max(s)));
        Ok(Visible {
            log_start,
            high_watermark,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::default_storage;

    #[test]
    fn finds_a_partitions_offsets_in_its_log_directory() {
        let root = std::env::temp_dir().join(format!("kafkalog-visible-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("orders-0")).unwrap();
        std::fs::write(
            root.join(REPLICATION_OFFSET_CHECKPOINT),
            "0\n2\norders 0 120\norders 1 5\n",
        )
        .unwrap();
        std::fs::write(root.join(LOG_START_OFFSET_CHECKPOINT), "0\n1\norders 1 9\n").unwrap();
        let storage = default_storage();
        let mut cp = Checkpoints::new();
        assert_eq!(
            cp.visible(storage.as_ref(), &root.join("orders-0"))
                .unwrap(),
            Visible {
                log_start: None,
                high_watermark: Some(120)
            }
        );
        // A high watermark below the log start offset is raised to it, as the broker does.
        assert_eq!(
            cp.visible(storage.as_ref(), &root.join("orders-1"))
                .unwrap(),
            Visible {
                log_start: Some(9),
                high_watermark: Some(9)
            }
        );
        assert!(cp
            .visible(storage.as_ref(), &root.join("other-0"))
            .unwrap()
            .is_unbounded());
        assert!(cp.visible(storage.as_ref(), &root).unwrap().is_unbounded());
        std::fs::write(
            root.join(REPLICATION_OFFSET_CHECKPOINT),
            "0\n3\norders 0 1\n",
        )
        .unwrap();
        let err = Checkpoints::new()
            .visible(storage.as_ref(), &root.join("orders-0"))
            .unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::Corrupt);
        assert!(err.to_string().contains("replication-offset-checkpoint"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_segment_is_hidden_only_when_its_offsets_say_so() {
        let v = Visible {
            log_start: Some(100),
            high_watermark: Some(200),
        };
        assert_eq!(
            segment_hidden(Some(0), Some(100), &v),
            Some("below_log_start")
        );
        assert_eq!(segment_hidden(Some(0), Some(101), &v), None); // offset 100 is in it
        assert_eq!(segment_hidden(Some(150), Some(200), &v), None);
        assert_eq!(segment_hidden(Some(199), None, &v), None);
        assert_eq!(
            segment_hidden(Some(200), None, &v),
            Some("above_high_watermark")
        );
        assert_eq!(segment_hidden(None, None, &v), None); // a file without an offset name
        assert_eq!(segment_hidden(Some(500), None, &Visible::default()), None);
    }
}
