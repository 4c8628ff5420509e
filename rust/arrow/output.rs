//! What a [`crate::arrow::decoder::Decoder`] fills: record columns (one row per record) or a batch
//! listing (one row per batch).

use crate::format::batch::{BatchDecoder, RecordSink};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

/// Rows a [`crate::arrow::decoder::Decoder`] buffers from decoded Kafka batches, and hands out as
/// Arrow record batches: implemented by record columns and the batch listing.
pub trait Output: RecordSink {
    /// Rows buffered so far.
    fn rows(&self) -> usize;
    /// Drops every row from `rows` on (a batch that failed half way).
    fn truncate(&mut self, rows: usize);
    /// The schema of the batches [`Output::finish`] makes.
    fn schema(&self) -> SchemaRef;
    /// The buffered rows as a `RecordBatch`; starts empty again.
    fn finish(&mut self) -> RecordBatch;
    /// Whether the input has gone past everything this output wants (offsets only grow).
    fn past_end(&self) -> bool {
        false
    }
    /// The bytes fed to the decoder from now on live in `buffer`, an owned buffer an output
    /// may keep pointing into (`None`: in nothing it may keep). By default ignored.
    fn set_backing(&mut self, buffer: Option<arrow_buffer::Buffer>) {
        let _ = buffer;
    }
    /// Called after each log entry was decoded (or failed to): an output that pointed into the
    /// entry's decompressed bytes takes them from `batches`. By default nothing happens.
    fn adopt_decompressed(&mut self, batches: &mut BatchDecoder) {
        let _ = batches;
    }
}
