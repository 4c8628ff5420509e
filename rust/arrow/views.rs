//! `binary_view` columns that point into the bytes the decoder read, rather than copies of them
//! (the `binary_view` read option, issue 18).
//!
//! The format layer lends its sink borrowed slices and says nothing about who owns them. Two
//! things here tell the columns that:
//!
//! - `Sources`: which owned Arrow [`Buffer`]s the slices live in. The reader sets the
//!   *backing* (a file's memory map, or the read buffer it just filled) before it feeds the
//!   decoder; a compressed batch's decompressed bytes are *pending* from the format layer's
//!   [`RecordSink::decompressed`](crate::format::batch::RecordSink::decompressed) hook until the
//!   decoder adopts them (`Sources::adopt`) as a fresh buffer of their own. Where a slice lies
//!   is found by pointer difference; one that lies in neither (a caller that set no backing) is
//!   copied into a buffer the column owns, so that a missing backing costs speed, never
//!   correctness.
//! - `Views`: one `BinaryViewArray` being built. Values of up to 12 bytes are inlined in their
//!   view, as Arrow's layout has it; longer ones are (buffer, offset) pairs into the sources.
//!
//! Arrays are assembled with `BinaryViewArray::new_unchecked`: every view is made here from a
//! slice the parser already bounds-checked, located inside its buffer by the checks in
//! `Sources::locate`, so validating each view again would only repeat them.

use crate::format::batch::{BatchDecoder, ByteSpan};
use arrow_array::{ArrayRef, BinaryViewArray};
use arrow_buffer::{Buffer, NullBufferBuilder, ScalarBuffer};
use std::sync::Arc;

/// Values of at most this many bytes live inside their view.
pub(crate) const INLINE: usize = 12;

/// One owned buffer the lent slices may live in, and its place in the arrays of the output batch
/// being built (assigned the first time a view points into it).
struct Slot {
    /// Address of the buffer's first byte, and its length: the range lent slices are looked
    /// for in.
    start: usize,
    len: usize,
    /// The buffer; `None` for decompressed bytes not yet adopted.
    buffer: Option<Buffer>,
    /// Index in [`Sources::buffers`] once a view points into it.
    index: Option<usize>,
}

impl Slot {
    fn of(bytes: &[u8], buffer: Option<Buffer>) -> Slot {
        Slot {
            start: bytes.as_ptr() as usize,
            len: bytes.len(),
            buffer,
            index: None,
        }
    }

    /// Where `bytes` starts in this slot, when all of it lies inside and every position in it
    /// fits a view's 32-bit offset.
    #[inline]
    fn offset_of(&self, bytes: &[u8]) -> Option<u32> {
        let at = (bytes.as_ptr() as usize).checked_sub(self.start)?;
        let end = at.checked_add(bytes.len())?;
        (end <= self.len && end <= u32::MAX as usize).then_some(at as u32)
    }
}

/// The owned buffers that the views of one output batch point into (see the module docs).
#[derive(Default)]
pub(crate) struct Sources {
    /// Buffers views point into; buffer `i` here is buffer `i + 1` of each array (buffer 0 is
    /// the column's own copies).
    buffers: Vec<Buffer>,
    /// Where the bytes the reader feeds live.
    backing: Option<Slot>,
    /// The current batch's decompressed bytes, lent by the format layer until adopted.
    pending: Option<Slot>,
}

/// Where a run of lent bytes lies: the array buffer index and the offset of its first byte.
#[derive(Clone, Copy)]
pub(crate) struct Located {
    buffer: u32,
    offset: u32,
}

impl Sources {
    /// The bytes fed from now on live in `buffer` (`None`: in nothing the columns may keep).
    pub(crate) fn set_backing(&mut self, buffer: Option<Buffer>) {
        let same = match (&self.backing, &buffer) {
            (Some(slot), Some(b)) => slot.start == b.as_ptr() as usize && slot.len == b.len(),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.backing = buffer.map(|b| Slot::of(b.as_slice(), Some(b.clone())));
        }
    }

