//! A decoder that does no I/O, after arrow-rs's CSV/JSON decoders: it is fed bytes (a
//! segment's, a byte range of one, a Fetch response's `records`), consumes the complete log
//! entries at their front, and emits an Arrow `RecordBatch` on [`Decoder::flush`]. The file
//! reader is a thin loop around it; so is decoding a buffer already in memory.
//!
//! It applies the corrupt-batch policy and notes what it skipped or left unread as [`Issue`]s,
//! the way `kafka-dump-log` reports invalid bytes at the end of a segment.

use crate::arrow::builder::{RecordColumns, RecordFilter};
use crate::arrow::output::Output;
use crate::arrow::schema::Projection;
use crate::error::{Error, Result};
use crate::format::batch::{annotate, BatchDecoder, DecodeOptions};
use crate::format::segment::{
    check_segment_start, next_entry, torn_first_entry, undecodable_first_entry, Frame,
};
use crate::log::bounds::FileBounds;
use crate::log::issues::{Issue, IssueKind, OnCorrupt};
use crate::log::origin::Origin;
use arrow_array::RecordBatch;

/// How a [`Decoder`] turns log entries into output batches.
#[derive(Clone, Debug)]
pub struct DecoderOptions {
    /// How each Kafka batch is decoded: CRC checking, decompression cap.
    pub decode: DecodeOptions,
    /// The columns to fill.
    pub projection: Projection,
    /// Which batches' records reach the output (control batches or not).
    pub filter: RecordFilter,
    /// Target rows per output batch; a Kafka batch is never split, so a batch may exceed it by
    /// the records of one Kafka batch.
    pub batch_size: usize,
    /// Target bytes of decoded data per output batch.
    pub batch_bytes: usize,
    /// What to do at a batch that fails to decode.
    pub on_corrupt: OnCorrupt,
}

/// The default target rows per output batch.
pub const DEFAULT_BATCH_SIZE: usize = 64 * 1024;

impl Default for DecoderOptions {
    fn default() -> Self {
        DecoderOptions {
            decode: DecodeOptions::default(),
            projection: Projection::default(),
            filter: RecordFilter::default(),
            batch_size: DEFAULT_BATCH_SIZE,
            batch_bytes: 64 << 20,
            on_corrupt: OnCorrupt::Error,
        }
    }
}

/// Arrow offsets are int32: no output batch may hold more bytes than this in one column.
const MAX_BATCH_BYTES: usize = i32::MAX as usize;

/// The sans-I/O decoder (see the module docs): fed log bytes, it keeps the complete entries'
/// records in `O` and hands them out as `RecordBatch`es, noting [`Issue`]s on the way.
pub struct Decoder<O = RecordColumns> {
    batches: BatchDecoder,
    columns: O,
    batch_size: usize,
    batch_bytes: usize,
    on_corrupt: OnCorrupt,
    /// Absolute position of the next byte to consume.
    position: u64,
    /// Bytes of (decompressed) records in the buffered rows.
    decoded: usize,
    /// Bytes the entry at `position` needs in all, when the last call ran out of bytes.
    need: usize,
    /// Where a run of zero bytes began that may turn out to be preallocated space.
    zeros_from: Option<u64>,
    stopped: bool,
    /// The output wants nothing more from this input (past the end offset).
    done: bool,
    /// A file named otherwise than a log: judged more strictly at its start
    /// (`format::segment::check_segment_start`).
    other_name: bool,
    issues: Vec<Issue>,
}

impl Decoder<RecordColumns> {
    /// A decoder of records, with the columns and filter of `options`.
    pub fn new(options: DecoderOptions, origin: Origin, start_position: u64) -> Self {
        let columns =
            RecordColumns::new(options.projection.clone(), origin, options.filter.clone());
        Decoder::with_output(options, columns, start_position)
    }

    /// The columns this decoder fills.
    pub fn projection(&self) -> &Projection {
        self.columns.projection()
    }

