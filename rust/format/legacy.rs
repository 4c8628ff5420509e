//! Legacy messages, magic v0 and v1 (`LegacyRecord`, `AbstractLegacyRecordBatch`; FORMAT.md §2).
//!
//! ```text
//! offset i64 | size i32 | crc u32 (CRC-32 of magic..end) | magic i8 | attributes i8
//! | timestamp i64 (v1 only) | keyLength i32 | key | valueLength i32 | value
//! ```
//! An uncompressed message is a batch of one. A compressed message ("wrapper") has a null key
//! and a value holding compressed, complete inner log entries of the same layout. Inner offsets
//! are absolute under a magic 0 wrapper and relative (0, 1, 2, ...) under a magic 1 wrapper,
//! whose own offset is that of the last inner message.

use super::batch::{
    check_crc, BatchDecoder, BatchInfo, Headers, Record, RecordSink, TimestampType,
};
use super::compression::{self, Compression};
use super::crc;
use crate::error::{Error, Result};

/// offset + size.
pub const LOG_OVERHEAD: usize = 12;
/// The smallest message body Kafka accepts (`RECORD_OVERHEAD_V0`).
pub const MIN_MESSAGE_SIZE: usize = 14;
pub const ATTR_COMPRESSION_MASK: u8 = 0x07;
pub const ATTR_TIMESTAMP_TYPE: u8 = 0x08;

/// A message parsed from a log entry, borrowing from it.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    pub offset: i64,
    pub crc: u32,
    pub magic: i8,
    pub attributes: u8,
    /// -1 for magic 0.
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The bytes the CRC covers (magic to end of message).
    pub crc_covered: &'a [u8],
}

impl Message<'_> {
    pub fn crc_valid(&self) -> bool {
        crc::crc32(self.crc_covered) == self.crc
    }

    /// Magic 0 has no timestamp type whatever bit 3 says.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic == 0 {
            TimestampType::NoTimestamp
        } else if self.attributes & ATTR_TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }
}

/// Where an inner message of the current wrapper lies in the decompressed bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inner {
    start: usize,
    end: usize,
}

/// Parses a complete log entry (offset, size, message) of magic 0 or 1.
pub fn parse_message(entry: &[u8]) -> Result<Message<'_>> {
    if entry.len() < LOG_OVERHEAD + MIN_MESSAGE_SIZE {
        return Err(Error::corrupt(format!(
            "record is corrupt (crc could not be retrieved as the record is too small, size = {})",
            entry.len().saturating_sub(LOG_OVERHEAD)
        )));
    }
    let offset = i64::from_be_bytes(entry[0..8].try_into().unwrap());
    let crc = u32::from_be_bytes(entry[12..16].try_into().unwrap());
    let magic = entry[16] as i8;
    let attributes = entry[17];
    let mut pos = 18;
    let timestamp = match magic {
        0 => -1,
        1 => read_i64(entry, &mut pos)?,
        other => {
            return Err(Error::corrupt(format!(
                "invalid magic byte {other} in a legacy message"
            )))
        }
    };
    let key = read_bytes(entry, &mut pos)?;
    let value = read_bytes(entry, &mut pos)?;
    // Kafka ignores bytes after the value (they are still covered by the CRC).
    Ok(Message {
        offset,
        crc,
        magic,
        attributes,
        timestamp,
        key,
        value,
        crc_covered: &entry[16..],
    })
}

fn read_i64(b: &[u8], pos: &mut usize) -> Result<i64> {
    let bytes = b.get(*pos..*pos + 8).ok_or_else(too_small)?;
    *pos += 8;
    Ok(i64::from_be_bytes(bytes.try_into().unwrap()))
}

fn read_bytes<'a>(b: &'a [u8], pos: &mut usize) -> Result<Option<&'a [u8]>> {
    let len_bytes = b.get(*pos..*pos + 4).ok_or_else(too_small)?;
    let len = i32::from_be_bytes(len_bytes.try_into().unwrap());
    *pos += 4;
    if len < 0 {
        return Ok(None);
    }
    let bytes = b.get(*pos..*pos + len as usize).ok_or_else(|| {
        Error::corrupt(format!(
            "message field of {len} bytes runs past the end of the message"
        ))
    })?;
    *pos += len as usize;
    Ok(Some(bytes))
}

fn too_small() -> Error {
    Error::corrupt("message is too small for its fields")
}

