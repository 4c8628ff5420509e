//! Which topic-partitions a Spark query reads and which offsets of each, as Spark's Kafka source
//! options say: `assign`, `subscribe`, `subscribePattern` (and kafkalog's `partitions`) as a
//! [`Subscription`]; the starting and ending offsets or timestamps, for every partition or per
//! partition, as [`Bounds`] (Spark's precedence applied). Resolved to offsets with ListOffsets
//! by the JNI planning (`rust/jni/planning.rs`) and the Python source.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::format::topic::TopicPattern;

/// Spark's special offset for a partition's earliest offset, in offsets JSON.
pub const EARLIEST: i64 = -2;
/// Spark's special offset for a partition's latest offset, in offsets JSON.
pub const LATEST: i64 = -1;

/// A topic-partition as the core lists it (a segment outside a `<topic>-<partition>` directory
/// has neither).
pub type TopicPartition = (Option<String>, Option<i32>);

fn invalid(message: impl Into<String>) -> Error {
    Error::invalid_argument(message)
}

/// Spark's `assign` / `subscribe` / `subscribePattern` (at most one), and kafkalog's
/// `partitions`. No subscription: every topic-partition found.
#[derive(Clone, Debug, Default)]
pub struct Subscription {
    /// `subscribe` (or kafkalog's `topics`): these topics.
    pub topics: Option<BTreeSet<String>>,
    /// `subscribePattern`: topics the pattern is found in, never an internal one (Spark's
    /// rule, [`TopicPattern::found_in`]).
    pub pattern: Option<String>,
    compiled: Option<TopicPattern>,
    /// `assign`: these topic-partitions.
    pub assign: Option<BTreeSet<(String, i32)>>,
    /// kafkalog's `partitions`: these partition numbers.
    pub partitions: Option<BTreeSet<i32>>,
}

impl Subscription {
    /// The subscription of the options' texts (`subscribe`, `subscribePattern`, `assign` as
    /// JSON `{"topic": [0, 1]}`, `partitions` as numbers separated by commas).
    pub fn make(
        topics: Option<&str>,
        pattern: Option<&str>,
        assign: Option<&str>,
        partitions: Option<&str>,
    ) -> Result<Subscription> {
        let given: Vec<&str> = [
            ("assign", assign.is_some()),
            ("subscribe", topics.is_some()),
            ("subscribePattern", pattern.is_some()),
        ]
        .iter()
        .filter(|(_, g)| *g)
        .map(|(n, _)| *n)
        .collect();
        if given.len() > 1 {
            return Err(invalid(format!(
                "only one of assign, subscribe and subscribePattern can be given, not {} (as \
                 Spark's Kafka source)",
                given.join(" and ")
            )));
        }
        let mut out = Subscription::default();
        if let Some(text) = topics {
            let set: BTreeSet<String> = text
                .split(',')
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect();
            if set.is_empty() {
                return Err(invalid("subscribe: no topic given"));
            }
            out.topics = Some(set);
        }
        if let Some(p) = pattern {
            // Spark's rule: the pattern found anywhere in a topic's name, internal topics
            // never (`TopicPattern::found_in`).
            let compiled = TopicPattern::new(p)
                .map_err(|e| invalid(format!("subscribePattern: bad pattern: {e}")))?;
            out.pattern = Some(p.to_owned());
            out.compiled = Some(compiled);
        }
        if let Some(text) = assign {
            let shape = || {
                invalid(format!(
                    "assign: expected {{\"topic\": [0, 1]}}, not {text}"
                ))
            };
            let tree: Value = serde_json::from_str(text)
                .map_err(|e| invalid(format!("assign: not valid JSON: {e}")))?;
            let Value::Object(topics) = tree else {
                return Err(shape());
            };
            let mut set = BTreeSet::new();
            for (topic, parts) in topics {
                let Value::Array(parts) = parts else {
                    return Err(shape());
                };
                for p in parts {
                    let p = p
                        .as_i64()
                        .and_then(|p| i32::try_from(p).ok())
                        .ok_or_else(shape)?;
                    set.insert((topic.clone(), p));
                }
            }
            out.assign = Some(set);
        }
        if let Some(text) = partitions {
            let set = text
                .split(',')
                .map(|p| p.trim().parse::<i32>())
                .collect::<std::result::Result<BTreeSet<_>, _>>()
                .map_err(|_| invalid(format!("partitions must be integers: '{text}'")))?;
            out.partitions = Some(set);
        }
        Ok(out)
    }

