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


def test_writes_go_on_through_the_python_source_and_streams_are_the_jvms(jar, tmp_path):
    """With the jar, format("kafkalog") is the JVM source for every use: writes, which it does
    not do itself, it hands to the Python source of the same name; it streams itself."""
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
    assert got["stream_sources"] == [f"KafkaLogStream[{LOGS}]"], got["stream_sources"]


# --------------------------------------------------------------------------------------------
# Structured Streaming: the same queries through both sources, step by step in one session
# --------------------------------------------------------------------------------------------

JVM_STREAM = "KafkaLogStream["
PY_STREAM = "PythonMicroBatchStream"


def _run(label: str, fmt: str, path: Path, checkpoint: Path, **options: str) -> dict:
    return {
        "do": "run",
        "label": label,
        "format": fmt,
        "path": str(path),
        "checkpoint": str(checkpoint),
        "options": options,
    }


def _both(label: str, a: Path, b: Path, ca: Path, cb: Path, **options: str) -> list[dict]:
    """The JVM source on ``a`` (checkpoint ``ca``), the Python source on ``b`` (``cb``)."""
    return [
        _run(f"{label}_jvm", "kafkalog", a, ca, **options),
        _run(f"{label}_py", "kafkalog_python", b, cb, **options),
    ]


def _append(parts: list[Path], n: int) -> list[dict]:
    return [{"do": "append", "path": str(p), "n": n} for p in parts]


@pytest.fixture(scope="module")
def streamed(jar, tmp_path_factory) -> dict:
    """Two copies of examples/logs, ``a`` streamed by the JVM source and ``b`` by the Python
    source, with the same limits and the same appends between runs; then each source restarts
    from the other's checkpoint. Also both over examples/logs as they are, and bad options."""
    tmp = tmp_path_factory.mktemp("streams")
    a, b, ca, cb = tmp / "a", tmp / "b", tmp / "ca", tmp / "cb"
    shutil.copytree(LOGS, a)
    shutil.copytree(LOGS, b)
    earliest = {"startingOffsets": "earliest"}
    steps = [
        *_both("all", LOGS, LOGS, tmp / "c1", tmp / "c2", includeHeaders="true", **earliest),
        *_both("limited", a, b, ca, cb, maxOffsetsPerTrigger="17", **earliest),
        # Stopped; records land in a partition and a new partition appears.
        *_append([a / "orders-1", b / "orders-1"], 9),
        *_append([a / "orders-2", b / "orders-2"], 4),
        *_both("restart", a, b, ca, cb, maxOffsetsPerTrigger="5"),
        *_append([a / "clicks-0", b / "clicks-0"], 6),
        # Each source goes on from the other's checkpoint.
        *_both("crossed", b, a, cb, ca),
        *_both("again", a, b, ca, cb),  # nothing new
        # minOffsetsPerTrigger above the backlog: a wait (nothing read before maxTriggerDelay).
        *_both(
            "wait", LOGS, LOGS, tmp / "c9", tmp / "c10", minOffsetsPerTrigger="1000", **earliest
        ),
        *_both(
            "waited",
            LOGS,
            LOGS,
            tmp / "c11",
            tmp / "c12",
            minOffsetsPerTrigger="1000",
            maxTriggerDelay="0s",
            **earliest,
        ),
        *_both("ending", LOGS, LOGS, tmp / "c3", tmp / "c4", endingOffsets="latest"),
        *_both("delay", LOGS, LOGS, tmp / "c5", tmp / "c6", maxTriggerDelay="soon"),
        *_both("not_json", LOGS, LOGS, tmp / "c7", tmp / "c8", startingOffsets="first"),
    ]
    got = _job("local[2]", "stream", steps)
    got["checkpoints"] = {
        name: [
            f.read_text().splitlines()[-1]
            for f in sorted((c / "offsets").glob("[0-9]*"), key=lambda f: int(f.name))
        ]
        for name, c in (("jvm", ca), ("python", cb))
    }
    return got


def _equal_batches(streamed: dict, label: str) -> list[list[str]]:
    jvm, py = streamed[f"{label}_jvm"], streamed[f"{label}_py"]
    assert jvm["error"] is None and py["error"] is None, (jvm["error"], py["error"])
    assert jvm["batches"] == py["batches"], label
    return jvm["batches"]


def test_available_now_streams_what_a_batch_read_reads(streamed):
    batches = _equal_batches(streamed, "all")
    everything = kafkalog.read(LOGS).read_all().num_rows
    assert [len(b) for b in batches] == [everything]


def test_max_offsets_per_trigger_cuts_the_same_micro_batches(streamed):
    batches = _equal_batches(streamed, "limited")
    sizes = [len(b) for b in batches]
    assert len(sizes) > 4 and max(sizes) <= 17, sizes  # records: at most the offsets
    assert sum(sizes) == kafkalog.read(LOGS).read_all().num_rows


def test_a_restart_reads_the_appended_records_once(streamed):
    batches = _equal_batches(streamed, "restart")
    assert [len(b) for b in batches] == [4, 4, 5]  # 9 + 4 new, 5 offsets per trigger
    # Rows are [key, value, topic, partition, ...]: only the new records.
    assert {tuple(json.loads(r)[2:4]) for b in batches for r in b} == {("orders", 1), ("orders", 2)}


def test_a_checkpoint_of_one_source_restarts_with_the_other(streamed):
    batches = _equal_batches(streamed, "crossed")
    assert [len(b) for b in batches] == [6]
    assert _equal_batches(streamed, "again") == []
    # Both wrote the same offsets, byte for byte: Spark Kafka's JSON as Python writes it.
    jvm, py = streamed["checkpoints"]["jvm"], streamed["checkpoints"]["python"]
    # limited (8 since examples/logs has payments-0 and _schemas-0, issue 38), restart,
    # crossed; again: none
    assert jvm == py and len(jvm) == 8 + 3 + 1
    assert json.loads(jvm[-1])["orders"] == {"0": 33, "1": 8 + 9, "2": 4}


def test_min_offsets_per_trigger_waits_alike(streamed):
    # Backlog below the minimum, delay not over: no row (an empty first micro-batch, as Spark
    # runs one from the initial offsets).
    assert [len(b) for b in _equal_batches(streamed, "wait")] in ([], [0])
    everything = kafkalog.read(LOGS).read_all().num_rows
    assert [len(b) for b in _equal_batches(streamed, "waited")] == [everything]


def test_the_jvm_source_streams_itself(streamed):
    for label in ("all", "limited", "restart", "crossed"):
        assert streamed[f"{label}_jvm"]["sources"][0].startswith(JVM_STREAM), streamed[
            label + "_jvm"
        ]
        assert PY_STREAM in streamed[f"{label}_py"]["sources"][0], streamed[label + "_py"]


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("ending", "ending offsets are not valid in streaming queries"),
        ("delay", "option maxTriggerDelay: not a duration such as '15m' or '30s': 'soon'"),
        ("not_json", "startingOffsets must be 'earliest', 'latest' or JSON"),
    ],
)
def test_bad_stream_options_fail_alike(streamed, label, text):
    jvm, py = streamed[f"{label}_jvm"]["error"], streamed[f"{label}_py"]["error"]
    assert py is not None and text in py, py
    # The JVM source's own message (the Python source's comes through PYTHON_DATA_SOURCE_ERROR).
    assert jvm is not None and jvm.startswith(text) and "PYTHON_DATA_SOURCE" not in jvm, jvm


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
