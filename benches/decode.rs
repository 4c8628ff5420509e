//! Decode throughput: Kafka segment bytes into Arrow record batches, single thread.
//!
//! Data (generated here, deterministic): 10-byte keys and 100-byte values, batches of 1000
//! records (~120 KB, what a producer with batch.size=128k writes), 1M records a run; plus
//! the same with three headers, 1 KB values, v1 and v0, and each compression. The floor is
//! CRC-32C of the same bytes plus one copy of them.
//!
//! `cargo bench --bench decode`; criterion prints records/s (elements) and MB/s of segment bytes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafkalog::arrow::schema::{Column, Projection};
use kafkalog::format::batch::{CrcPolicy, TimestampType};
use kafkalog::format::compression::Compression;
use kafkalog::format::legacy::{write_entry, write_wrapper, Wrapper};
use kafkalog::format::v2::{parse_header, write_batch, write_record, BatchHeader, HEADER_SIZE};
use kafkalog::log::origin::Origin;
use kafkalog::read::reader::{decode_bytes, ReaderBuilder};
use std::hint::black_box;

mod common;
use common::value;

/// See [`common::record_count`].
fn record_count() -> usize {
    common::record_count(1_000_000)
}

const PER_BATCH: usize = 1000;

struct Shape {
    value_len: usize,
    headers: usize,
}

fn v2_segment(shape: &Shape, codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    let headers: Vec<(Vec<u8>, Vec<u8>)> = (0..shape.headers)
        .map(|h| (format!("header-{h}").into_bytes(), b"some-value".to_vec()))
        .collect();
    let mut records = Vec::new();
    for b in 0..record_count() / PER_BATCH {
        records.clear();
        for r in 0..PER_BATCH {
            let i = b * PER_BATCH + r;
            let key = format!("key-{:06}", i % 1_000_000);
            let hs = headers
                .iter()
                .map(|(k, v)| (k.as_slice(), Some(v.as_slice())));
            write_record(
                &mut records,
                r as i32,
                r as i64,
                Some(key.as_bytes()),
                Some(&value(i, shape.value_len)),
                hs,
            );
        }
        let header = BatchHeader {
            base_offset: (b * PER_BATCH) as i64,
            partition_leader_epoch: 0,
            compression: codec,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: false,
            is_control: false,
            delete_horizon: false,
            last_offset_delta: PER_BATCH as i32 - 1,
            base_timestamp: 1_700_000_000_000,
            max_timestamp: 1_700_000_000_000 + PER_BATCH as i64 - 1,
            producer_id: 1,
            producer_epoch: 0,
            base_sequence: (b * PER_BATCH) as i32,
        };
        write_batch(&mut out, &header, &records, PER_BATCH as i32, None).unwrap();
    }
    out
}

fn legacy_segment(magic: i8, shape: &Shape, codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    let mut inner = Vec::new();
    for b in 0..record_count() / PER_BATCH {
        inner.clear();
        for r in 0..PER_BATCH {
            let i = b * PER_BATCH + r;
            let key = format!("key-{:06}", i % 1_000_000);
            let offset = if codec == Compression::None || magic == 0 {
                i as i64
            } else {
                r as i64
            };
            let target = if codec == Compression::None {
                &mut out
            } else {
                &mut inner
            };
            write_entry(
                target,
                offset,
                magic,
                0,
                1_700_000_000_000 + i as i64,
                Some(key.as_bytes()),
                Some(&value(i, shape.value_len)),
            )
            .unwrap();
        }
        if codec != Compression::None {
            let last = ((b + 1) * PER_BATCH - 1) as i64;
            let wrapper = Wrapper {
                offset: last,
                magic,
                compression: codec,
                timestamp_type: if magic == 0 {
                    TimestampType::NoTimestamp
                } else {
                    TimestampType::CreateTime
                },
                timestamp: 1_700_000_000_000 + last,
            };
            write_wrapper(&mut out, &wrapper, &inner, None).unwrap();
        }
    }
    out
}

/// Whether a case is selected by the filter arguments given to `cargo bench` (criterion reads
/// them too); generating every case's data when one is asked for would take a minute.
fn wanted(id: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        // Flags and their numeric values (--measurement-time 3) are not filters.
        .filter(|a| !a.starts_with('-') && a.parse::<f64>().is_err())
        .flat_map(|a| a.split('|').map(str::to_string).collect::<Vec<_>>())
        .collect();
    filters.is_empty()
        || filters
            .iter()
            .any(|f| id.contains(f.as_str()) || f.contains(id))
}

