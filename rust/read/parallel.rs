//! Reading segment files on several cores, in order.
//!
//! The files are cut, in order, into pieces: runs of whole log entries holding about one
//! output batch of records. A piece is read by the thread that then decodes it, so its bytes
//! are still in that core's cache: threads of a pool shared by the process take turns reading
//! the next piece (under a lock, which keeps pieces in file order) and decode in parallel. The
//! reader hands out the batches in piece order. Pieces rather than whole files are the unit of
//! work, so that one large segment, or a partition read while the previous one is still being
//! drained, keeps every core busy. The pool's threads live as long as the process, so the
//! memory their allocator holds is reused from one read to the next.
//!
//! The output is exactly the records, issues and errors the sequential [`LogReader`] gives, in
//! the same order (only where output batches end may differ). What decoding one piece could
//! decide differently from reading straight through is kept from happening:
//! - a piece ends only after an entry whose size field frames it; where framing fails (a
//!   corrupt size, zeros, a torn tail) the reader reads the rest of the file itself, exactly as
//!   the sequential reader does;
//! - once a piece stops (a corrupt batch under `on_corrupt="stop"`) or passes the end offset,
//!   the file's later pieces are dropped unread, and after a stop the partition's later files
//!   too.
//!
//! Memory stays bounded: at most `2 * threads` pieces (and their decoded batches) are ahead of
//! the reader. A pool thread never waits on the reader: it decodes a whole piece and hands over
//! the batches, so readers sharing the pool cannot starve each other.

use crate::error::Result;
use crate::log::bounds::Planned;
use crate::log::issues::{Issue, IssueKind};
use crate::log::origin::Origin;
use crate::read::pieces::{cut_and_decode, Cutting, Finished, Msg, Next, Shared, Slot};
use crate::read::pool::{pool, Pool};
use crate::read::reader::{LogReader, ReaderBuilder};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};

/// Reads segment files on the pool's threads; an iterator of batches in reading order.
pub struct ParallelReader {
    schema: SchemaRef,
    shared: Arc<Shared>,
    slots: Receiver<Slot>,
    pool: &'static Pool,
    /// Pieces asked of the pool and not yet taken by the reader.
    ahead: usize,
    limit: usize,
    /// Every file is cut: ask for no more.
    cut: bool,
    current: Option<Current>,
    issues: Vec<Issue>,
    done: bool,
}

enum Current {
    Piece {
        file: usize,
        origin: Origin,
        messages: Receiver<Msg>,
    },
    Rest {
        file: usize,
        origin: Origin,
        reader: Box<LogReader>,
    },
}

impl ParallelReader {
    /// Reads `files` (planned, in order) on `threads` threads of the pool, in pieces of about
    /// one output batch and at most `piece_bytes`.
    pub fn new(
        builder: ReaderBuilder,
        files: Vec<Planned>,
        issues: Vec<Issue>,
        threads: usize,
        piece_bytes: usize,
    ) -> Self {
        static READS: AtomicU64 = AtomicU64::new(0);
        let threads = threads.max(1);
        let (tx, rx) = channel();
        let shared = Shared {
            read: READS.fetch_add(1, Ordering::Relaxed),
            piece_rows: builder.batch_size(),
            builder,
            piece_bytes: piece_bytes.max(1),
            finished: Mutex::new(Finished::default()),
            cutting: Mutex::new(Cutting {
                files: files.into_iter().map(Arc::new).enumerate().collect(),
                open: None,
                done: false,
            }),
            slots: tx,
        };
        ParallelReader {
            schema: shared.builder.schema(),
            shared: Arc::new(shared),
            slots: rx,
            pool: pool(threads),
            ahead: 0,
            limit: 2 * threads,
            cut: false,
            current: None,
            issues,
            done: false,
        }
    }

    /// The schema of every batch this reader yields.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// What the reads passed over so far (torn tails, skipped batches), in file order.
    pub fn take_issues(&mut self) -> Vec<Issue> {
        std::mem::take(&mut self.issues)
    }

    /// Stops all work: nothing more is cut; pieces being decoded are dropped when done.
    fn cancel(&mut self) {
        self.current = None;
        if let Ok(mut cutting) = self.shared.cutting.lock() {
            cutting.done = true;
        }
    }

    fn finish_file(&self, file: usize, partition: Option<&Origin>) {
        if let Ok(mut f) = self.shared.finished.lock() {
            f.files.insert(file);
            if let Some(origin) = partition {
                f.partitions.insert(origin.clone());
            }
        }
    }

