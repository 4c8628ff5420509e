//! Protobuf messages as Arrow: the column type a message descriptor maps to, and decoded
//! messages turned into that column a field at a time (see `docs/values-protobuf-json.md` for
//! the mapping and why).
//!
//! Fields that track presence (proto2 `optional`, proto3 `optional`, message fields, oneof
//! members, wrappers) are null when absent; proto3 scalars without presence read as their
//! default, as the protobuf runtimes (and so Confluent's deserializers) give them.

use std::borrow::Cow;
use std::sync::Arc;

use crate::values::decoder::Wanted;

use arrow_array::builder::{BooleanBufferBuilder, BufferBuilder};
use arrow_array::types::{
    DurationMicrosecondType, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType, UInt32Type, UInt64Type,
};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, ListArray, MapArray, PrimitiveArray, StringArray,
    StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use prost_reflect::{
    DynamicMessage, EnumDescriptor, FieldDescriptor, Kind as ProtoKind, MapKey, MessageDescriptor,
    Value,
};

/// Nesting of message types past which a field is given as JSON text rather than a struct
/// (recursive message types would otherwise have no finite Arrow type).
const MAX_TYPE_DEPTH: usize = 32;

/// What a single (non-repeated) protobuf value becomes.
#[derive(Debug, Clone)]
pub enum Kind {
    Bool,
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
    Str,
    Bytes,
    /// The value's name; a number the enum does not declare, as its decimal text.
    Enum(EnumDescriptor),
    /// `google.protobuf.Timestamp`: microseconds since the epoch, UTC.
    Timestamp,
    /// `google.protobuf.Duration`: microseconds.
    Duration,
    /// `google.protobuf.*Value` wrappers: the wrapped scalar, null when absent.
    Wrapper(Box<Kind>),
    /// `google.protobuf.Struct`/`Value`/`ListValue`/`Any`, and a message type nested in itself:
    /// the message's canonical protobuf JSON, as text.
    Json,
    Message(Arc<MessagePlan>),
}

/// One field of a message: how it is read and what it becomes.
#[derive(Debug, Clone)]
pub struct FieldPlan {
    pub(crate) desc: FieldDescriptor,
    /// Absent is null (rather than the default).
    pub(crate) presence: bool,
    pub(crate) shape: Shape,
}

#[derive(Debug, Clone)]
pub(crate) enum Shape {
    Single(Kind),
    List(Kind),
    Map(Kind, Kind),
}

/// A message type as a struct.
#[derive(Debug)]
pub struct MessagePlan {
    pub(crate) fields: Vec<FieldPlan>,
    pub(crate) arrow: Fields,
    /// Whether any value in it can fail conversion (a Timestamp or Duration out of range, JSON
    /// text), so rows need checking before they are built.
    fallible: bool,
}

impl MessagePlan {
    /// The plan for `message`, and so its Arrow type.
    pub fn new(message: &MessageDescriptor) -> Arc<MessagePlan> {
        plan_message(message, &mut Vec::new())
    }

    /// The struct type this message is.
    pub fn data_type(&self) -> DataType {
        DataType::Struct(self.arrow.clone())
    }

    /// The plan with only the fields `wanted` asks for (nested messages, lists and maps of
    /// them pruned in turn): the program compiled from it skips the others on the wire as
    /// unknown fields. A oneof keeps all its members when one is asked for, as a later member
    /// on the wire clears an earlier one.
    pub fn pruned(self: &Arc<Self>, wanted: &Wanted) -> Arc<MessagePlan> {
        let Wanted::Fields(_) = wanted else {
            return self.clone();
        };
        let oneofs: Vec<String> = self
            .fields
            .iter()
            .filter(|f| wanted.field(f.desc.name()).is_some())
            .filter_map(|f| f.desc.containing_oneof().map(|o| o.name().to_owned()))
            .collect();
        let mut fields = Vec::new();
        let mut arrow = Vec::new();
        for f in &self.fields {
            let asked = wanted.field(f.desc.name());
            let in_oneof = f
                .desc
                .containing_oneof()
                .is_some_and(|o| oneofs.iter().any(|n| n == o.name()));
            if asked.is_none() && !in_oneof {
                continue;
            }
            let within = asked.unwrap_or(&Wanted::All);
            let prune = |kind: &Kind| match kind {
                Kind::Message(plan) => Kind::Message(plan.pruned(within)),
                other => other.clone(),
            };
            let shape = match &f.shape {
                Shape::Single(k) => Shape::Single(prune(k)),
                Shape::List(k) => Shape::List(prune(k)),
                Shape::Map(k, v) => Shape::Map(k.clone(), prune(v)),
            };
            arrow.push(Field::new(f.desc.name(), shape_type(&shape), true));
            fields.push(FieldPlan {
                desc: f.desc.clone(),
                presence: f.presence,
                shape,
            });
        }
        MessagePlan::of(fields, arrow)
    }

