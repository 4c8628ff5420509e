"""``kafkalog restore`` judged by Kafka's own broker (tests/kafka_broker.py, Kafka 4.4).

A broker writes a log (idempotent and transactional producers, an aborted transaction and one
left open, headers, several segments, a compacted topic its cleaner has cleaned, a consumer
group's commits); its files are copied as a backup; a fresh broker gets the same topics and
is stopped; ``kafkalog restore`` lays the backup into its log directory; the broker starts
without an error and Kafka's Java consumer reads every record at its original offset,
``read_committed`` leaves out what was aborted (and the transaction the backup left open,
aborted by the restore), the group resumes at its committed offsets, and the same
``transactional.id`` produces again."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import KafkaBroker, kafka_tool, unb64

import kafkalog
from kafkalog.errors import KafkaLogError

SMALL = {"linger.ms": "20", "batch.size": "2048"}
SEGMENTS = {"internal.segment.bytes": "3000"}
TOPICS = [
    {"name": "orders", "partitions": 2, "configs": SEGMENTS},
    {
        "name": "compacted",
        "partitions": 1,
        "configs": {
            **SEGMENTS,
            "cleanup.policy": "compact",
            "min.cleanable.dirty.ratio": "0.01",
            "min.compaction.lag.ms": "0",
            "delete.retention.ms": "86400000",
        },
    },
]
BROKER = {"log.cleaner.backoff.ms": "200"}


def record(p: int, i: int, tag: str) -> dict[str, Any]:
    return {
        "topic": "orders",
        "partition": p,
        "key": f"k{i}",
        # Values that compress little, so that the partitions fill several segments.
        "value": f"{tag}-{p}-{i}-" + hashlib.sha256(f"{tag}{i}".encode()).hexdigest()[: i % 64],
        "headers": [["trace", f"t{i}"], ["none", None]] if i % 4 == 0 else [],
    }


def scenario() -> dict[str, Any]:
    rec = record
    return {
        "topics": TOPICS,
        "quiet": True,
        "producers": [
            {
                "idempotent": True,
                "compression": "zstd",
                "config": SMALL,
                "actions": [
                    {"action": "send", "records": [rec(i % 2, i, "plain") for i in range(400)]}
                ],
            },
            {
                "transactional_id": "orders-tx",
                "compression": "gzip",
                "config": SMALL,
                "actions": [
                    {"action": "begin"},
                    {"action": "send", "records": [rec(i % 2, i, "kept") for i in range(30)]},
                    {"action": "commit"},
                    {"action": "begin"},
                    {"action": "send", "records": [rec(i % 2, i, "gone") for i in range(20)]},
                    {"action": "abort"},
                ],
            },
            {
                "compression": "snappy",
                "config": SMALL,
                "actions": [
                    {
                        "action": "send",
                        "repeat": {
                            "count": 300,
                            "topic": "compacted",
                            "partition": 0,
                            "key": "key{i}",
                            "value": "v{i}",
                            "pad": 40,
                        },
                    },
                    {
                        "action": "send",
                        "repeat": {
                            "count": 300,
                            "topic": "compacted",
                            "partition": 0,
                            "key": "key{i}",
                            "value": "w{i}",
                            "pad": 40,
                        },
                    },
                ],
            },
        ],
    }


def left_open() -> dict[str, Any]:
    """A transactional producer that dies with its transaction open (the backup has a
    transaction its coordinator never finished), then an idempotent one writing after it."""
    return {
        "quiet": True,
        "producers": [
            {
                "transactional_id": "open-tx",
                "config": {**SMALL, "transaction.timeout.ms": "600000"},
                "actions": [
                    {"action": "begin"},
                    {"action": "send", "records": [record(0, i, "open") for i in range(5)]},
                    {"action": "halt"},
                ],
            }
        ],
    }


def late() -> dict[str, Any]:
    return {
        "quiet": True,
        "producers": [
            {
                "idempotent": True,
                "config": SMALL,
                "actions": [
                    {"action": "send", "records": [record(i % 2, i, "late") for i in range(10)]}
                ],
            }
        ],
    }


def rows(records: list[dict[str, Any]]) -> list[tuple]:
    return sorted(
        (
            r["topic"],
            r["partition"],
            r["offset"],
            r["timestamp"],
            r["timestampType"],
            r["key"],
            r["value"],
            tuple(tuple(h) for h in r["headers"]),
        )
        for r in records
    )


def tag(record: dict[str, Any]) -> str:
    return (unb64(record["value"]) or b"").split(b"-")[0].decode()


def wait_for_cleaning(broker: KafkaBroker, topic_partition: str, timeout: float = 60) -> None:
    """Until the broker's cleaner has checkpointed a cleaning of the partition."""
    checkpoint = broker.log_dir / "cleaner-offset-checkpoint"
    deadline = time.monotonic() + timeout
    name, _, p = topic_partition.rpartition("-")
    while time.monotonic() < deadline:
        if checkpoint.is_file():
            for line in checkpoint.read_text().splitlines()[2:]:
                t, part, offset = line.split()
                if t == name and part == p and int(offset) > 0:
                    return
        time.sleep(0.5)
    raise AssertionError(f"the cleaner did not clean {topic_partition} within {timeout}s")


