//! Magic v2 record batches (`DefaultRecordBatch`, `DefaultRecord`; docs/format.md §1).
//!
//! ```text
//! baseOffset i64 | length i32 | partitionLeaderEpoch i32 | magic i8 | crc u32 (CRC-32C of
//! attributes..end) | attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 | maxTimestamp i64
//! | producerId i64 | producerEpoch i16 | baseSequence i32 | recordsCount i32 | records
//! ```
//! A record: length, attributes i8, timestampDelta, offsetDelta, key, value, headers, all
//! zig-zag varints; a negative key/value/header-value length means null.

use super::batch::{
    check_crc, read_span, BatchDecoder, BatchInfo, ByteSpan, CrcPolicy, RecordRun, RecordSink,
    RecordSpan, TimestampType,
};
use super::compression::{self, Compression};
use super::control;
use super::crc;
use super::varint::{read_varint, read_varlong, VarintError};
use crate::error::{Error, Result};

/// Bytes before the first record (`RECORD_BATCH_OVERHEAD`).
pub const HEADER_SIZE: usize = 61;
/// Where the partition leader epoch field starts. It lies before the CRC's range: a broker
/// stamps it on every batch it appends (and a follower keeps the leader's) without touching
/// the CRC.
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
/// `RecordBatch.NO_PARTITION_LEADER_EPOCH`: a batch appended without a leader epoch.
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;
/// Where the CRC field starts in a v2 batch, counting the 12 bytes of offset and size.
pub const CRC_OFFSET: usize = 17;
/// Where the attributes start; the CRC covers everything from here on.
pub const ATTRIBUTES_OFFSET: usize = 21;
/// Where the records count starts: the last header field.
pub const RECORDS_COUNT_OFFSET: usize = 57;

/// Attribute bits 0-2: the codec.
pub const ATTR_COMPRESSION_MASK: i16 = 0x07;
/// Attribute bit 3: LogAppendTime.
pub const ATTR_TIMESTAMP_TYPE: i16 = 0x08;
/// Attribute bit 4: a transactional batch.
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
/// Attribute bit 5: a control batch.
pub const ATTR_CONTROL: i16 = 0x20;
/// Attribute bit 6: the base timestamp is the delete horizon (KIP-534).
pub const ATTR_DELETE_HORIZON: i16 = 0x40;

/// The smallest possible record: length, attributes, three one-byte varints, headers count.
const MIN_RECORD_SIZE: usize = 7;

#[inline(always)]
fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
#[inline(always)]
fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
#[inline(always)]
fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// Sets a v2 entry's partition leader epoch in place (the CRC stays valid: it does not cover
/// the field). `entry` must hold at least the field.
pub fn set_partition_leader_epoch(entry: &mut [u8], epoch: i32) {
    entry[PARTITION_LEADER_EPOCH_OFFSET..PARTITION_LEADER_EPOCH_OFFSET + 4]
        .copy_from_slice(&epoch.to_be_bytes());
}

/// Parses the 61-byte header of a v2 entry, checking its CRC as `crc` says.
pub fn parse_header(entry: &[u8], position: u64, crc: CrcPolicy) -> Result<BatchInfo> {
    if entry.len() < HEADER_SIZE {
        return Err(Error::corrupt(format!(
            "record batch is corrupt (the size {} is smaller than the minimum allowed overhead {HEADER_SIZE})",
            entry.len()
        )));
    }
    let stored_crc = be_i32(entry, CRC_OFFSET) as u32;
    let crc_valid = check_crc(crc, stored_crc, || crc::crc32c(&entry[ATTRIBUTES_OFFSET..]))?;
    // Only the low byte of the attributes is used.
    let attributes = be_i16(entry, ATTRIBUTES_OFFSET) & 0xff;
    let compression = Compression::from_id((attributes & ATTR_COMPRESSION_MASK) as u8)?;
    let record_count = be_i32(entry, RECORDS_COUNT_OFFSET);
    if record_count < 0 {
        return Err(Error::corrupt(format!(
            "found invalid record count {record_count} in magic v2 batch"
        )));
    }
    let base_offset = be_i64(entry, 0);
    Ok(BatchInfo {
        position,
        size: entry.len() as u32,
        magic: 2,
        base_offset,
        last_offset: base_offset.wrapping_add(be_i32(entry, 23) as i64),
        crc: stored_crc,
        crc_valid,
        attributes,
        compression,
        timestamp_type: if attributes & ATTR_TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        },
        base_timestamp: be_i64(entry, 27),
        max_timestamp: be_i64(entry, 35),
        partition_leader_epoch: be_i32(entry, 12),
        producer_id: be_i64(entry, 43),
        producer_epoch: be_i16(entry, 51),
        base_sequence: be_i32(entry, 53),
        record_count,
        is_transactional: attributes & ATTR_TRANSACTIONAL != 0,
        is_control: attributes & ATTR_CONTROL != 0,
        delete_horizon: attributes & ATTR_DELETE_HORIZON != 0,
    })
}

