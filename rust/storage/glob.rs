//! Paths with glob characters (`*`, `?`, `[...]`, per path component, as a shell matches them),
//! expanded through any [`Storage`]: `s3://bucket/kafka-logs/orders-*` lists
//! `s3://bucket/kafka-logs` and keeps the children whose names match.

use super::{Stat, Storage};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Whether a path has glob characters.
pub fn is_glob(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

/// The paths matching `path`, sorted; `path` itself when it has no glob characters. A
/// pattern that matches nothing is a `NotFound` I/O error naming it.
pub fn expand(storage: &dyn Storage, path: &Path) -> Result<Vec<PathBuf>> {
    if !is_glob(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    let text = path.to_string_lossy();
    let parts: Vec<&str> = text.split('/').collect();
    let first = parts
        .iter()
        .position(|p| p.contains(['*', '?', '[']))
        .unwrap_or(parts.len());
    let base = parts[..first].join("/");
    let base = match base.as_str() {
        "" if text.starts_with('/') => "/".to_string(),
        "" => ".".to_string(),
        _ => base,
    };
    let mut found = vec![PathBuf::from(base)];
    for part in parts[first..].iter().filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        if part.contains(['*', '?', '[']) {
            let pattern = glob::Pattern::new(part).map_err(|e| {
                Error::invalid_argument(format!("{}: bad glob pattern: {e}", path.display()))
            })?;
            for dir in &found {
                if !matches!(storage.stat(dir)?, Stat::Dir) {
                    continue;
                }
                for entry in storage.list(dir)? {
                    let name = entry.path.file_name().map(|n| n.to_string_lossy());
                    if name.is_some_and(|n| pattern.matches(&n)) {
                        next.push(entry.path);
                    }
                }
            }
        } else {
            for dir in &found {
                let child = dir.join(part);
                if !matches!(storage.stat(&child)?, Stat::Missing) {
                    next.push(child);
                }
            }
        }
        found = next;
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        let err = std::io::Error::new(std::io::ErrorKind::NotFound, "no file matches");
        return Err(Error::io_error(err).with_path(path));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Local;

    #[test]
    fn globs_match_per_component() {
        let logs = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/logs");
        let names = |pattern: &str| -> Vec<String> {
            expand(&Local, &logs.join(pattern))
                .unwrap()
                .iter()
                .map(|p| p.strip_prefix(&logs).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(names("orders-*"), ["orders-0", "orders-1"]);
        assert_eq!(names("*-1"), ["clicks-1", "orders-1"]);
        assert_eq!(
            names("orders-[0]/*.log"),
            [
                "orders-0/00000000000000000000.log",
                "orders-0/00000000000000000015.log"
            ]
        );
        assert_eq!(names("users-0"), ["users-0"]);
        let missing = expand(&Local, &logs.join("nope-*")).unwrap_err();
        assert!(missing.is_not_found(), "{missing}");
    }
}
