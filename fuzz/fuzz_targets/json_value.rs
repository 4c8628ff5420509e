#![no_main]
// See kafkalog::fuzzing::json_value: arbitrary payloads decoded by kafkalog's JSON Schema
// decoder and by its oracle (serde_json and arrow-json), compared row by row
// (kafkalog::values::json::decoder::agree); any difference, panic or invalid array is a bug.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::json_value(data));
