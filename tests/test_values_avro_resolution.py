"""Avro values read through kafkalog (the compiled decoder, ``rust/values/avro/decoder.rs``)
against fastavro's own resolution (``schemaless_reader(writer, reader)``), on the same
Confluent-framed bytes: generated writer schemas, an evolution of each as the reader schema
(fields added with defaults, dropped, reordered, renamed through aliases, promoted; enum
symbols reordered, added, dropped with a default; unions reordered; types made nullable), and
generated values written by fastavro with the writer schema and with the reader schema, mixed
in one partition. Then the rules fastavro and the specification have where arrow-avro (the
decoder before) differs."""

from __future__ import annotations

import datetime
import decimal
import io
import itertools
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from values_fixtures import write_partition

import kafkalog
from kafkalog.errors import UndecodedValueWarning

fastavro = pytest.importorskip("fastavro")
numpy = pytest.importorskip("numpy")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

UTC = datetime.UTC

LEAVES = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "string",
    "bytes",
    {"type": "int", "logicalType": "date"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "local-timestamp-micros"},
    {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
    {"type": "string", "logicalType": "uuid"},
    "enum",
    "fixed",
]


def named(kind: str, names: itertools.count) -> dict[str, Any]:
    n = next(names)
    if kind == "enum":
        return {"type": "enum", "name": f"E{n}", "symbols": ["A", "B", "C"][: 1 + n % 3]}
    return {"type": "fixed", "name": f"F{n}", "size": 1 + n % 4}


