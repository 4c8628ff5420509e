//! The reader schema's [`Shape`] compiled for `decode.rs`: a flat list of nodes (one per
//! Arrow array, the root first), struct fields found by a hash of their name or, first, by
//! comparing the name expected next in place. Properties a pruned read leaves out stay in their
//! struct's table, marked to be skipped, so that the key order learned from one object to the
//! next runs through them too.

use arrow_schema::{DataType, FieldRef, Fields};

use crate::values::decoder::Wanted;
use crate::values::json::schema::Shape;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int64,
    Float64,
    Boolean,
    Utf8,
    Timestamp,
    Date32,
    Text,
    Struct,
    List,
    /// An object under a property a pruned read skips: its keys are followed (the order
    /// learned), its values skipped.
    Skip,
}

/// One Arrow array of the column.
pub struct Node {
    pub kind: Kind,
    /// Struct: its fields are `fields[first..first + count]`, then the properties skipped up
    /// to `fields[first + all]`. List: the item's node.
    pub first: u32,
    pub count: u32,
    pub all: u32,
    /// Struct: open addressing by key hash, each slot a field index + 1 (0: empty).
    pub table: Box<[u32]>,
    /// Struct: the Arrow fields; List: the item field.
    pub fields: Fields,
    pub item: Option<FieldRef>,
}

pub struct FieldPlan {
    /// The name's first 8 bytes (zero padded), compared before the rest.
    pub word: u64,
    /// Its node ([`Kind::Skip`] for an object skipped), or [`SKIP`] for any other property
    /// not built.
    pub node: u32,
    /// The name has no `"`, `\` or control character: a key is it when its bytes are.
    pub plain: bool,
    /// What follows a key's opening quote when it is this field's name and its colon comes
    /// straight after: the name, `"` and `:` (the name is all but the last two bytes).
    pub member: Box<[u8]>,
    /// `member`'s first 8 bytes (zero padded), and the mask of those it has.
    pub member_word: u64,
    pub member_mask: u64,
}

impl FieldPlan {
    /// The field's name.
    #[inline(always)]
    pub fn name(&self) -> &[u8] {
        &self.member[..self.member.len() - 2]
    }
}

/// The node of a property skipped (its value checked as JSON, not built).
pub const SKIP: u32 = u32::MAX;

/// The column's type compiled into nodes, the root first.
pub struct Plan {
    pub nodes: Vec<Node>,
    pub fields: Vec<FieldPlan>,
    data_type: DataType,
}

/// A key's first 8 bytes, zero padded.
#[inline(always)]
pub fn head(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_le_bytes(b)
}

/// The first 8 bytes of `buf[start..end]`, zero padded, read as one word when the payload
/// has 8 bytes there (a key is always followed by its quote and more).
#[inline(always)]
pub fn head_at(buf: &[u8], start: usize, end: usize) -> u64 {
    let len = end - start;
    match buf.get(start..start + 8) {
        Some(w) => {
            let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            if len >= 8 {
                w
            } else {
                w & ((1u64 << (len * 8)) - 1)
            }
        }
        None => head(&buf[start..end]),
    }
}

/// A key's hash for the field tables, from its length and first 8 bytes.
#[inline(always)]
fn hash(len: usize, word: u64) -> u32 {
    ((word ^ (len as u64).rotate_left(56)).wrapping_mul(0x517c_c1b7_2722_0a95) >> 32) as u32
}

impl Plan {
    /// The plan of `shape`, building the parts `wanted` asks for (as [`Shape::pruned`] keeps
    /// them). The properties left out stay in their struct's table, marked to be skipped, so
    /// that the key order learned from one object to the next runs through them too.
    pub fn new(shape: &Shape, wanted: &Wanted) -> Plan {
        let mut plan = Plan {
            nodes: Vec::new(),
            fields: Vec::new(),
            data_type: shape.pruned(wanted).data_type(),
        };
        plan.add(shape, Some(wanted));
        plan
    }

