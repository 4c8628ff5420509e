//! The JSON tokenizer under the JSON Schema decoder (`decode.rs`): a cursor over one
//! payload, strings (unescaped, or checked and dropped), numbers, values skipped, and values
//! written as their canonical JSON text.
//!
//! The grammar is RFC 8259's, as serde_json accepts it: whitespace is space, tab, CR and LF;
//! strings hold no raw control characters, are UTF-8, and `\u` escapes pair their surrogates;
//! numbers have no leading zeros, no `+`, and a digit on both sides of `.` and after `e`.
//! Nothing here recurses except [`Canonical`], which stops at serde_json's nesting limit.

use std::fmt::Write as _;

use crate::values::json::bytes::{
    digit_run, short_number_end, short_string_end, string_stops, HIGHS,
};

/// The depth at which a container inside a JSON-text value is refused, as serde_json refuses it
/// (its limit of 128 levels, the document's outermost container being level 1).
pub const MAX_TEXT_DEPTH: usize = 128;

/// Why a payload did not decode.
#[derive(Debug)]
pub enum Fault {
    /// It is not one JSON document: that row is an error whatever the schema.
    Syntax(String),
    /// It is JSON, but a value does not fit the column's type.
    Type(String),
}

impl Fault {
    /// The reason, as `value_error` gives it.
    pub fn message(self) -> String {
        match self {
            Fault::Syntax(why) => format!("not JSON: {why}"),
            Fault::Type(why) => format!("does not fit the schema: {why}"),
        }
    }
}

/// A syntax error at byte `at`.
#[cold]
#[inline(never)]
pub fn syntax(what: &str, at: usize) -> Fault {
    Fault::Syntax(format!("{what} at byte {at}"))
}

/// One payload being read.
pub struct Cursor<'a> {
    /// The payload.
    pub buf: &'a [u8],
    /// The next byte to read.
    pub pos: usize,
}

/// Receives a string's content.
pub trait Sink {
    /// Bytes copied as they are (checked UTF-8, no `"`, `\` or control characters).
    fn run(&mut self, bytes: &[u8]);
    /// A character an escape stood for.
    fn escaped(&mut self, c: char);
}

/// Drops the content (the string is still checked).
pub struct Discard;

impl Sink for Discard {
    #[inline(always)]
    fn run(&mut self, _: &[u8]) {}
    #[inline(always)]
    fn escaped(&mut self, _: char) {}
}

/// The content unescaped.
pub struct Unescaped<'v>(pub &'v mut Vec<u8>);

impl Sink for Unescaped<'_> {
    #[inline(always)]
    fn run(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn escaped(&mut self, c: char) {
        let mut b = [0; 4];
        self.0.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }
}

/// The content escaped as serde_json writes strings: `"`, `\` and control characters escaped
/// (`\b`, `\t`, `\n`, `\f`, `\r`, or `\u00xx` in lower-case hex), everything else as it is.
pub struct Escaped<'v>(pub &'v mut Vec<u8>);

impl Sink for Escaped<'_> {
    #[inline(always)]
    fn run(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn escaped(&mut self, c: char) {
        let out = &mut *self.0;
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\r' => out.extend_from_slice(b"\\r"),
            c if (c as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let n = c as usize;
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[n >> 4], HEX[n & 15]]);
            }
            c => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
}

/// Bytes of a number: `[-]int[.frac][e[+-]exp]`, with what the fast paths need.
pub struct Number {
    /// Where its text starts and ends.
    pub start: usize,
    /// Where its text ends.
    pub end: usize,
    /// A leading `-`.
    pub negative: bool,
    /// The significant digits (at most 19 of them) as an integer.
    pub mantissa: u64,
    /// How many significant digits `mantissa` holds.
    pub digits: u32,
    /// The power of ten `mantissa` is scaled by.
    pub exponent: i64,
    /// Digits were dropped (more than 19 significant ones): only the slow paths are exact.
    pub inexact: bool,
    /// No fraction and no exponent.
    pub integer: bool,
}

