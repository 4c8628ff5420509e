//! Arrow record batches into Kafka batches (the reverse of the decoder).
//!
//! Input columns are the read path's: `key`, `value`, `timestamp`, `headers`, optionally
//! `offset`, and optionally the batch-metadata columns. Two ways to form Kafka batches:
//! - **faithful** (the metadata columns `baseOffset` and `lastOffset` are present and
//!   `preserve_batches` is on): rows with the same batch keep forming one batch, with its
//!   header fields (producer, sequence, leader epoch, flags, timestamps) as they were read.
//!   Uncompressed batches come out byte for byte as Kafka wrote them.
//! - **fresh**: records are grouped as a producer's `batch.size` groups them (by count and
//!   bytes), offsets are taken from `offset` or assigned from `base_offset`.
//!
//! Everything is validated before a byte is produced for a batch; the partition writer makes
//! the whole write atomic.

use crate::arrow::schema::Column;
use crate::error::{Error, Result};
use crate::format::batch::{increment_sequence, TimestampType};
use crate::format::compression::Compression;
use crate::format::control::{self, ControlType};
use crate::format::legacy::{self, Wrapper};
use crate::format::v2::{self, BatchHeader};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
};
use arrow_schema::{DataType, TimeUnit};

/// How to encode.
#[derive(Clone, Copy, Debug)]
pub struct EncodeOptions {
    /// Message format; `None` = as the `magic` column says, else 2.
    pub magic: Option<i8>,
    /// Codec; `None` = as the `compression` column says, else none.
    pub compression: Option<Compression>,
    /// The codec's level (gzip, lz4, zstd); `None`: the codec's default, as the producer's
    /// `compression.<codec>.level`.
    pub compression_level: Option<i32>,
    /// `None` = as the `timestampType` column says, else CreateTime.
    pub timestamp_type: Option<TimestampType>,
    /// The broker's append time for LogAppendTime batches (ms); `None` = now.
    pub log_append_time: Option<i64>,
    /// First offset when the input has no `offset` column.
    pub base_offset: i64,
    /// Most records in one batch (fresh batching).
    pub batch_records: usize,
    /// Uncompressed record bytes after which a batch is closed (the producer's `batch.size`).
    pub batch_bytes: usize,
    /// Keep the batches the metadata columns describe.
    pub preserve_batches: bool,
    /// The producer id stamped on fresh v2 batches (-1: none, an idempotence-less producer).
    pub producer_id: i64,
    /// The producer epoch stamped with it.
    pub producer_epoch: i16,
    /// First sequence number (fresh batching with a producer id); -1 = none.
    pub base_sequence: i32,
    /// Mark fresh batches transactional (the v2 attributes' transactional bit).
    pub transactional: bool,
    /// The partition leader epoch written in fresh v2 batch headers.
    pub partition_leader_epoch: i32,
}

/// The default most records in one fresh batch.
pub const DEFAULT_BATCH_RECORDS: usize = 10_000;
/// The default most uncompressed bytes in one fresh batch (the producer's `batch.size`).
pub const DEFAULT_BATCH_BYTES: usize = 16_384;

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            magic: None,
            compression: None,
            compression_level: None,
            timestamp_type: None,
            log_append_time: None,
            base_offset: 0,
            batch_records: DEFAULT_BATCH_RECORDS,
            batch_bytes: DEFAULT_BATCH_BYTES,
            preserve_batches: true,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            partition_leader_epoch: 0,
        }
    }
}

/// What the partition writer needs to know about an encoded batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// The message format of the batch: 0, 1 or 2.
    pub magic: i8,
    /// The first offset in the batch (for v0/v1 wrappers, the first inner offset).
    pub base_offset: i64,
    /// The last offset in the batch.
    pub last_offset: i64,
    /// The largest timestamp in the batch (what the time index records for it).
    pub max_timestamp: i64,
    /// Records in the batch.
    pub records: u32,
    /// The batch's producer id (-1 for none and for v0/v1).
    pub producer_id: i64,
    /// Whether the batch is part of a transaction (for the transaction index).
    pub is_transactional: bool,
    /// For control batches: the type of their (first) control record.
    pub control: Option<ControlType>,
}

