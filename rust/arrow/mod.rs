//! The Arrow layer: decoded records into `RecordBatch`es (and back); owns the schema.
//!
//! | file | what |
//! |---|---|
//! | `schema.rs` | the columns, their names and Arrow types |
//! | `builder.rs` | column buffers filled record by record (the hot loop) |
//! | `views.rs` | `binary_view` columns pointing into the bytes read, and the buffers that own them |
//! | `decoder.rs` | sans-I/O decoder: bytes in, record batches out, corrupt-batch policy |
//! | `output.rs` | what a decoder fills: record columns or a batch listing |
//! | `batches.rs` | the batch listing: one row per batch |
//! | `encoder.rs` | Arrow rows into Kafka batches (faithful to batch metadata, or fresh) |
//! | `writer.rs` | a partition directory: segments, indexes |
//! | `placement.rs` | where writes go and how they appear: safe names, locks, staging, fsync |
//! | `publish.rs` | writes to object stores: a marker claims, a manifest publishes; what readers may read |
//! | `index_tables.rs` | `.index`, `.timeindex`, `.txnindex`, `.snapshot`, leader epochs as tables |
//! | `plan.rs` | a read as work items (byte ranges of segments, with their bounds) for tasks |
//! | `internal_tables.rs` | internal topics (consumer offsets, groups, transactions, KRaft metadata) folded into tables |
//! | `cluster_state.rs` | KRaft metadata replayed into topics, partitions, configs, brokers, features |
//! | `seek.rs` | offset/timestamp bounds: segment choice, index seeks, timestamps to offsets |
//! | `transactions.rs` | what `read_committed` drops: aborted transactions, the last stable offset |
//! | `visibility.rs` | what a consumer could fetch: the high watermark and log start offset checkpoints |
//! | `scan.rs` | walking a segment's entries without decoding them (for the passes above) |
//! | `verify.rs` | checking batches, offsets and every index against the log |
//! | `compact.rs` | log compaction as Kafka's cleaner does it: last value per key, offsets kept |
//! | `retention.rs` | retention as the broker applies it: segments past time, size, log start offset |
//! | `rebuild.rs` | regenerating a partition's index files as Kafka's recovery does |
//! | `parallel.rs` | reading many files on several cores, in order |
//! | `origin.rs` | the topic and partition a file's records belong to |
//! | `issues.rs` | what a read passed over without failing (torn tails, skipped batches) |
//! | `discover.rs` | finding the segment files under a path, with their topic and partition |
//! | `reader.rs` | options builder, the streaming file reader |
//! | `tiered.rs` | a partition's remote (tiered) and local segments read as one |

pub mod append;
pub mod batches;
pub mod builder;
pub mod cluster_state;
pub mod compact;
pub mod decoder;
pub mod discover;
pub mod encoder;
pub mod index_tables;
pub mod internal_tables;
pub mod issues;
pub mod offsets;
pub mod origin;
pub mod output;
pub mod parallel;
pub mod placement;
pub mod plan;
pub mod publish;
pub mod reader;
pub mod rebuild;
pub mod retention;
pub mod scan;
pub mod schema;
pub mod seek;
pub mod tiered;
pub mod transactions;
pub mod verify;
pub mod views;
pub mod visibility;
pub mod writer;
