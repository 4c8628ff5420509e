//! The read options of both Spark sources, parsed and checked once: Spark's Kafka source
//! options with Spark's meaning (its documentation is the list), kafkalog's own, and the typed
//! keys and values. The Python source (`python/kafkalog/spark/options.py`) and the JVM source
//! (`jvm/.../Options.java`) take the answer, as JSON ([`ReadOptions::to_json`]), and keep no
//! rule of their own.
//!
//! Every option Spark's Kafka source documents is accepted, so an existing Kafka job runs with
//! only its format name and path changed. Connection and consumer settings (`kafka.*` other
//! than `kafka.isolation.level`, group ids, poll and fetch timeouts) have nothing to connect
//! to: they are accepted and ignored ([`ReadOptions::ignored`] names them for a log line). An
//! unknown option fails, naming the known ones.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::format::batch::DEFAULT_MAX_DECOMPRESSED_SIZE;
use crate::log::issues::OnCorrupt;
use crate::log::visibility::Visibility;
use crate::read::values::ValueArgs;
use crate::spark::common::{self, Raw, STORAGE_PREFIX, VALUE_OPTIONS};
use crate::spark::selection::{Bounds, Subscription};

/// Spark's Kafka source read options, spelled as its documentation spells them.
pub const SPARK_READ: [&str; 17] = [
    "assign",
    "subscribe",
    "subscribePattern",
    "startingOffsets",
    "endingOffsets",
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "failOnDataLoss",
    "minPartitions",
    "maxRecordsPerPartition",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "includeHeaders",
];

/// Spark's, with nothing to do on files: accepted and ignored (lower case).
pub const SPARK_IGNORED: [&str; 4] = [
    "kafkaconsumer.polltimeoutms",
    "fetchoffset.numretries",
    "fetchoffset.retryintervalms",
    "groupidprefix",
];

/// kafkalog's own read options (the typed-value options follow them: [`VALUE_OPTIONS`]).
pub const KAFKALOG_READ: [&str; 14] = [
    "path",
    "paths",
    "topics",
    "partitions",
    "isolationLevel",
    "batchMetadata",
    "includeControl",
    "checkCrc",
    "onCorrupt",
    "maxDecompressedSize",
    "batchSize",
    "targetBytes",
    "encryptionKeys",
    "visibility",
];

/// Bytes of log per Spark partition (`targetBytes`) unless said otherwise.
pub const DEFAULT_TARGET_BYTES: u64 = 64 << 20;

/// Rows per Arrow batch (`batchSize`) unless said otherwise: smaller than a Python read's
/// batches (65,536), so that a batch's copied record bytes are still in the core's cache when its
/// values decode, and its buffers are memory the allocator just freed rather than fresh pages.
/// Measured through the JVM source (BENCHMARKS.md, issue 37): a typed Avro read's CPU fell by
/// about a sixth against 65,536, a bytes read of zstd logs by a fifth. Spark's own Parquet
/// reader makes batches of 4,096.
pub const DEFAULT_BATCH_SIZE: u64 = 8192;

/// How long `minOffsetsPerTrigger` waits for a backlog at most (`maxTriggerDelay`) unless said
/// otherwise: Spark's 15 minutes.
pub const DEFAULT_MAX_TRIGGER_DELAY_MS: u64 = 15 * 60_000;

/// Everything a read was told, checked.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// The paths read.
    pub paths: Vec<String>,
    /// The columns (Spark's Kafka source's, `headers` with `includeHeaders`, the batch
    /// metadata with `batchMetadata`).
    pub columns: Vec<String>,
    /// Which topic-partitions.
    pub subscription: Subscription,
    /// Which offsets of each.
    pub bounds: Bounds,
    /// `kafka.isolation.level=read_committed`.
    pub read_committed: bool,
    /// `failOnDataLoss`.
    pub fail_on_data_loss: bool,
    /// `targetBytes`.
    pub target_bytes: u64,
    /// `minPartitions`.
    pub min_partitions: Option<u64>,
    /// `maxRecordsPerPartition`.
    pub max_records_per_partition: Option<u64>,
    /// `maxOffsetsPerTrigger`.
    pub max_offsets_per_trigger: Option<u64>,
    /// `minOffsetsPerTrigger`.
    pub min_offsets_per_trigger: Option<u64>,
    /// `maxTriggerDelay`, in milliseconds.
    pub max_trigger_delay_ms: u64,
    /// `includeControl`.
    pub include_control: bool,
    /// `checkCrc`.
    pub check_crc: bool,
    /// `onCorrupt`: `error`, `skip` or `stop`.
    pub on_corrupt: OnCorrupt,
    /// `maxDecompressedSize`.
    pub max_decompressed_size: u64,
    /// `batchSize`.
    pub batch_size: u64,
    /// `visibility`.
    pub visibility: Visibility,
    /// `storage.<key>` and `encryptionKeys`, as the core's storage options.
    pub storage: BTreeMap<String, String>,
    /// The typed keys and values asked for (not yet resolved).
    pub values: Option<ValueArgs>,
    /// The options given that are accepted and ignored (lower case), for a log line.
    pub ignored: Vec<String>,
}

