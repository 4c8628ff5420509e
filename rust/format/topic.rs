//! Topics by name, as Kafka's clients take them: which topics are Kafka's internal topics, and
//! which topics a consumer's pattern subscription takes (Spark's Kafka source's
//! `subscribePattern` subscribes through that consumer).
//!
//! Kafka's rules (Apache Kafka's `org.apache.kafka.common.internals.Topic`,
//! `ConsumerMetadata.retainTopic` and `SubscriptionState.matchesSubscribedPattern`):
//! - A topic is internal when its name is one of `Topic`'s `INTERNAL_TOPICS`; brokers set the
//!   `isInternal` flag of their metadata responses from that set alone.
//! - A pattern subscription takes a topic when the pattern matches the whole name (Java's
//!   `Pattern.matcher(topic).matches()`), except an internal topic while the consumer's
//!   `exclude.internal.topics` is true (its default): "It is always possible to explicitly
//!   subscribe to an internal topic", by naming it.
//!
//! kafkalog's topic filter is one pattern, so a pattern names a topic explicitly when the
//! topic's name is the pattern itself, or one of the alternatives of its top-level `|`, each
//! written as plain characters: `__consumer_offsets`, `orders|__consumer_offsets`. A pattern
//! that only matches it (`__.*`, `.*`) does not.

use crate::error::{Error, Result};
use regex_syntax::ast::{Ast, GroupKind};

/// Kafka's internal topics (`Topic.INTERNAL_TOPICS`, Apache Kafka 3.9 to trunk): the group
/// coordinator's, the transaction coordinator's and the share coordinator's state. KRaft's
/// `__cluster_metadata` is not one (no metadata response lists it), nor tiered storage's
/// `__remote_log_metadata` (a topic like any other to a consumer).
pub const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// Whether `topic` is one of Kafka's internal topics (`Topic.isInternal`).
pub fn is_internal(topic: &str) -> bool {
    INTERNAL_TOPICS.contains(&topic)
}

/// A consumer's pattern subscription: a regular expression matched against whole topic names,
/// internal topics left out unless named ([`TopicPattern::subscribes`]). Java's syntax for the
/// patterns topic names need (classes, alternation, repetition, groups); a construct Rust's
/// `regex` does not have (look-around, back-references, possessive quantifiers) is an
/// [`Error::invalid_argument`] naming the pattern.
#[derive(Clone, Debug)]
pub struct TopicPattern {
    pattern: String,
    regex: regex::Regex,
    /// The same pattern unanchored ([`TopicPattern::found_in`]).
    anywhere: regex::Regex,
    /// The names the pattern spells out ([`TopicPattern::names`]).
    names: Vec<String>,
}

