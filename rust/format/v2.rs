//! Magic v2 record batches (`DefaultRecordBatch`, `DefaultRecord`; FORMAT.md §1).
//!
//! ```text
//! baseOffset i64 | length i32 | partitionLeaderEpoch i32 | magic i8 | crc u32 (CRC-32C of
//! attributes..end) | attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 | maxTimestamp i64
//! | producerId i64 | producerEpoch i16 | baseSequence i32 | recordsCount i32 | records
//! ```
//! A record: length, attributes i8, timestampDelta, offsetDelta, key, value, headers, all
//! zig-zag varints; a negative key/value/header-value length means null.

use super::batch::{
    check_crc, increment_sequence, BatchDecoder, BatchInfo, CrcPolicy, Headers, Record, RecordSink,
    TimestampType,
};
use super::compression::{self, Compression};
use super::crc;
use super::varint::{read_varint, read_varlong, VarintError};
use crate::error::{Error, Result};

/// Bytes before the first record (`RECORD_BATCH_OVERHEAD`).
pub const HEADER_SIZE: usize = 61;
pub const CRC_OFFSET: usize = 17;
pub const ATTRIBUTES_OFFSET: usize = 21;

pub const ATTR_COMPRESSION_MASK: i16 = 0x07;
pub const ATTR_TIMESTAMP_TYPE: i16 = 0x08;
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
pub const ATTR_CONTROL: i16 = 0x20;
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
    let record_count = be_i32(entry, 57);
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
        &dec.scratch
    };
    read_records(&info, records, sink)?;
    Ok(info)
}

/// Reads exactly `info.record_count` records from `buf`, which they must fill exactly.
#[inline]
fn read_records<S: RecordSink>(info: &BatchInfo, buf: &[u8], sink: &mut S) -> Result<()> {
    let count = info.record_count as usize;
    if count > buf.len() / MIN_RECORD_SIZE + 1 {
        // Cheap early answer for a count no byte string of this size can hold.
        return Err(Error::corrupt(format!(
            "incorrect declared batch size: {count} records cannot fit in {} bytes",
            buf.len()
        )));
    }
    let log_append = info.timestamp_type == TimestampType::LogAppendTime;
    let mut pos = 0usize;
    for _ in 0..count {
        let record = read_record(info, buf, &mut pos, log_append)?;
        sink.record(info, &record);
    }
    if pos != buf.len() {
        return Err(Error::corrupt(
            "incorrect declared batch size, records still remaining in file",
        ));
    }
    Ok(())
}

#[inline(always)]
fn read_record<'a>(
    info: &BatchInfo,
    buf: &'a [u8],
    pos: &mut usize,
    log_append: bool,
) -> Result<Record<'a>> {
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
    let key = read_sized(body, &mut p).map_err(invalid_structure)?;
    let value = read_sized(body, &mut p).map_err(invalid_structure)?;
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
        read_sized(body, &mut p).map_err(invalid_structure)?;
    }
    if p != body_end {
        return Err(Error::corrupt(format!(
            "invalid record size: expected to read {body_len} bytes in record payload, but instead read {}",
            p - body_start
        )));
    }
    *pos = body_end;
    Ok(Record {
        offset: info.base_offset.wrapping_add(offset_delta as i64),
        timestamp: if log_append {
            info.max_timestamp
        } else {
            info.base_timestamp.wrapping_add(timestamp_delta)
        },
        key,
        value,
        headers: Headers {
            count: header_count as u32,
            bytes: &body[headers_start..],
        },
        sequence: increment_sequence(info.base_sequence, offset_delta),
    })
}

fn invalid_structure(_: VarintError) -> Error {
    Error::corrupt("found invalid record structure")
}

fn premature_eof(_: VarintError) -> Error {
    Error::corrupt("incorrect declared batch size, premature EOF reached")
}

/// Reads a varint length and that many bytes; a negative length is null.
#[inline(always)]
pub(crate) fn read_sized<'a>(
    buf: &'a [u8],
    pos: &mut usize,
) -> Result<Option<&'a [u8]>, VarintError> {
    let len = read_varint(buf, pos)?;
    if len < 0 {
        return Ok(None);
    }
    let end = pos
        .checked_add(len as usize)
        .ok_or(VarintError::Truncated)?;
    let bytes = buf.get(*pos..end).ok_or(VarintError::Truncated)?;
    *pos = end;
    Ok(Some(bytes))
}
