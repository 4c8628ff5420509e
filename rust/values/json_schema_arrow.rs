//! The Arrow type a JSON Schema describes (see `docs/values-protobuf-json.md` for the mapping
//! and why), and the rewrite that turns the parts given as JSON text into strings before
//! arrow-json decodes a row.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, TimeUnit};
use serde_json::Value;

use crate::error::{Error, Result};

/// Nesting of schemas past which a value is given as JSON text.
const MAX_TYPE_DEPTH: usize = 32;

/// What must be rewritten in a row before arrow-json decodes it.
#[derive(Debug, Clone)]
pub enum Rewrite {
    /// Nothing below here.
    None,
    /// The value becomes its JSON text.
    Text,
    /// These properties of an object.
    Object(Vec<(String, Rewrite)>),
    /// Every item of an array.
    Items(Box<Rewrite>),
}

impl Rewrite {
    /// Applies the rewrite to `value`, in place.
    pub fn apply(&self, value: &mut Value) {
        match (self, value) {
            (Rewrite::None, _) | (_, Value::Null) => {}
            (Rewrite::Text, value) => *value = Value::String(value.to_string()),
            (Rewrite::Object(fields), Value::Object(map)) => {
                for (name, rewrite) in fields {
                    if let Some(v) = map.get_mut(name) {
                        rewrite.apply(v);
                    }
                }
            }
            (Rewrite::Items(rewrite), Value::Array(items)) => {
                for v in items {
                    rewrite.apply(v);
                }
            }
            _ => {}
        }
    }

    fn is_none(&self) -> bool {
        matches!(self, Rewrite::None)
    }
}

/// A JSON Schema document: the reader's, or one of its references.
struct Document {
    /// The name it is referenced by (`""` for the reader's own document).
    name: String,
    value: Value,
}

/// Derives Arrow types from a reader schema and its references.
pub struct Deriver {
    documents: Vec<Document>,
    /// `$id` (and reference name) -> document index.
    ids: HashMap<String, usize>,
    /// `$ref`s being derived, to find recursive schemas.
    stack: Vec<String>,
}

fn parse(name: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        let which = if name.is_empty() {
            "the JSON schema".to_owned()
        } else {
            format!("the JSON schema referenced as {name:?}")
        };
        Error::invalid_argument(format!("{which} is not JSON: {e}"))
    })
}

