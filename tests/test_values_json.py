"""JSON Schema values (issues 34 and 35): values framed by confluent-kafka's own
JSONSerializer, decoded by kafkalog's JSON decoder equal to what Python's json module reads,
through ``read``, the command line and the Python Spark source; the schema id each value
carries checked as Confluent's deserializer checks it; ``$ref`` fragments percent-decoded; and
generated documents (hypothesis) against the json module."""

from __future__ import annotations

import datetime
import json
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from values_fixtures import registered, write_partition

import kafkalog
from kafkalog.cli.main import main
from kafkalog.errors import UndecodedValueWarning, ValueDecodeError

ck = pytest.importorskip("confluent_kafka.schema_registry")
from confluent_kafka.schema_registry import Schema  # noqa: E402
from confluent_kafka.schema_registry.json_schema import JSONSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TOPIC = "orders"
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)

#: The reader schema: `$ref`s whose fragments are percent-encoded (a space, a percent sign),
#: properties declared out of alphabetical order, a map and any JSON (JSON text).
ORDER = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "line item": {
            "type": "object",
            "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
        },
        "100%": {"type": "number"},
    },
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": "string"},
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line%20item"}},
        "discount": {"$ref": "#/$defs/100%25"},
        "created": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "attrs": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {},
    },
}
FIELDS = ["id", "customer", "lines", "discount", "created", "day", "attrs", "extra"]

ORDERS = [
    {"id": 1, "customer": "ada", "lines": [{"sku": "a", "qty": 2}, {"sku": "b"}], "discount": 0.5},
    {
        "id": 2,
        "customer": "émile ☃",
        "created": "2024-03-01T12:30:00.123456+02:00",
        "day": "2024-02-29",
        "attrs": {"b": "2", "a": "1"},
        "extra": {"any": [1, "two", None, {"k": True}]},
    },
    {"id": 3, "discount": 100, "lines": [], "extra": "just a string", "unknown": [1, {"x": 2}]},
]

AVRO = {"type": "record", "name": "Other", "fields": [{"name": "x", "type": "long"}]}


def text(value: Any) -> str:
    """JSON text as kafkalog writes it (compact, keys sorted)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def project(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """A value the json module read, as the reader schema's column holds it (docs)."""
    if value is None:
        return None
    created = value.get("created")
    day = value.get("day")
    lines = value.get("lines")
    return {
        "id": value.get("id"),
        "customer": value.get("customer"),
        "lines": None
        if lines is None
        else [{"sku": line.get("sku"), "qty": line.get("qty")} for line in lines],
        "discount": value.get("discount"),
        "created": None
        if created is None
        else (datetime.datetime.fromisoformat(created) - EPOCH)
        // datetime.timedelta(microseconds=1),
        "day": None if day is None else (datetime.date.fromisoformat(day).toordinal() - 719163),
        "attrs": None if value.get("attrs") is None else text(value["attrs"]),
        "extra": None if value.get("extra") is None else text(value["extra"]),
    }


def plain(v: Any) -> Any:
    """Timestamps as µs since the epoch and dates as days, as :func:`project` gives them."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, datetime.datetime):
        return (v - EPOCH) // datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    return v


def serializer(url: str, pads: int) -> JSONSerializer:
    """confluent-kafka's JSONSerializer with a mock registry that gave `pads` ids away first:
    its values carry id `pads + 1`."""
    client = ck.SchemaRegistryClient.new_client({"url": url})
    for i in range(pads):
        client.register_schema(f"pad-{i}", Schema(json.dumps({"type": "integer"}), "JSON"))
    conf = {"auto.register.schemas": True, "use.latest.version": False}
    return JSONSerializer(json.dumps(ORDER), client, conf=conf)


class Backup:
    """A log directory: ``_schemas-0`` (``orders-value``: the JSON Schema, id 1; an Avro
    schema, id 2) and ``orders-0``: the orders, then one framed with id 2 by a producer whose
    registry was another, one with id 3 (not in the registry), a tombstone."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ctx = SerializationContext(TOPIC, MessageField.VALUE)
        own = serializer("mock://json-values-own", 0)
        self.client = own._registry
        self.good = [own(order, ctx) for order in ORDERS]
        self.client.register_schema("other-value", Schema(json.dumps(AVRO), "AVRO"))
        self.avro_id = serializer("mock://json-values-avro", 1)(ORDERS[0], ctx)
        self.unknown_id = serializer("mock://json-values-gone", 2)(ORDERS[1], ctx)
        assert [v[1:5] for v in (*self.good, self.avro_id, self.unknown_id)] == [
            b"\x00\x00\x00\x01"
        ] * 3 + [b"\x00\x00\x00\x02", b"\x00\x00\x00\x03"]
        self.values: list[bytes | None] = [*self.good, self.avro_id, self.unknown_id, None]
        write_partition(root / f"{TOPIC}-0", [(None, v) for v in self.values])
        records = registered(self.client, f"{TOPIC}-value") + registered(self.client, "other-value")
        write_partition(root / "_schemas-0", records)

    def expected(self) -> list[dict[str, Any] | None]:
        """The good values as the json module reads them, then nulls."""
        return [project(json.loads(v[5:])) for v in self.good] + [None, None, None]

    def errors(self) -> list[str | None]:
        return [None] * 3 + [
            "schema id 2 is registered as AVRO, not a JSON Schema",
            "schema id 3 is not in the registry",
            None,
        ]


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> Backup:
    return Backup(tmp_path_factory.mktemp("values-json"))