/// Spark's durations (`maxTriggerDelay`): `15m`, `30s`, `500ms`, `1h`, `2d`, or milliseconds.
pub fn duration_ms(text: &str, name: &str) -> Result<u64> {
    let t: String = text.trim().to_lowercase().replace(' ', "");
    // Longest suffix first: "min" before "m", "ms" before "s".
    let units: [(&str, u64); 6] = [
        ("min", 60_000),
        ("ms", 1),
        ("s", 1000),
        ("m", 60_000),
        ("h", 3_600_000),
        ("d", 86_400_000),
    ];
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let bad = || {
        Error::invalid_argument(format!(
            "option {name}: not a duration such as '15m' or '30s': '{text}'"
        ))
    };
    for (suffix, scale) in units {
        if let Some(n) = t.strip_suffix(suffix).filter(|n| digits(n)) {
            return n
                .parse::<u64>()
                .ok()
                .and_then(|n| n.checked_mul(scale))
                .ok_or_else(bad);
        }
    }
    if digits(&t) {
        return t.parse::<u64>().map_err(|_| bad());
    }
    Err(bad())
}

/// The columns a read's options give (asked before batch or streaming is known): Spark's Kafka
/// source columns, `headers` with `includeHeaders`, kafkalog's batch metadata with
/// `batchMetadata`.
pub fn columns(o: &Raw) -> Result<Vec<String>> {
    let headers = o.flag("includeheaders", "includeHeaders", false)?;
    let metadata = o.flag("batchmetadata", "batchMetadata", false)?;
    Ok(crate::spark::shapes::spark_columns(headers, metadata))
}

/// What the schema of a read needs from its options before batch or streaming is known: the
/// typed keys and values (`None` when there are none, and nothing else is looked at), with the
/// paths and storage options to find the read's topic and the registry by, as JSON
/// `{"values", "paths", "storage"}`.
pub fn typed(o: &Raw) -> Result<Option<Value>> {
    let Some(values) = common::values(o)? else {
        return Ok(None);
    };
    let paths = common::paths(o)?.ok_or_else(|| {
        Error::invalid_argument("give the log files to read: .load(\"/path/to/logs\")")
    })?;
    Ok(Some(json!({
        "values": values.to_json(),
        "paths": paths,
        "storage": common::storage(o)?,
    })))
}

/// The message for options this source does not know (the same from both sources): each as
/// the user spelled it (`o`), with the nearest known one.
fn unknown(o: &Raw, names: &[String]) -> Error {
    let known: Vec<&str> = KAFKALOG_READ
        .iter()
        .chain(VALUE_OPTIONS.iter())
        .copied()
        .collect();
    let every = || SPARK_READ.iter().chain(known.iter()).copied();
    let named: Vec<String> = names
        .iter()
        .map(|n| {
            let spelled = o.spelled(n);
            match crate::error::nearest_name(spelled, every()) {
                Some(near) => format!("{spelled} (did you mean {near}?)"),
                None => spelled.to_owned(),
            }
        })
        .collect();
    Error::invalid_argument(format!(
        "unknown option(s) for the kafkalog data source: {}; it takes Spark's Kafka source \
         options ({}, kafka.*), and {}, storage.<key>",
        named.join(", "),
        SPARK_READ.join(", "),
        known.join(", ")
    ))
}

