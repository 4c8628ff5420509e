"""The ``kafkalog`` data source as a drop-in for Spark's Kafka source: found by name, with an
unchanged Kafka job's options and schema, batch and Structured Streaming (offsets in Spark
Kafka's JSON, rate limits, ``Trigger.AvailableNow``, restarts from the checkpoint,
``failOnDataLoss``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import jvm_crash
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

import kafkalog
import kafkalog.spark as ks
from kafkalog.spark.streaming import rate_limit

REPO = Path(__file__).resolve().parent.parent
LOGS = REPO / "examples" / "logs"

pytestmark = pytest.mark.filterwarnings("ignore:.*index not used")


def _read(path, **kw) -> pa.Table:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
        return kafkalog.read(path, **kw).read_all()


def _offsets(df) -> dict[tuple[str, int], list[int]]:
    out: dict[tuple[str, int], list[int]] = {}
    for r in df.select("topic", "partition", "offset").collect():
        out.setdefault((r.topic, r.partition), []).append(r.offset)
    return {k: sorted(v) for k, v in out.items()}


# --------------------------------------------------------------------------------------------
# Batch: an unchanged Kafka job
# --------------------------------------------------------------------------------------------


def kafka_job(spark, path: str, extra: dict | None = None):
    """A batch job as written against a live topic; only format and path differ."""
    reader = (
        spark.read.format("kafkalog")
        .option("kafka.bootstrap.servers", "broker-1:9092,broker-2:9092")
        .option("subscribe", "orders")
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("failOnDataLoss", "false")
        .option("kafka.isolation.level", "read_committed")
        .option("kafka.group.id", "reporting")
        .option("groupIdPrefix", "spark-kafka-source")
        .option("kafkaConsumer.pollTimeoutMs", "120000")
        .option("fetchOffset.numRetries", "3")
        .option("minPartitions", "4")
        .option("includeHeaders", "false")
    )
    for k, v in (extra or {}).items():
        reader = reader.option(k, v)
    return reader.load(path)


def test_an_unchanged_kafka_batch_job_reads_the_files(spark):
    df = kafka_job(spark, str(LOGS))
    assert df.schema == ks.SPARK_SCHEMA  # exactly Spark's Kafka source schema
    assert df.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]
    expected = _read(LOGS, isolation_level="read_committed")
    mask = pa.compute.equal(expected["topic"], "orders")
    expected = expected.filter(mask)
    got = df.selectExpr("topic", "partition", "offset", "key", "value").collect()
    rows = sorted(
        (r.topic, r.partition, r.offset, bytes(r.key or b""), bytes(r.value)) for r in got
    )
    want = sorted(
        zip(
            expected["topic"].to_pylist(),
            expected["partition"].to_pylist(),
            expected["offset"].to_pylist(),
            [k or b"" for k in expected["key"].to_pylist()],
            expected["value"].to_pylist(),
            strict=True,
        )
    )
    assert rows == want and rows
    assert df.rdd.getNumPartitions() >= 4  # minPartitions


def test_exactly_one_subscription_as_spark(spark):
    with pytest.raises(Exception, match="only one of assign, subscribe and subscribePattern"):
        (
            spark.read.format("kafkalog")
            .option("subscribe", "orders")
            .option("assign", '{"orders": [0]}')
            .load(str(LOGS))
            .count()
        )
    pattern = spark.read.format("kafkalog").option("subscribePattern", "ord.*").load(str(LOGS))
    assert set(_offsets(pattern)) == {("orders", 0), ("orders", 1)}
    # As Spark's Kafka source: the pattern found anywhere in a name (its admin client's topic
    # list filtered with findFirstIn), not the whole name.
    found = spark.read.format("kafkalog").option("subscribePattern", "lick").load(str(LOGS))
    assert {t for t, _ in _offsets(found)} == {"clicks"}
    whole = spark.read.format("kafkalog").option("subscribePattern", "^user").load(str(LOGS))
    assert {t for t, _ in _offsets(whole)} == {"users"}


def test_unknown_options_fail_naming_the_known_ones(spark):
    # The JVM source names the option as written; PySpark lower-cases a Python source's options.
    with pytest.raises(
        Exception, match="unknown option.*(startingOffsetz|startingoffsetz).*subscribe"
    ):
        spark.read.format("kafkalog").option("startingOffsetz", "x").load(str(LOGS)).count()


def test_known_options_are_listed_as_sparks_docs_spell_them():
    from kafkalog.errors import InvalidArgumentError
    from kafkalog.spark.options import SourceOptions

    with pytest.raises(InvalidArgumentError) as info:
        SourceOptions.parse({"path": str(LOGS), "startingOffsetz": "x"})
    message = str(info.value)
    for name in ("endingOffsets", "includeHeaders", "subscribePattern", "targetBytes"):
        assert name in message
    assert "endingoffsets" not in message and "includeheaders" not in message


def test_max_records_per_partition_and_min_partitions(spark):
    df = (
        spark.read.format("kafkalog")
        .option("subscribe", "orders")
        .option("maxRecordsPerPartition", "5")
        .load(str(LOGS))
    )
    sizes = df.rdd.glom().map(len).collect()
    assert sum(sizes) == 33 + 6 and max(sizes) <= 5
    assert _offsets(df)[("orders", 0)] == list(range(33))
    many = spark.read.format("kafkalog").option("minPartitions", "12").load(str(LOGS / "users-0"))
    assert many.rdd.getNumPartitions() >= 12
    assert _offsets(many) == {("users", 0): _read(LOGS / "users-0")["offset"].to_pylist()}


def test_fail_on_data_loss_in_batch(spark, tmp_path):
    """orders-0 with its first segment deleted (as retention deletes): a query starting
    before what is left fails, naming the lost range; with failOnDataLoss=false it reads
    what is there."""
    part = tmp_path / "orders-0"
    shutil.copytree(LOGS / "orders-0", part)
    for f in part.glob("00000000000000000000.*"):
        f.unlink()
    starting = '{"orders": {"0": 3}}'
    with pytest.raises(Exception, match=r"offsets 3 to 14 of orders-0 are gone"):
        (
            spark.read.format("kafkalog")
            .option("startingOffsets", starting)
            .load(str(tmp_path))
            .count()
        )
    df = (
        spark.read.format("kafkalog")
        .option("startingOffsets", starting)
        .option("failOnDataLoss", "false")
        .load(str(tmp_path))
    )
    assert _offsets(df) == {("orders", 0): list(range(15, 33))}


# --------------------------------------------------------------------------------------------
# Structured Streaming
# --------------------------------------------------------------------------------------------


def _records(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "key": [f"k{i}".encode() for i in range(start, start + n)],
            "value": [f"v{i}".encode() for i in range(start, start + n)],
            "timestamp": pa.array(
                [1_700_000_000_000 + i for i in range(start, start + n)], pa.timestamp("ms")
            ),
        }
    )


def _append_segment(part: Path, n: int) -> None:
    """New records at the end of a partition, in a new segment (as a broker rolls one)."""
    end = 0
    if part.exists() and any(part.glob("*.log")):
        end = _read(part)["offset"].to_pylist()[-1] + 1
    staging = part.parent / f".new-{part.name}-{end}"
    staging.mkdir(parents=True)
    kafkalog.write(staging / part.name, _records(n, end), base_offset=end)
    part.mkdir(exist_ok=True)
    for f in (staging / part.name).iterdir():
        shutil.move(str(f), part / f.name)
    (staging / part.name).rmdir()
    staging.rmdir()


def _run_available_now(spark, src: Path, out: Path, checkpoint: Path, **options):
    reader = spark.readStream.format("kafkalog").option("subscribe", "s")
    for k, v in options.items():
        reader = reader.option(k, str(v))
    query = (
        reader.load(str(src))
        .selectExpr("topic", "partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    exc = query.exception()
    if exc is not None:
        raise exc
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def _written(spark, out: Path) -> list[int]:
    if not any(out.glob("*.parquet")):
        return []
    return sorted(r.offset for r in spark.read.parquet(str(out)).select("offset").collect())


def test_rate_limit_shares_the_budget_and_never_exceeds_it():
    start = {("t", 0): 0, ("t", 1): 0, ("t", 2): 0}
    latest = {("t", 0): 1000, ("t", 1): 1, ("t", 2): 1}
    got = rate_limit(start, latest, 10)
    assert sum(got[tp] - start[tp] for tp in start) <= 10
    assert all(start[tp] <= got[tp] <= latest[tp] for tp in start)
    assert rate_limit(start, latest, 5000) == latest


def test_stream_available_now_with_max_offsets_per_trigger_then_restart(spark, tmp_path):
    src, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    part = src / "s-0"
    _append_segment(part, 25)
    batches = _run_available_now(
        spark, src, out, checkpoint, startingOffsets="earliest", maxOffsetsPerTrigger=10
    )
    assert batches == [10, 10, 5]
    assert _written(spark, out) == list(range(25))

    # Stopped; new segments land, and a new partition appears: a restart reads exactly the
    # new records (the new partition from its earliest offset).
    _append_segment(part, 7)
    kafkalog.write(src / "s-1", _records(4))
    batches = _run_available_now(spark, src, out, checkpoint, maxOffsetsPerTrigger=100)
    assert sum(batches) == 7 + 4
    rows = spark.read.parquet(str(out)).select("partition", "offset").collect()
    got = sorted((r.partition, r.offset) for r in rows)
    assert got == sorted([(0, o) for o in range(32)] + [(1, o) for o in range(4)])
    # Nothing new: nothing read, nothing duplicated.
    assert _run_available_now(spark, src, out, checkpoint) == []
    assert len(spark.read.parquet(str(out)).collect()) == 36


def test_stream_offsets_are_spark_kafka_json(spark, tmp_path):
    src, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    _append_segment(src / "s-0", 5)
    _run_available_now(spark, src, out, checkpoint, startingOffsets="earliest")
    offsets = sorted((checkpoint / "offsets").glob("[0-9]*"))
    last = offsets[-1].read_text().strip().splitlines()[-1]
    assert json.loads(last) == {"s": {"0": 5}}


def test_stream_starts_at_latest_by_default(spark, tmp_path):
    src, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    _append_segment(src / "s-0", 5)
    assert _run_available_now(spark, src, out, checkpoint) == []  # startingOffsets=latest
    _append_segment(src / "s-0", 3)
    assert _run_available_now(spark, src, out, checkpoint) == [3]
    assert _written(spark, out) == [5, 6, 7]


def test_stream_fails_on_data_loss_naming_the_range(spark, tmp_path):
    src, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    part = src / "s-0"
    _append_segment(part, 10)
    _run_available_now(spark, src, out, checkpoint, startingOffsets="earliest")
    # Between two runs: more records, then retention deletes up to offset 20.
    _append_segment(part, 10)
    _append_segment(part, 10)
    for f in sorted(part.glob("*"))[:]:
        if f.name.startswith(("00000000000000000000", "00000000000000000010")):
            f.unlink()
    with pytest.raises(Exception, match=r"offsets 10 to 19 of s-0 are gone"):
        _run_available_now(spark, src, out, checkpoint)
    # failOnDataLoss=false: warned, and the query goes on from what is there.
    _run_available_now(spark, src, out, checkpoint, failOnDataLoss="false")
    assert _written(spark, out) == list(range(10)) + list(range(20, 30))


def test_streaming_rejects_ending_offsets(spark, tmp_path):
    _append_segment(tmp_path / "s-0", 2)
    with pytest.raises(Exception, match="ending offsets are not valid in streaming"):
        _run_available_now(spark, tmp_path, tmp_path / "o", tmp_path / "c", endingOffsets="latest")


# --------------------------------------------------------------------------------------------
# Separate executor processes, and a session that never imported kafkalog
# --------------------------------------------------------------------------------------------

_CLUSTER_JOB = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master(sys.argv[1]).appName("kafkalog-cluster")
             .config("spark.ui.enabled", "false")
             .config("spark.executor.memory", "512m")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    # No import of kafkalog here: the data source is found by name.
    df = (spark.read.format("kafkalog")
          .option("kafka.bootstrap.servers", "unused:9092")
          .option("subscribe", "orders,clicks,users,events")
          .option("targetBytes", "1")
          .load(sys.argv[2]))
    rows = df.selectExpr("topic", "partition", "offset").collect()
    print(json.dumps({"rows": sorted([r.topic, r.partition, r.offset] for r in rows),
                      "partitions": df.rdd.getNumPartitions()}))
    spark.stop()
    """
)


