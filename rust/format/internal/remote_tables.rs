//! Record schemas of `__remote_log_metadata` (tiered storage's topic-based metadata manager).

// Field facts transcribed from Apache Kafka's message definitions (storage) as of Kafka's trunk of
// 21 November 2025 (commit 8b119e5105906a66cc99264527670c88b07c7a10, version 4.2.0-SNAPSHOT); see
// `schema.rs` for the form. Names are the JSON names (first letter lower-cased).
// Versions: `V(lo, hi)`, `MAX` = "and later", `NONE` = never.

use super::schema::{f, Message, Type as T, MAX, V};

pub static REMOTE_LOG_SEGMENT_METADATA_RECORD: Message = Message {
    name: "RemoteLogSegmentMetadataRecord",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f(
            "remoteLogSegmentId",
            T::Struct(&[
                f(
                    "topicIdPartition",
                    T::Struct(&[
                        f("name", T::Str, V(0, MAX)),
                        f("id", T::Uuid, V(0, MAX)),
                        f("partition", T::Int32, V(0, MAX)),
                    ]),
                    V(0, MAX),
                ),
                f("id", T::Uuid, V(0, MAX)),
            ]),
            V(0, MAX),
        ),
        f("startOffset", T::Int64, V(0, MAX)),
        f("endOffset", T::Int64, V(0, MAX)),
        f("brokerId", T::Int32, V(0, MAX)),
        f("maxTimestampMs", T::Int64, V(0, MAX)),
        f("eventTimestampMs", T::Int64, V(0, MAX)),
        f(
            "segmentLeaderEpochs",
            T::Array(&T::Struct(&[
                f("leaderEpoch", T::Int32, V(0, MAX)),
                f("offset", T::Int64, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f("segmentSizeInBytes", T::Int32, V(0, MAX)),
        f("customMetadata", T::Bytes, V(0, MAX))
            .nullable(V(0, MAX))
            .default("null"),
        f("remoteLogSegmentState", T::Int8, V(0, MAX)),
        f("txnIndexEmpty", T::Bool, V(0, MAX)).tagged(0, V(0, MAX)),
    ],
};

pub static REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD: Message = Message {
    name: "RemoteLogSegmentMetadataSnapshotRecord",
    api_key: 3,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f("segmentId", T::Uuid, V(0, MAX)),
        f("startOffset", T::Int64, V(0, MAX)),
        f("endOffset", T::Int64, V(0, MAX)),
        f("brokerId", T::Int32, V(0, MAX)),
        f("maxTimestampMs", T::Int64, V(0, MAX)),
        f("eventTimestampMs", T::Int64, V(0, MAX)),
        f(
            "segmentLeaderEpochs",
            T::Array(&T::Struct(&[
                f("leaderEpoch", T::Int32, V(0, MAX)),
                f("offset", T::Int64, V(0, MAX)),
            ])),
            V(0, MAX),
        ),
        f("segmentSizeInBytes", T::Int32, V(0, MAX)),
        f("customMetadata", T::Bytes, V(0, MAX))
            .nullable(V(0, MAX))
            .default("null"),
        f("remoteLogSegmentState", T::Int8, V(0, MAX)),
        f("txnIndexEmpty", T::Bool, V(0, MAX)).tagged(0, V(0, MAX)),
    ],
};

pub static REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD: Message = Message {
    name: "RemoteLogSegmentMetadataUpdateRecord",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f(
            "remoteLogSegmentId",
            T::Struct(&[
                f(
                    "topicIdPartition",
                    T::Struct(&[
                        f("name", T::Str, V(0, MAX)),
                        f("id", T::Uuid, V(0, MAX)),
                        f("partition", T::Int32, V(0, MAX)),
                    ]),
                    V(0, MAX),
                ),
                f("id", T::Uuid, V(0, MAX)),
            ]),
            V(0, MAX),
        ),
        f("brokerId", T::Int32, V(0, MAX)),
        f("eventTimestampMs", T::Int64, V(0, MAX)),
        f("customMetadata", T::Bytes, V(0, MAX))
            .nullable(V(0, MAX))
            .default("null"),
        f("remoteLogSegmentState", T::Int8, V(0, MAX)),
    ],
};

pub static REMOTE_PARTITION_DELETE_METADATA_RECORD: Message = Message {
    name: "RemotePartitionDeleteMetadataRecord",
    api_key: 2,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        f(
            "topicIdPartition",
            T::Struct(&[
                f("name", T::Str, V(0, MAX)),
                f("id", T::Uuid, V(0, MAX)),
                f("partition", T::Int32, V(0, MAX)),
            ]),
            V(0, MAX),
        ),
        f("brokerId", T::Int32, V(0, MAX)),
        f("eventTimestampMs", T::Int64, V(0, MAX)),
        f("remotePartitionDeleteState", T::Int8, V(0, MAX)),
    ],
};