    /// The format layer decompressed a batch into `bytes`: its records borrow from them.
    pub(crate) fn decompressed(&mut self, bytes: &[u8]) {
        debug_assert!(
            self.pending.as_ref().is_none_or(|p| p.index.is_none()),
            "decompressed bytes a view points into were never adopted"
        );
        self.pending = Some(Slot::of(bytes, None));
    }

    /// After a batch: takes its decompressed bytes from `batches` when a view points into them
    /// (they become a buffer of their own), and forgets them otherwise (the decoder reuses its
    /// buffer).
    pub(crate) fn adopt(&mut self, batches: &mut BatchDecoder) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        let Some(index) = pending.index else {
            return;
        };
        let bytes = batches.take_decompressed();
        // `take_decompressed` moves the very allocation the records were lent from, untouched
        // since: the views' offsets hold in it. Anything else is a bug in the decoder's
        // protocol, and views into the wrong bytes would be unsound, hence a panic.
        assert!(
            bytes.as_ptr() as usize == pending.start && bytes.len() == pending.len,
            "the decoder gave away other bytes than it lent"
        );
        self.buffers[index] = Buffer::from_vec(bytes);
    }

    /// Where `bytes` lies among the sources: the decompressed bytes first, then the backing.
    /// `None` when in neither (the values are then copied).
    #[inline]
    pub(crate) fn locate(&mut self, bytes: &[u8]) -> Option<Located> {
        let buffers = &mut self.buffers;
        for slot in [self.pending.as_mut(), self.backing.as_mut()]
            .into_iter()
            .flatten()
        {
            if let Some(offset) = slot.offset_of(bytes) {
                let index = *slot.index.get_or_insert_with(|| {
                    // A placeholder until adopted, for decompressed bytes.
                    buffers.push(slot.buffer.clone().unwrap_or_else(Buffer::default));
                    buffers.len() - 1
                });
                return Some(Located {
                    buffer: index as u32 + 1,
                    offset,
                });
            }
        }
        None
    }

    /// The buffers of the output batch being built, for a column that points into them.
    fn buffers(&self) -> &[Buffer] {
        debug_assert!(
            self.pending.as_ref().is_none_or(|p| p.index.is_none()),
            "an output batch was finished before its decompressed bytes were adopted"
        );
        &self.buffers
    }

    /// Starts the next output batch (or over, every row dropped): no buffer is pointed into.
    pub(crate) fn finish(&mut self) {
        self.buffers.clear();
        for slot in [self.pending.as_mut(), self.backing.as_mut()]
            .into_iter()
            .flatten()
        {
            slot.index = None;
        }
    }
}

/// A `BinaryViewArray` being built (see the module docs).
pub(crate) struct Views {
    views: Vec<u128>,
    nulls: NullBufferBuilder,
    /// Values copied because they lay in no source: the array's buffer 0.
    copied: Vec<u8>,
    /// Whether any view points into the sources' buffers.
    external: bool,
}

/// The view of an inlined value: its length, then its bytes, zero-padded. `buf[start..]` holds
/// at least `len` (at most [`INLINE`]) bytes.
#[inline(always)]
fn inline_view(buf: &[u8], start: usize, len: usize) -> u128 {
    debug_assert!(len <= INLINE);
    let mut bytes = [0u8; 16];
    if let Some(wide) = buf.get(start..start + INLINE) {
        // A fixed-size copy (a few moves) and a mask, rather than a call to memcpy.
        bytes[4..].copy_from_slice(wide);
        let keep = 32 + 8 * len as u32;
        let mask = if keep == 128 {
            u128::MAX
        } else {
            (1u128 << keep) - 1
        };
        bytes[..4].copy_from_slice(&(len as u32).to_le_bytes());
        return u128::from_le_bytes(bytes) & mask;
    }
    bytes[..4].copy_from_slice(&(len as u32).to_le_bytes());
    bytes[4..4 + len].copy_from_slice(&buf[start..start + len]);
    u128::from_le_bytes(bytes)
}

