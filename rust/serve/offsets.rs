//! ListOffsets and OffsetForLeaderEpoch: a partition's log start, high watermark, last
//! stable offset, offsets by timestamp (the time indexes, then the batches) and the largest
//! timestamp, and its leader epochs, as a broker answers them.

use super::catalog::{Catalog, Partition};
use super::codes::code;
use super::shared::Shared;
use crate::format::batch::{CrcPolicy, DecodeOptions};
use crate::format::checkpoint::epoch_end_offset;
use crate::log::position::record_for_timestamp;
use kafka_protocol::messages::*;

/// The leader epoch check of a fetch or ListOffsets: the client's epoch (-1: none) against
/// the partition's.
pub(super) fn epoch_error(partition: &Partition, current: i32) -> Option<i16> {
    let ours = partition.leader_epoch();
    if current < 0 || current == ours {
        None
    } else if current < ours {
        Some(code::FENCED_LEADER_EPOCH)
    } else {
        Some(code::UNKNOWN_LEADER_EPOCH)
    }
}

/// Kafka's special ListOffsets timestamps.
const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;
const LATEST_TIERED: i64 = -5;

fn epoch_at(partition: &Partition, offset: i64) -> i32 {
    partition
        .epochs
        .iter()
        .rev()
        .find(|e| e.start_offset <= offset)
        .map_or(-1, |e| e.epoch)
}

pub(super) fn list_offsets(shared: &Shared, request: ListOffsetsRequest) -> ListOffsetsResponse {
    let catalog = &shared.catalog;
    let read_committed = request.isolation_level == 1;
    let mut r = ListOffsetsResponse::default();
    for topic in request.topics {
        let mut tr = list_offsets_response::ListOffsetsTopicResponse::default();
        tr.name = topic.name.clone();
        for p in topic.partitions {
            let mut pr = list_offsets_response::ListOffsetsPartitionResponse::default();
            pr.partition_index = p.partition_index;
            pr.timestamp = -1;
            pr.offset = -1;
            pr.leader_epoch = -1;
            let Some(partition) = catalog.partition(topic.name.0.as_str(), p.partition_index)
            else {
                pr.error_code = code::UNKNOWN_TOPIC_OR_PARTITION;
                tr.partitions.push(pr);
                continue;
            };
            if let Some(error) = epoch_error(partition, p.current_leader_epoch) {
                pr.error_code = error;
                tr.partitions.push(pr);
                continue;
            }
            let end = if read_committed {
                partition.last_stable
            } else {
                partition.high_watermark
            };
            match p.timestamp {
                LATEST => {
                    pr.offset = end;
                    pr.leader_epoch = partition.epochs.last().map_or(-1, |e| e.epoch);
                }
                EARLIEST | EARLIEST_LOCAL => {
                    pr.offset = partition.log_start;
                    pr.leader_epoch = epoch_at(partition, partition.log_start);
                }
                LATEST_TIERED => {}
                timestamp => {
                    let target = if timestamp == MAX_TIMESTAMP {
                        match max_timestamp(shared, partition) {
                            Ok(Some(max)) => max,
                            Ok(None) => {
                                tr.partitions.push(pr);
                                continue;
                            }
                            Err(e) => {
                                shared.log(&format!("ListOffsets {}: {e}", topic.name.0));
                                pr.error_code = code::KAFKA_STORAGE_ERROR;
                                tr.partitions.push(pr);
                                continue;
                            }
                        }
                    } else if timestamp < 0 {
                        pr.error_code = code::INVALID_REQUEST;
                        tr.partitions.push(pr);
                        continue;
                    } else {
                        timestamp
                    };
                    match offset_for_time(shared, partition, target) {
                        Ok(Some((offset, ts))) if offset < end => {
                            pr.offset = offset;
                            pr.timestamp = ts;
                            pr.leader_epoch = epoch_at(partition, offset);
                        }
                        Ok(_) => {}
                        Err(e) => {
                            shared.log(&format!("ListOffsets {}: {e}", topic.name.0));
                            pr.error_code = code::KAFKA_STORAGE_ERROR;
                        }
                    }
                }
            }
            tr.partitions.push(pr);
        }
        r.topics.push(tr);
    }
    r
}

fn decode_options() -> DecodeOptions {
    DecodeOptions {
        crc: CrcPolicy::Ignore,
        ..DecodeOptions::default()
    }
}

/// The first record at or after `timestamp` (from the log start): its offset and timestamp.
fn offset_for_time(
    shared: &Shared,
    partition: &Partition,
    timestamp: i64,
) -> crate::error::Result<Option<(i64, i64)>> {
    let files: Vec<&crate::log::discover::SegmentFile> =
        partition.segments.iter().map(|s| &s.file).collect();
    record_for_timestamp(
        shared.catalog.storage.as_ref(),
        &files,
        timestamp,
        partition.log_start,
        &decode_options(),
        &mut Vec::new(),
    )
}

/// The largest batch timestamp of a partition (kept once found).
fn max_timestamp(shared: &Shared, partition: &Partition) -> crate::error::Result<Option<i64>> {
    let key = (partition.dir.clone(), partition.index);
    if let Some(found) = shared
        .max_timestamps
        .lock()
        .ok()
        .and_then(|m| m.get(&key).copied())
    {
        return Ok(found);
    }
    let storage = shared.catalog.storage.as_ref();
    let mut decoder = crate::format::batch::BatchDecoder::new(decode_options());
    let mut max: Option<i64> = None;
    for segment in &partition.segments {
        crate::log::scan::for_each_entry(
            storage,
            &segment.file.path,
            0,
            crate::log::scan::Access::Whole,
            |position, entry| {
                let info = decoder.header(entry, position)?;
                if info.base_offset >= partition.log_start
                    && info.last_offset < partition.high_watermark
                {
                    max = Some(max.map_or(info.max_timestamp, |m| m.max(info.max_timestamp)));
                }
                Ok(true)
            },
        )?;
    }
    if let Ok(mut m) = shared.max_timestamps.lock() {
        m.insert(key, max);
    }
    Ok(max)
}

pub(super) fn leader_epochs(
    catalog: &Catalog,
    request: OffsetForLeaderEpochRequest,
) -> OffsetForLeaderEpochResponse {
    let mut r = OffsetForLeaderEpochResponse::default();
    for topic in request.topics {
        let mut tr = offset_for_leader_epoch_response::OffsetForLeaderTopicResult::default();
        tr.topic = topic.topic.clone();
        for p in topic.partitions {
            let mut pr = offset_for_leader_epoch_response::EpochEndOffset::default();
            pr.partition = p.partition;
            pr.leader_epoch = -1;
            pr.end_offset = -1;
            match catalog.partition(topic.topic.0.as_str(), p.partition) {
                None => pr.error_code = code::UNKNOWN_TOPIC_OR_PARTITION,
                Some(partition) => match epoch_error(partition, p.current_leader_epoch) {
                    Some(error) => pr.error_code = error,
                    None => {
                        let (epoch, end) = epoch_end_offset(
                            &partition.epochs,
                            p.leader_epoch,
                            partition.high_watermark,
                        );
                        pr.leader_epoch = epoch;
                        pr.end_offset = end;
                    }
                },
            }
            tr.partitions.push(pr);
        }
        r.topics.push(tr);
    }
    r
}
