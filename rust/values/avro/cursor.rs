//! The bytes of one Avro payload as the compiled decoder (`program.rs`) reads them:
//! zigzag varints (eight bytes at once where eight are left), lengths checked against the
//! bytes left, decimals sign-extended to their column's width, and why a payload stopped
//! decoding ([`Bad`]), kept in the cursor so that each step returns only whether it went on.

/// Why a payload did not decode.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bad {
    /// The payload ends inside its value.
    Eof,
    /// A varint longer than 10 bytes or beyond 64 bits.
    Varint,
    /// An int beyond 32 bits.
    Int(u64),
    NegativeLength(i64),
    Utf8,
    UnionBranch(i64, usize),
    EnumIndex(i64, u32),
    /// Writer enum index whose symbol the reader does not have (and no default).
    EnumSymbol(u32, i32),
    BlockSize(i64),
    /// `count` items of at least `min` bytes where `left` bytes are left.
    Items {
        count: u64,
        min: u32,
        left: usize,
    },
    ZeroSizeItems,
    /// A decimal of `len` bytes that does not fit in `width`.
    Decimal {
        len: usize,
        width: usize,
    },
    Deep,
    /// Arrow's 32-bit offsets of a column would overflow within this batch.
    Offsets,
    Fail(u32),
    /// Bytes left after the value.
    Trailing(usize),
}

/// A step stopped: the payload does not decode (why is in its [`Cursor`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stop;

pub(crate) type Step<T = ()> = Result<T, Stop>;

/// A payload's bytes being read, and why they stopped decoding.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    bad: Option<Bad>,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor {
            buf,
            pos: 0,
            bad: None,
        }
    }

    #[inline]
    pub fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Notes why the payload does not decode.
    #[cold]
    #[inline(never)]
    pub(crate) fn stop(&mut self, why: Bad) -> Stop {
        self.bad = Some(why);
        Stop
    }

    /// Why the payload stopped decoding.
    pub fn why(&mut self) -> Bad {
        self.bad.take().unwrap_or(Bad::Eof)
    }

    /// An unsigned varint (up to 10 bytes, 64 bits).
    #[inline(always)]
    pub(crate) fn varint(&mut self) -> Step<u64> {
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            _ => self.varint_long(),
        }
    }

    /// A varint of more than one byte: up to 8 (56 bits) read at once where 8 bytes are left,
    /// their 7-bit groups put together without a loop; longer ones one byte at a time.
    #[inline]
    fn varint_long(&mut self) -> Step<u64> {
        if let Some(bytes) = self.buf.get(self.pos..self.pos + 8) {
            let word = u64::from_le_bytes(bytes.try_into().unwrap_or([0xff; 8]));
            // A byte without its high bit ends the varint.
            let ends = !word & 0x8080_8080_8080_8080;
            if ends != 0 {
                let len = ends.trailing_zeros() / 8 + 1;
                let kept = if len == 8 {
                    word
                } else {
                    word & ((1u64 << (8 * len)) - 1)
                };
                let mut x = kept & 0x7f7f_7f7f_7f7f_7f7f;
                x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
                x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
                x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
                self.pos += len as usize;
                return Ok(x);
            }
        }
        self.varint_slow()
    }

    #[cold]
    #[inline(never)]
    fn varint_slow(&mut self) -> Step<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos + i) else {
                return Err(self.stop(Bad::Eof));
            };
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                if i == 9 && b > 1 {
                    break;
                }
                self.pos += i + 1;
                return Ok(value);
            }
        }
        Err(self.stop(Bad::Varint))
    }

    #[inline(always)]
    pub fn long(&mut self) -> Step<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// An int: a varint of at most 32 bits (as `arrow-avro` reads it).
    #[inline(always)]
    pub fn int(&mut self) -> Step<i32> {
        let v = self.varint()?;
        let Ok(v) = u32::try_from(v) else {
            return Err(self.stop(Bad::Int(v)));
        };
        Ok((v >> 1) as i32 ^ -((v & 1) as i32))
    }

    #[inline(always)]
    pub fn take(&mut self, n: usize) -> Step<&'a [u8]> {
        if self.left() < n {
            return Err(self.stop(Bad::Eof));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline(always)]
    pub(crate) fn array<const N: usize>(&mut self) -> Step<[u8; N]> {
        match self.buf.get(self.pos..self.pos + N) {
            Some(b) => {
                self.pos += N;
                Ok(b.try_into().unwrap_or([0; N]))
            }
            None => Err(self.stop(Bad::Eof)),
        }
    }

    /// A length-prefixed `bytes` or `string`.
    #[inline(always)]
    pub fn bytes(&mut self) -> Step<&'a [u8]> {
        let n = self.long()?;
        if n < 0 {
            return Err(self.stop(Bad::NegativeLength(n)));
        }
        self.take(n as usize)
    }

    /// A `bytes` or `string` appended to `data` (checked to be UTF-8 if `utf8`); its length.
    #[inline(always)]
    pub(crate) fn bytes_into(&mut self, data: &mut Vec<u8>, utf8: bool) -> Step<usize> {
        let n = self.long()?;
        if n < 0 {
            return Err(self.stop(Bad::NegativeLength(n)));
        }
        let n = n as usize;
        let start = self.pos;
        if self.left() < n {
            return Err(self.stop(Bad::Eof));
        }
        if utf8 && std::str::from_utf8(&self.buf[start..start + n]).is_err() {
            return Err(self.stop(Bad::Utf8));
        }
        if n <= 16 && self.buf.len() - start >= 16 {
            // Short strings (most of them) copied as 16 bytes, the extra ones not kept: a
            // move of fixed size rather than a call.
            data.reserve(16);
            let len = data.len();
            // SAFETY: `data` has room for 16 more bytes (just reserved) and `buf` has 16
            // bytes from `start` (checked); of the 16 bytes written, the first `n` (all from
            // `buf`) become `data`'s.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.buf.as_ptr().add(start),
                    data.as_mut_ptr().add(len),
                    16,
                );
                data.set_len(len + n);
            }
        } else {
            data.extend_from_slice(&self.buf[start..start + n]);
        }
        self.pos += n;
        Ok(n)
    }

    #[inline(always)]
    pub(crate) fn byte(&mut self) -> Step<u8> {
        let Some(&b) = self.buf.get(self.pos) else {
            return Err(self.stop(Bad::Eof));
        };
        self.pos += 1;
        Ok(b)
    }

    /// A decimal's bytes widened to `N` (see [`sign_extend`]).
    #[inline(always)]
    pub(crate) fn decimal<const N: usize>(&mut self, raw: &[u8]) -> Step<[u8; N]> {
        match sign_extend::<N>(raw) {
            Ok(b) => Ok(b),
            Err(why) => Err(self.stop(why)),
        }
    }
}

