//! The fold: records of one internal topic, fed in log order, into the table a broker would
//! load from them (see the folder's module documentation for the tables).

use crate::error::{Error, Result};
use crate::format::internal::schema::struct_json;
use crate::format::internal::{self as internal, DecodeError, Parsed};
use crate::internal::cluster_metadata::RecordRows;
use crate::internal::consumer_offsets::GroupLog;
use crate::internal::input::{rows, FoldIssue, FoldOptions, Kind, Row};
use crate::internal::remote_log_metadata::{RemoteLog, RemoteSegmentState};
use crate::internal::transaction_state::TransactionLog;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use std::path::{Path, PathBuf};

/// A fold of one internal topic's records into a table.
pub struct Fold {
    kind: Kind,
    options: FoldOptions,
    issues: Vec<FoldIssue>,
    latest_timestamp: Option<i64>,
    groups: GroupLog,
    transactions: TransactionLog,
    records: RecordRows,
    remote: RemoteLog,
    /// The segment files (base offset, path) of the partition being fed, to name the file of
    /// an error.
    files: Vec<(i64, PathBuf)>,
}

impl Fold {
    /// An empty fold for the table `kind`.
    pub fn new(kind: Kind, options: FoldOptions) -> Fold {
        Fold {
            kind,
            options,
            issues: Vec::new(),
            latest_timestamp: None,
            groups: GroupLog::default(),
            transactions: TransactionLog::default(),
            records: RecordRows::default(),
            remote: RemoteLog::default(),
            files: Vec::new(),
        }
    }

    /// The segment files (base offset, path) of the partition fed next: an error or issue
    /// names the one holding its offset.
    pub fn set_files(&mut self, mut files: Vec<(i64, PathBuf)>) {
        files.sort();
        self.files = files;
    }

    fn file_of<'p>(&'p self, offset: i64, path: Option<&'p Path>) -> Option<&'p Path> {
        self.files
            .iter()
            .rev()
            .find(|(base, _)| *base <= offset)
            .map(|(_, p)| p.as_path())
            .or(path)
    }

    /// Notes a data partition's log end offset, for the lag of the groups' commits on it.
    pub fn set_log_end(&mut self, topic: &str, partition: i32, log_end: i64) {
        self.groups
            .log_ends
            .insert((topic.to_string(), partition), log_end);
    }

    /// What was passed over so far.
    pub fn issues(&self) -> &[FoldIssue] {
        &self.issues
    }

    /// What was passed over so far; leaves the list empty.
    pub fn take_issues(&mut self) -> Vec<FoldIssue> {
        std::mem::take(&mut self.issues)
    }

    /// Folds one batch of records, read from `path` when they came from a file.
    pub fn feed(&mut self, batch: &RecordBatch, path: Option<&Path>) -> Result<()> {
        for row in rows(batch)? {
            if let Some(t) = row.source.timestamp {
                self.latest_timestamp = Some(self.latest_timestamp.map_or(t, |l| l.max(t)));
            }
            let outcome = match self.kind {
                Kind::ConsumerOffsets | Kind::ConsumerGroups => {
                    self.groups.record(self.kind, self.options.history, &row)
                }
                Kind::Transactions => self.transactions.record(&row),
                Kind::ClusterMetadata | Kind::RemoteLogMetadata => self.framed_record(&row),
            };
            if matches!(outcome, Ok(None)) {
                continue;
            }
            // The file is looked up only for what is reported.
            let file = self.file_of(row.source.offset, path).map(Path::to_path_buf);
            let path = file.as_deref();
            match outcome {
                Ok(None) => {}
                Ok(Some(unknown)) => self.issue(&row, path, unknown, false),
                Err((what, e)) => {
                    let message = format!(
                        "record at offset {} does not decode as {what}: {}",
                        row.source.offset, e
                    );
                    if !self.options.skip_corrupt {
                        let mut err = Error::corrupt(message).with_offset(row.source.offset);
                        if let Some(p) = row.position {
                            err = err.at(p);
                        }
                        if let Some(path) = path {
                            err = err.with_path(path);
                        }
                        return Err(err);
                    }
                    if matches!(self.kind, Kind::ClusterMetadata)
                        || (self.kind == Kind::RemoteLogMetadata && self.options.history)
                    {
                        self.records.push(&row, None, None, None);
                    }
                    self.issue(&row, path, message, true);
                }
            }
        }
        Ok(())
    }

