//! Typed keys and values: the bytes of a record's key or value decoded with the schema its
//! producer wrote it with (Confluent's Schema Registry framing; Avro, Protobuf, JSON Schema),
//! a batch at a time, into one Arrow column per read.
//!
//! Layer 5, beside [`crate::internal`]: it takes the reader's Arrow batches (layer 4) and
//! gives them back with `key` and `value` typed. Reading the registry's storage topic from
//! paths is above it, in `read/`.
//!
//! | file | what |
//! |---|---|
//! | `decoder.rs` | the contract every format's decoder meets: payloads in, one Arrow array out, an error per bad payload |
//! | `registry/` | Schema Registry's storage topic (`_schemas`) folded into the registry that reads look schemas up in, and written as the registry writes it |
//! | `formats.rs` | the formats a key or value is read as, and the one dispatch to a format's decoder; UTF-8 strings |
//! | `avro/` | Avro: the reader schema and each writer's compiled into a program that decodes payloads into the column's builders; Spark's shapes of unions; values written back as Avro; `arrow-avro` as the oracle |
//! | `record_types.rs` | topics of several record types (record-name subject strategies): one struct column with a field per type, each record routed by its writer id to its subject |
//! | `columns.rs` | a reader's batches with key and value decoded: framing off (prefix or header), the reader schema chosen, bad values failing or null with their reason |
//! | `protobuf/` | Protobuf: `.proto` text or descriptors compiled, message indexes checked against the writer schema, payloads run from the wire through a field-number table into the column's builders; `prost-reflect` as the oracle |
//! | `json_schema.rs` | JSON Schema payloads: the decoder (schema ids checked, builders kept from batch to batch) and its differential check against the oracle |
//! | `json_schema_arrow.rs` | the Arrow type a JSON Schema describes (fields in declared order, `$ref`s resolved) |
//! | `json_plan.rs`, `json_decode.rs`, `json_scan.rs`, `json_bytes.rs` | JSON payloads straight into Arrow builders: the type compiled into a plan; the tokenizer, JSON text written as serde_json prints it |
//! | `json_oracle.rs` | the oracle of the JSON decoder's tests and fuzz target: serde_json and arrow-json, as payloads were decoded before |
//! | `json_text.rs` | typed keys and values as JSON text (the command line's JSON lines and printed records): maps as objects, ISO-8601 times, exact decimals, bytes as Avro's JSON encoding |

pub mod avro;
pub mod columns;
pub mod decoder;
pub mod formats;
mod json_bytes;
mod json_decode;
#[doc(hidden)]
pub mod json_oracle;
mod json_plan;
mod json_scan;
pub mod json_schema;
pub mod json_schema_arrow;
pub mod json_text;
pub mod protobuf;
pub mod record_types;
pub mod registry;
#[cfg(test)]
mod wanted_tests;
