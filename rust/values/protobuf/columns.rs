//! The column builders the Protobuf decoder fills (`program.rs`): one per Arrow array
//! of the column's type, in a flat arena, each able to overwrite its last value (a field seen
//! twice: the last one wins), to go back to a row count (a payload that turned out bad), and to
//! finish into its array. The arena is kept from batch to batch; each batch reserves what the
//! last one used per row, so a batch grows no buffer value by value.

use std::sync::Arc;

use arrow_array::types::{
    DurationMicrosecondType, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType, UInt32Type, UInt64Type,
};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, ListArray, MapArray, PrimitiveArray,
    StringArray, StructArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef, Fields};

/// The values of a primitive column and whether each is valid.
#[derive(Debug, Default, Clone)]
pub(crate) struct Prim<T> {
    pub values: Vec<T>,
    pub valid: Vec<bool>,
}

impl<T: Copy + Default> Prim<T> {
    #[inline(always)]
    pub fn push(&mut self, value: T, valid: bool) {
        self.values.push(value);
        self.valid.push(valid);
    }

    /// Replaces the last value (the current row's) with a valid `value`.
    #[inline(always)]
    pub fn set_last(&mut self, value: T) {
        if let (Some(v), Some(ok)) = (self.values.last_mut(), self.valid.last_mut()) {
            *v = value;
            *ok = true;
        }
    }

    pub fn null_last(&mut self) {
        if let (Some(v), Some(ok)) = (self.values.last_mut(), self.valid.last_mut()) {
            *v = T::default();
            *ok = false;
        }
    }

    fn truncate(&mut self, n: usize) {
        self.values.truncate(n);
        self.valid.truncate(n);
    }
}

/// A variable-length column (`utf8` or `binary`): offsets (one more than values), bytes, and
/// validity.
#[derive(Debug, Clone)]
pub(crate) struct Var {
    pub offsets: Vec<i32>,
    pub data: Vec<u8>,
    pub valid: Vec<bool>,
}

impl Default for Var {
    fn default() -> Self {
        Var {
            offsets: vec![0],
            data: Vec::new(),
            valid: Vec::new(),
        }
    }
}

/// Appends `bytes` to `data`: short values (most strings of a message) byte by byte rather
/// than through a `memcpy` call, which costs more than the copy for a few bytes.
#[inline(always)]
fn append(data: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() <= 16 {
        data.reserve(bytes.len());
        for &b in bytes {
            // Within the capacity just reserved: no reallocation, no check that fails.
            data.push(b);
        }
    } else {
        data.extend_from_slice(bytes);
    }
}

impl Var {
    #[inline(always)]
    pub fn push(&mut self, bytes: &[u8], valid: bool) {
        append(&mut self.data, bytes);
        self.offsets.push(self.data.len() as i32);
        self.valid.push(valid);
    }

    /// Replaces the last value with a valid `bytes`.
    #[inline(always)]
    pub fn set_last(&mut self, bytes: &[u8]) {
        let n = self.offsets.len();
        if n < 2 {
            return;
        }
        let start = self.offsets[n - 2] as usize;
        self.data.truncate(start);
        append(&mut self.data, bytes);
        self.offsets[n - 1] = self.data.len() as i32;
        if let Some(ok) = self.valid.last_mut() {
            *ok = true;
        }
    }

    pub fn null_last(&mut self) {
        let n = self.offsets.len();
        if n < 2 {
            return;
        }
        let start = self.offsets[n - 2];
        self.data.truncate(start as usize);
        self.offsets[n - 1] = start;
        if let Some(ok) = self.valid.last_mut() {
            *ok = false;
        }
    }

    fn len(&self) -> usize {
        self.valid.len()
    }

    fn truncate(&mut self, n: usize) {
        self.offsets.truncate(n + 1);
        self.data.truncate(self.offsets[n] as usize);
        self.valid.truncate(n);
    }
}

/// A list or map column: offsets into its child (a map's children are keys and values).
#[derive(Debug, Clone)]
pub(crate) struct Nested {
    pub offsets: Vec<i32>,
    pub valid: Vec<bool>,
    pub children: Vec<usize>,
}

/// One column builder.
#[derive(Debug, Clone)]
pub(crate) enum Col {
    Bool(Prim<bool>),
    I32(Prim<i32>),
    I64(Prim<i64>),
    U32(Prim<u32>),
    U64(Prim<u64>),
    F32(Prim<f32>),
    F64(Prim<f64>),
    Str(Var),
    Bin(Var),
    Struct {
        valid: Vec<bool>,
        children: Vec<usize>,
    },
    List(Nested),
    Map(Nested),
}

