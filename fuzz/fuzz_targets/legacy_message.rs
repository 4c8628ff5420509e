#![no_main]
// See kafkalog::fuzzing::legacy_message for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::legacy_message(data));
