//! Aiven's segment manifest, `<offset>-<segmentId>.rsm-manifest`: a JSON object (`"version":
//! "1"`) with
//! - `chunkIndex`: `{"type": "fixed"|"variable", "originalChunkSize", "originalFileSize", ...}`
//!   (see `chunks.rs`);
//! - `segmentIndexes`: `offset`, `timestamp`, `producerSnapshot`, `leaderEpoch` and
//!   `transaction` (may be null), each `{"position", "size"}`: a byte range of the `.indexes`
//!   object, the indexes being stored back to back in that order, each encrypted on its own
//!   when the segment is, never compressed;
//! - `compression`: whether each chunk is a zstd frame;
//! - `encryption` (absent when off): `dataKey`, `"<key id>:<base64 of the AES-256 key wrapped
//!   with that RSA key>"`, and `aad`, base64 of the additional authenticated data of every GCM
//!   operation of the segment;
//! - `remoteLogSegmentMetadata`: the broker's `RemoteLogSegmentMetadata` (topic id, topic,
//!   partition, segment id, start and end offsets, max timestamp, `segmentLeaderEpochs`:
//!   `{"<epoch>": <start offset>}`). Older manifests lack it.

use super::chunks::{decode_transformed_chunks, ChunkIndex};
use crate::error::{Error, ErrorKind, Result};
use serde_json::Value;

/// The indexes a segment carries, in the order the plugin stores them in `.indexes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexSlot {
    /// The offset index (`.index`).
    Offset,
    /// The time index (`.timeindex`).
    Timestamp,
    /// The producer state snapshot (`.snapshot`).
    ProducerSnapshot,
    /// The leader epoch checkpoint.
    LeaderEpoch,
    /// The transaction index (`.txnindex`).
    Transaction,
}

impl IndexSlot {
    /// Every slot, in the order the plugin stores them.
    pub const ALL: [IndexSlot; 5] = [
        IndexSlot::Offset,
        IndexSlot::Timestamp,
        IndexSlot::ProducerSnapshot,
        IndexSlot::LeaderEpoch,
        IndexSlot::Transaction,
    ];

    fn field(self) -> &'static str {
        match self {
            IndexSlot::Offset => "offset",
            IndexSlot::Timestamp => "timestamp",
            IndexSlot::ProducerSnapshot => "producerSnapshot",
            IndexSlot::LeaderEpoch => "leaderEpoch",
            IndexSlot::Transaction => "transaction",
        }
    }

    /// The broker's file suffix for this index beside a segment.
    pub fn suffix(self) -> &'static str {
        match self {
            IndexSlot::Offset => "index",
            IndexSlot::Timestamp => "timeindex",
            IndexSlot::ProducerSnapshot => "snapshot",
            IndexSlot::LeaderEpoch => "leader-epoch-checkpoint",
            IndexSlot::Transaction => "txnindex",
        }
    }

    /// The slot of the broker file suffix `suffix` (`index`, `timeindex`, ...).
    pub fn from_suffix(suffix: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.suffix() == suffix)
    }
}

/// A segment's encryption: which RSA key wraps its data key, the wrapped key, the AAD.
#[derive(Clone, PartialEq, Eq)]
pub struct Encryption {
    /// The id of the RSA key that wraps the data key.
    pub key_id: String,
    /// The segment's AES data key, wrapped with that key (RSA-OAEP).
    pub wrapped_key: Vec<u8>,
    /// The additional authenticated data of each AES-GCM chunk.
    pub aad: Vec<u8>,
}

impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key material, even wrapped.
        write!(f, "Encryption {{ key_id: {:?} }}", self.key_id)
    }
}

