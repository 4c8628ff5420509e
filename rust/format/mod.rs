//! The format layer: Kafka's bytes, and nothing else — no Arrow, no Python, no I/O.
//! Borrowing parsers over `&[u8]` and writers into `Vec<u8>`.
//!
//! | file | what |
//! |---|---|
//! | `varint.rs` | zig-zag varints of v2 records |
//! | `confluent.rs` | Schema Registry's framing of keys and values: magic byte, schema id or GUID (also in headers), Protobuf message indexes |
//! | `crc.rs` | CRC-32C (v2) and CRC-32 (v0/v1) |
//! | `compression/` | gzip, snappy (xerial and raw), lz4 (Kafka's frame), zstd |
//! | `batch.rs` | the decoded model: batch info, record views, the sink, the decoder's buffers |
//! | `decoder.rs` | decoding one log entry of any magic (dispatch to `v2.rs` or `legacy.rs`) |
//! | `v2.rs` | magic v2 record batches |
//! | `legacy.rs` | magic v0 and v1 messages and compressed wrappers |
//! | `control.rs` | control records: transaction markers, KRaft control records, a control batch's type |
//! | `txn_tracker.rs` | transactions opened and closed batch by batch, as a broker follows them |
//! | `segment.rs` | framing of log entries in a segment, file and directory names |
//! | `snapshot.rs` | producer state snapshots |
//! | `checkpoint.rs` | text checkpoint files: leader epochs, high watermarks, log start offsets |
//! | `index.rs` | `.index`, `.timeindex`, `.txnindex` layouts and the broker's indexing rule |
//! | `internal/` | Kafka's internal topics' records (consumer offsets, transactions, KRaft metadata) |
//! | `filter.rs` | one batch rewritten with some records removed, as the log cleaner writes it |
//! | `tiered/` | tiered storage in a bucket: object names, Aiven's manifests and chunk indexes, leader-epoch lineage |
//! | `topic.rs` | topics by name: Kafka's internal topics, which topics a consumer's pattern subscription takes |

pub mod batch;
pub mod checkpoint;
pub mod compression;
pub mod confluent;
pub mod control;
pub mod crc;
mod decoder;
pub mod filter;
pub mod index;
// Crate-private: the arrow layer's internal-topic tables and the bindings' `dump` are its only
// users (so part of it is unused without the `python` feature).
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod internal;
pub mod legacy;
pub mod segment;
pub mod snapshot;
pub mod tiered;
pub mod topic;
pub mod txn_tracker;
pub mod v2;
pub mod varint;

pub use batch::{
    BatchDecoder, BatchInfo, CrcPolicy, DecodeOptions, Record, RecordSink, TimestampType,
};
pub use compression::Compression;
