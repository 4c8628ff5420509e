"""The streaming sink and appends on an object store (a real S3 server, moto's, on loopback):
each micro-batch appended with the next offsets, the active segment rewritten with its old
bytes as a prefix and rolled at ``segment_bytes``, everything published with one conditional
put of the partition's manifest (which holds the writers' marks, so a replayed micro-batch is
written once); a writer killed before publishing leaves nothing readable; two writers at once
conflict with a typed error; a marker left by a dead writer of another host is taken over
once its lease (measured by the store's clock) expires."""

from __future__ import annotations

import socket
import threading
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

import kafkalog
from conftest import BUCKET
from kafkalog import _native
from kafkalog.errors import ConcurrentWriteError

MARKER = ".kafkalog-writing"
MANIFEST = ".kafkalog-manifest"


def records(start: int, n: int) -> pa.Table:
    return pa.table(
        {
            "key": pa.array([b"k%d" % (i % 5) for i in range(start, start + n)], pa.binary()),
            "value": pa.array([b"v%05d" % i + b"x" * 40 for i in range(start, start + n)]),
            "timestamp": pa.array(
                [1_700_000_000_000 + i for i in range(start, start + n)], pa.timestamp("ms")
            ),
        }
    )


def read(uri: str, s3) -> pa.Table:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
        return kafkalog.read(uri, storage_options=s3.options).read_all()


def stage(s3, name: str, start: int, n: int) -> str:
    """A micro-batch as a task stages it: a partition kafkalog.write published at a prefix."""
    uri = f"s3://{BUCKET}/sink-staging/{name}/t-0"
    kafkalog.write(uri, records(start, n), magic=2, batch_records=10, storage_options=s3.options)
    return uri


def append(s3, target: str, staged: list[str], batch: int, **kw) -> dict:
    options = dict(s3.options, **kw.pop("storage", {}))
    kw.setdefault("segment_bytes", 4000)
    kw.setdefault("index_interval_bytes", 500)
    return dict(
        _native.append(target, staged, writer_id="q", sequence=batch, storage_options=options, **kw)
    )


def logs(s3, prefix: str) -> dict[str, bytes]:
    return {n: b for n, b in s3.objects(prefix).items() if n.endswith(".log")}


def test_appends_continue_offsets_roll_and_keep_the_published_prefix(s3):
    target = f"s3://{BUCKET}/sink-append/t-0"
    prefix = "sink-append/t-0"
    written = 0
    seen: dict[str, bytes] = {}
    for batch in range(12):
        n = 7 + batch
        done = append(s3, target, [stage(s3, f"a{batch}", written, n)], batch)
        assert (done["skipped"], done["start_offset"], done["next_offset"]) == (
            False,
            written,
            written + n,
        )
        written += n
        # Every file is the old one extended: what an old manifest lists is unchanged.
        now = s3.objects(prefix)
        for name, old in seen.items():
            assert now[name][: len(old)] == old, name
        seen = {n: b for n, b in now.items() if not n.startswith(".")}
        assert MARKER not in now
        got = read(target, s3)
        assert got["offset"].to_pylist() == list(range(written))
        assert got["value"].to_pylist() == records(0, written)["value"].to_pylist()
    segments = logs(s3, prefix)
    # Rolled at segment_bytes, but not a segment per micro-batch.
    assert 2 < len(segments) < 12
    assert all(len(b) <= 4000 for b in segments.values())
    assert kafkalog.verify(target, storage_options=s3.options)["ok"]
    # A replayed micro-batch (the same mark) is written once.
    again = append(s3, target, [stage(s3, "replay", 0, 5)], 11)
    assert again["skipped"] and again["next_offset"] == written
    assert read(target, s3).num_rows == written


def test_small_rewrite_limit_starts_new_segments(s3):
    target = f"s3://{BUCKET}/sink-limit/t-0"
    for batch in range(3):
        append(s3, target, [stage(s3, f"l{batch}", batch * 5, 5)], batch, max_rewrite_bytes=1)
    assert len(logs(s3, "sink-limit/t-0")) == 3  # the active segment is never rewritten
    assert read(target, s3)["offset"].to_pylist() == list(range(15))


def test_a_writer_killed_before_publishing_leaves_nothing_readable(s3):
    target = f"s3://{BUCKET}/sink-killed/t-0"
    prefix = "sink-killed/t-0"
    append(s3, target, [stage(s3, "k0", 0, 20)], 0)
    before = read(target, s3)
    manifest = s3.objects(prefix)[MANIFEST]
    # What a writer killed between its uploads and its manifest leaves: the active segment
    # rewritten longer, a new segment, and its marker (a dead process of this host).
    log = next(n for n in logs(s3, prefix))
    old = s3.objects(prefix)[log]
    s3.client.put_object(Bucket=BUCKET, Key=f"{prefix}/{log}", Body=old + old[:200])
    s3.client.put_object(Bucket=BUCKET, Key=f"{prefix}/00000000000000000020.log", Body=old)
    dead = subprocess_pid()
    note = (
        f"kafkalog-writer 1\nowner dead\nhost {socket.gethostname()}\npid {dead}\n"
        "created_ms 0\nbeat 0\n"
    )
    s3.client.put_object(Bucket=BUCKET, Key=f"{prefix}/{MARKER}", Body=note.encode())
    assert read(target, s3).equals(before)
    assert s3.objects(prefix)[MANIFEST] == manifest
    # The next writer takes the dead writer's marker over and appends after the listed bytes.
    done = append(s3, target, [stage(s3, "k1", 20, 6)], 1)
    assert (done["start_offset"], done["next_offset"]) == (20, 26)
    got = read(target, s3)
    assert got["offset"].to_pylist() == list(range(26))
    assert got["value"].to_pylist() == records(0, 26)["value"].to_pylist()
    assert kafkalog.verify(target, storage_options=s3.options)["ok"]