@st.composite
def types(draw: Any, names: itertools.count, depth: int = 0) -> Any:
    """A writer type: a leaf, or (not too deep) an array, map, record, nullable or union."""
    kinds = ["leaf"] * 4 + (["array", "map", "record", "nullable", "union"] if depth < 3 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        leaf = draw(st.sampled_from(LEAVES))
        return named(leaf, names) if leaf in ("enum", "fixed") else leaf
    if kind == "array":
        return {"type": "array", "items": draw(types(names, depth + 1))}
    if kind == "map":
        return {"type": "map", "values": draw(types(names, depth + 1))}
    if kind == "record":
        return draw(records(names, depth + 1))
    inner = draw(types(names, depth + 1))
    if kind == "nullable" and not isinstance(inner, list):
        return ["null", inner] if draw(st.booleans()) else [inner, "null"]
    # A union whose branches Python's types tell apart (a long, a string, a record).
    branches: list[Any] = [draw(st.sampled_from(["int", "long"])), "string"]
    if draw(st.booleans()):
        branches.append(draw(records(names, depth + 1)))
    if draw(st.booleans()):
        branches.insert(draw(st.integers(0, len(branches))), "null")
    return branches


@st.composite
def records(draw: Any, names: itertools.count, depth: int = 0) -> dict[str, Any]:
    n = next(names)
    count = draw(st.integers(1, 5))
    fields = [{"name": f"f{i}", "type": draw(types(names, depth))} for i in range(count)]
    return {"type": "record", "name": f"R{n}", "namespace": "gen", "fields": fields}


#: Fields a reader adds: a type and its default.
ADDED = [
    ("int", 7),
    ("long", -1),
    ("string", "d"),
    ("boolean", True),
    ("double", 1.5),
    ({"type": "array", "items": "int"}, [1, 2]),
    ({"type": "map", "values": "string"}, {"k": "v"}),
    (["null", "string"], None),
    ({"type": "enum", "name": "Added", "symbols": ["X", "Y"]}, "Y"),
]


@st.composite
def evolved(draw: Any, t: Any) -> Any:
    """A reader type ``t`` resolves to."""
    if t == "int":
        return draw(st.sampled_from(["int", "int", "long", "float", "double", ["null", "long"]]))
    if t == "long":
        return draw(st.sampled_from(["long", "long", "float", "double"]))
    if t == "float":
        return draw(st.sampled_from(["float", "double"]))
    if t == "string":
        return draw(st.sampled_from(["string", "string", "bytes", ["null", "string"]]))
    if isinstance(t, list):
        return draw(st.permutations(t))
    if not isinstance(t, dict):
        return t
    kind = t["type"]
    if kind == "array":
        return dict(t, items=draw(evolved(t["items"])))
    if kind == "map":
        return dict(t, values=draw(evolved(t["values"])))
    if kind == "enum":
        symbols = list(draw(st.permutations(t["symbols"])))
        out = dict(t, symbols=symbols)
        if draw(st.booleans()):
            symbols.append("Z")
        if len(symbols) > 1 and draw(st.booleans()):
            symbols.pop()
            out["default"] = symbols[0]
        return out
    if kind == "record":
        fields = []
        for f in t["fields"]:
            roll = draw(st.integers(0, 7))
            if roll == 0:
                continue
            g = dict(f, type=draw(evolved(f["type"])))
            if roll == 1:
                g = dict(g, name=f"renamed_{f['name']}", aliases=[f["name"]])
            fields.append(g)
        added = draw(st.lists(st.sampled_from(ADDED), max_size=2, unique_by=lambda a: str(a)))
        for i, (ty, default) in enumerate(added):
            if isinstance(ty, dict) and ty.get("type") == "enum":
                ty = dict(ty, name=f"{t['name']}Added{i}")
            fields.append({"name": f"added{i}", "type": ty, "default": default})
        if not fields:
            fields.append({"name": "added", "type": "int", "default": 7})
        return dict(t, fields=draw(st.permutations(fields)))
    return t


def value_of(draw: Any, t: Any) -> Any:
    """A value of type ``t``, as fastavro writes it."""
    if isinstance(t, list):
        return value_of(draw, draw(st.sampled_from(t)))
    if isinstance(t, str):
        return {
            "null": lambda: None,
            "boolean": lambda: draw(st.booleans()),
            "int": lambda: draw(st.integers(-(2**31), 2**31 - 1)),
            "long": lambda: draw(st.integers(-(2**63), 2**63 - 1)),
            "float": lambda: draw(st.floats(-1e6, 1e6, width=32)),
            "double": lambda: draw(st.floats(allow_nan=False)),
            "string": lambda: draw(st.text(max_size=5)),
            "bytes": lambda: draw(st.binary(max_size=5)),
        }[t]()
    kind = t["type"]
    logical = t.get("logicalType")
    if logical == "date":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=draw(st.integers(0, 40000)))
    if logical == "time-millis":
        ms = draw(st.integers(0, 86_399_999))
        return datetime.time(ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60, ms % 1000 * 1000)
    if logical == "timestamp-millis":
        ms = draw(st.integers(0, 2**42))
        return datetime.datetime(1970, 1, 1, tzinfo=UTC) + datetime.timedelta(milliseconds=ms)
    if logical == "local-timestamp-micros":
        us = draw(st.integers(0, 2**52))
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=us)
    if logical == "decimal":
        return decimal.Decimal(draw(st.integers(-(10**11), 10**11))).scaleb(-2)
    if logical == "uuid":
        return str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1))))
    if kind == "enum":
        return draw(st.sampled_from(t["symbols"]))
    if kind == "fixed":
        return draw(st.binary(min_size=t["size"], max_size=t["size"]))
    if kind == "array":
        return [value_of(draw, t["items"]) for _ in range(draw(st.integers(0, 3)))]
    if kind == "map":
        keys = draw(st.lists(st.text("abc", min_size=1, max_size=3), max_size=3, unique=True))
        return {k: value_of(draw, t["values"]) for k in keys}
    if kind == "record":
        return {f["name"]: value_of(draw, f["type"]) for f in t["fields"]}
    return value_of(draw, kind)


