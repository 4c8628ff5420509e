//! The Arrow layer: decoded records into `RecordBatch`es (and back); owns the schema.
//!
//! | file | what |
//! |---|---|
//! | `schema.rs` | the columns, their names and Arrow types |
//! | `builder.rs` | column buffers filled record by record (the hot loop) |
//! | `views.rs` | `binary_view` columns pointing into the bytes read, and the buffers that own them |
//! | `decoder.rs` | sans-I/O decoder: bytes in, record batches out, corrupt-batch policy |
//! | `output.rs` | what a decoder fills: record columns or a batch listing |
//! | `batches.rs` | the batch listing: one row per batch |
//! | `encoder.rs` | Arrow rows into Kafka batches (faithful to batch metadata, or fresh) |
//! | `index_tables.rs` | `.index`, `.timeindex`, `.txnindex`, `.snapshot`, leader epochs as tables |

pub mod batches;
pub mod builder;
pub mod decoder;
pub mod encoder;
pub mod index_tables;
pub mod output;
pub mod schema;
pub mod views;
