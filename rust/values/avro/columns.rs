//! The Arrow builders the compiled Avro decoder writes into: one column per place in the
//! reader schema (a record's field, an array's items, a union's member), each a typed buffer
//! (values, offsets, validity) the decoder's steps append to directly, kept for the decoder's
//! life and sized for each batch from the last one's, and turned into Arrow arrays (the
//! buffers handed over, not copied) at the end of a batch.
//!
//! A payload that does not decode is taken back out of every column (each column's length
//! follows from its parent's: a struct's children have its length, a list's items end where
//! its last offset says), then written as a null.

use arrow_buffer::{i256, BooleanBufferBuilder, Buffer, IntervalMonthDayNano, NullBufferBuilder};
use arrow_data::ArrayData;
use arrow_schema::DataType;

/// How a column is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Arrow's null type: a length.
    Null,
    Bool,
    /// int32, date32, time32, and an enum's keys.
    I32,
    /// int64, timestamps, time64.
    I64,
    F32,
    F64,
    /// decimal128.
    I128,
    /// decimal256.
    I256,
    /// interval (month, day, nano): Avro's `duration`.
    Interval,
    /// binary or utf8: offsets and bytes.
    Bin,
    /// fixed_size_binary.
    Fixed,
    /// A struct: its validity; its fields are columns of their own.
    Struct,
    /// A list or a map: offsets and validity; the items (a map's keys and values) are columns
    /// of their own.
    List,
}

/// One column of a [`Layout`].
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub kind: Kind,
    /// Its index among the columns of its kind in [`Columns`].
    pub slot: u32,
    /// Its Arrow type (the user's: Spark's shapes of unions, every field nullable).
    pub data_type: DataType,
    /// A struct's fields, a list's items, a map's keys and values (columns of the layout).
    pub children: Vec<usize>,
    /// A fixed's size.
    pub size: usize,
    /// An enum's symbols (the dictionary of its keys).
    pub dictionary: Option<ArrayData>,
}

/// The columns of one reader schema, the root first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    pub columns: Vec<Column>,
    /// The column of the whole value.
    pub root: usize,
    /// How many columns of each kind.
    counts: [u32; 13],
}

fn kind_index(kind: Kind) -> usize {
    kind as usize
}

impl Layout {
    /// Adds a column (its children are added after it and set later); returns its index.
    pub fn add(&mut self, kind: Kind, data_type: DataType) -> usize {
        let slot = self.counts[kind_index(kind)];
        self.counts[kind_index(kind)] += 1;
        self.columns.push(Column {
            kind,
            slot,
            data_type,
            children: Vec::new(),
            size: 0,
            dictionary: None,
        });
        self.columns.len() - 1
    }

    pub fn column(&self, id: usize) -> &Column {
        &self.columns[id]
    }
}

/// A primitive column: its values and validity.
#[derive(Debug)]
pub(crate) struct Prim<T> {
    pub values: Vec<T>,
    pub valid: NullBufferBuilder,
}

/// A boolean column.
#[derive(Debug)]
pub(crate) struct Bools {
    pub values: BooleanBufferBuilder,
    pub valid: NullBufferBuilder,
}

/// A binary or utf8 column.
#[derive(Debug)]
pub(crate) struct Bin {
    /// One more than the values, the first 0.
    pub offsets: Vec<i32>,
    pub data: Vec<u8>,
    pub valid: NullBufferBuilder,
}

/// A fixed_size_binary column.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub data: Vec<u8>,
    pub valid: NullBufferBuilder,
}

/// A list or map column.
#[derive(Debug)]
pub(crate) struct Nested {
    /// One more than the values, the first 0.
    pub offsets: Vec<i32>,
    pub valid: NullBufferBuilder,
}

fn validity() -> NullBufferBuilder {
    NullBufferBuilder::new(0)
}

/// The builders of a [`Layout`]'s columns, by kind.
#[derive(Debug)]
pub(crate) struct Columns {
    pub nulls: Vec<usize>,
    pub bools: Vec<Bools>,
    pub i32s: Vec<Prim<i32>>,
    pub i64s: Vec<Prim<i64>>,
    pub f32s: Vec<Prim<f32>>,
    pub f64s: Vec<Prim<f64>>,
    pub i128s: Vec<Prim<i128>>,
    pub i256s: Vec<Prim<i256>>,
    pub intervals: Vec<Prim<IntervalMonthDayNano>>,
    pub bins: Vec<Bin>,
    pub fixeds: Vec<Fixed>,
    pub structs: Vec<NullBufferBuilder>,
    pub lists: Vec<Nested>,
    /// Per column of the layout: its length at the end of the last batch, and a bin's bytes,
    /// per row of that batch (how the next batch's buffers are sized).
    per_row: Vec<(f64, f64)>,
}

