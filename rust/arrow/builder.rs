//! Builds Arrow columns from decoded records: the hot loop of every read.
//!
//! [`RecordColumns`] is a [`RecordSink`]: the format layer hands it borrowed records and it
//! copies each requested field once, straight into the buffers that become the Arrow arrays.
//! Nothing is allocated per record, and columns nobody asked for cost nothing beyond a branch.
//! A batch that turns out corrupt half way can be rolled back ([`RecordColumns::truncate`]), so
//! skipping or stopping at a bad batch never leaves half of it in the output.

use crate::arrow::output::Output;
use crate::arrow::schema::{header_fields, Column, Projection};
use crate::arrow::views::{Sources, Views};
use crate::format::batch::{
    BatchDecoder, BatchInfo, ByteSpan, Headers, Record, RecordRun, RecordSink, TimestampType,
};
use crate::format::control;
use crate::log::bounds::FileBounds;
use crate::log::origin::Origin;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
    StructArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer, NullBufferBuilder,
    OffsetBuffer, ScalarBuffer,
};
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

    /// Appends the fields `spans` point at in `buf` (a run of records).
    #[inline]
    fn extend(&mut self, buf: &[u8], spans: impl ExactSizeIterator<Item = ByteSpan> + Clone) {
        let n = spans.len();
        self.offsets.reserve(n);
        let mut nulls = false;
        for span in spans.clone() {
            if span.is_null() {
                nulls = true;
            } else {
                append(&mut self.data, buf, span.start as usize, span.len as usize);
            }
            self.offsets.push(self.data.len() as i32);
        }
        if nulls {
            for span in spans {
                self.nulls.append(!span.is_null());
            }
        } else {
            self.nulls.append_n_non_nulls(n);
        }
    }

    /// Appends the field `span` points at in `buf`.
    #[inline(always)]
    fn push_span(&mut self, buf: &[u8], span: ByteSpan) {
        if span.is_null() {
            self.nulls.append_null();
        } else {
            append(&mut self.data, buf, span.start as usize, span.len as usize);
            self.nulls.append_non_null();
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

    /// A string array of the bytes pushed. Header keys are UTF-8 by contract but Kafka does
    /// not check: where any value is not, invalid bytes are replaced with U+FFFD as Java's
    /// `new String(bytes, UTF_8)` does. Checking the whole column at once (as Arrow does) is
    /// much cheaper than value by value, and almost always passes.
    fn finish_utf8(&mut self) -> ArrayRef {
        let (offsets, data, nulls) = self.take();
        match StringArray::try_new(offsets.clone(), data.clone(), nulls.clone()) {
            Ok(array) => Arc::new(array),
            Err(_) => {
                let binary = BinaryArray::new(offsets, data, nulls);
                let lossy: StringArray = binary
                    .iter()
                    .map(|v| v.map(String::from_utf8_lossy))
                    .collect();
                Arc::new(lossy)
            }
        }
    }
}

/// Appends `buf[start..start + len]` to `out`.
///
/// Keys and values are mostly short, and a call to `memcpy` for each costs more than the copy
/// itself. Where `buf` goes on far enough, whole blocks of a fixed size are copied instead (which
/// compiles to a few vector moves) and `out` is cut back to the field's end.
#[inline(always)]
fn append(out: &mut Vec<u8>, buf: &[u8], start: usize, len: usize) {
    const BLOCK: usize = 32;
    let end = out.len() + len;
    if len <= 4 * BLOCK && start + len.next_multiple_of(BLOCK) <= buf.len() {
        let mut at = start;
        while at < start + len {
            let block: &[u8; BLOCK] = buf[at..at + BLOCK].try_into().unwrap();
            out.extend_from_slice(block);
            at += BLOCK;
        }
        out.truncate(end);
    } else {
        out.extend_from_slice(&buf[start..start + len]);
    }
}

/// A `key` or `value` column: copies (`binary`), or views into the bytes read (`binary_view`,
/// see `views.rs`).
enum KeyValue {
    Binary(Bytes),
    Views(Views),
}

impl KeyValue {
    fn new(binary_view: bool) -> Self {
        if binary_view {
            KeyValue::Views(Views::new())
        } else {
            KeyValue::Binary(Bytes::new())
        }
    }

    #[inline(always)]
    fn push(&mut self, value: Option<&[u8]>, sources: &mut Sources) {
        match self {
            KeyValue::Binary(c) => c.push(value),
            KeyValue::Views(c) => c.push(value, sources),
        }
    }

    /// Appends the fields `spans` point at in `buf`; `at` is where `buf` lies among the sources
    /// (for views).
    #[inline]
    fn extend(
        &mut self,
        buf: &[u8],
        at: Option<crate::arrow::views::Located>,
        spans: impl ExactSizeIterator<Item = ByteSpan> + Clone,
    ) {
        match self {
            KeyValue::Binary(c) => c.extend(buf, spans),
            KeyValue::Views(c) => c.extend(buf, at, spans),
        }
    }

    fn truncate(&mut self, rows: usize) {
        match self {
            KeyValue::Binary(c) => c.truncate(rows),
            KeyValue::Views(c) => c.truncate(rows),
        }
    }

    fn finish(&mut self, sources: &Sources) -> ArrayRef {
        match self {
            KeyValue::Binary(c) => c.finish_binary(),
            KeyValue::Views(c) => c.finish(sources),
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

    /// Appends values none of which is null.
    #[inline]
    fn extend(&mut self, values: impl ExactSizeIterator<Item = T>) {
        let n = values.len();
        self.values.extend(values);
        self.nulls.append_n_non_nulls(n);
    }

    /// Appends values, some maybe null: one pass for the values, and a second for their
    /// validity only where a null turned up.
    #[inline]
    fn extend_opt(&mut self, values: impl ExactSizeIterator<Item = Option<T>> + Clone) {
        let (n, mut nulls) = (values.len(), false);
        self.values.extend(values.clone().map(|v| {
            nulls |= v.is_none();
            v.unwrap_or_default()
        }));
        if nulls {
            for v in values {
                self.nulls.append(v.is_some());
            }
        } else {
            self.nulls.append_n_non_nulls(n);
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
    fn push(&mut self, headers: Headers<'_>) {
        for (key, value) in headers.iter() {
            self.keys.push(Some(key));
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
        let rows = self.offsets.len() - 1;
        let nulls = if self.keys.len() == 0 {
            Some(NullBuffer::new_null(rows))
        } else {
            let o = &self.offsets;
            let valid = BooleanBuffer::collect_bool(rows, |i| o[i + 1] > o[i]);
            Some(NullBuffer::new(valid)).filter(|n| n.null_count() > 0)
        };
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
        let field = match crate::arrow::schema::headers_type() {
            arrow_schema::DataType::List(f) => f,
            _ => unreachable!("headers are a list"),
        };
        Arc::new(ListArray::new(field, offsets, Arc::new(entries), nulls))
    }
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
    /// Whether `key` and `value` are views (`binary_view`), and the buffers they point into.
    binary_view: bool,
    sources: Sources,
    key: Option<KeyValue>,
    value: Option<KeyValue>,
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
    /// Empty columns for `projection`, keeping every offset (no bounds).
    pub fn new(projection: Projection, origin: Origin, filter: RecordFilter) -> Self {
        Self::with_bounds(projection, origin, filter, FileBounds::all())
    }

    /// Empty columns for `projection` that keep only records within `bounds` (offset range,
    /// and for `read_committed` the partition's aborted transactions).
    pub fn with_bounds(
        projection: Projection,
        origin: Origin,
        filter: RecordFilter,
        bounds: FileBounds,
    ) -> Self {
        let p = &projection;
        let binary_view = p.binary_view();
        RecordColumns {
            bounds,
            past_end: false,
            binary_view,
            sources: Sources::default(),
            key: p.contains(Column::Key).then(|| KeyValue::new(binary_view)),
            value: p
                .contains(Column::Value)
                .then(|| KeyValue::new(binary_view)),
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

    /// The columns being filled.
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// Starts over for another input, keeping the buffers; rows not finished are dropped.
    pub fn restart(&mut self, origin: Origin, bounds: FileBounds) {
        self.truncate(0);
        self.sources = Sources::default();
        self.origin = origin;
        self.bounds = bounds;
        self.past_end = false;
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
        if rows == 0 {
            self.sources.finish();
        }
        self.rows = rows;
    }

    fn set_backing(&mut self, buffer: Option<Buffer>) {
        if self.binary_view {
            self.sources.set_backing(buffer);
        }
    }

    fn adopt_decompressed(&mut self, batches: &mut BatchDecoder) {
        self.sources.adopt(batches);
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
                    Column::Key => self.key.as_mut().unwrap().finish(&self.sources),
                    Column::Value => self.value.as_mut().unwrap().finish(&self.sources),
                    Column::Topic => Arc::new(match &origin.topic {
                        Some(t) => repeated_string(t, rows),
                        None => StringArray::new_null(rows),
                    }),
                    Column::Partition => Arc::new(match origin.partition {
                        Some(p) => PrimitiveArray::<Int32Type>::from_value(p, rows),
                        None => PrimitiveArray::<Int32Type>::new_null(rows),
                    }),
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
        self.sources.finish();
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.projection.schema(), columns, &options)
            .expect("columns are built to the projection's schema")
    }
}

/// Kafka's milliseconds as the `timestamp` column's microseconds; -1 is Kafka's "no timestamp".
#[inline(always)]
fn micros(millis: i64) -> Option<i64> {
    (millis != -1).then(|| millis.saturating_mul(1000))
}

/// `value` repeated `rows` times.
fn repeated_string(value: &str, rows: usize) -> StringArray {
    let len = value.len();
    let offsets: Vec<i32> = (0..=rows).map(|i| (i * len) as i32).collect();
    StringArray::new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Buffer::from_vec(value.repeat(rows).into_bytes()),
        None,
    )
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

    #[inline]
    fn records(&mut self, batch: &BatchInfo, run: &RecordRun<'_>) {
        if self.all_in_bounds(batch, run) {
            self.push_run(batch, run);
        } else {
            for i in 0..run.len() {
                self.record(batch, &run.record(batch, i));
            }
        }
    }

    #[inline(always)]
    fn record(&mut self, batch: &BatchInfo, r: &Record<'_>) {
        if r.offset < self.bounds.start || self.bounds.end.is_some_and(|end| r.offset >= end) {
            return;
        }
        self.rows += 1;
        if let Some(c) = &mut self.key {
            c.push(r.key, &mut self.sources);
        }
        if let Some(c) = &mut self.value {
            c.push(r.value, &mut self.sources);
        }
        if let Some(c) = &mut self.offset {
            c.push(r.offset);
        }
        if let Some(c) = &mut self.timestamp {
            // Magic 0 has no timestamps at all.
            let none = batch.timestamp_type == TimestampType::NoTimestamp;
            c.push_opt(micros(r.timestamp).filter(|_| !none));
        }
        if let Some(c) = &mut self.timestamp_type {
            c.push(batch.timestamp_type as i32);
        }
        if let Some(c) = &mut self.headers {
            c.push(r.headers);
        }
        if self.any_metadata {
            self.push_metadata(batch, r);
        }
    }

    #[inline]
    fn decompressed(&mut self, bytes: &[u8]) {
        if self.binary_view {
            self.sources.decompressed(bytes);
        }
    }
}

impl RecordColumns {
    /// Whether every record of `run` lies inside the offset bounds.
    fn all_in_bounds(&self, batch: &BatchInfo, run: &RecordRun<'_>) -> bool {
        let (start, end) = (self.bounds.start, self.bounds.end.unwrap_or(i64::MAX));
        if start == i64::MIN && self.bounds.end.is_none() {
            return true;
        }
        run.spans.iter().all(|s| {
            let offset = RecordRun::offset(batch, s);
            offset >= start && offset < end
        })
    }

    /// Appends a whole run of records a column at a time: each loop is short and keeps its
    /// state in registers, where going record by record touches every column for each.
    fn push_run(&mut self, batch: &BatchInfo, run: &RecordRun<'_>) {
        let (buf, spans) = (run.bytes, run.spans);
        self.rows += spans.len();
        // Views: where the run's bytes lie, once for all of its keys and values, when any of
        // them is too long to inline (else a buffer nothing points into would be kept).
        let long = |s: &ByteSpan| s.len > crate::arrow::views::INLINE as i32;
        let at = if self.binary_view && spans.iter().any(|s| long(&s.key) || long(&s.value)) {
            self.sources.locate(buf)
        } else {
            None
        };
        if let Some(c) = &mut self.key {
            c.extend(buf, at, spans.iter().map(|s| s.key));
        }
        if let Some(c) = &mut self.value {
            c.extend(buf, at, spans.iter().map(|s| s.value));
        }
        if let Some(c) = &mut self.offset {
            c.extend(spans.iter().map(|s| RecordRun::offset(batch, s)));
        }
        if let Some(c) = &mut self.timestamp {
            c.extend_opt(spans.iter().map(|s| micros(RecordRun::timestamp(batch, s))));
        }
        if let Some(c) = &mut self.timestamp_type {
            c.extend(std::iter::repeat_n(
                batch.timestamp_type as i32,
                spans.len(),
            ));
        }
        if let Some(c) = &mut self.headers {
            for s in spans {
                for (key, value) in run.header_spans(s) {
                    c.keys.push_span(buf, key);
                    c.values.push_span(buf, value);
                }
                c.offsets.push(c.keys.len() as i32);
            }
        }
        if self.any_metadata {
            for i in 0..spans.len() {
                self.push_metadata(batch, &run.record(batch, i));
            }
        }
    }

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
