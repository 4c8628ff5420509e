"""Writes through the JVM data source (jvm/.../KafkaLogWrite.java, rust/jni/writer.rs) and
through the Python data source (the fallback where the jar is absent), both over the core's
Spark writes (rust/spark/writing.rs): what each writes holds the source's records (both logs
decoded by kafka-python, not by kafkalog), in append and overwrite mode, with the writer's
options; typed Avro values encoded with the registered schema (decoded by fastavro); the
streaming sink (a micro-batch Spark replays is appended once); bad input fails with the
core's message; with the jar, a write runs where no Python worker can start, and the query's
plan is the JVM's write.

Each group runs in a Spark process of its own (this file, run as a script): there the jar is
on the JVM's classpath from its start, ``format("kafkalog")`` is the JVM source, and the
Python source runs under the name ``kafkalog_python``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jvm_crash
import pytest

HERE = Path(__file__).resolve().parent
LOGS = HERE.parent / "examples" / "logs"
KV = ["topic", "partition", "key", "value", "timestamp", "headers"]

pytestmark = pytest.mark.filterwarnings("ignore:.*index not used")


# --------------------------------------------------------------------------------------------
# The Spark side (run as a script)
# --------------------------------------------------------------------------------------------


def _logs(path: str) -> dict:
    """Every partition directory under ``path`` as the core reads it: offsets, keys, values,
    timestamps, headers (comparable text)."""
    import warnings

    import kafkalog

    out = {}
    for part in sorted(Path(path).iterdir()):
        if not part.is_dir() or part.name.startswith("."):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
            t = kafkalog.read(part).read_all()
        rows = []
        for r in t.select(["offset", "key", "value", "timestamp", "headers"]).to_pylist():
            rows.append(
                json.dumps(r, default=lambda v: v.hex() if isinstance(v, bytes) else str(v))
            )
        out[part.name] = {"rows": rows, "segments": len(list(part.glob("*.log")))}
    return out


def _plans(spark) -> list[str]:
    """The physical plans of the session's SQL executions (writes included), from Spark's
    status store (what the SQL UI shows)."""
    jsc = spark.sparkContext._jsc.sc()
    jsc.listenerBus().waitUntilEmpty()
    store = spark._jsparkSession.sharedState().statusStore()
    executions = store.executionsList()
    return [executions.apply(i).physicalPlanDescription() for i in range(executions.size())]


def _error(f) -> str | None:
    try:
        f()
    except Exception as e:  # Spark's exceptions carry the cause's text
        return str(e)
    return None


def _compare(spark, out: str, args: dict) -> dict:
    """Each case written by both sources; the logs each left."""
    src = (
        spark.read.format("kafkalog").option("includeHeaders", "true").load(args["src"]).select(*KV)
    )
    results = {}
    for case in args["cases"]:
        got = {}
        for fmt in ("kafkalog", "kafkalog_python"):
            target = f"{out}/{case['name']}/{fmt}"
            for step in case["steps"]:
                df = src
                if step.get("where"):
                    df = df.where(step["where"])
                if step.get("select"):
                    df = df.selectExpr(*step["select"])
                if step.get("partitions"):
                    df = df.repartition(step["partitions"])
                writer = df.write.format(fmt).mode(step.get("mode", "append"))
                for k, v in step.get("options", {}).items():
                    writer = writer.option(k, v)
                got[fmt + "_error"] = _error(lambda w=writer, t=target: w.save(t))
            got[fmt] = _logs(target) if Path(target).exists() else {}
            got[fmt + "_left"] = (
                sorted(p.name for p in Path(target).glob(".*")) if Path(target).exists() else []
            )
        results[case["name"]] = got
    return results


def _stream(spark, out: str, args: dict) -> dict:
    """A stream read from the logs and written by each source's sink, in two runs (the second
    after its last micro-batch's commit was forgotten, so Spark runs it again)."""
    results = {}
    for fmt in ("kafkalog", "kafkalog_python"):
        target, checkpoint = f"{out}/{fmt}", f"{out}/{fmt}-checkpoint"
        runs = []
        for _ in range(2):
            query = (
                spark.readStream.format("kafkalog")
                .option("startingOffsets", "earliest")
                .option("maxOffsetsPerTrigger", "7")
                .load(args["src"])
                .select("topic", "partition", "key", "value", "timestamp")
                .writeStream.format(fmt)
                .option("checkpointLocation", checkpoint)
                .option("writerId", "query-1")
                .trigger(availableNow=True)
                .start(target)
            )
            query.awaitTermination(300)
            runs.append(None if query.exception() is None else str(query.exception()))
            commits = sorted(Path(checkpoint, "commits").glob("[0-9]*"), key=lambda p: int(p.name))
            if commits:
                # Spark replays this micro-batch on the next start.
                commits[-1].unlink()
                commits[-1].with_name(f".{commits[-1].name}.crc").unlink(missing_ok=True)
        results[fmt] = {"errors": runs, "logs": _logs(target), "batches": len(commits)}
    return results


