//! Avro's schema resolution (the specification's "Schema Resolution"), done once per writer
//! schema: the writer's schema walked with the reader's and compiled into a program
//! (`program.rs`) that reads what the writer wrote into the reader's columns.
//!
//! - Records match by unqualified name (or the writer's full name among the reader's
//!   aliases); fields by name, then by the reader field's aliases; the writer's other fields
//!   are skipped without being built; a reader field the writer does not have is its
//!   default (any type: the default is encoded with the reader's schema once and read like a
//!   value), or, without one, an error.
//! - Enums match by name; a writer symbol the reader does not have is the reader's default
//!   symbol, or an error. Fixed types match by name and size.
//! - Promotions: `int` to `long`, `float`, `double`; `long` to `float`, `double`; `float` to
//!   `double`; `string` and `bytes` either way.
//! - Unions: a writer union's branch is resolved to the reader's type; a writer type to a
//!   reader union takes the reader's first branch that matches (same type and full name,
//!   then same type and unqualified name, then a promotion), as Apache Avro's Java reader
//!   picks it.
//! - What does not resolve is an error only when a value reaches it (a union branch never
//!   written costs nothing), as in Avro's Java reader: the program fails there.
//!
//! Resolution goes by the types logical types are on. What a reader type is in Arrow (and so
//! which column a value goes to, a decimal's width, a union's shape) is the reader column's
//! type: `arrow-avro`'s mapping, with Spark's shapes of unions (`shape.rs`).

use std::collections::HashMap;

use arrow_schema::DataType;

use crate::values::avro::columns::{symbols, Kind, Layout};
use crate::values::avro::default::encode_default;
use crate::values::avro::program::{is_leaf, EnumMap, Op, Program};
use crate::values::avro::schema::{Names, Node, NodeId, Schema};
use crate::values::avro::shape::{union_shape, UnionKind};

/// Where a reader type's values go.
#[derive(Debug, Clone)]
pub(crate) enum Pos {
    /// A primitive, enum or fixed: column `col`.
    Leaf(usize),
    Record {
        col: usize,
        fields: Vec<Pos>,
    },
    Array {
        col: usize,
        items: Box<Pos>,
    },
    Map {
        col: usize,
        keys: usize,
        values: Box<Pos>,
    },
    /// A union: per reader branch, where its values go; `col` takes a `null`.
    Union {
        col: usize,
        branches: Vec<Branch>,
    },
}

impl Pos {
    fn col(&self) -> usize {
        match self {
            Pos::Leaf(col)
            | Pos::Record { col, .. }
            | Pos::Array { col, .. }
            | Pos::Map { col, .. }
            | Pos::Union { col, .. } => *col,
        }
    }
}

/// A reader union branch's place.
#[derive(Debug, Clone)]
pub(crate) enum Branch {
    /// `null`: a null in the union's column.
    Null,
    /// The union's column itself (a `[null, T]` union is a nullable `T`; an `int`/`long`
    /// union a `long`).
    Direct(Pos),
    /// Member `member` of the union's struct (Spark's `member0`, ...).
    Member { member: usize, pos: Pos },
}

/// The reader side, compiled once: its schema, columns and their places.
#[derive(Debug)]
pub(crate) struct Reader {
    pub schema: Schema,
    pub layout: Layout,
    pub pos: Pos,
    /// The column's Arrow type.
    pub data_type: DataType,
}

fn mismatch(node: &Node, t: &DataType) -> String {
    format!(
        "the reader's {} has Arrow type {t}, not what the decoder builds for it",
        node.describe()
    )
}

impl Reader {
    /// The reader side of `schema`, whose column is `native` (`arrow-avro`'s type, without
    /// metadata) as users get it, `user` (`shape.rs`).
    pub fn new(schema: Schema, native: &DataType, user: &DataType) -> Result<Reader, String> {
        let mut layout = Layout::default();
        let pos = place(&schema, &mut layout, schema.root, native, user)?;
        layout.root = pos.col();
        Ok(Reader {
            schema,
            layout,
            pos,
            data_type: user.clone(),
        })
    }
}

