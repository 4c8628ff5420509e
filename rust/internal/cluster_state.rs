//! KRaft metadata replayed into the cluster's state, as a controller or broker builds its
//! metadata image from `__cluster_metadata` (or a snapshot): topics with their ids, partitions
//! with replicas, ISR and leader, configs, brokers and feature levels.
//!
//! The replay follows Kafka's rules: a `PartitionChangeRecord` changes only the fields it
//! carries, a new leader bumps the leader epoch and every change the partition epoch
//! (`PartitionRegistration.merge`); a `ClearElrRecord` empties the eligible leader replicas
//! and last known ELR of every partition of the named topic (every topic when the name is
//! empty) that has any, each such partition's epoch going up by one, as Kafka merges an
//! empty ELR into it (`ReplicationControlManager.removeTopicElrs`); `RemoveTopicRecord` drops
//! the topic, its partitions and its configs (`deleteTopicConfigs`); a
//! `ConfigRecord` with a null value deletes the config; a feature level of 0 removes the
//! feature; fencing changes are -1 (unfence), 0 (none), 1 (fence). Records between a
//! `BeginTransactionRecord` and an `AbortTransactionRecord` are dropped, and those of a
//! transaction still open at the end are not applied. Records that do not decode are the
//! caller's to report (see `internal_tables`); they are passed over here.

