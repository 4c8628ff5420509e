//! What the Avro decoders share with `arrow-avro` (Apache Arrow's Avro crate): the reader
//! schema's Arrow type as `arrow-avro` maps it (`native_type`, `plain`), arrays retyped
//! to it, and schemas with their references written in (`inlined`) and wrapped in the
//! one-field record `arrow-avro` decodes (`wrapped`). The compiled decoder (`decoder.rs`)
//! and the writer (`encode.rs`) use them; so does `arrow-avro`'s own decoder, the oracle of
//! the tests (`oracle.rs`).
//!
//! `arrow-avro` decodes records only: each schema is wrapped in a one-field record
//! (`kafkalog_payload`), whose binary encoding is the field's own, so a key or value of any
//! Avro type decodes, and the field is the column. Schemas with references have the referenced
//! named types written in where first used, as one self-contained schema.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef};
use arrow_avro::reader::{Decoder, ReaderBuilder};
use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore};
use arrow_schema::DataType;
use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::SchemaText;

/// The fingerprint of the reader schema used as a writer: payloads with no schema id (an
/// explicitly given schema, no framing).
pub(super) const READER_ID: u64 = u64::MAX;

/// The name of the record each schema is wrapped in.
const WRAPPER: &str = "kafkalog_payload";

/// Rows the `arrow-avro` decoder holds before kafkalog flushes it.
const DECODER_ROWS: usize = 1 << 20;

pub(super) fn avro_error(what: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("Avro schema: {what}"))
}

pub(super) fn build(reader: &str, store: &SchemaStore) -> Result<Decoder> {
    ReaderBuilder::new()
        .with_batch_size(DECODER_ROWS)
        .with_reader_schema(AvroSchema::new(reader.to_string()))
        .with_writer_schema_store(store.clone())
        .build_decoder()
        .map_err(avro_error)
}

/// `data_type` without field metadata (the Avro defaults and properties `arrow-avro` notes
/// there differ between writer versions; the column has one type), every field nullable: a
/// null key or value (a tombstone, a bad value) is null in its fields too, which Parquet
/// writers and Spark require of fields declared non-null.
pub(crate) fn plain(data_type: &DataType) -> DataType {
    let field = |f: &arrow_schema::FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(plain(f.data_type()))
                .with_nullable(true)
                .with_metadata(Default::default()),
        )
    };
    match data_type {
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::ListView(f) => DataType::ListView(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        // A map's entries and keys are never null (Arrow's rule); its values may be.
        DataType::Map(f, sorted) => {
            let DataType::Struct(kv) = f.data_type() else {
                return data_type.clone();
            };
            let kv: Vec<arrow_schema::FieldRef> = kv
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let x = field(x);
                    if i == 0 {
                        Arc::new(x.as_ref().clone().with_nullable(false))
                    } else {
                        x
                    }
                })
                .collect();
            let entries = f
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(kv.into()))
                .with_nullable(false)
                .with_metadata(Default::default());
            DataType::Map(Arc::new(entries), *sorted)
        }
        DataType::Union(fields, mode) => DataType::Union(
            arrow_schema::UnionFields::try_new(
                fields.iter().map(|(id, _)| id),
                fields.iter().map(|(_, f)| field(f)),
            )
            .unwrap_or_else(|_| fields.clone()),
            *mode,
        ),
        DataType::Dictionary(k, v) => DataType::Dictionary(k.clone(), Box::new(plain(v))),
        other => other.clone(),
    }
}

/// The Arrow type `arrow-avro` itself gives `schema`, with its field metadata (which its
/// encoder reads: a `uuid` is known by it) and nullability.
pub(crate) fn native_type(schema: &SchemaText) -> Result<DataType> {
    let text = wrapped(schema)?;
    let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id64);
    store
        .set(Fingerprint::Id64(READER_ID), AvroSchema::new(text.clone()))
        .map_err(avro_error)?;
    Ok(build(&text, &store)?.schema().field(0).data_type().clone())
}

/// `array` typed `target`: the same layout, field names and metadata of `target`.
pub(crate) fn retype(array: ArrayRef, target: &DataType) -> Result<ArrayRef> {
    if array.data_type() == target {
        return Ok(array);
    }
    if plain(array.data_type()) != plain(target) {
        return Err(Error::new(
            ErrorKind::Internal,
            format!(
                "Avro decoded {} where the column is {target}",
                array.data_type()
            ),
        ));
    }
    Ok(arrow_array::make_array(retype_data(
        array.to_data(),
        target,
    )))
}

