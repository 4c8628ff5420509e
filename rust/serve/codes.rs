//! Kafka's error codes the endpoint answers with (`org.apache.kafka.common.protocol.Errors`).

/// The codes, by Kafka's names.
pub mod code {
    /// No error.
    pub const NONE: i16 = 0;
    /// The offset is outside the log (`OFFSET_OUT_OF_RANGE`).
    pub const OFFSET_OUT_OF_RANGE: i16 = 1;
    /// No such topic or partition.
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    /// The request's version is not one this endpoint takes.
    pub const UNSUPPORTED_VERSION: i16 = 35;
    /// Refused: the endpoint serves a backup and writes nothing.
    pub const POLICY_VIOLATION: i16 = 44;
    /// A store did not answer in time, or failed.
    pub const KAFKA_STORAGE_ERROR: i16 = 56;
    /// The client's leader epoch is older than the partition's.
    pub const FENCED_LEADER_EPOCH: i16 = 74;
    /// The client's leader epoch is newer than the partition's.
    pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
    /// No topic has that id.
    pub const UNKNOWN_TOPIC_ID: i16 = 100;
    /// An invalid request.
    pub const INVALID_REQUEST: i16 = 42;

    /// The generation is not the group's.
    pub const ILLEGAL_GENERATION: i16 = 22;
    /// The member's protocols match none of the group's.
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
    /// The member is not in the group.
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    /// The session timeout is outside what the coordinator allows.
    pub const INVALID_SESSION_TIMEOUT: i16 = 26;
    /// The group is rebalancing.
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    /// The group id is empty.
    pub const INVALID_GROUP_ID: i16 = 24;
    /// The member must join again with the member id given (KIP-394).
    pub const MEMBER_ID_REQUIRED: i16 = 79;
    /// The group does not exist.
    pub const GROUP_ID_NOT_FOUND: i16 = 69;
    /// The group is not empty (a simple commit to a group with members).
    pub const NON_EMPTY_GROUP: i16 = 68;
}
