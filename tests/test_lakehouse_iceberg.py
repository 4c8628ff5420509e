"""kafkalog's own side of Iceberg tables (issue 36): the data files' metrics from their Parquet
footers and the schema's field ids, compared with pyiceberg's writer helpers as the oracle; a
commit that lost a race to another writer built again on the new head; and an append that
imports neither pandas nor pyiceberg's pyarrow FileIO (what made a backfill slow to start)."""

from __future__ import annotations

import decimal
import io
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_lakehouse import Iceberg, expected, write_log

import kafkalog
from kafkalog.tables._rows import table_schema

pytest.importorskip("pyiceberg")

from kafkalog.tables._iceberg_files import (  # noqa: E402 (needs pyiceberg)
    MetricsPlan,
    _truncate_upper,
    to_arrow,
    to_iceberg,
)

METRICS = "write.metadata.metrics."
HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
SCHEMA = pa.schema(
    [
        pa.field("key", pa.binary()),
        pa.field(
            "value",
            pa.struct(
                [
                    ("id", pa.int64()),
                    ("name", pa.string()),
                    ("tags", pa.list_(pa.string())),
                    ("attrs", pa.map_(pa.string(), pa.int64())),
                ]
            ),
        ),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("timestamp", pa.timestamp("us", "UTC")),
        pa.field("headers", HEADERS),
        pa.field("amount", pa.decimal128(12, 2)),
        pa.field("day", pa.date32()),
        pa.field("at", pa.time64("us")),
        pa.field("local", pa.timestamp("us")),
        pa.field("flag", pa.bool_()),
        pa.field("ratio", pa.float32()),
        pa.field("score", pa.float64()),
        pa.field("digest", pa.binary(4)),
        pa.field("note", pa.string()),
    ]
)


def batch(n: int, shift: int) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "key": (b"key-%05d-" % (i + shift)) * 3 if i % 9 else None,
                "value": {
                    "id": i + shift,
                    "name": f"naïve name {i + shift:04d} é{'x' * (i % 20)}",
                    "tags": [f"t{j}" for j in range(i % 3)],
                    "attrs": {f"k{j}": j for j in range(i % 2)},
                }
                if i % 7
                else None,
                "topic": "orders.eu",
                "partition": shift % 3,
                "offset": i + shift,
                "timestamp": 1_717_200_000_000_000 + (i + shift) * 1_000_003,
                "headers": [{"key": "h", "value": b"\x00\xff"}] if i % 4 == 0 else None,
                "amount": decimal.Decimal(i * 37 - 500 - shift) / 100,
                "day": 19_800 + i,
                "at": (i * 997) % 86_400_000_000,
                "local": 1_600_000_000_000_000 - i,
                "flag": i % 2 == 0,
                "ratio": i / 3,
                "score": -i / 7,
                "digest": bytes([i % 256, 1, 2, 255]),
                "note": None if i % 5 else "ab" * (i % 13),
            }
            for i in range(n)
        ],
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def footer() -> tuple[Any, Any]:
    """A Parquet file as kafkalog writes a table's data file (the schema's field ids), three
    row groups; its footer and its Iceberg schema."""
    schema = to_iceberg(table_schema(SCHEMA, "iceberg"))
    buf = io.BytesIO()
    writer = pq.ParquetWriter(buf, to_arrow(schema), compression="snappy")
    for shift in (0, 100, 250):
        writer.write_table(batch(60, shift).cast(to_arrow(schema)))
    writer.close()
    return pq.read_metadata(pa.BufferReader(buf.getvalue())), schema


@pytest.mark.parametrize(
    "properties",
    [
        {},
        {"write.metadata.metrics.default": "full"},
        {"write.metadata.metrics.default": "counts"},
        {"write.metadata.metrics.default": "none"},
        {
            "write.metadata.metrics.default": "truncate(4)",
            "write.metadata.metrics.column.key": "full",
        },
        {
            "write.metadata.metrics.column.note": "none",
            "write.metadata.metrics.column.value.name": "full",
        },
    ],
)
def test_metrics_from_footers_equal_pyicebergs(footer, properties):
    """The footer read as physical values gives what pyiceberg's writer computes from the
    same footer: counts, null counts, sizes, split offsets and the serialized bounds."""
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )

    meta, schema = footer
    ours = MetricsPlan(schema, properties).metrics(meta)
    theirs = data_file_statistics_from_parquet_metadata(
        meta, compute_statistics_plan(schema, properties), parquet_path_to_id_mapping(schema)
    ).to_serialized_dict()
    assert ours == theirs
    if not properties:
        # What the default mode keeps: truncated strings and binaries, the upper bound raised.
        key, note = schema.find_field("key").field_id, schema.find_field("note").field_id
        assert len(ours["lower_bounds"][key]) == 16
        assert ours["upper_bounds"][key] == b"key-00309-key-01"
        assert ours["upper_bounds"][note] == b"ababababababababab"[:15] + b"c"