@pytest.mark.parametrize("master", ["local[1]", "local-cluster[2,1,1024]"])
def test_found_by_name_in_a_fresh_session(master, tmp_path):
    """A separate driver that never imports kafkalog, in local mode and with two executor
    processes, reads the same rows as kafkalog.read."""
    job = tmp_path / "job.py"
    job.write_text(_CLUSTER_JOB)
    env = {
        **__import__("os").environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [sys.executable, str(job), master, str(LOGS)],
        capture_output=True,
        text=True,
        env=jvm_crash.env(tmp_path, env),
        timeout=600,
    )
    jvm_crash.check(tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    want = _read(LOGS)
    # The topics the job subscribes (examples/logs also has payments and _schemas since
    # issue 38).
    subscribed = pa.array(["orders", "clicks", "users", "events"])
    want = want.filter(pa.compute.is_in(want["topic"], value_set=subscribed))
    expected = sorted(
        [t, p, o]
        for t, p, o in zip(
            want["topic"].to_pylist(),
            want["partition"].to_pylist(),
            want["offset"].to_pylist(),
            strict=True,
        )
    )
    assert got["rows"] == expected
    assert got["partitions"] > 2


# --------------------------------------------------------------------------------------------
# The streaming sink
# --------------------------------------------------------------------------------------------


def _sink(spark, src: Path, out: Path, checkpoint: Path) -> None:
    query = (
        spark.readStream.format("kafkalog")
        .option("subscribe", "s")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "6")
        .load(str(src))
        .select("key", "value", "partition", "timestamp")
        .withColumn("topic", F.lit("mirror"))
        .writeStream.format("kafkalog")
        .option("checkpointLocation", str(checkpoint))
        .option("segmentBytes", "300")
        .trigger(availableNow=True)
        .start(str(out))
    )
    query.awaitTermination(300)
    if query.exception() is not None:
        raise query.exception()