/// The view of a value of more than [`INLINE`] bytes at `offset` of array buffer `buffer`,
/// whose first bytes are `value`'s.
#[inline(always)]
fn pointing_view(value: &[u8], buffer: u32, offset: u32) -> u128 {
    let prefix = u32::from_le_bytes(value[..4].try_into().unwrap());
    (value.len() as u128) | (prefix as u128) << 32 | (buffer as u128) << 64 | (offset as u128) << 96
}

impl Views {
    pub(crate) fn new() -> Self {
        Views {
            views: Vec::new(),
            nulls: NullBufferBuilder::new(0),
            copied: Vec::new(),
            external: false,
        }
    }

    /// The view of `buf[start..start + len]`, which `at` locates `buf` in (or copied).
    #[inline(always)]
    fn view(&mut self, buf: &[u8], at: Option<Located>, start: usize, len: usize) -> u128 {
        if len <= INLINE {
            return inline_view(buf, start, len);
        }
        let value = &buf[start..start + len];
        match at {
            Some(at) => {
                self.external = true;
                pointing_view(value, at.buffer, at.offset + start as u32)
            }
            None => {
                let offset = self.copied.len() as u32;
                self.copied.extend_from_slice(value);
                pointing_view(value, 0, offset)
            }
        }
    }

    /// Appends one value (`None`: null), looking up where it lies.
    #[inline]
    pub(crate) fn push(&mut self, value: Option<&[u8]>, sources: &mut Sources) {
        match value {
            Some(v) => {
                let at = if v.len() > INLINE {
                    sources.locate(v)
                } else {
                    None
                };
                let view = self.view(v, at, 0, v.len());
                self.views.push(view);
                self.nulls.append_non_null();
            }
            None => {
                self.views.push(0);
                self.nulls.append_null();
            }
        }
    }

    /// Appends the fields `spans` point at in `buf` (a run of records), which `at` locates.
    #[inline]
    pub(crate) fn extend(
        &mut self,
        buf: &[u8],
        at: Option<Located>,
        spans: impl ExactSizeIterator<Item = ByteSpan> + Clone,
    ) {
        let n = spans.len();
        self.views.reserve(n);
        let mut nulls = false;
        for span in spans.clone() {
            let view = if span.is_null() {
                nulls = true;
                0
            } else {
                self.view(buf, at, span.start as usize, span.len as usize)
            };
            self.views.push(view);
        }
        if nulls {
            for span in spans {
                self.nulls.append(!span.is_null());
            }
        } else {
            self.nulls.append_n_non_nulls(n);
        }
    }

    pub(crate) fn truncate(&mut self, rows: usize) {
        // Copies of the rows dropped stay in `copied` (nothing points at them) until the
        // output batch is finished; a rolled-back batch is rare.
        self.views.truncate(rows);
        self.nulls.truncate(rows);
        if rows == 0 {
            self.copied.clear();
            self.external = false;
        }
    }

