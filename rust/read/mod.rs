//! Reading: readers over the log layer's plans, and parallelism.
pub mod files;
pub mod parallel;
pub mod pieces;
mod pool;
pub mod reader;
