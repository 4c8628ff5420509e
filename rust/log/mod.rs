//! The log layer: a partition as a broker keeps it, no Arrow.
pub mod bounds;
pub mod discover;
pub mod issues;
pub mod manifest;
pub mod offsets;
pub mod origin;
pub mod plan;
pub mod position;
pub mod remote_local;
pub mod scan;
pub mod transactions;
pub mod visibility;
