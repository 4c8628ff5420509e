//! A writer schema resolved to the reader schema, compiled (`resolve.rs`) into a flat
//! program of steps, and the loop that runs it over one payload's bytes straight into the
//! reader's column builders (`columns.rs`): read a zigzag long into column k, skip a
//! string, take the union branch the tag says, fill a default. A record is its fields' steps
//! one after the other; arrays, maps, union branches and defaults are programs of their own,
//! run once per item (branch, default). Nothing is built per value but the columns' values.
//! The payload's bytes are read through `cursor.rs`.
//!
//! Hostile bytes: every length and count is checked against the bytes left before anything
//! is read or reserved (a block of `n` items whose smallest encoding is `m` bytes needs
//! `n * m` bytes), items that take no bytes (`null`, an empty record, a `fixed` of size 0)
//! are limited to [`ZERO_SIZE_ITEMS`] per value, and values nest at most [`MAX_DEPTH`] deep.

use arrow_buffer::{i256, IntervalMonthDayNano};

use crate::values::avro::columns::{Columns, Layout};
use crate::values::avro::cursor::{Bad, Cursor, Step};

/// Items of a type whose encoding takes no bytes that one value may hold, all its arrays
/// and maps together (each is a column slot: without a bound, a count of 2^62 in a few bytes
/// would build that many).
pub(crate) const ZERO_SIZE_ITEMS: u64 = 1 << 16;

/// How deep a value may nest (arrays in arrays, a recursive record skipped).
pub(crate) const MAX_DEPTH: u32 = 256;

/// One step. `slot` is a column's index among the columns of its kind (`Columns`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    /// A writer `null` into a null column.
    Null(u32),
    /// A boolean (a byte: 0 false, any other true).
    Bool(u32),
    /// An int into an int32 column.
    Int(u32),
    /// An int into an int64 column.
    IntToLong(u32),
    /// A long into an int64 column.
    Long(u32),
    IntToFloat(u32),
    LongToFloat(u32),
    Float(u32),
    /// An int read as a float (the reader's type), in a float64 column (a `float`/`double`
    /// union's).
    IntToFloatToDouble(u32),
    LongToFloatToDouble(u32),
    FloatToDouble(u32),
    IntToDouble(u32),
    LongToDouble(u32),
    Double(u32),
    /// `bytes` or `string` into a binary column.
    Bytes(u32),
    /// `bytes` or `string` into a utf8 column, checked to be UTF-8.
    Utf8(u32),
    Fixed {
        slot: u32,
        size: u32,
    },
    /// A decimal's big-endian two's complement bytes into a decimal128 column.
    Dec128Bytes(u32),
    Dec128Fixed {
        slot: u32,
        size: u32,
    },
    Dec256Bytes(u32),
    Dec256Fixed {
        slot: u32,
        size: u32,
    },
    /// A `duration` (fixed 12: months, days, milliseconds) into an interval column.
    Duration(u32),
    /// An enum written with the reader's symbols: an index below `symbols`.
    Enum {
        slot: u32,
        symbols: u32,
    },
    /// An enum whose writer's symbols differ: the index mapped by `Program::enums[map]`.
    EnumMap {
        slot: u32,
        map: u32,
    },
    /// A record's value in its struct column (its fields' steps follow).
    Struct(u32),
    /// An array: blocks of items, each item by program `items`, whose encoding is at least
    /// `min` bytes.
    Array {
        slot: u32,
        items: u32,
        min: u32,
    },
    /// An array whose item program is one step that runs no program ([`is_leaf`]).
    ArrayLeaf {
        slot: u32,
        items: u32,
        min: u32,
    },
    /// A map: blocks of entries, the key into bin column `keys`, the value by `values`.
    Map {
        slot: u32,
        keys: u32,
        values: u32,
        min: u32,
    },
    /// A map whose value program is one leaf step.
    MapLeaf {
        slot: u32,
        keys: u32,
        values: u32,
        min: u32,
    },
    /// A writer union: the branch's program from `Program::unions[table]`.
    Union(u32),
    /// A writer union whose branches' programs are at most one leaf step each.
    UnionLeaf(u32),
    /// A null into layout column `col` (the reader's union took its `null` branch).
    Nulls(u32),
    /// A union member struct (layout column `col`) set, its members other than `member`
    /// null (the member's steps follow).
    Members {
        col: u32,
        member: u32,
    },
    /// A reader field the writer does not have: its default (`Program::defaults[n]`).
    Default(u32),
    /// A default whose program is one leaf step.
    DefaultLeaf(u32),
    /// The writer's and reader's schemas do not resolve here: `Program::messages[n]`.
    Fail(u32),
    /// Writer fields the reader does not have: skipped (`n` of them in a row, for ints,
    /// longs and lengths; `n` bytes for fixed sizes).
    SkipInt(u32),
    SkipLong(u32),
    SkipFixed(u32),
    /// `bytes` or `string`.
    SkipLen(u32),
    SkipArray {
        items: u32,
        min: u32,
    },
    /// Map entries: a key, then the value by program `values`.
    SkipMap {
        values: u32,
        min: u32,
    },
    SkipUnion(u32),
    /// Program `n` (a recursive record skipped).
    Call(u32),
}

