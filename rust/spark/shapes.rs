//! The column shapes Spark gets, once for both Spark sources: kafkalog's columns as Spark types
//! (Spark's own JSON form of a `DataType`, which PySpark's `StructType.fromJson` and the JVM's
//! `DataType.fromJson` both read), and typed keys and values in types Spark can carry onward:
//! every column a read gives can be written by Spark to Parquet and ORC with its default
//! settings.
//!
//! The mapping is Spark's own `from_avro`/`from_protobuf` mapping (`docs/spark-jvm.md` has the
//! table) except where Spark could not write what it gives there, where the nearest type it
//! can write is used instead:
//!
//! - `time32`/`time64` (Avro `time-millis`/`time-micros`): Spark's TIME cannot be written to
//!   Parquet or ORC unless `spark.sql.timeType.enabled` is set, so a time is the number Avro
//!   stores, as Spark's `from_avro` gave it before TIME existed: `int` milliseconds (`long`
//!   microseconds) after midnight;
//! - `null` (an Avro field of type `null`): Spark's `void` cannot be written to ORC: a `string`
//!   column of nulls;
//! - an empty `struct` (an Avro record without fields): Spark writes no empty struct: it gets
//!   one string field, `__dummy_field_in_empty_struct`, always null (what Spark's
//!   `from_protobuf` does with `retain.empty.message.types`);
//! - `decimal256` beyond 38 digits (Spark's decimals stop at 38): the decimal's text;
//! - an Avro `duration` (Arrow's month-day-nano interval): its 12 bytes as Avro stores them
//!   (Spark's `from_avro` reads a `duration` as the `fixed` it is on);
//! - unsigned integers (Protobuf `uint32`, `uint64`): the same bits as `int` and `long`, as
//!   Spark's `from_protobuf` reads them by default (and Java's Protobuf runtime holds them);
//! - timestamps in milliseconds or nanoseconds: microseconds, Spark's unit (nanoseconds
//!   floored), and durations as microseconds (Spark's day-time interval).
//!
//! Dictionaries (Avro enums) and fixed-size binaries keep their Arrow layout: both sources read
//! them in place as Spark's `string` and `binary`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date64Type, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    IntervalMonthDayNanoType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, DurationMicrosecondArray, FixedSizeBinaryArray,
    ListArray, MapArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, FieldRef, Fields, IntervalUnit, Schema, TimeUnit};
use serde_json::{json, Value};

use crate::arrow::schema::Column;
use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::Wanted;

/// The field an empty struct gets, as Spark's `from_protobuf` names it.
pub const EMPTY_STRUCT_FIELD: &str = "__dummy_field_in_empty_struct";

/// Spark's Kafka source columns (`headers` with `includeHeaders`), then kafkalog's batch
/// metadata columns with `batchMetadata`.
pub fn spark_columns(include_headers: bool, batch_metadata: bool) -> Vec<String> {
    let mut out: Vec<String> = Column::DEFAULT
        .iter()
        .filter(|c| include_headers || **c != Column::Headers)
        .map(|c| c.name().to_owned())
        .collect();
    if batch_metadata {
        out.extend(Column::METADATA.iter().map(|c| c.name().to_owned()));
    }
    out
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Internal, e.to_string())
}

fn no_spark_type(t: &DataType) -> Error {
    Error::invalid_argument(format!(
        "no Spark type for Arrow type {t}: read that column as binary, or with kafkalog.read"
    ))
}

