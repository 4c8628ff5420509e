//! What every connection of the endpoint shares: the catalog, the group coordinator, where
//! each partition's next fetch starts, the server's log.

use super::catalog::Catalog;
use super::groups::Coordinator;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// Where in a partition's log: its segment's index and a byte position in it.
pub type Position = (usize, u64);

/// Where the server's log lines go.
pub type LogFn = Box<dyn FnMut(&str) + Send>;

/// Where the next fetch of a partition starts, when a fetch just ended there: a consumer
/// reading on asks for exactly that offset, and is answered without a seek.
#[derive(Default)]
pub struct Hints {
    next: Mutex<HashMap<(String, i32), (i64, Position)>>,
}

impl Hints {
    pub(super) fn get(&self, topic: &str, partition: i32, offset: i64) -> Option<(usize, u64)> {
        let next = self.next.lock().ok()?;
        next.get(&(topic.to_string(), partition))
            .filter(|(o, _)| *o == offset)
            .map(|(_, p)| *p)
    }

    pub(super) fn put(&self, topic: &str, partition: i32, offset: i64, position: (usize, u64)) {
        if let Ok(mut next) = self.next.lock() {
            next.insert((topic.to_string(), partition), (offset, position));
        }
    }
}

/// What every connection shares.
pub struct Shared {
    /// What is served.
    pub catalog: Catalog,
    /// The groups.
    pub groups: Arc<Coordinator>,
    /// The host and port clients are told.
    pub advertise: (String, u16),
    /// Next-fetch positions.
    pub hints: Hints,
    /// Each partition's largest timestamp, once asked for.
    pub max_timestamps: Mutex<HashMap<(PathBuf, i32), Option<i64>>>,
    /// Topic configuration overrides from the backup's cluster metadata.
    pub topic_configs: HashMap<String, BTreeMap<String, String>>,
    /// Told when the server closes (fetches waiting for data stop waiting).
    pub closing: Notify,
    pub(super) log: Mutex<LogFn>,
}

impl Shared {
    /// A line for the server's log.
    pub fn log(&self, line: &str) {
        if let Ok(mut log) = self.log.lock() {
            log(line);
        }
    }
}
