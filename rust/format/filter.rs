//! Rewriting one batch with some of its records removed, as Kafka's `MemoryRecords.filterTo`
//! writes the batches it keeps (docs/format.md §8): the decisions belong to the caller (the log
//! cleaner); this file holds the bytes.
//!
//! - A v2 batch keeps its base offset, last offset delta, producer id, epoch, base sequence,
//!   partition leader epoch, codec and attribute flags; its base timestamp becomes the first
//!   kept record's timestamp, or the delete horizon when one is set (attribute bit 6), and
//!   the record deltas are written against it; the max timestamp is recomputed (CreateTime) or
//!   kept (LogAppendTime).
//! - An emptied v2 batch that must stay is written as Kafka's `writeEmptyHeader` writes it: no
//!   records, no codec, base timestamp -1, the max timestamp and offset range kept.
//! - A v0/v1 compressed wrapper is rebuilt from its kept records: same magic, codec and
//!   timestamp type; its offset is the last kept record's, inner offsets are absolute (magic 0)
//!   or relative to the first kept record (magic 1); its timestamp is the max of the kept
//!   records (CreateTime) or its own (LogAppendTime).

use super::batch::{BatchDecoder, BatchInfo, Headers, Record, RecordSink, TimestampType};
use super::compression::Compression;
use super::legacy::{self, Wrapper};
use super::v2::{self, BatchHeader};
use crate::error::Result;
use std::ops::Range;

/// One record of a [`DecodedBatch`], as positions in its arena.
#[derive(Clone, Debug)]
struct Stored {
    offset: i64,
    timestamp: i64,
    key: Option<Range<usize>>,
    value: Option<Range<usize>>,
    headers: Range<usize>,
    header_count: u32,
    /// v0/v1: the (inner) message's own magic; v2: 2.
    magic: i8,
}

/// The records of one batch, copied out of the segment (and the decompression buffer) so that
/// they can be looked at more than once and written again. Reused from batch to batch.
#[derive(Default)]
pub struct DecodedBatch {
    arena: Vec<u8>,
    records: Vec<Stored>,
}

impl DecodedBatch {
    /// How many records the batch holds.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The `i`th record, borrowing from this batch.
    pub fn record(&self, i: usize) -> Record<'_> {
        let r = &self.records[i];
        Record {
            offset: r.offset,
            timestamp: r.timestamp,
            key: r.key.clone().map(|k| &self.arena[k]),
            value: r.value.clone().map(|v| &self.arena[v]),
            headers: Headers {
                count: r.header_count,
                bytes: &self.arena[r.headers.clone()],
            },
            sequence: -1,
            legacy_crc: None,
        }
    }

    /// Whether the `i`th record's own magic differs from its batch's (KAFKA-4298: some old
    /// brokers wrote wrappers whose inner messages have another magic; the cleaner rewrites
    /// such a wrapper even when it keeps every record).
    pub fn magic_differs(&self, i: usize, batch: &BatchInfo) -> bool {
        self.records[i].magic != batch.magic
    }

    /// Decodes the log entry `entry` (found at `position`) into `self`, replacing what it held.
    pub fn decode(
        &mut self,
        decoder: &mut BatchDecoder,
        entry: &[u8],
        position: u64,
    ) -> Result<BatchInfo> {
        self.arena.clear();
        self.records.clear();
        decoder.decode(entry, position, self)
    }

    fn copy(&mut self, bytes: Option<&[u8]>) -> Option<Range<usize>> {
        let b = bytes?;
        let start = self.arena.len();
        self.arena.extend_from_slice(b);
        Some(start..self.arena.len())
    }
}

impl RecordSink for DecodedBatch {
    fn begin_batch(&mut self, _: &BatchInfo) -> bool {
        true
    }

