//! Each request the endpoint answers, by API: the versions it takes (Kafka 4.x's, as the
//! `kafka-protocol` crate generates them from Kafka's own message definitions) and its answer.
//! Reads are served from the [`Catalog`](super::catalog::Catalog), groups by the
//! [`Coordinator`](super::groups::Coordinator); every API that would write is refused with
//! `POLICY_VIOLATION` and a message saying why.

use super::codes::code;
use super::fetch::read_partition;
use super::offsets::{epoch_error, leader_epochs, list_offsets};
use super::shared::Shared;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, Message, StrBytes};
use std::sync::Arc;
use std::time::Duration;

/// This endpoint's one node id: it leads every partition and coordinates every group.
pub const NODE_ID: i32 = 1;

/// The APIs the endpoint takes, with the versions (Kafka's own ranges).
pub const APIS: &[ApiKey] = &[
    ApiKey::ApiVersions,
    ApiKey::Metadata,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::OffsetForLeaderEpoch,
    ApiKey::DescribeCluster,
    ApiKey::DescribeConfigs,
    ApiKey::FindCoordinator,
    ApiKey::JoinGroup,
    ApiKey::SyncGroup,
    ApiKey::Heartbeat,
    ApiKey::LeaveGroup,
    ApiKey::OffsetCommit,
    ApiKey::OffsetFetch,
    ApiKey::ListGroups,
    ApiKey::DescribeGroups,
    // Refused, with a message: they would write.
    ApiKey::Produce,
    ApiKey::InitProducerId,
    ApiKey::CreateTopics,
    ApiKey::DeleteTopics,
    ApiKey::DeleteRecords,
    ApiKey::CreatePartitions,
    ApiKey::AlterConfigs,
    ApiKey::IncrementalAlterConfigs,
];

/// Calls `$m!` with each served API and its request message (one list for the versions taken
/// and the fuzz target's decoding).
macro_rules! served {
    ($m:ident) => {
        $m!(
            ApiVersions => ApiVersionsRequest,
            Metadata => MetadataRequest,
            Fetch => FetchRequest,
            ListOffsets => ListOffsetsRequest,
            OffsetForLeaderEpoch => OffsetForLeaderEpochRequest,
            DescribeCluster => DescribeClusterRequest,
            DescribeConfigs => DescribeConfigsRequest,
            FindCoordinator => FindCoordinatorRequest,
            JoinGroup => JoinGroupRequest,
            SyncGroup => SyncGroupRequest,
            Heartbeat => HeartbeatRequest,
            LeaveGroup => LeaveGroupRequest,
            OffsetCommit => OffsetCommitRequest,
            OffsetFetch => OffsetFetchRequest,
            ListGroups => ListGroupsRequest,
            DescribeGroups => DescribeGroupsRequest,
            Produce => ProduceRequest,
            InitProducerId => InitProducerIdRequest,
            CreateTopics => CreateTopicsRequest,
            DeleteTopics => DeleteTopicsRequest,
            DeleteRecords => DeleteRecordsRequest,
            CreatePartitions => CreatePartitionsRequest,
            AlterConfigs => AlterConfigsRequest,
            IncrementalAlterConfigs => IncrementalAlterConfigsRequest,
        )
    };
}

/// The versions of `key` the endpoint takes: those of the request's message definition (the
/// API keys' own ranges can run ahead of the messages the crate generates).
pub fn versions(key: ApiKey) -> Option<(i16, i16)> {
    macro_rules! range {
        ($($key:ident => $t:ty),* $(,)?) => {
            match key {
                $(ApiKey::$key => <$t as Message>::VERSIONS,)*
                _ => return None,
            }
        };
    }
    let range = served!(range);
    debug_assert!(APIS.contains(&key));
    Some((range.min, range.max))
}

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// How a decoded request's response is written (after its header).
type Encode = Box<dyn FnOnce(&mut BytesMut) -> anyhow::Result<()> + Send>;

/// What a request gave: a response to send (framed: its size first), or none (a Produce
/// with acks=0).
pub type Answer = Option<BytesMut>;

