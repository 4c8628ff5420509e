//! The Protobuf decoder's program: a reader message (its Arrow type's plan, `arrow.rs`)
//! compiled once into, per message of the column's type, a table from field number to the
//! field's wire kind, shape, presence, oneof and column builder (`columns.rs`), which
//! `program.rs` runs payloads through.

use std::collections::HashMap;

use prost_reflect::{FieldDescriptor, Kind as ProtoKind, MessageDescriptor, Syntax, Value};

use crate::values::protobuf::arrow::{
    kind_type, list_field, map_field, FieldPlan, Kind, MessagePlan, Shape as PlanShape,
};
use crate::values::protobuf::columns::{Col, Cols, Nested, Prim, Shape, Var};
use crate::values::protobuf::wire::{FIXED32, FIXED64, LEN, VARINT};

pub(crate) const NONE: u32 = u32::MAX;

/// A field's type as read from the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum K {
    Int32,
    Int64,
    UInt32,
    UInt64,
    SInt32,
    SInt64,
    Fixed32,
    Fixed64,
    SFixed32,
    SFixed64,
    Float,
    Double,
    Bool,
    /// Index into [`Program::enums`].
    Enum(u32),
    Str,
    Bytes,
    /// Index into [`Program::msgs`].
    Message(u32),
    Timestamp,
    Duration,
    /// A `google.protobuf.*Value` wrapper: the wrapped scalar's kind.
    Wrapper(W),
    /// Index into [`Program::json`]: a message given as its canonical JSON text.
    Json(u32),
}

/// The scalar a wrapper holds (field 1 of `google.protobuf.*Value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum W {
    Double,
    Float,
    Int64,
    UInt64,
    Int32,
    UInt32,
    Bool,
    Str,
    Bytes,
}

impl W {
    pub(crate) fn kind(self) -> K {
        match self {
            W::Double => K::Double,
            W::Float => K::Float,
            W::Int64 => K::Int64,
            W::UInt64 => K::UInt64,
            W::Int32 => K::Int32,
            W::UInt32 => K::UInt32,
            W::Bool => K::Bool,
            W::Str => K::Str,
            W::Bytes => K::Bytes,
        }
    }
}

impl K {
    /// The wire type of one value of this kind (messages: length-delimited).
    pub(crate) fn wire(self) -> u8 {
        match self {
            K::Int32
            | K::Int64
            | K::UInt32
            | K::UInt64
            | K::SInt32
            | K::SInt64
            | K::Bool
            | K::Enum(_) => VARINT,
            K::Fixed32 | K::SFixed32 | K::Float => FIXED32,
            K::Fixed64 | K::SFixed64 | K::Double => FIXED64,
            _ => LEN,
        }
    }

