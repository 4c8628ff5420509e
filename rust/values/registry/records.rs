//! Schema Registry's storage topic written rather than read: the records the registry's
//! `KafkaStore` produces to `_schemas` when it registers schemas (for tests, for a backup whose
//! registry is to be rebuilt, for sample data), and the registry exported as the requests its
//! REST API imports. [`crate::values::registry`] folds such records back.
//!
//! Registering follows `KafkaSchemaRegistry.register` (Confluent schema-registry, `core/`):
//!
//! - a subject's next version is one more than its highest, soft-deleted ones included, from 1;
//!   a version may be given (as the registry's `IMPORT` mode takes one) if the subject does not
//!   hold it yet;
//! - a schema already registered in the subject (same type, text and references, not deleted)
//!   is not registered again: the registry answers with the version it has, and writes nothing;
//! - an id: the one the same schema already has in the subject's context (ids belong to
//!   schemas, not to subjects), else one more than the context's highest, from 1; an id may be
//!   given, unless a different schema of the context has it;
//! - references must name versions registered before (version -1: the subject's latest);
//! - a soft-deleted version of the same id below the new one is tombstoned;
//! - the schema must compile (Avro, Protobuf, JSON Schema), as the registry parses it.
//!
//! Records, as its `SchemaRegistrySerializer` (Jackson) writes them: the key
//! `{"keytype":"SCHEMA","subject":...,"version":...,"magic":1}`; the value
//! `{"subject","version","id","schemaType" (left out for Avro),"references" (left out when
//! empty),"schema","deleted"}`, in that order; a soft delete writes the value again with
//! `"deleted":true`. `NOOP`, `CONFIG`, `MODE` and `CONTEXT` records, which no schema lookup
//! needs, are not written.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::values::decoder::{SchemaText, SchemaType};
use crate::values::formats::{decoder, Format};
use crate::values::registry::{context_of, Reference, Registered, Registry};

/// A schema to register under a subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSchema {
    /// The subject (qualified `:.ctx:name` outside the default context).
    pub subject: String,
    /// The version to register it as (`None`: the subject's next).
    pub version: Option<i32>,
    /// The id to register it under (`None`: the schema's id in its context, or a new one).
    pub id: Option<i64>,
    /// The language.
    pub schema_type: SchemaType,
    /// The schema text.
    pub schema: String,
    /// The schemas it references.
    pub references: Vec<Reference>,
    /// Soft-deleted once registered.
    pub deleted: bool,
}

/// A record of the storage topic: its key, and its value (`None`: a tombstone).
pub type StorageRecord = (Vec<u8>, Option<Vec<u8>>);

/// Registers `schemas` in order into an empty registry, as Schema Registry does; returns the
/// registry they make and the records of its storage topic, in the order it writes them.
pub fn register(schemas: Vec<NewSchema>) -> Result<(Registry, Vec<StorageRecord>)> {
    let mut registry = Registry::new();
    let mut records = Vec::new();
    for new in schemas {
        let what = format!("subject {:?}", new.subject);
        register_one(&mut registry, &mut records, new)
            .map_err(|e| Error::invalid_argument(format!("{what}: {}", e.message)))?;
    }
    Ok((registry, records))
}

