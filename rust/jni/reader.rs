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
use crate::arrow::schema::{Column, Projection};
use crate::format::batch::CrcPolicy;
use crate::log::issues::OnCorrupt;
use crate::read::reader::{LogReader, ReaderBuilder};
use crate::read::values::{ValueArgs, ValueStep};
use crate::spark::shapes::{prune, to_spark, wanted};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::{DataType, TimeUnit};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use serde_json::Value;

/// An open reader and the batch Java is reading.
pub(super) struct Open {
    reader: LogReader,
    /// Typed keys and values decoded, when asked for.
    values: Option<ValueStep>,
    /// The columns Java reads, in its order (empty: none, for `count(*)`).
    output: Vec<String>,
    /// Nested columns pruned to what Spark asked for: (column, Spark's JSON of its type).
    prune: Vec<(String, Value)>,
    /// The arrays of the batch Java is reading, which own the buffers it reads.
    current: Option<Vec<ArrayRef>>,
}

/// The type tags of the descriptor (`NativeVectors.java` has the same numbers), and the tag's
/// parameter (a fixed width, a dictionary's key width).
fn tag(t: &DataType) -> Result<(i64, i64), Failure> {
    Ok(match t {
        DataType::Boolean => (1, 0),
        DataType::Int8 => (2, 0),
        DataType::Int16 => (3, 0),
        DataType::Int32 | DataType::Date32 => (4, 0),
        DataType::Int64
        | DataType::Timestamp(TimeUnit::Microsecond, _)
        | DataType::Duration(TimeUnit::Microsecond) => (5, 0),
        DataType::Float32 => (6, 0),
        DataType::Float64 => (7, 0),
        DataType::Utf8 | DataType::Binary => (8, 0),
        DataType::BinaryView | DataType::Utf8View => (9, 0),
        DataType::List(_) => (10, 0),
        DataType::Struct(_) => (11, 0),
        DataType::Map(..) => (12, 0),
        DataType::Decimal128(..) => (13, 0),
        DataType::Dictionary(k, _) => match k.as_ref() {
            DataType::Int8 | DataType::UInt8 => (14, 1),
            DataType::Int16 | DataType::UInt16 => (14, 2),
            DataType::Int32 | DataType::UInt32 => (14, 4),
            DataType::Int64 | DataType::UInt64 => (14, 8),
            other => return Err(bad_request(format!("no Java vector for keys {other}"))),
        },
        DataType::FixedSizeBinary(n) => (15, i64::from(*n)),
        DataType::LargeUtf8 | DataType::LargeBinary => (16, 0),
        other => return Err(bad_request(format!("no Java vector for {other}"))),
    })
}

