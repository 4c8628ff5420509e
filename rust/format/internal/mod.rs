//! Kafka's internal topics: the keys and values of `__consumer_offsets`, `__transaction_state`,
//! KRaft's `__cluster_metadata`, `__remote_log_metadata` and `__share_group_state`, decoded by a
//! table-driven interpreter of Kafka's message encoding.
//!
//! | file | what |
//! |---|---|
//! | `schema.rs` | the table form, the generic decoder, Kafka-style JSON |
//! | `groups_tables.rs` | `__consumer_offsets` record types (classic, consumer and share groups) |
//! | `transactions_tables.rs` | `__transaction_state` key and value |
//! | `metadata_tables.rs` | every KRaft metadata record type |
//! | `remote_tables.rs` | tiered storage's remote log metadata records |
//! | `share_tables.rs` | `__share_group_state` record types (share groups' delivery state) |
//! | `offset_commits.rs` | `__consumer_offsets` commits written, and the partition of a group |
//! | `dump.rs` | the lines `kafka-dump-log` prints with its decoder options |
//!
//! How each topic frames its records:
//! - `__consumer_offsets`, `__transaction_state`, `__share_group_state`: the key starts with an
//!   int16 that is the record
//!   type (for groups: 0/1 offset commit, 2 group metadata, 3.. the newer group records) and the
//!   key schema's version; the value starts with an int16 version of the value schema; a null
//!   value is a tombstone.
//! - `__cluster_metadata`, `__remote_log_metadata`: no key; the value is three unsigned varints
//!   (frame version 1, record type, version) and the record.
//!
//! The tables match Apache Kafka's message definitions on its trunk of 21 November 2025 (commit
//! `8b119e5105906a66cc99264527670c88b07c7a10`, 4.2.0-SNAPSHOT), each table file saying which.
//!
//! A record type or version the tables do not know is [`Parsed::Unknown`], not an error: newer
//! brokers add them. Bytes that do not decode as a known type and version are a [`DecodeError`].

pub mod dump;
pub mod groups_tables;
pub mod metadata_tables;
pub mod offset_commits;
pub mod remote_tables;
pub mod schema;
pub mod share_tables;
pub mod transactions_tables;

use schema::{decode, Cursor};
pub use schema::{DecodeError, DecodeResult, Message, Struct, Value};

/// One decoded key or value: its schema, version and fields.
#[derive(Clone, Debug)]
pub struct Record<'a> {
    pub message: &'static Message,
    pub version: i16,
    pub data: Struct<'a>,
}

/// A key or value: decoded, or of a type or version the tables do not know (why, in words).
#[derive(Clone, Debug)]
pub enum Parsed<'a> {
    Known(Record<'a>),
    Unknown(String),
}

impl<'a> Parsed<'a> {
    /// The record, when its type and version are known.
    #[cfg(test)]
    pub fn known(&self) -> Option<&Record<'a>> {
        match self {
            Parsed::Known(r) => Some(r),
            Parsed::Unknown(_) => None,
        }
    }
}

/// The internal topics kafkalog decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    ConsumerOffsets,
    TransactionState,
    ClusterMetadata,
    RemoteLogMetadata,
    ShareGroupState,
}

impl Topic {
    pub fn from_name(name: &str) -> Option<Topic> {
        Some(match name {
            "consumer_offsets" | "__consumer_offsets" => Topic::ConsumerOffsets,
            "transaction_state" | "__transaction_state" => Topic::TransactionState,
            "cluster_metadata" | "__cluster_metadata" => Topic::ClusterMetadata,
            "remote_log_metadata" | "__remote_log_metadata" => Topic::RemoteLogMetadata,
            "share_group_state" | "__share_group_state" => Topic::ShareGroupState,
            _ => return None,
        })
    }
}

use groups_tables as g;

