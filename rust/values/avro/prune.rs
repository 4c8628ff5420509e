//! An Avro reader schema cut down to the parts of its column a read asks for ([`Wanted`]):
//! record fields not asked for are taken out of the reader, so that schema resolution skips
//! them in every writer's payloads (as it skips a writer's field the reader does not have)
//! rather than building them. What is asked for reads exactly as with the whole schema.
//!
//! Left whole (everything under them read): a named type used in more than one place (each
//! place may ask for other parts of it), and a union other than `[null, T]` (its column is a
//! struct of branches, `shape.rs`, whose names are not the schema's).

use std::collections::HashMap;

use serde_json::Value as Json;

use crate::error::Result;
use crate::values::decoder::{SchemaText, SchemaType, Wanted};

/// `reader` (references written in) without the record fields `wanted` leaves out.
pub(crate) fn pruned(reader: &SchemaText, wanted: &Wanted) -> Result<SchemaText> {
    let mut root = crate::values::avro::arrow::inlined(reader)?;
    let mut uses = HashMap::new();
    count_uses(&root, &mut uses);
    prune(&mut root, wanted, &uses);
    Ok(SchemaText {
        schema_type: SchemaType::Avro,
        schema: root.to_string(),
        references: Vec::new(),
    })
}

/// The simple name of a full name (`a.b.C` -> `C`): a named type is counted by it, which may
/// count two types of one simple name together (then neither is cut: never wrong).
fn simple(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// How often each named type's simple name occurs: as a definition and as a reference.
fn count_uses(node: &Json, uses: &mut HashMap<String, usize>) {
    match node {
        Json::String(name) => *uses.entry(simple(name).to_owned()).or_default() += 1,
        Json::Array(branches) => branches.iter().for_each(|b| count_uses(b, uses)),
        Json::Object(o) => {
            if let Some(Json::String(name)) = o.get("name") {
                if matches!(
                    o.get("type").and_then(Json::as_str),
                    Some("record" | "enum" | "fixed" | "error")
                ) {
                    *uses.entry(simple(name).to_owned()).or_default() += 1;
                }
            }
            if let Some(t @ (Json::Object(_) | Json::Array(_))) = o.get("type") {
                count_uses(t, uses);
            }
            if let Some(Json::Array(fields)) = o.get("fields") {
                for f in fields {
                    if let Some(t) = f.get("type") {
                        count_uses(t, uses);
                    }
                }
            }
            for key in ["items", "values"] {
                if let Some(t) = o.get(key) {
                    count_uses(t, uses);
                }
            }
        }
        _ => {}
    }
}

fn prune(node: &mut Json, wanted: &Wanted, uses: &HashMap<String, usize>) {
    if *wanted == Wanted::All {
        return;
    }
    match node {
        Json::Array(branches) => {
            // `[null, T]` is a nullable T; any other union is left whole.
            let nulls = branches.iter().filter(|b| *b == "null").count();
            if branches.len() == 2 && nulls == 1 {
                for b in branches.iter_mut().filter(|b| *b != "null") {
                    prune(b, wanted, uses);
                }
            }
        }
        Json::Object(o) => match o.get("type").and_then(Json::as_str) {
            Some("record" | "error") => {
                let name = o.get("name").and_then(Json::as_str).unwrap_or_default();
                if uses.get(simple(name)).copied().unwrap_or(0) > 1 {
                    return;
                }
                if let Some(Json::Array(fields)) = o.get_mut("fields") {
                    fields.retain_mut(|f| {
                        let asked = f
                            .get("name")
                            .and_then(Json::as_str)
                            .and_then(|n| wanted.field(n));
                        match (asked, f.get_mut("type")) {
                            (Some(within), Some(t)) => {
                                prune(t, within, uses);
                                true
                            }
                            (Some(_), None) => true,
                            (None, _) => false,
                        }
                    });
                }
            }
            Some("array") => {
                if let Some(items) = o.get_mut("items") {
                    prune(items, wanted, uses);
                }
            }
            Some("map") => {
                if let Some(values) = o.get_mut("values") {
                    prune(values, wanted, uses);
                }
            }
            // `{"type": {...}}`: the schema inside.
            None => {
                if let Some(t) = o.get_mut("type") {
                    prune(t, wanted, uses);
                }
            }
            _ => {}
        },
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(names: &[&str]) -> Wanted {
        Wanted::Fields(names.iter().map(|n| (n.to_string(), Wanted::All)).collect())
    }

    #[test]
    fn fields_not_asked_for_leave_the_reader() {
        let reader = SchemaText::new(
            SchemaType::Avro,
            r#"{"type": "record", "name": "R", "fields": [
                {"name": "a", "type": "long"},
                {"name": "b", "type": ["null", {"type": "record", "name": "In", "fields": [
                    {"name": "x", "type": "int"}, {"name": "y", "type": "string"}]}]},
                {"name": "c", "type": {"type": "array", "items": "string"}},
                {"name": "d", "type": {"type": "record", "name": "Twice", "fields": [
                    {"name": "p", "type": "int"}, {"name": "q", "type": "int"}]}},
                {"name": "e", "type": "Twice"}
            ]}"#,
        );
        let wanted = Wanted::Fields(vec![
            ("b".into(), fields(&["y"])),
            ("d".into(), fields(&["p"])),
            ("e".into(), Wanted::All),
        ]);
        let out: Json = serde_json::from_str(&pruned(&reader, &wanted).unwrap().schema).unwrap();
        let names = |fields: &Json| -> Vec<String> {
            fields
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names(&out["fields"]), ["b", "d", "e"]);
        assert_eq!(names(&out["fields"][0]["type"][1]["fields"]), ["y"]);
        // Twice is used twice: left whole.
        assert_eq!(names(&out["fields"][1]["type"]["fields"]), ["p", "q"]);
    }

    #[test]
    fn payloads_without_an_id_are_read_as_the_whole_reader_wrote_them() {
        use crate::values::avro::tests::{s as text, zz};
        use crate::values::decoder::Payload;
        use arrow_array::cast::AsArray;
        use arrow_array::types::Int64Type;
        let reader = SchemaText::new(
            SchemaType::Avro,
            r#"{"type": "record", "name": "R", "fields": [
                {"name": "note", "type": "string"}, {"name": "a", "type": "long"}]}"#,
        );
        let writers = crate::values::avro::tests::writers(&[]);
        let d = crate::values::avro::decoder::pruned_decoder(&reader, writers, &fields(&["a"]))
            .unwrap();
        let bytes = [text("skipped"), zz(5)].concat();
        let payload = Payload {
            bytes: &bytes,
            schema_id: None,
            message_indexes: &[],
        };
        let out = d.decode(&[Some(payload)]).unwrap();
        assert_eq!(out.errors, [None]);
        let record = out.array.as_struct();
        assert_eq!(record.num_columns(), 1);
        assert_eq!(record.column(0).as_primitive::<Int64Type>().value(0), 5);
    }
}
