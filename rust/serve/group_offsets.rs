//! OffsetCommit and OffsetFetch: committed offsets through the coordinator's checks, kept by
//! the [`super::state::OffsetStore`] (the backup's commits, then new ones).

use super::codes::code;
use super::shared::Shared;
use super::state::Commit;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn uuid_of(id: &[u8; 16]) -> uuid::Uuid {
    uuid::Uuid::from_bytes(*id)
}

pub(super) fn offset_commit(shared: &Shared, request: OffsetCommitRequest) -> OffsetCommitResponse {
    let group = request.group_id.0.to_string();
    let check = shared.groups.check_commit(
        &group,
        request.member_id.as_str(),
        request.generation_id_or_member_epoch,
    );
    let mut r = OffsetCommitResponse::default();
    let mut commits = Vec::new();
    for topic in &request.topics {
        let mut tr = offset_commit_response::OffsetCommitResponseTopic::default();
        tr.name = topic.name.clone();
        tr.topic_id = topic.topic_id;
        for p in &topic.partitions {
            let mut pr = offset_commit_response::OffsetCommitResponsePartition::default();
            pr.partition_index = p.partition_index;
            pr.error_code = if check != code::NONE {
                check
            } else if shared
                .catalog
                .partition(topic.name.0.as_str(), p.partition_index)
                .is_none()
            {
                code::UNKNOWN_TOPIC_OR_PARTITION
            } else {
                commits.push(Commit {
                    group: group.clone(),
                    topic: topic.name.0.to_string(),
                    partition: p.partition_index,
                    offset: p.committed_offset,
                    leader_epoch: p.committed_leader_epoch,
                    metadata: p
                        .committed_metadata
                        .as_ref()
                        .map(|m| m.to_string())
                        .unwrap_or_default(),
                });
                code::NONE
            };
            tr.partitions.push(pr);
        }
        r.topics.push(tr);
    }
    if let Err(e) = shared.groups.commit(commits) {
        shared.log(&format!("commit of group {group}: {e}"));
        for t in &mut r.topics {
            for p in &mut t.partitions {
                if p.error_code == code::NONE {
                    p.error_code = code::KAFKA_STORAGE_ERROR;
                }
            }
        }
    }
    r
}

pub(super) fn offset_fetch(
    shared: &Shared,
    request: OffsetFetchRequest,
    version: i16,
) -> OffsetFetchResponse {
    let store = &shared.groups.offsets;
    // (topic, partitions) wanted; None: every partition the group committed.
    let lookup = |group: &str, wanted: Option<Vec<(String, Vec<i32>)>>| {
        let wanted = wanted.unwrap_or_else(|| {
            let mut by_topic: std::collections::BTreeMap<String, Vec<i32>> = Default::default();
            for c in store.of_group(group) {
                by_topic.entry(c.topic).or_default().push(c.partition);
            }
            by_topic.into_iter().collect()
        });
        wanted
            .into_iter()
            .map(|(topic, partitions)| {
                let found = partitions
                    .into_iter()
                    .map(|partition| match store.get(group, &topic, partition) {
                        Some(c) => (partition, c.offset, c.leader_epoch, c.metadata),
                        None => (partition, -1, -1, String::new()),
                    })
                    .collect::<Vec<_>>();
                (topic, found)
            })
            .collect::<Vec<_>>()
    };
    let mut r = OffsetFetchResponse::default();
    if version >= 8 {
        for g in &request.groups {
            let wanted = g.topics.as_ref().map(|ts| {
                ts.iter()
                    .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                    .collect()
            });
            let mut gr = offset_fetch_response::OffsetFetchResponseGroup::default();
            gr.group_id = g.group_id.clone();
            gr.topics = lookup(g.group_id.0.as_str(), wanted)
                .into_iter()
                .map(|(topic, found)| {
                    let mut tr = offset_fetch_response::OffsetFetchResponseTopics::default();
                    tr.name = TopicName(s(&topic));
                    if let Some(t) = shared.catalog.topics.get(&topic) {
                        tr.topic_id = uuid_of(&t.id);
                    }
                    tr.partitions = found
                        .into_iter()
                        .map(|(partition, offset, epoch, metadata)| {
                            let mut pr =
                                offset_fetch_response::OffsetFetchResponsePartitions::default();
                            pr.partition_index = partition;
                            pr.committed_offset = offset;
                            pr.committed_leader_epoch = epoch;
                            pr.metadata = Some(s(&metadata));
                            pr
                        })
                        .collect();
                    tr
                })
                .collect();
            r.groups.push(gr);
        }
    } else {
        let wanted = request.topics.as_ref().map(|ts| {
            ts.iter()
                .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                .collect()
        });
        r.topics = lookup(request.group_id.0.as_str(), wanted)
            .into_iter()
            .map(|(topic, found)| {
                let mut tr = offset_fetch_response::OffsetFetchResponseTopic::default();
                tr.name = TopicName(s(&topic));
                tr.partitions = found
                    .into_iter()
                    .map(|(partition, offset, epoch, metadata)| {
                        let mut pr = offset_fetch_response::OffsetFetchResponsePartition::default();
                        pr.partition_index = partition;
                        pr.committed_offset = offset;
                        pr.committed_leader_epoch = epoch;
                        pr.metadata = Some(s(&metadata));
                        pr
                    })
                    .collect();
                tr
            })
            .collect();
    }
    r
}
