//! Segment index files (docs/format.md §5): layouts, reading with Kafka's handling of preallocated
//! zero slots, and the broker's rule for when it adds entries.
//!
//! - `.index`: 8-byte entries `relativeOffset i32 | position i32`;
//! - `.timeindex`: 12-byte entries `timestamp i64 | relativeOffset i32`;
//! - `.txnindex`: 34-byte entries `version i16 | producerId i64 | firstOffset i64 |
//!   lastOffset i64 | lastStableOffset i64`, one per aborted transaction.

use crate::error::{Error, Result};
use crate::format::segment::base_offset_from_name;
use std::path::Path;

/// An offset index entry, with the absolute offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetEntry {
    /// The absolute offset of the entry (stored relative to the segment's base offset).
    pub offset: i64,
    /// The byte position in the `.log` of the batch that holds it.
    pub position: u32,
}

/// A time index entry: the largest timestamp seen in the segment up to `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeEntry {
    /// The largest timestamp seen in the segment up to the entry.
    pub timestamp: i64,
    /// The absolute offset at which that timestamp was seen.
    pub offset: i64,
}

/// A `.txnindex` entry: an aborted transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The entry's format version (0).
    pub version: i16,
    /// The producer whose transaction was aborted.
    pub producer_id: i64,
    /// The transaction's first offset.
    pub first_offset: i64,
    /// The offset of the ABORT marker.
    pub last_offset: i64,
    /// The last stable offset when the abort marker was written.
    pub last_stable_offset: i64,
}

/// Bytes of an offset index entry: a 4-byte relative offset and a 4-byte position.
pub const OFFSET_ENTRY_SIZE: usize = 8;
/// Bytes of a time index entry: an 8-byte timestamp and a 4-byte relative offset.
pub const TIME_ENTRY_SIZE: usize = 12;
/// Bytes of a transaction index entry: version, producer id, first, last and last stable
/// offsets.
pub const TXN_ENTRY_SIZE: usize = 34;

/// Reads an offset index. Like `kafka-dump-log`, stops at the first slot after the first whose
/// relative offset is 0: a preallocated, never-written slot. A partial slot at the end is
/// ignored.
pub fn read_offset_index(bytes: &[u8], base_offset: i64) -> Vec<OffsetEntry> {
    let mut entries = Vec::with_capacity(bytes.len() / OFFSET_ENTRY_SIZE);
    for (i, slot) in bytes.chunks_exact(OFFSET_ENTRY_SIZE).enumerate() {
        let relative = i32::from_be_bytes(slot[0..4].try_into().unwrap());
        if i > 0 && relative == 0 {
            break;
        }
        let position = u32::from_be_bytes(slot[4..8].try_into().unwrap());
        entries.push(OffsetEntry {
            offset: base_offset + relative as i64,
            position,
        });
    }
    entries
}

/// Reads a time index, stopping at preallocated slots as [`read_offset_index`] does.
pub fn read_time_index(bytes: &[u8], base_offset: i64) -> Vec<TimeEntry> {
    let mut entries = Vec::with_capacity(bytes.len() / TIME_ENTRY_SIZE);
    for (i, slot) in bytes.chunks_exact(TIME_ENTRY_SIZE).enumerate() {
        let timestamp = i64::from_be_bytes(slot[0..8].try_into().unwrap());
        let relative = i32::from_be_bytes(slot[8..12].try_into().unwrap());
        if i > 0 && relative == 0 {
            break;
        }
        entries.push(TimeEntry {
            timestamp,
            offset: base_offset + relative as i64,
        });
    }
    entries
}

/// Reads a transaction index; a partial entry at the end is ignored, as in Kafka.
pub fn read_txn_index(bytes: &[u8]) -> Vec<AbortedTxn> {
    bytes
        .chunks_exact(TXN_ENTRY_SIZE)
        .map(|e| {
            let at = |i: usize| i64::from_be_bytes(e[i..i + 8].try_into().unwrap());
            AbortedTxn {
                version: i16::from_be_bytes([e[0], e[1]]),
                producer_id: at(2),
                first_offset: at(10),
                last_offset: at(18),
                last_stable_offset: at(26),
            }
        })
        .collect()
}

/// Kafka's offset index lookup: the entry with the largest offset not above `target`.
pub fn lookup_offset(entries: &[OffsetEntry], target: i64) -> Option<OffsetEntry> {
    let n = entries.partition_point(|e| e.offset <= target);
    n.checked_sub(1).map(|i| entries[i])
}

/// The last time index entry whose timestamp is below `target`: every record up to its
/// offset has a timestamp below `target` (the entry holds the maximum seen so far).
pub fn last_time_entry_below(entries: &[TimeEntry], target: i64) -> Option<TimeEntry> {
    let n = entries.partition_point(|e| e.timestamp < target);
    n.checked_sub(1).map(|i| entries[i])
}

