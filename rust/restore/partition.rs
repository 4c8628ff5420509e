//! One partition of a backup laid into the target's partition directory, every offset kept.
//!
//! The backup's log entries are copied as they are, segment by segment (each restored segment
//! named after the backup's), with three changes a broker needs:
//!
//! - **Leader epochs.** A broker that becomes leader at epoch `E` records `(E, log end)` in its
//!   leader-epoch cache, and Kafka's `LeaderEpochFileCache.assign` first removes every entry
//!   whose epoch is at least `E`; consumers validate their position with the epochs of the
//!   batches they fetched (`OffsetsForLeaderEpoch`) and wait for metadata that has the batch's
//!   epoch. A restored batch whose epoch is above the target leader's would be answered with
//!   offsets from the wrong epoch, or never. So each v2 batch's `partitionLeaderEpoch` (outside
//!   the CRC: nothing else changes) becomes `min(its epoch, the target's epoch)`: the order of
//!   epochs is kept, none passes the leader's, and `leader-epoch-checkpoint` lists the first
//!   offset of each epoch as the broker would have recorded it.
//! - **The end.** Nothing at or past the backup's high watermark (never acknowledged, never
//!   fetched by a consumer), and with `until` nothing from the first batch whose max timestamp
//!   is after it: a prefix of whole batches.
//! - **Open transactions.** A transaction the backup leaves open (its coordinator would abort
//!   it after `transaction.timeout.ms`; a restore brings no coordinator along) is aborted with
//!   the marker its coordinator would have written, appended at the log end: its records stay
//!   where they were for `read_uncommitted` readers and leave `read_committed` ones, exactly as
//!   after the timeout, and no other producer's record moves. (Moving the cut back to before
//!   the transaction instead would drop committed records of every producer written after it
//!   began.) The marker carries the producer's id and epoch, the coordinator epoch of its last
//!   marker (0 if none) and the timestamp of the last batch kept.
//!
//! Producer state: an empty producer snapshot at the log end. The target cluster allocates
//! producer ids of its own (from 0 in a new cluster) and knows nothing of the backup's
//! producers, so carrying their sequence numbers over would make a new producer that happens
//! to get the same id fail with out-of-order sequences. The snapshot lets the broker skip the
//! rescan it would otherwise do; with it, what the broker holds is what it holds after a clean
//! shutdown with every backup producer expired.
//!
//! Indexes (`.index`, `.timeindex`, `.txnindex`) are built as the broker builds them
//! (`write/writer.rs`); the whole directory is staged beside the target's and swapped in
//! atomically, with the target's `partition.metadata`.

use crate::arrow::encoder::Encoded;
use crate::error::{Error, Result};
use crate::format::batch::{BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, RecordSink};
use crate::format::batch::{Record, TimestampType};
use crate::format::checkpoint::{
    write_leader_epoch_checkpoint, EpochEntry, LEADER_EPOCH_CHECKPOINT,
};
use crate::format::compression::Compression;
use crate::format::control::{self, ControlType};
use crate::format::segment::segment_file_name;
use crate::format::snapshot::write_producer_snapshot;
use crate::format::v2::{self, BatchHeader};
use crate::log::discover::SegmentFile;
use crate::log::scan::{for_each_entry, Access};
use crate::log::visibility::Visible;
use crate::restore::target::{TargetPartition, PARTITION_METADATA};
use crate::storage::Storage;
use crate::write::writer::{PartitionWriter, WriteOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where a partition's restore stopped before the backup's last batch, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// At the backup's high watermark.
    HighWatermark,
    /// At the first batch after `until`.
    Until,
}

impl Cut {
    /// The cut's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Cut::HighWatermark => "high_watermark",
            Cut::Until => "until",
        }
    }
}

/// A transaction the backup left open, aborted by the restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aborted {
    /// The producer.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    /// The transaction's first offset.
    pub first_offset: i64,
    /// Where the abort marker went.
    pub marker_offset: i64,
}

/// What restoring one partition wrote (or, planning, would write).
#[derive(Clone, Debug)]
pub struct PartitionReport {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The target's partition directory.
    pub dir: PathBuf,
    /// The first offset consumers may fetch.
    pub log_start_offset: i64,
    /// The offset after the last batch (the abort markers included).
    pub log_end_offset: i64,
    /// Segments written.
    pub segments: usize,
    /// Batches copied from the backup.
    pub batches: u64,
    /// Records in them (control records included).
    pub records: u64,
    /// Bytes of segments written.
    pub bytes: u64,
    /// The target's leader epoch the batches' epochs were capped at.
    pub leader_epoch: i32,
    /// Batches whose epoch was above it (lowered to it).
    pub epochs_lowered: u64,
    /// Where the backup's log was cut, if it was.
    pub cut: Option<Cut>,
    /// Transactions left open by the backup (or the cut), aborted.
    pub aborted: Vec<Aborted>,
}

