"""The JVM data source against Parquet and against the Python data source (issue 27).

    .venv/bin/python benches/spark_jvm.py [--records 2000000] [--rounds 7]

Spark local[2] with the kafkalog jar on the classpath; the same records written by
``kafkalog.write`` into 4 partitions, and as one Parquet file. Three sources, interleaved in
rounds (each round JVM source, Parquet, Python source, so that all see the same load), for two
queries: ``sum(length(value)), max(offset)`` and ``count(*) where timestamp >= T`` (T at 3/4 of
each partition's records: the JVM source pushes it down to the time index). Printed per source
and query: median and best wall time, and the median CPU seconds of the whole process tree (the
JVM and any Python worker, from /proc) per query. All three must give the same answers.

Then one Spark task per core, each on one large partition (``sum(length(value)),
sum(length(key))``), in records/s, against ``kafkalog.read(..., threads=1)`` of one such
partition in Python (with ``binary_view`` as the JVM source reads, and without): what the
bridge into Spark costs over the decoding itself. ``--section`` runs one part.

``--section typed`` (issue 37): typed values (Avro, Protobuf, JSON Schema; ``--typed N``
values each, benches/spark_typed.py) read by the JVM source with ``valueFormat`` against Spark
reading the same rows from the Parquet file Spark wrote of them, interleaved in rounds, the
query ``sum(value.id), count(value.address.city), max(value.price), sum(size(value.tags))``;
``--python-source`` adds the Python source on the same values, ``--batch-sizes 65536,...`` a JVM
read with each of those ``batchSize`` options; ``--warmup N`` runs N rounds before counting
(default 1: the JIT compilers of Spark's JVM keep compiling for minutes, whichever query runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_python import BATCH_BYTES, table  # noqa: E402

import kafkalog  # noqa: E402
import kafkalog.spark as ks  # noqa: E402


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process's descendants (Linux /proc)."""
    children: dict[int, list[tuple[int, float]]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                f = (Path("/proc") / d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(f[1]), []).append((int(d), (int(f[11]) + int(f[12])) / tick))
    total, stack = 0.0, [os.getpid()]
    while stack:
        for pid, cpu in children.get(stack.pop(), []):
            total += cpu
            stack.append(pid)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--section", choices=["all", "sources", "cores", "typed"], default="all")
    ap.add_argument("--typed", type=int, default=1_000_000, help="values per format (typed)")
    ap.add_argument("--python-source", action="store_true", help="typed: the Python source too")
    ap.add_argument(
        "--batch-sizes", default="", help="typed: also JVM reads with these batchSize options"
    )
    ap.add_argument("--warmup", type=int, default=1, help="typed: rounds run first and not counted")
    args = ap.parse_args()
    if args.section == "typed":
        typed(args)
        return
    n = args.records
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from kafkalog.spark.source import KafkaLogDataSource

    class PythonSource(KafkaLogDataSource):
        @classmethod
        def name(cls) -> str:
            return "kafkalog_python"

    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-spark-jvm-"))
    logdir = tmp / "logs"
    per = n // 4
    parquet = tmp / "orders.parquet"
    if args.section != "cores":
        for p in range(4):
            kafkalog.write(logdir / f"orders-{p}", table(per, p * n), batch_bytes=BATCH_BYTES)
        pq.write_table(kafkalog.read(logdir).read_all(), parquet)
    # 3/4 into each partition's timestamps (table() stamps record i at 1.7e12 + i ms).
    threshold = [1_700_000_000_000 + p * n + per * 3 // 4 for p in range(4)]
    t_ms = min(threshold)
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
    spark.dataSource.register(PythonSource)
    sources = {
        "JVM source": lambda: spark.read.format("kafkalog").load(str(logdir)),
        "Parquet": lambda: spark.read.parquet(str(parquet)),
        "Python source": lambda: spark.read.format("kafkalog_python").load(str(logdir)),
    }
    queries = {
        "sum(length(value)), max(offset)": lambda df: df.selectExpr(
            "sum(length(value))", "max(offset)"
        ),
        f"count(*) where timestamp >= {t_ms} ms": lambda df: df.where(
            f"timestamp >= timestamp_millis({t_ms})"
        ).selectExpr("count(*)"),
    }
    if args.section != "cores":
        nbytes = sum(f.stat().st_size for f in logdir.rglob("*.log"))
        print(
            f"{n} records, {nbytes / 2**20:.0f} MiB of log, {parquet.stat().st_size / 2**20:.0f} "
            f"MiB of Parquet; Spark local[2], {args.rounds} rounds"
        )
    for qname, q in queries.items() if args.section != "cores" else []:
        answers = {s: q(f()).collect()[0] for s, f in sources.items()}  # warm up, and check
    for _ in range(args.warmup - 1):
        for f in sources.values():
            q(f()).collect()
        if len({tuple(a) for a in answers.values()}) != 1:
            raise RuntimeError(f"the sources disagree on {qname}: {answers}")
        walls: dict[str, list[float]] = {s: [] for s in sources}
        cpus: dict[str, list[float]] = {s: [] for s in sources}
        load_before = Path("/proc/loadavg").read_text().split()[0]
        for _ in range(args.rounds):
            for s, f in sources.items():
                cpu, t = tree_cpu(), time.perf_counter()
                q(f()).collect()
                walls[s].append(time.perf_counter() - t)
                cpus[s].append(tree_cpu() - cpu)
        load_after = Path("/proc/loadavg").read_text().split()[0]
        print(f"\n## {qname} (load {load_before} -> {load_after})")
        med = {s: statistics.median(v) for s, v in cpus.items()}
        for s in sources:
            print(
                f"  {s:14s} wall median {statistics.median(walls[s]):.3f} s best "
                f"{min(walls[s]):.3f} s; CPU median {med[s]:.2f} s best {min(cpus[s]):.2f} s"
            )
        wall = {s: statistics.median(v) for s, v in walls.items()}
        print(
            f"  CPU JVM/Parquet {med['JVM source'] / med['Parquet']:.2f}x; "
            f"Python/JVM {med['Python source'] / med['JVM source']:.2f}x; wall Python/JVM "
            f"{wall['Python source'] / wall['JVM source']:.2f}x"
        )
    if args.section == "sources":
        spark.stop()
        return
    # One task per core on one large partition each, against the Rust decode alone.
    big = tmp / "big"
    for p in range(2):
        kafkalog.write(big / f"big-{p}", table(n, p * n), batch_bytes=BATCH_BYTES)
    # targetBytes of one log: one work item, one Spark partition (one task) per log.
    largest = max(f.stat().st_size for f in big.rglob("*.log"))
    df = spark.read.format("kafkalog").option("targetBytes", str(largest)).load(str(big))
    if df.rdd.getNumPartitions() != 2:
        raise RuntimeError(f"{df.rdd.getNumPartitions()} Spark partitions, not 2")
    q = df.selectExpr("sum(length(value))", "sum(length(key))", "count(*)")
    if q.collect()[0][2] != 2 * n:
        raise RuntimeError("not every record was read")
    walls = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        q.collect()
        walls.append(time.perf_counter() - t)
    med = statistics.median(walls)
    print(
        f"\n## one task per core, {n} records each: JVM source median {2 * n / med / 1e6:.2f} M "
        f"records/s ({n / med / 1e6:.2f} M per task), best {2 * n / min(walls) / 1e6:.2f} M"
    )
    for view in (True, False):
        walls = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            reader = kafkalog.read(
                big / "big-0", threads=1, columns=["key", "value"], binary_view=view
            )
            rows = sum(b.num_rows for b in reader)
            walls.append(time.perf_counter() - t)
        med = statistics.median(walls)
        print(
            f"   kafkalog.read(threads=1, binary_view={view}) of one partition: median "
            f"{rows / med / 1e6:.2f} M records/s, best {rows / min(walls) / 1e6:.2f} M"
        )
    spark.stop()


def typed(args: argparse.Namespace) -> None:
    """Typed values through the JVM source against the same rows from Parquet."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import spark_typed
    from pyspark.sql import SparkSession

    from kafkalog.spark.source import KafkaLogDataSource

    class PythonSource(KafkaLogDataSource):
        @classmethod
        def name(cls) -> str:
            return "kafkalog_python"

    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-spark-typed-"))
    t = time.perf_counter()
    topics = spark_typed.make_topics(tmp, args.typed)
    print(f"{args.typed} values per format written in {time.perf_counter() - t:.0f} s")
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
    spark.dataSource.register(PythonSource)

    def typed_df(fmt: str, root: Path, batch_size: str = ""):
        reader = (
            spark.read.format(fmt)
            .option("valueFormat", root.name)
            .option("schemaRegistry", str(root))
            .option("subscribe", "events")
        )
        if batch_size:
            reader = reader.option("batchSize", batch_size)
        return reader.load(str(root))

    sources = {}
    for name, root in topics.items():
        parquet = tmp / f"{name}.parquet"
        typed_df("kafkalog", root).select("value").write.parquet(str(parquet))
        sources[f"JVM {name}"] = lambda root=root: typed_df("kafkalog", root)
        sources[f"Parquet {name}"] = lambda parquet=parquet: spark.read.parquet(str(parquet))
        for size in filter(None, args.batch_sizes.split(",")):
            sources[f"JVM {name} b{size}"] = lambda root=root, b=size: typed_df("kafkalog", root, b)
        if args.python_source:
            sources[f"Python {name}"] = lambda root=root: typed_df("kafkalog_python", root)

    def q(df):
        return df.selectExpr(*spark_typed.QUERY)

    answers = {s: q(f()).collect()[0] for s, f in sources.items()}  # warm up, and check
    for _ in range(args.warmup - 1):
        for f in sources.values():
            q(f()).collect()
    for name in topics:
        got = {s: tuple(a) for s, a in answers.items() if f" {name}" in s}
        if len(set(got.values())) != 1:
            raise RuntimeError(f"the sources disagree on {name}: {got}")
    print(f"answers: {answers}")
    walls: dict[str, list[float]] = {s: [] for s in sources}
    cpus: dict[str, list[float]] = {s: [] for s in sources}
    load_before = Path("/proc/loadavg").read_text().split()[0]
    for _ in range(args.rounds):
        for s, f in sources.items():
            cpu, t = tree_cpu(), time.perf_counter()
            q(f()).collect()
            walls[s].append(time.perf_counter() - t)
            cpus[s].append(tree_cpu() - cpu)
    load_after = Path("/proc/loadavg").read_text().split()[0]
    print(
        f"\n## typed values, {args.typed} each, {args.rounds} rounds (load {load_before} -> "
        f"{load_after})"
    )
    for s in sources:
        print(
            f"  {s:22s} wall median {statistics.median(walls[s]):.3f} s best "
            f"{min(walls[s]):.3f} s; CPU median {statistics.median(cpus[s]):.2f} s best "
            f"{min(cpus[s]):.2f} s"
        )
    for name in topics:
        jvm, par = cpus[f"JVM {name}"], cpus[f"Parquet {name}"]
        ratio = statistics.median(jvm) / statistics.median(par)
        line = f"  {name}: CPU JVM/Parquet median {ratio:.2f}x, best {min(jvm) / min(par):.2f}x"
        if args.python_source:
            py = cpus[f"Python {name}"]
            line += f"; Python/JVM median {statistics.median(py) / statistics.median(jvm):.2f}x"
        for size in filter(None, args.batch_sizes.split(",")):
            other = cpus[f"JVM {name} b{size}"]
            line += f"; batchSize {size} {statistics.median(other) / statistics.median(par):.2f}x"
        print(line)
    spark.stop()


if __name__ == "__main__":
    main()
