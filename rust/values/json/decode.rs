//! JSON payloads straight into Arrow builders: the reader schema's [`Shape`] compiled once into
//! a flat [`Plan`] (a node per Arrow array, struct fields found by a hash of their name, the
//! next declared field tried first), and a [`State`] that runs it over each payload with the
//! tokenizer of `scan.rs`, appending to one builder per node.
//!
//! A payload that does not decode leaves nothing behind: its row's values are cut off every
//! builder (each node's length before the row is the parent's, so no bookkeeping is needed on
//! the good path) and a null stands in its place. Values follow arrow-json's readings, which
//! kafkalog used before (`oracle.rs`): a string holding a number is read into a number
//! column, a number with a fraction into an integer column is truncated, a number into a
//! timestamp column is microseconds, and so on; each such reading calls the same function
//! arrow-json calls.

use std::sync::Arc;

use arrow_array::types::{Date32Type, Float64Type, Int64Type};
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, ListArray, StringArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_cast::parse::Parser;
use num_traits::NumCast;

use crate::error::{Error, ErrorKind, Result};
use crate::values::json::plan::{head, head_at, Kind, Node, Plan, SKIP};
use crate::values::json::scan::{syntax, Canonical, Cursor, Fault, Key, Number, Unescaped};

/// The builders of one node. Only the vectors of the node's kind are used.
#[derive(Default)]
struct Column {
    valid: Vec<bool>,
    /// Int64 and Timestamp (microseconds).
    i64s: Vec<i64>,
    /// Date32 (days).
    i32s: Vec<i32>,
    f64s: Vec<f64>,
    bools: Vec<bool>,
    /// Utf8, Text and List: one more than values.
    offsets: Vec<i32>,
    /// Utf8 and Text.
    bytes: Vec<u8>,
}

/// A decoder's builders and scratch buffers, kept from batch to batch.
pub struct State {
    columns: Vec<Column>,
    /// Per struct field: the object it was last seen in (`generation`), for duplicate keys
    /// and the fields an object leaves out.
    seen: Vec<u32>,
    generation: u32,
    /// Per struct field: the field (index in its struct) that followed it in the last object,
    /// and per struct node the field that came first: the key looked for first.
    next: Vec<u32>,
    first: Vec<u32>,
    /// Keys with escapes, unescaped.
    key: Vec<u8>,
    /// Strings read into number, date and timestamp columns.
    text: Vec<u8>,
    /// Containers open while a value is skipped.
    stack: Vec<u8>,
    canonical: Canonical,
    /// Containers open around the value being decoded.
    depth: usize,
    /// Values and bytes per node in the last batch, and its payloads: the next is sized so.
    last: Vec<(usize, usize)>,
    last_rows: usize,
}

/// How a value that is not null fits nowhere: "expected X, got Y".
#[cold]
#[inline(never)]
fn mismatch(expected: &str, first: u8) -> Fault {
    let got = match first {
        b'{' => "an object",
        b'[' => "an array",
        b'"' => "a string",
        b't' | b'f' => "a boolean",
        b'-' | b'0'..=b'9' => "a number",
        _ => "no value",
    };
    Fault::Type(format!("expected {expected}, got {got}"))
}

#[cold]
#[inline(never)]
fn unreadable(what: &str, text: &[u8]) -> Fault {
    Fault::Type(format!(
        "{:?} is not {what}",
        String::from_utf8_lossy(&text[..text.len().min(64)])
    ))
}

/// A number's text as an `i64`, as arrow-json reads it: exactly, or as a float truncated when
/// that is in range.
fn i64_of(text: &[u8]) -> Option<i64> {
    lexical_core::parse::<i64>(text).ok().or_else(|| {
        lexical_core::parse::<f64>(text)
            .ok()
            .and_then(NumCast::from)
    })
}

impl State {
    /// Builders for `plan`.
    pub fn new(plan: &Plan) -> State {
        let mut columns: Vec<Column> = plan.nodes.iter().map(|_| Column::default()).collect();
        for (column, node) in columns.iter_mut().zip(&plan.nodes) {
            if matches!(node.kind, Kind::Utf8 | Kind::Text | Kind::List) {
                column.offsets.push(0);
            }
        }
        State {
            columns,
            seen: vec![0; plan.fields.len()],
            generation: 0,
            next: {
                // At first, the next declared field.
                let mut next = vec![0; plan.fields.len()];
                let structs = plan.nodes.iter();
                for node in structs.filter(|n| matches!(n.kind, Kind::Struct | Kind::Skip)) {
                    for i in 0..node.all {
                        next[(node.first + i) as usize] = i + 1;
                    }
                }
                next
            },
            first: vec![0; plan.nodes.len()],
            key: Vec::new(),
            text: Vec::new(),
            stack: Vec::new(),
            canonical: Canonical::default(),
            depth: 0,
            last: vec![(0, 0); plan.nodes.len()],
            last_rows: 0,
        }
    }