impl Number {
    /// The value as an `i64` when the fast path is exact: an integer of at most 18 digits.
    #[inline]
    pub fn small_integer(&self) -> Option<i64> {
        if self.integer && !self.inexact && self.digits <= 18 && self.exponent == 0 {
            let v = self.mantissa as i64;
            Some(if self.negative { -v } else { v })
        } else {
            None
        }
    }

    /// The value as the nearest `f64` when the fast path is exact (Clinger's: both the
    /// mantissa and the power of ten are exact doubles, so one rounding gives the nearest).
    #[inline]
    pub fn fast_f64(&self) -> Option<f64> {
        const POW10: [f64; 23] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        ];
        if self.inexact || self.mantissa > (1 << 53) || !(-22..=22).contains(&self.exponent) {
            return None;
        }
        let m = self.mantissa as f64;
        let v = if self.exponent < 0 {
            m / POW10[(-self.exponent) as usize]
        } else {
            m * POW10[self.exponent as usize]
        };
        Some(if self.negative { -v } else { v })
    }
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    /// The byte at the cursor (0 at the end, which no value starts with).
    #[inline(always)]
    pub fn peek(&self) -> u8 {
        self.buf.get(self.pos).copied().unwrap_or(0)
    }

    /// Skips whitespace, then the byte there.
    #[inline(always)]
    pub fn peek_value(&mut self) -> u8 {
        let b = self.peek();
        if b > b' ' {
            return b;
        }
        if b == b' ' {
            // One space, as after most `:` and `,` of printed JSON.
            if let Some(&next) = self.buf.get(self.pos + 1) {
                if next > b' ' {
                    self.pos += 1;
                    return next;
                }
            }
        }
        self.skip_space();
        self.peek()
    }

    #[inline]
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.buf.get(self.pos) {
            self.pos += 1;
        }
    }

    /// After whitespace, `byte` must follow.
    #[inline(always)]
    pub fn expect(&mut self, byte: u8, what: &str) -> Result<(), Fault> {
        if self.peek_value() == byte {
            self.pos += 1;
            Ok(())
        } else {
            Err(syntax(what, self.pos))
        }
    }

    /// The rest of a literal (`true`, `false`, `null`) whose first byte is at the cursor.
    #[inline]
    pub fn literal(&mut self, word: &'static [u8]) -> Result<(), Fault> {
        if self.buf.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(syntax("an invalid literal", self.pos))
        }
    }

    /// A string whose opening quote is at the cursor, its content given to `sink`; the cursor
    /// ends after the closing quote.
    #[inline]
    pub fn string<S: Sink>(&mut self, sink: &mut S) -> Result<(), Fault> {
        self.pos += 1;
        loop {
            let (end, high) = self.plain_run();
            let run = &self.buf[self.pos..end];
            if high && std::str::from_utf8(run).is_err() {
                return Err(syntax("invalid UTF-8 in a string", self.pos));
            }
            sink.run(run);
            self.pos = end;
            match self.buf.get(end) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.escape()?;
                    sink.escaped(c);
                }
                Some(_) => return Err(syntax("a control character in a string", end)),
                None => return Err(syntax("a string not closed", end)),
            }
        }
    }

    /// A string whose opening quote is at the cursor, checked as [`Self::string`] checks it
    /// and skipped.
    #[inline(always)]
    pub fn skip_string(&mut self) -> Result<(), Fault> {
        match short_string_end(self.buf, self.pos + 1) {
            Some(end) => {
                self.pos = end;
                Ok(())
            }
            None => self.string(&mut Discard),
        }
    }

    /// A string whose opening quote is at the cursor, as a slice of the payload when it has
    /// no escapes (the usual case for keys); otherwise unescaped into `scratch`.
    #[inline]
    pub fn key(&mut self, scratch: &mut Vec<u8>) -> Result<Key, Fault> {
        let start = self.pos + 1;
        self.pos = start;
        let (end, high) = self.plain_run();
        if self.buf.get(end) == Some(&b'"') {
            if high && std::str::from_utf8(&self.buf[start..end]).is_err() {
                return Err(syntax("invalid UTF-8 in a string", start));
            }
            self.pos = end + 1;
            return Ok(Key::Payload(start, end));
        }
        scratch.clear();
        self.pos = start - 1;
        self.string(&mut Unescaped(scratch))?;
        Ok(Key::Scratch)
    }

    /// The end of the plain bytes from the cursor (at a `"`, `\`, control byte or the end),
    /// and whether any of them is not ASCII.
    #[inline(always)]
    fn plain_run(&self) -> (usize, bool) {
        let buf = self.buf;
        let mut i = self.pos;
        let mut high = 0u64;
        while let Some(chunk) = buf.get(i..i + 8) {
            let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            let stops = string_stops(w);
            if stops != 0 {
                let k = stops.trailing_zeros() / 8;
                // Only the bytes before the stop count.
                let below = (1u64 << (k * 8)).wrapping_sub(1);
                high |= w & HIGHS & below;
                return (i + k as usize, high != 0);
            }
            high |= w & HIGHS;
            i += 8;
        }
        let mut high = high != 0;
        while let Some(&b) = buf.get(i) {
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            high |= b >= 0x80;
            i += 1;
        }
        (i, high)
    }

    /// An escape after its backslash: the character it stands for.
    fn escape(&mut self) -> Result<char, Fault> {
        let at = self.pos - 1;
        let c = match self.peek() {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.pos += 1;
                let unit = self.hex4()?;
                return match unit {
                    0xD800..=0xDBFF => {
                        if self.buf.get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return Err(syntax("a lone surrogate in an escape", at));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(syntax("a lone surrogate in an escape", at));
                        }
                        let n = 0x1_0000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        char::from_u32(n).ok_or_else(|| syntax("an invalid escape", at))
                    }
                    0xDC00..=0xDFFF => Err(syntax("a lone surrogate in an escape", at)),
                    n => {
                        char::from_u32(u32::from(n)).ok_or_else(|| syntax("an invalid escape", at))
                    }
                };
            }
            _ => return Err(syntax("an invalid escape", at)),
        };
        self.pos += 1;
        Ok(c)
    }

    fn hex4(&mut self) -> Result<u16, Fault> {
        let Some(digits) = self.buf.get(self.pos..self.pos + 4) else {
            return Err(syntax("an escape cut short", self.pos));
        };
        let mut n = 0u16;
        for &d in digits {
            let v = char::from(d)
                .to_digit(16)
                .ok_or_else(|| syntax("an invalid \\u escape", self.pos))?;
            n = n << 4 | v as u16;
        }
        self.pos += 4;
        Ok(n)
    }

    /// A number whose first byte (`-` or a digit) is at the cursor.
    #[inline]
    pub fn number(&mut self) -> Result<Number, Fault> {
        let buf = self.buf;
        let start = self.pos;
        let mut i = start;
        let negative = buf.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let mut mantissa = 0u64;
        let mut digits = 0u32;
        let mut exponent = 0i64;
        let mut inexact = false;
        match buf.get(i) {
            Some(b'0') => {
                i += 1;
                if buf.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(syntax("a number with a leading zero", start));
                }
            }
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = buf.get(i) {
                    if digits < 19 {
                        mantissa = mantissa * 10 + u64::from(d - b'0');
                        digits += 1;
                    } else {
                        exponent += 1;
                        inexact = true;
                    }
                    i += 1;
                }
            }
            _ => return Err(syntax("an invalid number", start)),
        }
        let mut integer = true;
        if buf.get(i) == Some(&b'.') {
            integer = false;
            i += 1;
            let first = i;
            while let Some(&d @ b'0'..=b'9') = buf.get(i) {
                if mantissa == 0 && d == b'0' {
                    exponent -= 1;
                } else if digits < 19 {
                    mantissa = mantissa * 10 + u64::from(d - b'0');
                    digits += 1;
                    exponent -= 1;
                } else {
                    inexact = true;
                }
                i += 1;
            }
            if i == first {
                return Err(syntax("a number without digits after '.'", start));
            }
        }
        if let Some(b'e' | b'E') = buf.get(i) {
            integer = false;
            i += 1;
            let minus = match buf.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let first = i;
            let mut e = 0i64;
            while let Some(&d @ b'0'..=b'9') = buf.get(i) {
                e = (e * 10 + i64::from(d - b'0')).min(1 << 40);
                i += 1;
            }
            if i == first {
                return Err(syntax("a number without digits in its exponent", start));
            }
            exponent += if minus { -e } else { e };
        }
        self.pos = i;
        Ok(Number {
            start,
            end: i,
            negative,
            mantissa,
            digits,
            exponent,
            inexact,
            integer,
        })
    }

    /// A number whose first byte (`-` or a digit) is at the cursor, checked as [`Self::number`]
    /// checks it (the same faults at the same bytes) and skipped without reading its digits.
    #[inline(always)]
    pub fn skip_number(&mut self) -> Result<(), Fault> {
        match short_number_end(self.buf, self.pos) {
            Some(end) => {
                self.pos = end;
                Ok(())
            }
            None => self.skip_number_exactly(),
        }
    }

    /// [`Self::skip_number`] byte by byte: any number, and every fault.
    #[inline(never)]
    fn skip_number_exactly(&mut self) -> Result<(), Fault> {
        let buf = self.buf;
        let start = self.pos;
        let mut i = start;
        if buf.get(i) == Some(&b'-') {
            i += 1;
        }
        match buf.get(i) {
            Some(b'0') => {
                i += 1;
                if buf.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(syntax("a number with a leading zero", start));
                }
            }
            Some(b'1'..=b'9') => i += digit_run(buf, i),
            _ => return Err(syntax("an invalid number", start)),
        }
        if buf.get(i) == Some(&b'.') {
            let n = digit_run(buf, i + 1);
            if n == 0 {
                return Err(syntax("a number without digits after '.'", start));
            }
            i += 1 + n;
        }
        if let Some(b'e' | b'E') = buf.get(i) {
            i += 1;
            if let Some(b'-' | b'+') = buf.get(i) {
                i += 1;
            }
            let n = digit_run(buf, i);
            if n == 0 {
                return Err(syntax("a number without digits in its exponent", start));
            }
            i += n;
        }
        self.pos = i;
        Ok(())
    }

    /// After an object's member: `,` (true: another member follows) or `}` (false: the object
    /// ends), consumed.
    #[inline(always)]
    pub fn next_member(&mut self) -> Result<bool, Fault> {
        match self.peek_value() {
            b',' => {
                self.pos += 1;
                Ok(true)
            }
            b'}' => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(syntax("expected ',' or '}'", self.pos)),
        }
    }

    /// [`Self::skip`], a string, number or literal handled inline.
    #[inline(always)]
    pub fn skip_value(&mut self, stack: &mut Vec<u8>) -> Result<(), Fault> {
        match self.peek_value() {
            b'"' => self.skip_string(),
            b'-' | b'0'..=b'9' => self.skip_number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.skip(stack),
        }
    }

    /// Skips one value (any depth, without recursion: `stack` holds the open containers),
    /// checking it as the grammar requires.
    pub fn skip(&mut self, stack: &mut Vec<u8>) -> Result<(), Fault> {
        stack.clear();
        'value: loop {
            match self.peek_value() {
                b'{' => {
                    self.pos += 1;
                    if self.peek_value() == b'}' {
                        self.pos += 1;
                    } else {
                        stack.push(b'}');
                        self.member_key()?;
                        continue 'value;
                    }
                }
                b'[' => {
                    self.pos += 1;
                    if self.peek_value() == b']' {
                        self.pos += 1;
                    } else {
                        stack.push(b']');
                        continue 'value;
                    }
                }
                b'"' => self.skip_string()?,
                b'-' | b'0'..=b'9' => self.skip_number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return Err(syntax("expected a value", self.pos)),
            }
            // After a value: a comma, or the end of the containers it closes.
            loop {
                let Some(&close) = stack.last() else {
                    return Ok(());
                };
                match self.peek_value() {
                    b',' => {
                        self.pos += 1;
                        if close == b'}' {
                            self.member_key()?;
                        }
                        continue 'value;
                    }
                    b if b == close => {
                        self.pos += 1;
                        stack.pop();
                    }
                    _ => return Err(syntax("expected ',' or the container's end", self.pos)),
                }
            }
        }
    }

    /// A member's key and its colon, skipped.
    fn member_key(&mut self) -> Result<(), Fault> {
        if self.peek_value() != b'"' {
            return Err(syntax("expected a key", self.pos));
        }
        self.string(&mut Discard)?;
        self.expect(b':', "expected ':'")
    }
}

