//! Legacy messages, magic v0 and v1 (`LegacyRecord`, `AbstractLegacyRecordBatch`;
//! docs/format.md §2).
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
    check_crc, BatchDecoder, BatchInfo, Headers, Inner, Record, RecordSink, TimestampType,
};
use super::compression::{self, Compression};
use super::crc;
use crate::error::{Error, Result};

pub use super::segment::LOG_OVERHEAD;
/// The smallest message body Kafka accepts (`RECORD_OVERHEAD_V0`): the segment framing's
/// minimum entry size.
pub const MIN_MESSAGE_SIZE: usize = super::segment::MIN_ENTRY_SIZE as usize;
/// A v1 message's overhead (`RECORD_OVERHEAD_V1`): v0's and an 8-byte timestamp.
pub const MIN_MESSAGE_SIZE_V1: usize = MIN_MESSAGE_SIZE + 8;
/// Where a message's attributes byte is, counting the 12 bytes of offset and size.
pub const ATTRIBUTES_OFFSET: usize = 17;
/// The codec bits of a v0/v1 message's attributes.
pub const ATTR_COMPRESSION_MASK: u8 = 0x07;
/// The timestamp-type bit of a v1 message's attributes (set: LogAppendTime).
pub const ATTR_TIMESTAMP_TYPE: u8 = 0x08;

/// A message parsed from a log entry, borrowing from it.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// The offset in the entry's header (a wrapper's is its last inner offset).
    pub offset: i64,
    /// The stored CRC-32 of the message from its magic byte on.
    pub crc: u32,
    /// 0 or 1.
    pub magic: i8,
    /// The attributes byte: codec and (v1) timestamp type.
    pub attributes: u8,
    /// -1 for magic 0.
    pub timestamp: i64,
    /// The key bytes; `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// The value bytes (a wrapper's: the compressed inner messages); `None` for null.
    pub value: Option<&'a [u8]>,
    /// The bytes the CRC covers (magic to end of message).
    pub crc_covered: &'a [u8],
}

impl Message<'_> {
    /// Whether the stored CRC matches the message's bytes.
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

/// Parses a complete log entry (offset, size, message) of magic 0 or 1.
pub fn parse_message(entry: &[u8]) -> Result<Message<'_>> {
    if entry.len() < LOG_OVERHEAD + MIN_MESSAGE_SIZE {
        return Err(too_small_for_crc(entry));
    }
    let offset = i64::from_be_bytes(entry[0..8].try_into().unwrap());
    let crc = u32::from_be_bytes(entry[12..16].try_into().unwrap());
    let magic = entry[16] as i8;
    let attributes = entry[ATTRIBUTES_OFFSET];
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
    if entry.len() < LOG_OVERHEAD + MIN_MESSAGE_SIZE {
        return Err(too_small_for_crc(entry));
    }
    // The CRC first, as Kafka's ensureValid does: damaged bytes are a CRC mismatch, whatever
    // else they break.
    let stored = u32::from_be_bytes(entry[12..16].try_into().unwrap());
    let crc_valid = check_crc(dec.options.crc, stored, || crc::crc32(&entry[16..]))?;
    match decode_message(dec, entry, position, crc_valid, sink) {
        // The CRC is reported, not enforced (a listing): a damaged message is still listed,
        // with what its fixed fields say, as kafka-dump-log lists it.
        Err(_) if crc_valid == Some(false) => {
            let info = damaged_info(entry, position, stored);
            sink.begin_batch(&info);
            Ok(info)
        }
        result => result,
    }
}

fn too_small_for_crc(entry: &[u8]) -> Error {
    Error::corrupt(format!(
        "record is corrupt (crc could not be retrieved as the record is too small, size = {})",
        entry.len().saturating_sub(LOG_OVERHEAD)
    ))
}

