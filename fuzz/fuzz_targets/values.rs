#![no_main]
// See kafkalog::fuzzing::values for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::values(data));
