"""``kafkalog serve``: Kafka clients read backups through the endpoint exactly as
``kafkalog.read`` reads the files (kafka-python here; Kafka's own Java client, a real broker
side by side and Spark's Kafka source in tests/test_serve_kafka.py)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import kafkalog

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402
from kafka.errors import KafkaError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "logs"
CORPUS = Path(os.environ.get("KAFKALOG_CORPUS", ROOT / "tests" / "corpus")) / "segments"


def rows_of(table: pa.Table) -> list[tuple]:
    out = []
    for r in table.to_pylist():
        ts = r["timestamp"]
        millis = None if ts is None else int(ts.timestamp() * 1000)
        headers = [(h["key"], h["value"]) for h in (r["headers"] or [])]
        out.append(
            (
                r["topic"],
                r["partition"],
                r["offset"],
                millis,
                r["timestampType"],
                r["key"],
                r["value"],
                headers,
            )
        )
    return sorted(out, key=lambda x: (x[0], x[1], x[2]))


def consume_all(bootstrap: str, isolation: str = "read_uncommitted", **extra) -> list[tuple]:
    """Every record of every served partition, as kafka-python's consumer gets it."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level=isolation,
        enable_auto_commit=False,
        consumer_timeout_ms=2000,
        fetch_max_wait_ms=100,
        **extra,
    )
    try:
        parts = [
            TopicPartition(t, p)
            for t in consumer.topics()
            for p in sorted(consumer.partitions_for_topic(t) or ())
            if not t.startswith("__")
        ]
        consumer.assign(parts)
        consumer.seek_to_beginning()
        ends = consumer.end_offsets(parts)
        out = []
        deadline = time.monotonic() + 60
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            assert time.monotonic() < deadline, "the consumer stopped short of the end offsets"
            for _tp, records in consumer.poll(timeout_ms=500).items():
                for r in records:
                    out.append(
                        (
                            r.topic,
                            r.partition,
                            r.offset,
                            None if r.timestamp is None or r.timestamp < 0 else r.timestamp,
                            -1 if r.timestamp_type is None else r.timestamp_type,
                            r.key,
                            r.value,
                            [(k, v) for k, v in (r.headers or [])],
                        )
                    )
        return sorted(out, key=lambda x: (x[0], x[1], x[2]))
    finally:
        consumer.close()


def test_examples_record_for_record() -> None:
    expected = rows_of(kafkalog.read(str(EXAMPLES)).read_all())
    expected = [r for r in expected if not r[0].startswith("__")]
    with kafkalog.serve(EXAMPLES) as server:
        assert server.topics >= 5
        got = consume_all(server.bootstrap_servers)
    assert len(got) == len(expected) > 100
    assert got == expected


def test_read_committed_leaves_aborted_out() -> None:
    expected = rows_of(kafkalog.read(str(EXAMPLES), isolation_level="read_committed").read_all())
    everything = rows_of(kafkalog.read(str(EXAMPLES)).read_all())
    assert len(expected) < len(everything), "the examples hold an aborted transaction"
    with kafkalog.serve(EXAMPLES) as server:
        got = consume_all(server.bootstrap_servers, "read_committed")
    assert got == [r for r in expected if not r[0].startswith("__")]


def corpus_partitions() -> list[Path]:
    """The corpus's partition directories (``<topic>-<n>``, or a copy ``<topic>-<n>@<source>``)."""
    import re

    return sorted(
        p.parent
        for p in CORPUS.rglob("*.log")
        if not p.parent.name.startswith("__") and re.fullmatch(r".+-\d+(@.+)?", p.parent.name)
    )


