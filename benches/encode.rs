//! Encode throughput: Arrow record batches into Kafka batches, single thread, no file I/O.
//!
//! Data (generated here, deterministic): 200k records with 10-byte keys and 100-byte
//! text-like values (and the same with three headers, and 1 KB values), batched as a
//! producer with batch.size=128k would; v2 with each codec, v1 and v0.
//!
//! `cargo bench --bench encode`; criterion prints records/s (elements) and MB/s of the
//! Kafka bytes produced.

use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafkalog::arrow::encoder::{EncodeOptions, Encoder};
use kafkalog::format::compression::Compression;
use std::hint::black_box;
use std::sync::Arc;

mod common;
use common::value;

/// See [`common::record_count`].
fn record_count() -> usize {
    common::record_count(200_000)
}

fn table(value_len: usize, headers: usize) -> RecordBatch {
    let keys = BinaryArray::from_iter_values(
        (0..record_count()).map(|i| format!("key-{:06}", i % 1_000_000)),
    );
    let values = BinaryArray::from_iter_values((0..record_count()).map(|i| value(i, value_len)));
    let timestamps =
        Int64Array::from_iter_values((0..record_count() as i64).map(|i| 1_700_000_000_000 + i));
    let mut columns: Vec<(&str, ArrayRef)> = vec![
        ("key", Arc::new(keys)),
        ("value", Arc::new(values)),
        ("timestamp", Arc::new(timestamps)),
    ];
    if headers > 0 {
        let fields = Fields::from(vec![
            Field::new("key", DataType::Utf8, true),
            Field::new("value", DataType::Binary, true),
        ]);
        let entry = StructBuilder::new(
            fields.clone(),
            vec![
                Box::new(StringBuilder::new()),
                Box::new(BinaryBuilder::new()),
            ],
        );
        let mut list = ListBuilder::new(entry).with_field(Arc::new(Field::new(
            "element",
            DataType::Struct(fields),
            true,
        )));
        for _ in 0..record_count() {
            let s = list.values();
            for h in 0..headers {
                s.field_builder::<StringBuilder>(0)
                    .unwrap()
                    .append_value(format!("header-{h}"));
                s.field_builder::<BinaryBuilder>(1)
                    .unwrap()
                    .append_value(b"some-value");
                s.append(true);
            }
            list.append(true);
        }
        columns.push(("headers", Arc::new(list.finish())));
    }
    let schema = Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(
        Arc::new(schema),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn encode(batch: &RecordBatch, options: EncodeOptions) -> usize {
    let mut encoder = Encoder::new(options).unwrap();
    encoder.write(batch).unwrap();
    encoder.finish().unwrap();
    encoder.take().0.len()
}

fn case(
    c: &mut Criterion,
    group: &str,
    name: &str,
    batch: &RecordBatch,
    magic: i8,
    codec: Compression,
) {
    let options = EncodeOptions {
        magic: Some(magic),
        compression: Some(codec),
        batch_bytes: 128 * 1024,
        log_append_time: Some(0),
        ..Default::default()
    };
    let bytes = encode(batch, options);
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.throughput(Throughput::Elements(record_count() as u64));
    g.bench_function(BenchmarkId::new(name, "records"), |b| {
        b.iter(|| black_box(encode(black_box(batch), options)))
    });
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(BenchmarkId::new(name, "bytes"), |b| {
        b.iter(|| black_box(encode(black_box(batch), options)))
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let small = table(100, 0);
    case(c, "encode-v2", "none-100B", &small, 2, Compression::None);
    case(
        c,
        "encode-v2",
        "none-100B-3headers",
        &table(100, 3),
        2,
        Compression::None,
    );
    case(
        c,
        "encode-v2",
        "none-1KB",
        &table(1000, 0),
        2,
        Compression::None,
    );
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        case(
            c,
            "encode-v2",
            &format!("{}-100B", codec.name()),
            &small,
            2,
            codec,
        );
    }
    for magic in [0i8, 1] {
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
        ] {
            case(
                c,
                &format!("encode-v{magic}"),
                &format!("{}-100B", codec.name()),
                &small,
                magic,
                codec,
            );
        }
    }
}

criterion_group!(encode_benches, benches);
criterion_main!(encode_benches);
