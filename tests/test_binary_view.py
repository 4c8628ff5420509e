"""The ``binary_view`` read option: ``key`` and ``value`` as Arrow ``binary_view`` columns that
point into the bytes read (a segment's map, read buffers, decompressed batches) instead of
``binary`` copies. Whatever the bytes and wherever they come from, the table cast back to
``binary`` is the default table; the views' buffers are the ones read, not copies; and a table
outlives its reader and its file."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import kafkalog
from conftest import CORPUS
from kafka_builders import MAGIC_CODECS, Rec, kafka_python_segment, write_partition

SEGMENTS = sorted(CORPUS.glob("segments/**/*.log")) if CORPUS.is_dir() else []
VECTORS = sorted(CORPUS.glob("vectors/*/*.bin")) if CORPUS.is_dir() else []


def _as_binary(table: pa.Table) -> pa.Table:
    """The table with its binary_view columns cast to binary."""
    fields = [
        pa.field(f.name, pa.binary(), f.nullable) if f.type == pa.binary_view() else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))


def _quiet(read, source, **options):
    """A whole read, or the error it raised; warnings (torn tails) are not the point here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return read(source, batch_metadata=True, **options).read_all()
        except kafkalog.KafkaLogError as e:
            return type(e), str(e)


def _same(read, source, **options) -> pa.Table | None:
    """Reads ``source`` both ways, checks the view table is the default one, and returns it."""
    plain = _quiet(read, source, **options)
    views = _quiet(read, source, binary_view=True, **options)
    if isinstance(plain, tuple):
        assert views == plain
        return None
    present = [c for c in ("key", "value") if c in plain.schema.names]
    assert present
    for column in present:
        assert plain.schema.field(column).type == pa.binary()
        assert views.schema.field(column).type == pa.binary_view()
        for chunk in views.column(column).chunks:
            chunk.validate(full=True)
    assert _as_binary(views).equals(plain)
    return views


# --- every corpus file, read from its path and from bytes, on one and two threads -------------


