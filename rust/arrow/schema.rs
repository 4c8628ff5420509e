//! The Arrow schema of decoded records.
//!
//! The first eight columns have the names, types and meaning of Spark's Kafka source, so code
//! written against a live topic runs unchanged on files. The batch-metadata columns after them
//! expose what Kafka keeps per batch. Every type is one Spark maps exactly
//! (`timestamp[us, UTC]`, `int32` for IntegerType, `binary`, `list<struct>`).

use crate::error::{Error, Result};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use std::sync::{Arc, OnceLock};

/// One output column: Spark's Kafka source's eight, then Kafka's per-batch values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    /// The record's key (binary, null when absent).
    Key,
    /// The record's value (binary, null for a tombstone).
    Value,
    /// The topic, from the directory name or the `topic` option.
    Topic,
    /// The partition, from the directory name or the `partition` option.
    Partition,
    /// The record's offset.
    Offset,
    /// The record's timestamp (microseconds, Spark's timestamp type; null for magic 0); the
    /// batch's append time for a LogAppendTime batch.
    Timestamp,
    /// 0 CreateTime, 1 LogAppendTime (-1, none, for magic 0), as Spark's Kafka source has it.
    TimestampType,
    /// The record's headers, `list<struct<key: string, value: binary>>`.
    Headers,
    // Batch metadata.
    /// The batch's first offset.
    BaseOffset,
    /// The batch's last offset.
    LastOffset,
    /// Byte position of the batch (log entry) in its file or buffer.
    BatchPosition,
    /// Bytes of the log entry, with its 12 bytes of offset and size.
    BatchSize,
    /// The message format: 0, 1 or 2.
    Magic,
    /// The batch's codec name: none, gzip, snappy, lz4, zstd.
    Compression,
    /// Whether the batch's stored CRC matches (null when not checked).
    CrcValid,
    /// v2: the producer id (-1 for none).
    ProducerId,
    /// v2: the producer epoch.
    ProducerEpoch,
    /// v2: the record's sequence number (base sequence + offset delta; -1 for none).
    Sequence,
    /// v2: the partition leader epoch stamped on the batch.
    PartitionLeaderEpoch,
    /// v2: whether the batch belongs to a transaction.
    IsTransactional,
    /// v2: whether the batch holds a control record.
    IsControl,
    /// v2: the header's base timestamp (the delete horizon when one is set).
    BaseTimestamp,
    /// The batch's max timestamp.
    MaxTimestamp,
    /// v2: the delete horizon in ms, null when unset.
    DeleteHorizonMs,
    /// The control record's type id (null for data records).
    ControlType,
    /// v0/v1: the message's own stored CRC (null for v2).
    RecordCrc,
    /// v0/v1: whether the message's CRC matches (null for v2).
    RecordCrcValid,
}

impl Column {
    /// The columns of Spark's Kafka source (with headers), in its order.
    pub const DEFAULT: [Column; 8] = [
        Column::Key,
        Column::Value,
        Column::Topic,
        Column::Partition,
        Column::Offset,
        Column::Timestamp,
        Column::TimestampType,
        Column::Headers,
    ];

    /// Kafka's per-batch values, added by the `batch_metadata` option.
    pub const METADATA: [Column; 19] = [
        Column::BaseOffset,
        Column::LastOffset,
        Column::BatchPosition,
        Column::BatchSize,
        Column::Magic,
        Column::Compression,
        Column::CrcValid,
        Column::ProducerId,
        Column::ProducerEpoch,
        Column::Sequence,
        Column::PartitionLeaderEpoch,
        Column::IsTransactional,
        Column::IsControl,
        Column::BaseTimestamp,
        Column::MaxTimestamp,
        Column::DeleteHorizonMs,
        Column::ControlType,
        Column::RecordCrc,
        Column::RecordCrcValid,
    ];

    /// Every column, default ones first.
    pub fn all() -> impl Iterator<Item = Column> {
        Column::DEFAULT.into_iter().chain(Column::METADATA)
    }