    /// Starts over at `position` of another input, with its origin and bounds, keeping the
    /// buffers (and their capacity). Rows not flushed are dropped.
    pub fn restart(&mut self, origin: Origin, bounds: FileBounds, position: u64) {
        self.columns.restart(origin, bounds);
        self.position = position;
        self.decoded = 0;
        self.need = 0;
        self.zeros_from = None;
        self.stopped = false;
        self.done = false;
        self.issues.clear();
    }
}

impl<O: Output> Decoder<O> {
    /// A decoder filling `output`, for bytes starting at `start_position`.
    pub fn with_output(options: DecoderOptions, output: O, start_position: u64) -> Self {
        Decoder {
            batches: BatchDecoder::new(options.decode),
            columns: output,
            batch_size: options.batch_size.max(1),
            batch_bytes: options.batch_bytes.clamp(1, MAX_BATCH_BYTES),
            on_corrupt: options.on_corrupt,
            position: start_position,
            decoded: 0,
            need: 0,
            zeros_from: None,
            stopped: false,
            done: false,
            other_name: false,
            issues: Vec::new(),
        }
    }

    /// The bytes passed to [`Self::decode`] from now on lie in `buffer` (a memory map, a read
    /// buffer; `None`: in nothing the output may keep). With the `binary_view` option the
    /// columns point into it instead of copying; slices outside it are copied.
    pub fn set_backing(&mut self, buffer: Option<arrow_buffer::Buffer>) {
        self.columns.set_backing(buffer);
    }

    /// Sets the base offset the segment's file name gives (`None`: not a named segment), so
    /// that errors tell a batch header's offset from garbage in its place.
    pub fn set_segment_base(&mut self, base: Option<i64>) {
        self.batches.segment_base = base;
    }

    /// Sets what the file's name says: the base offset of a segment's name, and whether it is
    /// named otherwise than a log, so that a file that is not one is told by its first bytes
    /// (`format::segment::check_segment_start`).
    pub fn set_file_name(&mut self, path: &std::path::Path) {
        self.batches.segment_base = crate::format::segment::base_offset_from_name(path);
        self.other_name = !crate::format::segment::named_like_a_log(path);
    }

    /// Position of the next byte the decoder expects.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Bytes (from [`Self::position`]) the next entry needs before it can be decoded.
    pub fn need(&self) -> usize {
        self.need
    }

    /// Whether a batch is ready: call [`Self::flush`] before feeding more.
    pub fn is_full(&self) -> bool {
        self.columns.rows() >= self.batch_size || self.decoded >= self.batch_bytes
    }

    /// Whether decoding ended: at a corrupt batch (policy `stop`, or an unframeable entry),
    /// or past the end of what the output wants.
    pub fn is_stopped(&self) -> bool {
        self.stopped || self.done
    }

    /// Rows buffered and not yet flushed.
    pub fn rows(&self) -> usize {
        self.columns.rows()
    }

