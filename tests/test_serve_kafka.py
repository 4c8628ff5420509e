"""``kafkalog serve`` judged by the real thing: Kafka's own Java client reads backups through
the endpoint as ``kafkalog.read`` reads the files, and a real Kafka 4.x broker and the
endpoint, serving the same files, answer that client alike (records, isolation levels,
ListOffsets, leader epochs, group offsets). The broker and its jars come from
tests/kafka_broker.py."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import kafkalog

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "logs"


def _java_rows(rows: list[dict[str, Any]], epochs: bool = False) -> list[tuple]:
    out = []
    for r in rows:
        row = (
            r["topic"],
            r["partition"],
            r["offset"],
            None if r["timestamp"] < 0 else r["timestamp"],
            r["timestampType"],
            None if r["key"] is None else base64.b64decode(r["key"]),
            None if r["value"] is None else base64.b64decode(r["value"]),
            [(k, None if v is None else base64.b64decode(v)) for k, v in r["headers"]],
        )
        out.append(row + ((r.get("leaderEpoch"),) if epochs else ()))
    return sorted(out, key=lambda x: (x[0], x[1], x[2]))


def _read_rows(table: pa.Table) -> list[tuple]:
    out = []
    for r in table.to_pylist():
        ts = r["timestamp"]
        out.append(
            (
                r["topic"],
                r["partition"],
                r["offset"],
                None if ts is None else int(ts.timestamp() * 1000),
                r["timestampType"],
                r["key"],
                r["value"],
                [(h["key"], h["value"]) for h in (r["headers"] or [])],
            )
        )
    return sorted(out, key=lambda x: (x[0], x[1], x[2]))


def _topics(path: Path) -> list[str]:
    return sorted(
        {p.name.rsplit("-", 1)[0] for p in path.iterdir() if p.is_dir() and "-" in p.name}
        - {"__consumer_offsets", "__transaction_state", "__cluster_metadata"}
    )


def _consume(bootstrap: str, topic: str, *args: str) -> list[dict[str, Any]]:
    from kafka_broker import kafka_tool

    return kafka_tool(bootstrap, "consume", "--topic", topic, "--timeout-ms", "60000", *args)


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_java_client_reads_the_examples(kafka_jars: Path, isolation: str) -> None:
    expected = _read_rows(kafkalog.read(str(EXAMPLES), isolation_level=isolation).read_all())
    with kafkalog.serve(EXAMPLES) as server:
        got = []
        for topic in _topics(EXAMPLES):
            got += _java_rows(_consume(server.bootstrap_servers, topic, "--isolation", isolation))
    assert got == [r for r in expected if not r[0].startswith("__")]
    assert len(got) > 50


SCENARIO = {
    "topics": [
        {
            "name": "orders",
            "partitions": 2,
            "configs": {"internal.segment.bytes": "16384", "retention.ms": "-1"},
        },
        {
            "name": "payments",
            "partitions": 1,
            "configs": {"internal.segment.bytes": "16384", "retention.ms": "-1"},
        },
    ],
    "producers": [
        {
            "compression": "lz4",
            "idempotent": True,
            "actions": [
                {
                    "action": "send",
                    "repeat": {
                        "count": 300,
                        "topic": "orders",
                        "partition": 0,
                        "key": "k{i}",
                        "value": "order {i}",
                        "pad": 120,
                    },
                },
                {
                    "action": "send",
                    "records": [
                        {
                            "topic": "orders",
                            "partition": 1,
                            "key": "h",
                            "value": "with headers",
                            "timestamp": 1700000000000,
                            "headers": [["a", "text"], ["b", "AAE=", True], ["n", None]],
                        }
                    ],
                },
                {"action": "flush"},
            ],
        },
        {
            "compression": "zstd",
            "transactional_id": "tx-serve",
            "actions": [
                {"action": "begin"},
                {
                    "action": "send",
                    "repeat": {
                        "count": 50,
                        "topic": "payments",
                        "partition": 0,
                        "key": "p{i}",
                        "value": "committed {i}",
                    },
                },
                {"action": "commit"},
                {"action": "begin"},
                {
                    "action": "send",
                    "repeat": {
                        "count": 20,
                        "topic": "payments",
                        "partition": 0,
                        "key": "a{i}",
                        "value": "aborted {i}",
                    },
                },
                {"action": "abort"},
                {"action": "begin"},
                {
                    "action": "send",
                    "repeat": {
                        "count": 30,
                        "topic": "orders",
                        "partition": 1,
                        "key": "t{i}",
                        "value": "committed later {i}",
                    },
                },
                {"action": "commit"},
            ],
        },
    ],
    "quiet": True,
}


@pytest.fixture(scope="module")
def broker_backup(kafka_jars: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A log directory written by a real broker (idempotent and transactional producers, an
    aborted transaction, headers, several segments, a group's commits), the broker stopped;
    and the broker to start again over the same files."""
    from kafka_broker import KafkaBroker

    broker = KafkaBroker(tmp_path_factory.mktemp("serve-broker"))
    broker.start()
    try:
        broker.produce(SCENARIO)
        _consume(
            broker.bootstrap,
            "orders",
            "--group",
            "g-orders",
            "--commit",
            "--commit-offsets",
            "0=120,1=5",
        )
    finally:
        assert broker.stop() in (0, 143)
    return broker


