//! The Arrow type a JSON Schema describes (see `docs/values-protobuf-json.md` for the mapping
//! and why), as a [`Shape`]: the Arrow type, and which parts of it hold a value's JSON text.
//!
//! Schemas are read with their members in document order (serde_json's own map sorts them),
//! so that a struct's fields come in the order the schema declares its `properties`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, TimeUnit};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Result};
use crate::values::decoder::Wanted;

/// Nesting of schemas past which a value is given as JSON text.
const MAX_TYPE_DEPTH: usize = 32;

/// What a JSON Schema's values become: the Arrow type, with the parts that hold JSON text
/// told apart from plain strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// `integer`: int64.
    Int64,
    /// `number`: float64.
    Float64,
    /// `boolean`.
    Boolean,
    /// `string` (and string enums): utf8.
    Utf8,
    /// `string` with `format: date-time`: timestamp[us, UTC].
    Timestamp,
    /// `string` with `format: date`: date32.
    Date32,
    /// Anything else: utf8 holding the value's JSON text (compact, object keys sorted).
    Text,
    /// An object with properties: one nullable child per property, in declared order.
    Struct(Vec<(String, Shape)>),
    /// An array with one `items` schema.
    List(Box<Shape>),
}

impl Shape {
    /// The shape with only the properties `wanted` asks for (a list's items in turn): the
    /// decoder skips the others as it skips properties the schema does not declare. An
    /// object none of whose properties are asked for is kept whole.
    pub fn pruned(&self, wanted: &Wanted) -> Shape {
        match (self, wanted) {
            (_, Wanted::All) => self.clone(),
            (Shape::Struct(fields), _) => {
                let kept: Vec<(String, Shape)> = fields
                    .iter()
                    .filter_map(|(name, s)| wanted.field(name).map(|w| (name.clone(), s.pruned(w))))
                    .collect();
                if kept.is_empty() {
                    self.clone()
                } else {
                    Shape::Struct(kept)
                }
            }
            (Shape::List(item), _) => Shape::List(Box::new(item.pruned(wanted))),
            _ => self.clone(),
        }
    }

    /// The Arrow type of the column.
    pub fn data_type(&self) -> DataType {
        match self {
            Shape::Int64 => DataType::Int64,
            Shape::Float64 => DataType::Float64,
            Shape::Boolean => DataType::Boolean,
            Shape::Utf8 | Shape::Text => DataType::Utf8,
            Shape::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Shape::Date32 => DataType::Date32,
            Shape::Struct(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|(name, shape)| Field::new(name, shape.data_type(), true))
                    .collect::<Fields>(),
            ),
            Shape::List(item) => {
                DataType::List(Arc::new(Field::new("item", item.data_type(), true)))
            }
        }
    }

    /// Whether any part holds JSON text.
    pub fn has_text(&self) -> bool {
        match self {
            Shape::Text => true,
            Shape::Struct(fields) => fields.iter().any(|(_, s)| s.has_text()),
            Shape::List(item) => item.has_text(),
            _ => false,
        }
    }
}

/// A JSON value with object members in document order. A member named twice keeps its first
/// place and its last value, as Python's `json` module reads objects.
#[derive(Debug, Clone, PartialEq)]
pub enum Doc {
    /// `null`.
    Null,
    /// `true`, `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Doc>),
    /// An object, members in document order.
    Object(Vec<(String, Doc)>),
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Doc, D::Error> {
        struct DocVisitor;

        impl<'de> Visitor<'de> for DocVisitor {
            type Value = Doc;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_unit<E>(self) -> std::result::Result<Doc, E> {
                Ok(Doc::Null)
            }

            fn visit_bool<E>(self, v: bool) -> std::result::Result<Doc, E> {
                Ok(Doc::Bool(v))
            }

            fn visit_i64<E>(self, v: i64) -> std::result::Result<Doc, E> {
                Ok(Doc::Number(v.into()))
            }

            fn visit_u64<E>(self, v: u64) -> std::result::Result<Doc, E> {
                Ok(Doc::Number(v.into()))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Doc, E> {
                serde_json::Number::from_f64(v)
                    .map(Doc::Number)
                    .ok_or_else(|| E::custom("a number out of range"))
            }

            fn visit_str<E>(self, v: &str) -> std::result::Result<Doc, E> {
                Ok(Doc::String(v.to_owned()))
            }

            fn visit_string<E>(self, v: String) -> std::result::Result<Doc, E> {
                Ok(Doc::String(v))
            }

            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Doc, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Doc::Array(items))
            }

            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Doc, A::Error> {
                let mut members: Vec<(String, Doc)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Doc>()? {
                    match members.iter_mut().find(|(k, _)| *k == key) {
                        Some(member) => member.1 = value,
                        None => members.push((key, value)),
                    }
                }
                Ok(Doc::Object(members))
            }
        }