    fn note(&mut self, file: usize, origin: &Origin, issues: Vec<Issue>) {
        if issues.iter().any(|i| i.kind == IssueKind::Stopped) {
            self.finish_file(file, Some(origin));
        }
        self.issues.extend(issues);
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            match self.current.take() {
                None => {
                    while !self.cut && self.ahead < self.limit {
                        let shared = Arc::clone(&self.shared);
                        self.pool.submit(Box::new(move || cut_and_decode(&shared)));
                        self.ahead += 1;
                    }
                    let Ok(slot) = self.slots.recv() else {
                        return Ok(None);
                    };
                    self.ahead -= 1;
                    let unwanted = self
                        .shared
                        .finished
                        .lock()
                        .is_ok_and(|f| f.contains(slot.file, &slot.origin));
                    let (file, origin) = (slot.file, slot.origin);
                    match slot.next {
                        Next::End => {
                            self.cut = true;
                            if self.ahead == 0 {
                                return Ok(None);
                            }
                        }
                        Next::Error(err) => return Err(err),
                        _ if unwanted => {}
                        Next::Piece(messages) => {
                            self.current = Some(Current::Piece {
                                file,
                                origin,
                                messages,
                            })
                        }
                        Next::Rest(planned, position) => {
                            let mut rest = planned.as_ref().clone();
                            rest.file.start = position;
                            let reader = self
                                .shared
                                .builder
                                .clone()
                                .build_planned(vec![rest], Vec::new());
                            self.current = Some(Current::Rest {
                                file,
                                origin,
                                reader: Box::new(reader),
                            });
                        }
                    }
                }
                Some(Current::Piece {
                    file,
                    origin,
                    messages,
                }) => {
                    // A closed channel: the piece is finished.
                    if let Ok(msg) = messages.recv() {
                        let batch = match msg {
                            Msg::Batch(batch) => Some(batch),
                            Msg::Issues(issues) => {
                                self.note(file, &origin, issues);
                                None
                            }
                            Msg::EndsFile => {
                                self.finish_file(file, None);
                                None
                            }
                            Msg::Error(err) => return Err(err),
                        };
                        self.current = Some(Current::Piece {
                            file,
                            origin,
                            messages,
                        });
                        if batch.is_some() {
                            return Ok(batch);
                        }
                    }
                }
                Some(Current::Rest {
                    file,
                    origin,
                    mut reader,
                }) => {
                    let next = reader.next();
                    let issues = reader.take_issues();
                    self.note(file, &origin, issues);
                    match next {
                        None => {}
                        Some(Err(err)) => return Err(err),
                        Some(Ok(batch)) => {
                            self.current = Some(Current::Rest {
                                file,
                                origin,
                                reader,
                            });
                            return Ok(Some(batch));
                        }
                    }
                }
            }
        }
    }
}

impl Iterator for ParallelReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.cancel();
                Some(Err(e))
            }
        }
    }
}

impl Drop for ParallelReader {
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::schema::Column;
    use crate::format::batch::TimestampType;
    use crate::format::compression::Compression;
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use crate::log::discover::SegmentFile;
    use crate::log::issues::OnCorrupt;
    use arrow_array::{Array, BinaryArray, Int64Array};
    use std::path::{Path, PathBuf};