use crate::error::{Error, ErrorKind, Result};
use crate::format::internal::schema::uuid_string;
use crate::format::internal::{metadata_record, Parsed, Struct, Value};
use arrow_array::builder::{
    BooleanBuilder, Int16Builder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
struct Partition {
    replicas: Vec<i32>,
    isr: Vec<i32>,
    removing: Vec<i32>,
    adding: Vec<i32>,
    leader: i32,
    leader_epoch: i32,
    partition_epoch: i32,
    leader_recovery_state: i8,
    elr: Vec<i32>,
    last_known_elr: Vec<i32>,
}

#[derive(Clone, Debug, Default)]
struct Broker {
    epoch: i64,
    incarnation_id: String,
    rack: Option<String>,
    fenced: bool,
    in_controlled_shutdown: bool,
    endpoints: Vec<String>,
}

/// The replayed state.
#[derive(Default)]
pub struct ClusterState {
    topics: BTreeMap<[u8; 16], String>,
    partitions: BTreeMap<([u8; 16], i32), Partition>,
    configs: BTreeMap<(i8, String, String), String>,
    brokers: BTreeMap<i32, Broker>,
    features: BTreeMap<String, i16>,
    /// The raw records of an open metadata transaction, applied at its end.
    pending: Option<Vec<Vec<u8>>>,
}

fn ints(v: Option<&Value<'_>>) -> Option<Vec<i32>> {
    match v {
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .filter_map(|x| match x {
                    Value::Int(i) => Some(*i as i32),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

fn uuid(s: &Struct<'_>, name: &str) -> [u8; 16] {
    match s.get(name) {
        Some(Value::Uuid(u)) => *u,
        _ => [0; 16],
    }
}

impl ClusterState {
    /// An empty cluster: no metadata record replayed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replays a batch of records (a `value` column of framed metadata records).
    pub fn feed(&mut self, batch: &RecordBatch) -> Result<()> {
        let values = batch
            .column_by_name("value")
            .and_then(|c| c.as_binary_opt::<i32>())
            .ok_or_else(|| {
                Error::invalid_argument("the record batches need a binary value column")
            })?;
        for value in values.iter().flatten() {
            self.record(value);
        }
        Ok(())
    }

    fn record(&mut self, value: &[u8]) {
        let Ok(Parsed::Known(r)) = metadata_record(value) else {
            return;
        };
        match r.message.name {
            "BeginTransactionRecord" => self.pending = Some(Vec::new()),
            "EndTransactionRecord" => {
                for raw in self.pending.take().unwrap_or_default() {
                    if let Ok(Parsed::Known(r)) = metadata_record(&raw) {
                        self.apply(r.message.name, &r.data);
                    }
                }
            }
            "AbortTransactionRecord" => self.pending = None,
            name => match &mut self.pending {
                Some(pending) => pending.push(value.to_vec()),
                None => self.apply(name, &r.data),
            },
        }
    }

    fn apply(&mut self, name: &str, d: &Struct<'_>) {
        let int = |n: &str| d.int(n).unwrap_or(-1);
        match name {
            "TopicRecord" => {
                self.topics
                    .insert(uuid(d, "topicId"), d.str("name").unwrap_or("").to_string());
            }
            "RemoveTopicRecord" => {
                let id = uuid(d, "topicId");
                if let Some(name) = self.topics.remove(&id) {
                    // Kafka's ConfigResource.Type TOPIC.
                    self.configs.retain(|(t, r, _), _| !(*t == 2 && *r == name));
                }
                self.partitions.retain(|(t, _), _| *t != id);
            }
            "ClearElrRecord" => {
                let topic = d.str("topicName").unwrap_or("");
                let ids: Vec<[u8; 16]> = self
                    .topics
                    .iter()
                    .filter(|(_, n)| topic.is_empty() || n.as_str() == topic)
                    .map(|(id, _)| *id)
                    .collect();
                for ((t, _), p) in self.partitions.iter_mut() {
                    if ids.contains(t) && !(p.elr.is_empty() && p.last_known_elr.is_empty()) {
                        p.elr.clear();
                        p.last_known_elr.clear();
                        p.partition_epoch += 1;
                    }
                }
            }
            "PartitionRecord" => {
                self.partitions.insert(
                    (uuid(d, "topicId"), int("partitionId") as i32),
                    Partition {
                        replicas: ints(d.get("replicas")).unwrap_or_default(),
                        isr: ints(d.get("isr")).unwrap_or_default(),
                        removing: ints(d.get("removingReplicas")).unwrap_or_default(),
                        adding: ints(d.get("addingReplicas")).unwrap_or_default(),
                        leader: int("leader") as i32,
                        leader_epoch: int("leaderEpoch") as i32,
                        partition_epoch: int("partitionEpoch") as i32,
                        leader_recovery_state: d.int("leaderRecoveryState").unwrap_or(0) as i8,
                        elr: ints(d.get("eligibleLeaderReplicas")).unwrap_or_default(),
                        last_known_elr: ints(d.get("lastKnownElr")).unwrap_or_default(),
                    },
                );
            }
            "PartitionChangeRecord" => {
                let key = (uuid(d, "topicId"), int("partitionId") as i32);
                if let Some(p) = self.partitions.get_mut(&key) {
                    if let Some(r) = ints(d.get("replicas")) {
                        p.replicas = r;
                    }
                    if let Some(r) = ints(d.get("isr")) {
                        p.isr = r;
                    }
                    if let Some(r) = ints(d.get("removingReplicas")) {
                        p.removing = r;
                    }
                    if let Some(r) = ints(d.get("addingReplicas")) {
                        p.adding = r;
                    }
                    if let Some(r) = ints(d.get("eligibleLeaderReplicas")) {
                        p.elr = r;
                    }
                    if let Some(r) = ints(d.get("lastKnownElr")) {
                        p.last_known_elr = r;
                    }
                    // -2: no leader change.
                    let leader = d.int("leader").unwrap_or(-2);
                    if leader != -2 {
                        p.leader = leader as i32;
                        p.leader_epoch += 1;
                    }
                    // -1: no change of the leader recovery state.
                    let lrs = d.int("leaderRecoveryState").unwrap_or(-1);
                    if lrs != -1 {
                        p.leader_recovery_state = lrs as i8;
                    }
                    p.partition_epoch += 1;
                }
            }
            "ConfigRecord" => {
                let key = (
                    int("resourceType") as i8,
                    d.str("resourceName").unwrap_or("").to_string(),
                    d.str("name").unwrap_or("").to_string(),
                );
                match d.str("value") {
                    Some(v) => {
                        self.configs.insert(key, v.to_string());
                    }
                    None => {
                        self.configs.remove(&key);
                    }
                }
            }
            "RegisterBrokerRecord" => {
                let endpoints = d
                    .get("endPoints")
                    .map(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(Value::as_struct)
                    .map(|e| {
                        format!(
                            "{}://{}:{}",
                            e.str("name").unwrap_or(""),
                            e.str("host").unwrap_or(""),
                            e.int("port").unwrap_or(0)
                        )
                    })
                    .collect();
                self.brokers.insert(
                    int("brokerId") as i32,
                    Broker {
                        epoch: int("brokerEpoch"),
                        incarnation_id: uuid_string(&uuid(d, "incarnationId")),
                        rack: d.str("rack").map(str::to_string),
                        fenced: !matches!(d.get("fenced"), Some(Value::Bool(false))),
                        in_controlled_shutdown: matches!(
                            d.get("inControlledShutdown"),
                            Some(Value::Bool(true))
                        ),
                        endpoints,
                    },
                );
            }
            "UnregisterBrokerRecord" => {
                self.brokers.remove(&(int("brokerId") as i32));
            }
            "FenceBrokerRecord" | "UnfenceBrokerRecord" => {
                if let Some(b) = self.brokers.get_mut(&(int("id") as i32)) {
                    b.fenced = name == "FenceBrokerRecord";
                }
            }
            "BrokerRegistrationChangeRecord" => {
                if let Some(b) = self.brokers.get_mut(&(int("brokerId") as i32)) {
                    match d.int("fenced").unwrap_or(0) {
                        1 => b.fenced = true,
                        -1 => b.fenced = false,
                        _ => {}
                    }
                    if d.int("inControlledShutdown").unwrap_or(0) == 1 {
                        b.in_controlled_shutdown = true;
                    }
                    b.epoch = int("brokerEpoch");
                }
            }
            "FeatureLevelRecord" => {
                let feature = d.str("name").unwrap_or("").to_string();
                match d.int("featureLevel").unwrap_or(0) {
                    0 => {
                        self.features.remove(&feature);
                    }
                    level => {
                        self.features.insert(feature, level as i16);
                    }
                }
            }
            _ => {}
        }
    }

    /// The state as tables: `topics`, `partitions`, `configs`, `brokers`, `features`.
    pub fn tables(&self) -> Result<Vec<(&'static str, RecordBatch)>> {
        let internal = |e: arrow_schema::ArrowError| Error::new(ErrorKind::Internal, e.to_string());
        Ok(vec![
            ("topics", self.topics_table().map_err(internal)?),
            ("partitions", self.partitions_table().map_err(internal)?),
            ("configs", self.configs_table().map_err(internal)?),
            ("brokers", self.brokers_table().map_err(internal)?),
            ("features", self.features_table().map_err(internal)?),
        ])
    }

    fn topics_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let mut rows: Vec<(&String, &[u8; 16])> =
            self.topics.iter().map(|(id, n)| (n, id)).collect();
        rows.sort();
        let counts: Vec<i32> = rows
            .iter()
            .map(|(_, id)| self.partitions.keys().filter(|(t, _)| t == *id).count() as i32)
            .collect();
        RecordBatch::try_from_iter([
            (
                "name",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|(n, _)| n.as_str()),
                )) as ArrayRef,
            ),
            (
                "topicId",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|(_, id)| uuid_string(id)),
                )),
            ),
            (
                "partitions",
                Arc::new(arrow_array::Int32Array::from(counts)),
            ),
        ])
    }

    fn partitions_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let mut rows: Vec<(&str, &[u8; 16], i32, &Partition)> = self
            .partitions
            .iter()
            .map(|((id, p), part)| {
                (
                    self.topics.get(id).map(String::as_str).unwrap_or(""),
                    id,
                    *p,
                    part,
                )
            })
            .collect();
        rows.sort_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)));
        let mut topic = StringBuilder::new();
        let mut topic_id = StringBuilder::new();
        let mut partition = Int32Builder::new();
        let mut lists: Vec<ListBuilder<Int32Builder>> = (0..6)
            .map(|_| ListBuilder::new(Int32Builder::new()))
            .collect();
        let mut leader = Int32Builder::new();
        let mut leader_epoch = Int32Builder::new();
        let mut partition_epoch = Int32Builder::new();
        let mut lrs = Int16Builder::new();
        for (name, id, p, part) in &rows {
            topic.append_value(name);
            topic_id.append_value(uuid_string(id));
            partition.append_value(*p);
            for (builder, values) in lists.iter_mut().zip([
                &part.replicas,
                &part.isr,
                &part.removing,
                &part.adding,
                &part.elr,
                &part.last_known_elr,
            ]) {
                builder.values().append_slice(values);
                builder.append(true);
            }
            leader.append_value(part.leader);
            leader_epoch.append_value(part.leader_epoch);
            partition_epoch.append_value(part.partition_epoch);
            lrs.append_value(i16::from(part.leader_recovery_state));
        }
        let mut lists = lists
            .into_iter()
            .map(|mut b| Arc::new(b.finish()) as ArrayRef);
        RecordBatch::try_from_iter([
            ("topic", Arc::new(topic.finish()) as ArrayRef),
            ("topicId", Arc::new(topic_id.finish())),
            ("partition", Arc::new(partition.finish())),
            ("replicas", lists.next().unwrap()),
            ("isr", lists.next().unwrap()),
            ("removingReplicas", lists.next().unwrap()),
            ("addingReplicas", lists.next().unwrap()),
            ("leader", Arc::new(leader.finish())),
            ("leaderEpoch", Arc::new(leader_epoch.finish())),
            ("partitionEpoch", Arc::new(partition_epoch.finish())),
            ("leaderRecoveryState", Arc::new(lrs.finish())),
            ("eligibleLeaderReplicas", lists.next().unwrap()),
            ("lastKnownElr", lists.next().unwrap()),
        ])
    }

    fn configs_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        // Kafka's ConfigResource.Type ids.
        let type_name = |t: i8| match t {
            2 => "TOPIC",
            4 => "BROKER",
            8 => "BROKER_LOGGER",
            16 => "CLIENT_METRICS",
            32 => "GROUP",
            _ => "UNKNOWN",
        };
        let rows: Vec<_> = self.configs.iter().collect();
        RecordBatch::try_from_iter([
            (
                "resourceType",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|((t, _, _), _)| type_name(*t)),
                )) as ArrayRef,
            ),
            (
                "resourceName",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|((_, r, _), _)| r.as_str()),
                )),
            ),
            (
                "name",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|((_, _, n), _)| n.as_str()),
                )),
            ),
            (
                "value",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    rows.iter().map(|(_, v)| v.as_str()),
                )),
            ),
        ])
    }

    fn brokers_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let mut id = Int32Builder::new();
        let mut epoch = Int64Builder::new();
        let mut incarnation = StringBuilder::new();
        let mut rack = StringBuilder::new();
        let mut fenced = BooleanBuilder::new();
        let mut shutdown = BooleanBuilder::new();
        let mut endpoints = ListBuilder::new(StringBuilder::new());
        for (b, broker) in &self.brokers {
            id.append_value(*b);
            epoch.append_value(broker.epoch);
            incarnation.append_value(&broker.incarnation_id);
            rack.append_option(broker.rack.as_deref());
            fenced.append_value(broker.fenced);
            shutdown.append_value(broker.in_controlled_shutdown);
            for e in &broker.endpoints {
                endpoints.values().append_value(e);
            }
            endpoints.append(true);
        }
        let schema = Schema::new(vec![
            Field::new("brokerId", DataType::Int32, false),
            Field::new("brokerEpoch", DataType::Int64, false),
            Field::new("incarnationId", DataType::Utf8, false),
            Field::new("rack", DataType::Utf8, true),
            Field::new("fenced", DataType::Boolean, false),
            Field::new("inControlledShutdown", DataType::Boolean, false),
            Field::new(
                "endpoints",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(id.finish()),
                Arc::new(epoch.finish()),
                Arc::new(incarnation.finish()),
                Arc::new(rack.finish()),
                Arc::new(fenced.finish()),
                Arc::new(shutdown.finish()),
                Arc::new(endpoints.finish()),
            ],
        )
    }

    fn features_table(&self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        RecordBatch::try_from_iter([
            (
                "name",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    self.features.keys().map(String::as_str),
                )) as ArrayRef,
            ),
            (
                "featureLevel",
                Arc::new(arrow_array::Int16Array::from_iter_values(
                    self.features.values().copied(),
                )),
            ),
        ])
    }
}