def branch(t: list[Any], v: Any) -> int:
    """The branch of union ``t`` fastavro's value ``v`` is (by its Python type)."""
    for i, b in enumerate(t):
        name = b if isinstance(b, str) else b.get("type")
        if (
            (v is None and name == "null")
            or (isinstance(v, str) and name == "string")
            or (isinstance(v, int) and not isinstance(v, bool) and name in ("int", "long"))
            or (isinstance(v, dict) and name == "record")
        ):
            return i
    raise AssertionError((t, v))


def shaped(t: Any, v: Any) -> Any:
    """fastavro's value of reader type ``t`` in the shapes kafkalog gives (maps as pairs,
    unions of several types as Spark's member structs, uuids as their text)."""
    if v is None:
        return None
    if t == "float":
        # An int or long promoted: its value rounded once to a float, as Avro's readers do.
        return float(numpy.float32(numpy.int64(v) if isinstance(v, int) else v))
    if t == "double":
        return float(v)
    if isinstance(t, list):
        others = [b for b in t if b != "null"]
        kinds = {b if isinstance(b, str) else b["type"] for b in others}
        if len(others) == 1:
            return shaped(others[0], v)
        if kinds in ({"int", "long"}, {"float", "double"}):
            return v
        members = {f"member{i}": None for i in range(len(others))}
        k = branch(others, v)
        members[f"member{k}"] = shaped(others[k], v)
        return members
    if isinstance(t, dict):
        kind = t["type"]
        if t.get("logicalType") == "uuid":
            return str(v)
        if kind == "array":
            return [shaped(t["items"], x) for x in v]
        if kind == "map":
            return [(k, shaped(t["values"], x)) for k, x in v.items()]
        if kind == "record":
            return {f["name"]: shaped(f["type"], v[f["name"]]) for f in t["fields"]}
    return v


@st.composite
def cases(draw: Any) -> tuple[dict[str, Any], dict[str, Any], list[tuple[int, Any]]]:
    names = itertools.count()
    writer = draw(records(names))
    reader = draw(evolved(writer))
    values = [
        (1, value_of(draw, writer)) if draw(st.integers(0, 3)) else (2, value_of(draw, reader))
        for _ in range(draw(st.integers(1, 8)))
    ]
    return writer, reader, values


def framed(schema_id: int, schema: Any, value: Any) -> bytes:
    buf = io.BytesIO()
    buf.write(b"\x00" + schema_id.to_bytes(4, "big"))
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), value)
    return buf.getvalue()


def read_back(
    root: Path, schemas: dict[int, Any], reader: Any, values: list[bytes]
) -> tuple[list[Any], list[str | None]]:
    write_partition(root / "t-0", [(None, v) for v in values])
    table = kafkalog.read(
        root / "t-0",
        value_format="avro",
        schemas=schemas,
        value_options={"value_schema": reader},
        on_value_error="null",
    ).read_all()
    return table.column("value").to_pylist(), table.column("value_error").to_pylist()


@pytest.mark.filterwarnings("ignore", category=UndecodedValueWarning)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases())
def test_values_read_as_fastavro_resolves_them(case):
    writer, reader, values = case
    schemas = {1: writer, 2: reader}
    raw = [framed(i, schemas[i], v) for i, v in values]
    expected = []
    for (i, _), r in zip(values, raw, strict=True):
        parsed = fastavro.parse_schema(schemas[i]), fastavro.parse_schema(reader)
        try:
            expected.append(fastavro.schemaless_reader(io.BytesIO(r[5:]), *parsed))
        except Exception:  # noqa: BLE001 - a value fastavro cannot resolve: an error here too
            expected.append(ValueError)
    with tempfile.TemporaryDirectory() as tmp:
        got, errors = read_back(Path(tmp), schemas, reader, raw)
    for g, e, want in zip(got, errors, expected, strict=True):
        if want is ValueError:
            assert e is not None and g is None
        else:
            assert e is None, e
            assert g == shaped(reader, want)


