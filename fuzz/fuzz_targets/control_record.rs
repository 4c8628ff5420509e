#![no_main]
// See kafkalog::fuzzing::control_record for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::control_record(data));