    /// A v2 segment of `batches` batches of 7 records each, values "v<offset>".
    fn segment(base: i64, batches: i64) -> Vec<u8> {
        let mut out = Vec::new();
        for b in 0..batches {
            let mut records = Vec::new();
            for i in 0..7 {
                let v = format!("v{}", base + b * 7 + i);
                write_record(
                    &mut records,
                    i as i32,
                    i,
                    None,
                    Some(v.as_bytes()),
                    std::iter::empty(),
                );
            }
            let header = BatchHeader {
                base_offset: base + b * 7,
                partition_leader_epoch: 0,
                compression: if b % 3 == 0 {
                    Compression::Lz4
                } else {
                    Compression::None
                },
                timestamp_type: TimestampType::CreateTime,
                is_transactional: false,
                is_control: false,
                delete_horizon: false,
                last_offset_delta: 6,
                base_timestamp: 1_000,
                max_timestamp: 1_006,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
            };
            write_batch(&mut out, &header, &records, 7, None).unwrap();
        }
        out
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir()
                .join(format!("kafkalog-parallel-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("t-0")).unwrap();
            Dir(dir)
        }

        fn write(&self, base: i64, bytes: &[u8]) -> PathBuf {
            let path = self.0.join("t-0").join(format!("{base:020}.log"));
            std::fs::write(&path, bytes).unwrap();
            path
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    type Rows = Vec<(i64, Option<Vec<u8>>)>;
    type Seen = (
        Rows,
        Vec<(IssueKind, u64, Option<i64>, u64)>,
        Option<String>,
    );

    fn collect(batches: impl Iterator<Item = Result<RecordBatch>>) -> (Rows, Option<String>) {
        let mut rows = Vec::new();
        for batch in batches {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => return (rows, Some(e.to_string())),
            };
            let offsets = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            let values = batch
                .column(1)
                .as_any()
                .downcast_ref::<BinaryArray>()
                .unwrap();
            for i in 0..batch.num_rows() {
                let value = values.is_valid(i).then(|| values.value(i).to_vec());
                rows.push((offsets.value(i), value));
            }
        }
        (rows, None)
    }

    fn issues(issues: Vec<Issue>) -> Vec<(IssueKind, u64, Option<i64>, u64)> {
        issues
            .into_iter()
            .map(|i| (i.kind, i.position, i.offset, i.bytes))
            .collect()
    }

    fn builder(on_corrupt: OnCorrupt, start: i64, end: Option<i64>) -> ReaderBuilder {
        ReaderBuilder::new()
            .with_projection(
                crate::arrow::schema::Projection::new(vec![Column::Offset, Column::Value]).unwrap(),
            )
            .with_on_corrupt(on_corrupt)
            .with_batch_size(50)
            .with_bounds(crate::log::bounds::Bounds {
                start_offset: (start > i64::MIN).then_some(start),
                end_offset: end,
                ..Default::default()
            })
    }

    fn planned(builder: &ReaderBuilder, paths: &[&Path]) -> (Vec<Planned>, Vec<Issue>) {
        let files = paths
            .iter()
            .map(|p| {
                SegmentFile::new(
                    p.to_path_buf(),
                    Origin {
                        topic: Some("t".into()),
                        partition: Some(0),
                    },
                )
            })
            .collect();
        builder.plan(files).unwrap()
    }

    fn sequential(builder: &ReaderBuilder, paths: &[&Path]) -> Seen {
        let (files, noted) = planned(builder, paths);
        let mut reader = builder.clone().build_planned(files, noted);
        let (rows, error) = collect(&mut reader);
        (rows, issues(reader.take_issues()), error)
    }

    fn parallel(builder: &ReaderBuilder, paths: &[&Path], piece: usize) -> Seen {
        let (files, noted) = planned(builder, paths);
        let mut reader = ParallelReader::new(builder.clone(), files, noted, 2, piece);
        let (rows, error) = collect(&mut reader);
        (rows, issues(reader.take_issues()), error)
    }

    /// Every piece size, from smaller than one entry to the whole file, every policy. Returns
    /// what the sequential reader saw, per policy (error, skip, stop).
    fn same_in_parallel(
        name: &str,
        first: &[u8],
        second: &[u8],
        start: i64,
        end: Option<i64>,
    ) -> Vec<Seen> {
        let dir = Dir::new(name);
        let a = dir.write(0, first);
        let b = dir.write(1_000_000, second);
        let mut seen = Vec::new();
        for policy in [OnCorrupt::Error, OnCorrupt::Skip, OnCorrupt::Stop] {
            let builder = builder(policy, start, end);
            let expected = sequential(&builder, &[&a, &b]);
            for piece in [1, 100, 333, 1000, 4096, 1 << 20] {
                let got = parallel(&builder, &[&a, &b], piece);
                let case = format!("{name}, {policy:?}, pieces of {piece} bytes");
                assert_eq!(got.1, expected.1, "issues: {case}");
                assert_eq!(got.2, expected.2, "error: {case}");
                if expected.2.is_none() {
                    assert!(got.0 == expected.0, "rows: {case}");
                } else {
                    // Rows before an error are those of the batches finished before it, and
                    // where batches end differs.
                    let n = got.0.len().min(expected.0.len());
                    assert!(got.0[..n] == expected.0[..n], "rows: {case}");
                }
            }
            seen.push(expected);
        }
        seen
    }

    fn kinds(seen: &Seen) -> Vec<IssueKind> {
        seen.1.iter().map(|i| i.0).collect()
    }

    #[test]
    fn clean_segments() {
        let seen = same_in_parallel(
            "clean",
            &segment(0, 60),
            &segment(1_000_000, 40),
            i64::MIN,
            None,
        );
        assert_eq!(seen[0].0.len(), 700);
        assert!(seen[0].1.is_empty() && seen[0].2.is_none());
    }

    #[test]
    fn offset_bounds() {
        let (a, b) = (segment(0, 60), segment(1_000_000, 40));
        let seen = same_in_parallel("bounds", &a, &b, 100, Some(300));
        assert_eq!(seen[0].0.len(), 200);
        let seen = same_in_parallel("bounds2", &a, &b, 350, Some(1_000_050));
        assert_eq!(seen[0].0.len(), 120);
    }

    #[test]
    fn corrupt_batch_inside_a_piece() {
        let mut a = segment(0, 60);
        let at = a.len() / 2;
        a[at] ^= 0x40; // a CRC mismatch, or a broken record
        let seen = same_in_parallel("crc", &a, &segment(1_000_000, 40), i64::MIN, None);
        assert!(seen[0].2.is_some());
        assert_eq!(kinds(&seen[1]), [IssueKind::SkippedBatch]);
        assert_eq!(kinds(&seen[2]), [IssueKind::Stopped]);
        assert_eq!(seen[1].0.len(), 693);
        assert_eq!(
            seen[2].0.len(),
            210,
            "the partition's later segment is not read"
        );
    }

    #[test]
    fn broken_size_field() {
        let mut a = segment(0, 60);
        // The size field of the 20th entry: framing fails there.
        let mut pos = 0;
        for _ in 0..20 {
            let size = i32::from_be_bytes(a[pos + 8..pos + 12].try_into().unwrap());
            pos += 12 + size as usize;
        }
        a[pos + 8..pos + 12].copy_from_slice(&3i32.to_be_bytes());
        let seen = same_in_parallel("size", &a, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[1]), [IssueKind::Stopped]);
        assert_eq!(seen[1].0.len(), 140);
        a[pos + 8..pos + 12].copy_from_slice(&i32::MAX.to_be_bytes());
        let seen = same_in_parallel("huge", &a, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[0]), [IssueKind::TornTail]);
    }

