"""End-to-end benchmarks of kafkalog from Python, against what a user would pick instead.

    .venv/bin/python benches/bench_python.py [--records N] [--big-gb 2] [--skip-big] [--spark]

Each case prints records/s and MB/s of segment bytes; single thread unless said. Data is
generated here, deterministically: records with 10-byte keys and 100-byte text-like values,
written by kafkalog.write in batches of ~128 KB (a producer with batch.size=131072).

- decode of the same segment bytes by kafkalog.read_bytes (into Arrow), aiokafka's record
  decoder (its C extension) and kafka-python's, each touching every record's offset,
  timestamp, key, value and headers;
- kafkalog.read of a log directory (4 partitions) on one thread and on all cores;
- peak RSS of a process streaming a segment of --big-gb GB (default 2) through kafkalog.read;
- with --spark: Spark local mode counting a log directory through kafkalog's data source,
  against Spark reading the same records from Parquet.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import kafkalog

BATCH_BYTES = 128 * 1024


def table(n: int, start: int = 0) -> pa.Table:
    keys = [b"key-%06d" % (i % 1_000_000) for i in range(start, start + n)]
    filler = b"lorem ipsum dolor sit amet " * 8
    values = [
        (
            b'{"id":%d,"customer":"c%d","amount":%d.%02d,"note":"'
            % (i, i % 977, i % 10_000, i % 100)
            + filler
        )[:100]
        for i in range(start, start + n)
    ]
    ts = pa.array([1_700_000_000_000 + i for i in range(start, start + n)], pa.int64())
    return pa.table({"key": keys, "value": values, "timestamp": ts})


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def report(name: str, records: int, nbytes: int, seconds: float) -> None:
    print(
        f"{name:48} {records / seconds / 1e6:8.2f} M records/s {nbytes / seconds / 1e6:9.1f} MB/s"
        f"  ({seconds * 1000:.0f} ms)"
    )


def decode_cases(tmp: Path, n: int) -> None:
    print(f"\n## decode of the same segment bytes ({n} records), single thread")
    t = table(n)
    for magic, codec in [
        (2, "none"),
        (2, "lz4"),
        (2, "zstd"),
        (2, "gzip"),
        (2, "snappy"),
        (1, "none"),
        (0, "none"),
    ]:
        out = tmp / f"decode-{magic}-{codec}-0"
        kafkalog.write(out, t, magic=magic, compression=codec, batch_bytes=BATCH_BYTES)
        data = (out / "00000000000000000000.log").read_bytes()
        label = f"v{magic} {codec}"

        def ours(data=data):
            kafkalog.read_bytes(data).read_all()

        report(f"kafkalog {label}", n, len(data), best_of(ours))
        try:
            from aiokafka.record.memory_records import MemoryRecords as AioRecords

            def aio(data=data):
                records = AioRecords(data)
                while (batch := records.next_batch()) is not None:
                    for r in batch:
                        _ = (r.offset, r.timestamp, r.key, r.value, r.headers)

            report(f"aiokafka {label}", n, len(data), best_of(aio, 1))
        except Exception as e:  # a library that cannot read this pair
            print(f"aiokafka {label}: {type(e).__name__}: {e}")
        try:
            from kafka.record.memory_records import MemoryRecords as KpRecords

            def kp(data=data):
                records = KpRecords(data)
                while (batch := records.next_batch()) is not None:
                    for r in batch:
                        _ = (r.offset, r.timestamp, r.key, r.value, r.headers)

            report(f"kafka-python {label}", n, len(data), best_of(kp, 1))
        except Exception as e:
            print(f"kafka-python {label}: {type(e).__name__}: {e}")


def directory_cases(tmp: Path, n: int) -> None:
    print(f"\n## kafkalog.read of a log directory (4 partitions x {n // 4} records)")
    logdir = tmp / "logdir"
    for p in range(4):
        kafkalog.write(
            logdir / f"orders-{p}",
            table(n // 4, p * n),
            batch_bytes=BATCH_BYTES,
            segment_bytes=64 << 20,
        )
    nbytes = sum(f.stat().st_size for f in logdir.rglob("*.log"))
    # Best of five: a shared two-core machine is noisy, and the ratio divides two timings.
    one = best_of(lambda: kafkalog.read(logdir, threads=1).read_all(), 5)
    report("kafkalog.read dir, 1 thread", n, nbytes, one)
    cores = os.cpu_count() or 1
    many = best_of(lambda: kafkalog.read(logdir).read_all(), 5)
    report(f"kafkalog.read dir, {cores} threads", n, nbytes, many)
    print(f"speedup on {cores} cores: {one / many:.2f}x")


def big_segment_rss(tmp: Path, gigabytes: float) -> None:
    print(f"\n## peak RSS while streaming a {gigabytes:g} GB segment")
    out = tmp / "big-0"
    per = 1_000_000
    target = int(gigabytes * 1e9)
    writer_rows = 0

    def chunks():
        nonlocal writer_rows
        while (writer_rows * 130) < target:
            yield from table(per, writer_rows).to_batches()
            writer_rows += per

    schema = table(1).schema
    kafkalog.write(
        out,
        pa.RecordBatchReader.from_batches(schema, chunks()),
        batch_bytes=BATCH_BYTES,
        segment_bytes=2_100_000_000,
    )
    log = next(out.glob("*.log"))
    size = log.stat().st_size
    code = (
        "import kafkalog, resource, time\n"
        f"t = time.perf_counter(); n = 0\n"
        f"for b in kafkalog.read({str(log)!r}):\n    n += b.num_rows\n"
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec from the parent.
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
        "print(n, time.perf_counter() - t, hwm)\n"
    )
    out_text = subprocess.check_output([sys.executable, "-c", code], text=True)
    rows, seconds, rss_kb = out_text.split()
    print(
        f"segment {size / 1e9:.2f} GB, {int(rows)} records in {float(seconds):.1f} s; "
        f"peak RSS {int(rss_kb) / 1024:.0f} MB"
    )
    report("kafkalog.read big segment", int(rows), size, float(seconds))
    shutil.rmtree(out)


def spark_cases(tmp: Path, n: int) -> None:
    from pyspark.sql import SparkSession

    import kafkalog.spark as ks

    # Spark's Python workers must be this interpreter, which has kafkalog.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    print(f"\n## Spark local[2]: kafkalog data source vs Parquet ({n} records)")
    logdir = tmp / "sparkdir"
    for p in range(4):
        kafkalog.write(logdir / f"orders-{p}", table(n // 4, p * n), batch_bytes=BATCH_BYTES)
    parquet = tmp / "orders.parquet"
    pq.write_table(kafkalog.read(logdir).read_all(), parquet)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    ks.register(spark)

    def via_kafkalog():
        spark.read.format("kafkalog").load(str(logdir)).selectExpr(
            "sum(length(value))", "max(offset)"
        ).collect()

    def via_parquet():
        spark.read.parquet(str(parquet)).selectExpr("sum(length(value))", "max(offset)").collect()

    via_kafkalog(), via_parquet()  # warm up the JVM and the Python workers
    nbytes = sum(f.stat().st_size for f in logdir.rglob("*.log"))
    a, b = best_of(via_kafkalog), best_of(via_parquet)
    report("spark kafkalog data source", n, nbytes, a)
    report("spark parquet", n, nbytes, b)
    print(f"kafkalog / parquet time: {a / b:.2f}x")
    spark.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--big-gb", type=float, default=2.0)
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--only", choices=["decode", "dir", "big", "spark"], help="run one section")
    args = ap.parse_args()
    print(
        f"# kafkalog {kafkalog.__version__}, pyarrow {pa.__version__}, Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.platform()}"
    )
    with tempfile.TemporaryDirectory(prefix="kafkalog-bench-") as d:
        tmp = Path(d)
        if args.only in (None, "decode"):
            decode_cases(tmp, args.records)
        if args.only in (None, "dir"):
            directory_cases(tmp, args.records * 2)
        if args.only == "big" or (args.only is None and not args.skip_big):
            big_segment_rss(tmp, args.big_gb)
        if args.only == "spark" or (args.only is None and args.spark):
            spark_cases(tmp, args.records * 2)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nbenchmark process peak RSS {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