    /// The subscription of a read's options (`subscribe`, or kafkalog's `topics`;
    /// `subscribePattern`, `assign`, `partitions`).
    pub fn of(o: &crate::spark::common::Raw) -> Result<Subscription> {
        Subscription::make(
            o.get("subscribe").or_else(|| o.get("topics")),
            o.get("subscribepattern"),
            o.get("assign"),
            o.get("partitions"),
        )
    }

    /// Whether the subscription names `topic` itself: `subscribe` or `assign` lists it (a
    /// pattern that matches it does not name it).
    pub fn names(&self, topic: &str) -> bool {
        self.topics.as_ref().is_some_and(|t| t.contains(topic))
            || self
                .assign
                .as_ref()
                .is_some_and(|a| a.iter().any(|(t, _)| t == topic))
    }

    /// The topics of `found` (each topic the subscription took, once) that a read of typed
    /// keys or values leaves out: Kafka's internal topics and the registry's storage topic
    /// (`schemas_topic`, default `_schemas`) when the read has other topics, unless the
    /// subscription names them, as `kafkalog convert` and `kafkalog.read` do
    /// (`read::files::typed_topics`). Then a log directory of one data topic is a read of
    /// that topic, its subjects `<topic>-key` and `<topic>-value`.
    pub fn typed_left_out(&self, found: &[&str], schemas_topic: Option<&str>) -> Vec<String> {
        crate::read::files::typed_left_out(found, |t| self.names(t), schemas_topic)
    }

    /// Whether the subscription takes the topic-partition.
    pub fn takes(&self, topic: Option<&str>, partition: Option<i32>) -> bool {
        if let Some(topics) = &self.topics {
            if !topic.is_some_and(|t| topics.contains(t)) {
                return false;
            }
        }
        if let Some(pattern) = &self.compiled {
            if !topic.is_some_and(|t| pattern.found_in(t)) {
                return false;
            }
        }
        if let Some(assign) = &self.assign {
            match (topic, partition) {
                (Some(t), Some(p)) if assign.contains(&(t.to_owned(), p)) => {}
                _ => return false,
            }
        }
        match &self.partitions {
            Some(ps) => partition.is_some_and(|p| ps.contains(&p)),
            None => true,
        }
    }

    /// As JSON: `{"topics", "pattern", "assign": [[topic, partition]], "partitions"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "topics": self.topics,
            "pattern": self.pattern,
            "assign": self.assign.as_ref().map(|a| a.iter().map(|(t, p)| json!([t, p])).collect::<Vec<_>>()),
            "partitions": self.partitions,
        })
    }
}

/// One bound as given: a value for every partition (`None`: none given), and values for named
/// topic-partitions, which win over it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bound {
    /// For every partition.
    pub every: Option<i64>,
    /// Per topic-partition.
    pub per: BTreeMap<(String, i32), i64>,
}

impl Bound {
    /// The bound of one topic-partition: its own where named, else the one for all.
    pub fn of(&self, topic: Option<&str>, partition: Option<i32>) -> Option<i64> {
        if let (Some(t), Some(p)) = (topic, partition) {
            if let Some(v) = self.per.get(&(t.to_owned(), p)) {
                return Some(*v);
            }
        }
        self.every
    }

    fn from_json(v: &Value) -> Result<Bound> {
        let bad = || invalid("bounds: not what Bounds::to_json writes");
        let every = match v.get("every") {
            None | Some(Value::Null) => None,
            Some(n) => Some(n.as_i64().ok_or_else(bad)?),
        };
        let mut per = BTreeMap::new();
        for t in v.get("per").and_then(Value::as_array).ok_or_else(bad)? {
            let t = t.as_array().filter(|t| t.len() == 3).ok_or_else(bad)?;
            let topic = t[0].as_str().ok_or_else(bad)?.to_owned();
            let partition = t[1]
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .ok_or_else(bad)?;
            per.insert((topic, partition), t[2].as_i64().ok_or_else(bad)?);
        }
        Ok(Bound { every, per })
    }

    fn to_json(&self) -> Value {
        let per: Vec<Value> = self
            .per
            .iter()
            .map(|((t, p), v)| json!([t, p, v]))
            .collect();
        json!({"every": self.every, "per": per})
    }
}

