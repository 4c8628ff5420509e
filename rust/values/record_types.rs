//! Topics whose keys or values are of several record types (Confluent's
//! `RecordNameStrategy`, subject = the record's full name; `TopicRecordNameStrategy`, subject
//! = `<topic>-<full name>`), read in one column that keeps every type: a struct with one
//! nullable field per record type, named by the type's full name, exactly one of them set in a
//! row that decoded. Each type is read with the latest version of its own subject (every
//! version of that subject resolving to it, as for one subject); a record is routed to the
//! subject its writer schema's id was registered under, and one of none of them is a bad
//! value.
//!
//! The subjects are named (`value_subjects`), or found: when the topic has no
//! `<topic>-value` (`<topic>-key`) subject, its `<topic>-<full name>` subjects whose latest
//! schema is an Avro named type of exactly that full name. Avro only.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{ArrayRef, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};
use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{Decoded, Payload, PayloadDecoder, SchemaType, WriterSchemas};
use crate::values::registry::Registry;

/// The subjects of one side to read as several record types: `named` if given; else, with no
/// subject, version or schema named and no `<topic>-<side>` subject in the registry, the
/// topic's `<topic>-<full name>` subjects (sorted). `None`: one subject, as usual.
pub fn subjects(
    side_name: &str,
    named: &[String],
    one_named: bool,
    registry: Option<&Registry>,
    topic: Option<&str>,
) -> Result<Option<Vec<String>>> {
    if !named.is_empty() {
        if one_named {
            return Err(Error::invalid_argument(format!(
                "{side_name}_subjects (several record types) and a {side_name} subject, \
                 version or schema are exclusive"
            )));
        }
        return Ok(Some(named.to_vec()));
    }
    let (Some(registry), Some(topic), false) = (registry, topic, one_named) else {
        return Ok(None);
    };
    if registry.latest(&format!("{topic}-{side_name}")).is_some() {
        return Ok(None);
    }
    let prefix = format!("{topic}-");
    let found: Vec<String> = registry
        .subjects()
        .into_iter()
        .filter(|s| {
            let Some(name) = s.strip_prefix(&prefix) else {
                return false;
            };
            registry.latest(s).is_some_and(|r| {
                r.schema_type == SchemaType::Avro
                    && serde_json::from_str::<Json>(&r.schema)
                        .ok()
                        .and_then(|j| full_name(&j))
                        .as_deref()
                        == Some(name)
            })
        })
        .map(str::to_string)
        .collect();
    Ok((!found.is_empty()).then_some(found))
}

/// The full name of an Avro schema that is a named type (record, enum, fixed).
fn full_name(schema: &Json) -> Option<String> {
    let obj = schema.as_object()?;
    if !matches!(
        obj.get("type").and_then(Json::as_str),
        Some("record" | "error" | "enum" | "fixed")
    ) {
        return None;
    }
    let name = obj.get("name")?.as_str()?;
    match obj.get("namespace").and_then(Json::as_str) {
        Some(ns) if !ns.is_empty() && !name.contains('.') => Some(format!("{ns}.{name}")),
        _ => Some(name.to_string()),
    }
}

/// The decoder of several record types into one struct column.
pub struct SeveralTypes {
    /// One decoder per record type.
    parts: Vec<Arc<dyn PayloadDecoder>>,
    /// Writer id to part.
    route: HashMap<i64, usize>,
    subjects: Vec<String>,
    data_type: DataType,
}

/// The decoder of `subjects` (each read with its latest version) for the `side_name` column.
pub fn decoder(
    side_name: &str,
    subjects: &[String],
    registry: &Registry,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    let mut parts = Vec::new();
    let mut fields: Vec<Field> = Vec::new();
    let mut route = HashMap::new();
    for subject in subjects {
        let latest = registry.latest(subject).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{side_name} subject {subject:?} is not in the registry (subjects: {})",
                registry.subjects().join(", ")
            ))
        })?;
        if latest.schema_type != SchemaType::Avro {
            return Err(Error::invalid_argument(format!(
                "{side_name} subject {subject:?} is {}: several record types in one column \
                 are read for Avro subjects only",
                latest.schema_type.name()
            )));
        }
        let text = registry.text(latest)?;
        let json: Json = serde_json::from_str(&text.schema)
            .map_err(|e| Error::invalid_argument(format!("subject {subject:?}: {e}")))?;
        let name = full_name(&json).unwrap_or_else(|| subject.clone());
        if fields.iter().any(|f| f.name() == &name) {
            return Err(Error::invalid_argument(format!(
                "{side_name} subjects {} hold the same record type {name}: name one of them",
                subjects.join(", ")
            )));
        }
        let decoder = crate::values::avro::decoder::decoder(&text, writers.clone())?;
        fields.push(Field::new(name, decoder.data_type().clone(), true));
        let ids: HashSet<i64> = registry
            .rows()
            .filter(|r| &r.subject == subject)
            .map(|r| r.id)
            .collect();
        for &id in &ids {
            route.entry(id).or_insert(parts.len());
        }
        parts.push(decoder);
    }
    Ok(Arc::new(SeveralTypes {
        parts,
        route,
        subjects: subjects.to_vec(),
        data_type: DataType::Struct(Fields::from(fields)),
    }))
}

