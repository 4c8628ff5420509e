//! Builds Arrow columns from decoded records: the hot loop of every read.
//!
//! [`RecordColumns`] is a [`RecordSink`]: the format layer hands it borrowed records and it
//! copies each requested field once, straight into the buffers that become the Arrow arrays.
//! Nothing is allocated per record, and columns nobody asked for cost nothing beyond a branch.
//! A batch that turns out corrupt half way can be rolled back ([`RecordColumns::truncate`]), so
//! skipping or stopping at a bad batch never leaves half of it in the output.

use super::output::Output;
use super::schema::{header_fields, Column, Projection};
use super::seek::FileBounds;
use crate::format::batch::{BatchInfo, Record, RecordSink, TimestampType};
use crate::format::control;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
    StructArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBufferBuilder, Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer,
};
use std::borrow::Cow;
use std::sync::Arc;

/// Variable-length bytes (binary or UTF-8) with their offsets and validity.
struct Bytes {
    offsets: Vec<i32>,
    data: Vec<u8>,
    nulls: NullBufferBuilder,
}

impl Bytes {
    fn new() -> Self {
        Bytes {
            offsets: vec![0],
            data: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }

    #[inline(always)]
    fn push(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => {
                self.data.extend_from_slice(v);
                self.nulls.append_non_null();
            }
            None => self.nulls.append_null(),
        }
        self.offsets.push(self.data.len() as i32);
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn truncate(&mut self, rows: usize) {
        self.data.truncate(self.offsets[rows] as usize);
        self.offsets.truncate(rows + 1);
        self.nulls.truncate(rows);
    }

    /// Hands the buffers over, starting the next ones at this batch's size: output batches
    /// are alike, and growing from nothing by doubling costs a copy of everything.
    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer, Option<arrow_buffer::NullBuffer>) {
        let mut next_offsets = Vec::with_capacity(self.offsets.len());
        next_offsets.push(0);
        let offsets = std::mem::replace(&mut self.offsets, next_offsets);
        let capacity = self.data.len();
        let data = std::mem::replace(&mut self.data, Vec::with_capacity(capacity));
        let nulls = self.nulls.finish();
        (
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(data),
            nulls,
        )
    }

    fn finish_binary(&mut self) -> ArrayRef {
        let (offsets, data, nulls) = self.take();
        Arc::new(BinaryArray::new(offsets, data, nulls))
    }

    fn finish_utf8(&mut self) -> ArrayRef {
        let (offsets, data, nulls) = self.take();
        // Only valid UTF-8 is pushed here (see `push_utf8_lossy`), so this check passes.
        Arc::new(StringArray::try_new(offsets, data, nulls).expect("UTF-8 validated on append"))
    }

    /// Header keys are UTF-8 by contract but Kafka does not check; invalid bytes are replaced
    /// with U+FFFD as Java's `new String(bytes, UTF_8)` does.
    #[inline]
    fn push_utf8_lossy(&mut self, value: &[u8]) {
        match String::from_utf8_lossy(value) {
            Cow::Borrowed(s) => self.push(Some(s.as_bytes())),
            Cow::Owned(s) => self.push(Some(s.as_bytes())),
        }
    }
}

/// A fixed-width column with optional nulls.
struct Prim<T> {
    values: Vec<T>,
    nulls: NullBufferBuilder,
}

impl<T: ArrowNativeType> Prim<T> {
    fn new() -> Self {
        Prim {
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }

    #[inline(always)]
    fn push(&mut self, v: T) {
        self.values.push(v);
        self.nulls.append_non_null();
    }

    #[inline(always)]
    fn push_opt(&mut self, v: Option<T>) {
        match v {
            Some(v) => self.push(v),
            None => {
                self.values.push(T::default());
                self.nulls.append_null();
            }
        }
    }

    fn truncate(&mut self, rows: usize) {
        self.values.truncate(rows);
        self.nulls.truncate(rows);
    }

    fn finish<P: arrow_array::ArrowPrimitiveType<Native = T>>(&mut self) -> PrimitiveArray<P> {
        let capacity = self.values.len();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(capacity));
        PrimitiveArray::new(ScalarBuffer::from(values), self.nulls.finish())
    }
}

struct Bools {
    values: BooleanBufferBuilder,
    nulls: NullBufferBuilder,
}

impl Bools {
    fn new() -> Self {
        Bools {
            values: BooleanBufferBuilder::new(0),
            nulls: NullBufferBuilder::new(0),
        }
    }
    #[inline(always)]
    fn push_opt(&mut self, v: Option<bool>) {
        self.values.append(v.unwrap_or(false));
        self.nulls.append(v.is_some());
    }
    fn truncate(&mut self, rows: usize) {
        self.values.truncate(rows);
        self.nulls.truncate(rows);
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(BooleanArray::new(self.values.finish(), self.nulls.finish()))
    }
}