/// Records parsed before they are handed on as one run: enough to fill columns a run at a
/// time, few enough that the spans stay in cache and their memory stays small.
const RUN: usize = 1024;

pub(super) fn decode<S: RecordSink>(
    dec: &mut BatchDecoder,
    entry: &[u8],
    position: u64,
    sink: &mut S,
) -> Result<BatchInfo> {
    let info = parse_header(entry, position, dec.options.crc)?;
    if !sink.begin_batch(&info) || info.record_count == 0 {
        // Kafka does not look at the bytes of an empty batch at all.
        return Ok(info);
    }
    let raw = &entry[HEADER_SIZE..];
    let records: &[u8] = if info.compression == Compression::None {
        raw
    } else {
        compression::decompress(
            info.compression,
            raw,
            2,
            dec.options.max_decompressed_size,
            &mut dec.scratch,
        )?;
        dec.decompressed = dec.scratch.len();
        sink.decompressed(&dec.scratch);
        &dec.scratch
    };
    read_records(&info, records, &mut dec.spans, sink)?;
    Ok(info)
}

/// Reads exactly `info.record_count` records from `buf`, which they must fill exactly, and
/// hands them to `sink` in runs.
#[inline]
fn read_records<S: RecordSink>(
    info: &BatchInfo,
    buf: &[u8],
    spans: &mut Vec<RecordSpan>,
    sink: &mut S,
) -> Result<()> {
    let count = info.record_count as usize;
    if count > buf.len() / MIN_RECORD_SIZE + 1 {
        // Cheap early answer for a count no byte string of this size can hold.
        return Err(Error::corrupt(format!(
            "incorrect declared batch size: {count} records cannot fit in {} bytes",
            buf.len()
        )));
    }
    if buf.len() > u32::MAX as usize {
        return Err(Error::corrupt("records of one batch exceed 4 GiB"));
    }
    let mut pos = 0usize;
    let mut left = count;
    while left > 0 {
        let n = left.min(RUN);
        spans.clear();
        for _ in 0..n {
            let span = read_record(buf, &mut pos)?;
            if info.is_control {
                control::validate(span.key.get(buf), span.value.get(buf))?;
            }
            spans.push(span);
        }
        left -= n;
        sink.records(info, &RecordRun { bytes: buf, spans });
    }
    if pos != buf.len() {
        return Err(Error::corrupt(
            "incorrect declared batch size, records still remaining in file",
        ));
    }
    Ok(())
}

