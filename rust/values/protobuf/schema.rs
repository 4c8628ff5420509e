//! Protobuf schemas as Schema Registry stores them, compiled into descriptors: `.proto` text
//! (compiled in Rust by `protox`, no `protoc`) or a serialized `FileDescriptorProto` in base64
//! (what Confluent's serializers send for a schema built from a descriptor), with the files it
//! imports given as the schema's references (import name -> text, resolved transitively by the
//! caller). Google's well-known types (`google/protobuf/*.proto`) and Confluent's own
//! `confluent/meta.proto` and `confluent/type/decimal.proto` are built in, as the registry has
//! them built in (Confluent's serializers do not register them as references).

use std::collections::HashMap;

use base64::Engine;
use prost::Message;
use prost_reflect::{FileDescriptor, MessageDescriptor};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use crate::error::{Error, Result};
use crate::values::decoder::{SchemaText, SchemaType};

/// The name the registered schema itself is compiled under when it is `.proto` text (the
/// registry stores it without a file name; its references have theirs).
const MAIN_FILE: &str = "kafkalog_registered_schema.proto";

/// Confluent's `confluent/meta.proto` (written here from its published definition): the
/// `Meta` options data contracts put on files, messages, fields, enums and enum values.
const CONFLUENT_META: &str = r#"
syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";

message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}

extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
"#;

/// Confluent's `confluent/type/decimal.proto`: a decimal as its unscaled two's-complement
/// bytes with precision and scale.
const CONFLUENT_DECIMAL: &str = r#"
syntax = "proto3";
package confluent.type;

message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
"#;

/// Confluent's files the registry has built in, for schemas that import them.
struct ConfluentFiles;

