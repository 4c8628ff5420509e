//! Cleanup and checks, as a broker's log manager does them to a partition on disk.
//!
//! | file | what |
//! |---|---|
//! | `compact.rs` | log compaction as Kafka's cleaner does it: last value per key, offsets kept (its options, report, and the round) |
//! | `survey.rs` | the cleaner's first pass: segments, producers, aborted transactions |
//! | `cleaner.rs` | the cleaner's second pass: the offset map, then each batch kept, emptied or removed |
//! | `retention.rs` | retention as the broker applies it: segments past time, size, log start offset |
//! | `rebuild.rs` | a partition's index files regenerated as Kafka's recovery does |
//! | `verify.rs` | batches, offsets and every index checked against the log |

mod cleaner;
pub mod compact;
pub mod rebuild;
pub mod retention;
mod survey;
pub mod verify;
