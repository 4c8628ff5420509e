//! What `kafka-dump-log` prints for a record's key and payload with its internal-topic decoder
//! options (`--offsets-decoder`, `--transaction-log-decoder`, `--cluster-metadata-decoder`,
//! `--remote-log-metadata-decoder`), and the same records as JSON objects.
//!
//! - offsets: key `{"type":"<record type>","data":{...}}`, payload
//!   `{"version":"<value version>","data":{...}}` or `<DELETE>`; an unknown type prints
//!   `Unknown record type <t> at offset <o>, skipping.` as the key, any other failure
//!   `Error at offset <o>, skipping. <why>`.
//! - share group state: as offsets (Kafka's `--share-group-state-decoder`).
//! - transaction log: key `transaction_metadata::transactionalId=<id>`, payload
//!   `producerId:<p>,producerEpoch:<e>,state=<State>,partitions=[t-0,...],txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>`
//!   or `<DELETE>`.
//! - cluster metadata: no key; payload `{"type":"TOPIC_RECORD","version":0,"data":{...}}`.
//! - remote log metadata: no key; payload as Kafka's metadata objects print themselves
//!   (`RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=<id>:<topic>-<p>, id=<id>}, startOffset=..., ...}`);
//!   a snapshot record (never in the topic) as cluster metadata's JSON.
//! - KRaft control records (any decoder, as Kafka's tool prints them): see [`control_string`].

use super::schema::{json_string, struct_json, upper_snake, uuid_string};
use super::{Parsed, Struct, Topic, Value};
use std::fmt::Write as _;

