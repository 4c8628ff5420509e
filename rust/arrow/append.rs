//! Appending records to a partition directory as a broker appends a producer's batches: each
//! new batch gets the next offsets (its base offset rewritten; a v2 batch's CRC does not cover
//! it, so nothing is re-encoded), goes at the end of the active segment until that reaches
//! `segment_bytes`, then into new segments, with their indexes.
//!
//! The result is published in one atomic step, as every write is: the new directory is built
//! beside the old one (closed segments hard-linked, never copied; the active segment copied
//! and extended) and swapped in under the partition's lock, so a reader sees the directory
//! before the append or after it, never half of it. A writer may leave a mark in the same step
//! (its id and a sequence number, e.g. a streaming sink's batch id): an append whose mark is
//! already there is skipped, so a replayed micro-batch is written once.

use super::discover::discover;
use super::offsets::end_offset;
use super::scan::{for_each_entry, Access};
use super::writer::{PartitionWriter, WriteOptions};
use crate::arrow::encoder::Encoded;
use crate::error::{Error, Result};
use crate::format::batch::{BatchDecoder, CrcPolicy, DecodeOptions};
use crate::format::segment::segment_file_name;
use crate::storage::{Local, Stat, Storage};
use std::path::{Path, PathBuf};

/// The file in a partition directory that holds writers' marks: one line `<id> <sequence>`
/// per writer. Kafka ignores files it does not know in a partition directory.
pub const WRITER_MARKS: &str = ".kafkalog-writers";

/// How an append writes into an existing partition directory: the topic configs that decide
/// segment rolling and index spacing, and durability.
#[derive(Clone, Debug)]
pub struct AppendOptions {
    /// `segment.bytes`: roll to a new segment before the active one would pass this size.
    pub segment_bytes: u64,
    /// `index.interval.bytes`: log bytes between offset and time index entries.
    pub index_interval_bytes: u64,
    /// Flush files and directories to disk before the append counts as done (`fsync`).
    pub fsync: bool,
}

/// What an append did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The writer's mark was there already: nothing was written.
    pub skipped: bool,
    /// The offset of the first record appended (the log end offset before).
    pub start_offset: i64,
    /// The log end offset after.
    pub next_offset: i64,
    /// Records appended.
    pub records: u64,
    /// Batches appended.
    pub batches: u64,
    /// Bytes after the active segment's last complete batch that were left out (a torn tail,
    /// which a broker's recovery truncates the same way).
    pub truncated_bytes: u64,
}

/// Appends the v2 batches of the partition directories `staged` (in order, each in offset
/// order, as `kafkalog.write` leaves them) to the partition directory `target` (created if
/// missing). With `mark = (writer id, sequence)`, an append whose writer already marked this
/// sequence or a later one is skipped.
pub fn append_staged(
    target: &Path,
    staged: &[PathBuf],
    mark: Option<(&str, i64)>,
    options: &AppendOptions,
) -> Result<Appended> {
    if let Some((id, _)) = mark {
        if id.is_empty() || id.contains(char::is_whitespace) {
            return Err(Error::invalid_argument(format!(
                "a writer id is a non-empty word, not {id:?}"
            )));
        }
    }
    let exists = matches!(Local.stat(target)?, Stat::Dir);
    let mut writer = PartitionWriter::create(
        target,
        WriteOptions {
            segment_bytes: options.segment_bytes,
            index_interval_bytes: options.index_interval_bytes,
            overwrite: exists,
            fsync: options.fsync,
            // The existing snapshots are linked in; the copied segment's producers are not
            // followed, so a new snapshot could miss a transaction left open before it.
            producer_snapshots: false,
            ..WriteOptions::default()
        },
    )?;
    // Under the partition's lock from here on.
    let marks_path = target.join(WRITER_MARKS);
    let mut marks = match std::fs::read_to_string(&marks_path) {
        Ok(text) => parse_marks(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(e, &marks_path)),
    };
    let segments = if exists {
        discover(&Local, target)?
    } else {
        Vec::new()
    };
    let mut decoder = BatchDecoder::new(DecodeOptions {
        crc: CrcPolicy::Verify,
        max_decompressed_size: 256 << 20,
    });
    let mut next = 0i64;
    let mut truncated = 0u64;
    // The active segment, if it has room, is copied and extended; a full one is closed.
    let active = segments
        .last()
        .filter(|s| s.size.unwrap_or(u64::MAX) < options.segment_bytes && s.base_offset.is_some());
    let active_files: Vec<String> = active
        .and_then(|s| s.base_offset)
        .map(|base| {
            ["log", "index", "timeindex"]
                .iter()
                .map(|ext| segment_file_name(base, ext))
                .collect()
        })
        .unwrap_or_default();
    if exists {
        for entry in Local.list(target)? {
            let name = entry
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if entry.is_dir || name.starts_with('.') {
                continue; // the marks are rewritten; staging and lock files are not data
            }
            let of_active = active_files.contains(&name);
            if !of_active {
                writer.link_in(&entry.path)?;
            }
        }
        if let Some(last) = segments.last() {
            next = last.base_offset.unwrap_or(0);
        }
        // The log end offset: after the last batch of the last segment that has one.
        // (From each segment's last offset-index entry, not a scan of the segment.)
        let mut noted = Vec::new();
        for seg in segments.iter().rev() {
            if let Some(end) = end_offset(&Local, seg, &mut decoder, &mut noted)? {
                next = next.max(end);
                break;
            }
        }
    }
    if let Some(seg) = active {
        let base = seg.base_offset.unwrap_or(0);
        writer.start_segment(base)?;
        let scan = for_each_entry(&Local, &seg.path, 0, Access::Whole, |position, entry| {
            let info = decoder.header(entry, position)?;
            writer.append_encoded(
                entry,
                &Encoded {
                    magic: info.magic,
                    base_offset: info.base_offset,
                    last_offset: info.last_offset,
                    max_timestamp: info.max_timestamp,
                    records: info.record_count.max(0) as u32,
                    // Copied as it is: its transactions are in the `.txnindex` linked in.
                    producer_id: -1,
                    is_transactional: false,
                    control: None,
                },
            )?;
            Ok(true)
        })?;
        truncated = scan.trailing;
    }
    let mine = mark.and_then(|(id, _)| marks.iter().find(|(w, _)| w == id).map(|m| m.1));
    if let (Some((_, sequence)), Some(done)) = (mark, mine) {
        if done >= sequence {
            drop(writer); // removes the staging directory
            return Ok(Appended {
                skipped: true,
                start_offset: next,
                next_offset: next,
                records: 0,
                batches: 0,
                truncated_bytes: 0,
            });
        }
    }
    let start = next;
    let (mut records, mut batches) = (0u64, 0u64);
    let mut bytes = Vec::new();
    for dir in staged {
        for seg in discover(&Local, dir)? {
            for_each_entry(&Local, &seg.path, 0, Access::Whole, |position, entry| {
                let info = decoder.header(entry, position)?;
                if info.magic < 2 || info.is_control {
                    return Err(Error::invalid_argument(
                        "only magic 2 data batches are appended (as a producer sends them)",
                    )
                    .at(position));
                }
                let delta = info.last_offset - info.base_offset;
                bytes.clear();
                bytes.extend_from_slice(entry);
                bytes[..8].copy_from_slice(&next.to_be_bytes());
                writer.append_encoded(
                    &bytes,
                    &Encoded {
                        magic: info.magic,
                        base_offset: next,
                        last_offset: next + delta,
                        max_timestamp: info.max_timestamp,
                        records: info.record_count.max(0) as u32,
                        producer_id: info.producer_id,
                        is_transactional: info.is_transactional,
                        control: None,
                    },
                )?;
                next += delta + 1;
                records += info.record_count.max(0) as u64;
                batches += 1;
                Ok(true)
            })?;
        }
    }
    if let Some((id, sequence)) = mark {
        marks.retain(|(w, _)| w != id);
        marks.push((id.to_string(), sequence));
        let text: String = marks.iter().map(|(w, s)| format!("{w} {s}\n")).collect();
        writer.put_file(WRITER_MARKS, text.as_bytes())?;
    }
    writer.finish()?;
    Ok(Appended {
        skipped: false,
        start_offset: start,
        next_offset: next,
        records,
        batches,
        truncated_bytes: truncated,
    })
}

