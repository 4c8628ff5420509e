//! Schema Registry's state folded from its storage topic (`_schemas`), as the registry's
//! `KafkaStoreReaderThread` and `KafkaStoreMessageHandler` rebuild it at startup; or built from
//! schemas given directly.
//!
//! Each record's key is JSON with a `keytype` (docs/values.md, "The registry's log"):
//!
//! - `SCHEMA` (`subject`, `version`, `magic` 0 or 1): the value is the registered schema (`id`,
//!   `schema`, `schemaType` with absent meaning `AVRO`, `references`, `deleted`, `md5`); a
//!   later record of the same subject and version replaces it; a tombstone removes it (a hard
//!   delete).
//! - `DELETE_SUBJECT`: the value's `subject` has its versions up to `version` soft-deleted.
//! - `CLEAR_SUBJECT`: the soft-deleted versions of the value's `subject` are removed.
//! - `CONFIG`, `MODE`, `NOOP`, `CONTEXT`, `ASSOC`: no schema; passed over. A tombstone of any
//!   key but `SCHEMA` changes nothing.
//!
//! Subjects of a context other than the default are stored qualified, `:.ctx:subject`; ids are
//! per context. Looking up an id prefers the default context.
//!
//! A schema removed by a hard delete is gone from [`Registry::table`], as from the registry;
//! but records written with it remain in the backup, so lookups by id still find it (ids are
//! never given to another schema).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema};
use base64::Engine;
use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::values::decoder::{SchemaText, SchemaType, WriterSchemas};

/// A reference from one schema to another: the name it imports it by, and which subject
/// version it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The name the referring schema uses (a `.proto` import, an Avro full name, a `$ref`).
    pub name: String,
    /// The referenced subject.
    pub subject: String,
    /// Its version.
    pub version: i32,
}

/// One registered schema version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registered {
    /// The subject as stored (qualified `:.ctx:name` outside the default context).
    pub subject: String,
    /// The version in the subject (1, 2, ...).
    pub version: i32,
    /// The schema id (unique within its context).
    pub id: i64,
    /// The language.
    pub schema_type: SchemaType,
    /// The schema text.
    pub schema: String,
    /// What it references.
    pub references: Vec<Reference>,
    /// Soft-deleted.
    pub deleted: bool,
    /// The schema's MD5 as the registry stores it (the GUID newer serializers put in headers).
    pub md5: Option<[u8; 16]>,
    /// The offset of the record in the storage topic that registered it (-1 if given directly).
    pub offset: i64,
}

impl Registered {
    /// The context of its subject (`"."` for the default).
    pub fn context(&self) -> &str {
        context_of(&self.subject).0
    }
}

/// A subject's context and its name within it: `:.ctx:name` is (".ctx", "name").
pub fn context_of(subject: &str) -> (&str, &str) {
    if let Some(rest) = subject.strip_prefix(':') {
        if let Some((ctx, name)) = rest.split_once(':') {
            return (ctx, name);
        }
    }
    (".", subject)
}

/// The registry's schemas.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// By (subject, version).
    versions: BTreeMap<(String, i32), Registered>,
    /// Schemas hard-deleted (tombstoned or cleared), still found by id.
    removed: HashMap<(String, i64), Registered>,
    /// Records passed over: (offset, why).
    issues: Vec<(i64, String)>,
    /// Records fed, and how many of them had a registry's key: JSON with a string `keytype`
    /// (what the registry's `SchemaRegistrySerializer` reads a key as).
    records: u64,
    registry_keys: u64,
}

fn str_field<'a>(obj: &'a Json, name: &str) -> Option<&'a str> {
    obj.get(name).and_then(Json::as_str)
}

fn int_field(obj: &Json, name: &str) -> Option<i64> {
    obj.get(name).and_then(Json::as_i64)
}

