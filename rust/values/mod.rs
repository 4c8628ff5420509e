//! Typed keys and values: the bytes of a record's key or value decoded with the schema its
//! producer wrote it with (Confluent's Schema Registry framing; Avro, Protobuf, JSON Schema),
//! a batch at a time, into one Arrow column per read.
//!
//! Layer 5, beside [`crate::internal`]: it takes the reader's Arrow batches (layer 4) and
//! gives them back with `key` and `value` typed. Reading the registry's storage topic from
//! paths is above it, in `read/`.
//!
//! At the top, what every format shares; below it, a folder per format and one for the
//! registry, each opening with its own table.
//!
//! | file | what |
//! |---|---|
//! | `decoder.rs` | the contract every format's decoder meets: payloads in, one Arrow array out, an error per bad payload |
//! | `formats.rs` | the formats a key or value is read as, and the one dispatch to a format's decoder; UTF-8 strings |
//! | `columns.rs` | a reader's batches with key and value decoded: framing off (prefix or header), the reader schema chosen, bad values failing or null with their reason |
//! | `record_types.rs` | topics of several record types (record-name subject strategies): one struct column with a field per type, each record routed by its writer id to its subject |
//! | `wanted_tests.rs` | (tests) random parts of a column asked for, and a pruned read held to the whole column's |
//! | `avro/` | Avro: the reader schema and each writer's compiled into a program that decodes payloads into the column's builders; Spark's shapes of unions; values written back as Avro; `arrow-avro` as the oracle |
//! | `protobuf/` | Protobuf: `.proto` text or descriptors compiled, message indexes checked against the writer schema, payloads run from the wire through a field-number table into the column's builders; `prost-reflect` as the oracle |
//! | `json/` | JSON Schema: the Arrow type a schema describes, payloads tokenized in one pass into the column's builders, serde_json and arrow-json as the oracle; typed values as JSON text |
//! | `registry/` | Schema Registry's storage topic (`_schemas`) folded into the registry that reads look schemas up in, and written as the registry writes it |

pub mod avro;
pub mod columns;
pub mod decoder;
pub mod formats;
pub mod json;
pub mod protobuf;
pub mod record_types;
pub mod registry;
#[cfg(test)]
mod wanted_tests;
