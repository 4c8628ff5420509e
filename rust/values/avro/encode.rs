//! Typed keys and values written back: a column of the Arrow type a read gives for an Avro
//! schema encoded with that schema through `arrow-avro`'s encoder, each value framed as
//! Confluent's serializers frame it (magic 0, the schema's 4-byte id), so that a consumer with
//! Confluent's deserializer reads what kafkalog writes. Nulls (tombstones) stay null.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_avro::schema::{
    FingerprintStrategy, AVRO_ENUM_SYMBOLS_METADATA_KEY, SCHEMA_METADATA_KEY,
};
use arrow_avro::writer::format::AvroSoeFormat;
use arrow_avro::writer::WriterBuilder;
use arrow_schema::{DataType, Field, FieldRef, Schema};

use crate::error::{Error, Result};
use crate::values::avro::arrow::{native_type, plain, retype, wrapped};
use crate::values::decoder::{SchemaText, SchemaType};

/// `column` encoded as Avro with `schema` (registered under `id`), one framed value per row.
pub fn encode(column: &ArrayRef, schema: &SchemaText, id: u32) -> Result<ArrayRef> {
    if schema.schema_type != SchemaType::Avro {
        return Err(Error::invalid_argument(format!(
            "kafkalog writes Avro keys and values, not {}",
            schema.schema_type.name()
        )));
    }
    let bad = |e: arrow_avro::errors::AvroError| {
        Error::invalid_argument(format!(
            "the column does not encode with the Avro schema (id {id}): {e}"
        ))
    };
    let present = arrow_select::filter::filter(
        column.as_ref(),
        &arrow_array::BooleanArray::from_iter((0..column.len()).map(|i| Some(column.is_valid(i)))),
    )
    .map_err(|e| Error::invalid_argument(e.to_string()))?;
    // The type the encoder knows the schema's logical types by (a read gives it without
    // field metadata, every field nullable).
    let native = native_type(schema)?;
    // The user's shapes (unions as Spark's structs) back to arrow-avro's.
    let shaper = crate::values::avro::shape::Shaper::new(&plain(&native));
    let present = if shaper.is_identity() {
        present
    } else if present.data_type() != shaper.data_type()
        && plain(present.data_type()) != *shaper.data_type()
    {
        return Err(Error::invalid_argument(format!(
            "the column is {}, not the type a read gives for the Avro schema (id {id}): {}",
            column.data_type(),
            shaper.data_type()
        )));
    } else {
        shaper.to_native(&present)?
    };
    let present = retype(present, &native).map_err(|_| {
        Error::invalid_argument(format!(
            "the column is {}, not the type a read gives for the Avro schema (id {id}): {native}",
            column.data_type()
        ))
    })?;
    // Enums as the encoder takes them: the dictionary's values the schema's symbols, in order.
    let present = symbol_ordered(present, &native)?;
    let metadata = HashMap::from([(SCHEMA_METADATA_KEY.to_string(), wrapped(schema)?)]);
    let arrow_schema = Schema::new_with_metadata(
        vec![Field::new("value", present.data_type().clone(), true)],
        metadata,
    );
    let batch = RecordBatch::try_new(Arc::new(arrow_schema.clone()), vec![present])
        .map_err(|e| Error::invalid_argument(e.to_string()))?;
    let mut encoder = WriterBuilder::new(arrow_schema)
        .with_fingerprint_strategy(FingerprintStrategy::Id(id))
        .build_encoder::<AvroSoeFormat>()
        .map_err(bad)?;
    encoder.encode(&batch).map_err(bad)?;
    let rows = encoder.flush();
    let mut out = BinaryBuilder::with_capacity(column.len(), rows.bytes().len());
    let mut next = 0;
    for i in 0..column.len() {
        if column.is_null(i) {
            out.append_null();
        } else {
            out.append_value(rows.row(next).map_err(bad)?);
            next += 1;
        }
    }
    Ok(Arc::new(out.finish()))
}