def main() -> None:
    from pyspark.sql import SparkSession

    from kafkalog.spark import jvm as jvm_source
    from kafkalog.spark.source import KafkaLogDataSource

    mode, out, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    config = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "America/New_York",
        "spark.task.maxFailures": "1",
        "spark.python.authenticate.socketTimeout": "120s",
    }
    if mode == "jvm_only":
        # No Python worker can start: whatever needs one fails.
        config["spark.pyspark.python"] = "/nonexistent/python"
    spark = jvm_source.session(SparkSession.builder.master("local[2]"), **config)
    spark.sparkContext.setLogLevel("ERROR")

    class PythonSource(KafkaLogDataSource):
        @classmethod
        def name(cls) -> str:
            return "kafkalog_python"

    result: dict = {}
    if mode == "compare":
        spark.dataSource.register(PythonSource)
        result = _compare(spark, out, args)
    elif mode == "stream":
        spark.dataSource.register(PythonSource)
        result = _stream(spark, out, args)
    elif mode == "typed":
        spark.dataSource.register(PythonSource)
        typed = {"keyFormat": "string", "valueFormat": "avro", "schemaRegistry": args["root"]}
        df = spark.read.format("kafkalog").options(**typed).load(args["part"])
        for fmt in ("kafkalog", "kafkalog_python"):
            target = f"{out}/{fmt}"
            writer = df.select("key", "value").write.format(fmt).mode("append")
            writer = writer.options(**typed, topic="orders", partition="0")
            result[fmt + "_error"] = _error(lambda w=writer, t=target: w.save(t))
            result[fmt] = _logs(target) if Path(target).exists() else {}
    elif mode == "jvm_only":
        df = spark.read.format("kafkalog").load(args["src"]).select(*KV[:-1])
        df.write.format("kafkalog").mode("append").save(f"{out}/batch")
        plans = _plans(spark)
        query = (
            spark.readStream.format("kafkalog")
            .option("startingOffsets", "earliest")
            .load(args["src"])
            .select("topic", "partition", "value")
            .writeStream.format("kafkalog")
            .option("checkpointLocation", f"{out}/checkpoint")
            .trigger(availableNow=True)
            .start(f"{out}/stream")
        )
        query.awaitTermination(300)
        result = {
            "stream_error": None if query.exception() is None else str(query.exception()),
            "batch": _logs(f"{out}/batch"),
            "stream": _logs(f"{out}/stream"),
            "plans": sorted(set(plans + _plans(spark))),
            "python_worker": _error(lambda: spark.range(3).rdd.map(lambda x: x).count()),
        }
    print(json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    main()


# --------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------


def _job(mode: str, out: Path, args: dict) -> dict:
    # In "jvm_only", no Python worker can start (the Python workers' interpreter is missing).
    worker = "/nonexistent/python" if mode == "jvm_only" else sys.executable
    env = {**os.environ, "PYSPARK_PYTHON": worker, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, __file__, mode, str(out), json.dumps(args)],
        capture_output=True,
        text=True,
        env=jvm_crash.env(out, env),
        timeout=900,
    )
    jvm_crash.check(out)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def jar() -> str:
    import kafkalog.spark

    return kafkalog.spark.jar()


CASES = [
    {"name": "append", "steps": [{}]},
    {
        "name": "append_twice_from_several_tasks",
        "steps": [{"partitions": 3}, {"where": "offset < 3", "partitions": 2}],
    },
    {
        "name": "overwrite",
        "steps": [{}, {"mode": "overwrite", "where": "topic = 'orders' and offset < 2"}],
    },
    {
        "name": "options",
        "steps": [
            {
                "options": {
                    "compression": "zstd",
                    "segmentBytes": "200",
                    "batchRecords": "2",
                    "fsync": "false",
                }
            }
        ],
    },
    {
        "name": "topic_option_and_strings",
        "steps": [
            {
                "select": ["CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value"],
                "options": {"topic": "copied", "partition": "4"},
            }
        ],
    },
    {
        "name": "grouped_rows",
        "steps": [{"partitions": 1, "options": {"rowsGrouped": "true"}}],
    },
    {"name": "unknown_option", "steps": [{"options": {"bogus": "1"}}]},
    {"name": "bad_topic", "steps": [{"select": ["'../evil' AS topic", "0 AS partition", "value"]}]},
    {
        "name": "typed_without_format",
        "steps": [{"select": ["topic", "partition", "named_struct('a', 1) AS value"]}],
    },
    {"name": "no_topic", "steps": [{"select": ["value"]}]},
]


