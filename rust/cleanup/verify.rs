//! Checking a log directory, partition or segment the way `kafka-dump-log --verify-index-only`
//! and `--index-sanity-check` do, and more: every batch's CRC and records, offsets increasing
//! within and across segments, torn tails, and each `.index`, `.timeindex` and `.txnindex`
//! entry against the log itself.
//!
//! What Kafka itself would reject or repair is a *problem*; what is merely worth knowing (an
//! index missing, an offset-index entry naming a later batch of the same append, which
//! `kafka-dump-log` lists as a "mismatch" although lookups stay correct) is a *note*.

use crate::error::Result;
use crate::format::batch::{BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, Record, RecordSink};
use crate::format::control::FirstControl;
use crate::format::index::{
    check_offset_index, check_time_index, read_offset_index, read_time_index, read_txn_index,
    AbortedTxn,
};
use crate::format::txn_tracker::TxnTracker;
use crate::log::discover::{discover, SegmentFile};
use crate::log::scan::{for_each_entry, Access};
use crate::storage::{Stat, Storage};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// What a [`Finding`] is about: one spelling each (see [`FindingKind::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A batch that does not decode (bad sizes, records, compression).
    CorruptBatch,
    /// A batch whose CRC does not match its bytes.
    CrcMismatch,
    /// A batch whose offsets do not follow the previous batch's.
    OffsetsNotIncreasing,
    /// A batch with offsets below its segment's base offset.
    OffsetBeforeSegmentBase,
    /// A batch with offsets at or past the next segment's base offset.
    OffsetPastNextSegment,
    /// Bytes after the last complete batch.
    TornTail,
    /// A segment that could not be read at all.
    Unreadable,
    /// A segment without its `.index` (a note).
    IndexMissing,
    /// An `.index` that fails Kafka's sanity checks.
    IndexCorrupt,
    /// An `.index` entry that points at no batch boundary.
    IndexEntryNotAtBatch,
    /// An `.index` entry for an offset before the batch it points at.
    IndexEntryAfterBatch,
    /// An `.index` entry naming a later batch of the same append (a note: `kafka-dump-log` lists it, lookups stay right).
    IndexMismatch,
    /// A segment without its `.timeindex` (a note).
    TimeIndexMissing,
    /// A `.timeindex` that fails Kafka's sanity checks.
    TimeIndexCorrupt,
    /// A `.timeindex` entry whose offset is in no batch.
    TimeIndexOffsetNotFound,
    /// A `.timeindex` entry whose timestamp is not the log's running maximum.
    TimeIndexTimestampMismatch,
    /// A `.txnindex` that does not parse.
    TxnIndexCorrupt,
    /// An aborted transaction the log holds and the `.txnindex` does not.
    TxnIndexMissingEntry,
    /// A `.txnindex` entry for no aborted transaction of the log.
    TxnIndexUnknownEntry,
}

impl FindingKind {
    /// Every kind, in the order of the checks.
    pub const ALL: [FindingKind; 19] = [
        FindingKind::CorruptBatch,
        FindingKind::CrcMismatch,
        FindingKind::OffsetsNotIncreasing,
        FindingKind::OffsetBeforeSegmentBase,
        FindingKind::OffsetPastNextSegment,
        FindingKind::TornTail,
        FindingKind::Unreadable,
        FindingKind::IndexMissing,
        FindingKind::IndexCorrupt,
        FindingKind::IndexEntryNotAtBatch,
        FindingKind::IndexEntryAfterBatch,
        FindingKind::IndexMismatch,
        FindingKind::TimeIndexMissing,
        FindingKind::TimeIndexCorrupt,
        FindingKind::TimeIndexOffsetNotFound,
        FindingKind::TimeIndexTimestampMismatch,
        FindingKind::TxnIndexCorrupt,
        FindingKind::TxnIndexMissingEntry,
        FindingKind::TxnIndexUnknownEntry,
    ];

