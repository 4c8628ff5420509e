"""kafkalog.write: Arrow into Kafka partition directories that Kafka's readers accept.

What is written is read back by two independent implementations of Kafka's record formats
(kafka-python and aiokafka) and by kafkalog itself; real broker segments from the corpus are
rewritten byte for byte; segments, ``.index``, ``.timeindex`` and ``.txnindex`` are checked
against the broker's rules (``docs/format.md`` sections 1-5); bad input must fail
before anything appears on disk.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkalog
from conftest import CORPUS, REPO
from kafka_builders import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CREATE_TIME,
    LIBRARIES,
    LOG_APPEND_TIME,
    MAGIC_CODECS,
    NO_TIMESTAMP_TYPE,
    Rec,
    build_batch,
    build_segment,
    control_batch,
    expected_rows,
    library_batches,
    supports,
    xxh32,
)

T0 = 1_700_000_000_000  # ms
APPEND_TIME = 1_700_000_999_123

HEADERS_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
RECORD_FIELDS = ["offset", "key", "value", "timestamp", "headers"]
OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY = 8, 12, 34
EXAMPLES = REPO / "examples" / "logs"


# --- helpers ----------------------------------------------------------------------------------


def rec_table(recs: list[Rec], *, with_offset: bool = True) -> pa.Table:
    """The input table for records: key, value, timestamp (int64 ms), headers[, offset]."""
    columns = {
        "key": pa.array([r.key for r in recs], pa.binary()),
        "value": pa.array([r.value for r in recs], pa.binary()),
        "timestamp": pa.array([r.timestamp for r in recs], pa.int64()),
        "headers": pa.array(
            [[{"key": k, "value": v} for k, v in r.headers] or None for r in recs], HEADERS_TYPE
        ),
    }
    if with_offset:
        columns = {"offset": pa.array([r.offset for r in recs], pa.int64()), **columns}
    return pa.table(columns)


def rows_of(table: pa.Table, fields=RECORD_FIELDS) -> list[dict]:
    """Rows with the timestamp as int ms (None when absent)."""
    rows = table.select(fields).to_pylist()
    if "timestamp" in fields:
        micros = table.column("timestamp").cast(pa.int64()).to_pylist()
        for row, us in zip(rows, micros, strict=True):
            assert us is None or us % 1000 == 0, us
            row["timestamp"] = None if us is None else us // 1000
    return rows


def read_rows(path, **options) -> list[dict]:
    return rows_of(kafkalog.read(path, **options).read_all())


def expected(recs: list[Rec], magic: int, **kw) -> list[dict]:
    """What Kafka's consumer shows for ``recs`` (kafka_builders' reference), as RECORD_FIELDS."""
    return [{f: row[f] for f in RECORD_FIELDS} for row in expected_rows(recs, magic, **kw)]


def batches_of(source) -> list[dict]:
    return kafkalog.read_batches(source).read_all().to_pylist()


def library_rows(data: bytes, library: str) -> tuple[list[dict], list[dict]]:
    """(batches, records) as the library's own reader reports them, in kafkalog's conventions."""
    batches = library_batches(data, library)
    rows = []
    for batch in batches:
        for r in batch["records"]:
            ts = r["timestamp"]
            rows.append(
                {
                    "offset": r["offset"],
                    "key": r["key"],
                    "value": r["value"],
                    "timestamp": None if ts is None or ts == -1 else ts,
                    "headers": [{"key": k, "value": v} for k, v in r["headers"]] or None,
                }
            )
    return batches, rows


def segment_files(directory: Path, suffix: str) -> list[Path]:
    return sorted(directory.glob(f"*.{suffix}"))


def leftovers(parent: Path, name: str) -> list[str]:
    """Hidden staging (or swapped-out) directories a write may have left beside ``name``."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def assert_nothing_written(parent: Path, name: str) -> None:
    assert not (parent / name).exists(), f"{name} was created"
    assert leftovers(parent, name) == [], "a temporary directory was left behind"


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def expected_indexes(
    batches: list[dict], base_offset: int, interval: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The broker's entries for batches appended one by one (docs/format.md 5.3-5.5):
    before each append, if more than ``interval`` bytes went in since the last entry, an offset
    entry (that batch's last offset, its position) and a time entry (max timestamp so far, the
    last offset of the earliest batch holding it) when its timestamp is greater than the last
    time entry's (the first needs > -1); a final time entry at close, by the same rule."""
    offsets: list[tuple[int, int]] = []
    times: list[tuple[int, int]] = []
    since = 0
    max_ts, max_ts_offset = -1, base_offset

    def maybe_time():
        if max_ts > (times[-1][0] if times else -1):
            times.append((max_ts, max_ts_offset))

    for b in batches:
        if b["maxTimestamp"] > max_ts:
            max_ts, max_ts_offset = b["maxTimestamp"], b["lastOffset"]
        if since > interval:
            offsets.append((b["lastOffset"], b["batchPosition"]))
            maybe_time()
            since = 0
        since += b["batchSize"]
    maybe_time()
    return offsets, times


def check_segment_indexes(log: Path, interval: int = 4096) -> tuple[list, list]:
    """A written segment's .index/.timeindex hold exactly the broker's entries, trimmed, and
    each offset entry points at a batch boundary whose lastOffset is the entry's offset."""
    base = int(log.name.split(".")[0])
    batches = batches_of(log)
    index_path, time_path = log.with_suffix(".index"), log.with_suffix(".timeindex")
    assert index_path.is_file() and time_path.is_file()
    index = kafkalog.read_index(index_path).to_pylist()
    times = kafkalog.read_index(time_path).to_pylist()
    # trimmed as on a clean shutdown: no preallocated (zero) slots
    assert index_path.stat().st_size == len(index) * OFFSET_ENTRY
    assert time_path.stat().st_size == len(times) * TIME_ENTRY
    for e in index:
        assert e["relativeOffset"] == e["offset"] - base
    for e in times:
        assert e["relativeOffset"] == e["offset"] - base
    want_offsets, want_times = expected_indexes(batches, base, interval)
    assert [(e["offset"], e["position"]) for e in index] == want_offsets
    assert [(e["timestamp"], e["offset"]) for e in times] == want_times
    by_position = {b["batchPosition"]: b for b in batches}
    for e in index:
        assert e["position"] in by_position, "an index entry is not at a batch boundary"
        assert by_position[e["position"]]["lastOffset"] == e["offset"]
    return index, times


def check_partition_indexes(directory: Path, interval: int = 4096) -> None:
    for log in segment_files(directory, "log"):
        check_segment_indexes(log, interval)


# --- 1. interop: what kafkalog writes, kafka-python and aiokafka read --------------------------


def interop_records(magic: int) -> list[Rec]:
    """14 records with offset gaps, null and empty keys/values, compressible and binary values,
    out-of-order timestamps and (v2) headers with null values."""
    offsets = [7, 8, 9, 12, 13, 14, 15, 30, 31, 32, 40, 41, 42, 43]
    recs = []
    for i, off in enumerate(offsets):
        key = None if i % 5 == 1 else (b"" if i == 3 else b"key-%d" % i)
        value = [b"value-%02d|" % i * 20, b"", None, bytes(range(256))][i % 4]
        headers: tuple = ()
        if magic == 2 and i % 3 != 2:
            headers = (("trace", b"t-%d" % i), ("empty", b""), ("null", None))[: 1 + i % 3]
        ts = T0 + 1000 * i - (2500 if i % 4 == 3 else 0)
        recs.append(Rec(key=key, value=value, timestamp=ts, headers=headers, offset=off))
    return recs


PAIR_IDS = [f"v{m}-{c}" for m, c in MAGIC_CODECS]


def _write_interop(tmp_path: Path, magic: int, codec: str) -> tuple[Path, list[Rec]]:
    recs = interop_records(magic)
    out = tmp_path / "interop-0"
    summary = kafkalog.write(out, rec_table(recs), magic=magic, compression=codec, batch_records=4)
    assert len(summary) == 1
    log = Path(summary[0]["path"])
    assert log == out / "00000000000000000007.log"
    assert summary[0]["bytes"] == log.stat().st_size
    assert summary[0]["records"] == len(recs)
    assert (summary[0]["base_offset"], summary[0]["last_offset"]) == (7, 43)
    return log, recs


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=PAIR_IDS)
def test_interop_kafkalog_reads_back(tmp_path, magic, codec):
    log, recs = _write_interop(tmp_path, magic, codec)
    assert read_rows(log.parent) == expected(recs, magic)
    types = kafkalog.read(log).read_all().column("timestampType").to_pylist()
    assert set(types) == {NO_TIMESTAMP_TYPE if magic == 0 else CREATE_TIME}
    ours = batches_of(log)
    assert {b["magic"] for b in ours} == {magic}
    assert {b["compression"] for b in ours} == {codec}
    assert all(b["crcValid"] is True for b in ours)
    if magic < 2 and codec == "none":
        assert [b["recordCount"] for b in ours] == [1] * len(recs)  # one entry per message
    else:
        assert [b["recordCount"] for b in ours] == [4, 4, 4, 2]
    if codec == "lz4":
        # Kafka's frame: FLG 0x60, BD 0x40, and the header checksum over the descriptor, except
        # for v0 where Kafka (KAFKA-3160) hashed the magic bytes too (docs/format.md 3.3).
        data = log.read_bytes()
        start = data.find(bytes.fromhex("04224d18"))
        assert start > 0
        frame = data[start : start + 7]
        assert frame[4:6] == bytes([0x60, 0x40])
        hashed = frame[:6] if magic == 0 else frame[4:6]
        assert frame[6] == (xxh32(hashed) >> 8) & 0xFF


