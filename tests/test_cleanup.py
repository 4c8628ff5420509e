"""Log cleanup as Kafka does it: compaction (``kafkalog.compact``) and retention
(``kafkalog.retain``).

Compacted output is compared, record for record, with "the last value per key, tombstones
removed past their delete horizon" computed here from the input with pyarrow; Kafka's own
client library (kafka-python) reads the output back with valid CRCs; ``verify`` passes on it.
Retention is checked on directories built to sit exactly on each rule's edge.
"""

from __future__ import annotations

import os
import random
import shutil
import struct

import jvm_crash
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import kafkalog
from kafka_builders import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    Rec,
    build_batch,
    control_batch,
    kafka_python_segment,
    library_batches,
    write_partition,
)
from kafkalog import cli

T0 = 1_700_000_000_000
DAY = 86_400_000
COLUMNS = ["offset", "key", "value", "timestamp", "headers"]


def log_files(d) -> list[str]:
    return sorted(p for p in os.listdir(d) if p.endswith(".log"))


def read_all(path, **kw) -> pa.Table:
    return kafkalog.read(path, batch_metadata=True, include_control=True, **kw).read_all()


def data_rows(table: pa.Table) -> list[dict]:
    data = table.filter(pc.invert(table["isControl"]))
    return data.select(COLUMNS).to_pylist()


def expected_compaction(
    table: pa.Table,
    *,
    first_uncleanable: int,
    now: int,
    first_dirty: int = 0,
    aborted: frozenset[int] = frozenset(),
    legacy_tombstone_kept=lambda offset: True,
) -> list[dict]:
    """Kafka's compaction rule, computed independently: of the data records (aborted
    transactions left out), those from the first uncleanable offset on stay; before it, a
    record stays when it has a key, is the last record of that key in the dirty range (or its
    key is not in it), and is not a tombstone whose delete horizon has passed (v2: the batch's
    stamped horizon at or before ``now``; v0/v1: ``legacy_tombstone_kept``)."""
    data = table.filter(pc.invert(table["isControl"]))
    data = data.filter(pc.invert(pc.is_in(data["offset"], pa.array(sorted(aborted), pa.int64()))))
    dirty = data.filter(
        pc.and_(
            pc.and_(
                pc.greater_equal(data["offset"], first_dirty),
                pc.less(data["offset"], first_uncleanable),
            ),
            pc.is_valid(data["key"]),
        )
    )
    last = dirty.group_by("key").aggregate([("offset", "max")])
    last_of = dict(zip(last["key"].to_pylist(), last["offset_max"].to_pylist(), strict=True))
    out = []
    for row in data.to_pylist():
        if row["offset"] >= first_uncleanable:
            keep = True
        elif row["key"] is None:
            keep = False
        elif row["offset"] < last_of.get(row["key"], -1):
            keep = False
        elif row["value"] is not None:
            keep = True
        elif row["magic"] == 2:
            horizon = row["deleteHorizonMs"]
            keep = horizon is None or now < horizon
        else:
            keep = legacy_tombstone_kept(row["offset"])
        if keep:
            out.append({c: row[c] for c in COLUMNS})
    return out


def assert_kafka_reads(d) -> None:
    """kafka-python reads every segment with valid CRCs and the records kafkalog reads."""
    for name in log_files(d):
        data = (d / name).read_bytes()
        batches = library_batches(data, "kafka-python")
        assert all(b["crcValid"] for b in batches), name
        theirs = [(r["offset"], r["key"], r["value"]) for b in batches for r in b["records"]]
        ours = read_all(d / name)
        assert theirs == list(
            zip(
                ours["offset"].to_pylist(),
                ours["key"].to_pylist(),
                ours["value"].to_pylist(),
                strict=True,
            )
        ), name


def assert_verifies(d) -> None:
    result = kafkalog.verify(d)
    assert result["ok"], result["problems"]


def snapshot_logs(d) -> dict[str, bytes]:
    return {n: (d / n).read_bytes() for n in log_files(d)}


FORMATS = [
    (0, "none"),
    (0, "gzip"),
    (0, "snappy"),
    (1, "lz4"),
    (1, "none"),
    (1, "gzip"),
    (1, "snappy"),
    (2, "none"),
    (2, "lz4"),
    (2, "gzip"),
    (2, "snappy"),
    (2, "zstd"),
]


