//! Avro values into Arrow, decode alone, one thread: the same Confluent-framed payloads as
//! `benches/bench_values.py` (a 20-field record with nested records, an array, a map, an
//! enum, a nullable union, fixed bytes and logical types; two writer versions resolved to the
//! second), framing removed as a read removes it, decoded by kafkalog's Avro decoder in
//! batches of 65,536 (a read's default batch size).
//!
//! The payloads are not generated here (they are fastavro's bytes, the ones the Java and
//! fastavro figures are measured on): write them first, then point the bench at them.
//!
//! ```text
//! .venv/bin/python benches/bench_values.py --write-values /tmp/avro-values
//! KAFKALOG_AVRO_VALUES=/tmp/avro-values cargo bench --bench values_avro
//! ```
//!
//! Without `KAFKALOG_AVRO_VALUES` the bench says so and measures nothing. It times the
//! decoder reads use (`values::avro::decoder::decoder`, compiled programs) and `arrow-avro`'s through
//! the oracle (`values::avro::oracle::oracle`, the decoder before it) in alternating passes, and
//! prints each one's best of 21 (wall and thread CPU seconds, a JSON line per decoder, as
//! `benches/java/AvroBench.java` does over the same values), then criterion's payloads/s
//! (elements) of the compiled decoder. `benches/avro_vs_java.sh` runs it beside Java.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafkalog::values::avro;
use kafkalog::values::decoder::{Payload, SchemaText, SchemaType};
use std::hint::black_box;

/// Payloads a decode call is handed.
const BATCH: usize = 64 * 1024;

fn avro_schema(path: &Path) -> SchemaText {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    SchemaText::new(SchemaType::Avro, text)
}

/// The framed values of `path`: each a 4-byte big-endian length and its bytes.
fn framed_values(path: &Path) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 4 <= data.len() {
        let len = u32::from_be_bytes(data[pos..pos + 4].try_into().unwrap()) as usize;
        out.push(data[pos + 4..pos + 4 + len].to_vec());
        pos += 4 + len;
    }
    out
}

/// The CPU time of the calling thread, in seconds.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; the clock exists on Linux and macOS.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn benches(c: &mut Criterion) {
    let Some(dir) = std::env::var_os("KAFKALOG_AVRO_VALUES").map(PathBuf::from) else {
        eprintln!(
            "values_avro: set KAFKALOG_AVRO_VALUES to a folder written by \
             `benches/bench_values.py --write-values DIR`; nothing measured"
        );
        return;
    };
    // mimalloc tuned as the Python extension tunes it when it loads.
    kafkalog::tune_allocator();
    let v1 = avro_schema(&dir.join("v1.avsc"));
    let v2 = avro_schema(&dir.join("v2.avsc"));
    let writers =
        HashMap::<i64, Arc<SchemaText>>::from([(1, Arc::new(v1)), (2, Arc::new(v2.clone()))]);
    let writers = Arc::new(writers);
    let decoder = avro::decoder::decoder(&v2, writers.clone()).expect("the reader schema compiles");
    let oracle = avro::oracle::oracle(&v2, writers).expect("the reader schema compiles");
    let values = framed_values(&dir.join("values.bin"));
    // The framing removed, as kafkalog::format::confluent does on a read.
    let payloads: Vec<Option<Payload<'_>>> = values
        .iter()
        .map(|v| {
            assert_eq!(v[0], 0, "Confluent framing");
            Some(Payload {
                bytes: &v[5..],
                schema_id: Some(i64::from(u32::from_be_bytes(v[1..5].try_into().unwrap()))),
                message_indexes: &[],
            })
        })
        .collect();
    // Both decoders give the same column.
    for batch in payloads.chunks(BATCH) {
        let decoded = decoder.decode(batch).unwrap();
        assert!(
            decoded.errors.iter().all(Option::is_none),
            "{:?}",
            decoded.errors
        );
        assert_eq!(decoded.array.null_count(), 0);
        assert_eq!(
            decoded.array.to_data(),
            oracle.decode(batch).unwrap().array.to_data()
        );
    }
    // As benches/java/AvroBench.java measures: the best of 21 passes, wall and this thread's
    // CPU time (steadier than the wall on a loaded machine), printed as one JSON line; the two
    // decoders' passes alternate, so a change in the machine's load falls on both.
    let rounds: usize = std::env::var("KAFKALOG_AVRO_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        // `cargo test --all-targets` runs this once to see it works; `cargo bench` passes
        // `--bench`.
        .unwrap_or(if std::env::args().any(|a| a == "--bench") {
            21
        } else {
            1
        });
    // `KAFKALOG_AVRO_ONLY=compiled` (or `arrow-avro`): that decoder's passes alone, for a
    // profile of it.
    let only = std::env::var("KAFKALOG_AVRO_ONLY").ok();
    let mut best = [(f64::MAX, f64::MAX); 2];
    for _ in 0..rounds {
        for (k, d) in [&decoder, &oracle].into_iter().enumerate() {
            let name = ["compiled", "arrow-avro"][k];
            if only.as_deref().is_some_and(|o| o != name) {
                continue;
            }
            let (t, c) = (Instant::now(), thread_cpu());
            for batch in payloads.chunks(BATCH) {
                black_box(d.decode(batch).unwrap());
            }
            best[k].0 = best[k].0.min(t.elapsed().as_secs_f64());
            best[k].1 = best[k].1.min(thread_cpu() - c);
        }
    }
    for (name, (wall, cpu)) in ["compiled", "arrow-avro"].iter().zip(best) {
        if wall == f64::MAX {
            continue;
        }
        println!(
            "{{\"decoder\": \"{name}\", \"records\": {}, \"best_wall_s\": {wall:.6}, \
             \"best_cpu_s\": {cpu:.6}}}",
            payloads.len()
        );
    }
    if only.is_some() {
        return;
    }
    let name = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut group = c.benchmark_group("values_avro");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(payloads.len() as u64));
    group.bench_function(format!("20 fields/{name}"), |b| {
        b.iter(|| {
            for batch in payloads.chunks(BATCH) {
                black_box(decoder.decode(batch).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(values, benches);
criterion_main!(values);