/// Appends one array's node, then its children's, in the order Java reads them: type tag, its
/// parameter, null count, validity address (0: no nulls), validity bit offset, element offset,
/// buffer count, the buffers' addresses.
fn describe(data: &ArrayData, out: &mut Vec<i64>) -> Result<(), Failure> {
    let (tag, param) = tag(data.data_type())?;
    out.push(tag);
    out.push(param);
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
fn descriptor(rows: usize, columns: &[ArrayRef]) -> Result<Vec<i64>, Failure> {
    let mut out = vec![rows as i64];
    for column in columns {
        describe(&column.to_data(), &mut out)?;
    }
    Ok(out)
}

/// The columns to read for `output` (a typed side's error columns need the side), or `offset`
/// alone when none (a query that needs no column still counts rows).
fn read_columns(output: &[String], values: Option<&ValueArgs>) -> Vec<String> {
    fn add(read: &mut Vec<String>, name: &str) {
        if !read.iter().any(|c| c == name) {
            read.push(name.to_owned());
        }
    }
    let mut read: Vec<String> = Vec::new();
    for name in output {
        match name.as_str() {
            "key_error" | "key_raw" => add(&mut read, "key"),
            "value_error" | "value_raw" => add(&mut read, "value"),
            other => add(&mut read, other),
        }
    }
    if let Some(v) = values {
        let typed = |side: &str, format: &str| format != "binary" && read.iter().any(|c| c == side);
        if typed("key", &v.key_format) || typed("value", &v.value_format) {
            for name in v.needed_columns() {
                add(&mut read, name);
            }
        }
    }
    if read.is_empty() {
        read.push(Column::Offset.name().to_owned());
    }
    read
}

/// `{"items": [...], "columns": [...], "values": <resolved typed-value options or null>,
/// "prune": {"value": <Spark's JSON of the pruned type>}, "binary_view", "batch_size",
/// "include_control", "check_crc", "on_corrupt", "max_decompressed_size", "storage"}`: a
/// reader of the items in order.
pub(super) fn open(text: &str) -> Result<Open, Failure> {
    let r = parse(text)?;
    let output: Vec<String> = array(&r, "columns")?
        .iter()
        .map(|c| {
            opt_str(Some(c), "column")?
                .map(str::to_owned)
                .ok_or_else(|| bad_request("column"))
        })
        .collect::<Result<_, _>>()?;
    let values = match r.get("values") {
        None | Some(Value::Null) => None,
        Some(v) => Some(ValueArgs::from_json(v)?),
    };
    if values.as_ref().is_some_and(|v| v.schemas_path.is_some()) {
        // The driver resolves the options: a task never reads the registry's storage topic.
        return Err(bad_request(
            "a task's typed-value options name the registry's log",
        ));
    }
    let read = read_columns(&output, values.as_ref());
    let projection = Projection::from_names(&read)?.with_binary_view(flag(&r, "binary_view")?);
    let storage = storage_of(&r)?;
    let mut builder = ReaderBuilder::new()
        .with_projection(projection)
        .with_include_control(flag(&r, "include_control")?)
        .with_crc(if matches!(r.get("check_crc"), Some(Value::Bool(false))) {
            CrcPolicy::Ignore
        } else {
            CrcPolicy::Verify
        })
        .with_on_corrupt(OnCorrupt::from_name(
            opt_str(r.get("on_corrupt"), "on_corrupt")?.unwrap_or("error"),
        )?)
        .with_storage(storage.clone());
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
    let prune: Vec<(String, Value)> = match r.get("prune") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(_) => return Err(bad_request("prune is not an object")),
    };
    let values = match values {
        Some(args) => {
            let files: Vec<_> = planned.iter().map(|p| p.file.clone()).collect();
            // The decoders build only what Spark asks for where they can (Protobuf skips the
            // rest on the wire); `prune` drops what they built beyond it.
            let wanted: Vec<_> = prune.iter().map(|(c, t)| (c.clone(), wanted(t))).collect();
            // Resolved on the driver: the registry's rows are in the options, nothing is read.
            ValueStep::pruned(&args, &storage, &files, None, Vec::new(), &wanted)?
                .map(|(step, _)| step)
        }
        None => None,
    };
    Ok(Open {
        reader: builder.build_planned(planned, Vec::new()),
        values,
        output,
        prune,
        current: None,
    })
}

impl Open {
    /// The next batch with rows, as the arrays Java reads (typed values decoded, pruned, in
    /// Spark's shapes), or None after the last.
    fn next_columns(&mut self) -> Result<Option<(usize, Vec<ArrayRef>)>, Failure> {
        let batch: RecordBatch = loop {
            match self.reader.next() {
                None => return Ok(None),
                Some(batch) => {
                    let batch = batch?;
                    if batch.num_rows() > 0 {
                        break batch;
                    }
                }
            }
        };
        let batch = match &mut self.values {
            Some(step) => step.apply(&batch)?,
            None => batch,
        };
        let mut columns = Vec::with_capacity(self.output.len());
        for name in &self.output {
            let column = batch
                .column_by_name(name)
                .ok_or_else(|| bad_request(format!("column {name} is not in the batch read")))?;
            let column = match self.prune.iter().find(|(n, _)| n == name) {
                Some((_, required)) => prune(column, required)?,
                None => column.clone(),
            };
            columns.push(to_spark(&column)?);
        }
        Ok(Some((batch.num_rows(), columns)))
    }
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
        let Some((rows, columns)) = open.next_columns()? else {
            return Ok(JLongArray::default());
        };
        let words = descriptor(rows, &columns)?;
        open.current = Some(columns);
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