impl PayloadDecoder for SeveralTypes {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let n = payloads.len();
        let mut errors: Vec<Option<String>> = vec![None; n];
        let mut owner: Vec<Option<usize>> = vec![None; n];
        for (i, p) in payloads.iter().enumerate() {
            let Some(p) = p else { continue };
            match p.schema_id.and_then(|id| self.route.get(&id)) {
                Some(&k) => owner[i] = Some(k),
                None => {
                    errors[i] = Some(match p.schema_id {
                        Some(id) => format!(
                            "schema id {id} is not a version of the subjects read ({})",
                            self.subjects.join(", ")
                        ),
                        None => "no schema id: the record type is unknown".to_string(),
                    })
                }
            }
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.parts.len());
        for (k, part) in self.parts.iter().enumerate() {
            let mine: Vec<Option<Payload<'_>>> = payloads
                .iter()
                .zip(&owner)
                .map(|(p, o)| if *o == Some(k) { *p } else { None })
                .collect();
            let decoded = part.decode(&mine)?;
            for (i, e) in decoded.errors.into_iter().enumerate() {
                if e.is_some() && owner[i] == Some(k) {
                    errors[i] = e;
                }
            }
            columns.push(decoded.array);
        }
        let valid: NullBuffer = (0..n)
            .map(|i| owner[i].is_some() && errors[i].is_none())
            .collect();
        let DataType::Struct(fields) = &self.data_type else {
            return Err(Error::new(ErrorKind::Internal, "not a struct"));
        };
        let array = StructArray::try_new(fields.clone(), columns, Some(valid))
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        Ok(Decoded {
            array: Arc::new(array),
            errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::decoder::SchemaText;
    use crate::values::registry::RegistrySchemas;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::Array;

    fn avro(s: &str) -> SchemaText {
        SchemaText::new(SchemaType::Avro, s)
    }

    const A1: &str = r#"{"type":"record","name":"A","namespace":"shop","fields":[
        {"name":"a","type":"long"}]}"#;
    const A2: &str = r#"{"type":"record","name":"A","namespace":"shop","fields":[
        {"name":"a","type":"long"},{"name":"z","type":"string","default":"-"}]}"#;
    const B: &str = r#"{"type":"record","name":"shop.B","fields":[{"name":"b","type":"string"}]}"#;

    fn registry() -> Registry {
        let mut r = Registry::new();
        r.add(1, "t-shop.A", avro(A1));
        r.add(2, "t-shop.A", avro(A2));
        r.add(3, "t-shop.B", avro(B));
        // Not a record type named by its subject's suffix: not found.
        r.add(4, "t-shop.C", avro(B));
        r.add(5, "u-value", avro(r#""string""#));
        r
    }

    #[test]
    fn finds_the_topics_record_subjects() {
        let r = registry();
        let found = subjects("value", &[], false, Some(&r), Some("t")).unwrap();
        assert_eq!(found, Some(vec!["t-shop.A".into(), "t-shop.B".into()]));
        // A topic with its <topic>-value subject, or a subject named: one schema.
        assert_eq!(
            subjects("value", &[], false, Some(&r), Some("u")).unwrap(),
            None
        );
        assert_eq!(
            subjects("value", &[], true, Some(&r), Some("t")).unwrap(),
            None
        );
        let named = vec!["t-shop.B".to_string()];
        assert_eq!(
            subjects("value", &named, false, Some(&r), None).unwrap(),
            Some(named.clone())
        );
        assert!(subjects("value", &named, true, Some(&r), None).is_err());
    }

    #[test]
    fn one_field_per_record_type() {
        let r = Arc::new(registry());
        let writers = Arc::new(RegistrySchemas::new(r.clone()));
        let subjects = vec!["t-shop.A".to_string(), "t-shop.B".to_string()];
        let d = decoder("value", &subjects, &r, writers).unwrap();
        let DataType::Struct(fields) = d.data_type() else {
            panic!("{}", d.data_type())
        };
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["shop.A", "shop.B"]);
        let a1 = [14u8]; // a = 7
        let a2 = [2u8, 2, b'y']; // a = 1, z = "y"
        let b = [4u8, b'h', b'i'];
        let p = |bytes: &'static [u8], id: i64| {
            Some(Payload {
                bytes,
                schema_id: Some(id),
                message_indexes: &[],
            })
        };
        let a1: &'static [u8] = a1.to_vec().leak();
        let a2: &'static [u8] = a2.to_vec().leak();
        let b: &'static [u8] = b.to_vec().leak();
        let out = d
            .decode(&[p(a1, 1), p(b, 3), None, p(b, 5), p(a2, 2), p(a2, 3)])
            .unwrap();
        let s = out.array.as_struct();
        let valid: Vec<bool> = (0..6).map(|i| s.is_valid(i)).collect();
        assert_eq!(valid, [true, true, false, false, true, false]);
        let a = s.column(0).as_struct();
        let bs = s.column(1).as_struct();
        assert_eq!(a.column(0).as_primitive::<Int64Type>().value(0), 7);
        assert_eq!(a.column(1).as_string::<i32>().value(0), "-");
        assert_eq!(a.column(1).as_string::<i32>().value(4), "y");
        assert!(a.is_null(1) && bs.is_null(0) && bs.is_valid(1));
        assert_eq!(bs.column(0).as_string::<i32>().value(1), "hi");
        assert!(out.errors[3]
            .as_deref()
            .unwrap()
            .contains("not a version of the subjects read"));
        // Written as B, bytes not a B: a bad value of its own type.
        assert!(out.errors[5].is_some());
        assert!(out.errors[0].is_none() && out.errors[2].is_none());
    }
}