fn parse_marks(text: &str) -> Vec<(String, i64)> {
    text.lines()
        .filter_map(|line| {
            let (id, seq) = line.trim().split_once(' ')?;
            Some((id.to_string(), seq.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::reader::ReaderBuilder;
    use crate::arrow::writer::PartitionWriter;
    use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch};
    use std::sync::Arc;

    fn write_dir(dir: &Path, values: &[&str], base: i64) {
        let value: BinaryArray = values.iter().map(|v| Some(v.as_bytes())).collect();
        let schema = arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "value",
            arrow_schema::DataType::Binary,
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(value)]).unwrap();
        let mut options = WriteOptions {
            fsync: false,
            segment_bytes: 200,
            ..WriteOptions::default()
        };
        options.encode.base_offset = base;
        options.encode.batch_records = 2;
        let mut w = PartitionWriter::create(dir, options).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }

    fn offsets_values(dir: &Path) -> Vec<(i64, String)> {
        let reader = ReaderBuilder::new().build(dir).unwrap();
        let mut out = Vec::new();
        for b in reader {
            let b = b.unwrap();
            let offsets = b
                .column_by_name("offset")
                .unwrap()
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone();
            let values = b
                .column_by_name("value")
                .unwrap()
                .as_any()
                .downcast_ref::<BinaryArray>()
                .unwrap()
                .clone();
            for i in 0..b.num_rows() {
                out.push((
                    offsets.value(i),
                    String::from_utf8(values.value(i).to_vec()).unwrap(),
                ));
            }
        }
        out
    }

    #[test]
    fn appends_continue_the_offsets_roll_segments_and_skip_marked_replays() {
        let tmp = std::env::temp_dir().join(format!("kafkalog-append-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let target = tmp.join("t-0");
        write_dir(&target, &["a", "b", "c"], 0);
        let staged = tmp.join("s1").join("t-0");
        std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
        write_dir(&staged, &["d", "e", "f", "g", "h"], 0);
        let options = AppendOptions {
            segment_bytes: 200,
            index_interval_bytes: 64,
            fsync: false,
        };
        let done = append_staged(
            &target,
            std::slice::from_ref(&staged),
            Some(("q", 0)),
            &options,
        )
        .unwrap();
        assert_eq!(
            (done.start_offset, done.next_offset, done.records),
            (3, 8, 5)
        );
        let got = offsets_values(&target);
        let want: Vec<(i64, String)> = "abcdefgh"
            .chars()
            .enumerate()
            .map(|(i, c)| (i as i64, c.to_string()))
            .collect();
        assert_eq!(got, want);
        let logs = std::fs::read_dir(&target)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("log".as_ref()))
            .count();
        assert!(logs >= 2, "segments roll at segment_bytes");
        // The same mark again: skipped, nothing doubled.
        let again = append_staged(&target, &[staged], Some(("q", 0)), &options).unwrap();
        assert!(again.skipped);
        assert_eq!(offsets_values(&target).len(), 8);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