    /// The array of the values pushed; starts the next one at this one's size.
    pub(crate) fn finish(&mut self, sources: &Sources) -> ArrayRef {
        let capacity = self.views.len();
        let views = std::mem::replace(&mut self.views, Vec::with_capacity(capacity));
        let copied = std::mem::take(&mut self.copied);
        let mut buffers = Vec::with_capacity(1 + sources.buffers.len());
        buffers.push(Buffer::from_vec(copied));
        if std::mem::take(&mut self.external) {
            buffers.extend(sources.buffers().iter().cloned());
        }
        let nulls = self.nulls.finish();
        // SAFETY: `try_new` would accept these parts. Every view was made above from a value
        // the parser bounds-checked: of at most 12 bytes, inlined with its length and zero
        // padding (`inline_view`); or longer, pointing at buffer 0 (`copied`, where it was just
        // appended at that offset) or at buffer `i + 1` = `sources.buffers[i]`, which
        // `Sources::locate` found to hold the whole value at that offset (it checked the
        // value's range against the buffer's), with the prefix taken from the value itself.
        // Those buffers are the bytes located: the backing buffer itself, or decompressed
        // bytes adopted by `Sources::adopt`, which checks that they are the allocation lent.
        // The number of views and of null bits is the same (one each per push).
        let array =
            unsafe { BinaryViewArray::new_unchecked(ScalarBuffer::from(views), buffers, nulls) };
        Arc::new(array)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn values(array: &ArrayRef) -> Vec<Option<Vec<u8>>> {
        let a = array.as_any().downcast_ref::<BinaryViewArray>().unwrap();
        a.to_data().validate_full().unwrap();
        a.iter().map(|v| v.map(<[u8]>::to_vec)).collect()
    }

    fn span(start: usize, len: usize) -> ByteSpan {
        ByteSpan {
            start: start as u32,
            len: len as i32,
        }
    }

    #[test]
    fn inline_views_are_zero_padded_whatever_follows() {
        let buf: Vec<u8> = (1..=40).collect();
        for len in 0..=INLINE {
            for start in [0, 20, 40 - len] {
                let v = inline_view(&buf, start, len);
                assert_eq!(v as u32 as usize, len);
                let bytes = v.to_le_bytes();
                assert_eq!(&bytes[4..4 + len], &buf[start..start + len]);
                assert!(bytes[4 + len..].iter().all(|&b| b == 0), "{len} at {start}");
            }
        }
    }

    #[test]
    fn views_point_into_the_backing_and_copy_what_lies_elsewhere() {
        let backing = Buffer::from_vec((0..200u8).collect::<Vec<u8>>());
        let mut sources = Sources::default();
        sources.set_backing(Some(backing.clone()));
        let mut views = Views::new();
        // A run inside the backing: views into it, the short one inlined, a null.
        let run = &backing.as_slice()[50..150];
        let at = sources.locate(run);
        assert!(at.is_some());
        views.extend(
            run,
            at,
            [span(0, 20), span(30, 5), ByteSpan::NULL, span(40, 60)].into_iter(),
        );
        // Bytes that are not in the backing are copied.
        let elsewhere: Vec<u8> = (100..130).collect();
        views.push(Some(&elsewhere), &mut sources);
        views.push(None, &mut sources);
        views.push(Some(&backing.as_slice()[180..200]), &mut sources);
        let array = views.finish(&sources);
        assert_eq!(
            values(&array),
            vec![
                Some(run[0..20].to_vec()),
                Some(run[30..35].to_vec()),
                None,
                Some(run[40..100].to_vec()),
                Some(elsewhere.clone()),
                None,
                Some(backing.as_slice()[180..200].to_vec()),
            ]
        );
        let a = array.as_any().downcast_ref::<BinaryViewArray>().unwrap();
        // Buffer 0 holds the one copy; buffer 1 is the backing, not a copy of it.
        assert_eq!(a.data_buffers()[0].len(), 30);
        assert_eq!(a.data_buffers()[1].as_ptr(), backing.as_ptr());
        sources.finish();
    }

    #[test]
    fn decompressed_bytes_are_adopted_not_copied() {
        let mut batches = BatchDecoder::default();
        let mut sources = Sources::default();
        // What the format layer does for a compressed batch: decompress into its buffer,
        // lend it, and give it away after.
        let bytes: Vec<u8> = (0..64).collect();
        batches.scratch.extend_from_slice(&bytes);
        batches.decompressed = bytes.len();
        let lent_at = batches.scratch.as_ptr();
        sources.decompressed(&batches.scratch);
        let mut views = Views::new();
        let at = sources.locate(&batches.scratch);
        views.extend(&batches.scratch, at, [span(8, 30)].into_iter());
        sources.adopt(&mut batches);
        let array = views.finish(&sources);
        assert_eq!(values(&array), vec![Some(bytes[8..38].to_vec())]);
        let a = array.as_any().downcast_ref::<BinaryViewArray>().unwrap();
        assert_eq!(a.data_buffers()[1].as_ptr(), lent_at);
        // The decoder decompresses the next batch elsewhere.
        assert!(batches.scratch.is_empty());
        assert_ne!(batches.scratch.as_ptr(), lent_at);
    }
}
