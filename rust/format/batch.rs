//! What every message format decodes to: a batch's header ([`BatchInfo`]) and borrowed views
//! of its records ([`Record`]), handed to a [`RecordSink`] so that nothing is allocated per
//! record. [`BatchDecoder`] decodes one log entry of any magic.
//!
//! "Batch" means what Kafka's own `RecordBatch` means: a v2 record batch, a v0/v1 compressed
//! wrapper message with its inner messages, or a single uncompressed v0/v1 message.

use super::compression::Compression;
use super::varint::{read_varint, VarintError};
use crate::error::{Error, Result};

/// How a batch's timestamps are to be read: set by the producer (`CreateTime`) or by the
/// broker on append (`LogAppendTime`), from the attributes' timestamp-type bit; v0 messages
/// have none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampType {
    /// Magic 0 has no timestamps.
    NoTimestamp = -1,
    /// The producer's timestamps (attribute bit 3 clear).
    CreateTime = 0,
    /// The broker's append time, the same for every record of the batch (attribute bit 3 set).
    LogAppendTime = 1,
}

impl TimestampType {
    /// Kafka's name, as `kafka-dump-log` prints it.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::NoTimestamp => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// Kafka's "no timestamp" / "no producer" sentinel.
pub const NO_TIMESTAMP: i64 = -1;

/// One batch's header, with the values Kafka derives from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchInfo {
    /// Byte position of the log entry in its file or buffer.
    pub position: u64,
    /// Bytes of the log entry, including the 12 bytes of offset and size.
    pub size: u32,
    /// The message format version (the magic byte): 0, 1 or 2.
    pub magic: i8,
    /// v2: the header's base offset. v0/v1: the first (inner) record's offset.
    pub base_offset: i64,
    /// v2: base offset + last offset delta. v0/v1: the entry's offset.
    pub last_offset: i64,
    /// The stored CRC: CRC-32C of the v2 batch from its attributes on, or CRC-32 (IEEE) of a
    /// v0/v1 message from its magic byte on.
    pub crc: u32,
    /// Whether the stored CRC matches; `None` when it was not computed.
    pub crc_valid: Option<bool>,
    /// The attributes field as stored (v0/v1: the message's attributes byte).
    pub attributes: i16,
    /// The codec from the attributes' low three bits.
    pub compression: Compression,
    /// CreateTime or LogAppendTime, from the attributes (v0: none).
    pub timestamp_type: TimestampType,
    /// v2: the base timestamp field (the delete horizon when [`Self::delete_horizon`] is set).
    /// v0/v1: the message's timestamp.
    pub base_timestamp: i64,
    /// v2: the header's max timestamp. v0/v1: the entry's timestamp (-1 for v0).
    pub max_timestamp: i64,
    /// v2: the leader epoch of the broker that appended the batch. v0/v1: -1.
    pub partition_leader_epoch: i32,
    /// v2: the idempotent or transactional producer's id, -1 for none. v0/v1: -1.
    pub producer_id: i64,
    /// v2: the producer's epoch, -1 for none. v0/v1: -1.
    pub producer_epoch: i16,
    /// v2: the sequence number of the batch's first record, -1 for none. v0/v1: -1.
    pub base_sequence: i32,
    /// v2: the records count field. v0/v1: the number of (inner) messages.
    pub record_count: i32,
    /// v2 attribute bit 4: the batch is part of a transaction.
    pub is_transactional: bool,
    /// v2 attribute bit 5: the batch holds control records (transaction markers, KRaft
    /// control records), not data.
    pub is_control: bool,
    /// v2 attribute bit 6: the base timestamp holds the delete horizon (KIP-534).
    pub delete_horizon: bool,
}

impl BatchInfo {
    /// Kafka's `lastSequence()`: the base sequence advanced by the last offset delta, wrapping
    /// past `i32::MAX` to 0, or -1 without a producer.
    pub fn last_sequence(&self) -> i32 {
        if self.magic < 2 {
            return -1;
        }
        increment_sequence(
            self.base_sequence,
            // The header's lastOffsetDelta, recovered with Java's wrapping arithmetic.
            self.last_offset.wrapping_sub(self.base_offset) as i32,
        )
    }