    /// The kind in snake case, as the Python API and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::CorruptBatch => "corrupt_batch",
            FindingKind::CrcMismatch => "crc_mismatch",
            FindingKind::OffsetsNotIncreasing => "offsets_not_increasing",
            FindingKind::OffsetBeforeSegmentBase => "offset_before_segment_base",
            FindingKind::OffsetPastNextSegment => "offset_past_next_segment",
            FindingKind::TornTail => "torn_tail",
            FindingKind::Unreadable => "unreadable",
            FindingKind::IndexMissing => "index_missing",
            FindingKind::IndexCorrupt => "index_corrupt",
            FindingKind::IndexEntryNotAtBatch => "index_entry_not_at_batch",
            FindingKind::IndexEntryAfterBatch => "index_entry_after_batch",
            FindingKind::IndexMismatch => "index_mismatch",
            FindingKind::TimeIndexMissing => "time_index_missing",
            FindingKind::TimeIndexCorrupt => "time_index_corrupt",
            FindingKind::TimeIndexOffsetNotFound => "time_index_offset_not_found",
            FindingKind::TimeIndexTimestampMismatch => "time_index_timestamp_mismatch",
            FindingKind::TxnIndexCorrupt => "txn_index_corrupt",
            FindingKind::TxnIndexMissingEntry => "txn_index_missing_entry",
            FindingKind::TxnIndexUnknownEntry => "txn_index_unknown_entry",
        }
    }
}

/// A problem (what Kafka would reject or repair) or a note (worth knowing, not wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// What is wrong, for a person.
    pub message: String,
    /// The file it is in.
    pub path: PathBuf,
    /// Byte position in that file, where it applies.
    pub position: Option<u64>,
    /// The offset concerned, where known.
    pub offset: Option<i64>,
}

/// What one segment holds, as checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentReport {
    /// The segment's `.log` file.
    pub path: PathBuf,
    /// Topic from the directory name.
    pub topic: Option<String>,
    /// Partition from the directory name.
    pub partition: Option<i32>,
    /// Base offset from the file name.
    pub base_offset: Option<i64>,
    /// Size of the `.log` file.
    pub bytes: u64,
    /// Batches decoded.
    pub batches: u64,
    /// Records decoded.
    pub records: u64,
    /// The first offset in the segment.
    pub first_offset: Option<i64>,
    /// The last offset in the segment.
    pub last_offset: Option<i64>,
    /// The largest timestamp of its records (-1 for none).
    pub max_timestamp: i64,
    /// Bytes after the last complete batch (a torn tail).
    pub trailing_bytes: u64,
    /// Entries in the `.index` (`None` when there is none).
    pub index_entries: Option<u64>,
    /// Entries in the `.timeindex` (`None` when there is none).
    pub time_index_entries: Option<u64>,
    /// Entries in the `.txnindex` (`None` when there is none).
    pub aborted_transactions: Option<u64>,
}

/// What [`verify`] found under a path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Each segment, in reading order.
    pub segments: Vec<SegmentReport>,
    /// What Kafka would reject or repair.
    pub problems: Vec<Finding>,
    /// What is worth knowing but not wrong (a missing index, ...).
    pub notes: Vec<Finding>,
}

impl Report {
    /// Whether no problem was found (notes do not count).
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What a segment's batches are, for checking its indexes.
#[derive(Clone, Copy, Debug)]
struct Batch {
    position: u64,
    base: i64,
    last: i64,
    max_timestamp: i64,
}

/// Counts records and remembers a control batch's type.
#[derive(Default)]
struct Counter {
    records: u64,
    control: FirstControl,
}

impl RecordSink for Counter {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        self.control.begin_batch(batch);
        true
    }

    fn record(&mut self, batch: &BatchInfo, record: &Record<'_>) {
        self.records += 1;
        self.control.record(batch, record);
    }
}