fn prims<T>(n: u32) -> Vec<Prim<T>> {
    (0..n)
        .map(|_| Prim {
            values: Vec::new(),
            valid: validity(),
        })
        .collect()
}

impl Columns {
    /// Empty builders for `layout`'s columns.
    pub fn new(layout: &Layout) -> Columns {
        let n = |k: Kind| layout.counts[kind_index(k)];
        Columns {
            nulls: vec![0; n(Kind::Null) as usize],
            bools: (0..n(Kind::Bool))
                .map(|_| Bools {
                    values: BooleanBufferBuilder::new(0),
                    valid: validity(),
                })
                .collect(),
            i32s: prims(n(Kind::I32)),
            i64s: prims(n(Kind::I64)),
            f32s: prims(n(Kind::F32)),
            f64s: prims(n(Kind::F64)),
            i128s: prims(n(Kind::I128)),
            i256s: prims(n(Kind::I256)),
            intervals: prims(n(Kind::Interval)),
            bins: (0..n(Kind::Bin))
                .map(|_| Bin {
                    offsets: vec![0],
                    data: Vec::new(),
                    valid: validity(),
                })
                .collect(),
            fixeds: (0..n(Kind::Fixed))
                .map(|_| Fixed {
                    data: Vec::new(),
                    valid: validity(),
                })
                .collect(),
            structs: (0..n(Kind::Struct)).map(|_| validity()).collect(),
            lists: (0..n(Kind::List))
                .map(|_| Nested {
                    offsets: vec![0],
                    valid: validity(),
                })
                .collect(),
            per_row: Vec::new(),
        }
    }

    /// The number of values in column `id`.
    pub fn len(&self, layout: &Layout, id: usize) -> usize {
        let c = layout.column(id);
        let s = c.slot as usize;
        match c.kind {
            Kind::Null => self.nulls[s],
            Kind::Bool => self.bools[s].valid.len(),
            Kind::I32 => self.i32s[s].valid.len(),
            Kind::I64 => self.i64s[s].valid.len(),
            Kind::F32 => self.f32s[s].valid.len(),
            Kind::F64 => self.f64s[s].valid.len(),
            Kind::I128 => self.i128s[s].valid.len(),
            Kind::I256 => self.i256s[s].valid.len(),
            Kind::Interval => self.intervals[s].valid.len(),
            Kind::Bin => self.bins[s].valid.len(),
            Kind::Fixed => self.fixeds[s].valid.len(),
            Kind::Struct => self.structs[s].len(),
            Kind::List => self.lists[s].valid.len(),
        }
    }

    /// Appends a null to column `id` (a struct's fields get one too).
    pub fn append_null(&mut self, layout: &Layout, id: usize) {
        let c = layout.column(id);
        let s = c.slot as usize;
        match c.kind {
            Kind::Null => self.nulls[s] += 1,
            Kind::Bool => {
                self.bools[s].values.append(false);
                self.bools[s].valid.append_null();
            }
            Kind::I32 => null_prim(&mut self.i32s[s]),
            Kind::I64 => null_prim(&mut self.i64s[s]),
            Kind::F32 => null_prim(&mut self.f32s[s]),
            Kind::F64 => null_prim(&mut self.f64s[s]),
            Kind::I128 => null_prim(&mut self.i128s[s]),
            Kind::I256 => null_prim(&mut self.i256s[s]),
            Kind::Interval => null_prim(&mut self.intervals[s]),
            Kind::Bin => {
                let b = &mut self.bins[s];
                b.offsets.push(*b.offsets.last().unwrap_or(&0));
                b.valid.append_null();
            }
            Kind::Fixed => {
                let f = &mut self.fixeds[s];
                f.data.resize(f.data.len() + c.size, 0);
                f.valid.append_null();
            }
            Kind::Struct => {
                self.structs[s].append_null();
                for &child in &c.children {
                    self.append_null(layout, child);
                }
            }
            Kind::List => {
                let l = &mut self.lists[s];
                l.offsets.push(*l.offsets.last().unwrap_or(&0));
                l.valid.append_null();
            }
        }
    }

