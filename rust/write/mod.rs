//! Writing: partition directories, placement, object-store publishing, appends.
pub mod append;
pub mod lease;
pub mod placement;
pub mod publish;
pub mod writer;
