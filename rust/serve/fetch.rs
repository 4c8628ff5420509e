//! A partition's answer to a fetch: the stored batches from the one holding the fetch offset,
//! byte for byte, up to the partition's byte limit and never past the bound the isolation
//! level sets (the high watermark, or the last stable offset under `read_committed`), as a
//! broker's `LogSegment.read` slices a segment: one segment per answer, whole entries, the
//! first entry whole even when it is larger than the limit if the fetch has nothing yet
//! (KIP-74), else the limit's bytes as they fall (clients drop a partial entry at the end).

use super::catalog::{entry_span, Partition, Source};
use crate::error::{Error, Result};
use crate::format::segment::{ENTRY_SPAN_BYTES, LOG_OVERHEAD};
use crate::log::position::seek_position;
use crate::storage::{read_range, Storage};
use bytes::Bytes;
use std::sync::Mutex;

/// The bytes read from a store at a time while walking entries (a memory map needs none).
const WINDOW: u64 = 256 << 10;

/// What one partition's fetch found.
#[derive(Debug, Default)]
pub struct Slice {
    /// The stored entries, byte for byte (empty at the end of what may be fetched).
    pub records: Bytes,
    /// Where the next fetch would start (after the last whole entry served), when any was.
    pub next_offset: Option<i64>,
    /// The segment and byte position of `next_offset`, to answer the next fetch without a
    /// seek.
    pub next_position: Option<(usize, u64)>,
    /// The offset after which the aborted transactions that overlap this answer end: the next
    /// segment's base offset, or the bound.
    pub upper_offset: i64,
}

/// Bytes of a segment, either in place (a map) or read through a window.
struct Reader<'a> {
    source: &'a Source,
    len: u64,
    window_at: u64,
    window: Bytes,
}

impl<'a> Reader<'a> {
    fn new(source: &'a Source, len: u64) -> Self {
        Reader {
            source,
            len,
            window_at: 0,
            window: Bytes::new(),
        }
    }

    /// Bytes `[at, at + n)` (fewer at the end of the segment).
    fn bytes(&mut self, at: u64, n: u64) -> Result<Bytes> {
        let end = (at + n).min(self.len);
        if at >= end {
            return Ok(Bytes::new());
        }
        match self.source {
            Source::Mapped(map) => {
                let whole = map.bytes();
                let end = end.min(whole.len() as u64);
                if at >= end {
                    return Ok(Bytes::new());
                }
                Ok(Bytes::from_owner(MapSlice {
                    map: map.clone(),
                    start: at as usize,
                    end: end as usize,
                }))
            }
            Source::Object(object) => {
                let window_end = self.window_at + self.window.len() as u64;
                if at >= self.window_at && end <= window_end {
                    let from = (at - self.window_at) as usize;
                    return Ok(self.window.slice(from..from + (end - at) as usize));
                }
                let read_end = end.max((at + WINDOW).min(self.len));
                let bytes = read_object(object, at, read_end)?;
                self.window_at = at;
                self.window = Bytes::from(bytes);
                let n = ((end - at) as usize).min(self.window.len());
                Ok(self.window.slice(..n))
            }
        }
    }
}

fn read_object(
    object: &Mutex<Box<dyn crate::storage::Object>>,
    at: u64,
    end: u64,
) -> Result<Vec<u8>> {
    let mut object = object
        .lock()
        .map_err(|_| Error::new(crate::error::ErrorKind::Internal, "segment lock poisoned"))?;
    object.will_read(at..end);
    read_range(object.as_mut(), at..end)
}