@pytest.mark.parametrize(
    "partition", sorted(set(corpus_partitions())), ids=lambda p: p.parent.parent.name + "/" + p.name
)
def test_corpus_partitions_record_for_record(partition: Path, tmp_path: Path) -> None:
    import shutil

    # The corpus keeps several brokers' copies of a partition as <topic>-<n>@<source>: served
    # one at a time, under the partition directory's own name.
    partition = Path(shutil.copytree(partition, tmp_path / partition.name.split("@")[0]))
    read = kafkalog.read(str(partition), on_corrupt="skip").read_all().to_pylist()
    # A consumer only moves forward: where a segment repeats earlier offsets (a hand-made
    # fixture's second segment holds offset 0 again), it sees each offset once.
    forward, last = [], -1
    for r in read:
        if r["offset"] > last:
            forward.append(r)
            last = r["offset"]
    expected = rows_of(pa.Table.from_pylist(forward)) if forward else []
    with kafkalog.serve(partition) as server:
        got = consume_all(server.bootstrap_servers)
    assert got == expected


def test_list_offsets_and_times() -> None:
    table = kafkalog.read(str(EXAMPLES / "orders-0")).read_all().to_pylist()
    with kafkalog.serve(EXAMPLES) as server:
        consumer = KafkaConsumer(bootstrap_servers=server.bootstrap_servers)
        try:
            tp = TopicPartition("orders", 0)
            assert consumer.beginning_offsets([tp])[tp] == table[0]["offset"]
            assert consumer.end_offsets([tp])[tp] == table[-1]["offset"] + 1
            middle = table[len(table) // 2]
            millis = int(middle["timestamp"].timestamp() * 1000)
            found = consumer.offsets_for_times({tp: millis})[tp]
            first = next(r for r in table if int(r["timestamp"].timestamp() * 1000) >= millis)
            assert found.offset == first["offset"]
            assert found.timestamp == int(first["timestamp"].timestamp() * 1000)
            after = consumer.offsets_for_times({tp: 2**62})[tp]
            assert after is None
        finally:
            consumer.close()


def test_writes_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "logs"
    shutil.copytree(EXAMPLES, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    with kafkalog.serve(copy) as server:
        producer = KafkaProducer(
            bootstrap_servers=server.bootstrap_servers, retries=0, enable_idempotence=False
        )
        try:
            with pytest.raises(KafkaError):
                producer.send("orders", b"x", partition=0).get(timeout=10)
        finally:
            producer.close()
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
        try:
            with pytest.raises(KafkaError) as refused:
                admin.create_topics([NewTopic("new-topic", 1, 1)])
            assert "read-only" in str(refused.value)
        finally:
            admin.close()
        assert any("read-only" in line for line in server.log_lines())
    after = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    assert after == before


def test_group_commits_outlive_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with kafkalog.serve(EXAMPLES, state=state) as server:
        consumer = KafkaConsumer(
            "orders",
            bootstrap_servers=server.bootstrap_servers,
            group_id="resumer",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            consumer_timeout_ms=3000,
        )
        try:
            taken = []
            for record in consumer:
                taken.append((record.partition, record.offset))
                if len(taken) == 10:
                    break
            consumer.commit()
            committed = {tp.partition: consumer.committed(tp) for tp in consumer.assignment()}
        finally:
            consumer.close()
    assert taken and any(v for v in committed.values())
    with kafkalog.serve(EXAMPLES, state=state) as server:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
        try:
            offsets = group_offsets(admin, "resumer")
        finally:
            admin.close()
        assert {tp.partition: m.offset for tp, m in offsets.items()} == {
            p: o for p, o in committed.items() if o is not None
        }
        consumer = KafkaConsumer(
            "orders",
            bootstrap_servers=server.bootstrap_servers,
            group_id="resumer",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            consumer_timeout_ms=3000,
        )
        try:
            first = next(iter(consumer))
            assert first.offset == committed[first.partition]
        finally:
            consumer.close()


def test_backup_group_offsets_are_served() -> None:
    logdir = CORPUS / "iechenyb__data" / "kafka-logs"
    table = kafkalog.consumer_offsets(str(logdir)).to_pylist()
    assert table, "the corpus directory holds committed offsets"
    group = table[0]["group"]
    expected = {(r["topic"], r["partition"]): r["offset"] for r in table if r["group"] == group}
    with kafkalog.serve(logdir) as server:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
        try:
            got = group_offsets(admin, group)
            groups = group_ids(admin)
        finally:
            admin.close()
    assert {(tp.topic, tp.partition): m.offset for tp, m in got.items()} == expected
    assert group in groups


def group_offsets(admin: KafkaAdminClient, group: str) -> dict:
    """A group's committed offsets, {TopicPartition: OffsetAndMetadata}, through kafka-python
    2.x's or 3.x's admin API."""
    if hasattr(admin, "list_consumer_group_offsets"):
        return dict(admin.list_consumer_group_offsets(group))
    return dict(admin.list_group_offsets({group: None})[group])


def group_ids(admin: KafkaAdminClient) -> set[str]:
    if hasattr(admin, "list_consumer_groups"):
        return {g[0] for g in admin.list_consumer_groups()}
    return {g["group_id"] if isinstance(g, dict) else g[0] for g in admin.list_groups()}


def _frame(api_key: int, version: int, body: bytes, correlation: int = 7) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation, -1)
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def test_hostile_clients_do_not_hurt_others() -> None:
    rng = random.Random(45)
    with kafkalog.serve(EXAMPLES / "orders-0") as server:
        host, port = server.address
        frames = [
            struct.pack(">i", -5),  # negative size
            struct.pack(">i", 1 << 30),  # oversized
            struct.pack(">i", 100) + b"\x00" * 10,  # truncated
            _frame(999, 0, b""),  # unknown API key
            _frame(1, 99, b""),  # a Fetch version nobody takes
            _frame(3, 12, b"\xff" * 40),  # malformed Metadata
        ] + [struct.pack(">i", 64) + rng.randbytes(64) for _ in range(30)]
        for frame in frames:
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(frame)
                s.shutdown(socket.SHUT_WR)
                try:
                    while s.recv(65536):
                        pass
                except OSError:
                    pass
        # ApiVersions from the future: answered with version 0 and UNSUPPORTED_VERSION.
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(_frame(18, 99, b"", correlation=42))
            size = struct.unpack(">i", s.recv(4))[0]
            body = b""
            while len(body) < size:
                body += s.recv(size - len(body))
            correlation, error = struct.unpack(">ih", body[:6])
            assert (correlation, error) == (42, 35)
        assert server.running
        got = consume_all(server.bootstrap_servers)
        assert len(got) == kafkalog.read(str(EXAMPLES / "orders-0")).read_all().num_rows
        assert any("closed" in line for line in server.log_lines())


def _memory_kib(pid: int) -> dict[str, int]:
    """A process's peak virtual size and peak resident size (kB), from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmPeak", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


# Requests whose declared element counts cannot fit in what follows them: the protocol crate
# would reserve room for every element before reading one (2^31 Metadata topics are ~150 GB).
HUGE_COUNTS = [
    # Found by the fuzz target: Metadata v1 declaring 0x0e000000 topics, in 14 bytes.
    bytes.fromhex("00030001080001000000" + "0e000000"),
    # Metadata v4 (non-flexible): 2^31 - 1 topics, then allow_auto_topic_creation.
    struct.pack(">hhih", 3, 4, 1, -1) + struct.pack(">i", 2**31 - 1) + b"\x00",
    # Metadata v12 (flexible header v2: client id, empty tagged fields): 2^32 - 2 topics.
    struct.pack(">hhih", 3, 12, 2, -1) + b"\x00" + b"\xff\xff\xff\xff\x0f" + b"\x00\x00\x00",
    # Fetch v4: replica, max wait, min bytes, max bytes, isolation, then 2^31 - 1 topics.
    struct.pack(">hhih", 1, 4, 3, -1)
    + struct.pack(">iiiib", -1, 0, 1, 1 << 20, 0)
    + struct.pack(">i", 2**31 - 1),
    # OffsetCommit v2: group, generation, member, retention, then 2^31 - 1 topics.
    struct.pack(">hhih", 8, 2, 4, -1)
    + struct.pack(">h", 1)
    + b"g"
    + struct.pack(">ih", 1, 1)
    + b"m"
    + struct.pack(">qi", -1, 2**31 - 1),
]


@contextlib.contextmanager
def _cli_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`kafkalog serve` of the examples as a command: the process and the address its first
    line gives. Killed on the way out if the test left it running."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkalog", "serve", str(EXAMPLES), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line
        assert "topics" in line and "partitions" in line
        yield process, line.split()[2]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _sees_orders_and_stops_on_sigterm(process: subprocess.Popen[str], bootstrap: str) -> None:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        assert "orders" in consumer.topics()
    finally:
        consumer.close()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0


def test_huge_declared_counts_are_refused_without_memory() -> None:
    with _cli_server() as (process, bootstrap):
        assert process.stderr is not None
        host, port = bootstrap.rsplit(":", 1)
        before = _memory_kib(process.pid)
        for request in HUGE_COUNTS:
            with socket.create_connection((host, int(port)), timeout=10) as s:
                s.sendall(struct.pack(">i", len(request)) + request)
                s.shutdown(socket.SHUT_WR)
                # The connection is closed, with nothing sent back.
                assert s.recv(65536) == b""
            assert process.poll() is None, process.stderr.read()
        after = _memory_kib(process.pid)
        # Reserving any one of those arrays would add gigabytes of address space at least.
        assert after["VmPeak"] - before["VmPeak"] < 1 << 20, (before, after)
        assert after["VmHWM"] < 1 << 20, after
        _sees_orders_and_stops_on_sigterm(process, bootstrap)
        log = process.stderr.read()
        # Each closed connection is logged with the count that could not fit.
        assert log.count("cannot fit") + log.count("remain after it") >= len(HUGE_COUNTS), log


def test_cli_serve_prints_where_and_stops_on_sigterm() -> None:
    with _cli_server() as (process, bootstrap):
        _sees_orders_and_stops_on_sigterm(process, bootstrap)


def test_serve_refuses_what_is_not_there(tmp_path: Path) -> None:
    with pytest.raises(kafkalog.KafkaLogError):
        kafkalog.serve(tmp_path / "nothing-here")
    (tmp_path / "empty").mkdir()
    with pytest.raises(kafkalog.KafkaLogError, match="nothing to serve"):
        kafkalog.serve(tmp_path / "empty")


def test_object_store_prefix_served(s3) -> None:  # type: ignore[no-untyped-def]
    remote = s3.upload(EXAMPLES, "serve-examples")
    expected = rows_of(kafkalog.read(str(EXAMPLES)).read_all())
    with kafkalog.serve(remote, storage_options=s3.options) as server:
        got = consume_all(server.bootstrap_servers)
    assert got == [r for r in expected if not r[0].startswith("__")]


def test_a_failing_store_errs_one_partition_not_the_others(s3) -> None:  # type: ignore[no-untyped-def]
    remote = s3.upload(EXAMPLES, "serve-failing")
    with kafkalog.serve(remote, storage_options=s3.options) as server:
        # The store loses one partition's segment after the endpoint listed it.
        s3.client.delete_object(
            Bucket="kafka", Key="serve-failing/orders-1/00000000000000000000.log"
        )
        consumer = KafkaConsumer(
            bootstrap_servers=server.bootstrap_servers, enable_auto_commit=False
        )
        try:
            good, bad = TopicPartition("orders", 0), TopicPartition("orders", 1)
            consumer.assign([good, bad])
            consumer.seek_to_beginning()
            expected = kafkalog.read(str(EXAMPLES / "orders-0")).read_all().num_rows
            got = 0
            deadline = time.monotonic() + 30
            while got < expected and time.monotonic() < deadline:
                for tp, records in consumer.poll(timeout_ms=500).items():
                    assert tp == good
                    got += len(records)
            assert got == expected
        finally:
            consumer.close()
        assert any("orders-1" in line and "offset" in line for line in server.log_lines()), (
            server.log_lines()
        )


def _librdkafka_rows(bootstrap: str, isolation: str) -> list[tuple]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "librdkafka-reader",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
        }
    )
    try:
        metadata = consumer.list_topics(timeout=10)
        parts = [
            CTopicPartition(t, p, OFFSET_BEGINNING)
            for t, m in metadata.topics.items()
            if not t.startswith("__")
            for p in m.partitions
        ]
        consumer.assign(parts)
        at_end: set[tuple[str, int]] = set()
        out = []
        deadline = time.monotonic() + 60
        while len(at_end) < len(parts):
            assert time.monotonic() < deadline, "librdkafka stopped short of the end"
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == -191, m.error()  # _PARTITION_EOF
                at_end.add((m.topic(), m.partition()))
                continue
            kind, ts = m.timestamp()
            out.append(
                (
                    m.topic(),
                    m.partition(),
                    m.offset(),
                    None if kind == 0 or ts < 0 else ts,
                    -1 if kind == 0 else kind - 1,
                    m.key(),
                    m.value(),
                    list(m.headers() or []),
                )
            )
        return sorted(out, key=lambda x: (x[0], x[1], x[2]))
    finally:
        consumer.close()


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_librdkafka_reads_the_examples(isolation: str) -> None:
    pytest.importorskip("confluent_kafka")
    expected = rows_of(kafkalog.read(str(EXAMPLES), isolation_level=isolation).read_all())
    with kafkalog.serve(EXAMPLES) as server:
        got = _librdkafka_rows(server.bootstrap_servers, isolation)
    assert got == [r for r in expected if not r[0].startswith("__")]


def test_aiokafka_reads_the_examples() -> None:
    aiokafka = pytest.importorskip("aiokafka")
    import asyncio

    # aiokafka refuses lz4 in v0/v1 messages: the topics of v2 batches.
    served = "orders|payments|users|_schemas"
    expected = rows_of(
        kafkalog.read(str(EXAMPLES), isolation_level="read_committed", topics=served).read_all()
    )

    async def consume(bootstrap: str) -> list[tuple]:
        consumer = aiokafka.AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            isolation_level="read_committed",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            topics = sorted(t for t in await consumer.topics() if not t.startswith("__"))
            # Without a group, a subscription is every partition of the topics.
            consumer.subscribe(topics)
            while not consumer.assignment():
                await consumer.getmany(timeout_ms=100, max_records=1)
            parts = sorted(consumer.assignment())
            await consumer.seek_to_beginning(*parts)
            ends = await consumer.end_offsets(parts)
            out = []

            async def behind() -> bool:
                return any([await consumer.position(tp) < ends[tp] for tp in parts])

            while await behind():
                batches = await consumer.getmany(timeout_ms=500)
                for records in batches.values():
                    for r in records:
                        ts = None if r.timestamp is None or r.timestamp < 0 else r.timestamp
                        out.append(
                            (
                                r.topic,
                                r.partition,
                                r.offset,
                                ts,
                                -1 if r.timestamp_type is None else r.timestamp_type,
                                r.key,
                                r.value,
                                list(r.headers or []),
                            )
                        )
            return sorted(out, key=lambda x: (x[0], x[1], x[2]))
        finally:
            await consumer.stop()

    with kafkalog.serve(EXAMPLES, topics=served) as server:
        got = asyncio.run(asyncio.wait_for(consume(server.bootstrap_servers), 60))
    assert got == [r for r in expected if not r[0].startswith("__")]
