//! The paths a user names, resolved into the segment files a read opens: each pattern expanded
//! (globs), each path discovered (a segment, a partition directory, a log directory, a tiered
//! prefix), the remote segments `__remote_log_metadata` does not list as served left out, and a
//! partition's remote and local segments made one log. [`resolve`] is the one pipeline: the
//! Rust [`ReaderBuilder::build`](crate::read::reader::ReaderBuilder::build) and every Python
//! function that takes paths use it.
//!
//! Which topics a read takes is decided here too: a [`TopicFilter`] (Kafka's
//! consumer's pattern subscription: a regular expression matched against the whole topic name), and for a
//! read of typed keys or values over several topics, Kafka's internal topics and the Schema
//! Registry's storage topic left out unless the filter names them ([`typed_topics`]).

use crate::error::{Error, Result};
use crate::format::tiered::{SegmentName, TieredDir};
use crate::format::topic::{is_internal, TopicPattern};
use crate::internal::fold::Fold;
use crate::internal::input::{FoldOptions, Kind};
use crate::internal::remote_log_metadata::{RemoteSegmentState, COPY_SEGMENT_FINISHED};
use crate::log::discover::{by_partition, discover, discover_noting, SegmentFile};
use crate::log::remote_local::merge_remote_and_local;
use crate::read::reader::{LogReader, ReaderBuilder};
use crate::read::topic_fold::fold_partition;
use crate::storage::tiered::discovery::METADATA_OPTION;
use crate::storage::Storage;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything under each of `paths` (glob patterns expanded), in reading order; a file or
/// partition named twice is read once. Also notes for people, which the Python API gives as
/// warnings: what a tiered-storage prefix held that is not read (orphaned uploads, duplicates,
/// segments `__remote_log_metadata` does not serve), and a read that found no segment at all
/// (never silently 0 rows).
pub fn resolve(
    storage: &Arc<dyn Storage>,
    paths: &[PathBuf],
) -> Result<(Vec<SegmentFile>, Vec<String>)> {
    resolve_topics(storage, paths, &TopicFilter::default())
}

/// [`resolve`] keeping only the files of the topics `topics` takes. A file whose topic is not
/// known (a segment outside a `<topic>-<partition>` directory) is kept only when no pattern is
/// given.
pub fn resolve_topics(
    storage: &Arc<dyn Storage>,
    paths: &[PathBuf],
    topics: &TopicFilter,
) -> Result<(Vec<SegmentFile>, Vec<String>)> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    // Internal topics the pattern matches but does not name: said when nothing else matches.
    let mut internal: Vec<String> = Vec::new();
    for pattern in paths {
        for path in crate::storage::glob::expand(storage.as_ref(), pattern)? {
            for file in discover_noting(storage.as_ref(), &path, &mut skipped)? {
                let topic = file.origin.topic.as_deref();
                if topics.keeps(topic) {
                    if seen.insert(file.path.clone()) {
                        out.push(file);
                    }
                } else if let Some(t) = topic.filter(|t| topics.leaves_out_internal(Some(t))) {
                    if !internal.iter().any(|i| i == t) {
                        internal.push(t.to_string());
                    }
                }
            }
        }
    }
    let out = apply_remote_log_metadata(storage, out, &mut skipped)?;
    let mut notes = Vec::new();
    if !skipped.is_empty() {
        notes.push(format!(
            "tiered storage: {} object(s) not read:\n{}",
            skipped.len(),
            skipped.join("\n")
        ));
    }
    let out = merge_remote_and_local(storage.as_ref(), out)?;
    if out.is_empty() {
        let listed: Vec<String> = paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let filtered = match topics.pattern() {
            Some(p) => format!(" of a topic matching {p:?}"),
            None => String::new(),
        };
        let internal = if internal.is_empty() {
            String::new()
        } else {
            format!(
                " (it matches Kafka's internal topics {}, which a pattern takes only where \
                 it names them, as Kafka's consumer does: {:?} names them)",
                internal.join(", "),
                internal.join("|")
            )
        };
        notes.push(format!(
            "no Kafka segment (<20-digit offset>.log){filtered} found under {}: not a segment \
             file, a partition directory (<topic>-<partition>) or a log directory holding \
             them{internal}",
            listed.join(", ")
        ));
    }
    Ok((out, notes))
}