    fn of(fields: Vec<FieldPlan>, arrow: Vec<Field>) -> Arc<MessagePlan> {
        let fallible = fields.iter().any(|f| match &f.shape {
            Shape::Single(k) | Shape::List(k) | Shape::Map(_, k) => kind_fallible(k),
        });
        Arc::new(MessagePlan {
            fields,
            arrow: arrow.into(),
            fallible,
        })
    }
}

fn well_known(name: &str) -> Option<Kind> {
    Some(match name {
        "google.protobuf.Timestamp" => Kind::Timestamp,
        "google.protobuf.Duration" => Kind::Duration,
        "google.protobuf.DoubleValue" => Kind::Wrapper(Box::new(Kind::F64)),
        "google.protobuf.FloatValue" => Kind::Wrapper(Box::new(Kind::F32)),
        "google.protobuf.Int64Value" => Kind::Wrapper(Box::new(Kind::I64)),
        "google.protobuf.UInt64Value" => Kind::Wrapper(Box::new(Kind::U64)),
        "google.protobuf.Int32Value" => Kind::Wrapper(Box::new(Kind::I32)),
        "google.protobuf.UInt32Value" => Kind::Wrapper(Box::new(Kind::U32)),
        "google.protobuf.BoolValue" => Kind::Wrapper(Box::new(Kind::Bool)),
        "google.protobuf.StringValue" => Kind::Wrapper(Box::new(Kind::Str)),
        "google.protobuf.BytesValue" => Kind::Wrapper(Box::new(Kind::Bytes)),
        "google.protobuf.Struct"
        | "google.protobuf.Value"
        | "google.protobuf.ListValue"
        | "google.protobuf.Any" => Kind::Json,
        _ => return None,
    })
}

fn plan_kind(kind: ProtoKind, stack: &mut Vec<String>) -> Kind {
    match kind {
        ProtoKind::Double => Kind::F64,
        ProtoKind::Float => Kind::F32,
        ProtoKind::Int32 | ProtoKind::Sint32 | ProtoKind::Sfixed32 => Kind::I32,
        ProtoKind::Int64 | ProtoKind::Sint64 | ProtoKind::Sfixed64 => Kind::I64,
        ProtoKind::Uint32 | ProtoKind::Fixed32 => Kind::U32,
        ProtoKind::Uint64 | ProtoKind::Fixed64 => Kind::U64,
        ProtoKind::Bool => Kind::Bool,
        ProtoKind::String => Kind::Str,
        ProtoKind::Bytes => Kind::Bytes,
        ProtoKind::Enum(e) => Kind::Enum(e),
        ProtoKind::Message(m) => {
            if let Some(kind) = well_known(m.full_name()) {
                kind
            } else if stack.len() >= MAX_TYPE_DEPTH || stack.iter().any(|s| s == m.full_name()) {
                Kind::Json
            } else {
                Kind::Message(plan_message(&m, stack))
            }
        }
    }
}

fn plan_message(message: &MessageDescriptor, stack: &mut Vec<String>) -> Arc<MessagePlan> {
    stack.push(message.full_name().to_owned());
    let mut fields = Vec::new();
    let mut arrow = Vec::new();
    for desc in message.fields() {
        let shape = if desc.is_map() {
            let entry = desc.kind();
            let entry = entry
                .as_message()
                .expect("a map field's entry is a message");
            Shape::Map(
                plan_kind(entry.map_entry_key_field().kind(), stack),
                plan_kind(entry.map_entry_value_field().kind(), stack),
            )
        } else if desc.is_list() {
            Shape::List(plan_kind(desc.kind(), stack))
        } else {
            Shape::Single(plan_kind(desc.kind(), stack))
        };
        arrow.push(Field::new(desc.name(), shape_type(&shape), true));
        fields.push(FieldPlan {
            presence: desc.supports_presence(),
            desc,
            shape,
        });
    }
    stack.pop();
    MessagePlan::of(fields, arrow)
}