/// Verifies everything under `path` (see [`discover`]).
pub fn verify(storage: &dyn Storage, path: &Path, max_decompressed_size: usize) -> Result<Report> {
    let files = discover(storage, path)?;
    let mut report = Report::default();
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Report,
        max_decompressed_size,
    });
    let mut previous: Option<(PathBuf, i64)> = None; // partition directory, last offset
    let mut txns = TxnTracker::default();
    for (i, file) in files.iter().enumerate() {
        let dir = file
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let same_partition = previous.as_ref().is_some_and(|(d, _)| *d == dir);
        if !same_partition {
            txns = TxnTracker::default();
        }
        let next_base = files
            .get(i + 1)
            .filter(|f| f.path.parent() == file.path.parent())
            .and_then(|f| f.base_offset);
        let prior_last = previous
            .as_ref()
            .filter(|_| same_partition)
            .map(|(_, last)| *last);
        let last = verify_segment(
            storage,
            file,
            next_base,
            prior_last,
            &mut decoder,
            &mut txns,
            &mut report,
        )?;
        previous = Some((dir, last.unwrap_or(prior_last.unwrap_or(i64::MIN))));
    }
    Ok(report)
}

fn finding(
    kind: FindingKind,
    path: &Path,
    position: Option<u64>,
    offset: Option<i64>,
    message: String,
) -> Finding {
    Finding {
        kind,
        message,
        path: path.to_path_buf(),
        position,
        offset,
    }
}

fn verify_segment(
    storage: &dyn Storage,
    file: &SegmentFile,
    next_base: Option<i64>,
    prior_last: Option<i64>,
    decoder: &mut BatchDecoder,
    txns: &mut TxnTracker,
    report: &mut Report,
) -> Result<Option<i64>> {
    let path = &file.path;
    let mut seg = SegmentReport {
        path: path.clone(),
        topic: file.origin.topic.clone(),
        partition: file.origin.partition,
        base_offset: file.base_offset,
        max_timestamp: -1,
        ..Default::default()
    };
    let mut batches: Vec<Batch> = Vec::new();
    let mut expected_aborts: Vec<AbortedTxn> = Vec::new();
    let mut last = prior_last;
    let mut counter = Counter::default();
    let mut problems = Vec::new();
    let scanned = for_each_entry(storage, path, 0, Access::Whole, |position, entry| {
        let records_before = counter.records;
        let info = match decoder.decode(entry, position, &mut counter) {
            Ok(info) => info,
            Err(err) => {
                counter.records = records_before;
                // The header alone, CRC first (as Kafka checks it): the batch still counts as
                // one for the offset and index checks.
                match decoder.header(entry, position) {
                    Ok(info) if info.crc_valid == Some(false) => info,
                    Ok(info) => {
                        problems.push(finding(
                            FindingKind::CorruptBatch,
                            path,
                            err.position,
                            err.offset,
                            err.message,
                        ));
                        info
                    }
                    Err(_) => {
                        let kind = if err.kind == crate::ErrorKind::CrcMismatch {
                            FindingKind::CrcMismatch
                        } else {
                            FindingKind::CorruptBatch
                        };
                        problems.push(finding(kind, path, err.position, err.offset, err.message));
                        return Ok(true);
                    }
                }
            }
        };
        if info.crc_valid == Some(false) {
            problems.push(finding(
                FindingKind::CrcMismatch,
                path,
                Some(position),
                Some(info.base_offset),
                format!("stored crc {} does not match the batch's bytes", info.crc),
            ));
        }
        if let Some(prev) = last {
            if info.base_offset <= prev {
                problems.push(finding(
                    FindingKind::OffsetsNotIncreasing,
                    path,
                    Some(position),
                    Some(info.base_offset),
                    format!(
                        "batch starts at offset {} after offset {prev}",
                        info.base_offset
                    ),
                ));
            }
        }
        if let Some(base) = file.base_offset {
            if info.base_offset < base && batches.is_empty() {
                problems.push(finding(
                    FindingKind::OffsetBeforeSegmentBase,
                    path,
                    Some(position),
                    Some(info.base_offset),
                    format!(
                        "first batch starts at offset {} before the segment's base offset {base}",
                        info.base_offset
                    ),
                ));
            }
        }
        if let Some(next) = next_base {
            if info.last_offset >= next {
                problems.push(finding(
                    FindingKind::OffsetPastNextSegment,
                    path,
                    Some(position),
                    Some(info.last_offset),
                    format!(
                        "offset {} is at or past the next segment's base offset {next}",
                        info.last_offset
                    ),
                ));
            }
        }
        let control = counter.control.kind();
        if let Some(txn) = txns.on_batch(
            info.producer_id,
            info.is_transactional,
            control,
            info.base_offset,
            info.last_offset,
        ) {
            expected_aborts.push(txn);
        }
        seg.batches += 1;
        seg.first_offset.get_or_insert(info.base_offset);
        seg.last_offset = Some(info.last_offset);
        seg.max_timestamp = seg.max_timestamp.max(info.max_timestamp);
        last = Some(info.last_offset);
        batches.push(Batch {
            position,
            base: info.base_offset,
            last: info.last_offset,
            max_timestamp: info.max_timestamp,
        });
        Ok(true)
    });
    match scanned {
        Ok(end) => {
            seg.trailing_bytes = end.trailing;
            if end.trailing > 0 {
                problems.push(finding(
                    FindingKind::TornTail,
                    path,
                    Some(end.position),
                    None,
                    format!("found {} invalid bytes at the end (a partial batch, or space never written)", end.trailing),
                ));
            }
        }
        Err(err) => problems.push(finding(
            FindingKind::Unreadable,
            path,
            err.position,
            err.offset,
            err.message,
        )),
    }
    seg.records = counter.records;
    seg.bytes = match storage.stat(path)? {
        Stat::File { size } => size,
        _ => 0,
    };
    report.problems.extend(problems);
    let base = file.base_offset.unwrap_or(0);
    verify_offset_index(storage, path, base, &batches, &mut seg, report);
    verify_time_index(storage, path, base, &batches, &mut seg, report);
    verify_txn_index(storage, path, base, &expected_aborts, &mut seg, report);
    report.segments.push(seg);
    Ok(last)
}