/// What each column finishes into.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    Plain(DataType),
    Struct(Fields),
    List(FieldRef),
    Map(FieldRef),
}

/// The arena of columns, and what each used in the last batch.
#[derive(Debug, Default, Clone)]
pub(crate) struct Cols {
    pub cols: Vec<Col>,
    shapes: Vec<Shape>,
    /// Per column: (values, bytes) the last batch held, and its rows.
    used: Vec<(usize, usize)>,
    used_rows: usize,
}

/// An overflow of a column's 32-bit offsets: the batch is too large, not a payload bad.
#[derive(Debug)]
pub(crate) struct Overflow;

macro_rules! typed {
    ($name:ident, $variant:ident, $t:ty) => {
        #[inline(always)]
        pub fn $name(&mut self, id: usize) -> &mut Prim<$t> {
            match &mut self.cols[id] {
                Col::$variant(p) => p,
                other => unreachable!("column {id} is {other:?}"),
            }
        }
    };
}

impl Cols {
    /// Adds a column that finishes into `shape`; its id.
    pub fn add(&mut self, col: Col, shape: Shape) -> usize {
        self.cols.push(col);
        self.shapes.push(shape);
        self.used.push((0, 0));
        self.cols.len() - 1
    }

    /// Sets the children of a struct, list or map column added before them.
    pub fn set_children(&mut self, id: usize, ids: Vec<usize>) {
        match &mut self.cols[id] {
            Col::Struct { children, .. } => *children = ids,
            Col::List(n) | Col::Map(n) => n.children = ids,
            _ => {}
        }
    }

    typed!(bool, Bool, bool);
    typed!(i32, I32, i32);
    typed!(i64, I64, i64);
    typed!(u32, U32, u32);
    typed!(u64, U64, u64);
    typed!(f32, F32, f32);
    typed!(f64, F64, f64);

    #[inline(always)]
    pub fn var(&mut self, id: usize) -> &mut Var {
        match &mut self.cols[id] {
            Col::Str(v) | Col::Bin(v) => v,
            other => unreachable!("column {id} is {other:?}"),
        }
    }

    #[inline(always)]
    pub fn nested(&mut self, id: usize) -> &mut Nested {
        match &mut self.cols[id] {
            Col::List(n) | Col::Map(n) => n,
            other => unreachable!("column {id} is {other:?}"),
        }
    }

    /// The number of rows (values) column `id` holds.
    pub fn len(&self, id: usize) -> usize {
        match &self.cols[id] {
            Col::Bool(p) => p.valid.len(),
            Col::I32(p) => p.valid.len(),
            Col::I64(p) => p.valid.len(),
            Col::U32(p) => p.valid.len(),
            Col::U64(p) => p.valid.len(),
            Col::F32(p) => p.valid.len(),
            Col::F64(p) => p.valid.len(),
            Col::Str(v) | Col::Bin(v) => v.len(),
            Col::Struct { valid, .. } => valid.len(),
            Col::List(n) | Col::Map(n) => n.valid.len(),
        }
    }

    /// Ends a row of a list or map column `id`: its items are those its children got since.
    #[inline(always)]
    pub fn close_nested(&mut self, id: usize) {
        let child = match &self.cols[id] {
            Col::List(n) | Col::Map(n) => n.children[0],
            _ => return,
        };
        let end = self.len(child) as i32;
        let n = self.nested(id);
        n.offsets.push(end);
        n.valid.push(true);
    }

    /// Ends a valid row of struct column `id` (its children got theirs).
    #[inline(always)]
    pub fn close_struct(&mut self, id: usize) {
        if let Col::Struct { valid, .. } = &mut self.cols[id] {
            valid.push(true);
        }
    }

    /// Appends a null to column `id` (and, for a struct, to each child).
    pub fn push_null(&mut self, id: usize) {
        let children = match &mut self.cols[id] {
            Col::Bool(p) => return p.push(false, false),
            Col::I32(p) => return p.push(0, false),
            Col::I64(p) => return p.push(0, false),
            Col::U32(p) => return p.push(0, false),
            Col::U64(p) => return p.push(0, false),
            Col::F32(p) => return p.push(0.0, false),
            Col::F64(p) => return p.push(0.0, false),
            Col::Str(v) | Col::Bin(v) => return v.push(&[], false),
            Col::List(n) | Col::Map(n) => {
                let last = *n.offsets.last().unwrap_or(&0);
                n.offsets.push(last);
                n.valid.push(false);
                return;
            }
            Col::Struct { valid, children } => {
                valid.push(false);
                children.clone()
            }
        };
        for child in children {
            self.push_null(child);
        }
    }

