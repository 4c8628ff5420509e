//! A partition directory written on a local disk (staged beside it, renamed into place) or
//! under an object-store prefix (uploaded, published by a manifest), behind one face, with the
//! storage options a write takes: the store's own keys, and the writer's lease
//! (`kafkalog.lease_seconds`, see [`crate::write::lease`]), which is the core's. `kafkalog.write`
//! (`rust/python/writer.rs`) and Spark's writes (`rust/spark/writing.rs`) write through it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;

use crate::error::{Error, Result};
use crate::storage::{Local, Router, Storage};
use crate::write::lease::{DEFAULT_LEASE, LEASE_OPTION};
use crate::write::publish::ObjectStoreWriter;
use crate::write::writer::{PartitionWriter, Summary, WriteOptions};

/// One partition being written. Dropping it unfinished leaves nothing behind.
pub enum PartitionTarget {
    /// A local directory.
    Local(Box<PartitionWriter>),
    /// An object-store prefix.
    Remote(Box<ObjectStoreWriter>),
}

impl PartitionTarget {
    /// Starts writing the partition directory `path` (local, or an object-store URI with
    /// `storage_options`).
    pub fn create(
        path: &Path,
        options: WriteOptions,
        storage_options: Option<BTreeMap<String, String>>,
    ) -> Result<Self> {
        if crate::storage::is_local(path) {
            let local = Local::local_path_of(path);
            return Ok(PartitionTarget::Local(Box::new(PartitionWriter::create(
                &local, options,
            )?)));
        }
        let (storage, lease) = remote(storage_options)?;
        Ok(PartitionTarget::Remote(Box::new(
            ObjectStoreWriter::create_leased(storage, path, options, lease)?,
        )))
    }

    /// Encodes and appends the rows of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            PartitionTarget::Local(w) => w.write(batch),
            PartitionTarget::Remote(w) => w.write(batch),
        }
    }

    /// Completes the partition and makes it appear.
    pub fn finish(self) -> Result<Summary> {
        match self {
            PartitionTarget::Local(w) => w.finish(),
            PartitionTarget::Remote(w) => w.finish(),
        }
    }
}

/// The writer's lease taken out of the storage options, which keep the store's own keys.
pub fn split_lease(
    storage_options: Option<BTreeMap<String, String>>,
) -> Result<(Option<BTreeMap<String, String>>, Duration)> {
    let Some(mut options) = storage_options else {
        return Ok((None, DEFAULT_LEASE));
    };
    let lease = match options.remove(LEASE_OPTION) {
        None => DEFAULT_LEASE,
        Some(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{LEASE_OPTION} is a positive number of seconds, not {text:?}"
                ))
            })?,
    };
    Ok((Some(options), lease))
}

/// The object store a write's staging and publishing goes to (plain objects, no tiered
/// layer), and the writer's lease.
pub fn remote(
    storage_options: Option<BTreeMap<String, String>>,
) -> Result<(Arc<dyn Storage>, Duration)> {
    let (options, lease) = split_lease(storage_options)?;
    Ok((
        Arc::new(Router::new(
            options.unwrap_or_default().into_iter().collect(),
        )),
        lease,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_is_the_cores_option() {
        let options = BTreeMap::from([
            (LEASE_OPTION.to_owned(), "2.5".to_owned()),
            ("aws_region".to_owned(), "x".to_owned()),
        ]);
        let (rest, lease) = split_lease(Some(options)).unwrap();
        assert_eq!(lease, Duration::from_millis(2500));
        assert_eq!(rest.unwrap().keys().collect::<Vec<_>>(), ["aws_region"]);
        assert_eq!(split_lease(None).unwrap(), (None, DEFAULT_LEASE));
        let bad = BTreeMap::from([(LEASE_OPTION.to_owned(), "-1".to_owned())]);
        assert!(split_lease(Some(bad))
            .unwrap_err()
            .message
            .contains("positive"));
    }
}