/// The Arrow type of [`to_spark`]'s arrays of type `t`: the type holding Spark's values.
pub fn spark_data_type(t: &DataType) -> Result<DataType> {
    Ok(match t {
        DataType::Null => DataType::Utf8,
        DataType::UInt8 => DataType::Int16,
        DataType::UInt16 => DataType::Int32,
        DataType::UInt32 => DataType::Int32,
        DataType::UInt64 => DataType::Int64,
        DataType::Float16 => DataType::Float32,
        DataType::Time32(_) => DataType::Int32,
        DataType::Time64(_) => DataType::Int64,
        DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, tz) => DataType::Timestamp(TimeUnit::Microsecond, tz.clone()),
        DataType::Duration(_) => DataType::Duration(TimeUnit::Microsecond),
        DataType::Interval(IntervalUnit::MonthDayNano) => DataType::FixedSizeBinary(12),
        DataType::Decimal256(p, s) if *p <= 38 => DataType::Decimal128(*p, *s),
        DataType::Decimal256(..) => DataType::Utf8,
        DataType::Dictionary(k, v) => {
            DataType::Dictionary(k.clone(), Box::new(spark_data_type(v)?))
        }
        DataType::List(f) => DataType::List(spark_field(f)?),
        DataType::LargeList(f) => DataType::LargeList(spark_field(f)?),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(spark_field(f)?, *n),
        DataType::Map(f, sorted) => DataType::Map(spark_field(f)?, *sorted),
        DataType::Struct(fields) if fields.is_empty() => {
            DataType::Struct(Fields::from(vec![Field::new(
                EMPTY_STRUCT_FIELD,
                DataType::Utf8,
                true,
            )]))
        }
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(spark_field).collect::<Result<Fields>>()?)
        }
        DataType::Union(..)
        | DataType::Interval(_)
        | DataType::RunEndEncoded(..)
        | DataType::ListView(_)
        | DataType::LargeListView(_) => return Err(no_spark_type(t)),
        other => other.clone(),
    })
}

fn spark_field(f: &FieldRef) -> Result<FieldRef> {
    Ok(Arc::new(
        f.as_ref()
            .clone()
            .with_data_type(spark_data_type(f.data_type())?),
    ))
}

/// Spark's type of an Arrow type kafkalog produces, as Spark's JSON form of a `DataType`
/// (every field and element nullable, as Spark's Kafka source and `from_avro` make them).
pub fn spark_type(t: &DataType) -> Result<Value> {
    let t = spark_data_type(t)?;
    type_json(&t)
}

fn type_json(t: &DataType) -> Result<Value> {
    Ok(match t {
        DataType::Boolean => json!("boolean"),
        DataType::Int8 => json!("byte"),
        DataType::Int16 => json!("short"),
        DataType::Int32 => json!("integer"),
        DataType::Int64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => json!("string"),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => json!("binary"),
        DataType::Decimal128(p, s) => json!(format!("decimal({p},{s})")),
        DataType::Date32 => json!("date"),
        DataType::Timestamp(_, Some(_)) => json!("timestamp"),
        DataType::Timestamp(_, None) => json!("timestamp_ntz"),
        DataType::Duration(_) => json!("interval day to second"),
        DataType::Dictionary(_, v) => type_json(v)?,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => json!({
            "type": "array",
            "elementType": type_json(f.data_type())?,
            "containsNull": true,
        }),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(no_spark_type(t));
            };
            json!({
                "type": "map",
                "keyType": type_json(kv[0].data_type())?,
                "valueType": type_json(kv[1].data_type())?,
                "valueContainsNull": true,
            })
        }
        DataType::Struct(fields) => struct_json(fields.iter().map(|f| (f.name(), f.data_type())))?,
        other => return Err(no_spark_type(other)),
    })
}

fn struct_json<'a>(fields: impl Iterator<Item = (&'a String, &'a DataType)>) -> Result<Value> {
    let fields = fields
        .map(|(name, t)| {
            Ok(json!({"name": name, "type": type_json(t)?, "nullable": true, "metadata": {}}))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"type": "struct", "fields": fields}))
}

