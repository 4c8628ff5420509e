//! Record schemas of KRaft's `__cluster_metadata` (one per metadata record type).

// Field facts transcribed from Apache Kafka's message definitions (metadata; the control records:
// clients) as of Kafka's trunk of 21 November 2025 (commit
// 8b119e5105906a66cc99264527670c88b07c7a10, version 4.2.0-SNAPSHOT); see `schema.rs` for the form.
// Names are the JSON names (first letter lower-cased).
// Versions: `V(lo, hi)`, `MAX` = "and later", `NONE` = never.

use super::schema::{f, Message, Type as T, MAX, V};

pub static ABORT_TRANSACTION_RECORD: Message = Message {
    name: "AbortTransactionRecord",
    api_key: 25,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("reason", T::Str, V(0, MAX))
        .nullable(V(0, MAX))
        .tagged(0, V(0, MAX))
        .default("null")],
};

pub static ACCESS_CONTROL_ENTRY_RECORD: Message = Message {
    name: "AccessControlEntryRecord",
    api_key: 18,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("id", T::Uuid, V(0, MAX)),
        f("resourceType", T::Int8, V(0, MAX)),
        f("resourceName", T::Str, V(0, MAX)),
        f("patternType", T::Int8, V(0, MAX)),
        f("principal", T::Str, V(0, MAX)),
        f("host", T::Str, V(0, MAX)),
        f("operation", T::Int8, V(0, MAX)),
        f("permissionType", T::Int8, V(0, MAX)),
    ],
};

pub static BEGIN_TRANSACTION_RECORD: Message = Message {
    name: "BeginTransactionRecord",
    api_key: 23,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("name", T::Str, V(0, MAX))
        .nullable(V(0, MAX))
        .tagged(0, V(0, MAX))
        .default("null")],
};

pub static BROKER_REGISTRATION_CHANGE_RECORD: Message = Message {
    name: "BrokerRegistrationChangeRecord",
    api_key: 17,
    valid: V(0, 2),
    flexible: V(0, MAX),
    fields: &[
        f("brokerId", T::Int32, V(0, MAX)),
        f("brokerEpoch", T::Int64, V(0, MAX)),
        f("fenced", T::Int8, V(0, MAX)).tagged(0, V(0, MAX)),
        f("inControlledShutdown", T::Int8, V(1, MAX)).tagged(1, V(1, MAX)),
        f("logDirs", T::Array(&T::Uuid), V(2, MAX)).tagged(2, V(2, MAX)),
    ],
};

pub static CLEAR_ELR_RECORD: Message = Message {
    name: "ClearElrRecord",
    api_key: 28,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("topicName", T::Str, V(0, MAX))],
};

pub static CLIENT_QUOTA_RECORD: Message = Message {
    name: "ClientQuotaRecord",
    api_key: 14,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f(
            "entity",
            T::Array(&T::Struct(&[
                f("entityType", T::Str, V(0, MAX)),
                f("entityName", T::Str, V(0, MAX)).nullable(V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f("key", T::Str, V(0, MAX)),
        f("value", T::Float64, V(0, MAX)),
        f("remove", T::Bool, V(0, MAX)),
    ],
};

pub static CONFIG_RECORD: Message = Message {
    name: "ConfigRecord",
    api_key: 4,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("resourceType", T::Int8, V(0, MAX)),
        f("resourceName", T::Str, V(0, MAX)),
        f("name", T::Str, V(0, MAX)),
        f("value", T::Str, V(0, MAX)).nullable(V(0, MAX)),
    ],
};

pub static DELEGATION_TOKEN_RECORD: Message = Message {
    name: "DelegationTokenRecord",
    api_key: 10,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("owner", T::Str, V(0, MAX)),
        f("requester", T::Str, V(0, MAX)),
        f("renewers", T::Array(&T::Str), V(0, MAX)),
        f("issueTimestamp", T::Int64, V(0, MAX)),
        f("maxTimestamp", T::Int64, V(0, MAX)),
        f("expirationTimestamp", T::Int64, V(0, MAX)),
        f("tokenId", T::Str, V(0, MAX)),
    ],
};

pub static END_TRANSACTION_RECORD: Message = Message {
    name: "EndTransactionRecord",
    api_key: 24,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[],
};

pub static FEATURE_LEVEL_RECORD: Message = Message {
    name: "FeatureLevelRecord",
    api_key: 12,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("name", T::Str, V(0, MAX)),
        f("featureLevel", T::Int16, V(0, MAX)),
    ],
};

pub static FENCE_BROKER_RECORD: Message = Message {
    name: "FenceBrokerRecord",
    api_key: 7,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("id", T::Int32, V(0, MAX)),
        f("epoch", T::Int64, V(0, MAX)),
    ],
};