/// A header's key and (nullable) value.
type Header<'a> = (&'a [u8], Option<&'a [u8]>);

/// The input columns, normalised to the types the encoder reads.
struct Input {
    rows: usize,
    key: Option<BinaryArray>,
    value: Option<BinaryArray>,
    offset: Option<PrimitiveArray<Int64Type>>,
    /// Milliseconds.
    timestamp: Option<PrimitiveArray<Int64Type>>,
    timestamp_type: Option<PrimitiveArray<Int32Type>>,
    headers: Option<ListArray>,
    header_keys: Option<StringArray>,
    header_values: Option<BinaryArray>,
    base_offset: Option<PrimitiveArray<Int64Type>>,
    last_offset: Option<PrimitiveArray<Int64Type>>,
    magic: Option<PrimitiveArray<Int8Type>>,
    compression: Option<StringArray>,
    producer_id: Option<PrimitiveArray<Int64Type>>,
    producer_epoch: Option<PrimitiveArray<Int16Type>>,
    sequence: Option<PrimitiveArray<Int32Type>>,
    partition_leader_epoch: Option<PrimitiveArray<Int32Type>>,
    is_transactional: Option<BooleanArray>,
    is_control: Option<BooleanArray>,
    base_timestamp: Option<PrimitiveArray<Int64Type>>,
    max_timestamp: Option<PrimitiveArray<Int64Type>>,
    delete_horizon: Option<PrimitiveArray<Int64Type>>,
}

fn cast(col: &ArrayRef, to: &DataType, name: &str) -> Result<ArrayRef> {
    arrow_cast::cast(col, to).map_err(|e| {
        Error::invalid_argument(format!(
            "column {name:?} ({}) cannot be read as {to}: {e}",
            col.data_type()
        ))
    })
}

