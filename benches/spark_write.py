"""Spark writing typed records: the JVM source's ``df.write.format("kafkalog")`` against
Spark's own Parquet writer on the same rows (issue 37's write target: at most Parquet's CPU).

    .venv/bin/python benches/spark_write.py [--records 1000000] [--rounds 5]

The rows: ``benches/bench_values.py``'s 20-field Avro record (nested records, an array, a map,
an enum, a nullable union, fixed bytes, logical types), ``--records`` values written by
kafkalog.write with the registry's ``_schemas`` beside them, read typed by the JVM source into
a cached DataFrame (``key`` null, ``value`` the record) in two Spark partitions. Then in
interleaved rounds (so that both see the same load): the DataFrame written with
``format("kafkalog")`` (``valueFormat=avro``, each value encoded with the registered schema and
framed, a topic-partition per Spark partition) and with ``parquet`` (Spark's default snappy),
each into a fresh directory. Printed per writer: median and best wall time and the median CPU
seconds of the whole process tree (the Spark JVM and any Python worker, from /proc).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_values import schemas_partition, values  # noqa: E402
from spark_jvm import tree_cpu  # noqa: E402

import kafkalog  # noqa: E402
import kafkalog.spark as ks  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import spark_partition_id

    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-spark-write-"))
    try:
        schemas_partition(tmp)
        vals = values(args.records)
        kafkalog.write(
            tmp / "events-0", pa.table({"value": pa.array(vals, pa.binary())}), batch_records=1000
        )
        del vals
        spark = ks.jvm.session(
            SparkSession.builder.master("local[2]"),
            **{"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"},
        )
        spark.sparkContext.setLogLevel("ERROR")
        df = (
            spark.read.format("kafkalog")
            .option("valueFormat", "avro")
            .option("schemaRegistry", str(tmp))
            .load(str(tmp / "events-0"))
            .select("value")
            .repartition(2)
            .withColumn("partition", spark_partition_id())
            .cache()
        )
        assert df.count() == args.records

        def kafkalog_write(out: Path) -> None:
            (
                df.write.format("kafkalog")
                .mode("append")
                .option("topic", "events")
                .option("valueFormat", "avro")
                .option("schemaRegistry", str(tmp))
                .option("fsync", "false")
                .save(str(out))
            )

        def parquet_write(out: Path) -> None:
            df.write.mode("overwrite").parquet(str(out))

        writers = {"kafkalog (JVM source)": kafkalog_write, "Spark Parquet": parquet_write}
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in writers}
        for r in range(args.rounds + 1):  # the first round warms up
            for name, write in writers.items():
                out = tmp / f"out-{r}-{len(times[name])}"
                cpu, wall = tree_cpu(), time.perf_counter()
                write(out)
                wall, cpu = time.perf_counter() - wall, tree_cpu() - cpu
                shutil.rmtree(out, ignore_errors=True)
                if r:
                    times[name].append((wall, cpu))
        print(f"{args.records} typed rows, local[2], {args.rounds} rounds")
        base = statistics.median(c for _, c in times["Spark Parquet"])
        for name, t in times.items():
            cpu = statistics.median(c for _, c in t)
            wall = statistics.median(w for w, _ in t)
            print(
                f"{name:24} wall median {wall:6.2f} s, best {min(w for w, _ in t):6.2f} s; "
                f"CPU median {cpu:6.2f} s ({cpu / base:.2f}x Parquet)"
            )
        spark.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
