//! An Avro schema (its JSON, references already written in) as the compiled decoder reads it:
//! the types in one arena, named types by full name with their aliases, record fields with
//! their aliases and defaults. Logical types are not kept: resolution goes by the types they
//! are on (the Avro specification), and what a logical type is in Arrow is the reader
//! column's type, which `arrow-avro` maps.

use std::collections::HashMap;

use serde_json::Value as Json;

/// A type's place in its [`Schema`].
pub(crate) type NodeId = usize;

/// A named type's names.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    /// The full name (`namespace.name`).
    pub full: String,
    /// The aliases, as full names (an alias without a dot is in the type's namespace).
    pub aliases: Vec<String>,
}

impl Names {
    /// The name without its namespace.
    pub fn short(&self) -> &str {
        self.full.rsplit('.').next().unwrap_or(&self.full)
    }
}

/// A record's field.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub name: String,
    pub aliases: Vec<String>,
    pub ty: NodeId,
    /// The default, as the schema's JSON gives it (`Some(Json::Null)`: `"default": null`).
    pub default: Option<Json>,
}

/// One Avro type.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record {
        names: Names,
        fields: Vec<Field>,
    },
    Enum {
        names: Names,
        symbols: Vec<String>,
        default: Option<String>,
    },
    Fixed {
        names: Names,
        size: usize,
    },
    Array(NodeId),
    Map(NodeId),
    Union(Vec<NodeId>),
}

impl Node {
    /// The type's name in messages (a named type's full name).
    pub fn describe(&self) -> String {
        match self {
            Node::Null => "null".into(),
            Node::Boolean => "boolean".into(),
            Node::Int => "int".into(),
            Node::Long => "long".into(),
            Node::Float => "float".into(),
            Node::Double => "double".into(),
            Node::Bytes => "bytes".into(),
            Node::String => "string".into(),
            Node::Record { names, .. } => format!("record {}", names.full),
            Node::Enum { names, .. } => format!("enum {}", names.full),
            Node::Fixed { names, .. } => format!("fixed {}", names.full),
            Node::Array(_) => "array".into(),
            Node::Map(_) => "map".into(),
            Node::Union(_) => "union".into(),
        }
    }

    /// The names of a named type.
    pub fn names(&self) -> Option<&Names> {
        match self {
            Node::Record { names, .. } | Node::Enum { names, .. } | Node::Fixed { names, .. } => {
                Some(names)
            }
            _ => None,
        }
    }
}

/// A parsed schema: its types, the root first.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    /// The `bytes` and `fixed` types that are valid `decimal`s: their precision and scale
    /// (the one logical type resolution looks at: two decimals match only if both are the
    /// same).
    pub decimals: HashMap<NodeId, (u64, u64)>,
}

/// Deeper schemas are refused (serde_json itself stops at 128 levels of JSON).
const MAX_DEPTH: usize = 512;

impl Schema {
    /// The schema of `json` (a schema's JSON with its references written in).
    pub fn parse(json: &Json) -> Result<Schema, String> {
        let mut parser = Parser {
            nodes: Vec::new(),
            named: HashMap::new(),
            decimals: HashMap::new(),
        };
        let root = parser.parse(json, "", 0)?;
        Ok(Schema {
            nodes: parser.nodes,
            root,
            decimals: parser.decimals,
        })
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }
}

struct Parser {
    nodes: Vec<Node>,
    named: HashMap<String, NodeId>,
    decimals: HashMap<NodeId, (u64, u64)>,
}

/// A `decimal` logical type's precision and scale, if `obj` (on a type of `size` bytes, or
/// `bytes`) is a valid one; an invalid one is ignored, as the specification says.
fn decimal(obj: &serde_json::Map<String, Json>, size: Option<usize>) -> Option<(u64, u64)> {
    if obj.get("logicalType").and_then(Json::as_str) != Some("decimal") {
        return None;
    }
    let precision = obj.get("precision")?.as_u64().filter(|&p| p > 0)?;
    let scale = match obj.get("scale") {
        None => 0,
        Some(s) => s.as_u64()?,
    };
    if scale > precision {
        return None;
    }
    if let Some(n) = size {
        // The most digits n bytes of two's complement hold: floor(log10(2^(8n - 1) - 1)).
        let digits = ((8.0 * n as f64 - 1.0) * std::f64::consts::LOG10_2).floor() as u64;
        if n == 0 || precision > digits {
            return None;
        }
    }
    Some((precision, scale))
}

fn primitive(name: &str) -> Option<Node> {
    Some(match name {
        "null" => Node::Null,
        "boolean" => Node::Boolean,
        "int" => Node::Int,
        "long" => Node::Long,
        "float" => Node::Float,
        "double" => Node::Double,
        "bytes" => Node::Bytes,
        "string" => Node::String,
        _ => return None,
    })
}