    /// The column's name in the Arrow schema (Spark's spelling).
    pub fn name(self) -> &'static str {
        match self {
            Column::Key => "key",
            Column::Value => "value",
            Column::Topic => "topic",
            Column::Partition => "partition",
            Column::Offset => "offset",
            Column::Timestamp => "timestamp",
            Column::TimestampType => "timestampType",
            Column::Headers => "headers",
            Column::BaseOffset => "baseOffset",
            Column::LastOffset => "lastOffset",
            Column::BatchPosition => "batchPosition",
            Column::BatchSize => "batchSize",
            Column::Magic => "magic",
            Column::Compression => "compression",
            Column::CrcValid => "crcValid",
            Column::ProducerId => "producerId",
            Column::ProducerEpoch => "producerEpoch",
            Column::Sequence => "sequence",
            Column::PartitionLeaderEpoch => "partitionLeaderEpoch",
            Column::IsTransactional => "isTransactional",
            Column::IsControl => "isControl",
            Column::BaseTimestamp => "baseTimestamp",
            Column::MaxTimestamp => "maxTimestamp",
            Column::DeleteHorizonMs => "deleteHorizonMs",
            Column::ControlType => "controlType",
            Column::RecordCrc => "recordCrc",
            Column::RecordCrcValid => "recordCrcValid",
        }
    }

    /// The column with this name (`InvalidArgument` listing the names otherwise).
    pub fn from_name(name: &str) -> Result<Column> {
        Column::all().find(|c| c.name() == name).ok_or_else(|| {
            let known: Vec<_> = Column::all().map(Column::name).collect();
            Error::invalid_argument(format!(
                "unknown column {name:?}; columns are {}",
                known.join(", ")
            ))
        })
    }

    /// The column's Arrow field: name, type and nullability.
    pub fn field(self) -> Field {
        self.field_with(false)
    }

    /// The column's Arrow field, with `key` and `value` typed `binary_view` when
    /// `binary_view` is set (the `binary_view` read option; every other column is the same).
    pub fn field_with(self, binary_view: bool) -> Field {
        let (ty, nullable) = match self {
            Column::Key | Column::Value if binary_view => (DataType::BinaryView, true),
            Column::Key | Column::Value => (DataType::Binary, true),
            Column::Topic => (DataType::Utf8, true),
            Column::Partition => (DataType::Int32, true),
            Column::Offset => (DataType::Int64, false),
            Column::Timestamp => (timestamp_type(), true),
            Column::TimestampType => (DataType::Int32, false),
            Column::Headers => (headers_type(), true),
            Column::BaseOffset | Column::LastOffset | Column::BatchPosition => {
                (DataType::Int64, false)
            }
            Column::BatchSize => (DataType::Int32, false),
            Column::Magic => (DataType::Int8, false),
            Column::Compression => (DataType::Utf8, false),
            Column::CrcValid => (DataType::Boolean, true),
            Column::ProducerId => (DataType::Int64, false),
            Column::ProducerEpoch => (DataType::Int16, false),
            Column::Sequence | Column::PartitionLeaderEpoch => (DataType::Int32, false),
            Column::IsTransactional | Column::IsControl => (DataType::Boolean, false),
            Column::BaseTimestamp | Column::MaxTimestamp => (DataType::Int64, false),
            Column::DeleteHorizonMs => (DataType::Int64, true),
            Column::ControlType => (DataType::Int16, true),
            Column::RecordCrc => (DataType::Int64, true),
            Column::RecordCrcValid => (DataType::Boolean, true),
        };
        Field::new(self.name(), ty, nullable)
    }
}

/// Milliseconds become microseconds: Spark's TimestampType in Arrow.
pub fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// `list<struct<key: string, value: binary>>`, as Spark's Kafka source types `headers`.
pub fn headers_type() -> DataType {
    DataType::List(Arc::new(Field::new(
        "element",
        DataType::Struct(header_fields()),
        true,
    )))
}

/// The fields of one header: `key` (string) and `value` (binary).
pub fn header_fields() -> Fields {
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    FIELDS
        .get_or_init(|| {
            Fields::from(vec![
                Field::new("key", DataType::Utf8, true),
                Field::new("value", DataType::Binary, true),
            ])
        })
        .clone()
}

/// A choice of columns, in output order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    columns: Vec<Column>,
    /// `key` and `value` as `binary_view` (pointing into the bytes read) rather than `binary`.
    binary_view: bool,
}

impl Projection {
    /// These columns, in this order (`InvalidArgument` for one asked twice).
    pub fn new(columns: Vec<Column>) -> Result<Self> {
        let mut seen = std::collections::HashSet::new();
        for c in &columns {
            if !seen.insert(*c) {
                return Err(Error::invalid_argument(format!(
                    "column {:?} asked for twice",
                    c.name()
                )));
            }
        }
        Ok(Projection {
            columns,
            binary_view: false,
        })
    }

    /// Spark's Kafka columns, plus the batch metadata when asked.
    pub fn default_with_metadata(batch_metadata: bool) -> Self {
        let mut columns = Column::DEFAULT.to_vec();
        if batch_metadata {
            columns.extend(Column::METADATA);
        }
        Projection {
            columns,
            binary_view: false,
        }
    }

    /// The same columns with `key` and `value` typed `binary_view` (see
    /// [`Column::field_with`]) when `on`.
    pub fn with_binary_view(mut self, on: bool) -> Self {
        self.binary_view = on;
        self
    }

    /// Whether `key` and `value` are `binary_view` columns.
    pub fn binary_view(&self) -> bool {
        self.binary_view
    }

    /// The columns with these names, in this order.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self> {
        Projection::new(
            names
                .iter()
                .map(|n| Column::from_name(n.as_ref()))
                .collect::<Result<_>>()?,
        )
    }

    /// The columns, in output order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Whether the column is produced.
    pub fn contains(&self, column: Column) -> bool {
        self.columns.contains(&column)
    }

    /// The Arrow schema of these columns.
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| c.field_with(self.binary_view))
                .collect::<Vec<_>>(),
        ))
    }
}

impl Default for Projection {
    fn default() -> Self {
        Projection::default_with_metadata(false)
    }
}