def test_stream_sink_appends_as_a_broker_and_resumes(spark, tmp_path):
    src, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    _append_segment(src / "s-0", 14)
    _sink(spark, src, out, checkpoint)
    mirror = _read(out / "mirror-0")
    assert mirror["offset"].to_pylist() == list(range(14))
    assert mirror["value"].to_pylist() == _read(src / "s-0")["value"].to_pylist()
    assert len(list((out / "mirror-0").glob("*.log"))) > 1  # rolled at segmentBytes
    assert kafkalog.verify(out / "mirror-0")["ok"]
    # More records at the source; the restarted query appends exactly them.
    _append_segment(src / "s-0", 5)
    _sink(spark, src, out, checkpoint)
    mirror = _read(out / "mirror-0")
    assert mirror["offset"].to_pylist() == list(range(19))
    assert mirror["value"].to_pylist() == _read(src / "s-0")["value"].to_pylist()


def test_stream_sink_skips_a_replayed_micro_batch(tmp_path):
    from kafkalog.spark.writing import StreamWriter

    writer = StreamWriter(
        {"path": str(tmp_path), "topic": "t", "partition": "0", "fsync": "false", "writerId": "q1"}
    )
    rows = pa.record_batch({"key": [b"a", b"b"], "value": [b"1", b"2"]})
    first = writer.write(iter([rows]))
    writer.commit([first], 7)
    again = writer.write(iter([rows]))
    writer.commit([again], 7)  # Spark replays batch 7 after a failure: written once
    assert _read(tmp_path / "t-0")["offset"].to_pylist() == [0, 1]
    later = writer.write(iter([rows]))
    writer.commit([later], 8)
    assert _read(tmp_path / "t-0")["offset"].to_pylist() == [0, 1, 2, 3]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and p.is_dir()]


