"""A typed read through the JVM source repeated for a profiler (BENCHMARKS.md, issue 37).

    .venv/bin/python benches/spark_typed_profile.py ROOT [avro|protobuf|json]

ROOT: the directory ``benches/spark_jvm.py --section typed`` made (``/tmp/kafkalog-spark-typed-*``,
one sub-directory per format). After three warm-up queries it writes the Spark JVM's pid to
/tmp/jvm.pid and runs the query for 25 s: attach ``perf record -e cpu-clock -p $(cat
/tmp/jvm.pid) -- sleep 15`` then. ``KAFKALOG_PROFILE_JAR`` names another jar than the
installed one (a build with symbols: ``CARGO_PROFILE_CI_STRIP=none
CARGO_PROFILE_CI_DEBUG=line-tables-only python jvm/packaging/build_jar.py jar --profile ci
--out /tmp/prof.jar``).
"""

import os
import sys
import time

from pyspark.sql import SparkSession

import kafkalog.spark as ks

root = sys.argv[1]
fmt = sys.argv[2] if len(sys.argv) > 2 else "avro"
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.jars", os.environ.get("KAFKALOG_PROFILE_JAR") or ks.jar())
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
query = ("sum(value.id)", "count(value.address.city)", "max(value.price)", "sum(size(value.tags))")


def frame():
    return (
        spark.read.format("kafkalog")
        .option("valueFormat", fmt)
        .option("schemaRegistry", f"{root}/{fmt}")
        .option("subscribe", "events")
        .load(f"{root}/{fmt}")
    )


for _ in range(3):
    frame().selectExpr(*query).collect()
pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
with open("/tmp/jvm.pid", "w") as f:
    f.write(str(pid))
print("ready", pid, flush=True)
time.sleep(3)
start = time.time()
while time.time() - start < 25:
    frame().selectExpr(*query).collect()
print("done", flush=True)
