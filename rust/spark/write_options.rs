//! The options of `df.write.format("kafkalog")` and `writeStream.format("kafkalog")`, checked
//! once for both Spark sources: the JVM source (`rust/jni/writer.rs`) and the Python data
//! source (`python/kafkalog/spark/source.py`, through `rust/python/spark_writer.rs`) hand
//! Spark's options here and keep no rule of their own.
//!
//! | option | meaning |
//! |---|---|
//! | `path` (`save(path)`) | the log directory written: a local directory or an object-store prefix |
//! | `topic`, `partition` | for rows without those columns |
//! | `magic`, `compression`, `compressionLevel`, `timestampType`, `logAppendTime`, `baseOffset`, `batchRecords`, `batchBytes`, `preserveBatches`, `producerId`, `producerEpoch`, `baseSequence`, `transactional`, `partitionLeaderEpoch`, `segmentBytes`, `indexIntervalBytes`, `fsync` | as `kafkalog.write` takes them |
//! | `rowsGrouped` | (batch) each task's rows come grouped by topic-partition and in offset order (`kafkalog.spark.write` arranges them): streamed into segments rather than held |
//! | `writerId` | (streaming) the name a query marks its appends with (default `spark`) |
//! | `maxRewriteBytes` | (streaming, object stores) the active segment is rewritten while below it |
//! | `storage.<key>` | object-store options |
//! | `keyFormat`, `valueFormat`, `schemaRegistry`, `keySubject`, `valueSubject`, `keyVersion`, `valueVersion` (and the rest of a read's typed-value options) | typed `key`/`value` columns encoded: `string` as UTF-8, `avro` with the subject's registered schema and Confluent's framing (`rust/write/values.rs`), as reads take them (`common.rs`) |
//! | `kafka.*`, `includeHeaders`, `checkpointLocation` | Spark's Kafka sink's options with nothing to do on files: accepted, ignored |

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::arrow::encoder::EncodeOptions;
use crate::error::{Error, Result};
use crate::format::batch::TimestampType;
use crate::format::compression::Compression;
use crate::read::values::ValueArgs;
use crate::spark::common::{self, Raw, VALUE_OPTIONS};
use crate::write::append::DEFAULT_MAX_REWRITE_BYTES;
use crate::write::writer::WriteOptions;

/// The prefix of object-store options.
const STORAGE: &str = "storage.";

/// A Spark write's options, checked.
#[derive(Clone, Debug)]
pub struct SparkWriteOptions {
    /// The log directory written: an absolute local path, or an object-store prefix (no
    /// trailing `/`).
    pub path: PathBuf,
    /// Whether `path` is in an object store.
    pub remote: bool,
    /// For rows without a `topic` column.
    pub topic: Option<String>,
    /// For rows without a `partition` column.
    pub partition: Option<i64>,
    /// How the core encodes and writes (`kafkalog.write`'s options).
    pub write: WriteOptions,
    /// (batch) rows arrive grouped by topic-partition, in offset order.
    pub grouped: bool,
    /// (streaming) the mark of this query's appends.
    pub writer_id: String,
    /// (streaming, object stores) see `write::append::RemoteAppendOptions`.
    pub max_rewrite_bytes: u64,
    /// `storage.<key>`: object-store options.
    pub storage: BTreeMap<String, String>,
    /// The typed-value options, as a read takes them (`None`: keys and values are bytes or
    /// text).
    pub values: Option<ValueArgs>,
}

/// The integer option `name` (spelled `spelled`).
fn integer<T: std::str::FromStr>(value: &str, spelled: &str) -> Result<T> {
    value.trim().parse::<T>().map_err(|_| {
        Error::invalid_argument(format!(
            "option {spelled} must be an integer in range, not '{value}'"
        ))
    })
}

fn boolean(value: &str, spelled: &str) -> Result<bool> {
    common::parse_bool(value, spelled)
}

/// A codec by the names `kafkalog.write` and Kafka's `compression.type` take.
pub fn compression(name: &str) -> Result<Compression> {
    Compression::from_name(name)
        .ok_or_else(|| Error::invalid_argument(format!("unknown compression {name:?}")))
}