    /// Decodes the complete entries at the front of `buf`, which must start at
    /// [`Self::position`]. Returns how many bytes were consumed; stops early once a batch is
    /// full, or when decoding stopped.
    pub fn decode(&mut self, buf: &[u8]) -> Result<usize> {
        let mut consumed = 0;
        self.need = 0;
        while !self.stopped && !self.done && !self.is_full() {
            let rest = &buf[consumed..];
            if let Some(start) = self.zeros_from {
                // Inside a run of zeros: more zeros keep it going, anything else is corruption
                // at the run's start.
                let zeros = rest.iter().take_while(|&&b| b == 0).count();
                consumed += zeros;
                self.position += zeros as u64;
                if zeros == rest.len() {
                    self.need = 1;
                    break;
                }
                self.zeros_from = None;
                let err = Error::corrupt(format!(
                    "found record size 0 smaller than minimum record overhead ({})",
                    crate::format::segment::MIN_ENTRY_SIZE
                ))
                .at(start);
                self.corrupt(err, None)?;
                break;
            }
            if self.position == 0 {
                // The start of a segment (or buffer): refuse what cannot be Kafka's at all
                // before taking it for a torn batch. Checked again as more bytes arrive.
                check_segment_start(rest, self.batches.segment_base, self.other_name)?;
            }
            match next_entry(rest) {
                Ok(Frame::Incomplete { need }) => {
                    self.need = need;
                    break;
                }
                Ok(Frame::Entry(len)) => {
                    if self.columns.rows() > 0
                        && self.decoded + len.max(self.batches.options.max_decompressed_size)
                            > MAX_BATCH_BYTES
                    {
                        // This entry could overflow the output batch: flush first.
                        self.decoded = MAX_BATCH_BYTES;
                        break;
                    }
                    let entry = &rest[..len];
                    let rows_before = self.columns.rows();
                    let decoded = self.batches.decode(entry, self.position, &mut self.columns);
                    let decompressed = self.batches.decompressed_len();
                    // Before the rollback below: views may point into the decompressed bytes.
                    self.columns.adopt_decompressed(&mut self.batches);
                    match decoded {
                        Ok(_) => self.decoded += len.max(decompressed),
                        Err(err) => {
                            self.columns.truncate(rows_before);
                            if self.position == 0 {
                                // Offsets not the segment's and a first entry that does not
                                // decode: not a segment Kafka could read at all.
                                let base = self.batches.segment_base;
                                if let Some(e) = undecodable_first_entry(entry, base, &err.message)
                                {
                                    return Err(e);
                                }
                            }
                            self.corrupt(err, Some(len as u64))?;
                        }
                    }
                    if !self.stopped {
                        consumed += len;
                        self.position += len as u64;
                    }
                    self.done = self.columns.past_end();
                }
                Err(err) => {
                    if rest.len() >= 12 && rest[..12].iter().all(|&b| b == 0) {
                        // A size of 0 with nothing but zeros: maybe preallocated space.
                        self.zeros_from = Some(self.position);
                        continue;
                    }
                    let base = self.batches.segment_base;
                    self.corrupt(annotate(err, rest, self.position, base), None)?;
                }
            }
        }
        Ok(consumed)
    }

    /// Applies the corrupt-batch policy. `skippable` is the entry's length when it is known.
    fn corrupt(&mut self, err: Error, skippable: Option<u64>) -> Result<()> {
        let (kind, bytes) = match (self.on_corrupt, skippable) {
            (OnCorrupt::Error, _) => return Err(err),
            (OnCorrupt::Skip, Some(len)) => (IssueKind::SkippedBatch, len),
            _ => {
                self.stopped = true;
                (IssueKind::Stopped, 0)
            }
        };
        let what = match kind {
            IssueKind::SkippedBatch => "skipped a corrupt batch",
            _ => "stopped reading at a corrupt batch",
        };
        self.issues.push(Issue {
            kind,
            message: format!(
                "{what}: {}",
                Error {
                    path: None,
                    ..err.clone()
                }
            ),
            path: err.path.clone(),
            position: err.position.unwrap_or(self.position),
            offset: err.offset,
            bytes,
        });
        Ok(())
    }

