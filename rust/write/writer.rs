//! Writing a partition directory as a broker lays it out: `<20-digit base offset>.log`
//! segments rolled at `segment_bytes`, each with its `.index` and `.timeindex` (entries added
//! as a broker adds them, files trimmed as after a clean shutdown) and a `.txnindex` where a
//! transaction was aborted.
//!
//! The write is atomic: everything goes to a staging directory beside the target, which is
//! renamed into place only when complete (fsynced first, unless `fsync` is off). A failed write
//! leaves nothing behind; a killed one leaves a staging directory that the next write in the
//! same parent removes. An existing partition directory is replaced only when `overwrite` is
//! set, and then in one atomic swap. Only one writer at a time writes a directory. How the
//! directory is named, locked, staged and published is `placement.rs`.

use crate::arrow::encoder::{EncodeOptions, Encoded, Encoder};
use crate::error::{Error, Result};
use crate::format::batch::CrcPolicy;
use crate::format::index::{
    write_txn_entry, AbortedTxn, SegmentIndexer, DEFAULT_INDEX_INTERVAL_BYTES,
};
use crate::format::segment::{segment_file_name, MIN_ENTRY_SIZE};
use crate::format::snapshot::{write_producer_snapshot, ProducerEntry};
use crate::format::txn_tracker::TxnTracker;
use crate::write::placement::{create_new_file, resolve_target, Staging};
use arrow_array::RecordBatch;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// How a partition directory is written: batch encoding, segment rolling, index spacing.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// How rows become Kafka batches.
    pub encode: EncodeOptions,
    /// Roll to a new segment before one would pass this size (`log.segment.bytes`).
    pub segment_bytes: u64,
    /// `index.interval.bytes`.
    pub index_interval_bytes: u64,
    /// Replace an existing partition directory.
    pub overwrite: bool,
    /// fsync every file and the directories before and after publishing, so that a power cut
    /// after a successful write does not leave empty files. Off: faster, and safe against a
    /// crash of the process (not of the machine).
    pub fsync: bool,
    /// Write producer snapshots as a broker takes them: `<offset>.snapshot` at each segment
    /// roll (the producers' state before the new segment) and at the end (as at a clean
    /// shutdown), so that readers find open transactions without scanning the log.
    pub producer_snapshots: bool,
}

/// Kafka's default `log.segment.bytes` (1 GiB): a segment is rolled before it.
pub const DEFAULT_SEGMENT_BYTES: u64 = 1 << 30;

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            encode: EncodeOptions::default(),
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            overwrite: false,
            fsync: true,
            producer_snapshots: true,
        }
    }
}

/// What a write produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// One summary per segment written, in offset order.
    pub segments: Vec<SegmentSummary>,
}

/// One segment a write produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentSummary {
    /// The segment's `.log` file (its final path).
    pub path: PathBuf,
    /// Its base offset (the first offset in it, as its name says).
    pub base_offset: i64,
    /// The last offset written to it; `None` when it is empty.
    pub last_offset: Option<i64>,
    /// Batches written to it.
    pub batches: u64,
    /// Records written to it.
    pub records: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

struct Segment {
    summary: SegmentSummary,
    file: BufWriter<File>,
    indexer: SegmentIndexer,
    aborted: Vec<AbortedTxn>,
}

/// Writes Arrow rows into a partition directory as Kafka segments with their offset, time
/// and transaction indexes and producer snapshot, rolling segments as a broker does;
/// nothing appears at the target until it is finished (atomic).
///
/// Copying a partition: its records read and written again, batches kept as they were:
///
/// ```
/// use kafkalog::read::reader::ReaderBuilder;
/// use kafkalog::write::writer::{PartitionWriter, WriteOptions};
///
/// let dir = std::env::temp_dir().join(format!("kafkalog-doctest-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let target = dir.join("orders-0");
/// let mut writer = PartitionWriter::create(&target, WriteOptions::default())?;
/// for batch in ReaderBuilder::new().build("examples/logs/orders-0")? {
///     writer.write(&batch?)?;
/// }
/// let summary = writer.finish()?;
/// assert!(summary.segments.iter().map(|s| s.records).sum::<u64>() > 0);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PartitionWriter {
    target: PathBuf,
    staging: Staging,
    options: WriteOptions,
    encoder: Encoder,
    segment: Option<Segment>,
    summary: Summary,
    transactions: TxnTracker,
    /// Files copied in as they are ([`PartitionWriter::copy_in`]).
    copied: usize,
    /// Each producer's state, as a broker keeps it for its snapshots.
    producers: std::collections::BTreeMap<i64, ProducerEntry>,
    /// The offset after the last batch appended.
    next_offset: Option<i64>,
}

