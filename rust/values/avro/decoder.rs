//! The Avro decoder a read uses: each writer schema resolved to the reader schema once, into
//! a program (`resolve.rs`) kept for the decoder's life, and every payload run through
//! its writer's program straight into the reader column's builders (`program.rs`,
//! `columns.rs`), in payload order: writer versions may change from one value to the
//! next at no cost. A payload that does not decode is taken back out of the builders and is
//! a null with its reason; the others decode.
//!
//! The column's type is `arrow-avro`'s type of the reader schema in the user's shapes
//! (`shape.rs`), the type `arrow-avro`'s own decoder gives (`arrow.rs`, kept as the
//! oracle the tests and the fuzz target compare this decoder with).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_schema::DataType;

use crate::error::{Error, ErrorKind, Result};
use crate::values::avro::columns::Columns;
use crate::values::avro::program::{Program, Vm};
use crate::values::avro::resolve::{compile, Reader};
use crate::values::avro::schema::Schema;
use crate::values::decoder::{
    Decoded, Payload, PayloadDecoder, SchemaText, SchemaType, Wanted, WriterSchemas,
};

/// The key of the reader schema used as a writer: payloads without a schema id.
const READER_ID: u64 = u64::MAX;

/// A writer's program, or why it has none.
type Compiled = std::result::Result<Arc<Program>, String>;

/// An Avro decoder whose column is `reader` (its references resolved); writer schemas by id
/// come from `writers`. Payloads without a schema id are taken as written with `reader`.
pub fn decoder(
    reader: &SchemaText,
    writers: Arc<dyn WriterSchemas>,
) -> Result<Arc<dyn PayloadDecoder>> {
    Ok(Arc::new(CompiledDecoder::new(reader, writers)?))
}

/// [`decoder`] whose column has only the record fields `wanted` asks for (at least; see
/// `prune.rs`): the others are skipped in every payload, not built. Payloads without a
/// schema id are still taken as written with the whole `reader`.
pub fn pruned_decoder(
    reader: &SchemaText,
    writers: Arc<dyn WriterSchemas>,
    wanted: &Wanted,
) -> Result<Arc<dyn PayloadDecoder>> {
    let mut decoder = CompiledDecoder::new(
        &crate::values::avro::prune::pruned(reader, wanted)?,
        writers,
    )?;
    decoder.own = Some(parse(reader)?);
    Ok(Arc::new(decoder))
}

/// An Avro decoder for one reader schema.
pub struct CompiledDecoder {
    reader: Arc<Reader>,
    /// The schema payloads without a schema id were written with, when not the reader's
    /// (which [`pruned_decoder`] cut down).
    own: Option<Schema>,
    writers: Arc<dyn WriterSchemas>,
    /// Programs by writer id, compiled once, shared by the builders.
    programs: Mutex<HashMap<u64, Compiled>>,
    /// Builders (one set per decode running at once), kept between batches.
    idle: Mutex<Vec<Builders>>,
}

/// One decode's builders, and the programs it has looked up.
struct Builders {
    columns: Columns,
    programs: Vec<(u64, Compiled)>,
    by_id: HashMap<u64, usize>,
}

fn avro_error(what: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("Avro schema: {what}"))
}

/// `schema`'s JSON with its references written in, parsed.
fn parse(schema: &SchemaText) -> Result<Schema> {
    let json = crate::values::avro::arrow::inlined(schema)?;
    Schema::parse(&json).map_err(avro_error)
}

