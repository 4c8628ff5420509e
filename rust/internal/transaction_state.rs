//! `__transaction_state` folded as the transaction coordinator loads it: one row per
//! transactional id, its latest state.

use crate::arrow::schema::timestamp_type;
use crate::error::Result;
use crate::format::internal::dump::topic_partitions;
use crate::format::internal::{self as internal, DecodeError, Parsed};
use crate::internal::input::{i32_of, string_of, Row, Source};
use arrow_array::builder::{
    Int16Builder, Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Fields, Schema};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What `__transaction_state` holds, folded so far.
#[derive(Default)]
pub(super) struct TransactionLog {
    pub(super) transactions: BTreeMap<String, TxnRow>,
}

#[derive(Clone, Debug)]
pub(super) struct TxnRow {
    pub(super) producer_id: i64,
    pub(super) previous_producer_id: Option<i64>,
    pub(super) next_producer_id: Option<i64>,
    pub(super) producer_epoch: i16,
    pub(super) timeout_ms: i32,
    pub(super) state: String,
    pub(super) partitions: Vec<(String, i32)>,
    pub(super) last_update: i64,
    pub(super) start: i64,
    pub(super) client_transaction_version: i16,
    pub(super) source: Source,
}

impl TransactionLog {
    pub(super) fn record(
        &mut self,
        row: &Row<'_>,
    ) -> Result<Option<String>, (String, DecodeError)> {
        let Some(key) = row.key else {
            return Ok(Some(format!(
                "__transaction_state record at offset {} has no key",
                row.source.offset
            )));
        };
        let id = match internal::transaction_key(key)
            .map_err(|e| ("TransactionLogKey".to_string(), e))?
        {
            Parsed::Known(k) => string_of(&k.data, "transactionalId").unwrap_or_default(),
            Parsed::Unknown(why) => return Ok(Some(why)),
        };
        let Some(value) = row.value else {
            self.transactions.remove(&id);
            return Ok(None);
        };
        let v = match internal::transaction_value(value)
            .map_err(|e| ("TransactionLogValue".to_string(), e))?
        {
            Parsed::Known(v) => v,
            Parsed::Unknown(why) => return Ok(Some(why)),
        };
        let d = &v.data;
        let status = d.int("transactionStatus").unwrap_or(-1);
        let partitions = if status == 0 {
            Vec::new()
        } else {
            topic_partitions(d)
                .into_iter()
                .filter_map(|tp| {
                    let (t, p) = tp.rsplit_once('-')?;
                    Some((t.to_string(), p.parse().ok()?))
                })
                .collect()
        };
        self.transactions.insert(
            id,
            TxnRow {
                producer_id: d.int("producerId").unwrap_or(-1),
                previous_producer_id: d.int("previousProducerId"),
                next_producer_id: d.int("nextProducerId"),
                producer_epoch: d.int("producerEpoch").unwrap_or(-1) as i16,
                timeout_ms: i32_of(d, "transactionTimeoutMs").unwrap_or(-1),
                state: internal::transaction_state_name(status)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("Unknown({status})")),
                partitions,
                last_update: d.int("transactionLastUpdateTimestampMs").unwrap_or(-1),
                start: d.int("transactionStartTimestampMs").unwrap_or(-1),
                client_transaction_version: d.int("clientTransactionVersion").unwrap_or(0) as i16,
                source: row.source,
            },
        );
        Ok(None)
    }

    pub(super) fn table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let tp_fields = Fields::from(vec![
            Field::new("topic", DataType::Utf8, true),
            Field::new("partition", DataType::Int32, true),
        ]);
        let mut id = StringBuilder::new();
        let mut pid = Int64Builder::new();
        let mut epoch = Int16Builder::new();
        let mut prev = Int64Builder::new();
        let mut next = Int64Builder::new();
        let mut state = StringBuilder::new();
        let mut timeout = Int32Builder::new();
        let mut partitions = ListBuilder::new(StructBuilder::from_fields(tp_fields.clone(), 0))
            .with_field(Arc::new(Field::new(
                "item",
                DataType::Struct(tp_fields.clone()),
                true,
            )));
        let mut last = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut start = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut ctv = Int16Builder::new();
        let mut source_partition = Int32Builder::new();
        let mut source_offset = Int64Builder::new();
        let ms = |t: i64| (t >= 0).then_some(t * 1000);
        for (name, t) in &self.transactions {
            id.append_value(name);
            pid.append_value(t.producer_id);
            epoch.append_value(t.producer_epoch);
            prev.append_option(t.previous_producer_id);
            next.append_option(t.next_producer_id);
            state.append_value(&t.state);
            timeout.append_value(t.timeout_ms);
            let sb = partitions.values();
            for (topic, p) in &t.partitions {
                sb.field_builder::<StringBuilder>(0)
                    .unwrap()
                    .append_value(topic);
                sb.field_builder::<Int32Builder>(1)
                    .unwrap()
                    .append_value(*p);
                sb.append(true);
            }
            partitions.append(true);
            last.append_option(ms(t.last_update));
            start.append_option(ms(t.start));
            ctv.append_value(t.client_transaction_version);
            source_partition.append_option(t.source.partition);
            source_offset.append_value(t.source.offset);
        }
        let ts = timestamp_type();
        let schema = Schema::new(vec![
            Field::new("transactionalId", DataType::Utf8, false),
            Field::new("producerId", DataType::Int64, false),
            Field::new("producerEpoch", DataType::Int16, false),
            Field::new("previousProducerId", DataType::Int64, true),
            Field::new("nextProducerId", DataType::Int64, true),
            Field::new("state", DataType::Utf8, false),
            Field::new("transactionTimeoutMs", DataType::Int32, false),
            Field::new(
                "partitions",
                DataType::List(Arc::new(Field::new(
                    "item",
                    DataType::Struct(tp_fields),
                    true,
                ))),
                true,
            ),
            Field::new("lastUpdateTimestamp", ts.clone(), true),
            Field::new("startTimestamp", ts, true),
            Field::new("clientTransactionVersion", DataType::Int16, false),
            Field::new("sourcePartition", DataType::Int32, true),
            Field::new("sourceOffset", DataType::Int64, false),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(id.finish()),
                Arc::new(pid.finish()),
                Arc::new(epoch.finish()),
                Arc::new(prev.finish()),
                Arc::new(next.finish()),
                Arc::new(state.finish()),
                Arc::new(timeout.finish()),
                Arc::new(partitions.finish()),
                Arc::new(last.finish()),
                Arc::new(start.finish()),
                Arc::new(ctv.finish()),
                Arc::new(source_partition.finish()),
                Arc::new(source_offset.finish()),
            ],
        )
    }
}
