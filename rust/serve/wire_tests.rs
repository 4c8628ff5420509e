//! Every API the endpoint takes, at every version it takes, sent over a socket to a running
//! server as a client would encode it: each gets an answer that decodes at that version, and
//! the connection stays open (a field set that a version lacks would close it).

use super::api::{versions, APIS};
use super::{Options, Server};
use crate::storage::{Router, Storage};
use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

/// A request body, encoded at its version.
type Encode = Box<dyn Fn(&mut BytesMut) -> anyhow::Result<()>>;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// A request of `key` naming topic orders, partition 0 (where it names any).
fn request(key: ApiKey, version: i16) -> Option<Encode> {
    let orders = TopicName(s("orders"));
    macro_rules! boxed {
        ($r:expr) => {{
            let r = $r;
            Some(Box::new(move |b: &mut BytesMut| r.encode(b, version)))
        }};
    }
    match key {
        ApiKey::ApiVersions => {
            let mut r = ApiVersionsRequest::default();
            if version >= 3 {
                r.client_software_name = s("wire-tests");
                r.client_software_version = s("1");
            }
            boxed!(r)
        }
        ApiKey::Metadata => {
            let mut r = MetadataRequest::default();
            let mut t = metadata_request::MetadataRequestTopic::default();
            t.name = Some(orders);
            r.topics = Some(vec![t]);
            boxed!(r)
        }
        ApiKey::Fetch => {
            let mut r = FetchRequest::default();
            r.max_bytes = 1 << 20;
            r.max_wait_ms = 0;
            r.isolation_level = 1;
            let mut t = fetch_request::FetchTopic::default();
            if version >= 13 {
                t.topic_id = uuid::Uuid::from_bytes(super::catalog::derived_topic_id("orders"));
            } else {
                t.topic = orders;
            }
            let mut p = fetch_request::FetchPartition::default();
            p.partition_max_bytes = 1 << 20;
            t.partitions = vec![p];
            r.topics = vec![t];
            boxed!(r)
        }
        ApiKey::ListOffsets => {
            let mut r = ListOffsetsRequest::default();
            let mut t = list_offsets_request::ListOffsetsTopic::default();
            t.name = orders;
            let mut p = list_offsets_request::ListOffsetsPartition::default();
            p.timestamp = -2;
            t.partitions = vec![p];
            r.topics = vec![t];
            boxed!(r)
        }
        ApiKey::OffsetForLeaderEpoch => {
            let mut r = OffsetForLeaderEpochRequest::default();
            let mut t = offset_for_leader_epoch_request::OffsetForLeaderTopic::default();
            t.topic = orders;
            t.partitions = vec![Default::default()];
            r.topics = vec![t];
            boxed!(r)
        }
        ApiKey::DescribeConfigs => {
            let mut r = DescribeConfigsRequest::default();
            let mut c = describe_configs_request::DescribeConfigsResource::default();
            c.resource_type = 2;
            c.resource_name = s("orders");
            r.resources = vec![c];
            boxed!(r)
        }
        ApiKey::FindCoordinator => {
            let mut r = FindCoordinatorRequest::default();
            if version >= 4 {
                r.coordinator_keys = vec![s("g")];
            } else {
                r.key = s("g");
            }
            boxed!(r)
        }
        ApiKey::OffsetFetch => {
            let mut r = OffsetFetchRequest::default();
            if version >= 8 {
                let mut g = offset_fetch_request::OffsetFetchRequestGroup::default();
                g.group_id = GroupId(s("g"));
                r.groups = vec![g];
            } else {
                r.group_id = GroupId(s("g"));
                let mut t = offset_fetch_request::OffsetFetchRequestTopic::default();
                t.name = orders;
                t.partition_indexes = vec![0];
                r.topics = Some(vec![t]);
            }
            boxed!(r)
        }
        ApiKey::ListGroups => boxed!(ListGroupsRequest::default()),
        ApiKey::DescribeGroups => {
            let mut r = DescribeGroupsRequest::default();
            r.groups = vec![GroupId(s("g"))];
            boxed!(r)
        }
        ApiKey::DescribeCluster => boxed!(DescribeClusterRequest::default()),
        ApiKey::Heartbeat => {
            let mut r = HeartbeatRequest::default();
            r.group_id = GroupId(s("g"));
            boxed!(r)
        }
        ApiKey::OffsetCommit => {
            let mut r = OffsetCommitRequest::default();
            r.group_id = GroupId(s(&format!("commit-{version}")));
            let mut t = offset_commit_request::OffsetCommitRequestTopic::default();
            t.name = orders;
            let mut p = offset_commit_request::OffsetCommitRequestPartition::default();
            p.committed_offset = 3;
            t.partitions = vec![p];
            r.topics = vec![t];
            boxed!(r)
        }
        ApiKey::Produce => {
            let mut r = ProduceRequest::default();
            r.acks = 1;
            let mut t = produce_request::TopicProduceData::default();
            if version >= 13 {
                t.topic_id = uuid::Uuid::from_bytes(super::catalog::derived_topic_id("orders"));
            } else {
                t.name = orders;
            }
            t.partition_data = vec![Default::default()];
            r.topic_data = vec![t];
            boxed!(r)
        }
        ApiKey::CreateTopics => {
            let mut r = CreateTopicsRequest::default();
            let mut t = create_topics_request::CreatableTopic::default();
            t.name = TopicName(s("new"));
            r.topics = vec![t];
            boxed!(r)
        }
        ApiKey::DeleteTopics => {
            let mut r = DeleteTopicsRequest::default();
            if version >= 6 {
                let mut t = delete_topics_request::DeleteTopicState::default();
                t.name = Some(orders);
                r.topics = vec![t];
            } else {
                r.topic_names = vec![orders];
            }
            boxed!(r)
        }
        ApiKey::InitProducerId => boxed!(InitProducerIdRequest::default()),
        ApiKey::DeleteRecords => boxed!(DeleteRecordsRequest::default()),
        ApiKey::CreatePartitions => boxed!(CreatePartitionsRequest::default()),
        ApiKey::AlterConfigs => boxed!(AlterConfigsRequest::default()),
        ApiKey::IncrementalAlterConfigs => boxed!(IncrementalAlterConfigsRequest::default()),
        // The group membership APIs wait for a rebalance: tested through real clients.
        _ => None,
    }
}