        deserializer.deserialize_any(DocVisitor)
    }
}

impl Doc {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Doc> {
        match self {
            Doc::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Doc::String(s) => Some(s),
            _ => None,
        }
    }

    fn is_string(&self) -> bool {
        matches!(self, Doc::String(_))
    }

    /// The value an RFC 6901 JSON Pointer (already percent-decoded) points at.
    pub fn pointer(&self, pointer: &str) -> Option<&Doc> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut target = self;
        for token in rest.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            target = match target {
                Doc::Object(_) => target.get(&token)?,
                Doc::Array(items) => items.get(array_index(&token)?)?,
                _ => return None,
            };
        }
        Some(target)
    }
}

/// An array index token of a JSON Pointer: decimal digits, no leading zero (RFC 6901 §4).
fn array_index(token: &str) -> Option<usize> {
    if token.is_empty()
        || !token.bytes().all(|b| b.is_ascii_digit())
        || (token.len() > 1 && token.starts_with('0'))
    {
        return None;
    }
    token.parse().ok()
}

/// A URI fragment percent-decoded (RFC 3986 §2.1), as RFC 6901 §6 requires before a fragment
/// is used as a JSON Pointer. A `%` not followed by two hex digits is kept as it is (as
/// Python's `urllib.parse.unquote`, which the `jsonschema` validator uses, keeps it). `None`
/// when the decoded bytes are not UTF-8.
pub fn percent_decode(fragment: &str) -> Option<String> {
    if !fragment.contains('%') {
        return Some(fragment.to_owned());
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// A JSON Schema document: the reader's, or one of its references.
struct Document {
    /// The name it is referenced by (`""` for the reader's own document).
    name: String,
    value: Doc,
}

/// Derives the [`Shape`] of a reader schema and its references.
pub struct Deriver {
    documents: Vec<Document>,
    /// `$id` (and reference name) -> document index.
    ids: HashMap<String, usize>,
    /// `$ref`s being derived, to find recursive schemas.
    stack: Vec<String>,
}

fn parse(name: &str, text: &str) -> Result<Doc> {
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
            if let Some(id) = doc.value.get("$id").and_then(Doc::as_str) {
                ids.entry(id.trim_end_matches('#').to_owned()).or_insert(i);
            }
        }
        Ok(Deriver {
            documents,
            ids,
            stack: Vec::new(),
        })
    }

    /// The shape of the reader schema.
    pub fn derive(&mut self) -> Result<Shape> {
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

    fn resolve(&self, reference: &str, from: usize) -> Result<(Doc, usize)> {
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
        let target = match percent_decode(fragment) {
            Some(fragment) if fragment.is_empty() => Some(value),
            Some(fragment) if fragment.starts_with('/') => value.pointer(&fragment),
            Some(fragment) => find_anchor(value, &fragment),
            None => None,
        };
        target.cloned().map(|t| (t, doc)).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the JSON schema's $ref {reference:?} points at nothing"
            ))
        })
    }

    fn schema(&mut self, schema: &Doc, doc: usize) -> Result<Shape> {
        let Doc::Object(_) = schema else {
            // `true`, `false` and anything else: any JSON at all.
            return Ok(Shape::Text);
        };
        if self.stack.len() >= MAX_TYPE_DEPTH {
            return Ok(Shape::Text);
        }
        if let Some(reference) = schema.get("$ref").and_then(Doc::as_str) {
            let key = format!("{doc}:{reference}");
            if self.stack.contains(&key) {
                return Ok(Shape::Text);
            }
            let (target, target_doc) = self.resolve(reference, doc)?;
            self.stack.push(key);
            let derived = self.schema(&target, target_doc);
            self.stack.pop();
            return derived;
        }
        if let Some(types) = schema.get("type") {
            let names: Vec<&str> = match types {
                Doc::String(t) => vec![t.as_str()],
                Doc::Array(ts) => ts.iter().filter_map(Doc::as_str).collect(),
                _ => return Ok(Shape::Text),
            };
            let non_null: Vec<&str> = names.into_iter().filter(|t| *t != "null").collect();
            return match non_null.as_slice() {
                [one] => self.typed(one, schema, doc),
                [a, b] if matches!((*a, *b), ("integer", "number") | ("number", "integer")) => {
                    Ok(Shape::Float64)
                }
                _ => Ok(Shape::Text),
            };
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Doc::Array(branches)) = schema.get(key) {
                let kept: Vec<&Doc> = branches.iter().filter(|b| !is_null_schema(b)).collect();
                return match kept.as_slice() {
                    [one] => {
                        let one = (*one).clone();
                        self.step(&one, doc)
                    }
                    _ => Ok(Shape::Text),
                };
            }
        }
        if let Some(Doc::Array(branches)) = schema.get("allOf") {
            return self.all_of(branches, doc);
        }
        if schema.get("properties").is_some() {
            return self.typed("object", schema, doc);
        }
        if schema.get("items").is_some() {
            return self.typed("array", schema, doc);
        }
        for key in ["enum", "const"] {
            if let Some(value) = schema.get(key) {
                let strings = match value {
                    Doc::Array(values) => values.iter().all(|v| v.is_string() || *v == Doc::Null),
                    v => v.is_string() || *v == Doc::Null,
                };
                return Ok(if strings { Shape::Utf8 } else { Shape::Text });
            }
        }
        Ok(Shape::Text)
    }

    /// A sub-schema one level down.
    fn step(&mut self, schema: &Doc, doc: usize) -> Result<Shape> {
        self.stack.push(String::new());
        let derived = self.schema(schema, doc);
        self.stack.pop();
        derived
    }

    /// Objects composed of parts: the union of their properties, each in the place it is first
    /// declared, with the type of the last part that declares it.
    fn all_of(&mut self, branches: &[Doc], doc: usize) -> Result<Shape> {
        if let [one] = branches {
            return self.step(one, doc);
        }
        let mut fields: Vec<(String, Shape)> = Vec::new();
        for branch in branches {
            match self.step(branch, doc)? {
                Shape::Struct(parts) => {
                    for (name, shape) in parts {
                        match fields.iter_mut().find(|(n, _)| *n == name) {
                            Some(field) => field.1 = shape,
                            None => fields.push((name, shape)),
                        }
                    }
                }
                _ => return Ok(Shape::Text),
            }
        }
        Ok(Shape::Struct(fields))
    }

    fn typed(&mut self, name: &str, schema: &Doc, doc: usize) -> Result<Shape> {
        Ok(match name {
            "string" => match schema.get("format").and_then(Doc::as_str) {
                Some("date-time") => Shape::Timestamp,
                Some("date") => Shape::Date32,
                _ => Shape::Utf8,
            },
            "integer" => Shape::Int64,
            "number" => Shape::Float64,
            "boolean" => Shape::Boolean,
            "object" => match schema.get("properties") {
                Some(Doc::Object(properties)) if !properties.is_empty() => {
                    let mut fields = Vec::with_capacity(properties.len());
                    for (name, property) in properties {
                        fields.push((name.clone(), self.step(property, doc)?));
                    }
                    Shape::Struct(fields)
                }
                _ => Shape::Text,
            },
            "array" => match schema.get("items") {
                Some(items @ Doc::Object(_)) if schema.get("prefixItems").is_none() => {
                    Shape::List(Box::new(self.step(items, doc)?))
                }
                _ => Shape::Text,
            },
            _ => Shape::Text,
        })
    }
}

