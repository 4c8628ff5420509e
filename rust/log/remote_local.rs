//! A partition whose old segments are in a tiered-storage bucket and whose recent ones are in a
//! broker's directory, read as one log: the broker serves offsets from its local log from the
//! local log start offset on, and from remote storage below it. So remote segments from the
//! first local segment's base offset on are left out, and one that crosses it ends there.

use crate::error::Result;
use crate::format::segment::first_entry_reaching;
use crate::log::discover::SegmentFile;
use crate::log::origin::Origin;
use crate::log::position::seek_position;
use crate::storage::Storage;
use std::collections::{HashMap, HashSet};

/// `files` (in reading order) with each partition that has both remote and local segments
/// made one offset-ordered run: its remote segments below the local log start offset, then its
/// local ones, where the partition first appears. Other files keep their order.
pub fn merge_remote_and_local(
    storage: &dyn Storage,
    files: Vec<SegmentFile>,
) -> Result<Vec<SegmentFile>> {
    let known = |o: &Origin| o.topic.is_some() && o.partition.is_some();
    let mut kinds: HashMap<Origin, (bool, bool)> = HashMap::new();
    for f in files.iter().filter(|f| known(&f.origin)) {
        let k = kinds.entry(f.origin.clone()).or_default();
        if f.is_tiered() {
            k.0 = true;
        } else {
            k.1 = true;
        }
    }
    let mixed: HashSet<Origin> = kinds
        .into_iter()
        .filter(|(_, (r, l))| *r && *l)
        .map(|(o, _)| o)
        .collect();
    if mixed.is_empty() {
        return Ok(files);
    }
    let mut out = Vec::with_capacity(files.len());
    let mut done: HashSet<Origin> = HashSet::new();
    for f in &files {
        if !mixed.contains(&f.origin) {
            out.push(f.clone());
            continue;
        }
        if !done.insert(f.origin.clone()) {
            continue;
        }
        let mut remote: Vec<SegmentFile> = Vec::new();
        let mut local: Vec<SegmentFile> = Vec::new();
        for g in files.iter().filter(|g| g.origin == f.origin) {
            if g.is_tiered() {
                remote.push(g.clone());
            } else {
                local.push(g.clone());
            }
        }
        remote.sort_by_key(|g| g.base_offset);
        let local_start = local.iter().filter_map(|g| g.base_offset).min();
        for mut r in remote {
            let (Some(base), Some(start)) = (r.base_offset, local_start) else {
                out.push(r);
                continue;
            };
            if base >= start {
                continue;
            }
            // Crossing the local log start: end where the local log begins.
            let end = seek_position(storage, &r.path, base, start, &mut Vec::new())?;
            let mut object = storage.open(&r.path)?;
            let len = object.len();
            let exact = first_entry_reaching(len, end, start, |range| {
                crate::storage::read_range(object.as_mut(), range)
            })?;
            if exact.is_some() {
                r.end = exact;
                r.size = None;
            }
            out.push(r);
        }
        out.extend(local);
    }
    Ok(out)
}