fn bench_case(c: &mut Criterion, group: &str, name: &str, make: impl FnOnce() -> Vec<u8>) {
    bench_read(c, group, name, ReaderBuilder::new(), make)
}

fn bench_read(
    c: &mut Criterion,
    group: &str,
    name: &str,
    builder: ReaderBuilder,
    make: impl FnOnce() -> Vec<u8>,
) {
    if !wanted(&format!("{group}/{name}")) {
        return;
    }
    let bytes = &make();
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.throughput(Throughput::Elements(record_count() as u64));
    g.bench_function(BenchmarkId::new(name, "records"), |b| {
        b.iter(|| {
            let (batches, _) = decode_bytes(&builder, black_box(bytes), Origin::default()).unwrap();
            black_box(batches)
        })
    });
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function(BenchmarkId::new(name, "bytes"), |b| {
        b.iter(|| {
            let (batches, _) = decode_bytes(&builder, black_box(bytes), Origin::default()).unwrap();
            black_box(batches)
        })
    });
    g.finish();
}

fn floor(c: &mut Criterion, bytes: &[u8]) {
    let mut g = c.benchmark_group("floor");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("crc32c+copy", |b| {
        let mut copy = vec![0u8; bytes.len()];
        b.iter(|| {
            copy.copy_from_slice(black_box(bytes));
            black_box(crc32c::crc32c(&copy))
        })
    });
    g.finish();
}

/// The bare decompressor on the same bytes: each batch's compressed records decompressed by the
/// codec layer (the library call and Kafka's framing around it, nothing else) into a reused
/// buffer. Reported in records/s, to set beside the full decode of the same segment.
fn bare_decompression(c: &mut Criterion, name: &str, bytes: &[u8]) {
    use kafkalog::format::compression::decompress;
    use kafkalog::format::segment::{next_entry, Frame};
    let mut payloads = Vec::new();
    let mut pos = 0;
    while let Ok(Frame::Entry(len)) = next_entry(&bytes[pos..]) {
        let entry = &bytes[pos..pos + len];
        let header = parse_header(entry, pos as u64, CrcPolicy::Ignore).unwrap();
        payloads.push((header.compression, &entry[HEADER_SIZE..]));
        pos += len;
    }
    let mut g = c.benchmark_group("bare");
    g.sample_size(10);
    g.throughput(Throughput::Elements(record_count() as u64));
    let mut out = Vec::new();
    g.bench_function(BenchmarkId::new(name, "records"), |b| {
        b.iter(|| {
            for (codec, payload) in &payloads {
                decompress(*codec, black_box(payload), 2, usize::MAX, &mut out).unwrap();
                black_box(&out);
            }
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let small = Shape {
        value_len: 100,
        headers: 0,
    };
    if wanted("floor") {
        floor(c, &v2_segment(&small, Compression::None));
    }
    bench_case(c, "v2", "none-100B", || {
        v2_segment(&small, Compression::None)
    });
    bench_case(c, "v2", "none-100B-3headers", || {
        v2_segment(
            &Shape {
                value_len: 100,
                headers: 3,
            },
            Compression::None,
        )
    });
    bench_case(c, "v2", "none-1KB", || {
        v2_segment(
            &Shape {
                value_len: 1000,
                headers: 0,
            },
            Compression::None,
        )
    });
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let name = format!("{}-100B", codec.name());
        if wanted(&format!("v2/{name}"))
            || wanted(&format!("bare/{name}"))
            || wanted(&format!("spark/{name}"))
        {
            let segment = v2_segment(&small, codec);
            bench_case(c, "v2", &name, || segment.clone());
            if wanted(&format!("bare/{name}")) {
                bare_decompression(c, &name, &segment);
            }
            // What the JVM Spark source asks for `sum(length(value)), max(offset)`: two
            // columns, the values as views into the decompressed records.
            let spark = ReaderBuilder::new()
                .with_projection(Projection::new(vec![Column::Value, Column::Offset]).unwrap())
                .with_binary_view(true);
            bench_read(c, "spark", &name, spark, || segment.clone());
        }
    }
    for magic in [0i8, 1] {
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
        ] {
            bench_case(
                c,
                &format!("v{magic}"),
                &format!("{}-100B", codec.name()),
                || legacy_segment(magic, &small, codec),
            );
        }
    }
}

criterion_group!(decode, benches);
criterion_main!(decode);