/// What the broker said about the segment when it copied it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentMetadata {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The topic's id (a UUID), when recorded.
    pub topic_id: Option<String>,
    /// The remote segment's id (a UUID), as in its object names.
    pub segment_id: Option<String>,
    /// The segment's first offset.
    pub start_offset: i64,
    /// The segment's last offset (inclusive).
    pub end_offset: i64,
    /// The largest timestamp in the segment.
    pub max_timestamp: Option<i64>,
    /// The broker that copied it.
    pub broker_id: Option<i32>,
    /// When the broker copied it (ms since the epoch).
    pub event_timestamp: Option<i64>,
    /// `(epoch, start offset)`, by epoch.
    pub leader_epochs: Vec<(i32, i64)>,
}

/// A parsed `.rsm-manifest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Where each chunk of the segment lies in the `.log` object.
    pub chunk_index: ChunkIndex,
    /// `(position, size)` in `.indexes`, per [`IndexSlot::ALL`]; `None` for an absent index.
    pub indexes: [Option<(u64, u64)>; 5],
    /// Whether chunks are compressed (zstd).
    pub compression: bool,
    /// How chunks are encrypted, when they are.
    pub encryption: Option<Encryption>,
    /// The broker's metadata of the segment, when the manifest carries it.
    pub metadata: Option<SegmentMetadata>,
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::TieredStorage,
        format!("segment manifest: {what}"),
    )
}

fn int(v: &Value, field: &str) -> Result<i64> {
    v.get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| bad(format_args!("{field} is missing or not an integer")))
}