fn verify_offset_index(
    storage: &dyn Storage,
    log: &Path,
    base: i64,
    batches: &[Batch],
    seg: &mut SegmentReport,
    report: &mut Report,
) {
    let path = log.with_extension("index");
    let Ok(Some(bytes)) = storage.read(&path) else {
        report.notes.push(finding(
            FindingKind::IndexMissing,
            &path,
            None,
            None,
            "no offset index".into(),
        ));
        return;
    };
    let entries = read_offset_index(&bytes, base);
    seg.index_entries = Some(entries.len() as u64);
    if let Some(problem) = check_offset_index(bytes.len(), &entries, base) {
        report.problems.push(finding(
            FindingKind::IndexCorrupt,
            &path,
            None,
            None,
            problem,
        ));
        return;
    }
    let by_position: BTreeMap<u64, &Batch> = batches.iter().map(|b| (b.position, b)).collect();
    for e in &entries {
        match by_position.get(&(e.position as u64)) {
            None => report.problems.push(finding(
                FindingKind::IndexEntryNotAtBatch,
                &path,
                Some(e.position as u64),
                Some(e.offset),
                format!("entry for offset {} points at position {}, which is not a batch start", e.offset, e.position),
            )),
            Some(b) if b.base > e.offset => report.problems.push(finding(
                FindingKind::IndexEntryAfterBatch,
                &path,
                Some(e.position as u64),
                Some(e.offset),
                format!("entry for offset {} points at a batch starting at offset {}", e.offset, b.base),
            )),
            Some(b) if b.last != e.offset => report.notes.push(finding(
                FindingKind::IndexMismatch,
                &path,
                Some(e.position as u64),
                Some(e.offset),
                format!("Index offset: {}, log offset: {} (a multi-batch append; lookups are still correct)", e.offset, b.last),
            )),
            Some(_) => {}
        }
    }
}

