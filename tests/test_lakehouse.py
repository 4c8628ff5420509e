"""Kafka backups into Delta Lake and Apache Iceberg tables (issue 36), on local disk: rows equal
to ``kafkalog.read`` of the same log as deltalake's, pyiceberg's and polars' own scans read
them; reruns that write only what is new, also after a process killed with SIGKILL before,
during and after a commit; upsert tables equal to what compaction keeps; schema evolution;
bounds and ``read_committed``; a concurrent writer and a schema conflict refused cleanly.
The same on S3 is ``test_lakehouse_s3.py``."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from lake_fixtures import day_ms

import kafkalog
from kafkalog.cli.main import main
from kafkalog.errors import ConcurrentWriteError
from kafkalog.tables import TableSchemaError

deltalake = pytest.importorskip("deltalake")
pytest.importorskip("pyiceberg")
pl = pytest.importorskip("polars")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "logs"
KEY = ("topic", "partition", "offset")
COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]


def write_log(root: Path, n: int) -> Path:
    """``events-0`` (``n`` records over three days, several segments, headers on some),
    ``events-1`` (``n // 2``), ``users-0`` (ten keys updated over and over, tombstones), and
    ``orders-1`` from the examples (a committed and an aborted transaction)."""
    root.mkdir(parents=True, exist_ok=True)

    def part(name: str, count: int, keys: int | None) -> None:
        rows: dict[str, Any] = {
            "key": [None if keys is None else f"u{i % keys}".encode() for i in range(count)],
            "value": [
                None if keys is not None and i % 7 == 3 else f"{name}:{i}".encode()
                for i in range(count)
            ],
            "timestamp": pa.array(
                [day_ms(i // 50, i) for i in range(count)], pa.timestamp("ms", "UTC")
            ),
            "headers": pa.array(
                [
                    [{"key": "h", "value": str(i).encode()}] if i % 5 == 0 else None
                    for i in range(count)
                ],
                pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
            ),
        }
        kafkalog.write(
            root / name, pa.table(rows), batch_records=8, segment_bytes=2048, overwrite=True
        )

    part("events-0", n, None)
    part("events-1", n // 2, None)
    part("users-0", n, 10)
    if not (root / "orders-1").exists():
        shutil.copytree(EXAMPLES / "orders-1", root / "orders-1")
    return root


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    return write_log(tmp_path_factory.mktemp("lake-log"), 120)


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> Path:
    """The same partitions, longer: what a newer backup of the same cluster holds."""
    return write_log(tmp_path_factory.mktemp("lake-grown"), 180)


def expected(path: Path, **options: Any) -> list[dict[str, Any]]:
    return rows(kafkalog.read(path, columns=COLUMNS, **options).read_all())


def rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows in (topic, partition, offset) order, ``headers`` of none as ``[]`` (pyiceberg
    writes a null list of structs as an empty one: docs/lakehouse.md)."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    names = [c for c in COLUMNS if c in table.column_names]
    out = table.select(names).cast(
        pa.schema(
            [
                (n, pa.timestamp("us", "UTC") if n == "timestamp" else table.schema.field(n).type)
                for n in names
            ]
        )
    )
    got = out.to_pylist()
    for r in got:
        if r.get("headers") is None:
            r["headers"] = []
        for name in ("key", "value"):
            if isinstance(r.get(name), bytearray):
                r[name] = bytes(r[name])
    return sorted(got, key=lambda r: tuple(r[k] for k in KEY))


class Delta:
    fmt = "delta"

    def __init__(self, tmp: Path) -> None:
        self.uri = str(tmp / "delta")

    def write(self, path: Path, **options: Any) -> Any:
        return kafkalog.to_delta(path, self.uri, **options)

    def read(self) -> list[dict[str, Any]]:
        return rows(deltalake.DeltaTable(self.uri).to_pyarrow_table())

    def polars(self) -> list[dict[str, Any]]:
        return rows(pl.scan_delta(self.uri).collect())

    def versions(self) -> int:
        return deltalake.DeltaTable(self.uri).version()


class Iceberg:
    fmt = "iceberg"

    def __init__(self, tmp: Path) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.catalog = {
            "type": "sql",
            "uri": f"sqlite:///{tmp / 'catalog.db'}",
            "warehouse": f"file://{tmp / 'warehouse'}",
        }
        (tmp / "warehouse").mkdir(exist_ok=True)
        self.name = "kafka.events"

    def write(self, path: Path, **options: Any) -> Any:
        return kafkalog.to_iceberg(path, self.name, catalog=self.catalog, **options)

    def table(self) -> Any:
        from pyiceberg.catalog import load_catalog

        return load_catalog("default", **self.catalog).load_table(self.name)

    def read(self) -> list[dict[str, Any]]:
        return rows(self.table().scan().to_arrow())

    def polars(self) -> list[dict[str, Any]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return rows(pl.scan_iceberg(self.table()).collect())

    def versions(self) -> int:
        return len(self.table().metadata.snapshots)


@pytest.fixture(params=["delta", "iceberg"])
def table(request, tmp_path) -> Delta | Iceberg:
    return Delta(tmp_path) if request.param == "delta" else Iceberg(tmp_path)


def test_a_backup_into_a_table_and_again_only_what_is_new(table, log, grown):
    summary = table.write(log)
    want = expected(log)
    assert summary["records"] == len(want) and summary["files"] > 0
    assert table.read() == want
    assert table.polars() == want
    parts = {(p["topic"], p["partition"]): (p["start"], p["end"]) for p in summary["partitions"]}
    assert parts[("events-0".split("-")[0], 0)] == (0, 120)
    # Nothing new: no commit at all.
    again = table.write(log)
    assert again["records"] == 0 and again["commits"] == [] and again["partitions"] == []
    # A newer backup: only the records past the offsets the table recorded.
    more = table.write(grown)
    assert more["records"] == len(expected(grown)) - len(want)
    assert {p["start"] for p in more["partitions"] if p["topic"] == "events"} == {60, 120}
    assert table.read() == expected(grown)


def test_partitioned_by_topic_and_day(tmp_path, log):
    uri = str(tmp_path / "d")
    kafkalog.to_delta(log, uri, topics="events")
    dt = deltalake.DeltaTable(uri)
    assert dt.metadata().partition_columns == ["topic", "timestamp_day"]
    days = {p["timestamp_day"] for p in dt.partitions()}
    assert days == {"2024-06-01", "2024-06-02", "2024-06-03"}
    ice = Iceberg(tmp_path)
    ice.write(log, topics="events", partition_by=["topic"])
    assert [f.name for f in ice.table().spec().fields] == ["topic"]


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_bounds_and_read_committed(fmt, tmp_path, log):
    make = Delta if fmt == "delta" else Iceberg
    committed = make(tmp_path / "c")
    committed.write(log, topics="orders", isolation_level="read_committed")
    assert committed.read() == expected(log, topics="orders", isolation_level="read_committed")
    t0 = day_ms(1)
    bounded = make(tmp_path / "b")
    bounded.write(log, topics="events", start_offset=10, end_timestamp=t0)
    want = [
        r
        for r in expected(log, topics="events")
        if r["offset"] >= 10 and r["timestamp"].timestamp() * 1000 < t0
    ]
    assert bounded.read() == want
    # The broker's high watermark bounds what a consumer could fetch (visibility="consumer").
    hw = tmp_path / "hw"
    shutil.copytree(log / "events-0", hw / "events-0")
    (hw / "replication-offset-checkpoint").write_text("0\n1\nevents 0 100\n")
    visible = make(tmp_path / "v")
    summary = visible.write(hw)
    assert [(p["start"], p["end"]) for p in summary["partitions"]] == [(0, 100)]
    assert visible.read() == expected(hw)
    assert len(visible.read()) == 100
    assert visible.write(hw, visibility="all")["partitions"][0]["end"] == 120


def test_typed_values_and_schema_evolution(tmp_path):
    """A registry version that adds a field adds a column; the rows before it read null."""
    pytest.importorskip("confluent_kafka")
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from lake_fixtures import ORDER_V1_PLUS, context, serializer
    from values_fixtures import ORDER_V1, registered, write_partition

    client = SchemaRegistryClient.new_client({"url": "mock://lake-evolution"})
    root = tmp_path / "log"
    v1 = serializer(client, ORDER_V1)
    import decimal

    first = [{"id": i, "customer": f"c{i}", "amount": decimal.Decimal(i)} for i in range(5)]
    write_partition(root / "orders-0", [(b"k", v1(v, context("orders"))) for v in first])
    write_partition(root / "_schemas-0", registered(client, "orders-value"))
    for t in (Delta(tmp_path), Iceberg(tmp_path)):
        t.write(root, value_format="avro", schemas=root, value_layout="columns")
    # The producers moved to a version with a field more; a newer backup holds both.
    v2 = serializer(client, ORDER_V1_PLUS)
    later = [{**v, "id": v["id"] + 5, "channel": "app"} for v in first]
    shutil.rmtree(root)
    write_partition(
        root / "orders-0",
        [(b"k", v1(v, context("orders"))) for v in first]
        + [(b"k", v2(v, context("orders"))) for v in later],
    )
    write_partition(root / "_schemas-0", registered(client, "orders-value"))
    for t in (Delta(tmp_path), Iceberg(tmp_path)):
        summary = t.write(root, value_format="avro", schemas=root, value_layout="columns")
        assert summary["records"] == 5
        got = t.read() if False else None
        del got
        data = (
            deltalake.DeltaTable(t.uri).to_pyarrow_table()
            if isinstance(t, Delta)
            else t.table().scan().to_arrow()
        ).sort_by("offset")
        assert data.column("id").to_pylist() == list(range(10))
        assert data.column("channel").to_pylist() == [None] * 5 + ["app"] * 5
        assert "value" not in data.column_names


def test_a_column_of_another_type_is_refused(tmp_path, log):
    uri = str(tmp_path / "d")
    kafkalog.to_delta(log, uri, topics="events")
    before = deltalake.DeltaTable(uri).version()
    with pytest.raises(TableSchemaError, match="column value is binary in the table but string"):
        kafkalog.to_delta(log, uri, topics="users", value_format="string")
    assert deltalake.DeltaTable(uri).version() == before


def test_upsert_equals_compaction(table, tmp_path, log):
    """Every key's latest record, tombstones deleting: the rows the log cleaner keeps (two
    rounds, after the delete horizon, with an empty active segment so that all is cleanable)."""
    src = tmp_path / "src"
    write_log(src, 120)
    part = src / "users-0"
    # Roll an empty active segment at the log end offset, as a broker rolls one.
    end = kafkalog.read(part, columns=["offset"]).read_all().column("offset")[-1].as_py() + 1
    (part / f"{end:020d}.log").write_bytes(b"")
    summary = table.write(src, topics="users", mode="upsert", commit_bytes=1)
    assert len(summary["commits"]) > 1  # several merges, each with its offsets
    once = tmp_path / "c1" / "users-0"
    kafkalog.compact(part, once, now=0, delete_retention_ms=0)
    twice = tmp_path / "c2" / "users-0"
    kafkalog.compact(once, twice, now=10**13, delete_retention_ms=0)
    kept = expected(twice.parent)
    assert [(r["key"], r["offset"]) for r in table.read()] == [
        (r["key"], r["offset"]) for r in kept
    ]
    assert table.read() == kept


def test_concurrent_writer_is_refused(table, log):
    from kafkalog.tables import delta as delta_mod
    from kafkalog.tables import iceberg as iceberg_mod

    sink_type = delta_mod.DeltaSink if table.fmt == "delta" else iceberg_mod.IcebergSink
    original = sink_type._publish

    def racing(self, *args):
        # Another run commits the same partitions first.
        sink_type._publish = original
        table.write(log, topics="events")
        return original(self, *args)

    sink_type._publish = racing
    try:
        with pytest.raises(ConcurrentWriteError, match="another writer"):
            table.write(log, topics="events")
    finally:
        sink_type._publish = original
    assert table.read() == expected(log, topics="events")
    assert table.write(log, topics="events")["records"] == 0


def test_a_catalog_that_refuses_the_commit(tmp_path, log):
    """The catalog fails the commit: a clear error, the table at its last commit, and the
    next run writes the rest once."""
    from pyiceberg.catalog.sql import SqlCatalog

    from kafkalog.tables import TableCommitError

    ice = Iceberg(tmp_path)
    ice.write(log, topics="events")
    before = ice.versions()
    original = SqlCatalog.commit_table

    def refuse(self, *args, **kwargs):
        raise RuntimeError("the catalog's database is read-only")

    SqlCatalog.commit_table = refuse
    try:
        with pytest.raises(TableCommitError, match="read-only.*last commit"):
            ice.write(log)
    finally:
        SqlCatalog.commit_table = original
    assert ice.versions() == before
    ice.write(log)
    assert ice.read() == expected(log)


def test_offsets_deleted_before_they_were_written_warn(tmp_path, log):
    """Retention moved the log start past the table's next offset: the run says which offsets
    were lost, and continues from the log start offset."""
    from kafkalog.tables import OffsetsLostWarning

    uri = str(tmp_path / "d")
    kafkalog.to_delta(log, uri, topics="events", end_offset=10)
    later = tmp_path / "later"
    shutil.copytree(log / "events-0", later / "events-0")
    (later / "log-start-offset-checkpoint").write_text("0\n1\nevents 0 50\n")
    with pytest.warns(OffsetsLostWarning, match="offsets 10 to 50 were deleted"):
        summary = kafkalog.to_delta(later, uri)
    assert [(p["start"], p["end"]) for p in summary["partitions"]] == [(50, 120)]


def test_a_missing_library_says_which_extra(monkeypatch, tmp_path, log):
    from kafkalog.tables._lazy import MissingLibraryError

    monkeypatch.setitem(sys.modules, "deltalake", None)
    with pytest.raises(MissingLibraryError, match=r"pip install 'kafkalog\[lake\]'"):
        kafkalog.to_delta(log, str(tmp_path / "d"))


KILL = """
import os, signal, sys
import kafkalog
from kafkalog.tables import delta, iceberg, _files
point, n = sys.argv[1], int(sys.argv[2])
calls = [0]
def hit():
    calls[0] += 1
    return calls[0] == n