def _library_params():
    params = []
    for library in LIBRARIES:
        for magic, codec in MAGIC_CODECS:
            marks = ()
            if not supports(library, magic, codec):
                marks = pytest.mark.skip(
                    reason=f"{library} cannot decode {codec} at magic v{magic}"
                )
            params.append(
                pytest.param(library, magic, codec, id=f"{library}-v{magic}-{codec}", marks=marks)
            )
    return params


@pytest.mark.parametrize(("library", "magic", "codec"), _library_params())
def test_interop_library_reads_back(tmp_path, library, magic, codec):
    log, recs = _write_interop(tmp_path, magic, codec)
    batches, rows = library_rows(log.read_bytes(), library)
    assert all(b["crcValid"] is True for b in batches)
    assert rows == expected(recs, magic)
    assert [b["lastOffset"] for b in batches] == [b["lastOffset"] for b in batches_of(log)]
    for b in batches:
        if b["magic"] is not None:
            assert b["magic"] == magic
        if b["compression"] is not None:
            assert b["compression"] == codec


# --- 2. faithful round trip of real segments --------------------------------------------------

NAMED_SEGMENTS = [
    "Niloufar1171__LDI-POC/__consumer_offsets-6/00000000000000000000.log",
    "xpxwo100__bullShit/tmp/kafka-logs/foo-0/00000000000000000000.log",
    "nomanazeem__Kafka-java/kafka-logs/__cluster_metadata-0/00000000000000000000.log",
    "seanorth__kafka-server/kafka-logs/some-topic-0/00000000000000000000.log",
]


def _corpus_segments() -> list[str]:
    root = CORPUS / "segments"
    found = {str(p.relative_to(root)) for p in root.rglob("*.log")} if root.is_dir() else set()
    return sorted(found | set(NAMED_SEGMENTS))


