#!/bin/sh
# kafkalog's Protobuf decode (benches/values_protobuf_json.rs, the bench profile: fat LTO as
# the wheel ships) against protobuf-java's DynamicMessage.parseFrom (benches/java/
# ProtobufBench.java, the protobuf-java shaded into PySpark's Spark core) and Python's upb
# (benches/bench_protobuf_upb.py), on the same Confluent-framed values of the bench's 20-field
# order, in interleaved rounds, the load average noted before each. The Rust bench also times
# the decoder before issue 34 (prost-reflect dynamic messages, then columns).
#
#   sh benches/protobuf_vs_java.sh [ROUNDS]
#
# PROFILE=ci builds the Rust bench with the ci profile (no LTO: a quicker build) instead.
set -eu
rounds=${1:-3}
profile=${PROFILE:-bench}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-.venv/bin/python}
jars=$("$python" -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / "jars")')
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
javac -cp "$jars/*" -d "$dir" "$here/java/ProtobufBench.java"
cargo bench --profile "$profile" --bench values_protobuf_json --no-run -j 2 2>/dev/null
r=1
while [ "$r" -le "$rounds" ]; do
    echo "round $r: $(uptime)"
    KAFKALOG_PROTOBUF_OUT=$dir cargo bench -q --profile "$profile" --bench values_protobuf_json 2>/dev/null | grep -E '^\{'
    printf "java: "
    java -cp "$dir:$jars/*" ProtobufBench "$dir/values.bin" "$dir/order.desc" bench.Order 21
    printf "upb: "
    "$python" "$here/bench_protobuf_upb.py" "$dir" bench.Order 21
    r=$((r + 1))
done
