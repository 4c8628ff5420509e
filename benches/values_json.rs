//! JSON Schema values into Arrow, decode alone, one thread: the 20-field order of
//! `benches/values_protobuf_json.rs` (its JSON part: scalars, an enum, a date-time, a nested
//! object, 3 nested lines, a 2-entry map read as JSON text, a nullable string, an integer
//! array), 200,000 payloads of about 600 bytes, Confluent-framed (magic byte, schema id 1),
//! the framing removed as a read removes it, decoded by kafkalog's JSON Schema decoder in
//! batches of 65,536 (a read's default batch size), the schema id checked against the
//! registry as on a read.
//!
//! ```text
//! cargo bench --bench values_json                      # kafkalog, then the oracle
//! KAFKALOG_JSON_VALUES=DIR cargo bench --bench values_json   # also writes DIR/values.bin
//! sh benches/json_vs_java.sh DIR                        # against Jackson, json, from_json
//! ```
//!
//! `KAFKALOG_JSON_READ=DIR` decodes DIR/values.bin (4-byte big-endian lengths, each payload
//! Confluent-framed) with the JSON Schema in DIR/schema.json instead, kafkalog alone;
//! `KAFKALOG_JSON_WANT=id,price,tags,address.city` builds only those fields, as a Spark query
//! whose columns are pruned does (`benches/spark_typed.py` writes such a folder:
//! `python benches/spark_typed.py --json-values DIR`).
//!
//! It prints the best of 21 passes (wall and thread CPU seconds, a JSON line, as
//! `benches/java/JsonBench.java` does over the same `values.bin`) for kafkalog's decoder, the
//! best of 5 for the oracle it replaced (serde_json and arrow-json, `values/json/oracle.rs`;
//! `KAFKALOG_JSON_ORACLE=0` leaves it out), then criterion's payloads/s (elements).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafkalog::values::decoder::{Payload, PayloadDecoder, SchemaText, SchemaType, Wanted};
use kafkalog::values::json;
use std::hint::black_box;

const COUNT: usize = 200_000;
/// Payloads a decode call is handed.
const BATCH: usize = 64 * 1024;