impl SchemaType {
    /// The type named by a registry's `schemaType` (absent: Avro).
    pub fn from_registry(name: Option<&str>) -> std::result::Result<SchemaType, String> {
        match name {
            None | Some("AVRO") => Ok(SchemaType::Avro),
            Some("PROTOBUF") => Ok(SchemaType::Protobuf),
            Some("JSON") => Ok(SchemaType::Json),
            Some(other) => Err(format!("unknown schemaType {other:?}")),
        }
    }

    /// The registry's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            SchemaType::Avro => "AVRO",
            SchemaType::Protobuf => "PROTOBUF",
            SchemaType::Json => "JSON",
        }
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Records the storage topic had that the fold passed over: (offset, why).
    pub fn issues(&self) -> &[(i64, String)] {
        &self.issues
    }

    /// Folds one record of the storage topic, in log order.
    pub fn feed_record(&mut self, key: Option<&[u8]>, value: Option<&[u8]>, offset: i64) {
        self.records += 1;
        if let Err(why) = self.apply(key, value, offset) {
            self.issues.push((offset, why));
        }
    }

    fn apply(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        offset: i64,
    ) -> std::result::Result<(), String> {
        let key = key.ok_or("a record without a key")?;
        let key: Json = serde_json::from_slice(key).map_err(|e| format!("key is not JSON: {e}"))?;
        let keytype = str_field(&key, "keytype").ok_or("key has no keytype")?;
        self.registry_keys += 1;
        let value: Option<Json> = match value {
            Some(v) => {
                Some(serde_json::from_slice(v).map_err(|e| format!("value is not JSON: {e}"))?)
            }
            None => None,
        };
        match keytype {
            "SCHEMA" => {
                let magic = int_field(&key, "magic").unwrap_or(0);
                if magic != 0 && magic != 1 {
                    return Err(format!("SCHEMA key with magic {magic}"));
                }
                let subject = str_field(&key, "subject").ok_or("SCHEMA key without subject")?;
                let version = int_field(&key, "version").ok_or("SCHEMA key without version")?;
                let version = i32::try_from(version).map_err(|_| "version out of range")?;
                let slot = (subject.to_string(), version);
                match value {
                    None => {
                        if let Some(old) = self.versions.remove(&slot) {
                            self.remember_removed(old);
                        }
                    }
                    Some(v) => {
                        let registered = parse_schema_value(&v, subject, version, offset)?;
                        self.versions.insert(slot, registered);
                    }
                }
            }
            "DELETE_SUBJECT" => {
                let Some(v) = value else { return Ok(()) };
                let subject = str_field(&v, "subject").ok_or("DELETE_SUBJECT without subject")?;
                let upto = int_field(&v, "version").ok_or("DELETE_SUBJECT without version")?;
                let upto = i32::try_from(upto).unwrap_or(i32::MAX);
                for ((_, _), r) in self
                    .versions
                    .range_mut((subject.to_string(), i32::MIN)..=(subject.to_string(), upto))
                {
                    r.deleted = true;
                }
            }
            "CLEAR_SUBJECT" => {
                let Some(v) = value else { return Ok(()) };
                let subject = str_field(&v, "subject").ok_or("CLEAR_SUBJECT without subject")?;
                let cleared: Vec<(String, i32)> = self
                    .versions
                    .iter()
                    .filter(|(_, r)| r.deleted && clears(subject, &r.subject))
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in cleared {
                    if let Some(old) = self.versions.remove(&k) {
                        self.remember_removed(old);
                    }
                }
            }
            "CONFIG" | "MODE" | "NOOP" | "CONTEXT" | "ASSOC" => {}
            other => return Err(format!("unknown keytype {other:?}")),
        }
        Ok(())
    }

    /// Fails when records were fed and none had a registry's key: the topic read is not a
    /// registry's storage topic (a data partition given by mistake), which would otherwise
    /// fold into an empty registry with a warning per record. `what` names what was read.
    pub fn check_storage_topic(&self, what: &str) -> Result<()> {
        if self.records == 0 || self.registry_keys > 0 {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "{what} is not a Schema Registry storage topic: none of its {} records has a \
             registry's key (JSON with a \"keytype\")",
            self.records
        )))
    }

    fn remember_removed(&mut self, old: Registered) {
        self.removed
            .insert((old.context().to_string(), old.id), old);
    }

    /// Adds a schema given directly (not from the storage topic): registered under `id`, in
    /// subject `subject` (empty when there is none) as its next version.
    pub fn add(&mut self, id: i64, subject: &str, text: SchemaText) {
        let version = self
            .versions
            .range((subject.to_string(), i32::MIN)..=(subject.to_string(), i32::MAX))
            .next_back()
            .map_or(1, |((_, v), _)| v + 1);
        let references = text
            .references
            .iter()
            .map(|(name, _)| Reference {
                name: name.clone(),
                subject: name.clone(),
                version: 1,
            })
            .collect();
        // Referenced texts given directly become subjects named by the reference.
        for (name, schema) in &text.references {
            let slot = (name.clone(), 1);
            self.versions.entry(slot).or_insert_with(|| Registered {
                subject: name.clone(),
                version: 1,
                id: -1,
                schema_type: text.schema_type,
                schema: schema.clone(),
                references: Vec::new(),
                deleted: false,
                md5: None,
                offset: -1,
            });
        }
        self.versions.insert(
            (subject.to_string(), version),
            Registered {
                subject: subject.to_string(),
                version,
                id,
                schema_type: text.schema_type,
                schema: text.schema,
                references,
                deleted: false,
                md5: None,
                offset: -1,
            },
        );
    }

    /// Adds a registered schema as it is (schemas shipped from a driver to its tasks); a
    /// version already there is kept.
    pub fn insert(&mut self, registered: Registered) {
        self.versions
            .entry((registered.subject.clone(), registered.version))
            .or_insert(registered);
    }

    /// Every schema the registry can decode with: its versions, then those hard-deleted.
    pub fn rows(&self) -> impl Iterator<Item = &Registered> {
        self.versions.values().chain(self.removed.values())
    }

    /// Every registered version, by subject and version.
    pub fn versions(&self) -> impl Iterator<Item = &Registered> {
        self.versions.values()
    }

    /// The schema registered under `id`: in the default context if there, else in any other;
    /// a hard-deleted one last.
    pub fn by_id(&self, id: i64) -> Option<&Registered> {
        let mut found: Option<&Registered> = None;
        for r in self.versions.values().filter(|r| r.id == id) {
            if r.context() == "." {
                return Some(r);
            }
            found = found.or(Some(r));
        }
        found.or_else(|| {
            self.removed
                .get(&(".".to_string(), id))
                .or_else(|| self.removed.values().find(|r| r.id == id))
        })
    }

    /// The schema whose MD5 (GUID) is `guid`.
    pub fn by_guid(&self, guid: &[u8; 16]) -> Option<&Registered> {
        self.versions
            .values()
            .chain(self.removed.values())
            .find(|r| r.md5.as_ref() == Some(guid))
    }

    /// The latest version of `subject` that is not deleted.
    pub fn latest(&self, subject: &str) -> Option<&Registered> {
        self.versions
            .range((subject.to_string(), i32::MIN)..=(subject.to_string(), i32::MAX))
            .rev()
            .map(|(_, r)| r)
            .find(|r| !r.deleted)
    }

    /// Version `version` of `subject` (deleted or not).
    pub fn version(&self, subject: &str, version: i32) -> Option<&Registered> {
        self.versions.get(&(subject.to_string(), version))
    }

    /// The subjects, sorted.
    pub fn subjects(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.versions.keys().map(|(s, _)| s.as_str()).collect();
        out.dedup();
        out
    }

    /// `registered`'s text with its references resolved transitively (each referenced schema
    /// once, those it depends on before it). A reference the registry does not hold, or a
    /// cycle, is an error.
    pub fn text(&self, registered: &Registered) -> Result<SchemaText> {
        let mut references = Vec::new();
        let mut visiting = Vec::new();
        self.collect_references(registered, &mut references, &mut visiting)?;
        Ok(SchemaText {
            schema_type: registered.schema_type,
            schema: registered.schema.clone(),
            references,
        })
    }

    fn collect_references(
        &self,
        registered: &Registered,
        out: &mut Vec<(String, String)>,
        visiting: &mut Vec<(String, i32)>,
    ) -> Result<()> {
        for reference in &registered.references {
            if out.iter().any(|(name, _)| name == &reference.name) {
                continue;
            }
            let key = (reference.subject.clone(), reference.version);
            if visiting.contains(&key) || visiting.len() > 64 {
                return Err(Error::invalid_argument(format!(
                    "schema references of subject {:?} form a cycle (or nest deeper than 64)",
                    registered.subject
                )));
            }
            let referenced = self.resolve_reference(reference).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "subject {:?} version {} references {:?} (subject {:?} version {}), which \
                     the registry does not have",
                    registered.subject,
                    registered.version,
                    reference.name,
                    reference.subject,
                    reference.version
                ))
            })?;
            visiting.push(key);
            self.collect_references(referenced, out, visiting)?;
            visiting.pop();
            out.push((reference.name.clone(), referenced.schema.clone()));
        }
        Ok(())
    }

    fn resolve_reference(&self, reference: &Reference) -> Option<&Registered> {
        // The registry resolves a reference within the referring schema's context; version -1
        // means the latest.
        if reference.version == -1 {
            return self.latest(&reference.subject);
        }
        self.version(&reference.subject, reference.version)
            .or_else(|| {
                self.removed
                    .values()
                    .find(|r| r.subject == reference.subject && r.version == reference.version)
            })
    }

    /// The registry as a table: `subject`, `version`, `id`, `type`, `schema`, `references`
    /// (list of `name`, `subject`, `version`), `deleted`, `offset`, `context`.
    pub fn table(&self) -> Result<RecordBatch> {
        let ref_fields = Fields::from(vec![
            Field::new("name", DataType::Utf8, false),
            Field::new("subject", DataType::Utf8, false),
            Field::new("version", DataType::Int32, false),
        ]);
        let mut subject = StringBuilder::new();
        let mut version = Int32Builder::new();
        let mut id = Int64Builder::new();
        let mut kind = StringBuilder::new();
        let mut schema = StringBuilder::new();
        let mut references =
            ListBuilder::new(StructBuilder::from_fields(ref_fields.clone(), 0)).with_field(
                Field::new("element", DataType::Struct(ref_fields.clone()), false),
            );
        let mut deleted = BooleanBuilder::new();
        let mut offset = Int64Builder::new();
        let mut context = StringBuilder::new();
        for r in self.versions.values() {
            subject.append_value(&r.subject);
            version.append_value(r.version);
            id.append_value(r.id);
            kind.append_value(r.schema_type.name());
            schema.append_value(&r.schema);
            let items = references.values();
            for reference in &r.references {
                items
                    .field_builder::<StringBuilder>(0)
                    .expect("name")
                    .append_value(&reference.name);
                items
                    .field_builder::<StringBuilder>(1)
                    .expect("subject")
                    .append_value(&reference.subject);
                items
                    .field_builder::<Int32Builder>(2)
                    .expect("version")
                    .append_value(reference.version);
                items.append(true);
            }
            references.append(true);
            deleted.append_value(r.deleted);
            offset.append_option((r.offset >= 0).then_some(r.offset));
            context.append_value(r.context());
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(subject.finish()),
            Arc::new(version.finish()),
            Arc::new(id.finish()),
            Arc::new(kind.finish()),
            Arc::new(schema.finish()),
            Arc::new(references.finish()),
            Arc::new(deleted.finish()),
            Arc::new(offset.finish()),
            Arc::new(context.finish()),
        ];
        let schema = Schema::new(vec![
            Field::new("subject", DataType::Utf8, false),
            Field::new("version", DataType::Int32, false),
            Field::new("id", DataType::Int64, false),
            Field::new("type", DataType::Utf8, false),
            Field::new("schema", DataType::Utf8, false),
            Field::new(
                "references",
                DataType::List(Arc::new(Field::new(
                    "element",
                    DataType::Struct(ref_fields),
                    false,
                ))),
                false,
            ),
            Field::new("deleted", DataType::Boolean, false),
            Field::new("offset", DataType::Int64, true),
            Field::new("context", DataType::Utf8, false),
        ]);
        RecordBatch::try_new(Arc::new(schema), columns)
            .map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))
    }
}

