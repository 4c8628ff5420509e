//! The column users get from the column `arrow-avro` decodes: the shapes of Spark's own Avro
//! support (`from_avro`, its `SchemaConverters`), so that every Avro schema has a type in
//! Arrow, Parquet and Spark alike; and back, for writing.
//!
//! - A union other than `[null, T]` (which `arrow-avro` already gives as a nullable `T`) is a
//!   dense Arrow union there, which neither Parquet nor Spark has. Here, as in Spark: its
//!   `null` branch makes it nullable; one other branch is that branch's type; `int` and `long`
//!   are a `long`, `float` and `double` a `double`; any other union is a struct with one
//!   nullable field per non-null branch, `member0`, `member1`, ... in the union's order, the
//!   branch a value was written with set and the others null.
//! - A `uuid` is read as the type it is on, as Spark reads it: a `string` (its text as
//!   written), a `fixed(16)` (Avro 1.12: its 16 bytes). `arrow-avro` would parse a `uuid`
//!   string into 16 bytes (and fail on text that is not a uuid, which Avro's own readers
//!   take), and its encoder (59.3) would write a `uuid` fixed as text: the schemas it is
//!   given have the `uuid` logical type taken off ([`without_uuids`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    new_empty_array, Array, ArrayRef, ListArray, MapArray, NullArray, StructArray, UInt32Array,
    UnionArray,
};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields};

use crate::error::{Error, ErrorKind, Result};
use crate::values::decoder::{Decoded, Payload, PayloadDecoder};

/// How a column of `arrow-avro`'s becomes the user's.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    /// The same, and everything under it.
    Keep,
    /// A record whose fields change.
    Struct(Vec<Shape>),
    /// An array whose items change.
    List(Box<Shape>),
    /// A map whose values change.
    Map(Box<Shape>),
    /// A union (other than `[null, T]`).
    Union(UnionShape),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UnionShape {
    /// The non-null branches: type id and shape, in the union's order.
    branches: Vec<(i8, Shape)>,
    /// The `null` branch's type id.
    null: Option<i8>,
    kind: UnionKind,
}

impl UnionShape {
    /// The type ids of the branches other than `null`, in the union's order.
    pub(crate) fn branch_ids(&self) -> impl Iterator<Item = i8> + '_ {
        self.branches.iter().map(|(id, _)| *id)
    }

    pub(crate) fn kind(&self) -> UnionKind {
        self.kind
    }
}

/// The shape of a union's column (`arrow-avro`'s dense union of type `t`) as users get it;
/// None if `t` is not a union. What the compiled decoder (`resolve.rs`) builds into.
pub(crate) fn union_shape(t: &DataType) -> Option<UnionShape> {
    match shape_of(t) {
        Shape::Union(u) => Some(u),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum UnionKind {
    /// Only `null`: a null column.
    Null,
    /// One non-null branch: its type.
    One,
    /// `int` and `long`: a `long`.
    Long,
    /// `float` and `double`: a `double`.
    Double,
    /// Any other: a struct of `member0`, `member1`, ...
    Members,
}

/// The Avro type a union branch of this Arrow type was (by its encoding, as Spark's rule
/// reads the branches' types, their logical types aside).
#[derive(PartialEq)]
enum Base {
    Int,
    Long,
    Float,
    Double,
    Other,
}

fn base(t: &DataType) -> Base {
    match t {
        DataType::Int32 | DataType::Date32 | DataType::Time32(_) => Base::Int,
        DataType::Int64 | DataType::Timestamp(..) | DataType::Time64(_) => Base::Long,
        DataType::Float32 => Base::Float,
        DataType::Float64 => Base::Double,
        _ => Base::Other,
    }
}

fn shape_of(t: &DataType) -> Shape {
    match t {
        DataType::Struct(fields) => {
            let shapes: Vec<Shape> = fields.iter().map(field_shape).collect();
            if shapes.iter().all(|s| *s == Shape::Keep) {
                Shape::Keep
            } else {
                Shape::Struct(shapes)
            }
        }
        DataType::List(f) => match field_shape(f) {
            Shape::Keep => Shape::Keep,
            s => Shape::List(Box::new(s)),
        },
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => match field_shape(&kv[1]) {
                Shape::Keep => Shape::Keep,
                s => Shape::Map(Box::new(s)),
            },
            _ => Shape::Keep,
        },
        DataType::Union(fields, _) => {
            let mut branches = Vec::new();
            let mut null = None;
            let mut bases = Vec::new();
            for (id, f) in fields.iter() {
                if f.data_type() == &DataType::Null {
                    null = Some(id);
                } else {
                    bases.push(base(f.data_type()));
                    branches.push((id, field_shape(f)));
                }
            }
            let pair = |a: Base, b: Base| {
                bases.len() == 2
                    && ((bases[0] == a && bases[1] == b) || (bases[0] == b && bases[1] == a))
            };
            let kind = match branches.len() {
                0 => UnionKind::Null,
                1 => UnionKind::One,
                _ if pair(Base::Int, Base::Long) => UnionKind::Long,
                _ if pair(Base::Float, Base::Double) => UnionKind::Double,
                _ => UnionKind::Members,
            };
            Shape::Union(UnionShape {
                branches,
                null,
                kind,
            })
        }
        _ => Shape::Keep,
    }
}

fn field_shape(f: &FieldRef) -> Shape {
    shape_of(f.data_type())
}

fn internal(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Internal, format!("Avro column shape: {what}"))
}