fn roundtrip(stream: &mut TcpStream, key: ApiKey, version: i16, correlation: i32) -> Bytes {
    let encode = request(key, version).expect("a request");
    let mut frame = BytesMut::new();
    let mut header = RequestHeader::default();
    header.request_api_key = key as i16;
    header.request_api_version = version;
    header.correlation_id = correlation;
    header.client_id = Some(s("wire-tests"));
    header
        .encode(&mut frame, key.request_header_version(version))
        .unwrap();
    encode(&mut frame).unwrap_or_else(|e| panic!("{key:?} v{version}: {e}"));
    stream
        .write_all(&(frame.len() as i32).to_be_bytes())
        .unwrap();
    stream.write_all(&frame).unwrap();
    let mut size = [0u8; 4];
    stream
        .read_exact(&mut size)
        .unwrap_or_else(|e| panic!("{key:?} v{version}: no answer ({e})"));
    let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
    stream.read_exact(&mut body).unwrap();
    let mut body = Bytes::from(body);
    let header = ResponseHeader::decode(&mut body, key.response_header_version(version)).unwrap();
    assert_eq!(header.correlation_id, correlation, "{key:?} v{version}");
    body
}

#[test]
fn every_api_at_every_version() {
    let storage: Arc<dyn Storage> = Arc::new(Router::new(Vec::new()));
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/logs");
    let options = Options {
        paths: vec![dir],
        listen: "127.0.0.1:0".to_string(),
        ..Options::default()
    };
    let mut server = Server::start(storage, options, Box::new(|_| {})).unwrap();
    let mut stream = TcpStream::connect(server.address()).unwrap();
    let mut correlation = 0;
    let mut answered = 0;
    for &key in APIS {
        let (min, max) = versions(key).unwrap();
        for version in min..=max {
            if request(key, version).is_none() {
                continue;
            }
            correlation += 1;
            let mut body = roundtrip(&mut stream, key, version, correlation);
            macro_rules! check {
                ($t:ty) => {{
                    let r = <$t>::decode(&mut body, version)
                        .unwrap_or_else(|e| panic!("{key:?} v{version}: {e}"));
                    assert_eq!(body.remaining(), 0, "{key:?} v{version}");
                    r
                }};
            }
            match key {
                ApiKey::ApiVersions => {
                    let r = check!(ApiVersionsResponse);
                    assert_eq!(r.error_code, 0);
                    assert_eq!(r.api_keys.len(), APIS.len());
                }
                ApiKey::Metadata => {
                    let r = check!(MetadataResponse);
                    assert_eq!(r.topics[0].error_code, 0, "v{version}");
                    assert_eq!(r.topics[0].partitions.len(), 2);
                }
                ApiKey::Fetch => {
                    let r = check!(FetchResponse);
                    let p = &r.responses[0].partitions[0];
                    assert_eq!(p.error_code, 0, "v{version}");
                    assert!(p.records.as_ref().is_some_and(|b| !b.is_empty()));
                }
                ApiKey::ListOffsets => {
                    let r = check!(ListOffsetsResponse);
                    assert_eq!(r.topics[0].partitions[0].error_code, 0);
                    assert_eq!(r.topics[0].partitions[0].offset, 0);
                }
                ApiKey::OffsetForLeaderEpoch => {
                    check!(OffsetForLeaderEpochResponse);
                }
                ApiKey::DescribeConfigs => {
                    let r = check!(DescribeConfigsResponse);
                    assert!(!r.results[0].configs.is_empty());
                }
                ApiKey::FindCoordinator => {
                    check!(FindCoordinatorResponse);
                }
                ApiKey::OffsetFetch => {
                    check!(OffsetFetchResponse);
                }
                ApiKey::ListGroups => {
                    check!(ListGroupsResponse);
                }
                ApiKey::DescribeGroups => {
                    check!(DescribeGroupsResponse);
                }
                ApiKey::DescribeCluster => {
                    check!(DescribeClusterResponse);
                }
                ApiKey::Heartbeat => {
                    let r = check!(HeartbeatResponse);
                    assert_eq!(r.error_code, super::codes::code::UNKNOWN_MEMBER_ID);
                }
                ApiKey::OffsetCommit => {
                    let r = check!(OffsetCommitResponse);
                    assert_eq!(r.topics[0].partitions[0].error_code, 0);
                }
                ApiKey::Produce => {
                    let r = check!(ProduceResponse);
                    let p = &r.responses[0].partition_responses[0];
                    assert_eq!(p.error_code, super::codes::code::POLICY_VIOLATION);
                }
                ApiKey::CreateTopics => {
                    let r = check!(CreateTopicsResponse);
                    assert_eq!(r.topics[0].error_code, super::codes::code::POLICY_VIOLATION);
                }
                ApiKey::DeleteTopics => {
                    let r = check!(DeleteTopicsResponse);
                    assert_eq!(
                        r.responses[0].error_code,
                        super::codes::code::POLICY_VIOLATION
                    );
                }
                ApiKey::InitProducerId => {
                    let r = check!(InitProducerIdResponse);
                    assert_eq!(r.error_code, super::codes::code::POLICY_VIOLATION);
                }
                ApiKey::DeleteRecords => {
                    check!(DeleteRecordsResponse);
                }
                ApiKey::CreatePartitions => {
                    check!(CreatePartitionsResponse);
                }
                ApiKey::AlterConfigs => {
                    check!(AlterConfigsResponse);
                }
                ApiKey::IncrementalAlterConfigs => {
                    check!(IncrementalAlterConfigsResponse);
                }
                other => panic!("{other:?} has no check"),
            }
            answered += 1;
        }
    }
    assert!(answered > 120, "{answered}");
    server.close();
}