/// `list<struct<key, value>>`: per record a list of headers, null when there are none (as in
/// Spark's Kafka source).
///
/// Which lists are null follows from the offsets (a record without headers adds none), so it
/// is worked out once per output batch instead of record by record.
struct HeaderList {
    offsets: Vec<i32>,
    keys: Bytes,
    values: Bytes,
}

impl HeaderList {
    fn new() -> Self {
        HeaderList {
            offsets: vec![0],
            keys: Bytes::new(),
            values: Bytes::new(),
        }
    }

    #[inline(always)]
    fn push(&mut self, record: &Record<'_>) {
        for (key, value) in record.headers.iter() {
            self.keys.push_utf8_lossy(key);
            self.values.push(value);
        }
        self.offsets.push(self.keys.len() as i32);
    }

    fn truncate(&mut self, rows: usize) {
        let items = self.offsets[rows] as usize;
        self.keys.truncate(items);
        self.values.truncate(items);
        self.offsets.truncate(rows + 1);
    }

    fn finish(&mut self) -> ArrayRef {
        let nulls: arrow_buffer::NullBuffer =
            self.offsets.windows(2).map(|w| w[1] > w[0]).collect();
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let entries = StructArray::new(
            header_fields(),
            vec![self.keys.finish_utf8(), self.values.finish_binary()],
            None,
        );
        let mut next = Vec::with_capacity(self.offsets.len());
        next.push(0);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(
            &mut self.offsets,
            next,
        )));
        let field = match super::schema::headers_type() {
            arrow_schema::DataType::List(f) => f,
            _ => unreachable!("headers are a list"),
        };
        Arc::new(ListArray::new(field, offsets, Arc::new(entries), nulls))
    }
}

/// The per-file constants of the `topic` and `partition` columns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin {
    pub topic: Option<String>,
    pub partition: Option<i32>,
}

/// Which batches' records reach the output.
#[derive(Clone, Debug, Default)]
pub struct RecordFilter {
    /// Return the records of control batches (transaction markers, KRaft control records).
    /// `read_committed` hides them whatever this says, as Kafka's consumer does.
    pub include_control: bool,
}

/// Column buffers for one output batch, filled record by record.
pub struct RecordColumns {
    projection: Projection,
    pub(crate) origin: Origin,
    pub(crate) filter: RecordFilter,
    /// Offsets kept, and the transactions to drop for `read_committed`.
    bounds: FileBounds,
    /// A batch at or after the end offset was seen.
    past_end: bool,
    rows: usize,
    /// Whether any batch-metadata column is asked for.
    any_metadata: bool,
    key: Option<Bytes>,
    value: Option<Bytes>,
    offset: Option<Prim<i64>>,
    timestamp: Option<Prim<i64>>,
    timestamp_type: Option<Prim<i32>>,
    headers: Option<HeaderList>,
    base_offset: Option<Prim<i64>>,
    last_offset: Option<Prim<i64>>,
    batch_position: Option<Prim<i64>>,
    batch_size: Option<Prim<i32>>,
    magic: Option<Prim<i8>>,
    compression: Option<Bytes>,
    crc_valid: Option<Bools>,
    producer_id: Option<Prim<i64>>,
    producer_epoch: Option<Prim<i16>>,
    sequence: Option<Prim<i32>>,
    partition_leader_epoch: Option<Prim<i32>>,
    is_transactional: Option<Bools>,
    is_control: Option<Bools>,
    base_timestamp: Option<Prim<i64>>,
    max_timestamp: Option<Prim<i64>>,
    delete_horizon: Option<Prim<i64>>,
    control_type: Option<Prim<i16>>,
    record_crc: Option<Prim<i64>>,
    record_crc_valid: Option<Bools>,
}

fn when<T>(p: &Projection, c: Column, make: fn() -> T) -> Option<T> {
    p.contains(c).then(make)
}

impl RecordColumns {
    pub fn new(projection: Projection, origin: Origin, filter: RecordFilter) -> Self {
        Self::with_bounds(projection, origin, filter, FileBounds::all())
    }