/// `__consumer_offsets` record types: key schema (whose version is the record type: the int16
/// the key starts with) and value schema. Type 0 is the legacy offset commit key; its value is
/// an offset commit value as type 1's (Kafka's trunk names it LegacyOffsetCommitValue and
/// takes only version 0, whose fields are OffsetCommitValue v0's; kafkalog reads every
/// OffsetCommitValue version there, as Kafka's group coordinator did in 2024).
static GROUP_RECORDS: [(&Message, &Message); 24] = [
    (&g::LEGACY_OFFSET_COMMIT_KEY, &g::OFFSET_COMMIT_VALUE),
    (&g::OFFSET_COMMIT_KEY, &g::OFFSET_COMMIT_VALUE),
    (&g::GROUP_METADATA_KEY, &g::GROUP_METADATA_VALUE),
    (
        &g::CONSUMER_GROUP_METADATA_KEY,
        &g::CONSUMER_GROUP_METADATA_VALUE,
    ),
    (
        &g::CONSUMER_GROUP_PARTITION_METADATA_KEY,
        &g::CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    ),
    (
        &g::CONSUMER_GROUP_MEMBER_METADATA_KEY,
        &g::CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    ),
    (
        &g::CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        &g::CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ),
    (
        &g::CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        &g::CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ),
    (
        &g::CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        &g::CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ),
    (
        &g::SHARE_GROUP_PARTITION_METADATA_KEY,
        &g::SHARE_GROUP_PARTITION_METADATA_VALUE,
    ),
    (
        &g::SHARE_GROUP_MEMBER_METADATA_KEY,
        &g::SHARE_GROUP_MEMBER_METADATA_VALUE,
    ),
    (&g::SHARE_GROUP_METADATA_KEY, &g::SHARE_GROUP_METADATA_VALUE),
    (
        &g::SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        &g::SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ),
    (
        &g::SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        &g::SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ),
    (
        &g::SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        &g::SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ),
    (
        &g::SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
        &g::SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    ),
    (
        &g::CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
        &g::CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE,
    ),
    (
        &g::STREAMS_GROUP_METADATA_KEY,
        &g::STREAMS_GROUP_METADATA_VALUE,
    ),
    (
        &g::STREAMS_GROUP_PARTITION_METADATA_KEY,
        &g::STREAMS_GROUP_PARTITION_METADATA_VALUE,
    ),
    (
        &g::STREAMS_GROUP_MEMBER_METADATA_KEY,
        &g::STREAMS_GROUP_MEMBER_METADATA_VALUE,
    ),
    (
        &g::STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        &g::STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ),
    (
        &g::STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        &g::STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ),
    (
        &g::STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        &g::STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ),
    (
        &g::STREAMS_GROUP_TOPOLOGY_KEY,
        &g::STREAMS_GROUP_TOPOLOGY_VALUE,
    ),
];

use metadata_tables as m;

/// Every KRaft metadata record type.
pub static METADATA_RECORDS: [&Message; 26] = [
    &m::REGISTER_BROKER_RECORD,
    &m::UNREGISTER_BROKER_RECORD,
    &m::TOPIC_RECORD,
    &m::PARTITION_RECORD,
    &m::CONFIG_RECORD,
    &m::PARTITION_CHANGE_RECORD,
    &m::FENCE_BROKER_RECORD,
    &m::UNFENCE_BROKER_RECORD,
    &m::REMOVE_TOPIC_RECORD,
    &m::DELEGATION_TOKEN_RECORD,
    &m::USER_SCRAM_CREDENTIAL_RECORD,
    &m::FEATURE_LEVEL_RECORD,
    &m::CLIENT_QUOTA_RECORD,
    &m::PRODUCER_IDS_RECORD,
    &m::BROKER_REGISTRATION_CHANGE_RECORD,
    &m::ACCESS_CONTROL_ENTRY_RECORD,
    &m::REMOVE_ACCESS_CONTROL_ENTRY_RECORD,
    &m::NO_OP_RECORD,
    &m::ZK_MIGRATION_STATE_RECORD,
    &m::REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
    &m::BEGIN_TRANSACTION_RECORD,
    &m::END_TRANSACTION_RECORD,
    &m::ABORT_TRANSACTION_RECORD,
    &m::REMOVE_DELEGATION_TOKEN_RECORD,
    &m::REGISTER_CONTROLLER_RECORD,
    &m::CLEAR_ELR_RECORD,
];

/// Every `__remote_log_metadata` record type.
pub static REMOTE_RECORDS: [&Message; 4] = [
    &remote_tables::REMOTE_LOG_SEGMENT_METADATA_RECORD,
    &remote_tables::REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
    &remote_tables::REMOTE_PARTITION_DELETE_METADATA_RECORD,
    &remote_tables::REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
];

/// Reads the int16 version prefix and the message after it, or `Unknown` for a version the
/// schema does not define.
fn versioned<'a>(
    message: &'static Message,
    version: i16,
    cursor: &mut Cursor<'a>,
) -> DecodeResult<Parsed<'a>> {
    if !message.valid.contains(version) {
        return Ok(Parsed::Unknown(format!(
            "{} version {version} is newer than the versions kafkalog knows ({}-{})",
            message.name, message.valid.0, message.valid.1
        )));
    }
    let data = decode(message, version, cursor)?;
    Ok(Parsed::Known(Record {
        message,
        version,
        data,
    }))
}

/// A `__consumer_offsets` key: its record type (the leading int16) and its fields.
pub fn group_key(key: &[u8]) -> DecodeResult<(i16, Parsed<'_>)> {
    coordinator_key(key, &GROUP_RECORDS, "__consumer_offsets")
}

