//! kafkalog: Apache Kafka's on-disk log as Apache Arrow.
//!
//! Data flows one way, through layers that do not reach past each other:
//! - [`mod@format`]: Kafka's bytes (message formats, codecs, CRCs, segment framing). No Arrow.
//! - [`storage`]: where bytes live (local files, object stores): list, size, read a byte range.
//! - [`arrow`]: planning and decoding into Arrow `RecordBatch`es (and back); owns the schema.
//! - `python` (feature `python`): the PyO3 bindings, thin.
//!
//! Reading a partition directory (its segments in offset order) as Arrow record batches with
//! the columns of Spark's Kafka source:
//!
//! ```
//! use kafkalog::arrow::reader::ReaderBuilder;
//!
//! let reader = ReaderBuilder::new()
//!     .with_batch_size(1024)
//!     .build("examples/logs/orders-0")?;
//! let mut rows = 0;
//! for batch in reader {
//!     let batch = batch?;
//!     assert_eq!(batch.schema().field(0).name(), "key");
//!     rows += batch.num_rows();
//! }
//! assert!(rows > 0);
//! # Ok::<(), kafkalog::Error>(())
//! ```
//!
//! The format layer alone, on bytes in memory (here a control record's key):
//!
//! ```
//! use kafkalog::format::control::{parse_key, ControlType};
//!
//! assert_eq!(parse_key(Some(&[0, 0, 0, 1]))?, ControlType::Commit);
//! assert!(parse_key(Some(&[0, 0])).is_err()); // shorter than Kafka's 4 bytes
//! # Ok::<(), kafkalog::Error>(())
//! ```

#![warn(missing_docs)]

pub mod arrow;
pub mod error;
pub mod format;
#[doc(hidden)]
pub mod fuzzing;
pub mod storage;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, ErrorKind, Result};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