impl Input {
    fn new(batch: &RecordBatch) -> Result<Self> {
        let col = |c: Column| batch.column_by_name(c.name());
        let binary = |c: Column| -> Result<Option<BinaryArray>> {
            let Some(a) = col(c) else { return Ok(None) };
            match a.data_type() {
                DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_) => Ok(Some(
                    cast(a, &DataType::Binary, c.name())?
                        .as_binary::<i32>()
                        .clone(),
                )),
                DataType::Null => Ok(Some(BinaryArray::new_null(a.len()))),
                other => Err(Error::invalid_argument(format!(
                    "column {:?} must be binary, not {other} (encode text to bytes first)",
                    c.name()
                ))),
            }
        };
        macro_rules! prim {
            ($c:expr, $t:ty, $dt:expr) => {
                match col($c) {
                    Some(a) => Some(cast(a, &$dt, $c.name())?.as_primitive::<$t>().clone()),
                    None => None,
                }
            };
        }
        let timestamp = match col(Column::Timestamp) {
            None => None,
            Some(a) => {
                let ms = match a.data_type() {
                    DataType::Timestamp(_, _) => cast(a, &DataType::Timestamp(TimeUnit::Millisecond, None), "timestamp")?,
                    DataType::Int64 | DataType::Null => cast(a, &DataType::Int64, "timestamp")?,
                    other => {
                        return Err(Error::invalid_argument(format!(
                            "column \"timestamp\" must be a timestamp or int64 milliseconds, not {other}"
                        )))
                    }
                };
                Some(
                    cast(&ms, &DataType::Int64, "timestamp")?
                        .as_primitive::<Int64Type>()
                        .clone(),
                )
            }
        };
        let (headers, header_keys, header_values) = match col(Column::Headers) {
            None => (None, None, None),
            Some(a) if a.data_type() == &DataType::Null => (None, None, None),
            Some(a) => {
                let list = cast(a, &crate::arrow::schema::headers_type(), "headers")?
                    .as_list::<i32>()
                    .clone();
                let entries = list.values().as_struct();
                let keys = cast(entries.column(0), &DataType::Utf8, "headers.key")?
                    .as_string::<i32>()
                    .clone();
                let values = cast(entries.column(1), &DataType::Binary, "headers.value")?
                    .as_binary::<i32>()
                    .clone();
                (Some(list), Some(keys), Some(values))
            }
        };
        let bools = |c: Column| -> Result<Option<BooleanArray>> {
            Ok(match col(c) {
                Some(a) => Some(cast(a, &DataType::Boolean, c.name())?.as_boolean().clone()),
                None => None,
            })
        };
        Ok(Input {
            rows: batch.num_rows(),
            key: binary(Column::Key)?,
            value: binary(Column::Value)?,
            offset: prim!(Column::Offset, Int64Type, DataType::Int64),
            timestamp,
            timestamp_type: prim!(Column::TimestampType, Int32Type, DataType::Int32),
            headers,
            header_keys,
            header_values,
            base_offset: prim!(Column::BaseOffset, Int64Type, DataType::Int64),
            last_offset: prim!(Column::LastOffset, Int64Type, DataType::Int64),
            magic: prim!(Column::Magic, Int8Type, DataType::Int8),
            compression: match col(Column::Compression) {
                Some(a) => Some(
                    cast(a, &DataType::Utf8, "compression")?
                        .as_string::<i32>()
                        .clone(),
                ),
                None => None,
            },
            producer_id: prim!(Column::ProducerId, Int64Type, DataType::Int64),
            producer_epoch: prim!(Column::ProducerEpoch, Int16Type, DataType::Int16),
            sequence: prim!(Column::Sequence, Int32Type, DataType::Int32),
            partition_leader_epoch: prim!(Column::PartitionLeaderEpoch, Int32Type, DataType::Int32),
            is_transactional: bools(Column::IsTransactional)?,
            is_control: bools(Column::IsControl)?,
            base_timestamp: prim!(Column::BaseTimestamp, Int64Type, DataType::Int64),
            max_timestamp: prim!(Column::MaxTimestamp, Int64Type, DataType::Int64),
            delete_horizon: prim!(Column::DeleteHorizonMs, Int64Type, DataType::Int64),
        })
    }

    fn get<T: arrow_array::ArrowPrimitiveType>(
        col: &Option<PrimitiveArray<T>>,
        row: usize,
    ) -> Option<T::Native> {
        col.as_ref()
            .filter(|c| c.is_valid(row))
            .map(|c| c.value(row))
    }

    fn bytes(col: &Option<BinaryArray>, row: usize) -> Option<&[u8]> {
        col.as_ref()
            .filter(|c| c.is_valid(row))
            .map(|c| c.value(row))
    }

    fn flag(col: &Option<BooleanArray>, row: usize) -> bool {
        col.as_ref()
            .is_some_and(|c| c.is_valid(row) && c.value(row))
    }

    /// Fills `out` with the header (key, value) pairs of a row.
    fn headers<'a>(&'a self, row: usize, out: &mut Vec<Header<'a>>) -> Result<()> {
        out.clear();
        let (Some(list), Some(keys), Some(values)) =
            (&self.headers, &self.header_keys, &self.header_values)
        else {
            return Ok(());
        };
        if list.is_null(row) {
            return Ok(());
        }
        let offsets = list.value_offsets();
        for i in offsets[row] as usize..offsets[row + 1] as usize {
            if keys.is_null(i) {
                return Err(Error::invalid_argument(
                    "a header key is null (Kafka requires a key)",
                ));
            }
            out.push((
                keys.value(i).as_bytes(),
                values.is_valid(i).then(|| values.value(i)),
            ));
        }
        Ok(())
    }

    /// The row's batch in the metadata columns, when they describe one.
    fn batch_key(&self, row: usize) -> Option<(i64, i64)> {
        Some((
            Self::get(&self.base_offset, row)?,
            Self::get(&self.last_offset, row)?,
        ))
    }
}