/// The sanity checks Kafka runs on an offset index (`OffsetIndex.sanityCheck`), plus the
/// ordering a lookup relies on. Returns what is wrong, if anything.
pub fn check_offset_index(
    bytes_len: usize,
    entries: &[OffsetEntry],
    base_offset: i64,
) -> Option<String> {
    if bytes_len % OFFSET_ENTRY_SIZE != 0 {
        return Some(format!(
            "found {bytes_len} bytes, which is not a multiple of {OFFSET_ENTRY_SIZE}"
        ));
    }
    if let Some(last) = entries.last() {
        if last.offset < base_offset {
            return Some(format!(
                "the last offset is {} which is less than the base offset {base_offset}",
                last.offset
            ));
        }
    }
    entries
        .windows(2)
        .find(|w| w[1].offset <= w[0].offset || w[1].position <= w[0].position)
        .map(|w| {
            format!(
                "entries out of order: offset {} at position {} follows offset {} at position {}",
                w[1].offset, w[1].position, w[0].offset, w[0].position
            )
        })
}

/// The same for a time index (`TimeIndex.sanityCheck`).
pub fn check_time_index(
    bytes_len: usize,
    entries: &[TimeEntry],
    base_offset: i64,
) -> Option<String> {
    if bytes_len % TIME_ENTRY_SIZE != 0 {
        return Some(format!(
            "found {bytes_len} bytes, which is not a multiple of {TIME_ENTRY_SIZE}"
        ));
    }
    if let (Some(first), Some(last)) = (entries.first(), entries.last()) {
        if last.timestamp < first.timestamp {
            return Some(format!(
                "the last timestamp is {} which is less than the first timestamp {}",
                last.timestamp, first.timestamp
            ));
        }
        if last.offset < base_offset {
            return Some(format!(
                "the last offset is {} which is less than the first offset {base_offset}",
                last.offset
            ));
        }
    }
    entries
        .windows(2)
        .find(|w| w[1].offset < w[0].offset || w[1].timestamp < w[0].timestamp)
        .map(|w| {
            format!(
                "entries out of order: ({}, {}) follows ({}, {})",
                w[1].timestamp, w[1].offset, w[0].timestamp, w[0].offset
            )
        })
}

/// Appends one offset index entry (relative offset, position), big-endian as Kafka writes it.
pub fn write_offset_entry(out: &mut Vec<u8>, base_offset: i64, entry: OffsetEntry) {
    out.extend_from_slice(&(entry.offset.wrapping_sub(base_offset) as i32).to_be_bytes());
    out.extend_from_slice(&entry.position.to_be_bytes());
}

/// Appends one time index entry (timestamp, relative offset), big-endian.
pub fn write_time_entry(out: &mut Vec<u8>, base_offset: i64, entry: TimeEntry) {
    out.extend_from_slice(&entry.timestamp.to_be_bytes());
    out.extend_from_slice(&(entry.offset.wrapping_sub(base_offset) as i32).to_be_bytes());
}