def test_truncated_upper_bounds_are_javas():
    """Iceberg's (Java's) upper bound of a truncated value: the prefix up to the last byte or
    character that can be incremented, incremented; none when none can."""
    assert _truncate_upper(b"ab\xff\xffzz", 4) == b"ac"
    assert _truncate_upper(b"\xff\xff\xff", 2) is None
    assert _truncate_upper(b"abc", 4) == b"abc"
    assert _truncate_upper("ab\U0010ffffz", 3) == "ac"
    assert _truncate_upper("a\ud7ffz", 2) == "a\ue000"
    assert _truncate_upper("\U0010ffff\U0010ffffz", 2) is None


def test_schema_as_pyiceberg_converts_it():
    """An Iceberg schema as Arrow with its field ids, as pyiceberg's own conversion has it (in
    kafkalog's types); and back."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    schema = to_iceberg(table_schema(SCHEMA, "iceberg"))
    ours = to_arrow(schema)
    theirs = table_schema(schema_to_pyarrow(schema, include_field_ids=True), "iceberg")
    assert ours.equals(theirs, check_metadata=True)
    assert to_iceberg(ours) == schema


@pytest.mark.parametrize("mode", ["append", "upsert"])
def test_a_commit_that_lost_a_race_is_made_again_on_the_new_head(tmp_path, mode):
    """Another writer committed other partitions while this run was writing: the catalog
    refuses this run's commit (its parent is no longer the head), and kafkalog builds it again
    on the new head, keeping both writers' rows and offsets."""
    from kafkalog.tables import iceberg as iceberg_mod

    log = write_log(tmp_path / "log", 40)
    ice = Iceberg(tmp_path / "t")
    sink = iceberg_mod.IcebergSink
    original = sink._publish
    calls = []

    def racing(self, *args):
        calls.append(1)
        if len(calls) == 1:
            ice.write(log, topics="events")  # the other writer: another topic
        return original(self, *args)

    sink._publish = racing
    try:
        summary = ice.write(log, topics="users", mode=mode)
    finally:
        sink._publish = original
    assert len(calls) == 3  # this run, the other run, this run again
    assert len(summary["commits"]) == 1
    got = {r["topic"] for r in ice.read()}
    assert got == {"events", "users"}
    offsets = json.loads(ice.table().current_snapshot().summary["kafkalog.offsets"])
    assert set(offsets) == {"events", "users"}
    rows = ice.read()
    assert [r for r in rows if r["topic"] == "events"] == expected(log, topics="events")
    users = [r for r in rows if r["topic"] == "users"]
    if mode == "append":
        assert users == expected(log, topics="users")
    else:
        latest = {r["key"]: r for r in expected(log, topics="users")}
        assert users == sorted(
            (r for r in latest.values() if r["value"] is not None), key=lambda r: r["offset"]
        )
    assert ice.write(log, topics="users|events", mode=mode)["records"] == 0


def test_an_append_imports_neither_pandas_nor_pyarrows_fileio(tmp_path):
    """A local Iceberg append imports pyiceberg's catalog and table modules, and none of the
    modules that take most of a short backfill's CPU: pandas, pyarrow.dataset and pyiceberg's
    pyarrow FileIO."""
    log = write_log(tmp_path / "log", 20)
    ice = Iceberg(tmp_path / "t")
    script = textwrap.dedent(
        f"""
        import sys
        import kafkalog
        kafkalog.to_iceberg({str(log)!r}, "kafka.events", catalog={ice.catalog!r},
                            topics="events")
        heavy = ["pandas", "pyarrow.dataset", "pyiceberg.io.pyarrow", "pyiceberg.io.fsspec"]
        print([m for m in heavy if m in sys.modules])
        """
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
    assert ice.read() == expected(log, topics="events")


def test_local_file_io_reads_what_it_wrote(tmp_path):
    from kafkalog.tables._iceberg_io import LocalFirstFileIO, local_path

    fio = LocalFirstFileIO({})
    out = fio.new_output(f"file://{tmp_path}/a/b c.avro")
    with out.create() as f:
        f.write(b"abc")
    with pytest.raises(FileExistsError):
        out.create()
    assert len(out) == 3 and out.exists()
    with fio.new_input(f"{tmp_path}/a/b c.avro").open() as f:
        assert f.read() == b"abc"
    fio.delete(out)
    assert not fio.new_input(f"file:{tmp_path}/a/b c.avro").exists()
    assert local_path("s3://bucket/x") is None and local_path("file://host/x") is None
    assert local_path("file:///a/b%20c") == "/a/b c"
    assert Path(local_path(f"file://{tmp_path}") or "") == tmp_path


def test_a_catalog_that_cannot_be_loaded_is_an_error(tmp_path):
    """The catalog is loaded while the core lists the log (in a thread): its failure is the
    run's error all the same, also when the log has nothing to write."""
    from kafkalog.errors import InvalidArgumentError

    log = write_log(tmp_path / "log", 10)
    bad = {"type": "sql", "uri": "no-such-database://x"}
    with pytest.raises(InvalidArgumentError, match="could not be loaded"):
        kafkalog.to_iceberg(log, "kafka.events", catalog=bad, topics="events")
    with pytest.raises(InvalidArgumentError, match="could not be loaded"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no segment of a topic matching "absent"
            kafkalog.to_iceberg(log, "kafka.events", catalog=bad, topics="absent")
