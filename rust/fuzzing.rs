//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer), kept in the library so
//! that `cargo test` replays every saved crash and seed on stable Rust. Each takes arbitrary
//! bytes and must return: any panic, hang or unbounded allocation is a bug.

use crate::arrow::schema::Projection;
use crate::format::batch::CrcPolicy;
use crate::format::compression::{decompress, Compression};
use crate::format::{control, crc, index, snapshot, v2};
use crate::log::origin::Origin;
use crate::read::reader::{decode_buffer, decode_bytes, list_batches_in_bytes, ReaderBuilder};

/// Decompressed bytes allowed per batch while fuzzing: enough to exercise the limit checks.
const LIMIT: usize = 1 << 20;

fn builder(crc: CrcPolicy) -> ReaderBuilder {
    ReaderBuilder::new()
        .with_projection(Projection::default_with_metadata(true))
        .with_crc(crc)
        .with_include_control(true)
        .with_batch_size(64)
        .with_max_decompressed_size(LIMIT)
        .expect("a valid limit")
}

/// The segment reader: framing, every magic, every codec, records, headers, control records,
/// into Arrow, with and without CRC checking, and the batch listing.
pub fn segment(data: &[u8]) {
    for crc in [CrcPolicy::Ignore, CrcPolicy::Verify, CrcPolicy::Report] {
        let _ = decode_bytes(&builder(crc), data, Origin::default());
    }
    let _ = list_batches_in_bytes(&builder(CrcPolicy::Report), data, Origin::default());
    // binary_view: views built without validation, into the input (given as an owned buffer,
    // or not, when values are copied) and into decompressed batches, must be valid Arrow.
    let views = builder(CrcPolicy::Ignore).with_binary_view(true);
    let owned = arrow_buffer::Buffer::from_slice_ref(data);
    for decoded in [
        decode_buffer(&views, owned, Origin::default()),
        decode_bytes(&views, data, Origin::default()),
    ] {
        for batch in decoded.map(|(batches, _)| batches).unwrap_or_default() {
            for name in ["key", "value"] {
                let column = batch.column_by_name(name).expect("key and value are read");
                column
                    .to_data()
                    .validate_full()
                    .expect("binary_view columns are valid");
            }
        }
    }
}

/// One v2 batch whose CRC is made right, so the fuzzer reaches the records behind it.
pub fn v2_batch(data: &[u8]) {
    let mut entry = data.to_vec();
    if entry.len() < v2::HEADER_SIZE {
        entry.resize(v2::HEADER_SIZE, 0);
    }
    let len = (entry.len() - 12) as i32;
    entry[8..12].copy_from_slice(&len.to_be_bytes());
    entry[16] = 2;
    let sum = crc::crc32c(&entry[v2::ATTRIBUTES_OFFSET..]);
    entry[v2::CRC_OFFSET..v2::CRC_OFFSET + 4].copy_from_slice(&sum.to_be_bytes());
    segment(&entry);
}

/// One v0 or v1 message whose CRC is made right, so the fuzzer reaches the wrapper's inner
/// messages. The first byte picks the magic.
pub fn legacy_message(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut entry = rest.to_vec();
    if entry.len() < 26 {
        entry.resize(26, 0);
    }
    let len = (entry.len() - 12) as i32;
    entry[8..12].copy_from_slice(&len.to_be_bytes());
    entry[16] = pick & 1;
    let sum = crc::crc32(&entry[16..]);
    entry[12..16].copy_from_slice(&sum.to_be_bytes());
    segment(&entry);
}

/// Every decompression path. The first byte picks the codec and the magic.
pub fn decompression(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let codec = [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ][(pick & 3) as usize];
    let magic = ((pick >> 2) % 3) as i8;
    let mut out = Vec::new();
    let _ = decompress(codec, rest, magic, LIMIT, &mut out);
    assert!(out.len() <= LIMIT, "{codec:?} wrote past the limit");
}

/// The index readers, producer snapshots and checkpoint files.
pub fn index_files(data: &[u8]) {
    let offsets = index::read_offset_index(data, 100);
    let _ = index::check_offset_index(data.len(), &offsets, 100);
    let times = index::read_time_index(data, 100);
    let _ = index::check_time_index(data.len(), &times, 100);
    let _ = index::read_txn_index(data);
    let _ = index::lookup_offset(&offsets, 150);
    let _ = index::last_time_entry_below(&times, 1_000);
    let _ = snapshot::parse_producer_snapshot(data);
    let _ =
        crate::format::checkpoint::parse_leader_epoch_checkpoint(&String::from_utf8_lossy(data));
    let _ = crate::arrow::index_tables::leader_epoch_table(&String::from_utf8_lossy(data));
}

/// The control-record parser. The first byte splits the input into key and value.
pub fn control_record(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (key, value) = rest.split_at((split as usize).min(rest.len()));
    let _ = control::validate(Some(key), Some(value));
    let _ = control::parse_end_txn_marker(Some(value));
}