@pytest.fixture(scope="module")
def compared(jar, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("jvm-write")
    got = _job("compare", out, {"src": str(LOGS), "cases": CASES})
    got["_out"] = str(out)
    return got


def _records(part: Path) -> list[tuple]:
    """A partition's data records as kafka-python's record reader decodes its segments, not
    kafkalog's reader: (offset, key, value, timestamp, headers), in the log's order; control
    batches left out, as a read leaves them out."""
    from kafka.record import MemoryRecords

    out = []
    for log in sorted(part.glob("*.log")):
        records = MemoryRecords(log.read_bytes())
        while records.has_next():
            batch = records.next_batch()
            if getattr(batch, "is_control_batch", False):
                continue
            # A v0 message has no timestamp; written again (v2), it is -1.
            out.extend(
                (r.offset, r.key, r.value, -1 if r.timestamp is None else r.timestamp,
                 tuple(r.headers))
                for r in batch
            )  # fmt: skip
    return out


def _written(target: Path) -> dict[str, list[tuple]]:
    return {
        p.name: _records(p)
        for p in sorted(target.iterdir())
        if p.is_dir() and not p.name.startswith(".")
    }


@pytest.mark.parametrize(
    "name",
    [
        "append",
        "append_twice_from_several_tasks",
        "overwrite",
        "options",
        "topic_option_and_strings",
        "grouped_rows",
    ],
)
def test_both_sources_write_the_same_logs(compared, name):
    got = compared[name]
    assert got["kafkalog_error"] is None, got["kafkalog_error"]
    assert got["kafkalog_python_error"] is None, got["kafkalog_python_error"]
    assert got["kafkalog"] and got["kafkalog"] == got["kafkalog_python"]
    # Nothing of the jobs is left behind (their staging directories).
    assert got["kafkalog_left"] == got["kafkalog_python_left"] == []


@pytest.mark.parametrize(
    "name", ["append", "append_twice_from_several_tasks", "overwrite", "options", "grouped_rows"]
)
def test_what_was_written_is_the_source_records(compared, name):
    """Each source's output and the source log, both decoded by kafka-python: the records
    each step selected (keys, values, timestamps, headers), at offsets from 0 on."""
    pytest.importorskip("kafka")
    source = {p.name: _records(p) for p in sorted(LOGS.iterdir()) if p.is_dir()}
    for fmt in ("kafkalog", "kafkalog_python"):
        written = _written(Path(compared["_out"]) / name / fmt)
        assert written, (name, fmt)
        for part, records in written.items():
            whole = [r[1:] for r in source[part]]
            if name == "append_twice_from_several_tasks":
                want = whole + [r[1:] for r in source[part] if r[0] < 3]
            elif name == "overwrite" and part.startswith("orders-"):
                want = [r[1:] for r in source[part] if r[0] < 2]
            else:
                want = whole
            assert [r[0] for r in records] == list(range(len(records))), (name, fmt, part)
            # Tasks may append in either order: the records, not their order, are compared.
            got = sorted(repr(r[1:]) for r in records)
            assert got == sorted(map(repr, want)), (name, fmt, part)


def test_what_the_writes_did(compared):
    src = compared["append"]["kafkalog"]
    assert {"orders-0", "orders-1", "clicks-0"} <= set(src)
    # Appended again: the log continues from its end.
    twice = compared["append_twice_from_several_tasks"]["kafkalog"]["orders-0"]["rows"]
    assert len(twice) == len(src["orders-0"]["rows"]) + 3
    assert [json.loads(r)["offset"] for r in twice] == list(range(len(twice)))
    # Overwritten: the partitions written replaced, the others left alone.
    over = compared["overwrite"]["kafkalog"]
    assert len(over["orders-0"]["rows"]) == 2 and over["clicks-0"] == src["clicks-0"]
    assert compared["options"]["kafkalog"]["orders-0"]["segments"] > 1
    assert set(compared["topic_option_and_strings"]["kafkalog"]) == {"copied-4"}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("unknown_option", "unknown write option 'bogus' for kafkalog"),
        ("bad_topic", "../evil"),
        ("typed_without_format", "write typed values with valueFormat"),
        ("no_topic", "no 'topic' column and no topic option"),
    ],
)
def test_bad_writes_fail_with_the_cores_message_and_leave_nothing(compared, name, text):
    got = compared[name]
    for fmt in ("kafkalog", "kafkalog_python"):
        assert got[fmt + "_error"] is not None and text in got[fmt + "_error"], got
        assert got[fmt] == {} and got[fmt + "_left"] == [], got
    # The JVM source's error is its own exception, not a Python data source's.
    assert "kafkalog.spark.KafkaLogException" in got["kafkalog_error"]
    assert "PYTHON_DATA_SOURCE" not in got["kafkalog_error"]


