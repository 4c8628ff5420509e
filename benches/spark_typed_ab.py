"""One typed read through the JVM source against the same rows from Parquet, in one Spark
session, for before/after comparisons of the native library (BENCHMARKS.md, issue 37).

    KAFKALOG_NATIVE_LIBRARY=/tmp/ab/old.so .venv/bin/python benches/spark_typed_ab.py ROOT json
    KAFKALOG_NATIVE_LIBRARY=/tmp/ab/new.so .venv/bin/python benches/spark_typed_ab.py ROOT json

ROOT: the directory ``benches/spark_jvm.py --section typed`` made (``/tmp/kafkalog-spark-typed-*``:
one sub-directory per format and its Parquet copy). ``KAFKALOG_NATIVE_LIBRARY`` names the core
the installed jar loads (a ``cargo build --profile ci --lib --no-default-features --features
jni,object-store`` of each commit, copied aside). Run the two alternately, several times: the
JVM is started once per process, so each library gets its own session. Prints one JSON line:
the CPU seconds of the whole process tree per query (median and best of ``--rounds``, after
``--warmup`` rounds not counted), the JVM source's and Parquet's, interleaved.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).parent))
from spark_jvm import tree_cpu  # noqa: E402
from spark_typed import QUERY  # noqa: E402

import kafkalog.spark as ks  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("root", type=Path)
ap.add_argument("format", choices=["avro", "protobuf", "json"])
ap.add_argument("--rounds", type=int, default=11)
ap.add_argument("--warmup", type=int, default=6)
args = ap.parse_args()

spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.jars", ks.jar())
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
fmt, root = args.format, args.root
sources = {
    "jvm": lambda: (
        spark.read.format("kafkalog")
        .option("valueFormat", fmt)
        .option("schemaRegistry", str(root / fmt))
        .option("subscribe", "events")
        .load(str(root / fmt))
    ),
    "parquet": lambda: spark.read.parquet(str(root / f"{fmt}.parquet")),
}
answers = {s: tuple(f().selectExpr(*QUERY).collect()[0]) for s, f in sources.items()}
if len(set(answers.values())) != 1:
    raise SystemExit(f"the sources disagree: {answers}")
for _ in range(args.warmup):
    for f in sources.values():
        f().selectExpr(*QUERY).collect()
cpus: dict[str, list[float]] = {s: [] for s in sources}
walls: dict[str, list[float]] = {s: [] for s in sources}
for _ in range(args.rounds):
    for s, f in sources.items():
        cpu, t = tree_cpu(), time.perf_counter()
        f().selectExpr(*QUERY).collect()
        walls[s].append(time.perf_counter() - t)
        cpus[s].append(tree_cpu() - cpu)
out = {"library": os.environ.get("KAFKALOG_NATIVE_LIBRARY", "(the jar's)"), "format": fmt}
for s in sources:
    out[f"{s}_cpu_median"] = round(statistics.median(cpus[s]), 3)
    out[f"{s}_cpu_best"] = round(min(cpus[s]), 3)
    out[f"{s}_wall_median"] = round(statistics.median(walls[s]), 3)
out["ratio_median"] = round(out["jvm_cpu_median"] / out["parquet_cpu_median"], 2)
out["load"] = Path("/proc/loadavg").read_text().split()[0]
print(json.dumps(out), flush=True)
spark.stop()
