//! Object key names of tiered segments.
//!
//! Both layouts name a segment's objects `<start offset>-<segment id>.<suffix>`, the segment id
//! being a Kafka `Uuid` in its string form: 22 characters of unpadded base64url
//! (`A-Z a-z 0-9 - _`). Aiven's plugin pads the offset to 20 digits; Kafka's
//! LocalTieredStorage writes it unpadded. The directories differ:
//! - Aiven: `<prefix><topic>-<topicId>/<partition>/`, suffixes `log`, `indexes`, `rsm-manifest`;
//! - LocalTieredStorage: `<topic>-<partition>-<topicId>/`, suffixes `log`, `index`, `timeindex`,
//!   `txnindex`, `snapshot`, `leader_epoch_checkpoint`.
//!
//! Topic names may contain `-`, and so may ids: names are split from the right, where the id
//! has a fixed length.

/// Characters in a Kafka `Uuid`'s string form.
pub const UUID_LEN: usize = 22;

fn is_uuid(s: &str) -> bool {
    s.len() == UUID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn is_topic(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 249
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// A segment object's file name, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentName<'a> {
    /// The segment's first offset, from the name's 20 digits.
    pub base_offset: i64,
    /// The remote segment's id.
    pub segment_id: &'a str,
    /// What follows the first dot after the id (`log`, `rsm-manifest`, ...).
    pub suffix: &'a str,
}

impl<'a> SegmentName<'a> {
    /// `<digits>-<22-character id>.<suffix>`, or `None`.
    pub fn parse(name: &'a str) -> Option<Self> {
        let (digits, rest) = name.split_once('-')?;
        if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let segment_id = rest.get(..UUID_LEN)?;
        let suffix = rest[UUID_LEN..].strip_prefix('.')?;
        if !is_uuid(segment_id) || suffix.is_empty() {
            return None;
        }
        Some(SegmentName {
            base_offset: digits.parse().ok()?,
            segment_id,
            suffix,
        })
    }

    /// The name with another suffix.
    pub fn with_suffix(&self, digits: &str, suffix: &str) -> String {
        format!("{digits}-{}.{suffix}", self.segment_id)
    }
}

/// A directory name of a tiered layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TieredDir {
    /// Aiven's `<topic>-<topicId>`, holding one directory per partition.
    AivenTopic {
        /// The topic.
        topic: String,
        /// The topic's id (a UUID).
        topic_id: String,
    },
    /// LocalTieredStorage's `<topic>-<partition>-<topicId>`, holding the segments.
    LocalPartition {
        /// The topic.
        topic: String,
        /// The partition number.
        partition: i32,
        /// The topic's id (a UUID).
        topic_id: String,
    },
}

impl TieredDir {
    /// A LocalTieredStorage partition directory name is tried first: `orders-3-<id>` is never an
    /// Aiven topic directory of a topic named `orders-3` in practice, and both readings are
    /// checked against what the directory holds by the caller.
    pub fn parse(name: &str) -> Option<Self> {
        Self::local_partition(name).or_else(|| Self::aiven_topic(name))
    }

    /// Reads `name` as Aiven's `<topic>-<topicId>`.
    pub fn aiven_topic(name: &str) -> Option<Self> {
        let cut = name.len().checked_sub(UUID_LEN + 1)?;
        let (topic, rest) = (name.get(..cut)?, name.get(cut..)?);
        let topic_id = rest.strip_prefix('-')?;
        (is_topic(topic) && is_uuid(topic_id)).then(|| TieredDir::AivenTopic {
            topic: topic.to_string(),
            topic_id: topic_id.to_string(),
        })
    }

    /// Reads `name` as LocalTieredStorage's `<topic>-<partition>-<topicId>`.
    pub fn local_partition(name: &str) -> Option<Self> {
        let TieredDir::AivenTopic {
            topic: head,
            topic_id,
        } = Self::aiven_topic(name)?
        else {
            return None;
        };
        let (topic, partition) = head.rsplit_once('-')?;
        if partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(TieredDir::LocalPartition {
            topic: topic.to_string(),
            partition: partition.parse().ok()?,
            topic_id,
        })
        .filter(|_| is_topic(topic))
    }
}

/// An Aiven partition directory name: the partition number.
pub fn aiven_partition(name: &str) -> Option<i32> {
    if name.is_empty() || name.len() > 10 || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_names() {
        let n = SegmentName::parse("00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log").unwrap();
        assert_eq!(n.base_offset, 1234);
        assert_eq!(n.segment_id, "tqimKeZwStOEOwRzT3L5oQ");
        assert_eq!(n.suffix, "log");
        // Ids may hold - and _; LocalTieredStorage's offsets are unpadded.
        let n = SegmentName::parse("0-a-_bcdefghijklmnopqrst.leader_epoch_checkpoint").unwrap();
        assert_eq!((n.base_offset, n.segment_id), (0, "a-_bcdefghijklmnopqrst"));
        assert_eq!(
            SegmentName::parse("7-oAtiIQ95REujbuzNd_lkLQ.rsm-manifest")
                .unwrap()
                .suffix,
            "rsm-manifest"
        );
        for bad in [
            "00000000000000000000.log",
            "-oAtiIQ95REujbuzNd_lkLQ.log",
            "12-oAtiIQ95REujbuzNd_lkL.log",
            "12-oAtiIQ95REujbuzNd_lkLQ",
            "12-oAtiIQ95REujbuzNd_lkLQ.",
            "1x-oAtiIQ95REujbuzNd_lkLQ.log",
            "123456789012345678901-oAtiIQ95REujbuzNd_lkLQ.log",
            "12-oAtiIQ95REujbuz=d_lkLQ.log",
        ] {
            assert_eq!(SegmentName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn directory_names() {
        assert_eq!(
            TieredDir::parse("my-topic-MWJ6FHTfRYy67jzwZdeqSQ"),
            Some(TieredDir::AivenTopic {
                topic: "my-topic".into(),
                topic_id: "MWJ6FHTfRYy67jzwZdeqSQ".into()
            })
        );
        assert_eq!(
            TieredDir::parse("my.topic-3-5fEBmixCR5-dMntYSLIr1g"),
            Some(TieredDir::LocalPartition {
                topic: "my.topic".into(),
                partition: 3,
                topic_id: "5fEBmixCR5-dMntYSLIr1g".into()
            })
        );
        // An id ending in digits after a dash is still the id.
        assert_eq!(
            TieredDir::parse("t-AAAAAAAAAAAAAAAAAAA-12"),
            Some(TieredDir::AivenTopic {
                topic: "t".into(),
                topic_id: "AAAAAAAAAAAAAAAAAAA-12".into()
            })
        );
        assert_eq!(TieredDir::parse("orders-0"), None);
        assert_eq!(TieredDir::parse("-MWJ6FHTfRYy67jzwZdeqSQ"), None);
        assert_eq!(TieredDir::parse("a b-MWJ6FHTfRYy67jzwZdeqSQ"), None);
        assert_eq!(aiven_partition("17"), Some(17));
        assert_eq!(aiven_partition("1a"), None);
        assert_eq!(aiven_partition(""), None);
    }
}
