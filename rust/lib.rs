//! kafkalog: Apache Kafka's on-disk log as Apache Arrow.
//!
//! Data flows one way, through layers that do not reach past each other:
//! - [`format`]: Kafka's bytes (message formats, codecs, CRCs, segment framing). No Arrow.
//! - [`arrow`]: decoded records into Arrow `RecordBatch`es; owns the schema and the readers.
//! - `python` (feature `python`): the PyO3 bindings, thin.

pub mod arrow;
pub mod error;
pub mod format;
#[doc(hidden)]
pub mod fuzzing;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, ErrorKind, Result};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
