//! Writing a partition to an object store, where there is no rename: what a writer stages,
//! how it publishes, and what a reader may read.
//!
//! A partition prefix (`s3://bucket/kafka-logs/orders-0/`) written by kafkalog holds, besides
//! the segment files, one of two small objects:
//! - `.kafkalog-writing`: a write is under way (or died). It is taken with the store's
//!   conditional put (`If-None-Match: *`), so that of two writers exactly one gets it; the
//!   other fails with a [`crate::ErrorKind::Conflict`] error. Objects under a prefix that has it and
//!   no manifest are not published: readers read none of them.
//! - `.kafkalog-manifest`: the published partition: the name and size of every file written.
//!   It is put (conditionally) only after every file is uploaded, so it appears at once, and a
//!   reader that finds it reads exactly the files it lists, at their listed sizes.
//!
//! A prefix with neither is a plain copy of a broker's directory and is read as listed.
//!
//! The writer encodes each segment into a local scratch directory (the same
//! [`PartitionWriter`] as local writes), uploads it as soon as it is complete (large files in
//! parts) and removes the local copy, so local disk holds about one segment. A failed write
//! removes what it uploaded and its marker; a killed one leaves its marker, so readers still
//! read nothing. The marker says which host and process hold it ([`crate::write::lease::WriterNote`]).

use crate::error::{Error, Result};
use crate::format::segment::segment_file_name;
use crate::storage::{Entry, PutMode, Storage};
use crate::write::writer::{PartitionWriter, SegmentSummary, Summary, WriteOptions};
use arrow_array::RecordBatch;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::log::manifest::{manifest_text, published, MANIFEST, WRITING};
use crate::write::lease::{Marker, CLOCK_PROBE, DEFAULT_LEASE};
/// Publishes at `target` the partition a kafkalog write published at `staged` (both prefixes
/// in `storage`, e.g. a Spark task's staging prefix and the job's output): claims `target`'s
/// marker, unpublishes an old partition there (only with `overwrite`), copies the staged files
/// server-side, then puts the manifest. Readers see the old partition (or nothing), then the
/// new one, never a mix; a failure before the manifest leaves nothing readable at `target`
/// and removes the copies.
pub fn publish_staged(
    storage: Arc<dyn Storage>,
    staged: &Path,
    target: &Path,
    overwrite: bool,
    lease: Duration,
) -> Result<()> {
    let listed = match storage.list(staged) {
        Ok(listed) => listed,
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e),
    };
    if !listed
        .iter()
        .any(|e| e.path.file_name().is_some_and(|n| n == MANIFEST))
    {
        return Err(Error::invalid_argument(
            "nothing published to stage from (no kafkalog manifest there)",
        )
        .with_path(staged));
    }
    let files = published(storage.as_ref(), staged, listed)?;
    let name = name_of(target);
    if name.is_empty() || name.starts_with('.') {
        return Err(Error::invalid_argument(
            "the target does not end in a partition directory name",
        )
        .with_path(target));
    }
    let mut writer = ObjectStoreWriter {
        storage: storage.clone(),
        target: target.to_path_buf(),
        scratch: PathBuf::new(),
        inner: None,
        uploaded: Vec::new(),
        marker: None,
        lease,
    };
    writer.claim(overwrite)?;
    for entry in &files {
        let file = name_of(&entry.path);
        storage.copy(&entry.path, &target.join(&file))?;
        writer.uploaded.push((file, entry.size));
    }
    writer.check_marker()?;
    storage.put(
        &target.join(MANIFEST),
        manifest_text(&writer.uploaded).into_bytes(),
        PutMode::Create,
    )?;
    writer.uploaded.clear();
    if let Some(marker) = writer.marker.take() {
        marker.release();
    }
    Ok(())
}