def random_segments(seed: int, formats=FORMATS, keys: int = 15, keyless: bool = True):
    """One segment per (magic, codec), in format-upgrade order, of three batches of five
    records: keys from a small set (so each is spread over many segments and codecs), some
    tombstones, some records without a key, offset gaps between batches."""
    rng = random.Random(seed)
    segments = []
    offset = 0
    for magic, codec in formats:
        batches = []
        for _ in range(3):
            batch = []
            for _ in range(5):
                roll = rng.random()
                key = None if keyless and roll < 0.05 else b"key-%d" % rng.randrange(keys)
                value = None if 0.05 <= roll < 0.25 else b"value %d " % offset * 8
                headers = (("h", b"%d" % offset),) if magic == 2 and roll > 0.8 else ()
                batch.append(Rec(key, value, T0 + offset, headers))
                offset += 1
            batches.append(batch)
        seg = kafka_python_segment(magic, codec, batches, segments_end(segments), gap=1)
        offset = seg.records[-1].offset + 2
        segments.append(seg)
    return segments


def segments_end(segments) -> int:
    return segments[-1].records[-1].offset + 3 if segments else 0


def active_segment(base: int, keys=(b"key-1", b"key-2")):
    return kafka_python_segment(2, "none", [[Rec(k, b"active", T0 + base) for k in keys]], base)


# --- compaction -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_compaction_is_last_value_per_key_across_formats_and_codecs(tmp_path, seed):
    segments = random_segments(seed)
    active = active_segment(segments_end(segments))
    src = write_partition(tmp_path / "in", "users", 0, [*segments, active])
    dst = tmp_path / "out" / "users-0"
    now = T0 + 60_000
    table = read_all(src)
    report = kafkalog.compact(src, dst, now=now)

    expected = expected_compaction(table, first_uncleanable=active.records[0].offset, now=now)
    assert data_rows(read_all(dst)) == expected
    assert report["cleaned"]
    assert report["first_uncleanable_offset"] == active.records[0].offset
    keyless = sum(
        1 for r in table.to_pylist() if r["key"] is None and r["offset"] < active.records[0].offset
    )
    assert keyless > 0
    assert report["invalid_records"] == keyless
    # One cleaned segment (they all fit in segment.bytes) named after the first, then the
    # active segment, byte for byte.
    assert log_files(dst) == [f"{0:020d}.log", f"{active.records[0].offset:020d}.log"]
    assert (dst / log_files(dst)[1]).read_bytes() == active.data
    assert_verifies(dst)
    assert_kafka_reads(dst)
    # v2 batches keeping a tombstone were stamped with the delete horizon, the others not.
    out = read_all(dst)
    cleaned = out.filter(pc.less(out["offset"], active.records[0].offset))
    v2_tomb = cleaned.filter(pc.and_(pc.equal(cleaned["magic"], 2), pc.is_null(cleaned["value"])))
    assert v2_tomb.num_rows > 0
    assert set(v2_tomb["deleteHorizonMs"].to_pylist()) == {now + DAY}

    # A second compaction at the same time changes nothing.
    again = tmp_path / "again" / "users-0"
    kafkalog.compact(dst, again, now=now)
    assert snapshot_logs(again) == snapshot_logs(dst)


def test_cleaned_segments_are_grouped_up_to_segment_bytes(tmp_path):
    segments = random_segments(3)
    active = active_segment(segments_end(segments))
    src = write_partition(tmp_path / "in", "t", 0, [*segments, active])
    sizes = [len(s.data) for s in segments]
    limit = sizes[0] + sizes[1] + sizes[2]
    # Kafka's groupSegmentsBySize, greedily (no index files in the input).
    bases, total = [], None
    for seg, size in zip(segments, sizes, strict=True):
        if total is None or total + size > limit:
            bases.append(seg.batches[0]["base_offset"])
            total = 0
        total += size
    dst = tmp_path / "out" / "t-0"
    now = T0 + 1
    kafkalog.compact(src, dst, now=now, segment_bytes=limit)
    expected_names = [f"{b:020d}.log" for b in bases] + [f"{active.records[0].offset:020d}.log"]
    assert log_files(dst) == expected_names
    table = read_all(src)
    assert data_rows(read_all(dst)) == expected_compaction(
        table, first_uncleanable=active.records[0].offset, now=now
    )
    assert_verifies(dst)