fn is_null_schema(schema: &Doc) -> bool {
    schema.get("type").and_then(Doc::as_str) == Some("null")
}

/// The sub-schema with `"$anchor": anchor` (or an old-style `"$id": "#anchor"`).
fn find_anchor<'a>(value: &'a Doc, anchor: &str) -> Option<&'a Doc> {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Doc::Object(members) => {
                let named = v.get("$anchor").and_then(Doc::as_str) == Some(anchor)
                    || v.get("$id")
                        .and_then(Doc::as_str)
                        .and_then(|id| id.strip_prefix('#'))
                        == Some(anchor);
                if named {
                    return Some(v);
                }
                // Depth first, in document order.
                stack.extend(members.iter().rev().map(|(_, m)| m));
            }
            Doc::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derive(schema: &str, references: &[(&str, &str)]) -> Shape {
        let references: Vec<(String, String)> = references
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        Deriver::new(schema, &references).unwrap().derive().unwrap()
    }

    fn field(shape: &Shape, name: &str) -> Shape {
        let Shape::Struct(fields) = shape else {
            panic!("{shape:?} is not a struct")
        };
        fields.iter().find(|(n, _)| n == name).unwrap().1.clone()
    }

    fn names(shape: &Shape) -> Vec<&str> {
        let Shape::Struct(fields) = shape else {
            panic!("{shape:?} is not a struct")
        };
        fields.iter().map(|(n, _)| n.as_str()).collect()
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
        assert_eq!(field(&t, "i"), Shape::Int64);
        assert_eq!(field(&t, "n"), Shape::Float64);
        assert_eq!(field(&t, "b"), Shape::Boolean);
        assert_eq!(field(&t, "s"), Shape::Utf8);
        assert_eq!(field(&t, "ts"), Shape::Timestamp);
        assert_eq!(
            field(&t, "ts").data_type(),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(field(&t, "d"), Shape::Date32);
        assert_eq!(field(&t, "u"), Shape::Utf8);
        assert_eq!(field(&t, "list"), Shape::List(Box::new(Shape::Int64)));
        assert_eq!(field(&t, "tuple"), Shape::Text);
        assert_eq!(field(&field(&t, "p"), "x"), Shape::Float64);
        assert_eq!(field(&field(&t, "opt"), "x"), Shape::Float64);
        assert_eq!(field(&t, "union"), Shape::Text);
        assert_eq!(field(&t, "many"), Shape::Text);
        assert_eq!(field(&t, "num"), Shape::Float64);
        assert_eq!(field(&t, "bag"), Shape::Text);
        assert_eq!(field(&t, "any"), Shape::Text);
        assert_eq!(field(&t, "e"), Shape::Utf8);
        assert_eq!(field(&t, "mixed"), Shape::Text);
        assert_eq!(field(&field(&t, "both"), "x"), Shape::Float64);
        assert_eq!(field(&field(&t, "both"), "y"), Shape::Utf8);
        assert!(t.has_text());
        assert!(!field(&t, "p").has_text());
    }

    /// Issue 34: a struct's fields come in the order the schema declares its properties (they
    /// came sorted by name); `allOf` parts keep each property where it is first declared.
    #[test]
    fn struct_fields_in_declared_order() {
        let t = derive(
            r#"{"type": "object", "properties": {
                "zeta": {"type": "integer"}, "alpha": {"type": "string"},
                "mid": {"type": "object", "properties": {"z": {"type": "integer"}, "a": {"type": "integer"}}},
                "both": {"allOf": [
                    {"properties": {"k": {"type": "integer"}, "b": {"type": "integer"}}},
                    {"properties": {"a": {"type": "string"}, "k": {"type": "string"}}}]}}}"#,
            &[],
        );
        assert_eq!(names(&t), ["zeta", "alpha", "mid", "both"]);
        assert_eq!(names(&field(&t, "mid")), ["z", "a"]);
        assert_eq!(names(&field(&t, "both")), ["k", "b", "a"]);
        assert_eq!(field(&field(&t, "both"), "k"), Shape::Utf8);
        let DataType::Struct(fields) = t.data_type() else {
            panic!()
        };
        let arrow: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(arrow, ["zeta", "alpha", "mid", "both"]);
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
        assert_eq!(field(&field(&t, "home"), "city"), Shape::Utf8);
        assert_eq!(field(&t, "work"), Shape::Utf8);
        let node = field(&t, "list");
        assert_eq!(field(&node, "v"), Shape::Int64);
        // The node inside the node: JSON text.
        assert_eq!(field(&node, "next"), Shape::Text);
        let missing = Deriver::new(r#"{"$ref": "nowhere.json"}"#, &[])
            .unwrap()
            .derive();
        assert!(missing.is_err());
        assert!(Deriver::new("{not json", &[]).is_err());
    }

    /// Issue 35: a `$ref`'s fragment is percent-decoded before it is used as a JSON Pointer
    /// (RFC 6901 §6), and `~0`/`~1` are unescaped after.
    #[test]
    fn ref_fragments_are_percent_decoded() {
        let t = derive(
            r##"{"type": "object", "$defs": {
                  "with space": {"type": "integer"}, "100%": {"type": "boolean"},
                  "a/b": {"type": "number"}, "t~n": {"type": "string"},
                  "é": {"type": "string", "format": "date"}},
                "properties": {
                  "s": {"$ref": "#/$defs/with%20space"}, "p": {"$ref": "#/$defs/100%25"},
                  "slash": {"$ref": "#/$defs/a~1b"}, "tilde": {"$ref": "#/$defs/t~0n"},
                  "utf8": {"$ref": "#/$defs/%C3%A9"}, "raw": {"$ref": "#/$defs/with space"}}}"##,
            &[],
        );
        assert_eq!(field(&t, "s"), Shape::Int64);
        assert_eq!(field(&t, "p"), Shape::Boolean);
        assert_eq!(field(&t, "slash"), Shape::Float64);
        assert_eq!(field(&t, "tilde"), Shape::Utf8);
        assert_eq!(field(&t, "utf8"), Shape::Date32);
        assert_eq!(field(&t, "raw"), Shape::Int64);
        assert_eq!(percent_decode("a%2"), Some("a%2".into()));
        assert_eq!(percent_decode("%zz%41"), Some("%zzA".into()));
        assert_eq!(percent_decode("%ff"), None);
        assert!(Deriver::new(r##"{"$ref": "#/$defs/%ff"}"##, &[])
            .unwrap()
            .derive()
            .is_err());
    }
}
