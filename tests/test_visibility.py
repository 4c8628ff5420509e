"""What a consumer could fetch: the broker's ``replication-offset-checkpoint`` (high watermark)
and ``log-start-offset-checkpoint`` (log start offset) in the log directory bound every read by
default (``visibility="consumer"``); ``visibility="all"`` reads every record on disk.

The models here are Kafka's: a fetch serves offsets in ``[log start offset, high watermark)``
(``UnifiedLog.read`` with ``FetchHighWatermark``), and ``read_committed``'s last stable offset
is the earliest of the high watermark and the first offset of a transaction still open as of
the high watermark (a transaction whose marker is at or above it is still unstable:
``ProducerStateManager`` keeps it until the high watermark passes the marker).
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pytest
from test_seek import History, committed_offsets, scenario, txn_partition  # noqa: F401

import kafkalog
from conftest import REPO
from kafkalog import cli

EXAMPLES = REPO / "examples" / "logs"


def checkpoint(path: Path, entries: dict[tuple[str, int], int]) -> None:
    """An offset checkpoint file as a broker writes it."""
    lines = ["0", str(len(entries))] + [f"{t} {p} {o}" for (t, p), o in entries.items()]
    path.write_text("\n".join(lines) + "\n")


def offsets(path, **kw) -> dict[tuple[str, int], list[int]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = kafkalog.read(path, columns=["topic", "partition", "offset"], **kw).read_all()
    out: dict[tuple[str, int], list[int]] = {}
    for topic, partition, offset in zip(*(t.column(i).to_pylist() for i in range(3)), strict=True):
        out.setdefault((topic, partition), []).append(offset)
    return out


@pytest.fixture
def logdir(tmp_path) -> Path:
    d = tmp_path / "kafka-logs"
    shutil.copytree(EXAMPLES, d)
    return d


HW = {("orders", 0): 20, ("clicks", 1): 3, ("users", 0): 0}
LOG_START = {("orders", 0): 4, ("clicks", 1): 1, ("events", 0): 7}


def model(every, start=None, end=None):
    """Kafka's fetchable range, [log start, high watermark) (the broker keeps the high
    watermark at or above the log start offset), intersected with the user's bounds."""
    out = {}
    for key, offs in every.items():
        lo = max(x for x in (LOG_START.get(key), start, -1) if x is not None)
        hw = HW.get(key)
        if hw is not None and key in LOG_START:
            hw = max(hw, LOG_START[key])
        hi = min(x for x in (hw, end, 1 << 62) if x is not None)
        kept = [o for o in offs if lo <= o < hi]
        if kept:
            out[key] = kept
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("bounds", [{}, {"start_offset": 6}, {"end_offset": 12}])
def test_checkpoints_bound_a_read(logdir, threads, bounds):
    every = offsets(logdir, visibility="all", threads=threads)
    assert every == offsets(logdir, threads=threads), "no checkpoints: nothing changes"
    checkpoint(logdir / "replication-offset-checkpoint", HW)
    checkpoint(logdir / "log-start-offset-checkpoint", LOG_START)
    got = offsets(logdir, threads=threads, **bounds)
    assert got == model(every, bounds.get("start_offset"), bounds.get("end_offset"))
    assert got != every
    assert ("users", 0) not in got  # a high watermark of 0: nothing was acknowledged
    # visibility="all": every record on disk, as before.
    assert offsets(logdir, visibility="all", threads=threads) == every
    # A partition directory (and a segment file in it) finds the checkpoints beside it.
    part = logdir / "orders-0"
    assert offsets(part, threads=threads, **bounds) == {
        k: v for k, v in got.items() if k == ("orders", 0)
    }
    # Planning gives the same items' records.
    items = kafkalog.plan(logdir, target_bytes=200, **bounds)
    assert offsets_of(kafkalog.read_items(items).read_all()) == got
    items = kafkalog.plan(logdir, target_bytes=200, visibility="all")
    assert offsets_of(kafkalog.read_items(items).read_all()) == every


def offsets_of(t: pa.Table) -> dict:
    out: dict = {}
    for topic, partition, offset in zip(
        t.column("topic").to_pylist(),
        t.column("partition").to_pylist(),
        t.column("offset").to_pylist(),
        strict=True,
    ):
        out.setdefault((topic, partition), []).append(offset)
    return out


def test_high_watermark_bounds_read_committed(txn_partition):  # noqa: F811
    """For every high watermark at a batch boundary: what a read_committed (and a
    read_uncommitted) consumer sees of the partition as far as the high watermark."""
    h, path = txn_partition
    key = ("txn", 0)
    cp = path.parent / "replication-offset-checkpoint"
    for hw in sorted({b.base for b in h.batches} | {h.next_offset}):
        checkpoint(cp, {key: hw})
        seen = History(batches=[b for b in h.batches if b.base < hw], next_offset=hw)
        got = offsets(path, isolation_level="read_committed").get(key, [])
        assert got == committed_offsets(seen), hw
        uncommitted = [o for b in seen.batches if b.control is None for o in b.offsets]
        assert offsets(path).get(key, []) == uncommitted, hw
    cp.unlink()
    assert offsets(path, isolation_level="read_committed")[key] == committed_offsets(h)


