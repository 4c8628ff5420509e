//! Cleanup and checks, as a broker's log manager does them to a partition on disk.
//!
//! | file | what |
//! |---|---|
//! | `compact.rs` | log compaction as Kafka's cleaner does it: last value per key, offsets kept |
//! | `retention.rs` | retention as the broker applies it: segments past time, size, log start offset |
//! | `rebuild.rs` | a partition's index files regenerated as Kafka's recovery does |
//! | `verify.rs` | batches, offsets and every index checked against the log |

pub mod compact;
pub mod rebuild;
pub mod retention;
pub mod verify;