    /// Cuts column `id` (and what it holds) back to `n` rows.
    pub fn truncate(&mut self, id: usize, n: usize) {
        let (children, child_len) = match &mut self.cols[id] {
            Col::Bool(p) => return p.truncate(n),
            Col::I32(p) => return p.truncate(n),
            Col::I64(p) => return p.truncate(n),
            Col::U32(p) => return p.truncate(n),
            Col::U64(p) => return p.truncate(n),
            Col::F32(p) => return p.truncate(n),
            Col::F64(p) => return p.truncate(n),
            Col::Str(v) | Col::Bin(v) => return v.truncate(n),
            Col::Struct { valid, children } => {
                valid.truncate(n);
                (children.clone(), n)
            }
            Col::List(nested) | Col::Map(nested) => {
                nested.offsets.truncate(n + 1);
                nested.valid.truncate(n);
                let end = nested.offsets.last().copied().unwrap_or(0) as usize;
                (nested.children.clone(), end)
            }
        };
        for child in children {
            self.truncate(child, child_len);
        }
    }

    /// Reserves room for `rows` rows in every column, by what the last batch used per row.
    pub fn reserve(&mut self, rows: usize) {
        if self.used_rows == 0 {
            return;
        }
        let scale = |n: usize| n.saturating_mul(rows) / self.used_rows;
        for (col, &(values, bytes)) in self.cols.iter_mut().zip(&self.used) {
            let (values, bytes) = (scale(values), scale(bytes));
            match col {
                Col::Bool(p) => reserve_prim(p, values),
                Col::I32(p) => reserve_prim(p, values),
                Col::I64(p) => reserve_prim(p, values),
                Col::U32(p) => reserve_prim(p, values),
                Col::U64(p) => reserve_prim(p, values),
                Col::F32(p) => reserve_prim(p, values),
                Col::F64(p) => reserve_prim(p, values),
                Col::Str(v) | Col::Bin(v) => {
                    v.offsets.reserve(values);
                    v.valid.reserve(values);
                    v.data.reserve(bytes);
                }
                Col::Struct { valid, .. } => valid.reserve(values),
                Col::List(n) | Col::Map(n) => {
                    n.offsets.reserve(values);
                    n.valid.reserve(values);
                }
            }
        }
    }

    /// Notes that the batch just finished had `rows` rows (what [`Cols::reserve`] scales by).
    pub fn batch_done(&mut self, rows: usize) {
        if rows > 0 {
            self.used_rows = rows;
        }
    }

