//! Avro keys and values: a reader schema and its writers' schemas compiled into a program
//! that decodes payloads straight into the column's builders (`decoder.rs`), the column's
//! shape as users see it, and typed values written back as Avro. `arrow-avro`, Apache
//! Arrow's Avro crate, gives the column's type and is the oracle the tests hold the decoder to.
//!
//! A bug in what a payload reads as starts at `resolve.rs` (which rule of the specification a
//! writer/reader pair follows) and `program.rs` (how the steps run over the bytes).
//!
//! | file | what |
//! |---|---|
//! | `decoder.rs` | the Avro decoder a read gets: each writer schema's program compiled once, every payload run through its writer's into the column's builders, a bad payload taken back out |
//! | `schema.rs` | an Avro schema's JSON parsed: types, names and aliases, fields and defaults |
//! | `prune.rs` | a reader schema cut down to the fields a read asks for |
//! | `resolve.rs` | the specification's schema resolution, writer to reader, compiled into a program |
//! | `default.rs` | a field's default encoded once as the Avro bytes a writer would have written |
//! | `program.rs` | the program's steps and the loop that runs them over a payload's bytes; hostile lengths, counts and depths checked |
//! | `cursor.rs` | one payload's bytes read: varints, lengths checked against the bytes left, decimals widened, and why a payload stopped decoding |
//! | `columns.rs` | the column's builders (values, offsets, validity), kept across batches, sized from the last, handed to Arrow |
//! | `shape.rs` | the column users get from `arrow-avro`'s, and back: Spark's shapes of Avro unions (`member0`, ...; `int`/`long` as `long`); `uuid` read as the `string` or `fixed` it is on |
//! | `arrow.rs` | the reader schema's Arrow type as `arrow-avro` maps it, references written in |
//! | `oracle.rs` | `arrow-avro`'s own decoder, the oracle of the tests, the fuzz target and the benchmark (tests, feature `oracles`) |
//! | `feed.rs` | (the oracle) payloads fed to `arrow-avro`'s streaming decoder uncopied, one record each, grouped by writer schema; schema keys no payload's tail can pass for |
//! | `encode.rs` | typed keys and values written back: Avro with Confluent's framing |
//! | `fuzz.rs` | the fuzz target `avro_value`: hostile payloads through the compiled decoder and the oracle |
//! | `tests.rs` | the decoder against the specification's rules, one rule a test, and against the oracle |
//! | `differential.rs` | the decoder against the oracle on generated schemas, evolutions and payloads |

pub mod arrow;
mod columns;
mod cursor;
pub mod decoder;
mod default;
#[cfg(test)]
mod differential;
pub mod encode;
#[cfg(any(test, feature = "oracles"))]
mod feed;
#[cfg(any(test, feature = "oracles"))]
pub(crate) mod fuzz;
#[cfg(any(test, feature = "oracles"))]
pub mod oracle;
mod program;
mod prune;
mod resolve;
mod schema;
pub mod shape;
#[cfg(test)]
mod tests;
