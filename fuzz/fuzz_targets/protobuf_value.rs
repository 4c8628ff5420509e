#![no_main]
// See kafkalog::fuzzing::protobuf_value (arbitrary payloads, valid Arrow out) and
// kafkalog::values::protobuf::decoder::fuzz_differential (the decoder against its oracle, prost-reflect,
// on the same bytes).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    kafkalog::fuzzing::protobuf_value(data);
    kafkalog::values::protobuf::decoder::fuzz_differential(data);
});
