//! Records one row each (`__cluster_metadata`'s KRaft records, and `__remote_log_metadata`'s
//! with `history`): type, version and fields as JSON, or the raw bytes of what does not
//! decode.

use crate::arrow::schema::timestamp_type;
use crate::internal::input::Row;
use arrow_array::builder::{BinaryBuilder, TimestampMicrosecondBuilder};
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

#[derive(Default)]
pub(super) struct RecordRows {
    pub(super) partition: Vec<Option<i32>>,
    pub(super) offset: Vec<i64>,
    pub(super) timestamp: Vec<Option<i64>>,
    pub(super) type_id: Vec<Option<i16>>,
    pub(super) name: Vec<Option<String>>,
    pub(super) version: Vec<Option<i16>>,
    pub(super) data: Vec<Option<String>>,
    pub(super) raw: Vec<Option<Vec<u8>>>,
}

impl RecordRows {
    pub(super) fn push(
        &mut self,
        row: &Row<'_>,
        type_id: Option<i16>,
        name: Option<(&str, i16)>,
        data: Option<String>,
    ) {
        let r = self;
        r.partition.push(row.source.partition);
        r.offset.push(row.source.offset);
        r.timestamp.push(row.source.timestamp);
        r.type_id.push(type_id);
        r.name.push(name.map(|(n, _)| n.to_string()));
        r.version.push(name.map(|(_, v)| v));
        r.raw.push(if data.is_none() {
            row.value.map(<[u8]>::to_vec)
        } else {
            None
        });
        r.data.push(data);
    }

    pub(super) fn table(&mut self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let r = std::mem::take(self);
        let mut ts = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        for t in &r.timestamp {
            ts.append_option(t.map(|t| t * 1000));
        }
        let mut raw = BinaryBuilder::new();
        for b in &r.raw {
            raw.append_option(b.as_deref());
        }
        let schema = Schema::new(vec![
            Field::new("partition", DataType::Int32, true),
            Field::new("offset", DataType::Int64, false),
            Field::new("timestamp", timestamp_type(), true),
            Field::new("type", DataType::Utf8, true),
            Field::new("typeId", DataType::Int16, true),
            Field::new("version", DataType::Int16, true),
            Field::new("data", DataType::Utf8, true),
            Field::new("raw", DataType::Binary, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(arrow_array::Int32Array::from(r.partition)),
                Arc::new(arrow_array::Int64Array::from(r.offset)),
                Arc::new(ts.finish()),
                Arc::new(arrow_array::StringArray::from(r.name)),
                Arc::new(arrow_array::Int16Array::from(r.type_id)),
                Arc::new(arrow_array::Int16Array::from(r.version)),
                Arc::new(arrow_array::StringArray::from(r.data)),
                Arc::new(raw.finish()),
            ],
        )
    }
}