/// The targets that hold something already (a job appending to or creating several
/// partitions decides, before publishing any, which ones it continues).
pub fn existing(storage: &dyn Storage, targets: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut there = Vec::new();
    for target in targets {
        match storage.list(target) {
            Ok(listed) if !listed.is_empty() => there.push(target.clone()),
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(there)
}

/// Removes every object under `prefix` (a job's staging prefix); none there is not an error.
pub fn remove_prefix(storage: &dyn Storage, prefix: &Path) -> Result<()> {
    let listed = match storage.list(prefix) {
        Ok(listed) => listed,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in listed {
        if entry.is_dir {
            remove_prefix(storage, &entry.path)?;
        } else {
            storage.delete(&entry.path)?;
        }
    }
    Ok(())
}

/// Writes one partition directory to an object store (see the module documentation).
pub struct ObjectStoreWriter {
    storage: Arc<dyn Storage>,
    target: PathBuf,
    scratch: PathBuf,
    inner: Option<PartitionWriter>,
    /// Files uploaded so far: name and size.
    uploaded: Vec<(String, u64)>,
    /// The marker this writer holds (dropping it removes it).
    marker: Option<Marker>,
    /// How long its marker holds without a refresh.
    lease: Duration,
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl ObjectStoreWriter {
    /// Claims `target` (a partition prefix in `storage`) and starts a write. An existing
    /// partition there is replaced only with `overwrite`, and then unpublished first: readers
    /// see the old partition, then nothing, then the new one, never a mix.
    pub fn create(storage: Arc<dyn Storage>, target: &Path, options: WriteOptions) -> Result<Self> {
        Self::create_leased(storage, target, options, DEFAULT_LEASE)
    }

    /// [`Self::create`] with the marker's lease (see the module documentation).
    pub fn create_leased(
        storage: Arc<dyn Storage>,
        target: &Path,
        options: WriteOptions,
        lease: Duration,
    ) -> Result<Self> {
        let name = name_of(target);
        if name.is_empty() || name.starts_with('.') {
            return Err(Error::invalid_argument(
                "the target does not end in a partition directory name",
            )
            .with_path(target));
        }
        let scratch = std::env::temp_dir().join(format!(
            "kafkalog-upload-{}",
            crate::write::placement::unique()
        ));
        std::fs::create_dir_all(&scratch).map_err(|e| Error::io(e, &scratch))?;
        let mut writer = ObjectStoreWriter {
            storage,
            target: target.to_path_buf(),
            inner: None,
            uploaded: Vec::new(),
            marker: None,
            lease,
            scratch,
        };
        let local = WriteOptions {
            fsync: false, // the scratch copy is uploaded, not kept
            overwrite: false,
            ..options.clone()
        };
        writer.inner = Some(PartitionWriter::create(&writer.scratch.join(&name), local)?);
        writer.claim(options.overwrite)?;
        Ok(writer)
    }

    fn claim(&mut self, overwrite: bool) -> Result<()> {
        let (marker, took_over) = Marker::claim(self.storage.clone(), &self.target, self.lease)?;
        self.marker = Some(marker);
        let existing: Vec<Entry> = match self.storage.list(&self.target) {
            Ok(listed) => listed
                .into_iter()
                .filter(|e| {
                    e.path.file_name().is_some_and(|n| {
                        n != WRITING && !n.to_string_lossy().starts_with(CLOCK_PROBE)
                    })
                })
                .collect(),
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(e),
        };
        if existing.is_empty() {
            return Ok(());
        }
        let published = existing
            .iter()
            .any(|e| e.path.file_name().is_some_and(|n| n == MANIFEST));
        if took_over && !published {
            // The dead writer's uploads, never published (never read): they go, whatever
            // `overwrite` says; with the marker gone they would read as a plain copy.
            for entry in existing.iter().filter(|e| !e.is_dir) {
                self.storage.delete(&entry.path)?;
            }
            return Ok(());
        }
        if !overwrite {
            return Err(Error::invalid_argument(format!(
                "{} exists; pass overwrite=True to replace it",
                self.target.display()
            )));
        }
        // Unpublish first (the manifest goes, so readers see nothing), then clear the rest.
        self.storage.delete(&self.target.join(MANIFEST))?;
        for entry in existing {
            if entry.is_dir {
                return Err(Error::invalid_argument(
                    "the partition prefix holds sub-prefixes; kafkalog replaces only \
                     partition directories",
                )
                .with_path(&entry.path));
            }
            self.storage.delete(&entry.path)?;
        }
        Ok(())
    }

    fn check_marker(&self) -> Result<()> {
        match &self.marker {
            Some(marker) => marker.check(),
            None => Err(Error::invalid_argument("the writer holds no marker")),
        }
    }

    fn writer(&mut self) -> Result<&mut PartitionWriter> {
        self.inner
            .as_mut()
            .ok_or_else(|| Error::invalid_argument("the writer is already finished"))
    }

    /// Encodes and appends the rows of `batch`; segments completed are uploaded.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer()?.write(batch)?;
        self.upload_closed()
    }

    fn upload_file(&mut self, local: &Path) -> Result<()> {
        let name = name_of(local);
        let size = std::fs::metadata(local)
            .map_err(|e| Error::io(e, local))?
            .len();
        self.storage.upload(&self.target.join(&name), local)?;
        self.uploaded.push((name, size));
        std::fs::remove_file(local).map_err(|e| Error::io(e, local))
    }

    /// Uploads the files of every segment completed since the last call.
    fn upload_closed(&mut self) -> Result<()> {
        let (dir, bases): (PathBuf, Vec<i64>) = {
            let inner = self.writer()?;
            let bases = inner
                .closed_segments()
                .iter()
                .map(|s: &SegmentSummary| s.base_offset)
                .collect();
            (inner.staging_dir().to_path_buf(), bases)
        };
        for base in bases {
            for ext in ["log", "index", "timeindex", "txnindex"] {
                let file = dir.join(segment_file_name(base, ext));
                if file.exists() {
                    self.upload_file(&file)?;
                }
            }
        }
        Ok(())
    }

    /// Uploads the rest and publishes the partition: one conditional put of its manifest.
    pub fn finish(self) -> Result<Summary> {
        self.finish_with(|| Ok(()))
    }

    /// [`Self::finish`], calling `before_publish` when everything is uploaded and nothing is
    /// published yet (tests make it fail, as a writer dying there would).
    pub fn finish_with(mut self, before_publish: impl FnOnce() -> Result<()>) -> Result<Summary> {
        let inner = self
            .inner
            .take()
            .ok_or_else(|| Error::invalid_argument("the writer is already finished"))?;
        let local_target = self.scratch.join(name_of(&self.target));
        let mut summary = inner.finish()?;
        let mut rest: Vec<PathBuf> = std::fs::read_dir(&local_target)
            .map_err(|e| Error::io(e, &local_target))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        rest.sort();
        for file in rest {
            self.upload_file(&file)?;
        }
        before_publish()?;
        self.check_marker()?;
        let manifest = manifest_text(&self.uploaded);
        self.storage.put(
            &self.target.join(MANIFEST),
            manifest.into_bytes(),
            PutMode::Create,
        )?;
        // Published. The marker goes; a failure to remove it leaves the partition readable.
        self.uploaded.clear();
        if let Some(marker) = self.marker.take() {
            marker.release();
        }
        for s in &mut summary.segments {
            s.path = self.target.join(name_of(&s.path));
        }
        Ok(summary)
    }
}

impl Drop for ObjectStoreWriter {
    /// An unfinished write removes what it uploaded, then its marker.
    fn drop(&mut self) {
        self.inner = None;
        for (name, _) in std::mem::take(&mut self.uploaded) {
            let _ = self.storage.delete(&self.target.join(name));
        }
        self.marker = None; // removes it
        if !self.scratch.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.scratch);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The protocol against any storage with a conditional put: local files stand in for a
    //! bucket here (tests/test_object_store_write.py runs it against an S3 server).
    use super::*;
    use crate::arrow::schema::Projection;
    use crate::error::ErrorKind;
    use crate::format::batch::TimestampType;
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use crate::format::Compression;
    use crate::log::discover::discover;
    use crate::log::manifest::parse_manifest;
    use crate::log::origin::Origin;
    use crate::read::reader::{decode_bytes, ReaderBuilder};
    use crate::storage::Local;
    use crate::write::lease::{WriterNote, CLOCK_SLACK};

    pub(crate) fn batches(n: i64) -> Vec<RecordBatch> {
        let mut log = Vec::new();
        for base in (0..n).step_by(10) {
            let mut records = Vec::new();
            for i in 0..10 {
                let value = vec![(base + i) as u8; 200];
                write_record(
                    &mut records,
                    i as i32,
                    0,
                    Some(b"k"),
                    Some(&value),
                    std::iter::empty(),
                );
            }
            let header = BatchHeader {
                base_offset: base,
                partition_leader_epoch: 0,
                compression: Compression::None,
                timestamp_type: TimestampType::CreateTime,
                is_transactional: false,
                is_control: false,
                delete_horizon: false,
                last_offset_delta: 9,
                base_timestamp: 1000 + base,
                max_timestamp: 1000 + base,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
            };
            write_batch(&mut log, &header, &records, 10, None).unwrap();
        }
        let builder = ReaderBuilder::new()
            .with_projection(Projection::default_with_metadata(true))
            .with_batch_size(25);
        decode_bytes(&builder, &log, Origin::default()).unwrap().0
    }

    fn options() -> WriteOptions {
        WriteOptions {
            segment_bytes: 4096,
            ..WriteOptions::default()
        }
    }

    pub(crate) fn offsets(storage: &Arc<dyn Storage>, dir: &Path) -> Vec<i64> {
        let files = discover(storage.as_ref(), dir).unwrap();
        let reader = ReaderBuilder::new()
            .with_storage(storage.clone())
            .build_files(files)
            .unwrap();
        let mut out = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let column = batch.column_by_name("offset").unwrap();
            let column = column
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap();
            out.extend(column.values().iter().copied());
        }
        out
    }

    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kafkalog-publish-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    #[test]
    fn written_partition_reads_back_and_is_published_by_its_manifest() {
        let root = scratch("ok");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let mut writer = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        // Segments already uploaded, not published: a reader sees nothing.
        assert!(names(&target).iter().any(|n| n.ends_with(".log")));
        assert!(discover(storage.as_ref(), &target).unwrap().is_empty());
        let summary = writer.finish().unwrap();
        assert!(summary.segments.len() > 2);
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        assert!(names(&target).contains(&MANIFEST.to_string()));
        assert!(!names(&target).contains(&WRITING.to_string()));
        // A stray object beside a published partition is not read.
        std::fs::copy(
            target.join("00000000000000000000.log"),
            target.join("00000000000000099999.log"),
        )
        .unwrap();
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        // No overwrite without asking; with it, the new partition replaces the old.
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::InvalidArgument);
        let mut writer = ObjectStoreWriter::create(
            storage.clone(),
            &target,
            WriteOptions {
                overwrite: true,
                ..options()
            },
        )
        .unwrap();
        assert!(discover(storage.as_ref(), &target).unwrap().is_empty());
        for batch in batches(30) {
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        assert_eq!(offsets(&storage, &target), (0..30).collect::<Vec<_>>());
        assert!(!names(&target).contains(&"00000000000000099999.log".to_string()));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_write_failing_before_publish_leaves_nothing_readable() {
        let root = scratch("fail");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let mut writer = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        let err = writer
            .finish_with(|| Err(Error::new(ErrorKind::Io, "the writer died")))
            .unwrap_err();
        assert_eq!(err.message, "the writer died");
        assert_eq!(names(&target), Vec::<String>::new(), "cleaned up");
        // One that dies without cleaning up leaves its marker: still nothing to read, and
        // the next writer is told.
        let mut writer = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        std::mem::forget(writer);
        assert!(names(&target).len() > 2);
        assert!(discover(storage.as_ref(), &target).unwrap().is_empty());
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn two_writers_conflict() {
        let root = scratch("two");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let first = ObjectStoreWriter::create(storage.clone(), &target, options()).unwrap();
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        let overwrite = WriteOptions {
            overwrite: true,
            ..options()
        };
        let err = ObjectStoreWriter::create(storage.clone(), &target, overwrite).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        first.finish().unwrap();
        assert_eq!(offsets(&storage, &target), Vec::<i64>::new());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn manifests_name_only_files_of_the_partition() {
        let ok = manifest_text(&[("00000000000000000000.log".into(), 12)]);
        assert_eq!(parse_manifest(&ok).unwrap().len(), 1);
        for bad in [
            "kafkalog-partition-manifest 1\n1\n../x.log 1\n",
            "kafkalog-partition-manifest 1\n1\na/b.log 1\n",
            "kafkalog-partition-manifest 1\n1\n.. 1\n",
            "kafkalog-partition-manifest 1\n1\n.kafkalog-writing 1\n",
            "kafkalog-partition-manifest 1\n2\nx.log 1\n",
            "kafkalog-partition-manifest 1\n1\nx.log -1\n",
            "something else\n0\n",
        ] {
            assert!(parse_manifest(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn staged_partition_is_copied_and_published_and_the_staging_removed() {
        let root = scratch("staged");
        let storage: Arc<dyn Storage> = Arc::new(Local);
        let staged = root
            .join(".spark.kafkalog-job.x.tmp")
            .join("task")
            .join("orders-0");
        let mut writer = ObjectStoreWriter::create(storage.clone(), &staged, options()).unwrap();
        for batch in batches(100) {
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        let target = root.join("out").join("orders-0");
        publish_staged(storage.clone(), &staged, &target, false, DEFAULT_LEASE).unwrap();
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        assert!(names(&target).contains(&MANIFEST.to_string()));
        assert!(!names(&target).contains(&WRITING.to_string()));
        // Not twice without overwrite (and the partition there stays readable).
        let err =
            publish_staged(storage.clone(), &staged, &target, false, DEFAULT_LEASE).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArgument);
        assert_eq!(offsets(&storage, &target), (0..100).collect::<Vec<_>>());
        assert!(!names(&target).contains(&WRITING.to_string()));
        // Another writer holding the target: a conflict, nothing changed.
        std::fs::write(target.join(WRITING), b"x").unwrap();
        let err =
            publish_staged(storage.clone(), &staged, &target, true, DEFAULT_LEASE).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        std::fs::remove_file(target.join(WRITING)).unwrap();
        // A prefix with nothing published is refused.
        let err = publish_staged(
            storage.clone(),
            &root.join("none-0"),
            &target,
            true,
            DEFAULT_LEASE,
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArgument);
        // The whole staging prefix goes.
        remove_prefix(storage.as_ref(), &root.join(".spark.kafkalog-job.x.tmp")).unwrap();
        assert!(names(
            &root
                .join(".spark.kafkalog-job.x.tmp")
                .join("task")
                .join("orders-0")
        )
        .iter()
        .all(|n| !n.ends_with(".log")));
        remove_prefix(storage.as_ref(), &root.join("missing")).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Local files with versions (a counter per object) and a compare-and-swap, as an object
    /// store's ETags and `If-Match`.
    #[derive(Debug, Default)]
    pub(crate) struct Versioned {
        versions: std::sync::Mutex<std::collections::HashMap<PathBuf, u64>>,
    }

    impl Storage for Versioned {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }

        fn stat(&self, path: &Path) -> Result<crate::storage::Stat> {
            Local.stat(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
            Local.list(dir)
        }
        fn open(&self, path: &Path) -> Result<Box<dyn crate::storage::Object>> {
            Local.open(path)
        }
        fn local_path(&self, path: &Path) -> Option<PathBuf> {
            Local.local_path(path)
        }
        fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
            let mut v = self.versions.lock().unwrap();
            Local.put(path, bytes, mode)?;
            *v.entry(path.to_path_buf()).or_default() += 1;
            Ok(())
        }
        fn delete(&self, path: &Path) -> Result<()> {
            let mut v = self.versions.lock().unwrap();
            v.remove(path);
            Local.delete(path)
        }
        fn read_versioned(&self, path: &Path) -> Result<Option<(Vec<u8>, Option<String>)>> {
            let v = self.versions.lock().unwrap();
            let version = v.get(path).copied().unwrap_or(0).to_string();
            Ok(Local.read(path)?.map(|b| (b, Some(version))))
        }
        fn replace_if(&self, path: &Path, bytes: Vec<u8>, version: &str) -> Result<()> {
            let mut v = self.versions.lock().unwrap();
            let now = v.get(path).copied().unwrap_or(0);
            if now.to_string() != version || Local.read(path)?.is_none() {
                return Err(crate::storage::already_exists(path));
            }
            // Give a racing writer time to read the same version.
            std::thread::sleep(std::time::Duration::from_millis(20));
            Local.put(path, bytes, PutMode::Overwrite)?;
            v.insert(path.to_path_buf(), now + 1);
            Ok(())
        }
    }

    pub(crate) fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn writer_notes_round_trip_and_tell_a_dead_writer() {
        let mine = WriterNote::mine();
        assert_eq!(WriterNote::parse(&mine.text()), Some(mine.clone()));
        assert!(!mine.is_dead_here(), "this process is alive");
        let dead = WriterNote {
            pid: dead_pid(),
            ..mine.clone()
        };
        assert!(dead.is_dead_here());
        let elsewhere = WriterNote {
            host: format!("{}-other", mine.host),
            ..dead.clone()
        };
        assert!(
            !elsewhere.is_dead_here(),
            "another host's process is not known dead"
        );
        assert_eq!(
            WriterNote::parse("kafkalog write started by process 1\n"),
            None
        );
        assert_eq!(
            WriterNote::parse(&mine.text().replace("pid ", "pid x")),
            None
        );
    }

    #[test]
    fn a_dead_writers_marker_is_taken_over_by_exactly_one_of_two_writers() {
        let root = scratch("takeover");
        let target = root.join("orders-0");
        std::fs::create_dir_all(&target).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
        // A live writer's marker (this process's) is a conflict.
        storage
            .put(
                &target.join(WRITING),
                WriterNote::mine().text().into_bytes(),
                PutMode::Create,
            )
            .unwrap();
        let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
        assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        // So is one from another host, or not a note at all.
        for text in [
            WriterNote {
                host: "elsewhere.example".into(),
                pid: dead_pid(),
                ..WriterNote::mine()
            }
            .text(),
            "kafkalog write started by process 1 at 0 ms\n".to_string(),
        ] {
            storage.delete(&target.join(WRITING)).unwrap();
            storage
                .put(&target.join(WRITING), text.into_bytes(), PutMode::Create)
                .unwrap();
            let err = ObjectStoreWriter::create(storage.clone(), &target, options()).err();
            assert_eq!(err.unwrap().kind, ErrorKind::Conflict);
        }
        // A dead writer of this host: two writers race to take it over; one wins.
        storage.delete(&target.join(WRITING)).unwrap();
        let dead = WriterNote {
            pid: dead_pid(),
            ..WriterNote::mine()
        };
        storage
            .put(
                &target.join(WRITING),
                dead.text().into_bytes(),
                PutMode::Create,
            )
            .unwrap();
        let results: Vec<std::result::Result<ObjectStoreWriter, Error>> = std::thread::scope(|s| {
            let a = s.spawn(|| ObjectStoreWriter::create(storage.clone(), &target, options()));
            let b = s.spawn(|| ObjectStoreWriter::create(storage.clone(), &target, options()));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(|r| r.is_ok());
        assert_eq!((won.len(), lost.len()), (1, 1));
        assert_eq!(lost[0].as_ref().err().unwrap().kind, ErrorKind::Conflict);
        let mut writer = won.into_iter().next().unwrap().unwrap();
        let held = std::fs::read_to_string(target.join(WRITING)).unwrap();
        assert_eq!(WriterNote::parse(&held).unwrap().pid, std::process::id());
        for batch in batches(30) {
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        assert_eq!(offsets(&storage, &target), (0..30).collect::<Vec<_>>());
        assert!(!names(&target).contains(&WRITING.to_string()));
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Puts a marker whose note names `host` and ages it by `age` (its modification time).
    pub(crate) fn planted_marker(dir: &Path, host: &str, age: Duration) {
        std::fs::create_dir_all(dir).unwrap();
        let note = WriterNote {
            host: host.into(),
            pid: 4242,
            ..WriterNote::mine()
        };
        std::fs::write(dir.join(WRITING), note.text()).unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(dir.join(WRITING))
            .unwrap();
        file.set_modified(std::time::SystemTime::now() - age)
            .unwrap();
    }

    #[test]
    fn another_hosts_marker_holds_while_fresh_and_one_of_two_takes_it_once_stale() {
        let root = scratch("lease");
        let target = root.join("orders-0");
        let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
        let lease = Duration::from_millis(500);
        // Fresh: a conflict naming the holder and the age.
        planted_marker(&target, "elsewhere.example", Duration::ZERO);
        let err = Marker::claim(storage.clone(), &target, lease).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        assert!(err
            .message
            .contains("process 4242 on host \"elsewhere.example\""));
        assert!(err.message.contains("has not expired"), "{}", err.message);
        // Older than the lease and the clock's slack: two takers race, exactly one wins.
        planted_marker(&target, "elsewhere.example", lease + CLOCK_SLACK + lease);
        let results: Vec<Result<(Marker, bool)>> = std::thread::scope(|s| {
            let a = s.spawn(|| Marker::claim(storage.clone(), &target, lease));
            let b = s.spawn(|| Marker::claim(storage.clone(), &target, lease));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(|r| r.is_ok());
        assert_eq!((won.len(), lost.len()), (1, 1));
        assert_eq!(lost[0].as_ref().err().unwrap().kind, ErrorKind::Conflict);
        let (marker, took_over) = won.into_iter().next().unwrap().unwrap();
        assert!(took_over);
        // No clock probe is left behind.
        assert_eq!(
            std::fs::read_dir(&target).unwrap().count(),
            1,
            "only the marker"
        );
        // The winner's marker is refreshed every third of the lease: after several leases
        // it is still held, and a third writer is refused.
        std::thread::sleep(lease * 3);
        let held =
            WriterNote::parse(&std::fs::read_to_string(target.join(WRITING)).unwrap()).unwrap();
        assert!(held.beat >= 3, "refreshed {} times", held.beat);
        let err = Marker::claim(storage.clone(), &target, lease).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        marker.check().unwrap();
        marker.release();
        assert!(!target.join(WRITING).exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_holder_whose_marker_was_taken_fails_its_check() {
        let root = scratch("lost");
        let target = root.join("orders-0");
        std::fs::create_dir_all(&target).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(Versioned::default());
        let (marker, took_over) = Marker::claim(storage.clone(), &target, DEFAULT_LEASE).unwrap();
        assert!(!took_over);
        marker.check().unwrap();
        // Another writer took it over (as after a long stall of this one).
        planted_marker(&target, "elsewhere.example", Duration::ZERO);
        let err = marker.check().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Conflict);
        assert!(err.message.contains("lease"), "{}", err.message);
        drop(marker); // leaves the other writer's marker alone
        assert!(std::fs::read_to_string(target.join(WRITING))
            .unwrap()
            .contains("elsewhere.example"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