/// The Arrow schema of kafkalog's `columns` in Spark's shapes, with `key`/`value` of the types
/// decoding gives (`decoded`: [`crate::read::values::ValueArgs::resolve`]'s schema) and its
/// error columns after them.
pub fn arrow_schema(columns: &[String], decoded: Option<&Schema>) -> Result<Schema> {
    let mut fields = Vec::new();
    for c in columns {
        let field = match decoded.and_then(|d| d.field_with_name(c).ok()) {
            Some(f) => f.clone(),
            None => Column::from_name(c)?.field(),
        };
        fields.push(field);
    }
    if let Some(d) = decoded {
        for f in d.fields() {
            if !columns.iter().any(|c| c == f.name()) && f.name() != "key" && f.name() != "value" {
                fields.push(f.as_ref().clone());
            }
        }
    }
    let fields = fields
        .into_iter()
        .map(|f| {
            let t = spark_data_type(f.data_type())?;
            Ok(Field::new(f.name(), t, true))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Schema::new(fields))
}

/// The Spark schema (JSON of a `StructType`) of [`arrow_schema()`]: every field nullable.
pub fn spark_schema(columns: &[String], decoded: Option<&Schema>) -> Result<Value> {
    let schema = arrow_schema(columns, decoded)?;
    struct_json(schema.fields().iter().map(|f| (f.name(), f.data_type())))
}

/// `array` as [`spark_data_type`] says (no copy where only the type's name changes).
pub fn to_spark(array: &ArrayRef) -> Result<ArrayRef> {
    let t = array.data_type();
    let target = spark_data_type(t)?;
    if &target == t {
        return Ok(array.clone());
    }
    Ok(match t {
        DataType::UInt32 | DataType::Time32(_) => retype(array, DataType::Int32)?,
        DataType::UInt64 | DataType::Time64(_) => retype(array, DataType::Int64)?,
        DataType::Null => new_null_array(&DataType::Utf8, array.len()),
        DataType::Date64 => {
            let a = array.as_primitive::<Date64Type>();
            Arc::new(
                a.unary::<_, arrow_array::types::Date32Type>(|ms| ms.div_euclid(86_400_000) as i32),
            )
        }
        DataType::Timestamp(unit, tz) => {
            let micros: TimestampMicrosecondArray = match unit {
                TimeUnit::Second => array
                    .as_primitive::<TimestampSecondType>()
                    .unary(|v| v.saturating_mul(1_000_000)),
                TimeUnit::Millisecond => array
                    .as_primitive::<TimestampMillisecondType>()
                    .unary(|v| v.saturating_mul(1000)),
                TimeUnit::Nanosecond => array
                    .as_primitive::<TimestampNanosecondType>()
                    .unary(|v| v.div_euclid(1000)),
                TimeUnit::Microsecond => return Ok(array.clone()),
            };
            Arc::new(micros.with_timezone_opt(tz.clone()))
        }
        DataType::Duration(unit) => {
            let micros: DurationMicrosecondArray = match unit {
                TimeUnit::Second => array
                    .as_primitive::<DurationSecondType>()
                    .unary(|v| v.saturating_mul(1_000_000)),
                TimeUnit::Millisecond => array
                    .as_primitive::<DurationMillisecondType>()
                    .unary(|v| v.saturating_mul(1000)),
                TimeUnit::Nanosecond => array
                    .as_primitive::<DurationNanosecondType>()
                    .unary(|v| v.div_euclid(1000)),
                TimeUnit::Microsecond => return Ok(array.clone()),
            };
            Arc::new(micros)
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => avro_duration(array)?,
        DataType::Dictionary(_, _) => {
            let any = array.as_any_dictionary();
            let values = to_spark(any.values())?;
            any.with_values(values)
        }
        DataType::List(field) => {
            let list = array.as_list::<i32>();
            let values = to_spark(list.values())?;
            let field = Arc::new(Field::new(field.name(), values.data_type().clone(), true));
            Arc::new(
                ListArray::try_new(field, list.offsets().clone(), values, list.nulls().cloned())
                    .map_err(internal)?,
            )
        }
        DataType::Map(_, sorted) => {
            let map = array.as_map();
            let entries = to_spark(&(Arc::new(map.entries().clone()) as ArrayRef))?;
            let entries = entries.as_struct().clone();
            let DataType::Map(field, _) = &target else {
                return Err(internal("map's Spark type is not a map"));
            };
            Arc::new(
                MapArray::try_new(
                    field.clone(),
                    map.offsets().clone(),
                    entries,
                    map.nulls().cloned(),
                    *sorted,
                )
                .map_err(internal)?,
            )
        }
        DataType::Struct(fields) if fields.is_empty() => {
            let s = array.as_struct();
            let DataType::Struct(spark_fields) = &target else {
                return Err(internal("struct's Spark type is not a struct"));
            };
            Arc::new(
                StructArray::try_new(
                    spark_fields.clone(),
                    vec![new_null_array(&DataType::Utf8, s.len())],
                    s.nulls().cloned(),
                )
                .map_err(internal)?,
            )
        }
        DataType::Struct(_) => {
            let s = array.as_struct();
            let children = s
                .columns()
                .iter()
                .map(to_spark)
                .collect::<Result<Vec<_>>>()?;
            let DataType::Struct(spark_fields) = &target else {
                return Err(internal("struct's Spark type is not a struct"));
            };
            Arc::new(
                StructArray::try_new_with_length(
                    spark_fields.clone(),
                    children,
                    s.nulls().cloned(),
                    s.len(),
                )
                .map_err(internal)?,
            )
        }
        _ => arrow_cast::cast(array, &target).map_err(internal)?,
    })
}

/// The same buffers under another type of the same width.
fn retype(array: &ArrayRef, to: DataType) -> Result<ArrayRef> {
    let data = array.to_data().into_builder().data_type(to);
    Ok(make_array(data.build().map_err(internal)?))
}

/// `array`, a column as Spark hands it to a write (in the types [`spark_data_type`] gives),
/// as the type `target` a read gives the same values: the inverse of [`to_spark`], so that a
/// typed read written back is encoded with its schema. Struct fields are matched by name (a
/// field Spark does not have is null); a value Spark's type holds that `target` cannot (a
/// time past a day, a binary of another length than a `fixed`) is an error naming both types.
pub fn from_spark(array: &ArrayRef, target: &DataType) -> Result<ArrayRef> {
    let t = array.data_type();
    if t == target {
        return Ok(array.clone());
    }
    let bad = |why: &dyn std::fmt::Display| {
        Error::invalid_argument(format!(
            "a column of Arrow type {t} (Spark's) cannot be written as {target}: {why}"
        ))
    };
    let len = array.len();
    Ok(match (t, target) {
        (_, DataType::Null) if array.null_count() == len => new_null_array(target, len),
        (DataType::Int32, DataType::UInt32) | (DataType::Int64, DataType::UInt64) => {
            retype(array, target.clone())?
        }
        (DataType::Int32, DataType::Time32(_)) | (DataType::Int64, DataType::Time64(_)) => {
            let day: i64 = match target {
                DataType::Time32(TimeUnit::Second) => 86_400,
                DataType::Time32(_) => 86_400_000,
                DataType::Time64(TimeUnit::Microsecond) => 86_400_000_000,
                _ => 86_400_000_000_000,
            };
            let as_i64 = arrow_cast::cast(array, &DataType::Int64).map_err(|e| bad(&e))?;
            let outside = as_i64
                .as_primitive::<arrow_array::types::Int64Type>()
                .iter()
                .flatten()
                .find(|v| !(0..day).contains(v));
            if let Some(v) = outside {
                return Err(bad(&format!("{v} is not a time of day")));
            }
            retype(array, target.clone())?
        }
        (DataType::FixedSizeBinary(12), DataType::Interval(IntervalUnit::MonthDayNano)) => {
            from_avro_duration(array)
        }
        (
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView,
            DataType::Interval(IntervalUnit::MonthDayNano),
        ) => {
            let fixed =
                arrow_cast::cast(array, &DataType::FixedSizeBinary(12)).map_err(|e| bad(&e))?;
            from_avro_duration(&fixed)
        }
        (DataType::Struct(_), DataType::Struct(fields)) if fields.is_empty() => {
            Arc::new(StructArray::new_empty_fields(len, array.nulls().cloned()))
        }
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            let children = fields
                .iter()
                .map(|f| match s.column_by_name(f.name()) {
                    Some(c) => from_spark(c, f.data_type()),
                    None => Ok(new_null_array(f.data_type(), len)),
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(
                StructArray::try_new_with_length(fields.clone(), children, s.nulls().cloned(), len)
                    .map_err(|e| bad(&e))?,
            )
        }
        (DataType::List(_), DataType::List(field)) => {
            let list = array.as_list::<i32>();
            let values = from_spark(list.values(), field.data_type())?;
            Arc::new(
                ListArray::try_new(
                    field.clone(),
                    list.offsets().clone(),
                    values,
                    list.nulls().cloned(),
                )
                .map_err(|e| bad(&e))?,
            )
        }
        (DataType::LargeList(_), DataType::List(_)) => {
            let narrowed = arrow_cast::cast(
                array,
                &DataType::List(Arc::new(Field::new(
                    "element",
                    match t {
                        DataType::LargeList(f) => f.data_type().clone(),
                        _ => unreachable!("a large list"),
                    },
                    true,
                ))),
            )
            .map_err(|e| bad(&e))?;
            from_spark(&narrowed, target)?
        }
        (DataType::Map(..), DataType::Map(field, sorted)) => {
            let map = array.as_map();
            let entries: ArrayRef = Arc::new(map.entries().clone());
            let entries = from_spark(&entries, field.data_type())?;
            Arc::new(
                MapArray::try_new(
                    field.clone(),
                    map.offsets().clone(),
                    entries.as_struct().clone(),
                    map.nulls().cloned(),
                    *sorted,
                )
                .map_err(|e| bad(&e))?,
            )
        }
        (DataType::Dictionary(..), DataType::Dictionary(_, values)) => {
            let any = array.as_any_dictionary();
            let plain = arrow_cast::cast(any.values(), values).map_err(|e| bad(&e))?;
            let relabelled = any.with_values(plain);
            arrow_cast::cast(&relabelled, target).map_err(|e| bad(&e))?
        }
        (_, DataType::FixedSizeBinary(n)) => {
            let wrong = (0..len).find(|&i| {
                array.is_valid(i) && binary_len(array, i).is_some_and(|l| l != *n as usize)
            });
            if let Some(i) = wrong {
                return Err(bad(&format!("row {i} is not {n} bytes long")));
            }
            arrow_cast::cast(array, target).map_err(|e| bad(&e))?
        }
        _ => arrow_cast::cast(array, target).map_err(|e| bad(&e))?,
    })
}

/// The length of row `i` of a binary column (`None` for another type).
fn binary_len(array: &ArrayRef, i: usize) -> Option<usize> {
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(i).len()),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(i).len()),
        DataType::BinaryView => Some(array.as_binary_view().value(i).len()),
        _ => None,
    }
}