def test_tombstones_go_once_past_their_delete_horizon(tmp_path):
    v2 = [(2, "gzip"), (2, "none"), (2, "zstd")]
    first = random_segments(5, v2, keyless=False)
    active = active_segment(segments_end(first))
    src = write_partition(tmp_path / "in", "t", 0, [*first, active])
    t1 = T0 + 10_000
    round1 = tmp_path / "r1" / "t-0"
    kafkalog.compact(src, round1, now=t1, delete_retention_ms=DAY)
    stamped = read_all(round1)
    assert stamped.filter(pc.is_null(stamped["value"])).num_rows > 0

    # More data arrives: its tombstones have no horizon yet; the old ones have t1 + DAY.
    later = random_segments(6, v2, keyless=False)
    base = active.records[-1].offset + 1
    later = [
        kafka_python_segment(
            2,
            s.codec,
            [[Rec(b"new-" + r.key, r.value, r.timestamp) for r in s.records]],
            base + 20 * i,
        )
        for i, s in enumerate(later)
    ]
    tail = active_segment(base + 20 * len(later), keys=(b"key-3",))
    src2 = tmp_path / "in2" / "t-0"
    shutil.copytree(round1, src2)
    write_partition(tmp_path / "in2", "t", 0, [*later, tail])
    table = read_all(src2)
    horizons = set(table["deleteHorizonMs"].to_pylist())
    assert horizons == {None, t1 + DAY}
    uncleanable = tail.records[0].offset

    for now in (t1 + DAY - 1, t1 + DAY, t1 + 3 * DAY):
        dst = tmp_path / f"r2-{now}" / "t-0"
        kafkalog.compact(src2, dst, now=now, delete_retention_ms=DAY)
        expected = expected_compaction(table, first_uncleanable=uncleanable, now=now)
        assert data_rows(read_all(dst)) == expected
        assert_verifies(dst)
        assert_kafka_reads(dst)
        got = read_all(dst)
        kept_old = got.filter(
            pc.and_(pc.is_null(got["value"]), pc.less(got["offset"], base))
        ).num_rows
        if now < t1 + DAY:
            assert kept_old > 0  # inside delete.retention.ms: still there
        else:
            assert kept_old == 0  # past it: gone
        # New tombstones are kept, now with a horizon of their own.
        new = got.filter(pc.and_(pc.is_null(got["value"]), pc.greater_equal(got["offset"], base)))
        new = new.filter(pc.less(new["offset"], uncleanable))
        assert new.num_rows > 0
        assert set(new["deleteHorizonMs"].to_pylist()) == {now + DAY}


def test_legacy_tombstones_follow_the_last_clean_segments_time(tmp_path):
    # v1 segments: A (clean, before the first dirty offset) and B (dirty); v2 active.
    a = kafka_python_segment(
        1, "gzip", [[Rec(b"x", None, T0), Rec(b"y", b"1" * 30, T0 + 1), Rec(b"z", None, T0 + 2)]]
    )
    b = kafka_python_segment(
        1,
        "none",
        [[Rec(b"y", None, T0 + 3)], [Rec(b"w", None, T0 + 4)], [Rec(b"v", b"2", T0 + 5)]],
        3,
    )
    active = active_segment(6)
    src = write_partition(tmp_path / "in", "t", 0, [a, b, active])
    a_time = (T0 + 50 * DAY) / 1000
    os.utime(src / f"{0:020d}.log", (a_time, a_time))
    b_time = a_time - DAY / 1000 - 1  # last modified before A's time minus delete.retention.ms
    os.utime(src / f"{3:020d}.log", (b_time, b_time))
    table = read_all(src)
    dst = tmp_path / "out" / "t-0"
    now = T0 + 100 * DAY
    kafkalog.compact(src, dst, now=now, first_dirty_offset=3, delete_retention_ms=DAY)
    expected = expected_compaction(
        table,
        first_uncleanable=6,
        now=now,
        first_dirty=3,
        legacy_tombstone_kept=lambda offset: offset < 3,  # A's kept, B's past the horizon
    )
    got = data_rows(read_all(dst))
    assert got == expected
    assert [r["offset"] for r in got] == [0, 2, 5, 6, 7]
    assert_verifies(dst)
    assert_kafka_reads(dst)


