#!/bin/sh
# kafkalog's JSON Schema decode alone (benches/values_json.rs, the bench profile: fat LTO as
# the wheel ships) against Jackson's ObjectMapper.readTree (benches/java/JsonBench.java) on the
# same Confluent-framed payloads, in interleaved rounds, the load average noted before each;
# then the Python references (benches/bench_json_values.py: json.loads, a whole read, and with
# --spark Spark's from_json).
#
#   sh benches/json_vs_java.sh DIR [ROUNDS] [--spark]
#
# DIR receives values.bin (each value as a 4-byte big-endian length and its framed bytes) and
# schema.json, written by the Rust bench. Both sides report the best of 21 passes in wall and
# thread CPU seconds.
set -eu
dir=$1
rounds=${2:-3}
spark=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-.venv/bin/python}
jars=$("$python" -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / "jars")')
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -cp "$jars/*" -d "$classes" "$here/java/JsonBench.java"
cargo bench --bench values_json --no-run -j 2 2>/dev/null
r=1
while [ "$r" -le "$rounds" ]; do
    echo "round $r: $(uptime)"
    # The filter matches no criterion benchmark: the best-of-21 lines only.
    KAFKALOG_JSON_VALUES=$dir KAFKALOG_JSON_ORACLE=0 cargo bench -q --bench values_json -- \
        no-criterion 2>/dev/null | grep decoder
    java -cp "$classes:$jars/*" JsonBench "$dir/values.bin" 21
    r=$((r + 1))
done
echo "references: $(uptime)"
"$python" "$here/bench_json_values.py" "$dir" $spark
