//! A partition's answer to a fetch: the stored batches from the one holding the fetch offset,
//! byte for byte, up to the partition's byte limit and never past the bound the isolation
//! level sets (the high watermark, or the last stable offset under `read_committed`), as a
//! broker's `LogSegment.read` slices a segment: one segment per answer, whole entries, the
//! first entry whole even when it is larger than the limit if the fetch has nothing yet
//! (KIP-74), else the limit's bytes as they fall (clients drop a partial entry at the end).

use super::catalog::{entry_span, Partition, Source, Stored};
use crate::error::{Error, Result};
use crate::format::segment::{ENTRY_SPAN_BYTES, LOG_OVERHEAD};
use crate::log::position::seek_position;
use crate::storage::Storage;
use bytes::Bytes;
use std::sync::MutexGuard;

/// The bytes read from a store at a time past what a fetch needs, walking entries.
const WINDOW: u64 = 256 << 10;
/// How far past the bytes held a read may start and still read on in order (the walk steps
/// over entries it does not answer with).
const READ_ON: u64 = 64 << 20;

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

/// Bytes of a segment, either in place (a map) or read in order from a store.
enum Reader<'a> {
    Mapped(&'a crate::storage::Mapped, u64),
    /// The segment's store state, held for the whole fetch (one fetch of a segment reads at a
    /// time), and where the answer ended: what follows is kept for the next fetch.
    Object(MutexGuard<'a, Stored>, u64, Option<u64>),
}

impl<'a> Reader<'a> {
    fn new(source: &'a Source, len: u64) -> Result<Self> {
        Ok(match source {
            Source::Mapped(map) => Reader::Mapped(map, len),
            Source::Object(stored) => Reader::Object(
                stored.lock().map_err(|_| {
                    Error::new(crate::error::ErrorKind::Internal, "segment lock poisoned")
                })?,
                len,
                None,
            ),
        })
    }

    /// Bytes `[at, at + n)` (fewer at the end of the segment).
    fn bytes(&mut self, at: u64, n: u64) -> Result<Bytes> {
        match self {
            Reader::Mapped(map, len) => {
                let whole = map.bytes();
                let end = (at + n).min(*len).min(whole.len() as u64);
                if at >= end {
                    return Ok(Bytes::new());
                }
                Ok(Bytes::from_owner(MapSlice {
                    map: (*map).clone(),
                    start: at as usize,
                    end: end as usize,
                }))
            }
            Reader::Object(stored, len, _) => {
                let end = (at + n).min(*len);
                if at >= end {
                    return Ok(Bytes::new());
                }
                let s = &mut **stored;
                fill(s, *len, at, end)?;
                let from = (at - s.at) as usize;
                let to = ((end - s.at) as usize).min(s.bytes.len());
                Ok(Bytes::copy_from_slice(&s.bytes[from.min(to)..to]))
            }
        }
    }

    /// The answer's bytes `[start, end)`; from a store, handed over without a copy, the bytes
    /// after them kept for the next fetch.
    fn answer(&mut self, start: u64, end: u64) -> Result<Bytes> {
        let Reader::Object(stored, len, kept) = self else {
            return self.bytes(start, end - start);
        };
        let end = end.min(*len);
        if start >= end {
            return Ok(Bytes::new());
        }
        let s = &mut **stored;
        fill(s, *len, start, end)?;
        let whole = Bytes::from(std::mem::take(&mut s.bytes));
        let from = (start - s.at) as usize;
        let to = ((end - s.at) as usize).min(whole.len());
        s.bytes = whole[to..].to_vec();
        s.at += to as u64;
        *kept = None;
        Ok(whole.slice(from.min(to)..to))
    }

    /// Says where the answer ended: the bytes before it are let go when the fetch is done.
    fn answered_to(&mut self, end: u64) {
        if let Reader::Object(_, _, kept) = self {
            *kept = Some(end);
        }
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Reader::Object(s, _, Some(end)) = self {
            let held_end = s.at + s.bytes.len() as u64;
            if s.at <= *end && *end <= held_end {
                let passed = (*end - s.at) as usize;
                s.bytes.drain(..passed);
                s.at = *end;
            }
        }
    }
}

/// Makes `stored` hold bytes `[at, end)` of its segment (`len` bytes), reading on in order
/// from what it holds, or starting again at `at` when that is off its track.
fn fill(s: &mut Stored, len: u64, at: u64, end: u64) -> Result<()> {
    let mut held_end = s.at + s.bytes.len() as u64;
    if at < s.at || at > held_end + READ_ON {
        // Off the track of the reads before: start again here. (A read a little ahead, past
        // an entry the walk stepped over, reads on in order.)
        s.bytes.clear();
        s.at = at;
        s.told_end = at;
        held_end = at;
    }
    if end > held_end {
        let target = end.max((held_end + WINDOW).min(len));
        if target > s.told_end {
            // To the end of the segment: one request, streamed as it is read (the store reads
            // a bounded way ahead), serves a consumer reading in order; a request per range
            // would pay a store's latency each time, and some stores (moto) read the whole
            // object for any range.
            s.object.will_read(held_end..len);
            s.told_end = len;
        }
        let mut at = held_end;
        while at < target {
            let n = s
                .object
                .read_into(at, (target - at) as usize, &mut s.bytes)?;
            if n == 0 {
                break; // shorter than it was
            }
            at += n as u64;
        }
    }
    Ok(())
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
        let mut reader = Reader::new(source, segment.len)?;
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
        slice.records = reader.answer(start, end)?;
        reader.answered_to(end);
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

#[cfg(test)]
mod store_tests {
    use super::*;
    use crate::read::files::TopicFilter;
    use crate::serve::catalog::Catalog;
    use crate::storage::{Entry, Object, Router, Stat};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// Local files served as a store serves them: never mapped, every byte read and every
    /// read-ahead told counted.
    #[derive(Debug)]
    struct Unmapped {
        inner: Router,
        read: Arc<AtomicU64>,
        told: Arc<AtomicU64>,
    }

    struct Counted {
        inner: Box<dyn Object>,
        read: Arc<AtomicU64>,
        told: Arc<AtomicU64>,
    }

    impl Object for Counted {
        fn len(&self) -> u64 {
            self.inner.len()
        }
        fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
            let n = self.inner.read_into(offset, len, out)?;
            self.read.fetch_add(n as u64, Ordering::Relaxed);
            Ok(n)
        }
        fn will_read(&mut self, _range: std::ops::Range<u64>) {
            self.told.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl Storage for Unmapped {
        fn stat(&self, path: &Path) -> Result<Stat> {
            self.inner.stat(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
            self.inner.list(dir)
        }
        fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
            Ok(Box::new(Counted {
                inner: self.inner.open(path)?,
                read: self.read.clone(),
                told: self.told.clone(),
            }))
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// A consumer reading a partition in order from a store, a few entries a fetch, gets the
    /// bytes the mapped files give, reads each stored byte about once (a fetch starts in the
    /// bytes the one before read past its end), and tells the store once per segment.
    #[test]
    fn fetches_in_order_read_a_store_once() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
            "tests/corpus/segments/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0",
        );
        let read = Arc::new(AtomicU64::new(0));
        let told = Arc::new(AtomicU64::new(0));
        let unmapped: Arc<dyn Storage> = Arc::new(Unmapped {
            inner: Router::new(Vec::new()),
            read: read.clone(),
            told: told.clone(),
        });
        let mapped: Arc<dyn Storage> = Arc::new(Router::new(Vec::new()));
        let filter = TopicFilter::default();
        let from_store =
            Catalog::build(unmapped.clone(), std::slice::from_ref(&path), &filter).unwrap();
        let from_files = Catalog::build(mapped.clone(), &[path], &filter).unwrap();
        let p = from_store.partition("invoice", 0).unwrap().clone();
        let q = from_files.partition("invoice", 0).unwrap().clone();
        let stored: u64 = p.segments.iter().map(|s| s.len).sum();
        assert!(stored > 3 << 20 && p.segments.len() > 2, "{stored}");
        let (before_read, before_told) =
            (read.load(Ordering::Relaxed), told.load(Ordering::Relaxed));
        let hw = p.high_watermark;
        let (mut offset, mut hint, mut fetches) = (p.log_start, None, 0);
        while offset < hw {
            let got = read_partition(unmapped.as_ref(), &p, offset, hw, 4096, true, hint).unwrap();
            let want = read_partition(mapped.as_ref(), &q, offset, hw, 4096, true, hint).unwrap();
            assert_eq!(got.records, want.records, "at offset {offset}");
            assert_eq!(got.next_offset, want.next_offset);
            let Some(next) = got.next_offset else { break };
            (offset, hint) = (next, got.next_position);
            fetches += 1;
        }
        assert!(fetches > 100, "{fetches}");
        let bytes_read = read.load(Ordering::Relaxed) - before_read;
        let tells = told.load(Ordering::Relaxed) - before_told;
        assert!(
            bytes_read <= stored + WINDOW,
            "{bytes_read} read for {stored} stored ({tells} tells, {fetches} fetches)"
        );
        assert!(tells <= p.segments.len() as u64, "{tells} tells");
    }
}