pub static NO_OP_RECORD: Message = Message {
    name: "NoOpRecord",
    api_key: 20,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[],
};

pub static PARTITION_CHANGE_RECORD: Message = Message {
    name: "PartitionChangeRecord",
    api_key: 5,
    valid: V(0, 2),
    flexible: V(0, MAX),
    fields: &[
        f("partitionId", T::Int32, V(0, MAX)).default("-1"),
        f("topicId", T::Uuid, V(0, MAX)),
        f("isr", T::Array(&T::Int32), V(0, MAX))
            .nullable(V(0, MAX))
            .tagged(0, V(0, MAX))
            .default("null"),
        f("leader", T::Int32, V(0, MAX))
            .tagged(1, V(0, MAX))
            .default("-2"),
        f("replicas", T::Array(&T::Int32), V(0, MAX))
            .nullable(V(0, MAX))
            .tagged(2, V(0, MAX))
            .default("null"),
        f("removingReplicas", T::Array(&T::Int32), V(0, MAX))
            .nullable(V(0, MAX))
            .tagged(3, V(0, MAX))
            .default("null"),
        f("addingReplicas", T::Array(&T::Int32), V(0, MAX))
            .nullable(V(0, MAX))
            .tagged(4, V(0, MAX))
            .default("null"),
        f("leaderRecoveryState", T::Int8, V(0, MAX))
            .tagged(5, V(0, MAX))
            .default("-1"),
        f("directories", T::Array(&T::Uuid), V(1, MAX))
            .nullable(V(1, MAX))
            .tagged(8, V(1, MAX))
            .default("null"),
        f("eligibleLeaderReplicas", T::Array(&T::Int32), V(2, MAX))
            .nullable(V(2, MAX))
            .tagged(6, V(2, MAX))
            .default("null"),
        f("lastKnownElr", T::Array(&T::Int32), V(2, MAX))
            .nullable(V(2, MAX))
            .tagged(7, V(2, MAX))
            .default("null"),
    ],
};

pub static PARTITION_RECORD: Message = Message {
    name: "PartitionRecord",
    api_key: 3,
    valid: V(0, 2),
    flexible: V(0, MAX),
    fields: &[
        f("partitionId", T::Int32, V(0, MAX)).default("-1"),
        f("topicId", T::Uuid, V(0, MAX)),
        f("replicas", T::Array(&T::Int32), V(0, MAX)),
        f("isr", T::Array(&T::Int32), V(0, MAX)),
        f("removingReplicas", T::Array(&T::Int32), V(0, MAX)),
        f("addingReplicas", T::Array(&T::Int32), V(0, MAX)),
        f("leader", T::Int32, V(0, MAX)).default("-1"),
        f("leaderRecoveryState", T::Int8, V(0, MAX))
            .tagged(0, V(0, MAX))
            .default("0"),
        f("leaderEpoch", T::Int32, V(0, MAX)).default("-1"),
        f("partitionEpoch", T::Int32, V(0, MAX)).default("-1"),
        f("directories", T::Array(&T::Uuid), V(1, MAX)),
        f("eligibleLeaderReplicas", T::Array(&T::Int32), V(2, MAX))
            .nullable(V(2, MAX))
            .tagged(1, V(2, MAX))
            .default("null"),
        f("lastKnownElr", T::Array(&T::Int32), V(2, MAX))
            .nullable(V(2, MAX))
            .tagged(2, V(2, MAX))
            .default("null"),
    ],
};

