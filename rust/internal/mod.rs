//! Kafka's internal topics as tables: folds over already-decoded record batches (the `key`,
//! `value`, `topic`, `partition`, `offset`, `timestamp` and, when present, `batchPosition`
//! columns the reader produces) into what the brokers would load from them.
//!
//! - [`input::Kind::ConsumerOffsets`]: one row per (group, topic, partition), the last commit winning
//!   and a tombstone deleting, as a group coordinator loads `__consumer_offsets`; or every commit
//!   and tombstone (`history`).
//! - [`input::Kind::ConsumerGroups`]: one row per group (classic groups from their `GroupMetadata`
//!   record; consumer and share groups from their metadata and member records).
//! - [`input::Kind::Transactions`]: one row per transactional id, as the transaction coordinator loads
//!   `__transaction_state`.
//! - [`input::Kind::ClusterMetadata`]: one row per KRaft metadata record, its fields as JSON.
//! - [`input::Kind::RemoteLogMetadata`]: one row per remote log segment (its latest state), or one
//!   row per record (`history`).
//!
//! Records are fed in log order, one partition's after another (records of one group or one
//! transactional id are always in one partition). A record type or version kafkalog does not
//! know becomes an issue (a warning) and is passed over, or a row with its raw bytes where the
//! table has one row per record. A record that does not decode as its declared type and version
//! is an error naming file, position and offset, or with `on_corrupt = skip` an issue.
//!
//! | file | what |
//! |---|---|
//! | `input.rs` | which table, its options, the records fed and the issues passed over |
//! | `fold.rs` | the fold: records in, in log order; the table out |
//! | `consumer_offsets.rs` | `__consumer_offsets`: committed offsets and groups |
//! | `transaction_state.rs` | `__transaction_state`: transactional ids |
//! | `cluster_metadata.rs` | one row per record (KRaft metadata, remote log metadata history) |
//! | `remote_log_metadata.rs` | `__remote_log_metadata`: remote segments' latest states |
//! | `cluster_state.rs` | KRaft metadata replayed into topics, partitions, configs, brokers, features |

mod cluster_metadata;
pub mod cluster_state;
mod consumer_offsets;
pub mod fold;
pub mod input;
pub mod remote_log_metadata;
mod transaction_state;
