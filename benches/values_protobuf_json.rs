//! Protobuf and JSON Schema values into Arrow: payloads (framing already removed) decoded a
//! batch of 1000 at a time, single thread.
//!
//! Data (generated here, deterministic): 20,000 payloads of an order with 20 fields: scalars
//! of every width, a string enum, a Timestamp, a nested message, a repeated nested message
//! (3 lines), a map (2 entries), a wrapper, a repeated scalar. The JSON payloads hold the
//! same values under a JSON Schema of the same shape (the map as an object of
//! `additionalProperties`, so JSON text), and under the same schema without the map (so the
//! payloads go to arrow-json without being parsed into values first).
//!
//! `cargo bench --bench values_protobuf_json`; criterion prints payloads/s (elements).
//!
//! `KAFKALOG_PROTOBUF_OUT=DIR` instead writes the Protobuf payloads framed as Confluent's
//! serializer frames them (`DIR/values.bin`: each a 4-byte big-endian length and its bytes)
//! and their schema (`DIR/order.desc`, a `FileDescriptorSet`) for the Java and upb benchmarks
//! (`benches/protobuf_vs_java.sh`), and times the decoder and its oracle (`prost-reflect`
//! dynamic messages, the decoder before issue 34) on them: the best of
//! `KAFKALOG_PROTOBUF_ROUNDS` (21) passes, wall and thread CPU time, as JSON lines.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafkalog::values::decoder::{Payload, PayloadDecoder, SchemaText, SchemaType, WriterSchemas};
use kafkalog::values::{json, protobuf};
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, Value};
use std::hint::black_box;

const COUNT: usize = 20_000;
const BATCH: usize = 1000;

const PROTO: &str = r#"
syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message Order {
  enum Status { UNKNOWN = 0; NEW = 1; SHIPPED = 2; }
  message Line { string sku = 1; int32 qty = 2; double price = 3; }
  message Address { string street = 1; string city = 2; string zip = 3; }
  int64 id = 1; string customer = 2; Status status = 3; google.protobuf.Timestamp created = 4;
  double amount = 5; float ratio = 6; int32 count = 7; uint64 big = 8; bool paid = 9;
  string currency = 10; sint64 delta = 11; fixed32 region = 12; bytes token = 13;
  Address ship_to = 14; repeated Line lines = 15; map<string, string> attrs = 16;
  google.protobuf.StringValue note = 17; repeated int64 samples = 18; string channel = 19;
  int64 version = 20;
}
"#;

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

struct NoWriters;

impl WriterSchemas for NoWriters {
    fn writer(&self, _id: i64) -> Option<Arc<SchemaText>> {
        None
    }
}

fn schema(schema_type: SchemaType, text: &str) -> SchemaText {
    SchemaText {
        schema_type,
        schema: text.to_owned(),
        references: Vec::new(),
    }
}

fn protobuf_pool() -> DescriptorPool {
    let mut resolver = protox::file::ChainFileResolver::new();
    resolver.add(OneFile);
    resolver.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.open_file("bench.proto").expect("compiles");
    compiler.descriptor_pool()
}

fn protobuf_payloads() -> Vec<Vec<u8>> {
    let pool = protobuf_pool();
    let order = pool.get_message_by_name("bench.Order").unwrap();
    let line = pool.get_message_by_name("bench.Order.Line").unwrap();
    let address = pool.get_message_by_name("bench.Order.Address").unwrap();
    let timestamp = pool
        .get_message_by_name("google.protobuf.Timestamp")
        .unwrap();
    let wrapper = pool
        .get_message_by_name("google.protobuf.StringValue")
        .unwrap();
    (0..COUNT)
        .map(|i| {
            let n = i as i64;
            let mut m = DynamicMessage::new(order.clone());
            let mut set = |name: &str, value: Value| m.set_field_by_name(name, value);
            set("id", Value::I64(n));
            set("customer", Value::String(format!("customer-{}", n % 977)));
            set("status", Value::EnumNumber((n % 3) as i32));
            let mut ts = DynamicMessage::new(timestamp.clone());
            ts.set_field_by_name("seconds", Value::I64(1_700_000_000 + n));
            ts.set_field_by_name("nanos", Value::I32(123_000));
            set("created", Value::Message(ts));
            set("amount", Value::F64(n as f64 * 1.25));
            set("ratio", Value::F32(0.5));
            set("count", Value::I32((n % 100) as i32));
            set("big", Value::U64(u64::MAX - n as u64));
            set("paid", Value::Bool(n % 2 == 0));
            set("currency", Value::String("EUR".into()));
            set("delta", Value::I64(-n));
            set("region", Value::U32(7));
            set("token", Value::Bytes(vec![n as u8; 16].into()));
            let mut a = DynamicMessage::new(address.clone());
            a.set_field_by_name("street", Value::String("1 Main Street".into()));
            a.set_field_by_name("city", Value::String("Zurich".into()));
            a.set_field_by_name("zip", Value::String("8000".into()));
            set("ship_to", Value::Message(a));
            let lines = (0..3)
                .map(|j| {
                    let mut l = DynamicMessage::new(line.clone());
                    l.set_field_by_name("sku", Value::String(format!("sku-{j}")));
                    l.set_field_by_name("qty", Value::I32(j + 1));
                    l.set_field_by_name("price", Value::F64(9.99));
                    Value::Message(l)
                })
                .collect();
            set("lines", Value::List(lines));
            let attrs = [("source", "web"), ("campaign", "winter")]
                .into_iter()
                .map(|(k, v)| (MapKey::String(k.into()), Value::String(v.into())))
                .collect();
            set("attrs", Value::Map(attrs));
            let mut w = DynamicMessage::new(wrapper.clone());
            w.set_field_by_name("value", Value::String("leave at the door".into()));
            set("note", Value::Message(w));
            set(
                "samples",
                Value::List((0..4).map(|s| Value::I64(n * s)).collect()),
            );
            set("channel", Value::String("online".into()));
            set("version", Value::I64(3));
            prost::Message::encode_to_vec(&m)
        })
        .collect()
}