    /// Cuts column `id` (and the columns under it) back to its first `len` values.
    pub fn truncate(&mut self, layout: &Layout, id: usize, len: usize) {
        let c = layout.column(id);
        let s = c.slot as usize;
        match c.kind {
            Kind::Null => self.nulls[s] = self.nulls[s].min(len),
            Kind::Bool => {
                self.bools[s].values.truncate(len);
                self.bools[s].valid.truncate(len);
            }
            Kind::I32 => cut_prim(&mut self.i32s[s], len),
            Kind::I64 => cut_prim(&mut self.i64s[s], len),
            Kind::F32 => cut_prim(&mut self.f32s[s], len),
            Kind::F64 => cut_prim(&mut self.f64s[s], len),
            Kind::I128 => cut_prim(&mut self.i128s[s], len),
            Kind::I256 => cut_prim(&mut self.i256s[s], len),
            Kind::Interval => cut_prim(&mut self.intervals[s], len),
            Kind::Bin => {
                let b = &mut self.bins[s];
                b.offsets.truncate(len + 1);
                b.data.truncate(*b.offsets.last().unwrap_or(&0) as usize);
                b.valid.truncate(len);
            }
            Kind::Fixed => {
                let f = &mut self.fixeds[s];
                f.data.truncate(len * c.size);
                f.valid.truncate(len);
            }
            Kind::Struct => {
                self.structs[s].truncate(len);
                for &child in &c.children {
                    self.truncate(layout, child, len);
                }
            }
            Kind::List => {
                let l = &mut self.lists[s];
                l.offsets.truncate(len + 1);
                l.valid.truncate(len);
                let items = *l.offsets.last().unwrap_or(&0) as usize;
                for &child in &c.children {
                    self.truncate(layout, child, items);
                }
            }
        }
    }

    /// Whether every utf8 column's strings are UTF-8: its bytes as a whole, and each string
    /// starting at a character's first byte (so each is whole characters).
    pub fn utf8_valid(&self, layout: &Layout) -> bool {
        layout
            .columns
            .iter()
            .filter(|c| c.kind == Kind::Bin && c.data_type == DataType::Utf8)
            .all(|c| {
                let b = &self.bins[c.slot as usize];
                let data = &b.data;
                simdutf8::basic::from_utf8(data).is_ok()
                    && b.offsets.iter().all(|&o| {
                        data.get(o as usize)
                            .is_none_or(|&first| first & 0xc0 != 0x80)
                    })
            })
    }

    /// Sizes the buffers for a batch of `rows` values, from the last batch's sizes per row
    /// (the first batch: a value per row where a column is not under a list).
    pub fn reserve(&mut self, layout: &Layout, rows: usize) {
        if self.per_row.is_empty() {
            self.per_row = vec![(0.0, 0.0); layout.columns.len()];
            first_guess(layout, layout.root, 1.0, &mut self.per_row);
        }
        for id in 0..layout.columns.len() {
            let (per_row, bytes) = self.per_row[id];
            let n = (per_row * rows as f64 * 1.02) as usize + 16;
            let c = layout.column(id);
            let s = c.slot as usize;
            match c.kind {
                Kind::Null | Kind::Struct => {}
                Kind::Bool => self.bools[s].values.reserve(n),
                Kind::I32 => self.i32s[s].values.reserve(n),
                Kind::I64 => self.i64s[s].values.reserve(n),
                Kind::F32 => self.f32s[s].values.reserve(n),
                Kind::F64 => self.f64s[s].values.reserve(n),
                Kind::I128 => self.i128s[s].values.reserve(n),
                Kind::I256 => self.i256s[s].values.reserve(n),
                Kind::Interval => self.intervals[s].values.reserve(n),
                Kind::Bin => {
                    let b = &mut self.bins[s];
                    b.offsets.reserve(n);
                    b.data.reserve((bytes * rows as f64 * 1.02) as usize + 64);
                }
                Kind::Fixed => self.fixeds[s].data.reserve(n * c.size),
                Kind::List => self.lists[s].offsets.reserve(n),
            }
        }
    }

    /// The columns built so far as Arrow data of the root's type; the builders start again
    /// empty, and the next batch's are sized from these `rows`.
    pub fn finish(&mut self, layout: &Layout, rows: usize) -> ArrayData {
        if rows > 0 {
            if self.per_row.len() != layout.columns.len() {
                self.per_row = vec![(0.0, 0.0); layout.columns.len()];
            }
            for id in 0..layout.columns.len() {
                let c = layout.column(id);
                let len = self.len(layout, id) as f64 / rows as f64;
                let bytes = match c.kind {
                    Kind::Bin => self.bins[c.slot as usize].data.len() as f64 / rows as f64,
                    _ => 0.0,
                };
                self.per_row[id] = (len, bytes);
            }
        }
        self.finish_column(layout, layout.root)
    }