    fn record(&mut self, batch: &BatchInfo, record: &Record<'_>) {
        let key = self.copy(record.key);
        let value = self.copy(record.value);
        let headers = self.copy(Some(record.headers.bytes)).unwrap_or(0..0);
        let magic = match record.legacy_crc {
            // The bytes a legacy CRC covers start with the message's magic.
            Some((_, covered)) => covered.first().map_or(batch.magic, |&m| m as i8),
            None => batch.magic,
        };
        self.records.push(Stored {
            offset: record.offset,
            timestamp: record.timestamp,
            key,
            value,
            headers,
            header_count: record.headers.count,
            magic,
        });
    }
}

/// Appends an empty v2 batch standing for `batch` (Kafka's `DefaultRecordBatch.writeEmptyHeader`):
/// its offsets, producer fields, epoch, timestamp type, transactional and control flags and max
/// timestamp; no records, no codec, no delete horizon, base timestamp -1.
pub fn write_empty_v2(out: &mut Vec<u8>, batch: &BatchInfo) -> Result<()> {
    let header = BatchHeader {
        base_offset: batch.base_offset,
        partition_leader_epoch: batch.partition_leader_epoch,
        compression: Compression::None,
        timestamp_type: batch.timestamp_type,
        is_transactional: batch.is_transactional,
        is_control: batch.is_control,
        delete_horizon: false,
        last_offset_delta: batch.last_offset.wrapping_sub(batch.base_offset) as i32,
        base_timestamp: -1,
        max_timestamp: batch.max_timestamp,
        producer_id: batch.producer_id,
        producer_epoch: batch.producer_epoch,
        base_sequence: batch.base_sequence,
    };
    v2::write_batch(out, &header, &[], 0, None)
}

/// Appends `batch` rebuilt with only the records `keep` selects (at least one), as Kafka's
/// cleaner rebuilds a batch it cannot copy as is. `delete_horizon` (v2 only) is stored in the
/// base timestamp with attribute bit 6 set.
pub fn write_retained(
    out: &mut Vec<u8>,
    batch: &BatchInfo,
    records: &DecodedBatch,
    keep: &[bool],
    delete_horizon: Option<i64>,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let kept: Vec<usize> = (0..records.len()).filter(|&i| keep[i]).collect();
    if kept.is_empty() {
        return Err(crate::error::Error::invalid_argument(
            "a rebuilt batch needs at least one record",
        ));
    }
    scratch.clear();
    if batch.magic >= 2 {
        write_v2(out, batch, records, &kept, delete_horizon, scratch)
    } else {
        write_legacy(out, batch, records, &kept, scratch)
    }
}

fn write_v2(
    out: &mut Vec<u8>,
    batch: &BatchInfo,
    records: &DecodedBatch,
    kept: &[usize],
    delete_horizon: Option<i64>,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let log_append = batch.timestamp_type == TimestampType::LogAppendTime;
    let first = records.record(kept[0]);
    let base_timestamp = delete_horizon.unwrap_or(first.timestamp);
    let mut max_timestamp = -1i64;
    let mut headers: Vec<(&[u8], Option<&[u8]>)> = Vec::new();
    for &i in kept {
        let r = records.record(i);
        max_timestamp = max_timestamp.max(r.timestamp);
        headers.clear();
        headers.extend(r.headers.iter());
        v2::write_record(
            scratch,
            r.offset.wrapping_sub(batch.base_offset) as i32,
            r.timestamp.wrapping_sub(base_timestamp),
            r.key,
            r.value,
            headers.iter().copied(),
        );
    }
    let header = BatchHeader {
        base_offset: batch.base_offset,
        partition_leader_epoch: batch.partition_leader_epoch,
        compression: batch.compression,
        timestamp_type: batch.timestamp_type,
        is_transactional: batch.is_transactional,
        is_control: batch.is_control,
        delete_horizon: delete_horizon.is_some(),
        // The last offset is kept so that the producer's last sequence survives.
        last_offset_delta: batch.last_offset.wrapping_sub(batch.base_offset) as i32,
        base_timestamp,
        max_timestamp: if log_append {
            batch.max_timestamp
        } else {
            max_timestamp
        },
        producer_id: batch.producer_id,
        producer_epoch: batch.producer_epoch,
        base_sequence: batch.base_sequence,
    };
    v2::write_batch(out, &header, scratch, kept.len() as i32, None)
}