    fn issue(&mut self, row: &Row<'_>, path: Option<&Path>, message: String, corrupt: bool) {
        self.issues.push(FoldIssue {
            message,
            path: path.map(Path::to_path_buf),
            position: row.position,
            offset: row.source.offset,
            key: row.key.map(<[u8]>::to_vec),
            value: row.value.map(<[u8]>::to_vec),
            corrupt,
        });
    }

    fn framed_record(&mut self, row: &Row<'_>) -> Result<Option<String>, (String, DecodeError)> {
        let metadata = self.kind == Kind::ClusterMetadata;
        let Some(value) = row.value else {
            return Ok(Some(format!(
                "record at offset {} has no value",
                row.source.offset
            )));
        };
        let what = if metadata {
            "a KRaft metadata record"
        } else {
            "a remote log metadata record"
        };
        let parsed = if metadata {
            internal::metadata_record(value)
        } else {
            internal::remote_log_metadata_record(value)
        }
        .map_err(|e| (what.to_string(), e))?;
        let type_id = internal::framed_type(value).map(|t| t as i16);
        match parsed {
            Parsed::Unknown(why) => {
                if metadata || self.options.history {
                    self.records.push(row, type_id, None, None);
                }
                Ok(Some(why))
            }
            Parsed::Known(r) => {
                if metadata || self.options.history {
                    let mut json = String::new();
                    struct_json(&mut json, &r.data);
                    self.records
                        .push(row, type_id, Some((r.message.name, r.version)), Some(json));
                }
                if !metadata {
                    self.remote.apply(&r.data, row.source);
                }
                Ok(None)
            }
        }
    }

    /// Each remote segment's latest state folded so far (of `__remote_log_metadata`).
    pub fn remote_segment_states(&self) -> Vec<RemoteSegmentState> {
        self.remote.segment_states()
    }

    /// The (topic, topic id, partition)s whose remote data is being or was deleted
    /// (`RemotePartitionDeleteMetadataRecord`, any state): a broker serves none of it. Kafka
    /// keys this by topic id, so a topic created again under the same name is not affected.
    pub fn deleted_partitions(&self) -> Vec<(String, String, i32)> {
        self.remote.deleted_partitions()
    }

    /// The table.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let as_of = self.options.as_of.or(self.latest_timestamp);
        let retention = self.options.retention_ms.unwrap_or(7 * 24 * 3600 * 1000);
        let batch = match (self.kind, self.options.history) {
            (Kind::ConsumerOffsets, false) => {
                let rows: Vec<_> = std::mem::take(&mut self.groups.offsets)
                    .into_iter()
                    .map(|((g, t, p), e)| {
                        let source = e.source;
                        (g, t, p, Some(e), source)
                    })
                    .collect();
                self.groups.offsets_table(rows, false, as_of, retention)
            }
            (Kind::ConsumerOffsets, true) => {
                let rows = std::mem::take(&mut self.groups.offset_history);
                self.groups.offsets_table(rows, true, as_of, retention)
            }
            (Kind::ConsumerGroups, _) => self.groups.groups_table(),
            (Kind::Transactions, _) => self.transactions.table(),
            (Kind::ClusterMetadata, _) | (Kind::RemoteLogMetadata, true) => self.records.table(),
            (Kind::RemoteLogMetadata, false) => self.remote.table(),
        };
        batch.map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))
    }
}