def transactional_log(tmp_path, name: str = "t"):
    """Producer 7 commits offsets 0-2; producer 8's offsets 3-5 are aborted; markers at 6
    (COMMIT, 7) and 7 (ABORT, 8); plain records at 8-9; an active segment at 10."""
    txn = {"transactional": True, "producer_epoch": 0, "base_sequence": 0}
    p7 = build_batch(
        "kafka-python",
        2,
        "lz4",
        [Rec(b"a", b"a0" * 20, T0), Rec(b"b", b"b1" * 20, T0 + 1), Rec(b"c", b"c2" * 20, T0 + 2)],
        0,
        producer_id=7,
        **txn,
    )
    p8 = build_batch(
        "kafka-python",
        2,
        "snappy",
        [
            Rec(b"a", b"A3" * 20, T0 + 3),
            Rec(b"b", b"B4" * 20, T0 + 4),
            Rec(b"d", b"D5" * 20, T0 + 5),
        ],
        3,
        producer_id=8,
        **txn,
    )
    commit = control_batch(6, CONTROL_COMMIT, producer_id=7, producer_epoch=0, timestamp=T0 + 6)
    abort = control_batch(7, CONTROL_ABORT, producer_id=8, producer_epoch=0, timestamp=T0 + 7)
    plain = build_batch(
        "kafka-python", 2, "zstd", [Rec(b"c", b"c8" * 20, T0 + 8), Rec(b"e", None, T0 + 9)], 8
    )
    seg0 = p7 + p8 + commit + abort + plain
    return write_partition(tmp_path, name, 0, [seg0, active_segment(10)])


def batch_list(d) -> list[tuple]:
    t = kafkalog.read_batches(d).read_all()
    return list(
        zip(
            t["baseOffset"].to_pylist(),
            t["lastOffset"].to_pylist(),
            t["recordCount"].to_pylist(),
            t["producerId"].to_pylist(),
            strict=True,
        )
    )


def test_aborted_transactions_are_removed_and_producer_state_kept(tmp_path):
    src = transactional_log(tmp_path / "in")
    table = read_all(src)
    now = T0 + 1000
    dst = tmp_path / "out" / "t-0"
    kafkalog.compact(src, dst, now=now, producer_id_expiration_ms=None)
    assert data_rows(read_all(dst)) == expected_compaction(
        table, first_uncleanable=10, now=now, aborted=frozenset({3, 4, 5})
    )
    # Producer 8's last batch stays, emptied, to keep its sequence; both markers stay (their
    # transactions had batches in this round); producer 7's batch keeps its offset range.
    assert batch_list(dst) == [
        (0, 2, 2, 7),
        (3, 5, 0, 8),
        (6, 6, 1, 7),
        (7, 7, 1, 8),
        (8, 9, 2, -1),
        (10, 11, 2, -1),
    ]
    info = kafkalog.read_batches(dst).read_all().to_pylist()
    assert info[0]["baseSequence"] == 0 and info[0]["lastSequence"] == 2
    assert info[1]["baseSequence"] == 0 and info[1]["lastSequence"] == 2
    assert info[1]["isTransactional"] and info[1]["compression"] == "none"
    committed = kafkalog.read(dst, isolation_level="read_committed").read_all()
    assert committed["offset"].to_pylist() == [0, 1, 8, 9, 10, 11]
    assert_verifies(dst)
    assert_kafka_reads(dst)
    again = tmp_path / "again" / "t-0"
    kafkalog.compact(dst, again, now=now, producer_id_expiration_ms=None)
    assert snapshot_logs(again) == snapshot_logs(dst)