/// `array` (of the schema's type `t`) with each Avro enum's dictionary made of its schema's
/// symbols in their order (the dictionary a read gives; arrow-avro's encoder takes no other):
/// an enum column built otherwise (Spark's strings cast to a dictionary, a dictionary of the
/// values met) is laid out again; a value that is not a symbol is an error naming it.
fn symbol_ordered(array: ArrayRef, t: &DataType) -> Result<ArrayRef> {
    use arrow_array::cast::AsArray;
    if !has_enum(t) {
        return Ok(array);
    }
    let child = |array: &ArrayRef, f: &FieldRef| -> Result<ArrayRef> {
        match f.metadata().get(AVRO_ENUM_SYMBOLS_METADATA_KEY) {
            Some(symbols) => enum_ordered(array, symbols, f.name()),
            None => symbol_ordered(array.clone(), f.data_type()),
        }
    };
    let children = match (t, array.data_type()) {
        (DataType::Struct(fields), DataType::Struct(_)) => {
            let s = array.as_struct();
            if s.num_columns() != fields.len() {
                return Ok(array);
            }
            s.columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| child(c, f))
                .collect::<Result<Vec<_>>>()?
        }
        (DataType::List(f), DataType::List(_)) => vec![child(array.as_list::<i32>().values(), f)?],
        (DataType::Map(f, _), DataType::Map(..)) => {
            let entries: ArrayRef = Arc::new(array.as_map().entries().clone());
            vec![symbol_ordered(entries, f.data_type())?]
        }
        _ => return Ok(array),
    };
    // The same array with its children replaced (only a dictionary's values changed).
    let data = array
        .to_data()
        .into_builder()
        .child_data(children.iter().map(|c| c.to_data()).collect())
        .build()
        .map_err(|e| Error::invalid_argument(e.to_string()))?;
    Ok(arrow_array::make_array(data))
}

/// Whether an Avro enum is anywhere in `t` (a field with its symbols).
fn has_enum(t: &DataType) -> bool {
    let field = |f: &FieldRef| {
        f.metadata().contains_key(AVRO_ENUM_SYMBOLS_METADATA_KEY) || has_enum(f.data_type())
    };
    match t {
        DataType::Struct(fields) => fields.iter().any(field),
        DataType::List(f) | DataType::Map(f, _) => field(f),
        _ => false,
    }
}