/// Parses and validates the record at `*pos`, moving past it.
#[inline(always)]
fn read_record(buf: &[u8], pos: &mut usize) -> Result<RecordSpan> {
    let body_len = read_varint(buf, pos).map_err(premature_eof)?;
    if body_len < 0 {
        return Err(Error::corrupt(format!(
            "invalid record size: {body_len} is negative"
        )));
    }
    let body_start = *pos;
    let body_end = body_start + body_len as usize;
    if body_end > buf.len() {
        return Err(Error::corrupt(format!(
            "invalid record size: expected {body_len} bytes in record payload, but instead the \
             buffer has only {} remaining bytes",
            buf.len() - body_start
        )));
    }
    // Every field must lie inside the record's declared length.
    let body = &buf[..body_end];
    let mut p = body_start + 1; // skip the attributes byte: unused
    let timestamp_delta = read_varlong(body, &mut p).map_err(invalid_structure)?;
    let offset_delta = read_varint(body, &mut p).map_err(invalid_structure)?;
    let key = read_span(body, &mut p).map_err(invalid_structure)?;
    let value = read_span(body, &mut p).map_err(invalid_structure)?;
    let header_count = read_varint(body, &mut p).map_err(invalid_structure)?;
    if header_count < 0 {
        return Err(Error::corrupt(format!(
            "found invalid number of record headers {header_count}"
        )));
    }
    if header_count as usize > body_end - p {
        return Err(Error::corrupt(format!(
            "found invalid number of record headers. {header_count} is larger than the remaining size of the buffer"
        )));
    }
    let headers_start = p;
    for _ in 0..header_count {
        let key_len = read_varint(body, &mut p).map_err(invalid_structure)?;
        if key_len < 0 {
            return Err(Error::corrupt(format!(
                "invalid negative header key size {key_len}"
            )));
        }
        p = p
            .checked_add(key_len as usize)
            .filter(|&end| end <= body_end)
            .ok_or_else(|| invalid_structure(VarintError::Truncated))?;
        read_span(body, &mut p).map_err(invalid_structure)?;
    }
    if p != body_end {
        return Err(Error::corrupt(format!(
            "invalid record size: expected to read {body_len} bytes in record payload, but instead read {}",
            p - body_start
        )));
    }
    *pos = body_end;
    Ok(RecordSpan {
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers: ByteSpan {
            start: headers_start as u32,
            len: (body_end - headers_start) as i32,
        },
        header_count: header_count as u32,
    })
}

fn invalid_structure(_: VarintError) -> Error {
    Error::corrupt("found invalid record structure")
}

fn premature_eof(_: VarintError) -> Error {
    Error::corrupt("incorrect declared batch size, premature EOF reached")
}

/// The header fields of a v2 batch to write; sizes, counts and the CRC are computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    /// The first offset of the batch.
    pub base_offset: i64,
    /// The epoch of the leader that appended it.
    pub partition_leader_epoch: i32,
    /// The records' codec.
    pub compression: Compression,
    /// CreateTime or LogAppendTime.
    pub timestamp_type: TimestampType,
    /// Part of a transaction.
    pub is_transactional: bool,
    /// Holds control records.
    pub is_control: bool,
    /// Sets attribute bit 6: `base_timestamp` is the delete horizon.
    pub delete_horizon: bool,
    /// The last record's offset minus the base offset.
    pub last_offset_delta: i32,
    /// The first record's timestamp (or the delete horizon); records store deltas from it.
    pub base_timestamp: i64,
    /// The largest timestamp in the batch (the append time under LogAppendTime).
    pub max_timestamp: i64,
    /// The producer id, -1 for none.
    pub producer_id: i64,
    /// The producer epoch, -1 for none.
    pub producer_epoch: i16,
    /// The first record's sequence number, -1 for none.
    pub base_sequence: i32,
}

impl BatchHeader {
    /// The attributes field these flags encode.
    pub fn attributes(&self) -> i16 {
        let mut a = self.compression as i16;
        if self.timestamp_type == TimestampType::LogAppendTime {
            a |= ATTR_TIMESTAMP_TYPE;
        }
        if self.is_transactional {
            a |= ATTR_TRANSACTIONAL;
        }
        if self.is_control {
            a |= ATTR_CONTROL;
        }
        if self.delete_horizon {
            a |= ATTR_DELETE_HORIZON;
        }
        a
    }
}

/// Bytes of a record's body (everything after its length), as [`write_record`] writes it.
fn body_size<'h>(
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: impl ExactSizeIterator<Item = (&'h [u8], Option<&'h [u8]>)>,
) -> usize {
    use super::varint::{varint_size, varlong_size};
    let sized =
        |b: Option<&[u8]>| b.map_or(varint_size(-1), |b| varint_size(b.len() as i32) + b.len());
    let mut body =
        1 + varlong_size(timestamp_delta) + varint_size(offset_delta) + sized(key) + sized(value);
    body += varint_size(headers.len() as i32);
    for (k, v) in headers {
        body += sized(Some(k)) + sized(v);
    }
    body
}

/// Bytes a record takes in a batch (Kafka's `DefaultRecord.sizeInBytes`).
pub fn record_size<'h>(
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: impl ExactSizeIterator<Item = (&'h [u8], Option<&'h [u8]>)>,
) -> usize {
    let body = body_size(offset_delta, timestamp_delta, key, value, headers);
    super::varint::varint_size(body as i32) + body
}

