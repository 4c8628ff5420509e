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
  against Spark reading the same records from Parquet;
- the Java client (issue 18's anchor): segments written by kafka-python's record builder (v2,
  10-byte keys, 100-byte values half random and half text, 1000 records a batch), one per codec,
  decoded by kafkalog.read(threads=1) and by Apache Kafka's Java client as a consumer decodes
  (../shared/bench/java-client-bench.sh, or $KAFKALOG_JAVA_BENCH), side by side in one run,
  with the floor: CRC-32C of every batch (kafkalog.read_batches) plus one copy of the bytes.
  Also the first read in a fresh process against later ones, and threads=2 against 1 on one
  large compressed segment.
"""

from __future__ import annotations

import argparse
import json
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
    """kafkalog's data source against Parquet, and against the floor of Spark's Python data
    source API: a source yielding the same 7 columns as ready Arrow batches (memory-mapped
    IPC, no decoding), what any Python source pays before decoding anything. The three run
    interleaved, KAFKALOG_SPARK_REPS times (default 7), each round in the same order; given:
    median and best wall time, and the CPU seconds of the whole process tree (the JVM and the
    Python workers) per query, which the other load of a shared machine disturbs less."""
    import statistics

    from pyspark.sql import SparkSession
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    import kafkalog.spark as ks
    from kafkalog.spark.schema import conform

    # Spark's Python workers must be this interpreter, which has kafkalog.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    reps = int(os.environ.get("KAFKALOG_SPARK_REPS", "7"))
    print(f"\n## Spark local[2]: kafkalog data source vs Parquet ({n} records, {reps} rounds)")
    logdir = tmp / "sparkdir"
    for p in range(4):
        kafkalog.write(logdir / f"orders-{p}", table(n // 4, p * n), batch_bytes=BATCH_BYTES)
    parquet = tmp / "orders.parquet"
    pq.write_table(kafkalog.read(logdir).read_all(), parquet)
    # The floor's input: each partition's records as Spark's Arrow form, in an IPC file.
    ipc = []
    for p in range(4):
        ipc.append(str(tmp / f"floor-{p}.arrow"))
        with pa.OSFile(ipc[-1], "wb") as sink:
            with pa.ipc.new_file(sink, ks.SPARK_ARROW_SCHEMA) as w:
                for b in kafkalog.read(logdir / f"orders-{p}", columns=list(ks.SPARK_COLUMNS)):
                    w.write_batch(conform(b, ks.SPARK_ARROW_SCHEMA))

    class FloorReader(DataSourceReader):
        def partitions(self):
            return [InputPartition(f) for f in ipc]

        def read(self, partition):
            r = pa.ipc.open_file(pa.memory_map(partition.value))
            for k in range(r.num_record_batches):
                yield r.get_batch(k)

    class Floor(DataSource):
        @classmethod
        def name(cls):
            return "bench_floor"

        def schema(self):
            return ks.SPARK_SCHEMA

        def reader(self, schema):
            return FloorReader()

    def tree_cpu() -> float | None:
        """CPU seconds (user + system) of this process's descendants: the JVM, the Python
        daemon and workers (Linux /proc; None elsewhere)."""
        if not Path("/proc/self/stat").exists():
            return None
        children: dict[int, list[tuple[int, float]]] = {}
        tick = os.sysconf("SC_CLK_TCK")
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    f = (Path("/proc") / d / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                children.setdefault(int(f[1]), []).append(
                    (int(d), (int(f[11]) + int(f[12])) / tick)
                )
        total, stack = 0.0, [os.getpid()]
        while stack:
            for pid, cpu in children.get(stack.pop(), []):
                total += cpu
                stack.append(pid)
        return total

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    ks.register(spark)
    spark.dataSource.register(Floor)
    query = ("sum(length(value))", "max(offset)")
    cases = {
        "spark kafkalog data source": lambda: spark.read.format("kafkalog").load(str(logdir)),
        "spark parquet": lambda: spark.read.parquet(str(parquet)),
        "spark python data source floor (7 cols)": lambda: spark.read.format("bench_floor").load(),
    }
    walls: dict[str, list[float]] = {c: [] for c in cases}
    cpus: dict[str, list[float]] = {c: [] for c in cases}
    answers = {c: f().selectExpr(*query).collect() for c, f in cases.items()}  # warm up
    if len({tuple(a[0]) for a in answers.values()}) != 1:
        raise RuntimeError(f"the cases disagree: {answers}")
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    for _ in range(reps):
        for c, f in cases.items():
            cpu, t = tree_cpu(), time.perf_counter()
            f().selectExpr(*query).collect()
            walls[c].append(time.perf_counter() - t)
            after = tree_cpu()
            if cpu is not None and after is not None:
                cpus[c].append(after - cpu)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    nbytes = sum(f.stat().st_size for f in logdir.rglob("*.log"))
    for c in cases:
        report(c, n, nbytes, statistics.median(walls[c]))
        cpu_text = ""
        if cpus[c]:
            cpu_text = f"; CPU s median {statistics.median(cpus[c]):.2f} best {min(cpus[c]):.2f}"
        print(
            f"    wall s median {statistics.median(walls[c]):.3f} best {min(walls[c]):.3f} "
            f"worst {max(walls[c]):.3f}{cpu_text}"
        )
    k, p, floor = cases
    med = {c: statistics.median(v) for c, v in walls.items()}
    best = {c: min(v) for c, v in walls.items()}
    print(
        f"kafkalog / parquet time: median {med[k] / med[p]:.2f}x, best {best[k] / best[p]:.2f}x"
        f"; floor / parquet median {med[floor] / med[p]:.2f}x"
    )
    if cpus[k] and cpus[p]:
        cpu = {c: statistics.median(v) for c, v in cpus.items()}
        print(
            f"kafkalog / parquet CPU: median {cpu[k] / cpu[p]:.2f}x"
            f"; floor / parquet CPU median {cpu[floor] / cpu[p]:.2f}x"
        )
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    spark.stop()


JAVA_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
# kafka-python's codec ids, Kafka's own (attributes bits 0-2).
KP_CODEC = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def kafka_python_segment(path: Path, codec: str, n: int, per_batch: int = 1000) -> None:
    """Writes `n` records as a producer using kafka-python would: v2 batches of `per_batch`
    records, 10-byte keys, 100-byte values of which the first half is random bytes and the
    second text. Deterministic. Cached under ~/.cache (kafka-python encodes ~40 K records/s)."""
    from kafka.record.memory_records import MemoryRecordsBuilder

    cache = Path.home() / ".cache" / "kafkalog-bench" / "data"
    cached = cache / f"kp-v2-{codec}-{n}-{per_batch}.log"
    if not cached.exists():
        import random

        rnd = random.Random(18)
        text = b"lorem ipsum dolor sit amet, consectetur adipiscing"[:50]
        parts = []
        for base in range(0, n, per_batch):
            b = MemoryRecordsBuilder(2, KP_CODEC[codec], 1 << 30, offset=base)
            for i in range(base, min(n, base + per_batch)):
                value = rnd.randbytes(50) + text
                if (
                    b.append(1_700_000_000_000 + i, b"key-%06d" % (i % 1_000_000), value, [])
                    is None
                ):
                    raise RuntimeError("kafka-python refused a record")
            b.close()
            parts.append(bytes(b.buffer()))
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_bytes(b"".join(parts))
        tmp.rename(cached)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, path)


def java_bench_script() -> Path | None:
    env = os.environ.get("KAFKALOG_JAVA_BENCH")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for cand in [here.parent.parent / "shared" / "bench", Path("/work/shared/bench")]:
        if (cand / "java-client-bench.sh").exists():
            return cand / "java-client-bench.sh"
    return None


def java_client(script: Path | None, log: Path, rounds: int) -> tuple[float | None, str]:
    """Records/s of Kafka's Java client on `log`, or None and why not."""
    if script is None:
        return None, "java-client-bench.sh not found (set KAFKALOG_JAVA_BENCH)"
    if shutil.which("java") is None or shutil.which("javac") is None:
        return None, "no java/javac on PATH (the Java client needs a JDK 17)"
    try:
        out = subprocess.run(
            ["bash", str(script), str(log), str(rounds)],
            capture_output=True,
            text=True,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        return None, "the Java client timed out"
    line = out.stdout.strip().splitlines()[-1:] or [out.stderr.strip()[-200:]]
    if out.returncode != 0 or not line[0].startswith("java "):
        return None, f"the Java client failed (exit {out.returncode}): {line[0]}"
    rate = float(line[0].split(": ")[1].split(" Mrec/s")[0]) * 1e6
    return rate, line[0]


def java_client_cpu(log: Path, rounds: int) -> tuple[float, float] | None:
    """(wall, CPU) records/s of benches/java/JavaBenchCpu.java on `log`, with the jars the
    shared script fetched; None where that is not possible."""
    jars = Path(os.environ.get("KAFKA_JARS", Path.home() / ".cache/kafkalog-bench/jars"))
    src = Path(__file__).resolve().parent / "java" / "JavaBenchCpu.java"
    if not (jars / "kafka-clients.jar").exists() or shutil.which("javac") is None:
        return None
    classes = Path.home() / ".cache" / "kafkalog-bench" / "classes-cpu"
    if not (classes / "JavaBenchCpu.class").exists() or (
        src.stat().st_mtime > (classes / "JavaBenchCpu.class").stat().st_mtime
    ):
        classes.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["javac", "-cp", str(jars / "kafka-clients.jar"), "-d", str(classes), str(src)],
            check=True,
        )
    out = subprocess.run(
        ["java", "-cp", f"{classes}:{jars}/*", "JavaBenchCpu", str(log), str(rounds)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if out.returncode != 0 or not out.stdout.startswith("java "):
        return None
    words = out.stdout.split()
    n = float(words[1])
    return n / float(words[4]), n / float(words[7])


def ours_cpu(log: Path, repeat: int, binary_view: bool = False) -> tuple[float, float]:
    """Best wall and best CPU seconds (this thread's: threads=1 decodes on the caller's thread)
    of kafkalog.read(log, threads=1).read_all(), after one read to warm up."""
    kafkalog.read(log, threads=1, binary_view=binary_view).read_all()
    wall = cpu = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.thread_time()
        kafkalog.read(log, threads=1, binary_view=binary_view).read_all()
        cpu = min(cpu, time.thread_time() - c)
        wall = min(wall, time.perf_counter() - t)
    return wall, cpu


def first_read_seconds(log: Path, repeat: int, binary_view: bool = False) -> tuple[float, float]:
    """The first kafkalog.read of `log` in a fresh process, and the best of the later ones."""
    code = (
        "import sys, time, kafkalog\n"
        "times = []\n"
        f"for _ in range({repeat}):\n"
        "    t = time.perf_counter()\n"
        f"    kafkalog.read({str(log)!r}, threads=1, binary_view={binary_view}).read_all()\n"
        "    times.append(time.perf_counter() - t)\n"
        "print(times[0], min(times[1:]))\n"
    )
    first, later = subprocess.check_output([sys.executable, "-c", code], text=True).split()
    return float(first), float(later)


def java_cases(tmp: Path, n: int, rounds: int, codecs: list[str]) -> None:
    load = os.getloadavg()
    print(
        f"\n## kafkalog vs Kafka's Java client on the same bytes ({n} records, kafka-python v2, "
        f"1000 a batch), one thread; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    script = java_bench_script()
    rows = []
    for codec in codecs:
        log = tmp / f"java-{codec}-0" / "00000000000000000000.log"
        kafka_python_segment(log, codec, n)
        data = log.read_bytes()
        cpu_before = time.process_time()
        ours = best_of(lambda log=log: kafkalog.read(log, threads=1).read_all(), 7)
        cpu = (time.process_time() - cpu_before) / 7
        java, note = java_client(script, log, rounds)
        ratio = f"{n / ours / java:.2f}x" if java else "-"
        java_text = f"{java / 1e6:.2f} M" if java else "n/a"
        print(
            f"{codec:7} kafkalog {n / ours / 1e6:6.2f} M rec/s {len(data) / ours / 1e6:7.0f} MB/s"
            f" | java {java_text:>8} rec/s | ratio {ratio}"
            f" | kafkalog CPU {cpu * 1e3:.0f} ms a read (mean), wall {ours * 1e3:.0f} ms (best)"
        )
        if java is None:
            print(f"        java: {note}")
        # The same read with key and value as binary_view columns pointing into the bytes read.
        views = best_of(
            lambda log=log: kafkalog.read(log, threads=1, binary_view=True).read_all(), 7
        )
        vratio = f"{n / views / java:.2f}x" if java else "-"
        print(
            f"{'':7} views    {n / views / 1e6:6.2f} M rec/s {len(data) / views / 1e6:7.0f} MB/s"
            f" | java {java_text:>8} rec/s | ratio {vratio} | views/binary {ours / views:.2f}x"
        )
        jc = java_client_cpu(log, rounds)
        if jc is not None:
            wall, cpu_s = ours_cpu(log, 7)
            print(
                f"{'':7} CPU time: kafkalog {n / cpu_s / 1e6:6.2f} M rec/s, "
                f"java {jc[1] / 1e6:6.2f} M rec/s, ratio {n / cpu_s / jc[1]:.2f}x "
                f"(wall: {n / wall / 1e6:.2f} M vs"
                f" {jc[0] / 1e6:.2f} M, {n / wall / jc[0]:.2f}x)"
            )
            vwall, vcpu = ours_cpu(log, 7, binary_view=True)
            print(
                f"{'':7} CPU time: views    {n / vcpu / 1e6:6.2f} M rec/s, "
                f"java {jc[1] / 1e6:6.2f} M rec/s, ratio {n / vcpu / jc[1]:.2f}x "
                f"(wall: {n / vwall / 1e6:.2f} M vs"
                f" {jc[0] / 1e6:.2f} M, {n / vwall / jc[0]:.2f}x)"
            )
        rows.append(
            {
                "codec": codec,
                "kafkalog": n / ours,
                "views": n / views,
                "java": java,
                "bytes": len(data),
            }
        )
        if codec == "none":
            # The floor: every batch's CRC-32C (kafkalog.read_batches computes it and parses
            # only the 61-byte batch headers) plus one copy of the segment's bytes.
            crc = best_of(lambda d=data: kafkalog.read_batches(d).read_all(), 7)
            # A memcpy (numpy's) into memory already touched: a copy into fresh pages would
            # count page faults, and bytearray slice assignment is several times slower.
            import numpy as np

            src = np.frombuffer(data, np.uint8)
            dst = np.ones_like(src)

            def copy_once(src=src, dst=dst):
                np.copyto(dst, src)

            copy = best_of(copy_once, 7)
            floor = crc + copy
            print(
                f"{'':7} floor    {n / floor / 1e6:6.2f} M rec/s "
                f"{len(data) / floor / 1e6:7.0f} MB/s"
                f" (CRC {crc * 1e3:.1f} ms + copy {copy * 1e3:.1f} ms); kafkalog takes "
                f"{ours / floor:.2f}x the floor"
            )
    for binary_view in (False, True):
        first, later = first_read_seconds(
            tmp / "java-none-0" / "00000000000000000000.log", 4, binary_view
        )
        print(
            f"first read in a fresh process{' (views)' if binary_view else ''} "
            f"{first * 1e3:.0f} ms, later ones {later * 1e3:.0f} ms: {first / later:.2f}x"
        )
    print("json " + json.dumps(rows))


def two_core_cases(tmp: Path, n: int, codec: str) -> None:
    print(f"\n## one large {codec} segment ({n} records, kafka-python v2): threads=2 vs threads=1")
    log = tmp / f"big-{codec}-0" / "00000000000000000000.log"
    kafka_python_segment(log, codec, n)
    one = best_of(lambda: kafkalog.read(log, threads=1).read_all(), 5)
    two = best_of(lambda: kafkalog.read(log, threads=2).read_all(), 5)
    report(f"kafkalog.read {codec} segment, 1 thread", n, log.stat().st_size, one)
    report(f"kafkalog.read {codec} segment, 2 threads", n, log.stat().st_size, two)
    print(f"speedup on 2 threads: {one / two:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--big-gb", type=float, default=2.0)
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--spark", action="store_true")
    ap.add_argument(
        "--only", choices=["decode", "dir", "big", "spark", "java", "cores"], help="run one section"
    )
    ap.add_argument("--java-rounds", type=int, default=20, help="rounds of the Java client")
    ap.add_argument("--codecs", default=",".join(JAVA_CODECS), help="codecs of the java section")
    args = ap.parse_args()
    print(
        f"# kafkalog {kafkalog.__version__}, pyarrow {pa.__version__}, Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.platform()}"
    )
    with tempfile.TemporaryDirectory(prefix="kafkalog-bench-") as d:
        tmp = Path(d)
        if args.only in (None, "java"):
            java_cases(tmp, args.records, args.java_rounds, args.codecs.split(","))
        if args.only in (None, "cores"):
            two_core_cases(tmp, args.records * 2, "lz4")
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