    /// Makes room for `rows` payloads, as many values per payload as the last batch had.
    pub fn reserve(&mut self, plan: &Plan, rows: usize) {
        let scale = |n: usize| {
            if self.last_rows == 0 {
                0
            } else {
                // A little more than the last batch's rate, so that a similar batch fits.
                (n as u128 * rows as u128 / self.last_rows as u128) as usize + n / 16 + 8
            }
        };
        for (id, node) in plan.nodes.iter().enumerate() {
            let (values, bytes) = if id == 0 {
                (rows, scale(self.last[0].1))
            } else {
                (scale(self.last[id].0), scale(self.last[id].1))
            };
            let column = &mut self.columns[id];
            column.valid.reserve(values);
            match node.kind {
                Kind::Int64 | Kind::Timestamp => column.i64s.reserve(values),
                Kind::Date32 => column.i32s.reserve(values),
                Kind::Float64 => column.f64s.reserve(values),
                Kind::Boolean => column.bools.reserve(values),
                Kind::Utf8 | Kind::Text => {
                    column.offsets.reserve(values);
                    column.bytes.reserve(bytes);
                }
                Kind::List => column.offsets.reserve(values),
                Kind::Struct | Kind::Skip => {}
            }
        }
    }

    /// Appends one payload as a row; on a fault the row is null and nothing of it is left.
    pub fn row(&mut self, plan: &Plan, bytes: &[u8]) -> std::result::Result<(), Fault> {
        let row = self.columns[0].valid.len();
        let mut cur = Cursor::new(bytes);
        self.depth = 0;
        let mut result = self.value(plan, &mut cur, 0);
        if let Err(Fault::Type(_)) = result {
            // Not a fit; but it must still be one JSON document (that fault comes first).
            cur.pos = 0;
            if let Err(e) = cur.skip(&mut self.stack) {
                result = Err(e);
            }
        }
        if !matches!(result, Err(Fault::Syntax(_))) {
            cur.peek_value();
            if cur.pos < bytes.len() {
                result = Err(syntax("bytes after the document", cur.pos));
            }
        }
        if result.is_err() {
            self.truncate(plan, 0, row);
            self.null(plan, 0);
        }
        result
    }

    /// A payload that is not there (or not decoded): a null row.
    pub fn null_row(&mut self, plan: &Plan) {
        self.null(plan, 0);
    }

    /// Whether any offsets have gone past what Arrow's 32-bit offsets hold.
    pub fn too_large(&self) -> bool {
        self.columns.iter().any(|c| {
            c.bytes.len() > i32::MAX as usize
                || c.offsets.len() > i32::MAX as usize
                || c.offsets.last().is_some_and(|&o| o < 0)
        })
    }