/// Avro's 12 bytes of a `duration` (months, days, milliseconds) as Arrow's month-day-nano
/// intervals: the inverse of [`avro_duration`].
fn from_avro_duration(array: &ArrayRef) -> ArrayRef {
    let a = array.as_fixed_size_binary();
    let word = |b: &[u8], k: usize| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
    let values = (0..a.len()).map(|i| {
        a.is_valid(i).then(|| {
            let b = a.value(i);
            arrow_array::types::IntervalMonthDayNano::new(
                word(b, 0) as i32,
                word(b, 4) as i32,
                i64::from(word(b, 8)) * 1_000_000,
            )
        })
    });
    Arc::new(values.collect::<arrow_array::IntervalMonthDayNanoArray>())
}

/// Arrow's month-day-nano intervals (an Avro `duration`) as Avro's 12 bytes: months, days and
/// milliseconds, little-endian unsigned 32-bit integers (each taken modulo 2^32, as a value
/// read from Avro always fits).
fn avro_duration(array: &ArrayRef) -> Result<ArrayRef> {
    let a = array.as_primitive::<IntervalMonthDayNanoType>();
    let mut bytes = Vec::with_capacity(a.len() * 12);
    for v in a.values() {
        bytes.extend_from_slice(&(v.months as u32).to_le_bytes());
        bytes.extend_from_slice(&(v.days as u32).to_le_bytes());
        bytes.extend_from_slice(&(v.nanoseconds.div_euclid(1_000_000) as u32).to_le_bytes());
    }
    let out =
        FixedSizeBinaryArray::try_new(12, bytes.into(), a.nulls().cloned()).map_err(internal)?;
    Ok(Arc::new(out))
}