    /// The delete horizon (ms) when the cleaner stamped one (KIP-534): tombstones and
    /// transaction markers in the batch may be removed after it.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.delete_horizon.then_some(self.base_timestamp)
    }
}

/// Kafka's `DefaultRecordBatch.incrementSequence`, including its wrap to 0.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence < 0 {
        return -1;
    }
    // Java int arithmetic, which wraps: a corrupt negative delta must not panic.
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// One record, borrowing its bytes from the segment (or the decompression buffer).
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// The record's absolute offset.
    pub offset: i64,
    /// Milliseconds since the epoch, or -1 ([`NO_TIMESTAMP`]).
    pub timestamp: i64,
    /// The key bytes; `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// The value bytes; `None` for a null value (a tombstone).
    pub value: Option<&'a [u8]>,
    /// The record headers (v2; empty for v0/v1).
    pub headers: Headers<'a>,
    /// v2: the record's producer sequence (-1 without a producer). v0/v1: -1.
    pub sequence: i32,
    /// v0/v1: the message's own stored CRC and the bytes it covers (an inner message of a
    /// wrapper has its own, which Kafka does not check when reading).
    pub legacy_crc: Option<(u32, &'a [u8])>,
}

/// A record's headers, already validated, read on demand.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headers<'a> {
    pub(crate) count: u32,
    pub(crate) bytes: &'a [u8],
}

impl<'a> Headers<'a> {
    /// How many headers the record has.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the record has no header.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Header keys and values in order; a value may be null.
    pub fn iter(&self) -> HeaderIter<'a> {
        HeaderIter {
            bytes: self.bytes,
            spans: HeaderSpans::new(self.bytes, 0, self.count),
        }
    }
}

/// Iterates a record's headers as (key, value) pairs, parsing them from the record bytes.
pub struct HeaderIter<'a> {
    bytes: &'a [u8],
    spans: HeaderSpans<'a>,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        let (key, value) = self.spans.next()?;
        Some((key.get(self.bytes)?, value.get(self.bytes)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.spans.size_hint()
    }
}

/// Where each header's key and value lie, as positions in the bytes given.
pub struct HeaderSpans<'a> {
    remaining: u32,
    /// Ends where the headers end.
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> HeaderSpans<'a> {
    /// The `count` headers starting at `start` in `bytes`, already validated by the record
    /// parser.
    pub fn new(bytes: &'a [u8], start: usize, count: u32) -> Self {
        HeaderSpans {
            remaining: count,
            bytes,
            pos: start,
        }
    }
}

impl Iterator for HeaderSpans<'_> {
    type Item = (ByteSpan, ByteSpan);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // The record parser validated these bytes; a failure here would mean a bug, and ends
        // the iteration instead of panicking.
        let key = read_span(self.bytes, &mut self.pos).ok()?;
        let value = read_span(self.bytes, &mut self.pos).ok()?;
        Some((key, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining as usize))
    }
}

/// Reads a varint length (as v2 records and headers frame keys and values) and moves past that many bytes; a negative length is null. `buf`
/// must be shorter than 4 GiB.
#[inline(always)]
pub(crate) fn read_span(buf: &[u8], pos: &mut usize) -> Result<ByteSpan, VarintError> {
    let len = read_varint(buf, pos)?;
    if len < 0 {
        return Ok(ByteSpan::NULL);
    }
    let start = *pos;
    let end = start
        .checked_add(len as usize)
        .filter(|&end| end <= buf.len())
        .ok_or(VarintError::Truncated)?;
    *pos = end;
    Ok(ByteSpan {
        start: start as u32,
        len,
    })
}

/// Where a field's bytes lie in a batch's record bytes; a negative `len` is null.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteSpan {
    /// Where the field's bytes start in the record bytes.
    pub start: u32,
    /// How many bytes; negative for null, as Kafka encodes a null key or value (length -1).
    pub len: i32,
}