/// The last path segment of a URL or file name (`https://x/y/a.json` -> `a.json`).
fn last_segment(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

impl Deriver {
    /// A deriver for `schema`, whose `$ref`s to other documents name `references`
    /// (name -> schema text) by their name or their `$id`.
    pub fn new(schema: &str, references: &[(String, String)]) -> Result<Deriver> {
        let mut documents = vec![Document {
            name: String::new(),
            value: parse("", schema)?,
        }];
        for (name, text) in references {
            documents.push(Document {
                name: name.clone(),
                value: parse(name, text)?,
            });
        }
        let mut ids = HashMap::new();
        for (i, doc) in documents.iter().enumerate() {
            if !doc.name.is_empty() {
                ids.insert(doc.name.clone(), i);
            }
            if let Some(id) = doc.value.get("$id").and_then(Value::as_str) {
                ids.entry(id.trim_end_matches('#').to_owned()).or_insert(i);
            }
        }
        Ok(Deriver {
            documents,
            ids,
            stack: Vec::new(),
        })
    }

    /// The Arrow type of the reader schema, and the rewrite its rows need.
    pub fn derive(&mut self) -> Result<(DataType, Rewrite)> {
        let root = self.documents[0].value.clone();
        self.schema(&root, 0)
    }

    /// The document a `$ref`'s base (before `#`) names, seen from document `from`.
    fn document(&self, base: &str, from: usize) -> Option<usize> {
        if base.is_empty() {
            return Some(from);
        }
        let base = base.trim_end_matches('#');
        if let Some(&i) = self.ids.get(base) {
            return Some(i);
        }
        // A relative reference (`address.json`) against absolute ids or names, or the reverse.
        let wanted = last_segment(base);
        self.ids
            .iter()
            .filter(|(id, _)| last_segment(id) == wanted)
            .map(|(_, &i)| i)
            .min()
    }

    fn resolve(&self, reference: &str, from: usize) -> Result<(Value, usize)> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let doc = self.document(base, from).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the JSON schema's $ref {reference:?} names no document (references: {})",
                self.documents
                    .iter()
                    .skip(1)
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let value = &self.documents[doc].value;
        let target = if fragment.is_empty() {
            Some(value)
        } else if fragment.starts_with('/') {
            value.pointer(fragment)
        } else {
            find_anchor(value, fragment)
        };
        target.cloned().map(|t| (t, doc)).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the JSON schema's $ref {reference:?} points at nothing"
            ))
        })
    }

    fn schema(&mut self, schema: &Value, doc: usize) -> Result<(DataType, Rewrite)> {
        let Value::Object(object) = schema else {
            // `true`, `false` and anything else: any JSON at all.
            return Ok(text());
        };
        if self.stack.len() >= MAX_TYPE_DEPTH {
            return Ok(text());
        }
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let key = format!("{doc}:{reference}");
            if self.stack.contains(&key) {
                return Ok(text());
            }
            let (target, target_doc) = self.resolve(reference, doc)?;
            self.stack.push(key);
            let derived = self.schema(&target, target_doc);
            self.stack.pop();
            return derived;
        }
        if let Some(types) = object.get("type") {
            let names: Vec<&str> = match types {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => return Ok(text()),
            };
            let non_null: Vec<&str> = names.into_iter().filter(|t| *t != "null").collect();
            return match non_null.as_slice() {
                [one] => self.typed(one, object, doc),
                [a, b] if matches!((*a, *b), ("integer", "number") | ("number", "integer")) => {
                    Ok((DataType::Float64, Rewrite::None))
                }
                _ => Ok(text()),
            };
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = object.get(key) {
                let kept: Vec<&Value> = branches.iter().filter(|b| !is_null_schema(b)).collect();
                return match kept.as_slice() {
                    [one] => {
                        let one = (*one).clone();
                        self.step(&one, doc)
                    }
                    _ => Ok(text()),
                };
            }
        }
        if let Some(Value::Array(branches)) = object.get("allOf") {
            return self.all_of(branches, doc);
        }
        if object.contains_key("properties") {
            return self.typed("object", object, doc);
        }
        if object.contains_key("items") {
            return self.typed("array", object, doc);
        }
        for key in ["enum", "const"] {
            if let Some(value) = object.get(key) {
                let values = value
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| vec![value.clone()]);
                let strings = values.iter().all(|v| v.is_string() || v.is_null());
                return Ok(if strings {
                    (DataType::Utf8, Rewrite::None)
                } else {
                    text()
                });
            }
        }
        Ok(text())
    }

    /// A sub-schema one level down.
    fn step(&mut self, schema: &Value, doc: usize) -> Result<(DataType, Rewrite)> {
        self.stack.push(String::new());
        let derived = self.schema(schema, doc);
        self.stack.pop();
        derived
    }

    fn all_of(&mut self, branches: &[Value], doc: usize) -> Result<(DataType, Rewrite)> {
        if let [one] = branches {
            return self.step(one, doc);
        }
        // Objects composed of parts: the union of their properties.
        let mut fields: Vec<(Field, Rewrite)> = Vec::new();
        for branch in branches {
            match self.step(branch, doc)? {
                (DataType::Struct(parts), Rewrite::Object(rewrites)) => {
                    for part in parts.iter() {
                        let rewrite = rewrites
                            .iter()
                            .find(|(n, _)| n == part.name())
                            .map(|(_, r)| r.clone())
                            .unwrap_or(Rewrite::None);
                        fields.retain(|(f, _)| f.name() != part.name());
                        fields.push((part.as_ref().clone(), rewrite));
                    }
                }
                (DataType::Struct(parts), _) => {
                    for part in parts.iter() {
                        fields.retain(|(f, _)| f.name() != part.name());
                        fields.push((part.as_ref().clone(), Rewrite::None));
                    }
                }
                _ => return Ok(text()),
            }
        }
        fields.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        Ok(structure(fields))
    }

    fn typed(
        &mut self,
        name: &str,
        object: &serde_json::Map<String, Value>,
        doc: usize,
    ) -> Result<(DataType, Rewrite)> {
        Ok(match name {
            "string" => match object.get("format").and_then(Value::as_str) {
                Some("date-time") => (
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    Rewrite::None,
                ),
                Some("date") => (DataType::Date32, Rewrite::None),
                _ => (DataType::Utf8, Rewrite::None),
            },
            "integer" => (DataType::Int64, Rewrite::None),
            "number" => (DataType::Float64, Rewrite::None),
            "boolean" => (DataType::Boolean, Rewrite::None),
            "object" => match object.get("properties") {
                Some(Value::Object(properties)) if !properties.is_empty() => {
                    let mut fields = Vec::with_capacity(properties.len());
                    for (name, schema) in properties {
                        let (data_type, rewrite) = self.step(schema, doc)?;
                        fields.push((Field::new(name, data_type, true), rewrite));
                    }
                    structure(fields)
                }
                _ => text(),
            },
            "array" => match object.get("items") {
                Some(items @ Value::Object(_)) if !object.contains_key("prefixItems") => {
                    let (data_type, rewrite) = self.step(items, doc)?;
                    let list = DataType::List(Arc::new(Field::new("item", data_type, true)));
                    let rewrite = if rewrite.is_none() {
                        Rewrite::None
                    } else {
                        Rewrite::Items(Box::new(rewrite))
                    };
                    (list, rewrite)
                }
                _ => text(),
            },
            _ => text(),
        })
    }
}