    /// Ends the input: `rest` holds the bytes after the last complete entry. A partial entry
    /// there is a torn tail, noted as an issue, not an error; unless it is the first entry and
    /// its offsets are not the segment's, which no segment Kafka wrote has: then the file is
    /// not a segment ([`ErrorKind::NotASegment`]).
    ///
    /// [`ErrorKind::NotASegment`]: crate::error::ErrorKind::NotASegment
    pub fn finish(&mut self, rest: &[u8]) -> Result<()> {
        if self.stopped || self.done {
            return Ok(());
        }
        if self.position == 0 && self.zeros_from.is_none() {
            let base = self.batches.segment_base;
            if let Some(e) = torn_first_entry(rest, base, rest.len() as u64, self.other_name) {
                return Err(e);
            }
        }
        let start = self.zeros_from.take().unwrap_or(self.position);
        let zeros = rest.iter().all(|&b| b == 0);
        let bytes = self.position - start + rest.len() as u64;
        if bytes == 0 {
            return Ok(());
        }
        let (kind, message) = if zeros {
            (
                IssueKind::ZeroTail,
                format!("{bytes} zero bytes at the end (preallocated space, never written)"),
            )
        } else {
            (
                IssueKind::TornTail,
                format!("found {bytes} invalid bytes at the end (a partial batch)"),
            )
        };
        let offset = rest
            .get(0..8)
            .map(|b| i64::from_be_bytes(b.try_into().unwrap()));
        self.issues.push(Issue {
            kind,
            message,
            path: None,
            position: start,
            offset,
            bytes,
        });
        self.position += rest.len() as u64;
        Ok(())
    }

    /// The buffered rows as a `RecordBatch`, or `None` when there are none.
    pub fn flush(&mut self) -> Option<RecordBatch> {
        self.decoded = 0;
        (self.columns.rows() > 0).then(|| self.columns.finish())
    }

    /// Issues noted since the last call.
    pub fn take_issues(&mut self) -> Vec<Issue> {
        std::mem::take(&mut self.issues)
    }