impl ByteSpan {
    /// A null field.
    pub const NULL: ByteSpan = ByteSpan { start: 0, len: -1 };

    /// Whether the field is null.
    #[inline(always)]
    pub fn is_null(self) -> bool {
        self.len < 0
    }

    /// The bytes in `buf`, or `None` for null.
    #[inline(always)]
    pub fn get(self, buf: &[u8]) -> Option<&[u8]> {
        if self.len < 0 {
            return None;
        }
        let start = self.start as usize;
        buf.get(start..start + self.len as usize)
    }
}

/// One v2 record, parsed and validated, as positions in its batch's record bytes.
///
/// The v2 parser reads a run of records into these before handing any on, so that a sink can
/// fill its output a column at a time ([`RecordSink::records`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordSpan {
    /// The record's timestamp minus the batch's base timestamp.
    pub timestamp_delta: i64,
    /// The record's offset minus the batch's base offset.
    pub offset_delta: i32,
    /// The key's bytes.
    pub key: ByteSpan,
    /// The value's bytes.
    pub value: ByteSpan,
    /// The headers' bytes (after their count) and how many there are.
    pub headers: ByteSpan,
    /// How many headers there are.
    pub header_count: u32,
}

/// A run of consecutive records of one v2 batch: the record bytes and the spans in them.
#[derive(Clone, Copy, Debug)]
pub struct RecordRun<'a> {
    /// The batch's (decompressed) record bytes the spans point into.
    pub bytes: &'a [u8],
    /// The records, in offset order.
    pub spans: &'a [RecordSpan],
}

impl<'a> RecordRun<'a> {
    /// How many records the run has.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the run has no record.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The offset of a record of this run in `batch`.
    #[inline(always)]
    pub fn offset(batch: &BatchInfo, span: &RecordSpan) -> i64 {
        batch.base_offset.wrapping_add(span.offset_delta as i64)
    }

    /// The timestamp of a record of this run in `batch` (LogAppendTime: the batch's).
    #[inline(always)]
    pub fn timestamp(batch: &BatchInfo, span: &RecordSpan) -> i64 {
        if batch.timestamp_type == TimestampType::LogAppendTime {
            batch.max_timestamp
        } else {
            batch.base_timestamp.wrapping_add(span.timestamp_delta)
        }
    }

    /// Where the headers of a record of this run lie in [`Self::bytes`].
    #[inline]
    pub fn header_spans(&self, span: &RecordSpan) -> HeaderSpans<'a> {
        let (start, len) = (
            span.headers.start as usize,
            span.headers.len.max(0) as usize,
        );
        let bytes = self.bytes.get(..start + len).unwrap_or_default();
        HeaderSpans::new(bytes, start, span.header_count)
    }

    /// The `i`th record, as a borrowed [`Record`].
    #[inline(always)]
    pub fn record(&self, batch: &BatchInfo, i: usize) -> Record<'a> {
        let span = &self.spans[i];
        Record {
            offset: Self::offset(batch, span),
            timestamp: Self::timestamp(batch, span),
            key: span.key.get(self.bytes),
            value: span.value.get(self.bytes),
            headers: Headers {
                count: span.header_count,
                bytes: span.headers.get(self.bytes).unwrap_or_default(),
            },
            sequence: increment_sequence(batch.base_sequence, span.offset_delta),
            legacy_crc: None,
        }
    }
}

/// Receives decoded batches and records.
pub trait RecordSink {
    /// Called before a batch's records. Returning `false` skips them without decoding (for
    /// instance control batches nobody asked for).
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool;