/// What a start timestamp no record reaches means (`startingOffsetsByTimestampStrategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Fail the query (Spark's default).
    #[default]
    Error,
    /// Start at the latest offset (read nothing there).
    Latest,
}

/// Start and end as given, Spark's precedence applied (a timestamp for every partition over
/// timestamps per partition over offsets), to be resolved per topic-partition.
#[derive(Clone, Debug, Default)]
pub struct Bounds {
    /// `startingOffsets`: offsets, with [`EARLIEST`] and [`LATEST`].
    pub start_offset: Bound,
    /// `endingOffsets` (exclusive).
    pub end_offset: Bound,
    /// `startingTimestamp` or `startingOffsetsByTimestamp` (epoch ms).
    pub start_timestamp: Bound,
    /// `endingTimestamp` or `endingOffsetsByTimestamp` (epoch ms).
    pub end_timestamp: Bound,
    /// `startingOffsetsByTimestampStrategy`.
    pub strategy: Strategy,
}

/// A timestamp bound's text as epoch milliseconds.
pub fn to_millis(text: &str) -> Result<i64> {
    text.trim().parse::<i64>().map_err(|_| {
        invalid(format!(
            "a timestamp must be epoch milliseconds or a datetime, not '{text}'"
        ))
    })
}

fn offset(text: &str, what: &str) -> Result<i64> {
    let n = text
        .trim()
        .parse::<i64>()
        .map_err(|_| invalid(format!("{what}: not an offset: '{text}'")))?;
    if n < EARLIEST {
        return Err(invalid(format!(
            "{what}: invalid offset {n} (-2 is earliest, -1 latest)"
        )));
    }
    Ok(n)
}

/// A bound for every partition (a number, or `earliest`/`latest` for offsets), or per
/// partition: JSON `{"topic": {"0": value}}` as Spark's Kafka source takes it.
fn bound(spec: Option<&str>, what: &str, timestamps: bool) -> Result<Bound> {
    let Some(spec) = spec else {
        return Ok(Bound::default());
    };
    let text = spec.trim();
    let low = text.to_lowercase();
    if !timestamps && (low == "earliest" || low == "latest") {
        let every = if low == "earliest" { EARLIEST } else { LATEST };
        return Ok(Bound {
            every: Some(every),
            per: BTreeMap::new(),
        });
    }
    let value = |t: &str| {
        if timestamps {
            to_millis(t)
        } else {
            offset(t, what)
        }
    };
    if !text.starts_with('{') {
        return Ok(Bound {
            every: Some(value(text)?),
            per: BTreeMap::new(),
        });
    }
    let tree: Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("{what}: not valid JSON: {e}")))?;
    let Value::Object(topics) = tree else {
        return Err(invalid(format!("{what}: not valid JSON: {text}")));
    };
    let mut per = BTreeMap::new();
    for (topic, parts) in topics {
        let Value::Object(parts) = parts else {
            return Err(invalid(format!(
                "{what}: expected {{\"topic\": {{\"partition\": value}}}}, got {text}"
            )));
        };
        for (p, v) in parts {
            let partition = p
                .trim()
                .parse::<i32>()
                .map_err(|_| invalid(format!("{what}: bad partition '{p}'")))?;
            let v = match &v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            per.insert((topic.clone(), partition), value(&v)?);
        }
    }
    Ok(Bound { every: None, per })
}