/// The columns of reader type `node` (`arrow-avro`'s type `native`, the user's `user`).
fn place(
    schema: &Schema,
    layout: &mut Layout,
    node: NodeId,
    native: &DataType,
    user: &DataType,
) -> Result<Pos, String> {
    let n = schema.node(node);
    let leaf = |layout: &mut Layout, kind: Kind| Ok(Pos::Leaf(layout.add(kind, user.clone())));
    match (n, native) {
        (Node::Union(branches), DataType::Union(fields, _)) => {
            let shape = union_shape(native).ok_or_else(|| mismatch(n, native))?;
            // arrow-avro's type ids are the branches' positions.
            let child = |i: usize| {
                fields
                    .iter()
                    .find(|(id, _)| *id as usize == i)
                    .map(|(_, f)| f.data_type().clone())
                    .ok_or_else(|| mismatch(n, native))
            };
            let members: Vec<usize> = shape.branch_ids().map(|id| id as usize).collect();
            let null_branch = |b: usize| matches!(schema.node(branches[b]), Node::Null);
            match shape.kind() {
                UnionKind::Null => {
                    let col = layout.add(Kind::Null, user.clone());
                    let branches = branches.iter().map(|_| Branch::Null).collect();
                    Ok(Pos::Union { col, branches })
                }
                UnionKind::One => {
                    let b = members[0];
                    let pos = place(schema, layout, branches[b], &child(b)?, user)?;
                    let col = pos.col();
                    let mut out = Vec::with_capacity(branches.len());
                    for i in 0..branches.len() {
                        out.push(if i == b {
                            Branch::Direct(pos.clone())
                        } else {
                            Branch::Null
                        });
                    }
                    Ok(Pos::Union { col, branches: out })
                }
                UnionKind::Long | UnionKind::Double => {
                    let kind = if shape.kind() == UnionKind::Long {
                        Kind::I64
                    } else {
                        Kind::F64
                    };
                    let col = layout.add(kind, user.clone());
                    let branches = (0..branches.len())
                        .map(|i| {
                            if null_branch(i) {
                                Branch::Null
                            } else {
                                Branch::Direct(Pos::Leaf(col))
                            }
                        })
                        .collect();
                    Ok(Pos::Union { col, branches })
                }
                UnionKind::Members => {
                    let DataType::Struct(member_fields) = user else {
                        return Err(mismatch(n, user));
                    };
                    if member_fields.len() != members.len() {
                        return Err(mismatch(n, user));
                    }
                    let col = layout.add(Kind::Struct, user.clone());
                    let mut out: Vec<Branch> = branches.iter().map(|_| Branch::Null).collect();
                    let mut children = Vec::with_capacity(members.len());
                    for (k, &b) in members.iter().enumerate() {
                        let pos = place(
                            schema,
                            layout,
                            branches[b],
                            &child(b)?,
                            member_fields[k].data_type(),
                        )?;
                        children.push(pos.col());
                        out[b] = Branch::Member { member: k, pos };
                    }
                    layout.columns[col].children = children;
                    Ok(Pos::Union { col, branches: out })
                }
            }
        }
        // `[null, T]` and `[T, null]`: arrow-avro's nullable `T`.
        (Node::Union(branches), _) => {
            let nulls: Vec<bool> = branches
                .iter()
                .map(|&b| matches!(schema.node(b), Node::Null))
                .collect();
            if branches.len() != 2 || nulls.iter().filter(|&&x| x).count() != 1 {
                return Err(mismatch(n, native));
            }
            let b = if nulls[0] { 1 } else { 0 };
            let pos = place(schema, layout, branches[b], native, user)?;
            let col = pos.col();
            let out = (0..2)
                .map(|i| {
                    if i == b {
                        Branch::Direct(pos.clone())
                    } else {
                        Branch::Null
                    }
                })
                .collect();
            Ok(Pos::Union { col, branches: out })
        }
        (Node::Record { fields, .. }, DataType::Struct(native_fields)) => {
            let DataType::Struct(user_fields) = user else {
                return Err(mismatch(n, user));
            };
            if native_fields.len() != fields.len() || user_fields.len() != fields.len() {
                return Err(mismatch(n, native));
            }
            let col = layout.add(Kind::Struct, user.clone());
            let mut places = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                places.push(place(
                    schema,
                    layout,
                    f.ty,
                    native_fields[i].data_type(),
                    user_fields[i].data_type(),
                )?);
            }
            layout.columns[col].children = places.iter().map(Pos::col).collect();
            Ok(Pos::Record {
                col,
                fields: places,
            })
        }
        (Node::Array(items), DataType::List(native_item)) => {
            let DataType::List(user_item) = user else {
                return Err(mismatch(n, user));
            };
            let col = layout.add(Kind::List, user.clone());
            let items = place(
                schema,
                layout,
                *items,
                native_item.data_type(),
                user_item.data_type(),
            )?;
            layout.columns[col].children = vec![items.col()];
            Ok(Pos::Array {
                col,
                items: Box::new(items),
            })
        }
        (Node::Map(values), DataType::Map(native_entries, _)) => {
            let (DataType::Struct(native_kv), DataType::Map(user_entries, _)) =
                (native_entries.data_type(), user)
            else {
                return Err(mismatch(n, native));
            };
            let DataType::Struct(user_kv) = user_entries.data_type() else {
                return Err(mismatch(n, user));
            };
            if native_kv.len() != 2 || user_kv.len() != 2 {
                return Err(mismatch(n, native));
            }
            let col = layout.add(Kind::List, user.clone());
            let keys = layout.add(Kind::Bin, user_kv[0].data_type().clone());
            let values = place(
                schema,
                layout,
                *values,
                native_kv[1].data_type(),
                user_kv[1].data_type(),
            )?;
            layout.columns[col].children = vec![keys, values.col()];
            Ok(Pos::Map {
                col,
                keys,
                values: Box::new(values),
            })
        }
        (Node::Enum { symbols: s, .. }, DataType::Dictionary(k, v))
            if **k == DataType::Int32 && **v == DataType::Utf8 =>
        {
            let col = layout.add(Kind::I32, user.clone());
            layout.columns[col].dictionary = Some(symbols(s));
            Ok(Pos::Leaf(col))
        }
        (Node::Fixed { size, .. }, t) => {
            let kind = match t {
                DataType::FixedSizeBinary(n) if *n as usize == *size => Kind::Fixed,
                DataType::Decimal128(..) => Kind::I128,
                DataType::Decimal256(..) => Kind::I256,
                DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano) if *size == 12 => {
                    Kind::Interval
                }
                _ => return Err(mismatch(n, native)),
            };
            let col = layout.add(kind, user.clone());
            layout.columns[col].size = *size;
            Ok(Pos::Leaf(col))
        }
        (Node::Bytes, DataType::Binary) => leaf(layout, Kind::Bin),
        (Node::Bytes, DataType::Decimal128(..)) => leaf(layout, Kind::I128),
        (Node::Bytes, DataType::Decimal256(..)) => leaf(layout, Kind::I256),
        (Node::String, DataType::Utf8) => leaf(layout, Kind::Bin),
        (Node::Int, DataType::Int32 | DataType::Date32 | DataType::Time32(_)) => {
            leaf(layout, Kind::I32)
        }
        (Node::Long, DataType::Int64 | DataType::Timestamp(..) | DataType::Time64(_)) => {
            leaf(layout, Kind::I64)
        }
        (Node::Float, DataType::Float32) => leaf(layout, Kind::F32),
        (Node::Double, DataType::Float64) => leaf(layout, Kind::F64),
        (Node::Boolean, DataType::Boolean) => leaf(layout, Kind::Bool),
        (Node::Null, DataType::Null) => leaf(layout, Kind::Null),
        _ => Err(mismatch(n, native)),
    }
}