/// The key and payload strings kafka-dump-log prints for one record (`None` = not printed).
pub fn dump_strings(
    topic: Topic,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> (Option<String>, Option<String>) {
    match topic {
        Topic::ConsumerOffsets => {
            offsets_strings(key, value, offset, super::group_key, super::group_value)
        }
        Topic::ShareGroupState => offsets_strings(
            key,
            value,
            offset,
            super::share_state_key,
            super::share_state_value,
        ),
        Topic::TransactionState => transaction_strings(key, value, offset),
        Topic::ClusterMetadata | Topic::RemoteLogMetadata => {
            let Some(value) = value else {
                return (None, None);
            };
            let parsed = if topic == Topic::ClusterMetadata {
                super::metadata_record(value)
            } else {
                super::remote_log_metadata_record(value)
            };
            let out = match parsed {
                Ok(Parsed::Known(r))
                    if topic == Topic::RemoteLogMetadata && r.message.api_key != 3 =>
                {
                    remote_string(r.message.api_key, &r.data)
                }
                Ok(Parsed::Known(r)) => {
                    let mut s = String::from("{\"type\":");
                    json_string(&mut s, &upper_snake(r.message.name));
                    let _ = write!(s, ",\"version\":{},\"data\":", r.version);
                    struct_json(&mut s, &r.data);
                    s.push('}');
                    s
                }
                Ok(Parsed::Unknown(why)) => format!("Error at offset {offset}, skipping. {why}"),
                Err(e) => format!("Error at offset {offset}, skipping. {e}"),
            };
            (None, Some(out))
        }
    }
}

/// What kafka-dump-log prints after a KRaft control record's metadata: its label and the
/// value as JSON (`LeaderChange: {...}`, `SnapshotHeader {...}`, `SnapshotFooter {...}`,
/// `KRaftVersion {...}`, `KRaftVoters {...}`), the value read at version 0 as Kafka reads it.
/// `None` for other control types, and for a value that does not decode (where Kafka's tool
/// fails).
pub fn control_string(control_type: i16, value: Option<&[u8]>) -> Option<String> {
    use super::metadata_tables as m;
    let (label, message) = match control_type {
        2 => ("LeaderChange: ", &m::LEADER_CHANGE_MESSAGE),
        3 => ("SnapshotHeader ", &m::SNAPSHOT_HEADER_RECORD),
        4 => ("SnapshotFooter ", &m::SNAPSHOT_FOOTER_RECORD),
        5 => ("KRaftVersion ", &m::KRAFT_VERSION_RECORD),
        6 => ("KRaftVoters ", &m::VOTERS_RECORD),
        _ => return None,
    };
    let data = super::schema::decode(message, 0, &mut super::Cursor::new(value?)).ok()?;
    let mut s = String::from(label);
    struct_json(&mut s, &data);
    Some(s)
}

/// A `topicId:topic-partition` as Kafka's `TopicIdPartition` prints itself.
fn topic_id_partition(tp: Option<&Value<'_>>) -> String {
    let Some(tp) = tp.and_then(Value::as_struct) else {
        return "null".into();
    };
    let id = match tp.get("id") {
        Some(Value::Uuid(u)) => uuid_string(u),
        _ => String::new(),
    };
    format!(
        "{id}:{}-{}",
        tp.str("name").unwrap_or(""),
        tp.int("partition").unwrap_or(-1)
    )
}

/// The line kafka-dump-log prints for a remote log metadata record: the `toString` of the
/// object Kafka makes of it.
fn remote_string(api_key: i16, d: &Struct<'_>) -> String {
    const SEGMENT_STATES: [&str; 4] = [
        "COPY_SEGMENT_STARTED",
        "COPY_SEGMENT_FINISHED",
        "DELETE_SEGMENT_STARTED",
        "DELETE_SEGMENT_FINISHED",
    ];
    const PARTITION_STATES: [&str; 3] = [
        "DELETE_PARTITION_MARKED",
        "DELETE_PARTITION_STARTED",
        "DELETE_PARTITION_FINISHED",
    ];
    let state = |name: &str, names: &[&str]| {
        let id = d.int(name).unwrap_or(-1);
        names
            .get(id as usize)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("UNKNOWN({id})"))
    };
    let segment_id = || match d.get("remoteLogSegmentId").and_then(Value::as_struct) {
        Some(id) => format!(
            "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
            topic_id_partition(id.get("topicIdPartition")),
            match id.get("id") {
                Some(Value::Uuid(u)) => uuid_string(u),
                _ => String::new(),
            }
        ),
        None => "null".into(),
    };
    let custom = match d.get("customMetadata") {
        Some(Value::Bytes(b)) => format!("Optional[CustomMetadata{{{} bytes}}]", b.len()),
        _ => "Optional.empty".into(),
    };
    let int = |name: &str| d.int(name).unwrap_or(-1);
    match api_key {
        0 => {
            // A sorted map of leader epoch to start offset, as Java's TreeMap prints.
            let mut epochs: Vec<(i64, i64)> = d
                .get("segmentLeaderEpochs")
                .map(Value::as_array)
                .unwrap_or(&[])
                .iter()
                .filter_map(Value::as_struct)
                .map(|e| {
                    (
                        e.int("leaderEpoch").unwrap_or(-1),
                        e.int("offset").unwrap_or(-1),
                    )
                })
                .collect();
            epochs.sort();
            epochs.dedup_by_key(|e| e.0);
            let epochs: Vec<String> = epochs.iter().map(|(e, o)| format!("{e}={o}")).collect();
            format!(
                "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={}, endOffset={}, \
                 brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={{{}}}, \
                 segmentSizeInBytes={}, customMetadata={custom}, state={}}}",
                segment_id(),
                int("startOffset"),
                int("endOffset"),
                int("brokerId"),
                int("maxTimestampMs"),
                int("eventTimestampMs"),
                epochs.join(", "),
                int("segmentSizeInBytes"),
                state("remoteLogSegmentState", &SEGMENT_STATES),
            )
        }
        1 => format!(
            "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={custom}, \
             state={}, eventTimestampMs={}, brokerId={}}}",
            segment_id(),
            state("remoteLogSegmentState", &SEGMENT_STATES),
            int("eventTimestampMs"),
            int("brokerId"),
        ),
        _ => format!(
            "RemotePartitionDeleteMetadata{{topicPartition={}, state={}, eventTimestampMs={}, \
             brokerId={}}}",
            topic_id_partition(d.get("topicIdPartition")),
            state("remotePartitionDeleteState", &PARTITION_STATES),
            int("eventTimestampMs"),
            int("brokerId"),
        ),
    }
}

/// A coordinator topic's key: its record type and fields.
type KeyDecoder = for<'a> fn(&'a [u8]) -> super::DecodeResult<(i16, Parsed<'a>)>;
/// A coordinator topic's value of a record type.
type ValueDecoder = for<'a> fn(i16, &'a [u8]) -> super::DecodeResult<Parsed<'a>>;

