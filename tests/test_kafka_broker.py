"""Fresh real bytes: a real Kafka 4.x broker (tests/kafka_broker.py) writes a log, Kafka's own
Java consumer fetches it, and ``kafkalog.read`` of the broker's files after a clean stop must
equal it record for record: offsets, timestamps and their type, keys, values, headers, leader
epochs; with the control records (commit and abort markers) where the consumer skipped them.
Every codec, idempotent and transactional producers (one transaction committed, one aborted),
several segments per partition."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from kafka_broker import KafkaBroker, b64, kafka_tool, unb64

import kafkalog

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
# Batches of at most 2 KiB and segments of 3000 bytes (Kafka 4's floor for segment.bytes is
# 1 MiB; its internal.segment.bytes, for tests, has none): several segments per partition.
SMALL_BATCHES = {"linger.ms": "30", "batch.size": "2048"}
TOPIC = "fresh"


def fresh_spec(topic: str = TOPIC) -> dict[str, Any]:
    """Every codec from an idempotent producer, a transaction committed and one aborted, a
    plain producer; headers (empty, null, binary values), null keys and values, timestamps
    given and not."""
    producers: list[dict[str, Any]] = []
    for n, codec in enumerate(CODECS):
        records = []
        for i in range(40):
            records.append(
                {
                    "topic": topic,
                    "partition": i % 2,
                    "key": None if i % 7 == 0 else f"{codec}-key-{i}",
                    "value": None if i % 11 == 3 else f"{codec}-value-{i}-" + "v" * (i * 13),
                    "timestamp": 1_700_000_000_000 + n * 1000 + i if i % 5 else None,
                    "headers": (
                        [
                            ["h1", f"{codec}{i}"],
                            ["null", None],
                            ["bin", b64(bytes([0, i, 255])), True],
                        ]
                        if i % 3 == 0
                        else []
                    ),
                }
            )
        producers.append(
            {
                "compression": codec,
                "idempotent": True,
                "config": SMALL_BATCHES,
                "actions": [
                    {"action": "send", "records": records[:20]},
                    {"action": "send", "records": records[20:]},
                ],
            }
        )
    producers.append(
        {
            "transactional_id": "fresh-tx",
            "compression": "lz4",
            "config": SMALL_BATCHES,
            "actions": [
                {"action": "begin"},
                {
                    "action": "send",
                    "repeat": {"count": 30, "topic": topic, "key": "tx{i}", "value": "kept{i}"},
                },
                {"action": "commit"},
                {"action": "begin"},
                {
                    "action": "send",
                    "repeat": {"count": 20, "topic": topic, "key": "tx{i}", "value": "gone{i}"},
                },
                {"action": "abort"},
            ],
        }
    )
    producers.append(
        {
            "compression": "gzip",
            "config": SMALL_BATCHES,
            "actions": [
                {
                    "action": "send",
                    "repeat": {
                        "count": 50,
                        "topic": topic,
                        "key": "after{i}",
                        "value": "p{i}",
                        "pad": 300,
                    },
                }
            ],
        }
    )
    return {
        "topics": [{"name": topic, "partitions": 2, "configs": {"internal.segment.bytes": "3000"}}],
        "producers": producers,
        "quiet": True,
    }


def java_rows(rows: list[dict[str, Any]]) -> list[tuple]:
    return sorted(
        (
            r["partition"],
            r["offset"],
            r["timestamp"],
            r["timestampType"],
            unb64(r["key"]),
            unb64(r["value"]),
            tuple((k, unb64(v)) for k, v in r["headers"]),
            r["leaderEpoch"],
        )
        for r in rows
    )


def to_millis(ts: Any) -> int:
    if isinstance(ts, datetime.datetime):
        return (ts - EPOCH) // datetime.timedelta(milliseconds=1)
    return int(ts)


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def kafkalog_rows(table) -> list[tuple]:
    out = []
    for r in table.to_pylist():
        if r["isControl"]:
            continue
        ts = r["timestamp"]
        millis = int(ts.timestamp() * 1000) if hasattr(ts, "timestamp") else ts
        out.append(
            (
                r["partition"],
                r["offset"],
                millis,
                r["timestampType"],
                r["key"],
                r["value"],
                tuple((h["key"], h["value"]) for h in r["headers"] or []),
                r["partitionLeaderEpoch"],
            )
        )
    return sorted(out)


@pytest.fixture(scope="module")
def fresh_log(kafka_jars, tmp_path_factory):
    """The broker's log directory after the scenario and a clean stop, with what Kafka's
    consumer fetched (read_uncommitted and read_committed) before the stop."""
    broker = KafkaBroker(tmp_path_factory.mktemp("fresh"))
    broker.start()
    try:
        broker.produce(fresh_spec())
        uncommitted = broker.consume(TOPIC)
        committed = broker.consume(TOPIC, "--isolation", "read_committed")
    finally:
        assert broker.stop() in (0, 143)
    assert not broker.errors(), broker.errors()
    return broker, uncommitted, committed


def test_the_broker_wrote_several_segments_every_codec_and_both_markers(fresh_log):
    broker, uncommitted, _ = fresh_log
    for p in (0, 1):
        segments = sorted((broker.log_dir / f"{TOPIC}-{p}").glob("*.log"))
        assert len(segments) >= 3, segments
        assert (broker.log_dir / f"{TOPIC}-{p}" / "leader-epoch-checkpoint").is_file()
    table = kafkalog.read(
        broker.log_dir / f"{TOPIC}-0", batch_metadata=True, include_control=True
    ).read_all()
    assert set(table.column("compression").to_pylist()) >= {"none", "gzip", "snappy", "lz4", "zstd"}
    controls = [r for r in table.to_pylist() if r["isControl"]]
    # Kafka's control record types: 1 COMMIT (the committed transaction), then 0 ABORT.
    assert [r["controlType"] for r in controls] == [1, 0], controls

    assert len(uncommitted) == 5 * 40 + 30 + 20 + 50


def test_kafkalog_reads_what_the_java_consumer_fetched(fresh_log):
    broker, uncommitted, _ = fresh_log
    table = kafkalog.read(
        broker.log_dir, topics=TOPIC, batch_metadata=True, include_control=True
    ).read_all()
    assert kafkalog_rows(table) == java_rows(uncommitted)
    # The control records sit exactly at the offsets the consumer never returned.
    fetched = {(r["partition"], r["offset"]) for r in uncommitted}
    for r in table.to_pylist():
        assert ((r["partition"], r["offset"]) in fetched) != r["isControl"]
    # And every offset from 0 to the end is one or the other: nothing lost, nothing invented.
    for p in (0, 1):
        offsets = sorted(r["offset"] for r in table.to_pylist() if r["partition"] == p)
        assert offsets == list(range(len(offsets)))


def test_read_committed_equals_the_java_consumers(fresh_log):
    broker, _, committed = fresh_log
    table = kafkalog.read(
        broker.log_dir, topics=TOPIC, batch_metadata=True, isolation_level="read_committed"
    ).read_all()
    assert kafkalog_rows(table) == java_rows(committed)
    values = {r["value"] for r in table.to_pylist()}
    assert b"kept0" in values and not any(v and v.startswith(b"gone") for v in values)


def test_the_broker_restarts_on_its_own_log_and_serves_the_same(fresh_log, tmp_path):
    broker, uncommitted, _ = fresh_log
    broker.start()
    try:
        again = kafka_tool(broker.bootstrap, "consume", "--topic", TOPIC)
        latest = kafka_tool(broker.bootstrap, "list-offsets", "--topic", TOPIC, "--spec", "latest")
    finally:
        broker.stop()
    assert java_rows(again) == java_rows(uncommitted)
    table = kafkalog.read(
        broker.log_dir, topics=TOPIC, include_control=True, batch_metadata=True
    ).read_all()
    for row in latest:
        ends = [r["offset"] for r in table.to_pylist() if r["partition"] == row["partition"]]
        assert row["offset"] == max(ends) + 1