/// Whether a writer's named type `w` matches the reader's `r`: the same unqualified name, or
/// the writer's full name among the reader's aliases.
fn names_match(w: &Names, r: &Names) -> bool {
    w.short() == r.short() || r.aliases.contains(&w.full)
}

/// The program that reads values written with `writer` into `reader`'s columns.
pub(crate) fn compile(writer: &Schema, reader: &Reader) -> Result<Program, String> {
    let mut program = Program::default();
    let mut c = Compiler {
        w: writer,
        r: &reader.schema,
        layout: &reader.layout,
        program: &mut program,
        skipping: HashMap::new(),
        min_sizes: HashMap::new(),
    };
    let main = c.sub();
    let mut ops = Vec::new();
    c.compile(writer.root, reader.schema.root, &reader.pos, &mut ops, 0)?;
    c.program.subs[main as usize] = ops;
    program.main = main;
    specialize(&mut program);
    Ok(program)
}

/// Arrays, maps, unions and defaults whose programs are at most one leaf step run that step
/// in place of the program (no call per item).
fn specialize(program: &mut Program) {
    let one_leaf = |subs: &[Vec<Op>], sub: u32| {
        let ops = &subs[sub as usize];
        ops.len() <= 1 && ops.iter().all(is_leaf)
    };
    for i in 0..program.subs.len() {
        for k in 0..program.subs[i].len() {
            let op = program.subs[i][k];
            let subs = &program.subs;
            let new = match op {
                Op::Array { slot, items, min } if one_leaf(subs, items) => {
                    Op::ArrayLeaf { slot, items, min }
                }
                Op::Map {
                    slot,
                    keys,
                    values,
                    min,
                } if one_leaf(subs, values) => Op::MapLeaf {
                    slot,
                    keys,
                    values,
                    min,
                },
                Op::Union(t)
                    if program.unions[t as usize]
                        .iter()
                        .all(|&b| one_leaf(subs, b)) =>
                {
                    Op::UnionLeaf(t)
                }
                Op::Default(n) if one_leaf(subs, program.defaults[n as usize].1) => {
                    Op::DefaultLeaf(n)
                }
                op => op,
            };
            program.subs[i][k] = new;
        }
    }
}

