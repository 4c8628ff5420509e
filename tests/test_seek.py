"""Bounded reads through the indexes, read_committed, index files, verify and rebuild_indexes.

Every bounded read is checked against a brute-force model computed from an unbounded read (or,
for transactions, from the batches as they were built): offsets are exclusive at the end;
timestamps mean what Kafka's ListOffsets (and so Spark's Kafka source) gives, the earliest
offset whose record timestamp is at or after the target (``FileRecords.searchForTimestamp``:
every batch counts, control batches included); read_committed is an independent model of
Kafka's consumer (``docs/format.md`` section 4). Index files are checked against the
lookup rules and real broker files (section 5), verify against section 7.3-7.4, and
rebuild_indexes against log recovery (section 6).
"""

from __future__ import annotations

import bisect
import functools
import json
import random
import shutil
import struct
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import kafkalog
from conftest import CORPUS, REPO
from kafka_builders import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    Rec,
    Segment,
    build_batch,
    control_batch,
    with_records_stream,
    write_partition,
)

T0 = 1_700_000_000_000  # ms
OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY = 8, 12, 34
EXAMPLES = REPO / "examples" / "logs"
SEGMENTS = CORPUS / "segments"
EXPECTED = CORPUS / "expected"
INVOICE = SEGMENTS / "dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0"
OFFSETS_15 = SEGMENTS / "nomanazeem__Kafka-java/kafka-logs/__consumer_offsets-15"
OFFSETS_6 = SEGMENTS / "Niloufar1171__LDI-POC/__consumer_offsets-6"
INF = float("inf")


# --- helpers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One record as read: where it is, its offset, timestamp (ms, None when absent), content."""

    topic: str | None
    partition: int | None
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None