/// A request body of `key` at `version` for the decoding tests: [`request`]'s, or one with an
/// array in it for the group APIs it leaves out.
fn sample_body(key: ApiKey, version: i16) -> Bytes {
    let mut out = BytesMut::new();
    match request(key, version) {
        Some(encode) => encode(&mut out).unwrap(),
        None => match key {
            ApiKey::JoinGroup => {
                let mut r = JoinGroupRequest::default();
                r.group_id = GroupId(s("readers"));
                r.protocol_type = s("consumer");
                let mut p = join_group_request::JoinGroupRequestProtocol::default();
                p.name = s("range");
                p.metadata = Bytes::from_static(b"\0\x01\0\0\0\x01\0\x06orders");
                r.protocols = vec![p.clone(), p];
                r.encode(&mut out, version).unwrap()
            }
            ApiKey::SyncGroup => {
                let mut r = SyncGroupRequest::default();
                r.group_id = GroupId(s("readers"));
                let mut a = sync_group_request::SyncGroupRequestAssignment::default();
                a.member_id = s("m-1");
                a.assignment = Bytes::from_static(b"\0\x01\0\0\0\x01");
                r.assignments = vec![a];
                r.encode(&mut out, version).unwrap()
            }
            ApiKey::LeaveGroup => {
                let mut r = LeaveGroupRequest::default();
                r.group_id = GroupId(s("readers"));
                if version >= 3 {
                    let mut m = leave_group_request::MemberIdentity::default();
                    m.member_id = s("m-1");
                    r.members = vec![m];
                } else {
                    r.member_id = s("m-1");
                }
                r.encode(&mut out, version).unwrap()
            }
            other => panic!("{other:?} has no sample"),
        },
    }
    out.freeze()
}