    /// A number (or bool or enum): packable, a fixed-width or varint value.
    pub(crate) fn scalar(self) -> bool {
        self.wire() != LEN
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FShape {
    Single,
    List,
    Map { key: K, value: K },
}

/// The value a field without presence has when it is absent.
#[derive(Debug, Clone)]
pub(crate) enum Default {
    Null,
    Raw(u64),
    Bytes(Box<[u8]>),
}

#[derive(Debug)]
pub(crate) struct Field {
    pub(crate) number: u32,
    pub(crate) kind: K,
    /// A group (`START_GROUP` on the wire) rather than a length-delimited message.
    pub(crate) group: bool,
    pub(crate) shape: FShape,
    /// Single: the value's column; list, map: the list's or map's.
    pub(crate) col: usize,
    /// List: the items' column. Map: the keys'.
    pub(crate) item: usize,
    /// Map: the values' column.
    pub(crate) value: usize,
    /// Map: whether a missing value field's entry keeps the value's group flag.
    pub(crate) value_group: bool,
    pub(crate) oneof: u32,
    pub(crate) default: Default,
    /// The full name, for errors.
    pub(crate) name: Box<str>,
}

#[derive(Debug)]
pub(crate) struct Msg {
    pub(crate) fields: Vec<Field>,
    /// Field number to index + 1 (0: not a field), for numbers below its length.
    pub(crate) dense: Vec<u16>,
    /// Field numbers past `dense`, sorted, with their index.
    pub(crate) sparse: Vec<(u32, u16)>,
    pub(crate) col: usize,
    pub(crate) oneofs: usize,
    /// Non-repeated scalars, strings and enums: a slot each when the message starts.
    pub(crate) singles: Vec<u16>,
    /// Non-repeated messages (and Timestamps, wrappers, JSON): decoded at the message's end.
    pub(crate) deferred: Vec<u16>,
    pub(crate) lists: Vec<u16>,
    pub(crate) maps: Vec<u16>,
}

impl Msg {
    #[inline(always)]
    pub(crate) fn lookup(&self, number: u32) -> Option<usize> {
        match self.dense.get(number as usize) {
            Some(&0) => None,
            Some(&i) => Some(usize::from(i) - 1),
            None => self
                .sparse
                .binary_search_by_key(&number, |&(n, _)| n)
                .ok()
                .map(|k| usize::from(self.sparse[k].1)),
        }
    }
}

/// An enum's value names by number.
#[derive(Debug)]
pub(crate) struct EnumNames {
    pub(crate) closed: bool,
    /// The number of the first value declared (the enum's default).
    pub(crate) first: Option<i32>,
    /// Names of numbers `0..dense.len()`.
    pub(crate) dense: Vec<Option<Box<[u8]>>>,
    /// The others, sorted by number.
    pub(crate) sparse: Vec<(i32, Box<[u8]>)>,
}

impl EnumNames {
    #[inline(always)]
    pub(crate) fn name(&self, n: i32) -> Option<&[u8]> {
        match usize::try_from(n).ok().and_then(|i| self.dense.get(i)) {
            Some(name) => name.as_deref(),
            None => self
                .sparse
                .binary_search_by_key(&n, |(k, _)| *k)
                .ok()
                .map(|k| &*self.sparse[k].1),
        }
    }
}

/// A reader message compiled: its messages, enums and JSON-text messages, and the root.
#[derive(Debug)]
pub(crate) struct Program {
    pub(crate) msgs: Vec<Msg>,
    pub(crate) enums: Vec<EnumNames>,
    pub(crate) json: Vec<MessageDescriptor>,
    pub(crate) enum_ids: HashMap<String, u32>,
    pub(crate) root: usize,
}

impl Program {
    /// The program of the message whose Arrow type `plan` is, its builders added to `cols`.
    pub fn new(plan: &MessagePlan, cols: &mut Cols) -> Program {
        let mut program = Program {
            msgs: Vec::new(),
            enums: Vec::new(),
            json: Vec::new(),
            enum_ids: HashMap::new(),
            root: 0,
        };
        program.root = program.message(plan, cols);
        program
    }

    /// The struct column of the root message.
    pub fn root_col(&self) -> usize {
        self.msgs[self.root].col
    }

    fn message(&mut self, plan: &MessagePlan, cols: &mut Cols) -> usize {
        let col = cols.add(
            Col::Struct {
                valid: Vec::new(),
                children: Vec::new(),
            },
            Shape::Struct(plan.arrow.clone()),
        );
        let index = self.msgs.len();
        self.msgs.push(Msg {
            fields: Vec::new(),
            dense: Vec::new(),
            sparse: Vec::new(),
            col,
            oneofs: 0,
            singles: Vec::new(),
            deferred: Vec::new(),
            lists: Vec::new(),
            maps: Vec::new(),
        });
        let mut fields = Vec::new();
        let mut children = Vec::new();
        let mut oneofs: Vec<String> = Vec::new();
        for field in &plan.fields {
            let compiled = self.field(field, cols, &mut oneofs);
            children.push(compiled.col);
            fields.push(compiled);
        }
        cols.set_children(col, children);
        let max = fields.iter().map(|f| f.number).max().unwrap_or(0);
        let dense_len = (max as usize + 1).min(1024);
        let mut dense = vec![0u16; dense_len];
        let mut sparse = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let i = u16::try_from(i).expect("a message has fewer than 65536 fields");
            match dense.get_mut(f.number as usize) {
                Some(slot) => *slot = i + 1,
                None => sparse.push((f.number, i)),
            }
        }
        sparse.sort_unstable();
        let mut singles = Vec::new();
        let mut deferred = Vec::new();
        let mut lists = Vec::new();
        let mut maps = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let i = i as u16;
            match f.shape {
                FShape::Single if f.kind.scalar() || matches!(f.kind, K::Str | K::Bytes) => {
                    singles.push(i)
                }
                FShape::Single => deferred.push(i),
                FShape::List => lists.push(i),
                FShape::Map { .. } => maps.push(i),
            }
        }
        let msg = &mut self.msgs[index];
        msg.fields = fields;
        msg.dense = dense;
        msg.sparse = sparse;
        msg.oneofs = oneofs.len();
        msg.singles = singles;
        msg.deferred = deferred;
        msg.lists = lists;
        msg.maps = maps;
        index
    }