/// The JSON Schema of `benches/values_protobuf_json.rs`.
const JSON_SCHEMA: &str = r##"{
  "type": "object",
  "definitions": {
    "Line": {"type": "object", "properties": {
      "sku": {"type": "string"}, "qty": {"type": "integer"}, "price": {"type": "number"}}},
    "Address": {"type": "object", "properties": {
      "street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}}}
  },
  "properties": {
    "id": {"type": "integer"}, "customer": {"type": "string"},
    "status": {"enum": ["UNKNOWN", "NEW", "SHIPPED"]},
    "created": {"type": "string", "format": "date-time"},
    "amount": {"type": "number"}, "ratio": {"type": "number"}, "count": {"type": "integer"},
    "big": {"type": "integer"}, "paid": {"type": "boolean"}, "currency": {"type": "string"},
    "delta": {"type": "integer"}, "region": {"type": "integer"}, "token": {"type": "string"},
    "ship_to": {"$ref": "#/definitions/Address"},
    "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
    "attrs": {"type": "object", "additionalProperties": {"type": "string"}},
    "note": {"type": ["null", "string"]},
    "samples": {"type": "array", "items": {"type": "integer"}},
    "channel": {"type": "string"}, "version": {"type": "integer"}
  }
}"##;

/// The payloads of `benches/values_protobuf_json.rs` (the same values; serde_json writes
/// object keys sorted), framed as Confluent's serializer frames them: magic 0, schema id 1.
fn framed_payloads() -> Vec<Vec<u8>> {
    (0..COUNT)
        .map(|i| {
            let n = i as i64;
            let status = ["UNKNOWN", "NEW", "SHIPPED"][i % 3];
            let json = serde_json::json!({
                "id": n, "customer": format!("customer-{}", n % 977),
                "status": status,
                "created": format!("2023-11-14T22:{:02}:{:02}.000123Z", (i / 60) % 60, i % 60),
                "amount": n as f64 * 1.25, "ratio": 0.5, "count": n % 100,
                "big": i64::MAX - n, "paid": n % 2 == 0, "currency": "EUR", "delta": -n,
                "region": 7, "token": "AAAAAAAAAAAAAAAAAAAAAA==",
                "ship_to": {"street": "1 Main Street", "city": "Zurich", "zip": "8000"},
                "lines": (0..3).map(|j| serde_json::json!(
                    {"sku": format!("sku-{j}"), "qty": j + 1, "price": 9.99})).collect::<Vec<_>>(),
                "attrs": {"source": "web", "campaign": "winter"},
                "note": "leave at the door", "samples": [0, n, 2 * n, 3 * n],
                "channel": "online", "version": 3
            });
            let mut framed = vec![0, 0, 0, 0, 1];
            framed.extend(json.to_string().into_bytes());
            framed
        })
        .collect()
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

fn decode_all(decoder: &dyn PayloadDecoder, payloads: &[Option<Payload<'_>>]) {
    for batch in payloads.chunks(BATCH) {
        black_box(decoder.decode(batch).expect("decodes"));
    }
}

/// Best of `passes`, wall and thread CPU, as a JSON line.
fn best_of(
    name: &str,
    decoder: &dyn PayloadDecoder,
    payloads: &[Option<Payload<'_>>],
    passes: usize,
) {
    decode_all(decoder, payloads);
    let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
    for _ in 0..passes {
        let (t, c) = (Instant::now(), thread_cpu());
        decode_all(decoder, payloads);
        wall = wall.min(t.elapsed().as_secs_f64());
        cpu = cpu.min(thread_cpu() - c);
    }
    println!(
        "{{\"decoder\": \"{name}\", \"records\": {}, \"best_wall_s\": {wall:.6}, \"best_cpu_s\": {cpu:.6}}}",
        payloads.len()
    );
}

/// `a,b.c` as the fields of a struct asked for (a dot: a field of a nested struct).
fn wanted(spec: &str) -> Wanted {
    let mut fields: Vec<(String, Wanted)> = Vec::new();
    for path in spec.split(',').filter(|p| !p.is_empty()) {
        let (head, rest) = path.split_once('.').unwrap_or((path, ""));
        let sub = if rest.is_empty() {
            Wanted::All
        } else {
            wanted(rest)
        };
        match fields.iter_mut().find(|(n, _)| n == head) {
            Some((_, Wanted::Fields(have))) => match sub {
                Wanted::Fields(more) => have.extend(more),
                Wanted::All => *have = Vec::new(),
            },
            Some(_) => {}
            None => fields.push((head.to_string(), sub)),
        }
    }
    Wanted::Fields(fields)
}

/// The `KAFKALOG_JSON_READ` run: `dir`'s payloads and schema, kafkalog's decoder alone.
fn read_folder(dir: &Path) {
    let schema = std::fs::read_to_string(dir.join("schema.json")).expect("schema.json");
    let data = std::fs::read(dir.join("values.bin")).expect("values.bin");
    let mut payloads = Vec::new();
    let mut at = 0;
    while at + 4 <= data.len() {
        let n = u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let v = &data[at + 4..at + 4 + n];
        payloads.push(Some(Payload {
            bytes: &v[5..],
            schema_id: Some(i64::from(u32::from_be_bytes(v[1..5].try_into().unwrap()))),
            message_indexes: &[],
        }));
        at += 4 + n;
    }
    let reader = SchemaText::new(SchemaType::Json, &schema);
    let writers = Arc::new(HashMap::<i64, Arc<SchemaText>>::from([(
        1,
        Arc::new(reader.clone()),
    )]));
    let decoder = match std::env::var("KAFKALOG_JSON_WANT") {
        Ok(spec) => json::decoder::pruned_decoder(&reader, writers, &wanted(&spec)),
        Err(_) => json::decoder::decoder(&reader, writers),
    }
    .expect("the schema compiles");
    let check = decoder.decode(&payloads[..1000]).expect("decodes");
    assert!(
        check.errors.iter().all(Option::is_none),
        "{:?}",
        check.errors
    );
    let rounds = std::env::var("KAFKALOG_JSON_ROUNDS").map_or(21, |r| r.parse().expect("a count"));
    best_of("kafkalog", decoder.as_ref(), &payloads, rounds);
}

fn benches(c: &mut Criterion) {
    // mimalloc tuned as the Python extension tunes it when it loads.
    kafkalog::tune_allocator();
    if let Some(dir) = std::env::var_os("KAFKALOG_JSON_READ") {
        read_folder(Path::new(&dir));
        return;
    }
    let values = framed_payloads();
    if let Some(dir) = std::env::var_os("KAFKALOG_JSON_VALUES").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).expect("the values folder");
        let mut out = Vec::new();
        for v in &values {
            out.extend((v.len() as u32).to_be_bytes());
            out.extend(v);
        }
        std::fs::write(dir.join("values.bin"), out).expect("values.bin written");
        std::fs::write(dir.join("schema.json"), JSON_SCHEMA).expect("schema.json written");
    }
    let reader = SchemaText::new(SchemaType::Json, JSON_SCHEMA);
    let writers = HashMap::<i64, Arc<SchemaText>>::from([(1, Arc::new(reader.clone()))]);
    let ours = json::decoder::decoder(&reader, Arc::new(writers)).expect("the schema compiles");
    let shape = json::decoder::shape(&reader).expect("the schema compiles");
    let oracle = json::oracle::decoder(&shape).expect("the oracle builds");
    // The framing removed, as kafkalog::format::confluent does on a read.
    let payloads: Vec<Option<Payload<'_>>> = values
        .iter()
        .map(|v| {
            Some(Payload {
                bytes: &v[5..],
                schema_id: Some(i64::from(u32::from_be_bytes(v[1..5].try_into().unwrap()))),
                message_indexes: &[],
            })
        })
        .collect();
    let check = ours.decode(&payloads[..1000]).expect("decodes");
    assert!(
        check.errors.iter().all(Option::is_none),
        "{:?}",
        check.errors[0]
    );
    let bytes: usize = payloads.iter().flatten().map(|p| p.bytes.len()).sum();
    eprintln!(
        "values_json: {} payloads, {:.0} bytes each on average",
        payloads.len(),
        bytes as f64 / payloads.len() as f64
    );
    // `cargo test --all-targets` runs each once to see it works; `cargo bench` passes `--bench`.
    let bench = std::env::args().any(|a| a == "--bench");
    best_of(
        "kafkalog",
        ours.as_ref(),
        &payloads,
        if bench { 21 } else { 1 },
    );
    // The oracle is ten times slower: fewer passes (none with KAFKALOG_JSON_ORACLE=0, to
    // profile kafkalog's decoder alone).
    if std::env::var_os("KAFKALOG_JSON_ORACLE").is_none_or(|v| v != "0") {
        best_of(
            "oracle",
            oracle.as_ref(),
            &payloads,
            if bench { 5 } else { 1 },
        );
    }
    let mut group = c.benchmark_group("values");
    group.throughput(Throughput::Elements(payloads.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("json/20 fields", |b| {
        b.iter(|| decode_all(ours.as_ref(), &payloads))
    });
    group.finish();
}

criterion_group!(values, benches);
criterion_main!(values);