/// The batch being filled.
#[derive(Default)]
struct Open {
    /// Serialized records (v2) or inner entries (v0/v1 wrappers).
    buf: Vec<u8>,
    count: u32,
    magic: i8,
    compression: Option<Compression>,
    batch_key: Option<(i64, i64)>,
    base_offset: i64,
    last_offset: i64,
    base_timestamp: i64,
    max_timestamp: i64,
    timestamp_type: Option<TimestampType>,
    header_max_timestamp: Option<i64>,
    base_sequence: i32,
    producer_id: i64,
    producer_epoch: i16,
    partition_leader_epoch: i32,
    is_transactional: bool,
    is_control: bool,
    delete_horizon: Option<i64>,
    control: Option<ControlType>,
}

/// Arrow rows into Kafka batches (see the module docs): keeps the batches the metadata
/// columns describe, or batches rows afresh as a producer would.
pub struct Encoder {
    options: EncodeOptions,
    /// The offset the next record gets when the input has no `offset` column.
    next_offset: i64,
    /// The last offset encoded, to enforce strictly increasing offsets.
    last_offset: Option<i64>,
    next_sequence: i32,
    open: Option<Open>,
    /// Encoded batches not yet taken.
    out: Vec<u8>,
    /// The last closed batch's record buffer, emptied, for the next batch to fill: keeps its
    /// capacity instead of growing a new one for every batch (or every v0/v1 message).
    spare: Vec<u8>,
    batches: Vec<(std::ops::Range<usize>, Encoded)>,
    rows_seen: u64,
    /// The time of this write, for LogAppendTime batches with no time of their own.
    write_time: i64,
}

impl Encoder {
    /// An encoder with `options`; fails on a message format or codec Kafka does not have.
    pub fn new(options: EncodeOptions) -> Result<Self> {
        if let Some(m) = options.magic {
            if !(0..=2).contains(&m) {
                return Err(Error::invalid_argument(format!(
                    "magic must be 0, 1 or 2, not {m}"
                )));
            }
            if m < 2 && options.compression == Some(Compression::Zstd) {
                return Err(Error::invalid_argument(format!(
                    "zstd compression is not supported for magic {m}"
                )));
            }
        }
        if options.batch_records == 0 {
            return Err(Error::invalid_argument("batch_records must be at least 1"));
        }
        if options.transactional && options.producer_id < 0 {
            return Err(Error::invalid_argument(
                "transactional batches need a producer id",
            ));
        }
        Ok(Encoder {
            next_offset: options.base_offset,
            next_sequence: options.base_sequence,
            options,
            last_offset: None,
            open: None,
            out: Vec::new(),
            spare: Vec::new(),
            batches: Vec::new(),
            rows_seen: 0,
            write_time: crate::clock::now_ms(),
        })
    }