/// A slice of a memory map, owning the map for as long as the bytes are referenced.
struct MapSlice {
    map: crate::storage::Mapped,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for MapSlice {
    fn as_ref(&self) -> &[u8] {
        &self.map.bytes()[self.start..self.end]
    }
}

/// The entries of `partition` from the one holding `offset`, up to `limit` bytes (the first
/// entry whole when `min_one`), none at or after `bound`. `hint` is where an earlier answer
/// said `offset` starts (segment, position). The caller has checked `offset` is in range.
pub fn read_partition(
    storage: &dyn Storage,
    partition: &Partition,
    offset: i64,
    bound: i64,
    limit: u64,
    min_one: bool,
    hint: Option<(usize, u64)>,
) -> Result<Slice> {
    let mut slice = Slice {
        upper_offset: bound,
        ..Slice::default()
    };
    if offset >= bound || partition.segments.is_empty() {
        return Ok(slice);
    }
    let (mut index, mut position) = match hint {
        Some(hint) => hint,
        None => {
            let index = partition.segment_for(offset);
            let segment = &partition.segments[index];
            let position = seek_position(
                storage,
                &segment.file.path,
                segment.base_offset,
                offset,
                &mut Vec::new(),
            )?;
            (index, position)
        }
    };
    // The first entry reaching the offset: in this segment, or a later one (a compacted or
    // retained log can leave a segment holding nothing at or after it).
    while index < partition.segments.len() {
        let segment = &partition.segments[index];
        let source = segment.source(storage)?;
        let mut reader = Reader::new(source, segment.len);
        let start = loop {
            let head = reader.bytes(position, ENTRY_SPAN_BYTES as u64)?;
            let Some((_, last, size)) = entry_span(&head) else {
                break None;
            };
            if head.len() < LOG_OVERHEAD || position + size > segment.len || size == 0 {
                break None; // a torn tail: nothing more in this segment
            }
            if last >= offset {
                break Some(position);
            }
            position += size;
        };
        let Some(start) = start else {
            index += 1;
            position = 0;
            continue;
        };
        // Whole entries from there, within the limit and below the bound.
        let mut end = start;
        let mut next = None;
        loop {
            let head = reader.bytes(end, ENTRY_SPAN_BYTES as u64)?;
            let Some((first, last, size)) = entry_span(&head) else {
                break;
            };
            if head.len() < LOG_OVERHEAD || end + size > segment.len || size == 0 {
                break;
            }
            if first >= bound || last >= bound {
                break;
            }
            let taken = end - start;
            if taken + size > limit && !(taken == 0 && min_one) {
                if taken == 0 {
                    // Not even one entry fits: the limit's bytes, as a broker slices them.
                    end = start + limit;
                    next = None;
                }
                break;
            }
            end += size;
            next = Some(last + 1);
        }
        slice.records = reader.bytes(start, end - start)?;
        slice.next_offset = next;
        slice.next_position = next.map(|_| (index, end));
        slice.upper_offset = partition
            .segments
            .get(index + 1)
            .map_or(bound, |s| s.base_offset.min(bound));
        return Ok(slice);
    }
    Ok(slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::files::TopicFilter;
    use crate::serve::catalog::Catalog;
    use crate::storage::Router;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn orders() -> (Arc<dyn Storage>, Arc<Partition>) {
        let storage: Arc<dyn Storage> = Arc::new(Router::new(Vec::new()));
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/logs/orders-0");
        let catalog = Catalog::build(storage.clone(), &[path], &TopicFilter::default()).unwrap();
        let partition = catalog.partition("orders", 0).unwrap().clone();
        (storage, partition)
    }

    /// Entry spans (first, last, size) of a slice.
    fn entries(bytes: &[u8]) -> Vec<(i64, i64, u64)> {
        let mut out = Vec::new();
        let mut at = 0usize;
        while let Some(span) = entry_span(&bytes[at..]) {
            if at + span.2 as usize > bytes.len() {
                break;
            }
            out.push(span);
            at += span.2 as usize;
        }
        out
    }

    #[test]
    fn whole_entries_from_the_one_holding_the_offset() {
        let (storage, p) = orders();
        let hw = p.high_watermark;
        let all =
            read_partition(storage.as_ref(), &p, p.log_start, hw, u64::MAX, true, None).unwrap();
        let spans = entries(&all.records);
        assert!(spans.len() > 1);
        assert_eq!(
            spans.iter().map(|s| s.2).sum::<u64>(),
            all.records.len() as u64
        );
        assert_eq!(all.next_offset, Some(spans.last().unwrap().1 + 1));
        // An offset inside the second entry starts the answer there.
        let second = spans[1];
        let mid = read_partition(storage.as_ref(), &p, second.1, hw, u64::MAX, true, None).unwrap();
        assert_eq!(entries(&mid.records)[0], second);
        // The hint an answer gives leads to the same bytes as a seek.
        let next = read_partition(
            storage.as_ref(),
            &p,
            spans[0].1 + 1,
            hw,
            u64::MAX,
            true,
            None,
        )
        .unwrap();
        let one = read_partition(
            storage.as_ref(),
            &p,
            p.log_start,
            hw,
            spans[0].2,
            true,
            None,
        )
        .unwrap();
        let hinted = read_partition(
            storage.as_ref(),
            &p,
            one.next_offset.unwrap(),
            hw,
            u64::MAX,
            true,
            one.next_position,
        )
        .unwrap();
        assert_eq!(hinted.records, next.records);
    }

    #[test]
    fn limits_and_bounds() {
        let (storage, p) = orders();
        let hw = p.high_watermark;
        let first = entries(
            &read_partition(storage.as_ref(), &p, p.log_start, hw, u64::MAX, true, None)
                .unwrap()
                .records,
        )[0];
        // KIP-74: the first entry whole even over the limit, when the fetch has nothing yet.
        let min_one =
            read_partition(storage.as_ref(), &p, p.log_start, hw, 10, true, None).unwrap();
        assert_eq!(min_one.records.len() as u64, first.2);
        // Otherwise the limit's bytes, as a broker slices them (no whole entry: no next).
        let cut = read_partition(storage.as_ref(), &p, p.log_start, hw, 10, false, None).unwrap();
        assert_eq!(cut.records.len(), 10);
        assert_eq!(cut.next_offset, None);
        // Nothing at or past the bound.
        let bounded = read_partition(
            storage.as_ref(),
            &p,
            p.log_start,
            first.1 + 1,
            u64::MAX,
            true,
            None,
        )
        .unwrap();
        assert_eq!(entries(&bounded.records), vec![first]);
        let none = read_partition(storage.as_ref(), &p, hw, hw, u64::MAX, true, None).unwrap();
        assert!(none.records.is_empty());
    }
}