struct OneFile;

impl protox::file::FileResolver for OneFile {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == "bench.proto" {
            protox::file::File::from_source(name, PROTO)
        } else {
            Err(protox::Error::file_not_found(name))
        }
    }
}

fn json_payloads() -> Vec<Vec<u8>> {
    (0..COUNT)
        .map(|i| {
            let n = i as i64;
            let status = ["UNKNOWN", "NEW", "SHIPPED"][i % 3];
            serde_json::json!({
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
            })
            .to_string()
            .into_bytes()
        })
        .collect()
}

fn run(c: &mut Criterion, name: &str, decoder: &dyn PayloadDecoder, payloads: &[Vec<u8>]) {
    let payloads: Vec<Option<Payload<'_>>> = payloads
        .iter()
        .map(|bytes| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .collect();
    let decoded = decoder.decode(&payloads[..BATCH]).unwrap();
    assert!(
        decoded.errors.iter().all(Option::is_none),
        "{:?}",
        decoded.errors[0]
    );
    let mut group = c.benchmark_group("values");
    group.throughput(Throughput::Elements(payloads.len() as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            for batch in payloads.chunks(BATCH) {
                black_box(decoder.decode(batch).unwrap());
            }
        })
    });
    group.finish();
}

/// The thread's CPU time, in seconds.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// Writes the framed payloads and the schema to `dir`, and times the decoder and its oracle.
fn protobuf_side_by_side(dir: &str, payloads: &[Vec<u8>]) {
    use prost::Message;
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut file = Vec::new();
    for p in payloads {
        // Magic byte, schema id 1, the single 0 byte of the first message, the payload.
        let mut framed = vec![0, 0, 0, 0, 1, 0];
        framed.extend_from_slice(p);
        file.extend_from_slice(&(framed.len() as u32).to_be_bytes());
        file.extend_from_slice(&framed);
    }
    std::fs::write(dir.join("values.bin"), &file).unwrap();
    let set = prost_types::FileDescriptorSet {
        file: protobuf_pool().file_descriptor_protos().cloned().collect(),
    };
    std::fs::write(dir.join("order.desc"), set.encode_to_vec()).unwrap();
    let rounds: usize = std::env::var("KAFKALOG_PROTOBUF_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        // `cargo test --all-targets` runs this once to see it works; `cargo bench` passes
        // `--bench`.
        .unwrap_or(if std::env::args().any(|a| a == "--bench") {
            21
        } else {
            1
        });
    let framed: Vec<Option<Payload<'_>>> = payloads
        .iter()
        .map(|bytes| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .collect();
    let reader = schema(SchemaType::Protobuf, PROTO);
    let decoders = [
        (
            "kafkalog",
            protobuf::decoder::decoder(&reader, None, Arc::new(NoWriters)).unwrap(),
        ),
        (
            "prost-reflect (before)",
            protobuf::decoder::oracle_decoder(&reader, None, Arc::new(NoWriters)).unwrap(),
        ),
    ];
    // KAFKALOG_PROTOBUF_ONLY=kafkalog: the decoder alone (for a profile).
    let only = std::env::var("KAFKALOG_PROTOBUF_ONLY").ok();
    for (name, decoder) in &decoders {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let (t, c) = (std::time::Instant::now(), cpu_seconds());
            for batch in framed.chunks(BATCH) {
                let decoded = decoder.decode(batch).unwrap();
                assert!(decoded.errors.iter().all(Option::is_none));
                black_box(decoded);
            }
            wall = wall.min(t.elapsed().as_secs_f64());
            cpu = cpu.min(cpu_seconds() - c);
        }
        println!(
            "{{\"decoder\": \"{name}\", \"values\": {}, \"best_wall_s\": {wall:.6}, \"best_cpu_s\": {cpu:.6}}}",
            framed.len()
        );
    }
}

fn benches(c: &mut Criterion) {
    let payloads = protobuf_payloads();
    if let Ok(dir) = std::env::var("KAFKALOG_PROTOBUF_OUT") {
        protobuf_side_by_side(&dir, &payloads);
        return;
    }
    let decoder = protobuf::decoder::decoder(
        &schema(SchemaType::Protobuf, PROTO),
        None,
        Arc::new(NoWriters),
    )
    .unwrap();
    run(c, "protobuf/20 fields", decoder.as_ref(), &payloads);
    let payloads = json_payloads();
    let decoder =
        json::decoder::decoder(&schema(SchemaType::Json, JSON_SCHEMA), Arc::new(NoWriters))
            .unwrap();
    run(c, "json/20 fields", decoder.as_ref(), &payloads);
    // The same without the map (JSON text): payloads go to arrow-json unparsed.
    let direct = JSON_SCHEMA.replace(
        r#""attrs": {"type": "object", "additionalProperties": {"type": "string"}},"#,
        "",
    );
    assert_ne!(direct, JSON_SCHEMA);
    let decoder =
        json::decoder::decoder(&schema(SchemaType::Json, &direct), Arc::new(NoWriters)).unwrap();
    run(c, "json/19 fields, direct", decoder.as_ref(), &payloads);
}

criterion_group!(values, benches);
criterion_main!(values);