/// The lines of a coordinator topic's record (`__consumer_offsets`, `__share_group_state`),
/// decoded by its key and value decoders.
fn offsets_strings(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
    decode_key: KeyDecoder,
    decode_value: ValueDecoder,
) -> (Option<String>, Option<String>) {
    let Some(key) = key else {
        return (
            Some(format!(
                "Error at offset {offset}, skipping. The record has no key"
            )),
            None,
        );
    };
    let error = |why: String| {
        (
            Some(format!("Error at offset {offset}, skipping. {why}")),
            None,
        )
    };
    let (record_type, parsed_key) = match decode_key(key) {
        Ok(k) => k,
        Err(e) => return error(format!("Could not read the key: {e}")),
    };
    let key_record = match parsed_key {
        Parsed::Known(r) => r,
        Parsed::Unknown(_) => {
            return (
                Some(format!(
                    "Unknown record type {record_type} at offset {offset}, skipping."
                )),
                None,
            )
        }
    };
    let mut k = String::from("{\"type\":");
    json_string(&mut k, &record_type.to_string());
    k.push_str(",\"data\":");
    struct_json(&mut k, &key_record.data);
    k.push('}');
    let payload = match value {
        None => "<DELETE>".to_string(),
        Some(value) => match decode_value(record_type, value) {
            Ok(Parsed::Known(r)) => {
                let mut s = String::from("{\"version\":");
                json_string(&mut s, &r.version.to_string());
                s.push_str(",\"data\":");
                struct_json(&mut s, &r.data);
                s.push('}');
                s
            }
            Ok(Parsed::Unknown(why)) => return error(why),
            Err(e) => return error(format!("Could not read the value: {e}")),
        },
    };
    (Some(k), Some(payload))
}