def tree(path: Path) -> dict[str, str]:
    return {
        str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(path.rglob("*"))
        if f.is_file() and f.name != ".lock"
    }


@pytest.fixture(scope="module")
def source(kafka_jars, tmp_path_factory):
    """The backed-up broker: its files copied after a clean stop, and what its consumers saw."""
    root = tmp_path_factory.mktemp("restore-source")
    broker = KafkaBroker(root / "broker", extra=BROKER)
    broker.start()
    try:
        broker.produce(scenario())
        broker.produce(left_open())
        broker.produce(late())
        wait_for_cleaning(broker, "compacted-0")
        seen = {
            "orders": broker.consume("orders"),
            "orders_committed": broker.consume("orders", "--isolation", "read_committed"),
            "compacted": broker.consume("compacted"),
        }
        kafka_tool(
            broker.bootstrap,
            "consume",
            "--topic",
            "orders",
            "--group",
            "billing",
            "--commit",
            "--commit-offsets",
            "0=17,1=23",
        )
        kafka_tool(
            broker.bootstrap, "consume", "--topic", "compacted", "--group", "audit", "--commit"
        )
        seen["billing"] = kafka_tool(broker.bootstrap, "group-offsets", "billing")
        seen["audit"] = kafka_tool(broker.bootstrap, "group-offsets", "audit")
        seen["latest"] = kafka_tool(
            broker.bootstrap, "list-offsets", "--topic", "orders", "--spec", "latest"
        )
    finally:
        broker.stop()
    backup = root / "backup"
    shutil.copytree(broker.log_dir, backup)
    return backup, seen


def fresh_target(factory, name: str) -> KafkaBroker:
    """A new cluster with the same topics (and its offsets topic created), stopped."""
    broker = factory(name, extra=BROKER)
    broker.start()
    broker.produce({"topics": TOPICS})
    # A group's first commit makes the cluster create __consumer_offsets.
    kafka_tool(broker.bootstrap, "consume", "--topic", "orders", "--group", "warmup", "--commit")
    broker.stop()
    return broker


def test_round_trip_through_kafkas_own_broker(source, kafka_broker_factory):
    backup, seen = source
    target = fresh_target(kafka_broker_factory, "target")
    report = kafkalog.restore(backup, target.log_dir, groups=True)
    restored = {(p["topic"], p["partition"]): p for p in report["partitions"]}
    assert set(restored) == {("orders", 0), ("orders", 1), ("compacted", 0)}
    # The transaction the backup left open is aborted, at the log end of its partition.
    assert [len(p["aborted"]) for p in report["partitions"] if p["topic"] == "orders"] == [1, 0]
    assert all(p["segments"] >= 2 for p in report["partitions"]), report["partitions"]

    target.start()
    try:
        orders = target.consume("orders")
        committed = target.consume("orders", "--isolation", "read_committed")
        compacted = target.consume("compacted")
        billing = kafka_tool(target.bootstrap, "group-offsets", "billing")
        audit = kafka_tool(target.bootstrap, "group-offsets", "audit")
        resumed = kafka_tool(
            target.bootstrap,
            "consume",
            "--topic",
            "orders",
            "--group",
            "billing",
            "--from",
            "committed",
        )
        latest = kafka_tool(
            target.bootstrap, "list-offsets", "--topic", "orders", "--spec", "latest"
        )
        # The same transactional.id again: a first producer's open transaction is fenced by a
        # second one's initTransactions, which then commits.
        kafka_tool(
            target.bootstrap,
            "produce",
            spec={
                "quiet": True,
                "producers": [
                    {
                        "transactional_id": "orders-tx",
                        "actions": [
                            {"action": "begin"},
                            {
                                "action": "send",
                                "records": [{"topic": "orders", "partition": 1, "value": "zombie"}],
                            },
                            {"action": "flush"},
                        ],
                    },
                    {
                        "transactional_id": "orders-tx",
                        "actions": [
                            {"action": "begin"},
                            {
                                "action": "send",
                                "records": [{"topic": "orders", "partition": 1, "value": "again"}],
                            },
                            {"action": "commit"},
                        ],
                    },
                ],
            },
        )
        after = target.consume("orders", "--partitions", "1", "--isolation", "read_committed")
    finally:
        target.stop()
    assert not target.errors(), target.errors()

    # Every record at its original offset, timestamps, keys, values and headers as they were.
    assert rows(orders) == rows(seen["orders"])
    assert rows(compacted) == rows(seen["compacted"])
    offsets = sorted(r["offset"] for r in compacted)
    # The broker's cleaner removed earlier values of keys; the others keep their offsets.
    assert len(offsets) < 600 and offsets[-1] == 599, offsets
    # read_committed: the aborted transaction and the one the backup left open are gone;
    # everything committed is there (on the source, the open transaction held them back).
    expected = [r for r in seen["orders"] if tag(r) not in ("gone", "open")]
    assert rows(committed) == rows(expected)
    assert len(seen["orders_committed"]) < len(expected)
    # One abort marker past the backup's end of the partition with the open transaction.
    ends = {r["partition"]: r["offset"] for r in seen["latest"]}
    assert {r["partition"]: r["offset"] for r in latest} == {0: ends[0] + 1, 1: ends[1]}
    # The groups resume where they stood.
    assert [(r["topic"], r["partition"], r["offset"]) for r in billing] == [
        ("orders", 0, 17),
        ("orders", 1, 23),
    ]
    assert [(r["partition"], r["offset"], r["metadata"]) for r in audit] == [
        (r["partition"], r["offset"], r["metadata"]) for r in seen["audit"]
    ]
    first = {}
    for r in resumed:
        first.setdefault(r["partition"], r["offset"])
    assert first == {0: 17, 1: 23}
    # The same transactional.id produced again: its commit is there, the fenced one is not.
    values = [unb64(r["value"]) for r in after]
    assert values[-1] == b"again" and b"zombie" not in values
    assert after[-1]["offset"] >= ends[1]


