#![no_main]
// See kafkalog::jni::fuzz_requests for what this target covers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::jni::fuzz_requests(data));