fn nullable(name: &str, t: DataType) -> FieldRef {
    Arc::new(Field::new(name, t, true))
}

/// The user's type of a column whose `arrow-avro` type (without metadata) is `t`.
fn user_type(shape: &Shape, t: &DataType) -> DataType {
    match (shape, t) {
        (Shape::Keep, _) => t.clone(),
        (Shape::Struct(shapes), DataType::Struct(fields)) => DataType::Struct(
            fields
                .iter()
                .zip(shapes)
                .map(|(f, s)| with_type(f, user_type(s, f.data_type())))
                .collect(),
        ),
        (Shape::List(s), DataType::List(f)) => {
            DataType::List(with_type(f, user_type(s, f.data_type())))
        }
        (Shape::Map(s), DataType::Map(entries, sorted)) => {
            DataType::Map(map_entries(entries, |v| user_type(s, v)), *sorted)
        }
        (Shape::Union(u), DataType::Union(fields, _)) => {
            let child = |id: i8| {
                fields
                    .iter()
                    .find(|(i, _)| *i == id)
                    .map_or(DataType::Null, |(_, f)| f.data_type().clone())
            };
            match u.kind {
                UnionKind::Null => DataType::Null,
                UnionKind::One => user_type(&u.branches[0].1, &child(u.branches[0].0)),
                UnionKind::Long => DataType::Int64,
                UnionKind::Double => DataType::Float64,
                UnionKind::Members => DataType::Struct(
                    u.branches
                        .iter()
                        .enumerate()
                        .map(|(k, (id, s))| {
                            nullable(&format!("member{k}"), user_type(s, &child(*id)))
                        })
                        .collect(),
                ),
            }
        }
        _ => t.clone(),
    }
}

fn with_type(f: &FieldRef, t: DataType) -> FieldRef {
    Arc::new(f.as_ref().clone().with_data_type(t))
}

/// A map's entries field with its value's type changed by `value`.
fn map_entries(entries: &FieldRef, value: impl Fn(&DataType) -> DataType) -> FieldRef {
    let DataType::Struct(kv) = entries.data_type() else {
        return entries.clone();
    };
    let kv: Fields = kv
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if i == 1 {
                with_type(f, value(f.data_type()))
            } else {
                f.clone()
            }
        })
        .collect();
    with_type(entries, DataType::Struct(kv))
}

/// The user's column of one reader schema, and back.
#[derive(Debug)]
pub struct Shaper {
    shape: Shape,
    /// `arrow-avro`'s type, without metadata, every field nullable (the decoder's).
    native: DataType,
    user: DataType,
}

impl Shaper {
    /// The shapes of columns of `plain`: `arrow-avro`'s type of the reader schema without
    /// metadata, as the decoder gives it.
    pub fn new(plain: &DataType) -> Shaper {
        let shape = shape_of(plain);
        let user = user_type(&shape, plain);
        Shaper {
            shape,
            native: plain.clone(),
            user,
        }
    }

    /// Whether columns stay as `arrow-avro` gives them.
    pub fn is_identity(&self) -> bool {
        self.shape == Shape::Keep
    }

