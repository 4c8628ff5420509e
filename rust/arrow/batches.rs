//! One row per batch instead of per record: what `kafka-dump-log` prints without
//! `--deep-iteration`. Records are not decoded (v0/v1 wrappers are decompressed, as Kafka must
//! to know their base offset), so listing a segment costs little more than reading it.

use crate::arrow::output::Output;
use crate::format::batch::{BatchInfo, Record, RecordSink};
use crate::log::origin::Origin;
use arrow_array::{
    ArrayRef, BooleanArray, Int16Array, Int32Array, Int64Array, Int8Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::{Arc, OnceLock};

/// The schema of a batch listing.
pub fn batch_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let f = |name, ty, nullable| Field::new(name, ty, nullable);
            Arc::new(Schema::new(vec![
                f("topic", DataType::Utf8, true),
                f("partition", DataType::Int32, true),
                f("batchPosition", DataType::Int64, false),
                f("batchSize", DataType::Int32, false),
                f("magic", DataType::Int8, false),
                f("baseOffset", DataType::Int64, false),
                f("lastOffset", DataType::Int64, false),
                f("recordCount", DataType::Int32, false),
                f("crc", DataType::Int64, false),
                f("crcValid", DataType::Boolean, true),
                f("compression", DataType::Utf8, false),
                f("timestampType", DataType::Int32, false),
                f("baseTimestamp", DataType::Int64, false),
                f("maxTimestamp", DataType::Int64, false),
                f("partitionLeaderEpoch", DataType::Int32, false),
                f("producerId", DataType::Int64, false),
                f("producerEpoch", DataType::Int16, false),
                f("baseSequence", DataType::Int32, false),
                f("lastSequence", DataType::Int32, false),
                f("isTransactional", DataType::Boolean, false),
                f("isControl", DataType::Boolean, false),
                f("deleteHorizonMs", DataType::Int64, true),
            ]))
        })
        .clone()
}

/// Collects batch headers; skips every record.
pub struct BatchColumns {
    origin: Origin,
    rows: Vec<BatchInfo>,
    /// Batches with no offset in `[start, end)` are not listed (`end` `None`: no end).
    within: (i64, Option<i64>),
}

impl BatchColumns {
    /// An empty listing whose rows carry `origin`'s topic and partition.
    pub fn new(origin: Origin) -> Self {
        BatchColumns {
            origin,
            rows: Vec::new(),
            within: (i64::MIN, None),
        }
    }

    /// Lists only batches holding an offset in `[start, end)`.
    pub fn within(mut self, start: i64, end: Option<i64>) -> Self {
        self.within = (start, end);
        self
    }
}

impl RecordSink for BatchColumns {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        let (start, end) = self.within;
        if batch.last_offset >= start && end.is_none_or(|e| batch.base_offset < e) {
            self.rows.push(batch.clone());
        }
        false
    }

    fn record(&mut self, _: &BatchInfo, _: &Record<'_>) {}
}

impl Output for BatchColumns {
    fn rows(&self) -> usize {
        self.rows.len()
    }

    fn truncate(&mut self, rows: usize) {
        self.rows.truncate(rows);
    }

    fn schema(&self) -> SchemaRef {
        batch_schema()
    }

    fn finish(&mut self) -> RecordBatch {
        let rows = std::mem::take(&mut self.rows);
        let n = rows.len();
        fn col<T, A: From<Vec<T>> + arrow_array::Array + 'static>(
            rows: &[BatchInfo],
            f: impl Fn(&BatchInfo) -> T,
        ) -> ArrayRef {
            Arc::new(A::from(rows.iter().map(f).collect::<Vec<T>>()))
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![self.origin.topic.clone(); n])),
            Arc::new(Int32Array::from(vec![self.origin.partition; n])),
            col::<i64, Int64Array>(&rows, |b| b.position as i64),
            col::<i32, Int32Array>(&rows, |b| b.size as i32),
            col::<i8, Int8Array>(&rows, |b| b.magic),
            col::<i64, Int64Array>(&rows, |b| b.base_offset),
            col::<i64, Int64Array>(&rows, |b| b.last_offset),
            col::<i32, Int32Array>(&rows, |b| b.record_count),
            col::<i64, Int64Array>(&rows, |b| b.crc as i64),
            col::<Option<bool>, BooleanArray>(&rows, |b| b.crc_valid),
            col::<&str, StringArray>(&rows, |b| b.compression.name()),
            col::<i32, Int32Array>(&rows, |b| b.timestamp_type as i32),
            col::<i64, Int64Array>(&rows, |b| b.base_timestamp),
            col::<i64, Int64Array>(&rows, |b| b.max_timestamp),
            col::<i32, Int32Array>(&rows, |b| b.partition_leader_epoch),
            col::<i64, Int64Array>(&rows, |b| b.producer_id),
            col::<i16, Int16Array>(&rows, |b| b.producer_epoch),
            col::<i32, Int32Array>(&rows, |b| b.base_sequence),
            col::<i32, Int32Array>(&rows, |b| b.last_sequence()),
            col::<bool, BooleanArray>(&rows, |b| b.is_transactional),
            col::<bool, BooleanArray>(&rows, |b| b.is_control),
            col::<Option<i64>, Int64Array>(&rows, |b| b.delete_horizon_ms()),
        ];
        RecordBatch::try_new(batch_schema(), columns).expect("columns follow batch_schema")
    }
}