/// A coordinator topic's key: its record type (the leading int16, the key schema's version)
/// and its fields.
fn coordinator_key<'a>(
    key: &'a [u8],
    table: &[(&'static Message, &'static Message)],
    topic: &str,
) -> DecodeResult<(i16, Parsed<'a>)> {
    let mut cursor = Cursor::new(key);
    let record_type = cursor.i16("record type")?;
    let Some((k, _)) = table.iter().find(|(k, _)| k.valid.contains(record_type)) else {
        return Ok((
            record_type,
            Parsed::Unknown(format!("unknown {topic} record type {record_type}")),
        ));
    };
    Ok((record_type, versioned(k, record_type, &mut cursor)?))
}

/// `__share_group_state` record types: key schema (whose version is the record type) and value
/// schema: 0 a snapshot of a share partition's state, 1 an update to it.
static SHARE_RECORDS: [(&Message, &Message); 2] = [
    (
        &share_tables::SHARE_SNAPSHOT_KEY,
        &share_tables::SHARE_SNAPSHOT_VALUE,
    ),
    (
        &share_tables::SHARE_UPDATE_KEY,
        &share_tables::SHARE_UPDATE_VALUE,
    ),
];

/// A `__share_group_state` key: its record type and its fields.
pub fn share_state_key(key: &[u8]) -> DecodeResult<(i16, Parsed<'_>)> {
    coordinator_key(key, &SHARE_RECORDS, "__share_group_state")
}

/// A `__share_group_state` value of the given record type.
pub fn share_state_value(record_type: i16, value: &[u8]) -> DecodeResult<Parsed<'_>> {
    let Some((_, v)) = SHARE_RECORDS
        .iter()
        .find(|(k, _)| k.valid.contains(record_type))
    else {
        return Ok(Parsed::Unknown(format!(
            "unknown __share_group_state record type {record_type}"
        )));
    };
    let mut cursor = Cursor::new(value);
    let version = cursor.i16("value version")?;
    versioned(v, version, &mut cursor)
}

/// A `__consumer_offsets` value of the given record type. A classic group's members'
/// subscription and assignment are decoded too when the group uses the consumer protocol, as
/// kafka-dump-log decodes them (kept as bytes if they do not decode).
pub fn group_value(record_type: i16, value: &[u8]) -> DecodeResult<Parsed<'_>> {
    let Some((_, v)) = GROUP_RECORDS
        .iter()
        .find(|(k, _)| k.valid.contains(record_type))
    else {
        return Ok(Parsed::Unknown(format!(
            "unknown __consumer_offsets record type {record_type}"
        )));
    };
    let mut cursor = Cursor::new(value);
    let version = cursor.i16("value version")?;
    let mut parsed = versioned(v, version, &mut cursor)?;
    if let Parsed::Known(record) = &mut parsed {
        if std::ptr::eq(record.message, &g::GROUP_METADATA_VALUE)
            && record.data.str("protocolType") == Some("consumer")
        {
            if let Some(Value::Array(members)) = record.data.get_mut("members") {
                for member in members.iter_mut() {
                    if let Value::Struct(member) = member {
                        embed(member, "subscription", &g::CONSUMER_PROTOCOL_SUBSCRIPTION);
                        embed(member, "assignment", &g::CONSUMER_PROTOCOL_ASSIGNMENT);
                    }
                }
            }
        }
    }
    Ok(parsed)
}

/// Replaces a bytes field holding a versioned consumer-protocol message by its fields.
fn embed(member: &mut Struct<'_>, field: &str, message: &'static Message) {
    if let Some(slot) = member.get_mut(field) {
        if let Value::Bytes(bytes) = *slot {
            if let Some(decoded) = consumer_protocol(bytes, message) {
                *slot = Value::Struct(decoded);
            }
        }
    }
}

/// A consumer protocol subscription or assignment (an int16 version, then the message), or
/// `None` if it does not decode as a version kafkalog knows.
pub fn consumer_protocol<'a>(bytes: &'a [u8], message: &'static Message) -> Option<Struct<'a>> {
    let mut cursor = Cursor::new(bytes);
    let version = cursor.i16("version").ok()?;
    if !message.valid.contains(version) {
        return None;
    }
    decode(message, version, &mut cursor).ok()
}

/// A `__transaction_state` key.
pub fn transaction_key(key: &[u8]) -> DecodeResult<Parsed<'_>> {
    let mut cursor = Cursor::new(key);
    let version = cursor.i16("key version")?;
    versioned(
        &transactions_tables::TRANSACTION_LOG_KEY,
        version,
        &mut cursor,
    )
}

/// A `__transaction_state` value.
pub fn transaction_value(value: &[u8]) -> DecodeResult<Parsed<'_>> {
    let mut cursor = Cursor::new(value);
    let version = cursor.i16("value version")?;
    versioned(
        &transactions_tables::TRANSACTION_LOG_VALUE,
        version,
        &mut cursor,
    )
}

