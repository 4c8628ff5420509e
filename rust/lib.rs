//! kafkalog: Apache Kafka's on-disk log as Apache Arrow.
//!
//! Data flows one way: bytes, then Kafka records, then Arrow columns, then Python or Spark.
//! Each folder is one role and imports only from the folders listed before it
//! (`docs/architecture.md` draws the map):
//! - [`mod@format`]: Kafka's bytes only (message formats, codecs, CRCs, control records, segment
//!   and index layouts, checkpoints, internal topics' records). No I/O, no Arrow. Each of
//!   Kafka's rules has its one home here.
//! - [`storage`]: where bytes live (local files, object stores, tiered-storage buckets): list,
//!   size, read a byte range, write atomically.
//! - [`log`]: a partition as a broker keeps it: discovery, indexes and positions, bounds,
//!   transactions, what a consumer could fetch, planning. No Arrow.
//! - [`arrow`]: conversion to and from Arrow only: the schema, the builders, the sans-I/O
//!   decoder, the encoder, index files as tables.
//! - [`internal`]: Kafka's internal topics folded into tables, and KRaft's cluster state.
//! - [`values`]: typed keys and values (Schema Registry framing; Avro, Protobuf, JSON Schema).
//! - [`read`]: the paths-to-files pipeline and the readers (one core or several).
//! - [`mod@write`]: writing and appending partitions, locally and to object stores.
//! - [`cleanup`]: compaction, retention, index rebuilds, verification.
//! - [`spark`]: Spark's data source options and column shapes, once for both Spark sources.
//! - `serve` (feature `serve`): a read-only Kafka endpoint over backups, Kafka's wire protocol.
//! - `python` (feature `python`): the PyO3 bindings, thin; errors mapped in one place.
//! - `jni` (feature `jni`): the JNI bindings of the Spark connector written in Java (`jvm/`).
//!
//! Beside them, [`error`] (the one error type) and [`clock`] (the system clock).
//!
//! Reading a partition directory (its segments in offset order) as Arrow record batches with
//! the columns of Spark's Kafka source:
//!
//! ```
//! use kafkalog::read::reader::ReaderBuilder;
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
pub mod cleanup;
pub mod clock;
pub mod error;
pub mod format;
#[doc(hidden)]
pub mod fuzzing;
pub mod internal;
pub mod log;
pub mod read;
pub mod restore;
#[cfg(feature = "serve")]
pub mod serve;
pub mod spark;
pub mod storage;
pub mod values;
pub mod write;

#[cfg(feature = "python")]
mod python;

#[cfg(feature = "jni")]
#[doc(hidden)]
pub mod jni;

pub use error::{Error, ErrorKind, Result};

#[cfg(all(feature = "mimalloc", not(test)))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The crate's own tests run on the system allocator with one guard: a single allocation over
/// 2 GiB ends the test run with a message (as a fuzzer's malloc limit does). A huge allocation
/// mostly succeeds on Linux without touching memory, so without the guard no test could see a
/// decoder reserving room from an untrusted count (issue 45's bounded decoding).
#[cfg(test)]
#[global_allocator]
static GLOBAL: GuardedForTests = GuardedForTests;

#[cfg(test)]
struct GuardedForTests;

#[cfg(test)]
impl GuardedForTests {
    const LIMIT: usize = 2 << 30;

    fn check(size: usize) {
        if size > Self::LIMIT {
            use std::io::Write;
            // Stderr is unbuffered: this writes without allocating.
            let _ = std::io::stderr()
                .write_all(b"a single allocation over 2 GiB in a test: aborting the run\n");
            std::process::abort();
        }
    }
}

// SAFETY: every call goes to the system allocator unchanged, after a size check that allocates
// nothing.
#[cfg(test)]
unsafe impl std::alloc::GlobalAlloc for GuardedForTests {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        Self::check(layout.size());
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        Self::check(layout.size());
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// Tunes mimalloc for building large tables (issue 18), unless its environment variables say
/// otherwise:
///
/// - Freed memory is kept 5 s (mimalloc's default: 10 ms) before it is returned to the
///   operating system (`MIMALLOC_PURGE_DELAY`). A read builds its table in fresh memory, and
///   with the default every read of a loop returned the last one's pages and faulted (and
///   zeroed) them in again: 8% of an uncompressed read.
/// - Memory mapped from now on is not advised as transparent huge pages (`MIMALLOC_ALLOW_THP`).
///   Where the kernel makes huge pages for advised memory only and compacts memory to find them
///   (THP `madvise`, defrag `madvise`, a common default), the first read of a process stalled in
///   compaction when the page cache filled the memory: 355-940 ms against 110-120 ms without,
///   and later reads the same. Set here, after mimalloc started, it covers kafkalog's memory
///   only: THP stays as it was for the rest of the process.
pub fn tune_allocator() {
    #[cfg(feature = "mimalloc")]
    for (variable, option, value) in [
        ("MIMALLOC_PURGE_DELAY", MI_OPTION_PURGE_DELAY, 5000),
        ("MIMALLOC_ALLOW_THP", MI_OPTION_ALLOW_THP, 0),
    ] {
        if std::env::var_os(variable).is_none() {
            // SAFETY: sets one of mimalloc's options; any thread may, at any time.
            unsafe { libmimalloc_sys::mi_option_set(option, value) };
        }
    }
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (the mimalloc crate's default; its
/// `v2` feature, whose numbering differs from 20 on, is not used).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// `mi_option_allow_thp` in mimalloc v3's `mi_option_t`.
#[cfg(feature = "mimalloc")]
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;
