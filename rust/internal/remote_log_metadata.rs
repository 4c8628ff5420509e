//! `__remote_log_metadata` folded as a broker's `RemoteLogMetadataCache` keeps it: each remote
//! segment's latest state, and the partitions whose remote data is being deleted. Tiered reads
//! take the served segments from it ([`COPY_SEGMENT_FINISHED`]).

use crate::arrow::schema::timestamp_type;
use crate::format::internal::schema::uuid_string;
use crate::format::internal::{Struct, Value};
use crate::internal::input::{i32_of, string_of, Source};
use arrow_array::builder::TimestampMicrosecondBuilder;
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A remote log segment's latest state, as `__remote_log_metadata` holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteSegmentState {
    /// The segment's id as Kafka prints a Uuid (base64url, 22 characters): the id in the
    /// names of the segment's objects.
    pub segment_id: String,
    /// Its topic.
    pub topic: String,
    /// Its topic's id as Kafka prints a Uuid: the id in the names of the topic's remote
    /// directories.
    pub topic_id: String,
    /// Its partition.
    pub partition: i32,
    /// Its first offset.
    pub start_offset: i64,
    /// Its last offset.
    pub end_offset: i64,
    /// `RemoteLogSegmentState`'s id: 0 COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED,
    /// 2 DELETE_SEGMENT_STARTED, 3 DELETE_SEGMENT_FINISHED.
    pub state: i64,
}

/// `RemoteLogSegmentState.COPY_SEGMENT_FINISHED`: the one state in which a broker serves a
/// remote segment's records.
pub const COPY_SEGMENT_FINISHED: i64 = 1;

/// What `__remote_log_metadata` holds, folded so far.
#[derive(Default)]
pub(super) struct RemoteLog {
    pub(super) remote_segments: BTreeMap<[u8; 16], RemoteRow>,
    /// `RemotePartitionDeleteMetadataRecord` states, by topic, topic id and partition (a
    /// topic deleted and created again under its name has a new id, and its own remote log).
    pub(super) partition_deletes: BTreeMap<(String, [u8; 16], i32), i64>,
}

#[derive(Clone, Debug)]
pub(super) struct RemoteRow {
    pub(super) topic: String,
    pub(super) topic_id: [u8; 16],
    pub(super) partition: i32,
    pub(super) start_offset: i64,
    pub(super) end_offset: i64,
    pub(super) broker_id: i32,
    pub(super) max_timestamp: i64,
    pub(super) event_timestamp: i64,
    pub(super) size: i32,
    pub(super) state: i64,
    pub(super) source: Source,
}

const SEGMENT_STATES: [&str; 4] = [
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
];

impl RemoteLog {
    /// A remote segment's latest state: its metadata record, then its updates.
    pub(super) fn apply(&mut self, d: &Struct<'_>, source: Source) {
        if let (Some(Value::Struct(tp)), Some(state)) = (
            d.get("topicIdPartition"),
            d.int("remotePartitionDeleteState"),
        ) {
            let key = (
                string_of(tp, "name").unwrap_or_default(),
                match tp.get("id") {
                    Some(Value::Uuid(u)) => *u,
                    _ => [0; 16],
                },
                i32_of(tp, "partition").unwrap_or(-1),
            );
            self.partition_deletes.insert(key, state);
            return;
        }
        let Some(Value::Struct(id)) = d.get("remoteLogSegmentId") else {
            return;
        };
        let (Some(Value::Uuid(segment)), Some(Value::Struct(tp))) =
            (id.get("id"), id.get("topicIdPartition"))
        else {
            return;
        };
        let state = d.int("remoteLogSegmentState").unwrap_or(-1);
        if d.get("startOffset").is_some() {
            self.remote_segments.insert(
                *segment,
                RemoteRow {
                    topic: string_of(tp, "name").unwrap_or_default(),
                    topic_id: match tp.get("id") {
                        Some(Value::Uuid(u)) => *u,
                        _ => [0; 16],
                    },
                    partition: i32_of(tp, "partition").unwrap_or(-1),
                    start_offset: d.int("startOffset").unwrap_or(-1),
                    end_offset: d.int("endOffset").unwrap_or(-1),
                    broker_id: i32_of(d, "brokerId").unwrap_or(-1),
                    max_timestamp: d.int("maxTimestampMs").unwrap_or(-1),
                    event_timestamp: d.int("eventTimestampMs").unwrap_or(-1),
                    size: i32_of(d, "segmentSizeInBytes").unwrap_or(-1),
                    state,
                    source,
                },
            );
        } else if let Some(seg) = self.remote_segments.get_mut(segment) {
            seg.state = state;
            seg.broker_id = i32_of(d, "brokerId").unwrap_or(seg.broker_id);
            seg.event_timestamp = d.int("eventTimestampMs").unwrap_or(seg.event_timestamp);
            seg.source = source;
        }
    }