def test_restore_again_changes_nothing_and_plan_writes_nothing(source, kafka_broker_factory):
    backup, _ = source
    target = fresh_target(kafka_broker_factory, "twice")
    before = tree(target.log_dir)
    plan = kafkalog.restore(backup, target.log_dir, groups=True, plan=True)
    assert tree(target.log_dir) == before
    assert plan["plan"] and len(plan["partitions"]) == 3
    first = kafkalog.restore(backup, target.log_dir, groups=True)
    once = tree(target.log_dir)
    second = kafkalog.restore(backup, target.log_dir, groups=True)
    assert tree(target.log_dir) == once
    assert [p["log_end_offset"] for p in first["partitions"]] == [
        p["log_end_offset"] for p in second["partitions"]
    ]
    assert plan["partitions"] == first["partitions"]


def test_refused_while_the_broker_runs_and_where_no_broker_was(
    source, kafka_broker_factory, tmp_path
):
    backup, _ = source
    target = fresh_target(kafka_broker_factory, "running")
    target.start()
    try:
        with pytest.raises(KafkaLogError, match="locked by a running broker"):
            kafkalog.restore(backup, target.log_dir)
    finally:
        target.stop()
    empty = tmp_path / "not-a-broker"
    empty.mkdir()
    with pytest.raises(KafkaLogError, match="meta.properties"):
        kafkalog.restore(backup, empty)
    assert list(empty.iterdir()) == []


def test_a_partition_the_target_lacks_is_named(source, kafka_broker_factory):
    backup, _ = source
    target = kafka_broker_factory("fewer", extra=BROKER)
    target.start()
    target.produce({"topics": [{"name": "orders", "partitions": 1}]})
    target.stop()
    before = tree(target.log_dir)
    with pytest.raises(KafkaLogError, match=r"orders-1.*create the topics first"):
        kafkalog.restore(backup, target.log_dir, topics="orders")
    assert tree(target.log_dir) == before
    plan = kafkalog.restore(backup, target.log_dir, topics="orders", plan=True)
    assert plan["missing"] == [("orders", 1)]


def test_the_command_line(source, kafka_broker_factory):
    backup, _ = source
    target = fresh_target(kafka_broker_factory, "cli")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkalog",
            "restore",
            str(backup),
            "--to",
            str(target.log_dir),
            "--topics",
            "orders",
            "--plan",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "would restore orders-0" in done.stdout and "would restore orders-1" in done.stdout
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkalog",
            "restore",
            str(backup),
            "--to",
            str(target.log_dir),
            "--topics",
            "orders",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "restored orders-0" in done.stdout and "aborted at offset" in done.stdout


