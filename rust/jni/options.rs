//! The driver's calls about options and schemas: the data source's options checked by the core
//! (`rust/spark/options.rs`, which the Python source calls too) and the read's Spark schema,
//! with typed keys and values resolved (the registry read here, once, on the driver).

use super::errors::{bad_request, Failure};
use super::json::{flag, Request};
use super::planning::{call, discover_files, storage_from};
use crate::read::values::single_topic;
use crate::spark::common::{self, Raw};
use crate::spark::options::{columns, ReadOptions};
use crate::spark::shapes;
use jni::objects::{JClass, JString};
use jni::EnvUnowned;
use serde_json::{json, Value};

fn raw_of(r: &Request) -> Result<Raw, Failure> {
    Ok(Raw::from_json(
        r.get("options")
            .ok_or_else(|| bad_request("options are missing"))?,
    )?)
}

/// `{"options": {...}, "streaming": bool}` -> the options checked
/// ([`ReadOptions::to_json`]).
pub(super) fn options(r: &Request) -> Result<Value, Failure> {
    let parsed = ReadOptions::parse(&raw_of(r)?, flag(r, "streaming")?)?;
    Ok(parsed.to_json())
}

/// A schema request: the data source's options, the columns they read, and the typed keys
/// and values they ask for (not yet resolved).
pub(super) struct Schema {
    raw: Raw,
    names: Vec<String>,
    values: Option<crate::read::values::ValueArgs>,
}

/// `{"options": {...}}`, checked.
pub(super) fn schema_request(r: &Request) -> Result<Schema, Failure> {
    let raw = raw_of(r)?;
    let names = columns(&raw)?;
    let values = common::values(&raw)?;
    Ok(Schema { raw, names, values })
}

/// `{"options": {...}}` -> `{"schema": <Spark's JSON of the StructType>, "every": <the same
/// of every column kafkalog reads>, "values": <the typed-value options resolved, or null>}`:
/// the read's columns, `key` and `value` typed as the registry says (the one topic the paths
/// hold names the default subjects).
fn schema(r: &Request) -> Result<Value, Failure> {
    let Schema { raw, names, values } = schema_request(r)?;
    let every = shapes::spark_columns(true, true);
    let Some(values) = values else {
        return Ok(json!({
            "schema": shapes::spark_schema(&names, None)?,
            "every": shapes::spark_schema(&every, None)?,
            "values": null,
        }));
    };
    let paths = common::paths(&raw)?.ok_or_else(|| {
        crate::Error::invalid_argument("give the log files to read: .load(\"/path/to/logs\")")
    })?;
    let storage = storage_from(common::storage(&raw)?);
    let (groups, _notes) = discover_files(&storage, &paths, &raw)?;
    let files: Vec<_> = groups.into_iter().flatten().collect();
    let topic = single_topic(&files);
    let (resolved, decoded) = values.resolve(&storage, &files, topic.as_deref())?;
    Ok(json!({
        "schema": shapes::spark_schema(&names, Some(&decoded))?,
        "every": shapes::spark_schema(&every, Some(&decoded))?,
        "values": resolved.to_json(),
    }))
}

/// `Native.options(String)`: see [`options`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_options<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    call(env, request, options)
}

/// `Native.schema(String)`: see [`schema`].
#[no_mangle]
pub extern "system" fn Java_kafkalog_spark_Native_schema<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
) -> JString<'local> {
    call(env, request, schema)
}