impl FileResolver for ConfluentFiles {
    fn open_file(&self, name: &str) -> std::result::Result<File, protox::Error> {
        match name {
            "confluent/meta.proto" => File::from_source(name, CONFLUENT_META),
            "confluent/type/decimal.proto" => File::from_source(name, CONFLUENT_DECIMAL),
            _ => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// A schema file: `.proto` text, or a decoded `FileDescriptorProto`.
enum Source {
    Text(String),
    Descriptor(Box<prost_types::FileDescriptorProto>),
}

/// A serialized `FileDescriptorProto` in base64, if `text` is one; `None` for `.proto` text
/// (which always holds characters base64 does not: spaces, `;`, braces).
fn as_descriptor(text: &str) -> Option<prost_types::FileDescriptorProto> {
    let text = text.trim();
    let base64_only = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if !base64_only {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    prost_types::FileDescriptorProto::decode(bytes.as_slice()).ok()
}

fn source(text: &str) -> Source {
    match as_descriptor(text) {
        Some(descriptor) => Source::Descriptor(Box::new(descriptor)),
        None => Source::Text(text.to_owned()),
    }
}

/// The references, by the name the schema imports them by.
struct References(HashMap<String, Source>);

impl FileResolver for References {
    fn open_file(&self, name: &str) -> std::result::Result<File, protox::Error> {
        match self.0.get(name) {
            Some(Source::Text(text)) => File::from_source(name, text),
            Some(Source::Descriptor(descriptor)) => {
                let mut descriptor = descriptor.as_ref().clone();
                descriptor.name = Some(name.to_owned());
                Ok(File::from_file_descriptor_proto(descriptor))
            }
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// Compiles a registered Protobuf schema with its references; the result is the schema's own
/// file (its imports are in the same pool).
pub fn compile(schema: &SchemaText) -> Result<FileDescriptor> {
    if schema.schema_type != SchemaType::Protobuf {
        return Err(Error::invalid_argument(format!(
            "a {:?} schema given to the Protobuf decoder",
            schema.schema_type
        )));
    }
    let mut files: HashMap<String, Source> = schema
        .references
        .iter()
        .map(|(name, text)| (name.clone(), source(text)))
        .collect();
    let main = match source(&schema.schema) {
        Source::Descriptor(descriptor) => {
            let name = descriptor
                .name
                .clone()
                .filter(|name| !name.is_empty() && !files.contains_key(name))
                .unwrap_or_else(|| MAIN_FILE.to_owned());
            files.insert(name.clone(), Source::Descriptor(descriptor));
            name
        }
        text => {
            files.insert(MAIN_FILE.to_owned(), text);
            MAIN_FILE.to_owned()
        }
    };
    let mut resolver = ChainFileResolver::new();
    resolver.add(References(files));
    resolver.add(GoogleFileResolver::new());
    resolver.add(ConfluentFiles);
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.open_file(&main).map_err(|e| {
        Error::invalid_argument(format!("the Protobuf schema does not compile: {e}"))
    })?;
    compiler
        .descriptor_pool()
        .get_file_by_name(&main)
        .ok_or_else(|| Error::invalid_argument("the compiled Protobuf schema has no file"))
}

/// The message of `file` that Confluent's message indexes name: the first index picks a
/// top-level message in declaration order, each further index a nested message of the one
/// before (as the descriptor lists them, map entries included). `[]` is `[0]`.
pub fn message_at(file: &FileDescriptor, indexes: &[i64]) -> Option<MessageDescriptor> {
    let (first, rest) = indexes.split_first().unwrap_or((&0, &[]));
    let mut message = file.messages().nth(usize::try_from(*first).ok()?)?;
    for &index in rest {
        let child = message.child_messages().nth(usize::try_from(index).ok()?)?;
        message = child;
    }
    Some(message)
}

/// The reader's message: the one named (a full name, `package.Message.Nested`; a leading `.`
/// is allowed), or the first message of the file.
pub fn reader_message(file: &FileDescriptor, name: Option<&str>) -> Result<MessageDescriptor> {
    match name {
        Some(name) => {
            let name = name.strip_prefix('.').unwrap_or(name);
            file.parent_pool().get_message_by_name(name).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "the Protobuf schema has no message {name:?} (messages: {})",
                    file.messages()
                        .map(|m| m.full_name().to_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
        }
        None => file
            .messages()
            .next()
            .ok_or_else(|| Error::invalid_argument("the Protobuf schema declares no message")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(schema: &str, references: &[(&str, &str)]) -> SchemaText {
        SchemaText {
            schema_type: SchemaType::Protobuf,
            schema: schema.to_owned(),
            references: references
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        }
    }

    #[test]
    fn compiles_text_with_references_and_well_known_types() {
        let common = "syntax = \"proto3\"; package common; message Money { int64 units = 1; }";
        let main = "syntax = \"proto3\"; package shop;\n\
            import \"common.proto\"; import \"google/protobuf/timestamp.proto\";\n\
            message Order { common.Money total = 1; google.protobuf.Timestamp at = 2;\n\
              message Line { string sku = 1; } repeated Line lines = 3; map<string, int32> tags = 4; }\n\
            message Other { }";
        let file = compile(&text(main, &[("common.proto", common)])).unwrap();
        assert_eq!(
            reader_message(&file, None).unwrap().full_name(),
            "shop.Order"
        );
        assert_eq!(message_at(&file, &[1]).unwrap().full_name(), "shop.Other");
        assert_eq!(
            message_at(&file, &[0, 0]).unwrap().full_name(),
            "shop.Order.Line"
        );
        // The map's entry is a nested message too, as Confluent counts them.
        assert_eq!(
            message_at(&file, &[0, 1]).unwrap().full_name(),
            "shop.Order.TagsEntry"
        );
        assert!(message_at(&file, &[2]).is_none());
        assert!(message_at(&file, &[-1]).is_none());
        assert!(reader_message(&file, Some("shop.Missing")).is_err());
        assert_eq!(
            reader_message(&file, Some(".shop.Other")).unwrap().name(),
            "Other"
        );
    }

    #[test]
    fn compiles_a_base64_descriptor() {
        let file = compile(&text(
            "syntax = \"proto3\"; package p; message M { string s = 1; }",
            &[],
        ))
        .unwrap();
        let mut proto = file.file_descriptor_proto().clone();
        proto.name = Some("m.proto".into());
        let encoded = base64::engine::general_purpose::STANDARD.encode(proto.encode_to_vec());
        let again = compile(&text(&encoded, &[])).unwrap();
        assert_eq!(again.name(), "m.proto");
        assert_eq!(reader_message(&again, None).unwrap().full_name(), "p.M");
    }

    #[test]
    fn confluents_own_imports_are_built_in() {
        let main = "syntax = \"proto3\"; package p;\n\
            import \"confluent/meta.proto\"; import \"confluent/type/decimal.proto\";\n\
            message M {\n\
              option (confluent.message_meta).doc = \"an M\";\n\
              confluent.type.Decimal amount = 1 [(confluent.field_meta) = { tags: \"PII\", params: [{key: \"precision\", value: \"9\"}] }];\n\
            }";
        let file = compile(&text(main, &[])).unwrap();
        let m = reader_message(&file, None).unwrap();
        assert_eq!(
            m.get_field(1)
                .unwrap()
                .kind()
                .as_message()
                .unwrap()
                .full_name(),
            "confluent.type.Decimal"
        );
    }

    #[test]
    fn refuses_what_does_not_compile() {
        let err = compile(&text(
            "syntax = \"proto3\"; message M { Missing m = 1; }",
            &[],
        ))
        .unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::InvalidArgument);
        assert!(compile(&text("import \"nowhere.proto\";", &[])).is_err());
        assert!(compile(&text("not a schema {", &[])).is_err());
    }
}
