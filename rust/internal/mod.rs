//! Kafka's internal topics as tables, and the cluster state KRaft metadata replays into.
pub mod cluster_state;
pub mod internal_tables;
