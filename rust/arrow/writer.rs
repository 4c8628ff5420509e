//! Writing a partition directory as a broker lays it out: `<20-digit base offset>.log`
//! segments rolled at `segment_bytes`, each with its `.index` and `.timeindex` (entries added
//! as a broker adds them, files trimmed as after a clean shutdown) and a `.txnindex` where a
//! transaction was aborted.
//!
//! The write is atomic: everything goes to a hidden temporary directory beside the target,
//! which is renamed into place only when complete. A failed or interrupted write leaves
//! nothing behind (a crash leaves only the hidden temporary directory), and an existing
//! partition directory is replaced only when `overwrite` is set.

use super::encoder::{EncodeOptions, Encoded, Encoder};
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
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            encode: EncodeOptions::default(),
            segment_bytes: 1 << 30,
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            overwrite: false,
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
    staging: PathBuf,
    options: WriteOptions,
    encoder: Encoder,
    segment: Option<Segment>,
    summary: Summary,
    transactions: TxnTracker,
    /// Files copied in as they are ([`PartitionWriter::copy_in`]).
    copied: usize,
    done: bool,
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
        if target.exists() {
            if !options.overwrite {
                return Err(Error::invalid_argument(format!(
                    "{} exists; pass overwrite=True to replace it",
                    target.display()
                )));
            }
            if !target.is_dir() {
                return Err(Error::invalid_argument(format!(
                    "{} is not a directory",
                    target.display()
                )));
            }
        }
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io(e, parent))?;
        let name = target.file_name().ok_or_else(|| {
            Error::invalid_argument(format!("{} has no directory name", target.display()))
        })?;
        let staging = parent.join(format!(
            ".{}.kafkalog-{}-{}",
            name.to_string_lossy(),
            std::process::id(),
            unique()
        ));
        std::fs::create_dir(&staging).map_err(|e| Error::io(e, &staging))?;
        Ok(PartitionWriter {
            target: target.to_path_buf(),
            staging,
            encoder,
            options,
            segment: None,
            summary: Summary::default(),
            transactions: TxnTracker::default(),
            copied: 0,
            done: false,
        })
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
        let dest = self.staging.join(name);
        std::fs::copy(source, &dest).map_err(|e| Error::io(e, source))?;
        File::open(&dest)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(e, &dest))?;
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
        let path = self.staging.join(segment_file_name(base_offset, "log"));
        let file = File::create(&path).map_err(|e| Error::io(e, &path))?;
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
        let log = self
            .staging
            .join(segment_file_name(seg.summary.base_offset, "log"));
        let file = seg
            .file
            .into_inner()
            .map_err(|e| Error::io(e.into_error(), &log))?;
        file.sync_all().map_err(|e| Error::io(e, &log))?;
        seg.indexer.finish();
        let base = seg.summary.base_offset;
        write_file(
            &self.staging.join(segment_file_name(base, "index")),
            &seg.indexer.offset_index_bytes(),
        )?;
        write_file(
            &self.staging.join(segment_file_name(base, "timeindex")),
            &seg.indexer.time_index_bytes(),
        )?;
        if !seg.aborted.is_empty() {
            let mut bytes = Vec::new();
            for txn in &seg.aborted {
                write_txn_entry(&mut bytes, txn);
            }
            write_file(
                &self.staging.join(segment_file_name(base, "txnindex")),
                &bytes,
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
        sync_dir(&self.staging)?;
        if self.target.exists() {
            // overwrite: swap the old directory out, the new one in, then drop the old.
            let old = self.staging.with_extension("replaced");
            std::fs::rename(&self.target, &old).map_err(|e| Error::io(e, &self.target))?;
            std::fs::rename(&self.staging, &self.target).map_err(|e| Error::io(e, &self.target))?;
            std::fs::remove_dir_all(&old).map_err(|e| Error::io(e, &old))?;
        } else {
            std::fs::rename(&self.staging, &self.target).map_err(|e| Error::io(e, &self.target))?;
        }
        if let Some(parent) = self.target.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        self.done = true;
        Ok(std::mem::take(&mut self.summary))
    }
}

impl Drop for PartitionWriter {
    fn drop(&mut self) {
        if !self.done {
            // An unfinished write leaves nothing behind.
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = File::create(path).map_err(|e| Error::io(e, path))?;
    file.write_all(bytes).map_err(|e| Error::io(e, path))?;
    file.sync_all().map_err(|e| Error::io(e, path))
}

fn sync_dir(dir: &Path) -> Result<()> {
    // Directories can be fsynced on Unix; elsewhere opening one fails, and there is nothing
    // further to do.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}