    pub fn with_bounds(
        projection: Projection,
        origin: Origin,
        filter: RecordFilter,
        bounds: FileBounds,
    ) -> Self {
        let p = &projection;
        RecordColumns {
            bounds,
            past_end: false,
            key: when(p, Column::Key, Bytes::new),
            value: when(p, Column::Value, Bytes::new),
            offset: when(p, Column::Offset, Prim::new),
            timestamp: when(p, Column::Timestamp, Prim::new),
            timestamp_type: when(p, Column::TimestampType, Prim::new),
            headers: when(p, Column::Headers, HeaderList::new),
            base_offset: when(p, Column::BaseOffset, Prim::new),
            last_offset: when(p, Column::LastOffset, Prim::new),
            batch_position: when(p, Column::BatchPosition, Prim::new),
            batch_size: when(p, Column::BatchSize, Prim::new),
            magic: when(p, Column::Magic, Prim::new),
            compression: when(p, Column::Compression, Bytes::new),
            crc_valid: when(p, Column::CrcValid, Bools::new),
            producer_id: when(p, Column::ProducerId, Prim::new),
            producer_epoch: when(p, Column::ProducerEpoch, Prim::new),
            sequence: when(p, Column::Sequence, Prim::new),
            partition_leader_epoch: when(p, Column::PartitionLeaderEpoch, Prim::new),
            is_transactional: when(p, Column::IsTransactional, Bools::new),
            is_control: when(p, Column::IsControl, Bools::new),
            base_timestamp: when(p, Column::BaseTimestamp, Prim::new),
            max_timestamp: when(p, Column::MaxTimestamp, Prim::new),
            delete_horizon: when(p, Column::DeleteHorizonMs, Prim::new),
            control_type: when(p, Column::ControlType, Prim::new),
            record_crc: when(p, Column::RecordCrc, Prim::new),
            record_crc_valid: when(p, Column::RecordCrcValid, Bools::new),
            any_metadata: Column::METADATA.iter().any(|c| p.contains(*c)),
            projection,
            origin,
            filter,
            rows: 0,
        }
    }

    pub fn projection(&self) -> &Projection {
        &self.projection
    }
}

impl Output for RecordColumns {
    fn rows(&self) -> usize {
        self.rows
    }

    fn schema(&self) -> arrow_schema::SchemaRef {
        self.projection.schema()
    }

    fn truncate(&mut self, rows: usize) {
        if rows >= self.rows {
            return;
        }
        macro_rules! cut {
            ($($col:ident),*) => { $( if let Some(c) = &mut self.$col { c.truncate(rows); } )* };
        }
        cut!(
            key,
            value,
            offset,
            timestamp,
            timestamp_type,
            headers,
            base_offset,
            last_offset,
            batch_position,
            batch_size,
            magic,
            compression,
            crc_valid,
            producer_id,
            producer_epoch,
            sequence,
            partition_leader_epoch,
            is_transactional,
            is_control,
            base_timestamp,
            max_timestamp,
            delete_horizon,
            control_type,
            record_crc,
            record_crc_valid
        );
        self.rows = rows;
    }

    fn past_end(&self) -> bool {
        self.past_end
    }

