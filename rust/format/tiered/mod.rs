//! Tiered storage (KIP-405) as remote-storage plugins lay it out in a bucket: names and bytes
//! only, no I/O (the reading is `storage/tiered.rs`).
//!
//! | file | what |
//! |---|---|
//! | `names.rs` | object keys: Aiven's `<topic>-<topicId>/<partition>/<offset>-<segmentId>.<suffix>` and Kafka's LocalTieredStorage `<topic>-<partition>-<topicId>/<offset>-<segmentId>.<suffix>` |
//! | `manifest.rs` | Aiven's `.rsm-manifest` JSON: chunk index, index slots in `.indexes`, compression, encryption, segment metadata |
//! | `chunks.rs` | the chunk index (fixed-size and variable-size with its binary codec): where each original byte range lies in the `.log` object |
//! | `lineage.rs` | which segment serves each offset when a bucket holds the same offsets twice (leader epochs) |

pub mod chunks;
pub mod lineage;
pub mod manifest;
pub mod names;

pub use chunks::{Chunk, ChunkIndex};
pub use manifest::{Encryption, IndexSlot, Manifest, SegmentMetadata};
pub use names::{SegmentName, TieredDir};