/// A key read by [`Cursor::key`].
#[derive(Clone, Copy)]
pub enum Key {
    /// These bytes of the payload.
    Payload(usize, usize),
    /// The scratch buffer.
    Scratch,
}

/// Writes values as their JSON text the way serde_json's `Value` prints them (kafkalog's
/// JSON-text columns have always been that): compact, object keys sorted by their bytes, a key
/// given twice holding its last value, strings escaped as [`Escaped`] says, numbers as
/// serde_json reads and prints them. Scratch buffers are kept between values.
#[derive(Default)]
pub struct Canonical {
    /// Per nesting level: members' keys and texts, and where each is.
    levels: Vec<(Vec<u8>, Vec<Member>)>,
}

#[derive(Clone, Copy)]
struct Member {
    key: (u32, u32),
    value: (u32, u32),
}

impl Canonical {
    /// Writes the value at the cursor to `out`; `depth` is the number of containers open
    /// around it in the payload.
    pub fn value(
        &mut self,
        cur: &mut Cursor<'_>,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), Fault> {
        match cur.peek_value() {
            b'{' => self.object(cur, out, depth + 1),
            b'[' => {
                if depth + 1 >= MAX_TEXT_DEPTH {
                    return Err(syntax("nesting deeper than 127", cur.pos));
                }
                cur.pos += 1;
                out.push(b'[');
                if cur.peek_value() == b']' {
                    cur.pos += 1;
                } else {
                    loop {
                        self.value(cur, out, depth + 1)?;
                        match cur.peek_value() {
                            b',' => {
                                cur.pos += 1;
                                out.push(b',');
                            }
                            b']' => {
                                cur.pos += 1;
                                break;
                            }
                            _ => return Err(syntax("expected ',' or ']'", cur.pos)),
                        }
                    }
                }
                out.push(b']');
                Ok(())
            }
            b'"' => {
                out.push(b'"');
                cur.string(&mut Escaped(out))?;
                out.push(b'"');
                Ok(())
            }
            b'-' | b'0'..=b'9' => number_text(cur, out),
            b't' => {
                cur.literal(b"true")?;
                out.extend_from_slice(b"true");
                Ok(())
            }
            b'f' => {
                cur.literal(b"false")?;
                out.extend_from_slice(b"false");
                Ok(())
            }
            b'n' => {
                cur.literal(b"null")?;
                out.extend_from_slice(b"null");
                Ok(())
            }
            _ => Err(syntax("expected a value", cur.pos)),
        }
    }