    /// Encodes the rows of `batch`; finished Kafka batches become available from
    /// [`Self::take`].
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let input = Input::new(batch)?;
        let faithful = self.options.preserve_batches
            && input.base_offset.is_some()
            && input.last_offset.is_some();
        let mut headers = Vec::new();
        for row in 0..input.rows {
            self.row(&input, row, faithful, &mut headers).map_err(|e| {
                let row_no = self.rows_seen + row as u64;
                Error {
                    message: format!("input row {row_no}: {}", e.message),
                    ..e
                }
            })?;
        }
        self.rows_seen += input.rows as u64;
        Ok(())
    }

    fn row<'a>(
        &mut self,
        input: &'a Input,
        row: usize,
        faithful: bool,
        headers: &mut Vec<Header<'a>>,
    ) -> Result<()> {
        let o = self.options;
        let offset = match Input::get(&input.offset, row) {
            Some(off) => off,
            None if input.offset.is_some() => {
                return Err(Error::invalid_argument("offset is null"))
            }
            None => self.next_offset,
        };
        if offset < 0 {
            return Err(Error::invalid_argument(format!(
                "offset {offset} is negative"
            )));
        }
        if let Some(last) = self.last_offset {
            if offset <= last {
                return Err(Error::invalid_argument(format!(
                    "offsets must increase: {offset} follows {last}"
                )));
            }
        }
        let magic = o.magic.or(Input::get(&input.magic, row)).unwrap_or(2);
        if !(0..=2).contains(&magic) {
            return Err(Error::invalid_argument(format!(
                "magic {magic} is not 0, 1 or 2"
            )));
        }
        let compression = match o.compression {
            Some(c) => c,
            None => match input.compression.as_ref().filter(|c| c.is_valid(row)) {
                Some(c) => Compression::from_name(c.value(row)).ok_or_else(|| {
                    Error::invalid_argument(format!("unknown compression {:?}", c.value(row)))
                })?,
                None => Compression::None,
            },
        };
        if magic < 2 && compression == Compression::Zstd {
            return Err(Error::invalid_argument(format!(
                "zstd compression is not supported for magic {magic}"
            )));
        }
        let timestamp_type = match (magic, o.timestamp_type) {
            (0, _) => TimestampType::NoTimestamp,
            (_, Some(t)) => t,
            _ => match Input::get(&input.timestamp_type, row) {
                Some(1) => TimestampType::LogAppendTime,
                _ => TimestampType::CreateTime,
            },
        };
        let mut timestamp = Input::get(&input.timestamp, row).unwrap_or(-1);
        if !faithful
            && magic == 1
            && compression == Compression::None
            && timestamp_type == TimestampType::LogAppendTime
        {
            // A broker stamps the append time into each uncompressed v1 message; a row read
            // from such a message already carries it.
            let fallback = if timestamp >= 0 {
                timestamp
            } else {
                self.write_time
            };
            timestamp = o.log_append_time.unwrap_or(fallback);
        }
        input.headers(row, headers)?;
        if magic < 2 && !headers.is_empty() {
            return Err(Error::invalid_argument(format!(
                "magic {magic} cannot hold headers"
            )));
        }
        let is_control = Input::flag(&input.is_control, row);
        if is_control && magic < 2 {
            return Err(Error::invalid_argument(format!(
                "magic {magic} cannot hold control records"
            )));
        }
        let key = Input::bytes(&input.key, row);
        let value = Input::bytes(&input.value, row);
        let control = if is_control {
            Some(control::parse_key(key)?)
        } else {
            None
        };
        let is_transactional = if faithful {
            Input::flag(&input.is_transactional, row)
        } else {
            o.transactional
        };
        let batch_key = if faithful { input.batch_key(row) } else { None };

        // Close the open batch when this row cannot join it. As the producer's
        // MemoryRecordsBuilder.hasRoomFor: the batch so far plus this record's exact size.
        let record_size = |open: &Open| match magic {
            2 => v2::record_size(
                offset.wrapping_sub(open.base_offset) as i32,
                timestamp.wrapping_sub(open.base_timestamp),
                key,
                value,
                headers.iter().copied(),
            ),
            _ => legacy_entry_size(magic, key, value),
        };
        if let Some(open) = &self.open {
            let same = if faithful {
                open.batch_key == batch_key
                    && open.magic == magic
                    && open.compression == Some(compression)
            } else {
                open.magic == magic
                    && open.compression == Some(compression)
                    && open.is_control == is_control
                    && open.timestamp_type == Some(timestamp_type)
                    && (open.count as usize) < o.batch_records
                    && batch_header_size(magic) + open.buf.len() + record_size(open)
                        <= o.batch_bytes
            };
            // Uncompressed v0/v1 messages are each their own entry.
            if !same || (magic < 2 && compression == Compression::None) {
                self.close()?;
            }
        }

        if self.open.is_none() {
            let (base_offset, base_timestamp) = match batch_key {
                Some((base, _)) => (
                    base,
                    Input::get(&input.delete_horizon, row)
                        .or(Input::get(&input.base_timestamp, row))
                        .unwrap_or(timestamp),
                ),
                None => (offset, timestamp),
            };
            let (producer_id, producer_epoch, base_sequence, ple) = if faithful {
                let seq = Input::get(&input.sequence, row).unwrap_or(-1);
                let base_seq = if seq < 0 {
                    -1
                } else {
                    decrement_sequence(seq, (offset - base_offset) as i32)
                };
                (
                    Input::get(&input.producer_id, row).unwrap_or(-1),
                    Input::get(&input.producer_epoch, row).unwrap_or(-1),
                    base_seq,
                    Input::get(&input.partition_leader_epoch, row)
                        .unwrap_or(o.partition_leader_epoch),
                )
            } else {
                let seq = if o.producer_id >= 0 && !is_control {
                    self.next_sequence
                } else {
                    -1
                };
                let epoch = if o.producer_id >= 0 {
                    o.producer_epoch
                } else {
                    -1
                };
                (o.producer_id, epoch, seq, o.partition_leader_epoch)
            };
            self.open = Some(Open {
                magic,
                compression: Some(compression),
                batch_key,
                base_offset,
                base_timestamp,
                max_timestamp: -1,
                timestamp_type: Some(timestamp_type),
                header_max_timestamp: if faithful {
                    Input::get(&input.max_timestamp, row)
                } else {
                    None
                },
                base_sequence,
                producer_id,
                producer_epoch,
                partition_leader_epoch: ple,
                is_transactional,
                is_control,
                delete_horizon: if faithful {
                    Input::get(&input.delete_horizon, row)
                } else {
                    None
                },
                control,
                buf: std::mem::take(&mut self.spare),
                ..Open::default()
            });
        }
        let open = self.open.as_mut().unwrap();
        if magic == 2 {
            let delta = offset.checked_sub(open.base_offset).unwrap_or(i64::MAX);
            let delta = i32::try_from(delta).map_err(|_| {
                Error::invalid_argument(format!(
                    "offset {offset} is too far from its batch's base offset"
                ))
            })?;
            v2::write_record(
                &mut open.buf,
                delta,
                timestamp.wrapping_sub(open.base_timestamp),
                key,
                value,
                headers.iter().copied(),
            );
        } else {
            // Inner (or single) message; for v1 wrappers the inner offsets count from the first.
            let inner_offset = if compression == Compression::None || magic == 0 {
                offset
            } else {
                offset
                    .checked_sub(open.base_offset)
                    .ok_or_else(|| Error::invalid_argument("offset out of range"))?
            };
            let attributes = if compression == Compression::None
                && timestamp_type == TimestampType::LogAppendTime
            {
                legacy::ATTR_TIMESTAMP_TYPE
            } else {
                0
            };
            legacy::write_entry(
                &mut open.buf,
                inner_offset,
                magic,
                attributes,
                timestamp,
                key,
                value,
            )?;
        }
        open.count += 1;
        open.last_offset = offset;
        open.max_timestamp = open.max_timestamp.max(timestamp);
        self.last_offset = Some(offset);
        self.next_offset = offset + 1;
        if open.base_sequence >= 0 && !faithful {
            self.next_sequence = increment_sequence(self.next_sequence, 1);
        }
        Ok(())
    }

    /// Finishes the open batch, if any.
    fn close(&mut self) -> Result<()> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let o = &self.options;
        let timestamp_type = open.timestamp_type.unwrap_or(TimestampType::CreateTime);
        let max_timestamp = match (open.header_max_timestamp, timestamp_type) {
            (Some(ts), _) => ts,
            // Rows read from LogAppendTime batches carry the append time as their timestamp;
            // fresh rows without one get the time of this write.
            (None, TimestampType::LogAppendTime) => {
                o.log_append_time.unwrap_or(if open.max_timestamp >= 0 {
                    open.max_timestamp
                } else {
                    self.write_time
                })
            }
            (None, _) => open.max_timestamp,
        };
        let compression = open.compression.unwrap_or(Compression::None);
        let start = self.out.len();
        let last_offset = match open.batch_key {
            Some((_, last)) => last,
            None => open.last_offset,
        };
        if open.magic == 2 {
            let header = BatchHeader {
                base_offset: open.base_offset,
                partition_leader_epoch: open.partition_leader_epoch,
                compression,
                timestamp_type,
                is_transactional: open.is_transactional,
                is_control: open.is_control,
                delete_horizon: open.delete_horizon.is_some(),
                last_offset_delta: i32::try_from(
                    last_offset
                        .checked_sub(open.base_offset)
                        .unwrap_or(i64::MAX),
                )
                .map_err(|_| Error::invalid_argument("batch spans more than 2^31 offsets"))?,
                base_timestamp: open.base_timestamp,
                max_timestamp,
                producer_id: open.producer_id,
                producer_epoch: open.producer_epoch,
                base_sequence: open.base_sequence,
            };
            v2::write_batch(
                &mut self.out,
                &header,
                &open.buf,
                open.count as i32,
                o.compression_level,
            )?;
        } else if compression == Compression::None {
            self.out.extend_from_slice(&open.buf);
        } else {
            let wrapper = Wrapper {
                offset: last_offset,
                magic: open.magic,
                compression,
                timestamp_type,
                timestamp: if open.magic == 0 { -1 } else { max_timestamp },
            };
            legacy::write_wrapper(&mut self.out, &wrapper, &open.buf, o.compression_level)?;
        }
        self.spare = open.buf;
        self.spare.clear();
        self.batches.push((
            start..self.out.len(),
            Encoded {
                magic: open.magic,
                base_offset: open.base_offset,
                last_offset,
                max_timestamp: if open.magic == 0 { -1 } else { max_timestamp },
                records: open.count,
                producer_id: open.producer_id,
                is_transactional: open.is_transactional,
                control: open.control,
            },
        ));
        Ok(())
    }

    /// Closes the last batch. Call once after the last [`Self::write`].
    pub fn finish(&mut self) -> Result<()> {
        self.close()
    }

    /// The batches encoded so far: their bytes (back to back) and what each is.
    pub fn take(&mut self) -> (Vec<u8>, Vec<(std::ops::Range<usize>, Encoded)>) {
        (
            std::mem::take(&mut self.out),
            std::mem::take(&mut self.batches),
        )
    }
}

/// Bytes of a v0/v1 log entry (Kafka's `LOG_OVERHEAD + LegacyRecord.recordSize`).
fn legacy_entry_size(magic: i8, key: Option<&[u8]>, value: Option<&[u8]>) -> usize {
    use crate::format::legacy::{MIN_MESSAGE_SIZE, MIN_MESSAGE_SIZE_V1};
    let overhead = if magic == 0 {
        MIN_MESSAGE_SIZE
    } else {
        MIN_MESSAGE_SIZE_V1
    };
    crate::format::legacy::LOG_OVERHEAD
        + overhead
        + key.map_or(0, <[u8]>::len)
        + value.map_or(0, <[u8]>::len)
}

/// Bytes of a batch before its records.
fn batch_header_size(magic: i8) -> usize {
    if magic == 2 {
        v2::HEADER_SIZE
    } else {
        crate::format::legacy::LOG_OVERHEAD + 22
    }
}

/// Kafka's `DefaultRecordBatch.decrementSequence`.
fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    // Java int arithmetic, which wraps.
    if sequence < decrement {
        i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1)
    } else {
        sequence.wrapping_sub(decrement)
    }
}
