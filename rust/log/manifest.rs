//! The manifest a reader honours in an object store, where a write cannot rename: a partition
//! prefix written by kafkalog holds `.kafkalog-writing` while a write is under way and
//! `.kafkalog-manifest` once it is published (see `write::publish`). A reader reads
//! exactly the files a manifest lists, at their listed sizes; nothing of a prefix with a marker
//! and no manifest; and a plain copy of a broker's directory (neither) as listed.

use crate::error::{Error, Result};
use crate::storage::{Entry, Storage};
use std::path::Path;

/// The marker of a write under way.
pub const WRITING: &str = ".kafkalog-writing";
/// The list of what a write published.
pub const MANIFEST: &str = ".kafkalog-manifest";
const MANIFEST_HEADER: &str = "kafkalog-partition-manifest 1";

/// A manifest's text: a header line, the number of files, then `<name> <size>` per file.
pub fn manifest_text(files: &[(String, u64)]) -> String {
    manifest_text_with_marks(files, &[])
}

/// A manifest's text with writers' marks after the files (a streaming sink's: see
/// `arrow::append`): `marks <count>`, then `<writer id> <sequence>` per writer. Published in
/// the same put as the files, they say which appends the listed files hold.
pub fn manifest_text_with_marks(files: &[(String, u64)], marks: &[(String, i64)]) -> String {
    let mut out = format!("{MANIFEST_HEADER}\n{}\n", files.len());
    for (name, size) in files {
        out.push_str(&format!("{name} {size}\n"));
    }
    if !marks.is_empty() {
        out.push_str(&format!("marks {}\n", marks.len()));
        for (id, sequence) in marks {
            out.push_str(&format!("{id} {sequence}\n"));
        }
    }
    out
}

/// Parses a manifest, refusing anything that is not one (a name that is not a plain file
/// name, a wrong count).
pub fn parse_manifest(text: &str) -> Result<Vec<(String, u64)>> {
    parse_manifest_with_marks(text).map(|(files, _)| files)
}

/// A manifest's files and writers' marks (see [`manifest_text_with_marks`]).
#[allow(clippy::type_complexity)]
pub fn parse_manifest_with_marks(text: &str) -> Result<(Vec<(String, u64)>, Vec<(String, i64)>)> {
    let bad = |what: &str| Error::corrupt(format!("not a kafkalog partition manifest: {what}"));
    let mut lines = text.lines();
    if lines.next() != Some(MANIFEST_HEADER) {
        return Err(bad("unknown header"));
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or_else(|| bad("no file count"))?;
    let mut files = Vec::new();
    for _ in 0..count {
        let line = lines
            .next()
            .ok_or_else(|| bad("the file count does not match"))?;
        let (name, size) = line
            .split_once(' ')
            .ok_or_else(|| bad("a malformed line"))?;
        let plain = !name.is_empty()
            && name != "."
            && name != ".."
            && !name.contains(['/', '\\'])
            && !name.starts_with(".kafkalog-");
        if !plain {
            return Err(bad("a name that is not a file of the partition"));
        }
        let size = size.parse().map_err(|_| bad("a malformed size"))?;
        files.push((name.to_string(), size));
    }
    let mut marks = Vec::new();
    if let Some(line) = lines.next() {
        let n: usize = line
            .strip_prefix("marks ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad("the file count does not match"))?;
        for _ in 0..n {
            let (id, sequence) = lines
                .next()
                .and_then(|l| l.split_once(' '))
                .ok_or_else(|| bad("a malformed mark"))?;
            let sequence = sequence.parse().map_err(|_| bad("a malformed mark"))?;
            marks.push((id.to_string(), sequence));
        }
        if lines.next().is_some() {
            return Err(bad("lines after the marks"));
        }
    }
    Ok((files, marks))
}

/// What a reader may read of a listed partition directory (see the module documentation):
/// the listing itself for a plain copy; the files the manifest lists for a published write;
/// nothing for a write not yet published.
pub fn published(storage: &dyn Storage, dir: &Path, listed: Vec<Entry>) -> Result<Vec<Entry>> {
    let has = |name: &str| {
        listed
            .iter()
            .any(|e| !e.is_dir && e.path.file_name().is_some_and(|n| n == name))
    };
    if has(MANIFEST) {
        let path = dir.join(MANIFEST);
        let Some(bytes) = storage.read(&path)? else {
            return Ok(Vec::new()); // removed since the listing: being rewritten
        };
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| Error::corrupt("the manifest is not UTF-8").with_path(&path))?;
        let files = parse_manifest(text).map_err(|e| e.with_path(&path))?;
        return Ok(files
            .into_iter()
            .map(|(name, size)| Entry {
                path: dir.join(name),
                is_dir: false,
                size,
            })
            .collect());
    }
    if has(WRITING) {
        return Ok(Vec::new());
    }
    Ok(listed)
}