    /// Column `id` as its array; every column under it is emptied for the next batch.
    pub fn finish(&mut self, id: usize) -> Result<ArrayRef, Overflow> {
        let shape = self.shapes[id].clone();
        let empty = empty_like(&self.cols[id]);
        let col = std::mem::replace(&mut self.cols[id], empty);
        let used = match &col {
            Col::Str(v) | Col::Bin(v) => (v.valid.len(), v.data.len()),
            _ => (0, 0),
        };
        let array: ArrayRef = match col {
            Col::Bool(p) => {
                self.used[id] = (p.valid.len(), 0);
                let nulls = nulls(p.valid);
                Arc::new(BooleanArray::new(BooleanBuffer::from(p.values), nulls))
            }
            Col::I32(p) => Arc::new(self.prim::<Int32Type>(id, p)),
            Col::I64(p) => match &shape {
                Shape::Plain(DataType::Timestamp(_, tz)) => Arc::new(
                    self.prim::<TimestampMicrosecondType>(id, p)
                        .with_timezone_opt(tz.clone()),
                ),
                Shape::Plain(DataType::Duration(_)) => {
                    Arc::new(self.prim::<DurationMicrosecondType>(id, p))
                }
                _ => Arc::new(self.prim::<Int64Type>(id, p)),
            },
            Col::U32(p) => Arc::new(self.prim::<UInt32Type>(id, p)),
            Col::U64(p) => Arc::new(self.prim::<UInt64Type>(id, p)),
            Col::F32(p) => Arc::new(self.prim::<Float32Type>(id, p)),
            Col::F64(p) => Arc::new(self.prim::<Float64Type>(id, p)),
            Col::Str(v) => {
                self.used[id] = used;
                let (offsets, data, nulls) = var_parts(v)?;
                if cfg!(debug_assertions) {
                    Arc::new(StringArray::try_new(offsets, data, nulls).map_err(|_| Overflow)?)
                } else {
                    // SAFETY: every value pushed to a `utf8` column is UTF-8 (checked when read
                    // from the payload, or an enum's name, a number, JSON text), and the
                    // offsets grow from 0 to the bytes' length (checked by `var_parts`).
                    Arc::new(unsafe { StringArray::new_unchecked(offsets, data, nulls) })
                }
            }
            Col::Bin(v) => {
                self.used[id] = used;
                let (offsets, data, nulls) = var_parts(v)?;
                Arc::new(BinaryArray::try_new(offsets, data, nulls).map_err(|_| Overflow)?)
            }
            Col::Struct { valid, children } => {
                self.used[id] = (valid.len(), 0);
                let len = valid.len();
                let nulls = nulls(valid);
                let columns = children
                    .iter()
                    .map(|&c| self.finish(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let Shape::Struct(fields) = shape else {
                    unreachable!("a struct column's shape")
                };
                if fields.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len, nulls))
                } else {
                    Arc::new(StructArray::try_new(fields, columns, nulls).map_err(|_| Overflow)?)
                }
            }
            Col::List(n) => {
                self.used[id] = (n.valid.len(), 0);
                let Shape::List(field) = shape else {
                    unreachable!("a list column's shape")
                };
                let child = self.finish(n.children[0])?;
                let offsets = offsets(n.offsets)?;
                let nulls = nulls(n.valid);
                Arc::new(ListArray::try_new(field, offsets, child, nulls).map_err(|_| Overflow)?)
            }
            Col::Map(n) => {
                self.used[id] = (n.valid.len(), 0);
                let Shape::Map(field) = shape else {
                    unreachable!("a map column's shape")
                };
                let keys = self.finish(n.children[0])?;
                let values = self.finish(n.children[1])?;
                let DataType::Struct(entry_fields) = field.data_type().clone() else {
                    unreachable!("map entries are a struct")
                };
                let entries = StructArray::try_new(entry_fields, vec![keys, values], None)
                    .map_err(|_| Overflow)?;
                let offsets = offsets(n.offsets)?;
                let nulls = nulls(n.valid);
                Arc::new(
                    MapArray::try_new(field, offsets, entries, nulls, false)
                        .map_err(|_| Overflow)?,
                )
            }
        };
        Ok(array)
    }

    fn prim<T>(&mut self, id: usize, p: Prim<T::Native>) -> PrimitiveArray<T>
    where
        T: ArrowPrimitiveType,
    {
        self.used[id] = (p.valid.len(), 0);
        let nulls = nulls(p.valid);
        PrimitiveArray::<T>::new(ScalarBuffer::from(p.values), nulls)
    }
}

fn reserve_prim<T>(p: &mut Prim<T>, n: usize) {
    p.values.reserve(n);
    p.valid.reserve(n);
}

fn empty_like(col: &Col) -> Col {
    match col {
        Col::Bool(_) => Col::Bool(Prim::default()),
        Col::I32(_) => Col::I32(Prim::default()),
        Col::I64(_) => Col::I64(Prim::default()),
        Col::U32(_) => Col::U32(Prim::default()),
        Col::U64(_) => Col::U64(Prim::default()),
        Col::F32(_) => Col::F32(Prim::default()),
        Col::F64(_) => Col::F64(Prim::default()),
        Col::Str(_) => Col::Str(Var::default()),
        Col::Bin(_) => Col::Bin(Var::default()),
        Col::Struct { children, .. } => Col::Struct {
            valid: Vec::new(),
            children: children.clone(),
        },
        Col::List(n) => Col::List(Nested {
            offsets: vec![0],
            valid: Vec::new(),
            children: n.children.clone(),
        }),
        Col::Map(n) => Col::Map(Nested {
            offsets: vec![0],
            valid: Vec::new(),
            children: n.children.clone(),
        }),
    }
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|&v| v) {
        return None;
    }
    Some(NullBuffer::new(BooleanBuffer::from(valid)))
}

fn offsets(offsets: Vec<i32>) -> Result<OffsetBuffer<i32>, Overflow> {
    // Offsets are written as `len as i32`: a column past 2 GiB (or 2^31 items) wraps, which
    // shows as offsets going down.
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(Overflow);
    }
    Ok(OffsetBuffer::new(ScalarBuffer::from(offsets)))
}

type VarParts = (OffsetBuffer<i32>, Buffer, Option<NullBuffer>);

fn var_parts(v: Var) -> Result<VarParts, Overflow> {
    if v.data.len() > i32::MAX as usize {
        return Err(Overflow);
    }
    Ok((
        offsets(v.offsets)?,
        Buffer::from_vec(v.data),
        nulls(v.valid),
    ))
}