/// A partition's log end offset (the offset the next record would get) from the batch listing
/// of its last segment: one past the last batch's last offset, or the segment's base offset
/// when it holds no batch (a freshly rolled segment), as a broker's log end offset.
pub fn log_end_offset(
    listing: impl Iterator<Item = Result<RecordBatch>>,
    base_offset: i64,
) -> Result<i64> {
    let mut end = base_offset;
    for batch in listing {
        let batch = batch?;
        let last = batch
            .column_by_name("lastOffset")
            .and_then(|c| c.as_primitive_opt::<Int64Type>())
            .ok_or_else(|| Error::invalid_argument("a batch listing needs a lastOffset column"))?;
        for v in last.iter().flatten() {
            end = end.max(v + 1);
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int32Type;
    use arrow_array::ArrayRef;
    use arrow_array::{BinaryArray, Int32Array, Int64Array};
    use std::sync::Arc;

    fn key(t: i16, group: &str, topic: &str, partition: i32) -> Vec<u8> {
        let mut b = t.to_be_bytes().to_vec();
        for s in [group, topic] {
            b.extend_from_slice(&(s.len() as i16).to_be_bytes());
            b.extend_from_slice(s.as_bytes());
        }
        b.extend_from_slice(&partition.to_be_bytes());
        b
    }

    fn commit(offset: i64, epoch: Option<i32>) -> Vec<u8> {
        let mut b = if epoch.is_some() { 3i16 } else { 0i16 }
            .to_be_bytes()
            .to_vec();
        b.extend_from_slice(&offset.to_be_bytes());
        if let Some(e) = epoch {
            b.extend_from_slice(&e.to_be_bytes());
        }
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&7i64.to_be_bytes());
        b
    }

    fn batch(records: &[(Vec<u8>, Option<Vec<u8>>)]) -> RecordBatch {
        let keys = BinaryArray::from_iter(records.iter().map(|(k, _)| Some(k.as_slice())));
        let values = BinaryArray::from_iter(records.iter().map(|(_, v)| v.as_deref()));
        let offsets = Int64Array::from_iter_values(0..records.len() as i64);
        let partitions = Int32Array::from_iter_values(records.iter().map(|_| 5));
        RecordBatch::try_from_iter([
            ("key", Arc::new(keys) as ArrayRef),
            ("value", Arc::new(values) as ArrayRef),
            ("offset", Arc::new(offsets) as ArrayRef),
            ("partition", Arc::new(partitions) as ArrayRef),
        ])
        .unwrap()
    }

    #[test]
    fn latest_commit_wins_and_tombstones_delete() {
        let records = vec![
            (key(1, "g", "t", 0), Some(commit(5, None))),
            (key(1, "g", "t", 0), Some(commit(9, Some(2)))),
            (key(1, "g", "t", 1), Some(commit(3, None))),
            (key(1, "g", "t", 1), None),
        ];
        let mut fold = Fold::new(Kind::ConsumerOffsets, FoldOptions::default());
        fold.set_log_end("t", 0, 12);
        fold.feed(&batch(&records), None).unwrap();
        let table = fold.finish().unwrap();
        assert_eq!(table.num_rows(), 1);
        let int = |name: &str| {
            table
                .column_by_name(name)
                .unwrap()
                .as_primitive::<Int64Type>()
                .value(0)
        };
        assert_eq!(int("offset"), 9);
        assert_eq!(int("lag"), 3);
        assert_eq!(int("sourceOffset"), 1);
        let epoch = table
            .column_by_name("leaderEpoch")
            .unwrap()
            .as_primitive::<Int32Type>();
        assert_eq!(epoch.value(0), 2);

        let mut history = Fold::new(
            Kind::ConsumerOffsets,
            FoldOptions {
                history: true,
                ..Default::default()
            },
        );
        history.feed(&batch(&records), None).unwrap();
        assert_eq!(history.finish().unwrap().num_rows(), 4);
    }

    #[test]
    fn corrupt_values_are_errors_naming_the_offset_or_issues() {
        let mut short = commit(5, None);
        short.truncate(6);
        let records = vec![(key(1, "g", "t", 0), Some(short))];
        let mut fold = Fold::new(Kind::ConsumerOffsets, FoldOptions::default());
        fold.set_files(vec![(0, PathBuf::from("/x/00.log"))]);
        let err = fold.feed(&batch(&records), None).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
        assert_eq!(err.offset, Some(0));
        assert_eq!(err.path, Some(PathBuf::from("/x/00.log")));
        let mut fold = Fold::new(
            Kind::ConsumerOffsets,
            FoldOptions {
                skip_corrupt: true,
                ..Default::default()
            },
        );
        fold.feed(&batch(&records), None).unwrap();
        assert_eq!(fold.finish().unwrap().num_rows(), 0);
        assert!(fold.issues()[0].corrupt);
    }

    #[test]
    fn log_end_of_a_listing() {
        let listing = RecordBatch::try_from_iter([(
            "lastOffset",
            Arc::new(Int64Array::from(vec![4, 9])) as ArrayRef,
        )])
        .unwrap();
        assert_eq!(log_end_offset(std::iter::once(Ok(listing)), 0).unwrap(), 10);
        assert_eq!(log_end_offset(std::iter::empty(), 42).unwrap(), 42);
    }
}