/// Which topics a read takes: every topic (the default), or those a Kafka consumer subscribed
/// with a pattern takes
/// ([`crate::format::topic::TopicPattern`], Kafka's rule; Spark's `subscribePattern` is
/// [`crate::format::topic::TopicPattern::found_in`]): the whole name
/// matches, and Kafka's internal topics (`__consumer_offsets`, `__transaction_state`,
/// `__share_group_state`) only where the pattern names them, as the consumer's
/// `exclude.internal.topics=true` (its default) has it. [`TopicFilter::including_internal`]
/// is that option set to false.
#[derive(Clone, Debug)]
pub struct TopicFilter {
    pattern: Option<TopicPattern>,
    exclude_internal: bool,
}

impl Default for TopicFilter {
    fn default() -> TopicFilter {
        TopicFilter {
            pattern: None,
            exclude_internal: true,
        }
    }
}

impl TopicFilter {
    /// The filter of `pattern` (`None`: every topic).
    pub fn new(pattern: Option<&str>) -> Result<TopicFilter> {
        Ok(TopicFilter {
            pattern: pattern.map(TopicPattern::new).transpose()?,
            exclude_internal: true,
        })
    }

    /// The same filter with internal topics matched like any other (Kafka's consumer with
    /// `exclude.internal.topics=false`).
    pub fn including_internal(mut self) -> TopicFilter {
        self.exclude_internal = false;
        self
    }

    /// The pattern as given, if any.
    pub fn pattern(&self) -> Option<&str> {
        self.pattern.as_ref().map(TopicPattern::as_str)
    }

    /// Whether the pattern names `topic` explicitly ([`TopicPattern::names`]).
    pub fn names(&self, topic: &str) -> bool {
        self.pattern.as_ref().is_some_and(|p| p.names(topic))
    }

    /// Whether a file of `topic` is read (`None`: a file whose topic is not known).
    pub fn keeps(&self, topic: Option<&str>) -> bool {
        match (&self.pattern, topic) {
            (None, _) => true,
            (Some(pattern), Some(topic)) => pattern.subscribes(topic, self.exclude_internal),
            (Some(_), None) => false,
        }
    }

    /// Whether `topic` is an internal topic the pattern matches but does not take.
    fn leaves_out_internal(&self, topic: Option<&str>) -> bool {
        match (&self.pattern, topic) {
            (Some(pattern), Some(topic)) => {
                pattern.matches(topic) && !pattern.subscribes(topic, self.exclude_internal)
            }
            _ => false,
        }
    }
}

/// The Schema Registry's storage topic unless the registry names another
/// (`kafkastore.topic`).
pub const DEFAULT_SCHEMAS_TOPIC: &str = "_schemas";

/// Whether `topic` is one of Kafka's own topics, whose records are the cluster's state and
/// never a producer's payload: Kafka's internal topics (`__consumer_offsets`,
/// `__transaction_state`, `__share_group_state`: [`is_internal`]), KRaft's
/// `__cluster_metadata` and tiered storage's `__remote_log_metadata`. Wider than Kafka's
/// `Topic.isInternal`: typed reads leave these out ([`typed_topics`]); pattern subscriptions
/// leave out only Kafka's ([`TopicFilter`]).
pub fn is_internal_topic(topic: &str) -> bool {
    is_internal(topic)
        || (topic.starts_with("__") && crate::format::internal::Topic::from_name(topic).is_some())
}

/// The files a read of typed keys or values decodes, and the topics it left out. A read over
/// several topics (a log directory, a glob) leaves out Kafka's internal topics
/// ([`is_internal_topic`]) and the registry's storage topic (`schemas_topic`, default
/// [`DEFAULT_SCHEMAS_TOPIC`]): their records are not the producers' framed payloads, and each
/// topic's schema is its own subject's. A topic is read all the same when the `topics` pattern
/// names it ([`TopicFilter::names`]: `_schemas|orders`; a pattern that only matches it, `.*`,
/// does not), or when it is the only topic read (a path naming it).
pub fn typed_topics(
    files: Vec<SegmentFile>,
    topics: &TopicFilter,
    schemas_topic: Option<&str>,
) -> (Vec<SegmentFile>, Vec<String>) {
    let left_out = typed_left_out(&distinct_topics(&files), |t| topics.names(t), schemas_topic);
    if left_out.is_empty() {
        return (files, left_out);
    }
    let kept = files
        .into_iter()
        .filter(|f| {
            f.origin
                .topic
                .as_deref()
                .is_none_or(|t| !left_out.iter().any(|l| l == t))
        })
        .collect();
    (kept, left_out)
}