    /// Called for each record of the batch, in order.
    fn record(&mut self, batch: &BatchInfo, record: &Record<'_>);

    /// Called with runs of a v2 batch's records, in order, each run already validated. By
    /// default each record goes to [`Self::record`]; a sink that gains from seeing many records
    /// at once (filling columns) overrides this.
    #[inline]
    fn records(&mut self, batch: &BatchInfo, run: &RecordRun<'_>) {
        for i in 0..run.len() {
            self.record(batch, &run.record(batch, i));
        }
    }

    /// Called once a compressed batch (or v0/v1 wrapper) is decompressed, before its records:
    /// the records that follow borrow from `bytes`, the decoder's buffer, which
    /// [`BatchDecoder::take_decompressed`] gives away whole after the batch. A sink that keeps
    /// pointers into the records' bytes rather than copies notes where they are. By default
    /// nothing happens.
    #[inline]
    fn decompressed(&mut self, bytes: &[u8]) {
        let _ = bytes;
    }
}

/// What to do with each batch's CRC (CRC-32C for v2, CRC-32 for v0/v1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CrcPolicy {
    /// Compute it and fail on a mismatch (the default).
    #[default]
    Verify,
    /// Compute it and report the result in [`BatchInfo::crc_valid`] without failing.
    Report,
    /// Do not compute it.
    Ignore,
}

/// The default cap on one batch's decompressed bytes (256 MiB).
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 256 << 20;

/// Options for decoding batches.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// Whether stored CRCs are checked.
    pub crc: CrcPolicy,
    /// Cap on the decompressed bytes of one batch or wrapper.
    pub max_decompressed_size: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            crc: CrcPolicy::Verify,
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
        }
    }
}

/// Where an inner message of the current v0/v1 wrapper lies in the decompressed bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inner {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Decodes log entries of any magic, reusing its buffers from one entry to the next. Its
/// buffers are here, beside the model the formats share; its decoding, which dispatches to
/// `v2.rs` or `legacy.rs` by magic, is in `decoder.rs` (so that neither format depends on it).
#[derive(Default)]
pub struct BatchDecoder {
    /// How entries are decoded (CRC policy, decompression cap).
    pub options: DecodeOptions,
    /// Decompressed records of the current batch.
    pub(crate) scratch: Vec<u8>,
    /// Inner message spans of the current v0/v1 wrapper.
    pub(crate) inner: Vec<Inner>,
    /// The run of v2 records being parsed.
    pub(crate) spans: Vec<RecordSpan>,
    /// Decompressed bytes of the last batch decoded (0 when it was not compressed).
    pub(crate) decompressed: usize,
    /// The base offset the segment's name gives, when known: errors report a header's offset
    /// only if it can be one of this segment's ([`super::segment::offset_fits_segment`]).
    pub segment_base: Option<i64>,
}

impl BatchDecoder {
    /// A decoder with `options` and empty buffers.
    pub fn new(options: DecodeOptions) -> Self {
        BatchDecoder {
            options,
            scratch: Vec::new(),
            inner: Vec::new(),
            spans: Vec::new(),
            decompressed: 0,
            segment_base: None,
        }
    }

    /// Decompressed bytes of the last batch decoded (0 when it was not compressed).
    pub fn decompressed_len(&self) -> usize {
        self.decompressed
    }

    /// The decompressed records of the last batch decoded (empty when it was not compressed),
    /// given away: the bytes [`RecordSink::decompressed`] showed, in the same allocation, so that
    /// a sink may keep them instead of copying what it was lent. The next batch decompresses
    /// into a fresh buffer.
    pub fn take_decompressed(&mut self) -> Vec<u8> {
        if self.decompressed == 0 {
            return Vec::new();
        }
        // The next batch's guess is this one's size (batches are alike), not this buffer's
        // capacity, which one large batch may have grown far past the usual.
        let len = std::mem::take(&mut self.decompressed);
        std::mem::replace(&mut self.scratch, Vec::with_capacity(len))
    }
}

/// Applies a [`CrcPolicy`]: the value for [`BatchInfo::crc_valid`], or the error to raise.
pub(crate) fn check_crc(
    policy: CrcPolicy,
    stored: u32,
    compute: impl FnOnce() -> u32,
) -> Result<Option<bool>> {
    if policy == CrcPolicy::Ignore {
        return Ok(None);
    }
    let computed = compute();
    if computed == stored {
        return Ok(Some(true));
    }
    if policy == CrcPolicy::Report {
        return Ok(Some(false));
    }
    Err(Error::new(
        crate::error::ErrorKind::CrcMismatch,
        format!("record is corrupt (stored crc = {stored}, computed crc = {computed})"),
    ))
}