    /// The user's type.
    pub fn data_type(&self) -> &DataType {
        &self.user
    }

    /// `arrow-avro`'s type (without metadata).
    pub fn native_type(&self) -> &DataType {
        &self.native
    }

    /// A decoded column (of the native type) as the user gets it.
    pub fn to_user(&self, array: &ArrayRef) -> Result<ArrayRef> {
        to_user(&self.shape, array)
    }

    /// A user's column (of [`Shaper::data_type`]) as `arrow-avro` encodes it (the native type,
    /// without metadata). A column that does not fit (two members of a union set) is an
    /// error saying why.
    pub fn to_native(&self, array: &ArrayRef) -> Result<ArrayRef> {
        to_native(&self.shape, array, &self.native)
    }
}

fn to_user(shape: &Shape, array: &ArrayRef) -> Result<ArrayRef> {
    match shape {
        Shape::Keep => Ok(array.clone()),
        Shape::Struct(shapes) => {
            let s = array
                .as_struct_opt()
                .ok_or_else(|| internal("a record that is not a struct"))?;
            let columns = s
                .columns()
                .iter()
                .zip(shapes)
                .map(|(c, sh)| to_user(sh, c))
                .collect::<Result<Vec<_>>>()?;
            struct_of(s.fields(), columns, s.nulls().cloned())
        }
        Shape::List(s) => {
            let l = array
                .as_list_opt::<i32>()
                .ok_or_else(|| internal("an array that is not a list"))?;
            let (field, offsets, values, nulls) = l.clone().into_parts();
            let values = to_user(s, &values)?;
            let field = with_type(&field, values.data_type().clone());
            let out = ListArray::try_new(field, offsets, values, nulls).map_err(internal)?;
            Ok(Arc::new(out))
        }
        Shape::Map(s) => {
            let m = array
                .as_map_opt()
                .ok_or_else(|| internal("a map that is not a map"))?;
            let (field, offsets, entries, nulls, sorted) = m.clone().into_parts();
            let mut kv = entries.columns().to_vec();
            kv[1] = to_user(s, &kv[1])?;
            let entries = struct_of(entries.fields(), kv, entries.nulls().cloned())?;
            let field = with_type(&field, entries.data_type().clone());
            let out = MapArray::try_new(field, offsets, entries.as_struct().clone(), nulls, sorted)
                .map_err(internal)?;
            Ok(Arc::new(out))
        }
        Shape::Union(u) => union_to_user(u, array),
    }
}

/// A struct of `columns` (their types possibly changed) with the names of `fields`.
fn struct_of(
    fields: &Fields,
    columns: Vec<ArrayRef>,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    let fields: Fields = fields
        .iter()
        .zip(&columns)
        .map(|(f, c)| with_type(f, c.data_type().clone()))
        .collect();
    Ok(Arc::new(
        StructArray::try_new(fields, columns, nulls).map_err(internal)?,
    ))
}

/// For each row of `u`: the selected branch's type id and the offset in its child.
fn selected(u: &UnionArray) -> impl Iterator<Item = (i8, usize)> + '_ {
    (0..u.len()).map(|i| (u.type_id(i), u.value_offset(i)))
}