def test_typed_values_are_encoded_with_the_registered_schema(jar, tmp_path):
    """A typed read written back with valueFormat=avro: the same bytes from both sources,
    which the core reads back as the values read."""
    pytest.importorskip("confluent_kafka")
    from test_values import TOPIC, Backup

    import kafkalog

    backup = Backup(tmp_path / "backup", n=20)
    part = backup.root / f"{TOPIC}-0"
    got = _job("typed", tmp_path, {"root": str(backup.root), "part": str(part)})
    assert got["kafkalog_error"] is None, got["kafkalog_error"]
    assert got["kafkalog_python_error"] is None, got["kafkalog_python_error"]
    assert got["kafkalog"] and got["kafkalog"] == got["kafkalog_python"]

    # What was written, decoded by kafka-python (the records) and fastavro (the values, by
    # the schema their framing names): the source's keys in order, and its values; a value
    # the second writer version wrote reads the same, field by field.
    pytest.importorskip("kafka")
    import fastavro

    def decoded(value: bytes | None) -> tuple[int, dict] | None:
        if value is None:
            return None
        schema_id = int.from_bytes(value[1:5], "big")
        writer = json.loads(backup.client.get_schema(schema_id).schema_str)
        body = io.BytesIO(value[5:])
        return schema_id, fastavro.schemaless_reader(body, fastavro.parse_schema(writer))

    source = [(r[1], decoded(r[2])) for r in _records(part)]
    latest = max(d[0] for _, d in source if d is not None)
    for fmt in ("kafkalog", "kafkalog_python"):
        written = _records(tmp_path / fmt / f"{TOPIC}-0")
        assert [r[0] for r in written] == list(range(len(source))), fmt
        assert [r[1] for r in written] == [k for k, _ in source], fmt
        for (_, want), r in zip(source, written, strict=True):
            got = decoded(r[2])
            assert (got is None) == (want is None), fmt
            if got is not None and want is not None:
                assert got[0] == latest, fmt  # encoded with the registered schema
                if want[0] == latest:
                    assert got[1] == want[1], fmt

    def typed(path: Path) -> list:
        t = kafkalog.read(
            path, key_format="string", value_format="avro", schemas=backup.root
        ).read_all()
        return t.select(["key", "value"]).to_pylist()

    assert typed(tmp_path / "kafkalog" / f"{TOPIC}-0") == typed(part)


def test_streaming_sinks_append_each_micro_batch_once(jar, tmp_path):
    got = _job("stream", tmp_path, {"src": str(LOGS)})
    jvm, py = got["kafkalog"], got["kafkalog_python"]
    assert jvm["errors"] == [None, None] and py["errors"] == [None, None], got
    assert jvm["batches"] > 2
    assert jvm["logs"] and jvm["logs"] == py["logs"]
    # Every record once, though Spark ran the last micro-batch twice.
    import kafkalog

    expected = {p.name: kafkalog.read(p).read_all().num_rows for p in LOGS.iterdir() if p.is_dir()}
    assert {k: len(v["rows"]) for k, v in jvm["logs"].items()} == expected


def test_with_the_jar_no_python_worker_takes_part(jar, tmp_path):
    got = _job("jvm_only", tmp_path, {"src": str(LOGS)})
    assert got["python_worker"] is not None  # this session cannot start one
    assert got["stream_error"] is None, got["stream_error"]
    assert got["batch"] and set(got["batch"]) == set(got["stream"])
    writes = [p for p in got["plans"] if "AppendData" in p or "WriteToDataSourceV2" in p]
    assert len(writes) >= 2 and all("KafkaLogWrite[" in p for p in writes), got["plans"]
    assert any(f"KafkaLogWrite[{tmp_path}/batch]" in p for p in writes), writes
    assert any(f"KafkaLogWrite[{tmp_path}/stream, streaming]" in p for p in writes), writes
    assert not any("Python" in p for p in writes), writes