/// Keys and values through the values layer: Schema Registry framing (prefix and header),
/// Avro payloads of two writer versions of a nested record resolved to the latest, strings;
/// and the registry's log fold over arbitrary JSON. The first byte picks a split of the rest
/// into records (each a length byte and that many bytes).
pub fn values(data: &[u8]) {
    use crate::values::columns::{OnValueError, SideOptions, ValueDecoding, ValueOptions};
    use crate::values::decoder::{SchemaText, SchemaType};
    use crate::values::formats::Format;
    use crate::values::registry::Registry;
    use arrow_array::{BinaryArray, RecordBatch};
    use std::sync::Arc;

    let mut records: Vec<&[u8]> = Vec::new();
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        let (one, tail) = tail.split_at((len as usize).min(tail.len()));
        records.push(one);
        rest = tail;
    }
    // The registry's log: records in pairs (key, value).
    let mut fold = Registry::new();
    for (i, pair) in records.chunks(2).enumerate() {
        fold.feed_record(pair.first().copied(), pair.get(1).copied(), i as i64);
    }
    let _ = fold.table();

    let v1 = r#"{"type":"record","name":"R","namespace":"n","fields":[
        {"name":"a","type":"long"},{"name":"s","type":"string"},
        {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}"#;
    let v2 = r#"{"type":"record","name":"R","namespace":"n","fields":[
        {"name":"a","type":"long"},{"name":"s","type":"string"},
        {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
        {"name":"l","type":{"type":"array","items":{"type":"map","values":["null","double"]}},
         "default":[]},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"]},"default":"X"},
        {"name":"f","type":{"type":"fixed","name":"F","size":3},"default":"abc"},
        {"name":"u","type":["null","int","string"],"default":null},
        {"name":"t","type":{"type":"long","logicalType":"timestamp-micros"},"default":0},
        {"name":"r","type":["null",{"type":"record","name":"In","fields":[
            {"name":"x","type":{"type":"array","items":"n.E"}}]}],"default":null}]}"#;
    let mut registry = Registry::new();
    for (id, text) in [(1, v1), (2, v2)] {
        let text = SchemaText {
            schema_type: SchemaType::Avro,
            schema: text.to_string(),
            references: Vec::new(),
        };
        registry.add(id, "t-value", text);
    }
    let registry = Arc::new(registry);
    let column = Arc::new(BinaryArray::from_iter(
        records.iter().map(|r| (!r.is_empty()).then_some(*r)),
    ));
    let batch = RecordBatch::try_from_iter([("value", column.clone() as _), ("key", column as _)])
        .expect("a batch");
    let options = ValueOptions {
        key: SideOptions {
            format: Format::String,
            ..SideOptions::default()
        },
        value: SideOptions {
            format: Format::Avro,
            ..SideOptions::default()
        },
        on_error: OnValueError::Null,
    };
    let decoding = ValueDecoding::new(&options, Some(registry), Some("t"))
        .expect("the schemas compile")
        .expect("decoding");
    let none = |_: Option<&str>, _: Option<i32>, _: i64| None;
    let (out, _) = decoding.apply(&batch, &none).expect("bad values are nulls");
    for column in out.columns() {
        column.to_data().validate_full().expect("valid Arrow");
    }
}

/// Avro values (`values/avro/fuzz.rs`): arbitrary payloads through the compiled decoder,
/// compared with `arrow-avro`'s (the oracle: feature `oracles`).
#[cfg(any(test, feature = "oracles"))]
pub fn avro_value(data: &[u8]) {
    crate::values::avro::fuzz::fuzz(data);
}

/// Protobuf values (`values/protobuf/decoder.rs`): arbitrary payloads of a schema with every field kind.
pub fn protobuf_value(data: &[u8]) {
    decode_pieces(
        crate::values::protobuf::decoder::fuzz_decoder().as_ref(),
        data,
    );
}

/// JSON Schema values (`values/json/decoder.rs`): arbitrary payloads of a schema with every
/// type, decoded by kafkalog's decoder and compared with its oracle (serde_json and arrow-json)
/// row by row (the oracle: feature `oracles`).
#[cfg(any(test, feature = "oracles"))]
pub fn json_value(data: &[u8]) {
    if let Some(payloads) =
        decode_pieces(crate::values::json::decoder::fuzz_decoder().as_ref(), data)
    {
        crate::values::json::decoder::fuzz_compare(&payloads);
    }
}