def patch(cls, name, after=False):
    original = getattr(cls, name)
    def wrapped(self, *a, **k):
        if not after and hit():
            os.kill(os.getpid(), signal.SIGKILL)
        out = original(self, *a, **k)
        if after and hit():
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    setattr(cls, name, wrapped)
sink = delta.DeltaSink if "{fmt}" == "delta" else iceberg.IcebergSink
if point == "before_commit":
    patch(sink, "_publish")
elif point == "after_commit":
    patch(sink, "_publish", after=True)
else:
    patch(_files.PartitionedFiles if "{fmt}" == "delta" else sink, "write")
{call}
"""


@pytest.mark.parametrize("point,n", [("before_commit", 2), ("after_commit", 1), ("writing", 3)])
def test_killed_and_run_again_holds_every_record_once(table, log, point, n):
    if table.fmt == "delta":
        call = f"kafkalog.to_delta({str(log)!r}, {table.uri!r}, commit_bytes=8192)"
    else:
        call = (
            f"kafkalog.to_iceberg({str(log)!r}, {table.name!r}, catalog={table.catalog!r}, "
            "commit_bytes=8192)"
        )
    script = textwrap.dedent(KILL).replace("{fmt}", table.fmt).replace("{call}", call)
    p = subprocess.run(
        [sys.executable, "-c", script, point, str(n)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == -9, p.stderr
    table.write(log)
    assert table.read() == expected(log)


def test_cli_writes_tables(capsys, tmp_path, log):
    code = main(
        ["convert", str(log), f"delta://{tmp_path}/d", "--topics", "events", "--no-progress"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "events-0: offsets 0 to 120" in out
    code = main(["convert", str(log), "iceberg://db.t", "--catalog-uri",
                 f"sqlite:///{tmp_path}/c.db", "--warehouse", f"file://{tmp_path}",
                 "--mode", "upsert", "--topics", "users"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "(iceberg, upsert)" in out
    code = main(["convert", str(log), "x.parquet", "--mode", "upsert"])
    assert code == 2 and "--mode is for tables" in capsys.readouterr().err
    code = main(["convert", str(log), "iceberg://nodot"])
    assert code == 2 and "<namespace>.<table>" in capsys.readouterr().err