/// Answers one request (header and body already split); an error closes the connection.
pub async fn answer(
    shared: &Arc<Shared>,
    key: ApiKey,
    version: i16,
    header: &RequestHeader,
    body: Bytes,
    peer: &str,
) -> anyhow::Result<Answer> {
    let client_id = header
        .client_id
        .as_ref()
        .map(|c| c.to_string())
        .unwrap_or_default();
    macro_rules! decode {
        ($t:ty) => {
            super::bounded::decode::<$t>(&body, version)?
        };
    }
    let catalog = &shared.catalog;
    let response: Encode = match key {
        ApiKey::ApiVersions => {
            let _ = decode!(ApiVersionsRequest);
            let r = api_versions(code::NONE);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::Metadata => {
            let r = metadata(shared, decode!(MetadataRequest), version);
            let mut r = r;
            super::versions::metadata(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::Fetch => {
            let r = fetch(shared, decode!(FetchRequest), version).await;
            let mut r = r;
            super::versions::fetch(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::ListOffsets => {
            let request = decode!(ListOffsetsRequest);
            let shared = Arc::clone(shared);
            let r = tokio::task::spawn_blocking(move || list_offsets(&shared, request)).await?;
            let mut r = r;
            super::versions::list_offsets(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::OffsetForLeaderEpoch => {
            let r = leader_epochs(catalog, decode!(OffsetForLeaderEpochRequest));
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::DescribeCluster => {
            let _ = decode!(DescribeClusterRequest);
            let mut r = DescribeClusterResponse::default();
            r.cluster_id = s(&catalog.cluster_id);
            r.controller_id = BrokerId(NODE_ID);
            r.endpoint_type = 1;
            r.cluster_authorized_operations = i32::MIN;
            let mut broker = describe_cluster_response::DescribeClusterBroker::default();
            broker.broker_id = BrokerId(NODE_ID);
            broker.host = s(&shared.advertise.0);
            broker.port = shared.advertise.1 as i32;
            r.brokers = vec![broker];
            let mut r = r;
            super::versions::describe_cluster(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::DescribeConfigs => {
            let r = super::configs::describe(shared, decode!(DescribeConfigsRequest));
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::FindCoordinator => {
            let request = decode!(FindCoordinatorRequest);
            let mut r = FindCoordinatorResponse::default();
            let (host, port) = (s(&shared.advertise.0), shared.advertise.1 as i32);
            if version >= 4 {
                r.coordinators = request
                    .coordinator_keys
                    .iter()
                    .map(|k| {
                        let mut c = find_coordinator_response::Coordinator::default();
                        c.key = k.clone();
                        c.node_id = BrokerId(NODE_ID);
                        c.host = host.clone();
                        c.port = port;
                        c
                    })
                    .collect();
            } else {
                r.node_id = BrokerId(NODE_ID);
                r.host = host;
                r.port = port;
            }
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::JoinGroup => {
            let request = decode!(JoinGroupRequest);
            let r = shared.groups.join(request, version, &client_id, peer).await;
            let mut r = r;
            super::versions::join_group(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::SyncGroup => {
            let r = shared.groups.sync(decode!(SyncGroupRequest)).await;
            let mut r = r;
            super::versions::sync_group(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::Heartbeat => {
            let request = decode!(HeartbeatRequest);
            let mut r = HeartbeatResponse::default();
            r.error_code = shared.groups.heartbeat(&request);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::LeaveGroup => {
            let request = decode!(LeaveGroupRequest);
            let ids: Vec<String> = if version >= 3 {
                request
                    .members
                    .iter()
                    .map(|m| m.member_id.to_string())
                    .collect()
            } else {
                vec![request.member_id.to_string()]
            };
            let codes = shared.groups.leave(&request.group_id, &ids);
            let mut r = LeaveGroupResponse::default();
            if version >= 3 {
                r.members = request
                    .members
                    .iter()
                    .zip(&codes)
                    .map(|(m, &c)| {
                        let mut mr = leave_group_response::MemberResponse::default();
                        mr.member_id = m.member_id.clone();
                        mr.group_instance_id = m.group_instance_id.clone();
                        mr.error_code = c;
                        mr
                    })
                    .collect();
            } else {
                r.error_code = codes.first().copied().unwrap_or(code::NONE);
            }
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::OffsetCommit => {
            let r = super::group_offsets::offset_commit(shared, decode!(OffsetCommitRequest));
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::OffsetFetch => {
            let r =
                super::group_offsets::offset_fetch(shared, decode!(OffsetFetchRequest), version);
            let mut r = r;
            super::versions::offset_fetch(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::ListGroups => {
            let request = decode!(ListGroupsRequest);
            let mut r = ListGroupsResponse::default();
            r.groups = shared
                .groups
                .list()
                .into_iter()
                .filter(|g| {
                    request.states_filter.is_empty()
                        || request
                            .states_filter
                            .iter()
                            .any(|f| f.eq_ignore_ascii_case(&g.group_state))
                })
                .filter(|g| {
                    request.types_filter.is_empty()
                        || request
                            .types_filter
                            .iter()
                            .any(|f| f.eq_ignore_ascii_case(&g.group_type))
                })
                .collect();
            let mut r = r;
            super::versions::list_groups(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::DescribeGroups => {
            let request = decode!(DescribeGroupsRequest);
            let mut r = DescribeGroupsResponse::default();
            r.groups = request
                .groups
                .iter()
                .map(|g| shared.groups.describe(g.0.as_str(), version))
                .collect();
            let mut r = r;
            super::versions::describe_groups(&mut r, version);
            Box::new(move |b| r.encode(b, version))
        }
        ApiKey::Produce
        | ApiKey::InitProducerId
        | ApiKey::CreateTopics
        | ApiKey::DeleteTopics
        | ApiKey::DeleteRecords
        | ApiKey::CreatePartitions
        | ApiKey::AlterConfigs
        | ApiKey::IncrementalAlterConfigs => {
            let Some(encoded) = super::refuse::answer(shared, key, version, &body, peer)? else {
                return Ok(None);
            };
            Box::new(move |b| {
                b.extend_from_slice(&encoded);
                Ok(())
            })
        }
        other => anyhow::bail!("API {other:?} is not served"),
    };
    let mut response_header = ResponseHeader::default();
    response_header.correlation_id = header.correlation_id;
    framed(|out| {
        response_header.encode(out, key.response_header_version(version))?;
        response(out)
    })
    .map(Some)
}

/// A response as it goes on the wire: its size, then what `encode` writes (the response is
/// encoded once, straight after the size, never copied into a second buffer).
pub fn framed(
    encode: impl FnOnce(&mut BytesMut) -> anyhow::Result<()>,
) -> anyhow::Result<BytesMut> {
    let mut out = BytesMut::new();
    out.extend_from_slice(&[0; 4]);
    encode(&mut out)?;
    let size = i32::try_from(out.len() - 4)?;
    out[..4].copy_from_slice(&size.to_be_bytes());
    Ok(out)
}

/// Decodes a request body of `key` as [`answer`] would, answering nothing (the fuzz target).
pub fn decode_only(key: ApiKey, version: i16, body: Bytes) -> anyhow::Result<()> {
    macro_rules! decode {
        ($($key:ident => $t:ty),* $(,)?) => {
            match key {
                $(ApiKey::$key => {
                    super::bounded::decode::<$t>(&body, version)?;
                })*
                other => anyhow::bail!("API {other:?} is not served"),
            }
        };
    }
    served!(decode);
    Ok(())
}

/// For the tests: a request body decoded through [`super::bounded`] and by the protocol crate
/// alone. None when the bounded decoding refused it; else whether the crate gave the same
/// request (the plain decoding only runs once the bounded one found every count to fit).
#[cfg(test)]
pub fn decodes_alike(key: ApiKey, version: i16, body: &Bytes) -> Option<bool> {
    use kafka_protocol::protocol::Decodable;
    macro_rules! alike {
        ($($key:ident => $t:ty),* $(,)?) => {
            match key {
                $(ApiKey::$key => {
                    let bounded = super::bounded::decode::<$t>(body, version).ok()?;
                    let plain = <$t>::decode(&mut body.clone(), version);
                    Some(plain.map(|p| p == bounded).unwrap_or(false))
                })*
                _ => None,
            }
        };
    }
    served!(alike)
}

/// The ApiVersions answer: every API served with its versions.
pub fn api_versions(error_code: i16) -> ApiVersionsResponse {
    let mut r = ApiVersionsResponse::default();
    r.error_code = error_code;
    r.api_keys = APIS
        .iter()
        .filter_map(|&key| {
            let (min, max) = versions(key)?;
            let mut v = api_versions_response::ApiVersion::default();
            v.api_key = key as i16;
            v.min_version = min;
            v.max_version = max;
            Some(v)
        })
        .collect();
    r
}

fn uuid_of(id: &[u8; 16]) -> uuid::Uuid {
    uuid::Uuid::from_bytes(*id)
}

fn metadata(shared: &Shared, request: MetadataRequest, version: i16) -> MetadataResponse {
    let catalog = &shared.catalog;
    let mut r = MetadataResponse::default();
    let mut broker = metadata_response::MetadataResponseBroker::default();
    broker.node_id = BrokerId(NODE_ID);
    broker.host = s(&shared.advertise.0);
    broker.port = shared.advertise.1 as i32;
    r.brokers = vec![broker];
    r.cluster_id = Some(s(&catalog.cluster_id));
    r.controller_id = BrokerId(NODE_ID);
    r.cluster_authorized_operations = i32::MIN;
    let describe = |topic: &super::catalog::Topic| {
        let mut t = metadata_response::MetadataResponseTopic::default();
        t.name = Some(TopicName(s(&topic.name)));
        t.topic_id = uuid_of(&topic.id);
        t.is_internal = topic.internal;
        t.topic_authorized_operations = i32::MIN;
        t.partitions = topic
            .partitions
            .values()
            .map(|p| {
                let mut mp = metadata_response::MetadataResponsePartition::default();
                mp.partition_index = p.index;
                mp.leader_id = BrokerId(NODE_ID);
                mp.leader_epoch = p.leader_epoch();
                mp.replica_nodes = vec![BrokerId(NODE_ID)];
                mp.isr_nodes = vec![BrokerId(NODE_ID)];
                mp
            })
            .collect();
        t
    };
    let all = match &request.topics {
        None => true,
        Some(topics) => topics.is_empty() && version == 0,
    };
    if all {
        r.topics = catalog.topics.values().map(describe).collect();
    } else {
        r.topics = request
            .topics
            .iter()
            .flatten()
            .map(|wanted| {
                let found = match &wanted.name {
                    Some(name) => catalog.topics.get(name.0.as_str()),
                    None => catalog.topic_by_id(wanted.topic_id.as_bytes()),
                };
                match found {
                    Some(topic) => describe(topic),
                    None => {
                        let mut t = metadata_response::MetadataResponseTopic::default();
                        t.name = wanted.name.clone();
                        t.topic_id = wanted.topic_id;
                        t.error_code = if wanted.name.is_some() {
                            code::UNKNOWN_TOPIC_OR_PARTITION
                        } else {
                            code::UNKNOWN_TOPIC_ID
                        };
                        t.topic_authorized_operations = i32::MIN;
                        t
                    }
                }
            })
            .collect();
    }
    r
}

/// The most a fetch answer holds, whatever the client asks (memory per request).
const MAX_FETCH_BYTES: u64 = 64 << 20;
/// The longest a fetch waits for `min_bytes` (a backup never grows, so the wait only spares
/// a consumer at the end of the log from asking again at once).
const MAX_WAIT: Duration = Duration::from_secs(30);
/// The longest a store may take to answer one partition's read.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

async fn fetch(shared: &Arc<Shared>, request: FetchRequest, version: i16) -> FetchResponse {
    let catalog = &shared.catalog;
    let read_committed = request.isolation_level == 1;
    let mut budget = (request.max_bytes.max(0) as u64).min(MAX_FETCH_BYTES);
    if version < 3 || request.max_bytes <= 0 {
        budget = MAX_FETCH_BYTES;
    }
    let mut total = 0u64;
    let mut r = FetchResponse::default();
    r.session_id = 0;
    for topic in request.topics {
        let found = if version >= 13 {
            catalog.topic_by_id(topic.topic_id.as_bytes())
        } else {
            catalog.topics.get(topic.topic.0.as_str())
        };
        let mut tr = fetch_response::FetchableTopicResponse::default();
        tr.topic = topic.topic.clone();
        tr.topic_id = topic.topic_id;
        for p in topic.partitions {
            let mut pr = fetch_response::PartitionData::default();
            pr.partition_index = p.partition;
            pr.high_watermark = -1;
            pr.last_stable_offset = -1;
            pr.log_start_offset = -1;
            pr.preferred_read_replica = BrokerId(-1);
            let Some(topic) = found else {
                pr.error_code = if version >= 13 {
                    code::UNKNOWN_TOPIC_ID
                } else {
                    code::UNKNOWN_TOPIC_OR_PARTITION
                };
                tr.partitions.push(pr);
                continue;
            };
            let Some(partition) = topic.partitions.get(&p.partition).cloned() else {
                pr.error_code = code::UNKNOWN_TOPIC_OR_PARTITION;
                tr.partitions.push(pr);
                continue;
            };
            pr.high_watermark = partition.high_watermark;
            pr.last_stable_offset = partition.last_stable;
            pr.log_start_offset = partition.log_start;
            if let Some(error) = epoch_error(&partition, p.current_leader_epoch) {
                pr.error_code = error;
                tr.partitions.push(pr);
                continue;
            }
            let offset = p.fetch_offset;
            if offset < partition.log_start || offset > partition.high_watermark {
                pr.error_code = code::OFFSET_OUT_OF_RANGE;
                tr.partitions.push(pr);
                continue;
            }
            let bound = if read_committed {
                partition.last_stable
            } else {
                partition.high_watermark
            };
            let limit = (p.partition_max_bytes.max(0) as u64).min(budget.saturating_sub(total));
            let min_one = total == 0;
            if limit == 0 && !min_one {
                tr.partitions.push(pr);
                continue;
            }
            let hint = shared.hints.get(&topic.name, p.partition, offset);
            let storage = Arc::clone(&catalog.storage);
            let part = Arc::clone(&partition);
            let read = tokio::task::spawn_blocking(move || {
                read_partition(storage.as_ref(), &part, offset, bound, limit, min_one, hint)
            });
            let slice = match tokio::time::timeout(READ_TIMEOUT, read).await {
                Ok(Ok(Ok(slice))) => slice,
                Ok(Ok(Err(e))) => {
                    shared.log(&format!(
                        "fetch {}-{} at offset {offset}: {e}",
                        topic.name, p.partition
                    ));
                    pr.error_code = code::KAFKA_STORAGE_ERROR;
                    tr.partitions.push(pr);
                    continue;
                }
                Ok(Err(e)) => {
                    shared.log(&format!("fetch {}-{}: {e}", topic.name, p.partition));
                    pr.error_code = code::KAFKA_STORAGE_ERROR;
                    tr.partitions.push(pr);
                    continue;
                }
                Err(_) => {
                    shared.log(&format!(
                        "fetch {}-{} at offset {offset}: the store did not answer in {}s",
                        topic.name,
                        p.partition,
                        READ_TIMEOUT.as_secs()
                    ));
                    pr.error_code = code::KAFKA_STORAGE_ERROR;
                    tr.partitions.push(pr);
                    continue;
                }
            };
            if let (Some(next), Some(position)) = (slice.next_offset, slice.next_position) {
                shared.hints.put(&topic.name, p.partition, next, position);
            }
            if read_committed {
                let upper = slice.upper_offset;
                pr.aborted_transactions = Some(
                    partition
                        .transactions
                        .aborted_within(Some(offset), Some(upper))
                        .into_iter()
                        .map(|(producer, first, _)| {
                            let mut a = fetch_response::AbortedTransaction::default();
                            a.producer_id = ProducerId(producer);
                            a.first_offset = first;
                            a
                        })
                        .collect(),
                );
            }
            total += slice.records.len() as u64;
            pr.records = Some(slice.records);
            tr.partitions.push(pr);
        }
        r.responses.push(tr);
    }
    if total < request.min_bytes.max(0) as u64 && request.max_wait_ms > 0 {
        let wait = Duration::from_millis(request.max_wait_ms as u64).min(MAX_WAIT);
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shared.closing.notified() => {}
        }
    }
    r
}