def test_what_kafkalog_writes_is_restored_and_served(kafka_broker_factory, tmp_path):
    """kafkalog.write's partitions (every codec, headers, a leader epoch above the target's,
    several segments) restored into a broker: it serves exactly those records, at their
    offsets, with epochs capped at its own."""
    import pyarrow as pa

    backup = tmp_path / "written"
    offset = 0
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
        n = 60
        table = pa.table(
            {
                "key": [f"{codec}-{i}".encode() for i in range(n)],
                "value": [
                    None if i % 9 == 0 else hashlib.sha256(bytes([i])).digest() for i in range(n)
                ],
                "offset": pa.array(range(offset, offset + n), pa.int64()),
                "timestamp": pa.array(
                    [1_700_000_000_000 + offset + i for i in range(n)], pa.int64()
                ),
                "headers": [
                    [{"key": "h", "value": f"{i}".encode()}] if i % 2 else [] for i in range(n)
                ],
            }
        )
        kafkalog.write(
            backup / f"written-0.{codec}",
            table,
            compression=codec,
            partition_leader_epoch=7,
            base_offset=offset,
        )
        offset += n
    # One partition directory holding the five writes' segments, in offset order.
    (backup / "written-0").mkdir()
    for part in sorted(backup.glob("written-0.*")):
        for f in part.glob("*.log"):
            shutil.copy(f, backup / "written-0" / f.name)
    for part in backup.glob("written-0.*"):
        shutil.rmtree(part)
    expected = kafkalog.read(backup / "written-0").read_all().to_pylist()
    assert len(expected) == 300

    target = kafka_broker_factory("written-target")
    target.start()
    target.produce({"topics": [{"name": "written", "partitions": 1}]})
    target.stop()
    report = kafkalog.restore(backup, target.log_dir)
    (p,) = report["partitions"]
    assert p["segments"] == 5 and p["epochs_lowered"] == p["batches"] > 0
    # The target's leader epoch (from its KRaft metadata) is below the written 7.
    assert 0 <= p["leader_epoch"] < 7 and p["log_end_offset"] == 300
    target.start()
    try:
        served = target.consume("written")
    finally:
        target.stop()
    assert not target.errors(), target.errors()
    assert [r["offset"] for r in served] == list(range(300))
    assert {r["leaderEpoch"] for r in served} == {p["leader_epoch"]}
    for got, want in zip(served, expected, strict=True):
        assert unb64(got["key"]) == want["key"] and unb64(got["value"]) == want["value"]
        assert got["timestamp"] == to_ms(want["timestamp"])
        assert [(k, unb64(v)) for k, v in got["headers"]] == [
            (h["key"], h["value"]) for h in want["headers"] or []
        ]


def to_ms(ts: Any) -> int:
    import datetime

    if isinstance(ts, datetime.datetime):
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
        return (ts - epoch) // datetime.timedelta(milliseconds=1)
    return int(ts)


def test_until_cuts_at_whole_batches_and_aborts_the_transaction_it_cuts(
    source, kafka_broker_factory
):
    backup, _ = source
    batches = (
        kafkalog.read(backup / "orders-1", batch_metadata=True, include_control=True)
        .read_all()
        .to_pylist()
    )
    # A cut inside the committed transaction of partition 1: after one of its data batches,
    # before its commit marker.
    txn = [r for r in batches if r["isTransactional"] and not r["isControl"]]
    cut_batch = txn[0]
    until_ms = to_ms(cut_batch["maxTimestamp"])
    kept = []
    for r in batches:
        if to_ms(r["maxTimestamp"]) > until_ms:
            break
        kept.append(r)
    assert kept and len(kept) < len(batches)
    target = fresh_target(kafka_broker_factory, "until")
    report = kafkalog.restore(backup, target.log_dir, topics="orders", until=until_ms)
    p1 = next(p for p in report["partitions"] if p["partition"] == 1)
    assert p1["cut"] == "until"
    assert p1["log_end_offset"] == kept[-1]["lastOffset"] + 2  # the abort marker after the cut
    assert [a["producer_id"] for a in p1["aborted"]] == [cut_batch["producerId"]]
    target.start()
    try:
        everything = target.consume("orders", "--partitions", "1")
        committed = target.consume("orders", "--partitions", "1", "--isolation", "read_committed")
    finally:
        target.stop()
    assert not target.errors(), target.errors()
    data = [r for r in kept if not r["isControl"]]
    assert [r["offset"] for r in everything] == [r["offset"] for r in data]
    # The transaction the cut left open is aborted: read_committed leaves its records out.
    assert [r["offset"] for r in committed] == [
        r["offset"] for r in data if r["producerId"] != cut_batch["producerId"]
    ]