def _example_segments() -> list[str]:
    return sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*-*/*.log"))


BATCH_FIELDS_KEPT = [
    "magic",
    "baseOffset",
    "lastOffset",
    "recordCount",
    "compression",
    "timestampType",
    "baseTimestamp",
    "maxTimestamp",
    "partitionLeaderEpoch",
    "producerId",
    "producerEpoch",
    "baseSequence",
    "lastSequence",
    "isTransactional",
    "isControl",
    "deleteHorizonMs",
]
# per-record columns that depend on where and how a batch was compressed
RECORD_COLUMNS_MOVED = ["batchPosition", "batchSize", "recordCrc"]


def check_faithful_roundtrip(source: Path, out: Path) -> None:
    table = kafkalog.read(source, batch_metadata=True, include_control=True).read_all()
    summary = kafkalog.write(out, table)
    assert len(summary) == 1
    written = Path(summary[0]["path"])
    original, copy = batches_of(source), batches_of(written)
    # named after the first offset it holds
    first = original[0]["baseOffset"] if original else 0
    assert written.name == f"{first:020d}.log"
    assert summary[0]["records"] == table.num_rows
    assert summary[0]["batches"] == len(original)
    data = written.read_bytes()
    if all(b["compression"] == "none" for b in original):
        assert data == source.read_bytes()
    # same batches, same boundaries and header fields, valid CRCs
    assert [{f: b[f] for f in BATCH_FIELDS_KEPT} for b in copy] == [
        {f: b[f] for f in BATCH_FIELDS_KEPT} for b in original
    ]
    assert all(b["crcValid"] is True for b in copy)
    position = 0
    for b in copy:
        assert b["batchPosition"] == position
        position += b["batchSize"]
    assert position == len(data)
    # same records, with the same metadata
    again = kafkalog.read(written, batch_metadata=True, include_control=True).read_all()
    keep = [c for c in table.column_names if c not in RECORD_COLUMNS_MOVED]
    assert again.select(keep).equals(table.select(keep))
    check_segment_indexes(written)


@pytest.mark.parametrize("segment", _corpus_segments())
def test_faithful_roundtrip_corpus(corpus, tmp_path, segment):
    source = corpus / "segments" / segment
    assert source.is_file()
    check_faithful_roundtrip(source, tmp_path / source.parent.name)


@pytest.mark.parametrize("segment", _example_segments())
def test_faithful_roundtrip_examples(tmp_path, segment):
    source = EXAMPLES / segment
    check_faithful_roundtrip(source, tmp_path / source.parent.name)


def _faithful_params():
    params = []
    for library in LIBRARIES:
        for magic, codec in MAGIC_CODECS:
            if not supports(library, magic, codec):
                continue
            for lat in (None, APPEND_TIME) if magic > 0 else (None,):
                kind = "LogAppendTime" if lat else "CreateTime"
                params.append(
                    pytest.param(
                        library, magic, codec, lat, id=f"{library}-v{magic}-{codec}-{kind}"
                    )
                )
    return params


@pytest.mark.parametrize(("library", "magic", "codec", "log_append_time"), _faithful_params())
def test_faithful_roundtrip_library_built(tmp_path, library, magic, codec, log_append_time):
    """Segments as brokers store what kafka-python and aiokafka produce (offset gaps between
    batches, a leader epoch, LogAppendTime) are rebuilt batch for batch."""
    batches = [
        [
            Rec(
                b"k%d" % i,
                b"val-%d|" % i * 10 if i % 4 else None,
                T0 + 13 * i - (i % 3) * 40,
                (("h", b"x"),) if magic == 2 and i % 2 else (),
            )
            for i in range(j, j + 3)
        ]
        for j in (0, 3, 6)
    ]
    seg = build_segment(
        library,
        magic,
        codec,
        batches,
        base_offset=100,
        gap=2,
        log_append_time=log_append_time,
        partition_leader_epoch=4,
    )
    source = tmp_path / "source" / "t-0" / "00000000000000000100.log"
    source.parent.mkdir(parents=True)
    source.write_bytes(seg.data)
    out = tmp_path / "t-0"
    table = kafkalog.read(source, batch_metadata=True, include_control=True).read_all()
    kafkalog.write(out, table)
    data = (out / "00000000000000000100.log").read_bytes()
    if codec == "none" and not (magic == 2 and log_append_time):
        # (a v2 LogAppendTime batch cannot be: its records' own timestamp deltas are not read)
        assert data == seg.data
    fields = [*BATCH_FIELDS_KEPT, "crcValid"]
    assert [{f: b[f] for f in fields} for b in batches_of(data)] == [
        {f: b[f] for f in fields} for b in batches_of(seg.data)
    ]
    keep = [c for c in table.column_names if c not in RECORD_COLUMNS_MOVED]
    again = kafkalog.read(out, batch_metadata=True, include_control=True).read_all()
    assert again.select(keep).equals(table.select(keep))
    _, rows = library_rows(data, "kafka-python")
    assert rows == rows_of(table)


def test_examples_are_there():
    partitions = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    assert partitions, "examples/logs is empty"
    assert len(_example_segments()) >= len(partitions)


@pytest.mark.parametrize("partition", sorted(p.name for p in EXAMPLES.glob("*-*") if p.is_dir()))
def test_faithful_roundtrip_example_partitions(tmp_path, partition):
    """A whole partition (several segments, mixed magic and codecs) rewritten into one."""
    source = EXAMPLES / partition
    table = kafkalog.read(source, batch_metadata=True, include_control=True).read_all()
    out = tmp_path / partition
    kafkalog.write(out, table)
    again = kafkalog.read(out, batch_metadata=True, include_control=True).read_all()
    keep = [c for c in table.column_names if c not in RECORD_COLUMNS_MOVED]
    assert again.select(keep).equals(table.select(keep))
    original = [b for log in segment_files(source, "log") for b in batches_of(log)]
    copy = batches_of(out)
    assert [{f: b[f] for f in BATCH_FIELDS_KEPT} for b in copy] == [
        {f: b[f] for f in BATCH_FIELDS_KEPT} for b in original
    ]
    check_partition_indexes(out)


# --- 3. conversion and the options of fresh batches -------------------------------------------


def test_convert_v1_corpus_segment_to_v2_zstd(corpus, tmp_path):
    source = corpus / "segments" / "xpxwo100__bullShit/tmp/kafka-logs/foo-0"
    table = kafkalog.read(source, batch_metadata=True).read_all()
    assert set(table.column("magic").to_pylist()) == {1}
    out = tmp_path / "foo-0"
    kafkalog.write(out, table, magic=2, compression="zstd", preserve_batches=False)
    batches = batches_of(out)
    assert {(b["magic"], b["compression"]) for b in batches} == {(2, "zstd")}
    assert len(batches) < table.num_rows  # records regrouped, not one batch per v1 message
    again = kafkalog.read(out).read_all()
    fields = ["offset", "key", "value", "timestamp", "timestampType"]
    assert rows_of(again, fields) == rows_of(table, fields)
    # and a Kafka client agrees
    data = b"".join(p.read_bytes() for p in segment_files(out, "log"))
    _, rows = library_rows(data, "kafka-python")
    assert [(r["offset"], r["key"], r["value"], r["timestamp"]) for r in rows] == [
        (r["offset"], r["key"], r["value"], r["timestamp"])
        for r in rows_of(table, ["offset", "key", "value", "timestamp"])
    ]


@pytest.mark.parametrize("codec", ["gzip", "lz4", "zstd"])
def test_preserved_batches_recompressed(corpus, tmp_path, codec):
    """With the metadata and an explicit codec, each batch keeps its records, offsets and
    producer fields and only changes its compression."""
    source = corpus / "segments" / "Niloufar1171__LDI-POC/__consumer_offsets-6"
    table = kafkalog.read(source, batch_metadata=True, include_control=True).read_all()
    out = tmp_path / "__consumer_offsets-6"
    kafkalog.write(out, table, compression=codec)
    original, copy = batches_of(source), batches_of(out)
    assert {b["compression"] for b in copy} == {codec}
    same = [f for f in BATCH_FIELDS_KEPT if f != "compression"]
    assert [{f: b[f] for f in same} for b in copy] == [{f: b[f] for f in same} for b in original]
    assert rows_of(kafkalog.read(out).read_all()) == rows_of(table)
    data = (out / "00000000000000000000.log").read_bytes()
    for library in LIBRARIES:
        lib_batches, rows = library_rows(data, library)
        assert all(b["crcValid"] for b in lib_batches)
        assert rows == rows_of(table)


@pytest.mark.parametrize(
    ("codec", "levels"), [("gzip", (1, 9)), ("zstd", (1, 19)), ("lz4", (1, 9))]
)
def test_compression_level(tmp_path, codec, levels):
    recs = [Rec(b"k%d" % i, b"level " * 40 + b"%d" % i, T0 + i, offset=i) for i in range(50)]
    for level in levels:
        out = tmp_path / f"{codec}{level}-0"
        kafkalog.write(out, rec_table(recs), compression=codec, compression_level=level)
        assert read_rows(out) == expected(recs, 2)
        _, rows = library_rows((out / "00000000000000000000.log").read_bytes(), "kafka-python")
        assert rows == expected(recs, 2)


def test_convert_v0_example_to_v2_zstd(tmp_path):
    """v0 records have no timestamp: as v2 they are CreateTime with timestamp -1
    (docs/format.md 2.2, KAFKA-13093)."""
    table = kafkalog.read(EXAMPLES / "clicks-0", batch_metadata=True).read_all()
    assert set(table.column("magic").to_pylist()) == {0}
    out = tmp_path / "clicks-0"
    kafkalog.write(out, table, magic=2, compression="zstd", preserve_batches=False)
    assert {(b["magic"], b["compression"]) for b in batches_of(out)} == {(2, "zstd")}
    again = kafkalog.read(out).read_all()
    fields = ["offset", "key", "value"]
    assert rows_of(again, fields) == rows_of(table, fields)
    assert set(again.column("timestamp").to_pylist()) == {None}
    assert set(again.column("timestampType").to_pylist()) == {CREATE_TIME}
    assert {b["maxTimestamp"] for b in batches_of(out)} == {-1}


@pytest.mark.parametrize(("magic", "codec"), [(1, "none"), (1, "gzip"), (2, "none"), (2, "snappy")])
def test_log_append_time(tmp_path, magic, codec):
    """Every record of a LogAppendTime batch has the append time (docs/format.md 1.2, 2.2): for
    uncompressed v1 the broker writes it into each message."""
    recs = [Rec(b"k%d" % i, b"v%d" % i * 30, T0 + 7 * i, offset=i) for i in range(6)]
    out = tmp_path / "lat-0"
    kafkalog.write(
        out,
        rec_table(recs),
        magic=magic,
        compression=codec,
        timestamp_type="LogAppendTime",
        log_append_time=APPEND_TIME,
    )
    table = kafkalog.read(out).read_all()
    assert set(table.column("timestampType").to_pylist()) == {LOG_APPEND_TIME}
    assert [r["timestamp"] for r in rows_of(table)] == [APPEND_TIME] * 6
    assert {b["maxTimestamp"] for b in batches_of(out)} == {APPEND_TIME}
    assert {b["timestampType"] for b in batches_of(out)} == {LOG_APPEND_TIME}
    data = (out / "00000000000000000000.log").read_bytes()
    for library in LIBRARIES:
        batches, rows = library_rows(data, library)
        assert all(b["crcValid"] for b in batches)
        assert [r["timestamp"] for r in rows] == [APPEND_TIME] * 6, library
    # the time index agrees with the data
    _, times = check_segment_indexes(out / "00000000000000000000.log")
    assert [e["timestamp"] for e in times] == [APPEND_TIME]


def test_create_time_is_the_default(tmp_path):
    recs = [Rec(b"k", b"v", T0 + 5 - i, offset=i) for i in range(4)]
    out = tmp_path / "ct-0"
    kafkalog.write(out, rec_table(recs))
    table = kafkalog.read(out).read_all()
    assert set(table.column("timestampType").to_pylist()) == {CREATE_TIME}
    assert [r["timestamp"] for r in rows_of(table)] == [T0 + 5, T0 + 4, T0 + 3, T0 + 2]
    (batch,) = batches_of(out)
    assert (batch["baseTimestamp"], batch["maxTimestamp"]) == (T0 + 5, T0 + 5)


def test_base_offset_assigns_offsets(tmp_path):
    recs = [Rec(b"k%d" % i, b"v", T0 + i) for i in range(25)]
    out = tmp_path / "based-0"
    summary = kafkalog.write(out, rec_table(recs, with_offset=False), base_offset=1000)
    assert [(s["base_offset"], s["last_offset"], s["records"]) for s in summary] == [
        (1000, 1024, 25)
    ]
    assert Path(summary[0]["path"]) == out / "00000000000000001000.log"
    assert [r["offset"] for r in read_rows(out)] == list(range(1000, 1025))
    assert batches_of(out)[0]["baseOffset"] == 1000


@pytest.mark.parametrize(("magic", "codec"), [(0, "gzip"), (1, "none"), (1, "lz4"), (2, "none")])
def test_offsets_with_gaps_are_kept(tmp_path, magic, codec):
    offsets = [5, 6, 9, 100, 101, 1000, 5000]
    recs = [Rec(b"k%d" % o, b"v%d" % o, T0 + o, offset=o) for o in offsets]
    out = tmp_path / "gaps-0"
    kafkalog.write(out, rec_table(recs), magic=magic, compression=codec, base_offset=1)
    assert [r["offset"] for r in read_rows(out)] == offsets
    assert read_rows(out) == expected(recs, magic)
    batches = batches_of(out)
    if magic == 2 or codec != "none":
        (batch,) = batches
        assert (batch["baseOffset"], batch["lastOffset"], batch["recordCount"]) == (5, 5000, 7)
    _, rows = library_rows((out / "00000000000000000005.log").read_bytes(), "kafka-python")
    assert [r["offset"] for r in rows] == offsets


def test_batch_records(tmp_path):
    recs = [Rec(b"k", b"v" * 10, T0, offset=i) for i in range(23)]
    out = tmp_path / "count-0"
    kafkalog.write(out, rec_table(recs), batch_records=5)
    assert [b["recordCount"] for b in batches_of(out)] == [5, 5, 5, 5, 3]
    assert [(b["baseOffset"], b["lastOffset"]) for b in batches_of(out)] == [
        (0, 4),
        (5, 9),
        (10, 14),
        (15, 19),
        (20, 22),
    ]


@pytest.mark.parametrize("value_size", [10, 100, 1000])
def test_batch_bytes_is_the_producers_batch_size(tmp_path, value_size):
    """As the producer's batch.size: a batch takes records while the whole batch (61-byte
    header included) stays within it; a record bigger than that gets a batch of its own."""
    n = 60
    recs = [Rec(b"k", b"x" * value_size, T0, offset=i) for i in range(n)]
    out = tmp_path / "bytes-0"
    kafkalog.write(out, rec_table(recs), batch_bytes=1024)
    batches = batches_of(out)
    assert sum(b["recordCount"] for b in batches) == n
    # identical records, offset deltas < 64 and timestamp deltas 0: every record encodes to the
    # same size, which the single-record batches (or the first batch) give
    first = batches[0]
    record_size = (first["batchSize"] - 61) // first["recordCount"]
    assert (first["batchSize"] - 61) % first["recordCount"] == 0
    if 61 + record_size > 1024:
        assert {b["recordCount"] for b in batches} == {1}
        return
    per_batch = (1024 - 61) // record_size
    counts = [b["recordCount"] for b in batches]
    assert counts[:-1] == [per_batch] * (len(counts) - 1), counts
    for b in batches:
        assert b["batchSize"] <= 1024


def test_batch_bytes_compressed(tmp_path):
    recs = [Rec(b"k", b"y" * 200, T0, offset=i) for i in range(100)]
    out = tmp_path / "zbytes-0"
    kafkalog.write(out, rec_table(recs), compression="zstd", batch_bytes=2048)
    batches = batches_of(out)
    counts = [b["recordCount"] for b in batches]
    assert sum(counts) == 100 and len(counts) > 1
    assert max(counts) <= 2048 // 200


def test_producer_fields_and_sequences(tmp_path):
    recs = [Rec(b"k%d" % i, b"v", T0 + i, offset=i) for i in range(10)]
    out = tmp_path / "idem-0"
    kafkalog.write(
        out,
        rec_table(recs),
        producer_id=4242,
        producer_epoch=7,
        base_sequence=100,
        batch_records=4,
        partition_leader_epoch=9,
    )
    batches = batches_of(out)
    assert [
        (b["producerId"], b["producerEpoch"], b["baseSequence"], b["lastSequence"]) for b in batches
    ] == [(4242, 7, 100, 103), (4242, 7, 104, 107), (4242, 7, 108, 109)]
    assert {b["partitionLeaderEpoch"] for b in batches} == {9}
    assert {b["isTransactional"] for b in batches} == {False}
    table = kafkalog.read(out, batch_metadata=True).read_all()
    assert table.column("sequence").to_pylist() == list(range(100, 110))
    data = (out / "00000000000000000000.log").read_bytes()
    for library in LIBRARIES:
        lib_batches, rows = library_rows(data, library)
        assert all(b["crcValid"] for b in lib_batches)
        assert [r["offset"] for r in rows] == list(range(10))


def test_sequence_wraps_after_int32_max(tmp_path):
    """incrementSequence wraps to 0 after 2147483647 (docs/format.md 1.1)."""
    recs = [Rec(b"k", b"v", T0, offset=i) for i in range(8)]
    out = tmp_path / "wrap-0"
    start = 2**31 - 3
    kafkalog.write(
        out, rec_table(recs), producer_id=1, producer_epoch=0, base_sequence=start, batch_records=4
    )
    batches = batches_of(out)
    assert [(b["baseSequence"], b["lastSequence"]) for b in batches] == [(start, 0), (1, 4)]
    table = kafkalog.read(out, batch_metadata=True).read_all()
    assert table.column("sequence").to_pylist() == [start, start + 1, start + 2, 0, 1, 2, 3, 4]


def test_no_producer_by_default(tmp_path):
    out = tmp_path / "plain-0"
    kafkalog.write(out, rec_table([Rec(b"k", b"v", T0, offset=0)]))
    (b,) = batches_of(out)
    assert (b["producerId"], b["producerEpoch"], b["baseSequence"]) == (-1, -1, -1)
    assert (b["isTransactional"], b["isControl"], b["partitionLeaderEpoch"]) == (False, False, 0)


def test_transactional_marks_batches(tmp_path):
    recs = [Rec(b"k%d" % i, b"v", T0 + i, offset=i) for i in range(6)]
    out = tmp_path / "txn-0"
    kafkalog.write(
        out,
        rec_table(recs),
        producer_id=77,
        producer_epoch=2,
        base_sequence=0,
        transactional=True,
        batch_records=3,
    )
    batches = batches_of(out)
    assert [(b["isTransactional"], b["isControl"], b["producerId"]) for b in batches] == [
        (True, False, 77),
        (True, False, 77),
    ]
    data = (out / "00000000000000000000.log").read_bytes()
    for library in LIBRARIES:
        lib_batches, _ = library_rows(data, library)
        assert [b["isTransactional"] for b in lib_batches] == [True, True]
    # an open transaction, never aborted: no .txnindex
    assert segment_files(out, "txnindex") == []


@pytest.mark.parametrize(
    "timestamps",
    [
        pa.array([T0, T0 + 1, None], pa.int64()),
        pa.array([T0, T0 + 1, None], pa.timestamp("ms")),
        pa.array([T0 * 1000, (T0 + 1) * 1000, None], pa.timestamp("us", tz="UTC")),
        pa.array([T0 * 10**6, (T0 + 1) * 10**6, None], pa.timestamp("ns")),
    ],
    ids=["int64-ms", "timestamp-ms", "timestamp-us-utc", "timestamp-ns"],
)
def test_timestamp_column_types(tmp_path, timestamps):
    table = pa.table(
        {
            "key": pa.array([b"a", b"b", b"c"]),
            "value": pa.array([b"1", b"2", b"3"]),
            "timestamp": timestamps,
        }
    )
    out = tmp_path / "ts-0"
    kafkalog.write(out, table)
    assert [r["timestamp"] for r in read_rows(out)] == [T0, T0 + 1, None]


def test_input_shapes_give_the_same_bytes(tmp_path):
    recs = [Rec(b"k%d" % i, b"v%d" % i, T0 + i, offset=i) for i in range(10)]
    table = rec_table(recs)
    batches = table.to_batches(max_chunksize=3)
    assert len(batches) == 4
    shapes = {
        "table": table,
        "chunked": pa.Table.from_batches(batches),
        "record_batch": table.combine_chunks().to_batches()[0],
        "list": batches,
        "reader": pa.RecordBatchReader.from_batches(table.schema, batches),
    }
    written = {}
    for name, data in shapes.items():
        out = tmp_path / f"{name}-0"
        kafkalog.write(out, data, batch_records=4)
        written[name] = snapshot(out)
    first = written["table"]
    assert [b["recordCount"] for b in batches_of(tmp_path / "table-0")] == [4, 4, 2]
    for name, files in written.items():
        assert files == first, name


def test_empty_input_writes_an_empty_segment(tmp_path):
    out = tmp_path / "empty-0"
    summary = kafkalog.write(out, rec_table([]), base_offset=42)
    assert [(s["base_offset"], s["records"], s["bytes"]) for s in summary] == [(42, 0, 0)]
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000042.index",
        "00000000000000000042.log",
        "00000000000000000042.timeindex",
    ]
    assert all(p.stat().st_size == 0 for p in out.iterdir())
    assert kafkalog.read(out).read_all().num_rows == 0


# --- 4. segments and indexes ------------------------------------------------------------------


def _varied_records(n: int, seed: int = 3) -> list[Rec]:
    import random

    rnd = random.Random(seed)
    recs = []
    for i in range(n):
        ts = T0 + 10 * i + rnd.choice([0, 0, -500, 300, -2000])  # out of order at times
        recs.append(Rec(b"key-%d" % i, rnd.randbytes(rnd.randint(20, 220)), ts, offset=i))
    return recs


@pytest.mark.parametrize(("magic", "codec"), [(2, "none"), (2, "gzip"), (1, "none"), (1, "snappy")])
def test_segments_roll_at_segment_bytes(tmp_path, magic, codec):
    recs = _varied_records(400)
    out = tmp_path / "roll-0"
    segment_bytes, interval = 3000, 700
    summary = kafkalog.write(
        out,
        rec_table(recs),
        magic=magic,
        compression=codec,
        batch_records=6,
        segment_bytes=segment_bytes,
        index_interval_bytes=interval,
    )
    logs = segment_files(out, "log")
    assert len(logs) >= 5
    assert [Path(s["path"]) for s in summary] == logs
    next_offset = 0
    for i, (log, s) in enumerate(zip(logs, summary, strict=True)):
        batches = batches_of(log)
        # named after its first offset, 20 digits; offsets continue from the previous segment
        assert log.name == f"{batches[0]['baseOffset']:020d}.log" == f"{s['base_offset']:020d}.log"
        assert batches[0]["baseOffset"] == next_offset
        next_offset = batches[-1]["lastOffset"] + 1
        assert s["last_offset"] == batches[-1]["lastOffset"]
        assert s["bytes"] == log.stat().st_size
        assert s["batches"] == len(batches)
        # never past segment_bytes, and rolled only when the next batch would not fit
        assert log.stat().st_size <= segment_bytes
        if i + 1 < len(logs):
            following = batches_of(logs[i + 1])[0]
            assert log.stat().st_size + following["batchSize"] > segment_bytes
        index, _ = check_segment_indexes(log, interval)
        assert index, "segments this size must have offset index entries"
    assert next_offset == 400
    assert read_rows(out) == expected(recs, magic)


def test_a_batch_bigger_than_segment_bytes_gets_its_own_segment(tmp_path):
    recs = [Rec(b"k%d" % i, b"z" * (5000 if i == 3 else 100), T0 + i, offset=i) for i in range(8)]
    out = tmp_path / "big-0"
    kafkalog.write(out, rec_table(recs), batch_records=1, segment_bytes=1000)
    logs = segment_files(out, "log")
    sizes = {log.name: log.stat().st_size for log in logs}
    assert sizes["00000000000000000003.log"] > 1000
    assert len(batches_of(out / "00000000000000000003.log")) == 1
    assert all(size <= 1000 for name, size in sizes.items() if name != "00000000000000000003.log")
    assert "00000000000000000004.log" in sizes  # the next batch starts a new segment
    assert [r["offset"] for r in read_rows(out)] == list(range(8))


@pytest.mark.parametrize("interval", [0, 1, 300, 4096, 1 << 20])
def test_index_entries_follow_the_broker(tmp_path, interval):
    recs = _varied_records(300, seed=interval)
    out = tmp_path / "idx-0"
    kafkalog.write(out, rec_table(recs), batch_records=5, index_interval_bytes=interval)
    (log,) = segment_files(out, "log")
    index, times = check_segment_indexes(log, interval)
    batches = batches_of(log)
    if interval == 0:
        # every batch but the first (the first append is never indexed)
        assert [e["position"] for e in index] == [b["batchPosition"] for b in batches[1:]]
    if interval == 1 << 20:
        assert index == []
        # only the final entry written at close: the segment's max timestamp
        max_ts = max(b["maxTimestamp"] for b in batches)
        first_holder = next(b for b in batches if b["maxTimestamp"] == max_ts)
        assert [(e["timestamp"], e["offset"]) for e in times] == [
            (max_ts, first_holder["lastOffset"])
        ]
    assert all(a["timestamp"] < b["timestamp"] for a, b in zip(times, times[1:], strict=False))
    assert all(a["offset"] < b["offset"] for a, b in zip(index, index[1:], strict=False))


def test_time_index_needs_greater_timestamps(tmp_path):
    """Decreasing batch timestamps add no time entries after the first (docs/format.md 5.3)."""
    recs = [Rec(b"k", b"v" * 50, T0 + 1000 - i, offset=i) for i in range(40)]
    out = tmp_path / "dec-0"
    kafkalog.write(out, rec_table(recs), batch_records=1, index_interval_bytes=0)
    index, times = check_segment_indexes(out / "00000000000000000000.log", 0)
    assert len(index) == 39
    assert [(e["timestamp"], e["offset"]) for e in times] == [(T0 + 1000, 0)]


def test_v0_segments_have_empty_time_indexes(tmp_path):
    recs = [Rec(b"k", b"v" * 50, T0, offset=i) for i in range(50)]
    out = tmp_path / "v0-0"
    kafkalog.write(out, rec_table(recs), magic=0, index_interval_bytes=100)
    index, times = check_segment_indexes(out / "00000000000000000000.log", 100)
    assert index and times == []
    assert (out / "00000000000000000000.timeindex").stat().st_size == 0


def test_index_offsets_are_relative_to_the_segment(tmp_path):
    recs = [Rec(b"k", b"v" * 100, T0 + i, offset=10_000 + 3 * i) for i in range(200)]
    out = tmp_path / "rel-0"
    kafkalog.write(
        out, rec_table(recs), batch_records=4, segment_bytes=2500, index_interval_bytes=300
    )
    logs = segment_files(out, "log")
    assert len(logs) > 3
    for log in logs:
        base = int(log.name[:20])
        raw = log.with_suffix(".index").read_bytes()
        for i in range(0, len(raw), OFFSET_ENTRY):
            relative, position = struct.unpack_from(">ii", raw, i)
            assert 0 < relative and position > 0
            assert base + relative in {b["lastOffset"] for b in batches_of(log)}
        check_segment_indexes(log, 300)


# --- 5. transactions and the .txnindex --------------------------------------------------------

PID_A, PID_B = 1000, 2000


def _transactional_log() -> tuple[bytes, list[tuple[int, int, int, int]]]:
    """Two transactional producers interleaved with a plain one, and their markers, as a broker
    stores them; with the aborted transactions (producerId, firstOffset, lastOffset, LSO) the
    broker's .txnindex holds (docs/format.md 5.8)."""
    seq = {PID_A: 0, PID_B: 0}
    parts: list[bytes] = []

    def data(pid: int, offset: int, n: int) -> None:
        recs = [Rec(b"%d" % pid, b"data-%d" % (offset + i) * 8, T0 + offset) for i in range(n)]
        if pid < 0:
            seg = build_batch("kafka-python", 2, "none", recs, offset, partition_leader_epoch=3)
        else:
            seg = build_batch(
                "kafka-python",
                2,
                "none",
                recs,
                offset,
                transactional=True,
                producer_id=pid,
                producer_epoch=5,
                base_sequence=seq[pid],
                partition_leader_epoch=3,
            )
            seq[pid] += n
        parts.append(seg.data)

    def marker(pid: int, offset: int, kind: int) -> None:
        parts.append(
            control_batch(
                offset,
                kind,
                producer_id=pid,
                producer_epoch=5,
                timestamp=T0 + offset,
                coordinator_epoch=11,
                partition_leader_epoch=3,
            ).data
        )

    data(PID_A, 0, 3)  # A's first transaction starts at 0
    data(PID_B, 3, 2)  # B's at 3
    data(-1, 5, 1)  # not transactional
    data(PID_A, 6, 1)
    marker(PID_A, 7, CONTROL_ABORT)  # LSO: B still open from 3
    marker(PID_B, 8, CONTROL_COMMIT)
    data(PID_A, 9, 2)
    data(PID_B, 11, 1)
    marker(PID_A, 12, CONTROL_COMMIT)
    marker(PID_B, 13, CONTROL_ABORT)  # nothing else open: LSO 14
    marker(PID_A, 14, CONTROL_ABORT)  # no open transaction: nothing to index
    data(PID_B, 15, 2)
    data(PID_A, 17, 1)
    data(-1, 18, 2)
    marker(PID_B, 20, CONTROL_ABORT)  # A open from 17
    marker(PID_A, 21, CONTROL_ABORT)  # nothing else open: 22
    aborted = [(PID_A, 0, 7, 3), (PID_B, 11, 13, 14), (PID_B, 15, 20, 17), (PID_A, 17, 21, 22)]
    return b"".join(parts), aborted


def _txn_entries(path: Path) -> list[tuple[int, int, int, int]]:
    rows = kafkalog.read_index(path).to_pylist()
    assert {r["version"] for r in rows} <= {0}
    fields = ("producerId", "firstOffset", "lastOffset", "lastStableOffset")
    return [tuple(r[f] for f in fields) for r in rows]


def test_txnindex_one_entry_per_aborted_transaction(tmp_path):
    log, aborted = _transactional_log()
    table = kafkalog.read_bytes(log, batch_metadata=True, include_control=True).read_all()
    assert table.column("isControl").to_pylist().count(True) == 7
    out = tmp_path / "txn-0"
    kafkalog.write(out, table)
    assert (out / "00000000000000000000.log").read_bytes() == log  # byte for byte
    txn = out / "00000000000000000000.txnindex"
    assert txn.stat().st_size == len(aborted) * TXN_ENTRY
    assert _txn_entries(txn) == aborted
    raw = txn.read_bytes()
    for i, (pid, first, last, lso) in enumerate(aborted):
        assert raw[i * TXN_ENTRY : (i + 1) * TXN_ENTRY] == struct.pack(
            ">hqqqq", 0, pid, first, last, lso
        )
    check_partition_indexes(out)


def test_txnindex_entries_go_to_the_segment_of_the_marker(tmp_path):
    log, aborted = _transactional_log()
    table = kafkalog.read_bytes(log, batch_metadata=True, include_control=True).read_all()
    out = tmp_path / "txn-0"
    summary = kafkalog.write(out, table, segment_bytes=400)
    assert len(summary) > 3
    seen = []
    crossing = False
    for s in summary:
        base, last = s["base_offset"], s["last_offset"]
        mine = [a for a in aborted if base <= a[2] <= last]
        txn = Path(s["path"]).with_suffix(".txnindex")
        if not mine:
            assert not txn.exists(), "a .txnindex is created only for an aborted transaction"
            continue
        assert _txn_entries(txn) == mine
        crossing |= any(a[1] < base for a in mine)
        seen += mine
    assert seen == aborted
    assert crossing, "no transaction spans segments: make the segments smaller"
    assert b"".join(Path(s["path"]).read_bytes() for s in summary) == log


def test_committed_transactions_leave_no_txnindex(tmp_path):
    seg = build_batch(
        "kafka-python",
        2,
        "none",
        [Rec(b"k", b"v", T0)] * 3,
        0,
        transactional=True,
        producer_id=9,
        producer_epoch=0,
        base_sequence=0,
    )
    log = (
        seg.data
        + control_batch(3, CONTROL_COMMIT, producer_id=9, producer_epoch=0, timestamp=T0).data
    )
    table = kafkalog.read_bytes(log, batch_metadata=True, include_control=True).read_all()
    out = tmp_path / "commit-0"
    kafkalog.write(out, table)
    assert segment_files(out, "txnindex") == []
    assert (out / "00000000000000000000.log").read_bytes() == log


def test_markers_as_fresh_rows(tmp_path):
    """Control rows written without batch metadata: the marker is a control batch of its own,
    transactional with the writer's producer, and an ABORT is indexed."""
    abort_key, abort_value = struct.pack(">hh", 0, CONTROL_ABORT), struct.pack(">hi", 0, 4)
    table = pa.table(
        {
            "key": pa.array([b"a", b"b", abort_key], pa.binary()),
            "value": pa.array([b"1", b"2", abort_value], pa.binary()),
            "timestamp": pa.array([T0, T0 + 1, T0 + 2], pa.int64()),
            "isControl": pa.array([False, False, True]),
        }
    )
    out = tmp_path / "fresh-0"
    kafkalog.write(
        out, table, producer_id=31, producer_epoch=1, base_sequence=0, transactional=True
    )
    batches = batches_of(out)
    assert [
        (
            b["baseOffset"],
            b["lastOffset"],
            b["isControl"],
            b["isTransactional"],
            b["producerId"],
            b["baseSequence"],
        )
        for b in batches
    ] == [
        (0, 1, False, True, 31, 0),
        (2, 2, True, True, 31, -1),
    ]
    assert _txn_entries(out / "00000000000000000000.txnindex") == [(31, 0, 2, 3)]
    data = (out / "00000000000000000000.log").read_bytes()
    lib_batches, _ = library_rows(data, "kafka-python")
    assert [b["isControl"] for b in lib_batches] == [False, True]
    assert all(b["crcValid"] for b in lib_batches)
    control = kafkalog.read(out, include_control=True, batch_metadata=True).read_all()
    assert control.column("controlType").to_pylist() == [None, None, CONTROL_ABORT]


# --- 6. bad input fails before anything is written --------------------------------------------


def _good(n: int = 3, **columns) -> dict:
    cols = {
        "key": pa.array([b"k%d" % i for i in range(n)], pa.binary()),
        "value": pa.array([b"v%d" % i for i in range(n)], pa.binary()),
        "timestamp": pa.array([T0 + i for i in range(n)], pa.int64()),
    }
    cols.update(columns)
    return cols


HEADERS_ROW = pa.array([None, [{"key": "h", "value": b"x"}], None], HEADERS_TYPE)

BAD_INPUTS = {
    "headers-magic0": (_good(headers=HEADERS_ROW), {"magic": 0}),
    "headers-magic1": (_good(headers=HEADERS_ROW), {"magic": 1}),
    "headers-magic-column-1": (
        _good(headers=HEADERS_ROW, magic=pa.array([1, 1, 1], pa.int8())),
        {},
    ),
    "zstd-magic0": (_good(), {"magic": 0, "compression": "zstd"}),
    "zstd-magic1": (_good(), {"magic": 1, "compression": "zstd"}),
    "zstd-magic-column-1": (
        _good(magic=pa.array([1, 1, 1], pa.int8()), compression=pa.array(["zstd"] * 3)),
        {},
    ),
    "decreasing-offsets": (_good(offset=pa.array([5, 7, 6], pa.int64())), {}),
    "duplicate-offsets": (_good(offset=pa.array([5, 6, 6], pa.int64())), {}),
    "negative-offset": (_good(offset=pa.array([-1, 0, 1], pa.int64())), {}),
    "null-offset": (_good(offset=pa.array([0, None, 2], pa.int64())), {}),
    "null-header-key": (
        _good(headers=pa.array([None, [{"key": None, "value": b"x"}], None], HEADERS_TYPE)),
        {},
    ),
    "string-key": (_good(key=pa.array(["a", "b", "c"])), {}),
    "string-value": (_good(value=pa.array(["a", "b", "c"])), {}),
    "magic-3": (_good(), {"magic": 3}),
    "magic-column-3": (_good(magic=pa.array([2, 3, 2], pa.int8())), {}),
    "control-magic1": (
        _good(
            key=pa.array([b"k", struct.pack(">hh", 0, 1), b"k"]),
            isControl=pa.array([False, True, False]),
        ),
        {"magic": 1},
    ),
    "control-magic0": (
        _good(
            key=pa.array([b"k", struct.pack(">hh", 0, 0), b"k"]),
            isControl=pa.array([False, True, False]),
        ),
        {"magic": 0},
    ),
    "unknown-compression": (_good(), {"compression": "brotli"}),
    "unknown-timestamp-type": (_good(), {"timestamp_type": "Wallclock"}),
    "batch-records-0": (_good(), {"batch_records": 0}),
    "transactional-without-producer": (_good(), {"transactional": True}),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_writes_nothing(tmp_path, case):
    columns, options = BAD_INPUTS[case]
    with pytest.raises(kafkalog.InvalidArgumentError) as info:
        kafkalog.write(tmp_path / "bad-0", pa.table(columns), **options)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, kafkalog.KafkaLogError)
    assert_nothing_written(tmp_path, "bad-0")


@pytest.mark.parametrize("case", ["decreasing-offsets", "null-header-key", "headers-magic1"])
def test_bad_row_late_in_the_stream_writes_nothing(tmp_path, case):
    """Several segments are already complete in the staging directory when the bad row comes."""
    recs = _varied_records(300)
    good = rec_table(recs).drop_columns(["headers"])
    bad_columns, options = BAD_INPUTS[case]
    bad = pa.table(bad_columns)
    if "offset" not in bad.column_names:
        bad = bad.append_column("offset", pa.array([1000, 1001, 1002], pa.int64()))
    if "headers" not in bad.column_names:
        bad = bad.append_column("headers", pa.nulls(3, HEADERS_TYPE))
    good = good.append_column("headers", pa.nulls(good.num_rows, HEADERS_TYPE))
    bad = bad.select(good.column_names).cast(good.schema)
    reader = pa.RecordBatchReader.from_batches(
        good.schema, [*good.to_batches(max_chunksize=50), *bad.to_batches()]
    )
    with pytest.raises(kafkalog.InvalidArgumentError):
        kafkalog.write(tmp_path / "late-0", reader, segment_bytes=2000, **options)
    assert_nothing_written(tmp_path, "late-0")


def test_existing_target_needs_overwrite(tmp_path):
    out = tmp_path / "exists-0"
    kafkalog.write(out, rec_table([Rec(b"old", b"old", T0, offset=0)]))
    (out / "stray-file").write_bytes(b"keep me")
    before = snapshot(out)
    with pytest.raises(kafkalog.InvalidArgumentError):
        kafkalog.write(out, rec_table([Rec(b"new", b"new", T0, offset=5)]))
    assert snapshot(out) == before
    assert leftovers(tmp_path, "exists-0") == []

    # overwrite=True with bad input: the old directory stays as it was
    with pytest.raises(kafkalog.InvalidArgumentError):
        kafkalog.write(out, pa.table(BAD_INPUTS["duplicate-offsets"][0]), overwrite=True)
    assert snapshot(out) == before
    assert leftovers(tmp_path, "exists-0") == []

    summary = kafkalog.write(out, rec_table([Rec(b"new", b"new", T0, offset=5)]), overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000005.index",
        "00000000000000000005.log",
        "00000000000000000005.timeindex",
        "00000000000000000006.snapshot",  # the producers' state at the end, as a broker's
    ]
    assert Path(summary[0]["path"]) == out / "00000000000000000005.log"
    assert [(r["offset"], r["key"]) for r in read_rows(out)] == [(5, b"new")]
    assert leftovers(tmp_path, "exists-0") == []


def test_existing_file_is_not_replaced_by_a_directory_unasked(tmp_path):
    out = tmp_path / "file-0"
    out.write_bytes(b"not a partition")
    with pytest.raises(kafkalog.KafkaLogError):
        kafkalog.write(out, rec_table([Rec(b"k", b"v", T0, offset=0)]))
    assert out.read_bytes() == b"not a partition"
    assert leftovers(tmp_path, "file-0") == []


# --- 7. atomicity when the input fails midway -------------------------------------------------


class SourceFailed(RuntimeError):
    pass


def _failing_reader(good_batches: int) -> pa.RecordBatchReader:
    table = rec_table(_varied_records(400))

    def batches():
        yield from table.to_batches(max_chunksize=400 // 8)[:good_batches]
        raise SourceFailed("the source went away")

    return pa.RecordBatchReader.from_batches(table.schema, batches())


@pytest.mark.parametrize("good_batches", [0, 1, 5])
def test_failing_source_leaves_nothing(tmp_path, good_batches):
    out = tmp_path / "fail-0"
    with pytest.raises(Exception, match="the source went away"):
        kafkalog.write(out, _failing_reader(good_batches), segment_bytes=2000, batch_records=3)
    assert_nothing_written(tmp_path, "fail-0")


def test_failing_source_keeps_the_existing_partition(tmp_path):
    out = tmp_path / "keep-0"
    kafkalog.write(out, rec_table([Rec(b"k", b"v", T0, offset=0)]))
    before = snapshot(out)
    with pytest.raises(Exception, match="the source went away"):
        kafkalog.write(out, _failing_reader(3), overwrite=True, segment_bytes=2000)
    assert snapshot(out) == before
    assert leftovers(tmp_path, "keep-0") == []


def test_failing_source_raises_its_own_exception(tmp_path):
    """The caller's exception comes back as it was raised (type and message), not re-labelled
    as bad input."""
    out = tmp_path / "own-0"
    with pytest.raises(SourceFailed, match="the source went away"):
        kafkalog.write(out, _failing_reader(2))
    assert_nothing_written(tmp_path, "own-0")


# --- 8. property: read(write(t)) == t -------------------------------------------------------


@st.composite
def record_lists(draw, magic: int) -> list[Rec]:
    n = draw(st.integers(0, 12))
    offset = draw(st.integers(0, 2**40))
    recs = []
    for _ in range(n):
        offset += draw(st.sampled_from([1, 1, 1, 2, 3, 50]))
        ts = draw(st.none() | st.integers(0, 2**42)) if magic > 0 else T0
        headers: tuple = ()
        if magic == 2:
            headers = tuple(
                draw(
                    st.lists(
                        st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=6)),
                        max_size=3,
                    )
                )
            )
        recs.append(
            Rec(
                key=draw(st.none() | st.binary(max_size=12)),
                value=draw(st.none() | st.binary(max_size=40)),
                timestamp=-1 if ts is None else ts,
                headers=headers,
                offset=offset,
            )
        )
    return recs


def _roundtrip(magic: int, codec: str, recs: list[Rec], batch_records: int) -> None:
    table = rec_table(recs)
    if any(r.timestamp == -1 for r in recs):
        ts = [None if r.timestamp == -1 else r.timestamp for r in recs]
        table = table.set_column(
            table.column_names.index("timestamp"), "timestamp", pa.array(ts, pa.int64())
        )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "prop-0"
        summary = kafkalog.write(
            out, table, magic=magic, compression=codec, batch_records=batch_records
        )
        assert sum(s["records"] for s in summary) == len(recs)
        assert read_rows(out) == expected(recs, magic)
        batches = batches_of(out)
        assert all(b["crcValid"] for b in batches)
        assert {b["compression"] for b in batches} <= {codec}
        assert {b["magic"] for b in batches} <= {magic}


def _property_test(magic: int, codec: str):
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(recs=record_lists(magic), batch_records=st.integers(1, 5))
    def test(recs, batch_records):
        _roundtrip(magic, codec, recs, batch_records)

    return test


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=PAIR_IDS)
def test_property_read_write_roundtrip(magic, codec):
    _property_test(magic, codec)()


def test_write_takes_producer_snapshots_as_a_broker(tmp_path):
    """A snapshot at each roll (the producers' state before the new segment) and at the end,
    with a transaction left open: read_committed stops at its first offset."""
    logs = Path(__file__).resolve().parent.parent / "examples" / "logs"
    table = kafkalog.read(logs / "orders-1", include_control=True, batch_metadata=True).read_all()
    # orders-1 without its last marker (the abort at offset 6): producer 9002's second
    # transaction, from offset 4, stays open.
    open_txn = table.filter(pa.compute.not_equal(table["offset"], 6))
    out = tmp_path / "orders-1"
    kafkalog.write(out, open_txn, segment_bytes=150, fsync=False)
    snapshots = sorted(out.glob("*.snapshot"))
    segments = sorted(out.glob("*.log"))
    assert len(segments) >= 3
    # One per roll, named by the new segment's base offset, and one at the log end (8).
    assert [p.name[:20] for p in snapshots] == [p.name[:20] for p in segments[1:]] + [
        "00000000000000000008"
    ]
    last = kafkalog.read_index(snapshots[-1]).to_pylist()
    assert [
        (r["producerId"], r["currentTxnFirstOffset"]) for r in last if r["producerId"] == 9002
    ] == [(9002, 4)]
    committed = kafkalog.read(out, isolation_level="read_committed").read_all()
    assert committed["offset"].to_pylist() == [0, 1, 2]