fn write_legacy(
    out: &mut Vec<u8>,
    batch: &BatchInfo,
    records: &DecodedBatch,
    kept: &[usize],
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let magic = batch.magic;
    let log_append = magic > 0 && batch.timestamp_type == TimestampType::LogAppendTime;
    let attributes = if log_append {
        legacy::ATTR_TIMESTAMP_TYPE
    } else {
        0
    };
    let first_offset = records.record(kept[0]).offset;
    let mut last_offset = first_offset;
    let mut max_timestamp = -1i64;
    let (target, inner_base) = if batch.compression == Compression::None {
        (&mut *out, 0)
    } else {
        // Magic 1 inner offsets count from the first kept record; magic 0 ones are absolute.
        (&mut *scratch, if magic == 0 { 0 } else { first_offset })
    };
    for &i in kept {
        let r = records.record(i);
        // Uncompressed LogAppendTime messages carry the append time itself.
        let timestamp = if log_append && batch.compression == Compression::None {
            batch.max_timestamp
        } else {
            r.timestamp
        };
        max_timestamp = max_timestamp.max(timestamp);
        last_offset = r.offset;
        legacy::write_entry(
            target,
            r.offset.wrapping_sub(inner_base),
            magic,
            attributes,
            timestamp,
            r.key,
            r.value,
        )?;
    }
    if batch.compression == Compression::None {
        return Ok(());
    }
    let wrapper = Wrapper {
        offset: last_offset,
        magic,
        compression: batch.compression,
        timestamp_type: batch.timestamp_type,
        timestamp: if log_append {
            batch.max_timestamp
        } else {
            max_timestamp
        },
    };
    legacy::write_wrapper(out, &wrapper, scratch, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{CrcPolicy, DecodeOptions};

    fn v2_batch(compression: Compression) -> Vec<u8> {
        let mut records = Vec::new();
        let hs: [(&[u8], Option<&[u8]>); 2] = [(b"h", Some(b"1")), (b"n", None)];
        v2::write_record(&mut records, 0, 0, Some(b"a"), Some(b"1"), hs.into_iter());
        v2::write_record(&mut records, 1, 5, Some(b"b"), None, std::iter::empty());
        v2::write_record(&mut records, 2, 9, Some(b"a"), Some(b"3"), hs.into_iter());
        let header = BatchHeader {
            base_offset: 40,
            partition_leader_epoch: 3,
            compression,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: true,
            is_control: false,
            delete_horizon: false,
            last_offset_delta: 2,
            base_timestamp: 1_000,
            max_timestamp: 1_009,
            producer_id: 7,
            producer_epoch: 2,
            base_sequence: 11,
        };
        let mut out = Vec::new();
        v2::write_batch(&mut out, &header, &records, 3, None).unwrap();
        out
    }

    fn decoder() -> BatchDecoder {
        BatchDecoder::new(DecodeOptions {
            crc: CrcPolicy::Verify,
            ..DecodeOptions::default()
        })
    }

    #[test]
    fn v2_rebuild_keeps_header_fields_and_offsets() {
        for codec in [Compression::None, Compression::Gzip, Compression::Zstd] {
            let entry = v2_batch(codec);
            let mut dec = decoder();
            let mut batch = DecodedBatch::default();
            let info = batch.decode(&mut dec, &entry, 0).unwrap();
            let mut out = Vec::new();
            let mut scratch = Vec::new();
            write_retained(
                &mut out,
                &info,
                &batch,
                &[false, true, true],
                Some(5_000),
                &mut scratch,
            )
            .unwrap();
            let mut again = DecodedBatch::default();
            let info2 = again.decode(&mut dec, &out, 0).unwrap();
            assert_eq!(info2.base_offset, 40);
            assert_eq!(info2.last_offset, 42);
            assert_eq!(info2.producer_id, 7);
            assert_eq!(info2.producer_epoch, 2);
            assert_eq!(info2.base_sequence, 11);
            assert_eq!(info2.partition_leader_epoch, 3);
            assert!(info2.is_transactional);
            assert_eq!(info2.compression, codec);
            assert_eq!(info2.delete_horizon_ms(), Some(5_000));
            assert_eq!(info2.max_timestamp, 1_009);
            assert_eq!(again.len(), 2);
            let r = again.record(0);
            assert_eq!(
                (r.offset, r.timestamp, r.key, r.value),
                (41, 1_005, Some(&b"b"[..]), None)
            );
            let r = again.record(1);
            assert_eq!((r.offset, r.timestamp), (42, 1_009));
            let hs: Vec<_> = r.headers.iter().collect();
            assert_eq!(hs, vec![(&b"h"[..], Some(&b"1"[..])), (&b"n"[..], None)]);
        }
    }

    #[test]
    fn empty_v2_header_is_what_kafka_writes() {
        let entry = v2_batch(Compression::Snappy);
        let mut dec = decoder();
        let mut batch = DecodedBatch::default();
        let info = batch.decode(&mut dec, &entry, 0).unwrap();
        let mut out = Vec::new();
        write_empty_v2(&mut out, &info).unwrap();
        assert_eq!(out.len(), v2::HEADER_SIZE);
        let info2 = dec.header(&out, 0).unwrap();
        assert_eq!(info2.record_count, 0);
        assert_eq!(info2.compression, Compression::None);
        assert_eq!((info2.base_offset, info2.last_offset), (40, 42));
        assert_eq!((info2.base_timestamp, info2.max_timestamp), (-1, 1_009));
        assert_eq!(info2.last_sequence(), 13);
    }

    #[test]
    fn legacy_wrapper_rebuild_keeps_offsets_with_gaps() {
        for magic in [0i8, 1] {
            let mut inner = Vec::new();
            for (i, key) in [b"a", b"b", b"a"].iter().enumerate() {
                let rel = if magic == 0 { 100 + i as i64 } else { i as i64 };
                legacy::write_entry(
                    &mut inner,
                    rel,
                    magic,
                    0,
                    500 + i as i64,
                    Some(*key),
                    Some(b"v"),
                )
                .unwrap();
            }
            let mut entry = Vec::new();
            let w = Wrapper {
                offset: 102,
                magic,
                compression: Compression::Gzip,
                timestamp_type: if magic == 0 {
                    TimestampType::NoTimestamp
                } else {
                    TimestampType::CreateTime
                },
                timestamp: 502,
            };
            legacy::write_wrapper(&mut entry, &w, &inner, None).unwrap();
            let mut dec = decoder();
            let mut batch = DecodedBatch::default();
            let info = batch.decode(&mut dec, &entry, 0).unwrap();
            let mut out = Vec::new();
            let mut scratch = Vec::new();
            write_retained(
                &mut out,
                &info,
                &batch,
                &[true, false, true],
                None,
                &mut scratch,
            )
            .unwrap();
            let mut again = DecodedBatch::default();
            let info2 = again.decode(&mut dec, &out, 0).unwrap();
            assert_eq!((info2.base_offset, info2.last_offset), (100, 102));
            assert_eq!(info2.compression, Compression::Gzip);
            let offsets: Vec<i64> = (0..again.len()).map(|i| again.record(i).offset).collect();
            assert_eq!(offsets, vec![100, 102]);
            if magic == 1 {
                assert_eq!(info2.max_timestamp, 502);
            }
        }
    }
}
