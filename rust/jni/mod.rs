//! The JNI bindings behind the Spark connector written in Java (`jvm/`, the class
//! `kafkalog.spark.Native`): thin, as the PyO3 bindings are. Requests and answers that are not
//! Arrow data cross as JSON strings (planning happens once per query, on the driver); record
//! batches cross as the addresses of the Arrow buffers the core filled, which Java's column
//! vectors read in place (`docs/spark-jvm.md` says who frees what). Built only with the `jni`
//! feature, into its own shared library (`make jar`): the Python extension cannot be loaded in
//! a JVM, as it leaves libpython's symbols to the Python process.
//!
//! | file | role |
//! |---|---|
//! | `errors.rs` | every failure (a core error, a JNI error, a panic) as a `KafkaLogException` |
//! | `json.rs` | reading the JSON requests |
//! | `options.rs` | the driver's calls about options and schemas: the options checked by the core, the read's Spark schema with typed values resolved |
//! | `planning.rs` | the driver's calls: discovery, ListOffsets, work items, a micro-batch's rate limit |
//! | `reader.rs` | the executors' calls: a reader of work items, its batches as buffer addresses |
//! | `writer.rs` | writes: a job from Spark's options, its tasks' rows as Arrow IPC messages, the commits |

mod errors;
mod json;
mod options;
mod planning;
mod reader;
mod writer;

/// The JNI entry points' request parsing on arbitrary bytes (the fuzz target `jni_request`):
/// each request of each native method checked, and a task's reader built, without any I/O
/// (a task's request never names the registry's log; discovery, ListOffsets and planning
/// are not run). Must return: a panic is a bug.
#[doc(hidden)]
pub fn fuzz_requests(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(r) = json::parse(&text) {
        let _ = options::options(&r);
        let _ = options::schema_request(&r);
        let _ = planning::discover_request(&r);
        let _ = planning::list_offsets_request(&r);
        let _ = planning::plan_request(&r);
        let _ = planning::rate_limit(&r);
    }
    let _ = reader::open(&text);
}