fn text() -> (DataType, Rewrite) {
    (DataType::Utf8, Rewrite::Text)
}

fn structure(fields: Vec<(Field, Rewrite)>) -> (DataType, Rewrite) {
    let rewrites: Vec<(String, Rewrite)> = fields
        .iter()
        .filter(|(_, r)| !r.is_none())
        .map(|(f, r)| (f.name().clone(), r.clone()))
        .collect();
    let fields: Fields = fields.into_iter().map(|(f, _)| f).collect();
    let rewrite = if rewrites.is_empty() {
        Rewrite::None
    } else {
        Rewrite::Object(rewrites)
    };
    (DataType::Struct(fields), rewrite)
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// The sub-schema with `"$anchor": anchor` (or an old-style `"$id": "#anchor"`).
fn find_anchor<'a>(value: &'a Value, anchor: &str) -> Option<&'a Value> {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                let named = map.get("$anchor").and_then(Value::as_str) == Some(anchor)
                    || map
                        .get("$id")
                        .and_then(Value::as_str)
                        .and_then(|id| id.strip_prefix('#'))
                        == Some(anchor);
                if named {
                    return Some(v);
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    None
}

/// The type arrow-json is asked to decode: `data_type` with timestamps' time zone left off
/// (arrow-json reads only offset time zones without chrono-tz; with none it reads a string's
/// own offset and takes one without as UTC, which is what the column holds). [`relabel`]
/// puts the zone back.
pub fn decoding_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Timestamp(unit, Some(_)) => DataType::Timestamp(*unit, None),
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| {
                    f.as_ref()
                        .clone()
                        .with_data_type(decoding_type(f.data_type()))
                })
                .collect(),
        ),
        DataType::List(item) => DataType::List(Arc::new(
            item.as_ref()
                .clone()
                .with_data_type(decoding_type(item.data_type())),
        )),
        other => other.clone(),
    }
}

