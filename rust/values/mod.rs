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
//! | `registry.rs` | Schema Registry's schemas folded from its storage topic (`_schemas`), or given directly; lookups by id, GUID, subject and version; the registry as a table |
//! | `registry_records.rs` | the storage topic's records written as the registry writes them (versions, ids, references, deletes by its rules), and the registry exported as its REST API imports it |
//! | `formats.rs` | the formats a key or value is read as, and the one dispatch to a format's decoder; UTF-8 strings |
//! | `avro.rs` | Avro payloads into one Arrow column through `arrow-avro`, every writer version resolved to the reader schema |
//! | `avro_shape.rs` | the column users get from `arrow-avro`'s, and back: Spark's shapes of Avro unions (`member0`, ...; `int`/`long` as `long`); `uuid` read as the `string` or `fixed` it is on |
//! | `avro_feed.rs` | Avro payloads fed to `arrow-avro`'s streaming decoder uncopied, one record each, grouped by writer schema; schema keys no payload's tail can pass for |
//! | `avro_encode.rs` | typed keys and values written back: Avro with Confluent's framing |
//! | `record_types.rs` | topics of several record types (record-name subject strategies): one struct column with a field per type, each record routed by its writer id to its subject |
//! | `columns.rs` | a reader's batches with key and value decoded: framing off (prefix or header), the reader schema chosen, bad values failing or null with their reason |
//! | `protobuf.rs`, `protobuf_schema.rs`, `protobuf_arrow.rs` | Protobuf payloads: the decoder (message indexes against the writer schema), `.proto` text or descriptors compiled, messages as Arrow |
//! | `json_text.rs` | typed keys and values as JSON text (the command line's JSON lines and printed records): maps as objects, ISO-8601 times, exact decimals, bytes as Avro's JSON encoding |
//! | `json_schema.rs`, `json_schema_arrow.rs` | JSON Schema payloads: the Arrow type a JSON Schema describes; values decoded by arrow-json, a bad row isolated |

pub mod avro;
pub mod avro_encode;
mod avro_feed;
pub mod avro_shape;
pub mod columns;
pub mod decoder;
pub mod formats;
pub mod json_schema;
mod json_schema_arrow;
pub mod json_text;
pub mod protobuf;
mod protobuf_arrow;
mod protobuf_schema;
pub mod record_types;
pub mod registry;
pub mod registry_records;
