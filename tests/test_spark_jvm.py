"""The JVM data source (jvm/, rust/jni/): the same queries through it and through the Python
data source give equal tables, in local mode and with separate executor processes; pruning and
pushdown read less; bad input fails the query with the core's message and leaves the JVM up.

Each group runs in a process of its own (tests/spark_jvm_job.py): the jar is on a JVM's
classpath from its start, and there ``format("kafkalog")`` is the JVM source."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kafkalog
import kafkalog.spark
from kafkalog.errors import KafkaLogError

HERE = Path(__file__).resolve().parent
LOGS = HERE.parent / "examples" / "logs"
CORPUS = HERE / "corpus" / "segments"
# Inside examples/logs: in clicks-1's LogAppendTime batch, and inside orders-1's transactions.
T1 = 1704067210000
T2 = 1704153600020

pytestmark = pytest.mark.filterwarnings("ignore:.*index not used")


def _job(master: str, mode: str, args: list[dict]) -> dict:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(HERE / "spark_jvm_job.py"), master, mode, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _corpus_partitions() -> list[str]:
    """Every partition directory of the real-bytes corpus (internal topics included)."""
    dirs = sorted({str(p.parent) for p in CORPUS.rglob("*.log")})
    assert len(dirs) > 10
    return dirs


def _cases() -> list[dict]:
    logs = [str(LOGS)]
    every = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    return [
        {"name": "everything", "paths": logs},
        {"name": "headers", "paths": logs, "options": {"includeHeaders": "true"}},
        {"name": "metadata", "paths": logs, "options": {"batchMetadata": "true"}},
        {"name": "corpus", "paths": _corpus_partitions(), "options": {"includeHeaders": "true"}},
        {
            "name": "corpus_small_items",
            "paths": _corpus_partitions(),
            "options": {"targetBytes": "4096", "failOnDataLoss": "false"},
        },
        {
            "name": "subscribe_offsets_json",
            "paths": logs,
            "options": {
                "subscribe": "orders",
                "startingOffsets": '{"orders": {"0": 1, "1": -2}}',
                "endingOffsets": '{"orders": {"0": 4, "1": -1}}',
            },
        },
        {
            "name": "read_committed",
            "paths": logs,
            "options": {"kafka.isolation.level": "read_committed", "subscribePattern": "ord.*"},
        },
        {
            "name": "timestamps",
            "paths": logs,
            "options": {
                "startingTimestamp": str(T1),
                "endingTimestamp": str(T2),
                "startingOffsetsByTimestampStrategy": "latest",
            },
        },
        {"name": "assign", "paths": logs, "options": {"assign": '{"clicks": [1], "orders": [0]}'}},
        {"name": "schema", "paths": logs, "schema": "offset long, value binary, topic string"},
        {
            "name": "split_partitions",
            "paths": logs,
            "options": {"maxRecordsPerPartition": "3", "minPartitions": "7"},
        },
        {
            "name": "pushdown_timestamp",
            "paths": logs,
            "where": f"timestamp >= timestamp_millis({T1})",
        },
        {"name": "pushdown_offsets", "paths": logs, "where": "offset > 2 and offset <= 6"},
        {
            "name": "pushdown_topic_partition",
            "paths": logs,
            "where": "topic in ('orders', 'clicks') and partition = 1",
        },
        {"name": "pushdown_reversed", "paths": logs, "where": "5 > offset and 'users' = topic"},
        {
            "name": "aggregates",
            "paths": logs,
            "select": ["sum(length(value))", "max(offset)", "count(*)", "count(key)"],
        },
        {"name": "columns", "paths": logs, "select": ["topic", "partition", "offset"]},
        {"name": "all_columns_by_name", "paths": logs, "select": every},
    ]


@pytest.fixture(scope="module")
def jar() -> str:
    try:
        return kafkalog.spark.jar()
    except KafkaLogError as e:
        pytest.fail(f"{e} (make test builds it)")


@pytest.fixture(scope="module")
def compared(jar) -> dict:
    return _job("local[2]", "compare", _cases())


@pytest.mark.parametrize("name", [c["name"] for c in _cases()])
def test_jvm_and_python_sources_give_equal_tables(compared, name):
    result = compared[name]
    assert "error" not in result, result.get("error")
    assert result["equal"], result
    assert result["rows"] > 0


def test_local_cluster_reads_the_same_rows(jar):
    """Two executor processes, each loading the native library from the jar."""
    cases = [c for c in _cases() if c["name"] in ("everything", "headers", "pushdown_timestamp")]
    result = _job("local-cluster[2,1,1024]", "compare", cases)
    for c in cases:
        assert result[c["name"]].get("equal"), result[c["name"]]


def test_writes_and_streams_go_on_through_the_python_source(jar, tmp_path):
    """With the jar, format("kafkalog") is the JVM source for every use: what it does not do
    itself (writes, Structured Streaming) it hands to the Python source of the same name."""
    args = {
        "src": str(LOGS),
        "out": str(tmp_path / "out"),
        "sink": str(tmp_path / "sink"),
        "checkpoint": str(tmp_path / "checkpoint"),
    }
    got = _job("local[2]", "delegate", args)
    assert got["written_equal"] and got["written"] > 0, got
    assert got["stream_error"] is None, got["stream_error"]
    assert got["streamed"] == got["all"] > 0, got


def test_the_spark_suites_pass_with_the_jvm_source(jar):
    """tests/test_spark.py, tests/test_spark_kafka_source.py and tests/test_values_spark.py in
    a session with the jar (conftest's KAFKALOG_SPARK_JVM): every format("kafkalog") there is
    the JVM source, which hands typed keys and values to the Python source."""
    env = {**os.environ, "KAFKALOG_SPARK_JVM": "1"}
    suites = [
        str(HERE / name)
        for name in ("test_spark.py", "test_spark_kafka_source.py", "test_values_spark.py")
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-6000:]


def test_jar_path_and_session_helper(jar):
    assert jar.endswith("kafkalog-spark.jar") and Path(jar).is_file()
    import zipfile

    names = zipfile.ZipFile(jar).namelist()
    assert "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister" in names
    assert any(n.endswith("/libkafkalog_jni.so") for n in names)


def test_pushdown_reads_less_and_shows_in_explain(jar):
    logs = [str(LOGS)]
    one = {"targetBytes": "1"}  # one Spark partition per work item: counts what is read
    got = _job(
        "local[1]",
        "plan",
        [
            {"name": "all", "paths": logs, "options": one},
            {"name": "topic", "paths": logs, "options": one, "where": "topic = 'orders'"},
            {
                "name": "timestamp",
                "paths": logs,
                "options": one,
                "where": f"timestamp >= timestamp_millis({T2})",
            },
            {"name": "offset", "paths": logs, "options": one, "where": "offset >= 1000000"},
            {"name": "partition", "paths": logs, "options": one, "where": "partition = 1"},
        ],
    )
    full = got["all"]["partitions"]
    for name in ("topic", "timestamp", "partition"):
        assert 0 < got[name]["partitions"] < full, (name, got[name], full)
        assert "PushedPredicates=[" in got[name]["explain"], got[name]["explain"]
    assert got["offset"]["partitions"] == 0 and got["offset"]["rows"] == 0
    assert "columns=[]" in got["all"]["count_explain"]  # count(*): no column for Spark
    assert "columns=[offset]" in got["offset"]["count_explain"]


def test_input_metrics_count_the_rows_and_bytes_read(jar):
    # Spark's "Input" (stage and task pages, event logs): every row, and the bytes of the
    # segments read; a source outside Hadoop's file systems shows 0 bytes unless it counts them.
    got = _job("local[2]", "metrics", {"path": str(LOGS)})
    log_bytes = sum(p.stat().st_size for p in LOGS.rglob("*.log"))
    scans = [s for s in got["stages"] if s["input_records"] > 0]
    assert len(scans) == 2, got  # the count and the sum, each one scan stage
    for stage in scans:
        assert stage["input_records"] == got["rows"], (stage, got["rows"])
        assert stage["input_bytes"] == log_bytes, (stage, log_bytes)


@pytest.fixture
def corrupt(tmp_path) -> Path:
    """orders-0 with a flipped byte inside its second batch."""
    shutil.copytree(LOGS / "orders-0", tmp_path / "orders-0")
    log = tmp_path / "orders-0" / "00000000000000000000.log"
    positions = kafkalog.read_batches(log).read_all()["batchPosition"].to_pylist()
    data = bytearray(log.read_bytes())
    data[positions[1] + 100] ^= 0xFF
    log.write_bytes(bytes(data))
    return tmp_path / "orders-0"


def test_bad_input_fails_with_the_cores_message_and_the_jvm_stays_up(jar, corrupt, tmp_path):
    alive = str(LOGS)
    cases = [
        {"name": "corrupt", "paths": [str(corrupt)], "alive": alive},
        {"name": "missing", "paths": [str(tmp_path / "nowhere-0")], "alive": alive},
        {"name": "unknown_option", "paths": [alive], "options": {"startingOffset": "earliest"}},
        {"name": "bad_offsets", "paths": [alive], "options": {"startingOffsets": "first"}},
        {"name": "latest_start", "paths": [alive], "options": {"startingOffsets": "latest"}},
        {"name": "bad_schema", "paths": [alive], "schema": "offset string"},
        {
            "name": "data_loss",
            "paths": [alive],
            "options": {"subscribe": "orders", "startingOffsets": '{"orders": {"0": -2}}'},
        },
    ]
    got = _job("local[1]", "errors", cases)
    assert got["after"] > 0  # the same JVM read everything after the failures
    expected = {
        "corrupt": (
            "record is corrupt (stored crc = 1379684124, computed crc = 2523488637) "
            "(batch at byte position 241, offset 1)"
        ),
        "missing": "nowhere-0",
        "unknown_option": "unknown option(s) for the kafkalog data source: startingoffset;",
        "bad_offsets": "startingOffsets must be 'earliest', 'latest' or JSON",
        "latest_start": "startingOffsets=latest is not valid for batch queries",
        "bad_schema": "column offset string is not one kafkalog reads",
        "data_loss": "must name every partition read",
    }
    for name, text in expected.items():
        jvm, py = got[name]["jvm"], got[name]["python"]
        assert py is not None and text in py, (name, py)
        assert jvm is not None and text in jvm, (name, jvm)
        assert "KafkaLogException" in jvm, (name, jvm)
