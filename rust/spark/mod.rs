//! Spark's data source options and shapes, once for both Spark sources: the Python data
//! source (through `rust/python/`) and the JVM one (`jvm/`, through `rust/jni/`) call these
//! and keep no rules of their own, so the two cannot drift.
//!
//! Layer 8, beside [`crate::cleanup`]: it turns Spark's options into the read, write and value
//! options of the layers below and gives Spark the column types it can carry onward.
//!
//! | file | what |
//! |---|---|
//! | `common.rs` | what reads and writes share: option names in any case, booleans and integers, the paths, `storage.<key>` and `encryptionKeys`, the typed-value options (`keyFormat`, `valueFormat`, `schemaRegistry`, subjects, versions, messages, `onValueError`) |
//! | `options.rs` | the read options of both sources (Spark's Kafka source options with Spark's meaning, kafkalog's own), checked once, as JSON for the bindings |
//! | `selection.rs` | `assign`/`subscribe`/`subscribePattern` and the starting and ending offsets or timestamps, with Spark's precedence and checks |
//! | `shapes.rs` | kafkalog's columns as Spark types (Spark's JSON of a `DataType`), typed values in types Spark can write to Parquet and ORC, nested columns pruned |
//! | `write_options.rs` | the options of a write, batch or streaming, checked once |
//! | `writing.rs` | a write task's rows into staged partition directories; the driver's commit, abort, and a micro-batch's marked append (tests: `writing_tests.rs`) |

pub mod common;
pub mod options;
pub mod selection;
pub mod shapes;
pub mod write_options;
pub mod writing;