/// A timestamp type by Kafka's name (`CreateTime`, `LogAppendTime`) or the Python spelling.
pub fn timestamp_type(name: &str) -> Result<TimestampType> {
    match name {
        "CreateTime" | "create_time" => Ok(TimestampType::CreateTime),
        "LogAppendTime" | "log_append_time" => Ok(TimestampType::LogAppendTime),
        other => Err(Error::invalid_argument(format!(
            "timestamp_type must be \"CreateTime\" or \"LogAppendTime\", not {other:?}"
        ))),
    }
}

/// Where a write goes: an object-store URI as it is (without a trailing `/`), or a local
/// path (a `file:` URI's path) made absolute.
pub fn write_target(path: &str) -> Result<(PathBuf, bool)> {
    let p = PathBuf::from(path);
    if !crate::storage::is_local(&p) {
        return Ok((PathBuf::from(path.trim_end_matches('/')), true));
    }
    let local = crate::storage::Local::local_path_of(&p);
    let absolute = std::path::absolute(&local).map_err(|e| Error::io(e, &local))?;
    Ok((absolute, false))
}

impl SparkWriteOptions {
    /// Spark's options (names in any case) of a batch write, or of a streaming one.
    pub fn parse(raw: &BTreeMap<String, String>, streaming: bool) -> Result<Self> {
        let o: BTreeMap<String, &str> = raw
            .iter()
            .map(|(k, v)| (k.to_lowercase(), v.as_str()))
            .collect();
        let path = o.get("path").ok_or_else(|| {
            Error::invalid_argument("give the directory to write: .save(\"/path/to/logs\")")
        })?;
        let (path, remote) = write_target(path)?;
        let mut out = SparkWriteOptions {
            path,
            remote,
            topic: None,
            partition: None,
            write: WriteOptions::default(),
            grouped: false,
            writer_id: "spark".into(),
            max_rewrite_bytes: DEFAULT_MAX_REWRITE_BYTES,
            storage: BTreeMap::new(),
            values: common::values(&Raw::new(raw.iter()))?,
        };
        let typed: Vec<String> = VALUE_OPTIONS.iter().map(|o| o.to_lowercase()).collect();
        let e: &mut EncodeOptions = &mut out.write.encode;
        for (key, value) in &o {
            let v = *value;
            match key.as_str() {
                "path" => {}
                "topic" => out.topic = Some(v.to_owned()),
                "partition" => out.partition = Some(integer(v, "partition")?),
                "magic" => e.magic = Some(integer(v, "magic")?),
                "compression" => e.compression = Some(compression(v)?),
                "compressionlevel" => e.compression_level = Some(integer(v, "compressionLevel")?),
                "timestamptype" => e.timestamp_type = Some(timestamp_type(v)?),
                "logappendtime" => e.log_append_time = Some(integer(v, "logAppendTime")?),
                "baseoffset" => e.base_offset = integer(v, "baseOffset")?,
                "batchrecords" => e.batch_records = integer(v, "batchRecords")?,
                "batchbytes" => e.batch_bytes = integer(v, "batchBytes")?,
                "preservebatches" => e.preserve_batches = boolean(v, "preserveBatches")?,
                "producerid" => e.producer_id = integer(v, "producerId")?,
                "producerepoch" => e.producer_epoch = integer(v, "producerEpoch")?,
                "basesequence" => e.base_sequence = integer(v, "baseSequence")?,
                "transactional" => e.transactional = boolean(v, "transactional")?,
                "partitionleaderepoch" => {
                    e.partition_leader_epoch = integer(v, "partitionLeaderEpoch")?
                }
                "segmentbytes" => out.write.segment_bytes = integer(v, "segmentBytes")?,
                "indexintervalbytes" => {
                    out.write.index_interval_bytes = integer(v, "indexIntervalBytes")?
                }
                "fsync" => out.write.fsync = boolean(v, "fsync")?,
                "rowsgrouped" if !streaming => out.grouped = boolean(v, "rowsGrouped")?,
                "writerid" if streaming => out.writer_id = v.to_owned(),
                "maxrewritebytes" if streaming => {
                    out.max_rewrite_bytes = integer(v, "maxRewriteBytes")?
                }
                "includeheaders" | "checkpointlocation" => {}
                k if typed.iter().any(|t| t == k) => {}
                k if k.starts_with("kafka.") => {}
                k if k.starts_with(STORAGE) => {
                    out.storage
                        .insert(key[STORAGE.len()..].to_owned(), v.to_owned());
                }
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "unknown write option '{key}' for kafkalog"
                    )))
                }
            }
        }
        if streaming {
            // A stream appends as a producer does: new offsets, magic 2 batches.
            let e = &mut out.write.encode;
            e.base_offset = 0;
            e.magic = Some(2);
            e.preserve_batches = false;
        }
        Ok(out)
    }

    /// The storage options of an object-store target (none for a local one).
    pub fn storage_options(&self) -> Option<BTreeMap<String, String>> {
        self.remote.then(|| self.storage.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)], streaming: bool) -> Result<SparkWriteOptions> {
        let raw = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SparkWriteOptions::parse(&raw, streaming)
    }

    #[test]
    fn options_in_any_case_become_the_writers() {
        let o = parse(
            &[
                ("path", "/out/logs/"),
                ("Compression", "zstd"),
                ("SEGMENTBYTES", "4096"),
                ("fsync", "false"),
                ("timestampType", "LogAppendTime"),
                ("partition", "3"),
                ("rowsGrouped", "true"),
                ("storage.aws_region", "eu-west-1"),
                ("kafka.bootstrap.servers", "ignored:9092"),
                ("checkpointLocation", "/c"),
            ],
            false,
        )
        .unwrap();
        assert_eq!(o.path, PathBuf::from("/out/logs/"));
        assert!(!o.remote && o.grouped && !o.write.fsync);
        assert_eq!(o.write.encode.compression, Some(Compression::Zstd));
        assert_eq!(
            o.write.encode.timestamp_type,
            Some(TimestampType::LogAppendTime)
        );
        assert_eq!((o.write.segment_bytes, o.partition), (4096, Some(3)));
        assert_eq!(o.storage["aws_region"], "eu-west-1");
        assert_eq!(o.storage_options(), None);
        let s3 = parse(&[("path", "s3://b/logs/"), ("storage.k", "v")], false).unwrap();
        assert_eq!((s3.path, s3.remote), (PathBuf::from("s3://b/logs"), true));
        let file = parse(&[("path", "file:///tmp/x")], false).unwrap();
        assert_eq!(file.path, PathBuf::from("/tmp/x"));
        assert!(parse(&[("path", "rel")], false).unwrap().path.is_absolute());
    }

    #[test]
    fn streaming_appends_as_a_producer() {
        let o = parse(
            &[
                ("path", "/o"),
                ("writerId", "q1"),
                ("magic", "1"),
                ("baseOffset", "7"),
            ],
            true,
        )
        .unwrap();
        assert_eq!(o.writer_id, "q1");
        assert_eq!(
            (o.write.encode.magic, o.write.encode.base_offset),
            (Some(2), 0)
        );
        assert_eq!(parse(&[("path", "/o")], true).unwrap().writer_id, "spark");
    }

    #[test]
    fn bad_options_say_which() {
        for (pairs, streaming, text) in [
            (&[][..], false, "give the directory to write"),
            (
                &[("path", "/o"), ("compression", "brotli")][..],
                false,
                "unknown compression",
            ),
            (
                &[("path", "/o"), ("magic", "two")][..],
                false,
                "option magic must be an integer",
            ),
            (
                &[("path", "/o"), ("fsync", "maybe")][..],
                false,
                "fsync must be true or false",
            ),
            (
                &[("path", "/o"), ("bogus", "1")][..],
                false,
                "unknown write option 'bogus'",
            ),
            (
                &[("path", "/o"), ("writerId", "x")][..],
                false,
                "unknown write option 'writerid'",
            ),
            (
                &[("path", "/o"), ("rowsGrouped", "true")][..],
                true,
                "unknown write option",
            ),
            (
                &[("path", "/o"), ("timestampType", "Now")][..],
                false,
                "CreateTime",
            ),
        ] {
            let err = parse(pairs, streaming).unwrap_err();
            assert!(err.message.contains(text), "{pairs:?}: {}", err.message);
        }
    }
}
