//! Responses fitted to the version a client asked for: a field Kafka's schema adds in a later
//! version is left at its default, as the protocol crate refuses to encode a field the
//! version does not have. The versions are Kafka's message definitions'.

use kafka_protocol::messages::*;

/// A Metadata response for `version`.
pub fn metadata(r: &mut MetadataResponse, version: i16) {
    if version < 1 {
        r.controller_id = BrokerId(-1);
    }
    if version < 2 {
        r.cluster_id = None;
    }
    for t in &mut r.topics {
        if version < 1 {
            t.is_internal = false;
        }
        if version < 10 {
            t.topic_id = uuid::Uuid::nil();
        }
        for p in &mut t.partitions {
            if version < 7 {
                p.leader_epoch = -1;
            }
        }
    }
}

/// A Fetch response for `version` (4 and later).
pub fn fetch(r: &mut FetchResponse, version: i16) {
    for t in &mut r.responses {
        for p in &mut t.partitions {
            if version < 5 {
                p.log_start_offset = -1;
            }
        }
    }
}

/// A ListOffsets response for `version`.
pub fn list_offsets(r: &mut ListOffsetsResponse, version: i16) {
    for t in &mut r.topics {
        for p in &mut t.partitions {
            if version < 4 {
                p.leader_epoch = -1;
            }
        }
    }
}

/// A JoinGroup response for `version`.
pub fn join_group(r: &mut JoinGroupResponse, version: i16) {
    if version < 7 {
        r.protocol_type = None;
        if r.protocol_name.is_none() {
            r.protocol_name = Some(Default::default());
        }
    }
    if version < 5 {
        for m in &mut r.members {
            m.group_instance_id = None;
        }
    }
}

/// A SyncGroup response for `version`.
pub fn sync_group(r: &mut SyncGroupResponse, version: i16) {
    if version < 5 {
        r.protocol_type = None;
        r.protocol_name = None;
    }
}

/// A ListGroups response for `version`.
pub fn list_groups(r: &mut ListGroupsResponse, version: i16) {
    for g in &mut r.groups {
        if version < 4 {
            g.group_state = Default::default();
        }
        if version < 5 {
            g.group_type = Default::default();
        }
    }
}

/// A DescribeGroups response for `version`.
pub fn describe_groups(r: &mut DescribeGroupsResponse, version: i16) {
    for g in &mut r.groups {
        if version < 6 {
            g.error_message = None;
        }
        if version < 4 {
            for m in &mut g.members {
                m.group_instance_id = None;
            }
        }
    }
}

/// An OffsetFetch response for `version`.
pub fn offset_fetch(r: &mut OffsetFetchResponse, version: i16) {
    if version < 5 {
        for t in &mut r.topics {
            for p in &mut t.partitions {
                p.committed_leader_epoch = -1;
            }
        }
    }
}

/// A DescribeCluster response for `version`.
pub fn describe_cluster(r: &mut DescribeClusterResponse, version: i16) {
    if version < 1 {
        r.endpoint_type = 1;
    }
}

/// A Produce response for `version` (3 and later).
pub fn produce(r: &mut ProduceResponse, version: i16) {
    for t in &mut r.responses {
        for p in &mut t.partition_responses {
            if version < 8 {
                p.error_message = None;
            }
            if version < 5 {
                p.log_start_offset = -1;
            }
        }
    }
}

/// A DeleteTopics response for `version`.
pub fn delete_topics(r: &mut DeleteTopicsResponse, version: i16) {
    for t in &mut r.responses {
        if version < 5 {
            t.error_message = None;
        }
        if version < 6 {
            t.topic_id = uuid::Uuid::nil();
        }
    }
}

/// A CreateTopics response for `version` (2 and later).
pub fn create_topics(r: &mut CreateTopicsResponse, version: i16) {
    for t in &mut r.topics {
        if version < 5 {
            t.num_partitions = -1;
            t.replication_factor = -1;
        }
    }
}