    fn finish_column(&mut self, layout: &Layout, id: usize) -> ArrayData {
        let c = layout.column(id);
        let s = c.slot as usize;
        let len = self.len(layout, id);
        let (buffers, nulls, children): (Vec<Buffer>, _, Vec<ArrayData>) = match c.kind {
            Kind::Null => {
                self.nulls[s] = 0;
                (Vec::new(), None, Vec::new())
            }
            Kind::Bool => {
                let b = &mut self.bools[s];
                let values = b.values.finish().into_inner();
                (vec![values], b.valid.finish(), Vec::new())
            }
            Kind::I32 => take_prim(&mut self.i32s[s]),
            Kind::I64 => take_prim(&mut self.i64s[s]),
            Kind::F32 => take_prim(&mut self.f32s[s]),
            Kind::F64 => take_prim(&mut self.f64s[s]),
            Kind::I128 => take_prim(&mut self.i128s[s]),
            Kind::I256 => take_prim(&mut self.i256s[s]),
            Kind::Interval => take_prim(&mut self.intervals[s]),
            Kind::Bin => {
                let b = &mut self.bins[s];
                let offsets = std::mem::replace(&mut b.offsets, vec![0]);
                let data = std::mem::take(&mut b.data);
                (
                    vec![Buffer::from(offsets), Buffer::from(data)],
                    b.valid.finish(),
                    Vec::new(),
                )
            }
            Kind::Fixed => {
                let f = &mut self.fixeds[s];
                let data = std::mem::take(&mut f.data);
                (vec![Buffer::from(data)], f.valid.finish(), Vec::new())
            }
            Kind::Struct => {
                let nulls = self.structs[s].finish();
                let children = c
                    .children
                    .iter()
                    .map(|&child| self.finish_column(layout, child))
                    .collect();
                (Vec::new(), nulls, children)
            }
            Kind::List => {
                let l = &mut self.lists[s];
                let offsets = std::mem::replace(&mut l.offsets, vec![0]);
                let items = *offsets.last().unwrap_or(&0) as usize;
                let nulls = l.valid.finish();
                let children: Vec<ArrayData> = c
                    .children
                    .iter()
                    .map(|&child| self.finish_column(layout, child))
                    .collect();
                let children = match &c.data_type {
                    // A map's items are its entries: a struct of the key and value columns.
                    DataType::Map(entries, _) => {
                        let builder = ArrayData::builder(entries.data_type().clone())
                            .len(items)
                            .child_data(children);
                        // SAFETY: the key and value columns each have `items` values (a map
                        // entry appends one to each) of the entries' field types.
                        vec![unsafe { builder.build_unchecked() }]
                    }
                    _ => children,
                };
                (vec![Buffer::from(offsets)], nulls, children)
            }
        };
        let (buffers, children) = match &c.dictionary {
            Some(symbols) => (buffers, vec![symbols.clone()]),
            None => (buffers, children),
        };
        let builder = ArrayData::builder(c.data_type.clone())
            .len(len)
            .buffers(buffers)
            .nulls(nulls)
            .child_data(children);
        // SAFETY: every builder appends exactly one value per slot of its column (offsets
        // one more, starting at 0 and never decreasing; a fixed's `size` bytes; a struct's
        // fields as many values as it has), so each buffer has the length the column's Arrow
        // type needs for `len` values; strings were checked to be UTF-8 as they were
        // appended, enum keys to be within the symbols, offsets to fit in an i32. The tests
        // and the fuzz target validate the arrays fully.
        let data = unsafe { builder.build_unchecked() };
        #[cfg(debug_assertions)]
        if let Err(e) = data.validate_full() {
            panic!("the Avro decoder built an invalid {}: {e}", c.data_type);
        }
        data
    }
}

fn null_prim<T: Default>(p: &mut Prim<T>) {
    p.values.push(T::default());
    p.valid.append_null();
}

fn cut_prim<T>(p: &mut Prim<T>, len: usize) {
    p.values.truncate(len);
    p.valid.truncate(len);
}

fn take_prim<T: arrow_buffer::ArrowNativeType>(
    p: &mut Prim<T>,
) -> (
    Vec<Buffer>,
    Option<arrow_buffer::NullBuffer>,
    Vec<ArrayData>,
) {
    let values = std::mem::take(&mut p.values);
    (vec![Buffer::from(values)], p.valid.finish(), Vec::new())
}

/// The first batch's guess of each column's values per row: one where it is not under a
/// list (none there: those grow as they must).
fn first_guess(layout: &Layout, id: usize, per_row: f64, out: &mut [(f64, f64)]) {
    out[id] = (per_row, per_row * 16.0);
    let c = layout.column(id);
    let inner = if c.kind == Kind::List { 0.0 } else { per_row };
    for &child in &c.children {
        first_guess(layout, child, inner, out);
    }
}

/// An enum's symbols as the dictionary of its column.
pub(crate) fn symbols(symbols: &[String]) -> ArrayData {
    use arrow_array::Array;
    let array = arrow_array::StringArray::from_iter_values(symbols.iter());
    array.to_data()
}
