//! The log layer: a partition as a broker keeps it, no Arrow.
pub mod discover;
pub mod issues;
pub mod manifest;
pub mod offsets;
pub mod origin;
pub mod plan;
pub mod remote_local;
pub mod scan;
pub mod bounds;
pub mod position;
pub mod transactions;
pub mod visibility;
