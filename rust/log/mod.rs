//! The log layer: a partition as a broker keeps it, and nothing of Arrow. It finds the segment
//! files under a path and decides, from the segments, their indexes and the broker's
//! checkpoints, which byte ranges a read opens and which records it keeps. It imports only
//! `format` and `storage`.
//!
//! | file | what |
//! |---|---|
//! | `origin.rs` | the topic and partition a file's records belong to |
//! | `issues.rs` | what a read passed over without failing, and the [`issues::OnCorrupt`] policy |
//! | `manifest.rs` | the manifest a reader honours in an object store written by kafkalog |
//! | `discover.rs` | the segment files under one path, with their topic and partition; files grouped by partition |
//! | `remote_local.rs` | a partition's remote (tiered) and local segments made one log |
//! | `scan.rs` | walking a segment's entries without decoding them |
//! | `position.rs` | positions inside a segment through its indexes: offset seeks, timestamps to offsets, split points |
//! | `visibility.rs` | what a consumer could fetch: the high watermark and log start offset checkpoints |
//! | `transactions.rs` | what `read_committed` drops: aborted transactions, the last stable offset |
//! | `bounds.rs` | a read's bounds applied: which segments, from where, which records ([`bounds::Planned`]) |
//! | `offsets.rs` | ListOffsets: earliest, latest and by-timestamp offsets of each partition |
//! | `plan.rs` | a read as work items (byte ranges of segments, with their bounds) for tasks |
//! | `rate_limit.rs` | Spark Kafka's `maxOffsetsPerTrigger`: a micro-batch's offsets shared among partitions |

pub mod bounds;
pub mod discover;
pub mod issues;
pub mod manifest;
pub mod offsets;
pub mod origin;
pub mod plan;
pub mod position;
pub mod rate_limit;
pub mod remote_local;
pub mod scan;
pub mod transactions;
pub mod visibility;
