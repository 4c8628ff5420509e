//! Regenerating a partition's `.index`, `.timeindex` and `.txnindex` files from its logs, as
//! Kafka's log recovery does (`LogSegment.recover`, docs/format.md §6): batch by batch, an offset
//! and time entry whenever more than `index.interval.bytes` passed since the last entry, a
//! final time entry, and the aborted transactions found from the markers.
//!
//! Like recovery, indexing stops at the first invalid batch (bad size or CRC). Unlike
//! recovery, the `.log` is never touched: the report says how far its valid bytes go. Each
//! index file is replaced atomically (written aside, then renamed).

use crate::error::{Error, Result};
use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
use crate::format::control::FirstControl;
use crate::format::index::{write_txn_entry, SegmentIndexer};
use crate::format::txn_tracker::TxnTracker;
use crate::log::discover::discover;
use crate::log::scan::{for_each_entry, Access};
use crate::storage::{Local, Storage};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What rebuilding one segment's indexes wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rebuilt {
    /// The segment's `.log` file.
    pub path: PathBuf,
    /// Entries written to the offset index (`.index`).
    pub index_entries: u64,
    /// Entries written to the time index (`.timeindex`).
    pub time_index_entries: u64,
    /// Entries written to the transaction index (`.txnindex`): aborted transactions ending in
    /// this segment.
    pub aborted_transactions: u64,
    /// Bytes of the log up to its first invalid batch (all of it when it is sound).
    pub valid_bytes: u64,
    /// Bytes of the log file.
    pub log_bytes: u64,
    /// Why indexing stopped early, when it did.
    pub stopped: Option<String>,
}

/// Rebuilds the indexes of every segment under `path` (see [`discover`]).
pub fn rebuild_indexes(
    path: &Path,
    index_interval_bytes: u64,
    max_decompressed_size: usize,
) -> Result<Vec<Rebuilt>> {
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Verify,
        max_decompressed_size,
    });
    if !crate::storage::is_local(path) {
        return Err(Error::invalid_argument(
            "rebuild_indexes writes index files beside the segments: give a local path",
        )
        .with_path(path));
    }
    let storage = Local;
    let path = &storage
        .local_path(path)
        .unwrap_or_else(|| path.to_path_buf());
    let mut out = Vec::new();
    let mut txns = TxnTracker::default();
    let mut partition: Option<PathBuf> = None;
    for file in discover(&storage, path)? {
        let dir = file.path.parent().map(Path::to_path_buf);
        if dir != partition {
            txns = TxnTracker::default();
            partition = dir;
        }
        let base = file.base_offset.unwrap_or(0);
        let mut indexer = SegmentIndexer::new(base, index_interval_bytes);
        let mut aborted = Vec::new();
        let mut control = FirstControl::default();
        let mut valid_bytes = 0u64;
        let mut stopped = None;
        let scan = for_each_entry(&storage, &file.path, 0, Access::Whole, |position, entry| {
            let info = match decoder.decode(entry, position, &mut control) {
                Ok(info) => info,
                Err(err) => {
                    stopped = Some(err.to_string());
                    return Ok(false);
                }
            };
            indexer.append(
                position as u32,
                entry.len() as u32,
                info.last_offset,
                info.max_timestamp,
            );
            let kind = control.kind();
            if let Some(txn) = txns.on_batch(
                info.producer_id,
                info.is_transactional,
                kind,
                info.base_offset,
                info.last_offset,
            ) {
                aborted.push(txn);
            }
            valid_bytes = position + entry.len() as u64;
            Ok(true)
        });
        if let Err(err) = scan {
            stopped = Some(err.to_string());
        }
        indexer.finish();
        replace(
            &file.path.with_extension("index"),
            &indexer.offset_index_bytes(),
        )?;
        replace(
            &file.path.with_extension("timeindex"),
            &indexer.time_index_bytes(),
        )?;
        let txn_path = file.path.with_extension("txnindex");
        if aborted.is_empty() {
            match std::fs::remove_file(&txn_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io(e, &txn_path))
                }
                _ => {}
            }
        } else {
            let mut bytes = Vec::new();
            for txn in &aborted {
                write_txn_entry(&mut bytes, txn);
            }
            replace(&txn_path, &bytes)?;
        }
        out.push(Rebuilt {
            log_bytes: std::fs::metadata(&file.path).map(|m| m.len()).unwrap_or(0),
            path: file.path,
            index_entries: indexer.offsets.len() as u64,
            time_index_entries: indexer.times.len() as u64,
            aborted_transactions: aborted.len() as u64,
            valid_bytes,
            stopped,
        });
    }
    Ok(out)
}

/// Writes `bytes` to `path` atomically: aside first, synced, then renamed over it.
fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.kafkalog-tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(e, path)
    })
}
