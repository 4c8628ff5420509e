//! Writing: Arrow rows encoded into a partition's segments and indexes, placed atomically on
//! local disks and published in object stores, and appended to.
//!
//! | file | what |
//! |---|---|
//! | `writer.rs` | a partition directory: segments rolled, indexes and producer snapshots written |
//! | `placement.rs` | where writes go and how they appear: safe names, locks, staging, fsync, renames |
//! | `lease.rs` | a writer's marker in an object store as a lease: refreshed, checked, taken over |
//! | `publish.rs` | writing a partition to an object store: staged uploads, one manifest publishes them |
//! | `append.rs` | appending to an existing partition, locally or in an object store (the streaming sink) |
//! | `values.rs` | typed keys and values encoded as a write's options say (`string`, `avro` with the registered schema's id) |
//! | `target.rs` | a partition written locally or to an object store behind one face; the writer's lease among the storage options |

pub mod append;
pub mod lease;
pub mod placement;
pub mod publish;
pub mod target;
pub mod values;
pub mod writer;