fn kind_fallible(kind: &Kind) -> bool {
    match kind {
        Kind::Timestamp | Kind::Duration | Kind::Json => true,
        Kind::Message(plan) => plan.fallible,
        _ => false,
    }
}

pub(crate) fn kind_type(kind: &Kind) -> DataType {
    match kind {
        Kind::Bool => DataType::Boolean,
        Kind::I32 => DataType::Int32,
        Kind::I64 => DataType::Int64,
        Kind::U32 => DataType::UInt32,
        Kind::U64 => DataType::UInt64,
        Kind::F32 => DataType::Float32,
        Kind::F64 => DataType::Float64,
        Kind::Str | Kind::Enum(_) | Kind::Json => DataType::Utf8,
        Kind::Bytes => DataType::Binary,
        Kind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Kind::Duration => DataType::Duration(TimeUnit::Microsecond),
        Kind::Wrapper(inner) => kind_type(inner),
        Kind::Message(plan) => plan.data_type(),
    }
}

pub(crate) fn list_field(kind: &Kind) -> Arc<Field> {
    Arc::new(Field::new("item", kind_type(kind), true))
}

pub(crate) fn map_field(key: &Kind, value: &Kind) -> Arc<Field> {
    let entries = Fields::from(vec![
        Field::new("key", kind_type(key), false),
        Field::new("value", kind_type(value), true),
    ]);
    Arc::new(Field::new("entries", DataType::Struct(entries), false))
}

fn shape_type(shape: &Shape) -> DataType {
    match shape {
        Shape::Single(kind) => kind_type(kind),
        Shape::List(kind) => DataType::List(list_field(kind)),
        Shape::Map(key, value) => DataType::Map(map_field(key, value), false),
    }
}

/// Whether `value` is a number a closed (proto2) enum does not declare: the runtimes keep it
/// among the unknown fields, so the field reads as absent (prost-reflect keeps the number).
fn unknown_closed_enum(kind: &Kind, value: &Value) -> bool {
    match (kind, value) {
        (Kind::Enum(desc), Value::EnumNumber(n)) => {
            desc.parent_file().syntax() == prost_reflect::Syntax::Proto2
                && desc.get_value(*n).is_none()
        }
        _ => false,
    }
}

/// A field's value as the runtimes give it: `None` when it tracks presence and is absent.
fn field_value<'a>(message: &'a DynamicMessage, field: &FieldPlan) -> Option<Cow<'a, Value>> {
    if field.presence && !message.has_field(&field.desc) {
        None
    } else {
        Some(message.get_field(&field.desc))
    }
}

fn sub_field(message: &DynamicMessage, number: u32) -> Option<Cow<'_, Value>> {
    message.get_field_by_number(number)
}

/// Seconds and nanos of a Timestamp or Duration message, as microseconds; `None` on overflow.
fn micros(value: &Value) -> Option<i64> {
    let message = value.as_message()?;
    let seconds = sub_field(message, 1)?.as_i64()?;
    let nanos = sub_field(message, 2)?.as_i32()?;
    seconds
        .checked_mul(1_000_000)?
        .checked_add(i64::from(nanos) / 1000)
}

fn json(value: &Value) -> Result<String, String> {
    match value {
        Value::Message(message) => serde_json::to_string(message).map_err(|e| e.to_string()),
        _ => Err("not a message".into()),
    }
}

/// The oracle of the decoder (`program.rs`): `bytes` decoded as `message` by
/// `prost-reflect` into a dynamic message, checked for what can fail in converting it to its
/// row; [`build_struct`] makes the column of such values. Used by the differential tests and
/// the fuzz target, not by reads.
pub fn oracle(
    plan: &MessagePlan,
    message: &MessageDescriptor,
    bytes: &[u8],
) -> Result<Value, String> {
    let decoded = DynamicMessage::decode(message.clone(), bytes)
        .map_err(|e| format!("not a valid {}: {e}", message.full_name()))?;
    check(plan, &decoded)?;
    Ok(Value::Message(decoded))
}

