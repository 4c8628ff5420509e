//! What the decode and encode benches share: how many records a run has, and the values.

use std::sync::OnceLock;

/// Records a run: `full` when benchmarking (`cargo bench` passes `--bench`); `cargo test`,
/// which runs each case once to see that it works, gets a small run instead of minutes of
/// data generation.
pub fn record_count(full: usize) -> usize {
    static RECORDS: OnceLock<usize> = OnceLock::new();
    *RECORDS.get_or_init(|| {
        if std::env::args().any(|a| a == "--bench") {
            full
        } else {
            10_000
        }
    })
}

/// The `i`th record's value, `len` bytes: text-like, compressible as real payloads are.
pub fn value(i: usize, len: usize) -> Vec<u8> {
    let mut v = format!(
        "{{\"id\":{i},\"customer\":\"c{}\",\"amount\":{}.{:02},\"note\":\"",
        i % 977,
        i % 10_000,
        i % 100
    )
    .into_bytes();
    while v.len() < len {
        v.extend_from_slice(b"lorem ipsum dolor sit amet ");
    }
    v.truncate(len);
    v
}
