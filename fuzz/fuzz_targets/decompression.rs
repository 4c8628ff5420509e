#![no_main]
// See kafkalog::fuzzing::decompression for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::decompression(data));
