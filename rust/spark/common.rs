//! The options a Spark read and a Spark write both take, and the small parsers every option
//! uses: names matched in any case (as Spark matches them), booleans, integers; the paths
//! (`load(path)` or `paths`), where the bytes live (`storage.<key>`, `encryptionKeys`), and the
//! typed keys and values (`keyFormat`, `valueFormat`, `schemaRegistry`, subjects, versions,
//! messages, `onValueError`) as the core's [`ValueArgs`].

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::read::values::ValueArgs;

/// Options as Spark hands them, names lower-cased (Spark matches option names in any case,
/// and hands a Python data source its options lower-cased).
#[derive(Clone, Debug, Default)]
pub struct Raw(BTreeMap<String, String>, BTreeMap<String, String>);

impl Raw {
    /// `raw`'s names in lower case (a later duplicate in another case wins, as in Spark's
    /// case-insensitive map).
    pub fn new<K: AsRef<str>, V: AsRef<str>>(raw: impl IntoIterator<Item = (K, V)>) -> Raw {
        let mut out = Raw::default();
        for (k, v) in raw {
            let lower = k.as_ref().to_lowercase();
            out.1.insert(lower.clone(), k.as_ref().to_owned());
            out.0.insert(lower, v.as_ref().to_owned());
        }
        out
    }

    /// Option `name` (lower case) as the user spelled it (a Python data source is handed its
    /// options lower-cased by PySpark: then so).
    pub fn spelled<'a>(&'a self, name: &'a str) -> &'a str {
        self.1.get(name).map_or(name, String::as_str)
    }

    /// The options of a JSON object of strings (what the JNI and Python bindings pass).
    pub fn from_json(v: &Value) -> Result<Raw> {
        let Value::Object(o) = v else {
            return Err(Error::invalid_argument("options: not a JSON object"));
        };
        let mut out = Vec::with_capacity(o.len());
        for (k, v) in o {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            out.push((k.clone(), text));
        }
        Ok(Raw::new(out))
    }

    /// The value of option `name` (lower case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The value of option `name`, `None` when it is absent or empty (Spark's Kafka source
    /// treats an empty offsets option as absent).
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// Every option (lower-case name, value), in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether option `name` is given.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A boolean option, `default` when absent.
    pub fn flag(&self, name: &str, spelled: &str, default: bool) -> Result<bool> {
        self.get(name)
            .map_or(Ok(default), |v| parse_bool(v, spelled))
    }

    /// An integer option.
    pub fn integer(&self, name: &str) -> Result<Option<i64>> {
        self.get(name)
            .map(|v| {
                v.trim().parse::<i64>().map_err(|_| {
                    Error::invalid_argument(format!("option {name} must be an integer, not '{v}'"))
                })
            })
            .transpose()
    }

    /// A positive integer option (`minPartitions`, `targetBytes`, ...).
    pub fn positive(&self, name: &str) -> Result<Option<u64>> {
        match self.integer(name)? {
            Some(n) if n <= 0 => Err(Error::invalid_argument(format!(
                "option {name} must be positive, not {n}"
            ))),
            n => Ok(n.map(|n| n as u64)),
        }
    }
}

/// `true`/`false` (also `1`/`0`, `yes`/`no`, any case), as the option `name`.
pub fn parse_bool(value: &str, name: &str) -> Result<bool> {
    match value.trim().to_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(Error::invalid_argument(format!(
            "option {name} must be true or false, not '{value}'"
        ))),
    }
}

/// The paths a read or a write names: `load(path)`/`save(path)` (Spark's `path` option) or
/// `paths`, a JSON list. `None` when neither is given.
pub fn paths(o: &Raw) -> Result<Option<Vec<String>>> {
    if let Some(text) = o.get("paths") {
        let bad = || Error::invalid_argument(format!("paths must be a JSON list of paths: {text}"));
        let Ok(Value::Array(list)) = serde_json::from_str::<Value>(text) else {
            return Err(bad());
        };
        return list
            .iter()
            .map(|p| p.as_str().map(str::to_owned).ok_or_else(bad))
            .collect::<Result<Vec<_>>>()
            .map(Some);
    }
    Ok(o.get("path").map(|p| vec![p.to_owned()]))
}

/// The prefix of object-store (and tiered-storage) options: `storage.<key>`.
pub const STORAGE_PREFIX: &str = "storage.";

/// The storage option under which the core takes a tiered-storage encryption key (PEM text),
/// `kafkalog.encryption_key.<key id>` (`python/kafkalog/_storage.py` writes the same).
pub const ENCRYPTION_KEY_OPTION: &str = "kafkalog.encryption_key.";