    fn value(
        &mut self,
        plan: &Plan,
        cur: &mut Cursor<'_>,
        id: usize,
    ) -> std::result::Result<(), Fault> {
        let node = &plan.nodes[id];
        let first = cur.peek_value();
        if first == b'n' {
            cur.literal(b"null")?;
            self.null(plan, id);
            return Ok(());
        }
        match node.kind {
            Kind::Int64 => {
                let v = match first {
                    b'-' | b'0'..=b'9' => {
                        let n = cur.number()?;
                        match n.small_integer() {
                            Some(v) => v,
                            None => {
                                let text = &cur.buf[n.start..n.end];
                                i64_of(text).ok_or_else(|| unreadable("an int64", text))?
                            }
                        }
                    }
                    b'"' => {
                        self.string_text(cur)?;
                        let s = std::str::from_utf8(&self.text).unwrap_or("");
                        <Int64Type as Parser>::parse(s)
                            .ok_or_else(|| unreadable("an int64", &self.text))?
                    }
                    b => return Err(mismatch("an integer", b)),
                };
                let column = &mut self.columns[id];
                column.i64s.push(v);
                column.valid.push(true);
            }
            Kind::Float64 => {
                let v = match first {
                    b'-' | b'0'..=b'9' => {
                        let n = cur.number()?;
                        match n.fast_f64() {
                            Some(v) => v,
                            None => slow_f64(cur, &n)?,
                        }
                    }
                    b'"' => {
                        self.string_text(cur)?;
                        let s = std::str::from_utf8(&self.text).unwrap_or("");
                        <Float64Type as Parser>::parse(s)
                            .ok_or_else(|| unreadable("a float64", &self.text))?
                    }
                    b => return Err(mismatch("a number", b)),
                };
                let column = &mut self.columns[id];
                column.f64s.push(v);
                column.valid.push(true);
            }
            Kind::Boolean => {
                let v = match first {
                    b't' => {
                        cur.literal(b"true")?;
                        true
                    }
                    b'f' => {
                        cur.literal(b"false")?;
                        false
                    }
                    b => return Err(mismatch("a boolean", b)),
                };
                let column = &mut self.columns[id];
                column.bools.push(v);
                column.valid.push(true);
            }
            Kind::Utf8 => {
                if first != b'"' {
                    return Err(mismatch("a string", first));
                }
                let column = &mut self.columns[id];
                cur.string(&mut Unescaped(&mut column.bytes))?;
                column.offsets.push(column.bytes.len() as i32);
                column.valid.push(true);
            }
            Kind::Timestamp => {
                let v = match first {
                    b'-' | b'0'..=b'9' => {
                        // Microseconds as they are, as arrow-json reads a number (a float
                        // truncated, saturating).
                        let n = cur.number()?;
                        match n.small_integer() {
                            Some(v) => v,
                            None => {
                                let text = &cur.buf[n.start..n.end];
                                lexical_core::parse::<i64>(text)
                                    .or_else(|_| lexical_core::parse::<f64>(text).map(|x| x as i64))
                                    .map_err(|_| unreadable("a timestamp", text))?
                            }
                        }
                    }
                    b'"' => {
                        self.string_text(cur)?;
                        match date_time_micros(&self.text) {
                            Some(v) => v,
                            None => {
                                let s = std::str::from_utf8(&self.text).unwrap_or("");
                                arrow_cast::parse::string_to_datetime(&chrono::Utc, s)
                                    .map(|t| t.timestamp_micros())
                                    .map_err(|_| unreadable("a date-time", &self.text))?
                            }
                        }
                    }
                    b => return Err(mismatch("a date-time string", b)),
                };
                let column = &mut self.columns[id];
                column.i64s.push(v);
                column.valid.push(true);
            }
            Kind::Date32 => {
                let v = match first {
                    b'-' | b'0'..=b'9' => {
                        // Days as they are, as arrow-json reads a number.
                        let n = cur.number()?;
                        let text = &cur.buf[n.start..n.end];
                        let v = match n.small_integer() {
                            Some(v) => i32::try_from(v).ok(),
                            None => lexical_core::parse::<i32>(text).ok().or_else(|| {
                                lexical_core::parse::<f64>(text)
                                    .ok()
                                    .and_then(NumCast::from)
                            }),
                        };
                        v.ok_or_else(|| unreadable("a date32", text))?
                    }
                    b'"' => {
                        self.string_text(cur)?;
                        let s = std::str::from_utf8(&self.text).unwrap_or("");
                        <Date32Type as Parser>::parse(s)
                            .ok_or_else(|| unreadable("a date", &self.text))?
                    }
                    b => return Err(mismatch("a date string", b)),
                };
                let column = &mut self.columns[id];
                column.i32s.push(v);
                column.valid.push(true);
            }
            Kind::Text => {
                let column = &mut self.columns[id];
                self.canonical.value(cur, &mut column.bytes, self.depth)?;
                column.offsets.push(column.bytes.len() as i32);
                column.valid.push(true);
            }
            Kind::Skip => self.skip(plan, cur, id as u32)?,
            Kind::Struct => {
                if first != b'{' {
                    return Err(mismatch("an object", first));
                }
                self.depth += 1;
                let result = self.object(plan, cur, id);
                self.depth -= 1;
                result?;
            }
            Kind::List => {
                if first != b'[' {
                    return Err(mismatch("an array", first));
                }
                self.depth += 1;
                let result = self.list(plan, cur, id);
                self.depth -= 1;
                result?;
            }
        }
        Ok(())
    }

    /// A string read into `self.text` (for the columns that parse it).
    fn string_text(&mut self, cur: &mut Cursor<'_>) -> std::result::Result<(), Fault> {
        self.text.clear();
        cur.string(&mut Unescaped(&mut self.text))
    }