def _answers(bootstrap: str, epochs: bool) -> dict[str, Any]:
    from kafka_broker import kafka_tool

    out: dict[str, Any] = {}
    for topic in ("orders", "payments"):
        for isolation in ("read_uncommitted", "read_committed"):
            out[f"{topic} {isolation}"] = _java_rows(
                _consume(bootstrap, topic, "--isolation", isolation), epochs
            )
        for spec in ("earliest", "latest", "max-timestamp", "1700000000000"):
            rows = kafka_tool(bootstrap, "list-offsets", "--topic", topic, "--spec", spec)
            out[f"{topic} list-offsets {spec}"] = sorted(
                json.dumps(r, sort_keys=True) for r in rows
            )
        # DescribeConfigs: the overrides set on the topic (from the KRaft metadata log).
        configs = kafka_tool(bootstrap, "topic-configs", "--topic", topic)
        out[f"{topic} configs"] = sorted(json.dumps(r, sort_keys=True) for r in configs)
    out["group g-orders"] = sorted(
        json.dumps(r, sort_keys=True) for r in kafka_tool(bootstrap, "group-offsets", "g-orders")
    )
    return out


def test_side_by_side_with_the_broker(broker_backup: Any, tmp_path: Path) -> None:
    # The broker first: starting, it becomes the partitions' leader in a new epoch and records
    # it in their leader-epoch-checkpoint, which the endpoint then serves from the same files.
    files = broker_backup.log_dir
    broker_backup.start()
    try:
        theirs = _answers(broker_backup.bootstrap, epochs=True)
    finally:
        broker_backup.stop()
    before = {p: p.read_bytes() for p in files.rglob("*") if p.is_file()}
    with kafkalog.serve(files) as server:
        ours = _answers(server.bootstrap_servers, epochs=True)
    after = {p: p.read_bytes() for p in files.rglob("*") if p.is_file()}
    assert after == before, "the endpoint wrote under the served path"
    for key in theirs:
        assert ours[key] == theirs[key], key
    assert len(theirs["payments read_uncommitted"]) > len(theirs["payments read_committed"])
    assert any('"retention.ms"' in c for c in theirs["orders configs"]), theirs["orders configs"]
    # And what the broker serves is what kafkalog.read reads from its files.
    expected = _read_rows(kafkalog.read(str(files), topics="orders|payments").read_all())
    served = sorted(
        theirs["orders read_uncommitted"] + theirs["payments read_uncommitted"],
        key=lambda x: (x[0], x[1], x[2]),
    )
    assert [r[:8] for r in served] == expected


def test_group_resumes_across_a_server_restart(broker_backup: Any, tmp_path: Path) -> None:
    from kafka_broker import kafka_tool

    files = broker_backup.log_dir
    state = tmp_path / "state"
    with kafkalog.serve(files, state=state) as server:
        # The backup's commits are served.
        backup = kafka_tool(server.bootstrap_servers, "group-offsets", "g-orders")
        assert {(r["partition"], r["offset"]) for r in backup} == {(0, 120), (1, 5)}
        # A new group reads part of the topic and commits.
        _consume(
            server.bootstrap_servers,
            "orders",
            "--group",
            "g-new",
            "--commit",
            "--commit-offsets",
            "0=42,1=7",
        )
    with kafkalog.serve(files, state=state) as server:
        resumed = _consume(
            server.bootstrap_servers, "orders", "--group", "g-new", "--from", "committed"
        )
        firsts = {}
        for r in resumed:
            firsts.setdefault(r["partition"], r["offset"])
        assert firsts == {0: 42, 1: 7}
        old = kafka_tool(server.bootstrap_servers, "group-offsets", "g-orders")
        assert {(r["partition"], r["offset"]) for r in old} == {(0, 120), (1, 5)}


