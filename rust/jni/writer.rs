//! The JVM source's writes (`jvm/.../KafkaLogWrite.java`, the class
//! `kafkalog.spark.NativeWrite`): the driver's calls (a job made from Spark's options, its
//! commit and abort, a micro-batch's commit) and the tasks' (a writer of rows). The rules are
//! Spark's writes' in the core (`rust/spark/writing.rs`, `rust/spark/write_options.rs`); this
//! file moves JSON and rows.
//!
//! **Rows.** Spark's own `ArrowWriter` puts a task's rows into Arrow Java vectors, and Arrow
//! Java's `ArrowStreamWriter` writes them as Arrow IPC stream messages into a direct
//! `ByteBuffer`; [`Java_kafkalog_spark_NativeWrite_write`] reads the messages there with
//! Arrow's own IPC reader (the schema once, kept for the later calls, then a message per batch
//! of rows): one call per batch of rows, none per row. The rows are validated by the core
//! instead of the reader (`validated_rows`: Spark's strings are bytes, not always UTF-8). The
//! bytes are copied out of Java's buffer before they are read, so nothing of the core refers
//! to Java's memory once the call returns.
//!
//! **Handles.** `open` boxes a task's writer and hands Java its address; `finish` and `abort`
//! free it (Java zeroes its handle), `write` borrows it. One task thread uses a handle.

use std::collections::BTreeMap;

