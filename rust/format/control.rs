//! Control records (docs/format.md §4): the single record of a v2 control batch. Its key is
//! `version i16 | type i16`; for transaction markers its value is
//! `version i16 | coordinatorEpoch i32`. KRaft control records carry generated-message values,
//! which are passed through as bytes.

use crate::error::{Error, Result};
use crate::format::batch::{BatchInfo, Record, RecordSink};

/// Kafka's `ControlRecordType`: what a control record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlType {
    /// An aborted transaction's marker.
    Abort,
    /// A committed transaction's marker.
    Commit,
    /// KRaft: a new leader (`LeaderChangeMessage`).
    LeaderChange,
    /// KRaft: the start of a snapshot.
    SnapshotHeader,
    /// KRaft: the end of a snapshot.
    SnapshotFooter,
    /// KRaft: the `kraft.version` in use.
    KRaftVersion,
    /// KRaft: the voter set.
    KRaftVoters,
    /// A type this version of Kafka does not know; the raw id is kept.
    Unknown(i16),
}

impl ControlType {
    /// The type with this id (`Unknown` for ids this version of Kafka does not know).
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlType::Abort,
            1 => ControlType::Commit,
            2 => ControlType::LeaderChange,
            3 => ControlType::SnapshotHeader,
            4 => ControlType::SnapshotFooter,
            5 => ControlType::KRaftVersion,
            6 => ControlType::KRaftVoters,
            other => ControlType::Unknown(other),
        }
    }

    /// The id stored in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlType::Abort => 0,
            ControlType::Commit => 1,
            ControlType::LeaderChange => 2,
            ControlType::SnapshotHeader => 3,
            ControlType::SnapshotFooter => 4,
            ControlType::KRaftVersion => 5,
            ControlType::KRaftVoters => 6,
            ControlType::Unknown(id) => id,
        }
    }

    /// Kafka's enum name.
    pub fn name(self) -> &'static str {
        match self {
            ControlType::Abort => "ABORT",
            ControlType::Commit => "COMMIT",
            ControlType::LeaderChange => "LEADER_CHANGE",
            ControlType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlType::KRaftVersion => "KRAFT_VERSION",
            ControlType::KRaftVoters => "KRAFT_VOTERS",
            ControlType::Unknown(_) => "UNKNOWN",
        }
    }

    /// Whether it is an end-transaction marker (ABORT or COMMIT), whose value Kafka parses.
    pub fn is_transaction_marker(self) -> bool {
        matches!(self, ControlType::Abort | ControlType::Commit)
    }
}

/// Parses a control record key.
pub fn parse_key(key: Option<&[u8]>) -> Result<ControlType> {
    let key = key.unwrap_or_default();
    if key.len() < 4 {
        return Err(Error::corrupt(format!(
            "invalid value size found for control record key. Must have at least 4 bytes, but found only {}",
            key.len()
        )));
    }
    let version = i16::from_be_bytes([key[0], key[1]]);
    if version < 0 {
        return Err(Error::corrupt(format!(
            "invalid version found for control record: {version}. May indicate data corruption"
        )));
    }
    Ok(ControlType::from_id(i16::from_be_bytes([key[2], key[3]])))
}

/// An end-transaction marker's value: returns the coordinator epoch.
pub fn parse_end_txn_marker(value: Option<&[u8]>) -> Result<i32> {
    let value = value.unwrap_or_default();
    if value.len() < 6 {
        return Err(Error::corrupt(format!(
            "invalid value size found for end transaction marker. Must have at least 6 bytes, but found only {}",
            value.len()
        )));
    }
    let version = i16::from_be_bytes([value[0], value[1]]);
    if version < 0 {
        return Err(Error::corrupt(format!(
            "invalid version found for end transaction marker: {version}. May indicate data corruption"
        )));
    }
    Ok(i32::from_be_bytes(value[2..6].try_into().unwrap()))
}

/// Checks a control record as Kafka parses it: the key always; for transaction markers, the
/// value too.
pub fn validate(key: Option<&[u8]>, value: Option<&[u8]>) -> Result<ControlType> {
    let kind = parse_key(key)?;
    if kind.is_transaction_marker() {
        parse_end_txn_marker(value)?;
    }
    Ok(kind)
}

/// The type of a control batch, read as Kafka's readers read it (`ControlRecordType.parse` on
/// the first record's key; the batch's other records are not looked at). A key that does not
/// parse, where Kafka's readers fail, reads as [`ControlType::Unknown`]`(-1)`: a control batch
/// that is no transaction marker.
pub fn batch_type(first_key: Option<&[u8]>) -> ControlType {
    parse_key(first_key).unwrap_or(ControlType::Unknown(-1))
}

/// A [`RecordSink`] that reads the type of each control batch it is given ([`batch_type`]),
/// and wants no record of a data batch.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstControl {
    kind: Option<ControlType>,
    empty: bool,
}

impl FirstControl {
    /// The type of the batch just decoded: `None` for a data batch; for a control batch its
    /// [`batch_type`], or [`ControlType::Unknown`]`(-1)` (no transaction marker) when it has no
    /// record (the cleaner empties control batches whose markers it removed).
    pub fn kind(&self) -> Option<ControlType> {
        self.kind
    }

    /// Whether the batch just decoded was a control batch without records.
    pub fn is_empty(&self) -> bool {
        self.empty
    }
}

impl RecordSink for FirstControl {
    fn begin_batch(&mut self, batch: &BatchInfo) -> bool {
        self.kind = batch.is_control.then_some(ControlType::Unknown(-1));
        self.empty = batch.is_control;
        batch.is_control
    }

    fn record(&mut self, batch: &BatchInfo, record: &Record<'_>) {
        if batch.is_control && self.empty {
            self.empty = false;
            self.kind = Some(batch_type(record.key));
        }
    }
}

/// The key of a control record of `kind`.
pub fn key_bytes(kind: ControlType) -> [u8; 4] {
    let t = kind.id().to_be_bytes();
    [0, 0, t[0], t[1]]
}

/// The value of an end-transaction marker.
pub fn end_txn_marker_bytes(coordinator_epoch: i32) -> [u8; 6] {
    let e = coordinator_epoch.to_be_bytes();
    [0, 0, e[0], e[1], e[2], e[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_markers() {
        assert_eq!(
            parse_key(Some(&key_bytes(ControlType::Commit))),
            Ok(ControlType::Commit)
        );
        assert_eq!(parse_key(Some(&[0, 0, 0, 9])), Ok(ControlType::Unknown(9)));
        assert!(parse_key(Some(&[0, 0, 1])).is_err());
        assert!(parse_key(Some(&[0xff, 0xff, 0, 1])).is_err());
        assert_eq!(parse_end_txn_marker(Some(&end_txn_marker_bytes(7))), Ok(7));
        assert!(parse_end_txn_marker(None).is_err());
    }
}
