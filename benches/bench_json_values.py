"""Python's references for kafkalog's JSON Schema values (issue 34), on the payloads
``benches/values_json.rs`` writes (``KAFKALOG_JSON_VALUES=DIR``), one core:

- ``json.loads`` of each payload after its 5-byte framing, in a loop;
- a whole ``kafkalog.read`` of the payloads written as a partition, ``value_format="json"``,
  ``threads=1``, and the same read without decoding (the difference is the decoding);
- with ``--spark``: Spark's ``from_json`` over the payloads as strings (a ``local[1]``
  session; the schema is the Spark type kafkalog gives the column), written to the ``noop``
  sink.

    .venv/bin/python benches/bench_json_values.py DIR [--spark] [--rounds R]

Each reports the best of R rounds, wall and CPU seconds (the process's CPU time; for Spark
wall time only, the work being in the JVM), as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import time
from pathlib import Path

import pyarrow as pa

import kafkalog


def values(path: Path) -> list[bytes]:
    data = path.read_bytes()
    out, pos = [], 0
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos : pos + 4], "big")
        out.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return out


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def best(name: str, rounds: int, run) -> None:  # type: ignore[no-untyped-def]
    run()
    wall, used = float("inf"), float("inf")
    for _ in range(rounds):
        t, c = time.perf_counter(), cpu()
        n = run()
        wall, used = min(wall, time.perf_counter() - t), min(used, cpu() - c)
    print(json.dumps({"decoder": name, "records": n, "best_wall_s": wall, "best_cpu_s": used}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", type=Path)
    parser.add_argument("--spark", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    framed = values(args.dir / "values.bin")
    schema = (args.dir / "schema.json").read_text()

    def loads() -> int:
        for v in framed:
            json.loads(v[5:])
        return len(framed)

    best("python json.loads", args.rounds, loads)

    partition = args.dir / "orders-0"
    if partition.exists():
        shutil.rmtree(partition)
    kafkalog.write(partition, pa.table({"value": pa.array(framed, pa.binary())}))
    schemas = {1: {"schema": schema, "schemaType": "JSON"}}

    def read(decode: bool) -> int:
        options = {"value_format": "json", "schemas": schemas} if decode else {}
        table = kafkalog.read(partition, columns=["value"], threads=1, **options).read_all()
        return table.num_rows

    best("kafkalog read, bytes only", args.rounds, lambda: read(False))
    best("kafkalog read, JSON values", args.rounds, lambda: read(True))
    if args.spark:
        spark_from_json(args, framed, partition, schemas)


def spark_from_json(args, framed, partition, schemas) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import col, from_json
    from pyspark.sql.pandas.types import from_arrow_type

    arrow = kafkalog.read(partition, columns=["value"], value_format="json", schemas=schemas)
    spark_type = from_arrow_type(arrow.schema.field("value").type)
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    rows = [(v[5:].decode(),) for v in framed]
    df = spark.createDataFrame(rows, "s string").cache()
    df.count()
    parsed = df.select(from_json(col("s"), spark_type).alias("v"))

    def run() -> int:
        parsed.write.format("noop").mode("overwrite").save()
        return len(framed)

    run()
    wall = float("inf")
    for _ in range(args.rounds):
        t = time.perf_counter()
        run()
        wall = min(wall, time.perf_counter() - t)
    print(json.dumps({"decoder": "spark from_json", "records": len(framed), "best_wall_s": wall}))
    spark.stop()


if __name__ == "__main__":
    main()