/// The parts of a column Spark asks for (`required`, Spark's JSON of the pruned type, as
/// [`prune`] takes it), for a decoder to build only those.
pub fn wanted(required: &Value) -> Wanted {
    match required.get("type").and_then(Value::as_str) {
        Some("struct") => Wanted::Fields(
            required
                .get("fields")
                .and_then(Value::as_array)
                .map(|fields| {
                    fields
                        .iter()
                        .filter_map(|f| {
                            let name = f.get("name").and_then(Value::as_str)?;
                            Some((name.to_owned(), wanted(f.get("type")?)))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        Some("array") => wanted(required.get("elementType").unwrap_or(&Value::Null)),
        Some("map") => wanted(required.get("valueType").unwrap_or(&Value::Null)),
        _ => Wanted::All,
    }
}

/// `array` with only the parts of a nested type Spark asks for (`required`, Spark's JSON of
/// the pruned type): a struct's fields by name (in `required`'s order; a name the struct does
/// not have is left out), a list's element and a map's value pruned in turn. The arrays of
/// fields not asked for are dropped, not read.
pub fn prune(array: &ArrayRef, required: &Value) -> Result<ArrayRef> {
    let kind = required.get("type").and_then(Value::as_str);
    Ok(match (array.data_type(), kind) {
        (DataType::Struct(fields), Some("struct")) => {
            let s = array.as_struct();
            let wanted = required
                .get("fields")
                .and_then(Value::as_array)
                .ok_or_else(|| Error::invalid_argument("a pruned struct without fields"))?;
            let mut out_fields = Vec::new();
            let mut children = Vec::new();
            for w in wanted {
                let name = w.get("name").and_then(Value::as_str).unwrap_or_default();
                if let Some(i) = fields.iter().position(|f| f.name() == name) {
                    let child = prune(s.column(i), w.get("type").unwrap_or(&Value::Null))?;
                    out_fields.push(Field::new(name, child.data_type().clone(), true));
                    children.push(child);
                }
            }
            if out_fields.len() == fields.len()
                && out_fields
                    .iter()
                    .zip(fields.iter())
                    .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type())
            {
                return Ok(array.clone());
            }
            Arc::new(
                StructArray::try_new_with_length(
                    Fields::from(out_fields),
                    children,
                    s.nulls().cloned(),
                    s.len(),
                )
                .map_err(internal)?,
            )
        }
        (DataType::List(_), Some("array")) => {
            let list = array.as_list::<i32>();
            let element = required.get("elementType").unwrap_or(&Value::Null);
            let values = prune(list.values(), element)?;
            if values.data_type() == list.values().data_type() {
                return Ok(array.clone());
            }
            Arc::new(
                ListArray::try_new(
                    Arc::new(Field::new_list_field(values.data_type().clone(), true)),
                    list.offsets().clone(),
                    values,
                    list.nulls().cloned(),
                )
                .map_err(internal)?,
            )
        }
        (DataType::Map(field, sorted), Some("map")) => {
            let map = array.as_map();
            let value = required.get("valueType").unwrap_or(&Value::Null);
            let values = prune(map.values(), value)?;
            if values.data_type() == map.values().data_type() {
                return Ok(array.clone());
            }
            let DataType::Struct(kv) = field.data_type() else {
                return Err(internal("a map's entries are not a struct"));
            };
            let entry_fields = Fields::from(vec![
                kv[0].as_ref().clone(),
                Field::new(kv[1].name(), values.data_type().clone(), true),
            ]);
            let entries =
                StructArray::try_new(entry_fields.clone(), vec![map.keys().clone(), values], None)
                    .map_err(internal)?;
            let field = Arc::new(Field::new(
                field.name(),
                DataType::Struct(entry_fields),
                false,
            ));
            Arc::new(
                MapArray::try_new(
                    field,
                    map.offsets().clone(),
                    entries,
                    map.nulls().cloned(),
                    *sorted,
                )
                .map_err(internal)?,
            )
        }
        _ => array.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn null_count(a: &ArrayRef) -> usize {
        a.nulls().map_or(0, NullBuffer::null_count)
    }
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::types::{Int32Type, TimestampMicrosecondType};
    use arrow_array::{
        DictionaryArray, Int32Array, Int64Array, IntervalMonthDayNanoArray, Time32MillisecondArray,
        Time64MicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, UInt32Array,
    };
    use arrow_buffer::{IntervalMonthDayNano, NullBuffer};

    #[test]
    fn kafkalogs_columns_as_spark_types() {
        let columns = spark_columns(true, false);
        let v = spark_schema(&columns, None).unwrap();
        let types: Vec<String> = v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{}:{}", f["name"].as_str().unwrap(), f["type"]))
            .collect();
        assert_eq!(
            types,
            [
                "key:\"binary\"",
                "value:\"binary\"",
                "topic:\"string\"",
                "partition:\"integer\"",
                "offset:\"long\"",
                "timestamp:\"timestamp\"",
                "timestampType:\"integer\"",
                "headers:{\"containsNull\":true,\"elementType\":{\"fields\":[{\"metadata\":{},\"name\":\"key\",\"nullable\":true,\"type\":\"string\"},{\"metadata\":{},\"name\":\"value\",\"nullable\":true,\"type\":\"binary\"}],\"type\":\"struct\"},\"type\":\"array\"}",
            ]
        );
        assert_eq!(spark_columns(false, true).len(), 7 + 19);
    }

    #[test]
    fn types_spark_cannot_write_become_the_nearest_it_can() {
        for (arrow, spark) in [
            (DataType::Time32(TimeUnit::Millisecond), json!("integer")),
            (DataType::Time64(TimeUnit::Microsecond), json!("long")),
            (DataType::Null, json!("string")),
            (DataType::UInt32, json!("integer")),
            (DataType::UInt64, json!("long")),
            (DataType::Decimal256(40, 2), json!("string")),
            (DataType::Decimal128(12, 2), json!("decimal(12,2)")),
            (
                DataType::Interval(IntervalUnit::MonthDayNano),
                json!("binary"),
            ),
            (
                DataType::Duration(TimeUnit::Microsecond),
                json!("interval day to second"),
            ),
            (
                DataType::Timestamp(TimeUnit::Millisecond, None),
                json!("timestamp_ntz"),
            ),
            (
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                json!("string"),
            ),
            (DataType::FixedSizeBinary(16), json!("binary")),
        ] {
            assert_eq!(spark_type(&arrow).unwrap(), spark, "{arrow}");
        }
        let empty = spark_type(&DataType::Struct(Fields::empty())).unwrap();
        assert_eq!(empty["fields"][0]["name"], EMPTY_STRUCT_FIELD);
        assert!(spark_type(&DataType::Interval(IntervalUnit::YearMonth)).is_err());
    }

    #[test]
    fn arrays_take_sparks_values() {
        let time: ArrayRef = Arc::new(Time32MillisecondArray::from(vec![Some(1000), None]));
        let out = to_spark(&time).unwrap();
        assert_eq!(
            out.as_primitive::<Int32Type>(),
            &Int32Array::from(vec![Some(1000), None])
        );
        let time: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![5]));
        assert_eq!(to_spark(&time).unwrap().data_type(), &DataType::Int64);
        let u: ArrayRef = Arc::new(UInt32Array::from(vec![u32::MAX]));
        assert_eq!(
            to_spark(&u).unwrap().as_primitive::<Int32Type>().value(0),
            -1
        );
        let ms: ArrayRef =
            Arc::new(TimestampMillisecondArray::from(vec![-1, 2]).with_timezone("UTC"));
        let out = to_spark(&ms).unwrap();
        assert_eq!(
            out.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            out.as_primitive::<TimestampMicrosecondType>().values(),
            &[-1000, 2000]
        );
        let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![-1, 1999]));
        let out = to_spark(&ns).unwrap();
        assert_eq!(
            out.as_primitive::<TimestampMicrosecondType>().values(),
            &[-1, 1]
        );
        let d: ArrayRef = Arc::new(IntervalMonthDayNanoArray::from(vec![
            IntervalMonthDayNano::new(1, 2, 3_000_000),
        ]));
        let out = to_spark(&d).unwrap();
        assert_eq!(
            out.as_fixed_size_binary().value(0),
            &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]
        );
        let dict: ArrayRef = Arc::new(
            vec![Some("a"), None, Some("b")]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>(),
        );
        assert!(
            Arc::ptr_eq(&to_spark(&dict).unwrap(), &dict),
            "enums are read in place"
        );
    }

    #[test]
    fn nested_arrays_converted_and_pruned() {
        let mut tags = ListBuilder::new(StringBuilder::new());
        tags.values().append_value("x");
        tags.append(true);
        tags.append(false);
        let tags: ArrayRef = Arc::new(tags.finish());
        let times: ArrayRef = Arc::new(Time32MillisecondArray::from(vec![1, 2]));
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![7, 8]));
        let empty: ArrayRef = Arc::new(StructArray::new_empty_fields(2, None));
        let s: ArrayRef = Arc::new(
            StructArray::try_new(
                Fields::from(vec![
                    Field::new("id", DataType::Int64, true),
                    Field::new("at", times.data_type().clone(), true),
                    Field::new("tags", tags.data_type().clone(), true),
                    Field::new("none", empty.data_type().clone(), true),
                ]),
                vec![ids, times, tags, empty],
                Some(NullBuffer::from(vec![true, false])),
            )
            .unwrap(),
        );
        let out = to_spark(&s).unwrap();
        let st = out.as_struct();
        assert_eq!(st.column(1).data_type(), &DataType::Int32);
        assert_eq!(st.column(3).as_struct().num_columns(), 1);
        assert_eq!(null_count(&out), 1);
        let required = json!({"type": "struct", "fields": [
            {"name": "tags", "type": {"type": "array", "elementType": "string", "containsNull": true}},
            {"name": "id", "type": "long"},
        ]});
        let pruned = prune(&s, &required).unwrap();
        let p = pruned.as_struct();
        assert_eq!(p.column_names(), ["tags", "id"]);
        assert_eq!(
            p.column(1)
                .as_primitive::<arrow_array::types::Int64Type>()
                .value(1),
            8
        );
        assert_eq!(null_count(&pruned), 1, "the struct's own nulls are kept");
    }

    #[test]
    fn spark_shapes_go_back_to_the_types_a_read_gives() {
        let time_field = Arc::new(Field::new(
            "at",
            DataType::Time32(TimeUnit::Millisecond),
            true,
        ));
        let struct_type = DataType::Struct(Fields::from(vec![
            time_field.as_ref().clone(),
            Field::new("n", DataType::UInt32, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())),
                true,
            ),
            Field::new("d", DataType::Interval(IntervalUnit::MonthDayNano), true),
            Field::new("f", DataType::FixedSizeBinary(4), true),
            Field::new(
                "e",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new("empty", DataType::Struct(Fields::empty()), true),
        ]));
        let DataType::Struct(fields) = &struct_type else {
            unreachable!()
        };
        let read: ArrayRef = Arc::new(
            StructArray::try_new(
                fields.clone(),
                vec![
                    Arc::new(Time32MillisecondArray::from(vec![Some(86_399_999), None])),
                    Arc::new(UInt32Array::from(vec![Some(u32::MAX), Some(7)])),
                    Arc::new(
                        TimestampMillisecondArray::from(vec![
                            Some(-1_500),
                            Some(1_700_000_000_123),
                        ])
                        .with_timezone("+00:00"),
                    ),
                    Arc::new(IntervalMonthDayNanoArray::from(vec![
                        Some(IntervalMonthDayNano::new(1, 2, 3_000_000)),
                        None,
                    ])),
                    Arc::new(
                        FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                            vec![Some(b"abcd".to_vec()), None].into_iter(),
                            4,
                        )
                        .unwrap(),
                    ),
                    Arc::new(
                        vec![Some("RED"), None]
                            .into_iter()
                            .collect::<DictionaryArray<Int32Type>>(),
                    ),
                    Arc::new(StructArray::new_empty_fields(2, None)),
                ],
                Some(NullBuffer::from(vec![true, true])),
            )
            .unwrap(),
        );
        let spark = to_spark(&read).unwrap();
        assert_ne!(spark.data_type(), read.data_type());
        let back = from_spark(&spark, &struct_type).unwrap();
        back.to_data().validate_full().unwrap();
        assert_eq!(back.to_data(), read.to_data());
        // Spark's own plain types (an enum as a string, a fixed as binary) go back as well.
        let spark_plain = arrow_cast::cast(
            &spark,
            &DataType::Struct(Fields::from(vec![
                Field::new("at", DataType::Int32, true),
                Field::new("n", DataType::Int32, true),
                Field::new(
                    "ts",
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    true,
                ),
                Field::new("d", DataType::Binary, true),
                Field::new("f", DataType::Binary, true),
                Field::new("e", DataType::Utf8, true),
                Field::new(
                    "empty",
                    DataType::Struct(Fields::from(vec![Field::new(
                        EMPTY_STRUCT_FIELD,
                        DataType::Utf8,
                        true,
                    )])),
                    true,
                ),
            ])),
        )
        .unwrap();
        let back = from_spark(&spark_plain, &struct_type).unwrap();
        assert_eq!(back.to_data(), read.to_data());
    }

    #[test]
    fn values_spark_holds_that_the_read_type_cannot_are_errors() {
        let times: ArrayRef = Arc::new(Int32Array::from(vec![86_400_000]));
        let e = from_spark(&times, &DataType::Time32(TimeUnit::Millisecond)).unwrap_err();
        assert!(e.to_string().contains("not a time of day"), "{e}");
        let bytes: ArrayRef = Arc::new(arrow_array::BinaryArray::from(vec![&b"abc"[..]]));
        let e = from_spark(&bytes, &DataType::FixedSizeBinary(4)).unwrap_err();
        assert!(e.to_string().contains("row 0 is not 4 bytes long"), "{e}");
        let text: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["x"]));
        assert!(from_spark(&text, &DataType::Null).is_err());
    }
}