/// The magic byte of an entry; magic above 2 is refused rather than guessed at.
pub(crate) fn entry_magic(entry: &[u8]) -> Result<i8> {
    let magic = *entry
        .get(16)
        .ok_or_else(|| Error::corrupt("log entry shorter than its header"))? as i8;
    if !(0..=2).contains(&magic) {
        return Err(Error::corrupt(format!("invalid magic byte {magic}")));
    }
    Ok(magic)
}

/// Adds the entry's position and header offset to an error. An offset field that cannot be an
/// offset of the segment ([`super::segment::offset_fits_segment`]) is garbage, not an offset:
/// the error then says the header is invalid and carries no offset.
pub(crate) fn annotate(
    err: Error,
    entry: &[u8],
    position: u64,
    segment_base: Option<i64>,
) -> Error {
    let err = err.at(position);
    let Some(field) = entry.get(0..8) else {
        return err;
    };
    let offset = i64::from_be_bytes(field.try_into().unwrap());
    if err.offset.is_some() || super::segment::offset_fits_segment(offset, segment_base) {
        return err.with_offset(offset);
    }
    let base = match segment_base {
        Some(base) => format!("an offset of a segment starting at {base}"),
        None => "an offset".to_string(),
    };
    Error {
        message: format!(
            "{}; the batch header is invalid (its offset field reads {offset}, not {base})",
            err.message
        ),
        ..err
    }
}

/// The timestamp of a batch's first record as its header gives it, -1 for none: a v2
/// CreateTime batch's base timestamp (its first record's), unless the log cleaner has put a
/// delete horizon in its place (KIP-534, `has_delete_horizon`); otherwise the batch's max
/// timestamp (a LogAppendTime batch's records all carry the append time; a v0/v1 entry is one
/// message).
pub fn first_record_timestamp(
    magic: i8,
    create_time: bool,
    base_timestamp: i64,
    max_timestamp: i64,
    has_delete_horizon: bool,
) -> i64 {
    if magic >= 2 && create_time && !has_delete_horizon {
        base_timestamp
    } else {
        max_timestamp
    }
}

/// Test support: a sink that keeps owned copies of what it is given.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Owned {
        pub offset: i64,
        pub timestamp: i64,
        pub key: Option<Vec<u8>>,
        pub value: Option<Vec<u8>>,
        pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
        pub sequence: i32,
    }

    #[derive(Default)]
    pub struct Collect {
        pub batches: Vec<BatchInfo>,
        pub records: Vec<Owned>,
        pub skip_control: bool,
    }

    impl RecordSink for Collect {
        fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
            self.batches.push(batch.clone());
            !(self.skip_control && batch.is_control)
        }

        fn record(&mut self, _: &BatchInfo, r: &Record<'_>) {
            self.records.push(Owned {
                offset: r.offset,
                timestamp: r.timestamp,
                key: r.key.map(<[u8]>::to_vec),
                value: r.value.map(<[u8]>::to_vec),
                headers: r
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
                    .collect(),
                sequence: r.sequence,
            });
        }
    }

    /// Decodes every entry of `bytes` with default options.
    pub fn decode_all(bytes: &[u8]) -> Result<Collect> {
        let mut dec = BatchDecoder::default();
        let mut sink = Collect::default();
        let mut pos = 0;
        while pos < bytes.len() {
            match super::super::segment::next_entry(&bytes[pos..])? {
                super::super::segment::Frame::Entry(len) => {
                    dec.decode(&bytes[pos..pos + len], pos as u64, &mut sink)?;
                    pos += len;
                }
                super::super::segment::Frame::Incomplete { .. } => break,
            }
        }
        Ok(sink)
    }
}