def test_expired_producers_lose_their_empty_batches_and_markers_later(tmp_path):
    src = transactional_log(tmp_path / "in")
    now = T0 + 2 * DAY  # past producer.id.expiration.ms: no producer is active any more
    r1 = tmp_path / "r1" / "t-0"
    kafkalog.compact(src, r1, now=now, delete_retention_ms=DAY)
    assert [b[:3] for b in batch_list(r1)] == [
        (0, 2, 2),
        (6, 6, 1),
        (7, 7, 1),
        (8, 9, 2),
        (10, 11, 2),
    ]
    # Round 2: the abort marker's transaction has nothing left, so it gets a delete horizon;
    # the commit marker still has producer 7's records. Round 3 at the same time: no change.
    r2 = tmp_path / "r2" / "t-0"
    kafkalog.compact(r1, r2, now=now, delete_retention_ms=DAY)
    marks = kafkalog.read_batches(r2).read_all().to_pylist()
    assert [m["deleteHorizonMs"] for m in marks if m["isControl"]] == [None, now + DAY]
    r3 = tmp_path / "r3" / "t-0"
    kafkalog.compact(r2, r3, now=now, delete_retention_ms=DAY)
    assert snapshot_logs(r3) == snapshot_logs(r2)
    # Past that horizon the marker goes.
    r4 = tmp_path / "r4" / "t-0"
    kafkalog.compact(r3, r4, now=now + DAY, delete_retention_ms=DAY)
    assert [b[:2] for b in batch_list(r4)] == [(0, 2), (6, 6), (8, 9), (10, 11)]
    for d in (r1, r2, r4):
        assert_verifies(d)
        assert_kafka_reads(d)


def test_active_segment_and_min_compaction_lag_are_not_cleaned(tmp_path):
    s0 = kafka_python_segment(2, "gzip", [[Rec(b"k", b"old" * 20, T0)]], 0)
    s1 = kafka_python_segment(2, "gzip", [[Rec(b"k", b"mid" * 20, T0 + 5_000)]], 1)
    s2 = kafka_python_segment(2, "none", [[Rec(b"k", b"new", T0 + 9_000)]], 2)
    src = write_partition(tmp_path / "in", "t", 0, [s0, s1, s2])
    now = T0 + 10_000
    # Without a lag: segments 0 and 1 are cleaned (the active one never is).
    d1 = tmp_path / "a" / "t-0"
    kafkalog.compact(src, d1, now=now)
    assert read_all(d1)["offset"].to_pylist() == [1, 2]
    # Segment 1's largest timestamp is within the lag: it and all after are left alone.
    d2 = tmp_path / "b" / "t-0"
    report = kafkalog.compact(src, d2, now=now, min_compaction_lag_ms=6_000)
    assert report["first_uncleanable_offset"] == 1
    assert read_all(d2)["offset"].to_pylist() == [0, 1, 2]
    assert snapshot_logs(d2) == snapshot_logs(src)
    # A ratio the log does not reach: the broker would not pick it; max lag forces it.
    assert not kafkalog.compact(
        src, tmp_path / "c2" / "t-0", now=now, first_dirty_offset=1, min_cleanable_ratio=0.9
    )["cleaned"]
    forced = kafkalog.compact(
        src,
        tmp_path / "d" / "t-0",
        now=now,
        first_dirty_offset=1,
        min_cleanable_ratio=0.9,
        max_compaction_lag_ms=1_000,
    )
    assert forced["cleaned"]


