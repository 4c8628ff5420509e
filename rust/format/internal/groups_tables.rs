//! Record schemas of `__consumer_offsets`: keys (their version is the record type) and values.

// Field facts transcribed from Apache Kafka's message definitions (group-coordinator, clients'
// consumer protocol) as of Kafka's trunk of 21 November 2025 (commit
// 8b119e5105906a66cc99264527670c88b07c7a10, version 4.2.0-SNAPSHOT); see `schema.rs` for the form.
// Names are the JSON names (first letter lower-cased).
// Versions: `V(lo, hi)`, `MAX` = "and later", `NONE` = never.

use super::schema::{f, Message, Type as T, MAX, NONE, V};

pub static LEGACY_OFFSET_COMMIT_KEY: Message = Message {
    name: "LegacyOffsetCommitKey",
    api_key: -1,
    valid: V(0, 0),
    flexible: NONE,
    fields: &[
        f("group", T::Str, V(0, 0)),
        f("topic", T::Str, V(0, 0)),
        f("partition", T::Int32, V(0, 0)),
    ],
};

pub static OFFSET_COMMIT_KEY: Message = Message {
    name: "OffsetCommitKey",
    api_key: -1,
    valid: V(1, 1),
    flexible: NONE,
    fields: &[
        f("group", T::Str, V(1, 1)),
        f("topic", T::Str, V(1, 1)),
        f("partition", T::Int32, V(1, 1)),
    ],
};

pub static OFFSET_COMMIT_VALUE: Message = Message {
    name: "OffsetCommitValue",
    api_key: -1,
    valid: V(0, 4),
    flexible: V(4, MAX),
    fields: &[
        f("offset", T::Int64, V(0, MAX)),
        f("leaderEpoch", T::Int32, V(3, MAX)).default("-1"),
        f("metadata", T::Str, V(0, MAX)),
        f("commitTimestamp", T::Int64, V(0, MAX)),
        f("expireTimestamp", T::Int64, V(1, 1)).default("-1"),
        f("topicId", T::Uuid, V(4, MAX)).tagged(0, V(4, MAX)),
    ],
};

pub static GROUP_METADATA_KEY: Message = Message {
    name: "GroupMetadataKey",
    api_key: -1,
    valid: V(2, 2),
    flexible: NONE,
    fields: &[f("group", T::Str, V(2, 2))],
};

