//! What every fold of an internal topic shares: which table, its options, what it passes
//! over, and the records it is fed (the reader's `key`, `value`, `partition`, `offset`,
//! `timestamp` and `batchPosition` columns), with helpers to read decoded fields.

use crate::error::{Error, Result};
use crate::format::internal::schema::uuid_string;
use crate::format::internal::{Struct, Value};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, BinaryArray, RecordBatch};
use std::path::PathBuf;

/// Which table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `__consumer_offsets`' committed offsets, one row per group, topic and partition.
    ConsumerOffsets,
    /// `__consumer_offsets`' group metadata: groups and their members.
    ConsumerGroups,
    /// `__transaction_state`: the transactional ids and their state.
    Transactions,
    /// `__cluster_metadata`: KRaft's metadata records.
    ClusterMetadata,
    /// `__remote_log_metadata`: tiered storage's remote segment metadata.
    RemoteLogMetadata,
}

impl Kind {
    /// The table named `name` as the Python API spells it (`consumer_offsets`, ...).
    pub fn from_name(name: &str) -> Result<Kind> {
        Ok(match name {
            "consumer_offsets" => Kind::ConsumerOffsets,
            "consumer_groups" => Kind::ConsumerGroups,
            "transactions" => Kind::Transactions,
            "cluster_metadata" => Kind::ClusterMetadata,
            "remote_log_metadata" => Kind::RemoteLogMetadata,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown internal table {name:?}; tables are consumer_offsets, \
                     consumer_groups, transactions, cluster_metadata, remote_log_metadata"
                )))
            }
        })
    }
}

/// Options of a fold.
#[derive(Clone, Debug, Default)]
pub struct FoldOptions {
    /// Every record instead of the latest state (consumer offsets, remote log metadata).
    pub history: bool,
    /// Report undecodable records as issues instead of failing.
    pub skip_corrupt: bool,
    /// The time (ms) expiry is judged at; default: the latest record timestamp seen.
    pub as_of: Option<i64>,
    /// Kafka's `offsets.retention.minutes` in ms (default 7 days).
    pub retention_ms: Option<i64>,
}

/// Something passed over: an unknown record type or version, or (skipping) a corrupt record.
#[derive(Clone, Debug)]
pub struct FoldIssue {
    /// What happened, for people.
    pub message: String,
    /// The segment file the record is in, when known.
    pub path: Option<PathBuf>,
    /// Byte position of the record's batch in the file, when known.
    pub position: Option<u64>,
    /// The record's offset.
    pub offset: i64,
    /// The record's key bytes, to look at.
    pub key: Option<Vec<u8>>,
    /// The record's value bytes.
    pub value: Option<Vec<u8>>,
    /// True for a record that did not decode (as opposed to one of an unknown type).
    pub corrupt: bool,
}

/// Where a record came from.
#[derive(Clone, Copy, Debug)]
pub(super) struct Source {
    pub(super) partition: Option<i32>,
    pub(super) offset: i64,
    pub(super) timestamp: Option<i64>,
}

/// One input record, borrowed from the batch.
pub(super) struct Row<'a> {
    pub(super) key: Option<&'a [u8]>,
    pub(super) value: Option<&'a [u8]>,
    pub(super) source: Source,
    pub(super) position: Option<u64>,
}

pub(super) fn rows(batch: &RecordBatch) -> Result<Vec<Row<'_>>> {
    let column = |name: &str| batch.column_by_name(name);
    let binary = |name: &str| -> Result<Option<&BinaryArray>> {
        match column(name) {
            None => Ok(None),
            Some(c) => c
                .as_binary_opt::<i32>()
                .map(Some)
                .ok_or_else(|| Error::invalid_argument(format!("column {name} must be binary"))),
        }
    };
    let key = binary("key")?;
    let value = binary("value")?;
    let offset = column("offset")
        .and_then(|c| c.as_primitive_opt::<Int64Type>())
        .ok_or_else(|| Error::invalid_argument("the record batches need an int64 offset column"))?;
    let partition = column("partition").and_then(|c| c.as_primitive_opt::<Int32Type>());
    let timestamp =
        column("timestamp").and_then(|c| c.as_primitive_opt::<TimestampMicrosecondType>());
    let position = column("batchPosition").and_then(|c| c.as_primitive_opt::<Int64Type>());
    Ok((0..batch.num_rows())
        .map(|i| Row {
            key: binary_value(key, i),
            value: binary_value(value, i),
            source: Source {
                partition: partition.filter(|a| a.is_valid(i)).map(|a| a.value(i)),
                offset: offset.value(i),
                timestamp: timestamp
                    .filter(|a| a.is_valid(i))
                    .map(|a| a.value(i).div_euclid(1000)),
            },
            position: position.map(|a| a.value(i) as u64),
        })
        .collect())
}

pub(super) fn binary_value(a: Option<&BinaryArray>, i: usize) -> Option<&[u8]> {
    a.filter(|a| a.is_valid(i)).map(|a| a.value(i))
}

pub(super) fn i32_of(s: &Struct<'_>, name: &str) -> Option<i32> {
    s.int(name).map(|v| v as i32)
}

pub(super) fn string_of(s: &Struct<'_>, name: &str) -> Option<String> {
    s.str(name).map(str::to_string)
}

pub(super) fn strings(v: Option<&Value<'_>>) -> Vec<String> {
    v.map(|a| a.as_array())
        .unwrap_or(&[])
        .iter()
        .filter_map(|v| match v {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

/// `topic-partition` strings of a `[{topic|topicId, partitions}]` array.
pub(super) fn assigned(v: Option<&Value<'_>>) -> Vec<String> {
    let mut out = Vec::new();
    for entry in v.map(|a| a.as_array()).unwrap_or(&[]) {
        let Some(entry) = entry.as_struct() else {
            continue;
        };
        let topic = match (
            entry.get("topic"),
            entry.get("topicId"),
            entry.get("subtopologyId"),
        ) {
            (Some(Value::Str(t)), _, _) | (_, _, Some(Value::Str(t))) => t.to_string(),
            (_, Some(Value::Uuid(u)), _) => uuid_string(u),
            _ => String::new(),
        };
        for p in entry.get("partitions").map(|a| a.as_array()).unwrap_or(&[]) {
            if let Value::Int(p) = p {
                out.push(format!("{topic}-{p}"));
            }
        }
    }
    out
}
