//! Kafka's internal topics as tables: folds over already-decoded record batches (the `key`,
//! `value`, `topic`, `partition`, `offset`, `timestamp` and, when present, `batchPosition`
//! columns the reader produces) into what the brokers would load from them.
//!
//! - [`Kind::ConsumerOffsets`]: one row per (group, topic, partition), the last commit winning
//!   and a tombstone deleting, as a group coordinator loads `__consumer_offsets`; or every commit
//!   and tombstone (`history`).
//! - [`Kind::ConsumerGroups`]: one row per group (classic groups from their `GroupMetadata`
//!   record; consumer and share groups from their metadata and member records).
//! - [`Kind::Transactions`]: one row per transactional id, as the transaction coordinator loads
//!   `__transaction_state`.
//! - [`Kind::ClusterMetadata`]: one row per KRaft metadata record, its fields as JSON.
//! - [`Kind::RemoteLogMetadata`]: one row per remote log segment (its latest state), or one
//!   row per record (`history`).
//!
//! Records are fed in log order, one partition's after another (records of one group or one
//! transactional id are always in one partition). A record type or version kafkalog does not
//! know becomes an issue (a warning) and is passed over, or a row with its raw bytes where the
//! table has one row per record. A record that does not decode as its declared type and version
//! is an error naming file, position and offset, or with `on_corrupt = skip` an issue.

use crate::arrow::schema::timestamp_type;
use crate::error::{Error, Result};
use crate::format::internal::dump::topic_partitions;
use crate::format::internal::schema::{struct_json, uuid_string};
use crate::format::internal::{self as internal, DecodeError, Parsed, Struct, Value};
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Int16Builder, Int32Builder, Int64Builder, ListBuilder,
    StringBuilder, StructBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
struct Source {
    partition: Option<i32>,
    offset: i64,
    timestamp: Option<i64>,
}

/// One input record, borrowed from the batch.
struct Row<'a> {
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    source: Source,
    position: Option<u64>,
}

fn rows(batch: &RecordBatch) -> Result<Vec<Row<'_>>> {
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

fn binary_value(a: Option<&BinaryArray>, i: usize) -> Option<&[u8]> {
    a.filter(|a| a.is_valid(i)).map(|a| a.value(i))
}

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

/// A fold of one internal topic's records into a table.
pub struct Fold {
    kind: Kind,
    options: FoldOptions,
    issues: Vec<FoldIssue>,
    latest_timestamp: Option<i64>,
    offsets: BTreeMap<(String, String, i32), OffsetRow>,
    offset_history: Vec<(String, String, i32, Option<OffsetRow>, Source)>,
    groups: BTreeMap<String, GroupRow>,
    transactions: BTreeMap<String, TxnRow>,
    records: RecordRows,
    remote_segments: BTreeMap<[u8; 16], RemoteRow>,
    /// `RemotePartitionDeleteMetadataRecord` states, by topic, topic id and partition (a
    /// topic deleted and created again under its name has a new id, and its own remote log).
    partition_deletes: BTreeMap<(String, [u8; 16], i32), i64>,
    log_ends: BTreeMap<(String, i32), i64>,
    /// The segment files (base offset, path) of the partition being fed, to name the file of
    /// an error.
    files: Vec<(i64, PathBuf)>,
}

#[derive(Clone, Debug)]
struct OffsetRow {
    offset: i64,
    leader_epoch: Option<i32>,
    metadata: String,
    commit_timestamp: i64,
    expire_timestamp: Option<i64>,
    source: Source,
}

