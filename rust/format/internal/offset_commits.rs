//! Writing `__consumer_offsets` commits as a group coordinator writes them, and which of the
//! topic's partitions holds a group.
//!
//! A commit is a record whose key is `OffsetCommitKey` (version 1: group, topic, partition) and
//! whose value is `OffsetCommitValue` version 3 (offset, leader epoch, metadata, commit
//! timestamp): the newest non-flexible version, which every coordinator since Kafka 2.1 loads.
//! Decoding them is `groups_tables.rs`' (the same fields, read by the generic decoder).

use crate::error::{Error, Result};

/// Kafka's `Utils.abs(groupId.hashCode()) % partitions`: the `__consumer_offsets` partition
/// whose leader coordinates the group and whose log holds its commits. Java's `hashCode` of a
/// string runs over its UTF-16 code units.
pub fn group_partition(group_id: &str, partitions: i32) -> Result<i32> {
    if partitions <= 0 {
        return Err(Error::invalid_argument(format!(
            "__consumer_offsets has {partitions} partitions"
        )));
    }
    let hash = group_id
        .encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32));
    // `Utils.abs`: Integer.MIN_VALUE maps to 0, not to itself.
    let abs = if hash == i32::MIN { 0 } else { hash.abs() };
    Ok(abs % partitions)
}

fn put_string(out: &mut Vec<u8>, s: &str) -> Result<()> {
    let len = i16::try_from(s.len())
        .map_err(|_| Error::invalid_argument(format!("string of {} bytes is too long", s.len())))?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// The key of a commit: `OffsetCommitKey` version 1.
pub fn offset_commit_key(group: &str, topic: &str, partition: i32) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(10 + group.len() + topic.len());
    out.extend_from_slice(&1i16.to_be_bytes());
    put_string(&mut out, group)?;
    put_string(&mut out, topic)?;
    out.extend_from_slice(&partition.to_be_bytes());
    Ok(out)
}

/// The value of a commit: `OffsetCommitValue` version 3 (`leader_epoch` -1 for none).
pub fn offset_commit_value(
    offset: i64,
    leader_epoch: i32,
    metadata: &str,
    commit_timestamp: i64,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(24 + metadata.len());
    out.extend_from_slice(&3i16.to_be_bytes());
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&leader_epoch.to_be_bytes());
    put_string(&mut out, metadata)?;
    out.extend_from_slice(&commit_timestamp.to_be_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::internal::{group_key, group_value, Parsed};

    #[test]
    fn groups_land_where_javas_hash_code_puts_them() {
        // "group".hashCode() == 98629247 in Java; 98629247 % 50 == 47.
        assert_eq!(group_partition("group", 50).unwrap(), 47);
        // A negative hash: "polygenelubricants".hashCode() == Integer.MIN_VALUE -> 0.
        assert_eq!(group_partition("polygenelubricants", 50).unwrap(), 0);
        // "Aa" and "BB" collide in Java (2112): the same partition.
        assert_eq!(
            group_partition("Aa", 7).unwrap(),
            group_partition("BB", 7).unwrap()
        );
        // Beyond the BMP: two UTF-16 units.
        assert_eq!(
            group_partition("\u{1F600}", 1000).unwrap(),
            1_772_899 % 1000
        );
        assert!(group_partition("g", 0).is_err());
    }

    #[test]
    fn commits_decode_as_the_coordinator_reads_them() {
        let key = offset_commit_key("g", "orders", 3).unwrap();
        let value = offset_commit_value(42, 5, "meta", 1_700_000_000_000).unwrap();
        let (record_type, k) = group_key(&key).unwrap();
        let v = group_value(record_type, &value).unwrap();
        let text = format!("{k:?} {v:?}");
        for part in [
            "OffsetCommitKey",
            "OffsetCommitValue",
            "orders",
            "42",
            "meta",
        ] {
            assert!(text.contains(part), "{part} not in {text}");
        }
        assert!(text.contains("1700000000000"), "{text}");
        assert!(k.known().is_some() && v.known().is_some());
        assert!(matches!(k, Parsed::Known(_)));
    }
}