pub static GROUP_METADATA_VALUE: Message = Message {
    name: "GroupMetadataValue",
    api_key: -1,
    valid: V(0, 4),
    flexible: V(4, MAX),
    fields: &[
        f("protocolType", T::Str, V(0, MAX)),
        f("generation", T::Int32, V(0, MAX)),
        f("protocol", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("leader", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("currentStateTimestamp", T::Int64, V(2, MAX)).default("-1"),
        f(
            "members",
            T::Array(&T::Struct(&[
                f("memberId", T::Str, V(0, MAX)),
                f("groupInstanceId", T::Str, V(3, MAX))
                    .nullable(V(3, MAX))
                    .default("null"),
                f("clientId", T::Str, V(0, MAX)),
                f("clientHost", T::Str, V(0, MAX)),
                f("rebalanceTimeout", T::Int32, V(1, MAX)).default("-1"),
                f("sessionTimeout", T::Int32, V(0, MAX)),
                f("subscription", T::Bytes, V(0, MAX)),
                f("assignment", T::Bytes, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Message = Message {
    name: "ConsumerGroupCurrentMemberAssignmentKey",
    api_key: -1,
    valid: V(8, 8),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(8, 8)),
        f("memberId", T::Str, V(8, 8)),
    ],
};

pub static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Message = Message {
    name: "ConsumerGroupCurrentMemberAssignmentValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("memberEpoch", T::Int32, V(0, MAX)),
        f("previousMemberEpoch", T::Int32, V(0, MAX)),
        f("state", T::Int8, V(0, MAX)),
        f(
            "assignedPartitions",
            T::Array(&T::Struct(&[
                f("topicId", T::Uuid, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "partitionsPendingRevocation",
            T::Array(&T::Struct(&[
                f("topicId", T::Uuid, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static CONSUMER_GROUP_MEMBER_METADATA_KEY: Message = Message {
    name: "ConsumerGroupMemberMetadataKey",
    api_key: -1,
    valid: V(5, 5),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(5, 5)),
        f("memberId", T::Str, V(5, 5)),
    ],
};

pub static CONSUMER_GROUP_MEMBER_METADATA_VALUE: Message = Message {
    name: "ConsumerGroupMemberMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("instanceId", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("rackId", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("clientId", T::Str, V(0, MAX)),
        f("clientHost", T::Str, V(0, MAX)),
        f("subscribedTopicNames", T::Array(&T::Str), V(0, MAX)),
        f("subscribedTopicRegex", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("rebalanceTimeoutMs", T::Int32, V(0, MAX)).default("-1"),
        f("serverAssignor", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f(
            "classicMemberMetadata",
            T::Struct(&[
                f("sessionTimeoutMs", T::Int32, V(0, MAX)),
                f(
                    "supportedProtocols",
                    T::Array(&T::Struct(&[
                        f("name", T::Str, V(0, MAX)),
                        f("metadata", T::Bytes, V(0, MAX)),
                    ])),
                    V(0, MAX),
                ),
            ]),
            V(0, MAX),
        )
        .nullable(V(0, MAX))
        .tagged(0, V(0, MAX))
        .default("null"),
    ],
};

pub static CONSUMER_GROUP_METADATA_KEY: Message = Message {
    name: "ConsumerGroupMetadataKey",
    api_key: -1,
    valid: V(3, 3),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(3, 3))],
};

pub static CONSUMER_GROUP_METADATA_VALUE: Message = Message {
    name: "ConsumerGroupMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("epoch", T::Int32, V(0, MAX)),
        f("metadataHash", T::Int64, V(0, MAX))
            .tagged(0, V(0, MAX))
            .default("0"),
    ],
};

pub static CONSUMER_GROUP_PARTITION_METADATA_KEY: Message = Message {
    name: "ConsumerGroupPartitionMetadataKey",
    api_key: -1,
    valid: V(4, 4),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(4, 4))],
};

pub static CONSUMER_GROUP_PARTITION_METADATA_VALUE: Message = Message {
    name: "ConsumerGroupPartitionMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f(
        "topics",
        T::Array(&T::Struct(&[
            f("topicId", T::Uuid, V(0, MAX)),
            f("topicName", T::Str, V(0, MAX)),
            f("numPartitions", T::Int32, V(0, MAX)),
            f(
                "partitionMetadata",
                T::Array(&T::Struct(&[
                    f("partition", T::Int32, V(0, MAX)),
                    f("racks", T::Array(&T::Str), V(0, MAX)),
                ])),
                V(0, MAX),
            ),
        ])),
        V(0, MAX),
    )],
};

pub static CONSUMER_GROUP_REGULAR_EXPRESSION_KEY: Message = Message {
    name: "ConsumerGroupRegularExpressionKey",
    api_key: -1,
    valid: V(16, 16),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(16, 16)),
        f("regularExpression", T::Str, V(16, 16)),
    ],
};

pub static CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE: Message = Message {
    name: "ConsumerGroupRegularExpressionValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("topics", T::Array(&T::Str), V(0, MAX)),
        f("version", T::Int64, V(0, MAX)),
        f("timestamp", T::Int64, V(0, MAX)),
    ],
};

pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Message = Message {
    name: "ConsumerGroupTargetAssignmentMemberKey",
    api_key: -1,
    valid: V(7, 7),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(7, 7)),
        f("memberId", T::Str, V(7, 7)),
    ],
};

pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Message = Message {
    name: "ConsumerGroupTargetAssignmentMemberValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f(
        "topicPartitions",
        T::Array(&T::Struct(&[
            f("topicId", T::Uuid, V(0, MAX)),
            f("partitions", T::Array(&T::Int32), V(0, MAX)),
        ])),
        V(0, MAX),
    )],
};

pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Message = Message {
    name: "ConsumerGroupTargetAssignmentMetadataKey",
    api_key: -1,
    valid: V(6, 6),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(6, 6))],
};

pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Message = Message {
    name: "ConsumerGroupTargetAssignmentMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("assignmentEpoch", T::Int32, V(0, MAX))],
};

pub static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Message = Message {
    name: "ShareGroupCurrentMemberAssignmentKey",
    api_key: -1,
    valid: V(14, 14),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(14, 14)),
        f("memberId", T::Str, V(14, 14)),
    ],
};

