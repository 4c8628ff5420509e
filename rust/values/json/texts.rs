//! Typed keys and values as JSON text: the one mapping from the Arrow types a typed read gives
//! (docs/values.md) to JSON, for the command line's JSON lines (`convert ... out.jsonl`) and
//! printed records (`dump --value-decoder`, `--format json`). Arrow's own JSON writer
//! (`arrow-json`) encodes, with these choices:
//!
//! - records and structs as objects, every field present (`null` when null); maps as objects
//!   (keys that are not text, as Protobuf's integer keys, written as text, as Protobuf's JSON
//!   mapping does); arrays as arrays; an enum as its symbol;
//! - timestamps in ISO-8601 (`2024-06-10T05:13:20.778Z`; a local timestamp without the `Z`),
//!   dates (`2024-06-10`), times of day (`05:13:20.778`); a `duration` as an ISO-8601
//!   duration (`P1M2DT0.003S`);
//! - decimals as JSON numbers with exactly their digits (`12.30`), never through a float;
//! - `bytes` and `fixed` as Avro's JSON encoding writes them, which is also what Confluent's
//!   console consumer prints (`AvroSchemaUtils.toJson`, Avro's `JsonEncoder`): a string of the
//!   code points U+0000 to U+00FF, one per byte (`"\u009c\u00bc\u00ef0"`), so that Avro's JSON
//!   decoder reads the bytes back;
//! - floats that are not finite (NaN, infinities) as `null`, which JSON has no other way to say.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::IntervalMonthDayNanoType;
use arrow_array::{Array, ArrayRef};
use arrow_json::writer::{make_encoder, Encoder, EncoderFactory, EncoderOptions, NullableEncoder};
use arrow_json::StructMode;
use arrow_schema::{ArrowError, DataType, Field, FieldRef};

use crate::error::{Error, ErrorKind, Result};

/// Each value of `array` as JSON text (`None` where the value is null).
pub fn json_texts(array: &ArrayRef) -> Result<Vec<Option<String>>> {
    let array = json_ready(array)?;
    let field: FieldRef = Arc::new(Field::new("v", array.data_type().clone(), true));
    let options = EncoderOptions::default()
        .with_explicit_nulls(true)
        .with_struct_mode(StructMode::ObjectOnly)
        .with_encoder_factory(Arc::new(Factory));
    let mut encoder = make_encoder(&field, array.as_ref(), &options).map_err(internal)?;
    let mut out = Vec::with_capacity(array.len());
    let mut buf = Vec::new();
    for i in 0..array.len() {
        if array.is_null(i) {
            out.push(None);
            continue;
        }
        buf.clear();
        encoder.encode(i, &mut buf);
        out.push(Some(
            String::from_utf8(buf.clone()).map_err(|e| internal(e.to_string()))?,
        ));
    }
    Ok(out)
}

fn internal(e: impl ToString) -> Error {
    Error::new(
        ErrorKind::Internal,
        format!("a typed value as JSON: {}", e.to_string()),
    )
}

/// `array` cast for JSON where it needs it: every map whose keys are not text to one with
/// text keys (JSON object keys are strings), every timestamp with a time zone to `+00:00`
/// (the same instants, written in UTC: Arrow formats a named zone only with a time zone
/// database, which kafkalog does not build in).
fn json_ready(array: &ArrayRef) -> Result<ArrayRef> {
    let target = json_type(array.data_type());
    if &target == array.data_type() {
        return Ok(array.clone());
    }
    arrow_cast::cast(array, &target).map_err(internal)
}

fn json_type(data_type: &DataType) -> DataType {
    let field =
        |f: &FieldRef| Arc::new(f.as_ref().clone().with_data_type(json_type(f.data_type())));
    match data_type {
        DataType::Timestamp(unit, Some(_)) => DataType::Timestamp(*unit, Some("+00:00".into())),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return data_type.clone();
            };
            let kv: Vec<FieldRef> = kv
                .iter()
                .enumerate()
                .map(|(i, f)| match f.data_type() {
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View if i == 0 => {
                        f.clone()
                    }
                    _ if i == 0 => Arc::new(f.as_ref().clone().with_data_type(DataType::Utf8)),
                    _ => field(f),
                })
                .collect();
            DataType::Map(
                Arc::new(
                    entries
                        .as_ref()
                        .clone()
                        .with_data_type(DataType::Struct(kv.into())),
                ),
                *sorted,
            )
        }
        other => other.clone(),
    }
}

/// The encoders that differ from `arrow-json`'s: bytes as Avro's JSON encoding, durations in
/// ISO-8601.
#[derive(Debug)]
struct Factory;

impl EncoderFactory for Factory {
    fn make_default_encoder<'a>(
        &self,
        _field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> std::result::Result<Option<NullableEncoder<'a>>, ArrowError> {
        let nulls = array.nulls().cloned();
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Binary => Box::new(Latin1(array.as_binary::<i32>())),
            DataType::LargeBinary => Box::new(Latin1(array.as_binary::<i64>())),
            DataType::BinaryView => Box::new(Latin1(array.as_binary_view())),
            DataType::FixedSizeBinary(_) => Box::new(Latin1(array.as_fixed_size_binary())),
            DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano) => {
                Box::new(Duration(array.as_primitive::<IntervalMonthDayNanoType>()))
            }
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, nulls)))
    }
}