fn union_to_user(shape: &UnionShape, array: &ArrayRef) -> Result<ArrayRef> {
    let u = array
        .as_union_opt()
        .ok_or_else(|| internal("a union that is not a union"))?;
    let n = u.len();
    let child = |id: i8, s: &Shape| to_user(s, u.child(id));
    match shape.kind {
        UnionKind::Null => Ok(Arc::new(NullArray::new(n))),
        UnionKind::Members | UnionKind::One => {
            let mut columns = Vec::with_capacity(shape.branches.len());
            let mut valid = BooleanBufferBuilder::new(n);
            valid.append_n(n, false);
            for (id, s) in &shape.branches {
                let values = child(*id, s)?;
                let indices: UInt32Array = selected(u)
                    .enumerate()
                    .map(|(row, (t, at))| {
                        (t == *id && values.is_valid(at)).then(|| {
                            valid.set_bit(row, true);
                            at as u32
                        })
                    })
                    .collect();
                columns.push(
                    arrow_select::take::take(values.as_ref(), &indices, None).map_err(internal)?,
                );
            }
            if shape.kind == UnionKind::One {
                return Ok(columns.pop().unwrap_or_else(|| Arc::new(NullArray::new(n))));
            }
            let fields: Fields = columns
                .iter()
                .enumerate()
                .map(|(k, c)| nullable(&format!("member{k}"), c.data_type().clone()))
                .collect();
            let out = StructArray::try_new(fields, columns, Some(NullBuffer::new(valid.finish())))
                .map_err(internal)?;
            Ok(Arc::new(out))
        }
        UnionKind::Long => {
            let mut values: HashMap<i8, ArrayRef> = HashMap::new();
            for (id, _) in &shape.branches {
                values.insert(*id, as_i64(u.child(*id))?);
            }
            let mut out = Int64Builder::with_capacity(n);
            for (t, at) in selected(u) {
                match values.get(&t).map(|a| a.as_primitive::<Int64Type>()) {
                    Some(a) if a.is_valid(at) => out.append_value(a.value(at)),
                    _ => out.append_null(),
                }
            }
            Ok(Arc::new(out.finish()))
        }
        UnionKind::Double => {
            let mut values: HashMap<i8, ArrayRef> = HashMap::new();
            for (id, _) in &shape.branches {
                let c = arrow_cast::cast(u.child(*id), &DataType::Float64).map_err(internal)?;
                values.insert(*id, c);
            }
            let mut out = Float64Builder::with_capacity(n);
            for (t, at) in selected(u) {
                match values.get(&t).map(|a| a.as_primitive::<Float64Type>()) {
                    Some(a) if a.is_valid(at) => out.append_value(a.value(at)),
                    _ => out.append_null(),
                }
            }
            Ok(Arc::new(out.finish()))
        }
    }
}

/// An `int` or `long` branch (a logical type on it too: its number as encoded) as int64.
fn as_i64(array: &ArrayRef) -> Result<ArrayRef> {
    let cast = |a: &ArrayRef, t: &DataType| arrow_cast::cast(a, t).map_err(internal);
    match array.data_type() {
        DataType::Date32 | DataType::Time32(_) => {
            cast(&cast(array, &DataType::Int32)?, &DataType::Int64)
        }
        _ => cast(array, &DataType::Int64),
    }
}

fn to_native(shape: &Shape, array: &ArrayRef, native: &DataType) -> Result<ArrayRef> {
    let bad = |what: &str| {
        Error::invalid_argument(format!(
            "the column is {}, not the type a read gives for the Avro schema ({what})",
            array.data_type()
        ))
    };
    match (shape, native) {
        (Shape::Keep, _) => Ok(array.clone()),
        (Shape::Struct(shapes), DataType::Struct(fields)) => {
            let s = array
                .as_struct_opt()
                .ok_or_else(|| bad("a record is a struct"))?;
            if s.num_columns() != fields.len() {
                return Err(bad("a record's fields"));
            }
            let columns = s
                .columns()
                .iter()
                .zip(shapes)
                .zip(fields.iter())
                .map(|((c, sh), f)| to_native(sh, c, f.data_type()))
                .collect::<Result<Vec<_>>>()?;
            struct_of(s.fields(), columns, s.nulls().cloned())
        }
        (Shape::List(sh), DataType::List(f)) => {
            let l = array
                .as_list_opt::<i32>()
                .ok_or_else(|| bad("an array is a list"))?;
            let (field, offsets, values, nulls) = l.clone().into_parts();
            let values = to_native(sh, &values, f.data_type())?;
            let field = with_type(&field, values.data_type().clone());
            Ok(Arc::new(
                ListArray::try_new(field, offsets, values, nulls).map_err(internal)?,
            ))
        }
        (Shape::Map(sh), DataType::Map(entries_field, _)) => {
            let m = array.as_map_opt().ok_or_else(|| bad("a map is a map"))?;
            let DataType::Struct(kv_fields) = entries_field.data_type() else {
                return Err(internal("a map without entries"));
            };
            let (field, offsets, entries, nulls, sorted) = m.clone().into_parts();
            let mut kv = entries.columns().to_vec();
            kv[1] = to_native(sh, &kv[1], kv_fields[1].data_type())?;
            let entries = struct_of(entries.fields(), kv, entries.nulls().cloned())?;
            let field = with_type(&field, entries.data_type().clone());
            Ok(Arc::new(
                MapArray::try_new(field, offsets, entries.as_struct().clone(), nulls, sorted)
                    .map_err(internal)?,
            ))
        }
        (Shape::Union(u), DataType::Union(fields, _)) => union_to_native(u, array, fields),
        _ => Err(internal(format!("shape {shape:?} of {native}"))),
    }
}