    #[test]
    fn torn_and_zero_tails() {
        let a = segment(0, 60);
        let torn = &a[..a.len() - 25];
        let seen = same_in_parallel("torn", torn, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[0]), [IssueKind::TornTail]);
        let short = &a[..a.len() - (a.len() - 12 * 7) % 200]; // a few bytes of an entry
        same_in_parallel("short", short, &segment(1_000_000, 4), i64::MIN, None);
        let mut zeros = a.clone();
        zeros.extend(std::iter::repeat_n(0u8, 5000));
        let seen = same_in_parallel("zeros", &zeros, &segment(1_000_000, 40), i64::MIN, None);
        assert_eq!(kinds(&seen[0]), [IssueKind::ZeroTail]);
        let mut zeros_then_data = a[..a.len() / 2].to_vec();
        zeros_then_data.extend(std::iter::repeat_n(0u8, 300));
        zeros_then_data.extend_from_slice(&a[a.len() / 2..]);
        let seen = same_in_parallel("zeros-data", &zeros_then_data, &[], i64::MIN, None);
        assert_eq!(kinds(&seen[2]), [IssueKind::Stopped]);
    }

    #[test]
    fn missing_file_is_the_same_error() {
        let dir = Dir::new("missing");
        let a = dir.write(0, &segment(0, 30));
        let gone = dir.0.join("t-0").join("00000000000000000999.log");
        let builder = builder(OnCorrupt::Error, i64::MIN, None);
        let expected = sequential(&builder, &[&a, &gone]);
        assert!(expected.2.is_some());
        assert_eq!(parallel(&builder, &[&a, &gone], 500), expected);
    }

    #[test]
    fn an_abandoned_reader_stops_its_threads() {
        let dir = Dir::new("abandon");
        let a = dir.write(0, &segment(0, 300));
        let builder = builder(OnCorrupt::Error, i64::MIN, None);
        for _ in 0..20 {
            let (files, noted) = planned(&builder, &[&a]);
            let mut reader = ParallelReader::new(builder.clone(), files, noted, 2, 200);
            assert!(reader.next().unwrap().is_ok());
            drop(reader); // joins its threads: returning at all is the test
        }
    }
}
