//! Schema Registry's storage topic read from paths into a [`Registry`]: what the registry's
//! store reader consumes at startup (`_schemas`, its one partition), found as any read finds
//! files (a log directory holding `_schemas-0`, the partition directory, a segment, an object
//! store or tiered-storage prefix), read in offset order up to what a consumer could fetch,
//! and folded ([`crate::values::registry`]).

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;

use crate::arrow::schema::Projection;
use crate::error::{Error, Result};
use crate::log::bounds::Bounds;
use crate::log::discover::{by_partition, SegmentFile};
use crate::log::issues::Issue;
use crate::log::visibility::Visibility;
use crate::read::files::resolve;
use crate::read::reader::ReaderBuilder;
use crate::storage::{Stat, Storage};
use crate::values::registry::Registry;

/// The storage topic's default name (Schema Registry's `kafkastore.topic`).
pub const SCHEMAS_TOPIC: &str = "_schemas";

/// The partition of `topic` under `path`: the path itself when it is a file or holds one
/// partition's segments, else the partition of that topic in the log directory.
fn topic_files(storage: &Arc<dyn Storage>, path: &Path, topic: &str) -> Result<Vec<SegmentFile>> {
    let is_file = matches!(storage.stat(path)?, Stat::File { .. });
    let (files, _notes) = resolve(storage, &[path.to_path_buf()])?;
    let groups = by_partition(files);
    if is_file || groups.len() == 1 {
        return Ok(groups.into_iter().flatten().collect());
    }
    let mut chosen: Vec<Vec<SegmentFile>> = groups
        .into_iter()
        .filter(|g| g[0].origin.topic.as_deref() == Some(topic))
        .collect();
    match chosen.len() {
        1 => Ok(chosen.pop().expect("one")),
        0 => Err(Error::invalid_argument(format!(
            "no partition of the registry's storage topic {topic:?} under {} (a log \
             directory holding {topic}-0, the partition directory, or its segments)",
            path.display()
        ))),
        n => Err(Error::invalid_argument(format!(
            "{n} partitions of {topic:?} under {}; Schema Registry's storage topic has one",
            path.display()
        ))),
    }
}

/// The registry whose storage topic `topic` (`_schemas` by default) is under `path`; with
/// what the read passed over (torn tails and the like).
pub fn registry(
    storage: &Arc<dyn Storage>,
    path: &Path,
    topic: Option<&str>,
) -> Result<(Registry, Vec<Issue>)> {
    let topic = topic.unwrap_or(SCHEMAS_TOPIC);
    let files = topic_files(storage, path, topic)?;
    // What an error names: the partition read (the path given may be a log directory).
    let what = match files.first().map(|f| (&f.origin.topic, f.origin.partition)) {
        Some((Some(t), Some(p))) if path.file_name() != Some(format!("{t}-{p}").as_ref()) => {
            format!("{} (partition {t}-{p})", path.display())
        }
        _ => path.display().to_string(),
    };
    let mut registry = Registry::new();
    let builder = ReaderBuilder::new()
        .with_storage(storage.clone())
        .with_projection(Projection::from_names(&["key", "value", "offset"])?)
        .with_bounds(Bounds {
            visibility: Visibility::Consumer,
            ..Bounds::default()
        });
    let mut reader = builder.build_files(files)?;
    for batch in reader.by_ref() {
        let batch = batch?;
        let keys = batch.column(0).as_binary::<i32>();
        let values = batch.column(1).as_binary::<i32>();
        let offsets = batch.column(2).as_primitive::<Int64Type>();
        for row in 0..batch.num_rows() {
            let key = keys.is_valid(row).then(|| keys.value(row));
            let value = values.is_valid(row).then(|| values.value(row));
            registry.feed_record(key, value, offsets.value(row));
        }
    }
    registry.check_storage_topic(&what)?;
    Ok((registry, reader.take_issues()))
}
