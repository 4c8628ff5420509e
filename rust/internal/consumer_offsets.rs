//! `__consumer_offsets` folded as a group coordinator loads it: committed offsets (the last
//! commit winning, a tombstone deleting, expiry as Kafka judges it), or every commit
//! (`history`); and the groups with their members (classic, consumer, share and streams
//! groups).

use crate::arrow::schema::timestamp_type;
use crate::error::Result;
use crate::format::internal::{self as internal, DecodeError, Parsed, Value};
use crate::internal::input::{assigned, i32_of, string_of, strings, Kind, Row, Source};
use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One commit as the history table lists it: group, topic, partition, the commit (`None`: a
/// tombstone) and where it is.
pub(super) type OffsetHistoryRow = (String, String, i32, Option<OffsetRow>, Source);

/// What `__consumer_offsets` holds, folded so far.
#[derive(Default)]
pub(super) struct GroupLog {
    pub(super) offsets: BTreeMap<(String, String, i32), OffsetRow>,
    pub(super) offset_history: Vec<OffsetHistoryRow>,
    pub(super) groups: BTreeMap<String, GroupRow>,
    pub(super) log_ends: BTreeMap<(String, i32), i64>,
}

#[derive(Clone, Debug)]
pub(super) struct OffsetRow {
    pub(super) offset: i64,
    pub(super) leader_epoch: Option<i32>,
    pub(super) metadata: String,
    pub(super) commit_timestamp: i64,
    pub(super) expire_timestamp: Option<i64>,
    pub(super) source: Source,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Member {
    pub(super) member_id: String,
    pub(super) instance_id: Option<String>,
    pub(super) client_id: String,
    pub(super) client_host: String,
    pub(super) rebalance_timeout: Option<i32>,
    pub(super) session_timeout: Option<i32>,
    pub(super) topics: Vec<String>,
    pub(super) assignment: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct GroupRow {
    pub(super) group_type: &'static str,
    pub(super) protocol_type: Option<String>,
    pub(super) generation: Option<i32>,
    pub(super) protocol: Option<String>,
    pub(super) leader: Option<String>,
    pub(super) state_timestamp: Option<i64>,
    pub(super) members: BTreeMap<String, Member>,
    /// Whether the group's own metadata record is there (member records alone do not make a
    /// group).
    pub(super) has_metadata: bool,
    pub(super) source: Option<Source>,
}

impl GroupLog {
    /// One `__consumer_offsets` record. `Ok(Some(why))` = unknown type or version.
    pub(super) fn record(
        &mut self,
        kind: Kind,
        history: bool,
        row: &Row<'_>,
    ) -> Result<Option<String>, (String, DecodeError)> {
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
        match (kind, record_type) {
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
                if history {
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

    pub(super) fn offsets_table(
        &self,
        rows: Vec<OffsetHistoryRow>,
        history: bool,
        as_of: Option<i64>,
        retention: i64,
    ) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
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

    pub(super) fn groups_table(
        &self,
    ) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
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
}