def test_read_decodes_as_the_json_module(backup):
    """Issue 34 and 35 item 3: the reader schema's `$ref`s to `#/$defs/line%20item` and
    `#/$defs/100%25` resolve (they "pointed at nothing" and the read was refused); the values
    are what the json module reads; the struct's fields come in declared order."""
    with pytest.warns(UndecodedValueWarning):
        table = kafkalog.read(
            backup.root / f"{TOPIC}-0", value_format="json", schemas=backup.root,
            on_value_error="null",
        ).read_all()  # fmt: skip
    value = table.schema.field("value").type
    assert [value.field(i).name for i in range(value.num_fields)] == FIELDS
    assert value.field("discount").type == pa.float64()
    assert value.field("lines").type.value_type.field("qty").type == pa.int64()
    assert [plain(v) for v in table.column("value").to_pylist()] == backup.expected()


def test_schema_ids_are_checked(backup):
    """Issue 35 item 2: a value whose id is an Avro schema's, or not in the registry, is a bad
    value as in every other format: the read fails, naming it; or it is null with its reason
    and its bytes."""
    with pytest.raises(ValueDecodeError) as e:
        kafkalog.read(
            backup.root / f"{TOPIC}-0", value_format="json", schemas=backup.root
        ).read_all()
    # The error's offset is its batch's (issue 38); the message names the record's.
    assert e.value.offset == 0 and "value of orders-0 at offset 3 does not decode" in str(e.value)
    assert "schema id 2 is registered as AVRO, not a JSON Schema" in str(e.value)
    with pytest.warns(UndecodedValueWarning):
        table = kafkalog.read(
            backup.root / f"{TOPIC}-0", value_format="json", schemas=backup.root,
            on_value_error="null",
        ).read_all()  # fmt: skip
    assert table.column("value_error").to_pylist() == backup.errors()
    raw = table.column("value_raw").to_pylist()
    assert raw == [None, None, None, backup.avro_id, backup.unknown_id, None]
    # The same with `auto`, which reads each id's registered type.
    with pytest.warns(UndecodedValueWarning):
        table = kafkalog.read(
            backup.root / f"{TOPIC}-0", value_format="auto", schemas=backup.root,
            on_value_error="null",
        ).read_all()  # fmt: skip
    assert table.column("value_error").to_pylist() == backup.errors()


def test_command_line(capsys, backup, tmp_path):
    out = tmp_path / "orders.parquet"
    argv = ["convert", backup.root / f"{TOPIC}-0", out, "--value-format", "json"]
    argv += ["--schemas", backup.root]
    code = main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert code != 0 and "schema id 2 is registered as AVRO" in err
    code = main([str(a) for a in [*argv, "--on-value-error", "null"]])
    _, err = capsys.readouterr()
    assert code == 0, err
    table = pq.read_table(out)
    assert [plain(v) for v in table.column("value").to_pylist()] == backup.expected()
    assert table.column("value_error").to_pylist() == backup.errors()