    /// Each remote segment's latest state folded so far (of `__remote_log_metadata`).
    pub(super) fn segment_states(&self) -> Vec<RemoteSegmentState> {
        self.remote_segments
            .iter()
            .map(|(id, r)| RemoteSegmentState {
                segment_id: uuid_string(id),
                topic: r.topic.clone(),
                topic_id: uuid_string(&r.topic_id),
                partition: r.partition,
                start_offset: r.start_offset,
                end_offset: r.end_offset,
                state: r.state,
            })
            .collect()
    }

    /// The (topic, topic id, partition)s whose remote data is being or was deleted
    /// (`RemotePartitionDeleteMetadataRecord`, any state): a broker serves none of it. Kafka
    /// keys this by topic id, so a topic created again under the same name is not affected.
    pub(super) fn deleted_partitions(&self) -> Vec<(String, String, i32)> {
        self.partition_deletes
            .keys()
            .map(|(t, id, p)| (t.clone(), uuid_string(id), *p))
            .collect()
    }

    pub(super) fn table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let mut rows: Vec<(&[u8; 16], &RemoteRow)> = self.remote_segments.iter().collect();
        rows.sort_by(|(_, a), (_, b)| {
            (&a.topic, a.partition, a.start_offset).cmp(&(&b.topic, b.partition, b.start_offset))
        });
        let ids: Vec<String> = rows.iter().map(|(id, _)| uuid_string(id)).collect();
        let rows: Vec<&RemoteRow> = rows.into_iter().map(|(_, r)| r).collect();
        let ms = |t: i64| (t >= 0).then_some(t * 1000);
        let state = |s: i64| {
            SEGMENT_STATES
                .get(s as usize)
                .map(|s| s.to_string())
                .unwrap_or_else(|| format!("UNKNOWN({s})"))
        };
        let schema = Schema::new(vec![
            Field::new("topic", DataType::Utf8, false),
            Field::new("topicId", DataType::Utf8, false),
            Field::new("partition", DataType::Int32, false),
            Field::new("segmentId", DataType::Utf8, false),
            Field::new("startOffset", DataType::Int64, false),
            Field::new("endOffset", DataType::Int64, false),
            Field::new("state", DataType::Utf8, false),
            Field::new("brokerId", DataType::Int32, false),
            Field::new("maxTimestamp", timestamp_type(), true),
            Field::new("eventTimestamp", timestamp_type(), true),
            Field::new("segmentSizeInBytes", DataType::Int32, false),
            Field::new("sourcePartition", DataType::Int32, true),
            Field::new("sourceOffset", DataType::Int64, false),
        ]);
        let mut max_ts = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut event_ts = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        for r in &rows {
            max_ts.append_option(ms(r.max_timestamp));
            event_ts.append_option(ms(r.event_timestamp));
        }
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|r| r.topic.as_str()),
                )),
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|r| uuid_string(&r.topic_id)),
                )),
                Arc::new(arrow_array::Int32Array::from_iter_values(
                    rows.iter().map(|r| r.partition),
                )),
                Arc::new(arrow_array::StringArray::from(ids)),
                Arc::new(arrow_array::Int64Array::from_iter_values(
                    rows.iter().map(|r| r.start_offset),
                )),
                Arc::new(arrow_array::Int64Array::from_iter_values(
                    rows.iter().map(|r| r.end_offset),
                )),
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|r| state(r.state)),
                )),
                Arc::new(arrow_array::Int32Array::from_iter_values(
                    rows.iter().map(|r| r.broker_id),
                )),
                Arc::new(max_ts.finish()),
                Arc::new(event_ts.finish()),
                Arc::new(arrow_array::Int32Array::from_iter_values(
                    rows.iter().map(|r| r.size),
                )),
                Arc::new(arrow_array::Int32Array::from(
                    rows.iter().map(|r| r.source.partition).collect::<Vec<_>>(),
                )),
                Arc::new(arrow_array::Int64Array::from_iter_values(
                    rows.iter().map(|r| r.source.offset),
                )),
            ],
        )
    }
}