/// Where the bytes live: the `storage.<key>` options (object_store's configuration keys), and
/// the keys of `encryptionKeys` (JSON `{"key id": "PEM text or a PEM file's path"}`, files read
/// here, on the driver) as the core takes them.
pub fn storage(o: &Raw) -> Result<BTreeMap<String, String>> {
    let mut out: BTreeMap<String, String> = o
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(STORAGE_PREFIX)
                .map(|k| (k.to_owned(), v.to_owned()))
        })
        .collect();
    if let Some(text) = o.non_empty("encryptionkeys") {
        let keys = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(keys)) => keys,
            _ => return Err(Error::invalid_argument(
                "encryptionKeys must be JSON such as {\"key-2024\": \"/secrets/rsm-private.pem\"}",
            )),
        };
        for (id, key) in keys {
            let text = match &key {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let pem = if text.contains("-----BEGIN") {
                text
            } else {
                let bytes = key_file(&text).map_err(|e| {
                    Error::invalid_argument(format!(
                        "encryption key '{id}': cannot read the key file: {e}"
                    ))
                })?;
                String::from_utf8_lossy(&bytes).into_owned()
            };
            out.insert(format!("{ENCRYPTION_KEY_OPTION}{id}"), pem);
        }
    }
    Ok(out)
}