    fn finish(&mut self) -> RecordBatch {
        let rows = self.rows;
        let origin = self.origin.clone();
        let columns: Vec<ArrayRef> = self
            .projection
            .columns()
            .to_vec()
            .into_iter()
            .map(|c| -> ArrayRef {
                match c {
                    Column::Key => self.key.as_mut().unwrap().finish_binary(),
                    Column::Value => self.value.as_mut().unwrap().finish_binary(),
                    Column::Topic => Arc::new(match &origin.topic {
                        Some(t) => StringArray::from_iter_values(std::iter::repeat_n(t, rows)),
                        None => StringArray::new_null(rows),
                    }),
                    Column::Partition => Arc::new(PrimitiveArray::<Int32Type>::from(vec![
                            origin.partition;
                            rows
                        ])),
                    Column::Offset => Arc::new(self.offset.as_mut().unwrap().finish::<Int64Type>()),
                    Column::Timestamp => Arc::new(
                        self.timestamp
                            .as_mut()
                            .unwrap()
                            .finish::<TimestampMicrosecondType>()
                            .with_timezone("UTC"),
                    ),
                    Column::TimestampType => {
                        Arc::new(self.timestamp_type.as_mut().unwrap().finish::<Int32Type>())
                    }
                    Column::Headers => self.headers.as_mut().unwrap().finish(),
                    Column::BaseOffset => {
                        Arc::new(self.base_offset.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::LastOffset => {
                        Arc::new(self.last_offset.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::BatchPosition => {
                        Arc::new(self.batch_position.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::BatchSize => {
                        Arc::new(self.batch_size.as_mut().unwrap().finish::<Int32Type>())
                    }
                    Column::Magic => Arc::new(self.magic.as_mut().unwrap().finish::<Int8Type>()),
                    Column::Compression => self.compression.as_mut().unwrap().finish_utf8(),
                    Column::CrcValid => self.crc_valid.as_mut().unwrap().finish(),
                    Column::ProducerId => {
                        Arc::new(self.producer_id.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::ProducerEpoch => {
                        Arc::new(self.producer_epoch.as_mut().unwrap().finish::<Int16Type>())
                    }
                    Column::Sequence => {
                        Arc::new(self.sequence.as_mut().unwrap().finish::<Int32Type>())
                    }
                    Column::PartitionLeaderEpoch => Arc::new(
                        self.partition_leader_epoch
                            .as_mut()
                            .unwrap()
                            .finish::<Int32Type>(),
                    ),
                    Column::IsTransactional => self.is_transactional.as_mut().unwrap().finish(),
                    Column::IsControl => self.is_control.as_mut().unwrap().finish(),
                    Column::BaseTimestamp => {
                        Arc::new(self.base_timestamp.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::MaxTimestamp => {
                        Arc::new(self.max_timestamp.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::DeleteHorizonMs => {
                        Arc::new(self.delete_horizon.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::ControlType => {
                        Arc::new(self.control_type.as_mut().unwrap().finish::<Int16Type>())
                    }
                    Column::RecordCrc => {
                        Arc::new(self.record_crc.as_mut().unwrap().finish::<Int64Type>())
                    }
                    Column::RecordCrcValid => self.record_crc_valid.as_mut().unwrap().finish(),
                }
            })
            .collect();
        self.rows = 0;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.projection.schema(), columns, &options)
            .expect("columns are built to the projection's schema")
    }
}

impl RecordSink for RecordColumns {
    #[inline]
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        if self.bounds.end.is_some_and(|end| batch.base_offset >= end) {
            self.past_end = true;
            return false;
        }
        if batch.last_offset < self.bounds.start {
            return false;
        }
        match &self.bounds.transactions {
            // read_committed: control records hidden, aborted transactions dropped.
            Some(txns) => {
                !(batch.is_control
                    || batch.is_transactional
                        && txns.is_aborted(batch.producer_id, batch.base_offset))
            }
            None => !batch.is_control || self.filter.include_control,
        }
    }

    #[inline(always)]
    fn record(&mut self, batch: &BatchInfo, r: &Record<'_>) {
        if r.offset < self.bounds.start || self.bounds.end.is_some_and(|end| r.offset >= end) {
            return;
        }
        self.rows += 1;
        if let Some(c) = &mut self.key {
            c.push(r.key);
        }
        if let Some(c) = &mut self.value {
            c.push(r.value);
        }
        if let Some(c) = &mut self.offset {
            c.push(r.offset);
        }
        if let Some(c) = &mut self.timestamp {
            // -1 is Kafka's "no timestamp"; magic 0 has none at all.
            let none = r.timestamp == -1 || batch.timestamp_type == TimestampType::NoTimestamp;
            c.push_opt((!none).then(|| r.timestamp.saturating_mul(1000)));
        }
        if let Some(c) = &mut self.timestamp_type {
            c.push(batch.timestamp_type as i32);
        }
        if let Some(c) = &mut self.headers {
            c.push(r);
        }
        if self.any_metadata {
            self.push_metadata(batch, r);
        }
    }
}

impl RecordColumns {
    fn push_metadata(&mut self, b: &BatchInfo, r: &Record<'_>) {
        macro_rules! put {
            ($col:ident, $v:expr) => {
                if let Some(c) = &mut self.$col {
                    c.push($v);
                }
            };
        }
        put!(base_offset, b.base_offset);
        put!(last_offset, b.last_offset);
        put!(batch_position, b.position as i64);
        put!(batch_size, b.size as i32);
        put!(magic, b.magic);
        if let Some(c) = &mut self.compression {
            c.push(Some(b.compression.name().as_bytes()));
        }
        if let Some(c) = &mut self.crc_valid {
            c.push_opt(b.crc_valid);
        }
        put!(producer_id, b.producer_id);
        put!(producer_epoch, b.producer_epoch);
        put!(sequence, r.sequence);
        put!(partition_leader_epoch, b.partition_leader_epoch);
        if let Some(c) = &mut self.is_transactional {
            c.push_opt(Some(b.is_transactional));
        }
        if let Some(c) = &mut self.is_control {
            c.push_opt(Some(b.is_control));
        }
        put!(base_timestamp, b.base_timestamp);
        put!(max_timestamp, b.max_timestamp);
        if let Some(c) = &mut self.delete_horizon {
            c.push_opt(b.delete_horizon_ms());
        }
        if let Some(c) = &mut self.control_type {
            let kind = if b.is_control {
                control::parse_key(r.key).ok().map(|t| t.id())
            } else {
                None
            };
            c.push_opt(kind);
        }
        if let Some(c) = &mut self.record_crc {
            c.push_opt(r.legacy_crc.map(|(crc, _)| crc as i64));
        }
        if let Some(c) = &mut self.record_crc_valid {
            c.push_opt(
                r.legacy_crc
                    .map(|(crc, covered)| crate::format::crc::crc32(covered) == crc),
            );
        }
    }
}