/// Mutated requests (counts made huge, bytes changed, bodies cut) are either refused by the
/// bounded decoding or decoded by it exactly as the protocol crate decodes them; unchanged
/// ones are always taken. (A huge count that slipped through would make the crate reserve
/// gigabytes, and this test abort.)
#[test]
fn bounded_decoding_refuses_only_what_cannot_fit() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut taken, mut refused) = (0, 0);
    for &key in APIS {
        let (min, max) = versions(key).unwrap();
        for version in min..=max {
            let body = sample_body(key, version);
            assert_eq!(
                super::api::decodes_alike(key, version, &body),
                Some(true),
                "{key:?} v{version} unchanged"
            );
            for _ in 0..200 {
                let mut bytes = body.to_vec();
                if bytes.is_empty() {
                    break;
                }
                let at = (next() % bytes.len() as u64) as usize;
                match next() % 4 {
                    0 => {
                        let big = [0x7f, 0xff, 0xff, (next() % 256) as u8];
                        for (i, b) in big.iter().enumerate() {
                            if let Some(slot) = bytes.get_mut(at + i) {
                                *slot = *b;
                            }
                        }
                    }
                    1 => {
                        let big = [0xff, 0xff, 0xff, 0xff, (next() % 16) as u8];
                        for (i, b) in big.iter().enumerate() {
                            if let Some(slot) = bytes.get_mut(at + i) {
                                *slot = *b;
                            }
                        }
                    }
                    2 => bytes[at] = next() as u8,
                    _ => bytes.truncate(at),
                }
                match super::api::decodes_alike(key, version, &Bytes::from(bytes.clone())) {
                    Some(alike) => {
                        assert!(alike, "{key:?} v{version}: {bytes:02x?}");
                        taken += 1;
                    }
                    None => refused += 1,
                }
            }
        }
    }
    assert!(
        taken > 1000 && refused > 1000,
        "{taken} taken, {refused} refused"
    );
}