#[derive(Clone, Debug, Default)]
struct Member {
    member_id: String,
    instance_id: Option<String>,
    client_id: String,
    client_host: String,
    rebalance_timeout: Option<i32>,
    session_timeout: Option<i32>,
    topics: Vec<String>,
    assignment: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct GroupRow {
    group_type: &'static str,
    protocol_type: Option<String>,
    generation: Option<i32>,
    protocol: Option<String>,
    leader: Option<String>,
    state_timestamp: Option<i64>,
    members: BTreeMap<String, Member>,
    /// Whether the group's own metadata record is there (member records alone do not make a
    /// group).
    has_metadata: bool,
    source: Option<Source>,
}

#[derive(Clone, Debug)]
struct TxnRow {
    producer_id: i64,
    previous_producer_id: Option<i64>,
    next_producer_id: Option<i64>,
    producer_epoch: i16,
    timeout_ms: i32,
    state: String,
    partitions: Vec<(String, i32)>,
    last_update: i64,
    start: i64,
    client_transaction_version: i16,
    source: Source,
}

#[derive(Default)]
struct RecordRows {
    partition: Vec<Option<i32>>,
    offset: Vec<i64>,
    timestamp: Vec<Option<i64>>,
    type_id: Vec<Option<i16>>,
    name: Vec<Option<String>>,
    version: Vec<Option<i16>>,
    data: Vec<Option<String>>,
    raw: Vec<Option<Vec<u8>>>,
}

#[derive(Clone, Debug)]
struct RemoteRow {
    topic: String,
    topic_id: [u8; 16],
    partition: i32,
    start_offset: i64,
    end_offset: i64,
    broker_id: i32,
    max_timestamp: i64,
    event_timestamp: i64,
    size: i32,
    state: i64,
    source: Source,
}

fn i32_of(s: &Struct<'_>, name: &str) -> Option<i32> {
    s.int(name).map(|v| v as i32)
}

fn string_of(s: &Struct<'_>, name: &str) -> Option<String> {
    s.str(name).map(str::to_string)
}

fn strings(v: Option<&Value<'_>>) -> Vec<String> {
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
fn assigned(v: Option<&Value<'_>>) -> Vec<String> {
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

const SEGMENT_STATES: [&str; 4] = [
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
];

impl Fold {
    /// An empty fold for the table `kind`.
    pub fn new(kind: Kind, options: FoldOptions) -> Fold {
        Fold {
            kind,
            options,
            issues: Vec::new(),
            latest_timestamp: None,
            offsets: BTreeMap::new(),
            offset_history: Vec::new(),
            groups: BTreeMap::new(),
            transactions: BTreeMap::new(),
            records: RecordRows::default(),
            remote_segments: BTreeMap::new(),
            partition_deletes: BTreeMap::new(),
            log_ends: BTreeMap::new(),
            files: Vec::new(),
        }
    }

    /// The segment files (base offset, path) of the partition fed next: an error or issue
    /// names the one holding its offset.
    pub fn set_files(&mut self, mut files: Vec<(i64, PathBuf)>) {
        files.sort();
        self.files = files;
    }

    fn file_of<'p>(&'p self, offset: i64, path: Option<&'p Path>) -> Option<&'p Path> {
        self.files
            .iter()
            .rev()
            .find(|(base, _)| *base <= offset)
            .map(|(_, p)| p.as_path())
            .or(path)
    }

    /// Notes a data partition's log end offset, for the lag of the groups' commits on it.
    pub fn set_log_end(&mut self, topic: &str, partition: i32, log_end: i64) {
        self.log_ends
            .insert((topic.to_string(), partition), log_end);
    }

    /// What was passed over so far.
    pub fn issues(&self) -> &[FoldIssue] {
        &self.issues
    }

    /// What was passed over so far; leaves the list empty.
    pub fn take_issues(&mut self) -> Vec<FoldIssue> {
        std::mem::take(&mut self.issues)
    }

    /// Folds one batch of records, read from `path` when they came from a file.
    pub fn feed(&mut self, batch: &RecordBatch, path: Option<&Path>) -> Result<()> {
        for row in rows(batch)? {
            if let Some(t) = row.source.timestamp {
                self.latest_timestamp = Some(self.latest_timestamp.map_or(t, |l| l.max(t)));
            }
            let outcome = match self.kind {
                Kind::ConsumerOffsets | Kind::ConsumerGroups => self.group_record(&row),
                Kind::Transactions => self.transaction_record(&row),
                Kind::ClusterMetadata | Kind::RemoteLogMetadata => self.framed_record(&row),
            };
            if matches!(outcome, Ok(None)) {
                continue;
            }
            // The file is looked up only for what is reported.
            let file = self.file_of(row.source.offset, path).map(Path::to_path_buf);
            let path = file.as_deref();
            match outcome {
                Ok(None) => {}
                Ok(Some(unknown)) => self.issue(&row, path, unknown, false),
                Err((what, e)) => {
                    let message = format!(
                        "record at offset {} does not decode as {what}: {}",
                        row.source.offset, e
                    );
                    if !self.options.skip_corrupt {
                        let mut err = Error::corrupt(message).with_offset(row.source.offset);
                        if let Some(p) = row.position {
                            err = err.at(p);
                        }
                        if let Some(path) = path {
                            err = err.with_path(path);
                        }
                        return Err(err);
                    }
                    if matches!(self.kind, Kind::ClusterMetadata)
                        || (self.kind == Kind::RemoteLogMetadata && self.options.history)
                    {
                        self.record_row(&row, None, None, None);
                    }
                    self.issue(&row, path, message, true);
                }
            }
        }
        Ok(())
    }

    fn issue(&mut self, row: &Row<'_>, path: Option<&Path>, message: String, corrupt: bool) {
        self.issues.push(FoldIssue {
            message,
            path: path.map(Path::to_path_buf),
            position: row.position,
            offset: row.source.offset,
            key: row.key.map(<[u8]>::to_vec),
            value: row.value.map(<[u8]>::to_vec),
            corrupt,
        });
    }

    /// One `__consumer_offsets` record. `Ok(Some(why))` = unknown type or version.
    fn group_record(&mut self, row: &Row<'_>) -> Result<Option<String>, (String, DecodeError)> {
        let Some(key) = row.key else {
            return Ok(Some(format!(
                "__consumer_offsets record at offset {} has no key",
                row.source.offset
            )));
        };
        let (record_type, parsed) =
            internal::group_key(key).map_err(|e| ("a __consumer_offsets key".to_string(), e))?;
        let key = match parsed {
            Parsed::Known(k) => k,
            Parsed::Unknown(why) => return Ok(Some(why)),
        };
        let value = match row.value {
            None => None,
            Some(v) => match internal::group_value(record_type, v).map_err(|e| {
                (
                    format!(
                        "{} (record type {record_type})",
                        key.message.name.replace("Key", "Value")
                    ),
                    e,
                )
            })? {
                Parsed::Known(v) => Some(v),
                Parsed::Unknown(why) => return Ok(Some(why)),
            },
        };
        let k = &key.data;
        let group = string_of(k, "group")
            .or_else(|| string_of(k, "groupId"))
            .unwrap_or_default();
        match (self.kind, record_type) {
            (Kind::ConsumerOffsets, 0 | 1) => {
                let topic = string_of(k, "topic").unwrap_or_default();
                let partition = i32_of(k, "partition").unwrap_or(-1);
                let entry = value.map(|v| {
                    let d = &v.data;
                    OffsetRow {
                        offset: d.int("offset").unwrap_or(-1),
                        leader_epoch: i32_of(d, "leaderEpoch").filter(|e| *e >= 0),
                        metadata: string_of(d, "metadata").unwrap_or_default(),
                        commit_timestamp: d.int("commitTimestamp").unwrap_or(-1),
                        expire_timestamp: d.int("expireTimestamp").filter(|t| *t >= 0),
                        source: row.source,
                    }
                });
                let id = (group, topic, partition);
                if self.options.history {
                    self.offset_history
                        .push((id.0, id.1, id.2, entry, row.source));
                } else {
                    match entry {
                        Some(e) => {
                            self.offsets.insert(id, e);
                        }
                        None => {
                            self.offsets.remove(&id);
                        }
                    }
                }
            }
            // Group metadata also decides offset expiry.
            (_, 2) => match value {
                None => {
                    self.groups.remove(&group);
                }
                Some(v) => {
                    let d = &v.data;
                    let mut members = BTreeMap::new();
                    for m in d.get("members").map(|a| a.as_array()).unwrap_or(&[]) {
                        let Some(m) = m.as_struct() else { continue };
                        let member = Member {
                            member_id: string_of(m, "memberId").unwrap_or_default(),
                            instance_id: string_of(m, "groupInstanceId"),
                            client_id: string_of(m, "clientId").unwrap_or_default(),
                            client_host: string_of(m, "clientHost").unwrap_or_default(),
                            rebalance_timeout: i32_of(m, "rebalanceTimeout"),
                            session_timeout: i32_of(m, "sessionTimeout"),
                            topics: match m.get("subscription") {
                                Some(Value::Struct(s)) => strings(s.get("topics")),
                                _ => Vec::new(),
                            },
                            assignment: match m.get("assignment") {
                                Some(Value::Struct(s)) => assigned(s.get("assignedPartitions")),
                                _ => Vec::new(),
                            },
                        };
                        members.insert(member.member_id.clone(), member);
                    }
                    self.groups.insert(
                        group,
                        GroupRow {
                            group_type: "classic",
                            protocol_type: string_of(d, "protocolType"),
                            generation: i32_of(d, "generation"),
                            protocol: string_of(d, "protocol"),
                            leader: string_of(d, "leader"),
                            state_timestamp: d.int("currentStateTimestamp").filter(|t| *t >= 0),
                            members,
                            has_metadata: true,
                            source: Some(row.source),
                        },
                    );
                }
            },
            // Consumer (3, 5, 8), share (11, 10, 14) and streams (17, 19, 22) groups: the
            // group's metadata, its members' metadata, their current assignments.
            (Kind::ConsumerGroups, 3 | 5 | 8 | 10 | 11 | 14 | 17 | 19 | 22) => {
                let group_type = match record_type {
                    3 | 5 | 8 => "consumer",
                    10 | 11 | 14 => "share",
                    _ => "streams",
                };
                let is_metadata = matches!(record_type, 3 | 11 | 17);
                let is_member = matches!(record_type, 5 | 10 | 19);
                let member_id = string_of(k, "memberId");
                match (record_type, value) {
                    // The group's metadata record: its epoch; a tombstone deletes the group.
                    (_, None) if is_metadata => {
                        self.groups.remove(&group);
                    }
                    (_, Some(v)) if is_metadata => {
                        let g = self.groups.entry(group).or_default();
                        g.group_type = group_type;
                        g.protocol_type = Some(group_type.to_string());
                        g.generation = i32_of(&v.data, "epoch");
                        g.has_metadata = true;
                        g.source = Some(row.source);
                    }
                    (_, None) => {
                        if let (Some(g), Some(id)) = (self.groups.get_mut(&group), member_id) {
                            if is_member {
                                g.members.remove(&id);
                            } else if let Some(m) = g.members.get_mut(&id) {
                                m.assignment.clear();
                            }
                        }
                    }
                    (_, Some(v)) => {
                        let d = &v.data;
                        let g = self.groups.entry(group).or_default();
                        g.group_type = group_type;
                        let id = member_id.unwrap_or_default();
                        let m = g.members.entry(id.clone()).or_default();
                        m.member_id = id;
                        if is_member {
                            m.instance_id = string_of(d, "instanceId");
                            m.client_id = string_of(d, "clientId").unwrap_or_default();
                            m.client_host = string_of(d, "clientHost").unwrap_or_default();
                            m.rebalance_timeout = i32_of(d, "rebalanceTimeoutMs");
                            m.session_timeout = match d.get("classicMemberMetadata") {
                                Some(Value::Struct(c)) => i32_of(c, "sessionTimeoutMs"),
                                _ => None,
                            };
                            m.topics = strings(d.get("subscribedTopicNames"));
                        } else if record_type == 22 {
                            // A streams member's active tasks, as `subtopology-partition`.
                            m.assignment = assigned(d.get("activeTasks"));
                        } else {
                            m.assignment = assigned(d.get("assignedPartitions"));
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(None)
    }

    fn transaction_record(
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

    fn framed_record(&mut self, row: &Row<'_>) -> Result<Option<String>, (String, DecodeError)> {
        let metadata = self.kind == Kind::ClusterMetadata;
        let Some(value) = row.value else {
            return Ok(Some(format!(
                "record at offset {} has no value",
                row.source.offset
            )));
        };
        let what = if metadata {
            "a KRaft metadata record"
        } else {
            "a remote log metadata record"
        };
        let parsed = if metadata {
            internal::metadata_record(value)
        } else {
            internal::remote_log_metadata_record(value)
        }
        .map_err(|e| (what.to_string(), e))?;
        let type_id = internal::framed_type(value).map(|t| t as i16);
        match parsed {
            Parsed::Unknown(why) => {
                if metadata || self.options.history {
                    self.record_row(row, type_id, None, None);
                }
                Ok(Some(why))
            }
            Parsed::Known(r) => {
                if metadata || self.options.history {
                    let mut json = String::new();
                    struct_json(&mut json, &r.data);
                    self.record_row(row, type_id, Some((r.message.name, r.version)), Some(json));
                }
                if !metadata {
                    self.remote_state(&r.data, row.source);
                }
                Ok(None)
            }
        }
    }

    fn record_row(
        &mut self,
        row: &Row<'_>,
        type_id: Option<i16>,
        name: Option<(&str, i16)>,
        data: Option<String>,
    ) {
        let r = &mut self.records;
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

    /// A remote segment's latest state: its metadata record, then its updates.
    fn remote_state(&mut self, d: &Struct<'_>, source: Source) {
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
    pub fn remote_segment_states(&self) -> Vec<RemoteSegmentState> {
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
    pub fn deleted_partitions(&self) -> Vec<(String, String, i32)> {
        self.partition_deletes
            .keys()
            .map(|(t, id, p)| (t.clone(), uuid_string(id), *p))
            .collect()
    }

    /// The table.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let batch = match (self.kind, self.options.history) {
            (Kind::ConsumerOffsets, false) => {
                let rows: Vec<_> = std::mem::take(&mut self.offsets)
                    .into_iter()
                    .map(|((g, t, p), e)| {
                        let source = e.source;
                        (g, t, p, Some(e), source)
                    })
                    .collect();
                self.offsets_table(rows, false)
            }
            (Kind::ConsumerOffsets, true) => {
                let rows = std::mem::take(&mut self.offset_history);
                self.offsets_table(rows, true)
            }
            (Kind::ConsumerGroups, _) => self.groups_table(),
            (Kind::Transactions, _) => self.transactions_table(),
            (Kind::ClusterMetadata, _) | (Kind::RemoteLogMetadata, true) => self.records_table(),
            (Kind::RemoteLogMetadata, false) => self.remote_table(),
        };
        batch.map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))
    }

    fn offsets_table(
        &self,
        rows: Vec<(String, String, i32, Option<OffsetRow>, Source)>,
        history: bool,
    ) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let as_of = self.options.as_of.or(self.latest_timestamp);
        let retention = self.options.retention_ms.unwrap_or(7 * 24 * 3600 * 1000);
        let mut group = StringBuilder::new();
        let mut topic = StringBuilder::new();
        let mut partition = Int32Builder::new();
        let mut offset = Int64Builder::new();
        let mut epoch = Int32Builder::new();
        let mut metadata = StringBuilder::new();
        let mut commit = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut expire = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut expired = BooleanBuilder::new();
        let mut deleted = BooleanBuilder::new();
        let mut source_partition = Int32Builder::new();
        let mut source_offset = Int64Builder::new();
        let mut log_end = Int64Builder::new();
        let mut lag = Int64Builder::new();
        for (g, t, p, e, source) in &rows {
            let end = self.log_ends.get(&(t.clone(), *p)).copied();
            log_end.append_option(end);
            // kafka-consumer-groups: lag = log end offset - committed offset.
            lag.append_option(end.zip(e.as_ref()).map(|(end, e)| end - e.offset));
            group.append_value(g);
            topic.append_value(t);
            partition.append_value(*p);
            deleted.append_value(e.is_none());
            match e {
                None => {
                    offset.append_null();
                    epoch.append_null();
                    metadata.append_null();
                    commit.append_null();
                    expire.append_null();
                    expired.append_null();
                }
                Some(e) => {
                    offset.append_value(e.offset);
                    epoch.append_option(e.leader_epoch);
                    metadata.append_value(&e.metadata);
                    commit.append_value(e.commit_timestamp * 1000);
                    expire.append_option(e.expire_timestamp.map(|t| t * 1000));
                    expired.append_option(as_of.map(|now| self.is_expired(g, e, now, retention)));
                }
            }
            source_partition.append_option(source.partition);
            source_offset.append_value(source.offset);
        }
        let ts = timestamp_type();
        let mut fields = vec![
            Field::new("group", DataType::Utf8, false),
            Field::new("topic", DataType::Utf8, false),
            Field::new("partition", DataType::Int32, false),
            Field::new("offset", DataType::Int64, true),
            Field::new("leaderEpoch", DataType::Int32, true),
            Field::new("metadata", DataType::Utf8, true),
            Field::new("commitTimestamp", ts.clone(), true),
            Field::new("expireTimestamp", ts, true),
            Field::new("expired", DataType::Boolean, true),
            Field::new("logEndOffset", DataType::Int64, true),
            Field::new("lag", DataType::Int64, true),
            Field::new("sourcePartition", DataType::Int32, true),
            Field::new("sourceOffset", DataType::Int64, true),
        ];
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(group.finish()),
            Arc::new(topic.finish()),
            Arc::new(partition.finish()),
            Arc::new(offset.finish()),
            Arc::new(epoch.finish()),
            Arc::new(metadata.finish()),
            Arc::new(commit.finish()),
            Arc::new(expire.finish()),
            Arc::new(expired.finish()),
            Arc::new(log_end.finish()),
            Arc::new(lag.finish()),
            Arc::new(source_partition.finish()),
            Arc::new(source_offset.finish()),
        ];
        if history {
            fields.push(Field::new("deleted", DataType::Boolean, false));
            columns.push(Arc::new(deleted.finish()));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
    }

    /// Kafka's offset expiry (`GroupMetadata.removeExpiredOffsets`): a commit with an explicit
    /// expire timestamp expires then; otherwise, once the group is empty (or has no group
    /// metadata), `retention` after the group became empty (or after the commit).
    fn is_expired(&self, group: &str, e: &OffsetRow, now: i64, retention: i64) -> bool {
        if let Some(t) = e.expire_timestamp {
            return now >= t;
        }
        match self.groups.get(group) {
            Some(g) if g.has_metadata => {
                if !g.members.is_empty() {
                    return false;
                }
                let base = g.state_timestamp.unwrap_or(e.commit_timestamp);
                now >= base.saturating_add(retention)
            }
            _ => now >= e.commit_timestamp.saturating_add(retention),
        }
    }

    fn groups_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let member_fields = Fields::from(vec![
            Field::new("memberId", DataType::Utf8, true),
            Field::new("groupInstanceId", DataType::Utf8, true),
            Field::new("clientId", DataType::Utf8, true),
            Field::new("clientHost", DataType::Utf8, true),
            Field::new("rebalanceTimeout", DataType::Int32, true),
            Field::new("sessionTimeout", DataType::Int32, true),
            Field::new(
                "topics",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
            Field::new(
                "assignment",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
        ]);
        let mut group = StringBuilder::new();
        let mut gtype = StringBuilder::new();
        let mut protocol_type = StringBuilder::new();
        let mut state = StringBuilder::new();
        let mut generation = Int32Builder::new();
        let mut protocol = StringBuilder::new();
        let mut leader = StringBuilder::new();
        let mut state_ts = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        let mut members = ListBuilder::new(StructBuilder::from_fields(member_fields.clone(), 0))
            .with_field(Arc::new(Field::new(
                "item",
                DataType::Struct(member_fields.clone()),
                true,
            )));
        let mut source_partition = Int32Builder::new();
        let mut source_offset = Int64Builder::new();
        for (name, g) in &self.groups {
            if !g.has_metadata {
                continue;
            }
            group.append_value(name);
            gtype.append_value(g.group_type);
            protocol_type.append_option(g.protocol_type.as_deref());
            // As the coordinator loads a group: with members it is Stable, without Empty.
            state.append_value(if g.members.is_empty() {
                "Empty"
            } else {
                "Stable"
            });
            generation.append_option(g.generation);
            protocol.append_option(g.protocol.as_deref());
            leader.append_option(g.leader.as_deref());
            state_ts.append_option(g.state_timestamp.map(|t| t * 1000));
            let sb = members.values();
            for m in g.members.values() {
                sb.field_builder::<StringBuilder>(0)
                    .unwrap()
                    .append_value(&m.member_id);
                sb.field_builder::<StringBuilder>(1)
                    .unwrap()
                    .append_option(m.instance_id.as_deref());
                sb.field_builder::<StringBuilder>(2)
                    .unwrap()
                    .append_value(&m.client_id);
                sb.field_builder::<StringBuilder>(3)
                    .unwrap()
                    .append_value(&m.client_host);
                sb.field_builder::<Int32Builder>(4)
                    .unwrap()
                    .append_option(m.rebalance_timeout);
                sb.field_builder::<Int32Builder>(5)
                    .unwrap()
                    .append_option(m.session_timeout);
                for (i, list) in [(6, &m.topics), (7, &m.assignment)] {
                    let lb = sb
                        .field_builder::<ListBuilder<Box<dyn arrow_array::builder::ArrayBuilder>>>(
                            i,
                        );
                    if let Some(lb) = lb {
                        for t in list {
                            let values: &mut dyn arrow_array::builder::ArrayBuilder =
                                &mut **lb.values();
                            values
                                .as_any_mut()
                                .downcast_mut::<StringBuilder>()
                                .unwrap()
                                .append_value(t);
                        }
                        lb.append(true);
                    }
                }
                sb.append(true);
            }
            members.append(true);
            source_partition.append_option(g.source.and_then(|s| s.partition));
            source_offset.append_option(g.source.map(|s| s.offset));
        }
        let schema = Schema::new(vec![
            Field::new("group", DataType::Utf8, false),
            Field::new("type", DataType::Utf8, false),
            Field::new("protocolType", DataType::Utf8, true),
            Field::new("state", DataType::Utf8, false),
            Field::new("generation", DataType::Int32, true),
            Field::new("protocol", DataType::Utf8, true),
            Field::new("leader", DataType::Utf8, true),
            Field::new("currentStateTimestamp", timestamp_type(), true),
            Field::new(
                "members",
                DataType::List(Arc::new(Field::new(
                    "item",
                    DataType::Struct(member_fields),
                    true,
                ))),
                true,
            ),
            Field::new("sourcePartition", DataType::Int32, true),
            Field::new("sourceOffset", DataType::Int64, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(group.finish()),
                Arc::new(gtype.finish()),
                Arc::new(protocol_type.finish()),
                Arc::new(state.finish()),
                Arc::new(generation.finish()),
                Arc::new(protocol.finish()),
                Arc::new(leader.finish()),
                Arc::new(state_ts.finish()),
                Arc::new(members.finish()),
                Arc::new(source_partition.finish()),
                Arc::new(source_offset.finish()),
            ],
        )
    }

    fn transactions_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
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

    fn records_table(&mut self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let r = std::mem::take(&mut self.records);
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

    fn remote_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
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

/// A partition's log end offset (the offset the next record would get) from the batch listing
/// of its last segment: one past the last batch's last offset, or the segment's base offset
/// when it holds no batch (a freshly rolled segment), as a broker's log end offset.
pub fn log_end_offset(
    listing: impl Iterator<Item = Result<RecordBatch>>,
    base_offset: i64,
) -> Result<i64> {
    let mut end = base_offset;
    for batch in listing {
        let batch = batch?;
        let last = batch
            .column_by_name("lastOffset")
            .and_then(|c| c.as_primitive_opt::<Int64Type>())
            .ok_or_else(|| Error::invalid_argument("a batch listing needs a lastOffset column"))?;
        for v in last.iter().flatten() {
            end = end.max(v + 1);
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, Int32Array, Int64Array};

    fn key(t: i16, group: &str, topic: &str, partition: i32) -> Vec<u8> {
        let mut b = t.to_be_bytes().to_vec();
        for s in [group, topic] {
            b.extend_from_slice(&(s.len() as i16).to_be_bytes());
            b.extend_from_slice(s.as_bytes());
        }
        b.extend_from_slice(&partition.to_be_bytes());
        b
    }

    fn commit(offset: i64, epoch: Option<i32>) -> Vec<u8> {
        let mut b = if epoch.is_some() { 3i16 } else { 0i16 }
            .to_be_bytes()
            .to_vec();
        b.extend_from_slice(&offset.to_be_bytes());
        if let Some(e) = epoch {
            b.extend_from_slice(&e.to_be_bytes());
        }
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&7i64.to_be_bytes());
        b
    }

    fn batch(records: &[(Vec<u8>, Option<Vec<u8>>)]) -> RecordBatch {
        let keys = BinaryArray::from_iter(records.iter().map(|(k, _)| Some(k.as_slice())));
        let values = BinaryArray::from_iter(records.iter().map(|(_, v)| v.as_deref()));
        let offsets = Int64Array::from_iter_values(0..records.len() as i64);
        let partitions = Int32Array::from_iter_values(records.iter().map(|_| 5));
        RecordBatch::try_from_iter([
            ("key", Arc::new(keys) as ArrayRef),
            ("value", Arc::new(values) as ArrayRef),
            ("offset", Arc::new(offsets) as ArrayRef),
            ("partition", Arc::new(partitions) as ArrayRef),
        ])
        .unwrap()
    }

    #[test]
    fn latest_commit_wins_and_tombstones_delete() {
        let records = vec![
            (key(1, "g", "t", 0), Some(commit(5, None))),
            (key(1, "g", "t", 0), Some(commit(9, Some(2)))),
            (key(1, "g", "t", 1), Some(commit(3, None))),
            (key(1, "g", "t", 1), None),
        ];
        let mut fold = Fold::new(Kind::ConsumerOffsets, FoldOptions::default());
        fold.set_log_end("t", 0, 12);
        fold.feed(&batch(&records), None).unwrap();
        let table = fold.finish().unwrap();
        assert_eq!(table.num_rows(), 1);
        let int = |name: &str| {
            table
                .column_by_name(name)
                .unwrap()
                .as_primitive::<Int64Type>()
                .value(0)
        };
        assert_eq!(int("offset"), 9);
        assert_eq!(int("lag"), 3);
        assert_eq!(int("sourceOffset"), 1);
        let epoch = table
            .column_by_name("leaderEpoch")
            .unwrap()
            .as_primitive::<Int32Type>();
        assert_eq!(epoch.value(0), 2);

        let mut history = Fold::new(
            Kind::ConsumerOffsets,
            FoldOptions {
                history: true,
                ..Default::default()
            },
        );
        history.feed(&batch(&records), None).unwrap();
        assert_eq!(history.finish().unwrap().num_rows(), 4);
    }

    #[test]
    fn corrupt_values_are_errors_naming_the_offset_or_issues() {
        let mut short = commit(5, None);
        short.truncate(6);
        let records = vec![(key(1, "g", "t", 0), Some(short))];
        let mut fold = Fold::new(Kind::ConsumerOffsets, FoldOptions::default());
        fold.set_files(vec![(0, PathBuf::from("/x/00.log"))]);
        let err = fold.feed(&batch(&records), None).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
        assert_eq!(err.offset, Some(0));
        assert_eq!(err.path, Some(PathBuf::from("/x/00.log")));
        let mut fold = Fold::new(
            Kind::ConsumerOffsets,
            FoldOptions {
                skip_corrupt: true,
                ..Default::default()
            },
        );
        fold.feed(&batch(&records), None).unwrap();
        assert_eq!(fold.finish().unwrap().num_rows(), 0);
        assert!(fold.issues()[0].corrupt);
    }

    #[test]
    fn log_end_of_a_listing() {
        let listing = RecordBatch::try_from_iter([(
            "lastOffset",
            Arc::new(Int64Array::from(vec![4, 9])) as ArrayRef,
        )])
        .unwrap();
        assert_eq!(log_end_offset(std::iter::once(Ok(listing)), 0).unwrap(), 10);
        assert_eq!(log_end_offset(std::iter::empty(), 42).unwrap(), 42);
    }
}
