//! A field's default value (JSON in the reader schema) encoded once as the Avro binary a
//! writer would have written for it, so that a field the writer lacks is decoded from those
//! bytes by the same program steps as a field it has (`resolve.rs`).

use serde_json::Value as Json;

use crate::values::avro::schema::{Node, NodeId, Schema};

/// How deep a default's value may nest (as deep as a schema may).
const MAX_DEPTH: usize = 512;

fn zigzag(out: &mut Vec<u8>, v: i64) {
    crate::format::varint::write_varlong(out, v);
}

/// `json` (a field's default) encoded as Avro binary with type `node` of `schema`: bytes and
/// fixed from strings whose code points are bytes, a union as the first branch the value
/// matches (the specification), a record's missing fields from their own defaults.
pub(crate) fn encode_default(
    schema: &Schema,
    node: NodeId,
    json: &Json,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("nests too deep".into());
    }
    let n = schema.node(node);
    let bad = || format!("{json} is not a {}", n.describe());
    let latin1 = |s: &str| -> Result<Vec<u8>, String> {
        s.chars()
            .map(|c| u8::try_from(c as u32).map_err(|_| format!("{c:?} is not a byte")))
            .collect()
    };
    match (n, json) {
        (Node::Null, Json::Null) => {}
        (Node::Boolean, Json::Bool(b)) => out.push(u8::from(*b)),
        (Node::Int, Json::Number(x)) => {
            let v = x
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(bad)?;
            zigzag(out, i64::from(v));
        }
        (Node::Long, Json::Number(x)) => zigzag(out, x.as_i64().ok_or_else(bad)?),
        (Node::Float, Json::Number(x)) => {
            let v = x.as_f64().ok_or_else(bad)?;
            if !v.is_finite() || v.abs() > f64::from(f32::MAX) {
                return Err(bad());
            }
            out.extend((v as f32).to_le_bytes());
        }
        (Node::Double, Json::Number(x)) => out.extend(x.as_f64().ok_or_else(bad)?.to_le_bytes()),
        (Node::Bytes, Json::String(s)) => {
            let b = latin1(s)?;
            zigzag(out, b.len() as i64);
            out.extend(b);
        }
        (Node::String, Json::String(s)) => {
            zigzag(out, s.len() as i64);
            out.extend(s.as_bytes());
        }
        (Node::Fixed { size, .. }, Json::String(s)) => {
            let b = latin1(s)?;
            if b.len() != *size {
                return Err(format!("{json} is not {size} bytes"));
            }
            out.extend(b);
        }
        (Node::Enum { symbols, .. }, Json::String(s)) => {
            let i = symbols.iter().position(|x| x == s).ok_or_else(bad)?;
            zigzag(out, i as i64);
        }
        (Node::Array(items), Json::Array(values)) => {
            if !values.is_empty() {
                zigzag(out, values.len() as i64);
                for v in values {
                    encode_default(schema, *items, v, out, depth + 1)?;
                }
            }
            out.push(0);
        }
        (Node::Map(values), Json::Object(entries)) => {
            if !entries.is_empty() {
                zigzag(out, entries.len() as i64);
                for (k, v) in entries {
                    zigzag(out, k.len() as i64);
                    out.extend(k.as_bytes());
                    encode_default(schema, *values, v, out, depth + 1)?;
                }
            }
            out.push(0);
        }
        (Node::Record { fields, .. }, Json::Object(values)) => {
            for f in fields {
                let v = values
                    .get(&f.name)
                    .or(f.default.as_ref())
                    .ok_or_else(|| format!("no value for field {}", f.name))?;
                encode_default(schema, f.ty, v, out, depth + 1)?;
            }
        }
        (Node::Union(branches), _) => {
            let b = branches
                .iter()
                .position(|&b| default_matches(schema.node(b), json))
                .ok_or_else(|| format!("{json} is none of the union's branches"))?;
            zigzag(out, b as i64);
            encode_default(schema, branches[b], json, out, depth + 1)?;
        }
        _ => return Err(bad()),
    }
    Ok(())
}

/// Whether a default `json` is a value of type `n` (by its JSON kind, as a union's default
/// picks its branch).
fn default_matches(n: &Node, json: &Json) -> bool {
    match (n, json) {
        (Node::Null, Json::Null) | (Node::Boolean, Json::Bool(_)) => true,
        (Node::Int, Json::Number(x)) => x.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
        (Node::Long, Json::Number(x)) => x.as_i64().is_some(),
        (Node::Float | Node::Double, Json::Number(_)) => true,
        (Node::Bytes | Node::String, Json::String(_)) => true,
        (Node::Fixed { size, .. }, Json::String(s)) => s.chars().count() == *size,
        (Node::Enum { symbols, .. }, Json::String(s)) => symbols.contains(s),
        (Node::Array(_), Json::Array(_)) => true,
        (Node::Map(_) | Node::Record { .. }, Json::Object(_)) => true,
        _ => false,
    }
}