    fn object(
        &mut self,
        plan: &Plan,
        cur: &mut Cursor<'_>,
        id: usize,
    ) -> std::result::Result<(), Fault> {
        cur.pos += 1;
        let node = &plan.nodes[id];
        let (first, count) = (node.first as usize, node.count as usize);
        let row = self.columns[id].valid.len();
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.seen.fill(0);
            self.generation = 1;
        }
        let generation = self.generation;
        let mut seen = 0;
        let mut hint = self.first[id] as usize;
        let mut previous: Option<usize> = None;
        // Fields whose value did not fit (a later value under the same key may replace it).
        let mut unfit: Vec<(usize, String)> = Vec::new();
        if cur.peek_value() == b'}' {
            cur.pos += 1;
        } else {
            loop {
                let found = self.member(plan, cur, node, hint)?;
                if let Some(f) = found {
                    hint = self.learn(id, &mut previous, first + f, f);
                }
                match found {
                    Some(f) if f < count => {
                        let field = first + f;
                        let child = plan.fields[field].node as usize;
                        if self.seen[field] == generation {
                            // A key given twice: the last value counts, as in serde_json,
                            // arrow-json and Python's json.
                            self.truncate(plan, child, row);
                            unfit.retain(|(g, _)| *g != field);
                        } else {
                            self.seen[field] = generation;
                            seen += 1;
                        }
                        let start = cur.pos;
                        if let Err(fault) = self.value(plan, cur, child) {
                            let Fault::Type(why) = fault else {
                                return Err(fault);
                            };
                            self.truncate(plan, child, row);
                            cur.pos = start;
                            cur.skip(&mut self.stack)?;
                            self.null(plan, child);
                            unfit.push((field, why));
                        }
                    }
                    Some(f) => self.skip(plan, cur, plan.fields[first + f].node)?,
                    None => cur.skip_value(&mut self.stack)?,
                }
                if !cur.next_member()? {
                    break;
                }
            }
        }
        if seen < count {
            for field in first..first + count {
                if self.seen[field] != generation {
                    self.null(plan, plan.fields[field].node as usize);
                }
            }
        }
        if let Some((field, why)) = unfit.into_iter().next() {
            return Err(Fault::Type(format!("{}: {why}", plan.label(field))));
        }
        self.columns[id].valid.push(true);
        Ok(())
    }

    /// Skips the value of a property not built: an object by its [`Kind::Skip`] node `node`
    /// where it has one (its keys found in place, the order learned), anything else as JSON.
    #[inline(always)]
    fn skip(
        &mut self,
        plan: &Plan,
        cur: &mut Cursor<'_>,
        node: u32,
    ) -> std::result::Result<(), Fault> {
        if node != SKIP && cur.peek_value() == b'{' {
            self.skip_object(plan, cur, node as usize)
        } else {
            cur.skip_value(&mut self.stack)
        }
    }

    /// An object under a property not built, checked as JSON (as [`Cursor::skip`] checks it).
    fn skip_object(
        &mut self,
        plan: &Plan,
        cur: &mut Cursor<'_>,
        id: usize,
    ) -> std::result::Result<(), Fault> {
        cur.pos += 1;
        if cur.peek_value() == b'}' {
            cur.pos += 1;
            return Ok(());
        }
        let node = &plan.nodes[id];
        let first = node.first as usize;
        let mut hint = self.first[id] as usize;
        let mut previous: Option<usize> = None;
        loop {
            match self.member(plan, cur, node, hint)? {
                Some(f) => {
                    hint = self.learn(id, &mut previous, first + f, f);
                    self.skip(plan, cur, plan.fields[first + f].node)?;
                }
                None => cur.skip_value(&mut self.stack)?,
            }
            if !cur.next_member()? {
                return Ok(());
            }
        }
    }

    /// A member's key and its colon in an object of struct `node`: the index of its field,
    /// the `hint`-th compared in place first (None: a property the struct does not have).
    #[inline(always)]
    fn member(
        &mut self,
        plan: &Plan,
        cur: &mut Cursor<'_>,
        node: &Node,
        hint: usize,
    ) -> std::result::Result<Option<usize>, Fault> {
        if cur.peek_value() != b'"' {
            return Err(syntax("expected a key", cur.pos));
        }
        let buf = cur.buf;
        if let Some(end) = plan.key_at(node, hint, buf, cur.pos) {
            // The key expected next and its colon, as they are in the payload.
            cur.pos = end;
            return Ok(Some(hint));
        }
        let found = match cur.key(&mut self.key)? {
            Key::Payload(a, b) => plan.find(node, &buf[a..b], head_at(buf, a, b), hint),
            Key::Scratch => plan.find(node, &self.key, head(&self.key), hint),
        };
        cur.expect(b':', "expected ':'")?;
        Ok(found)
    }

    /// Learns the order of the keys of struct `id` (the next object likely has the same):
    /// its field `f` (`field` in the plan) came after `previous`. The field hinted next.
    #[inline(always)]
    fn learn(&mut self, id: usize, previous: &mut Option<usize>, field: usize, f: usize) -> usize {
        match *previous {
            None => self.first[id] = f as u32,
            Some(p) => self.next[p] = f as u32,
        }
        *previous = Some(field);
        self.next[field] as usize
    }

    fn list(
        &mut self,
        plan: &Plan,
        cur: &mut Cursor<'_>,
        id: usize,
    ) -> std::result::Result<(), Fault> {
        cur.pos += 1;
        let item = plan.nodes[id].first as usize;
        if cur.peek_value() == b']' {
            cur.pos += 1;
        } else {
            loop {
                if let Err(fault) = self.value(plan, cur, item) {
                    return Err(match fault {
                        Fault::Type(why) => Fault::Type(format!("an item: {why}")),
                        fault => fault,
                    });
                }
                match cur.peek_value() {
                    b',' => cur.pos += 1,
                    b']' => {
                        cur.pos += 1;
                        break;
                    }
                    _ => return Err(syntax("expected ',' or ']'", cur.pos)),
                }
            }
        }
        let items = self.columns[item].valid.len();
        let column = &mut self.columns[id];
        column.offsets.push(items as i32);
        column.valid.push(true);
        Ok(())
    }

    /// Appends a null to node `id` (a struct's children get one too).
    fn null(&mut self, plan: &Plan, id: usize) {
        let node = &plan.nodes[id];
        let column = &mut self.columns[id];
        column.valid.push(false);
        match node.kind {
            Kind::Int64 | Kind::Timestamp => column.i64s.push(0),
            Kind::Date32 => column.i32s.push(0),
            Kind::Float64 => column.f64s.push(0.0),
            Kind::Boolean => column.bools.push(false),
            Kind::Utf8 | Kind::Text => column.offsets.push(column.bytes.len() as i32),
            Kind::List => {
                let last = column.offsets.last().copied().unwrap_or(0);
                column.offsets.push(last);
            }
            Kind::Struct => {
                for field in node.first as usize..(node.first + node.count) as usize {
                    self.null(plan, plan.fields[field].node as usize);
                }
            }
            Kind::Skip => {}
        }
    }

    /// Cuts node `id` back to `len` values (and its children to theirs).
    fn truncate(&mut self, plan: &Plan, id: usize, len: usize) {
        let node = &plan.nodes[id];
        let column = &mut self.columns[id];
        // Not cut short when this node already has `len` values: its children (or its bytes)
        // may hold the start of a value that did not end.
        column.valid.truncate(len);
        let offset = |c: &Column| c.offsets.get(len).map_or(0, |&o| o as u32 as usize);
        match node.kind {
            Kind::Int64 | Kind::Timestamp => column.i64s.truncate(len),
            Kind::Date32 => column.i32s.truncate(len),
            Kind::Float64 => column.f64s.truncate(len),
            Kind::Boolean => column.bools.truncate(len),
            Kind::Utf8 | Kind::Text => {
                let end = offset(column);
                column.offsets.truncate(len + 1);
                column.bytes.truncate(end);
            }
            Kind::List => {
                let end = offset(column);
                column.offsets.truncate(len + 1);
                self.truncate(plan, node.first as usize, end);
            }
            Kind::Struct => {
                for field in node.first as usize..(node.first + node.count) as usize {
                    self.truncate(plan, plan.fields[field].node as usize, len);
                }
            }
            Kind::Skip => {}
        }
    }

    /// The batch's array, the builders emptied for the next.
    pub fn finish(&mut self, plan: &Plan) -> Result<ArrayRef> {
        self.last_rows = self.columns[0].valid.len();
        for (last, column) in self.last.iter_mut().zip(&self.columns) {
            *last = (column.valid.len(), column.bytes.len());
        }
        self.build(plan, 0)
    }

    /// Drops what the builders hold.
    pub fn clear(&mut self, plan: &Plan) {
        for id in 0..plan.nodes.len() {
            self.truncate(plan, id, 0);
        }
    }

    fn build(&mut self, plan: &Plan, id: usize) -> Result<ArrayRef> {
        let node = &plan.nodes[id];
        let column = std::mem::take(&mut self.columns[id]);
        let nulls = if column.valid.iter().all(|&v| v) {
            None
        } else {
            Some(NullBuffer::from(column.valid))
        };
        let internal = |e: arrow_schema::ArrowError| Error::new(ErrorKind::Internal, e.to_string());
        let array: ArrayRef = match node.kind {
            Kind::Int64 => Arc::new(Int64Array::new(ScalarBuffer::from(column.i64s), nulls)),
            Kind::Timestamp => Arc::new(
                TimestampMicrosecondArray::new(ScalarBuffer::from(column.i64s), nulls)
                    .with_timezone("UTC"),
            ),
            Kind::Date32 => Arc::new(Date32Array::new(ScalarBuffer::from(column.i32s), nulls)),
            Kind::Float64 => Arc::new(Float64Array::new(ScalarBuffer::from(column.f64s), nulls)),
            Kind::Boolean => Arc::new(BooleanArray::new(
                BooleanBuffer::from(column.bools.as_slice()),
                nulls,
            )),
            Kind::Utf8 | Kind::Text => {
                self.columns[id].offsets.push(0);
                let offsets = OffsetBuffer::new(ScalarBuffer::from(column.offsets));
                Arc::new(
                    StringArray::try_new(offsets, Buffer::from_vec(column.bytes), nulls)
                        .map_err(internal)?,
                )
            }
            Kind::List => {
                self.columns[id].offsets.push(0);
                let offsets = OffsetBuffer::new(ScalarBuffer::from(column.offsets));
                let values = self.build(plan, node.first as usize)?;
                let field = node.item.clone().ok_or_else(|| {
                    Error::new(ErrorKind::Internal, "a list node without its field")
                })?;
                Arc::new(ListArray::try_new(field, offsets, values, nulls).map_err(internal)?)
            }
            Kind::Skip => {
                return Err(Error::new(ErrorKind::Internal, "a skipped object built"));
            }
            Kind::Struct => {
                let mut children = Vec::with_capacity(node.count as usize);
                for field in node.first as usize..(node.first + node.count) as usize {
                    children.push(self.build(plan, plan.fields[field].node as usize)?);
                }
                Arc::new(
                    StructArray::try_new(node.fields.clone(), children, nulls).map_err(internal)?,
                )
            }
        };
        Ok(array)
    }
}

