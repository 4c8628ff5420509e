#![no_main]
// See kafkalog::fuzzing::json_value for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::json_value(data));
