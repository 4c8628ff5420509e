//! Decoding one log entry of any magic: [`BatchDecoder`]'s entry point, which reads the entry's
//! magic byte and hands it to `v2.rs` (record batches) or `legacy.rs` (v0/v1 messages). It sits
//! above both formats; they share the model in `batch.rs` and never depend on this dispatch.

use super::batch::{annotate, entry_magic, BatchDecoder, BatchInfo, Record, RecordSink};
use super::{legacy, v2};
use crate::error::Result;

impl BatchDecoder {
    /// Decodes one complete log entry (as framed by [`super::segment::next_entry`]) found at
    /// `position`, feeding its records to `sink`. On error the sink may have seen part of the
    /// batch; the error names the position and the offset.
    pub fn decode<S: RecordSink>(
        &mut self,
        entry: &[u8],
        position: u64,
        sink: &mut S,
    ) -> Result<BatchInfo> {
        self.decompressed = 0;
        let base = self.segment_base;
        let magic = entry_magic(entry).map_err(|e| annotate(e, entry, position, base))?;
        let result = if magic >= 2 {
            v2::decode(self, entry, position, sink)
        } else {
            legacy::decode(self, entry, position, sink)
        };
        result.map_err(|e| annotate(e, entry, position, base))
    }

    /// Reads a batch's header (and, for v0/v1 wrappers, its inner offsets) without passing its
    /// records anywhere.
    pub fn header(&mut self, entry: &[u8], position: u64) -> Result<BatchInfo> {
        struct Nothing;
        impl RecordSink for Nothing {
            fn begin_batch(&mut self, _: &BatchInfo) -> bool {
                false
            }
            fn record(&mut self, _: &BatchInfo, _: &Record<'_>) {}
        }
        self.decode(entry, position, &mut Nothing)
    }
}