/// The rule of [`typed_topics`] on the topics a read found (`names`, each once): those it
/// leaves out. `named(t)`: whether the read names topic `t` itself (a `topics` pattern naming
/// it, Spark's `subscribe` or `assign` listing it). Both Spark sources apply it to their
/// subscription (`spark::selection::Subscription::typed_left_out`).
pub fn typed_left_out(
    names: &[&str],
    named: impl Fn(&str) -> bool,
    schemas_topic: Option<&str>,
) -> Vec<String> {
    let registry = schemas_topic.unwrap_or(DEFAULT_SCHEMAS_TOPIC);
    if names.len() <= 1 {
        return Vec::new();
    }
    names
        .iter()
        .filter(|t| (is_internal_topic(t) || **t == registry) && !named(t))
        .map(|t| t.to_string())
        .collect()
}

/// The topics of `files`, each once, in reading order.
pub fn distinct_topics(files: &[SegmentFile]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in files.iter().filter_map(|f| f.origin.topic.as_deref()) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

impl ReaderBuilder {
    /// A reader of everything under `path` (a segment file, a partition directory, a log
    /// directory, a tiered-storage prefix, or a glob pattern), resolved as [`resolve`] does,
    /// the same files the Python API reads for the same path. [`resolve`]'s notes (objects of
    /// a tiered prefix not read, no segment found) are for callers that report them.
    pub fn build(self, path: impl AsRef<Path>) -> Result<LogReader> {
        let (files, _notes) = resolve(self.storage(), &[path.as_ref().to_path_buf()])?;
        self.build_files(files)
    }
}

/// `files` with the remote segments that `__remote_log_metadata` does not list as served left
/// out, when the storage names that topic's partitions ([`TieredSettings`]'s
/// `remote_log_metadata`): there its segment states are the authoritative list, as a broker's
/// `RemoteLogMetadataCache` is. For each topic-partition the metadata covers, a remote segment
/// is read only in state COPY_SEGMENT_FINISHED; one copying, being deleted or deleted, one the
/// metadata does not know (an upload that failed before its metadata was written), and every
/// segment of a partition whose remote data is being deleted, are left out, noted in
/// `skipped`, as is a finished segment missing from the bucket. Partitions the metadata does
/// not cover, and local segments, are kept as they are (the listing's heuristic applies).
///
/// [`TieredSettings`]: crate::storage::tiered::discovery::TieredSettings
pub fn apply_remote_log_metadata(
    storage: &Arc<dyn Storage>,
    files: Vec<SegmentFile>,
    skipped: &mut Vec<String>,
) -> Result<Vec<SegmentFile>> {
    let paths = match crate::storage::tiered::settings_of(storage.as_ref()) {
        Some(s) if !s.remote_log_metadata.is_empty() => s.remote_log_metadata.clone(),
        _ => return Ok(files),
    };
    let mut fold = Fold::new(Kind::RemoteLogMetadata, FoldOptions::default());
    for path in &paths {
        let metadata = discover(storage.as_ref(), path)?;
        if metadata.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{METADATA_OPTION}: no segment of __remote_log_metadata under {}",
                path.display()
            )));
        }
        let builder = ReaderBuilder::new().with_storage(storage.clone());
        for partition in by_partition(metadata) {
            fold_partition(&builder, path, partition, &mut fold)?;
        }
    }
    let states = fold.remote_segment_states();
    // Kafka keeps a remote log per topic id and partition: a topic deleted and created again
    // under its name has a new id, so a delete marker of the old one says nothing of the new.
    let deletes = fold.deleted_partitions();
    let deleted: HashSet<(&str, i32)> =
        deletes.iter().map(|(_, id, p)| (id.as_str(), *p)).collect();
    let covered: HashSet<(&str, i32)> = states
        .iter()
        .map(|s| (s.topic_id.as_str(), s.partition))
        .chain(deleted.iter().copied())
        .collect();
    // A name-keyed view, for a segment whose path does not say its topic id.
    let covered_names: HashSet<(&str, i32)> = states
        .iter()
        .map(|s| (s.topic.as_str(), s.partition))
        .chain(deletes.iter().map(|(t, _, p)| (t.as_str(), *p)))
        .collect();
    let by_id: HashMap<&str, &RemoteSegmentState> =
        states.iter().map(|s| (s.segment_id.as_str(), s)).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut listed: HashSet<(String, i32)> = HashSet::new();
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let (topic, partition) = match (&f.origin.topic, f.origin.partition) {
            (Some(t), Some(p)) => (t.clone(), p),
            _ => {
                out.push(f);
                continue;
            }
        };
        let name = f.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(id) = SegmentName::parse(name).map(|n| n.segment_id.to_string()) else {
            out.push(f); // a broker's own segment
            continue;
        };
        let state = by_id.get(id.as_str()).copied();
        // The segment's topic id: the metadata's, else its directories'.
        let topic_id = state
            .map(|s| s.topic_id.clone())
            .or_else(|| path_topic_id(&f.path));
        let is_covered = match &topic_id {
            Some(t) => covered.contains(&(t.as_str(), partition)),
            None => covered_names.contains(&(topic.as_str(), partition)),
        };
        if !is_covered {
            out.push(f);
            continue;
        }
        let shown = f.path.display();
        let is_deleted = match &topic_id {
            Some(t) => deleted.contains(&(t.as_str(), partition)),
            None => deletes
                .iter()
                .any(|(n, _, p)| *n == topic && *p == partition),
        };
        if is_deleted {
            skipped.push(format!(
                "{shown}: __remote_log_metadata marks {topic}-{partition}'s remote data \
                 deleted; skipped"
            ));
            continue;
        }
        match state {
            Some(s) if s.state == COPY_SEGMENT_FINISHED => {
                seen.insert(id);
                listed.insert((s.topic_id.clone(), partition));
                out.push(f);
            }
            Some(s) => skipped.push(format!(
                "{shown}: __remote_log_metadata has it in state {} ({}), not \
                 COPY_SEGMENT_FINISHED; skipped",
                s.state,
                state_name(s.state)
            )),
            None => skipped.push(format!(
                "{shown}: not in __remote_log_metadata (an upload whose metadata was never \
                 written); skipped"
            )),
        }
    }
    for s in &states {
        let key = (s.topic_id.as_str(), s.partition);
        if s.state == COPY_SEGMENT_FINISHED
            && !seen.contains(&s.segment_id)
            && !deleted.contains(&key)
            && listed.contains(&(s.topic_id.clone(), s.partition))
        {
            skipped.push(format!(
                "{}-{}: __remote_log_metadata lists segment {} (offsets {}..={}) as copied, \
                 but it is not among the paths read",
                s.topic, s.partition, s.segment_id, s.start_offset, s.end_offset
            ));
        }
    }
    Ok(out)
}

