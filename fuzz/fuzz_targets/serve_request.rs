#![no_main]
// See kafkalog::serve::fuzz_request: a request frame split and decoded as `kafkalog serve`
// reads it from a client.
libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkalog::serve::fuzz_request(data));