/// Whether clearing `cleared` removes `subject`: the same subject, or every subject of a
/// context when `cleared` names only the context (`:.ctx:`).
fn clears(cleared: &str, subject: &str) -> bool {
    if cleared == subject {
        return true;
    }
    let (ctx, name) = context_of(cleared);
    name.is_empty() && context_of(subject).0 == ctx
}

/// A `SCHEMA` record's value.
fn parse_schema_value(
    v: &Json,
    subject: &str,
    version: i32,
    offset: i64,
) -> std::result::Result<Registered, String> {
    let id = int_field(v, "id").ok_or("schema value without id")?;
    let schema = str_field(v, "schema").ok_or("schema value without schema")?;
    let schema_type = SchemaType::from_registry(str_field(v, "schemaType"))?;
    let mut references = Vec::new();
    if let Some(list) = v.get("references").and_then(Json::as_array) {
        for r in list {
            references.push(Reference {
                name: str_field(r, "name")
                    .ok_or("reference without name")?
                    .to_string(),
                subject: str_field(r, "subject")
                    .ok_or("reference without subject")?
                    .to_string(),
                version: int_field(r, "version")
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or("reference without version")?,
            });
        }
    }
    let md5 = str_field(v, "md5").and_then(|m| {
        base64::engine::general_purpose::STANDARD
            .decode(m)
            .ok()
            .and_then(|b| <[u8; 16]>::try_from(b.as_slice()).ok())
    });
    Ok(Registered {
        subject: subject.to_string(),
        version,
        id,
        schema_type,
        schema: schema.to_string(),
        references,
        deleted: v.get("deleted").and_then(Json::as_bool).unwrap_or(false),
        md5,
        offset,
    })
}