/// `raw` (big-endian two's complement) sign-extended to `N` bytes, or, if longer, `N` bytes
/// when the bytes dropped are only its sign.
#[inline]
fn sign_extend<const N: usize>(raw: &[u8]) -> Result<[u8; N], Bad> {
    let len = raw.len();
    if len == N {
        return Ok(raw.try_into().unwrap_or([0; N]));
    }
    let negative = raw.first().is_some_and(|b| b & 0x80 != 0);
    let sign = if negative { 0xff } else { 0 };
    let mut out = [sign; N];
    if len > N {
        let extra = len - N;
        let kept_negative = raw[extra] & 0x80 != 0;
        if raw[..extra].iter().any(|&b| b != sign) || kept_negative != negative {
            return Err(Bad::Decimal { len, width: N });
        }
        out.copy_from_slice(&raw[extra..]);
    } else {
        out[N - len..].copy_from_slice(raw);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_as_avro_writes_them() {
        let mut out = Vec::new();
        for v in [0i64, -1, 1, 63, -64, 64, 1 << 40, i64::MAX, i64::MIN] {
            crate::format::varint::write_varlong(&mut out, v);
        }
        let mut c = Cursor::new(&out);
        for v in [0i64, -1, 1, 63, -64, 64, 1 << 40, i64::MAX, i64::MIN] {
            assert_eq!(c.long().unwrap(), v);
        }
        assert_eq!(c.left(), 0);
        let long = |bytes: &[u8]| {
            let mut c = Cursor::new(bytes);
            c.long().map_err(|_| c.why())
        };
        // An int beyond 32 bits, an 11-byte varint, a 10th byte over 1, a truncated varint.
        let mut c = Cursor::new(&[0x80, 0x80, 0x80, 0x80, 0x20]);
        assert!(c.int().is_err() && matches!(c.why(), Bad::Int(_)));
        assert_eq!(long(&[0xff; 11]), Err(Bad::Varint));
        let mut ten = [0xff; 10];
        ten[9] = 2;
        assert_eq!(long(&ten), Err(Bad::Varint));
        assert_eq!(long(&[0x80, 0x80]), Err(Bad::Eof));
        // Short buffers take the slow path alike.
        assert_eq!(long(&[0xac, 0x02]), Ok(150));
        // Every length, read 8 bytes at once (with bytes after it) or one at a time (at the
        // end of the buffer).
        for shift in 0..64 {
            for v in [
                (1i64 << shift).wrapping_sub(1),
                1i64 << shift,
                (1i64 << shift).wrapping_neg(),
                !(1i64 << shift),
            ] {
                let mut bytes = Vec::new();
                crate::format::varint::write_varlong(&mut bytes, v);
                let n = bytes.len();
                assert_eq!(long(&bytes), Ok(v));
                bytes.extend([0x80; 12]);
                let mut c = Cursor::new(&bytes);
                assert_eq!(c.long(), Ok(v));
                assert_eq!(c.left(), 12, "{v}: {n} bytes");
            }
        }
    }

    #[test]
    fn decimals_sign_extend_and_refuse_what_does_not_fit() {
        assert_eq!(
            i128::from_be_bytes(sign_extend::<16>(&[0xff, 0x38]).unwrap()),
            -200
        );
        assert_eq!(i128::from_be_bytes(sign_extend::<16>(&[]).unwrap()), 0);
        let mut wide = vec![0xff; 4];
        wide.extend([0xff; 15]);
        wide.push(0x38);
        assert_eq!(i128::from_be_bytes(sign_extend::<16>(&wide).unwrap()), -200);
        let mut big = vec![0x01];
        big.extend([0; 16]);
        assert!(sign_extend::<16>(&big).is_err());
        // The dropped bytes are the sign, but the kept first byte's sign differs.
        let mut flip = vec![0x00];
        flip.extend([0x80; 16]);
        assert!(sign_extend::<16>(&flip).is_err());
    }
}