@pytest.mark.parametrize("log", SEGMENTS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_segments(log, corpus):
    for threads in (1, 2):
        _same(kafkalog.read, log, threads=threads, visibility="all")
    _same(kafkalog.read_bytes, log.read_bytes())


@pytest.mark.parametrize("vector", VECTORS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_vectors(vector, corpus):
    _same(kafkalog.read_bytes, vector.read_bytes(), on_corrupt="skip")
    _same(kafkalog.read_bytes, vector.read_bytes())


def test_corpus_directories_whole(corpus):
    dirs = sorted({log.parent for log in SEGMENTS})
    assert dirs
    for threads in (1, 2):
        _same(kafkalog.read, [str(d) for d in dirs], threads=threads, visibility="all")


# --- every codec and magic, values of every length -------------------------------------------

LENGTHS = (0, 1, 4, 11, 12, 13, 16, 100, 5000)


def _records(n: int, magic: int, seed: int = 0) -> list[Rec]:
    recs = []
    for i in range(n):
        length = LENGTHS[(i + seed) % len(LENGTHS)]
        key = None if i % 7 == 3 else (b"key-%d-" % i) * (1 + i % 5)
        value = None if i % 11 == 5 else bytes((i * 31 + j) % 251 for j in range(length))
        headers = [("h", b"x" * (i % 20)), ("n", None)] if magic == 2 and i % 3 == 0 else []
        recs.append(Rec(key=key, value=value, timestamp=1_700_000_000_000 + i, headers=headers))
    return recs


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=lambda v: str(v))
def test_every_codec_and_magic(tmp_path, magic, codec):
    batches = [_records(40, magic, seed=b) for b in range(30)]
    seg = kafka_python_segment(magic, codec, batches)
    directory = write_partition(tmp_path, "t", 0, [seg])
    log = next(directory.glob("*.log"))
    for threads in (1, 2):
        _same(kafkalog.read, log, threads=threads)
    _same(kafkalog.read_bytes, seg.data)
    _same(kafkalog.read_bytes, seg.data, columns=["value", "offset"])
    # Small output batches: the views of one batch point into several buffers.
    _same(kafkalog.read, log, batch_size=7)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_large_segment_views_point_into_what_was_read(tmp_path, codec):
    """A segment over 1 MiB (mapped), every path: one and two threads, offset bounds."""
    n = 30_000
    table = pa.table(
        {
            "key": [b"key-%08d" % i for i in range(n)],
            "value": [b"value-%08d-" % i + b"y" * (i % 200) for i in range(n)],
        }
    )
    kafkalog.write(tmp_path / "t-0", table, compression=codec, batch_bytes=64 * 1024)
    log = next((tmp_path / "t-0").glob("*.log"))
    assert log.stat().st_size > (1 << 20) or codec != "none"
    for threads in (1, 2):
        views = _same(kafkalog.read, log, threads=threads)
        assert views is not None and views.num_rows == n
    _same(kafkalog.read, tmp_path / "t-0", start_offset=1234, end_offset=25_000)
    views = kafkalog.read(log, binary_view=True, threads=1).read_all()
    values = views.column("value").chunks[0]
    # Long values are not copied: the column's own buffer (the first data buffer) is empty.
    data = values.buffers()[2:]
    assert data[0] is None or data[0].size == 0
    assert sum(b.size for b in data[1:] if b is not None) > 0


def test_views_point_into_the_map(tmp_path):
    n = 20_000
    table = pa.table({"key": [None] * n, "value": [b"v" * 50 + b"%08d" % i for i in range(n)]})
    kafkalog.write(tmp_path / "t-0", table)
    log = next((tmp_path / "t-0").glob("*.log"))
    size = log.stat().st_size
    assert size > (1 << 20)
    views = kafkalog.read(log, binary_view=True, threads=1).read_all()
    buffers = views.column("value").chunks[0].buffers()[3:]
    # One buffer: the whole file's map, shared rather than copied.
    assert [b.size for b in buffers if b is not None and b.size] == [size]


# --- object stores, and tables that outlive their source -------------------------------------


def test_from_an_object_store(tmp_path, s3):
    batches = [_records(50, 2, seed=b) for b in range(40)]
    for codec in ("none", "zstd"):
        seg = kafka_python_segment(2, codec, batches)
        directory = write_partition(tmp_path / codec, "t", 0, [seg])
        uri = s3.upload(directory, f"views-{codec}/t-0")
        for threads in (1, 2):
            views = _same(kafkalog.read, uri, storage_options=s3.options, threads=threads)
            assert views is not None and views.num_rows == 2000


def test_a_table_outlives_its_reader_and_its_file(tmp_path):
    n = 40_000
    values = [b"value-%08d-" % i + b"z" * 40 for i in range(n)]
    kafkalog.write(tmp_path / "t-0", pa.table({"key": [None] * n, "value": values}))
    log = next((tmp_path / "t-0").glob("*.log"))
    small = kafka_python_segment(2, "gzip", [_records(30, 2)])
    small_dir = write_partition(tmp_path / "small", "s", 0, [small])
    tables = []
    for source in (log, small_dir, None):
        if source is None:
            data = bytearray(small.data)
            reader = kafkalog.read_bytes(bytes(data), binary_view=True)
        else:
            reader = kafkalog.read(source, binary_view=True, threads=1)
        tables.append((reader.read_all(), source))
        del reader
    # Copies, made while the files are there.
    expected = [pa.concat_tables([_as_binary(t)]).combine_chunks() for t, _ in tables]
    for path in [log, *small_dir.glob("*")]:
        os.remove(path)
    gc.collect()
    for (table, _), copy in zip(tables, expected, strict=True):
        assert _as_binary(table).equals(copy)
    assert tables[0][0].column("value").to_pylist() == values


def test_truncation_under_a_held_table_reads_zeros_and_does_not_crash(tmp_path):
    """The documented hazard: a broker truncating a mapped segment while a table points into
    it. The SIGBUS guard turns the truncated pages into zeros; the process lives on."""
    n = 40_000
    kafkalog.write(
        tmp_path / "t-0",
        pa.table({"key": [None] * n, "value": [b"value-%08d-" % i + b"q" * 40 for i in range(n)]}),
    )
    log = next((tmp_path / "t-0").glob("*.log"))
    code = f"""
import os, kafkalog, pyarrow as pa
log = {str(log)!r}
table = kafkalog.read(log, binary_view=True, threads=1).read_all()
first = table.column("value")[0].as_py()
os.truncate(log, 4096)
values = table.column("value").to_pylist()
assert values[0] == first, values[0]
assert values[-1] == bytes(len(values[-1])), values[-1][:20]
print("ok", len(values))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")


# --- consumers, schema, other entry points ----------------------------------------------------


def test_consumers_take_the_views(tmp_path):
    seg = kafka_python_segment(2, "lz4", [_records(60, 2, seed=b) for b in range(10)])
    table = kafkalog.read_bytes(seg.data, binary_view=True).read_all()
    plain = kafkalog.read_bytes(seg.data).read_all()
    # pyarrow compute (the kernels that take views in pyarrow 26).
    value = plain.column("value")[13]
    assert pc.sum(pc.equal(table.column("value"), value.cast(pa.binary_view()))).as_py() == (
        pc.sum(pc.equal(plain.column("value"), value)).as_py()
    )
    assert pc.count(table.column("key")).as_py() == pc.count(plain.column("key")).as_py()
    nulls = pc.is_null(table.column("value"))
    assert nulls.to_pylist() == pc.is_null(plain.column("value")).to_pylist()
    # (pyarrow 26's value_counts and group_by take views but count nulls as b"", for arrays
    # pyarrow builds itself too: not used here.)
    # polars and DuckDB, where installed (optional: not a dependency of kafkalog).
    try:
        import polars as pl
    except ImportError:
        pass
    else:
        frame = pl.from_arrow(table.select(["key", "value", "offset"]))
        assert frame["value"].to_list() == plain.column("value").to_pylist()
        lengths = frame.select(pl.col("value").bin.size()).to_series().to_list()
        assert lengths == [None if v is None else len(v) for v in plain.column("value").to_pylist()]
    try:
        import duckdb
    except ImportError:
        pass
    else:
        views = table.select(["key", "value"])  # noqa: F841 (read by DuckDB by name)
        got = duckdb.sql("select count(value), sum(octet_length(value)) from views").fetchall()[0]
        lengths = [len(v) for v in plain.column("value").to_pylist() if v is not None]
        assert got == (len(lengths), sum(lengths))


def test_schema_and_items(tmp_path):
    schema = kafkalog.schema(binary_view=True)
    assert schema.field("key").type == pa.binary_view()
    assert schema.field("value").type == pa.binary_view()
    assert kafkalog.schema().field("value").type == pa.binary()
    # Header values stay binary.
    assert schema.field("headers").type == kafkalog.schema().field("headers").type
    seg = kafka_python_segment(2, "snappy", [_records(30, 2, seed=b) for b in range(5)])
    directory = write_partition(tmp_path, "t", 0, [seg])
    items = kafkalog.plan(directory)
    plain = kafkalog.read_items(items).read_all()
    views = kafkalog.read_items(items, binary_view=True).read_all()
    assert views.schema.field("value").type == pa.binary_view()
    assert _as_binary(views).equals(plain)


def test_first_read_in_a_fresh_process(tmp_path):
    """Not a timing (benchmarks time): a fresh process reading with views gets the same rows."""
    n = 20_000
    kafkalog.write(tmp_path / "t-0", pa.table({"key": [b"k"] * n, "value": [b"v" * 30] * n}))
    code = f"""
import kafkalog
t = kafkalog.read({str(tmp_path / "t-0")!r}, binary_view=True).read_all()
print(t.num_rows, t.schema.field("value").type)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(n), "binary_view"]


def test_path_type(tmp_path):
    # Path objects and strings alike.
    seg = kafka_python_segment(2, "none", [_records(10, 2)])
    directory = write_partition(tmp_path, "t", 0, [seg])
    assert _same(kafkalog.read, Path(directory)) is not None