    fn field(&mut self, plan: &FieldPlan, cols: &mut Cols, oneofs: &mut Vec<String>) -> Field {
        let desc = &plan.desc;
        let oneof = match desc.containing_oneof() {
            Some(o) if !o.is_synthetic() => {
                let name = o.name().to_owned();
                match oneofs.iter().position(|n| *n == name) {
                    Some(i) => i as u32,
                    None => {
                        oneofs.push(name);
                        (oneofs.len() - 1) as u32
                    }
                }
            }
            _ => NONE,
        };
        let (shape, col, item, value, kind, value_group) = match &plan.shape {
            PlanShape::Single(k) => {
                let (kind, col) = self.value(desc, k, cols);
                (FShape::Single, col, 0, 0, kind, false)
            }
            PlanShape::List(k) => {
                let list = cols.add(
                    Col::List(Nested {
                        offsets: vec![0],
                        valid: Vec::new(),
                        children: Vec::new(),
                    }),
                    Shape::List(list_field(k)),
                );
                let (kind, item) = self.value(desc, k, cols);
                cols.set_children(list, vec![item]);
                (FShape::List, list, item, 0, kind, false)
            }
            PlanShape::Map(kk, vk) => {
                let entry = desc.kind();
                let entry = entry.as_message().expect("a map's entry is a message");
                let (key_desc, value_desc) =
                    (entry.map_entry_key_field(), entry.map_entry_value_field());
                let map = cols.add(
                    Col::Map(Nested {
                        offsets: vec![0],
                        valid: Vec::new(),
                        children: Vec::new(),
                    }),
                    Shape::Map(map_field(kk, vk)),
                );
                let (key, key_col) = self.value(&key_desc, kk, cols);
                let (value, value_col) = self.value(&value_desc, vk, cols);
                cols.set_children(map, vec![key_col, value_col]);
                let shape = FShape::Map { key, value };
                (shape, map, key_col, value_col, key, value_desc.is_group())
            }
        };
        let default = if plan.presence || !matches!(shape, FShape::Single) {
            Default::Null
        } else {
            self.default(desc, kind)
        };
        Field {
            number: desc.number(),
            kind,
            group: desc.is_group(),
            shape,
            col,
            item,
            value,
            value_group,
            oneof,
            default,
            name: desc.full_name().into(),
        }
    }