def test_python_spark_source(spark, backup):
    pytest.importorskip("pyspark")
    df = (
        spark.read.format("kafkalog")
        .option("valueFormat", "json")
        .option("schemaRegistry", str(backup.root))
        .option("onValueError", "null")
        .load(str(backup.root / f"{TOPIC}-0"))
    )
    assert df.schema["value"].dataType.names == FIELDS
    # Timestamps as microseconds (Spark hands Python naive datetimes in the session's zone).
    df = df.selectExpr(
        "offset", "value", "unix_micros(value.created) AS us", "value_error", "value_raw"
    )
    rows = df.orderBy("offset").collect()
    got = []
    for r in rows:
        value = None if r["value"] is None else r["value"].asDict(recursive=True)
        if value is not None:
            value["created"] = r["us"]
        got.append(plain(value))
    assert got == backup.expected()
    assert [r["value_error"] for r in rows] == backup.errors()
    assert rows[4]["value_raw"] == backup.unknown_id


# Generated documents against the json module.

SCHEMA = {
    "type": "object",
    "properties": {
        "i": {"type": "integer"},
        "f": {"type": "number"},
        "b": {"type": "boolean"},
        "s": {"type": "string"},
        "t": {"type": "string", "format": "date-time"},
        "d": {"type": "string", "format": "date"},
        "o": {
            "type": "object",
            "properties": {"n": {"type": ["null", "integer"]}, "s": {"type": "string"}},
        },
        "l": {"type": "array", "items": {"type": "number"}},
        "j": {},
    },
}

#: Strings without lone surrogates (which the json module reads and kafkalog, as
#: serde_json, refuses).
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
#: Floats that Python and serde_json print alike inside JSON text.
simple_floats = st.integers(-(10**6), 10**6).map(lambda n: n / 4)
json_text_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | simple_floats | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
INDIA = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
date_times = st.datetimes(
    min_value=datetime.datetime(2, 1, 1),
    max_value=datetime.datetime(9999, 12, 31),
    timezones=st.sampled_from([datetime.UTC, INDIA]),
)
documents = st.fixed_dictionaries(
    {},
    optional={
        "i": st.integers(-(2**63), 2**63 - 1),
        "f": st.floats(allow_nan=False, allow_infinity=False),
        "b": st.booleans(),
        "s": texts,
        "t": date_times.map(lambda t: t.isoformat()),
        "d": st.dates().map(lambda d: d.isoformat()),
        "o": st.fixed_dictionaries({}, optional={"n": st.none() | st.integers(-5, 5), "s": texts}),
        "l": st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-100, 100)),
        "j": json_text_values,
        "unknown": json_text_values,
    },
)


def expected_generated(doc: dict[str, Any]) -> dict[str, Any]:
    def micros(s: str) -> int:
        return (datetime.datetime.fromisoformat(s) - EPOCH) // datetime.timedelta(microseconds=1)

    o = doc.get("o")
    return {
        "i": doc.get("i"),
        "f": None if doc.get("f") is None else float(doc["f"]),
        "b": doc.get("b"),
        "s": doc.get("s"),
        "t": None if doc.get("t") is None else micros(doc["t"]),
        "d": None
        if doc.get("d") is None
        else datetime.date.fromisoformat(doc["d"]).toordinal() - 719163,
        "o": None if o is None else {"n": o.get("n"), "s": o.get("s")},
        "l": None if doc.get("l") is None else [float(x) for x in doc["l"]],
        "j": None if doc.get("j") is None else text(doc["j"]),
    }


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs=st.lists(documents, min_size=1, max_size=6),
    ascii_only=st.booleans(),
    spaced=st.booleans(),
)
def test_generated_documents_read_as_the_json_module_reads_them(tmp_path, docs, ascii_only, spaced):
    separators = (", ", ": ") if spaced else (",", ":")
    payloads = [
        b"\x00\x00\x00\x00\x01"
        + json.dumps(d, ensure_ascii=ascii_only, separators=separators).encode()
        for d in docs
    ]
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / f"{TOPIC}-0"
    write_partition(path, [(None, p) for p in payloads])
    schemas = {1: {"schema": json.dumps(SCHEMA), "schemaType": "JSON"}}
    table = kafkalog.read(path, value_format="json", schemas=schemas).read_all()
    got = [plain(v) for v in table.column("value").to_pylist()]
    assert got == [expected_generated(json.loads(p[5:])) for p in payloads]
