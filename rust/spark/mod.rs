//! Spark's data source options and shapes, once for both Spark sources: the Python data
//! source (through `rust/python/`) and the JVM one (`jvm/`, through `rust/jni/`) call these
//! and keep no rules of their own, so the two cannot drift.
//!
//! Layer 8, beside [`crate::cleanup`]: it turns Spark's options into the read, write and value
//! options of the layers below and gives Spark the column types it can carry onward.
//!
//! | file | what |
//! |---|---|
//! | `write_options.rs` | the options of a write, batch or streaming, checked once |
//! | `writing.rs` | a write task's rows into staged partition directories; the driver's commit, abort, and a micro-batch's marked append |

pub mod write_options;
pub mod writing;