impl PartitionWriter {
    /// Starts writing the partition directory `target`.
    pub fn create(target: &Path, options: WriteOptions) -> Result<Self> {
        // Everything that can be refused is refused before a directory is made.
        let encoder = Encoder::new(options.encode)?;
        // Kafka's `segment.bytes` has the same floor: the smallest entry of any magic.
        if options.segment_bytes < MIN_ENTRY_SIZE as u64 {
            return Err(Error::invalid_argument(
                "segment_bytes is too small to hold a batch",
            ));
        }
        // The target's parent resolved, no link at the target; then locked, checked, staged.
        let resolved = resolve_target(target)?;
        let staging = Staging::create(&resolved, options.overwrite)?;
        Ok(PartitionWriter {
            target: target.to_path_buf(),
            staging,
            encoder,
            options,
            segment: None,
            summary: Summary::default(),
            transactions: TxnTracker::default(),
            copied: 0,
            producers: std::collections::BTreeMap::new(),
            next_offset: None,
        })
    }

    /// The directory files are written to until [`Self::finish`] publishes it.
    pub fn staging_dir(&self) -> &Path {
        &self.staging.dir
    }

    /// The segments completed so far (their files are in [`Self::staging_dir`]).
    pub fn closed_segments(&self) -> &[SegmentSummary] {
        &self.summary.segments
    }

