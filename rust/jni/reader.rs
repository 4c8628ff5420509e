//! The executors' native calls: a reader of work items (`read/reader.rs`, planned on the
//! driver, never planned again), whose record batches cross to Java as the addresses of their
//! Arrow buffers. Java's column vectors (`jvm/.../NativeVectors.java`) read those buffers in
//! place: nothing is copied row by row on either side.
//!
//! Ownership: `open` boxes a reader and hands Java its address (a `long` handle). Each `next`
//! drops the batch the previous `next` returned, then keeps the new one in the box until the
//! following `next` or `close`: the addresses Java holds are valid exactly while Java's
//! `ColumnarBatch` is (Spark's contract: a batch until the next call). `close` drops the reader
//! and its last batch; Java calls it once (its handle is zeroed), from Spark's task
//! completion at the latest.

use super::errors::{bad_request, Failure, ThrowKafkaLog};
use super::json::{array, flag, opt_str, opt_u64, parse};
use super::planning::{item_of, storage_of};
use crate::arrow::schema::Projection;
use crate::format::batch::CrcPolicy;
use crate::log::issues::OnCorrupt;
use crate::read::reader::{LogReader, ReaderBuilder};
use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::{DataType, TimeUnit};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

/// An open reader and the batch Java is reading.
struct Open {
    reader: LogReader,
    current: Option<RecordBatch>,
}

/// The type tags of the descriptor (`NativeVectors.java` has the same numbers).
fn tag(t: &DataType) -> Result<i64, Failure> {
    Ok(match t {
        DataType::Boolean => 1,
        DataType::Int8 => 2,
        DataType::Int16 => 3,
        DataType::Int32 => 4,
        DataType::Int64 => 5,
        DataType::Timestamp(TimeUnit::Microsecond, _) => 6,
        DataType::Utf8 => 7,
        DataType::Binary => 8,
        DataType::BinaryView => 9,
        DataType::List(_) => 10,
        DataType::Struct(_) => 11,
        other => return Err(bad_request(format!("no Java vector for {other}"))),
    })
}

/// Appends one array's node, then its children's, in the order Java reads them: type tag, null
/// count, validity address (0: no nulls), validity bit offset, element offset, buffer count,
/// the buffers' addresses.
fn describe(data: &ArrayData, out: &mut Vec<i64>) -> Result<(), Failure> {
    out.push(tag(data.data_type())?);
    out.push(data.null_count() as i64);
    match data.nulls() {
        Some(n) if n.null_count() > 0 => {
            out.push(n.buffer().as_ptr() as i64);
            out.push(n.offset() as i64);
        }
        _ => {
            out.push(0);
            out.push(0);
        }
    }
    out.push(data.offset() as i64);
    out.push(data.buffers().len() as i64);
    out.extend(data.buffers().iter().map(|b| b.as_ptr() as i64));
    for child in data.child_data() {
        describe(child, out)?;
    }
    Ok(())
}

/// The descriptor of a batch: its row count, then each column's nodes.
fn descriptor(batch: &RecordBatch) -> Result<Vec<i64>, Failure> {
    let mut out = vec![batch.num_rows() as i64];
    for column in batch.columns() {
        describe(&column.to_data(), &mut out)?;
    }
    Ok(out)
}

/// `{"items": [...], "columns": [...], "binary_view", "batch_size", "include_control",
/// "check_crc", "on_corrupt", "max_decompressed_size", "storage"}`: a reader of the items in
/// order.
fn open(text: &str) -> Result<Open, Failure> {
    let r = parse(text)?;
    let names: Vec<&str> = array(&r, "columns")?
        .iter()
        .map(|c| opt_str(Some(c), "column")?.ok_or_else(|| bad_request("column")))
        .collect::<Result<_, _>>()?;
    let projection = Projection::from_names(&names)?.with_binary_view(flag(&r, "binary_view")?);
    let mut builder = ReaderBuilder::new()
        .with_projection(projection)
        .with_include_control(flag(&r, "include_control")?)
        .with_crc(
            if matches!(r.get("check_crc"), Some(serde_json::Value::Bool(false))) {
                CrcPolicy::Ignore
            } else {
                CrcPolicy::Verify
            },
        )
        .with_on_corrupt(OnCorrupt::from_name(
            opt_str(r.get("on_corrupt"), "on_corrupt")?.unwrap_or("error"),
        )?)
        .with_storage(storage_of(&r)?);
    if let Some(rows) = opt_u64(r.get("batch_size"), "batch_size")? {
        if rows == 0 {
            return Err(crate::Error::invalid_argument("batchSize must be positive").into());
        }
        builder = builder.with_batch_size(rows as usize);
    }
    if let Some(max) = opt_u64(r.get("max_decompressed_size"), "max_decompressed_size")? {
        builder = builder.with_max_decompressed_size(max as usize)?;
    }
    let planned = array(&r, "items")?
        .iter()
        .map(|i| item_of(i).map(|i| i.to_planned()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Open {
        reader: builder.build_planned(planned, Vec::new()),
        current: None,
    })
}

/// `Native.open(String)`: a handle for [`Java_kafkalog_spark_Native_next`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        let text = request.try_to_string(env)?;
        let open = Box::new(open(&text)?);
        Ok(Box::into_raw(open) as jlong)
    })
    .resolve::<ThrowKafkaLog>()
}

/// `Native.next(long)`: the next batch with rows, as its descriptor (see [`descriptor`]), or
/// null after the last. The previous batch is dropped first.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_next<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JLongArray<'local> {
    env.with_env(|env| -> Result<JLongArray<'local>, Failure> {
        if handle == 0 {
            return Err(bad_request("next on a closed reader"));
        }
        // SAFETY: a handle `open` returned and `close` has not freed (Java zeroes it there);
        // one task thread uses it at a time.
        let open = unsafe { &mut *(handle as *mut Open) };
        open.current = None;
        let batch = loop {
            match open.reader.next() {
                None => return Ok(JLongArray::default()),
                Some(batch) => {
                    let batch = batch?;
                    if batch.num_rows() > 0 {
                        break batch;
                    }
                }
            }
        };
        let words = descriptor(&batch)?;
        open.current = Some(batch);
        let out = JLongArray::new(env, words.len())?;
        out.set_region(env, 0, &words)?;
        Ok(out)
    })
    .resolve::<ThrowKafkaLog>()
}

/// `Native.close(long)`: drops the reader and its last batch.
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_close<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_| -> Result<(), Failure> {
        if handle != 0 {
            // SAFETY: as in `next`; Java calls `close` once per handle.
            drop(unsafe { Box::from_raw(handle as *mut Open) });
        }
        Ok(())
    })
    .resolve::<ThrowKafkaLog>()
}
