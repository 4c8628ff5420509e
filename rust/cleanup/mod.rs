//! Cleanup and checks: compaction, retention, index rebuilds, verification.
pub mod compact;
pub mod rebuild;
pub mod retention;
pub mod verify;
