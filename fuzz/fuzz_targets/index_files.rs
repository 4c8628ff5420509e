#![no_main]
// See kafkalog::fuzzing::index_files for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::index_files(data));