/// The full name of `name` in namespace `ns`.
fn full_name(name: &str, ns: &str) -> String {
    if name.contains('.') || ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}.{name}")
    }
}

fn strings(value: Option<&Json>, what: &str) -> Result<Vec<String>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(Json::Array(items)) => items
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{what} must be strings"))
            })
            .collect(),
        Some(_) => Err(format!("{what} must be an array of strings")),
    }
}

impl Parser {
    fn add(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The named type `name` refers to from namespace `ns`.
    fn lookup(&self, name: &str, ns: &str) -> Option<NodeId> {
        self.named
            .get(&full_name(name, ns))
            .or_else(|| self.named.get(name))
            .copied()
    }

    fn parse(&mut self, json: &Json, ns: &str, depth: usize) -> Result<NodeId, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH}"));
        }
        match json {
            Json::String(name) => match primitive(name) {
                Some(node) => Ok(self.add(node)),
                None => self
                    .lookup(name, ns)
                    .ok_or_else(|| format!("unknown type {name:?}")),
            },
            Json::Array(branches) => {
                let ids = branches
                    .iter()
                    .map(|b| self.parse(b, ns, depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                if ids.iter().any(|&b| matches!(self.nodes[b], Node::Union(_))) {
                    return Err("a union directly in a union".into());
                }
                Ok(self.add(Node::Union(ids)))
            }
            Json::Object(obj) => {
                let ty = obj
                    .get("type")
                    .ok_or_else(|| "a schema object without \"type\"".to_string())?;
                let Json::String(ty) = ty else {
                    // `{"type": {...}}` or `{"type": [...]}`: the schema inside.
                    return self.parse(ty, ns, depth + 1);
                };
                match ty.as_str() {
                    "record" | "error" => self.record(obj, ns, depth),
                    "enum" => {
                        let (names, _) = self.names(obj, ns)?;
                        let symbols = strings(obj.get("symbols"), "an enum's symbols")?;
                        let default = match obj.get("default") {
                            None => None,
                            Some(Json::String(s)) if symbols.contains(s) => Some(s.clone()),
                            Some(d) => {
                                return Err(format!(
                                    "enum {}: default {d} is not one of its symbols",
                                    names.full
                                ))
                            }
                        };
                        let full = names.full.clone();
                        let id = self.add(Node::Enum {
                            names,
                            symbols,
                            default,
                        });
                        self.define(full, id)?;
                        Ok(id)
                    }
                    "fixed" => {
                        let (names, _) = self.names(obj, ns)?;
                        let size = obj
                            .get("size")
                            .and_then(Json::as_u64)
                            .and_then(|s| usize::try_from(s).ok())
                            .filter(|&s| s <= i32::MAX as usize)
                            .ok_or_else(|| format!("fixed {}: no valid size", names.full))?;
                        let full = names.full.clone();
                        let id = self.add(Node::Fixed { names, size });
                        self.define(full, id)?;
                        if let Some(d) = decimal(obj, Some(size)) {
                            self.decimals.insert(id, d);
                        }
                        Ok(id)
                    }
                    "array" => {
                        let items = obj
                            .get("items")
                            .ok_or_else(|| "an array without \"items\"".to_string())?;
                        let items = self.parse(items, ns, depth + 1)?;
                        Ok(self.add(Node::Array(items)))
                    }
                    "map" => {
                        let values = obj
                            .get("values")
                            .ok_or_else(|| "a map without \"values\"".to_string())?;
                        let values = self.parse(values, ns, depth + 1)?;
                        Ok(self.add(Node::Map(values)))
                    }
                    // A primitive with attributes (a logical type, say), or a named type.
                    name => {
                        let id = self.parse(&Json::String(name.to_string()), ns, depth + 1)?;
                        if name == "bytes" {
                            if let Some(d) = decimal(obj, None) {
                                self.decimals.insert(id, d);
                            }
                        }
                        Ok(id)
                    }
                }
            }
            other => Err(format!("{other} is not a schema")),
        }
    }

    /// A named type's names, and its namespace (for the types inside it).
    fn names(
        &self,
        obj: &serde_json::Map<String, Json>,
        ns: &str,
    ) -> Result<(Names, String), String> {
        let name = obj
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| "a named type without a name".to_string())?;
        let space = match obj.get("namespace") {
            Some(Json::String(s)) => s.as_str(),
            Some(Json::Null) | None => ns,
            Some(other) => return Err(format!("namespace {other} is not a string")),
        };
        let full = full_name(name, space);
        let inner = full.rsplit_once('.').map_or("", |(s, _)| s).to_string();
        let aliases = strings(obj.get("aliases"), "aliases")?
            .iter()
            .map(|a| full_name(a, &inner))
            .collect();
        Ok((Names { full, aliases }, inner))
    }

    fn define(&mut self, full: String, id: NodeId) -> Result<(), String> {
        if primitive(&full).is_some() {
            return Err(format!("{full} redefines a primitive type"));
        }
        if self.named.insert(full.clone(), id).is_some() {
            return Err(format!("{full} is defined twice"));
        }
        Ok(())
    }

    fn record(
        &mut self,
        obj: &serde_json::Map<String, Json>,
        ns: &str,
        depth: usize,
    ) -> Result<NodeId, String> {
        let (names, inner) = self.names(obj, ns)?;
        let full = names.full.clone();
        // Defined before its fields are parsed: a field may refer to the record itself.
        let id = self.add(Node::Record {
            names,
            fields: Vec::new(),
        });
        self.define(full.clone(), id)?;
        let Some(Json::Array(defs)) = obj.get("fields") else {
            return Err(format!("record {full}: no fields array"));
        };
        let mut fields = Vec::with_capacity(defs.len());
        for def in defs {
            let name = def
                .get("name")
                .and_then(Json::as_str)
                .ok_or_else(|| format!("record {full}: a field without a name"))?;
            if fields.iter().any(|f: &Field| f.name == name) {
                return Err(format!("record {full}: field {name} is declared twice"));
            }
            let ty = def
                .get("type")
                .ok_or_else(|| format!("record {full}: field {name} has no type"))?;
            let ty = self.parse(ty, &inner, depth + 1)?;
            fields.push(Field {
                name: name.to_string(),
                aliases: strings(def.get("aliases"), "a field's aliases")?,
                ty,
                default: def.get("default").cloned(),
            });
        }
        if let Node::Record { fields: f, .. } = &mut self.nodes[id] {
            *f = fields;
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Schema, String> {
        Schema::parse(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn names_namespaces_aliases_and_recursion() {
        let s = parse(
            r#"{"type":"record","name":"List","namespace":"a.b","aliases":["Old","x.Older"],
            "fields":[{"name":"v","type":{"type":"long","logicalType":"timestamp-millis"}},
              {"name":"next","type":["null","List"],"default":null,"aliases":["tail"]},
              {"name":"e","type":{"type":"enum","name":"c.E","symbols":["A","B"],"default":"B"}},
              {"name":"e2","type":"c.E"},
              {"name":"f","type":{"type":"fixed","name":"F","size":4}},
              {"name":"f2","type":"a.b.F"}]}"#,
        )
        .unwrap();
        let Node::Record { names, fields } = s.node(s.root) else {
            panic!()
        };
        assert_eq!(names.full, "a.b.List");
        assert_eq!(names.short(), "List");
        assert_eq!(names.aliases, ["a.b.Old", "x.Older"]);
        assert!(matches!(s.node(fields[0].ty), Node::Long));
        let Node::Union(branches) = s.node(fields[1].ty) else {
            panic!()
        };
        assert_eq!(branches[1], s.root);
        assert_eq!(fields[1].aliases, ["tail"]);
        assert_eq!(fields[1].default, Some(Json::Null));
        assert_eq!(fields[2].ty, fields[3].ty);
        let Node::Enum { names, default, .. } = s.node(fields[2].ty) else {
            panic!()
        };
        assert_eq!(
            (names.full.as_str(), default.as_deref()),
            ("c.E", Some("B"))
        );
        assert_eq!(fields[4].ty, fields[5].ty);
    }

    #[test]
    fn decimals_valid_or_ignored() {
        let s = parse(
            r#"{"type":"record","name":"R","fields":[
            {"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
            {"name":"b","type":{"type":"bytes","logicalType":"decimal","precision":2,"scale":3}},
            {"name":"c","type":{"type":"fixed","name":"F","size":2,"logicalType":"decimal",
              "precision":4}},
            {"name":"d","type":{"type":"fixed","name":"G","size":2,"logicalType":"decimal",
              "precision":5}},
            {"name":"e","type":{"type":"bytes","logicalType":"decimal"}}]}"#,
        )
        .unwrap();
        let Node::Record { fields, .. } = s.node(s.root) else {
            panic!()
        };
        let d = |i: usize| s.decimals.get(&fields[i].ty).copied();
        assert_eq!(
            [d(0), d(1), d(2), d(3), d(4)],
            [Some((9, 2)), None, Some((4, 0)), None, None]
        );
    }

    #[test]
    fn bad_schemas_say_why() {
        for (text, why) in [
            (r#""Nope""#, "unknown type"),
            (r#"[["int"]]"#, "union directly"),
            (r#"{"type":"fixed","name":"F"}"#, "size"),
            (
                r#"{"type":"enum","name":"E","symbols":["A"],"default":"Z"}"#,
                "not one of",
            ),
            (
                r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},
                {"name":"a","type":"int"}]}"#,
                "twice",
            ),
            (r#"{"type":"array"}"#, "items"),
            (r#"5"#, "not a schema"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
