//! JSON Schema keys and values, and typed values as JSON text. The reader's JSON Schema gives
//! the column's Arrow type; payloads are read by kafkalog's own tokenizer in one pass straight
//! into the column's builders, numbers and dates taking arrow-json's readings. serde_json and
//! arrow-json, the way payloads were decoded before, are the oracle the tests hold it to.
//!
//! A question about how a JSON number reads (a fraction or exponent into an integer column, a
//! string holding a number) starts at `decode.rs`, which takes the number `scan.rs` reads.
//!
//! | file | what |
//! |---|---|
//! | `decoder.rs` | the JSON Schema decoder a read gets: schema ids checked, builders kept from batch to batch; its differential check against the oracle; the fuzz target |
//! | `schema.rs` | the Arrow type a JSON Schema describes (fields in declared order, `$ref`s resolved) |
//! | `plan.rs` | that type compiled once into a flat plan, a node per Arrow array, struct fields found by their name's hash |
//! | `decode.rs` | the plan run over each payload into the builders: numbers, dates, strings holding numbers, values that do not fit |
//! | `scan.rs` | the tokenizer: strings, numbers, values skipped, values written as their canonical JSON text |
//! | `bytes.rs` | a payload's bytes classified many at a time for the tokenizer (SWAR, SSE2) |
//! | `oracle.rs` | the oracle of the tests, the fuzz target and the benchmark: serde_json and arrow-json (tests, feature `oracles`) |
//! | `texts.rs` | typed keys and values as JSON text (the command line's JSON lines and printed records): maps as objects, ISO-8601 times, exact decimals, bytes as Avro's JSON encoding |
//! | `tests.rs` | payloads framed by Confluent's serializer against what the json module reads; the decoder against the oracle on generated schemas |

mod bytes;
mod decode;
pub mod decoder;
#[cfg(any(test, feature = "oracles"))]
#[doc(hidden)]
pub mod oracle;
mod plan;
mod scan;
pub mod schema;
pub mod texts;