/// A user's column of a union as a dense union of `fields`: each row's value in the branch
/// it was read from (`int`/`long` values in the `long` branch, `float`/`double` in the
/// `double` one), a null in the `null` branch.
fn union_to_native(shape: &UnionShape, array: &ArrayRef, fields: &UnionFields) -> Result<ArrayRef> {
    let n = array.len();
    let field_type = |id: i8| {
        fields
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, f)| f.data_type().clone())
            .ok_or_else(|| internal(format!("no union branch {id}")))
    };
    let no_null = |row: usize| {
        Error::invalid_argument(format!(
            "row {row}: a null where the Avro union has no null branch"
        ))
    };
    // Per row: the branch (type id) and the column of the user's it is taken from.
    let mut type_ids = Vec::with_capacity(n);
    let mut children: HashMap<i8, ArrayRef> = HashMap::new();
    match shape.kind {
        UnionKind::Null => type_ids.resize(n, shape.null.ok_or_else(|| no_null(0))?),
        UnionKind::One | UnionKind::Long | UnionKind::Double => {
            let (id, s) = &shape.branches[match shape.kind {
                UnionKind::One => 0,
                // The branch whose type holds every value: Avro's writers pick it for a long
                // (a double).
                _ => shape
                    .branches
                    .iter()
                    .position(|(id, _)| {
                        field_type(*id).is_ok_and(|t| matches!(base(&t), Base::Long | Base::Double))
                    })
                    .ok_or_else(|| internal("no long or double branch"))?,
            }];
            let target = field_type(*id)?;
            let values = match shape.kind {
                UnionKind::One => to_native(s, array, &target)?,
                _ => arrow_cast::cast(array, &target).map_err(|e| {
                    Error::invalid_argument(format!(
                        "the column is {}, not a number of the Avro union: {e}",
                        array.data_type()
                    ))
                })?,
            };
            for row in 0..n {
                if values.is_valid(row) {
                    type_ids.push(*id);
                } else {
                    type_ids.push(shape.null.ok_or_else(|| no_null(row))?);
                }
            }
            children.insert(*id, values);
        }
        UnionKind::Members => {
            let s = array
                .as_struct_opt()
                .filter(|s| s.num_columns() == shape.branches.len())
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "the column is {}, not the struct of {} members a read gives for the Avro \
                     union",
                        array.data_type(),
                        shape.branches.len()
                    ))
                })?;
            for (k, (id, sh)) in shape.branches.iter().enumerate() {
                children.insert(*id, to_native(sh, s.column(k), &field_type(*id)?)?);
            }
            for row in 0..n {
                let mut set = shape
                    .branches
                    .iter()
                    .filter(|(id, _)| s.is_valid(row) && children[id].is_valid(row));
                match (set.next(), set.next()) {
                    (Some((id, _)), None) => type_ids.push(*id),
                    (None, _) => type_ids.push(shape.null.ok_or_else(|| no_null(row))?),
                    (Some(_), Some(_)) => {
                        return Err(Error::invalid_argument(format!(
                            "row {row}: several members of an Avro union are set; a value is \
                             one of its branches"
                        )))
                    }
                }
            }
        }
    }
    // Every child is as long as the column: a row's offset in its branch is its row.
    let offsets: Vec<i32> = (0..n as i32).collect();
    let columns = fields
        .iter()
        .map(|(id, f)| match children.remove(&id) {
            Some(c) => Ok(c),
            None if f.data_type() == &DataType::Null => Ok(Arc::new(NullArray::new(n)) as ArrayRef),
            None => Ok(new_empty_array(f.data_type())),
        })
        .collect::<Result<Vec<_>>>()?;
    let fields = UnionFields::try_new(
        fields.iter().map(|(id, _)| id),
        fields
            .iter()
            .zip(&columns)
            .map(|((_, f), c)| with_type(f, c.data_type().clone())),
    )
    .map_err(internal)?;
    let out = UnionArray::try_new(
        fields,
        ScalarBuffer::from(type_ids),
        Some(ScalarBuffer::from(offsets)),
        columns,
    )
    .map_err(internal)?;
    Ok(Arc::new(out))
}