/// Bytes as a string of the code points U+0000 to U+00FF (Avro's JSON encoding of `bytes`
/// and `fixed`).
struct Latin1<A>(A);

impl<'a, A: arrow_array::ArrayAccessor<Item = &'a [u8]>> Encoder for Latin1<A> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let text: String = self.0.value(idx).iter().map(|&b| b as char).collect();
        out.extend_from_slice(serde_json::Value::String(text).to_string().as_bytes());
    }
}

/// An interval of months, days and nanoseconds as an ISO-8601 duration.
struct Duration<'a>(&'a arrow_array::PrimitiveArray<IntervalMonthDayNanoType>);

impl Encoder for Duration<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let v = self.0.value(idx);
        let mut text = format!("\"P{}M{}D", v.months, v.days);
        if v.nanoseconds != 0 {
            let sign = if v.nanoseconds < 0 { "-" } else { "" };
            let n = v.nanoseconds.unsigned_abs();
            let (secs, frac) = (n / 1_000_000_000, n % 1_000_000_000);
            let frac = format!("{frac:09}");
            let frac = frac.trim_end_matches('0');
            text.push_str(&format!("T{sign}{secs}"));
            if !frac.is_empty() {
                text.push('.');
                text.push_str(frac);
            }
            text.push('S');
        }
        text.push('"');
        out.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int32Builder, Int64Builder, MapBuilder, StringBuilder};
    use arrow_array::types::IntervalMonthDayNano;
    use arrow_array::{
        BinaryArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float64Array,
        IntervalMonthDayNanoArray, StructArray, Time32MillisecondArray, TimestampMicrosecondArray,
        TimestampMillisecondArray,
    };

    fn texts(array: ArrayRef) -> Vec<Option<String>> {
        json_texts(&array).unwrap()
    }

    fn one(array: ArrayRef) -> String {
        texts(array).remove(0).unwrap()
    }

    #[test]
    fn scalars() {
        let ts = TimestampMillisecondArray::from(vec![1_718_000_000_778]).with_timezone("+00:00");
        assert_eq!(one(Arc::new(ts)), r#""2024-06-10T06:13:20.778Z""#);
        let ts = TimestampMillisecondArray::from(vec![1_718_000_000_778]).with_timezone("UTC");
        assert_eq!(one(Arc::new(ts)), r#""2024-06-10T06:13:20.778Z""#);
        let local = TimestampMicrosecondArray::from(vec![1_718_000_000_000_001]);
        assert_eq!(one(Arc::new(local)), r#""2024-06-10T06:13:20.000001""#);
        assert_eq!(
            one(Arc::new(Date32Array::from(vec![19_884]))),
            r#""2024-06-10""#
        );
        assert_eq!(
            one(Arc::new(Time32MillisecondArray::from(vec![19_200_778]))),
            r#""05:20:00.778""#
        );
        let dec = Decimal128Array::from(vec![1230, -5])
            .with_precision_and_scale(10, 2)
            .unwrap();
        assert_eq!(
            texts(Arc::new(dec)),
            [Some("12.30".into()), Some("-0.05".into())]
        );
        let bytes = BinaryArray::from(vec![Some(&[0x9c, 0xbc, 0xef, 0x30, 0x00, 0x22][..]), None]);
        assert_eq!(
            texts(Arc::new(bytes)),
            [Some("\"\u{9c}\u{bc}\u{ef}0\\u0000\\\"\"".into()), None]
        );
        let fixed =
            FixedSizeBinaryArray::try_from_iter(vec![vec![0xffu8, 0x41]].into_iter()).unwrap();
        assert_eq!(one(Arc::new(fixed)), "\"\u{ff}A\"");
        assert_eq!(
            texts(Arc::new(Float64Array::from(vec![1.5, f64::NAN]))),
            [Some("1.5".into()), Some("null".into())]
        );
        let d = IntervalMonthDayNanoArray::from(vec![
            IntervalMonthDayNano::new(1, 2, 3_000_000),
            IntervalMonthDayNano::new(0, 0, 0),
        ]);
        assert_eq!(
            texts(Arc::new(d)),
            [Some("\"P1M2DT0.003S\"".into()), Some("\"P0M0D\"".into())]
        );
    }

    #[test]
    fn records_and_maps_are_objects() {
        let mut map = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        map.keys().append_value("channel");
        map.values().append_value(7);
        map.append(true).unwrap();
        let map = Arc::new(map.finish()) as ArrayRef;
        let note: ArrayRef = Arc::new(arrow_array::StringArray::from(vec![None::<&str>]));
        let record = StructArray::from(vec![
            (
                Arc::new(Field::new("attrs", map.data_type().clone(), true)),
                map,
            ),
            (Arc::new(Field::new("note", DataType::Utf8, true)), note),
        ]);
        assert_eq!(
            one(Arc::new(record)),
            r#"{"attrs":{"channel":7},"note":null}"#
        );
        // Integer keys (Protobuf's maps) as text.
        let mut map = MapBuilder::new(None, Int32Builder::new(), StringBuilder::new());
        map.keys().append_value(3);
        map.values().append_value("x");
        map.append(true).unwrap();
        assert_eq!(one(Arc::new(map.finish())), r#"{"3":"x"}"#);
    }
}
