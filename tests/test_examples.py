"""The sample log directory ``examples/logs`` stays in sync with its generator, and kafkalog
reads all of it."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pyarrow.compute as pc
import pytest

import kafkalog

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LOGS = EXAMPLES / "logs"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "make_sample_logs", EXAMPLES / "make_sample_logs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_committed_logs_match_the_generator(tmp_path):
    gen = _generator()
    assert gen.main(["make_sample_logs.py", str(tmp_path)]) == 0
    fresh = _files(tmp_path)
    committed = _files(LOGS)
    assert sorted(committed) == sorted(fresh), (
        "examples/logs has other files than the generator writes"
    )
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"regenerate with `python examples/make_sample_logs.py`: {stale} differ"


def test_generator_is_deterministic(tmp_path):
    gen = _generator()
    gen.write(tmp_path / "a")
    gen.write(tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_layout():
    # payments-0 and _schemas-0: typed values and their registry (issue 38).
    assert sorted(str(p.relative_to(LOGS)) for p in LOGS.rglob("*.log")) == [
        "_schemas-0/00000000000000000000.log",
        "clicks-0/00000000000000000000.log",
        "clicks-1/00000000000000000000.log",
        "events-0/00000000000000000000.log",
        "orders-0/00000000000000000000.log",
        "orders-0/00000000000000000015.log",
        "orders-1/00000000000000000000.log",
        "payments-0/00000000000000000000.log",
        "users-0/00000000000000000000.log",
    ]
    assert sum(p.stat().st_size for p in LOGS.rglob("*")) < 200_000


def test_kafkalog_reads_every_record():
    table = kafkalog.read(LOGS, batch_metadata=True).read_all()
    assert table.num_rows == 101  # 89, and since issue 38 10 payments and 2 registry records
    counts = {
        (r["topic"], r["partition"]): r["offset_count"]
        for r in table.group_by(["topic", "partition"]).aggregate([("offset", "count")]).to_pylist()
    }
    assert counts == {
        ("clicks", 0): 15,
        ("clicks", 1): 15,
        ("events", 0): 12,
        ("orders", 0): 33,
        ("orders", 1): 6,
        ("users", 0): 8,
        ("payments", 0): 10,
        ("_schemas", 0): 2,
    }
    # the same count the generator put in (data records: markers are left out by default),
    # and the registry's two versions
    gen = _generator()
    built = sum(
        len(seg.records) - sum(1 for b in seg.batches if "control_type" in b)
        for segments in gen.build().values()
        for seg in segments
    )
    assert built + len(gen.payments()[1]) == 101
    assert set(table.column("crcValid").to_pylist()) == {True}
    pairs = set(
        zip(table.column("magic").to_pylist(), table.column("compression").to_pylist(), strict=True)
    )
    assert pairs == {
        (0, "none"), (0, "gzip"), (0, "snappy"), (0, "lz4"),
        (1, "none"), (1, "gzip"), (1, "snappy"), (1, "lz4"),
        (2, "none"), (2, "gzip"), (2, "snappy"), (2, "lz4"), (2, "zstd"),
    }  # fmt: skip


def test_sample_contents():
    table = kafkalog.read(LOGS, batch_metadata=True, include_control=True).read_all()
    markers = table.filter(pc.field("isControl")).to_pylist()
    assert [(m["topic"], m["partition"], m["offset"], m["controlType"]) for m in markers] == [
        ("orders", 1, 3, 1),
        ("orders", 1, 6, 0),
    ]
    users = table.filter(pc.field("topic") == "users").to_pylist()
    assert [u["offset"] for u in users] == [0, 2, 3, 7, 9, 12, 13, 14]
    assert [u["offset"] for u in users if u["value"] is None] == [7, 12]  # tombstones
    orders = table.filter((pc.field("topic") == "orders") & (pc.field("partition") == 0))
    orders = orders.to_pylist()
    assert [o["offset"] for o in orders] == list(range(33))
    assert all(o["headers"] for o in orders[:26]) and not any(o["headers"] for o in orders[26:])
    assert {o["sequence"] for o in orders[26:]} == set(range(7))
    assert {o["timestampType"] for o in orders[20:26]} == {1}


def test_sample_typed_values():
    """payments-0: Avro values of two versions, framed by confluent-kafka's own serializer;
    _schemas-0: their registry. kafkalog decodes them as fastavro does (each with its writer
    schema, by the id in its framing, resolved to the latest version)."""
    fastavro = pytest.importorskip("fastavro")
    registry = kafkalog.schemas(LOGS).to_pylist()
    assert [(r["subject"], r["version"], r["id"]) for r in registry] == [
        ("payments-value", 1, 1),
        ("payments-value", 2, 2),
    ]
    by_id = {r["id"]: fastavro.parse_schema(json.loads(r["schema"])) for r in registry}
    raw = kafkalog.read(LOGS / "payments-0").read_all().column("value").to_pylist()
    expected = [
        fastavro.schemaless_reader(io.BytesIO(v[5:]), by_id[int.from_bytes(v[1:5])], by_id[2])
        for v in raw
    ]
    assert [v[0] for v in raw] == [0] * 10 and {int.from_bytes(v[1:5]) for v in raw} == {1, 2}
    typed = kafkalog.read(LOGS / "payments-0", value_format="avro", schemas=LOGS).read_all()
    got = typed.column("value").to_pylist()
    for g in got:
        g["attrs"] = dict(g["attrs"])
    assert got == expected