/// An enum's writer symbols mapped to the reader's.
#[derive(Debug, Clone)]
pub(crate) struct EnumMap {
    /// Per writer symbol: the reader's index (its own or the reader's default), or -1.
    pub to_reader: Vec<i32>,
    pub writer_symbols: Vec<String>,
    pub reader: String,
}

/// A compiled (writer, reader) pair.
#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    /// The programs: `main`, then items', entries', branches', defaults'.
    pub subs: Vec<Vec<Op>>,
    pub main: u32,
    /// Per writer union: its branches' programs.
    pub unions: Vec<Vec<u32>>,
    pub enums: Vec<EnumMap>,
    /// Per default: the value encoded with the reader's schema, and the program that reads it.
    pub defaults: Vec<(Vec<u8>, u32)>,
    /// Why a part of the schemas does not resolve.
    pub messages: Vec<String>,
}

impl Bad {
    /// The reason as users read it.
    pub fn describe(&self, program: &Program) -> String {
        match self {
            Bad::Eof => "the payload ends inside its Avro value (truncated?)".into(),
            Bad::Varint => "not valid Avro: a varint longer than 64 bits".into(),
            Bad::Int(v) => format!("not valid Avro: an int of {v} (beyond 32 bits)"),
            Bad::NegativeLength(n) => format!("not valid Avro: a length of {n}"),
            Bad::Utf8 => "not valid Avro: a string that is not UTF-8".into(),
            Bad::UnionBranch(tag, n) => {
                format!("not valid Avro: union branch {tag} of a union of {n}")
            }
            Bad::EnumIndex(i, n) => format!("not valid Avro: enum index {i} of {n} symbols"),
            Bad::EnumSymbol(map, i) => {
                let m = &program.enums[*map as usize];
                let symbol = m
                    .writer_symbols
                    .get(*i as usize)
                    .map_or("?", |s| s.as_str());
                format!(
                    "enum symbol {symbol} is not one of {}'s symbols, which has no default",
                    m.reader
                )
            }
            Bad::BlockSize(n) => format!("not valid Avro: a block of {n} bytes"),
            Bad::Items { count, min, left } => format!(
                "not valid Avro: a block of {count} items of at least {min} bytes where {left} \
                 bytes are left"
            ),
            Bad::ZeroSizeItems => format!(
                "more than {ZERO_SIZE_ITEMS} items that take no bytes (null, empty records) in \
                 one value"
            ),
            Bad::Decimal { len, width } => format!(
                "a decimal of {len} bytes does not fit in the column's {width}-byte decimals"
            ),
            Bad::Deep => format!("the value nests deeper than {MAX_DEPTH}"),
            Bad::Offsets => {
                "the batch's values outgrow Arrow's 32-bit offsets; read smaller batches".into()
            }
            Bad::Fail(m) => format!(
                "the writer schema does not resolve to the reader schema: {}",
                program.messages[*m as usize]
            ),
            Bad::Trailing(n) => format!("{n} bytes left after the Avro value"),
        }
    }
}

/// A program running over payloads into columns.
pub(crate) struct Vm<'a> {
    pub program: &'a Program,
    pub layout: &'a Layout,
    pub columns: &'a mut Columns,
    /// Zero-size items the value may still have.
    zero_left: u64,
    /// Strings checked to be UTF-8 one by one (else the caller checks each column's bytes
    /// at once at the end of the batch, see `Columns::utf8_valid`).
    strict: bool,
}