/// `data` (of [`decoding_type`]`(target)`) as `target`: the same buffers, the types renamed.
pub fn relabel(data: arrow_data::ArrayData, target: &DataType) -> Result<arrow_data::ArrayData> {
    if data.data_type() == target {
        return Ok(data);
    }
    let children = match target {
        DataType::Struct(fields) => data
            .child_data()
            .iter()
            .zip(fields.iter())
            .map(|(child, field)| relabel(child.clone(), field.data_type()))
            .collect::<Result<Vec<_>>>()?,
        DataType::List(item) => data
            .child_data()
            .iter()
            .map(|child| relabel(child.clone(), item.data_type()))
            .collect::<Result<Vec<_>>>()?,
        _ => data.child_data().to_vec(),
    };
    data.into_builder()
        .data_type(target.clone())
        .child_data(children)
        .build()
        .map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derive(schema: &str, references: &[(&str, &str)]) -> DataType {
        let references: Vec<(String, String)> = references
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        Deriver::new(schema, &references)
            .unwrap()
            .derive()
            .unwrap()
            .0
    }

    fn field_type(data_type: &DataType, name: &str) -> DataType {
        let DataType::Struct(fields) = data_type else {
            panic!("{data_type} is not a struct")
        };
        fields.find(name).unwrap().1.data_type().clone()
    }

    #[test]
    fn maps_types_as_documented() {
        let t = derive(
            r##"{"type": "object", "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}}},
                "properties": {
                  "i": {"type": "integer"}, "n": {"type": ["number", "null"]},
                  "b": {"type": "boolean"}, "s": {"type": "string"},
                  "ts": {"type": "string", "format": "date-time"},
                  "d": {"type": "string", "format": "date"},
                  "u": {"type": "string", "format": "uuid"},
                  "list": {"type": "array", "items": {"type": "integer"}},
                  "tuple": {"type": "array", "items": [{"type": "integer"}]},
                  "p": {"$ref": "#/$defs/P"},
                  "opt": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/P"}]},
                  "union": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                  "many": {"type": ["string", "integer"]},
                  "num": {"type": ["integer", "number"]},
                  "bag": {"type": "object", "additionalProperties": {"type": "string"}},
                  "any": {},
                  "e": {"enum": ["A", "B"]},
                  "mixed": {"enum": ["A", 1]},
                  "both": {"allOf": [{"$ref": "#/$defs/P"}, {"properties": {"y": {"type": "string"}}}]}
                }}"##,
            &[],
        );
        assert_eq!(field_type(&t, "i"), DataType::Int64);
        assert_eq!(field_type(&t, "n"), DataType::Float64);
        assert_eq!(field_type(&t, "b"), DataType::Boolean);
        assert_eq!(field_type(&t, "s"), DataType::Utf8);
        assert_eq!(
            field_type(&t, "ts"),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(field_type(&t, "d"), DataType::Date32);
        assert_eq!(field_type(&t, "u"), DataType::Utf8);
        assert!(
            matches!(field_type(&t, "list"), DataType::List(f) if f.data_type() == &DataType::Int64)
        );
        assert_eq!(field_type(&t, "tuple"), DataType::Utf8);
        assert_eq!(field_type(&field_type(&t, "p"), "x"), DataType::Float64);
        assert_eq!(field_type(&field_type(&t, "opt"), "x"), DataType::Float64);
        assert_eq!(field_type(&t, "union"), DataType::Utf8);
        assert_eq!(field_type(&t, "many"), DataType::Utf8);
        assert_eq!(field_type(&t, "num"), DataType::Float64);
        assert_eq!(field_type(&t, "bag"), DataType::Utf8);
        assert_eq!(field_type(&t, "any"), DataType::Utf8);
        assert_eq!(field_type(&t, "e"), DataType::Utf8);
        assert_eq!(field_type(&t, "mixed"), DataType::Utf8);
        assert_eq!(field_type(&field_type(&t, "both"), "x"), DataType::Float64);
        assert_eq!(field_type(&field_type(&t, "both"), "y"), DataType::Utf8);
    }

    #[test]
    fn references_by_url_and_recursion() {
        let address = r#"{"$id": "https://example.com/address.json", "type": "object",
            "properties": {"city": {"type": "string"}}}"#;
        let t = derive(
            r##"{"type": "object", "definitions": {"Node": {"type": "object", "properties": {
                   "v": {"type": "integer"}, "next": {"$ref": "#/definitions/Node"}}}},
                "properties": {
                  "home": {"$ref": "https://example.com/address.json"},
                  "work": {"$ref": "address.json#/properties/city"},
                  "list": {"$ref": "#/definitions/Node"}}}"##,
            &[("address.json", address)],
        );
        assert_eq!(field_type(&field_type(&t, "home"), "city"), DataType::Utf8);
        assert_eq!(field_type(&t, "work"), DataType::Utf8);
        let node = field_type(&t, "list");
        assert_eq!(field_type(&node, "v"), DataType::Int64);
        // The node inside the node: JSON text.
        assert_eq!(field_type(&node, "next"), DataType::Utf8);
        let missing = Deriver::new(r#"{"$ref": "nowhere.json"}"#, &[])
            .unwrap()
            .derive();
        assert!(missing.is_err());
        assert!(Deriver::new("{not json", &[]).is_err());
    }

    #[test]
    fn rewrites_json_text_parts() {
        let (_, rewrite) = Deriver::new(
            r#"{"type": "object", "properties": {"bag": {"type": "object"},
                "rows": {"type": "array", "items": {"type": "object", "properties": {"any": true}}}}}"#,
            &[],
        )
        .unwrap()
        .derive()
        .unwrap();
        let mut row: Value =
            serde_json::from_str(r#"{"bag": {"k": [1]}, "rows": [{"any": 5}, {"any": null}]}"#)
                .unwrap();
        rewrite.apply(&mut row);
        assert_eq!(
            row,
            serde_json::json!({"bag": "{\"k\":[1]}", "rows": [{"any": "5"}, {"any": null}]})
        );
    }
}
