//! Typed keys and values written back: a column of the Arrow type a read gives for an Avro
//! schema encoded with that schema through `arrow-avro`'s encoder, each value framed as
//! Confluent's serializers frame it (magic 0, the schema's 4-byte id), so that a consumer with
//! Confluent's deserializer reads what kafkalog writes. Nulls (tombstones) stay null.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_avro::schema::{FingerprintStrategy, SCHEMA_METADATA_KEY};
use arrow_avro::writer::format::AvroSoeFormat;
use arrow_avro::writer::WriterBuilder;
use arrow_schema::{Field, Schema};

use crate::error::{Error, Result};
use crate::values::avro::{native_type, plain, retype, wrapped};
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
    let shaper = crate::values::avro_shape::Shaper::new(&plain(&native));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::avro::AvroDecoder;
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
}