/// The enum column `array` (a dictionary or strings) as a dictionary of `symbols` (their JSON
/// list, as arrow-avro keeps them in a field's metadata) in order.
fn enum_ordered(array: &ArrayRef, symbols: &str, name: &str) -> Result<ArrayRef> {
    use arrow_array::cast::AsArray;
    use arrow_array::{DictionaryArray, Int32Array, StringArray};
    let symbols: Vec<String> = serde_json::from_str(symbols)
        .map_err(|e| Error::invalid_argument(format!("enum {name}: its symbols: {e}")))?;
    let strings = arrow_cast::cast(array, &DataType::Utf8)
        .map_err(|e| Error::invalid_argument(format!("enum {name}: {e}")))?;
    let strings = strings.as_string::<i32>();
    let index: HashMap<&str, i32> = symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i as i32))
        .collect();
    let keys = strings
        .iter()
        .map(|v| match v {
            None => Ok(None),
            Some(v) => index.get(v).copied().map(Some).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "enum {name}: {v:?} is not one of its symbols {symbols:?}"
                ))
            }),
        })
        .collect::<Result<Int32Array>>()?;
    let values: ArrayRef = Arc::new(StringArray::from(symbols.clone()));
    let out = DictionaryArray::try_new(keys, values)
        .map_err(|e| Error::invalid_argument(e.to_string()))?;
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::avro::oracle::AvroDecoder;
    use crate::values::decoder::{Payload, PayloadDecoder, WriterSchemas};

    struct One(Arc<SchemaText>);
    impl WriterSchemas for One {
        fn writer(&self, _: i64) -> Option<Arc<SchemaText>> {
            Some(self.0.clone())
        }
    }

    #[test]
    fn round_trips_through_the_decoder() {
        let text = SchemaText {
            schema_type: SchemaType::Avro,
            schema: r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},
                {"name":"s","type":["null","string"]}]}"#
                .into(),
            references: vec![],
        };
        let d = AvroDecoder::new(&text, Arc::new(One(Arc::new(text.clone())))).unwrap();
        let bytes = [vec![2u8, 0], vec![4u8, 2, 2, b'x']];
        let payloads: Vec<_> = bytes
            .iter()
            .map(|b| {
                Some(Payload {
                    bytes: b,
                    schema_id: Some(7),
                    message_indexes: &[],
                })
            })
            .chain([None])
            .collect();
        let decoded = d.decode(&payloads).unwrap().array;
        let encoded = encode(&decoded, &text, 7).unwrap();
        let encoded = encoded
            .as_any()
            .downcast_ref::<arrow_array::BinaryArray>()
            .unwrap();
        assert_eq!(encoded.value(0), &[0, 0, 0, 0, 7, 2, 0]);
        assert_eq!(encoded.value(1), &[0, 0, 0, 0, 7, 4, 2, 2, b'x']);
        assert!(encoded.is_null(2));
    }

    #[test]
    fn enums_are_encoded_by_symbol_whatever_the_dictionary() {
        let text = SchemaText {
            schema_type: SchemaType::Avro,
            schema: r#"{"type":"record","name":"R","fields":[{"name":"e","type":
                {"type":"enum","name":"S","symbols":["NEW","PAID","DONE"]}},
                {"name":"es","type":{"type":"array","items":"S"}}]}"#
                .into(),
            references: vec![],
        };
        // Dictionaries of the values met (DONE first), as a cast of Spark's strings makes them.
        let e: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
            vec!["DONE", "NEW"].into_iter().collect();
        let items: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
            vec!["PAID", "DONE", "PAID"].into_iter().collect();
        let es = arrow_array::ListArray::try_new(
            Arc::new(Field::new("item", items.data_type().clone(), true)),
            arrow_buffer::OffsetBuffer::new(vec![0, 2, 3].into()),
            Arc::new(items),
            None,
        )
        .unwrap();
        let fields = vec![
            Field::new("e", e.data_type().clone(), true),
            Field::new("es", es.data_type().clone(), true),
        ];
        let column: ArrayRef = Arc::new(
            arrow_array::StructArray::try_new(fields.into(), vec![Arc::new(e), Arc::new(es)], None)
                .unwrap(),
        );
        let encoded = encode(&column, &text, 7).unwrap();
        let encoded = encoded
            .as_any()
            .downcast_ref::<arrow_array::BinaryArray>()
            .unwrap();
        // DONE is symbol 2 (zigzag 4), NEW 0; the arrays PAID, DONE and PAID.
        assert_eq!(encoded.value(0), &[0, 0, 0, 0, 7, 4, 4, 2, 4, 0]);
        assert_eq!(encoded.value(1), &[0, 0, 0, 0, 7, 0, 2, 2, 0]);
        // A value that is no symbol is an error naming it.
        let bad: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
            vec!["LOST"].into_iter().collect();
        let empty = arrow_array::ListArray::new_null(
            Arc::new(Field::new("item", bad.data_type().clone(), true)),
            1,
        );
        let column: ArrayRef = Arc::new(
            arrow_array::StructArray::try_new(
                vec![
                    Field::new("e", bad.data_type().clone(), true),
                    Field::new("es", empty.data_type().clone(), true),
                ]
                .into(),
                vec![Arc::new(bad), Arc::new(empty)],
                None,
            )
            .unwrap(),
        );
        let e = encode(&column, &text, 7).unwrap_err();
        assert!(
            e.to_string().contains("\"LOST\" is not one of its symbols"),
            "{e}"
        );
    }
}