/// Appends one transaction index entry, big-endian.
pub fn write_txn_entry(out: &mut Vec<u8>, txn: &AbortedTxn) {
    out.extend_from_slice(&txn.version.to_be_bytes());
    for v in [
        txn.producer_id,
        txn.first_offset,
        txn.last_offset,
        txn.last_stable_offset,
    ] {
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Kafka's default `index.interval.bytes`.
pub const DEFAULT_INDEX_INTERVAL_BYTES: u64 = 4096;

/// Builds a segment's `.index` and `.timeindex` the way a broker does as batches are
/// appended (`LogSegment.append`, docs/format.md §5.5): an entry whenever more than
/// `index.interval.bytes` were appended since the last one, pointing at the batch being
/// appended; and a final time entry when the segment is closed.
#[derive(Clone, Debug)]
pub struct SegmentIndexer {
    base_offset: i64,
    interval: u64,
    bytes_since_last_entry: u64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    /// The offset index entries so far.
    pub offsets: Vec<OffsetEntry>,
    /// The time index entries so far.
    pub times: Vec<TimeEntry>,
}

impl SegmentIndexer {
    /// An indexer for a segment at `base_offset` that adds an entry every `interval` bytes
    /// (`index.interval.bytes`).
    pub fn new(base_offset: i64, interval: u64) -> Self {
        SegmentIndexer {
            base_offset,
            interval,
            bytes_since_last_entry: 0,
            max_timestamp: -1,
            offset_of_max_timestamp: base_offset,
            offsets: Vec::new(),
            times: Vec::new(),
        }
    }

    /// The segment's base offset, which entries are stored relative to.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Records the append of one batch of `size` bytes at `position`.
    pub fn append(&mut self, position: u32, size: u32, last_offset: i64, max_timestamp: i64) {
        if max_timestamp > self.max_timestamp {
            self.max_timestamp = max_timestamp;
            self.offset_of_max_timestamp = last_offset;
        }
        if self.bytes_since_last_entry > self.interval {
            self.offsets.push(OffsetEntry {
                offset: last_offset,
                position,
            });
            self.maybe_append_time(self.max_timestamp, self.offset_of_max_timestamp);
            self.bytes_since_last_entry = 0;
        }
        self.bytes_since_last_entry += size as u64;
    }

    /// A time entry is added only when its timestamp is greater than the last one's.
    fn maybe_append_time(&mut self, timestamp: i64, offset: i64) {
        let last = self.times.last().map_or(-1, |e| e.timestamp);
        if timestamp > last {
            self.times.push(TimeEntry { timestamp, offset });
        }
    }

    /// Closes the segment: the final time index entry, as on roll or clean shutdown.
    pub fn finish(&mut self) {
        self.maybe_append_time(self.max_timestamp, self.offset_of_max_timestamp);
    }

    /// The `.index` file's bytes.
    pub fn offset_index_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.offsets.len() * OFFSET_ENTRY_SIZE);
        for e in &self.offsets {
            write_offset_entry(&mut out, self.base_offset, *e);
        }
        out
    }

    /// The `.timeindex` file's bytes.
    pub fn time_index_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.times.len() * TIME_ENTRY_SIZE);
        for e in &self.times {
            write_time_entry(&mut out, self.base_offset, *e);
        }
        out
    }
}