impl ReadOptions {
    /// The options of a batch read (`streaming` false) or of a stream, checked.
    pub fn parse(o: &Raw, streaming: bool) -> Result<ReadOptions> {
        let is_known = |k: &str| {
            SPARK_READ
                .iter()
                .chain(KAFKALOG_READ.iter())
                .chain(VALUE_OPTIONS.iter())
                .any(|n| n.eq_ignore_ascii_case(k))
                || SPARK_IGNORED.contains(&k)
                || k.starts_with("kafka.")
                || k.starts_with(STORAGE_PREFIX)
        };
        let unknown_names: Vec<String> = o
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !is_known(k))
            .map(str::to_owned)
            .collect();
        if !unknown_names.is_empty() {
            return Err(unknown(o, &unknown_names));
        }
        let ignored = o
            .iter()
            .map(|(k, _)| k)
            .filter(|k| {
                SPARK_IGNORED.contains(k)
                    || (k.starts_with("kafka.") && *k != "kafka.isolation.level")
            })
            .map(str::to_owned)
            .collect();
        let paths = common::paths(o)?.ok_or_else(|| {
            Error::invalid_argument("give the log files to read: .load(\"/path/to/logs\")")
        })?;
        let bounds = Bounds::make(o, streaming)?;
        let level = o
            .non_empty("kafka.isolation.level")
            .or_else(|| o.get("isolationlevel"))
            .unwrap_or("read_uncommitted");
        let read_committed = match level.trim().to_lowercase().as_str() {
            "read_committed" => true,
            "read_uncommitted" => false,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "kafka.isolation.level must be 'read_uncommitted' or 'read_committed', not \
                     '{level}'"
                )))
            }
        };
        let subscription = Subscription::of(o)?;
        let on_corrupt_name = o.get("oncorrupt").unwrap_or("error");
        let on_corrupt = match on_corrupt_name {
            "error" | "raise" => OnCorrupt::Error,
            "skip" => OnCorrupt::Skip,
            "stop" => OnCorrupt::Stop,
            other => {
                return Err(Error::invalid_argument(format!(
                    "onCorrupt must be \"error\", \"skip\" or \"stop\", not '{other}'"
                )))
            }
        };
        let non_negative = |name: &str, default: u64| -> Result<u64> {
            match o.integer(name)? {
                None => Ok(default),
                Some(n) if n >= 0 => Ok(n as u64),
                Some(n) => Err(Error::invalid_argument(format!(
                    "option {name} must not be negative, not {n}"
                ))),
            }
        };
        let min_partitions = o.positive("minpartitions")?;
        let max_records_per_partition = o.positive("maxrecordsperpartition")?;
        let max_offsets_per_trigger = o.positive("maxoffsetspertrigger")?;
        let min_offsets_per_trigger = o.positive("minoffsetspertrigger")?;
        let target_bytes = o.positive("targetbytes")?.unwrap_or(DEFAULT_TARGET_BYTES);
        let batch_size = o.positive("batchsize")?.unwrap_or(DEFAULT_BATCH_SIZE);
        let visibility = Visibility::from_name(o.get("visibility").unwrap_or("consumer"))?;
        Ok(ReadOptions {
            paths,
            columns: columns(o)?,
            subscription,
            bounds,
            read_committed,
            fail_on_data_loss: o.flag("failondataloss", "failOnDataLoss", true)?,
            target_bytes,
            min_partitions,
            max_records_per_partition,
            max_offsets_per_trigger,
            min_offsets_per_trigger,
            max_trigger_delay_ms: match o.get("maxtriggerdelay") {
                Some(t) => duration_ms(t, "maxTriggerDelay")?,
                None => DEFAULT_MAX_TRIGGER_DELAY_MS,
            },
            include_control: o.flag("includecontrol", "includeControl", false)?,
            check_crc: o.flag("checkcrc", "checkCrc", true)?,
            on_corrupt,
            max_decompressed_size: non_negative(
                "maxdecompressedsize",
                DEFAULT_MAX_DECOMPRESSED_SIZE as u64,
            )?,
            batch_size,
            visibility,
            storage: common::storage(o)?,
            values: common::values(o)?,
            ignored,
        })
    }

    /// The options as JSON, what both sources build their own objects from:
    /// `{"paths", "columns", "subscription", "bounds", "isolation_level", "read_committed",
    /// "fail_on_data_loss", "target_bytes", "min_partitions", "max_records_per_partition",
    /// "max_offsets_per_trigger", "min_offsets_per_trigger", "max_trigger_delay_ms",
    /// "include_control", "check_crc", "on_corrupt", "max_decompressed_size", "batch_size",
    /// "visibility", "storage", "values", "ignored"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "paths": self.paths,
            "columns": self.columns,
            "subscription": self.subscription.to_json(),
            "bounds": self.bounds.to_json(),
            "isolation_level": if self.read_committed { "read_committed" } else { "read_uncommitted" },
            "read_committed": self.read_committed,
            "fail_on_data_loss": self.fail_on_data_loss,
            "target_bytes": self.target_bytes,
            "min_partitions": self.min_partitions,
            "max_records_per_partition": self.max_records_per_partition,
            "max_offsets_per_trigger": self.max_offsets_per_trigger,
            "min_offsets_per_trigger": self.min_offsets_per_trigger,
            "max_trigger_delay_ms": self.max_trigger_delay_ms,
            "include_control": self.include_control,
            "check_crc": self.check_crc,
            "on_corrupt": self.on_corrupt.name(),
            "max_decompressed_size": self.max_decompressed_size,
            "batch_size": self.batch_size,
            "visibility": match self.visibility { Visibility::Consumer => "consumer", Visibility::All => "all" },
            "storage": self.storage,
            "values": self.values.as_ref().map(ValueArgs::to_json),
            "ignored": self.ignored,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)], streaming: bool) -> Result<ReadOptions> {
        ReadOptions::parse(&Raw::new(pairs.iter().copied()), streaming)
    }

    #[test]
    fn defaults_of_a_batch_read() {
        let o = parse(&[("path", "/logs")], false).unwrap();
        assert_eq!(o.paths, vec!["/logs"]);
        assert_eq!(
            o.columns,
            [
                "key",
                "value",
                "topic",
                "partition",
                "offset",
                "timestamp",
                "timestampType"
            ]
        );
        assert!(!o.read_committed && o.fail_on_data_loss && o.check_crc && !o.include_control);
        assert_eq!(o.target_bytes, DEFAULT_TARGET_BYTES);
        assert_eq!(o.max_trigger_delay_ms, 15 * 60_000);
        assert_eq!(o.on_corrupt, OnCorrupt::Error);
        assert!(o.values.is_none() && o.ignored.is_empty());
        assert_eq!(o.bounds.start_of(Some("t"), Some(0)), (Some(-2), None));
    }

    #[test]
    fn sparks_options_and_kafkalogs_own() {
        let o = parse(
            &[
                ("PATHS", r#"["/a", "/b"]"#),
                ("kafka.isolation.level", "read_committed"),
                ("kafka.bootstrap.servers", "x:9092"),
                ("groupIdPrefix", "g"),
                ("includeHeaders", "true"),
                ("maxOffsetsPerTrigger", "17"),
                ("maxTriggerDelay", "30s"),
                ("onCorrupt", "raise"),
                ("storage.aws_region", "eu"),
                ("subscribe", "orders"),
                ("valueFormat", "string"),
            ],
            true,
        )
        .unwrap();
        assert_eq!(o.paths, vec!["/a", "/b"]);
        assert!(o.read_committed && o.columns.contains(&"headers".to_owned()));
        assert_eq!(o.max_offsets_per_trigger, Some(17));
        assert_eq!(o.max_trigger_delay_ms, 30_000);
        assert_eq!(o.on_corrupt, OnCorrupt::Error);
        assert_eq!(o.storage["aws_region"], "eu");
        assert_eq!(o.ignored, vec!["groupidprefix", "kafka.bootstrap.servers"]);
        assert_eq!(o.values.unwrap().value_format, "string");
        let v = parse(&[("path", "/l"), ("subscribe", "t")], false)
            .unwrap()
            .to_json();
        assert_eq!(v["subscription"]["topics"], json!(["t"]));
        assert_eq!(v["bounds"]["start_offset"]["every"], json!(-2));
    }

    #[test]
    fn errors_name_the_option() {
        for (options, streaming, text) in [
            (&[("path", "/l"), ("startingOffset", "earliest")][..], false, "unknown option(s) for the kafkalog data source: startingOffset (did you mean startingOffsets?); it takes Spark's Kafka source options (assign, subscribe,"),
            (&[("startingOffsets", "earliest")][..], false, "give the log files to read"),
            (&[("path", "/l"), ("kafka.isolation.level", "serializable")][..], false, "kafka.isolation.level must be 'read_uncommitted' or 'read_committed', not 'serializable'"),
            (&[("path", "/l"), ("onCorrupt", "ignore")][..], false, "onCorrupt must be \"error\", \"skip\" or \"stop\", not 'ignore'"),
            (&[("path", "/l"), ("minPartitions", "0")][..], false, "option minpartitions must be positive, not 0"),
            (&[("path", "/l"), ("targetBytes", "many")][..], false, "option targetbytes must be an integer, not 'many'"),
            (&[("path", "/l"), ("maxTriggerDelay", "soon")][..], true, "option maxTriggerDelay: not a duration such as '15m' or '30s': 'soon'"),
            (&[("path", "/l"), ("visibility", "none")][..], false, "visibility must be 'consumer' or 'all'"),
            (&[("path", "/l"), ("failOnDataLoss", "perhaps")][..], false, "option failOnDataLoss must be true or false"),
        ] {
            let err = parse(options, streaming).unwrap_err();
            assert!(err.message.starts_with(text), "{}", err.message);
        }
    }

    #[test]
    fn durations_as_spark_writes_them() {
        for (text, ms) in [
            ("15m", 900_000),
            ("2 min", 120_000),
            ("500ms", 500),
            ("3s", 3000),
            ("1h", 3_600_000),
            ("1d", 86_400_000),
            ("250", 250),
        ] {
            assert_eq!(duration_ms(text, "d").unwrap(), ms, "{text}");
        }
        for bad in ["", "m", "1.5s", "-1s", "99999999999999999999d"] {
            assert!(duration_ms(bad, "d").is_err(), "{bad}");
        }
    }
}