pub static PRODUCER_IDS_RECORD: Message = Message {
    name: "ProducerIdsRecord",
    api_key: 15,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("brokerId", T::Int32, V(0, MAX)),
        f("brokerEpoch", T::Int64, V(0, MAX)).default("-1"),
        f("nextProducerId", T::Int64, V(0, MAX)),
    ],
};

pub static REGISTER_BROKER_RECORD: Message = Message {
    name: "RegisterBrokerRecord",
    api_key: 0,
    valid: V(0, 3),
    flexible: V(0, MAX),
    fields: &[
        f("brokerId", T::Int32, V(0, MAX)),
        f("isMigratingZkBroker", T::Bool, V(2, MAX)).default("false"),
        f("incarnationId", T::Uuid, V(0, MAX)),
        f("brokerEpoch", T::Int64, V(0, MAX)),
        f(
            "endPoints",
            T::Array(&T::Struct(&[
                f("name", T::Str, V(0, MAX)),
                f("host", T::Str, V(0, MAX)),
                f("port", T::Uint16, V(0, MAX)),
                f("securityProtocol", T::Int16, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "features",
            T::Array(&T::Struct(&[
                f("name", T::Str, V(0, MAX)),
                f("minSupportedVersion", T::Int16, V(0, MAX)),
                f("maxSupportedVersion", T::Int16, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f("rack", T::Str, V(0, MAX)).nullable(V(0, MAX)),
        f("fenced", T::Bool, V(0, MAX)).default("true"),
        f("inControlledShutdown", T::Bool, V(1, MAX)).default("false"),
        f("logDirs", T::Array(&T::Uuid), V(3, MAX)).tagged(0, V(3, MAX)),
    ],
};

pub static REGISTER_CONTROLLER_RECORD: Message = Message {
    name: "RegisterControllerRecord",
    api_key: 27,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("controllerId", T::Int32, V(0, MAX)),
        f("incarnationId", T::Uuid, V(0, MAX)),
        f("zkMigrationReady", T::Bool, V(0, MAX)),
        f(
            "endPoints",
            T::Array(&T::Struct(&[
                f("name", T::Str, V(0, MAX)),
                f("host", T::Str, V(0, MAX)),
                f("port", T::Uint16, V(0, MAX)),
                f("securityProtocol", T::Int16, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f(
            "features",
            T::Array(&T::Struct(&[
                f("name", T::Str, V(0, MAX)),
                f("minSupportedVersion", T::Int16, V(0, MAX)),
                f("maxSupportedVersion", T::Int16, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
    ],
};

pub static REMOVE_ACCESS_CONTROL_ENTRY_RECORD: Message = Message {
    name: "RemoveAccessControlEntryRecord",
    api_key: 19,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("id", T::Uuid, V(0, MAX))],
};

pub static REMOVE_DELEGATION_TOKEN_RECORD: Message = Message {
    name: "RemoveDelegationTokenRecord",
    api_key: 26,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("tokenId", T::Str, V(0, MAX))],
};

pub static REMOVE_TOPIC_RECORD: Message = Message {
    name: "RemoveTopicRecord",
    api_key: 9,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("topicId", T::Uuid, V(0, MAX))],
};

pub static REMOVE_USER_SCRAM_CREDENTIAL_RECORD: Message = Message {
    name: "RemoveUserScramCredentialRecord",
    api_key: 22,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("name", T::Str, V(0, MAX)),
        f("mechanism", T::Int8, V(0, MAX)),
    ],
};

pub static TOPIC_RECORD: Message = Message {
    name: "TopicRecord",
    api_key: 2,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("name", T::Str, V(0, MAX)),
        f("topicId", T::Uuid, V(0, MAX)),
    ],
};

pub static UNFENCE_BROKER_RECORD: Message = Message {
    name: "UnfenceBrokerRecord",
    api_key: 8,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("id", T::Int32, V(0, MAX)),
        f("epoch", T::Int64, V(0, MAX)),
    ],
};

pub static UNREGISTER_BROKER_RECORD: Message = Message {
    name: "UnregisterBrokerRecord",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("brokerId", T::Int32, V(0, MAX)),
        f("brokerEpoch", T::Int64, V(0, MAX)),
    ],
};

pub static USER_SCRAM_CREDENTIAL_RECORD: Message = Message {
    name: "UserScramCredentialRecord",
    api_key: 11,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("name", T::Str, V(0, MAX)),
        f("mechanism", T::Int8, V(0, MAX)),
        f("salt", T::Bytes, V(0, MAX)),
        f("storedKey", T::Bytes, V(0, MAX)),
        f("serverKey", T::Bytes, V(0, MAX)),
        f("iterations", T::Int32, V(0, MAX)),
    ],
};

pub static ZK_MIGRATION_STATE_RECORD: Message = Message {
    name: "ZkMigrationStateRecord",
    api_key: 21,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("zkMigrationState", T::Int8, V(0, MAX))],
};

// KRaft's control records (clients' message definitions): the values of the control records
// in `__cluster_metadata` and its snapshots, keyed by their control type, not an API key
// (`api_key` holds the control type id). Kafka reads each at version 0 whatever its leading
// `version` field says.

pub static LEADER_CHANGE_MESSAGE: Message = Message {
    name: "LeaderChangeMessage",
    api_key: 2,
    valid: V(0, 1),
    flexible: V(0, MAX),
    fields: &[
        f("version", T::Int16, V(0, MAX)),
        f("leaderId", T::Int32, V(0, MAX)),
        f("voters", T::Array(&T::Struct(VOTER)), V(0, MAX)),
        f("grantingVoters", T::Array(&T::Struct(VOTER)), V(0, MAX)),
    ],
};

const VOTER: &[super::schema::Field] = &[
    f("voterId", T::Int32, V(0, MAX)),
    f("voterDirectoryId", T::Uuid, V(1, MAX)),
];

pub static SNAPSHOT_HEADER_RECORD: Message = Message {
    name: "SnapshotHeaderRecord",
    api_key: 3,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("version", T::Int16, V(0, MAX)),
        f("lastContainedLogTimestamp", T::Int64, V(0, MAX)),
    ],
};

pub static SNAPSHOT_FOOTER_RECORD: Message = Message {
    name: "SnapshotFooterRecord",
    api_key: 4,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[f("version", T::Int16, V(0, MAX))],
};

pub static KRAFT_VERSION_RECORD: Message = Message {
    name: "KRaftVersionRecord",
    api_key: 5,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("version", T::Int16, V(0, MAX)),
        f("kRaftVersion", T::Int16, V(0, MAX)),
    ],
};

pub static VOTERS_RECORD: Message = Message {
    name: "VotersRecord",
    api_key: 6,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("version", T::Int16, V(0, MAX)),
        f(
            "voters",
            T::Array(&T::Struct(&[
                f("voterId", T::Int32, V(0, MAX)),
                f("voterDirectoryId", T::Uuid, V(0, MAX)),
                f(
                    "endpoints",
                    T::Array(&T::Struct(&[
                        f("name", T::Str, V(0, MAX)),
                        f("host", T::Str, V(0, MAX)),
                        f("port", T::Uint16, V(0, MAX)),
                    ])),
                    V(0, MAX),
                ),
                f(
                    "kRaftVersionFeature",
                    T::Struct(&[
                        f("minSupportedVersion", T::Int16, V(0, MAX)),
                        f("maxSupportedVersion", T::Int16, V(0, MAX)),
                    ]),
                    V(0, MAX),
                ),
            ])),
            V(0, MAX),
        ),
    ],
};