/// Kafka's sanity check of an `.index` or `.timeindex` file's `bytes` (`OffsetIndex` and
/// `TimeIndex.sanityCheck`, as `kafka-dump-log --index-sanity-check` runs them): `None` when
/// it passes, else what is wrong, in `kafka-dump-log`'s words for the checks
/// Kafka makes (the size, the last entry against the base offset and first timestamp), in the
/// core's for the ordering a lookup relies on, which the core checks as well.
pub fn sanity_check(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    let shown = path.display();
    let base = base_offset_from_name(path).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{shown}: cannot take the base offset from the file name"
        ))
    })?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".timeindex") {
        let entries = read_time_index(bytes, base);
        let Some(problem) = check_time_index(bytes.len(), &entries, base) else {
            return Ok(None);
        };
        let (first, last) = (entries.first(), entries.last());
        return Ok(Some(if bytes.len() % TIME_ENTRY_SIZE != 0 {
            format!(
                "Time index file {shown} is corrupt, found {} bytes which is neither positive \
                 nor a multiple of {TIME_ENTRY_SIZE}",
                bytes.len()
            )
        } else if let (Some(first), Some(last)) = (first, last) {
            if last.timestamp < first.timestamp {
                format!(
                    "Corrupt time index found, time index file ({shown}) has non-zero size but \
                     the last timestamp is {} which is less than the first timestamp {}",
                    last.timestamp, first.timestamp
                )
            } else if last.offset < base {
                format!(
                    "Corrupt time index found, time index file ({shown}) has non-zero size but \
                     the last offset is {} which is less than the first offset {base}",
                    last.offset
                )
            } else {
                format!("Time index file {shown} is corrupt: {problem}")
            }
        } else {
            format!("Time index file {shown} is corrupt: {problem}")
        }));
    }
    if !name.ends_with(".index") {
        return Err(Error::invalid_argument(format!(
            "{shown}: not an offset index (.index) or time index (.timeindex)"
        )));
    }
    let entries = read_offset_index(bytes, base);
    let Some(problem) = check_offset_index(bytes.len(), &entries, base) else {
        return Ok(None);
    };
    Ok(Some(match entries.last() {
        _ if bytes.len() % OFFSET_ENTRY_SIZE != 0 => format!(
            "Index file {shown} is corrupt, found {} bytes which is neither positive nor a \
             multiple of {OFFSET_ENTRY_SIZE}",
            bytes.len()
        ),
        Some(last) if last.offset < base => format!(
            "Corrupt index found, index file {shown} has non-zero size but the last offset is \
             {} which is less than the base offset {base}",
            last.offset
        ),
        _ => format!("Index file {shown} is corrupt: {problem}"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_index(entries: &[(u32, u32)]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|(rel, pos)| [rel.to_be_bytes(), pos.to_be_bytes()].concat())
            .collect()
    }

    #[test]
    fn an_index_of_whole_entries_in_order_passes() {
        let path = Path::new("/x/00000000000000000100.index");
        let bytes = offset_index(&[(0, 0), (5, 4096)]);
        assert_eq!(sanity_check(path, &bytes).unwrap(), None);
    }

    #[test]
    fn kafkas_checks_are_worded_as_kafka_dump_log_words_them() {
        let path = Path::new("/x/00000000000000000100.index");
        let mut bytes = offset_index(&[(0, 0)]);
        bytes.push(0);
        let problem = sanity_check(path, &bytes).unwrap().unwrap();
        assert!(problem.ends_with("found 9 bytes which is neither positive nor a multiple of 8"));
        let time = Path::new("/x/00000000000000000100.timeindex");
        let mut bytes = Vec::new();
        for (ts, rel) in [(2_000i64, 1u32), (1_000, 2)] {
            bytes.extend_from_slice(&ts.to_be_bytes());
            bytes.extend_from_slice(&rel.to_be_bytes());
        }
        let problem = sanity_check(time, &bytes).unwrap().unwrap();
        assert!(problem.contains("the last timestamp is 1000 which is less than the first"));
    }

    #[test]
    fn an_index_out_of_order_fails_by_the_cores_check() {
        let path = Path::new("/x/00000000000000000000.index");
        let bytes = offset_index(&[(5, 4096), (3, 8192)]);
        let problem = sanity_check(path, &bytes).unwrap().unwrap();
        assert!(problem.contains("entries out of order"), "{problem}");
    }

    #[test]
    fn preallocated_slots_end_the_index() {
        let mut bytes = Vec::new();
        write_offset_entry(
            &mut bytes,
            100,
            OffsetEntry {
                offset: 100,
                position: 0,
            },
        );
        write_offset_entry(
            &mut bytes,
            100,
            OffsetEntry {
                offset: 130,
                position: 4100,
            },
        );
        bytes.extend([0u8; 80]);
        bytes.extend([1u8; 3]); // a partial slot
        let entries = read_offset_index(&bytes, 100);
        assert_eq!(
            entries,
            [
                OffsetEntry {
                    offset: 100,
                    position: 0
                },
                OffsetEntry {
                    offset: 130,
                    position: 4100
                }
            ]
        );
    }

    #[test]
    fn indexes_every_interval_and_closes_with_a_time_entry() {
        let mut ix = SegmentIndexer::new(0, 4096);
        let mut position = 0;
        for i in 0..10i64 {
            ix.append(position, 3000, i * 10 + 9, 1000 + i);
            position += 3000;
        }
        // The first append is never indexed; then every second one (3000 <= 4096 < 6000).
        assert_eq!(
            ix.offsets.iter().map(|e| e.offset).collect::<Vec<_>>(),
            [29, 49, 69, 89]
        );
        assert_eq!(ix.offsets[0].position, 6000);
        ix.finish();
        assert_eq!(
            ix.times.last(),
            Some(&TimeEntry {
                timestamp: 1009,
                offset: 99
            })
        );
        let bytes = ix.time_index_bytes();
        assert_eq!(read_time_index(&bytes, 0), ix.times);
    }

    #[test]
    fn lookups() {
        let offsets = [
            OffsetEntry {
                offset: 10,
                position: 100,
            },
            OffsetEntry {
                offset: 20,
                position: 200,
            },
        ];
        assert_eq!(lookup_offset(&offsets, 9), None);
        assert_eq!(lookup_offset(&offsets, 10).unwrap().position, 100);
        assert_eq!(lookup_offset(&offsets, 19).unwrap().position, 100);
        assert_eq!(lookup_offset(&offsets, 1000).unwrap().position, 200);
        let times = [
            TimeEntry {
                timestamp: 5,
                offset: 10,
            },
            TimeEntry {
                timestamp: 9,
                offset: 20,
            },
        ];
        assert_eq!(last_time_entry_below(&times, 5), None);
        assert_eq!(last_time_entry_below(&times, 9).unwrap().offset, 10);
        assert!(check_offset_index(16, &offsets, 0).is_none());
        assert!(check_offset_index(15, &offsets, 0).is_some());
        let swapped = [offsets[1], offsets[0]];
        assert!(check_offset_index(16, &swapped, 0).is_some());
    }

    #[test]
    fn txn_entries_round_trip() {
        let txn = AbortedTxn {
            version: 0,
            producer_id: 7,
            first_offset: 10,
            last_offset: 20,
            last_stable_offset: 21,
        };
        let mut bytes = Vec::new();
        write_txn_entry(&mut bytes, &txn);
        assert_eq!(bytes.len(), TXN_ENTRY_SIZE);
        assert_eq!(read_txn_index(&bytes), [txn]);
    }
}