/// Appends one record (uncompressed form) to `out`.
pub fn write_record<'h>(
    out: &mut Vec<u8>,
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: impl ExactSizeIterator<Item = (&'h [u8], Option<&'h [u8]>)> + Clone,
) {
    use super::varint::{write_varint, write_varlong};
    let body = body_size(offset_delta, timestamp_delta, key, value, headers.clone());
    write_varint(out, body as i32);
    out.push(0); // attributes
    write_varlong(out, timestamp_delta);
    write_varint(out, offset_delta);
    let put = |out: &mut Vec<u8>, b: Option<&[u8]>| match b {
        Some(b) => {
            write_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
        None => write_varint(out, -1),
    };
    put(out, key);
    put(out, value);
    write_varint(out, headers.len() as i32);
    for (k, v) in headers {
        put(out, Some(k));
        put(out, v);
    }
}

/// Appends a complete v2 batch to `out`: the header, then `records` (the uncompressed records,
/// `count` of them, as [`write_record`] wrote them) compressed as the header says.
pub fn write_batch(
    out: &mut Vec<u8>,
    header: &BatchHeader,
    records: &[u8],
    count: i32,
    level: Option<i32>,
) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&header.base_offset.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // length, below
    out.extend_from_slice(&header.partition_leader_epoch.to_be_bytes());
    out.push(2);
    out.extend_from_slice(&[0; 4]); // crc, below
    out.extend_from_slice(&header.attributes().to_be_bytes());
    out.extend_from_slice(&header.last_offset_delta.to_be_bytes());
    out.extend_from_slice(&header.base_timestamp.to_be_bytes());
    out.extend_from_slice(&header.max_timestamp.to_be_bytes());
    out.extend_from_slice(&header.producer_id.to_be_bytes());
    out.extend_from_slice(&header.producer_epoch.to_be_bytes());
    out.extend_from_slice(&header.base_sequence.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    compression::compress(header.compression, records, 2, level, out)?;
    let len = out.len() - start - super::segment::LOG_OVERHEAD;
    let len = i32::try_from(len).map_err(|_| Error::invalid_argument("batch larger than 2 GiB"))?;
    out[start + 8..start + 12].copy_from_slice(&len.to_be_bytes());
    let crc = crc::crc32c(&out[start + ATTRIBUTES_OFFSET..]);
    out[start + CRC_OFFSET..start + CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::testing::decode_all;
    use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
    use crate::ErrorKind;

    fn header(compression: Compression) -> BatchHeader {
        BatchHeader {
            base_offset: 100,
            partition_leader_epoch: 7,
            compression,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: false,
            is_control: false,
            delete_horizon: false,
            last_offset_delta: 2,
            base_timestamp: 1_000,
            max_timestamp: 1_020,
            producer_id: 42,
            producer_epoch: 3,
            base_sequence: i32::MAX - 1,
        }
    }

    /// Three records at offset deltas 0, 1, 2 (headers on the second), one batch.
    fn batch(h: &BatchHeader) -> Vec<u8> {
        let mut records = Vec::new();
        write_record(
            &mut records,
            0,
            0,
            Some(b"k0"),
            Some(b"v0"),
            std::iter::empty(),
        );
        let hs: [(&[u8], Option<&[u8]>); 3] = [
            (b"a", Some(b"1")),
            (b"a", None),
            ("é".as_bytes(), Some(b"")),
        ];
        write_record(&mut records, 1, 10, None, None, hs.into_iter());
        write_record(
            &mut records,
            2,
            20,
            Some(b""),
            Some(b"v2"),
            std::iter::empty(),
        );
        let mut out = Vec::new();
        write_batch(&mut out, h, &records, 3, None).unwrap();
        out
    }

    #[test]
    fn the_leader_epoch_is_outside_the_crc() {
        let mut entry = batch(&header(Compression::Zstd));
        set_partition_leader_epoch(&mut entry, 3);
        let info = parse_header(&entry, 0, CrcPolicy::Verify).unwrap();
        assert_eq!(info.partition_leader_epoch, 3);
        assert_eq!(info.crc_valid, Some(true));
        assert_eq!(info.base_offset, 100);
    }

    #[test]
    fn every_codec_decodes_what_it_wrote() {
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let bytes = batch(&header(c));
            let got = decode_all(&bytes).unwrap();
            let b = &got.batches[0];
            assert_eq!(
                (b.magic, b.compression, b.base_offset, b.last_offset),
                (2, c, 100, 102)
            );
            assert_eq!(
                (b.partition_leader_epoch, b.producer_id, b.producer_epoch),
                (7, 42, 3)
            );
            assert_eq!(b.crc_valid, Some(true));
            let r = &got.records;
            assert_eq!(
                r.iter().map(|r| r.offset).collect::<Vec<_>>(),
                [100, 101, 102]
            );
            assert_eq!(
                r.iter().map(|r| r.timestamp).collect::<Vec<_>>(),
                [1_000, 1_010, 1_020]
            );
            // Sequences wrap past i32::MAX to 0, as Kafka's incrementSequence does.
            assert_eq!(
                r.iter().map(|r| r.sequence).collect::<Vec<_>>(),
                [i32::MAX - 1, i32::MAX, 0]
            );
            assert_eq!(b.last_sequence(), 0);
            assert_eq!((r[1].key.clone(), r[1].value.clone()), (None, None));
            assert_eq!(r[2].key.as_deref(), Some(&b""[..]));
            assert_eq!(
                r[1].headers,
                vec![
                    (b"a".to_vec(), Some(b"1".to_vec())),
                    (b"a".to_vec(), None),
                    ("é".as_bytes().to_vec(), Some(vec![]))
                ]
            );
        }
    }

    #[test]
    fn log_append_time_gives_every_record_the_batch_time() {
        let mut h = header(Compression::None);
        h.timestamp_type = TimestampType::LogAppendTime;
        h.max_timestamp = 9_999;
        let got = decode_all(&batch(&h)).unwrap();
        assert!(got.records.iter().all(|r| r.timestamp == 9_999));
    }

    #[test]
    fn crc_mismatch_is_typed_and_can_be_reported_or_ignored() {
        let mut bytes = batch(&header(Compression::None));
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let err = decode_all(&bytes).err().unwrap();
        assert_eq!(
            (err.kind, err.position, err.offset),
            (ErrorKind::CrcMismatch, Some(0), Some(100))
        );
        let mut dec = BatchDecoder::new(DecodeOptions {
            crc: CrcPolicy::Report,
            ..Default::default()
        });
        let info = dec.header(&bytes, 0).unwrap();
        assert_eq!(info.crc_valid, Some(false));
    }

    #[test]
    fn empty_batches_are_not_read_at_all() {
        // Kafka's cleaner leaves 61-byte empty batches; trailing bytes are not even looked at.
        let mut h = header(Compression::None);
        h.last_offset_delta = 5;
        let mut out = Vec::new();
        write_batch(&mut out, &h, b"\xff\xff", 0, None).unwrap();
        let got = decode_all(&out).unwrap();
        assert_eq!((got.batches[0].last_offset, got.records.len()), (105, 0));
    }

    #[test]
    fn structural_damage_is_an_error() {
        let h = header(Compression::None);
        let cases: [(&str, &[u8], i32); 5] = [
            ("count larger than the bytes", &[], 3),
            ("record overruns the batch", &[0x10, 0], 1),
            ("unterminated varint", &[0xff, 0xff, 0xff, 0xff, 0xff], 1),
            (
                "bytes left after the records",
                &[0x0c, 0, 0, 0, 1, 1, 0, 0],
                1,
            ),
            (
                "negative header count",
                &[0x0c, 0, 0, 0, 1, 1, 1, 0x0, 0x0],
                1,
            ),
        ];
        for (what, records, count) in cases {
            let mut out = Vec::new();
            write_batch(&mut out, &h, records, count, None).unwrap();
            let err = decode_all(&out)
                .err()
                .unwrap_or_else(|| panic!("{what}: no error"));
            assert_eq!(err.kind, ErrorKind::Corrupt, "{what}: {err}");
            assert_eq!(err.position, Some(0), "{what}");
        }
    }

    #[test]
    fn unknown_codec_and_negative_count_are_corrupt() {
        let mut bytes = batch(&header(Compression::None));
        bytes[ATTRIBUTES_OFFSET + 1] |= 0x07; // codec 7
        let crc = crc::crc32c(&bytes[ATTRIBUTES_OFFSET..]);
        bytes[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        assert!(decode_all(&bytes)
            .err()
            .unwrap()
            .message
            .contains("compression type id 7"));
    }
}