def subprocess_pid() -> int:
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def foreign_marker(s3, prefix: str, host: str = "gone.example") -> None:
    note = f"kafkalog-writer 1\nowner x\nhost {host}\npid 4242\ncreated_ms 0\nbeat 3\n"
    s3.client.put_object(Bucket=BUCKET, Key=f"{prefix}/{MARKER}", Body=note.encode())


def test_a_concurrent_writer_conflicts_and_a_fresh_marker_holds(s3):
    target = f"s3://{BUCKET}/sink-conflict/t-0"
    append(s3, target, [stage(s3, "c0", 0, 5)], 0)
    foreign_marker(s3, "sink-conflict/t-0")  # another host's writer, writing now
    staged = stage(s3, "c1", 5, 5)
    with pytest.raises(ConcurrentWriteError, match=r"process 4242 on host \"gone.example\""):
        append(s3, target, [staged], 1)
    # The same through kafkalog.write (a batch write): the lease has not expired.
    with pytest.raises(ConcurrentWriteError, match="has not expired"):
        kafkalog.write(
            target,
            records(0, 3),
            overwrite=True,
            storage_options={**s3.options, "kafkalog.lease_seconds": "30"},
        )
    assert read(target, s3)["offset"].to_pylist() == list(range(5))


def test_a_stale_marker_of_another_host_is_taken_over_after_its_lease(s3):
    target = f"s3://{BUCKET}/sink-stale/t-0"
    append(s3, target, [stage(s3, "s0", 0, 5)], 0)
    foreign_marker(s3, "sink-stale/t-0")
    staged = stage(s3, "s1", 5, 5)
    short = {"storage": {"kafkalog.lease_seconds": "1"}}
    with pytest.raises(ConcurrentWriteError, match="last refreshed"):
        append(s3, target, [staged], 1, **short)
    time.sleep(3.2)  # the lease (1 s) and the store's second-precision clock (1 s) pass
    # Two writers race to take it over with the same micro-batch: it is written once (the
    # loser conflicts, or, coming after the winner published, finds its mark).
    outcomes: list[str] = []

    def take() -> None:
        try:
            done = append(s3, target, [staged], 1, **short)
            outcomes.append("skipped" if done["skipped"] else "appended")
        except ConcurrentWriteError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=take) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) in (["appended", "conflict"], ["appended", "skipped"]), outcomes
    assert MARKER not in s3.objects("sink-stale/t-0")
    assert read(target, s3)["offset"].to_pylist() == list(range(10))


def test_the_stream_sink_appends_to_an_object_store(spark, s3, tmp_path):
    src = tmp_path / "src"
    kafkalog.write(src / "s-0", records(0, 30), batch_records=3)
    out = f"s3://{BUCKET}/sink-stream-out"

    def run(checkpoint: Path) -> None:
        writer = (
            spark.readStream.format("kafkalog")
            .option("subscribe", "s")
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "7")
            .load(str(src))
            .select("key", "value", "partition", "timestamp")
            .withColumn("topic", F.lit("mirror"))
            .writeStream.format("kafkalog")
            .option("checkpointLocation", str(checkpoint))
            .option("segmentBytes", "600")
        )
        for k, v in s3.options.items():
            writer = writer.option(f"storage.{k}", v)
        query = writer.trigger(availableNow=True).start(out)
        query.awaitTermination(300)
        if query.exception() is not None:
            raise query.exception()

    run(tmp_path / "checkpoint")
    got = read(f"{out}/mirror-0", s3)
    assert got["offset"].to_pylist() == list(range(30))
    assert got["value"].to_pylist() == records(0, 30)["value"].to_pylist()
    assert len(logs(s3, "sink-stream-out/mirror-0")) > 1
    assert not [k for k in s3.objects("sink-stream-out") if "kafkalog-job" in k]
    # More at the source; the restarted query appends exactly them, offsets continuing.
    more = tmp_path / "more"
    kafkalog.write(more / "s-0", records(30, 12), base_offset=30, batch_records=3)
    for f in (more / "s-0").iterdir():
        f.rename(src / "s-0" / f.name)
    run(tmp_path / "checkpoint")
    got = read(f"{out}/mirror-0", s3)
    assert got["offset"].to_pylist() == list(range(42))
    assert got["value"].to_pylist() == records(0, 42)["value"].to_pylist()
    assert kafkalog.verify(f"{out}/mirror-0", storage_options=s3.options)["ok"]
