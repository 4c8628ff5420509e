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

/// Lets mimalloc keep freed memory for 5 s (its default: 10 ms) before returning it to the
/// operating system, unless `MIMALLOC_PURGE_DELAY` says otherwise. A read builds its table in
/// fresh memory, and with the default every read of a loop returned the last one's pages and
/// faulted (and zeroed) them in again: 8% of an uncompressed read (issue 18), and the first
/// read of a process faulted again within itself.
pub fn keep_freed_memory_a_while() {
    #[cfg(feature = "mimalloc")]
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options; any thread may, at any time.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 5000) };
    }
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (v2 and v3 alike).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