impl TopicPattern {
    /// The subscription of `pattern`; an error naming it where `regex` cannot match it.
    pub fn new(pattern: &str) -> Result<TopicPattern> {
        // Anchored at both ends: Java's `matches()`, not `find()`.
        let regex = regex::Regex::new(&format!(r"\A(?:{pattern})\z")).map_err(|e| {
            Error::invalid_argument(format!(
                "topics: {pattern:?} is not a pattern kafkalog can match: {}",
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        })?;
        let anywhere = regex::Regex::new(pattern).map_err(|e| {
            Error::invalid_argument(format!(
                "{pattern:?} is not a pattern kafkalog can match: {e}"
            ))
        })?;
        // The pattern compiled, so it parses.
        let names = regex_syntax::ast::parse::Parser::new()
            .parse(pattern)
            .map(|ast| spelled_names(&ast))
            .unwrap_or_default();
        Ok(TopicPattern {
            pattern: pattern.to_string(),
            regex,
            anywhere,
            names,
        })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether the pattern matches the whole of `topic`.
    pub fn matches(&self, topic: &str) -> bool {
        self.regex.is_match(topic)
    }

    /// Whether Spark's Kafka source's `subscribePattern` takes `topic`: the pattern found
    /// anywhere in its name (Spark lists the topics with Kafka's admin client and keeps those
    /// where `findFirstIn` finds the pattern, so `orders` takes `old-orders-eu`; the Kafka
    /// consumer's own pattern subscription, [`TopicPattern::subscribes`], matches whole names),
    /// never an internal topic (the admin client's listing has none).
    pub fn found_in(&self, topic: &str) -> bool {
        !is_internal(topic) && self.anywhere.is_match(topic)
    }

    /// Whether the pattern names `topic` explicitly: the whole pattern, or one alternative of
    /// its top-level `|`, is `topic`'s name in plain characters (escapes such as `\.` count as
    /// the character; `.` or a class does not).
    pub fn names(&self, topic: &str) -> bool {
        self.names.iter().any(|n| n == topic)
    }

    /// Whether a consumer subscribed with this pattern takes `topic`: the pattern matches its
    /// whole name, and it is not an internal topic unless `exclude_internal` is false (Kafka's
    /// `exclude.internal.topics`, true by default) or the pattern names it.
    pub fn subscribes(&self, topic: &str, exclude_internal: bool) -> bool {
        if exclude_internal && is_internal(topic) && !self.names(topic) {
            return false;
        }
        self.matches(topic)
    }
}

/// The names a pattern spells out: itself or the alternatives of its top-level `|` (inside a
/// group spanning the whole pattern too), each made of literal characters only.
fn spelled_names(ast: &Ast) -> Vec<String> {
    match ast {
        Ast::Alternation(alt) => alt.asts.iter().filter_map(literal).collect(),
        Ast::Group(group) if plain_group(&group.kind) => spelled_names(&group.ast),
        other => literal(other).into_iter().collect(),
    }
}

fn plain_group(kind: &GroupKind) -> bool {
    match kind {
        GroupKind::CaptureIndex(_) | GroupKind::CaptureName { .. } => true,
        GroupKind::NonCapturing(flags) => flags.items.is_empty(),
    }
}

/// The string `ast` matches when it is literal characters and nothing else.
fn literal(ast: &Ast) -> Option<String> {
    match ast {
        Ast::Literal(l) => Some(l.c.to_string()),
        Ast::Concat(concat) => concat
            .asts
            .iter()
            .map(|a| match a {
                Ast::Literal(l) => Some(l.c),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparks_subscribe_pattern_finds_the_pattern_in_a_name_and_never_an_internal_topic() {
        let p = TopicPattern::new("rder").unwrap();
        assert!(p.found_in("orders") && p.found_in("old-orders.eu"));
        assert!(!p.matches("orders") && !p.subscribes("orders", true));
        let p = TopicPattern::new("^orders$").unwrap();
        assert!(p.found_in("orders") && !p.found_in("orders-eu"));
        let p = TopicPattern::new("__consumer_offsets").unwrap();
        assert!(!p.found_in("__consumer_offsets"));
        assert!(p.subscribes("__consumer_offsets", true));
        assert!(TopicPattern::new("_.*").unwrap().found_in("_schemas"));
    }

    #[test]
    fn internal_topics_are_kafkas() {
        for t in INTERNAL_TOPICS {
            assert!(is_internal(t), "{t}");
        }
        for t in [
            "__cluster_metadata",
            "__remote_log_metadata",
            "_schemas",
            "consumer_offsets",
            "__consumer_offsets2",
            "orders",
        ] {
            assert!(!is_internal(t), "{t}");
        }
    }

    /// Kafka's consumer leaves internal topics out of a pattern subscription
    /// (`exclude.internal.topics=true`) unless they are subscribed by name.
    #[test]
    fn patterns_take_internal_topics_only_by_name() {
        let p = |s: &str| TopicPattern::new(s).unwrap();
        for pattern in [
            ".*",
            "__.*",
            "__consumer_offsets.*",
            "__consumer.offsets",
            "(?i)__CONSUMER_OFFSETS",
        ] {
            let pat = p(pattern);
            assert!(pat.matches("__consumer_offsets"), "{pattern}");
            assert!(!pat.subscribes("__consumer_offsets", true), "{pattern}");
            assert!(pat.subscribes("__consumer_offsets", false), "{pattern}");
        }
        assert!(p(".*").subscribes("__remote_log_metadata", true));
        assert!(p(".*").subscribes("_schemas", true));
        for pattern in [
            "__consumer_offsets",
            "orders|__consumer_offsets",
            "__consumer_offsets|orders.*",
            "(?:orders|__consumer_offsets)",
            r"__consumer\_offsets",
        ] {
            assert!(
                p(pattern).subscribes("__consumer_offsets", true),
                "{pattern}"
            );
            assert!(
                !p(pattern).subscribes("__transaction_state", true),
                "{pattern}"
            );
        }
        // An alternative inside a group that is not the whole pattern names nothing.
        assert!(!p("x(?:a|__consumer_offsets)").names("__consumer_offsets"));
        assert!(!p("x(?:a|__consumer_offsets)|.*").subscribes("__consumer_offsets", true));
        assert!(p(r"orders\.eu").names("orders.eu") && !p("orders.eu").names("orders.eu"));
        // Whole names only, as before.
        assert!(!p("orders").subscribes("orders-eu", true) && p("orders.*").matches("orders-eu"));
        let err = TopicPattern::new("(?=orders).*").unwrap_err();
        assert!(err.message.starts_with("topics: \"(?=orders).*\""), "{err}");
    }
}