    /// The schema of the batches [`Decoder::flush`] returns.
    pub fn schema(&self) -> arrow_schema::SchemaRef {
        self.columns.schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::schema::Column;
    use crate::format::batch::TimestampType;
    use crate::format::compression::Compression;
    use crate::format::v2::{write_batch, write_record, BatchHeader};
    use arrow_array::{Array, BinaryArray, BinaryViewArray, Int64Array};
    use arrow_schema::DataType;

    /// A v2 batch of `n` records at `base`, values "v<offset>".
    fn batch(base: i64, n: i32) -> Vec<u8> {
        batch_of(base, n, Compression::None, 0)
    }

    /// A v2 batch of `n` records at `base`, values "v<offset>" padded with up to `2 * pad` bytes.
    fn batch_of(base: i64, n: i32, compression: Compression, pad: usize) -> Vec<u8> {
        let mut records = Vec::new();
        for i in 0..n {
            let v = format!("v{}{}", base + i as i64, "p".repeat(pad * (i as usize % 3)));
            write_record(
                &mut records,
                i,
                i as i64,
                None,
                Some(v.as_bytes()),
                std::iter::empty(),
            );
        }
        let header = BatchHeader {
            base_offset: base,
            partition_leader_epoch: 0,
            compression,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: false,
            is_control: false,
            delete_horizon: false,
            last_offset_delta: n - 1,
            base_timestamp: 0,
            max_timestamp: n as i64 - 1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        };
        let mut out = Vec::new();
        write_batch(&mut out, &header, &records, n, None).unwrap();
        out
    }

    /// A batch whose CRC is right but whose last record is broken (it claims more bytes than
    /// it has): decoding fails after the first records were already handed to the columns.
    fn half_bad_batch(base: i64) -> Vec<u8> {
        let good = batch(base, 3);
        let mut records = good[61..].to_vec();
        let last = records.len() - 1;
        records[last] = 0x7e; // headers count 63: more than the bytes left
        let header =
            crate::format::v2::parse_header(&good, 0, crate::format::CrcPolicy::Ignore).unwrap();
        let header = BatchHeader {
            base_offset: base,
            partition_leader_epoch: 0,
            compression: Compression::None,
            timestamp_type: header.timestamp_type,
            is_transactional: false,
            is_control: false,
            delete_horizon: false,
            last_offset_delta: 2,
            base_timestamp: 0,
            max_timestamp: 2,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        };
        let mut out = Vec::new();
        write_batch(&mut out, &header, &records, 3, None).unwrap();
        out
    }

    fn offsets(batches: &[RecordBatch]) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| {
                let col = b
                    .column_by_name("offset")
                    .unwrap()
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap();
                col.values().to_vec()
            })
            .collect()
    }

    fn run(bytes: &[u8], options: DecoderOptions) -> Result<(Vec<RecordBatch>, Vec<Issue>)> {
        let mut d = Decoder::new(options, Origin::default(), 0);
        let mut out = Vec::new();
        let mut pos = 0;
        loop {
            pos += d.decode(&bytes[pos..])?;
            if d.is_full() {
                out.extend(d.flush());
                continue;
            }
            d.finish(&bytes[pos..])?;
            out.extend(d.flush());
            return Ok((out, d.take_issues()));
        }
    }

    fn segment(parts: &[Vec<u8>]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn policies_never_emit_half_a_batch() {
        let bytes = segment(&[batch(0, 2), half_bad_batch(2), batch(5, 2)]);
        let err = run(&bytes, DecoderOptions::default()).unwrap_err();
        assert_eq!(
            (err.position, err.offset),
            (Some(batch(0, 2).len() as u64), Some(2))
        );

        let skip = DecoderOptions {
            on_corrupt: OnCorrupt::Skip,
            ..Default::default()
        };
        let (batches, issues) = run(&bytes, skip).unwrap();
        assert_eq!(offsets(&batches), [0, 1, 5, 6]);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].kind, IssueKind::SkippedBatch);

        let stop = DecoderOptions {
            on_corrupt: OnCorrupt::Stop,
            ..Default::default()
        };
        let (batches, issues) = run(&bytes, stop).unwrap();
        assert_eq!(offsets(&batches), [0, 1]);
        assert_eq!(issues[0].kind, IssueKind::Stopped);
    }

    #[test]
    fn torn_and_zero_tails_are_issues_not_errors() {
        let whole = segment(&[batch(0, 2), batch(2, 2)]);
        for cut in 1..batch(2, 2).len() {
            let bytes = &whole[..whole.len() - cut];
            let (batches, issues) = run(bytes, DecoderOptions::default()).unwrap();
            assert_eq!(offsets(&batches), [0, 1], "cut {cut}");
            assert_eq!(issues.len(), 1);
            let rest = &whole[bytes.len() - (batch(2, 2).len() - cut)..bytes.len()];
            // A tail of nothing but zeros (an offset's high bytes, say) reads as unwritten space.
            let kind = if rest.iter().all(|&b| b == 0) {
                IssueKind::ZeroTail
            } else {
                IssueKind::TornTail
            };
            assert_eq!(
                (issues[0].kind, issues[0].bytes),
                (kind, rest.len() as u64),
                "cut {cut}"
            );
        }
        let mut zeros = whole.clone();
        zeros.extend(vec![0u8; 1000]);
        let (batches, issues) = run(&zeros, DecoderOptions::default()).unwrap();
        assert_eq!(offsets(&batches).len(), 4);
        assert_eq!(
            (issues[0].kind, issues[0].bytes, issues[0].position),
            (IssueKind::ZeroTail, 1000, whole.len() as u64)
        );

        zeros.extend(batch(4, 1));
        let err = run(&zeros, DecoderOptions::default()).unwrap_err();
        assert_eq!(err.position, Some(whole.len() as u64));
    }

    #[test]
    fn batches_are_cut_at_batch_size_and_chunks_may_split_entries() {
        let bytes = segment(&(0..10).map(|i| batch(i * 3, 3)).collect::<Vec<_>>());
        let options = DecoderOptions {
            batch_size: 7,
            ..Default::default()
        };
        let (batches, _) = run(&bytes, options.clone()).unwrap();
        // A Kafka batch is never split: 7 rows asked, 9 come (three Kafka batches).
        assert_eq!(
            batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            [9, 9, 9, 3]
        );

        // Feeding one byte at a time gives the same rows.
        let mut d = Decoder::new(options, Origin::default(), 0);
        let (mut buf, mut out) = (Vec::new(), Vec::new());
        for &byte in &bytes {
            buf.push(byte);
            let n = d.decode(&buf).unwrap();
            buf.drain(..n);
            if d.is_full() {
                out.extend(d.flush());
            }
        }
        d.finish(&buf).unwrap();
        out.extend(d.flush());
        assert_eq!(offsets(&out), (0..30).collect::<Vec<_>>());
    }

    fn values(batches: &[RecordBatch]) -> Vec<Option<Vec<u8>>> {
        let mut out = Vec::new();
        for b in batches {
            let column = b.column_by_name("value").unwrap();
            let column = arrow_cast::cast(column, &DataType::Binary).unwrap();
            let column = column.as_any().downcast_ref::<BinaryArray>().unwrap();
            out.extend(column.iter().map(|v| v.map(<[u8]>::to_vec)));
        }
        out
    }

    #[test]
    fn views_read_what_copies_read_from_every_source() {
        // Plain and compressed batches, a corrupt one rolled back half way, small output
        // batches: the views hold what the copies hold, and pass Arrow's full validation.
        let parts: Vec<Vec<u8>> = (0..12)
            .map(|i| {
                let codec = [Compression::None, Compression::Zstd, Compression::Lz4][i % 3];
                batch_of(i as i64 * 5, 5, codec, 9)
            })
            .chain([half_bad_batch(60), batch_of(63, 4, Compression::Gzip, 20)])
            .collect();
        let bytes = segment(&parts);
        let options = DecoderOptions {
            on_corrupt: OnCorrupt::Skip,
            batch_size: 8,
            ..Default::default()
        };
        let (copies, _) = run(&bytes, options.clone()).unwrap();
        assert_eq!(offsets(&copies).len(), 64);
        let views_options = DecoderOptions {
            projection: Projection::default().with_binary_view(true),
            ..options
        };
        let backing = arrow_buffer::Buffer::from_vec(bytes.clone());
        for with_backing in [false, true] {
            let mut d = Decoder::new(views_options.clone(), Origin::default(), 0);
            if with_backing {
                d.set_backing(Some(backing.clone()));
            }
            let input: &[u8] = if with_backing { &backing } else { &bytes };
            let (mut out, mut pos) = (Vec::new(), 0);
            loop {
                pos += d.decode(&input[pos..]).unwrap();
                if d.is_full() {
                    out.extend(d.flush());
                    continue;
                }
                d.finish(&input[pos..]).unwrap();
                out.extend(d.flush());
                break;
            }
            for b in &out {
                let value = b.column_by_name("value").unwrap();
                assert_eq!(value.data_type(), &DataType::BinaryView);
                value.to_data().validate_full().unwrap();
            }
            assert_eq!(values(&out), values(&copies), "backing {with_backing}");
            assert_eq!(offsets(&out), offsets(&copies));
            // With a backing, nothing is copied: plain batches' long values point into it,
            // compressed ones' into their decompressed bytes.
            let copied: usize = out
                .iter()
                .map(|b| {
                    let v = b.column_by_name("value").unwrap();
                    let v = v.as_any().downcast_ref::<BinaryViewArray>().unwrap();
                    v.data_buffers()[0].len()
                })
                .sum();
            assert_eq!(copied == 0, with_backing, "copied {copied}");
        }
    }

    #[test]
    fn projection_builds_only_what_was_asked() {
        let options = DecoderOptions {
            projection: Projection::new(vec![Column::Offset, Column::Magic]).unwrap(),
            ..Default::default()
        };
        let (batches, _) = run(&batch(0, 3), options).unwrap();
        let b = &batches[0];
        assert_eq!(b.num_columns(), 2);
        assert_eq!(b.schema().field(1).name(), "magic");
        assert_eq!(b.column(1).null_count(), 0);
    }
}
