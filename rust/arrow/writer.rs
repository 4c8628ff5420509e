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

use super::encoder::{EncodeOptions, Encoded, Encoder};
use super::placement::{create_new_file, resolve_target, Staging};
use super::transactions::TxnTracker;
use crate::error::{Error, Result};
use crate::format::index::{
    write_txn_entry, AbortedTxn, SegmentIndexer, DEFAULT_INDEX_INTERVAL_BYTES,
};
use crate::format::segment::segment_file_name;
use arrow_array::RecordBatch;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct WriteOptions {
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
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            encode: EncodeOptions::default(),
            segment_bytes: 1 << 30,
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            overwrite: false,
            fsync: true,
        }
    }
}

/// What a write produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub segments: Vec<SegmentSummary>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentSummary {
    pub path: PathBuf,
    pub base_offset: i64,
    pub last_offset: Option<i64>,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
}

struct Segment {
    summary: SegmentSummary,
    file: BufWriter<File>,
    indexer: SegmentIndexer,
    aborted: Vec<AbortedTxn>,
}

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
}

impl PartitionWriter {
    /// Starts writing the partition directory `target`.
    pub fn create(target: &Path, options: WriteOptions) -> Result<Self> {
        // Everything that can be refused is refused before a directory is made.
        let encoder = Encoder::new(options.encode)?;
        if options.segment_bytes < 14 {
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
            self.close_segment()?;
            self.open_segment(info.base_offset)?;
        }
        self.track_transactions(info);
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