    /// Encodes and appends the rows of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.encoder.write(batch)?;
        self.drain()
    }

    /// For passes that produce Kafka batches themselves (compaction): segments start where
    /// [`Self::start_segment`] says, never by size.
    pub fn manual_layout(mut self) -> Self {
        self.options.segment_bytes = u64::MAX;
        self
    }

    /// Closes the current segment and starts one at `base_offset`.
    pub fn start_segment(&mut self, base_offset: i64) -> Result<()> {
        self.close_segment()?;
        self.open_segment(base_offset)
    }

    /// Appends one complete, already encoded batch (log entry) to the current segment.
    pub fn append_encoded(&mut self, bytes: &[u8], info: &Encoded) -> Result<()> {
        self.append(bytes, info)
    }

    /// Copies the file `source` unchanged into the partition directory, under its own name.
    pub fn copy_in(&mut self, source: &Path) -> Result<()> {
        let name = source.file_name().ok_or_else(|| {
            Error::invalid_argument(format!("{} has no file name", source.display()))
        })?;
        let dest = self.staging.dir.join(name);
        // Created exclusively, never through a link planted in the staging directory.
        let mut out = create_new_file(&dest)?;
        let mut input = File::open(source).map_err(|e| Error::io(e, source))?;
        std::io::copy(&mut input, &mut out).map_err(|e| Error::io(e, &dest))?;
        if self.options.fsync {
            out.sync_all().map_err(|e| Error::io(e, &dest))?;
        }
        self.copied += 1;
        Ok(())
    }

    /// Links the file `source` (a closed segment's file, which never changes again) into the
    /// partition directory under its own name; copies it where links are not possible.
    pub fn link_in(&mut self, source: &Path) -> Result<()> {
        let name = source.file_name().ok_or_else(|| {
            Error::invalid_argument(format!("{} has no file name", source.display()))
        })?;
        let dest = self.staging.dir.join(name);
        if std::fs::hard_link(source, &dest).is_ok() {
            self.copied += 1;
            return Ok(());
        }
        self.copy_in(source)
    }

    /// Writes a small file of the writer's own into the partition directory (published with
    /// the segments, in the same atomic step).
    pub fn put_file(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        if name.contains(['/', '\\']) || name.is_empty() || name == "." || name == ".." {
            return Err(Error::invalid_argument(format!(
                "not a file name: {name:?}"
            )));
        }
        write_file(&self.staging.dir.join(name), bytes, self.options.fsync)?;
        self.copied += 1;
        Ok(())
    }

    fn drain(&mut self) -> Result<()> {
        let (bytes, batches) = self.encoder.take();
        for (range, info) in batches {
            self.append(&bytes[range], &info)?;
        }
        Ok(())
    }

    fn append(&mut self, bytes: &[u8], info: &Encoded) -> Result<()> {
        let roll = match &self.segment {
            None => true,
            Some(s) => {
                s.summary.bytes + bytes.len() as u64 > self.options.segment_bytes
                    || info.last_offset.saturating_sub(s.summary.base_offset) > i32::MAX as i64
            }
        };
        if roll {
            let rolled = self.segment.is_some();
            self.close_segment()?;
            if rolled {
                // A broker snapshots its producers when it rolls, named by the new base.
                self.write_snapshot(info.base_offset)?;
            }
            self.open_segment(info.base_offset)?;
        }
        self.track_transactions(info);
        self.track_producer(bytes, info);
        self.next_offset = Some(info.last_offset.wrapping_add(1));
        let seg = self.segment.as_mut().unwrap();
        let position = u32::try_from(seg.summary.bytes).map_err(|_| {
            Error::invalid_argument("a segment cannot pass 2 GiB; lower segment_bytes")
        })?;
        seg.indexer.append(
            position,
            bytes.len() as u32,
            info.last_offset,
            info.max_timestamp,
        );
        seg.file
            .write_all(bytes)
            .map_err(|e| Error::io(e, &seg.summary.path))?;
        seg.summary.bytes += bytes.len() as u64;
        seg.summary.batches += 1;
        seg.summary.records += info.records as u64;
        seg.summary.last_offset = Some(info.last_offset);
        Ok(())
    }

    /// Follows transactions as a broker does, to fill `.txnindex`.
    fn track_transactions(&mut self, info: &Encoded) {
        let aborted = self.transactions.on_batch(
            info.producer_id,
            info.is_transactional,
            info.control,
            info.base_offset,
            info.last_offset,
        );
        if let (Some(txn), Some(seg)) = (aborted, &mut self.segment) {
            seg.aborted.push(txn);
        }
    }

    /// Follows each producer's state as a broker's producer state manager does (v2 batches
    /// with a producer id): epoch, last sequence and offset, timestamp, open transaction.
    fn track_producer(&mut self, bytes: &[u8], info: &Encoded) {
        if info.magic < 2 || info.producer_id < 0 || !self.options.producer_snapshots {
            return;
        }
        let Ok(header) = crate::format::v2::parse_header(bytes, 0, CrcPolicy::Ignore) else {
            return;
        };
        let entry = self
            .producers
            .entry(info.producer_id)
            .or_insert(ProducerEntry {
                producer_id: info.producer_id,
                producer_epoch: header.producer_epoch,
                last_sequence: -1,
                last_offset: -1,
                offset_delta: 0,
                timestamp: -1,
                coordinator_epoch: -1,
                current_txn_first_offset: -1,
            });
        if entry.producer_epoch != header.producer_epoch {
            entry.producer_epoch = header.producer_epoch;
            entry.last_sequence = -1;
            entry.last_offset = -1;
            entry.offset_delta = 0;
        }
        entry.timestamp = header.max_timestamp;
        if let Some(kind) = info.control {
            if kind.is_transaction_marker() {
                entry.current_txn_first_offset = -1;
            }
            return;
        }
        entry.last_sequence = header.last_sequence();
        entry.last_offset = header.last_offset;
        entry.offset_delta = (header.last_offset - header.base_offset) as i32;
        if header.is_transactional && entry.current_txn_first_offset < 0 {
            entry.current_txn_first_offset = header.base_offset;
        }
    }

    /// Writes `<offset>.snapshot` with the producers' state.
    fn write_snapshot(&mut self, offset: i64) -> Result<()> {
        if !self.options.producer_snapshots {
            return Ok(());
        }
        let entries: Vec<ProducerEntry> = self.producers.values().cloned().collect();
        let path = self.staging.dir.join(segment_file_name(offset, "snapshot"));
        write_file(
            &path,
            &write_producer_snapshot(&entries),
            self.options.fsync,
        )
    }

    fn open_segment(&mut self, base_offset: i64) -> Result<()> {
        let path = self.staging.dir.join(segment_file_name(base_offset, "log"));
        let file = create_new_file(&path)?;
        self.segment = Some(Segment {
            summary: SegmentSummary {
                path: self.target.join(segment_file_name(base_offset, "log")),
                base_offset,
                last_offset: None,
                batches: 0,
                records: 0,
                bytes: 0,
            },
            file: BufWriter::with_capacity(1 << 20, file),
            indexer: SegmentIndexer::new(base_offset, self.options.index_interval_bytes),
            aborted: Vec::new(),
        });
        Ok(())
    }

    fn close_segment(&mut self) -> Result<()> {
        let Some(mut seg) = self.segment.take() else {
            return Ok(());
        };
        let dir = &self.staging.dir;
        let fsync = self.options.fsync;
        let log = dir.join(segment_file_name(seg.summary.base_offset, "log"));
        let file = seg
            .file
            .into_inner()
            .map_err(|e| Error::io(e.into_error(), &log))?;
        if fsync {
            file.sync_all().map_err(|e| Error::io(e, &log))?;
        }
        seg.indexer.finish();
        let base = seg.summary.base_offset;
        write_file(
            &dir.join(segment_file_name(base, "index")),
            &seg.indexer.offset_index_bytes(),
            fsync,
        )?;
        write_file(
            &dir.join(segment_file_name(base, "timeindex")),
            &seg.indexer.time_index_bytes(),
            fsync,
        )?;
        if !seg.aborted.is_empty() {
            let mut bytes = Vec::new();
            for txn in &seg.aborted {
                write_txn_entry(&mut bytes, txn);
            }
            write_file(
                &dir.join(segment_file_name(base, "txnindex")),
                &bytes,
                fsync,
            )?;
        }
        self.summary.segments.push(seg.summary);
        Ok(())
    }

    /// Completes the write and moves the partition directory into place.
    pub fn finish(mut self) -> Result<Summary> {
        self.encoder.finish()?;
        self.drain()?;
        if self.segment.is_none() && self.summary.segments.is_empty() && self.copied == 0 {
            // Nothing to write: an empty partition still has its first (empty) segment.
            self.open_segment(self.options.encode.base_offset)?;
        }
        self.close_segment()?;
        if let Some(end) = self.next_offset {
            // As at a clean shutdown: the producers' state at the log end offset.
            self.write_snapshot(end)?;
        }
        // A failure from here on drops `staging`, which removes the staging directory.
        let summary = std::mem::take(&mut self.summary);
        self.staging.publish(self.options.fsync)?;
        Ok(summary)
    }
}

fn write_file(path: &Path, bytes: &[u8], fsync: bool) -> Result<()> {
    let mut file = create_new_file(path)?;
    file.write_all(bytes).map_err(|e| Error::io(e, path))?;
    if fsync {
        file.sync_all().map_err(|e| Error::io(e, path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn create_with(segment_bytes: u64) -> Result<PartitionWriter> {
        let target = std::env::temp_dir()
            .join(format!(
                "kafkalog-floor-{}-{segment_bytes}",
                std::process::id()
            ))
            .join("topic-0");
        let made = PartitionWriter::create(
            &target,
            WriteOptions {
                segment_bytes,
                ..WriteOptions::default()
            },
        );
        let _ = std::fs::remove_dir_all(target.parent().unwrap());
        made
    }

    #[test]
    fn segment_bytes_floor_is_kafkas_smallest_entry() {
        // Kafka's `segment.bytes` accepts 14 (a v0 message's overhead) and refuses 13.
        let refused = create_with(13).err().expect("13 bytes is refused");
        assert_eq!(refused.kind, ErrorKind::InvalidArgument);
        assert!(create_with(14).is_ok());
    }
}