pub static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Message = Message {
    name: "ShareGroupCurrentMemberAssignmentValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("memberEpoch", T::Int32, V(0, MAX)),
        f("previousMemberEpoch", T::Int32, V(0, MAX)),
        f("state", T::Int8, V(0, MAX)),
        f(
            "assignedPartitions",
            T::Array(&T::Struct(&[
                f("topicId", T::Uuid, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static SHARE_GROUP_MEMBER_METADATA_KEY: Message = Message {
    name: "ShareGroupMemberMetadataKey",
    api_key: -1,
    valid: V(10, 10),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(10, 10)),
        f("memberId", T::Str, V(10, 10)),
    ],
};

pub static SHARE_GROUP_MEMBER_METADATA_VALUE: Message = Message {
    name: "ShareGroupMemberMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("rackId", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("clientId", T::Str, V(0, MAX)),
        f("clientHost", T::Str, V(0, MAX)),
        f("subscribedTopicNames", T::Array(&T::Str), V(0, MAX)),
    ],
};

pub static SHARE_GROUP_METADATA_KEY: Message = Message {
    name: "ShareGroupMetadataKey",
    api_key: -1,
    valid: V(11, 11),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(11, 11))],
};

pub static SHARE_GROUP_METADATA_VALUE: Message = Message {
    name: "ShareGroupMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("epoch", T::Int32, V(0, MAX)),
        f("metadataHash", T::Int64, V(0, MAX)),
    ],
};

// Record types 9 (share group partition metadata) and 18 (streams group partition metadata) are
// no longer in Kafka's trunk (their groups keep a metadata hash instead); the tables are those of
// the last definitions, for logs written by the brokers that had them.

pub static SHARE_GROUP_PARTITION_METADATA_KEY: Message = Message {
    name: "ShareGroupPartitionMetadataKey",
    api_key: -1,
    valid: V(9, 9),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(9, 9))],
};

pub static SHARE_GROUP_PARTITION_METADATA_VALUE: Message = Message {
    name: "ShareGroupPartitionMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f(
        "topics",
        T::Array(&T::Struct(&[
            f("topicId", T::Uuid, V(0, MAX)),
            f("topicName", T::Str, V(0, MAX)),
            f("numPartitions", T::Int32, V(0, MAX)),
            f(
                "partitionMetadata",
                T::Array(&T::Struct(&[
                    f("partition", T::Int32, V(0, MAX)),
                    f("racks", T::Array(&T::Str), V(0, MAX)),
                ])),
                V(0, MAX),
            ),
        ])),
        V(0, MAX),
    )],
};

pub static SHARE_GROUP_STATE_PARTITION_METADATA_KEY: Message = Message {
    name: "ShareGroupStatePartitionMetadataKey",
    api_key: -1,
    valid: V(15, 15),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(15, 15))],
};

pub static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE: Message = Message {
    name: "ShareGroupStatePartitionMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f(
            "initializingTopics",
            T::Array(&T::Struct(&[
                f("topicId", T::Uuid, V(0, MAX)),
                f("topicName", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "initializedTopics",
            T::Array(&T::Struct(&[
                f("topicId", T::Uuid, V(0, MAX)),
                f("topicName", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "deletingTopics",
            T::Array(&T::Struct(&[
                f("topicId", T::Uuid, V(0, MAX)),
                f("topicName", T::Str, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Message = Message {
    name: "ShareGroupTargetAssignmentMemberKey",
    api_key: -1,
    valid: V(13, 13),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(13, 13)),
        f("memberId", T::Str, V(13, 13)),
    ],
};

pub static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Message = Message {
    name: "ShareGroupTargetAssignmentMemberValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f(
        "topicPartitions",
        T::Array(&T::Struct(&[
            f("topicId", T::Uuid, V(0, MAX)),
            f("partitions", T::Array(&T::Int32), V(0, MAX)),
        ])),
        V(0, MAX),
    )],
};

pub static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Message = Message {
    name: "ShareGroupTargetAssignmentMetadataKey",
    api_key: -1,
    valid: V(12, 12),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(12, 12))],
};

pub static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Message = Message {
    name: "ShareGroupTargetAssignmentMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("assignmentEpoch", T::Int32, V(0, MAX))],
};

pub static STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Message = Message {
    name: "StreamsGroupCurrentMemberAssignmentKey",
    api_key: -1,
    valid: V(22, 22),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(22, 22)),
        f("memberId", T::Str, V(22, 22)),
    ],
};

pub static STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Message = Message {
    name: "StreamsGroupCurrentMemberAssignmentValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("memberEpoch", T::Int32, V(0, MAX)),
        f("previousMemberEpoch", T::Int32, V(0, MAX)),
        f("state", T::Int8, V(0, MAX)),
        f(
            "activeTasks",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
                f("assignmentEpochs", T::Array(&T::Int32), V(0, MAX))
                    .nullable(V(0, MAX))
                    .tagged(0, V(0, MAX))
                    .default("null"),
            ])),
            V(0, MAX),
        ),
        f(
            "standbyTasks",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
                f("assignmentEpochs", T::Array(&T::Int32), V(0, MAX))
                    .nullable(V(0, MAX))
                    .tagged(0, V(0, MAX))
                    .default("null"),
            ])),
            V(0, MAX),
        ),
        f(
            "warmupTasks",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
                f("assignmentEpochs", T::Array(&T::Int32), V(0, MAX))
                    .nullable(V(0, MAX))
                    .tagged(0, V(0, MAX))
                    .default("null"),
            ])),
            V(0, MAX),
        ),
        f(
            "activeTasksPendingRevocation",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
                f("assignmentEpochs", T::Array(&T::Int32), V(0, MAX))
                    .nullable(V(0, MAX))
                    .tagged(0, V(0, MAX))
                    .default("null"),
            ])),
            V(0, MAX),
        ),
        f(
            "standbyTasksPendingRevocation",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
                f("assignmentEpochs", T::Array(&T::Int32), V(0, MAX))
                    .nullable(V(0, MAX))
                    .tagged(0, V(0, MAX))
                    .default("null"),
            ])),
            V(0, MAX),
        ),
        f(
            "warmupTasksPendingRevocation",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
                f("assignmentEpochs", T::Array(&T::Int32), V(0, MAX))
                    .nullable(V(0, MAX))
                    .tagged(0, V(0, MAX))
                    .default("null"),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static STREAMS_GROUP_MEMBER_METADATA_KEY: Message = Message {
    name: "StreamsGroupMemberMetadataKey",
    api_key: -1,
    valid: V(19, 19),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(19, 19)),
        f("memberId", T::Str, V(19, 19)),
    ],
};

