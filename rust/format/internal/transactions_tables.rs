//! Record schemas of `__transaction_state`.

// Field facts transcribed from Apache Kafka's message definitions (transaction-coordinator) as of
// Kafka's trunk of 21 November 2025 (commit 8b119e5105906a66cc99264527670c88b07c7a10, version
// 4.2.0-SNAPSHOT); see `schema.rs` for the form. Names are the JSON names (first letter
// lower-cased).
// Versions: `V(lo, hi)`, `MAX` = "and later", `NONE` = never.

use super::schema::{f, Message, Type as T, MAX, NONE, V};

pub static TRANSACTION_LOG_KEY: Message = Message {
    name: "TransactionLogKey",
    api_key: -1,
    valid: V(0, 0),
    flexible: NONE,
    fields: &[f("transactionalId", T::Str, V(0, 0))],
};

pub static TRANSACTION_LOG_VALUE: Message = Message {
    name: "TransactionLogValue",
    api_key: -1,
    valid: V(0, 1),
    flexible: V(1, MAX),
    fields: &[
        f("producerId", T::Int64, V(0, MAX)),
        f("previousProducerId", T::Int64, NONE)
            .tagged(0, V(1, MAX))
            .default("-1"),
        f("nextProducerId", T::Int64, NONE)
            .tagged(1, V(1, MAX))
            .default("-1"),
        f("producerEpoch", T::Int16, V(0, MAX)),
        f("nextProducerEpoch", T::Int16, NONE)
            .tagged(3, V(1, MAX))
            .default("-1"),
        f("transactionTimeoutMs", T::Int32, V(0, MAX)),
        f("transactionStatus", T::Int8, V(0, MAX)),
        f(
            "transactionPartitions",
            T::Array(&T::Struct(&[
                f("topic", T::Str, V(0, MAX)),
                f("partitionIds", T::Array(&T::Int32), V(0, MAX)),
            ])),
            V(0, MAX),
        )
        .nullable(V(0, MAX)),
        f("transactionLastUpdateTimestampMs", T::Int64, V(0, MAX)),
        f("transactionStartTimestampMs", T::Int64, V(0, MAX)),
        f("clientTransactionVersion", T::Int16, NONE)
            .tagged(2, V(1, MAX))
            .default("0"),
    ],
};