def test_real_backup_groups_through_offset_fetch(kafka_jars: Path) -> None:
    from kafka_broker import kafka_tool

    corpus = ROOT / "tests" / "corpus" / "segments" / "iechenyb__data" / "kafka-logs"
    table = kafkalog.consumer_offsets(str(corpus)).to_pylist()
    group = table[0]["group"]
    expected = {(r["topic"], r["partition"], r["offset"]) for r in table if r["group"] == group}
    with kafkalog.serve(corpus) as server:
        got = kafka_tool(server.bootstrap_servers, "group-offsets", group)
    assert {(r["topic"], r["partition"], r["offset"]) for r in got} == expected


def test_copied_backup_served_without_checkpoints(broker_backup: Any, tmp_path: Path) -> None:
    """Partition directories copied without the log directory's checkpoints or
    leader-epoch files are still served whole."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for part in broker_backup.log_dir.glob("orders-*"):
        shutil.copytree(part, copy / part.name)
        (copy / part.name / "leader-epoch-checkpoint").unlink(missing_ok=True)
    expected = _read_rows(kafkalog.read(str(copy)).read_all())
    with kafkalog.serve(copy) as server:
        got = _java_rows(_consume(server.bootstrap_servers, "orders"))
    assert got == expected


def _spark_kafka_jars() -> list[Path]:
    """Spark's Kafka source with its runtime dependencies, less what PySpark ships, fetched
    with Maven on first use (cached outside the repository): at PySpark's version, or, where
    Maven Central has no such release of it yet, the newest earlier minor release of the same
    major version (the source's DataSource V2 API is stable within a major version)."""
    import fcntl
    import subprocess

    import pyspark

    version = pyspark.__version__
    major, minor = (int(x) for x in version.split(".")[:2])
    candidates = [version] + [f"{major}.{m}.0" for m in range(minor - 1, -1, -1)]
    home = Path.home() / ".cache" / "kafkalog-tests" / f"spark-sql-kafka-for-{version}"
    libs = home / "libs"
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "COMPLETE").is_file():
            if shutil.which("mvn") is None:
                raise RuntimeError("fetching Spark's Kafka source needs Maven (mvn) on PATH")
            failures = []
            for candidate in candidates:
                (home / "pom.xml").write_text(
                    '<project xmlns="http://maven.apache.org/POM/4.0.0">'
                    "<modelVersion>4.0.0</modelVersion><groupId>kafkalog.tests</groupId>"
                    "<artifactId>spark-kafka</artifactId><version>1</version><dependencies>"
                    "<dependency><groupId>org.apache.spark</groupId>"
                    "<artifactId>spark-sql-kafka-0-10_2.13</artifactId>"
                    f"<version>{candidate}</version></dependency></dependencies></project>"
                )
                partial = home / "libs.partial"
                shutil.rmtree(partial, ignore_errors=True)
                done = subprocess.run(
                    [
                        "mvn",
                        "-q",
                        "-B",
                        "-f",
                        str(home / "pom.xml"),
                        "dependency:copy-dependencies",
                        "-DincludeScope=runtime",
                        f"-DoutputDirectory={partial}",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=900,
                )
                if done.returncode == 0:
                    shutil.rmtree(libs, ignore_errors=True)
                    partial.rename(libs)
                    (home / "COMPLETE").write_text(candidate)
                    break
                failures.append(f"{candidate}: {(done.stdout + done.stderr)[-600:]}")
            else:
                raise RuntimeError("mvn found no Spark Kafka source:\n" + "\n".join(failures))
    shipped = {
        p.name.rsplit("-", 1)[0] for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar")
    }
    return sorted(p for p in libs.glob("*.jar") if p.name.rsplit("-", 1)[0] not in shipped)


def test_spark_kafka_source_over_serve(broker_backup: Any, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    jars = _spark_kafka_jars()
    assert any("spark-sql-kafka" in j.name for j in jars)
    files = broker_backup.log_dir
    with kafkalog.serve(files) as server:
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "tests" / "spark_kafka_serve_job.py"),
                server.bootstrap_servers,
                str(files),
                "orders|payments",
                ",".join(str(j) for j in jars),
                str(tmp_path / "checkpoint"),
            ],
            capture_output=True,
            text=True,
            timeout=900,
            env={
                **os.environ,
                "PYSPARK_PYTHON": sys.executable,
                "JAVA_TOOL_OPTIONS": f"-XX:ErrorFile={tmp_path}/hs_err_%p.log",
            },
        )
    assert done.returncode == 0, done.stderr[-6000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["batch_equal"], result["first_difference"]
    assert result["rows"] == 300 + 1 + 50 + 20 + 30
    assert result["committed_equal"]
    assert result["committed_rows"] == 300 + 1 + 50 + 30
    assert result["stream_equal"]
