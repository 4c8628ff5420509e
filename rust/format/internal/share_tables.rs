//! Record schemas of `__share_group_state` (the share coordinator's topic): keys (their version
//! is the record type) and values.

// Field facts transcribed from Apache Kafka's message definitions (share-coordinator) as of
// Kafka's trunk of 21 November 2025 (commit 8b119e5105906a66cc99264527670c88b07c7a10, version
// 4.2.0-SNAPSHOT); see `schema.rs` for the form. Names are the JSON names (first letter
// lower-cased).
// Versions: `V(lo, hi)`, `MAX` = "and later", `NONE` = never.

use super::schema::{f, Field, Message, Type as T, MAX, NONE, V};

/// The acknowledgement state of a range of records, as both values carry it.
const STATE_BATCH: &[Field] = &[
    f("firstOffset", T::Int64, V(0, MAX)),
    f("lastOffset", T::Int64, V(0, MAX)),
    f("deliveryState", T::Int8, V(0, MAX)),
    f("deliveryCount", T::Int16, V(0, MAX)),
];

pub static SHARE_SNAPSHOT_KEY: Message = Message {
    name: "ShareSnapshotKey",
    api_key: -1,
    valid: V(0, 0),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(0, 0)),
        f("topicId", T::Uuid, V(0, 0)),
        f("partition", T::Int32, V(0, 0)),
    ],
};

pub static SHARE_SNAPSHOT_VALUE: Message = Message {
    name: "ShareSnapshotValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("snapshotEpoch", T::Int32, V(0, MAX)),
        f("stateEpoch", T::Int32, V(0, MAX)),
        f("leaderEpoch", T::Int32, V(0, MAX)),
        f("startOffset", T::Int64, V(0, MAX)),
        f("deliveryCompleteCount", T::Int32, V(0, MAX))
            .tagged(0, V(0, MAX))
            .default("-1"),
        f("createTimestamp", T::Int64, V(0, MAX)),
        f("writeTimestamp", T::Int64, V(0, MAX)),
        f("stateBatches", T::Array(&T::Struct(STATE_BATCH)), V(0, MAX)),
    ],
};

pub static SHARE_UPDATE_KEY: Message = Message {
    name: "ShareUpdateKey",
    api_key: -1,
    valid: V(1, 1),
    flexible: NONE,
    fields: &[
        f("groupId", T::Str, V(1, 1)),
        f("topicId", T::Uuid, V(1, 1)),
        f("partition", T::Int32, V(1, 1)),
    ],
};

pub static SHARE_UPDATE_VALUE: Message = Message {
    name: "ShareUpdateValue",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("snapshotEpoch", T::Int32, V(0, MAX)),
        f("leaderEpoch", T::Int32, V(0, MAX)),
        f("startOffset", T::Int64, V(0, MAX)),
        f("deliveryCompleteCount", T::Int32, V(0, MAX))
            .tagged(0, V(0, MAX))
            .default("-1"),
        f("stateBatches", T::Array(&T::Struct(STATE_BATCH)), V(0, MAX)),
    ],
};
