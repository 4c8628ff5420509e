//! kafkalog: Apache Kafka's on-disk log as Apache Arrow.
//!
//! Data flows one way, through layers that do not reach past each other:
//! - [`mod@format`]: Kafka's bytes (message formats, codecs, CRCs, segment framing). No Arrow.
//! - [`storage`]: where bytes live (local files, object stores): list, size, read a byte range.
//! - [`arrow`]: planning and decoding into Arrow `RecordBatch`es (and back); owns the schema.
//! - `python` (feature `python`): the PyO3 bindings, thin.

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