/// Microseconds since the epoch of a date-time in the form producers write,
/// `YYYY-MM-DD[T|t| ]HH:MM:SS[.f…f (1 to 9 digits)][Z|z|±HH:MM]` (no zone: UTC), with the
/// answer arrow-cast's `string_to_datetime` gives; `None` for anything else, which that
/// function then reads (or refuses). Seconds of 60 are left to it too.
#[inline]
pub fn date_time_micros(s: &[u8]) -> Option<i64> {
    let digit = |i: usize| -> Option<i64> {
        let b = *s.get(i)?;
        b.is_ascii_digit().then(|| (b - b'0') as i64)
    };
    let two = |i: usize| Some(digit(i)? * 10 + digit(i + 1)?);
    if s.len() < 19 || s[4] != b'-' || s[7] != b'-' || s[13] != b':' || s[16] != b':' {
        return None;
    }
    if !matches!(s[10], b'T' | b't' | b' ') {
        return None;
    }
    let year = two(0)? * 100 + two(2)?;
    let (month, day) = (two(5)?, two(8)?);
    let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(d) = digit(i) {
            if i - start == 9 {
                return None;
            }
            nanos = nanos * 10 + d;
            i += 1;
        }
        if i == start {
            return None;
        }
        nanos *= 10i64.pow((9 - (i - start)) as u32);
    }
    let offset = match &s[i..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (two(i + 1)?, two(i + 4)?);
            if h > 23 || m > 59 {
                return None;
            }
            let secs = h * 3600 + m * 60;
            if *sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm), March-based years.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(secs * 1_000_000 + nanos / 1000)
}

/// A number into a float64 column the slow way: lexical's correctly rounded reading, as
/// arrow-json reads numbers (the fast path agrees with it wherever it is taken).
#[cold]
fn slow_f64(cur: &Cursor<'_>, n: &Number) -> std::result::Result<f64, Fault> {
    let text = &cur.buf[n.start..n.end];
    lexical_core::parse::<f64>(text).map_err(|_| unreadable("a float64", text))
}
