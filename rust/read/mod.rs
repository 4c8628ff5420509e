//! Reading: readers over the log layer's plans, and parallelism.
pub mod parallel;
pub mod reader;
pub mod files;
