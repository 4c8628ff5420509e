#![no_main]
// See kafkalog::fuzzing::segment for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::segment(data));