pub static STREAMS_GROUP_MEMBER_METADATA_VALUE: Message = Message {
    name: "StreamsGroupMemberMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("instanceId", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("rackId", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("clientId", T::Str, V(0, MAX)),
        f("clientHost", T::Str, V(0, MAX)),
        f("rebalanceTimeoutMs", T::Int32, V(0, MAX)).default("-1"),
        f("topologyEpoch", T::Int32, V(0, MAX)),
        f("processId", T::Str, V(0, MAX)),
        f(
            "userEndpoint",
            T::Struct(&[
                f("host", T::Str, V(0, MAX)),
                f("port", T::Uint16, V(0, MAX)),
            ]),
            V(0, MAX),
        )
        .nullable(V(0, MAX))
        .default("null"),
        f(
            "clientTags",
            T::Array(&T::Struct(&[
                f("key", T::Str, V(0, MAX)),
                f("value", T::Str, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static STREAMS_GROUP_METADATA_KEY: Message = Message {
    name: "StreamsGroupMetadataKey",
    api_key: -1,
    valid: V(17, 17),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(17, 17))],
};

pub static STREAMS_GROUP_METADATA_VALUE: Message = Message {
    name: "StreamsGroupMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("epoch", T::Int32, V(0, MAX)),
        f("metadataHash", T::Int64, V(0, MAX)),
        f("validatedTopologyEpoch", T::Int32, V(0, MAX))
            .tagged(0, V(0, MAX))
            .default("-1"),
        f(
            "lastAssignmentConfigs",
            T::Array(&T::Struct(&[
                f("key", T::Str, V(0, MAX)),
                f("value", T::Str, V(0, MAX)),
            ])),
            NONE,
        )
        .nullable(V(0, MAX))
        .tagged(1, V(0, MAX))
        .default("null"),
    ],
};

// Record type 18: no longer in Kafka's trunk (see type 9).
pub static STREAMS_GROUP_PARTITION_METADATA_KEY: Message = Message {
    name: "StreamsGroupPartitionMetadataKey",
    api_key: -1,
    valid: V(18, 18),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(18, 18))],
};

pub static STREAMS_GROUP_PARTITION_METADATA_VALUE: Message = Message {
    name: "StreamsGroupPartitionMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f(
        "topics",
        T::Array(&T::Struct(&[
            f("topicId", T::Uuid, V(0, MAX)),
            f("topicName", T::Str, V(0, MAX)),
            f("numPartitions", T::Int32, V(0, MAX)),
            f(
                "partitionMetadata",
                T::Array(&T::Struct(&[
                    f("partition", T::Int32, V(0, MAX)),
                    f("racks", T::Array(&T::Str), V(0, MAX)),
                ])),
                V(0, MAX),
            ),
        ])),
        V(0, MAX),
    )],
};

