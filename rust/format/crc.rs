//! The two checksums of Kafka's log: CRC-32C (Castagnoli) for magic v2 batches, producer
//! snapshots; CRC-32 (IEEE, `java.util.zip.CRC32`) for v0/v1 messages. Both crates use the CPU's
//! CRC instructions where present.

/// CRC-32C of `bytes`.
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// CRC-32 (IEEE 802.3) of `bytes`.
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn check_values() {
        // The standard check value of each polynomial over "123456789".
        assert_eq!(super::crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
    }
}