/// `schema` (Avro JSON) with the `uuid` logical type taken off `string` and `fixed` types,
/// wherever they are: `arrow-avro` then reads and writes them as the types they are on.
pub fn without_uuids(schema: &mut serde_json::Value) {
    use serde_json::Value as Json;
    match schema {
        Json::Object(obj) => {
            let on = obj.get("type").and_then(Json::as_str);
            if matches!(on, Some("string" | "fixed"))
                && obj.get("logicalType").and_then(Json::as_str) == Some("uuid")
            {
                obj.remove("logicalType");
            }
            // The schemas under this one (not defaults, which are data).
            for key in ["type", "items", "values"] {
                if let Some(child) = obj.get_mut(key) {
                    without_uuids(child);
                }
            }
            if let Some(Json::Array(fields)) = obj.get_mut("fields") {
                for field in fields.iter_mut().filter_map(|f| f.get_mut("type")) {
                    without_uuids(field);
                }
            }
        }
        // A union's branches.
        Json::Array(branches) => branches.iter_mut().for_each(without_uuids),
        _ => {}
    }
}

/// A decoder whose columns are shaped as the user gets them.
pub struct Shaped {
    inner: Arc<dyn PayloadDecoder>,
    shaper: Shaper,
}

/// `inner` (an Avro decoder) with its columns shaped by `shaper` (`inner` itself when nothing
/// changes).
pub fn shaped(inner: Arc<dyn PayloadDecoder>, shaper: Shaper) -> Arc<dyn PayloadDecoder> {
    if shaper.is_identity() {
        inner
    } else {
        Arc::new(Shaped { inner, shaper })
    }
}

impl PayloadDecoder for Shaped {
    fn data_type(&self) -> &DataType {
        self.shaper.data_type()
    }