def test_read_batches_lists_what_a_consumer_could_fetch(logdir):
    every = kafkalog.read_batches(logdir / "orders-0").read_all()
    checkpoint(logdir / "replication-offset-checkpoint", {("orders", 0): 20})
    checkpoint(logdir / "log-start-offset-checkpoint", {("orders", 0): 4})
    listed = kafkalog.read_batches(logdir / "orders-0").read_all()
    base, last = listed.column("baseOffset").to_pylist(), listed.column("lastOffset").to_pylist()
    want = [
        (b, e)
        for b, e in zip(
            every.column("baseOffset").to_pylist(),
            every.column("lastOffset").to_pylist(),
            strict=True,
        )
        if e >= 4 and b < 20
    ]
    assert list(zip(base, last, strict=True)) == want and len(want) < every.num_rows
    assert kafkalog.read_batches(logdir / "orders-0", visibility="all").read_all() == every


def test_a_malformed_checkpoint_is_a_typed_error(logdir):
    cp = logdir / "replication-offset-checkpoint"
    for text in ("1\n0\n", "0\n2\norders 0 5\n", "0\n1\norders x 5\n", "0\n1\n orders 0 5\n"):
        cp.write_text(text)
        with pytest.raises(kafkalog.CorruptRecordError) as e:
            kafkalog.read(logdir).read_all()
        assert "replication-offset-checkpoint" in str(e.value)
        assert "visibility='all'" in str(e.value)
        assert kafkalog.read(logdir, visibility="all").read_all().num_rows > 0
    with pytest.raises(kafkalog.InvalidArgumentError):
        kafkalog.read(logdir, visibility="some").read_all()
    with pytest.raises(kafkalog.InvalidArgumentError):
        kafkalog.plan(logdir, visibility="some")


def test_cli_convert_and_dump(logdir, tmp_path, capsys):
    checkpoint(logdir / "replication-offset-checkpoint", {("orders", 0): 20})
    out = tmp_path / "o.parquet"
    import pyarrow.parquet as pq

    assert cli.main(["convert", str(logdir / "orders-0"), str(out), "--no-progress"]) == 0
    assert pq.read_table(out).column("offset").to_pylist() == list(range(20))
    assert (
        cli.main(
            ["convert", str(logdir / "orders-0"), str(out), "--no-progress", "--visibility", "all"]
        )
        == 0
    )
    assert pq.read_table(out).num_rows > 20
    log = str(logdir / "orders-0" / "00000000000000000015.log")
    capsys.readouterr()
    assert cli.main(["dump", "--files", log]) == 0
    everything = capsys.readouterr().out
    assert cli.main(["dump", "--files", log, "--visibility", "consumer"]) == 0
    consumer = capsys.readouterr().out
    assert everything.count("baseOffset:") > consumer.count("baseOffset:") > 0


def test_object_store_reads_the_checkpoints(s3, logdir):
    checkpoint(logdir / "replication-offset-checkpoint", HW)
    checkpoint(logdir / "log-start-offset-checkpoint", LOG_START)
    uri = s3.upload(logdir, "visibility/kafka-logs")
    local = offsets(logdir)
    assert offsets(uri, storage_options=s3.options) == local
    assert offsets(uri + "/orders-0", storage_options=s3.options) == {
        ("orders", 0): local[("orders", 0)]
    }
    assert offsets(uri, storage_options=s3.options, visibility="all") == offsets(
        logdir, visibility="all"
    )


def test_segments_report_what_a_consumer_sees(logdir):
    """``segments`` lists every segment on disk with the partition's checkpointed bounds, and
    names a segment wholly above the high watermark or wholly below the log start offset."""
    every = kafkalog.segments(logdir)
    assert all(s["high_watermark"] is None and s["hidden"] is None for s in every)
    orders = [s for s in every if (s["topic"], s["partition"]) == ("orders", 0)]
    bases = [s["base_offset"] for s in orders]
    assert len(bases) >= 2, bases
    # The high watermark at the last segment's base, the log start at the second's.
    checkpoint(logdir / "replication-offset-checkpoint", {("orders", 0): bases[-1]})
    checkpoint(logdir / "log-start-offset-checkpoint", {("orders", 0): bases[1]})
    listed = kafkalog.segments(logdir)
    assert len(listed) == len(every)  # nothing left out
    orders = [s for s in listed if (s["topic"], s["partition"]) == ("orders", 0)]
    assert {(s["log_start_offset"], s["high_watermark"]) for s in orders} == {(bases[1], bases[-1])}
    hidden = [s["hidden"] for s in orders]
    assert hidden[0] == "below_log_start"
    assert hidden[-1] == "above_high_watermark"
    assert all(h is None for h in hidden[1:-1])
    others = [s for s in listed if (s["topic"], s["partition"]) != ("orders", 0)]
    assert all(s["hidden"] is None and s["high_watermark"] is None for s in others)


def test_segments_list_everything_beside_a_malformed_checkpoint(logdir):
    (logdir / "replication-offset-checkpoint").write_text("0\n2\norders 0 5\n")
    listed = kafkalog.segments(logdir)
    assert len(listed) == len(kafkalog.segments(logdir / "orders-0")) + len(
        [s for s in listed if s["topic"] != "orders" or s["partition"] != 0]
    )
    assert all(s["high_watermark"] is None for s in listed)


def test_cli_info_reports_the_consumer_bounds(logdir, capsys):
    checkpoint(logdir / "replication-offset-checkpoint", {("orders", 0): 15})
    checkpoint(logdir / "log-start-offset-checkpoint", {("orders", 0): 15})
    assert cli.main(["info", str(logdir)]) == 0
    out = capsys.readouterr().out
    assert "log start offset 15, high watermark 15" in out
    assert "not fetchable: below log start" in out
    assert "not fetchable: above high watermark" in out
    from kafkalog.cli.info import log_info

    info = log_info(str(logdir))
    orders = [p for t in info["topics"] for p in t["partitions"] if p["topic"] == "orders"]
    assert {(p["partition"], p["highWatermark"]) for p in orders} == {(0, 15), (1, None)}