fn verify_time_index(
    storage: &dyn Storage,
    log: &Path,
    base: i64,
    batches: &[Batch],
    seg: &mut SegmentReport,
    report: &mut Report,
) {
    let path = log.with_extension("timeindex");
    let Ok(Some(bytes)) = storage.read(&path) else {
        report.notes.push(finding(
            FindingKind::TimeIndexMissing,
            &path,
            None,
            None,
            "no time index".into(),
        ));
        return;
    };
    let entries = read_time_index(&bytes, base);
    seg.time_index_entries = Some(entries.len() as u64);
    if let Some(problem) = check_time_index(bytes.len(), &entries, base) {
        report.problems.push(finding(
            FindingKind::TimeIndexCorrupt,
            &path,
            None,
            None,
            problem,
        ));
        return;
    }
    // The running maximum timestamp up to each batch.
    let mut running = Vec::with_capacity(batches.len());
    let mut max = -1;
    for b in batches {
        max = max.max(b.max_timestamp);
        running.push(max);
    }
    for e in &entries {
        // The batch holding the entry's offset (the first whose last offset reaches it).
        let k = batches.partition_point(|b| b.last < e.offset);
        match batches.get(k).filter(|b| b.base <= e.offset) {
            None => report.problems.push(finding(
                FindingKind::TimeIndexOffsetNotFound,
                &path,
                None,
                Some(e.offset),
                format!("indexed offset {} is not in the log", e.offset),
            )),
            Some(_) if running[k] != e.timestamp => report.problems.push(finding(
                FindingKind::TimeIndexTimestampMismatch,
                &path,
                None,
                Some(e.offset),
                format!(
                    "Index timestamp: {}, log timestamp: {}",
                    e.timestamp, running[k]
                ),
            )),
            Some(_) => {}
        }
    }
}

fn verify_txn_index(
    storage: &dyn Storage,
    log: &Path,
    base: i64,
    expected: &[AbortedTxn],
    seg: &mut SegmentReport,
    report: &mut Report,
) {
    let path = log.with_extension("txnindex");
    let entries = match storage.read(&path) {
        Ok(Some(bytes)) => read_txn_index(&bytes),
        _ if expected.is_empty() => return,
        _ => Vec::new(),
    };
    seg.aborted_transactions = Some(entries.len() as u64);
    for e in &entries {
        if e.version != 0 {
            report.problems.push(finding(
                FindingKind::TxnIndexCorrupt,
                &path,
                None,
                Some(e.last_offset),
                format!("unexpected aborted transaction version {}", e.version),
            ));
        }
        if e.last_offset < base {
            report.problems.push(finding(
                FindingKind::TxnIndexCorrupt,
                &path,
                None,
                Some(e.last_offset),
                format!(
                    "last offset of aborted transaction {} is less than start offset {base}",
                    e.last_offset
                ),
            ));
        }
    }
    let listed: HashSet<(i64, i64)> = entries
        .iter()
        .map(|e| (e.producer_id, e.last_offset))
        .collect();
    for txn in expected {
        if !listed.contains(&(txn.producer_id, txn.last_offset)) {
            report.problems.push(finding(
                FindingKind::TxnIndexMissingEntry,
                &path,
                None,
                Some(txn.last_offset),
                format!(
                    "the transaction of producer {} aborted at offset {} is not in the transaction index",
                    txn.producer_id, txn.last_offset
                ),
            ));
        }
    }
    let markers: HashSet<(i64, i64)> = expected
        .iter()
        .map(|t| (t.producer_id, t.last_offset))
        .collect();
    for e in &entries {
        if !markers.contains(&(e.producer_id, e.last_offset)) {
            report.problems.push(finding(
                FindingKind::TxnIndexUnknownEntry,
                &path,
                None,
                Some(e.last_offset),
                format!(
                    "no ABORT marker of producer {} at offset {} in this segment",
                    e.producer_id, e.last_offset
                ),
            ));
        }
    }
}