/// A match over a step: the arms of every leaf step (a step that reads or skips a value without
/// running another program), then `$rest`, the arms of the steps that do run programs (in
/// [`Vm::step`]) or a refusal (in [`Vm::leaf`]). One macro, so that [`Vm::step`] dispatches
/// once per step over every kind of step instead of a second time in [`Vm::leaf`], and the
/// leaves' code is written once.
macro_rules! leaf_or {
    ($vm:ident, $op:expr, $cur:ident, { $($rest:tt)* }) => {
        match $op {
            Op::Null(s) => $vm.columns.nulls[s as usize] += 1,
            Op::Bool(s) => {
                let v = $cur.byte()? != 0;
                let c = &mut $vm.columns.bools[s as usize];
                c.values.append(v);
                c.valid.append_non_null();
            }
            Op::Int(s) => push!(&mut $vm.columns.i32s[s as usize], $cur.int()?),
            Op::IntToLong(s) => push!(&mut $vm.columns.i64s[s as usize], i64::from($cur.int()?)),
            Op::Long(s) => push!(&mut $vm.columns.i64s[s as usize], $cur.long()?),
            Op::IntToFloat(s) => push!(&mut $vm.columns.f32s[s as usize], $cur.int()? as f32),
            Op::LongToFloat(s) => push!(&mut $vm.columns.f32s[s as usize], $cur.long()? as f32),
            Op::Float(s) => push!(
                &mut $vm.columns.f32s[s as usize],
                f32::from_le_bytes($cur.array::<4>()?)
            ),
            Op::IntToFloatToDouble(s) => {
                push!(&mut $vm.columns.f64s[s as usize], f64::from($cur.int()? as f32))
            }
            Op::LongToFloatToDouble(s) => {
                push!(&mut $vm.columns.f64s[s as usize], f64::from($cur.long()? as f32))
            }
            Op::FloatToDouble(s) => push!(
                &mut $vm.columns.f64s[s as usize],
                f64::from(f32::from_le_bytes($cur.array::<4>()?))
            ),
            Op::IntToDouble(s) => push!(&mut $vm.columns.f64s[s as usize], f64::from($cur.int()?)),
            Op::LongToDouble(s) => push!(&mut $vm.columns.f64s[s as usize], $cur.long()? as f64),
            Op::Double(s) => push!(
                &mut $vm.columns.f64s[s as usize],
                f64::from_le_bytes($cur.array::<8>()?)
            ),
            Op::Bytes(s) => append_bin(&mut $vm.columns.bins[s as usize], $cur, false)?,
            Op::Utf8(s) => append_bin(&mut $vm.columns.bins[s as usize], $cur, $vm.strict)?,
            Op::Fixed { slot, size } => {
                let b = $cur.take(size as usize)?;
                let c = &mut $vm.columns.fixeds[slot as usize];
                c.data.extend_from_slice(b);
                c.valid.append_non_null();
            }
            Op::Dec128Bytes(s) => {
                let raw = $cur.bytes()?;
                let v = i128::from_be_bytes($cur.decimal::<16>(raw)?);
                push!(&mut $vm.columns.i128s[s as usize], v);
            }
            Op::Dec128Fixed { slot, size } => {
                let raw = $cur.take(size as usize)?;
                let v = i128::from_be_bytes($cur.decimal::<16>(raw)?);
                push!(&mut $vm.columns.i128s[slot as usize], v);
            }
            Op::Dec256Bytes(s) => {
                let raw = $cur.bytes()?;
                let v = i256::from_be_bytes($cur.decimal::<32>(raw)?);
                push!(&mut $vm.columns.i256s[s as usize], v);
            }
            Op::Dec256Fixed { slot, size } => {
                let raw = $cur.take(size as usize)?;
                let v = i256::from_be_bytes($cur.decimal::<32>(raw)?);
                push!(&mut $vm.columns.i256s[slot as usize], v);
            }
            Op::Duration(s) => {
                let b = $cur.array::<12>()?;
                let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                let v = IntervalMonthDayNano::new(
                    word(0) as i32,
                    word(4) as i32,
                    i64::from(word(8)) * 1_000_000,
                );
                push!(&mut $vm.columns.intervals[s as usize], v);
            }
            Op::Enum { slot, symbols } => {
                let i = $cur.int()?;
                if i < 0 || i as u32 >= symbols {
                    return Err($cur.stop(Bad::EnumIndex(i64::from(i), symbols)));
                }
                push!(&mut $vm.columns.i32s[slot as usize], i);
            }
            Op::EnumMap { slot, map } => {
                let i = $cur.int()?;
                let m = &$vm.program.enums[map as usize].to_reader;
                let Some(&r) = usize::try_from(i).ok().and_then(|i| m.get(i)) else {
                    return Err($cur.stop(Bad::EnumIndex(i64::from(i), m.len() as u32)));
                };
                if r < 0 {
                    return Err($cur.stop(Bad::EnumSymbol(map, i)));
                }
                push!(&mut $vm.columns.i32s[slot as usize], r);
            }
            Op::Struct(s) => $vm.columns.structs[s as usize].append_non_null(),
            Op::Nulls(col) => $vm.columns.append_null($vm.layout, col as usize),
            Op::Members { col, member } => {
                let c = $vm.layout.column(col as usize);
                $vm.columns.structs[c.slot as usize].append_non_null();
                for (k, &child) in c.children.iter().enumerate() {
                    if k != member as usize {
                        $vm.columns.append_null($vm.layout, child);
                    }
                }
            }
            Op::Fail(m) => return Err($cur.stop(Bad::Fail(m))),
            Op::SkipInt(n) => {
                for _ in 0..n {
                    $cur.int()?;
                }
            }
            Op::SkipLong(n) => {
                for _ in 0..n {
                    $cur.varint()?;
                }
            }
            Op::SkipFixed(n) => {
                $cur.take(n as usize)?;
            }
            Op::SkipLen(n) => {
                for _ in 0..n {
                    $cur.bytes()?;
                }
            }
            $($rest)*
        }
    };
}

