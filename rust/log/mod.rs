//! The log layer: a partition as a broker keeps it, no Arrow.
pub mod discover;
pub mod issues;
pub mod offsets;
pub mod origin;
pub mod plan;
pub mod scan;
pub mod seek;
pub mod transactions;
pub mod visibility;