def test_corrupt_input_is_a_typed_error_and_nothing_is_written(tmp_path):
    segments = random_segments(7, [(2, "gzip"), (2, "none")], keyless=False)
    src = write_partition(tmp_path / "in", "t", 0, [*segments, active_segment(100)])
    seg = src / f"{0:020d}.log"
    data = bytearray(seg.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records: its CRC no longer matches
    seg.write_bytes(bytes(data))
    dst = tmp_path / "out" / "t-0"
    with pytest.raises(kafkalog.CrcMismatchError) as err:
        kafkalog.compact(src, dst)
    assert err.value.path == str(seg)
    assert err.value.position == 0 and err.value.offset == 0
    assert not dst.exists()
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []
    report = kafkalog.compact(src, dst, on_corrupt="skip")
    assert [(s["position"], s["offset"]) for s in report["skipped"]] == [(0, 0)]
    assert_verifies(dst)


def test_read_compacted_is_the_compacted_output(tmp_path):
    segments = random_segments(8, [(1, "gzip"), (2, "snappy")])
    src = write_partition(tmp_path / "in", "t", 3, [*segments, active_segment(100)])
    dst = tmp_path / "out" / "t-3"
    kafkalog.compact(src, dst, now=T0)
    view = kafkalog.read(src, compacted={"now": T0}).read_all()
    assert view.equals(kafkalog.read(dst).read_all())
    assert set(view["partition"].to_pylist()) == {3}


def test_cli_compact_and_retain(tmp_path, capsys):
    segments = random_segments(9, [(2, "gzip"), (2, "lz4")], keyless=False)
    src = write_partition(tmp_path / "in", "t", 0, [*segments, active_segment(100)])
    dst = tmp_path / "out" / "t-0"
    assert cli.main(["compact", str(src), str(dst), "--now", str(T0)]) == 0
    assert "cleaned offsets" in capsys.readouterr().out
    assert data_rows(read_all(dst)) == expected_compaction(
        read_all(src), first_uncleanable=100, now=T0
    )
    before = log_files(src)
    args = ["retain", str(tmp_path / "in"), "--retention-ms", "1", "--now", str(T0 + 10**6)]
    assert cli.main([*args, "--dry-run"]) == 0
    assert "would remove" in capsys.readouterr().out
    assert log_files(src) == before
    assert cli.main(args) == 0
    assert log_files(src) == [f"{102:020d}.log"]


# --- retention ----------------------------------------------------------------------------------


def retention_dir(tmp_path, stamps, name="orders"):
    """Segments of two records each (offsets 10 apart), the i-th with largest timestamp
    ``stamps[i]``; the last is the active segment."""
    segs = []
    for i, ts in enumerate(stamps):
        base = 10 * i
        segs.append(
            kafka_python_segment(
                2, "none", [[Rec(b"k%d" % i, b"v" * (20 + i), ts - 5), Rec(b"j", b"w", ts)]], base
            )
        )
    return write_partition(tmp_path, name, 0, segs), segs


def both_runs(path, **kw):
    """The dry run, then the real run on a copy: both must say the same."""
    copy = path.parent.parent / (path.parent.name + "-real") / path.name
    shutil.copytree(path, copy)
    dry = kafkalog.retain(path, dry_run=True, **kw)
    real = kafkalog.retain(copy, dry_run=False, **kw)

    def strip(result):
        return [
            {
                **p,
                "dir": None,
                "dry_run": None,
                "removed": [{**r, "path": os.path.basename(r["path"])} for r in p["removed"]],
            }
            for p in result
        ]

    assert strip(dry) == strip(real)
    removed = [r["base_offset"] for r in dry[0]["removed"]]
    left = [int(n[:20]) for n in log_files(copy)]
    return dry[0], removed, left, copy


def test_retention_by_time_stops_at_a_segment_exactly_at_the_limit(tmp_path):
    now = T0 + 10_000
    d, _ = retention_dir(tmp_path / "a", [now - 3_000, now - 2_001, now - 2_000, now - 100])
    part, removed, left, _ = both_runs(d, retention_ms=2_000, now=now)
    # now - largest > retention.ms: 3000 and 2001 are past it, 2000 is exactly at it (kept).
    assert removed == [0, 10]
    assert [r["reason"] for r in part["removed"]] == ["retention_ms"] * 2
    assert left == [20, 30]
    assert part["log_start_offset"] == 20
    # A segment past the limit behind one that is not stays: the rule stops at the first kept.
    d2, _ = retention_dir(tmp_path / "b", [now - 100, now - 9_000, now - 50])
    assert both_runs(d2, retention_ms=2_000, now=now)[1] == []


def test_retention_by_size_between_segments(tmp_path):
    d, segs = retention_dir(tmp_path / "a", [T0, T0 + 1, T0 + 2, T0 + 3])
    sizes = [len(s.data) for s in segs]
    total = sum(sizes)
    # Exactly the first two segments over the limit: both go.
    assert both_runs(d, retention_bytes=total - sizes[0] - sizes[1])[1] == [0, 10]
    # One byte less over it: only the first can go without going under.
    d2, _ = retention_dir(tmp_path / "b", [T0, T0 + 1, T0 + 2, T0 + 3])
    assert both_runs(d2, retention_bytes=total - sizes[0] - sizes[1] + 1)[1] == [0]
    # Under the limit: nothing.
    d3, _ = retention_dir(tmp_path / "c", [T0, T0 + 1, T0 + 2, T0 + 3])
    assert both_runs(d3, retention_bytes=total + 1)[1] == []


def test_retention_by_log_start_offset_inside_a_segment(tmp_path):
    d, _ = retention_dir(tmp_path / "a", [T0, T0 + 1, T0 + 2, T0 + 3])
    # 25 is inside segment 20: segments 0 and 10 end before it, 20 stays.
    part, removed, left, copy = both_runs(d, log_start_offset=25)
    assert removed == [0, 10] and left == [20, 30]
    assert part["log_start_offset"] == 25
    assert [r["reason"] for r in part["removed"]] == ["log_start_offset"] * 2
    # From the log directory's checkpoint, and written back.
    d2, _ = retention_dir(tmp_path / "b", [T0, T0 + 1, T0 + 2, T0 + 3])
    (d2.parent / "log-start-offset-checkpoint").write_text("0\n2\nother 0 4\norders 0 10\n")
    result = kafkalog.retain(d2, dry_run=False, write_checkpoint=True, retention_ms=0, now=T0 + 3)
    assert [r["base_offset"] for r in result[0]["removed"]] == [0, 10, 20]
    assert result[0]["log_start_offset"] == 30
    text = (d2.parent / "log-start-offset-checkpoint").read_text()
    assert text == "0\n2\norders 0 30\nother 0 4\n"
    assert read_all(d2)["offset"].to_pylist() == [30, 31]


def test_retention_rolls_a_new_active_segment_when_everything_goes(tmp_path):
    d, _ = retention_dir(tmp_path / "a", [T0, T0 + 1])
    part, removed, left, copy = both_runs(d, retention_ms=10, now=T0 + 1_000)
    assert removed == [0, 10]
    assert part["rolled"] and part["log_start_offset"] == 12 and left == [12]
    assert (copy / f"{12:020d}.log").stat().st_size == 0
    assert read_all(copy).num_rows == 0
    assert_verifies(copy)


def test_retention_over_a_log_directory_and_compact_policy(tmp_path):
    now = T0 + 10_000
    retention_dir(tmp_path, [now - 5_000, now - 1], name="a")
    retention_dir(tmp_path, [now - 5_000, now - 4_000, now - 1], name="b")
    result = kafkalog.retain(tmp_path, retention_ms=1_000, now=now)
    assert [(p["topic"], [r["base_offset"] for r in p["removed"]]) for p in result] == [
        ("a", [0]),
        ("b", [0, 10]),
    ]
    # cleanup.policy=compact: only the log start offset rule applies.
    result = kafkalog.retain(tmp_path, retention_ms=1_000, now=now, delete_policy=False)
    assert all(p["removed"] == [] for p in result)


def broker_log_dir(tmp_path):
    """A broker's log directory holding one partition: segments at 0, 3, 6 and 9 of three
    records each (log end 12, the same three keys in each), old enough for any retention, with
    the high watermark 4 in ``replication-offset-checkpoint`` and the log start offset 1 in
    ``log-start-offset-checkpoint``."""
    segs = [
        kafka_python_segment(
            2,
            "none",
            [[Rec(b"k%d" % i, b"v%d" % (base + i), T0 + base + i) for i in range(3)]],
            base,
        )
        for base in (0, 3, 6, 9)
    ]
    d = write_partition(tmp_path, "orders", 0, segs)
    (tmp_path / "replication-offset-checkpoint").write_text("0\n2\nother 0 99\norders 0 4\n")
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\norders 0 1\n")
    return d


def test_retention_in_a_log_directory_stops_at_the_high_watermark(tmp_path):
    d = broker_log_dir(tmp_path)
    # UnifiedLog.deletableSegments: a segment is deletable only when the high watermark (4)
    # reaches its upper bound (the next base offset): segment 0 (up to 3) yes, segment 3
    # (up to 6) no. The log start offset moves to 3, never past the high watermark.
    dry = kafkalog.retain(d, retention_ms=1, now=T0 + DAY)
    (part,) = kafkalog.retain(d, retention_ms=1, now=T0 + DAY, dry_run=False)
    assert part == {**dry[0], "dry_run": False}
    assert [r["base_offset"] for r in part["removed"]] == [0]
    assert log_files(d) == [f"{b:020d}.log" for b in (3, 6, 9)]
    assert (part["log_start_offset_before"], part["log_start_offset"]) == (1, 3)
    # Given, the high watermark wins over the checkpoint.
    result = kafkalog.retain(d, retention_ms=1, now=T0 + DAY, high_watermark=12)
    assert [r["base_offset"] for r in result[0]["removed"]] == [3, 6, 9]


def test_compaction_in_a_log_directory_honours_the_checkpoints(tmp_path):
    d = broker_log_dir(tmp_path)
    report = kafkalog.cleanup.plan(d, now=T0 + DAY)
    # LogLoader: log start = max(checkpoint 1, first base 0); cleanableOffsets: first dirty =
    # log start; first uncleanable = the last stable offset, capped by the high watermark 4,
    # rounded down to the base of its segment (3).
    assert (report["log_start_offset"], report["first_dirty_offset"]) == (1, 1)
    assert report["first_uncleanable_offset"] == 3
    report = kafkalog.compact(d, tmp_path / "out" / "orders-0", now=T0 + DAY)
    assert report["first_uncleanable_offset"] == 3
    # Segments 3 and 6 are above the high watermark: copied unchanged.
    for base in (3, 6, 9):
        name = f"{base:020d}.log"
        assert (tmp_path / "out" / "orders-0" / name).read_bytes() == (d / name).read_bytes()
    # Given, the options win over the checkpoints.
    report = kafkalog.cleanup.plan(d, now=T0 + DAY, high_watermark=12, log_start_offset=0)
    assert (report["log_start_offset"], report["first_uncleanable_offset"]) == (0, 9)


def test_compaction_output_read_by_aiokafka_too(tmp_path):
    from aiokafka.record.memory_records import MemoryRecords

    segments = random_segments(11, [(2, "zstd"), (2, "gzip")])
    src = write_partition(tmp_path / "in", "t", 0, [*segments, active_segment(100)])
    dst = tmp_path / "out" / "t-0"
    kafkalog.compact(src, dst, now=T0)
    data = (dst / f"{0:020d}.log").read_bytes()
    reader = MemoryRecords(data)
    offsets = []
    while reader.has_next():
        batch = reader.next_batch()
        assert batch.validate_crc()
        offsets.extend(r.offset for r in batch)
    assert offsets == [r["offset"] for r in data_rows(read_all(dst / f"{0:020d}.log"))]


def test_struct_of_an_empty_batch_is_kafkas(tmp_path):
    """The emptied batch is 61 bytes, no codec, base timestamp -1 (writeEmptyHeader)."""
    src = transactional_log(tmp_path / "in")
    dst = tmp_path / "out" / "t-0"
    kafkalog.compact(src, dst, now=T0, producer_id_expiration_ms=None)
    b = kafkalog.read_batches(dst).read_all().to_pylist()[1]
    assert (b["batchSize"], b["recordCount"], b["baseTimestamp"]) == (61, 0, -1)
    raw = (dst / f"{0:020d}.log").read_bytes()[b["batchPosition"] :][:61]
    (records,) = struct.unpack(">i", raw[57:61])
    assert records == 0


# --- Spark --------------------------------------------------------------------------------------


def test_spark_compaction_equals_the_local_one(tmp_path, spark_crash_dir):
    pytest.importorskip("pyspark")
    import sys

    from pyspark.sql import SparkSession

    import kafkalog.spark.cleanup

    logs = tmp_path / "logs"
    segments = random_segments(12, [(1, "gzip"), (2, "lz4"), (2, "zstd")])
    write_partition(logs, "users", 0, [*segments, active_segment(segments_end(segments))])
    transactional_log(logs, "orders")
    now = T0 + 5_000
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kafkalog-cleanup-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # The session-wide crash directory: whichever session starts the JVM, the later ones
        # run in it (tests/test_spark_first_day.py checks the driver's option).
        .config(map=jvm_crash.spark_conf(spark_crash_dir))
        .getOrCreate()
    )
    try:
        reports = kafkalog.spark.cleanup.compact(
            spark, logs, tmp_path / "spark", now=now, producer_id_expiration_ms=None
        )
    finally:
        spark.stop()
        jvm_crash.check(spark_crash_dir)
    assert sorted(os.path.basename(r["dir"]) for r in reports) == ["orders-0", "users-0"]
    assert all(r["cleaned"] for r in reports)
    for name in ("users-0", "orders-0"):
        local = tmp_path / "local" / name
        kafkalog.compact(logs / name, local, now=now, producer_id_expiration_ms=None)
        assert snapshot_logs(tmp_path / "spark" / name) == snapshot_logs(local)