/// Deeper resolutions are refused (a schema's JSON nests at most 128 levels).
const MAX_COMPILE_DEPTH: usize = 512;

struct Compiler<'a> {
    w: &'a Schema,
    r: &'a Schema,
    layout: &'a Layout,
    program: &'a mut Program,
    /// Writer records being compiled as skips: their program, once one refers to itself.
    skipping: HashMap<NodeId, Option<u32>>,
    min_sizes: HashMap<NodeId, u64>,
}

impl Compiler<'_> {
    /// A new, empty program.
    fn sub(&mut self) -> u32 {
        self.program.subs.push(Vec::new());
        (self.program.subs.len() - 1) as u32
    }

    fn fail(&mut self, why: String, out: &mut Vec<Op>) {
        self.program.messages.push(why);
        out.push(Op::Fail((self.program.messages.len() - 1) as u32));
    }

    fn slot(&self, col: usize) -> u32 {
        self.layout.column(col).slot
    }

    fn kind(&self, col: usize) -> Kind {
        self.layout.column(col).kind
    }

    /// Reads writer type `w` into reader type `r`'s place `pos`.
    fn compile(
        &mut self,
        w: NodeId,
        r: NodeId,
        pos: &Pos,
        out: &mut Vec<Op>,
        depth: usize,
    ) -> Result<(), String> {
        if depth > MAX_COMPILE_DEPTH {
            return Err(format!("schemas nest deeper than {MAX_COMPILE_DEPTH}"));
        }
        let (wn, rn) = (self.w.node(w), self.r.node(r));
        if let Node::Union(wb) = wn {
            let wb = wb.clone();
            let mut table = Vec::with_capacity(wb.len());
            for b in wb {
                let sub = self.sub();
                let mut ops = Vec::new();
                self.compile(b, r, pos, &mut ops, depth + 1)?;
                self.program.subs[sub as usize] = ops;
                table.push(sub);
            }
            self.program.unions.push(table);
            out.push(Op::Union((self.program.unions.len() - 1) as u32));
            return Ok(());
        }
        if let Node::Union(rb) = rn {
            let Pos::Union { col, branches } = pos else {
                return Err(format!("no union place for the reader's {}", rn.describe()));
            };
            let Some(b) = self.first_match(w, rb) else {
                let why = format!(
                    "the writer's {} is none of the reader's union's branches",
                    wn.describe()
                );
                self.fail(why, out);
                return Ok(());
            };
            match &branches[b] {
                Branch::Null => out.push(Op::Nulls(*col as u32)),
                Branch::Direct(p) => self.compile(w, rb[b], p, out, depth + 1)?,
                Branch::Member { member, pos: p } => {
                    out.push(Op::Members {
                        col: *col as u32,
                        member: *member as u32,
                    });
                    self.compile(w, rb[b], p, out, depth + 1)?;
                }
            }
            return Ok(());
        }
        match (wn, rn) {
            (Node::Record { names: wnames, .. }, Node::Record { names: rnames, .. }) => {
                if !names_match(wnames, rnames) {
                    let why = format!("record {} is not record {}", wnames.full, rnames.full);
                    self.fail(why, out);
                    return Ok(());
                }
                self.record(w, r, pos, out, depth)
            }
            (
                Node::Enum {
                    names: wnames,
                    symbols: ws,
                    ..
                },
                Node::Enum {
                    names: rnames,
                    symbols: rs,
                    default,
                },
            ) => {
                if !names_match(wnames, rnames) {
                    let why = format!("enum {} is not enum {}", wnames.full, rnames.full);
                    self.fail(why, out);
                    return Ok(());
                }
                let slot = self.slot(pos.col());
                if ws == rs {
                    out.push(Op::Enum {
                        slot,
                        symbols: rs.len() as u32,
                    });
                    return Ok(());
                }
                let fallback = default
                    .as_ref()
                    .and_then(|d| rs.iter().position(|s| s == d))
                    .map_or(-1, |i| i as i32);
                let to_reader = ws
                    .iter()
                    .map(|s| {
                        rs.iter()
                            .position(|x| x == s)
                            .map_or(fallback, |i| i as i32)
                    })
                    .collect();
                self.program.enums.push(EnumMap {
                    to_reader,
                    writer_symbols: ws.clone(),
                    reader: rnames.full.clone(),
                });
                out.push(Op::EnumMap {
                    slot,
                    map: (self.program.enums.len() - 1) as u32,
                });
                Ok(())
            }
            (
                Node::Fixed {
                    names: wnames,
                    size: wsize,
                },
                Node::Fixed {
                    names: rnames,
                    size: rsize,
                },
            ) => {
                if !names_match(wnames, rnames) || wsize != rsize {
                    let why = format!(
                        "fixed {} ({wsize} bytes) is not fixed {} ({rsize} bytes)",
                        wnames.full, rnames.full
                    );
                    self.fail(why, out);
                    return Ok(());
                }
                if let Some(why) = self.decimals_differ(w, r) {
                    self.fail(why, out);
                    return Ok(());
                }
                let col = pos.col();
                let (slot, size) = (self.slot(col), *rsize as u32);
                out.push(match self.kind(col) {
                    Kind::Fixed => Op::Fixed { slot, size },
                    Kind::I128 => Op::Dec128Fixed { slot, size },
                    Kind::I256 => Op::Dec256Fixed { slot, size },
                    Kind::Interval => Op::Duration(slot),
                    k => return Err(format!("a fixed in a {k:?} column")),
                });
                Ok(())
            }
            (Node::Array(wi), Node::Array(ri)) => {
                let Pos::Array { col, items } = pos else {
                    return Err("no array place".into());
                };
                let (wi, ri) = (*wi, *ri);
                let sub = self.sub();
                let mut ops = Vec::new();
                self.compile(wi, ri, items, &mut ops, depth + 1)?;
                self.program.subs[sub as usize] = ops;
                let min = self.min_size(wi);
                out.push(Op::Array {
                    slot: self.slot(*col),
                    items: sub,
                    min,
                });
                Ok(())
            }
            (Node::Map(wv), Node::Map(rv)) => {
                let Pos::Map { col, keys, values } = pos else {
                    return Err("no map place".into());
                };
                let (wv, rv) = (*wv, *rv);
                let sub = self.sub();
                let mut ops = Vec::new();
                self.compile(wv, rv, values, &mut ops, depth + 1)?;
                self.program.subs[sub as usize] = ops;
                let min = self.min_size(wv).saturating_add(1);
                out.push(Op::Map {
                    slot: self.slot(*col),
                    keys: self.slot(*keys),
                    values: sub,
                    min,
                });
                Ok(())
            }
            _ => {
                if let Some(why) = self.decimals_differ(w, r) {
                    self.fail(why, out);
                    return Ok(());
                }
                self.primitive(wn, rn, pos, out)
            }
        }
    }

    /// Why writer type `w` and reader type `r` do not match if both are decimals: their
    /// precisions and scales must be the same (the specification's rule for decimals).
    fn decimals_differ(&self, w: NodeId, r: NodeId) -> Option<String> {
        match (self.w.decimals.get(&w), self.r.decimals.get(&r)) {
            (Some(wd), Some(rd)) if wd != rd => Some(format!(
                "decimal({}, {}) is not decimal({}, {})",
                wd.0, wd.1, rd.0, rd.1
            )),
            _ => None,
        }
    }

    /// Primitives, promoted as the specification allows.
    fn primitive(
        &mut self,
        w: &Node,
        r: &Node,
        pos: &Pos,
        out: &mut Vec<Op>,
    ) -> Result<(), String> {
        let col = pos.col();
        let (slot, kind) = (self.slot(col), self.kind(col));
        let op = match (w, r, kind) {
            (Node::Null, Node::Null, Kind::Null) => Op::Null(slot),
            (Node::Boolean, Node::Boolean, Kind::Bool) => Op::Bool(slot),
            (Node::Int, Node::Int, Kind::I32) => Op::Int(slot),
            (Node::Int, Node::Int | Node::Long, Kind::I64) => Op::IntToLong(slot),
            (Node::Long, Node::Long, Kind::I64) => Op::Long(slot),
            (Node::Int, Node::Float, Kind::F32) => Op::IntToFloat(slot),
            (Node::Long, Node::Float, Kind::F32) => Op::LongToFloat(slot),
            (Node::Float, Node::Float, Kind::F32) => Op::Float(slot),
            (Node::Int, Node::Float, Kind::F64) => Op::IntToFloatToDouble(slot),
            (Node::Long, Node::Float, Kind::F64) => Op::LongToFloatToDouble(slot),
            (Node::Float, Node::Float | Node::Double, Kind::F64) => Op::FloatToDouble(slot),
            (Node::Int, Node::Double, Kind::F64) => Op::IntToDouble(slot),
            (Node::Long, Node::Double, Kind::F64) => Op::LongToDouble(slot),
            (Node::Double, Node::Double, Kind::F64) => Op::Double(slot),
            (Node::Bytes | Node::String, Node::Bytes | Node::String, Kind::Bin) => {
                let utf8 = matches!(self.layout.column(col).data_type, DataType::Utf8);
                if utf8 {
                    Op::Utf8(slot)
                } else {
                    Op::Bytes(slot)
                }
            }
            (Node::Bytes | Node::String, Node::Bytes, Kind::I128) => Op::Dec128Bytes(slot),
            (Node::Bytes | Node::String, Node::Bytes, Kind::I256) => Op::Dec256Bytes(slot),
            _ => {
                let why = format!(
                    "the writer's {} does not resolve to the reader's {}",
                    w.describe(),
                    r.describe()
                );
                self.fail(why, out);
                return Ok(());
            }
        };
        out.push(op);
        Ok(())
    }

    /// A record's fields: the writer's in the writer's order (each into its reader field or
    /// skipped), then the defaults of the reader fields the writer does not have.
    fn record(
        &mut self,
        w: NodeId,
        r: NodeId,
        pos: &Pos,
        out: &mut Vec<Op>,
        depth: usize,
    ) -> Result<(), String> {
        let (Node::Record { fields: wf, .. }, Node::Record { fields: rf, names }) =
            (self.w.node(w), self.r.node(r))
        else {
            return Err("not records".into());
        };
        let Pos::Record {
            col,
            fields: places,
        } = pos
        else {
            return Err("no record place".into());
        };
        // Per reader field, the writer field it reads.
        let mut source: Vec<Option<usize>> = vec![None; rf.len()];
        let mut taken = vec![false; wf.len()];
        for (i, f) in rf.iter().enumerate() {
            let by_name = wf.iter().position(|x| x.name == f.name);
            let found = by_name.filter(|&j| !taken[j]).or_else(|| {
                wf.iter()
                    .enumerate()
                    .position(|(j, x)| !taken[j] && f.aliases.contains(&x.name))
            });
            if let Some(j) = found {
                taken[j] = true;
                source[i] = Some(j);
            }
        }
        if let Some(missing) = rf
            .iter()
            .zip(&source)
            .find(|(f, s)| s.is_none() && f.default.is_none())
        {
            let why = format!(
                "record {}: field {} is not in the writer's schema and has no default",
                names.full, missing.0.name
            );
            self.fail(why, out);
            return Ok(());
        }
        out.push(Op::Struct(self.slot(*col)));
        let reader_of: HashMap<usize, usize> = source
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|j| (j, i)))
            .collect();
        for (j, f) in wf.iter().enumerate() {
            match reader_of.get(&j) {
                Some(&i) => self.compile(f.ty, rf[i].ty, &places[i], out, depth + 1)?,
                None => self.skip(f.ty, out, depth + 1)?,
            }
        }
        for (i, f) in rf.iter().enumerate() {
            if source[i].is_some() {
                continue;
            }
            let default = f.default.as_ref().ok_or("no default")?;
            let mut bytes = Vec::new();
            if let Err(why) = encode_default(self.r, f.ty, default, &mut bytes, 0) {
                let why = format!(
                    "record {}: field {}'s default {default} is not valid: {why}",
                    names.full, f.name
                );
                self.fail(why, out);
                continue;
            }
            // The default is read as a value written with the reader's own schema.
            let mut inner = Compiler {
                w: self.r,
                r: self.r,
                layout: self.layout,
                program: &mut *self.program,
                skipping: HashMap::new(),
                min_sizes: HashMap::new(),
            };
            let sub = inner.sub();
            let mut ops = Vec::new();
            inner.compile(f.ty, f.ty, &places[i], &mut ops, depth + 1)?;
            inner.program.subs[sub as usize] = ops;
            self.program.defaults.push((bytes, sub));
            out.push(Op::Default((self.program.defaults.len() - 1) as u32));
        }
        Ok(())
    }

    /// Skips a value of writer type `w`.
    fn skip(&mut self, w: NodeId, out: &mut Vec<Op>, depth: usize) -> Result<(), String> {
        if depth > MAX_COMPILE_DEPTH {
            return Err(format!("schemas nest deeper than {MAX_COMPILE_DEPTH}"));
        }
        // Skips in a row of one kind are one step: one dispatch for the run (a pruned reader
        // skips most of a record's fields).
        let fixed = |out: &mut Vec<Op>, n: u32| match out.last_mut() {
            Some(Op::SkipFixed(m)) if m.checked_add(n).is_some() => *m += n,
            _ => out.push(Op::SkipFixed(n)),
        };
        let another = |out: &mut Vec<Op>, op: fn(u32) -> Op| {
            if let Some(last) = out.last_mut() {
                if let Op::SkipInt(m) | Op::SkipLong(m) | Op::SkipLen(m) = *last {
                    if m < u32::MAX && op(m) == *last {
                        *last = op(m + 1);
                        return;
                    }
                }
            }
            out.push(op(1));
        };
        match self.w.node(w) {
            Node::Null => {}
            Node::Boolean => fixed(out, 1),
            Node::Int | Node::Enum { .. } => another(out, Op::SkipInt),
            Node::Long => another(out, Op::SkipLong),
            Node::Float => fixed(out, 4),
            Node::Double => fixed(out, 8),
            Node::Fixed { size, .. } => {
                if *size > 0 {
                    fixed(out, *size as u32)
                }
            }
            Node::Bytes | Node::String => another(out, Op::SkipLen),
            Node::Array(items) => {
                let items = *items;
                let sub = self.skip_sub(items, depth)?;
                let min = self.min_size(items);
                out.push(Op::SkipArray { items: sub, min });
            }
            Node::Map(values) => {
                let values = *values;
                let sub = self.skip_sub(values, depth)?;
                let min = self.min_size(values).saturating_add(1);
                out.push(Op::SkipMap { values: sub, min });
            }
            Node::Union(branches) => {
                let branches = branches.clone();
                let mut table = Vec::with_capacity(branches.len());
                for b in branches {
                    table.push(self.skip_sub(b, depth)?);
                }
                self.program.unions.push(table);
                out.push(Op::SkipUnion((self.program.unions.len() - 1) as u32));
            }
            Node::Record { fields, .. } => {
                if let Some(state) = self.skipping.get(&w).copied() {
                    // The record within itself: a call of its program (made now, filled when
                    // the record's fields are compiled).
                    let sub = match state {
                        Some(sub) => sub,
                        None => {
                            let sub = self.sub();
                            self.skipping.insert(w, Some(sub));
                            sub
                        }
                    };
                    out.push(Op::Call(sub));
                    return Ok(());
                }
                let types: Vec<NodeId> = fields.iter().map(|f| f.ty).collect();
                self.skipping.insert(w, None);
                let mut ops = Vec::new();
                for ty in types {
                    self.skip(ty, &mut ops, depth + 1)?;
                }
                match self.skipping.remove(&w).flatten() {
                    Some(sub) => {
                        self.program.subs[sub as usize] = ops;
                        out.push(Op::Call(sub));
                    }
                    None => {
                        for op in ops {
                            match op {
                                Op::SkipFixed(n) => fixed(out, n),
                                op => out.push(op),
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn skip_sub(&mut self, w: NodeId, depth: usize) -> Result<u32, String> {
        let sub = self.sub();
        let mut ops = Vec::new();
        self.skip(w, &mut ops, depth + 1)?;
        self.program.subs[sub as usize] = ops;
        Ok(sub)
    }

    /// The fewest bytes a value of writer type `w` takes (0 for a record within itself).
    fn min_size(&mut self, w: NodeId) -> u32 {
        fn walk(
            s: &Schema,
            w: NodeId,
            memo: &mut HashMap<NodeId, u64>,
            seen: &mut Vec<NodeId>,
        ) -> u64 {
            if let Some(&m) = memo.get(&w) {
                return m;
            }
            if seen.contains(&w) {
                return 0;
            }
            seen.push(w);
            let m = match s.node(w) {
                Node::Null => 0,
                Node::Boolean | Node::Int | Node::Long | Node::Enum { .. } => 1,
                Node::Bytes | Node::String | Node::Array(_) | Node::Map(_) => 1,
                Node::Float => 4,
                Node::Double => 8,
                Node::Fixed { size, .. } => *size as u64,
                Node::Union(branches) => {
                    1 + branches
                        .iter()
                        .map(|&b| walk(s, b, memo, seen))
                        .min()
                        .unwrap_or(0)
                }
                Node::Record { fields, .. } => fields
                    .iter()
                    .map(|f| walk(s, f.ty, memo, seen))
                    .fold(0u64, u64::saturating_add),
            };
            seen.pop();
            memo.insert(w, m);
            m
        }
        let mut seen = Vec::new();
        walk(self.w, w, &mut self.min_sizes, &mut seen).min(u32::MAX as u64) as u32
    }

    /// The first branch of the reader's union `rb` that writer type `w` matches: the same
    /// type (a named type: the same full name, or the writer's among the branch's aliases),
    /// then a named type of the same unqualified name, then a promotion.
    fn first_match(&self, w: NodeId, rb: &[NodeId]) -> Option<usize> {
        let wn = self.w.node(w);
        let same_kind = |r: &Node| std::mem::discriminant(wn) == std::mem::discriminant(r);
        let exact = rb.iter().position(|&b| {
            let rn = self.r.node(b);
            same_kind(rn)
                && match (wn.names(), rn.names()) {
                    (Some(wnames), Some(rnames)) => {
                        wnames.full == rnames.full || rnames.aliases.contains(&wnames.full)
                    }
                    _ => true,
                }
        });
        if exact.is_some() {
            return exact;
        }
        let named = rb.iter().position(|&b| {
            let rn = self.r.node(b);
            same_kind(rn)
                && matches!((wn.names(), rn.names()), (Some(x), Some(y)) if names_match(x, y))
        });
        if named.is_some() {
            return named;
        }
        rb.iter().position(|&b| {
            matches!(
                (wn, self.r.node(b)),
                (Node::Int, Node::Long | Node::Float | Node::Double)
                    | (Node::Long, Node::Float | Node::Double)
                    | (Node::Float, Node::Double)
                    | (Node::String, Node::Bytes)
                    | (Node::Bytes, Node::String)
            )
        })
    }
}