fn retype_data(data: arrow_data::ArrayData, target: &DataType) -> arrow_data::ArrayData {
    let children: Vec<&DataType> = match target {
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type()).collect(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => vec![f.data_type()],
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| f.data_type()).collect(),
        _ => Vec::new(),
    };
    let child_data: Vec<arrow_data::ArrayData> = if children.len() == data.child_data().len() {
        data.child_data()
            .iter()
            .zip(children)
            .map(|(c, t)| retype_data(c.clone(), t))
            .collect()
    } else {
        data.child_data().to_vec()
    };
    let builder = data
        .into_builder()
        .data_type(target.clone())
        .child_data(child_data);
    // SAFETY: the types differ only in field metadata and nullability (`plain` of one is the
    // other): never a layout, so the buffers stay valid for the new type, and a field made
    // nullable accepts any validity.
    unsafe { builder.build_unchecked() }
}

/// `schema` with its references written in and wrapped in the one-field record.
pub(crate) fn wrapped(schema: &SchemaText) -> Result<String> {
    let root = inlined(schema)?;
    let wrapper = serde_json::json!({
        "type": "record",
        "name": WRAPPER,
        "fields": [{"name": "value", "type": root}],
    });
    Ok(wrapper.to_string())
}

/// `schema`'s JSON with its references written in (and `uuid` logical types taken off, see
/// `shape.rs`).
pub(crate) fn inlined(schema: &SchemaText) -> Result<Json> {
    let mut root: Json =
        serde_json::from_str(&schema.schema).map_err(|e| avro_error(format!("not JSON: {e}")))?;
    if !schema.references.is_empty() {
        let mut refs: Vec<(String, Json)> = Vec::new();
        for (name, text) in &schema.references {
            let json: Json = serde_json::from_str(text)
                .map_err(|e| avro_error(format!("reference {name:?} is not JSON: {e}")))?;
            refs.push((name.clone(), json));
        }
        let mut defined = HashSet::new();
        inline(&mut root, "", &mut refs, &mut defined, 0)?;
    }
    crate::values::avro::shape::without_uuids(&mut root);
    Ok(root)
}

/// The full name of a named type's `name` in namespace `ns`.
fn full_name(name: &str, ns: &str) -> String {
    if name.contains('.') || ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}.{name}")
    }
}

/// Writes each referenced schema in where its name is first used in `node` (a schema in
/// namespace `ns`), and records the names defined.
fn inline(
    node: &mut Json,
    ns: &str,
    refs: &mut Vec<(String, Json)>,
    defined: &mut HashSet<String>,
    depth: usize,
) -> Result<()> {
    if depth > 256 {
        return Err(avro_error("nests deeper than 256"));
    }
    match node {
        Json::String(name) => {
            let candidates = [full_name(name, ns), name.clone()];
            if candidates.iter().any(|c| defined.contains(c)) {
                return Ok(());
            }
            if let Some(pos) = refs
                .iter()
                .position(|(r, _)| candidates.iter().any(|c| c == r))
            {
                let (_, mut schema) = refs.remove(pos);
                inline(&mut schema, "", refs, defined, depth + 1)?;
                *node = schema;
            }
        }
        Json::Array(items) => {
            for item in items {
                inline(item, ns, refs, defined, depth + 1)?;
            }
        }
        Json::Object(obj) => {
            let mut inner_ns = ns.to_string();
            if let Some(Json::String(name)) = obj.get("name") {
                if matches!(
                    obj.get("type").and_then(Json::as_str),
                    Some("record" | "enum" | "fixed" | "error")
                ) {
                    if let Some(Json::String(n)) = obj.get("namespace") {
                        inner_ns = n.clone();
                    }
                    let full = full_name(name, &inner_ns);
                    if let Some((space, _)) = full.rsplit_once('.') {
                        inner_ns = space.to_string();
                    }
                    defined.insert(full);
                }
            }
            for key in ["type", "items", "values"] {
                if let Some(child) = obj.get_mut(key) {
                    inline(child, &inner_ns, refs, defined, depth + 1)?;
                }
            }
            if let Some(Json::Array(fields)) = obj.get_mut("fields") {
                for field in fields {
                    if let Some(t) = field.get_mut("type") {
                        inline(t, &inner_ns, refs, defined, depth + 1)?;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}