/// A PEM key file's bytes: a regular file of at most [`KEY_FILE_LIMIT`] bytes (a name such as
/// `/dev/zero` or a FIFO is refused, not read without end).
fn key_file(path: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    // Checked before opening: opening a FIFO with no writer would wait for one.
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(KEY_FILE_LIMIT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > KEY_FILE_LIMIT {
        return Err(std::io::Error::other(format!(
            "larger than {KEY_FILE_LIMIT} bytes, not a PEM key"
        )));
    }
    Ok(bytes)
}

/// The most bytes a key file may have (an RSA key in PEM is a few kilobytes).
const KEY_FILE_LIMIT: u64 = 1 << 20;

/// The typed-value options, as Spark's Kafka-style sources name them: [`VALUE_OPTIONS`].
pub const VALUE_OPTIONS: [&str; 12] = [
    "keyFormat",
    "valueFormat",
    "schemaRegistry",
    "onValueError",
    "keySubject",
    "valueSubject",
    "keySubjects",
    "valueSubjects",
    "keyVersion",
    "valueVersion",
    "keyMessage",
    "valueMessage",
];

/// The formats a key or value is read as (and written as).
pub const FORMATS: [&str; 6] = ["binary", "string", "avro", "protobuf", "json", "auto"];

/// The typed keys and values the options ask for (`None`: keys and values as stored): formats,
/// `schemaRegistry` (the registry's storage topic: a log directory holding `_schemas-0`, its
/// partition, or any URI kafkalog reads), `onValueError`, `keySubject`/`valueSubject`,
/// `keySubjects`/`valueSubjects` (names separated by commas), `keyVersion`/`valueVersion`,
/// `keyMessage`/`valueMessage` (a Protobuf message's full name). Not yet resolved: the
/// registry is read by [`ValueArgs::resolve`].
pub fn values(o: &Raw) -> Result<Option<ValueArgs>> {
    let format = |name: &str, spelled: &str| -> Result<String> {
        let f = o.get(name).unwrap_or("binary").trim().to_lowercase();
        if !FORMATS.contains(&f.as_str()) {
            return Err(Error::invalid_argument(format!(
                "{spelled} must be one of {}, not '{}'",
                FORMATS.join(", "),
                o.get(name).unwrap_or_default()
            )));
        }
        Ok(f)
    };
    let key_format = format("keyformat", "keyFormat")?;
    let value_format = format("valueformat", "valueFormat")?;
    let on_value_error = o
        .get("onvalueerror")
        .unwrap_or("error")
        .trim()
        .to_lowercase();
    if on_value_error != "error" && on_value_error != "null" {
        return Err(Error::invalid_argument(format!(
            "onValueError must be \"error\" or \"null\", not '{}'",
            o.get("onvalueerror").unwrap_or_default()
        )));
    }
    let text = |name: &str| o.non_empty(name).map(|s| s.trim().to_owned());
    let subjects = |name: &str, spelled: &str| -> Result<Option<Vec<String>>> {
        let Some(text) = o.get(name) else {
            return Ok(None);
        };
        let list: Vec<String> = text
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        if list.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{spelled}: no subject named"
            )));
        }
        Ok(Some(list))
    };
    let version = |name: &str, spelled: &str| -> Result<Option<i32>> {
        let Some(text) = o.get(name) else {
            return Ok(None);
        };
        match text.trim().parse::<i32>() {
            Ok(v) if v > 0 => Ok(Some(v)),
            _ => Err(Error::invalid_argument(format!(
                "{spelled} must be a version number (1, 2, ...), not '{text}'"
            ))),
        }
    };
    let args = ValueArgs {
        key_subject: text("keysubject"),
        value_subject: text("valuesubject"),
        key_subjects: subjects("keysubjects", "keySubjects")?,
        value_subjects: subjects("valuesubjects", "valueSubjects")?,
        key_version: version("keyversion", "keyVersion")?,
        value_version: version("valueversion", "valueVersion")?,
        key_message: text("keymessage"),
        value_message: text("valuemessage"),
        schemas_path: text("schemaregistry"),
        on_value_error,
        key_format,
        value_format,
        ..ValueArgs::default()
    };
    if !args.any() {
        return Ok(None);
    }
    let schema_formats = ["avro", "protobuf", "json", "auto"];
    if (schema_formats.contains(&args.key_format.as_str())
        || schema_formats.contains(&args.value_format.as_str()))
        && args.schemas_path.is_none()
    {
        return Err(Error::invalid_argument(
            "keyFormat/valueFormat avro, protobuf, json or auto need the option \
             schemaRegistry: the registry's storage topic (a log directory holding _schemas-0, \
             or its URI)",
        ));
    }
    Ok(Some(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> Raw {
        Raw::new(pairs.iter().copied())
    }

    #[test]
    fn names_match_in_any_case_and_booleans_as_spark_writes_them() {
        let o = raw(&[("IncludeHeaders", "TRUE"), ("checkCrc", " no ")]);
        assert!(o.flag("includeheaders", "includeHeaders", false).unwrap());
        assert!(!o.flag("checkcrc", "checkCrc", true).unwrap());
        let err = raw(&[("checkCrc", "maybe")])
            .flag("checkcrc", "checkCrc", true)
            .unwrap_err();
        assert_eq!(
            err.message,
            "option checkCrc must be true or false, not 'maybe'"
        );
    }

    #[test]
    fn paths_are_one_path_or_a_json_list() {
        assert_eq!(
            paths(&raw(&[("path", "/a")])).unwrap(),
            Some(vec!["/a".into()])
        );
        assert_eq!(
            paths(&raw(&[("paths", r#"["/a", "s3://b/c"]"#), ("path", "/x")])).unwrap(),
            Some(vec!["/a".into(), "s3://b/c".into()])
        );
        assert_eq!(paths(&raw(&[])).unwrap(), None);
        for bad in ["/a", "[1]", "{\"a\": 1}"] {
            let err = paths(&raw(&[("paths", bad)])).unwrap_err();
            assert!(
                err.message
                    .starts_with("paths must be a JSON list of paths"),
                "{bad}"
            );
        }
    }

    #[test]
    fn storage_options_and_encryption_keys() {
        let dir = std::env::temp_dir().join(format!("kafkalog-spark-key-{}", std::process::id()));
        std::fs::write(&dir, "-----BEGIN PRIVATE KEY-----\nx\n").unwrap();
        let keys = format!(
            r#"{{"k1": "-----BEGIN PRIVATE KEY-----\ny\n", "k2": {:?}}}"#,
            dir.to_str().unwrap()
        );
        let o = raw(&[
            ("storage.aws_region", "eu-west-1"),
            ("encryptionKeys", &keys),
        ]);
        let s = storage(&o).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(s["aws_region"], "eu-west-1");
        assert!(s["kafkalog.encryption_key.k1"].contains("\ny\n"));
        assert!(s["kafkalog.encryption_key.k2"].contains("\nx\n"));
        let err = storage(&raw(&[("encryptionKeys", "[1]")])).unwrap_err();
        assert!(err.message.starts_with("encryptionKeys must be JSON"));
        let err = storage(&raw(&[("encryptionKeys", r#"{"k": "/nowhere/key.pem"}"#)])).unwrap_err();
        assert!(err
            .message
            .starts_with("encryption key 'k': cannot read the key file"));
    }

    #[test]
    fn typed_values_of_spark_options() {
        assert_eq!(values(&raw(&[("keyFormat", "binary")])).unwrap(), None);
        let v = values(&raw(&[
            ("keyFormat", "String"),
            ("valueFormat", "avro"),
            ("schemaRegistry", "/logs"),
            ("onValueError", "null"),
            ("valueSubjects", "a, b,,"),
            ("keyVersion", "3"),
            ("valueMessage", "shop.Order"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (v.key_format.as_str(), v.value_format.as_str()),
            ("string", "avro")
        );
        assert_eq!(v.schemas_path.as_deref(), Some("/logs"));
        assert_eq!(v.on_value_error, "null");
        assert_eq!(v.value_subjects, Some(vec!["a".into(), "b".into()]));
        assert_eq!(v.key_version, Some(3));
        assert_eq!(v.value_message.as_deref(), Some("shop.Order"));
        for (options, text) in [
            (
                &[("valueFormat", "xml")][..],
                "valueFormat must be one of binary, string",
            ),
            (
                &[("valueFormat", "avro")][..],
                "need the option schemaRegistry",
            ),
            (
                &[("keyFormat", "string"), ("onValueError", "skip")][..],
                "onValueError must be \"error\" or \"null\", not 'skip'",
            ),
            (
                &[("keyFormat", "string"), ("keySubjects", " , ")][..],
                "keySubjects: no subject",
            ),
            (
                &[("keyFormat", "string"), ("keyVersion", "0")][..],
                "keyVersion must be a version",
            ),
        ] {
            let err = values(&raw(options)).unwrap_err();
            assert!(err.message.contains(text), "{}", err.message);
        }
    }
}
