//! Every API that would write, refused: the endpoint serves a backup, and nothing under the
//! served paths is ever written. Each is answered in its own response with POLICY_VIOLATION
//! and, where the response has room for one, a message saying why; a Produce with acks=0 gets
//! no answer, as on a broker.

use super::codes::code;
use super::shared::Shared;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn refusal(api: &str) -> String {
    format!(
        "kafkalog serve is a read-only endpoint over a backup: {api} is refused (nothing under \
         the served paths is ever written)"
    )
}

/// The refusal of a request of `key` (its body in `body`), encoded without its header; `None`
/// for a Produce that asked for no answer.
pub fn answer(
    shared: &Shared,
    key: ApiKey,
    version: i16,
    body: &Bytes,
    peer: &str,
) -> anyhow::Result<Option<BytesMut>> {
    macro_rules! decode {
        ($t:ty) => {
            super::bounded::decode::<$t>(body, version)?
        };
    }
    let mut out = BytesMut::new();
    match key {
        ApiKey::Produce => {
            let request = decode!(ProduceRequest);
            shared.log(&format!("{peer}: {}", refusal("Produce")));
            if request.acks == 0 {
                return Ok(None);
            }
            let mut r = ProduceResponse::default();
            r.responses = request
                .topic_data
                .iter()
                .map(|t| {
                    let mut tr = produce_response::TopicProduceResponse::default();
                    tr.name = t.name.clone();
                    tr.topic_id = t.topic_id;
                    tr.partition_responses = t
                        .partition_data
                        .iter()
                        .map(|p| {
                            let mut pr = produce_response::PartitionProduceResponse::default();
                            pr.index = p.index;
                            pr.error_code = code::POLICY_VIOLATION;
                            pr.base_offset = -1;
                            pr.log_append_time_ms = -1;
                            pr.log_start_offset = -1;
                            pr.error_message = Some(s(&refusal("Produce")));
                            pr
                        })
                        .collect();
                    tr
                })
                .collect();
            super::versions::produce(&mut r, version);
            r.encode(&mut out, version)?
        }
        ApiKey::InitProducerId => {
            let _ = decode!(InitProducerIdRequest);
            shared.log(&format!("{peer}: {}", refusal("InitProducerId")));
            let mut r = InitProducerIdResponse::default();
            r.error_code = code::POLICY_VIOLATION;
            r.producer_id = ProducerId(-1);
            r.producer_epoch = -1;
            r.encode(&mut out, version)?
        }
        ApiKey::CreateTopics => {
            let request = decode!(CreateTopicsRequest);
            let mut r = CreateTopicsResponse::default();
            r.topics = request
                .topics
                .iter()
                .map(|t| {
                    let mut tr = create_topics_response::CreatableTopicResult::default();
                    tr.name = t.name.clone();
                    tr.error_code = code::POLICY_VIOLATION;
                    tr.error_message = Some(s(&refusal("CreateTopics")));
                    tr.num_partitions = -1;
                    tr.replication_factor = -1;
                    tr
                })
                .collect();
            super::versions::create_topics(&mut r, version);
            r.encode(&mut out, version)?
        }
        ApiKey::DeleteTopics => {
            let request = decode!(DeleteTopicsRequest);
            let mut r = DeleteTopicsResponse::default();
            let mut names: Vec<(Option<TopicName>, uuid::Uuid)> = request
                .topics
                .iter()
                .map(|t| (t.name.clone(), t.topic_id))
                .collect();
            names.extend(
                request
                    .topic_names
                    .iter()
                    .map(|n| (Some(n.clone()), uuid::Uuid::nil())),
            );
            r.responses = names
                .into_iter()
                .map(|(name, id)| {
                    let mut tr = delete_topics_response::DeletableTopicResult::default();
                    tr.name = name;
                    tr.topic_id = id;
                    tr.error_code = code::POLICY_VIOLATION;
                    tr.error_message = Some(s(&refusal("DeleteTopics")));
                    tr
                })
                .collect();
            super::versions::delete_topics(&mut r, version);
            r.encode(&mut out, version)?
        }
        ApiKey::DeleteRecords => {
            let request = decode!(DeleteRecordsRequest);
            shared.log(&format!("{peer}: {}", refusal("DeleteRecords")));
            let mut r = DeleteRecordsResponse::default();
            r.topics = request
                .topics
                .iter()
                .map(|t| {
                    let mut tr = delete_records_response::DeleteRecordsTopicResult::default();
                    tr.name = t.name.clone();
                    tr.partitions = t
                        .partitions
                        .iter()
                        .map(|p| {
                            let mut pr =
                                delete_records_response::DeleteRecordsPartitionResult::default();
                            pr.partition_index = p.partition_index;
                            pr.low_watermark = -1;
                            pr.error_code = code::POLICY_VIOLATION;
                            pr
                        })
                        .collect();
                    tr
                })
                .collect();
            r.encode(&mut out, version)?
        }
        ApiKey::CreatePartitions => {
            let request = decode!(CreatePartitionsRequest);
            let mut r = CreatePartitionsResponse::default();
            r.results = request
                .topics
                .iter()
                .map(|t| {
                    let mut tr = create_partitions_response::CreatePartitionsTopicResult::default();
                    tr.name = t.name.clone();
                    tr.error_code = code::POLICY_VIOLATION;
                    tr.error_message = Some(s(&refusal("CreatePartitions")));
                    tr
                })
                .collect();
            r.encode(&mut out, version)?
        }
        ApiKey::AlterConfigs => {
            let request = decode!(AlterConfigsRequest);
            let mut r = AlterConfigsResponse::default();
            r.responses = request
                .resources
                .iter()
                .map(|c| {
                    let mut cr = alter_configs_response::AlterConfigsResourceResponse::default();
                    cr.resource_type = c.resource_type;
                    cr.resource_name = c.resource_name.clone();
                    cr.error_code = code::POLICY_VIOLATION;
                    cr.error_message = Some(s(&refusal("AlterConfigs")));
                    cr
                })
                .collect();
            r.encode(&mut out, version)?
        }
        ApiKey::IncrementalAlterConfigs => {
            let request = decode!(IncrementalAlterConfigsRequest);
            let mut r = IncrementalAlterConfigsResponse::default();
            r.responses = request
                .resources
                .iter()
                .map(|c| {
                    let mut cr =
                        incremental_alter_configs_response::AlterConfigsResourceResponse::default();
                    cr.resource_type = c.resource_type;
                    cr.resource_name = c.resource_name.clone();
                    cr.error_code = code::POLICY_VIOLATION;
                    cr.error_message = Some(s(&refusal("IncrementalAlterConfigs")));
                    cr
                })
                .collect();
            r.encode(&mut out, version)?
        }
        other => anyhow::bail!("{other:?} is not refused here"),
    }
    Ok(Some(out))
}