use arrow_ipc::reader::StreamReader;
use jni::objects::{JByteBuffer, JClass, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use serde_json::Value;

use super::errors::{bad_request, Failure, ThrowKafkaLog};
use super::json::{flag, parse, string_map};
use crate::spark::writing::{messages_from_json, validated_rows, Job, TaskMessage, TaskWriter};

/// A task's writer and the IPC stream it is being fed.
struct Open {
    writer: Option<TaskWriter>,
    /// The stream's schema message (the first call's first message), put before each later
    /// call's batches to read them.
    schema: Option<Vec<u8>>,
}

/// The length of the IPC message at the start of `bytes` whose body is empty (a schema):
/// the continuation marker, the metadata's length and the metadata.
fn schema_message_length(bytes: &[u8]) -> Result<usize, Failure> {
    let word = |at: usize| -> Result<i32, Failure> {
        let b = bytes
            .get(at..at + 4)
            .ok_or_else(|| bad_request("the rows' stream does not start with a schema"))?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (prefix, length) = if word(0)? == -1 {
        (8, word(4)?)
    } else {
        (4, word(0)?)
    };
    let total = usize::try_from(length)
        .ok()
        .and_then(|l| l.checked_add(prefix))
        .filter(|&t| t <= bytes.len())
        .ok_or_else(|| bad_request("the rows' schema message runs past the bytes given"))?;
    Ok(total)
}

/// The record batches of one call's IPC bytes, after the stream's schema.
fn batches(schema: &[u8], bytes: &[u8]) -> Result<Vec<arrow_array::RecordBatch>, Failure> {
    let ipc = |e: arrow_schema::ArrowError| {
        Failure::from(crate::Error::invalid_argument(format!(
            "the rows from Spark (Arrow IPC): {e}"
        )))
    };
    let stream = std::io::Cursor::new([schema, bytes].concat());
    let reader = StreamReader::try_new(stream, None).map_err(ipc)?;
    // SAFETY: no array the reader builds is read before `validated_rows` has validated it in
    // full (it takes a string column of Spark's that is not UTF-8 as binary, which Arrow's own
    // checks would refuse).
    let reader = unsafe { reader.with_skip_validation(true) };
    let mut out = Vec::new();
    for batch in reader {
        out.push(validated_rows(batch.map_err(ipc)?)?);
    }
    Ok(out)
}

/// A job from its JSON.
fn job_of(text: &str) -> Result<Job, Failure> {
    let v: Value = serde_json::from_str(text).map_err(bad_request)?;
    Ok(Job::from_json(&v)?)
}

/// `{"options": {...Spark's...}, "streaming": bool}` from Spark's driver: the job (see
/// [`Job::create`]), which every task and the commit get.
fn job(text: &str) -> Result<Value, Failure> {
    let r = parse(text)?;
    let raw: BTreeMap<String, String> = string_map(&r, "options")?;
    Ok(Job::create(raw, flag(&r, "streaming")?)?.to_json())
}

fn messages_of(text: &str) -> Result<Vec<TaskMessage>, Failure> {
    let v: Value = serde_json::from_str(text).map_err(bad_request)?;
    Ok(messages_from_json(&v)?)
}

/// `NativeWrite.job(String)`: see [`job`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_job<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, Failure> {
        let answer = job(&request.try_to_string(env)?)?;
        Ok(env.new_string(answer.to_string())?)
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.open(String job)`: a task's writer, as a handle.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        let job = job_of(&request.try_to_string(env)?)?;
        let open = Open {
            writer: Some(job.task()?),
            schema: None,
        };
        Ok(Box::into_raw(Box::new(open)) as jlong)
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.write(long, ByteBuffer, int)`: the Arrow IPC stream bytes in the first
/// `length` bytes of a direct buffer (the stream's schema first, then record batches), each
/// batch written.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_write<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    buffer: JByteBuffer<'local>,
    length: jint,
) {
    env.with_env(|env| -> Result<(), Failure> {
        if handle == 0 {
            return Err(bad_request("write on a closed writer"));
        }
        // SAFETY: a handle `open` returned that neither `finish` nor `abort` freed (Java
        // zeroes it there); one task thread uses it at a time.
        let open = unsafe { &mut *(handle as *mut Open) };
        let address = env.get_direct_buffer_address(&buffer)?;
        let capacity = env.get_direct_buffer_capacity(&buffer)?;
        let length = usize::try_from(length).map_err(|_| bad_request("a negative length"))?;
        if address.is_null() || length > capacity {
            return Err(bad_request(
                "the rows' buffer is not a direct buffer of that length",
            ));
        }
        // SAFETY: Java's direct buffer holds `capacity` bytes at `address` and is not written
        // while this call runs; the bytes are copied before anything else reads them.
        let bytes = unsafe { std::slice::from_raw_parts(address, length) };
        let writer = open
            .writer
            .as_mut()
            .ok_or_else(|| bad_request("write after finish"))?;
        let rest = match &open.schema {
            Some(_) => bytes,
            None => {
                let n = schema_message_length(bytes)?;
                open.schema = Some(bytes[..n].to_vec());
                &bytes[n..]
            }
        };
        if rest.is_empty() {
            return Ok(());
        }
        let schema = open.schema.as_deref().unwrap_or_default();
        for batch in batches(schema, rest)? {
            writer.write(&batch)?;
        }
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.finish(long)`: the task's partition directories completed; its commit message
/// (JSON). Frees the handle, whatever the outcome.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_finish<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, Failure> {
        if handle == 0 {
            return Err(bad_request("finish on a closed writer"));
        }
        // SAFETY: as in `write`; Java zeroes its handle before this call returns.
        let mut open = unsafe { Box::from_raw(handle as *mut Open) };
        let writer = open
            .writer
            .take()
            .ok_or_else(|| bad_request("finish twice"))?;
        let message = writer.finish()?;
        Ok(env.new_string(message.to_json().to_string())?)
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.abort(long)`: the task's writer dropped; nothing it wrote is left.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_abort<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_| -> Result<(), Failure> {
        if handle != 0 {
            // SAFETY: as in `finish`.
            let mut open = unsafe { Box::from_raw(handle as *mut Open) };
            if let Some(writer) = open.writer.take() {
                writer.abort();
            }
        }
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.commit(String job, String messages, boolean overwrite)`: a batch job's commit.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_commit<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    job: JString<'local>,
    messages: JString<'local>,
    overwrite: jboolean,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let job = job_of(&job.try_to_string(env)?)?;
        job.commit(overwrite, &messages_of(&messages.try_to_string(env)?)?)?;
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.abortJob(String job)`: a batch job's staging directory removed.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_abortJob<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    job: JString<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        job_of(&job.try_to_string(env)?)?.abort()?;
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.commitStream(String job, String messages, long epoch)`: a micro-batch's
/// append, marked with the query's writer id and `epoch`.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_commitStream<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    job: JString<'local>,
    messages: JString<'local>,
    epoch: jlong,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let job = job_of(&job.try_to_string(env)?)?;
        job.commit_stream(epoch, &messages_of(&messages.try_to_string(env)?)?)?;
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}

/// `NativeWrite.abortStream(String job, String messages)`: a micro-batch's staging removed.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_NativeWrite_abortStream<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    job: JString<'local>,
    messages: JString<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let job = job_of(&job.try_to_string(env)?)?;
        job.abort_stream(&messages_of(&messages.try_to_string(env)?)?);
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}
