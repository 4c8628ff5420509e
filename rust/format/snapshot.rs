//! Producer state snapshots (`<offset>.snapshot`, docs/format.md §5.9). The text checkpoint
//! files (§5.10) are `checkpoint.rs`'s.

use crate::error::{Error, Result};

/// One producer's state in a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerEntry {
    /// The producer id.
    pub producer_id: i64,
    /// Its current epoch.
    pub producer_epoch: i16,
    /// The sequence number of its last record appended.
    pub last_sequence: i32,
    /// The offset of its last record appended.
    pub last_offset: i64,
    /// Last offset minus the first offset of its last batch.
    pub offset_delta: i32,
    /// The max timestamp of its last batch.
    pub timestamp: i64,
    /// The epoch of the transaction coordinator that wrote its last marker (-1: none).
    pub coordinator_epoch: i32,
    /// First offset of the producer's open transaction, -1 when none.
    pub current_txn_first_offset: i64,
}

impl ProducerEntry {
    /// Kafka's first sequence of the last batch: `decrementSequence(lastSequence, offsetDelta)`.
    pub fn first_sequence(&self) -> i32 {
        let (s, d) = (self.last_sequence, self.offset_delta);
        if s < d {
            i32::MAX.wrapping_sub(d.wrapping_sub(s)).wrapping_add(1)
        } else {
            s.wrapping_sub(d)
        }
    }
}

const ENTRY_SIZE: usize = 46;
const HEADER_SIZE: usize = 10;

/// Parses a producer snapshot, verifying its version and CRC-32C.
pub fn parse_producer_snapshot(bytes: &[u8]) -> Result<Vec<ProducerEntry>> {
    if bytes.len() < HEADER_SIZE {
        return Err(Error::corrupt(format!(
            "snapshot of {} bytes is shorter than its header",
            bytes.len()
        )));
    }
    let version = i16::from_be_bytes([bytes[0], bytes[1]]);
    if version != 1 {
        return Err(Error::corrupt(format!(
            "snapshot contained an unknown file version {version}"
        )));
    }
    let stored = u32::from_be_bytes(bytes[2..6].try_into().unwrap());
    let computed = super::crc::crc32c(&bytes[6..]);
    if stored != computed {
        return Err(Error::new(
            crate::ErrorKind::CrcMismatch,
            format!("snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"),
        ));
    }
    let count = i32::from_be_bytes(bytes[6..10].try_into().unwrap());
    let body = &bytes[HEADER_SIZE..];
    if count < 0 || body.len() != count as usize * ENTRY_SIZE {
        return Err(Error::corrupt(format!(
            "snapshot failed schema validation: {count} entries do not fill {} bytes",
            body.len()
        )));
    }
    Ok(body
        .chunks_exact(ENTRY_SIZE)
        .map(|e| {
            let i64_at = |i: usize| i64::from_be_bytes(e[i..i + 8].try_into().unwrap());
            let i32_at = |i: usize| i32::from_be_bytes(e[i..i + 4].try_into().unwrap());
            ProducerEntry {
                producer_id: i64_at(0),
                producer_epoch: i16::from_be_bytes([e[8], e[9]]),
                last_sequence: i32_at(10),
                last_offset: i64_at(14),
                offset_delta: i32_at(22),
                timestamp: i64_at(26),
                coordinator_epoch: i32_at(34),
                current_txn_first_offset: i64_at(38),
            }
        })
        .collect())
}

/// Writes a producer snapshot (version 1, CRC-32C over the entries), as a broker writes one
/// at a segment roll or a clean shutdown: the inverse of [`parse_producer_snapshot`].
pub fn write_producer_snapshot(entries: &[ProducerEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_SIZE + entries.len() * ENTRY_SIZE);
    out.extend_from_slice(&1i16.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // the CRC, below
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for e in entries {
        out.extend_from_slice(&e.producer_id.to_be_bytes());
        out.extend_from_slice(&e.producer_epoch.to_be_bytes());
        out.extend_from_slice(&e.last_sequence.to_be_bytes());
        out.extend_from_slice(&e.last_offset.to_be_bytes());
        out.extend_from_slice(&e.offset_delta.to_be_bytes());
        out.extend_from_slice(&e.timestamp.to_be_bytes());
        out.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        out.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let crc = super::crc::crc32c(&out[6..]);
    out[2..6].copy_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_round_trip() {
        let entry = ProducerEntry {
            producer_id: 7,
            producer_epoch: 2,
            last_sequence: 41,
            last_offset: 1000,
            offset_delta: 9,
            timestamp: 1_700_000_000_000,
            coordinator_epoch: 3,
            current_txn_first_offset: 990,
        };
        let bytes = write_producer_snapshot(&[entry]);
        assert_eq!(bytes.len(), HEADER_SIZE + ENTRY_SIZE);
        assert_eq!(parse_producer_snapshot(&bytes).unwrap(), [entry]);
    }

    #[test]
    fn empty_snapshot_and_bad_crc() {
        let mut bytes = vec![0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let crc = crate::format::crc::crc32c(&bytes[6..]);
        bytes[2..6].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(parse_producer_snapshot(&bytes).unwrap(), []);
        bytes[9] = 1;
        assert_eq!(
            parse_producer_snapshot(&bytes).unwrap_err().kind,
            crate::ErrorKind::CrcMismatch
        );
    }
}