impl Bounds {
    /// The bounds of the options' texts (lower-case names: `startingoffsets`, ...), as Spark's
    /// Kafka source reads them; `streaming`: a streaming query's (no ending offsets; the start
    /// defaults to `latest`).
    pub fn make(o: &crate::spark::common::Raw, streaming: bool) -> Result<Bounds> {
        if streaming
            && [
                "endingoffsets",
                "endingtimestamp",
                "endingoffsetsbytimestamp",
            ]
            .iter()
            .any(|k| o.get(k).is_some())
        {
            return Err(invalid(
                "ending offsets are not valid in streaming queries (as in Spark's Kafka source): \
                 a streaming query reads on as the log grows",
            ));
        }
        let start_default = if streaming { "latest" } else { "earliest" };
        // Spark's precedence: a timestamp over timestamps per partition over offsets.
        let (mut start_offset, mut end_offset) = (None, None);
        let start_timestamp = o
            .get("startingtimestamp")
            .map(|ts| to_millis(ts).map(|_| ts))
            .transpose()?
            .or_else(|| o.get("startingoffsetsbytimestamp"));
        if start_timestamp.is_none() {
            start_offset = Some(o.non_empty("startingoffsets").unwrap_or(start_default));
        }
        let end_timestamp = o
            .get("endingtimestamp")
            .map(|ts| to_millis(ts).map(|_| ts))
            .transpose()?
            .or_else(|| o.get("endingoffsetsbytimestamp"));
        if end_timestamp.is_none() {
            end_offset = Some(o.non_empty("endingoffsets").unwrap_or("latest"));
        }
        for (name, value, bad) in [
            ("startingOffsets", start_offset, "latest"),
            ("endingOffsets", end_offset, "earliest"),
        ] {
            let Some(value) = value.filter(|v| !v.trim().starts_with('{')) else {
                continue;
            };
            let v = value.trim().to_lowercase();
            if v != "earliest" && v != "latest" {
                return Err(invalid(format!(
                    "{name} must be 'earliest', 'latest' or JSON such as {{\"topic\": {{\"0\": \
                     23}}}}, not '{value}'"
                )));
            }
            if v == bad && !streaming {
                return Err(invalid(format!(
                    "{name}={bad} is not valid for batch queries (as in Spark's Kafka source): \
                     it reads nothing"
                )));
            }
        }
        let strategy = o
            .get("startingoffsetsbytimestampstrategy")
            .unwrap_or("error");
        Bounds::from_texts(
            start_offset,
            end_offset,
            start_timestamp,
            end_timestamp,
            strategy,
        )
    }

    /// Bounds of texts as Spark's options hold them, each for every partition (a number, or
    /// `earliest`/`latest` for offsets) or per partition (JSON `{"topic": {"0": value}}`);
    /// `strategy`: `startingOffsetsByTimestampStrategy`.
    pub fn from_texts(
        start_offset: Option<&str>,
        end_offset: Option<&str>,
        start_timestamp: Option<&str>,
        end_timestamp: Option<&str>,
        strategy: &str,
    ) -> Result<Bounds> {
        let strategy = strategy.trim().to_lowercase();
        let strategy = match strategy.as_str() {
            "error" => Strategy::Error,
            "latest" => Strategy::Latest,
            _ => {
                return Err(invalid(format!(
                    "startingOffsetsByTimestampStrategy must be 'error' or 'latest', not \
                     '{strategy}'"
                )))
            }
        };
        Ok(Bounds {
            start_offset: bound(start_offset, "starting offsets", false)?,
            end_offset: bound(end_offset, "ending offsets", false)?,
            start_timestamp: bound(start_timestamp, "starting timestamp", true)?,
            end_timestamp: bound(end_timestamp, "ending timestamp", true)?,
            strategy,
        })
    }

    /// The start of a partition: (offset, with [`EARLIEST`]/[`LATEST`]; or a timestamp).
    pub fn start_of(
        &self,
        topic: Option<&str>,
        partition: Option<i32>,
    ) -> (Option<i64>, Option<i64>) {
        match self.start_timestamp.of(topic, partition) {
            Some(ts) => (None, Some(ts)),
            None => (self.start_offset.of(topic, partition), None),
        }
    }

    /// The end of a partition: (offset, or a timestamp).
    pub fn end_of(
        &self,
        topic: Option<&str>,
        partition: Option<i32>,
    ) -> (Option<i64>, Option<i64>) {
        match self.end_timestamp.of(topic, partition) {
            Some(ts) => (None, Some(ts)),
            None => (self.end_offset.of(topic, partition), None),
        }
    }

    /// Per-partition bounds must name partitions that are there (`found`), and, as Spark's
    /// Kafka source requires of specific offsets and timestamps, every partition read.
    pub fn check_partitions(&self, found: &BTreeSet<TopicPartition>) -> Result<()> {
        self.check_partitions_named(found, true)
    }