/// Checks what can fail in converting `message` to its row, before any row is built.
pub fn check(plan: &MessagePlan, message: &DynamicMessage) -> Result<(), String> {
    if !plan.fallible {
        return Ok(());
    }
    for field in &plan.fields {
        let Some(value) = field_value(message, field) else {
            continue;
        };
        match (&field.shape, value.as_ref()) {
            (Shape::Single(kind), v) => check_value(kind, v, &field.desc)?,
            (Shape::List(kind), Value::List(items)) => {
                for v in items {
                    check_value(kind, v, &field.desc)?;
                }
            }
            (Shape::Map(_, kind), Value::Map(entries)) => {
                for v in entries.values() {
                    check_value(kind, v, &field.desc)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_value(kind: &Kind, value: &Value, field: &FieldDescriptor) -> Result<(), String> {
    match kind {
        Kind::Timestamp | Kind::Duration => micros(value)
            .map(|_| ())
            .ok_or_else(|| format!("field {}: out of range for microseconds", field.full_name())),
        Kind::Json => json(value)
            .map(|_| ())
            .map_err(|e| format!("field {}: {e}", field.full_name())),
        Kind::Message(plan) => match value.as_message() {
            Some(m) => check(plan, m),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// What building a column gives: the array, or why it cannot be one (its offsets overflow).
pub type Built = Result<ArrayRef, String>;

/// The column for `values` of `plan`'s message type (`None`: a null row).
pub fn build_struct(plan: &MessagePlan, values: &[Option<&Value>]) -> Built {
    let nulls = NullBuffer::from_iter(
        values
            .iter()
            .map(|v| v.and_then(Value::as_message).is_some()),
    );
    let columns = plan
        .fields
        .iter()
        .map(|field| {
            let children: Vec<Option<Cow<'_, Value>>> = values
                .iter()
                .map(|v| {
                    v.and_then(Value::as_message)
                        .and_then(|m| field_value(m, field))
                })
                .collect();
            let children: Vec<Option<&Value>> = children.iter().map(|c| c.as_deref()).collect();
            build_shape(&field.shape, &children)
        })
        .collect::<Result<Vec<ArrayRef>, String>>()?;
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    if plan.arrow.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(values.len(), nulls)));
    }
    Ok(Arc::new(StructArray::new(
        plan.arrow.clone(),
        columns,
        nulls,
    )))
}

fn build_shape(shape: &Shape, values: &[Option<&Value>]) -> Built {
    match shape {
        Shape::Single(kind @ Kind::Enum(_)) => {
            let known: Vec<Option<&Value>> = values
                .iter()
                .map(|v| v.filter(|v| !unknown_closed_enum(kind, v)))
                .collect();
            build_kind(kind, &known)
        }
        Shape::Single(kind) => build_kind(kind, values),
        Shape::List(kind) => {
            let mut offsets = BufferBuilder::<i32>::new(values.len() + 1);
            let mut valid = BooleanBufferBuilder::new(values.len());
            let mut items = Vec::new();
            offsets.append(0);
            for v in values {
                if let Some(Value::List(list)) = v {
                    items.extend(
                        list.iter()
                            .filter(|item| !unknown_closed_enum(kind, item))
                            .map(Some),
                    );
                    valid.append(true);
                } else {
                    valid.append(false);
                }
                offsets.append(offset(items.len())?);
            }
            let child = build_kind(kind, &items)?;
            let offsets = OffsetBuffer::new(offsets.finish().into());
            let nulls = NullBuffer::new(valid.finish());
            let nulls = (nulls.null_count() > 0).then_some(nulls);
            Ok(Arc::new(ListArray::new(
                list_field(kind),
                offsets,
                child,
                nulls,
            )))
        }
        Shape::Map(key, value) => {
            let mut offsets = BufferBuilder::<i32>::new(values.len() + 1);
            let mut valid = BooleanBufferBuilder::new(values.len());
            let mut keys = Vec::new();
            let mut items = Vec::new();
            offsets.append(0);
            for v in values {
                if let Some(Value::Map(map)) = v {
                    // Sorted by key: the wire order is not kept, and a stable order is.
                    let mut entries: Vec<(&MapKey, &Value)> = map.iter().collect();
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                    for (k, v) in entries {
                        if unknown_closed_enum(value, v) {
                            continue;
                        }
                        keys.push(k);
                        items.push(Some(v));
                    }
                    valid.append(true);
                } else {
                    valid.append(false);
                }
                offsets.append(offset(keys.len())?);
            }
            let key_values: Vec<Value> = keys.iter().map(|k| Value::from((*k).clone())).collect();
            let key_refs: Vec<Option<&Value>> = key_values.iter().map(Some).collect();
            let field = map_field(key, value);
            let DataType::Struct(entry_fields) = field.data_type().clone() else {
                unreachable!("map entries are a struct")
            };
            let entries = StructArray::new(
                entry_fields,
                vec![build_kind(key, &key_refs)?, build_kind(value, &items)?],
                None,
            );
            let offsets = OffsetBuffer::new(offsets.finish().into());
            let nulls = NullBuffer::new(valid.finish());
            let nulls = (nulls.null_count() > 0).then_some(nulls);
            Ok(Arc::new(MapArray::new(
                field, offsets, entries, nulls, false,
            )))
        }
    }
}

const OVERFLOW: &str = "the batch's values overflow an Arrow column's 32-bit offsets";

fn offset(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| OVERFLOW.to_owned())
}

/// A string or binary column, its total length checked against 32-bit offsets first.
fn variable<T, A>(values: Vec<Option<T>>) -> Built
where
    T: AsRef<[u8]>,
    A: FromIterator<Option<T>> + arrow_array::Array + 'static,
{
    let total: usize = values.iter().flatten().map(|v| v.as_ref().len()).sum();
    offset(total)?;
    Ok(Arc::new(values.into_iter().collect::<A>()))
}

fn primitive<T: arrow_array::ArrowPrimitiveType>(
    values: &[Option<&Value>],
    get: impl Fn(&Value) -> Option<T::Native>,
) -> PrimitiveArray<T> {
    values.iter().map(|v| v.and_then(&get)).collect()
}

fn build_kind(kind: &Kind, values: &[Option<&Value>]) -> Built {
    Ok(match kind {
        Kind::Bool => Arc::new(
            values
                .iter()
                .map(|v| v.and_then(Value::as_bool))
                .collect::<BooleanArray>(),
        ),
        Kind::I32 => Arc::new(primitive::<Int32Type>(values, Value::as_i32)),
        Kind::I64 => Arc::new(primitive::<Int64Type>(values, Value::as_i64)),
        Kind::U32 => Arc::new(primitive::<UInt32Type>(values, Value::as_u32)),
        Kind::U64 => Arc::new(primitive::<UInt64Type>(values, Value::as_u64)),
        Kind::F32 => Arc::new(primitive::<Float32Type>(values, Value::as_f32)),
        Kind::F64 => Arc::new(primitive::<Float64Type>(values, Value::as_f64)),
        Kind::Str => variable::<&str, StringArray>(
            values.iter().map(|v| v.and_then(Value::as_str)).collect(),
        )?,
        Kind::Bytes => variable::<&[u8], BinaryArray>(
            values
                .iter()
                .map(|v| v.and_then(Value::as_bytes).map(|b| b.as_ref()))
                .collect(),
        )?,
        Kind::Enum(desc) => variable::<String, StringArray>(
            values
                .iter()
                .map(|v| {
                    v.and_then(Value::as_enum_number)
                        .map(|n| match desc.get_value(n) {
                            Some(value) => value.name().to_owned(),
                            None => n.to_string(),
                        })
                })
                .collect(),
        )?,
        Kind::Timestamp => {
            Arc::new(primitive::<TimestampMicrosecondType>(values, micros).with_timezone("UTC"))
        }
        Kind::Duration => Arc::new(primitive::<DurationMicrosecondType>(values, micros)),
        Kind::Wrapper(inner) => {
            let wrapped: Vec<Option<Cow<'_, Value>>> = values
                .iter()
                .map(|v| v.and_then(Value::as_message).and_then(|m| sub_field(m, 1)))
                .collect();
            let wrapped: Vec<Option<&Value>> = wrapped.iter().map(|c| c.as_deref()).collect();
            build_kind(inner, &wrapped)?
        }
        Kind::Json => variable::<String, StringArray>(
            values
                .iter()
                .map(|v| v.and_then(|v| json(v).ok()))
                .collect(),
        )?,
        Kind::Message(plan) => build_struct(plan, values)?,
    })
}