def rows_of(table: pa.Table) -> list[Row]:
    micros = table.column("timestamp").cast(pa.int64()).to_pylist()
    return [
        Row(t, p, o, None if us is None else us // 1000, k, v)
        for t, p, o, us, k, v in zip(
            table.column("topic").to_pylist(),
            table.column("partition").to_pylist(),
            table.column("offset").to_pylist(),
            micros,
            table.column("key").to_pylist(),
            table.column("value").to_pylist(),
            strict=True,
        )
    ]


class Seen:
    """The IndexNotUsedWarnings (and any other kafkalog warnings) a block raised."""

    def __init__(self) -> None:
        self.caught: list[warnings.WarningMessage] = []

    @property
    def index_not_used(self) -> list[str]:
        return [
            str(w.message)
            for w in self.caught
            if issubclass(w.category, kafkalog.IndexNotUsedWarning)
        ]


def _inverted(options: dict) -> bool:
    """Bounds whose end comes before their start, which kafkalog refuses (the model reads
    nothing for them)."""

    def ms(value):  # kafkalog reads a naive datetime as UTC
        if isinstance(value, datetime):
            return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp() * 1000
        return value

    return any(
        options.get(start) is not None
        and options.get(end) is not None
        and ms(options[end]) < ms(options[start])
        for start, end in (("start_offset", "end_offset"), ("start_timestamp", "end_timestamp"))
    )


def _read(path, **options) -> pa.Table:
    """``kafkalog.read(...).read_all()``; for inverted bounds, checks that they are refused
    and returns what the model expects of them: no rows."""
    if _inverted(options):
        with pytest.raises(kafkalog.InvalidArgumentError, match="is before"):
            kafkalog.read(path, **options)
        options = {k: v for k, v in options.items() if not k.startswith(("start_", "end_"))}
        return kafkalog.read(path, **options).read_all().slice(0, 0)
    return kafkalog.read(path, **options).read_all()


def read_rows(path, seen: Seen | None = None, **options) -> list[Row]:
    """Rows of a read, with every warning recorded in ``seen``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = _read(path, **options)
    if seen is not None:
        seen.caught += caught
    return rows_of(table)


def read_offsets(path, seen: Seen | None = None, **options) -> dict[tuple, list[int]]:
    """The offsets a read returns, by (topic, partition)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = _read(path, columns=["topic", "partition", "offset"], **options)
    if seen is not None:
        seen.caught += caught
    out = {}
    for topic in pc.unique(table.column("topic")).to_pylist():
        of_topic = table.filter(pc.equal(table.column("topic"), topic))
        for number in pc.unique(of_topic.column("partition")).to_pylist():
            mask = pc.equal(of_topic.column("partition"), number)
            out[(topic, number)] = of_topic.filter(mask).column("offset").to_pylist()
    return out


def by_partition(rows: list[Row]) -> dict[tuple, list[Row]]:
    out: dict[tuple, list[Row]] = defaultdict(list)
    for r in rows:
        out[(r.topic, r.partition)].append(r)
    return out


def first_at_or_after(rows: list[Row], timestamp: int, min_offset=-INF) -> int | None:
    """Kafka's offset for a timestamp: the earliest record whose timestamp is at or after it;
    records without a timestamp (v0: -1) never are."""
    for r in rows:
        if r.offset >= min_offset and r.timestamp is not None and r.timestamp >= timestamp:
            return r.offset
    return None


class Model:
    """What a bounded read returns, partition by partition, computed from an unbounded read.
    (For partitions with control records, whose timestamps count in Kafka's lookups, see
    the transaction tests.)"""

    def __init__(self, data: list[Row]) -> None:
        self.parts = {}
        for part, rows in by_partition(data).items():
            running, top = [], -INF
            for r in rows:  # running maximum: the first reaching T is the earliest at/after T
                top = max(top, -INF if r.timestamp is None else r.timestamp)
                running.append(top)
            self.parts[part] = (rows, [r.offset for r in rows], running)

    def __call__(
        self, *, start_offset=None, end_offset=None, start_timestamp=None, end_timestamp=None
    ) -> list[Row]:
        out = []
        for rows, offsets, running in self.parts.values():
            lo = -INF if start_offset is None else start_offset
            hi = INF if end_offset is None else end_offset
            if start_timestamp is not None:
                i = bisect.bisect_left(running, start_timestamp)
                if i < len(rows) and rows[i].offset < lo:
                    # with both: the earliest offset from start_offset on at or after the
                    # timestamp (Kafka's findOffsetByTimestamp(ts, startingOffset))
                    found = first_at_or_after(rows, start_timestamp, lo)
                else:
                    found = rows[i].offset if i < len(rows) else None
                if found is None:
                    continue
                lo = max(lo, found)
            if end_timestamp is not None:
                i = bisect.bisect_left(running, end_timestamp)
                if i < len(rows):
                    hi = min(hi, rows[i].offset)
            out += rows[bisect.bisect_left(offsets, lo) : bisect.bisect_left(offsets, hi)]
        return out


def model(data: list[Row], **bounds) -> list[Row]:
    return Model(data)(**bounds)


def keys(rows: list[Row]) -> dict[tuple, list[int]]:
    """Offsets by (topic, partition), as :func:`read_offsets` gives them."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for r in rows:
        out[(r.topic, r.partition)].append(r.offset)
    return dict(out)


def partition_table(
    rng: random.Random,
    n: int,
    *,
    first_offset: int = 0,
    gaps: bool = True,
    monotonic: bool = False,
) -> pa.Table:
    """``n`` records with compressible values, offset gaps (as compaction leaves them) and
    timestamps either non-decreasing or jumping back and forth, with repeats."""
    offsets, timestamps = [], []
    offset, ts = first_offset, T0
    for _ in range(n):
        offsets.append(offset)
        offset += rng.choice([1, 1, 1, 2, 5]) if gaps else 1
        if monotonic:
            ts += rng.choice([0, 0, 1, 3, 10])
            timestamps.append(ts)
        else:
            timestamps.append(T0 + rng.randrange(0, 400, 4))
    return pa.table(
        {
            "offset": pa.array(offsets, pa.int64()),
            "key": pa.array([b"key-%d" % o for o in offsets], pa.binary()),
            "value": pa.array([b"value-%d|" % o * rng.randint(1, 12) for o in offsets]),
            "timestamp": pa.array(timestamps, pa.int64()),
        }
    )


def write_partition_dir(path: Path, table: pa.Table, **options) -> list[dict]:
    options.setdefault("segment_bytes", 3000)
    options.setdefault("index_interval_bytes", 250)
    options.setdefault("batch_records", 4)
    return kafkalog.write(path, table, **options)


def segment_logs(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.log"))


def batches_of(source) -> list[dict]:
    return kafkalog.read_batches(source).read_all().to_pylist()


def index_entries(path: Path) -> list[dict]:
    return kafkalog.read_index(path).to_pylist()


def copy_partition(src: Path, dst: Path) -> Path:
    """A writable copy of a partition directory (the corpus is read-only and must stay as is)."""
    shutil.copytree(src, dst)
    for p in dst.iterdir():
        p.chmod(0o644)
    return dst


def interesting_offsets(directory: Path, rows: list[Row]) -> list[int]:
    """Offsets where seeks go wrong: segment bases and their neighbours, index entries and
    theirs, the first and last offsets, offsets in gaps, before and after everything."""
    out = {-5, 0, 1}
    offsets = [r.offset for r in rows]
    out |= {offsets[0], offsets[-1], offsets[-1] + 1, offsets[-1] + 100}
    for log in segment_logs(directory):
        base = int(log.name[:20])
        out |= {base - 1, base, base + 1}
        index = log.with_suffix(".index")
        if index.exists():
            for e in index_entries(index):
                out |= {e["offset"] - 1, e["offset"], e["offset"] + 1}
    present = set(offsets)
    out |= {o for o in range(offsets[0], offsets[-1]) if o not in present}  # gaps
    return sorted(out)


def check_offset_pairs(directory: Path, pairs) -> None:
    """Each (start, end) read is the full read's slice, and no index was refused."""
    m = Model(read_rows(directory))
    seen = Seen()
    for start, end in pairs:
        got = read_rows(directory, seen, start_offset=start, end_offset=end)
        assert got == m(start_offset=start, end_offset=end), (start, end)
    assert seen.index_not_used == []


# --- 1. offset and timestamp bounds vs full reads ---------------------------------------------


@functools.cache
def invoice_rows() -> tuple[Row, ...]:
    return tuple(read_rows(INVOICE))


@functools.cache
def invoice_model() -> Model:
    return Model(list(invoice_rows()))


def test_invoice_is_a_multi_segment_partition(corpus):
    logs = segment_logs(INVOICE)
    assert [int(p.name[:20]) for p in logs] == [0, 30626, 60611, 90867]
    rows = invoice_rows()
    assert len(rows) == 100_294
    assert [r.offset for r in rows] == list(range(100_294))
    assert all(a.timestamp <= b.timestamp for a, b in zip(rows, rows[1:], strict=False))


def test_offset_bounds_invoice(corpus):
    """Random and edge (start, end) pairs on a real broker's 4-segment partition: the bounded
    read is the full read's slice, whichever segment and index entry each bound falls near."""
    rows = list(invoice_rows())
    m = invoice_model()
    rng = random.Random(1)
    edges = interesting_offsets(INVOICE, rows)
    pairs = [(rng.choice(edges), rng.choice(edges)) for _ in range(25)]
    pairs += [(s, s + rng.randint(0, 3000)) for s in rng.sample(range(100_400), 30)]
    pairs += [(None, 17_000), (93_000, None), (30_626, 30_627), (30_625, 30_626), (0, 0)]
    seen = Seen()
    for start, end in pairs:
        got = read_offsets(INVOICE, seen, start_offset=start, end_offset=end)
        assert got == keys(m(start_offset=start, end_offset=end)), (start, end)
    # the last segment has no index: only it may be scanned
    assert all("00000000000000090867.index" in m for m in seen.index_not_used)


def test_offset_bounds_return_whole_records_invoice(corpus):
    """Not only the offsets: keys, values and timestamps of a seek's rows are the full read's."""
    m = invoice_model()
    for start, end in [(4_641, 4_700), (30_620, 30_700), (61_000, 61_010), (100_290, None)]:
        assert read_rows(INVOICE, start_offset=start, end_offset=end) == m(
            start_offset=start, end_offset=end
        )


def test_timestamp_bounds_invoice(corpus):
    rows = list(invoice_rows())
    m = invoice_model()
    stamps = sorted({r.timestamp for r in rows})
    rng = random.Random(2)
    targets = [stamps[0] - 1, stamps[0], stamps[-1], stamps[-1] + 1]
    targets += rng.sample(stamps, 8)
    targets += [t + 1 for t in rng.sample(stamps, 4)]  # between records (or equal to the next)
    seen = Seen()
    for t in targets:
        got = read_offsets(INVOICE, seen, start_timestamp=t)
        assert got == keys(m(start_timestamp=t)), t
        got = read_offsets(INVOICE, seen, end_timestamp=t)
        assert got == keys(m(end_timestamp=t)), t
    for _ in range(6):
        a, b = sorted(rng.sample(stamps, 2))
        got = read_offsets(INVOICE, seen, start_timestamp=a, end_timestamp=b)
        assert got == keys(m(start_timestamp=a, end_timestamp=b)), (a, b)
    assert all("00000000000000090867" in m for m in seen.index_not_used)


def test_offset_and_timestamp_bounds_combined_invoice(corpus):
    rows = list(invoice_rows())
    m = invoice_model()
    stamps = sorted({r.timestamp for r in rows})
    rng = random.Random(3)
    for _ in range(15):
        bounds = {
            "start_offset": rng.choice([None, rng.randrange(100_294)]),
            "end_offset": rng.choice([None, rng.randrange(100_294)]),
            "start_timestamp": rng.choice([None, rng.choice(stamps)]),
            "end_timestamp": rng.choice([None, rng.choice(stamps) + rng.randint(0, 1)]),
        }
        got = read_offsets(INVOICE, **bounds)
        assert got == keys(m(**bounds)), bounds


PARTITION_FORMATS = [
    (2, "none"),
    (2, "zstd"),
    (2, "gzip"),
    (1, "none"),
    (1, "snappy"),
    (0, "none"),
    (0, "lz4"),
]
FORMAT_IDS = [f"v{m}-{c}" for m, c in PARTITION_FORMATS]


@pytest.mark.parametrize(("magic", "codec"), PARTITION_FORMATS, ids=FORMAT_IDS)
def test_offset_bounds_written_partition(tmp_path, magic, codec):
    """Partitions of many small segments, each with offset and time indexes, offsets with
    gaps and a base offset that is not 0: every (start, end) pair reads the full read's slice,
    through the indexes (no index is ever refused)."""
    rng = random.Random(magic * 10 + len(codec))
    out = tmp_path / "bounds-0"
    summary = write_partition_dir(
        out, partition_table(rng, 400, first_offset=1_000), magic=magic, compression=codec
    )
    assert len(summary) >= 4
    entries = [len(index_entries(Path(s["path"]).with_suffix(".index"))) for s in summary]
    assert min(entries[:-1]) >= 2, entries
    rows = read_rows(out)
    assert len(rows) == 400
    edges = interesting_offsets(out, rows)
    pairs = [(rng.choice(edges), rng.choice(edges)) for _ in range(15)]
    pairs += [(s, s + rng.randint(1, 60)) for s in rng.sample(edges, 6)]
    pairs += [(rng.choice(edges), None), (None, rng.choice(edges)), (None, None)]
    check_offset_pairs(out, pairs)


@pytest.mark.parametrize(("magic", "codec"), PARTITION_FORMATS[:5], ids=FORMAT_IDS[:5])
def test_timestamp_bounds_written_partition(tmp_path, magic, codec):
    """Timestamps jumping back and forth, with repeats: a start timestamp starts at the
    earliest offset at or after it (records after it with smaller timestamps included), an
    end timestamp ends before the earliest offset at or after it."""
    rng = random.Random(100 + magic)
    out = tmp_path / "times-0"
    write_partition_dir(
        out, partition_table(rng, 300, first_offset=50), magic=magic, compression=codec
    )
    rows = read_rows(out)
    stamps = sorted({r.timestamp for r in rows})
    targets = [stamps[0] - 1, stamps[0], stamps[-1], stamps[-1] + 1, T0 - 10**6, T0 + 10**9]
    targets += rng.sample(stamps, 8) + [t + 1 for t in rng.sample(stamps, 4)]
    seen = Seen()
    for t in targets:
        for bounds in ({"start_timestamp": t}, {"end_timestamp": t}):
            assert read_rows(out, seen, **bounds) == model(rows, **bounds), bounds
    for _ in range(8):
        a, b = sorted(rng.sample(stamps, 2))
        bounds = {"start_timestamp": a, "end_timestamp": b}
        assert read_rows(out, seen, **bounds) == model(rows, **bounds), bounds
    assert seen.index_not_used == []


@pytest.mark.parametrize(("magic", "codec"), [(2, "none"), (2, "lz4"), (1, "gzip")])
def test_offset_and_timestamp_bounds_combined(tmp_path, magic, codec):
    """Both kinds of bounds at once (non-decreasing timestamps, where "the earliest offset at
    or after T" and "from start_offset on, the earliest offset at or after T" agree)."""
    rng = random.Random(200 + magic)
    out = tmp_path / "combined-0"
    write_partition_dir(
        out, partition_table(rng, 300, monotonic=True), magic=magic, compression=codec
    )
    rows = read_rows(out)
    stamps = sorted({r.timestamp for r in rows})
    offsets = [r.offset for r in rows]
    seen = Seen()
    for _ in range(20):
        bounds = {
            "start_offset": rng.choice([None, rng.choice(offsets), rng.choice(offsets) + 1]),
            "end_offset": rng.choice([None, rng.choice(offsets), rng.choice(offsets) + 1]),
            "start_timestamp": rng.choice([None, rng.choice(stamps), rng.choice(stamps) + 1]),
            "end_timestamp": rng.choice([None, rng.choice(stamps), rng.choice(stamps) + 2]),
        }
        assert read_rows(out, seen, **bounds) == model(rows, **bounds), bounds
    assert seen.index_not_used == []


def test_datetime_bounds_are_milliseconds(tmp_path):
    rng = random.Random(4)
    out = tmp_path / "dt-0"
    write_partition_dir(out, partition_table(rng, 120, monotonic=True))
    rows = read_rows(out)
    t1, t2 = rows[30].timestamp, rows[90].timestamp
    as_dt = {
        "start_timestamp": datetime.fromtimestamp(t1 / 1000, UTC),
        "end_timestamp": datetime.fromtimestamp(t2 / 1000, UTC).replace(tzinfo=None),  # UTC
    }
    want = model(rows, start_timestamp=t1, end_timestamp=t2)
    assert want and read_rows(out, **as_dt) == want


def test_v0_records_have_no_timestamp(tmp_path):
    """Magic v0 records carry no timestamp (-1): none is at or after any start timestamp, and
    none ends a read by end timestamp."""
    out = tmp_path / "v0-0"
    write_partition_dir(out, partition_table(random.Random(5), 80), magic=0)
    rows = read_rows(out)
    assert {r.timestamp for r in rows} == {None}
    assert read_rows(out, start_timestamp=0) == []
    assert read_rows(out, start_timestamp=T0) == []
    assert read_rows(out, end_timestamp=T0) == rows
    assert read_rows(out, start_offset=20, end_timestamp=0) == model(rows, start_offset=20)


def test_log_append_time_partition(tmp_path):
    """LogAppendTime batches (v1 wrappers, then v2 after an upgrade): a record's timestamp is
    its batch's append time, whatever CreateTime the producer put in the record."""
    segments, appended = [], []
    offset = 0
    for s, (magic, codec) in enumerate([(1, "gzip"), (2, "none"), (2, "snappy")]):
        seg = None
        for b in range(4):
            recs = [
                Rec(b"k", b"value-%d|" % (offset + i) * 8, T0 + 10_000 - offset - i)
                for i in range(3)
            ]
            append = T0 + 100 * (4 * s + b) - (150 if b == 2 else 0)  # one step back in time
            one = build_batch("kafka-python", magic, codec, recs, offset, log_append_time=append)
            seg = one if seg is None else seg + one
            appended += [append] * 3
            offset += 3
        segments.append(seg)
    out = write_partition(tmp_path, "lat", 0, segments)
    rows = read_rows(out)
    assert [r.timestamp for r in rows] == appended
    for t in sorted(set(appended)) + [T0 - 1, T0 + 10**6] + [a + 1 for a in appended[::3]]:
        for bounds in ({"start_timestamp": t}, {"end_timestamp": t}):
            assert read_rows(out, **bounds) == model(rows, **bounds), bounds


def test_bounds_apply_per_partition_of_a_log_dir(tmp_path):
    """A log directory of several partitions (different bases, formats, segment sizes): every
    bound applies to each partition separately."""
    rng = random.Random(7)
    logs = tmp_path / "logs"
    specs = [
        ("alpha", 0, 0, 2, "none"),
        ("alpha", 1, 120, 2, "gzip"),
        ("beta", 0, 0, 1, "none"),
        ("beta", 3, 10_000, 2, "zstd"),
    ]
    for topic, part, first, magic, codec in specs:
        write_partition_dir(
            logs / f"{topic}-{part}",
            partition_table(rng, 150, first_offset=first),
            magic=magic,
            compression=codec,
            segment_bytes=rng.choice([1500, 2500, 4000]),
        )
    rows = read_rows(logs)
    assert {(r.topic, r.partition) for r in rows} == {(s[0], s[1]) for s in specs}
    stamps = sorted({r.timestamp for r in rows})
    offsets = sorted({r.offset for r in rows})
    seen = Seen()
    for _ in range(25):
        bounds = {
            "start_offset": rng.choice([None, rng.choice(offsets)]),
            "end_offset": rng.choice([None, rng.choice(offsets) + 1]),
        }
        if rng.random() < 0.5:
            bounds["start_timestamp"] = rng.choice(stamps)
            bounds["start_offset"] = None  # the timestamps are not monotonic: one kind of start
        if rng.random() < 0.5:
            bounds["end_timestamp"] = rng.choice(stamps) + rng.randint(0, 1)
        assert keys(read_rows(logs, seen, **bounds)) == keys(model(rows, **bounds)), bounds
    assert seen.index_not_used == []


def test_offsets_beyond_32_bits(tmp_path):
    """Base offsets past 2^32: index entries are relative to the segment's base."""
    rng = random.Random(17)
    out = tmp_path / "big-0"
    write_partition_dir(out, partition_table(rng, 200, first_offset=2**33 + 5), compression="lz4")
    rows = read_rows(out)
    assert rows[0].offset == 2**33 + 5
    edges = interesting_offsets(out, rows)
    check_offset_pairs(out, [(rng.choice(edges), rng.choice(edges)) for _ in range(12)])


def test_segments_whose_first_batch_is_past_their_base(tmp_path):
    """After compaction a segment keeps its base offset (its file name) while its first
    batches are gone: starts between the base and the first batch, and lookups in an index
    relative to that base, read the right records."""
    rng = random.Random(18)
    out = tmp_path / "compacted-0"
    write_partition_dir(out, partition_table(rng, 300))
    logs = segment_logs(out)
    ends = [batches_of(log)[-1]["lastOffset"] for log in logs]
    renamed = 0
    for log, previous_end in zip(logs[1:], ends, strict=False):
        base, new_base = int(log.name[:20]), previous_end + 1
        if new_base < base:
            renamed += 1
            for suffix in (".log", ".index", ".timeindex"):
                old = log.with_suffix(suffix)
                old.rename(old.with_name(f"{new_base:020d}{suffix}"))
    assert renamed >= 2
    kafkalog.rebuild_indexes(out, index_interval_bytes=250)  # relative to the new bases
    assert kafkalog.verify(out)["problems"] == []
    rows = read_rows(out)
    edges = interesting_offsets(out, rows)
    check_offset_pairs(out, [(rng.choice(edges), rng.choice(edges)) for _ in range(25)])


# --- 2. the first segment is entered through its .index -----------------------------------------


def write_index(path: Path, base: int, entries) -> None:
    path.write_bytes(b"".join(struct.pack(">ii", o - base, p) for o, p in entries))


def write_time_index(path: Path, base: int, entries) -> None:
    path.write_bytes(b"".join(struct.pack(">qi", t, o - base) for t, o in entries))


@pytest.fixture
def seekable(tmp_path) -> Path:
    """A v2 partition of several segments with offset gaps, non-decreasing timestamps and
    offset/time index entries every few batches."""
    out = tmp_path / "seek-0"
    table = partition_table(random.Random(8), 400, first_offset=1_000, monotonic=True)
    write_partition_dir(out, table, segment_bytes=6000, index_interval_bytes=400)
    return out


def second_segment(directory: Path) -> Path:
    """A segment in the middle of the partition (seeks start in the first segment read, which
    is the one holding the start offset)."""
    logs = segment_logs(directory)
    assert len(logs) >= 3
    return logs[1]


def targets_in(log: Path, rows: list[Row]) -> list[int]:
    """Every offset in ``log``'s range, gaps included (``rows``: the partition's records)."""
    logs = segment_logs(log.parent)
    i = logs.index(log)
    base = int(log.name[:20])
    end = int(logs[i + 1].name[:20]) if i + 1 < len(logs) else rows[-1].offset + 1
    return list(range(base, end))


def check_seeks(directory: Path, rows: list[Row], log: Path, *, must_warn: bool) -> None:
    """Start offsets all over ``log``: each read is the full read's slice; the
    IndexNotUsedWarning is given for ``log``'s index when ``must_warn``, never when not."""
    m = Model(rows)
    index = str(log.with_suffix(".index"))
    warned = 0
    for start in targets_in(log, rows):
        seen = Seen()
        got = read_rows(directory, seen, start_offset=start, end_offset=start + 40)
        assert got == m(start_offset=start, end_offset=start + 40), start
        mine = [w for w in seen.index_not_used if index in w]
        assert len(mine) == len(seen.index_not_used), seen.index_not_used
        warned += bool(mine)
        if not must_warn:
            assert not mine, (start, mine)
    if must_warn:
        assert warned, "a bad index was used without a warning"


def test_good_indexes_are_used_silently(seekable):
    rows = read_rows(seekable)
    log = second_segment(seekable)
    check_seeks(seekable, rows, log, must_warn=False)


def test_bounds_on_a_single_segment_file(seekable):
    """A .log file given alone is still entered through the .index beside it."""
    log = second_segment(seekable)
    rows = read_rows(log)
    m = Model(rows)
    seen = Seen()
    for start in targets_in(log, read_rows(seekable))[::2]:
        got = read_rows(log, seen, start_offset=start, end_offset=start + 9)
        assert got == m(start_offset=start, end_offset=start + 9)
    assert seen.index_not_used == []


def test_seek_jumps_over_damage_before_the_entry(seekable):
    """Proof that the .index is used: with the segment's first batch destroyed (size 0, as
    preallocated space reads), a scan cannot get past it, but a seek to an indexed offset
    never reads it."""
    rows = read_rows(seekable)
    m = Model(rows)
    log = second_segment(seekable)
    entries = index_entries(log.with_suffix(".index"))
    assert len(entries) >= 3
    data = bytearray(log.read_bytes())
    data[:61] = bytes(61)
    log.write_bytes(bytes(data))
    with pytest.raises(kafkalog.CorruptRecordError):
        kafkalog.read(seekable).read_all()
    for e in entries:
        for start in (e["offset"], e["offset"] + 1):
            seen = Seen()
            assert read_rows(seekable, seen, start_offset=start) == m(start_offset=start)
            assert seen.index_not_used == []


def test_timestamp_seek_jumps_over_damage_before_the_entry(seekable):
    """The same for the .timeindex: a start timestamp past the first time entry's is found
    from the time index and the offset index, without reading the destroyed first batch."""
    rows = read_rows(seekable)
    m = Model(rows)
    log = second_segment(seekable)
    times = index_entries(log.with_suffix(".timeindex"))
    assert len(times) >= 3
    targets = {r.timestamp for r in rows if times[0]["offset"] < r.offset <= times[-1]["offset"]}
    targets = {t for t in targets if t > times[0]["timestamp"]}
    assert len(targets) > 5
    data = bytearray(log.read_bytes())
    data[:61] = bytes(61)
    log.write_bytes(bytes(data))
    for t in sorted(targets):
        seen = Seen()
        assert read_rows(seekable, seen, start_timestamp=t) == m(start_timestamp=t), t
        assert seen.index_not_used == []


def test_entry_into_the_middle_of_a_batch_is_not_used(seekable):
    rows = read_rows(seekable)
    log = second_segment(seekable)
    base = int(log.name[:20])
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    batches = batches_of(log)
    inside = set(targets_in(log, rows))
    for k in range(len(entries)):
        bad = list(entries)
        offset, position = bad[k]
        size = next(b["batchSize"] for b in batches if b["batchPosition"] == position)
        for shift in (1, 12, 61, size // 2):
            bad[k] = (offset, position + shift)
            write_index(log.with_suffix(".index"), base, bad)
            for start in {offset, offset + 1} & inside:
                seen = Seen()
                got = read_rows(seekable, seen, start_offset=start, end_offset=start + 30)
                assert got == model(rows, start_offset=start, end_offset=start + 30)
                assert seen.index_not_used, (k, shift, start)
    write_index(log.with_suffix(".index"), base, entries)
    check_seeks(seekable, rows, log, must_warn=False)


def test_entry_into_a_batch_whose_records_hold_a_batch(tmp_path):
    """Record values that are themselves Kafka batches (raw log bytes stored in a topic): an
    index entry moved to the start of such a value lands on bytes that frame as a well-formed
    batch with plausible offsets. It is still not a batch of this log: the read must not
    return the embedded record, nor lose the real ones."""
    fake = build_batch("kafka-python", 2, "none", [Rec(b"fake", b"FAKE", T0)], 8).data
    n = 60
    table = pa.table(
        {
            "offset": pa.array(range(n), pa.int64()),
            "key": pa.array([b"key-%d" % i for i in range(n)]),
            "value": pa.array([b"x" * 10 + fake + b"y" * 10] * n),
            "timestamp": pa.array([T0 + i for i in range(n)], pa.int64()),
        }
    )
    out = tmp_path / "embedded-0"
    kafkalog.write(out, table, batch_records=3, index_interval_bytes=200)
    rows = read_rows(out)
    log = segment_logs(out)[0]
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    offset, position = entries[1]
    assert offset == 8
    entries[1] = (offset, log.read_bytes().index(fake, position))
    write_index(log.with_suffix(".index"), 0, entries)
    seen = Seen()
    got = read_rows(out, seen, start_offset=8, end_offset=11)
    assert [(r.offset, r.key) for r in got] == [(8, b"key-8"), (9, b"key-9"), (10, b"key-10")]
    assert got == model(rows, start_offset=8, end_offset=11)


def test_missing_index_means_a_scan(seekable):
    rows = read_rows(seekable)
    log = second_segment(seekable)
    log.with_suffix(".index").unlink()
    check_seeks(seekable, rows, log, must_warn=True)


def test_stale_index_claiming_later_offsets(seekable):
    """Entries that name offsets later than those at their positions (lookups then start
    early, which a forward scan tolerates)."""
    rows = read_rows(seekable)
    log = second_segment(seekable)
    base = int(log.name[:20])
    batches = batches_of(log)
    stale = [
        (batches[i + 2]["lastOffset"], batches[i]["batchPosition"])
        for i in range(1, len(batches) - 2, 2)
    ]
    write_index(log.with_suffix(".index"), base, stale)
    for start in targets_in(log, rows):
        assert read_rows(seekable, start_offset=start, end_offset=start + 40) == model(
            rows, start_offset=start, end_offset=start + 40
        ), start


def test_stale_index_claiming_earlier_offsets(seekable):
    """Well-formed entries at real batch starts, but for offsets that lie in earlier batches:
    trusting them would skip records. They must be caught (and the segment scanned)."""
    rows = read_rows(seekable)
    log = second_segment(seekable)
    base = int(log.name[:20])
    batches = batches_of(log)
    stale = [
        (batches[i]["lastOffset"], batches[i + 2]["batchPosition"])
        for i in range(1, len(batches) - 2, 2)
    ]
    write_index(log.with_suffix(".index"), base, stale)
    check_seeks(seekable, rows, log, must_warn=True)


def test_stale_index_of_another_segment(seekable):
    """The .index of a different segment (of the same partition, so its entries are
    well-formed and may land on batch starts), left beside this one."""
    rows = read_rows(seekable)
    logs = segment_logs(seekable)
    for donor, victim in [(logs[2], logs[1]), (logs[0], logs[1]), (logs[1], logs[0])]:
        original = victim.with_suffix(".index").read_bytes()
        shutil.copyfile(donor.with_suffix(".index"), victim.with_suffix(".index"))
        for start in targets_in(victim, rows):
            got = read_rows(seekable, start_offset=start, end_offset=start + 40)
            assert got == model(rows, start_offset=start, end_offset=start + 40), (donor, start)
        victim.with_suffix(".index").write_bytes(original)


def test_index_of_a_different_partition(seekable, tmp_path):
    """An index copied from an unrelated partition (other record sizes: its positions are
    anywhere in this log)."""
    rows = read_rows(seekable)
    other = tmp_path / "other-0"
    write_partition_dir(
        other,
        partition_table(random.Random(9), 300, first_offset=1_000),
        segment_bytes=6000,
        index_interval_bytes=100,
    )
    log = second_segment(seekable)
    donor = next(p for p in segment_logs(other) if len(index_entries(p.with_suffix(".index"))) > 5)
    shutil.copyfile(donor.with_suffix(".index"), log.with_suffix(".index"))
    for start in targets_in(log, rows):
        got = read_rows(seekable, start_offset=start, end_offset=start + 40)
        assert got == model(rows, start_offset=start, end_offset=start + 40), start


def test_index_entry_past_the_end_of_the_log(seekable):
    rows = read_rows(seekable)
    log = second_segment(seekable)
    base = int(log.name[:20])
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    entries.append((entries[-1][0] + 3, log.stat().st_size + 100))
    write_index(log.with_suffix(".index"), base, entries)
    check_seeks(seekable, rows, log, must_warn=True)


def test_index_with_a_partial_entry(seekable):
    """A length that is not a multiple of 8 fails Kafka's sanity check."""
    rows = read_rows(seekable)
    log = second_segment(seekable)
    with log.with_suffix(".index").open("ab") as f:
        f.write(b"\x00\x00\x00")
    check_seeks(seekable, rows, log, must_warn=True)


def test_index_entries_out_of_order(seekable):
    rows = read_rows(seekable)
    log = second_segment(seekable)
    base = int(log.name[:20])
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    entries[0], entries[1] = entries[1], entries[0]
    write_index(log.with_suffix(".index"), base, entries)
    check_seeks(seekable, rows, log, must_warn=True)


def test_preallocated_index_is_used(seekable):
    """An active segment's index as a running broker leaves it: real entries, then zero slots
    up to the preallocated size. The entries are used; the zero slots are not entries."""
    rows = read_rows(seekable)
    log = second_segment(seekable)
    index, timeindex = log.with_suffix(".index"), log.with_suffix(".timeindex")
    entries, times = index_entries(index), index_entries(timeindex)
    index.write_bytes(index.read_bytes() + bytes(OFFSET_ENTRY * 50))
    timeindex.write_bytes(timeindex.read_bytes() + bytes(TIME_ENTRY * 50))
    assert index_entries(index) == entries
    assert index_entries(timeindex) == times
    check_seeks(seekable, rows, log, must_warn=False)
    for t in sorted({r.timestamp for r in rows})[::7]:
        seen = Seen()
        assert read_rows(seekable, seen, start_timestamp=t) == model(rows, start_timestamp=t)
        assert seen.index_not_used == []


def test_empty_index_is_a_scan_from_the_start(seekable):
    """An empty .index (a segment smaller than index.interval.bytes): the lookup gives the
    segment's start, which is correct."""
    rows = read_rows(seekable)
    log = second_segment(seekable)
    log.with_suffix(".index").write_bytes(b"")
    for start in targets_in(log, rows)[::3]:
        assert read_rows(seekable, start_offset=start) == model(rows, start_offset=start)


@pytest.mark.parametrize("damage", ["missing", "partial-entry", "out-of-order"])
def test_unusable_time_index_means_a_scan(seekable, damage):
    rows = read_rows(seekable)
    log = second_segment(seekable)
    path = log.with_suffix(".timeindex")
    base = int(log.name[:20])
    if damage == "missing":
        path.unlink()
    elif damage == "partial-entry":
        path.write_bytes(path.read_bytes() + b"\x07")
    else:
        times = [(e["timestamp"], e["offset"]) for e in index_entries(path)]
        times[0], times[1] = times[1], times[0]
        write_time_index(path, base, times)
    m = Model(rows)
    inside = sorted({r.timestamp for r in rows if base <= r.offset})
    warned = False
    for t in inside[:60:4]:
        seen = Seen()
        assert read_rows(seekable, seen, start_timestamp=t) == m(start_timestamp=t), t
        assert all(str(path) in w for w in seen.index_not_used)
        warned |= bool(seen.index_not_used)
    assert warned


def test_stale_time_index(seekable):
    """A .timeindex whose entries understate the timestamps (from another segment, or older
    than the log): trusting "nothing up to offset O reaches T" would skip the records that do."""
    rows = read_rows(seekable)
    log = second_segment(seekable)
    base = int(log.name[:20])
    times = index_entries(log.with_suffix(".timeindex"))
    lowered = [(T0 - 1000 + i, e["offset"]) for i, e in enumerate(times)]
    write_time_index(log.with_suffix(".timeindex"), base, lowered)
    m = Model(rows)
    inside = sorted({r.timestamp for r in rows if base <= r.offset <= times[-1]["offset"]})
    for t in inside[::3]:
        assert read_rows(seekable, start_timestamp=t) == m(start_timestamp=t), t


# --- 3. real broker index files: contents and lookups -------------------------------------------


def _expected_index_files() -> list[str]:
    root = CORPUS / "expected"
    found = sorted(
        str(p.relative_to(root))
        for pattern in ("*.index.json", "*.timeindex.json")
        for p in root.rglob(pattern)
    )
    return found


@pytest.mark.parametrize("name", _expected_index_files())
def test_read_index_matches_the_corpus(corpus, name):
    """Every .index and .timeindex entry the corpus lists, no more (zero slots are not entries)."""
    spec = json.loads((EXPECTED / name).read_text())
    path = CORPUS / spec["file"]
    base = spec["base_offset"]
    assert int(path.name[:20]) == base
    table = kafkalog.read_index(path)
    if path.suffix == ".index":
        assert table.column_names == ["offset", "relativeOffset", "position"]
        want = [(e["offset"], e["relative_offset"], e["position"]) for e in spec["entries"]]
    else:
        assert table.column_names == ["timestamp", "offset", "relativeOffset"]
        want = [(e["timestamp"], e["offset"], e["relative_offset"]) for e in spec["entries"]]
    assert [tuple(r.values()) for r in table.to_pylist()] == want


def test_the_corpus_index_files_are_all_compared(corpus):
    assert len(_expected_index_files()) >= 17
    indexed = {p for p in SEGMENTS.rglob("*") if p.suffix in (".index", ".timeindex")}
    compared = {
        CORPUS / json.loads((EXPECTED / n).read_text())["file"] for n in _expected_index_files()
    }
    assert indexed == compared


@pytest.mark.parametrize("suffix", [".index", ".timeindex"])
def test_read_index_of_a_preallocated_file_without_entries(tmp_path, suffix):
    """A broker's new segment's index, never written to: all zeros. As kafka-dump-log, one
    entry for the first slot (the base offset) and nothing after it."""
    path = tmp_path / f"{100:020d}{suffix}"
    path.write_bytes(bytes(12 * 8 * 10))
    rows = index_entries(path)
    if suffix == ".index":
        assert rows == [{"offset": 100, "relativeOffset": 0, "position": 0}]
    else:
        assert rows == [{"timestamp": 0, "offset": 100, "relativeOffset": 0}]


@functools.cache
def invoice_segments() -> tuple[tuple[Path, int, tuple[dict, ...]], ...]:
    """(log, base offset, batches) of the invoice partition's segments."""
    return tuple((log, int(log.name[:20]), tuple(batches_of(log))) for log in segment_logs(INVOICE))


def kafka_offset_lookup(entries: list[dict], target: int) -> int:
    """OffsetIndex.lookup: the position of the largest entry at or below ``target``, else 0."""
    best = 0
    for e in entries:
        if e["offset"] <= target:
            best = e["position"]
    return best


def test_invoice_offset_index_entries_point_at_batches(corpus):
    """Each entry's position is a batch start, the batch there starts at or before the entry's
    offset, and the entry's offset is the last offset of that batch or of a later one (a
    multi-batch append, docs/format.md 5.5): 11, 1 and 1 such entries in the three indexes."""
    later = []
    for log, base, batches in invoice_segments()[:3]:
        entries = index_entries(log.with_suffix(".index"))
        assert entries
        by_position = {b["batchPosition"]: i for i, b in enumerate(batches)}
        last_offsets = [b["lastOffset"] for b in batches]
        count = 0
        for e in entries:
            assert e["relativeOffset"] == e["offset"] - base
            assert e["position"] in by_position, e
            i = by_position[e["position"]]
            assert batches[i]["baseOffset"] <= e["offset"]
            assert e["offset"] in last_offsets[i:]
            count += e["offset"] != last_offsets[i]
        later.append(count)
    assert later == [11, 1, 1]


def test_invoice_offset_lookups(corpus):
    """Kafka's lookup (largest entry at or below the target, then forward over the batches to
    the first whose last offset reaches the target) finds the batch holding every target; a
    read starting there starts at the target."""
    rng = random.Random(10)
    for log, base, batches in invoice_segments()[:3]:
        entries = index_entries(log.with_suffix(".index"))
        positions = [b["batchPosition"] for b in batches]
        end = batches[-1]["lastOffset"]
        targets = {base, end} | {e["offset"] + d for e in entries for d in (-1, 0, 1)}
        targets |= set(rng.sample(range(base, end + 1), 200))
        for target in sorted(t for t in targets if base <= t <= end):
            position = kafka_offset_lookup(entries, target)
            i = positions.index(position)
            while batches[i]["lastOffset"] < target:
                i += 1
            assert batches[i]["baseOffset"] <= target <= batches[i]["lastOffset"]
        for target in rng.sample(sorted(targets), 25):
            got = read_offsets(INVOICE, start_offset=target, end_offset=target + 2)
            assert got == {("invoice", 0): [target, target + 1]}


def test_invoice_time_index_entries(corpus):
    """Each time entry (T, O) says: the largest timestamp up to offset O is T, first reached
    in the batch holding O (the log's running maximum, as the broker tracked it)."""
    for log, _, batches in invoice_segments()[:3]:
        times = index_entries(log.with_suffix(".timeindex"))
        assert times
        running, top = [], -1
        for b in batches:
            top = max(top, b["maxTimestamp"])
            running.append(top)
        for e in times:
            i = next(i for i, b in enumerate(batches) if b["lastOffset"] >= e["offset"])
            assert batches[i]["baseOffset"] <= e["offset"]
            assert running[i] == e["timestamp"] == batches[i]["maxTimestamp"]
        assert times[-1]["timestamp"] == running[-1]


def test_invoice_timestamp_lookups(corpus):
    """Kafka's findOffsetByTimestamp: the first segment whose largest timestamp reaches T, its
    time index's largest entry at or below T, the offset index's position for that entry's
    offset, then forward to the first batch whose max timestamp reaches T and in it the first
    record that does. For random T this is the earliest offset whose timestamp is at or after
    T, and a read with start_timestamp=T starts there."""
    rows = list(invoice_rows())
    stamp = {r.offset: r.timestamp for r in rows}
    stamps = sorted(set(stamp.values()))
    rng = random.Random(11)
    targets = rng.sample(stamps, 150) + [t + 1 for t in rng.sample(stamps, 50)] + [stamps[0] - 5]
    segments = invoice_segments()
    for target in targets:
        want = next((r.offset for r in rows if r.timestamp >= target), None)
        log, base, batches = next(
            s for s in segments if max(b["maxTimestamp"] for b in s[2]) >= target
        )
        if log.with_suffix(".timeindex").exists():
            times = index_entries(log.with_suffix(".timeindex"))
            entry_offset = max(
                [e["offset"] for e in times if e["timestamp"] <= target], default=base
            )
            position = kafka_offset_lookup(index_entries(log.with_suffix(".index")), entry_offset)
        else:
            position = 0
        found = None
        for b in batches:
            if b["batchPosition"] < position or b["maxTimestamp"] < target:
                continue
            found = next(
                o for o in range(b["baseOffset"], b["lastOffset"] + 1) if stamp[o] >= target
            )
            break
        assert found == want, target
    for target in targets[:20]:
        got = read_offsets(INVOICE, start_timestamp=target, end_offset=rows[-1].offset + 1)
        first = next(r.offset for r in rows if r.timestamp >= target)
        assert got[("invoice", 0)][:1] == [first]


# --- 4. read_committed ------------------------------------------------------------------------

PLAIN = -1  # no producer id
IDEMPOTENT = 44  # a producer id, but not transactional


@dataclass
class Batch:
    """A batch as built, with what the model needs to know of it."""

    segment: Segment
    producer_id: int
    transactional: bool
    control: int | None  # CONTROL_ABORT / CONTROL_COMMIT for a marker
    offsets: list[int]
    timestamps: list[int]

    @property
    def base(self) -> int:
        return self.offsets[0]

    @property
    def last(self) -> int:
        return self.offsets[-1]


@dataclass
class History:
    """Batches appended to one partition, as a broker would (offsets assigned in order)."""

    batches: list[Batch] = field(default_factory=list)
    next_offset: int = 0
    sequences: dict[int, int] = field(default_factory=dict)

    def data(self, producer_id: int, n: int, *, timestamp: int | None = None) -> None:
        offset = self.next_offset
        stamps = [T0 + 10 * (offset + i) if timestamp is None else timestamp for i in range(n)]
        recs = [
            Rec(b"p%d" % producer_id, b"value-%d|" % (offset + i) * 6, stamps[i]) for i in range(n)
        ]
        transactional = producer_id not in (PLAIN, IDEMPOTENT)
        options = {}
        if producer_id != PLAIN:
            seq = self.sequences.get(producer_id, 0)
            self.sequences[producer_id] = seq + n
            options = {
                "transactional": transactional,
                "producer_id": producer_id,
                "producer_epoch": 3,
                "base_sequence": seq,
            }
        seg = build_batch(
            "kafka-python", 2, "none", recs, offset, partition_leader_epoch=1, **options
        )
        self._add(
            Batch(seg, producer_id, transactional, None, list(range(offset, offset + n)), stamps)
        )

    def marker(self, producer_id: int, kind: int, *, timestamp: int | None = None) -> None:
        offset = self.next_offset
        ts = T0 + 10 * offset if timestamp is None else timestamp
        seg = control_batch(
            offset,
            kind,
            producer_id=producer_id,
            producer_epoch=3,
            timestamp=ts,
            coordinator_epoch=2,
        )
        self._add(Batch(seg, producer_id, True, kind, [offset], [ts]))

    def _add(self, batch: Batch) -> None:
        self.batches.append(batch)
        self.next_offset = batch.last + 1

    @property
    def log(self) -> bytes:
        return b"".join(b.segment.data for b in self.batches)

    def write(self, root: Path, topic: str, cuts: list[int]) -> Path:
        """Raw segments (no index files) split before the batches numbered in ``cuts``."""
        segments = []
        edges = [0, *sorted(set(cuts) - {0}), len(self.batches)]
        for lo, hi in zip(edges, edges[1:], strict=False):
            seg = self.batches[lo].segment
            for b in self.batches[lo + 1 : hi]:
                seg = seg + b.segment
            segments.append(seg)
        return write_partition(root, topic, 0, segments)

    def write_with_indexes(self, path: Path, **options) -> Path:
        """The same batches, byte for byte, through kafkalog.write: segments rolled by size,
        with .index, .timeindex and .txnindex files."""
        table = kafkalog.read_bytes(self.log, batch_metadata=True, include_control=True).read_all()
        kafkalog.write(path, table, **options)
        assert b"".join(p.read_bytes() for p in segment_logs(path)) == self.log
        return path


def committed_offsets(history: History) -> list[int]:
    """Kafka's read_committed consumer (docs/format.md section 4), independently of kafkalog.

    Broker: producer state gives the aborted transactions (producer id, first offset) and the
    last stable offset (first offset of the earliest transaction still open at the end).
    Client: a queue of aborted transactions by first offset and a set of aborted producers;
    per batch with a producer id: take in the transactions that began at or before its last
    offset; an ABORT marker takes its producer out; a transactional batch of a producer in
    the set is skipped. Markers are never returned; nothing at or after the LSO is."""
    open_txns: dict[int, int] = {}
    aborted: list[tuple[int, int]] = []
    for b in history.batches:
        if not b.transactional:
            continue
        if b.control is None:
            open_txns.setdefault(b.producer_id, b.base)
        else:
            first = open_txns.pop(b.producer_id, None)
            if first is not None and b.control == CONTROL_ABORT:
                aborted.append((first, b.producer_id))
    lso = min(open_txns.values(), default=INF)
    pending = sorted(aborted)
    current: set[int] = set()
    out = []
    for b in history.batches:
        if b.producer_id >= 0:
            while pending and pending[0][0] <= b.last:
                current.add(pending.pop(0)[1])
            if b.control == CONTROL_ABORT:
                current.discard(b.producer_id)
                continue
            if b.transactional and b.producer_id in current:
                continue
        if b.control is not None:
            continue
        out += [o for o in b.offsets if o < lso]
    return out


def uncommitted_offsets(history: History, *, include_control: bool = False) -> list[int]:
    return [o for b in history.batches if include_control or b.control is None for o in b.offsets]


def scenario() -> tuple[History, list[int]]:
    """Two transactional producers interleaved with plain and idempotent ones: a commit, an
    abort whose marker is in a later segment than its data, an aborted transaction spanning
    segments, a marker without a transaction, and a transaction left open (the LSO) with
    data of others after it. Returns the history and where its segments start (batch
    numbers)."""
    h = History()
    A, B = 1000, 2000
    h.data(A, 3)  # 0-2        A1
    h.data(B, 2)  # 3-4        B1
    h.data(PLAIN, 1)  # 5
    h.data(A, 1)  # 6          A1
    h.marker(A, CONTROL_COMMIT)  # 7: A1 committed
    h.data(IDEMPOTENT, 2)  # 8-9
    h.data(B, 2)  # 10-11      B1
    h.marker(B, CONTROL_ABORT)  # 12: B1 aborted           (segment 2 starts here)
    h.data(A, 3)  # 13-15      A2
    h.data(PLAIN, 1)  # 16
    h.data(A, 2)  # 17-18      A2                         (segment 3 starts here)
    h.data(B, 1)  # 19         B2
    h.marker(A, CONTROL_ABORT)  # 20: A2 aborted, across segments
    h.marker(B, CONTROL_COMMIT)  # 21: B2 committed
    h.marker(B, CONTROL_ABORT)  # 22: no transaction of B open: nothing aborted
    h.data(PLAIN, 2)  # 23-24
    h.data(A, 2)  # 25-26      A3, never ended: the LSO is 25
    h.data(PLAIN, 1)  # 27
    h.data(B, 2)  # 28-29      B3
    h.marker(B, CONTROL_COMMIT)  # 30
    h.data(PLAIN, 1)  # 31
    cuts = [7, 10]
    assert h.batches[7].base == 12 and h.batches[10].base == 17
    return h, cuts


def test_scenario_model():
    """The model against offsets worked out by hand."""
    h, _ = scenario()
    assert committed_offsets(h) == [0, 1, 2, 5, 6, 8, 9, 16, 19, 23, 24]
    assert uncommitted_offsets(h) == [*range(7), 8, 9, 10, 11, *range(13, 20), *range(23, 30), 31]


@pytest.fixture(params=["raw", "written"])
def txn_partition(request, tmp_path) -> tuple[History, Path]:
    h, cuts = scenario()
    if request.param == "raw":
        return h, h.write(tmp_path, "txn", cuts)
    out = h.write_with_indexes(tmp_path / "txn-0", segment_bytes=700, index_interval_bytes=100)
    assert len(segment_logs(out)) >= 3
    return h, out


def test_read_committed_scenario(txn_partition):
    h, path = txn_partition
    rows = read_rows(path, isolation_level="read_committed")
    assert [r.offset for r in rows] == committed_offsets(h)
    by_offset = {o: (b, i) for b in h.batches for i, o in enumerate(b.offsets)}
    for r in rows:  # the records themselves, not only their offsets
        b, i = by_offset[r.offset]
        assert (r.key, r.value, r.timestamp) == (
            b.segment.records[i].key,
            b.segment.records[i].value,
            b.timestamps[i],
        )
    again = read_rows(path, isolation_level="read_committed", include_control=True)
    assert again == rows


def test_read_uncommitted_scenario(txn_partition):
    h, path = txn_partition
    assert [r.offset for r in read_rows(path)] == uncommitted_offsets(h)
    assert [
        r.offset for r in read_rows(path, isolation_level="read_uncommitted")
    ] == uncommitted_offsets(h)
    table = kafkalog.read(path, include_control=True, batch_metadata=True).read_all()
    assert table.column("offset").to_pylist() == uncommitted_offsets(h, include_control=True)
    markers = {b.base: b.control for b in h.batches if b.control is not None}
    got = {
        o: t
        for o, c, t in zip(
            table.column("offset").to_pylist(),
            table.column("isControl").to_pylist(),
            table.column("controlType").to_pylist(),
            strict=True,
        )
        if c
    }
    assert got == markers


def test_read_committed_with_offset_bounds(txn_partition):
    """A consumer starting anywhere (in the middle of an aborted transaction, on a marker,
    past the LSO) sees the committed records from there."""
    h, path = txn_partition
    committed = committed_offsets(h)
    for start in range(-1, h.next_offset + 2):
        for end in (None, start + 1, start + 4, 25, 40):
            got = [
                r.offset
                for r in read_rows(
                    path, isolation_level="read_committed", start_offset=start, end_offset=end
                )
            ]
            want = [o for o in committed if o >= start and (end is None or o < end)]
            assert got == want, (start, end)


def test_read_committed_with_timestamp_bounds(txn_partition):
    """Timestamps are looked up over every record, aborted and control ones included (as
    Kafka's ListOffsets does), then the committed records from there are read."""
    h, path = txn_partition
    committed = committed_offsets(h)
    every = sorted((o, t) for b in h.batches for o, t in zip(b.offsets, b.timestamps, strict=True))
    for target in range(T0 - 5, T0 + 10 * h.next_offset + 10, 5):
        first = next((o for o, t in every if t >= target), None)
        got = [
            r.offset
            for r in read_rows(path, isolation_level="read_committed", start_timestamp=target)
        ]
        assert got == ([] if first is None else [o for o in committed if o >= first]), target
        got = [
            r.offset
            for r in read_rows(path, isolation_level="read_committed", end_timestamp=target)
        ]
        assert got == [o for o in committed if first is None or o < first], target


def test_read_committed_per_partition(tmp_path):
    """The same producer ids in two partitions of a log directory, with different outcomes:
    each partition's transactions are its own."""
    h0, cuts = scenario()
    h1 = History()
    h1.data(2000, 2)  # 0-1 B: committed here
    h1.data(1000, 2)  # 2-3 A: aborted here
    h1.marker(2000, CONTROL_COMMIT)  # 4
    h1.data(PLAIN, 1)  # 5
    h1.marker(1000, CONTROL_ABORT)  # 6
    h1.data(1000, 1)  # 7: A open at the end
    h1.data(PLAIN, 1)  # 8
    logs = tmp_path / "logs"
    h0.write(logs, "txn", cuts)
    h1.write_with_indexes(logs / "txn-1", segment_bytes=300, index_interval_bytes=50)
    assert committed_offsets(h1) == [0, 1, 5]
    got = read_offsets(logs, isolation_level="read_committed")
    assert got == {("txn", 0): committed_offsets(h0), ("txn", 1): [0, 1, 5]}
    got = read_offsets(logs, isolation_level="read_committed", start_offset=1, end_offset=20)
    assert got == {
        ("txn", 0): [o for o in committed_offsets(h0) if 1 <= o < 20],
        ("txn", 1): [1, 5],
    }


def random_history(rng: random.Random, n: int) -> History:
    h = History()
    producers = [11, 22, 33]
    open_txns: set[int] = set()
    for _ in range(n):
        r = rng.random()
        if r < 0.45:
            pid = rng.choice(producers)
            h.data(pid, rng.randint(1, 3))
            open_txns.add(pid)
        elif r < 0.65:
            h.data(rng.choice([PLAIN, IDEMPOTENT]), rng.randint(1, 3))
        elif r < 0.93 and open_txns:
            pid = rng.choice(sorted(open_txns))
            h.marker(pid, rng.choice([CONTROL_ABORT, CONTROL_COMMIT]))
            open_txns.discard(pid)
        else:  # a marker for a transaction without data in this partition
            h.marker(rng.choice(producers), rng.choice([CONTROL_ABORT, CONTROL_COMMIT]))
            open_txns.discard(h.batches[-1].producer_id)
    if rng.random() < 0.5:  # end every transaction: no LSO
        for pid in sorted(open_txns):
            h.marker(pid, rng.choice([CONTROL_ABORT, CONTROL_COMMIT]))
    return h


@pytest.mark.parametrize("seed", range(12))
def test_read_committed_random_histories(tmp_path, seed):
    """Random interleavings of three transactional producers, plain and idempotent ones,
    split into random segments (raw) and rolled by size with indexes (written): every record
    read_committed returns, and every bounded read, matches the model."""
    rng = random.Random(1000 + seed)
    h = random_history(rng, rng.randint(15, 45))
    committed = committed_offsets(h)
    cuts = sorted(rng.sample(range(1, len(h.batches)), min(4, len(h.batches) - 1)))
    raw = h.write(tmp_path / "raw", "txn", cuts)
    written = h.write_with_indexes(
        tmp_path / "written" / "txn-0",
        segment_bytes=rng.choice([400, 800, 1500]),
        index_interval_bytes=120,
    )
    for path in (raw, written):
        assert [r.offset for r in read_rows(path, isolation_level="read_committed")] == committed
        assert [r.offset for r in read_rows(path)] == uncommitted_offsets(h)
        for _ in range(6):
            start = rng.randint(0, h.next_offset)
            end = rng.choice([None, rng.randint(start, h.next_offset + 1)])
            got = read_rows(
                path, isolation_level="read_committed", start_offset=start, end_offset=end
            )
            want = [o for o in committed if o >= start and (end is None or o < end)]
            assert [r.offset for r in got] == want, (path, start, end)


def marker_history() -> History:
    h = History()
    h.data(1000, 3, timestamp=T0 + 100)  # 0-2
    h.marker(1000, CONTROL_COMMIT, timestamp=T0 + 300)  # 3: broker time
    h.data(PLAIN, 3, timestamp=T0 + 200)  # 4-6: a producer clock behind the broker's
    h.data(2000, 1, timestamp=T0 + 500)  # 7: aborted below
    h.data(PLAIN, 2, timestamp=T0 + 250)  # 8-9
    h.marker(2000, CONTROL_ABORT, timestamp=T0 + 260)  # 10
    h.data(PLAIN, 1, timestamp=T0 + 600)  # 11
    return h


VISIBLE = {
    "read_uncommitted": [0, 1, 2, 4, 5, 6, 7, 8, 9, 11],
    "read_committed": [0, 1, 2, 4, 5, 6, 8, 9, 11],
}


@pytest.mark.parametrize("level", sorted(VISIBLE))
def test_marker_timestamps_count_for_timestamp_lookups(tmp_path, level):
    """Kafka's ListOffsets (``FileRecords.searchForTimestamp``) looks at every batch, control
    batches included. A COMMIT marker carries the broker's time, which can be later than the
    CreateTime of data appended after it: then the marker is the earliest offset at or after
    T (T0+280 here: offset 3), a read starting at T starts there (showing the data after it),
    and a read ending at T ends before it."""
    path = marker_history().write(tmp_path, "marker", [])
    visible = VISIBLE[level]
    assert [r.offset for r in read_rows(path, isolation_level=level)] == visible
    got = read_rows(path, isolation_level=level, start_timestamp=T0 + 280)
    assert [r.offset for r in got] == [o for o in visible if o >= 3]
    got = read_rows(path, isolation_level=level, end_timestamp=T0 + 280)
    assert [r.offset for r in got] == [0, 1, 2]


@pytest.mark.parametrize("level", sorted(VISIBLE))
def test_aborted_records_count_for_timestamp_lookups(tmp_path, level):
    """Likewise records of aborted transactions: the one at 7 is the earliest at or after
    T0+400, for read_committed too (which then does not show it)."""
    path = marker_history().write(tmp_path, "marker", [])
    visible = VISIBLE[level]
    got = read_rows(path, isolation_level=level, start_timestamp=T0 + 400)
    assert [r.offset for r in got] == [o for o in visible if o >= 7]
    got = read_rows(path, isolation_level=level, end_timestamp=T0 + 400)
    assert [r.offset for r in got] == [o for o in visible if o < 7]


# --- 5. verify --------------------------------------------------------------------------------


def problems_of(report: dict) -> list[tuple]:
    return [
        (p["kind"], Path(p["path"]).name, p["position"], p["offset"]) for p in report["problems"]
    ]


def notes_of(report: dict) -> list[tuple]:
    return [(p["kind"], Path(p["path"]).name, p["position"], p["offset"]) for p in report["notes"]]


def test_verify_examples_are_clean():
    report = kafkalog.verify(EXAMPLES)
    assert report["ok"] and report["problems"] == []
    assert {n["kind"] for n in report["notes"]} <= {"index_missing", "time_index_missing"}
    records = kafkalog.read(EXAMPLES, include_control=True).read_all().num_rows
    assert sum(s["records"] for s in report["segments"]) == records


@pytest.mark.parametrize(("magic", "codec"), PARTITION_FORMATS, ids=FORMAT_IDS)
def test_verify_written_partitions_are_clean(tmp_path, magic, codec):
    out = tmp_path / "clean-0"
    summary = write_partition_dir(
        out, partition_table(random.Random(12), 250), magic=magic, compression=codec
    )
    report = kafkalog.verify(out)
    assert report == {**report, "ok": True, "problems": [], "notes": []}
    assert [s["path"] for s in report["segments"]] == [s["path"] for s in summary]
    for seg, s in zip(report["segments"], summary, strict=True):
        assert (seg["records"], seg["batches"], seg["bytes"]) == (
            s["records"],
            s["batches"],
            s["bytes"],
        )
        assert (seg["first_offset"], seg["last_offset"]) == (s["base_offset"], s["last_offset"])
        assert seg["index_entries"] == len(index_entries(Path(s["path"]).with_suffix(".index")))
        assert seg["trailing_bytes"] == 0


def test_verify_written_transactions_are_clean(tmp_path):
    h, _ = scenario()
    out = h.write_with_indexes(tmp_path / "txn-0", segment_bytes=700, index_interval_bytes=100)
    assert list(out.glob("*.txnindex"))
    report = kafkalog.verify(out)
    assert report["ok"] and report["problems"] == [] and report["notes"] == []
    assert sum(s["aborted_transactions"] or 0 for s in report["segments"]) == 2


def test_verify_invoice(corpus):
    """The broker's own files are sound; the entries naming a later batch of a multi-batch
    append are notes (11, 1, 1 of them), and the last segment has no index files."""
    report = kafkalog.verify(INVOICE)
    assert report["ok"] and report["problems"] == []
    mismatches = defaultdict(list)
    for kind, name, position, offset in notes_of(report):
        if kind == "index_mismatch":
            mismatches[name].append((offset, position))
    assert {k: len(v) for k, v in mismatches.items()} == {
        "00000000000000000000.index": 11,
        "00000000000000030626.index": 1,
        "00000000000000060611.index": 1,
    }
    for name, found in mismatches.items():
        entries = {(e["offset"], e["position"]) for e in index_entries(INVOICE / name)}
        assert set(found) <= entries
    assert sorted(n for n in notes_of(report) if n[0] != "index_mismatch") == [
        ("index_missing", "00000000000000090867.index", None, None),
        ("time_index_missing", "00000000000000090867.timeindex", None, None),
    ]


@pytest.mark.parametrize("path", [OFFSETS_15, OFFSETS_6], ids=["nomanazeem", "Niloufar"])
def test_verify_corpus_consumer_offsets(corpus, path):
    report = kafkalog.verify(path)
    assert report["ok"] and report["problems"] == [] and report["notes"] == []


@pytest.fixture
def damaged(tmp_path) -> Path:
    """A v2 partition to damage: several segments, all index files present and clean."""
    out = tmp_path / "damage-0"
    write_partition_dir(
        out,
        partition_table(random.Random(13), 300, first_offset=500, monotonic=True),
        segment_bytes=5000,
        index_interval_bytes=300,
    )
    assert kafkalog.verify(out)["problems"] == []
    return out


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "where", [17, 20, 52, -2], ids=["crc", "crc-last-byte", "producer-epoch", "value"]
)
def test_verify_crc_mismatch(damaged, where):
    log = second_segment(damaged)
    batch = batches_of(log)[3]
    flip(log, batch["batchPosition"] + (batch["batchSize"] + where if where < 0 else where))
    report = kafkalog.verify(damaged)
    assert not report["ok"]
    assert problems_of(report) == [
        ("crc_mismatch", log.name, batch["batchPosition"], batch["baseOffset"])
    ]


def break_records_of_an_indexed_batch(damaged: Path) -> tuple[Path, dict]:
    """Flips the last byte of a batch an index entry points at: the last record's header
    count, so the CRC fails and the records cannot be read either."""
    log = second_segment(damaged)
    batches = batches_of(log)
    index = index_entries(log.with_suffix(".index"))
    batch = next(b for b in batches if b["batchPosition"] == index[1]["position"])
    flip(log, batch["batchPosition"] + batch["batchSize"] - 1)
    return log, batch


def test_verify_crc_mismatch_that_also_breaks_the_records(damaged):
    """Kafka checks a batch's CRC before anything else (``ensureValid``): a batch whose CRC
    fails is a CRC mismatch, whatever its records look like."""
    log, batch = break_records_of_an_indexed_batch(damaged)
    report = kafkalog.verify(damaged)
    found = [f for f in problems_of(report) if f[1] == log.name]
    assert found == [("crc_mismatch", log.name, batch["batchPosition"], batch["baseOffset"])]


def test_verify_indexes_pointing_at_a_corrupt_batch(damaged):
    """A corrupt batch is still framed by its size field: the index entry naming its start
    and the time entry naming its offset are right, only the batch is wrong."""
    log, _ = break_records_of_an_indexed_batch(damaged)
    report = kafkalog.verify(damaged)
    assert [f for f in problems_of(report) if f[1] != log.name] == []


def test_verify_torn_tail(damaged):
    log = segment_logs(damaged)[-1]
    last = batches_of(log)[-1]
    with log.open("r+b") as f:
        f.truncate(last["batchPosition"] + last["batchSize"] // 2)
    report = kafkalog.verify(damaged)
    assert not report["ok"]
    found = problems_of(report)
    assert ("torn_tail", log.name, last["batchPosition"], None) in found
    # what else can be wrong: index entries for the batch that is gone
    assert {k for k, *_ in found} <= {
        "torn_tail",
        "index_entry_not_at_batch",
        "time_index_offset_not_found",
    }
    seg = next(s for s in report["segments"] if Path(s["path"]) == log)
    assert seg["trailing_bytes"] == last["batchSize"] // 2


def test_verify_zeroed_space_at_the_end(damaged):
    """Preallocated space never written (log.preallocate, or a crash): zeros after the last
    batch are a torn tail, not batches."""
    log = segment_logs(damaged)[-1]
    size = log.stat().st_size
    with log.open("ab") as f:
        f.write(bytes(4096))
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [("torn_tail", log.name, size, None)]


def test_verify_index_entry_in_the_middle_of_a_batch(damaged):
    log = second_segment(damaged)
    base = int(log.name[:20])
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    offset, position = entries[1]
    entries[1] = (offset, position + 5)
    write_index(log.with_suffix(".index"), base, entries)
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [
        ("index_entry_not_at_batch", log.with_suffix(".index").name, position + 5, offset)
    ]


def test_verify_index_entry_after_its_batch(damaged):
    """An entry at a batch start, but for an offset before that batch: a lookup would skip
    records."""
    log = second_segment(damaged)
    base = int(log.name[:20])
    batches = batches_of(log)
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    k = next(i for i, b in enumerate(batches) if b["batchPosition"] == entries[1][1])
    entries[1] = (batches[k - 1]["lastOffset"], entries[1][1])
    assert entries[0][0] < entries[1][0]
    write_index(log.with_suffix(".index"), base, entries)
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [
        ("index_entry_after_batch", log.with_suffix(".index").name, entries[1][1], entries[1][0])
    ]


def test_verify_index_out_of_order(damaged):
    log = second_segment(damaged)
    base = int(log.name[:20])
    entries = [(e["offset"], e["position"]) for e in index_entries(log.with_suffix(".index"))]
    entries[0], entries[1] = entries[1], entries[0]
    write_index(log.with_suffix(".index"), base, entries)
    report = kafkalog.verify(damaged)
    assert [(k, n) for k, n, *_ in problems_of(report)] == [
        ("index_corrupt", log.with_suffix(".index").name)
    ]


def test_verify_index_with_a_partial_entry(damaged):
    log = second_segment(damaged)
    with log.with_suffix(".index").open("ab") as f:
        f.write(b"\x01\x02\x03")
    report = kafkalog.verify(damaged)
    assert [(k, n) for k, n, *_ in problems_of(report)] == [
        ("index_corrupt", log.with_suffix(".index").name)
    ]


def test_verify_time_index_wrong_timestamp(damaged):
    log = second_segment(damaged)
    base = int(log.name[:20])
    times = [(e["timestamp"], e["offset"]) for e in index_entries(log.with_suffix(".timeindex"))]
    assert len(times) >= 2
    ts, offset = times[-1]
    times[-1] = (ts + 1, offset)  # still increasing: only the log says it is wrong
    write_time_index(log.with_suffix(".timeindex"), base, times)
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [
        ("time_index_timestamp_mismatch", log.with_suffix(".timeindex").name, None, offset)
    ]


def test_verify_time_index_offset_not_in_the_log(damaged):
    log = second_segment(damaged)
    base = int(log.name[:20])
    times = [(e["timestamp"], e["offset"]) for e in index_entries(log.with_suffix(".timeindex"))]
    last = batches_of(log)[-1]["lastOffset"]
    times.append((times[-1][0] + 1, last + 1))
    write_time_index(log.with_suffix(".timeindex"), base, times)
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [
        ("time_index_offset_not_found", log.with_suffix(".timeindex").name, None, last + 1)
    ]


def test_verify_time_index_out_of_order(damaged):
    log = second_segment(damaged)
    base = int(log.name[:20])
    times = [(e["timestamp"], e["offset"]) for e in index_entries(log.with_suffix(".timeindex"))]
    times[0], times[1] = times[1], times[0]
    write_time_index(log.with_suffix(".timeindex"), base, times)
    report = kafkalog.verify(damaged)
    assert [(k, n) for k, n, *_ in problems_of(report)] == [
        ("time_index_corrupt", log.with_suffix(".timeindex").name)
    ]


@pytest.fixture
def txn_written(tmp_path) -> tuple[History, Path]:
    h, _ = scenario()
    out = h.write_with_indexes(tmp_path / "txn-0", segment_bytes=700, index_interval_bytes=100)
    return h, out


def aborts_by_segment(h: History, out: Path) -> dict[str, list[tuple]]:
    """The .txnindex entries each segment must have: (producer, first offset, marker offset,
    LSO after it), in the segment of the marker."""
    bases = [int(p.name[:20]) for p in segment_logs(out)]
    want = defaultdict(list)
    # from the scenario: A2 and B1 aborted; after each abort the earliest open transaction
    for pid, first, last, lso in [(2000, 3, 12, 13), (1000, 13, 20, 19)]:
        base = max(b for b in bases if b <= last)
        want[f"{base:020d}.txnindex"].append((pid, first, last, lso))
    return dict(want)


def test_txnindex_as_written(txn_written):
    h, out = txn_written
    got = {
        p.name: [
            (r["producerId"], r["firstOffset"], r["lastOffset"], r["lastStableOffset"])
            for r in index_entries(p)
        ]
        for p in sorted(out.glob("*.txnindex"))
    }
    assert got == aborts_by_segment(h, out)


def test_verify_txnindex_missing_an_entry(txn_written):
    h, out = txn_written
    txn = sorted(out.glob("*.txnindex"))[0]
    first = index_entries(txn)[0]
    data = txn.read_bytes()
    txn.write_bytes(data[TXN_ENTRY:])
    report = kafkalog.verify(out)
    assert problems_of(report) == [("txn_index_missing_entry", txn.name, None, first["lastOffset"])]
    txn.unlink()
    report = kafkalog.verify(out)
    assert problems_of(report) == [
        ("txn_index_missing_entry", txn.name, None, e[2])
        for e in aborts_by_segment(h, out)[txn.name]
    ]


def test_verify_txnindex_with_an_extra_entry(txn_written):
    h, out = txn_written
    logs = segment_logs(out)
    log = logs[1]
    base = int(log.name[:20])
    txn = log.with_suffix(".txnindex")
    before = txn.read_bytes() if txn.exists() else b""
    committed_marker = next(
        b.base for b in h.batches if b.control == CONTROL_COMMIT and b.base >= base
    )
    extra = struct.pack(">hqqqq", 0, 1000, base, committed_marker, committed_marker + 1)
    txn.write_bytes(before + extra)
    report = kafkalog.verify(out)
    assert problems_of(report) == [("txn_index_unknown_entry", txn.name, None, committed_marker)]


def test_verify_txnindex_unknown_version(txn_written):
    _, out = txn_written
    txn = sorted(out.glob("*.txnindex"))[0]
    first = index_entries(txn)[0]
    data = bytearray(txn.read_bytes())
    data[0] = 1  # AbortedTxn.version() reads this byte
    txn.write_bytes(bytes(data))
    report = kafkalog.verify(out)
    assert ("txn_index_corrupt", txn.name, None, first["lastOffset"]) in problems_of(report)
    assert {p[1] for p in problems_of(report)} == {txn.name}


def test_verify_segment_named_past_its_first_offset(damaged):
    """A segment whose file name (base offset) is above its first batch's offset."""
    logs = segment_logs(damaged)
    log = logs[2]
    first = batches_of(log)[0]["baseOffset"]
    for suffix in (".index", ".timeindex"):
        log.with_suffix(suffix).unlink()
    renamed = log.with_name(f"{first + 1:020d}.log")
    log.rename(renamed)
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [("offset_before_segment_base", renamed.name, 0, first)]
    assert sorted(notes_of(report)) == [
        ("index_missing", renamed.with_suffix(".index").name, None, None),
        ("time_index_missing", renamed.with_suffix(".timeindex").name, None, None),
    ]


def test_verify_segment_named_before_the_previous_ends(damaged):
    """A segment named with a base offset below the previous segment's last offsets: those
    batches of the previous segment lie at or past the next segment's base."""
    logs = segment_logs(damaged)
    log = logs[2]
    previous = batches_of(logs[1])
    wrong = previous[-3]["lastOffset"]
    for suffix in (".index", ".timeindex"):
        log.with_suffix(suffix).unlink()
    log.rename(log.with_name(f"{wrong:020d}.log"))
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [
        ("offset_past_next_segment", logs[1].name, b["batchPosition"], b["lastOffset"])
        for b in previous[-3:]
    ]


def test_verify_offsets_not_increasing(damaged):
    """A batch appended again at the end of its segment (offsets going back)."""
    log = second_segment(damaged)
    first = batches_of(log)[0]
    size = log.stat().st_size
    data = log.read_bytes()
    log.write_bytes(data + data[: first["batchSize"]])
    report = kafkalog.verify(damaged)
    assert problems_of(report) == [("offsets_not_increasing", log.name, size, first["baseOffset"])]


def test_verify_undecodable_batch_with_a_good_crc(tmp_path):
    """A gzip batch whose stream is not gzip, CRC computed over it: the CRC passes, the records
    cannot be read."""
    good = build_batch("kafka-python", 2, "none", [Rec(b"k", b"v" * 50, T0)] * 3, 0)
    bad = with_records_stream(good.data, "gzip", b"this is not a gzip stream at all")
    after = build_batch("kafka-python", 2, "none", [Rec(b"k", b"w", T0)], 3)
    seg = Segment(data=good.data + bad + after.data, magic=2, codec="none", batches=good.batches)
    out = write_partition(tmp_path, "undecodable", 0, [seg])
    report = kafkalog.verify(out)
    # The crafted batch reuses the first batch's offsets (0-2), which verify also reports: a batch
    # whose records are unreadable still counts, by its header, for the offset checks.
    assert problems_of(report) == [
        ("corrupt_batch", "00000000000000000000.log", len(good.data), 0),
        ("offsets_not_increasing", "00000000000000000000.log", len(good.data), 0),
    ]


def test_verify_unreadable_entry(damaged):
    """A batch whose size field is 0 (as in zero-filled space) in the middle of a segment:
    nothing after it can be framed."""
    log = second_segment(damaged)
    batch = batches_of(log)[4]
    data = bytearray(log.read_bytes())
    data[batch["batchPosition"] + 8 : batch["batchPosition"] + 12] = bytes(4)
    log.write_bytes(bytes(data))
    report = kafkalog.verify(damaged)
    found = problems_of(report)
    assert found and found[0][:3] in {
        ("unreadable", log.name, batch["batchPosition"]),
        ("corrupt_batch", log.name, batch["batchPosition"]),
        ("torn_tail", log.name, batch["batchPosition"]),
    }, found
    assert not report["ok"]


def test_verify_notes_missing_indexes(damaged):
    log = second_segment(damaged)
    log.with_suffix(".index").unlink()
    report = kafkalog.verify(damaged)
    assert report["ok"] and report["problems"] == []
    assert notes_of(report) == [("index_missing", log.with_suffix(".index").name, None, None)]
    log.with_suffix(".timeindex").unlink()
    report = kafkalog.verify(damaged)
    assert report["ok"] and report["problems"] == []
    assert sorted(notes_of(report)) == [
        ("index_missing", log.with_suffix(".index").name, None, None),
        ("time_index_missing", log.with_suffix(".timeindex").name, None, None),
    ]
    assert all(Path(n["path"]).parent == damaged for n in report["notes"])


# --- 6. rebuild_indexes -------------------------------------------------------------------------


def recovery_entries(batches: list[dict], interval: int) -> tuple[list[tuple], list[tuple]]:
    """The entries Kafka's log recovery writes for a segment's batches (``LogSegment.recover``,
    docs/format.md 5.5 and 6): per batch, the running maximum timestamp and the last offset of the
    batch first holding it; an offset entry (batch last offset, position) and a time entry
    whenever more than ``interval`` bytes went by since the last entry, checked before the
    batch is counted; a final time entry. A time entry is added only when its timestamp is
    greater than the last one's (than -1 for the first)."""
    offsets, times = [], []
    valid, last_entry = 0, 0
    max_ts, max_offset = -1, None

    def maybe_time():
        if max_ts > (times[-1][0] if times else -1):
            times.append((max_ts, max_offset))

    for b in batches:
        if b["maxTimestamp"] > max_ts:
            max_ts, max_offset = b["maxTimestamp"], b["lastOffset"]
        if valid - last_entry > interval:
            offsets.append((b["lastOffset"], valid))
            maybe_time()
            last_entry = valid
        valid += b["batchSize"]
    maybe_time()
    return offsets, times


def index_files(directory: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.iterdir())
        if p.suffix in (".index", ".timeindex", ".txnindex")
    }


def logs_state(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in segment_logs(directory)}


def check_rebuilt(directory: Path, result: list[dict], interval: int) -> None:
    """Each segment's rebuilt files hold what recovery would write, and the report agrees."""
    assert [Path(r["path"]) for r in result] == segment_logs(directory)
    for r in result:
        log = Path(r["path"])
        batches = batches_of(log)
        valid = [b for b in batches if b["batchPosition"] + b["batchSize"] <= r["valid_bytes"]]
        want_offsets, want_times = recovery_entries(valid, interval)
        index = index_entries(log.with_suffix(".index"))
        times = index_entries(log.with_suffix(".timeindex"))
        assert [(e["offset"], e["position"]) for e in index] == want_offsets, log.name
        assert [(e["timestamp"], e["offset"]) for e in times] == want_times, log.name
        assert log.with_suffix(".index").stat().st_size == OFFSET_ENTRY * len(index)
        assert log.with_suffix(".timeindex").stat().st_size == TIME_ENTRY * len(times)
        assert (r["index_entries"], r["time_index_entries"]) == (len(index), len(times))
        assert r["log_bytes"] == log.stat().st_size
        txn = log.with_suffix(".txnindex")
        assert r["aborted_transactions"] == (txn.stat().st_size // TXN_ENTRY if txn.exists() else 0)


REBUILD_CASES = [
    (2, "none", 250),
    (2, "gzip", 100),
    (2, "zstd", 4096),
    (1, "none", 300),
    (1, "lz4", 0),
    (0, "snappy", 500),
]


@pytest.mark.parametrize(
    ("magic", "codec", "interval"),
    REBUILD_CASES,
    ids=[f"v{m}-{c}-{i}" for m, c, i in REBUILD_CASES],
)
def test_rebuild_gives_back_what_write_wrote(tmp_path, magic, codec, interval):
    out = tmp_path / "rebuild-0"
    write_partition_dir(
        out,
        partition_table(random.Random(14), 300, first_offset=77),
        magic=magic,
        compression=codec,
        segment_bytes=4000,
        index_interval_bytes=interval,
    )
    written = index_files(out)
    logs = logs_state(out)
    snapshots = sorted(p.name for p in out.glob("*.snapshot"))  # left as they are
    assert len(logs) >= 2
    for name in written:
        (out / name).unlink()
    result = kafkalog.rebuild_indexes(out, index_interval_bytes=interval)
    assert index_files(out) == written
    assert logs_state(out) == logs
    assert all(r["stopped"] is None and r["valid_bytes"] == r["log_bytes"] for r in result)
    check_rebuilt(out, result, interval)
    # No temporary files.
    assert sorted(p.name for p in out.iterdir()) == sorted([*written, *logs, *snapshots])


def test_rebuild_replaces_wrong_index_files(seekable):
    written = index_files(seekable)
    for name in written:
        (seekable / name).write_bytes(b"\x00\x01garbage" * 7)
    result = kafkalog.rebuild_indexes(seekable, index_interval_bytes=400)
    assert index_files(seekable) == written
    check_rebuilt(seekable, result, 400)


def test_rebuild_default_interval_is_4096(tmp_path):
    out = tmp_path / "default-0"
    write_partition_dir(
        out,
        partition_table(random.Random(15), 400),
        segment_bytes=1 << 20,
        index_interval_bytes=4096,
    )
    written = index_files(out)
    assert len(index_entries(out / "00000000000000000000.index")) >= 2
    for name in written:
        (out / name).unlink()
    kafkalog.rebuild_indexes(out)
    assert index_files(out) == written


def test_rebuild_transaction_indexes(txn_written):
    h, out = txn_written
    written = index_files(out)
    txns = [n for n in written if n.endswith(".txnindex")]
    assert txns
    for name in txns:
        (out / name).unlink()
    clean = logs_state(out)
    without = next(p for p in segment_logs(out) if p.with_suffix(".txnindex").name not in written)
    without.with_suffix(".txnindex").write_bytes(struct.pack(">hqqqq", 0, 5, 0, 1, 2))  # stale
    result = kafkalog.rebuild_indexes(out, index_interval_bytes=100)
    assert index_files(out) == written  # the stale one is gone
    assert logs_state(out) == clean
    assert sum(r["aborted_transactions"] for r in result) == 2
    check_rebuilt(out, result, 100)
    report = kafkalog.verify(out)
    assert report["ok"] and report["problems"] == [] and report["notes"] == []


def test_rebuild_a_log_directory(tmp_path):
    """Partitions are rebuilt separately: the same producer ids in two partitions, a
    transaction aborted in one and committed in the other."""
    logs = tmp_path / "logs"
    scenario()[0].write_with_indexes(logs / "txn-0", segment_bytes=700, index_interval_bytes=100)
    h1 = History()
    h1.data(1000, 2)
    h1.marker(1000, CONTROL_COMMIT)
    h1.data(2000, 2)
    h1.marker(2000, CONTROL_ABORT)
    h1.write_with_indexes(logs / "txn-1", segment_bytes=700, index_interval_bytes=100)
    written = {d.name: index_files(d) for d in sorted(logs.iterdir())}
    for d in logs.iterdir():
        for name in written[d.name]:
            (d / name).unlink()
    result = kafkalog.rebuild_indexes(logs, index_interval_bytes=100)
    assert {d.name: index_files(d) for d in sorted(logs.iterdir())} == written
    assert len(result) == sum(len(segment_logs(d)) for d in logs.iterdir())
    assert index_entries(logs / "txn-1" / "00000000000000000000.txnindex") == [
        {"version": 0, "producerId": 2000, "firstOffset": 3, "lastOffset": 5, "lastStableOffset": 6}
    ]


@pytest.mark.parametrize("source", [OFFSETS_15, OFFSETS_6], ids=["nomanazeem", "Niloufar"])
def test_rebuild_gives_back_the_brokers_indexes(corpus, tmp_path, source):
    """Real __consumer_offsets partitions (one batch per append): rebuilt with the broker's
    default interval, the .index and .timeindex are the broker's, byte for byte."""
    out = copy_partition(source, tmp_path / source.name)
    originals = index_files(out)
    assert set(originals) == {"00000000000000000000.index", "00000000000000000000.timeindex"}
    logs = logs_state(out)
    for name in originals:
        (out / name).unlink()
    result = kafkalog.rebuild_indexes(out)
    assert index_files(out) == originals
    assert logs_state(out) == logs
    assert [(r["stopped"], r["valid_bytes"] == r["log_bytes"]) for r in result] == [(None, True)]
    check_rebuilt(out, result, 4096)


def test_rebuild_invoice(corpus, tmp_path):
    """The broker indexed per append (an entry may name a later batch of the append); recovery
    indexes per batch. Rebuilt, every entry names its own batch, the last segment gets indexes
    too, and bounded reads agree with the full read."""
    out = copy_partition(INVOICE, tmp_path / "invoice-0")
    logs = logs_state(out)
    result = kafkalog.rebuild_indexes(out)
    assert logs_state(out) == logs
    assert len(result) == 4 and all(r["stopped"] is None for r in result)
    check_rebuilt(out, result, 4096)
    report = kafkalog.verify(out)
    assert report["ok"] and report["problems"] == [] and report["notes"] == []
    m = invoice_model()
    for start in (4_641, 45_000, 95_000):
        got = read_offsets(out, start_offset=start, end_offset=start + 500)
        assert got == keys(m(start_offset=start, end_offset=start + 500))


@pytest.mark.parametrize("magic", [2, 1, 0])
def test_rebuild_stops_at_a_corrupt_batch(damaged, tmp_path, magic):
    """Like recovery, indexing stops at the first batch that fails its CRC: nothing at or after
    it is indexed, ``valid_bytes`` is its position, ``stopped`` says why. The .log is left as
    it is; the other segments are indexed in full."""
    out = damaged
    if magic != 2:
        out = tmp_path / f"legacy{magic}-0"
        write_partition_dir(
            out,
            partition_table(random.Random(16), 300),
            magic=magic,
            segment_bytes=5000,
            index_interval_bytes=300,
        )
    log = second_segment(out)
    batches = batches_of(log)
    bad = batches[len(batches) // 2]
    flip(log, bad["batchPosition"] + bad["batchSize"] - 2)  # a byte of the last value
    logs = logs_state(out)
    result = kafkalog.rebuild_indexes(out, index_interval_bytes=300)
    assert logs_state(out) == logs
    r = next(r for r in result if Path(r["path"]) == log)
    assert r["valid_bytes"] == bad["batchPosition"]
    assert r["log_bytes"] == log.stat().st_size
    assert isinstance(r["stopped"], str) and "crc" in r["stopped"].lower()
    assert all(
        e["position"] < bad["batchPosition"] for e in index_entries(log.with_suffix(".index"))
    )
    assert all(
        e["offset"] < bad["baseOffset"] for e in index_entries(log.with_suffix(".timeindex"))
    )
    assert all(x["stopped"] is None for x in result if x is not r)
    check_rebuilt(out, result, 300)


def test_rebuild_stops_at_a_torn_tail(damaged):
    log = segment_logs(damaged)[-1]
    last = batches_of(log)[-1]
    with log.open("r+b") as f:
        f.truncate(last["batchPosition"] + 30)
    result = kafkalog.rebuild_indexes(damaged, index_interval_bytes=300)
    r = result[-1]
    assert (r["valid_bytes"], r["log_bytes"]) == (last["batchPosition"], last["batchPosition"] + 30)
    check_rebuilt(damaged, result, 300)


def test_rebuild_does_not_decompress(tmp_path):
    """Recovery checks each batch's size and CRC (``ensureValid``), it does not decompress data
    batches: a gzip batch whose stream is not gzip but whose CRC is right is indexed like the
    others, and indexing goes on past it."""
    parts = []
    offset = 0
    for i in range(12):
        recs = [Rec(b"k", b"value-%d|" % (offset + j) * 10, T0 + offset + j) for j in range(3)]
        seg = build_batch("kafka-python", 2, "none", recs, offset)
        data = seg.data
        if i == 4:
            data = with_records_stream(data, "gzip", b"not a gzip stream" * 3)
        parts.append(data)
        offset += 3
    log = b"".join(parts)
    out = tmp_path / "undecodable-0"
    out.mkdir()
    (out / "00000000000000000000.log").write_bytes(log)
    result = kafkalog.rebuild_indexes(out, index_interval_bytes=200)
    assert [(r["valid_bytes"], r["stopped"]) for r in result] == [(len(log), None)]
    check_rebuilt(out, result, 200)
