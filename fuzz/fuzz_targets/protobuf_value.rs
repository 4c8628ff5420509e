#![no_main]
// See kafkalog::fuzzing::protobuf_value for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::fuzzing::protobuf_value(data));