/// The name Kafka gives a transaction state id (`TransactionState`).
pub fn transaction_state_name(id: i64) -> Option<&'static str> {
    Some(match id {
        0 => "Empty",
        1 => "Ongoing",
        2 => "PrepareCommit",
        3 => "PrepareAbort",
        4 => "CompleteCommit",
        5 => "CompleteAbort",
        6 => "Dead",
        7 => "PrepareEpochFence",
        _ => return None,
    })
}

/// A framed record of `__cluster_metadata` or `__remote_log_metadata`: frame version 1, record
/// type, version, the record, nothing after it.
fn framed<'a>(
    value: &'a [u8],
    table: &[&'static Message],
    topic: &str,
) -> DecodeResult<Parsed<'a>> {
    let mut cursor = Cursor::new(value);
    let frame = cursor.uvarint("frame version")?;
    if frame != 1 {
        return Err(DecodeError {
            message: format!("{topic} record with frame version {frame} (only 1 exists)"),
            at: 0,
        });
    }
    let api_key = cursor.uvarint("record type")?;
    let version = cursor.uvarint("record version")?;
    let Some(message) = table.iter().find(|m| m.api_key as u32 == api_key) else {
        return Ok(Parsed::Unknown(format!(
            "unknown {topic} record type {api_key}"
        )));
    };
    let Ok(version) = i16::try_from(version) else {
        return Ok(Parsed::Unknown(format!(
            "{} version {version}",
            message.name
        )));
    };
    let parsed = versioned(message, version, &mut cursor)?;
    if matches!(parsed, Parsed::Known(_)) && cursor.remaining() > 0 {
        return Err(DecodeError {
            message: format!(
                "{} byte(s) after the {} record",
                cursor.remaining(),
                message.name
            ),
            at: cursor.position(),
        });
    }
    Ok(parsed)
}

/// The record type id of a framed metadata value, if its header reads.
pub fn framed_type(value: &[u8]) -> Option<u32> {
    let mut cursor = Cursor::new(value);
    cursor.uvarint("frame version").ok()?;
    cursor.uvarint("record type").ok()
}

/// A KRaft `__cluster_metadata` record (a record's value; metadata records have no key).
pub fn metadata_record(value: &[u8]) -> DecodeResult<Parsed<'_>> {
    framed(value, &METADATA_RECORDS, "__cluster_metadata")
}

/// A `__remote_log_metadata` record.
pub fn remote_log_metadata_record(value: &[u8]) -> DecodeResult<Parsed<'_>> {
    framed(value, &REMOTE_RECORDS, "__remote_log_metadata")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group_key_bytes(t: i16, group: &str, topic: &str, partition: i32) -> Vec<u8> {
        let mut b = t.to_be_bytes().to_vec();
        for s in [group, topic] {
            b.extend_from_slice(&(s.len() as i16).to_be_bytes());
            b.extend_from_slice(s.as_bytes());
        }
        b.extend_from_slice(&partition.to_be_bytes());
        b
    }

    #[test]
    fn offset_commit_versions() {
        let key = group_key_bytes(1, "g", "t", 3);
        let (t, parsed) = group_key(&key).unwrap();
        assert_eq!(t, 1);
        let r = parsed.known().unwrap();
        assert_eq!(r.data.str("group"), Some("g"));
        assert_eq!(r.data.int("partition"), Some(3));
        // v1: offset, metadata, commit and expire timestamps.
        let mut v = 1i16.to_be_bytes().to_vec();
        v.extend_from_slice(&42i64.to_be_bytes());
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&7i64.to_be_bytes());
        v.extend_from_slice(&9i64.to_be_bytes());
        let parsed = group_value(1, &v).unwrap();
        let r = parsed.known().unwrap();
        assert_eq!(r.data.int("expireTimestamp"), Some(9));
        assert_eq!(r.data.get("leaderEpoch"), None);
        // Version 9 is unknown: not an error.
        let mut v9 = v.clone();
        v9[1] = 9;
        assert!(matches!(group_value(1, &v9).unwrap(), Parsed::Unknown(_)));
        // A truncated known version is.
        assert!(group_value(1, &v[..10]).is_err());
        // An unknown record type is unknown.
        assert!(matches!(group_key(&[0, 99]).unwrap().1, Parsed::Unknown(_)));
    }

    #[test]
    fn framed_metadata() {
        // NoOpRecord (type 20) v0: no fields, an empty tag section.
        let parsed = metadata_record(&[1, 20, 0, 0]).unwrap();
        assert_eq!(parsed.known().unwrap().message.name, "NoOpRecord");
        assert!(metadata_record(&[1, 20, 0, 0, 7]).is_err());
        assert!(matches!(
            metadata_record(&[1, 99, 0, 0]).unwrap(),
            Parsed::Unknown(_)
        ));
        assert!(metadata_record(&[0, 20, 0, 0]).is_err());
    }
}
