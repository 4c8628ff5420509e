#![no_main]
// See kafkalog::fuzzing::v2_batch for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::v2_batch(data));