/// Writer schemas by id from a registry (its texts resolved once, on first use).
pub struct RegistrySchemas {
    registry: Arc<Registry>,
    cache: std::sync::Mutex<HashMap<i64, Option<Arc<SchemaText>>>>,
}

impl RegistrySchemas {
    /// The writer schemas of `registry`.
    pub fn new(registry: Arc<Registry>) -> RegistrySchemas {
        RegistrySchemas {
            registry,
            cache: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
}

impl WriterSchemas for RegistrySchemas {
    fn writer(&self, id: i64) -> Option<Arc<SchemaText>> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(id)
            .or_insert_with(|| {
                let r = self.registry.by_id(id)?;
                self.registry.text(r).ok().map(Arc::new)
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: &str, subject: &str, version: i32) -> Vec<u8> {
        format!(r#"{{"keytype":"{t}","subject":"{subject}","version":{version},"magic":1}}"#)
            .into_bytes()
    }

    fn schema(subject: &str, version: i32, id: i64, text: &str) -> Vec<u8> {
        serde_json::json!({"subject": subject, "version": version, "id": id,
            "schema": text, "deleted": false})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn folds_versions_deletes_and_tombstones() {
        let mut r = Registry::new();
        r.feed_record(Some(b"{\"keytype\":\"NOOP\",\"magic\":0}"), None, 0);
        r.feed_record(
            Some(&key("SCHEMA", "t-value", 1)),
            Some(&schema("t-value", 1, 1, "\"string\"")),
            1,
        );
        r.feed_record(
            Some(&key("SCHEMA", "t-value", 2)),
            Some(&schema("t-value", 2, 2, "\"long\"")),
            2,
        );
        assert_eq!(r.latest("t-value").unwrap().id, 2);
        // Soft delete of version 2 by re-registering it deleted.
        let mut v2: Json = serde_json::from_slice(&schema("t-value", 2, 2, "\"long\"")).unwrap();
        v2["deleted"] = Json::Bool(true);
        r.feed_record(
            Some(&key("SCHEMA", "t-value", 2)),
            Some(v2.to_string().as_bytes()),
            3,
        );
        assert_eq!(r.latest("t-value").unwrap().id, 1);
        // Hard delete: gone from the table, still found by id.
        r.feed_record(Some(&key("SCHEMA", "t-value", 2)), None, 4);
        assert_eq!(r.table().unwrap().num_rows(), 1);
        assert_eq!(r.by_id(2).unwrap().schema, "\"long\"");
        // DELETE_SUBJECT then CLEAR_SUBJECT.
        r.feed_record(
            Some(b"{\"keytype\":\"DELETE_SUBJECT\",\"subject\":\"t-value\",\"magic\":0}"),
            Some(b"{\"subject\":\"t-value\",\"version\":1}"),
            5,
        );
        assert!(r.latest("t-value").is_none());
        assert!(r.version("t-value", 1).unwrap().deleted);
        r.feed_record(
            Some(b"{\"keytype\":\"CLEAR_SUBJECT\",\"subject\":\"t-value\",\"magic\":0}"),
            Some(b"{\"subject\":\"t-value\"}"),
            6,
        );
        assert_eq!(r.table().unwrap().num_rows(), 0);
        assert!(r.issues().is_empty());
        r.feed_record(Some(b"nope"), None, 7);
        r.feed_record(Some(&key("SCHEMA", "x", 1)), Some(b"{\"id\":1}"), 8);
        assert_eq!(r.issues().len(), 2);
        assert_eq!(r.check_storage_topic("_schemas-0"), Ok(()));
    }

    #[test]
    fn a_data_topic_is_not_a_storage_topic() {
        let mut r = Registry::new();
        assert_eq!(r.check_storage_topic("x"), Ok(()));
        for offset in 0..3 {
            r.feed_record(Some(b"order-1"), Some(b"\0\0\0\0\x01"), offset);
        }
        r.feed_record(None, Some(b"{}"), 3);
        r.feed_record(Some(b"{\"type\":\"x\"}"), Some(b"{}"), 4);
        let err = r.check_storage_topic("orders-0").unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::InvalidArgument);
        assert!(
            err.message.starts_with(
                "orders-0 is not a Schema Registry storage topic: none of its 5 records"
            ),
            "{err}"
        );
    }

    #[test]
    fn references_and_contexts() {
        let mut r = Registry::new();
        r.feed_record(
            Some(&key("SCHEMA", "addr", 1)),
            Some(&schema("addr", 1, 10, "A")),
            0,
        );
        let v = serde_json::json!({"subject": "p", "version": 1, "id": 11, "schema": "P",
            "references": [{"name": "a.Address", "subject": "addr", "version": 1}]});
        r.feed_record(
            Some(&key("SCHEMA", "p", 1)),
            Some(v.to_string().as_bytes()),
            1,
        );
        r.feed_record(
            Some(&key("SCHEMA", ":.other:p", 1)),
            Some(&schema(":.other:p", 1, 11, "Q")),
            2,
        );
        let p = r.by_id(11).unwrap();
        assert_eq!(p.schema, "P");
        let text = r.text(p).unwrap();
        assert_eq!(
            text.references,
            vec![("a.Address".to_string(), "A".to_string())]
        );
        assert_eq!(context_of(":.other:p"), (".other", "p"));
        let table = r.table().unwrap();
        assert_eq!(table.num_rows(), 3);
    }
}