# --------------------------------------------------------------------------------------------
# Planning on the driver reads indexes, not logs
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_partition(tmp_path_factory) -> Path:
    """About 48 MB of log in 6 segments: records with 1 KiB values and rising timestamps."""
    root = tmp_path_factory.mktemp("big")
    n = 46_000
    values = [bytes([i % 251]) * 1000 for i in range(1000)]
    table = pa.table(
        {
            "key": [f"k{i}".encode() for i in range(n)],
            "value": [values[i % 1000] for i in range(n)],
            "timestamp": pa.array([1_700_000_000_000 + i for i in range(n)], pa.timestamp("ms")),
        }
    )
    kafkalog.write(root / "big-0", table, segment_bytes=8 << 20, fsync=False)
    return root


@pytest.mark.parametrize(
    "bounds",
    [
        {"start_timestamp": 1_700_000_040_000},
        {"isolation_level": "read_committed"},
        {"start_offset": 30_000, "end_offset": 30_100},
    ],
)
def test_spark_planning_reads_under_two_percent_of_the_log(big_partition, bounds):
    import pyarrow.fs as pafs
    from counting_fs import Counting

    handler = Counting(pafs.LocalFileSystem())
    fs = pafs.PyFileSystem(handler)
    items = ks.plan(str(big_partition), filesystem=fs, **bounds)
    assert items
    log_bytes = sum(p.stat().st_size for p in big_partition.rglob("*.log"))
    assert log_bytes > 40 << 20
    assert handler.log_bytes < 0.02 * log_bytes, (handler.log_bytes, log_bytes)