pub(super) fn decode<S: RecordSink>(
    dec: &mut BatchDecoder,
    entry: &[u8],
    position: u64,
    sink: &mut S,
) -> Result<BatchInfo> {
    let wrapper = parse_message(entry)?;
    let crc_valid = check_crc(dec.options.crc, wrapper.crc, || {
        crc::crc32(wrapper.crc_covered)
    })?;
    let compression_id = wrapper.attributes & ATTR_COMPRESSION_MASK;
    let mut info = BatchInfo {
        position,
        size: entry.len() as u32,
        magic: wrapper.magic,
        base_offset: wrapper.offset,
        last_offset: wrapper.offset,
        crc: wrapper.crc,
        crc_valid,
        attributes: wrapper.attributes as i16,
        compression: Compression::None,
        timestamp_type: wrapper.timestamp_type(),
        base_timestamp: wrapper.timestamp,
        max_timestamp: wrapper.timestamp,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        record_count: 1,
        is_transactional: false,
        is_control: false,
        delete_horizon: false,
    };

    if compression_id == 0 {
        if sink.begin_batch(&info) {
            let record = Record {
                offset: wrapper.offset,
                timestamp: wrapper.timestamp,
                key: wrapper.key,
                value: wrapper.value,
                headers: Headers::default(),
                sequence: -1,
            };
            sink.record(&info, &record);
        }
        return Ok(info);
    }

    // A compressed wrapper.
    if compression_id == Compression::Zstd as u8 {
        return Err(Error::corrupt(format!(
            "zstd compression is not valid for magic {} (invalid wrapper compression type)",
            wrapper.magic
        )));
    }
    info.compression = Compression::from_id(compression_id)?;
    let Some(compressed) = wrapper.value else {
        return Err(Error::corrupt(format!(
            "found invalid compressed record set with null value (magic = {})",
            wrapper.magic
        )));
    };
    compression::decompress(
        info.compression,
        compressed,
        wrapper.magic,
        dec.options.max_decompressed_size,
        &mut dec.scratch,
    )?;
    dec.decompressed = dec.scratch.len();
    let inner_bytes: &[u8] = &dec.scratch;
    frame_inner(inner_bytes, &mut dec.inner)?;
    if dec.inner.is_empty() {
        return Err(Error::corrupt(
            "found invalid compressed record set with no inner records",
        ));
    }

    // Absolute offsets (FORMAT.md §2.2, reader step 5).
    let inner_offset =
        |i: &Inner| i64::from_be_bytes(inner_bytes[i.start..i.start + 8].try_into().unwrap());
    let base = if wrapper.magic == 0 {
        0
    } else if wrapper.offset == 0 {
        // Some librdkafka versions wrote wrapper offset 0; Kafka then takes inner offsets as is.
        0
    } else {
        let last_inner = inner_offset(dec.inner.last().unwrap());
        if wrapper.offset < last_inner {
            return Err(Error::corrupt(format!(
                "found invalid wrapper offset in compressed v1 message set, wrapper offset '{}' is \
                 less than the last inner message offset '{last_inner}' and it is not zero",
                wrapper.offset
            )));
        }
        wrapper.offset - last_inner
    };
    info.base_offset = base.wrapping_add(inner_offset(&dec.inner[0]));
    info.record_count = dec.inner.len() as i32;

    if !sink.begin_batch(&info) {
        return Ok(info);
    }
    let log_append = info.timestamp_type == TimestampType::LogAppendTime;
    for span in &dec.inner {
        let msg = parse_message(&inner_bytes[span.start..span.end])?;
        if msg.attributes & ATTR_COMPRESSION_MASK != 0 {
            return Err(Error::corrupt("inner messages must not be compressed"));
        }
        // An inner message of magic 1 takes the wrapper's time when the wrapper says
        // LogAppendTime; magic 0 inner messages have no timestamp at all.
        let timestamp = match msg.magic {
            0 => -1,
            _ if log_append => wrapper.timestamp,
            _ => msg.timestamp,
        };
        let record = Record {
            offset: base.wrapping_add(msg.offset),
            timestamp,
            key: msg.key,
            value: msg.value,
            headers: Headers::default(),
            sequence: -1,
        };
        sink.record(&info, &record);
    }
    Ok(info)
}

/// Splits decompressed wrapper contents into inner entries. Like Kafka, a truncated final entry
/// is dropped silently; an entry claiming fewer than 14 bytes is corrupt.
fn frame_inner(bytes: &[u8], inner: &mut Vec<Inner>) -> Result<()> {
    inner.clear();
    let mut pos = 0usize;
    while bytes.len() - pos >= LOG_OVERHEAD {
        let size = i32::from_be_bytes(bytes[pos + 8..pos + 12].try_into().unwrap());
        if size < MIN_MESSAGE_SIZE as i32 {
            return Err(Error::corrupt(format!(
                "record size {size} is less than the minimum record overhead ({MIN_MESSAGE_SIZE}) \
                 in a compressed wrapper"
            )));
        }
        let end = pos + LOG_OVERHEAD + size as usize;
        if end > bytes.len() {
            break;
        }
        inner.push(Inner { start: pos, end });
        pos = end;
    }
    Ok(())
}