    fn object(
        &mut self,
        cur: &mut Cursor<'_>,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), Fault> {
        if depth >= MAX_TEXT_DEPTH {
            return Err(syntax("nesting deeper than 127", cur.pos));
        }
        cur.pos += 1;
        if cur.peek_value() == b'}' {
            cur.pos += 1;
            out.extend_from_slice(b"{}");
            return Ok(());
        }
        if self.levels.len() <= depth {
            self.levels.resize_with(depth + 1, Default::default);
        }
        let (mut text, mut members) = std::mem::take(&mut self.levels[depth]);
        text.clear();
        members.clear();
        let result = self.members(cur, &mut text, &mut members, depth);
        if result.is_ok() {
            // Sorted by key; of keys given twice, the last (a stable sort keeps their order).
            let key = |m: &Member| &text[m.key.0 as usize..m.key.1 as usize];
            members.sort_by(|a, b| key(a).cmp(key(b)));
            out.push(b'{');
            let mut first = true;
            for (i, m) in members.iter().enumerate() {
                if members.get(i + 1).is_some_and(|next| key(next) == key(m)) {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                out.push(b'"');
                let k = key(m);
                for &b in k {
                    match b {
                        b'"' | b'\\' | 0..=0x1f => Escaped(out).escaped(char::from(b)),
                        b => out.push(b),
                    }
                }
                out.extend_from_slice(b"\":");
                out.extend_from_slice(&text[m.value.0 as usize..m.value.1 as usize]);
            }
            out.push(b'}');
        }
        self.levels[depth] = (text, members);
        result
    }

    fn members(
        &mut self,
        cur: &mut Cursor<'_>,
        text: &mut Vec<u8>,
        members: &mut Vec<Member>,
        depth: usize,
    ) -> Result<(), Fault> {
        loop {
            if cur.peek_value() != b'"' {
                return Err(syntax("expected a key", cur.pos));
            }
            let k0 = text.len() as u32;
            cur.string(&mut Unescaped(text))?;
            let k1 = text.len() as u32;
            cur.expect(b':', "expected ':'")?;
            self.value(cur, text, depth)?;
            members.push(Member {
                key: (k0, k1),
                value: (k1, text.len() as u32),
            });
            if !cur.next_member()? {
                return Ok(());
            }
        }
    }
}

/// A number as serde_json prints what it reads: an integer that fits 64 bits as written, any
/// other number through serde_json itself (so that its reading and printing of floats, big
/// integers and `-0` are kept exactly); a float out of range is an error, as there.
fn number_text(cur: &mut Cursor<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
    let n = cur.number()?;
    let text = &cur.buf[n.start..n.end];
    if n.integer && !n.inexact && n.digits <= 18 && !(n.negative && n.mantissa == 0) {
        out.extend_from_slice(text);
        return Ok(());
    }
    match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(value) => {
            let mut s = String::new();
            let _ = write!(s, "{value}");
            out.extend_from_slice(s.as_bytes());
            Ok(())
        }
        Err(_) => Err(syntax("a number out of range", n.start)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Where a read ends, or its fault.
    fn outcome(r: Result<(), Fault>, cur: &Cursor<'_>) -> String {
        match r {
            Ok(()) => format!("ends at {}", cur.pos),
            Err(f) => f.message(),
        }
    }

    /// The number at the start of `text` read and skipped, as the text is and with 32 more
    /// bytes after it (where the skip looks at 32 bytes at once).
    fn both(text: &[u8]) -> (String, String) {
        let padded = [text, &[b' '; 32][..]].concat();
        let [plain, padded] = [text, &padded[..]].map(|text| {
            let mut a = Cursor::new(text);
            let read = a.number().map(|_| ());
            let read = outcome(read, &a);
            let mut b = Cursor::new(text);
            let skipped = b.skip_number();
            (read, outcome(skipped, &b))
        });
        assert_eq!(plain, padded, "{:?}", String::from_utf8_lossy(text));
        plain
    }

    #[test]
    fn numbers_skipped_as_read() {
        for text in [
            &b"0"[..],
            b"-0",
            b"00",
            b"-",
            b"1.",
            b"1.e5",
            b"1e",
            b"1e+",
            b"12345678901234567890123.4567890123e-12,",
            b"-0.000000001E+9}",
            b"123456789",
            b"12345678",
            b"1234567:",
            b"9\xff",
            b"1/",
            b"1:",
            b"0x10",
        ] {
            let (read, skipped) = both(text);
            assert_eq!(read, skipped, "{:?}", String::from_utf8_lossy(text));
        }
        // Bytes just past the digits' range (and the carry they make) end a run.
        for stop in [b'/', b':', 0xfa, 0xff, 0x39 + 0x80, 0x30 + 0x80] {
            for len in 1..20 {
                let mut text = vec![b'7'; len];
                text.push(stop);
                text.extend_from_slice(b"123456789");
                let (read, skipped) = both(&text);
                assert_eq!(read, skipped, "{text:?}");
                assert_eq!(skipped, format!("ends at {len}"));
            }
        }
    }

    /// The string at the start of `text` read and skipped (the same outcome), as the text is
    /// and with 64 more bytes after it (where the skip looks at 64 bytes at once); the first.
    fn strings(text: &[u8]) -> String {
        let padded = [text, &[b' '; 64][..]].concat();
        let [plain, _] = [text, &padded[..]].map(|text| {
            let mut a = Cursor::new(text);
            let read = a.string(&mut Discard);
            let read = outcome(read, &a);
            let mut b = Cursor::new(text);
            let skipped = b.skip_string();
            assert_eq!(
                read,
                outcome(skipped, &b),
                "{:?}",
                String::from_utf8_lossy(text)
            );
            read
        });
        plain
    }

    #[test]
    fn strings_skipped_as_read() {
        let long = [&b"\""[..], &[b'a'; 70], b"\""].concat();
        for (text, outcome) in [
            (&b"\"\""[..], "ends at 2"),
            (b"\"abc\" ", "ends at 5"),
            (b"\"a\\\"b\"", "ends at 6"),
            (b"\"caf\xc3\xa9\"", "ends at 7"),
            (
                b"\"caf\xc3\"",
                "not JSON: invalid UTF-8 in a string at byte 1",
            ),
            (
                b"\"a\x01\"",
                "not JSON: a control character in a string at byte 2",
            ),
            (b"\"a\x7f\"", "ends at 4"),
            (b"\"abc", "not JSON: a string not closed at byte 4"),
            (&long, "ends at 72"),
        ] {
            assert_eq!(
                strings(text),
                outcome,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        // The quote at each place of the 64 bytes looked at, and just past them.
        for len in 0..70 {
            let text = [&b"\""[..], &vec![b'x'; len], b"\"\"\\"].concat();
            assert_eq!(strings(&text), format!("ends at {}", len + 2));
        }
    }

    /// Up to `max` bytes: mostly from `common`, some from `rare`, some any byte.
    fn texts(common: &[u8], rare: &[u8], max: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                8 => proptest::sample::select(common.to_vec()),
                1 => proptest::sample::select(rare.to_vec()),
                1 => any::<u8>(),
            ],
            0..max,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// A string of any bytes: skipped where it would be read, or refused with the same
        /// fault.
        #[test]
        fn skip_string_agrees_with_string(
            text in texts(b"abc xyz", b"\"\\\x00\x1f\x7f\x80\xc3\xa9\xff", 90)
        ) {
            strings(&[&b"\""[..], &text].concat());
        }

        /// Number-like text (and any byte after it): skipped where it would be read, or refused
        /// with the same fault.
        #[test]
        fn skip_number_agrees_with_number(
            text in texts(b"0123456789", b"-+.eE", 40)
        ) {
            let (read, skipped) = both(&text);
            prop_assert_eq!(read, skipped);
        }
    }
}