pub static STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Message = Message {
    name: "StreamsGroupTargetAssignmentMemberKey",
    api_key: -1,
    valid: V(21, 21),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(21, 21)),
        f("memberId", T::Str, V(21, 21)),
    ],
};

pub static STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Message = Message {
    name: "StreamsGroupTargetAssignmentMemberValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f(
            "activeTasks",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "standbyTasks",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "warmupTasks",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Message = Message {
    name: "StreamsGroupTargetAssignmentMetadataKey",
    api_key: -1,
    valid: V(20, 20),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(20, 20))],
};

pub static STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Message = Message {
    name: "StreamsGroupTargetAssignmentMetadataValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("assignmentEpoch", T::Int32, V(0, MAX))],
};

pub static STREAMS_GROUP_TOPOLOGY_KEY: Message = Message {
    name: "StreamsGroupTopologyKey",
    api_key: -1,
    valid: V(23, 23),
    flexible: NONE,
    fields: &[f("groupId", T::Str, V(23, 23))],
};

pub static STREAMS_GROUP_TOPOLOGY_VALUE: Message = Message {
    name: "StreamsGroupTopologyValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("epoch", T::Int32, V(0, MAX)),
        f(
            "subtopologies",
            T::Array(&T::Struct(&[
                f("subtopologyId", T::Str, V(0, MAX)),
                f("sourceTopics", T::Array(&T::Str), V(0, MAX)),
                f("sourceTopicRegex", T::Array(&T::Str), V(0, MAX)),
                f(
                    "stateChangelogTopics",
                    T::Array(&T::Struct(&[
                        f("name", T::Str, V(0, MAX)),
                        f("partitions", T::Int32, V(0, MAX)),
                        f("replicationFactor", T::Int16, V(0, MAX)),
                        f(
                            "topicConfigs",
                            T::Array(&T::Struct(&[
                                f("key", T::Str, V(0, MAX)),
                                f("value", T::Str, V(0, MAX)),
                            ])),
                            V(0, MAX),
                        ),
                    ])),
                    V(0, MAX),
                ),
                f("repartitionSinkTopics", T::Array(&T::Str), V(0, MAX)),
                f(
                    "repartitionSourceTopics",
                    T::Array(&T::Struct(&[
                        f("name", T::Str, V(0, MAX)),
                        f("partitions", T::Int32, V(0, MAX)),
                        f("replicationFactor", T::Int16, V(0, MAX)),
                        f(
                            "topicConfigs",
                            T::Array(&T::Struct(&[
                                f("key", T::Str, V(0, MAX)),
                                f("value", T::Str, V(0, MAX)),
                            ])),
                            V(0, MAX),
                        ),
                    ])),
                    V(0, MAX),
                ),
                f(
                    "copartitionGroups",
                    T::Array(&T::Struct(&[
                        f("sourceTopics", T::Array(&T::Int16), V(0, MAX)),
                        f("sourceTopicRegex", T::Array(&T::Int16), V(0, MAX)),
                        f("repartitionSourceTopics", T::Array(&T::Int16), V(0, MAX)),
                    ])),
                    V(0, MAX),
                ),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static CONSUMER_PROTOCOL_SUBSCRIPTION: Message = Message {
    name: "ConsumerProtocolSubscription",
    api_key: -1,
    valid: V(0, 3),
    flexible: NONE,
    fields: &[
        f("topics", T::Array(&T::Str), V(0, MAX)),
        f("userData", T::Bytes, V(0, MAX))
            .nullable(V(0, MAX))
            .default("null"),
        f(
            "ownedPartitions",
            T::Array(&T::Struct(&[
                f("topic", T::Str, V(1, MAX)),
                f("partitions", T::Array(&T::Int32), V(1, MAX)),
            ])),
            V(1, MAX),
        ),
        f("generationId", T::Int32, V(2, MAX)).default("-1"),
        f("rackId", T::Str, V(3, MAX))
            .nullable(V(3, MAX))
            .default("null"),
    ],
};

pub static CONSUMER_PROTOCOL_ASSIGNMENT: Message = Message {
    name: "ConsumerProtocolAssignment",
    api_key: -1,
    valid: V(0, 3),
    flexible: NONE,
    fields: &[
        f(
            "assignedPartitions",
            T::Array(&T::Struct(&[
                f("topic", T::Str, V(0, MAX)),
                f("partitions", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f("userData", T::Bytes, V(0, MAX))
            .nullable(V(0, MAX))
            .default("null"),
    ],
};