fn register_one(
    registry: &mut Registry,
    records: &mut Vec<StorageRecord>,
    new: NewSchema,
) -> Result<()> {
    check_subject(&new.subject)?;
    let context = context_of(&new.subject).0.to_string();
    let same = |r: &Registered| {
        r.schema_type == new.schema_type
            && r.schema == new.schema
            && r.references == new.references
            && r.context() == context
    };
    let versions: Vec<&Registered> = registry
        .versions()
        .filter(|r| r.subject == new.subject)
        .collect();
    let known = |r: &&Registered| !r.deleted && same(r) && new.id.is_none_or(|id| id == r.id);
    if new.version.is_none() && versions.iter().any(known) {
        return Ok(()); // the registry answers with the version it has, and writes nothing
    }
    let version = match new.version {
        Some(v) if v < 1 => {
            return Err(Error::invalid_argument(format!(
                "version {v} is not 1 or more"
            )))
        }
        Some(v) if versions.iter().any(|r| r.version == v) => {
            return Err(Error::invalid_argument(format!(
                "version {v} is registered already"
            )))
        }
        Some(v) => v,
        None => versions.iter().map(|r| r.version + 1).max().unwrap_or(1),
    };
    let in_context = || registry.rows().filter(|r| r.context() == context);
    let id = match new.id {
        Some(id) if id < 0 || id > i32::MAX as i64 => {
            return Err(Error::invalid_argument(format!(
                "id {id} is not 0 to {} (the framing's four bytes)",
                i32::MAX
            )))
        }
        Some(id) => {
            if let Some(other) = in_context().find(|r| r.id == id && !same(r)) {
                return Err(Error::invalid_argument(format!(
                    "id {id} is another schema's ({:?} version {}): the registry does not \
                     give one id to two schemas",
                    other.subject, other.version
                )));
            }
            id
        }
        None => match in_context().find(|r| same(r)) {
            Some(r) => r.id,
            None => in_context().map(|r| r.id + 1).max().unwrap_or(1),
        },
    };
    let registered = Registered {
        subject: new.subject.clone(),
        version,
        id,
        schema_type: new.schema_type,
        schema: new.schema,
        references: new.references,
        deleted: false,
        md5: None,
        offset: -1,
    };
    // References resolve, and the schema compiles with them, as the registry parses it.
    let mut with_it = registry.clone();
    with_it.insert(registered.clone());
    let text = with_it.text(&registered)?;
    compile(&text)?;
    // A soft-deleted version of the same id below this one is tombstoned.
    let tombstoned: Vec<i32> = versions
        .iter()
        .filter(|r| r.deleted && r.id == id && r.version < version)
        .map(|r| r.version)
        .collect();
    let mut fold = |key: Vec<u8>, value: Option<Vec<u8>>| {
        let offset = records.len() as i64;
        registry.feed_record(Some(&key), value.as_deref(), offset);
        records.push((key, value));
    };
    for v in tombstoned {
        fold(schema_key(&registered.subject, v), None);
    }
    fold(
        schema_key(&registered.subject, version),
        Some(schema_value(&registered, false)),
    );
    if new.deleted {
        fold(
            schema_key(&registered.subject, version),
            Some(schema_value(&registered, true)),
        );
    }
    Ok(())
}

/// The registry's rule for subject names (`QualifiedSubject.isValidSubject`): not empty, no
/// control characters; a context prefix `:.ctx:` names a context.
fn check_subject(subject: &str) -> Result<()> {
    if subject.trim().is_empty() {
        return Err(Error::invalid_argument("a subject name is not empty"));
    }
    if subject.chars().any(char::is_control) {
        return Err(Error::invalid_argument(
            "a subject name has no control characters",
        ));
    }
    Ok(())
}

/// Compiles `text` as a read would (the one dispatch to a format's decoder).
fn compile(text: &SchemaText) -> Result<()> {
    let writers: Arc<HashMap<i64, Arc<SchemaText>>> = Arc::new(HashMap::new());
    decoder(Format::Auto, text, None, writers)
        .map(|_| ())
        .map_err(|e| {
            Error::invalid_argument(format!(
                "the {} schema does not compile: {}",
                text.schema_type.name(),
                e.message
            ))
        })
}

/// A `SCHEMA` key as Schema Registry writes it (`SchemaKey`, magic 1).
pub fn schema_key(subject: &str, version: i32) -> Vec<u8> {
    format!(
        r#"{{"keytype":"SCHEMA","subject":{},"version":{version},"magic":1}}"#,
        json_string(subject)
    )
    .into_bytes()
}

