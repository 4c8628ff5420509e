//! The system clock, read in one place: milliseconds since the Unix epoch, as Kafka stamps
//! records and judges retention and compaction.

/// Now, in milliseconds since the Unix epoch (0 for a clock set before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