    /// [`Bounds::check_partitions`]; `require_all` false leaves out the second check (for
    /// kafkalog's own `plan`, which is not Spark's Kafka source).
    pub fn check_partitions_named(
        &self,
        found: &BTreeSet<TopicPartition>,
        require_all: bool,
    ) -> Result<()> {
        let named: BTreeSet<&(String, i32)> = [
            &self.start_offset,
            &self.end_offset,
            &self.start_timestamp,
            &self.end_timestamp,
        ]
        .iter()
        .flat_map(|b| b.per.keys())
        .collect();
        let unknown: Vec<String> = named
            .iter()
            .filter(|(t, p)| !found.contains(&(Some(t.clone()), Some(*p))))
            .map(|(t, p)| format!("{t}-{p}"))
            .collect();
        if !unknown.is_empty() {
            return Err(invalid(format!(
                "bounds name topic-partitions that are not there: {}",
                unknown.join(", ")
            )));
        }
        if !require_all {
            return Ok(());
        }
        for (what, b) in [
            ("startingOffsets", &self.start_offset),
            ("endingOffsets", &self.end_offset),
            ("startingOffsetsByTimestamp", &self.start_timestamp),
            ("endingOffsetsByTimestamp", &self.end_timestamp),
        ] {
            if b.per.is_empty() {
                continue;
            }
            let missing: Vec<String> = found
                .iter()
                .filter(|(t, p)| match (t, p) {
                    (Some(t), Some(p)) => !b.per.contains_key(&(t.clone(), *p)),
                    _ => true,
                })
                .map(|(t, p)| name_of(t.as_deref(), *p))
                .collect();
            if !missing.is_empty() {
                return Err(invalid(format!(
                    "{what} names specific partitions, so it must name every partition read (as \
                     Spark's Kafka source requires; -2 is earliest, -1 latest): missing {}",
                    missing.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The bounds [`Bounds::to_json`] wrote.
    pub fn from_json(v: &Value) -> Result<Bounds> {
        let part = |name: &str| {
            Bound::from_json(
                v.get(name)
                    .ok_or_else(|| invalid("bounds: missing a bound"))?,
            )
        };
        Ok(Bounds {
            start_offset: part("start_offset")?,
            end_offset: part("end_offset")?,
            start_timestamp: part("start_timestamp")?,
            end_timestamp: part("end_timestamp")?,
            strategy: match v.get("strategy").and_then(Value::as_str) {
                Some("latest") => Strategy::Latest,
                _ => Strategy::Error,
            },
        })
    }

    /// As JSON: each bound `{"every", "per": [[topic, partition, value]]}`, and `strategy`.
    pub fn to_json(&self) -> Value {
        json!({
            "start_offset": self.start_offset.to_json(),
            "end_offset": self.end_offset.to_json(),
            "start_timestamp": self.start_timestamp.to_json(),
            "end_timestamp": self.end_timestamp.to_json(),
            "strategy": match self.strategy { Strategy::Error => "error", Strategy::Latest => "latest" },
        })
    }
}

/// A topic-partition's name in messages: `orders-0`.
pub fn name_of(topic: Option<&str>, partition: Option<i32>) -> String {
    format!(
        "{}-{}",
        topic.unwrap_or("None"),
        partition.map_or("None".to_owned(), |p| p.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spark::common::Raw;

    fn raw(pairs: &[(&str, &str)]) -> Raw {
        Raw::new(pairs.iter().copied())
    }

    #[test]
    fn subscriptions_as_spark_takes_them() {
        let s = Subscription::make(Some("a, b"), None, None, Some("0,2")).unwrap();
        assert!(s.takes(Some("a"), Some(0)) && s.takes(Some("b"), Some(2)));
        assert!(!s.takes(Some("a"), Some(1)) && !s.takes(Some("c"), Some(0)));
        assert!(!s.takes(None, None));
        let s = Subscription::make(None, Some("ord.*"), None, None).unwrap();
        assert!(s.takes(Some("orders"), Some(3)));
        // Spark finds the pattern anywhere in a name (`findFirstIn` over its admin client's
        // topic list), and that list has no internal topics.
        assert!(s.takes(Some("xorders"), Some(3)));
        let s = Subscription::make(None, Some("^ord"), None, None).unwrap();
        assert!(s.takes(Some("orders"), Some(0)) && !s.takes(Some("xorders"), Some(0)));
        let s = Subscription::make(None, Some("__consumer_offsets"), None, None).unwrap();
        assert!(!s.takes(Some("__consumer_offsets"), Some(0)));
        let s = Subscription::make(None, None, Some(r#"{"a": [1], "b": [0, 2]}"#), None).unwrap();
        assert!(s.takes(Some("b"), Some(2)) && !s.takes(Some("a"), Some(0)));
        for (t, p, a, parts, text) in [
            (Some("a"), Some("a"), None, None, "only one of assign, subscribe and subscribePattern can be given, not subscribe and subscribePattern"),
            (Some(" , "), None, None, None, "subscribe: no topic given"),
            (None, Some("("), None, None, "subscribePattern: bad pattern"),
            (None, None, Some("[1]"), None, "assign: expected {\"topic\": [0, 1]}, not [1]"),
            (None, None, Some("{"), None, "assign: not valid JSON"),
            (None, None, None, Some("1,x"), "partitions must be integers: '1,x'"),
        ] {
            let err = Subscription::make(t, p, a, parts).unwrap_err();
            assert!(err.message.starts_with(text), "{}", err.message);
        }
    }

    #[test]
    fn bounds_with_sparks_precedence_and_checks() {
        let b = Bounds::make(
            &raw(&[
                ("startingOffsets", "earliest"),
                ("startingOffsetsByTimestamp", r#"{"t": {"0": 5}}"#),
                ("endingOffsets", r#"{"t": {"0": 9, "1": -1}}"#),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(b.start_of(Some("t"), Some(0)), (None, Some(5)));
        assert_eq!(b.start_of(Some("t"), Some(1)), (None, None));
        assert_eq!(b.end_of(Some("t"), Some(1)), (Some(LATEST), None));
        let b = Bounds::make(&raw(&[("startingTimestamp", "7")]), true).unwrap();
        assert_eq!(b.start_of(Some("x"), Some(0)), (None, Some(7)));
        assert_eq!(b.end_of(Some("x"), Some(0)), (Some(LATEST), None));
        let b = Bounds::make(&raw(&[]), true).unwrap();
        assert_eq!(b.start_of(None, None), (Some(LATEST), None));
        for (options, streaming, text) in [
            (
                &[("endingOffsets", "latest")][..],
                true,
                "ending offsets are not valid in streaming queries",
            ),
            (
                &[("startingOffsets", "first")][..],
                false,
                "startingOffsets must be 'earliest', 'latest' or JSON",
            ),
            (
                &[("startingOffsets", "latest")][..],
                false,
                "startingOffsets=latest is not valid for batch queries",
            ),
            (
                &[("endingOffsets", "earliest")][..],
                false,
                "endingOffsets=earliest is not valid for batch queries",
            ),
            (
                &[("startingOffsets", r#"{"t": {"0": -3}}"#)][..],
                false,
                "starting offsets: invalid offset -3",
            ),
            (
                &[("startingOffsets", r#"{"t": 1}"#)][..],
                false,
                "starting offsets: expected {\"topic\": {\"partition\": value}}",
            ),
            (
                &[("startingOffsets", r#"{"t": {"x": 1}}"#)][..],
                false,
                "starting offsets: bad partition 'x'",
            ),
            (
                &[("startingTimestamp", "noon")][..],
                false,
                "a timestamp must be epoch milliseconds",
            ),
            (
                &[("startingOffsetsByTimestampStrategy", "first")][..],
                false,
                "startingOffsetsByTimestampStrategy must be 'error' or 'latest'",
            ),
        ] {
            let err = Bounds::make(&raw(options), streaming).unwrap_err();
            assert!(err.message.starts_with(text), "{}", err.message);
        }
    }

    #[test]
    fn per_partition_bounds_name_every_partition_read_and_no_other() {
        let b = Bounds::make(&raw(&[("startingOffsets", r#"{"t": {"0": 1}}"#)]), false).unwrap();
        let found = |ps: &[i32]| -> BTreeSet<TopicPartition> {
            ps.iter()
                .map(|p| (Some("t".to_owned()), Some(*p)))
                .collect()
        };
        b.check_partitions(&found(&[0])).unwrap();
        let err = b.check_partitions(&found(&[0, 1])).unwrap_err();
        assert!(err.message.ends_with("must name every partition read (as Spark's Kafka source requires; -2 is earliest, -1 latest): missing t-1"), "{}", err.message);
        let err = b.check_partitions(&found(&[1])).unwrap_err();
        assert_eq!(
            err.message,
            "bounds name topic-partitions that are not there: t-0"
        );
    }
}