/// Arbitrary bytes as one batch of payloads for `decoder`: the first byte cuts the rest into
/// pieces (4 bytes a step), then the rest whole and a null. Decoding never fails the batch
/// (bad payloads are row errors), and the array is valid Arrow of the decoder's type, a row a
/// payload.
fn decode_pieces<'a>(
    decoder: &dyn crate::values::decoder::PayloadDecoder,
    data: &'a [u8],
) -> Option<Vec<Option<crate::values::decoder::Payload<'a>>>> {
    use crate::values::decoder::Payload;
    // The fuzzer's inputs are at most 64 KiB (`-max_len`); the replay of saved inputs in
    // `cargo test` skips what is larger.
    if data.len() > 1 << 16 {
        return None;
    }
    let (&cut, rest) = data.split_first()?;
    let size = usize::from(cut).max(1) * 4;
    let payloads: Vec<Option<Payload<'_>>> = rest
        .chunks(size)
        .chain([rest])
        .map(|bytes| {
            Some(Payload {
                bytes,
                schema_id: None,
                message_indexes: &[],
            })
        })
        .chain([None])
        .collect();
    let decoded = decoder
        .decode(&payloads)
        .expect("decoding never fails a batch");
    assert_eq!(decoded.array.len(), payloads.len());
    assert_eq!(decoded.array.data_type(), decoder.data_type());
    decoded
        .array
        .to_data()
        .validate_full()
        .expect("a valid array");
    Some(payloads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fuzz_entry_takes_every_type_and_garbage() {
        let row = br#"{"i": 1, "f": 2.5, "b": true, "s": "x", "t": "2024-01-01T00:00:00Z",
            "d": "2024-01-01", "list": [{"v": 1, "next": {"v": 2}}], "opt": [1], "bag": {"k": 1}}"#;
        let mut data = vec![255];
        data.extend_from_slice(row);
        crate::fuzzing::json_value(&data);
        for cut in [1u8, 2, 7] {
            let mut data = vec![cut];
            data.extend_from_slice(row);
            crate::fuzzing::json_value(&data);
        }
        crate::fuzzing::json_value(&[]);
    }

    #[test]
    fn the_fuzz_entry_takes_every_kind_and_garbage() {
        // str "abc", inner { s "hi" }, packed [1, 2, 3], by_name { "k": {} }, at { seconds 1 },
        // attrs {}.
        let good = b"\xa2\x01\x03abc\x92\x01\x04\x0a\x02hi\xa2\x01\x03\x01\x02\x03\
            \xaa\x01\x05\x0a\x01k\x12\x00\xca\x01\x02\x08\x01\xea\x01\x00";
        let mut data = vec![0x40];
        data.extend_from_slice(good);
        crate::fuzzing::protobuf_value(&data);
        for cut in [1u8, 3, 255] {
            let mut data = vec![cut];
            data.extend((0..600u32).map(|i| (i * 37 % 251) as u8));
            crate::fuzzing::protobuf_value(&data);
        }
        crate::fuzzing::protobuf_value(&[]);
    }

    /// Replays every file under `fuzz/artifacts` and `fuzz/regressions` (crashes once found)
    /// and the real corpus through every entry point.
    /// Hostile values: huge declared lengths and counts, truncations, every prefix of a good
    /// value; each must come back as a null with its reason, at once.
    #[test]
    fn hostile_values() {
        let framed = |id: u8, body: &[u8]| {
            let mut v = vec![0, 0, 0, 0, id];
            v.extend_from_slice(body);
            v
        };
        let mut good = vec![4, 8, b'h', b'i', 2, 0x30];
        // l: one block of one map with one entry "k" -> double, then the end of both.
        good.extend([2, 2, 2, b'k', 2]);
        good.extend(1.5f64.to_le_bytes());
        good.extend([0, 0, 2, b'a', b'b', b'c', 0, 0, 0]);
        let mut inputs: Vec<Vec<u8>> = vec![framed(2, &good)];
        for cut in 0..good.len() {
            inputs.push(framed(2, &good[..cut]));
        }
        // A string of i64::MAX bytes, an array of 2^62 items, a negative length.
        inputs.push(framed(
            1,
            &[
                2, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
        ));
        inputs.push(framed(
            2,
            &[
                2, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ],
        ));
        inputs.push(framed(1, &[2, 3]));
        let mut data = Vec::new();
        for i in &inputs {
            data.push(i.len() as u8);
            data.extend_from_slice(i);
        }
        let start = std::time::Instant::now();
        values(&data);
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn replays_saved_inputs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![root.join("fuzz/regressions"), root.join("fuzz/artifacts")];
        dirs.push(root.join("../shared/corpus/segments"));
        dirs.push(root.join("../shared/corpus/vectors"));
        let mut inputs = 0;
        let mut stack = dirs;
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let Ok(data) = std::fs::read(&path) else {
                    continue;
                };
                if data.len() > 2 << 20 {
                    continue;
                }
                segment(&data);
                v2_batch(&data);
                legacy_message(&data);
                decompression(&data);
                index_files(&data);
                control_record(&data);
                values(&data);
                avro_value(&data);
                protobuf_value(&data);
                json_value(&data);
                #[cfg(feature = "serve")]
                crate::serve::fuzz_request(&data);
                inputs += 1;
            }
        }
        assert!(inputs > 0 || !root.join("../shared/corpus").exists());
    }
}