macro_rules! push {
    ($col:expr, $v:expr) => {{
        let v = $v;
        let c = $col;
        c.values.push(v);
        c.valid.append_non_null();
    }};
}

impl<'a> Vm<'a> {
    pub fn new(
        program: &'a Program,
        layout: &'a Layout,
        columns: &'a mut Columns,
        strict: bool,
    ) -> Vm<'a> {
        Vm {
            program,
            layout,
            columns,
            zero_left: ZERO_SIZE_ITEMS,
            strict,
        }
    }

    /// Decodes one payload, which must be exactly one value.
    pub fn value(&mut self, bytes: &[u8]) -> Result<(), Bad> {
        self.zero_left = ZERO_SIZE_ITEMS;
        let mut cur = Cursor::new(bytes);
        if self.run(self.program.main, &mut cur, 0).is_err() {
            return Err(cur.why());
        }
        match cur.left() {
            0 => Ok(()),
            n => Err(Bad::Trailing(n)),
        }
    }

    /// The number of items of the next block (0: the end), checked against the bytes left;
    /// `sized`: a block with its size in bytes is skipped whole (and counts as none).
    #[inline(always)]
    fn block(&mut self, cur: &mut Cursor<'_>, min: u32, sized: bool) -> Step<u64> {
        loop {
            let n = cur.long()?;
            if n == 0 {
                return Ok(0);
            }
            let count = if n < 0 {
                // A negative count is followed by the block's size in bytes.
                let size = cur.long()?;
                if size < 0 {
                    return Err(cur.stop(Bad::BlockSize(size)));
                }
                if sized {
                    cur.take(size as usize)?;
                    continue;
                }
                n.unsigned_abs()
            } else {
                n as u64
            };
            if min > 0 {
                let left = cur.left();
                if count > (left / min as usize) as u64 {
                    return Err(cur.stop(Bad::Items { count, min, left }));
                }
            } else {
                if count > self.zero_left {
                    return Err(cur.stop(Bad::ZeroSizeItems));
                }
                self.zero_left -= count;
            }
            return Ok(count);
        }
    }

    /// The branch program a union's tag selects.
    #[inline(always)]
    fn branch(&self, table: u32, cur: &mut Cursor<'_>) -> Step<u32> {
        let tag = cur.long()?;
        let branches = &self.program.unions[table as usize];
        match usize::try_from(tag).ok().and_then(|t| branches.get(t)) {
            Some(&sub) => Ok(sub),
            None => Err(cur.stop(Bad::UnionBranch(tag, branches.len()))),
        }
    }

    fn run(&mut self, sub: u32, cur: &mut Cursor<'_>, depth: u32) -> Step {
        if depth > MAX_DEPTH {
            return Err(cur.stop(Bad::Deep));
        }
        let program = self.program;
        for op in &program.subs[sub as usize] {
            self.step(*op, cur, depth)?;
        }
        Ok(())
    }

    /// Runs the one-step program `sub` (or nothing, if it has no step): the leaf step's code
    /// once, out of line, for every array item, map value, union branch and default.
    #[inline(never)]
    fn run_leaf(&mut self, sub: u32, cur: &mut Cursor<'_>) -> Step {
        let program = self.program;
        match program.subs[sub as usize].first() {
            Some(&op) => self.leaf(op, cur),
            None => Ok(()),
        }
    }

    /// The one step of program `sub`, or none (a program that reads nothing).
    #[inline(always)]
    fn leaf_of(&self, sub: u32) -> Option<Op> {
        self.program.subs[sub as usize].first().copied()
    }

    /// `n` items of an array whose items are the leaf step `item`: a loop of its own for
    /// the item types arrays hold most (strings, longs, ints), the leaf's dispatch per item
    /// for the others.
    #[inline(never)]
    fn leaf_items(&mut self, item: Option<Op>, n: u64, cur: &mut Cursor<'_>) -> Step {
        let strict = self.strict;
        match item {
            None => {}
            Some(Op::Utf8(s)) => {
                let c = &mut self.columns.bins[s as usize];
                for _ in 0..n {
                    append_bin(c, cur, strict)?;
                }
            }
            Some(Op::Bytes(s)) => {
                let c = &mut self.columns.bins[s as usize];
                for _ in 0..n {
                    append_bin(c, cur, false)?;
                }
            }
            Some(Op::Long(s)) => {
                let c = &mut self.columns.i64s[s as usize];
                for _ in 0..n {
                    push!(&mut *c, cur.long()?);
                }
            }
            Some(Op::Int(s)) => {
                let c = &mut self.columns.i32s[s as usize];
                for _ in 0..n {
                    push!(&mut *c, cur.int()?);
                }
            }
            Some(op) => {
                for _ in 0..n {
                    self.leaf(op, cur)?;
                }
            }
        }
        Ok(())
    }

    /// `n` entries of a map whose values are the leaf step `value`, the keys into bin column
    /// `keys`: as [`Vm::leaf_items`], a loop of its own for the commonest value types.
    #[inline(never)]
    fn entries_leaf(&mut self, keys: u32, value: Option<Op>, n: u64, cur: &mut Cursor<'_>) -> Step {
        let strict = self.strict;
        let cols = &mut *self.columns;
        match value {
            Some(Op::Long(s)) => {
                for _ in 0..n {
                    append_bin(&mut cols.bins[keys as usize], cur, strict)?;
                    push!(&mut cols.i64s[s as usize], cur.long()?);
                }
            }
            Some(Op::Utf8(s)) => {
                for _ in 0..n {
                    append_bin(&mut cols.bins[keys as usize], cur, strict)?;
                    append_bin(&mut cols.bins[s as usize], cur, strict)?;
                }
            }
            _ => {
                for _ in 0..n {
                    append_bin(&mut self.columns.bins[keys as usize], cur, strict)?;
                    if let Some(op) = value {
                        self.leaf(op, cur)?;
                    }
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn step(&mut self, op: Op, cur: &mut Cursor<'_>, depth: u32) -> Step {
        leaf_or!(self, op, cur, {
            Op::Array { slot, items, min } => {
                let mut total: u64 = 0;
                loop {
                    let n = self.block(cur, min, false)?;
                    if n == 0 {
                        break;
                    }
                    for _ in 0..n {
                        self.run(items, cur, depth + 1)?;
                    }
                    total += n;
                }
                self.end_list(slot, total, cur)?;
            }
            Op::ArrayLeaf { slot, items, min } => {
                let item = self.leaf_of(items);
                let mut total: u64 = 0;
                loop {
                    let n = self.block(cur, min, false)?;
                    if n == 0 {
                        break;
                    }
                    self.leaf_items(item, n, cur)?;
                    total += n;
                }
                self.end_list(slot, total, cur)?;
            }
            Op::Map {
                slot,
                keys,
                values,
                min,
            } => {
                let mut total: u64 = 0;
                loop {
                    let n = self.block(cur, min, false)?;
                    if n == 0 {
                        break;
                    }
                    for _ in 0..n {
                        append_bin(&mut self.columns.bins[keys as usize], cur, self.strict)?;
                        self.run(values, cur, depth + 1)?;
                    }
                    total += n;
                }
                self.end_list(slot, total, cur)?;
            }
            Op::MapLeaf {
                slot,
                keys,
                values,
                min,
            } => {
                let value = self.leaf_of(values);
                let mut total: u64 = 0;
                loop {
                    let n = self.block(cur, min, false)?;
                    if n == 0 {
                        break;
                    }
                    self.entries_leaf(keys, value, n, cur)?;
                    total += n;
                }
                self.end_list(slot, total, cur)?;
            }
            Op::Union(table) => {
                let sub = self.branch(table, cur)?;
                self.run(sub, cur, depth + 1)?;
            }
            Op::UnionLeaf(table) => {
                let sub = self.branch(table, cur)?;
                self.run_leaf(sub, cur)?;
            }
            Op::Default(n) => {
                let (bytes, sub) = &self.program.defaults[n as usize];
                let mut constant = Cursor::new(bytes);
                if self.run(*sub, &mut constant, depth + 1).is_err() {
                    return Err(cur.stop(constant.why()));
                }
            }
            Op::DefaultLeaf(n) => {
                let (bytes, sub) = &self.program.defaults[n as usize];
                let mut constant = Cursor::new(bytes);
                if self.run_leaf(*sub, &mut constant).is_err() {
                    return Err(cur.stop(constant.why()));
                }
            }
            Op::SkipArray { items, min } => loop {
                let n = self.block(cur, min, true)?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.run(items, cur, depth + 1)?;
                }
            },
            Op::SkipMap { values, min } => loop {
                let n = self.block(cur, min, true)?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    cur.bytes()?;
                    self.run(values, cur, depth + 1)?;
                }
            },
            Op::SkipUnion(table) => {
                let sub = self.branch(table, cur)?;
                self.run(sub, cur, depth + 1)?;
            }
            Op::Call(sub) => self.run(sub, cur, depth + 1)?,
        });
        Ok(())
    }

    /// A step that reads a value (or skips one) without running another program.
    #[inline(always)]
    fn leaf(&mut self, op: Op, cur: &mut Cursor<'_>) -> Step {
        leaf_or!(self, op, cur, {
            // Steps that run programs are never leaves (`is_leaf`).
            _ => return Err(cur.stop(Bad::Deep)),
        });
        Ok(())
    }

    #[inline(always)]
    fn end_list(&mut self, slot: u32, items: u64, cur: &mut Cursor<'_>) -> Step {
        let l = &mut self.columns.lists[slot as usize];
        let last = *l.offsets.last().unwrap_or(&0) as u64;
        let Ok(end) = i32::try_from(last + items) else {
            return Err(cur.stop(Bad::Offsets));
        };
        l.offsets.push(end);
        l.valid.append_non_null();
        Ok(())
    }
}

/// Whether `op` is a step [`Vm`] runs without running another program.
pub(crate) fn is_leaf(op: &Op) -> bool {
    !matches!(
        op,
        Op::Array { .. }
            | Op::ArrayLeaf { .. }
            | Op::Map { .. }
            | Op::MapLeaf { .. }
            | Op::Union(_)
            | Op::UnionLeaf(_)
            | Op::Default(_)
            | Op::DefaultLeaf(_)
            | Op::SkipArray { .. }
            | Op::SkipMap { .. }
            | Op::SkipUnion(_)
            | Op::Call(_)
    )
}

/// A `bytes` or `string` (checked to be UTF-8 if `utf8`) into a bin column.
#[inline(always)]
fn append_bin(c: &mut crate::values::avro::columns::Bin, cur: &mut Cursor<'_>, utf8: bool) -> Step {
    cur.bytes_into(&mut c.data, utf8)?;
    let Ok(end) = i32::try_from(c.data.len()) else {
        return Err(cur.stop(Bad::Offsets));
    };
    c.offsets.push(end);
    c.valid.append_non_null();
    Ok(())
}