def test_grouped_rows_stream_into_one_reader_per_partition():
    from kafkalog.spark.writing import _runs

    def batch(rows):
        return pa.record_batch(
            {
                "topic": [r[0] for r in rows],
                "partition": pa.array([r[1] for r in rows], pa.int32()),
                "value": [r[2] for r in rows],
            }
        )

    batches = [
        batch([("a", 0, b"1"), ("a", 0, b"2"), ("a", 1, b"3")]),
        batch([("a", 1, b"4"), ("b", 0, b"5")]),
    ]
    got = [
        (t, p, r.read_all()["value"].to_pylist()) for t, p, r in _runs(iter(batches), None, None)
    ]
    assert got == [("a", 0, [b"1", b"2"]), ("a", 1, [b"3", b"4"]), ("b", 0, [b"5"])]
    # A consumer that stops early does not lose the next partition's rows.
    keys = [(t, p) for t, p, _ in _runs(iter(batches), None, None)]
    assert keys == [("a", 0), ("a", 1), ("b", 0)]
    with pytest.raises(kafkalog.InvalidArgumentError, match="a-0 are not together"):
        list(_runs(iter([batch([("a", 0, b"1"), ("b", 0, b"2"), ("a", 0, b"3")])]), None, None))
    with pytest.raises(kafkalog.InvalidArgumentError, match="topic"):
        list(_runs(iter([batch([("../x", 0, b"1")])]), None, None))


def test_a_segment_missing_from_the_middle_is_data_loss(spark, tmp_path):
    """A gap between segments that the cleaner's checkpoint does not explain fails the query
    naming the range; without that checkpoint compaction could have made it, so it is read."""
    part = tmp_path / "s-0"
    kafkalog.write(part, _records(40), segment_bytes=200, batch_records=4, fsync=False)
    segments = sorted(part.glob("*.log"))
    assert len(segments) >= 3
    gone = segments[1]
    first_gone = int(gone.name[:20])
    next_base = int(segments[2].name[:20])
    for f in part.glob(gone.name[:20] + ".*"):
        f.unlink()
    expected = [o for o in range(40) if not first_gone <= o < next_base]

    def read(**options):
        reader = spark.read.format("kafkalog").option("subscribe", "s")
        for k, v in options.items():
            reader = reader.option(k, v)
        return sorted(r.offset for r in reader.load(str(tmp_path)).select("offset").collect())

    assert read() == expected  # no cleaner checkpoint: a compacted log may look like this
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n0\n")
    with pytest.raises(Exception, match=rf"offsets {first_gone} to {next_base - 1} of s-0"):
        read()
    assert read(failOnDataLoss="false") == expected
    # Cleaned past the gap: compaction explains it.
    (tmp_path / "cleaner-offset-checkpoint").write_text(f"0\n1\ns 0 {next_base + 1}\n")
    assert read() == expected


def test_stream_latest_is_the_high_watermark_where_the_broker_checkpointed_it(spark, tmp_path):
    """Records at or above the replication-offset-checkpoint's high watermark were never
    acknowledged: a stream reads up to it, and on as it moves."""
    src, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    _append_segment(src / "s-0", 10)
    (src / "replication-offset-checkpoint").write_text("0\n1\ns 0 6\n")
    _run_available_now(spark, src, out, checkpoint, startingOffsets="earliest")
    assert _written(spark, out) == list(range(6))
    (src / "replication-offset-checkpoint").write_text("0\n1\ns 0 10\n")
    _run_available_now(spark, src, out, checkpoint)
    assert _written(spark, out) == list(range(10))
