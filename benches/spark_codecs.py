"""Bytes reads of compressed logs through the JVM source against Spark reading Parquet (issue 37).

    .venv/bin/python benches/spark_codecs.py [--records 1000000] [--rounds 5]
        [--codecs lz4,zstd,none] [--batch-sizes 8192,65536]

Spark local[2] with the kafkalog jar on the classpath. For each codec, the same 1,000,000 records
(10-byte keys, 100-byte values drawn from 2,000 distinct ones, as topics repeat themselves; a
timestamp a millisecond apart) written by ``kafkalog.write`` into 2 partitions with that
compression, and once as one Parquet file (Spark's default snappy). Two queries, the sources
interleaved in rounds: ``sum(length(value)), max(offset)`` and ``count(*)`` of the last 10% by
timestamp (``timestamp >= T``). Printed per codec, query and source: the median and best CPU
seconds of the whole process tree (JVM and any Python worker, from /proc) and wall seconds, and
the ratio of the medians against Parquet. Both sources must give the same answers.
``--batch-sizes`` adds, per codec, a read with each of those ``batchSize`` options.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spark_jvm import tree_cpu  # noqa: E402

import kafkalog  # noqa: E402
import kafkalog.spark as ks  # noqa: E402


def rows(n: int, start: int) -> pa.Table:
    """``n`` records: 10-byte keys, 100-byte values from 2,000 distinct ones."""
    distinct = [
        (b"value %04d " % d + b"lorem ipsum dolor sit amet consectetur adipiscing " * 3)[:100]
        for d in range(2000)
    ]
    keys = [b"key-%06d" % (i % 1_000_000) for i in range(start, start + n)]
    values = [distinct[(i * 7919) % 2000] for i in range(start, start + n)]
    ts = pa.array([1_700_000_000_000 + i for i in range(start, start + n)], pa.int64())
    return pa.table({"key": keys, "value": values, "timestamp": ts})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--codecs", default="lz4,zstd,none")
    ap.add_argument(
        "--batch-sizes",
        default="",
        help="also read each log with these batchSize options (comma-separated)",
    )
    args = ap.parse_args()
    n = args.records
    codecs = args.codecs.split(",")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = ks.jvm.session(master="local[2]")
    spark.sparkContext.setLogLevel("ERROR")
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-codecs-"))
    half = n // 2
    parts = [rows(half, p * half) for p in range(2)]
    parquet = tmp / "rows.parquet"
    both = pa.concat_tables(parts)
    pq.write_table(
        both.set_column(
            2, "timestamp", both.column("timestamp").cast(pa.timestamp("ms", tz="UTC"))
        ).append_column("offset", pa.array(list(range(half)) * 2, pa.int64())),
        parquet,
    )
    logs = {}
    for codec in codecs:
        logs[codec] = tmp / codec
        for p in range(2):
            kafkalog.write(
                logs[codec] / f"orders-{p}",
                parts[p],
                compression=None if codec == "none" else codec,
            )
    t_cut = 1_700_000_000_000 + n - n // 10
    queries = {
        "sum(length(value)), max(offset)": lambda df: df.selectExpr(
            "sum(length(value))", "max(offset)"
        ),
        "count(*) where timestamp >= T (last 10%)": lambda df: df.where(
            f"timestamp >= timestamp_millis({t_cut})"
        ).selectExpr("count(*)"),
    }
    spark.conf.set("spark.sql.session.timeZone", "UTC")

    def run(df_of, query):  # type: ignore[no-untyped-def]
        c0, w0 = tree_cpu(), time.perf_counter()
        out = query(df_of()).collect()
        return tree_cpu() - c0, time.perf_counter() - w0, [tuple(r) for r in out]

    sources = {"parquet": lambda: spark.read.parquet(str(parquet))}
    for codec in codecs:
        sources[f"kafkalog {codec}"] = lambda c=codec: spark.read.format("kafkalog").load(
            str(logs[c])
        )
        for size in filter(None, args.batch_sizes.split(",")):
            sources[f"kafkalog {codec} b{size}"] = lambda c=codec, b=size: (
                spark.read.format("kafkalog").option("batchSize", b).load(str(logs[c]))
            )
    print(
        f"records {n}, load {os.getloadavg()[0]:.1f}, source of format('kafkalog'):",
        spark.read.format("kafkalog")
        .load(str(logs[codecs[0]]))
        ._jdf.queryExecution()
        .executedPlan()
        .toString()
        .splitlines()[-1]
        .strip()[:80],
    )
    for qname, query in queries.items():
        times: dict[str, list[tuple[float, float]]] = {s: [] for s in sources}
        answers: dict[str, object] = {}
        for s, df_of in sources.items():  # warm-up
            answers[s] = run(df_of, query)[2]
        assert len({repr(a) for a in answers.values()}) == 1, answers
        for _ in range(args.rounds):
            for s, df_of in sources.items():
                cpu, wall, _ = run(df_of, query)
                times[s].append((cpu, wall))
        base = statistics.median(c for c, _ in times["parquet"])
        print(f"\n{qname}   (answer {answers['parquet']}, load {os.getloadavg()[0]:.1f})")
        print(f"  {'source':<22} {'CPU-s median':>12} {'best':>6} {'wall median':>11}  vs Parquet")
        for s, t in times.items():
            med = statistics.median(c for c, _ in t)
            print(
                f"  {s:<22} {med:12.3f} {min(c for c, _ in t):6.3f}"
                f" {statistics.median(w for _, w in t):11.3f}  {med / base:5.2f}x"
            )
    spark.stop()


if __name__ == "__main__":
    main()