impl CompiledDecoder {
    /// A decoder whose column is `reader`'s (its references resolved); writer schemas by id
    /// come from `writers`. Payloads without a schema id are taken as written with `reader`.
    pub fn new(reader: &SchemaText, writers: Arc<dyn WriterSchemas>) -> Result<CompiledDecoder> {
        if reader.schema_type != SchemaType::Avro {
            return Err(Error::invalid_argument(format!(
                "the reader schema is {}, not Avro",
                reader.schema_type.name()
            )));
        }
        // The column's type: arrow-avro's mapping of the reader schema (which also checks
        // it), in the user's shapes.
        let native =
            crate::values::avro::arrow::plain(&crate::values::avro::arrow::native_type(reader)?);
        let user = crate::values::avro::shape::Shaper::new(&native)
            .data_type()
            .clone();
        let schema = parse(reader)?;
        let reader = Reader::new(schema, &native, &user)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("Avro decoder: {e}")))?;
        Ok(CompiledDecoder {
            reader: Arc::new(reader),
            own: None,
            writers,
            programs: Mutex::new(HashMap::new()),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// The program of writer schema `id`, compiled on first use.
    fn program(&self, id: u64) -> Compiled {
        let mut programs = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        programs
            .entry(id)
            .or_insert_with(|| self.compile(id))
            .clone()
    }

    fn compile(&self, id: u64) -> Compiled {
        let writer = if id == READER_ID {
            self.own
                .clone()
                .unwrap_or_else(|| self.reader.schema.clone())
        } else {
            let text = match self.writers.writer(id as i64) {
                None => return Err(format!("schema id {id} is not in the registry")),
                Some(w) if w.schema_type != SchemaType::Avro => {
                    return Err(format!(
                        "schema id {id} is {}, not Avro",
                        w.schema_type.name()
                    ))
                }
                Some(w) => w,
            };
            parse(&text).map_err(|e| format!("schema id {id}: {}", e.message))?
        };
        let program = compile(&writer, &self.reader)
            .map_err(|e| format!("schema id {id} does not compile: {e}"))?;
        Ok(Arc::new(program))
    }
}

impl Builders {
    /// The program of writer `id`, looked up in `decoder` the first time.
    fn lookup(&mut self, decoder: &CompiledDecoder, id: u64) -> usize {
        if let Some(&i) = self.by_id.get(&id) {
            return i;
        }
        self.programs.push((id, decoder.program(id)));
        let i = self.programs.len() - 1;
        self.by_id.insert(id, i);
        i
    }
}

impl CompiledDecoder {
    /// Decodes `payloads` into `b`'s columns, a row each, noting why in `errors` where one
    /// does not decode (its row a null).
    fn fill(
        &self,
        b: &mut Builders,
        payloads: &[Option<Payload<'_>>],
        errors: &mut [Option<String>],
        strict: bool,
    ) {
        let layout = &self.reader.layout;
        // The last writers' programs: writers in runs, or a few interleaved, are found here
        // rather than in a map.
        let mut recent: [Option<(u64, usize)>; 4] = [None; 4];
        for (row, payload) in payloads.iter().enumerate() {
            let Some(p) = payload else {
                b.columns.append_null(layout, layout.root);
                continue;
            };
            let id = p.schema_id.map_or(READER_ID, |id| id as u64);
            let at = match recent.iter().flatten().find(|(l, _)| *l == id) {
                Some(&(_, at)) => at,
                None => {
                    let at = b.lookup(self, id);
                    recent.rotate_right(1);
                    recent[0] = Some((id, at));
                    at
                }
            };
            let program = match &b.programs[at].1 {
                Ok(program) => program,
                Err(why) => {
                    errors[row] = Some(why.clone());
                    b.columns.append_null(layout, layout.root);
                    continue;
                }
            };
            let outcome = Vm::new(program, layout, &mut b.columns, strict).value(p.bytes);
            if let Err(bad) = outcome {
                errors[row] = Some(bad.describe(program));
                b.columns.truncate(layout, layout.root, row);
                b.columns.append_null(layout, layout.root);
            }
        }
    }
}

impl PayloadDecoder for CompiledDecoder {
    fn data_type(&self) -> &DataType {
        &self.reader.data_type
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let layout = &self.reader.layout;
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut b = idle.unwrap_or_else(|| Builders {
            columns: Columns::new(layout),
            programs: Vec::new(),
            by_id: HashMap::new(),
        });
        b.columns.reserve(layout, payloads.len());
        let mut errors: Vec<Option<String>> = vec![None; payloads.len()];
        self.fill(&mut b, payloads, &mut errors, false);
        // Strings were not checked one by one: their columns are, at once. If one is not
        // UTF-8 (rare), the batch is decoded again checking each, to know whose it is.
        if !b.columns.utf8_valid(layout) {
            b.columns.truncate(layout, layout.root, 0);
            errors.fill(None);
            self.fill(&mut b, payloads, &mut errors, true);
        }
        let data = b.columns.finish(layout, payloads.len());
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(b);
        Ok(Decoded {
            array: arrow_array::make_array(data),
            errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::avro::program::Op;
    use crate::values::avro::tests::avro;

    /// A writer's fields the reader lacks, several of a kind in a row, are one skip step
    /// per run (the differential tests check what such programs decode).
    #[test]
    fn skips_in_a_row_are_one_step() {
        let writer = r#"{"type": "record", "name": "R", "fields": [
            {"name": "a", "type": "long"}, {"name": "b", "type": "long"},
            {"name": "c", "type": "int"}, {"name": "d", "type": {"type": "enum", "name": "E",
            "symbols": ["X"]}}, {"name": "e", "type": "string"}, {"name": "f", "type": "bytes"},
            {"name": "g", "type": "string"}, {"name": "h", "type": "double"},
            {"name": "i", "type": "boolean"}, {"name": "id", "type": "long"},
            {"name": "j", "type": "string"}]}"#;
        let reader = r#"{"type": "record", "name": "R", "fields": [
            {"name": "id", "type": "long"}]}"#;
        let mut writers: HashMap<i64, Arc<SchemaText>> = HashMap::new();
        writers.insert(1, Arc::new(avro(writer)));
        let decoder = CompiledDecoder::new(&avro(reader), Arc::new(writers)).unwrap();
        let program = decoder.program(1).unwrap();
        let main = &program.subs[program.main as usize];
        let skips: Vec<Op> = main
            .iter()
            .copied()
            .filter(|op| !matches!(op, Op::Struct(_) | Op::Long(_)))
            .collect();
        assert_eq!(
            skips,
            [
                Op::SkipLong(2),
                Op::SkipInt(2),
                Op::SkipLen(3),
                Op::SkipFixed(9),
                Op::SkipLen(1)
            ],
            "{main:?}"
        );
    }
}