impl Manifest {
    /// Parses a manifest's JSON, checking every size and range it gives.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let root: Value = serde_json::from_slice(bytes).map_err(|e| {
            bad(format_args!(
                "not JSON ({} at line {} column {})",
                match e.classify() {
                    serde_json::error::Category::Eof => "truncated",
                    serde_json::error::Category::Syntax => "syntax error",
                    _ => "unexpected value",
                },
                e.line(),
                e.column()
            ))
        })?;
        if !root.is_object() {
            return Err(bad("not a JSON object"));
        }
        match root.get("version") {
            Some(Value::String(v)) if v == "1" => {}
            Some(Value::Number(n)) if n.as_i64() == Some(1) => {}
            other => {
                return Err(bad(format_args!(
                    "version {} is not one kafkalog reads (1)",
                    other.map_or("missing".to_string(), |v| v.to_string())
                )))
            }
        }
        let ci = root
            .get("chunkIndex")
            .ok_or_else(|| bad("chunkIndex is missing"))?;
        let chunk_index = match ci.get("type").and_then(Value::as_str) {
            Some("fixed") => ChunkIndex::fixed(
                int(ci, "originalChunkSize")?,
                int(ci, "originalFileSize")?,
                int(ci, "transformedChunkSize")?,
                int(ci, "finalTransformedChunkSize")?,
            )?,
            Some("variable") => {
                let text = ci
                    .get("transformedChunks")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("chunkIndex.transformedChunks is missing"))?;
                ChunkIndex::variable(
                    int(ci, "originalChunkSize")?,
                    int(ci, "originalFileSize")?,
                    &decode_transformed_chunks(text)?,
                )?
            }
            other => return Err(bad(format_args!("chunkIndex.type {other:?} is unknown"))),
        };
        let si = root
            .get("segmentIndexes")
            .filter(|v| v.is_object())
            .ok_or_else(|| bad("segmentIndexes is missing"))?;
        let mut indexes = [None; 5];
        for (slot, out) in IndexSlot::ALL.iter().zip(indexes.iter_mut()) {
            match si.get(slot.field()) {
                None | Some(Value::Null) if *slot == IndexSlot::Transaction => {}
                Some(v) if v.is_object() => {
                    let (p, s) = (int(v, "position")?, int(v, "size")?);
                    if p < 0 || s < 0 {
                        return Err(bad(format_args!(
                            "segmentIndexes.{} has a negative position or size",
                            slot.field()
                        )));
                    }
                    *out = Some((p as u64, s as u64));
                }
                _ => {
                    return Err(bad(format_args!(
                        "segmentIndexes.{} is missing",
                        slot.field()
                    )))
                }
            }
        }
        let compression = root
            .get("compression")
            .and_then(Value::as_bool)
            .ok_or_else(|| bad("compression is missing or not a boolean"))?;
        let encryption = match root.get("encryption") {
            None | Some(Value::Null) => None,
            Some(e) => Some(Self::encryption(e)?),
        };
        let metadata = match root.get("remoteLogSegmentMetadata") {
            None | Some(Value::Null) => None,
            Some(m) => Some(Self::metadata(m)?),
        };
        Ok(Manifest {
            chunk_index,
            indexes,
            compression,
            encryption,
            metadata,
        })
    }

    fn encryption(e: &Value) -> Result<Encryption> {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD;
        let data_key = e
            .get("dataKey")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("encryption.dataKey is missing"))?;
        // `<key id>:<base64>`, exactly one colon.
        let (key_id, wrapped) = data_key
            .split_once(':')
            .filter(|(id, w)| !id.trim().is_empty() && !w.contains(':'))
            .ok_or_else(|| bad("encryption.dataKey is not <key id>:<base64>"))?;
        let wrapped_key = b64
            .decode(wrapped)
            .ok()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| bad("encryption.dataKey is not <key id>:<base64>"))?;
        let aad = e
            .get("aad")
            .and_then(Value::as_str)
            .and_then(|a| b64.decode(a).ok())
            .ok_or_else(|| bad("encryption.aad is missing or not base64"))?;
        Ok(Encryption {
            key_id: key_id.to_string(),
            wrapped_key,
            aad,
        })
    }

    fn metadata(m: &Value) -> Result<SegmentMetadata> {
        let id = m.get("remoteLogSegmentId");
        let tip = id.and_then(|i| i.get("topicIdPartition"));
        let tp = tip.and_then(|t| t.get("topicPartition"));
        let topic = tp
            .and_then(|t| t.get("topic"))
            .and_then(Value::as_str)
            .ok_or_else(|| bad("remoteLogSegmentMetadata: topic is missing"))?;
        let partition = tp
            .and_then(|t| t.get("partition"))
            .and_then(Value::as_i64)
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| bad("remoteLogSegmentMetadata: partition is missing"))?;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let mut leader_epochs = Vec::new();
        if let Some(map) = m.get("segmentLeaderEpochs").and_then(Value::as_object) {
            for (epoch, start) in map {
                let epoch: i32 = epoch
                    .parse()
                    .map_err(|_| bad("segmentLeaderEpochs: an epoch is not an integer"))?;
                let start = start
                    .as_i64()
                    .ok_or_else(|| bad("segmentLeaderEpochs: an offset is not an integer"))?;
                leader_epochs.push((epoch, start));
            }
        }
        leader_epochs.sort_unstable();
        let start_offset = int(m, "startOffset")?;
        let end_offset = int(m, "endOffset")?;
        if start_offset < 0 || end_offset < start_offset - 1 {
            return Err(bad(format_args!(
                "remoteLogSegmentMetadata: offsets {start_offset} to {end_offset}"
            )));
        }
        Ok(SegmentMetadata {
            topic: topic.to_string(),
            partition,
            topic_id: text(tip.and_then(|t| t.get("topicId"))),
            segment_id: text(id.and_then(|i| i.get("id"))),
            start_offset,
            end_offset,
            max_timestamp: m.get("maxTimestampMs").and_then(Value::as_i64),
            broker_id: m
                .get("brokerId")
                .and_then(Value::as_i64)
                .and_then(|b| i32::try_from(b).ok()),
            event_timestamp: m.get("eventTimestampMs").and_then(Value::as_i64),
            leader_epochs,
        })
    }

    /// The `(position, size)` of an index in `.indexes`; `None` when the segment has none.
    pub fn index(&self, slot: IndexSlot) -> Option<(u64, u64)> {
        let i = IndexSlot::ALL.iter().position(|s| *s == slot)?;
        self.indexes[i].filter(|(_, size)| *size > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXED: &str = r#"{"version":"1","chunkIndex":{"type":"fixed","originalChunkSize":100,
        "originalFileSize":250,"transformedChunkSize":128,"finalTransformedChunkSize":78},
        "segmentIndexes":{"offset":{"position":0,"size":16},"timestamp":{"position":16,"size":24},
        "producerSnapshot":{"position":40,"size":10},"leaderEpoch":{"position":50,"size":8},
        "transaction":null},"compression":false,
        "encryption":{"dataKey":"key-1:AQID","aad":"BAUG"},
        "remoteLogSegmentMetadata":{"remoteLogSegmentId":{"topicIdPartition":{
        "topicId":"MWJ6FHTfRYy67jzwZdeqSQ","topicPartition":{"topic":"orders","partition":3}},
        "id":"tqimKeZwStOEOwRzT3L5oQ"},"startOffset":1000,"endOffset":1999,
        "maxTimestampMs":1700000000000,"brokerId":1,"eventTimestampMs":1700000000001,
        "segmentLeaderEpochs":{"5":1500,"4":900},"segmentSizeInBytes":250,"state":"COPY_SEGMENT_STARTED"}}"#;

    #[test]
    fn parses_the_plugin_fields() {
        let m = Manifest::parse(FIXED.as_bytes()).unwrap();
        assert_eq!(m.chunk_index.count(), 3);
        assert_eq!(m.index(IndexSlot::Timestamp), Some((16, 24)));
        assert_eq!(m.index(IndexSlot::Transaction), None);
        assert!(!m.compression);
        let e = m.encryption.as_ref().unwrap();
        assert_eq!(
            (e.key_id.as_str(), &e.wrapped_key[..], &e.aad[..]),
            ("key-1", &[1u8, 2, 3][..], &[4u8, 5, 6][..])
        );
        assert!(!format!("{e:?}").contains("AQID"));
        let md = m.metadata.unwrap();
        assert_eq!((md.topic.as_str(), md.partition), ("orders", 3));
        assert_eq!((md.start_offset, md.end_offset), (1000, 1999));
        assert_eq!(md.leader_epochs, vec![(4, 900), (5, 1500)]);
        assert_eq!(md.segment_id.as_deref(), Some("tqimKeZwStOEOwRzT3L5oQ"));
    }

    #[test]
    fn bad_manifests_are_typed_errors() {
        for bad in [
            "",
            "{",
            "[]",
            r#"{"version":"2"}"#,
            &FIXED.replace(r#""type":"fixed""#, r#""type":"other""#),
            &FIXED.replace(r#""compression":false"#, r#""compression":"no""#),
            &FIXED.replace(r#""dataKey":"key-1:AQID""#, r#""dataKey":"AQID""#),
            &FIXED.replace(r#""dataKey":"key-1:AQID""#, r#""dataKey":"k:A:B""#),
            &FIXED.replace(r#""offset":{"position":0,"size":16},"#, ""),
            &FIXED.replace(r#""endOffset":1999"#, r#""endOffset":"x""#),
        ] {
            let err = Manifest::parse(bad.as_bytes()).unwrap_err();
            assert_eq!(err.kind, crate::error::ErrorKind::TieredStorage, "{bad}");
            assert!(
                err.message.starts_with("segment manifest")
                    || err.message.starts_with("chunk index")
            );
        }
        // Without encryption or metadata: still a manifest.
        let plain = r#"{"version":"1","chunkIndex":{"type":"fixed","originalChunkSize":100,
            "originalFileSize":0,"transformedChunkSize":100,"finalTransformedChunkSize":0},
            "segmentIndexes":{"offset":{"position":0,"size":0},"timestamp":{"position":0,"size":0},
            "producerSnapshot":{"position":0,"size":0},"leaderEpoch":{"position":0,"size":0}},
            "compression":true}"#;
        let m = Manifest::parse(plain.as_bytes()).unwrap();
        assert!(m.encryption.is_none() && m.metadata.is_none());
    }
}