/// A backup's partition: its segment files in offset order and what a consumer could fetch.
#[derive(Clone, Debug)]
pub struct PartitionSource {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// Its segment files, in offset order.
    pub files: Vec<SegmentFile>,
    /// Its log start offset and high watermark, where the backup's checkpoints give them.
    pub visible: Visible,
}

/// Reads a control batch's marker: its type and coordinator epoch.
#[derive(Default)]
struct Marker {
    kind: Option<ControlType>,
    coordinator_epoch: Option<i32>,
    seen: bool,
}

impl RecordSink for Marker {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        self.kind = None;
        self.coordinator_epoch = None;
        self.seen = false;
        batch.is_control
    }

    fn record(&mut self, _: &BatchInfo, record: &Record<'_>) {
        if !self.seen {
            self.seen = true;
            let kind = control::batch_type(record.key);
            self.kind = Some(kind);
            if kind.is_transaction_marker() {
                self.coordinator_epoch = control::parse_end_txn_marker(record.value).ok();
            }
        }
    }
}

struct Open {
    epoch: i16,
    first_offset: i64,
}

/// Restores `source` into `target` (`None`: only plans, writing nothing), batches after
/// `until_ms` left out. `fsync` as the writer's.
pub fn restore_partition(
    storage: &dyn Storage,
    source: &PartitionSource,
    target: &TargetPartition,
    until_ms: Option<i64>,
    write: bool,
    fsync: bool,
) -> Result<PartitionReport> {
    let mut report = PartitionReport {
        topic: source.topic.clone(),
        partition: source.partition,
        dir: target.dir.clone(),
        log_start_offset: 0,
        log_end_offset: 0,
        segments: 0,
        batches: 0,
        records: 0,
        bytes: 0,
        leader_epoch: target.leader_epoch,
        epochs_lowered: 0,
        cut: None,
        aborted: Vec::new(),
    };
    let files: Vec<&SegmentFile> = source
        .files
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            let next = source.files.get(i + 1).and_then(|n| n.base_offset);
            crate::log::visibility::segment_hidden(f.base_offset, next, &source.visible).is_none()
        })
        .map(|(_, f)| f)
        .collect();
    if files.len() < source.files.len()
        && source.visible.high_watermark.is_some_and(|h| {
            source
                .files
                .last()
                .and_then(|f| f.base_offset)
                .is_some_and(|b| b >= h)
        })
    {
        // Whole segments past the high watermark were left out.
        report.cut = Some(Cut::HighWatermark);
    }
    let mut writer = if write {
        Some(
            PartitionWriter::create(
                &target.dir,
                WriteOptions {
                    overwrite: true,
                    fsync,
                    producer_snapshots: false,
                    ..WriteOptions::default()
                },
            )?
            .manual_layout(),
        )
    } else {
        None
    };
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Verify,
        max_decompressed_size: crate::format::batch::DEFAULT_MAX_DECOMPRESSED_SIZE,
    });
    let mut marker = Marker::default();
    let mut next_offset: Option<i64> = None;
    let mut epochs: Vec<EpochEntry> = Vec::new();
    let mut open: BTreeMap<i64, Open> = BTreeMap::new();
    let mut coordinator_epochs: BTreeMap<i64, i32> = BTreeMap::new();
    let mut last_timestamp = -1i64;
    let mut buf: Vec<u8> = Vec::new();
    let mut first_base: Option<i64> = None;
    let hw = source.visible.high_watermark;
    let cap = target.leader_epoch;
    'files: for file in &files {
        let base = file.base_offset.ok_or_else(|| {
            Error::invalid_argument(format!(
                "{} is not named as a Kafka segment (<20-digit offset>.log): a restore keeps \
                 the backup's segment names",
                file.path.display()
            ))
        })?;
        if let Some(w) = writer.as_mut() {
            w.start_segment(base)?;
        }
        first_base.get_or_insert(base);
        report.segments += 1;
        let mut stop = None;
        for_each_entry(
            storage,
            &file.path,
            file.start,
            Access::Whole,
            |position, entry| {
                if file.end.is_some_and(|end| position >= end) {
                    return Ok(false);
                }
                let info = decoder
                    .decode(entry, position, &mut marker)
                    .map_err(|e| e.with_path(&file.path))?;
                if hw.is_some_and(|h| info.base_offset >= h) {
                    stop = Some(Cut::HighWatermark);
                    return Ok(false);
                }
                if until_ms.is_some_and(|t| info.max_timestamp > t) {
                    stop = Some(Cut::Until);
                    return Ok(false);
                }
                if let Some(next) = next_offset {
                    if info.base_offset < next {
                        return Err(Error::corrupt(format!(
                            "offsets go back: a batch at offset {} after offset {}",
                            info.base_offset,
                            next - 1
                        ))
                        .at(position)
                        .with_offset(info.base_offset)
                        .with_path(&file.path));
                    }
                }
                let mut bytes: &[u8] = entry;
                if info.magic >= 2 && info.partition_leader_epoch >= 0 {
                    let epoch = info.partition_leader_epoch.min(cap);
                    if epoch != info.partition_leader_epoch {
                        buf.clear();
                        buf.extend_from_slice(entry);
                        v2::set_partition_leader_epoch(&mut buf, epoch);
                        bytes = &buf;
                        report.epochs_lowered += 1;
                    }
                    if epochs.last().is_none_or(|last| epoch > last.epoch) {
                        epochs.push(EpochEntry {
                            epoch,
                            start_offset: info.base_offset,
                        });
                    }
                }
                let control = if info.is_control { marker.kind } else { None };
                if info.magic >= 2 && info.producer_id >= 0 && info.is_transactional {
                    match control {
                        Some(kind) if kind.is_transaction_marker() => {
                            open.remove(&info.producer_id);
                            if let Some(e) = marker.coordinator_epoch {
                                coordinator_epochs.insert(info.producer_id, e);
                            }
                        }
                        Some(_) => {}
                        None => {
                            let o = open.entry(info.producer_id).or_insert(Open {
                                epoch: info.producer_epoch,
                                first_offset: info.base_offset,
                            });
                            o.epoch = info.producer_epoch;
                        }
                    }
                }
                if let Some(w) = writer.as_mut() {
                    w.append_encoded(
                        bytes,
                        &Encoded {
                            magic: info.magic,
                            base_offset: info.base_offset,
                            last_offset: info.last_offset,
                            max_timestamp: info.max_timestamp,
                            records: info.record_count.max(0) as u32,
                            producer_id: info.producer_id,
                            is_transactional: info.is_transactional,
                            control,
                        },
                    )?;
                }
                last_timestamp = last_timestamp.max(info.max_timestamp);
                next_offset = Some(info.last_offset + 1);
                report.batches += 1;
                report.records += info.record_count.max(0) as u64;
                report.bytes += entry.len() as u64;
                Ok(true)
            },
        )?;
        if stop.is_some() {
            report.cut = stop;
            break 'files;
        }
    }
    let start = first_base.unwrap_or(0);
    let mut end = next_offset.unwrap_or(start);
    // Transactions left open: aborted as their coordinator would after its timeout.
    for (&producer_id, o) in &open {
        let mut records = Vec::new();
        let key = control::key_bytes(ControlType::Abort);
        let value = control::end_txn_marker_bytes(
            coordinator_epochs.get(&producer_id).copied().unwrap_or(0),
        );
        v2::write_record(
            &mut records,
            0,
            0,
            Some(&key),
            Some(&value),
            std::iter::empty(),
        );
        let timestamp = last_timestamp.max(0);
        let header = BatchHeader {
            base_offset: end,
            partition_leader_epoch: cap,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: true,
            is_control: true,
            delete_horizon: false,
            last_offset_delta: 0,
            base_timestamp: timestamp,
            max_timestamp: timestamp,
            producer_id,
            producer_epoch: o.epoch,
            base_sequence: -1,
        };
        let mut batch = Vec::new();
        v2::write_batch(&mut batch, &header, &records, 1, None)?;
        if let Some(w) = writer.as_mut() {
            if report.segments == 0 {
                w.start_segment(end)?;
                report.segments = 1;
            }
            w.append_encoded(
                &batch,
                &Encoded {
                    magic: 2,
                    base_offset: end,
                    last_offset: end,
                    max_timestamp: timestamp,
                    records: 1,
                    producer_id,
                    is_transactional: true,
                    control: Some(ControlType::Abort),
                },
            )?;
        }
        if epochs.last().is_none_or(|last| cap > last.epoch) {
            epochs.push(EpochEntry {
                epoch: cap,
                start_offset: end,
            });
        }
        report.aborted.push(Aborted {
            producer_id,
            producer_epoch: o.epoch,
            first_offset: o.first_offset,
            marker_offset: end,
        });
        report.bytes += batch.len() as u64;
        end += 1;
    }
    report.log_end_offset = end;
    report.log_start_offset = source
        .visible
        .log_start
        .map_or(start, |s| s.max(start))
        .min(end);
    if let Some(mut w) = writer {
        if report.segments == 0 {
            w.start_segment(start)?;
            report.segments = 1;
        }
        // The producers' state at the log end, empty (see the module documentation).
        w.put_file(
            &segment_file_name(end, "snapshot"),
            &write_producer_snapshot(&[]),
        )?;
        w.put_file(
            LEADER_EPOCH_CHECKPOINT,
            write_leader_epoch_checkpoint(&epochs).as_bytes(),
        )?;
        if let Some(meta) = &target.partition_metadata {
            w.put_file(PARTITION_METADATA, meta)?;
        }
        w.finish()?;
    }
    Ok(report)
}