    fn decode(&self, payloads: &[Option<Payload<'_>>]) -> Result<Decoded> {
        let mut decoded = self.inner.decode(payloads)?;
        let array = self.shaper.to_user(&decoded.array)?;
        if !matches!(self.shaper.shape, Shape::Union(_)) {
            decoded.array = array;
            return Ok(decoded);
        }
        // A union has no nulls of its own (a row taken from nowhere is some branch's): the
        // rows with no value or a bad one are null here.
        let absent: arrow_array::BooleanArray = payloads
            .iter()
            .zip(&decoded.errors)
            .map(|(p, e)| Some(p.is_none() || e.is_some()))
            .collect();
        decoded.array = arrow_select::nullif::nullif(array.as_ref(), &absent).map_err(internal)?;
        Ok(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::avro::decoder::decoder;
    use crate::values::avro::encode::encode;
    use crate::values::decoder::{SchemaText, SchemaType, WriterSchemas};
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;

    struct One(Arc<SchemaText>);
    impl WriterSchemas for One {
        fn writer(&self, _: i64) -> Option<Arc<SchemaText>> {
            Some(self.0.clone())
        }
    }

    fn avro(s: &str) -> SchemaText {
        SchemaText::new(SchemaType::Avro, s)
    }

    fn zz(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        crate::format::varint::write_varlong(&mut out, v);
        out
    }

    fn string(s: &str) -> Vec<u8> {
        let mut out = zz(s.len() as i64);
        out.extend(s.as_bytes());
        out
    }

    /// Decodes `values` (written with `schema`, id 1; None: a tombstone) with `schema`.
    fn decode(schema: &str, values: &[Option<Vec<u8>>]) -> ArrayRef {
        let text = avro(schema);
        let d = decoder(&text, Arc::new(One(Arc::new(text.clone())))).unwrap();
        let payloads: Vec<_> = values
            .iter()
            .map(|v| {
                v.as_ref().map(|b| Payload {
                    bytes: b,
                    schema_id: Some(1),
                    message_indexes: &[],
                })
            })
            .collect();
        let out = d.decode(&payloads).unwrap();
        assert!(out.errors.iter().all(Option::is_none), "{:?}", out.errors);
        assert_eq!(out.array.data_type(), d.data_type());
        out.array
    }

    /// `array` encoded back with `schema` (id 1): each value's Avro bytes.
    fn encoded(schema: &str, array: &ArrayRef) -> Vec<Option<Vec<u8>>> {
        let out = encode(array, &avro(schema), 1).unwrap();
        let out = out.as_binary::<i32>();
        out.iter().map(|v| v.map(|b| b[5..].to_vec())).collect()
    }

    #[test]
    fn unions_are_sparks_member_structs() {
        let schema = r#"["null", "int", "string",
            {"type":"record","name":"P","fields":[{"name":"x","type":"int"}]}]"#;
        let values = vec![
            Some([zz(1), zz(7)].concat()),
            Some([zz(2), string("hi")].concat()),
            Some(zz(0)),
            None,
            Some([zz(3), zz(-4)].concat()),
        ];
        let array = decode(schema, &values);
        let DataType::Struct(fields) = array.data_type() else {
            panic!("{}", array.data_type())
        };
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["member0", "member1", "member2"]);
        assert!(fields.iter().all(|f| f.is_nullable()));
        let s = array.as_struct();
        let valid: Vec<bool> = (0..5).map(|i| s.is_valid(i)).collect();
        assert_eq!(valid, [true, true, false, false, true]);
        let ints = s.column(0).as_primitive::<Int32Type>();
        let strings = s.column(1).as_string::<i32>();
        let records = s.column(2).as_struct();
        assert_eq!(
            (ints.value(0), ints.is_null(1), ints.is_null(4)),
            (7, true, true)
        );
        assert_eq!((strings.is_null(0), strings.value(1)), (true, "hi"));
        assert_eq!(records.column(0).as_primitive::<Int32Type>().value(4), -4);
        assert!(records.is_null(0) && records.is_valid(4));
        // Written back: the same bytes; a null (the null branch, as a tombstone) stays null:
        // the column does not tell them apart, as for a `[null, T]` value.
        let mut back = values.clone();
        back[2] = None;
        assert_eq!(encoded(schema, &array), back);
    }

    const V1: &str =
        r#"{"type":"record","name":"R","fields":[{"name":"u","type":["int","string"]}]}"#;
    const V2: &str = r#"{"type":"record","name":"R","fields":[{"name":"u","type":["int","string"]},
        {"name":"n","type":["null","long"],"default":null}]}"#;

    /// Writer schemas: id 1 is `V1`, any other `V2`.
    struct Two;
    impl WriterSchemas for Two {
        fn writer(&self, id: i64) -> Option<Arc<SchemaText>> {
            Some(Arc::new(avro(if id == 1 { V1 } else { V2 })))
        }
    }

    fn payload(bytes: &[u8], id: i64) -> Option<Payload<'_>> {
        Some(Payload {
            bytes,
            schema_id: Some(id),
            message_indexes: &[],
        })
    }

    #[test]
    fn unions_of_interleaved_versions_and_bad_values() {
        // Two writer versions (decoded in two runs, put back in order) and a bad value.
        let d = decoder(&avro(V2), Arc::new(Two)).unwrap();
        let a = [zz(0), zz(4)].concat();
        let b = [zz(1), string("x"), zz(1), zz(9)].concat();
        let bad = [zz(5)].concat();
        let c = [zz(1), string("y")].concat();
        let p = payload;
        let out = d
            .decode(&[p(&a, 1), p(&b, 2), None, p(&bad, 1), p(&c, 1)])
            .unwrap();
        let s = out.array.as_struct();
        let valid: Vec<bool> = (0..5).map(|i| s.is_valid(i)).collect();
        assert_eq!(valid, [true, true, false, false, true]);
        assert!(out.errors[3].is_some());
        let u = s.column(0).as_struct();
        assert_eq!(u.column(0).as_primitive::<Int32Type>().value(0), 4);
        assert_eq!(u.column(1).as_string::<i32>().value(1), "x");
        assert_eq!(u.column(1).as_string::<i32>().value(4), "y");
        assert!(u.column(1).is_null(0) && u.column(0).is_null(4));
        let n = s.column(1).as_primitive::<Int64Type>();
        assert_eq!((n.value(1), n.is_null(0)), (9, true));
    }

    #[test]
    fn numeric_unions_widen_as_spark_does() {
        let array = decode(
            r#"["int", "long"]"#,
            &[
                Some([zz(0), zz(5)].concat()),
                Some([zz(1), zz(1 << 40)].concat()),
            ],
        );
        assert_eq!(array.data_type(), &DataType::Int64);
        let a = array.as_primitive::<Int64Type>();
        assert_eq!((a.value(0), a.value(1)), (5, 1 << 40));
        // Written back in the long branch, which holds every value.
        assert_eq!(
            encoded(r#"["int", "long"]"#, &array),
            [
                Some([zz(1), zz(5)].concat()),
                Some([zz(1), zz(1 << 40)].concat())
            ]
        );

        let schema = r#"["null", "float", "double"]"#;
        let mut f = zz(1);
        f.extend(1.5f32.to_le_bytes());
        let mut d = zz(2);
        d.extend(0.25f64.to_le_bytes());
        let array = decode(schema, &[Some(f), Some(zz(0)), Some(d)]);
        assert_eq!(array.data_type(), &DataType::Float64);
        let a = array.as_primitive::<Float64Type>();
        assert_eq!((a.value(0), a.is_null(1), a.value(2)), (1.5, true, 0.25));

        // One non-null branch besides null, wherever null is: that branch's type.
        let array = decode(
            r#"["string", "null"]"#,
            &[Some([zz(0), string("a")].concat()), Some(zz(1))],
        );
        assert_eq!(array.data_type(), &DataType::Utf8);
        // A date and a long: by their encodings, a long.
        let array = decode(
            r#"[{"type":"int","logicalType":"date"}, "long"]"#,
            &[Some([zz(0), zz(3)].concat())],
        );
        assert_eq!(array.as_primitive::<Int64Type>().value(0), 3);
    }

    #[test]
    fn nested_unions_and_uuids() {
        let schema = r#"{"type":"record","name":"R","fields":[
            {"name":"xs","type":{"type":"array","items":["int","string"]}},
            {"name":"m","type":{"type":"map","values":["null","boolean","int"]}},
            {"name":"id","type":{"type":"string","logicalType":"uuid"}},
            {"name":"raw","type":{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}}]}"#;
        let text = "01234567-89ab-cdef-0123-456789abcdef";
        let value = [
            zz(2),
            zz(0),
            zz(9),
            zz(1),
            string("s"),
            zz(0),
            zz(1),
            string("k"),
            zz(1),
            vec![1],
            zz(0),
            string(text),
            (0u8..16).collect(),
        ]
        .concat();
        let array = decode(schema, &[Some(value.clone())]);
        let s = array.as_struct();
        let xs = s.column(0).as_list::<i32>().value(0);
        let xs = xs.as_struct();
        assert_eq!(xs.column(0).as_primitive::<Int32Type>().value(0), 9);
        assert_eq!(xs.column(1).as_string::<i32>().value(1), "s");
        let m = s.column(1).as_map();
        let DataType::Struct(branches) = m.value_type() else {
            panic!("{}", m.value_type())
        };
        assert_eq!(branches.len(), 2);
        assert_eq!(s.column(2).as_string::<i32>().value(0), text);
        assert_eq!(
            s.column(3).as_fixed_size_binary().value(0),
            (0u8..16).collect::<Vec<_>>()
        );
        assert_eq!(encoded(schema, &array), [Some(value)]);
    }

    #[test]
    fn uuid_strings_are_their_text_as_avros_readers_give_it() {
        let schema = r#"{"type":"string","logicalType":"uuid"}"#;
        let values = vec![
            Some(string("01234567-89AB-cdef-0123-456789abcdef")),
            Some(string("n/a")),
        ];
        let array = decode(schema, &values);
        let s = array.as_string::<i32>();
        assert_eq!(
            (s.value(0), s.value(1)),
            ("01234567-89AB-cdef-0123-456789abcdef", "n/a")
        );
        assert_eq!(encoded(schema, &array), values);
    }

    #[test]
    fn a_value_of_two_members_does_not_write() {
        let schema = r#"["int", "string"]"#;
        let array = decode(schema, &[Some([zz(0), zz(1)].concat())]);
        let s = array.as_struct();
        let both = StructArray::try_new(
            s.fields().clone(),
            vec![
                s.column(0).clone(),
                Arc::new(arrow_array::StringArray::from(vec!["x"])),
            ],
            None,
        )
        .unwrap();
        let err = encode(&(Arc::new(both) as ArrayRef), &avro(schema), 1).unwrap_err();
        assert!(err.message.contains("several members"), "{}", err.message);
    }
}
