//! Protobuf keys and values: the schema Schema Registry stores compiled into descriptors, the
//! payload's message indexes checked against its writer's schema, and the payload run from
//! the wire through a field-number table straight into the column's builders.
//! `prost-reflect`'s dynamic messages are the oracle the tests hold the decoder to.
//!
//! A bug in what a payload reads as starts at `program.rs` (which field a tag lands in, and
//! how each kind is taken) and `wire.rs` (the bytes as the runtimes read them).
//!
//! | file | what |
//! |---|---|
//! | `decoder.rs` | the Protobuf decoder a read gets: message indexes against the writer schema, one message or several per column; the oracle's decoder; the fuzz target |
//! | `schema.rs` | `.proto` text or a serialized descriptor compiled (`protox`, no `protoc`), the reader's message found |
//! | `arrow.rs` | messages as Arrow types, and `prost-reflect`'s dynamic messages as a column (the oracle) |
//! | `compile.rs` | a reader message compiled once into a field-number table per message of the column's type |
//! | `program.rs` | the hot path: payloads run through the table into the builders; packed and unpacked, last one wins, unknown fields skipped |
//! | `wire.rs` | the wire format: varints, tags, fixed widths, lengths, fields skipped, as protobuf-java and upb read them |
//! | `columns.rs` | the column's builders, kept across batches, each able to overwrite its last value |
//! | `tests.rs` | payloads framed by Confluent's serializer, against what its deserializer and the runtime decode |
//! | `differential_tests.rs` | the decoder against the oracle on random schemas, evolutions and messages |

mod arrow;
mod columns;
mod compile;
pub mod decoder;
mod program;
pub(crate) mod schema;
mod wire;