/// The topic id in the directories above a remote segment: LocalTieredStorage's
/// `<topic>-<partition>-<topicId>` holding it, or Aiven's `<topic>-<topicId>/<partition>/`.
fn path_topic_id(path: &std::path::Path) -> Option<String> {
    fn dir(p: Option<&std::path::Path>) -> Option<&str> {
        p?.file_name()?.to_str()
    }
    let parent = path.parent();
    if let Some(TieredDir::LocalPartition { topic_id, .. }) =
        dir(parent).and_then(TieredDir::local_partition)
    {
        return Some(topic_id);
    }
    match dir(parent.and_then(|p| p.parent())).and_then(TieredDir::aiven_topic) {
        Some(TieredDir::AivenTopic { topic_id, .. }) => Some(topic_id),
        _ => None,
    }
}

fn state_name(state: i64) -> &'static str {
    match state {
        0 => "COPY_SEGMENT_STARTED",
        1 => "COPY_SEGMENT_FINISHED",
        2 => "DELETE_SEGMENT_STARTED",
        3 => "DELETE_SEGMENT_FINISHED",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::default_storage;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};

    /// (topic, partition, offset) of every record a reader gives, in order.
    fn records(reader: LogReader) -> Vec<(String, i32, i64)> {
        let mut out = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let topic = batch.column_by_name("topic").unwrap().as_string::<i32>();
            let partition = batch.column_by_name("partition").unwrap();
            let offset = batch.column_by_name("offset").unwrap();
            for i in 0..batch.num_rows() {
                out.push((
                    topic.value(i).to_string(),
                    partition.as_primitive::<Int32Type>().value(i),
                    offset.as_primitive::<Int64Type>().value(i),
                ));
            }
        }
        out
    }

    /// `ReaderBuilder::build` opens the files `resolve` finds, the pipeline the Python API
    /// calls for the same paths: a log directory, a glob over it, a partition directory.
    #[test]
    fn build_reads_what_resolve_finds() {
        let storage = default_storage();
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/logs");
        for path in [
            root.to_string(),
            format!("{root}/orders-*"),
            format!("{root}/clicks-1"),
        ] {
            let (files, notes) = resolve(&storage, &[PathBuf::from(&path)]).unwrap();
            assert!(!files.is_empty() && notes.is_empty(), "{path}: {notes:?}");
            let built = records(ReaderBuilder::new().build(&path).unwrap());
            let resolved = records(ReaderBuilder::new().build_files(files).unwrap());
            assert!(!built.is_empty(), "{path}");
            assert_eq!(built, resolved, "{path}");
        }
        let glob = records(
            ReaderBuilder::new()
                .build(format!("{root}/orders-*"))
                .unwrap(),
        );
        assert!(glob.iter().all(|(topic, _, _)| topic == "orders"));
        assert_eq!(
            glob.iter().map(|r| r.1).collect::<HashSet<_>>(),
            HashSet::from([0, 1])
        );
    }

    /// `topics` keeps the topics whose whole name matches, as Kafka's consumer's pattern
    /// subscription (Java's `matches()`): `orders` does not take `orders-eu`, `orders.*` does.
    #[test]
    fn topic_filter_matches_whole_names() {
        let storage = default_storage();
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/logs"));
        let topics_of = |pattern: Option<&str>| -> Vec<String> {
            let filter = TopicFilter::new(pattern).unwrap();
            let (files, _) =
                resolve_topics(&storage, std::slice::from_ref(&root), &filter).unwrap();
            distinct_topics(&files)
                .into_iter()
                .map(String::from)
                .collect()
        };
        let all = topics_of(None);
        assert!(all.len() > 2, "{all:?}");
        assert_eq!(topics_of(Some("orders")), ["orders"]);
        assert_eq!(topics_of(Some("order")), Vec::<String>::new());
        assert_eq!(topics_of(Some("ord.*")), ["orders"]);
        let some = topics_of(Some("orders|clicks"));
        assert_eq!(some.len(), 2, "{some:?}");
        assert!(some.iter().all(|t| t == "orders" || t == "clicks"));
        // No match is a note, never a silent empty read.
        let filter = TopicFilter::new(Some("nothing")).unwrap();
        let (files, notes) =
            resolve_topics(&storage, std::slice::from_ref(&root), &filter).unwrap();
        assert!(files.is_empty());
        assert!(
            notes[0].contains("of a topic matching \"nothing\""),
            "{notes:?}"
        );
        // Kafka's internal topics: a pattern takes them only where it names them, as Kafka's
        // consumer (`exclude.internal.topics=true`); no pattern reads the whole directory.
        let dir = std::env::temp_dir().join(format!("kafkalog-internal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for topic in [
            "orders",
            "__consumer_offsets",
            "__transaction_state",
            "_schemas",
        ] {
            let part = dir.join(format!("{topic}-0"));
            std::fs::create_dir_all(&part).unwrap();
            std::fs::copy(
                root.join("orders-0/00000000000000000000.log"),
                part.join("00000000000000000000.log"),
            )
            .unwrap();
        }
        let of = |pattern: Option<&str>| -> (Vec<String>, Vec<String>) {
            let filter = TopicFilter::new(pattern).unwrap();
            let (files, notes) =
                resolve_topics(&storage, std::slice::from_ref(&dir), &filter).unwrap();
            let mut topics: Vec<String> = distinct_topics(&files)
                .into_iter()
                .map(String::from)
                .collect();
            topics.sort();
            (topics, notes)
        };
        assert_eq!(of(Some(".*")).0, ["_schemas", "orders"]);
        assert_eq!(
            of(Some("orders|__consumer_offsets")).0,
            ["__consumer_offsets", "orders"]
        );
        assert_eq!(of(Some("__consumer_offsets")).0, ["__consumer_offsets"]);
        assert_eq!(of(None).0.len(), 4);
        let (none, notes) = of(Some("__.*"));
        assert!(none.is_empty());
        assert!(
            notes[0].contains("internal topics __consumer_offsets, __transaction_state, which")
                || notes[0].contains("internal topics __transaction_state, __consumer_offsets,"),
            "{notes:?}"
        );
        let all = TopicFilter::new(Some("__.*")).unwrap().including_internal();
        let (files, _) = resolve_topics(&storage, std::slice::from_ref(&dir), &all).unwrap();
        assert_eq!(distinct_topics(&files).len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
        // A file whose topic is unknown is left out by a pattern, kept without one.
        let unknown = TopicFilter::new(Some(".*")).unwrap();
        assert!(!unknown.keeps(None) && TopicFilter::default().keeps(None));
        // What Java has and Rust's regex lacks is a clear error.
        let err = TopicFilter::new(Some("(?=orders).*")).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::InvalidArgument);
        assert!(err.message.starts_with("topics: \"(?=orders).*\""), "{err}");
    }

    /// A typed read over several topics leaves out Kafka's internal topics and the registry's
    /// storage topic, unless a pattern names them or the read is of that topic alone.
    #[test]
    fn typed_reads_leave_out_internal_topics() {
        let file = |topic: &str| {
            SegmentFile::new(
                PathBuf::from(format!("/l/{topic}-0/00000000000000000000.log")),
                crate::log::origin::Origin {
                    topic: Some(topic.to_string()),
                    partition: Some(0),
                },
            )
        };
        let files = vec![
            file("__consumer_offsets"),
            file("_schemas"),
            file("orders"),
            file("__cluster_metadata"),
            file("__transaction_state"),
            file("__orders"),
        ];
        let (kept, left) = typed_topics(files.clone(), &TopicFilter::default(), None);
        assert_eq!(distinct_topics(&kept), ["orders", "__orders"]);
        assert_eq!(
            left,
            [
                "__consumer_offsets",
                "_schemas",
                "__cluster_metadata",
                "__transaction_state"
            ]
        );
        // Another storage topic named: `_schemas` is then a topic like any other.
        let (kept, _) = typed_topics(files.clone(), &TopicFilter::default(), Some("_registry"));
        assert!(distinct_topics(&kept).contains(&"_schemas"));
        // A pattern naming a topic reads it; one that only matches it does not (`.*` of a
        // typed read is the producers' topics); one topic read is named by its path.
        let named = TopicFilter::new(Some("_schemas|orders|__consumer_offsets")).unwrap();
        let (kept, left) = typed_topics(files.clone(), &named, None);
        assert_eq!(
            distinct_topics(&kept),
            ["__consumer_offsets", "_schemas", "orders", "__orders"]
        );
        assert_eq!(left, ["__cluster_metadata", "__transaction_state"]);
        let every = TopicFilter::new(Some(".*")).unwrap();
        let (kept, _) = typed_topics(files.clone(), &every, None);
        assert_eq!(distinct_topics(&kept), ["orders", "__orders"]);
        let (kept, _) = typed_topics(vec![file("_schemas")], &TopicFilter::default(), None);
        assert_eq!(kept.len(), 1);
        assert!(is_internal_topic("__share_group_state") && !is_internal_topic("consumer_offsets"));
    }

    /// A path with no segment is no silent empty read: `resolve` says so.
    #[test]
    fn resolve_notes_a_path_without_segments() {
        let storage = default_storage();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");
        let (files, notes) = resolve(&storage, &[PathBuf::from(dir)]).unwrap();
        assert!(files.is_empty());
        assert!(notes[0].starts_with("no Kafka segment"), "{notes:?}");
    }
}
