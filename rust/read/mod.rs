//! Reading: the paths a user names resolved into segment files, and readers that decode what
//! the log layer planned into Arrow record batches, on one core or several.
//!
//! | file | what |
//! |---|---|
//! | `topic_fold.rs` | one partition of an internal topic read into a fold (for `files.rs`' remote log metadata and `internal_topics.rs`) |
//! | `files.rs` | the one pipeline from paths to files (globs, discovery, `__remote_log_metadata`, remote and local as one) and [`reader::ReaderBuilder::build`] |
//! | `reader.rs` | the options builder and the streaming reader, one file after another |
//! | `pieces.rs` | the pieces a parallel read is cut into, and their decoding |
//! | `pool.rs` | the process's pool of decoding threads |
//! | `parallel.rs` | the parallel reader: pieces decoded on the pool, batches handed out in order |
//! | `schemas.rs` | Schema Registry's storage topic (`_schemas`) read from paths into a registry |
//! | `values.rs` | a read's typed keys and values: the `values` options, the registry they name, resolved once for tasks, and the decoding step on each batch |
//! | `internal_topics.rs` | internal topics read from paths into tables; KRaft's cluster state from snapshot and log |

pub mod files;
pub mod internal_topics;
pub mod parallel;
pub mod pieces;
mod pool;
pub mod reader;
pub mod schemas;
pub mod topic_fold;
pub mod values;
