//! The fields of a JSON request from the Java side, with errors naming the field.

use super::errors::{bad_request, Failure};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A request: a JSON object.
pub(super) type Request = Map<String, Value>;

/// Parses a request.
pub(super) fn parse(text: &str) -> Result<Request, Failure> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(bad_request("not a JSON object")),
        Err(e) => Err(bad_request(e)),
    }
}

/// An optional integer.
pub(super) fn opt_i64(v: Option<&Value>, name: &str) -> Result<Option<i64>, Failure> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| bad_request(format!("{name} is not an integer"))),
    }
}

/// An optional non-negative integer.
pub(super) fn opt_u64(v: Option<&Value>, name: &str) -> Result<Option<u64>, Failure> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| bad_request(format!("{name} is not a non-negative integer"))),
    }
}

/// An optional string.
pub(super) fn opt_str<'a>(v: Option<&'a Value>, name: &str) -> Result<Option<&'a str>, Failure> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad_request(format!("{name} is not a string"))),
    }
}

/// A boolean, false when absent.
pub(super) fn flag(r: &Request, name: &str) -> Result<bool, Failure> {
    match r.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad_request(format!("{name} is not a boolean"))),
    }
}

/// An array (empty when absent).
pub(super) fn array<'a>(r: &'a Request, name: &str) -> Result<&'a [Value], Failure> {
    match r.get(name) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(bad_request(format!("{name} is not an array"))),
    }
}

/// The elements of a JSON array of a fixed length.
pub(super) fn tuple<'a>(v: &'a Value, len: usize, name: &str) -> Result<&'a [Value], Failure> {
    match v {
        Value::Array(a) if a.len() == len => Ok(a),
        _ => Err(bad_request(format!("{name}: not an array of {len}"))),
    }
}

/// A map of strings (the storage options).
pub(super) fn string_map(r: &Request, name: &str) -> Result<BTreeMap<String, String>, Failure> {
    match r.get(name) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Ok((k.clone(), other.to_string())),
            })
            .collect(),
        Some(_) => Err(bad_request(format!("{name} is not an object"))),
    }
}
