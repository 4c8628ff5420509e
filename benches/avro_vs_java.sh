#!/bin/sh
# kafkalog's Avro decode alone (benches/values_avro.rs, the bench profile: fat LTO as the
# wheel ships) against Apache Avro's Java GenericDatumReader (benches/java/AvroBench.java),
# on the same payloads, in interleaved rounds, the load average noted before each.
#
#   .venv/bin/python benches/bench_values.py --write-values DIR [--interleaved]
#   sh benches/avro_vs_java.sh DIR [ROUNDS]
#
# Java decodes each writer version's values in a run of their own (a GenericDatumReader is
# built per writer schema) and reports the best of 21 passes after warm-up; the two versions'
# times add up to the same values kafkalog decodes in one pass.
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
    printf "kafkalog: "
    KAFKALOG_AVRO_VALUES=$dir cargo bench -q --bench values_avro 2>/dev/null | grep -E 'records|thrpt'
    for w in v1 v2; do
        printf "java %s: " "$w"
        java -cp "$classes:$jars/*" AvroBench "$dir/values-$w.bin" "$dir/$w.avsc" "$dir/v2.avsc" 21
    done
    r=$((r + 1))
done