/// What the fixed fields of a damaged message say.
fn damaged_info(entry: &[u8], position: u64, crc: u32) -> BatchInfo {
    let offset = i64::from_be_bytes(entry[0..8].try_into().unwrap());
    let magic = entry[16] as i8;
    let attributes = entry[ATTRIBUTES_OFFSET];
    let timestamp = match (magic, entry.get(18..26)) {
        (1, Some(b)) => i64::from_be_bytes(b.try_into().unwrap()),
        _ => -1,
    };
    let timestamp_type = match magic {
        1 if attributes & ATTR_TIMESTAMP_TYPE != 0 => TimestampType::LogAppendTime,
        1 => TimestampType::CreateTime,
        _ => TimestampType::NoTimestamp,
    };
    BatchInfo {
        position,
        size: entry.len() as u32,
        magic,
        base_offset: offset,
        last_offset: offset,
        crc,
        crc_valid: Some(false),
        attributes: attributes as i16,
        compression: Compression::from_id(attributes & ATTR_COMPRESSION_MASK)
            .unwrap_or(Compression::None),
        timestamp_type,
        base_timestamp: timestamp,
        max_timestamp: timestamp,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        record_count: 1,
        is_transactional: false,
        is_control: false,
        delete_horizon: false,
    }
}

fn decode_message<S: RecordSink>(
    dec: &mut BatchDecoder,
    entry: &[u8],
    position: u64,
    crc_valid: Option<bool>,
    sink: &mut S,
) -> Result<BatchInfo> {
    let wrapper = parse_message(entry)?;
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
                legacy_crc: Some((wrapper.crc, wrapper.crc_covered)),
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
    sink.decompressed(inner_bytes);
    frame_inner(inner_bytes, &mut dec.inner)?;
    if dec.inner.is_empty() {
        return Err(Error::corrupt(
            "found invalid compressed record set with no inner records",
        ));
    }

    // Absolute offsets (docs/format.md §2.2, reader step 5).
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
        // Java long arithmetic: hostile offsets wrap rather than overflow.
        wrapper.offset.wrapping_sub(last_inner)
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
            legacy_crc: Some((msg.crc, msg.crc_covered)),
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

/// Appends one v0/v1 log entry (offset, size, message) to `out`. `timestamp` is ignored for
/// magic 0.
pub fn write_entry(
    out: &mut Vec<u8>,
    offset: i64,
    magic: i8,
    attributes: u8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // size and crc, below
    out.push(magic as u8);
    out.push(attributes);
    if magic == 1 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for field in [key, value] {
        match field {
            Some(b) => {
                let len = i32::try_from(b.len())
                    .map_err(|_| Error::invalid_argument("field larger than 2 GiB"))?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let size = i32::try_from(out.len() - start - LOG_OVERHEAD)
        .map_err(|_| Error::invalid_argument("message larger than 2 GiB"))?;
    out[start + 8..start + 12].copy_from_slice(&size.to_be_bytes());
    let crc = crc::crc32(&out[start + 16..]);
    out[start + 12..start + 16].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// The fields of a compressed wrapper message to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wrapper {
    /// The last inner record's absolute offset, as Kafka writes it.
    pub offset: i64,
    /// 0 or 1.
    pub magic: i8,
    /// The codec of the inner messages.
    pub compression: Compression,
    /// CreateTime or LogAppendTime (v1).
    pub timestamp_type: TimestampType,
    /// v1: the max inner timestamp (CreateTime) or the append time (LogAppendTime).
    pub timestamp: i64,
}

/// Appends a compressed wrapper entry holding `inner`: complete uncompressed entries written
/// with [`write_entry`], their offsets as Kafka writes them (absolute for magic 0; 0, 1, 2, ...
/// for magic 1).
pub fn write_wrapper(
    out: &mut Vec<u8>,
    wrapper: &Wrapper,
    inner: &[u8],
    level: Option<i32>,
) -> Result<()> {
    let Wrapper {
        offset,
        magic,
        compression,
        timestamp_type,
        timestamp,
    } = *wrapper;
    if compression == Compression::Zstd {
        return Err(Error::invalid_argument(format!(
            "zstd compression is not supported for magic {magic}"
        )));
    }
    let mut packed = Vec::new();
    compression::compress(compression, inner, magic, level, &mut packed)?;
    let mut attributes = compression as u8;
    if magic == 1 && timestamp_type == TimestampType::LogAppendTime {
        attributes |= ATTR_TIMESTAMP_TYPE;
    }
    write_entry(
        out,
        offset,
        magic,
        attributes,
        timestamp,
        None,
        Some(&packed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::testing::decode_all;
    use crate::ErrorKind;

    fn wrap(
        out: &mut Vec<u8>,
        offset: i64,
        magic: i8,
        compression: Compression,
        timestamp_type: TimestampType,
        timestamp: i64,
        inner: &[u8],
    ) -> Result<()> {
        let wrapper = Wrapper {
            offset,
            magic,
            compression,
            timestamp_type,
            timestamp,
        };
        write_wrapper(out, &wrapper, inner, None)
    }

    /// Inner entries for a wrapper: three records, offsets as Kafka writes them for `magic`.
    fn inner(magic: i8, base: i64) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..3i64 {
            let offset = if magic == 0 { base + i } else { i };
            write_entry(
                &mut out,
                offset,
                magic,
                0,
                500 + i,
                Some(format!("k{i}").as_bytes()),
                Some(b"v"),
            )
            .unwrap();
        }
        out
    }

    #[test]
    fn uncompressed_messages_are_batches_of_one() {
        let mut out = Vec::new();
        write_entry(&mut out, 5, 0, 0, -1, None, Some(b"a")).unwrap();
        write_entry(&mut out, 6, 1, ATTR_TIMESTAMP_TYPE, 77, Some(b"k"), None).unwrap();
        let got = decode_all(&out).unwrap();
        assert_eq!(got.batches.len(), 2);
        assert_eq!(got.batches[0].timestamp_type, TimestampType::NoTimestamp);
        assert_eq!(got.batches[1].timestamp_type, TimestampType::LogAppendTime);
        assert_eq!(got.records[0].timestamp, -1);
        assert_eq!((got.records[1].offset, got.records[1].timestamp), (6, 77));
        assert_eq!(got.records[1].value, None);
    }

    #[test]
    fn wrapper_offsets_follow_kafka_rules_for_each_codec() {
        for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4] {
            // magic 1: inner offsets relative, base = wrapper offset - last inner offset
            let mut out = Vec::new();
            wrap(
                &mut out,
                52,
                1,
                codec,
                TimestampType::CreateTime,
                502,
                &inner(1, 0),
            )
            .unwrap();
            // magic 0: inner offsets absolute, the wrapper offset does not matter
            wrap(
                &mut out,
                999,
                0,
                codec,
                TimestampType::NoTimestamp,
                -1,
                &inner(0, 60),
            )
            .unwrap();
            let got = decode_all(&out).unwrap();
            let offsets: Vec<i64> = got.records.iter().map(|r| r.offset).collect();
            assert_eq!(offsets, [50, 51, 52, 60, 61, 62], "{codec:?}");
            assert_eq!(
                (got.batches[0].base_offset, got.batches[0].last_offset),
                (50, 52)
            );
            assert_eq!(got.batches[0].record_count, 3);
            // CreateTime v1: inner records keep their own timestamps; magic 0 has none.
            let ts: Vec<i64> = got.records.iter().map(|r| r.timestamp).collect();
            assert_eq!(ts, [500, 501, 502, -1, -1, -1]);
        }
    }

    #[test]
    fn log_append_time_wrapper_overrides_inner_timestamps() {
        let mut out = Vec::new();
        wrap(
            &mut out,
            2,
            1,
            Compression::Gzip,
            TimestampType::LogAppendTime,
            9_000,
            &inner(1, 0),
        )
        .unwrap();
        let got = decode_all(&out).unwrap();
        assert!(got.records.iter().all(|r| r.timestamp == 9_000));
    }

    #[test]
    fn wrapper_offset_zero_takes_inner_offsets_as_they_are() {
        let mut out = Vec::new();
        wrap(
            &mut out,
            0,
            1,
            Compression::Gzip,
            TimestampType::CreateTime,
            1,
            &inner(1, 0),
        )
        .unwrap();
        let got = decode_all(&out).unwrap();
        assert_eq!(
            got.records.iter().map(|r| r.offset).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }

    #[test]
    fn wrapper_offset_below_last_inner_is_an_error() {
        let mut out = Vec::new();
        wrap(
            &mut out,
            1,
            1,
            Compression::Gzip,
            TimestampType::CreateTime,
            1,
            &inner(1, 0),
        )
        .unwrap();
        let err = decode_all(&out).err().unwrap();
        assert!(err.message.contains("wrapper offset '1'"), "{err}");
    }

    #[test]
    fn truncated_last_inner_entry_is_dropped_as_kafka_does() {
        let mut entries = inner(1, 0);
        entries.truncate(entries.len() - 3);
        let mut out = Vec::new();
        wrap(
            &mut out,
            1,
            1,
            Compression::Gzip,
            TimestampType::CreateTime,
            1,
            &entries,
        )
        .unwrap();
        let got = decode_all(&out).unwrap();
        assert_eq!(got.records.len(), 2);
    }

    #[test]
    fn bad_wrappers_are_errors() {
        let nested = {
            let mut w = Vec::new();
            wrap(
                &mut w,
                2,
                1,
                Compression::Gzip,
                TimestampType::CreateTime,
                1,
                &inner(1, 0),
            )
            .unwrap();
            // Re-label the outer offset as relative 0 so the offsets themselves are fine.
            w[0..8].copy_from_slice(&0i64.to_be_bytes());
            let crc = crc::crc32(&w[16..]);
            w[12..16].copy_from_slice(&crc.to_be_bytes());
            w
        };
        let mut out = Vec::new();
        wrap(
            &mut out,
            0,
            1,
            Compression::Gzip,
            TimestampType::CreateTime,
            1,
            &nested,
        )
        .unwrap();
        assert!(decode_all(&out)
            .err()
            .unwrap()
            .message
            .contains("must not be compressed"));

        let mut empty = Vec::new();
        wrap(
            &mut empty,
            0,
            0,
            Compression::Gzip,
            TimestampType::NoTimestamp,
            -1,
            &[],
        )
        .unwrap();
        assert!(decode_all(&empty)
            .err()
            .unwrap()
            .message
            .contains("no inner records"));

        let mut null_value = Vec::new();
        write_entry(
            &mut null_value,
            0,
            1,
            Compression::Snappy as u8,
            0,
            None,
            None,
        )
        .unwrap();
        assert!(decode_all(&null_value)
            .err()
            .unwrap()
            .message
            .contains("null value"));

        let mut zstd = Vec::new();
        write_entry(
            &mut zstd,
            0,
            1,
            Compression::Zstd as u8,
            0,
            None,
            Some(b"x"),
        )
        .unwrap();
        assert_eq!(decode_all(&zstd).err().unwrap().kind, ErrorKind::Corrupt);
        assert!(wrap(
            &mut zstd,
            0,
            1,
            Compression::Zstd,
            TimestampType::CreateTime,
            0,
            &[]
        )
        .is_err());
    }

    #[test]
    fn crc32_covers_magic_to_end() {
        let mut out = Vec::new();
        write_entry(&mut out, 0, 1, 0, 5, Some(b"k"), Some(b"v")).unwrap();
        out[17] ^= 0x08; // flip the timestamp-type bit: covered by the CRC
        assert_eq!(decode_all(&out).err().unwrap().kind, ErrorKind::CrcMismatch);
    }
}