fn transaction_strings(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> (Option<String>, Option<String>) {
    let parsed_key = key.map(super::transaction_key);
    let id = match parsed_key {
        Some(Ok(Parsed::Known(r))) => r.data.str("transactionalId").unwrap_or("").to_string(),
        Some(Ok(Parsed::Unknown(_))) | None => {
            let version = key
                .filter(|k| k.len() >= 2)
                .map(|k| i16::from_be_bytes([k[0], k[1]]))
                .unwrap_or(-1);
            return (Some(format!("unknown::version={version}")), None);
        }
        Some(Err(e)) => {
            return (
                Some(format!("Error at offset {offset}, skipping. {e}")),
                None,
            )
        }
    };
    let key_string = format!("transaction_metadata::transactionalId={id}");
    let payload = match value.map(super::transaction_value) {
        None => "<DELETE>".to_string(),
        Some(Ok(Parsed::Known(r))) => transaction_payload(&r.data),
        Some(Ok(Parsed::Unknown(why))) | Some(Err(super::DecodeError { message: why, .. })) => {
            format!("Error at offset {offset}, skipping. {why}")
        }
    };
    (Some(key_string), Some(payload))
}

/// The value line of the transaction log decoder.
fn transaction_payload(v: &super::Struct<'_>) -> String {
    let status = v.int("transactionStatus").unwrap_or(-1);
    let state = super::transaction_state_name(status)
        .map(str::to_string)
        .unwrap_or_else(|| format!("Unknown({status})"));
    let mut partitions = Vec::new();
    // An Empty transaction's partitions are not loaded (TransactionLog.readTxnRecordValue).
    if status != 0 {
        partitions = topic_partitions(v);
    }
    format!(
        "producerId:{},producerEpoch:{},state={},partitions=[{}],txnLastUpdateTimestamp={},txnTimeoutMs={}",
        v.int("producerId").unwrap_or(-1),
        v.int("producerEpoch").unwrap_or(-1),
        state,
        partitions.join(","),
        v.int("transactionLastUpdateTimestampMs").unwrap_or(-1),
        v.int("transactionTimeoutMs").unwrap_or(-1),
    )
}

/// A transaction value's partitions as `topic-partition` strings, in stored order.
pub fn topic_partitions(v: &super::Struct<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for entry in v
        .get("transactionPartitions")
        .map(|a| a.as_array())
        .unwrap_or(&[])
    {
        let Some(entry) = entry.as_struct() else {
            continue;
        };
        let topic = entry.str("topic").unwrap_or("");
        for p in entry
            .get("partitionIds")
            .map(|a| a.as_array())
            .unwrap_or(&[])
        {
            if let super::Value::Int(p) = p {
                out.push(format!("{topic}-{p}"));
            }
        }
    }
    out
}

/// The record as one JSON object (`kafkalog dump --format json`): the key and value
/// (`{"type"|"version", "data"}` as above, `null` for a tombstone's value), or an `error`.
pub fn dump_json(topic: Topic, key: Option<&[u8]>, value: Option<&[u8]>) -> String {
    let mut out = String::from("{");
    let mut part = |name: &str, parsed: Result<Option<super::Parsed<'_>>, String>, first: bool| {
        if !first {
            out.push(',');
        }
        json_string(&mut out, name);
        out.push(':');
        match parsed {
            Ok(None) => out.push_str("null"),
            Ok(Some(Parsed::Known(r))) => {
                out.push_str("{\"name\":");
                json_string(&mut out, r.message.name);
                let _ = write!(out, ",\"version\":{},\"data\":", r.version);
                struct_json(&mut out, &r.data);
                out.push('}');
            }
            Ok(Some(Parsed::Unknown(why))) => {
                out.push_str("{\"unknown\":");
                json_string(&mut out, &why);
                out.push('}');
            }
            Err(why) => {
                out.push_str("{\"error\":");
                json_string(&mut out, &why);
                out.push('}');
            }
        }
    };
    match topic {
        Topic::ConsumerOffsets | Topic::ShareGroupState => {
            let (decode_key, decode_value): (KeyDecoder, ValueDecoder) =
                if topic == Topic::ConsumerOffsets {
                    (super::group_key, super::group_value)
                } else {
                    (super::share_state_key, super::share_state_value)
                };
            let key_parsed = key.map(decode_key).transpose();
            let record_type = key_parsed
                .as_ref()
                .ok()
                .and_then(|k| k.as_ref())
                .map(|(t, _)| *t);
            let value_parsed = match (record_type, value) {
                (Some(t), Some(v)) => decode_value(t, v).map(Some).map_err(|e| e.to_string()),
                (None, Some(_)) => Err("the key does not decode".into()),
                (_, None) => Ok(None),
            };
            part(
                "key",
                key_parsed
                    .map(|k| k.map(|(_, p)| p))
                    .map_err(|e| e.to_string()),
                true,
            );
            part("value", value_parsed, false);
        }
        Topic::TransactionState => {
            part(
                "key",
                key.map(super::transaction_key)
                    .transpose()
                    .map_err(|e| e.to_string()),
                true,
            );
            part(
                "value",
                value
                    .map(super::transaction_value)
                    .transpose()
                    .map_err(|e| e.to_string()),
                false,
            );
        }
        Topic::ClusterMetadata | Topic::RemoteLogMetadata => {
            let decode = if topic == Topic::ClusterMetadata {
                super::metadata_record
            } else {
                super::remote_log_metadata_record
            };
            part(
                "value",
                value.map(decode).transpose().map_err(|e| e.to_string()),
                true,
            );
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::control_string;

    #[test]
    fn kraft_control_records_print_as_kafkas_tool_prints_them() {
        // KRaftVersionRecord v0: version 0, kRaftVersion 1, no tagged fields.
        assert_eq!(
            control_string(5, Some(&[0, 0, 0, 1, 0])).as_deref(),
            Some(r#"KRaftVersion {"version":0,"kRaftVersion":1}"#)
        );
        // LeaderChangeMessage v0: leader 2, voters [2], granting voters [].
        let value = [0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 2, 0, 1, 0];
        assert_eq!(
            control_string(2, Some(&value)).as_deref(),
            Some(
                r#"LeaderChange: {"version":0,"leaderId":2,"voters":[{"voterId":2}],"grantingVoters":[]}"#
            )
        );
        // Transaction markers are not these; a truncated value does not decode.
        assert_eq!(control_string(0, Some(&[0, 0, 0, 0, 0, 1])), None);
        assert_eq!(control_string(3, Some(&[0, 0, 1])), None);
    }
}