    /// The wire kind of one value of field `desc` mapped to `kind`, and its column.
    fn value(&mut self, desc: &FieldDescriptor, kind: &Kind, cols: &mut Cols) -> (K, usize) {
        let plain = |cols: &mut Cols, col: Col| cols.add(col, Shape::Plain(kind_type(kind)));
        let k = match (desc.kind(), kind) {
            (_, Kind::Message(plan)) => {
                let m = self.message(plan, cols);
                return (K::Message(m as u32), self.msgs[m].col);
            }
            (_, Kind::Json) => {
                let message = desc.kind();
                let message = message.as_message().expect("a message field").clone();
                self.json.push(message);
                K::Json(self.json.len() as u32 - 1)
            }
            (_, Kind::Timestamp) => K::Timestamp,
            (_, Kind::Duration) => K::Duration,
            (ProtoKind::Message(m), Kind::Wrapper(_)) => {
                let w = match m.full_name() {
                    "google.protobuf.DoubleValue" => W::Double,
                    "google.protobuf.FloatValue" => W::Float,
                    "google.protobuf.Int64Value" => W::Int64,
                    "google.protobuf.UInt64Value" => W::UInt64,
                    "google.protobuf.Int32Value" => W::Int32,
                    "google.protobuf.UInt32Value" => W::UInt32,
                    "google.protobuf.BoolValue" => W::Bool,
                    "google.protobuf.StringValue" => W::Str,
                    _ => W::Bytes,
                };
                K::Wrapper(w)
            }
            (ProtoKind::Enum(e), _) => {
                let id = match self.enum_ids.get(e.full_name()) {
                    Some(&id) => id,
                    None => {
                        let mut dense: Vec<Option<Box<[u8]>>> = Vec::new();
                        let mut sparse: Vec<(i32, Box<[u8]>)> = Vec::new();
                        for v in e.values() {
                            let name: Box<[u8]> = v.name().as_bytes().into();
                            match usize::try_from(v.number()).ok().filter(|&n| n < 1024) {
                                Some(n) => {
                                    if dense.len() <= n {
                                        dense.resize(n + 1, None);
                                    }
                                    dense[n].get_or_insert(name);
                                }
                                None => {
                                    if !sparse.iter().any(|(k, _)| *k == v.number()) {
                                        sparse.push((v.number(), name));
                                    }
                                }
                            }
                        }
                        sparse.sort_by_key(|(k, _)| *k);
                        self.enums.push(EnumNames {
                            closed: e.parent_file().syntax() == Syntax::Proto2,
                            first: e.values().next().map(|v| v.number()),
                            dense,
                            sparse,
                        });
                        let id = self.enums.len() as u32 - 1;
                        self.enum_ids.insert(e.full_name().to_owned(), id);
                        id
                    }
                };
                K::Enum(id)
            }
            (ProtoKind::Double, _) => K::Double,
            (ProtoKind::Float, _) => K::Float,
            (ProtoKind::Int32, _) => K::Int32,
            (ProtoKind::Int64, _) => K::Int64,
            (ProtoKind::Uint32, _) => K::UInt32,
            (ProtoKind::Uint64, _) => K::UInt64,
            (ProtoKind::Sint32, _) => K::SInt32,
            (ProtoKind::Sint64, _) => K::SInt64,
            (ProtoKind::Fixed32, _) => K::Fixed32,
            (ProtoKind::Fixed64, _) => K::Fixed64,
            (ProtoKind::Sfixed32, _) => K::SFixed32,
            (ProtoKind::Sfixed64, _) => K::SFixed64,
            (ProtoKind::Bool, _) => K::Bool,
            (ProtoKind::String, _) => K::Str,
            (ProtoKind::Bytes, _) => K::Bytes,
            (ProtoKind::Message(_), _) => unreachable!("message kinds are matched above"),
        };
        let col = match kind_type(kind) {
            arrow_schema::DataType::Boolean => plain(cols, Col::Bool(Prim::default())),
            arrow_schema::DataType::Int32 => plain(cols, Col::I32(Prim::default())),
            arrow_schema::DataType::Int64
            | arrow_schema::DataType::Timestamp(..)
            | arrow_schema::DataType::Duration(_) => plain(cols, Col::I64(Prim::default())),
            arrow_schema::DataType::UInt32 => plain(cols, Col::U32(Prim::default())),
            arrow_schema::DataType::UInt64 => plain(cols, Col::U64(Prim::default())),
            arrow_schema::DataType::Float32 => plain(cols, Col::F32(Prim::default())),
            arrow_schema::DataType::Float64 => plain(cols, Col::F64(Prim::default())),
            arrow_schema::DataType::Binary => plain(cols, Col::Bin(Var::default())),
            _ => plain(cols, Col::Str(Var::default())),
        };
        (k, col)
    }

    /// The default of a field without presence, as its raw wire value or bytes.
    fn default(&self, desc: &FieldDescriptor, kind: K) -> Default {
        match (desc.default_value(), kind) {
            (Value::Bool(b), _) => Default::Raw(u64::from(b)),
            (Value::I32(v), _) => Default::Raw(v as i64 as u64),
            (Value::I64(v), _) => Default::Raw(v as u64),
            (Value::U32(v), _) => Default::Raw(u64::from(v)),
            (Value::U64(v), _) => Default::Raw(v),
            (Value::F32(v), _) => Default::Raw(u64::from(v.to_bits())),
            (Value::F64(v), _) => Default::Raw(v.to_bits()),
            (Value::EnumNumber(n), _) => Default::Raw(n as i64 as u64),
            (Value::String(s), _) => Default::Bytes(s.into_bytes().into()),
            (Value::Bytes(b), _) => Default::Bytes(b.to_vec().into()),
            _ => Default::Null,
        }
    }
}
