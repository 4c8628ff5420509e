#!/bin/sh
# kafkalog's Avro decode alone (benches/values_avro.rs, the bench profile: fat LTO as the
# wheel ships; the compiled decoder and arrow-avro's, in alternating passes) against Apache
# Avro's Java GenericDatumReader (benches/java/AvroBench.java), on the same payloads, in
# interleaved rounds, the load average noted before each.
#
#   .venv/bin/python benches/bench_values.py --write-values DIR [--interleaved]
#   sh benches/avro_vs_java.sh DIR [ROUNDS]
#
# Both read every value of DIR/values.bin in one pass, in its order (writer versions in runs,
# or interleaved value by value), each with its writer's reader (Java: a GenericDatumReader
# per writer schema id, looked up per value as Confluent's deserializer does), and report the
# best of 21 passes after warm-up, wall and the decoding thread's CPU time.
set -eu
dir=$1
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
jars=$("${PYTHON:-.venv/bin/python}" -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / "jars")')
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -cp "$jars/*" -d "$classes" "$here/java/AvroBench.java"
cargo bench --bench values_avro --no-run -j 2 2>/dev/null
r=1
while [ "$r" -le "$rounds" ]; do
    echo "round $r: $(uptime)"
    KAFKALOG_AVRO_VALUES=$dir cargo bench -q --bench values_avro 2>/dev/null | grep -E 'decoder|thrpt'
    java -cp "$classes:$jars/*" AvroBench "$dir/values.bin" "$dir/v2.avsc" 21 \
        "1=$dir/v1.avsc" "2=$dir/v2.avsc"
    r=$((r + 1))
done
