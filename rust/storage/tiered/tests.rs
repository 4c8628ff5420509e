//! Tests of the tiered storage.

use super::discovery::discover;
use super::*;
use crate::storage::Local;
use base64::Engine;

fn codec(values: &[u32]) -> Vec<u8> {
    // Every value in 4 bytes: valid for the codec, whatever the sizes.
    let mut out = (values.len() as i32).to_be_bytes().to_vec();
    if values.len() == 1 {
        out.extend(values[0].to_be_bytes());
    } else if values.len() > 1 {
        out.extend(0i32.to_be_bytes());
        out.push(4);
        for v in values {
            out.extend(v.to_be_bytes());
        }
    }
    out
}

/// Writes a compressed segment of Aiven's layout; returns its `.log` path.
fn write_segment(
    dir: &Path,
    base: i64,
    id: &str,
    log: &[u8],
    chunk: usize,
    epochs: &str,
    end: i64,
) -> PathBuf {
    let chunks: Vec<Vec<u8>> = log
        .chunks(chunk)
        .map(|c| zstd::bulk::compress(c, 1).unwrap())
        .collect();
    let sizes: Vec<u32> = chunks.iter().map(|c| c.len() as u32).collect();
    let b64 = base64::engine::general_purpose::STANDARD;
    let manifest = format!(
        r#"{{"version":"1","chunkIndex":{{"type":"variable","originalChunkSize":{chunk},
        "originalFileSize":{},"transformedChunks":"{}"}},"segmentIndexes":{{
        "offset":{{"position":0,"size":0}},"timestamp":{{"position":0,"size":0}},
        "producerSnapshot":{{"position":0,"size":0}},"leaderEpoch":{{"position":0,"size":0}},
        "transaction":null}},"compression":true,"remoteLogSegmentMetadata":{{
        "remoteLogSegmentId":{{"topicIdPartition":{{"topicId":"MWJ6FHTfRYy67jzwZdeqSQ",
        "topicPartition":{{"topic":"t","partition":2}}}},"id":"{id}"}},"startOffset":{base},
        "endOffset":{end},"segmentLeaderEpochs":{epochs}}}}}"#,
        log.len(),
        b64.encode(zstd::bulk::compress(&codec(&sizes), 1).unwrap()),
    );
    let stem = format!("{base:020}-{id}");
    std::fs::write(dir.join(format!("{stem}.log")), chunks.concat()).unwrap();
    std::fs::write(dir.join(format!("{stem}.indexes")), b"").unwrap();
    std::fs::write(dir.join(format!("{stem}.rsm-manifest")), manifest).unwrap();
    dir.join(format!("{stem}.log"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kafkalog-tiered-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ").join("2");
    std::fs::create_dir_all(&part).unwrap();
    dir
}

#[test]
fn chunks_reassemble_byte_for_byte() {
    let dir = temp("bytes");
    let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ/2");
    let original: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let log = write_segment(&part, 0, "AAAAAAAAAAAAAAAAAAAAAA", &original, 999, "{}", 9);
    let tiered = Tiered::new(Arc::new(Local), KeyRing::default());
    assert_eq!(tiered.stat(&log).unwrap(), Stat::File { size: 10_000 });
    assert_eq!(tiered.read(&log).unwrap().unwrap(), original);
    let mut object = tiered.open(&log).unwrap();
    for (a, b) in [
        (0, 1),
        (998, 1001),
        (1500, 7000),
        (9990, 20_000),
        (10_000, 10_005),
    ] {
        let got = read_range(object.as_mut(), a..b).unwrap();
        assert_eq!(
            got,
            original[a as usize..(b as usize).min(10_000)],
            "{a}..{b}"
        );
    }
    object.will_read(0..10_000);
    assert_eq!(read_range(object.as_mut(), 0..10_000).unwrap(), original);
    // The manifest and other objects pass through; discovery takes topic and partition
    // from the manifest.
    let found = discover(&tiered, &dir, &tiered.list(&dir).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(found.segments.len(), 1);
    assert_eq!(
        (
            found.segments[0].topic.as_deref(),
            found.segments[0].partition
        ),
        (Some("t"), Some(2))
    );
    // A chunk index that disagrees with the object is an error naming the object.
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 1]).unwrap();
    let tiered = Tiered::new(Arc::new(Local), KeyRing::default());
    let err = tiered.open(&log).err().unwrap();
    assert_eq!(err.kind, ErrorKind::TieredStorage);
    assert_eq!(err.path.as_deref(), Some(log.as_path()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicates_and_orphans_are_skipped() {
    let dir = temp("dups");
    let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ/2");
    write_segment(
        &part,
        0,
        "AAAAAAAAAAAAAAAAAAAAAA",
        b"x",
        10,
        r#"{"0":0}"#,
        9,
    );
    write_segment(
        &part,
        0,
        "BBBBBBBBBBBBBBBBBBBBBB",
        b"x",
        10,
        r#"{"0":0}"#,
        9,
    );
    write_segment(
        &part,
        10,
        "CCCCCCCCCCCCCCCCCCCCCC",
        b"y",
        10,
        r#"{"0":0}"#,
        19,
    );
    std::fs::write(
        part.join("00000000000000000020-DDDDDDDDDDDDDDDDDDDDDD.log"),
        b"z",
    )
    .unwrap();
    let tiered = Tiered::new(Arc::new(Local), KeyRing::default());
    let found = discover(&tiered, &dir, &tiered.list(&dir).unwrap())
        .unwrap()
        .unwrap();
    let bases: Vec<i64> = found.segments.iter().map(|s| s.base_offset).collect();
    assert_eq!(bases, vec![0, 10]);
    assert_eq!(found.skipped.len(), 2, "{:?}", found.skipped);
    assert!(found
        .skipped
        .iter()
        .any(|s| s.contains("DDDD") && s.contains("no manifest")));
    assert!(found
        .skipped
        .iter()
        .any(|s| s.contains("BBBB") && s.contains("duplicate")));
    // A plain directory is not tiered.
    assert!(discover(&tiered, &part.join("nothing"), &[])
        .unwrap()
        .is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store that counts the bytes read from it.
#[derive(Debug, Default)]
struct Counting(Arc<std::sync::atomic::AtomicU64>);

struct CountingObject(Box<dyn Object>, Arc<std::sync::atomic::AtomicU64>);

impl Object for CountingObject {
    fn len(&self) -> u64 {
        self.0.len()
    }
    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let n = self.0.read_into(offset, len, out)?;
        self.1
            .fetch_add(n as u64, std::sync::atomic::Ordering::SeqCst);
        Ok(n)
    }
}

impl Storage for Counting {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn stat(&self, path: &Path) -> Result<Stat> {
        Local.stat(path)
    }
    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        Local.list(dir)
    }
    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        Ok(Box::new(CountingObject(Local.open(path)?, self.0.clone())))
    }
}

#[test]
fn read_ahead_grows_only_with_reads_in_order() {
    let dir = temp("ahead");
    let part = dir.join("t-MWJ6FHTfRYy67jzwZdeqSQ/2");
    // Bytes that do not compress, so that fetched bytes track chunks read.
    let mut x = 1u64;
    let original: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let log = write_segment(
        &part,
        0,
        "AAAAAAAAAAAAAAAAAAAAAA",
        &original,
        999,
        "{}",
        1000,
    );
    let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let tiered = Tiered::new(Arc::new(Counting(counter.clone())), KeyRing::default());
    let mut object = tiered.open(&log).unwrap();
    let chunk_log = std::fs::metadata(&log).unwrap().len();
    let before = counter.load(std::sync::atomic::Ordering::SeqCst);
    // A whole-object read is announced, but only the first chunk is used.
    object.will_read(0..100_000);
    assert_eq!(read_range(object.as_mut(), 0..10).unwrap(), original[..10]);
    let first = counter.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!(first > 1000 && first < 1100, "{first} of {chunk_log}");
    // Reading on, the fetches grow with what has been read in order.
    assert_eq!(
        read_range(object.as_mut(), 10..3000).unwrap(),
        original[10..3000]
    );
    let second = counter.load(std::sync::atomic::Ordering::SeqCst) - before - first;
    assert!(second < 4 * 1100, "{second}");
    assert_eq!(
        read_range(object.as_mut(), 3000..100_000).unwrap(),
        original[3000..]
    );
    let all = counter.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!(all <= chunk_log, "{all} of {chunk_log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn keys_are_never_printed() {
    let mut ring = KeyRing::default();
    let err = ring.add(
        "k1",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    );
    assert!(err.unwrap_err().message.contains("k1"));
    assert_eq!(format!("{ring:?}"), "KeyRing([])");
    let err = ring
        .unwrap(Path::new("m.rsm-manifest"), "k2", b"xx")
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::EncryptionKey);
}