    /// The column's Arrow type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Adds the nodes of `shape`, the parts `wanted` asks for; `None`: an object skipped
    /// (a [`Kind::Skip`] node, its properties' names and those of its objects, nothing built).
    fn add(&mut self, shape: &Shape, wanted: Option<&Wanted>) -> u32 {
        let id = self.nodes.len() as u32;
        let kind = match shape {
            Shape::Struct(_) if wanted.is_none() => Kind::Skip,
            Shape::Int64 => Kind::Int64,
            Shape::Float64 => Kind::Float64,
            Shape::Boolean => Kind::Boolean,
            Shape::Utf8 => Kind::Utf8,
            Shape::Timestamp => Kind::Timestamp,
            Shape::Date32 => Kind::Date32,
            Shape::Text => Kind::Text,
            Shape::Struct(_) => Kind::Struct,
            Shape::List(_) => Kind::List,
        };
        self.nodes.push(Node {
            kind,
            first: 0,
            count: 0,
            all: 0,
            table: Box::new([]),
            fields: Fields::empty(),
            item: None,
        });
        match shape {
            Shape::Struct(members) => {
                // What of each member is built: what `wanted` asks for, or all of every
                // member where it names none of them (as `Shape::pruned` keeps them); nothing
                // in an object skipped.
                let asked: Vec<Option<&Wanted>> = match wanted {
                    None => vec![None; members.len()],
                    Some(wanted) => members.iter().map(|(n, _)| wanted.field(n)).collect(),
                };
                let asked = match wanted {
                    Some(_) if asked.iter().all(Option::is_none) => {
                        vec![Some(&Wanted::All); members.len()]
                    }
                    _ => asked,
                };
                // The members built first (in the column's order), then the skipped ones.
                let (mut order, skipped): (Vec<_>, Vec<_>) = members
                    .iter()
                    .zip(asked)
                    .map(|((name, member), sub)| (name, member, sub))
                    .partition(|(_, _, sub)| sub.is_some());
                let built = order.len();
                order.extend(skipped);
                let first = self.fields.len();
                for (name, _, _) in &order {
                    let member = [name.as_bytes(), b"\":"].concat();
                    let shown = member.len().min(8);
                    self.fields.push(FieldPlan {
                        word: head(name.as_bytes()),
                        node: SKIP,
                        plain: !name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20),
                        member_word: head(&member),
                        member_mask: u64::MAX >> (64 - 8 * shown),
                        member: member.into(),
                    });
                }
                for (i, (_, member, sub)) in order.iter().enumerate() {
                    if sub.is_some() || matches!(member, Shape::Struct(_)) {
                        let child = self.add(member, *sub);
                        self.fields[first + i].node = child;
                    }
                }
                let size = (order.len() * 2).next_power_of_two().max(4);
                let mut table = vec![0u32; size].into_boxed_slice();
                for (i, (name, _, _)) in order.iter().enumerate() {
                    let key = name.as_bytes();
                    let mut slot = hash(key.len(), head(key)) as usize & (size - 1);
                    while table[slot] != 0 {
                        slot = (slot + 1) & (size - 1);
                    }
                    table[slot] = i as u32 + 1;
                }
                let node = &mut self.nodes[id as usize];
                node.first = first as u32;
                node.count = built as u32;
                node.all = order.len() as u32;
                node.table = table;
                if let (Kind::Struct, Some(wanted)) = (kind, wanted) {
                    let DataType::Struct(fields) = shape.pruned(wanted).data_type() else {
                        unreachable!("a struct shape has a struct type")
                    };
                    node.fields = fields;
                }
            }
            Shape::List(item) => {
                let wanted = wanted.unwrap_or(&Wanted::All);
                let child = self.add(item, Some(wanted));
                let DataType::List(field) = shape.pruned(wanted).data_type() else {
                    unreachable!("a list shape has a list type")
                };
                let node = &mut self.nodes[id as usize];
                node.first = child;
                node.item = Some(field);
            }
            _ => {}
        }
        id
    }

    /// The field of struct `node` named `key` (whose first 8 bytes are `word`): the `hint`-th
    /// first (the field that followed the last one in the previous object), then by hash.
    #[inline(always)]
    pub fn find(&self, node: &Node, key: &[u8], word: u64, hint: usize) -> Option<usize> {
        let first = node.first as usize;
        let same = |f: &FieldPlan| {
            f.word == word
                && f.name().len() == key.len()
                && (key.len() <= 8 || f.name()[8..] == key[8..])
        };
        if hint < node.all as usize && same(&self.fields[first + hint]) {
            return Some(hint);
        }
        let mask = node.table.len() - 1;
        let mut slot = hash(key.len(), word) as usize & mask;
        loop {
            let f = *node.table.get(slot)? as usize;
            if f == 0 {
                return None;
            }
            if same(&self.fields[first + f - 1]) {
                return Some(f - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Where the member at `pos` (its key's opening quote) has its value, past the colon,
    /// when its key is the name of struct `node`'s `hint`-th field byte for byte and the
    /// colon follows the closing quote straight away: a name with no `"`, `\` or control
    /// character is the key exactly when its bytes and a quote follow the opening one. None:
    /// anything else (read the key, then find it).
    #[inline(always)]
    pub fn key_at(&self, node: &Node, hint: usize, buf: &[u8], pos: usize) -> Option<usize> {
        if hint >= node.all as usize {
            return None;
        }
        let f = &self.fields[node.first as usize + hint];
        let start = pos + 1;
        let word = u64::from_le_bytes(buf.get(start..start + 8)?.try_into().ok()?);
        if !f.plain || word & f.member_mask != f.member_word {
            return None;
        }
        let end = start + f.member.len();
        (f.member.len() <= 8 || buf.get(start + 8..end)? == &f.member[8..]).then_some(end)
    }

    pub fn label(&self, field: usize) -> String {
        String::from_utf8_lossy(self.fields[field].name()).into_owned()
    }
}
