#![no_main]
// See kafkalog::fuzzing::avro_value for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::avro_value(data));