def one_read(tmp_path: Path, writer: Any, reader: Any, values: list[Any]) -> tuple[list, list]:
    raw = [framed(1, writer, v) for v in values]
    return read_back(tmp_path, {1: writer}, reader, raw)


def test_names_match_unqualified_and_through_the_readers_aliases(tmp_path):
    writer = {
        "type": "record",
        "name": "Old",
        "namespace": "w",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "inner", "type": {"type": "record", "name": "In",
                                       "fields": [{"name": "x", "type": "int"}]}},
        ],
    }  # fmt: skip
    reader = {
        "type": "record",
        "name": "New",
        "namespace": "r",
        "aliases": ["w.Old"],
        "fields": [
            {"name": "key", "type": "long", "aliases": ["id"]},
            {"name": "kind", "type": {"type": "enum", "name": "Kind2", "aliases": ["w.Kind"],
                                      "symbols": ["B", "A"]}},
            {"name": "inner", "type": {"type": "record", "name": "In",
                                       "fields": [{"name": "x", "type": "long"}]}},
        ],
    }  # fmt: skip
    value = {"id": 5, "kind": "A", "inner": {"x": -3}}
    got, errors = one_read(tmp_path, writer, reader, [value])
    want = fastavro.schemaless_reader(
        io.BytesIO(framed(1, writer, value)[5:]),
        fastavro.parse_schema(writer),
        fastavro.parse_schema(reader),
    )
    assert errors == [None]
    assert got == [want] == [{"key": 5, "kind": "A", "inner": {"x": -3}}]


@pytest.mark.filterwarnings("ignore", category=UndecodedValueWarning)
def test_a_field_the_writer_lacks_without_a_default_fails_each_value(tmp_path):
    writer = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    reader = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": ["null", "int"]}],
    }
    raw = framed(1, writer, {"a": 1})
    with pytest.raises(Exception, match="b"):
        fastavro.schemaless_reader(
            io.BytesIO(raw[5:]), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
        )
    got, errors = one_read(tmp_path, writer, reader, [{"a": 1}, {"a": 2}])
    assert got == [None, None]
    assert all("field b is not in the writer's schema and has no default" in e for e in errors)


def test_union_defaults_take_the_first_branch_that_matches(tmp_path):
    writer = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    reader = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "a", "type": "int"},
            {"name": "u", "type": ["null", "string"], "default": "x"},
            {"name": "v", "type": ["null", "long", "string"], "default": 4},
        ],
    }
    got, errors = one_read(tmp_path, writer, reader, [{"a": 1}])
    assert errors == [None]
    assert got == [{"a": 1, "u": "x", "v": {"member0": 4, "member1": None}}]


@pytest.mark.filterwarnings("ignore", category=UndecodedValueWarning)
def test_enum_symbols_the_reader_lacks(tmp_path):
    writer = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}
    with_default = {"type": "enum", "name": "E", "symbols": ["C", "A"], "default": "A"}
    without = {"type": "enum", "name": "E", "symbols": ["C", "A"]}
    got, errors = one_read(tmp_path, writer, with_default, ["A", "B", "C"])
    assert got == ["A", "A", "C"] and errors == [None, None, None]
    got, errors = one_read(tmp_path / "2", writer, without, ["A", "B", "C"])
    assert got == ["A", None, "C"]
    assert errors[1] is not None and "enum symbol B" in errors[1]


def test_interleaved_versions_keep_their_order(tmp_path):
    v1 = {"type": "record", "name": "R", "fields": [{"name": "n", "type": "int"}]}
    v2 = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "s", "type": "string", "default": "old"},
            {"name": "n", "type": "long"},
        ],
    }
    raw = [framed(1 + i % 2, [v1, v2][i % 2], {"n": i, "s": f"s{i}"}) for i in range(20)]
    got, errors = read_back(tmp_path, {1: v1, 2: v2}, v2, raw)
    assert errors == [None] * 20
    assert got == [{"n": i, "s": "old" if i % 2 == 0 else f"s{i}"} for i in range(20)]