/// A `SCHEMA` record's value as Schema Registry writes it (`SchemaValue`).
pub fn schema_value(r: &Registered, deleted: bool) -> Vec<u8> {
    let mut out = format!(
        r#"{{"subject":{},"version":{},"id":{}"#,
        json_string(&r.subject),
        r.version,
        r.id
    );
    if r.schema_type != SchemaType::Avro {
        out.push_str(&format!(r#","schemaType":"{}""#, r.schema_type.name()));
    }
    if !r.references.is_empty() {
        out.push_str(&format!(
            r#","references":{}"#,
            references_json(&r.references)
        ));
    }
    out.push_str(&format!(
        r#","schema":{},"deleted":{deleted}}}"#,
        json_string(&r.schema)
    ));
    out.into_bytes()
}

fn references_json(references: &[Reference]) -> String {
    let items: Vec<String> = references
        .iter()
        .map(|x| {
            format!(
                r#"{{"name":{},"subject":{},"version":{}}}"#,
                json_string(&x.name),
                json_string(&x.subject),
                x.version
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// A JSON string, escaped as Jackson escapes it (quote, backslash, control characters).
fn json_string(s: &str) -> String {
    Json::String(s.to_string()).to_string()
}

/// The registry as the requests that import it into a Schema Registry: one JSON object per
/// version (soft-deleted ones too), each the body of `POST /subjects/{subject}/versions` in
/// `IMPORT` mode (`version`, `id`, `schemaType`, `references`, `schema`) with its `subject`
/// beside (the request ignores what it does not know) and `"deleted": true` where the
/// version is soft-deleted (to delete after importing). In the order they were registered
/// (the storage topic's offsets; schemas given directly by id), so that every reference is
/// imported before the schema that makes it.
pub fn import_requests(registry: &Registry) -> Vec<String> {
    let mut rows: Vec<&Registered> = registry.versions().collect();
    rows.sort_by_key(|r| (r.offset < 0, r.offset, r.id, r.version));
    rows.iter()
        .map(|r| {
            let mut out = format!(
                r#"{{"subject":{},"version":{},"id":{},"schemaType":"{}""#,
                json_string(&r.subject),
                r.version,
                r.id,
                r.schema_type.name()
            );
            if !r.references.is_empty() {
                out.push_str(&format!(
                    r#","references":{}"#,
                    references_json(&r.references)
                ));
            }
            out.push_str(&format!(r#","schema":{}"#, json_string(&r.schema)));
            if r.deleted {
                out.push_str(r#","deleted":true"#);
            }
            out.push('}');
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avro(subject: &str, schema: &str) -> NewSchema {
        NewSchema {
            subject: subject.into(),
            version: None,
            id: None,
            schema_type: SchemaType::Avro,
            schema: schema.into(),
            references: Vec::new(),
            deleted: false,
        }
    }

    const V1: &str = r#"{"type":"record","name":"P","fields":[{"name":"a","type":"long"}]}"#;
    const V2: &str = r#"{"type":"record","name":"P","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":""}]}"#;

    #[test]
    fn versions_and_ids_as_the_registry_gives_them() {
        let (registry, records) = register(vec![
            avro("p-value", V1),
            avro("p-value", V2),
            avro("p-value", V2), // registered already: nothing written
            avro("q-value", V1), // the same schema: its id
            avro("r-value", "\"string\""),
        ])
        .unwrap();
        let got: Vec<(&str, i32, i64)> = registry
            .versions()
            .map(|r| (r.subject.as_str(), r.version, r.id))
            .collect();
        assert_eq!(
            got,
            [
                ("p-value", 1, 1),
                ("p-value", 2, 2),
                ("q-value", 1, 1),
                ("r-value", 1, 3)
            ]
        );
        assert_eq!(records.len(), 4);
        assert_eq!(
            records[0].0,
            br#"{"keytype":"SCHEMA","subject":"p-value","version":1,"magic":1}"#
        );
        let value = String::from_utf8(records[0].1.clone().unwrap()).unwrap();
        assert_eq!(
            value,
            format!(
                r#"{{"subject":"p-value","version":1,"id":1,"schema":{},"deleted":false}}"#,
                Json::String(V1.into())
            )
        );
        // The fold of the records is the registry.
        let mut folded = Registry::new();
        for (i, (k, v)) in records.iter().enumerate() {
            folded.feed_record(Some(k), v.as_deref(), i as i64);
        }
        assert_eq!(folded.table().unwrap(), registry.table().unwrap());
        assert!(folded.issues().is_empty());
    }

    #[test]
    fn given_versions_ids_references_and_deletes() {
        let mut b = avro(
            "b-value",
            r#"{"type":"record","name":"B","fields":[{"name":"a","type":"A"}]}"#,
        );
        b.references = vec![Reference {
            name: "A".into(),
            subject: "a".into(),
            version: 1,
        }];
        let mut a = avro("a", r#"{"type":"record","name":"A","fields":[]}"#);
        a.id = Some(100);
        a.version = Some(3);
        let mut gone = avro("c-value", V1);
        gone.deleted = true;
        let (registry, records) = register(vec![
            a.clone(),
            {
                let mut b = b.clone();
                b.references[0].version = 3;
                b
            },
            gone,
        ])
        .unwrap();
        assert_eq!(registry.version("a", 3).unwrap().id, 100);
        assert_eq!(registry.latest("b-value").unwrap().id, 101);
        assert!(registry.version("c-value", 1).unwrap().deleted);
        assert_eq!(records.len(), 4);
        let value = String::from_utf8(records[1].1.clone().unwrap()).unwrap();
        assert!(
            value.contains(r#""references":[{"name":"A","subject":"a","version":3}],"schema""#),
            "{value}"
        );
        let requests = import_requests(&registry);
        assert_eq!(requests.len(), 3);
        assert!(requests[0]
            .starts_with(r#"{"subject":"a","version":3,"id":100,"schemaType":"AVRO","schema":"#));
        assert!(requests[2].ends_with(r#","deleted":true}"#));
        // A reference to nothing, a schema that does not compile, an id that is another
        // schema's, a version registered already.
        let err = |schemas: Vec<NewSchema>| register(schemas).unwrap_err().message;
        assert!(err(vec![b.clone()]).contains("references"));
        assert!(err(vec![avro("x", "{\"type\":\"nope\"}")]).contains("does not compile"));
        let mut other = avro("y", V2);
        other.id = Some(100);
        assert!(err(vec![a.clone(), other]).contains("another schema's"));
        assert!(err(vec![a.clone(), a.clone()]).contains("registered already"));
        assert!(err(vec![avro("", V1)]).contains("not empty"));
    }
}
