"""Writes the typed-value fixtures the Rust tests of `rust/values/` compare against.

Framed payloads come from Confluent's own serializers (confluent-kafka's ProtobufSerializer
and JSONSerializer, registering with its mock Schema Registry client); the expected values from
independent decoders: Confluent's ProtobufDeserializer into the protobuf runtime's message
class of the reader schema, walked into plain JSON below, and the json module.

Run from the repository root (needs `grpcio-tools` for protoc, besides the test extra):

    .venv/bin/pip install grpcio-tools
    PYTHONHASHSEED=0 .venv/bin/python tests/values/make_fixtures.py

The expected values follow the Arrow mapping of docs/values-protobuf-json.md, as plain JSON:
a message is an object of every reader field, a map a list of [key, value] pairs sorted by
key, Timestamp and Duration whole microseconds, bytes hex, an enum its value's name (or the
number as text), a field that tracks presence and is absent null.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

HERE = Path(__file__).resolve().parent
PROTO = HERE / "protobuf"
JSON_DIR = HERE / "json"
TOPIC = "orders"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

WELL_KNOWN_WRAPPERS = {
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
}


def message_classes(version: str) -> dict[str, Any]:
    """The message classes of `src/<version>/order.proto`, compiled by protoc."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        src = PROTO / "src"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{src / version}",
                f"-I{src}",
                f"-I{Path(__import__('grpc_tools').__file__).parent / '_proto'}",
                "--include_imports",
                f"--descriptor_set_out={out}",
                "order.proto",
            ],
            check=True,
        )
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"fixtures.{name}"))
        for name in ("Order", "Other")
    }


def micros(message: Message) -> int:
    seconds: int = message.seconds  # type: ignore[attr-defined]
    nanos: int = message.nanos  # type: ignore[attr-defined]
    return seconds * 1_000_000 + int(nanos / 1000)


def scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return walk(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else str(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return value.hex()
    return value


def walk(message: Message) -> Any:
    """A decoded message as plain JSON (the mapping in the module's docstring)."""
    name = message.DESCRIPTOR.full_name
    if name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        return micros(message)
    if name in WELL_KNOWN_WRAPPERS:
        return scalar(message.DESCRIPTOR.fields_by_name["value"], message.value)  # type: ignore[attr-defined]
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = [[k, scalar(value_field, value[k])] for k in sorted(value)]
        elif field.is_repeated:
            out[field.name] = [scalar(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = scalar(field, value)
    return out


def protobuf_fixtures() -> None:
    registry = SchemaRegistryClient.new_client({"url": "mock://fixtures"})
    value = SerializationContext(TOPIC, MessageField.VALUE)
    versions = {v: message_classes(v) for v in ("v1", "v2", "v3")}
    conf = {"auto.register.schemas": True, "use.latest.version": False}
    payloads: list[bytes] = []

    def serialize(version: str, name: str, **fields: Any) -> None:
        cls = versions[version][name]
        serializer = ProtobufSerializer(cls, registry, conf)
        message = cls(**fields)
        framed = serializer(message, value)
        assert framed is not None
        payloads.append(framed)

    ts = {"seconds": 1_700_000_000, "nanos": 123_456_789}
    serialize(
        "v1", "Order", id=1, customer="ada", status=1, created=ts, card="4111", removed_later=7
    )
    serialize(
        "v1",
        "Order",
        id=-2,
        lines=[{"sku": "a", "qty": 2, "price": 1.5}, {"sku": "b"}],
        counters={"z": 1, "a": -5},
        cash={"units": 10, "nanos": 5, "currency": "EUR"},
        blob=b"\x00\xff",
    )
    serialize("v1", "Order")
    serialize(
        "v2",
        "Order",
        id=3,
        status=3,
        ttl={"seconds": 90, "nanos": 500_000},
        note={"value": "hello"},
        score={"value": 0},
        priority=0,
        big=2**64 - 1,
        ratio=0.25,
        flag=True,
        delta=-7,
        fx=2**63,
        by_pos={2: {"sku": "x", "tags": ["t1", "t2"]}, -1: {}},
        samples=[1, -1, 2**62],
        created={"seconds": -62135596800, "nanos": 0},
    )
    serialize("v2", "Order", id=4, note={"value": ""}, customer="émile ☃")
    serialize("v3", "Order", id=5, status=4, added_later="dropped", priority=9)
    serialize("v2", "Other", x="not an order")

    reader = versions["v2"]["Order"]
    deserializer = ProtobufDeserializer(reader, {}, registry)
    cases = []
    for framed in payloads:
        schema_id = int.from_bytes(framed[1:5], "big")
        written = registry.get_schema(schema_id)
        # Written as another message (the last payload): kafkalog refuses it; the deserializer,
        # told the class, would parse its bytes as an Order regardless.
        other = framed[5:6] != b"\x00"
        expected = None if other else walk(deserializer(framed, value))
        cases.append(
            {
                "framed": framed.hex(),
                "expected": expected,
                "error": other,
                "writer": written.schema_str,
            }
        )

    schemas = {}
    for schema_id in sorted(
        {int.from_bytes(bytes.fromhex(c["framed"])[1:5], "big") for c in cases}
    ):
        schema = registry.get_schema(schema_id)
        references = []
        for ref in schema.references or []:
            ref_schema = registry.get_version(ref.subject, ref.version).schema
            references.append([ref.name, ref_schema.schema_str])
        schemas[str(schema_id)] = {"schema": schema.schema_str, "references": references}
    for case in cases:
        del case["writer"]
    reader_text = (PROTO / "src" / "v2" / "order.proto").read_text()
    common_text = (PROTO / "src" / "common.proto").read_text()
    fixture = {
        "note": "written by tests/values/make_fixtures.py; do not edit",
        "reader_proto": reader_text,
        "reader_references": [["common.proto", common_text]],
        "schemas": schemas,
        "cases": cases,
    }
    # The base64 descriptor the registry holds for the reader, checked against the text.
    assert any(base64.b64decode(s["schema"]) for s in schemas.values())
    (PROTO / "fixtures.json").write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")


def json_text(value: Any) -> str:
    """A value given as JSON text, as kafkalog writes it (compact, keys sorted)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def project(schema: dict[str, Any], value: Any, defs: dict[str, Any]) -> Any:
    """A decoded JSON value as the reader schema's Arrow type holds it (see the docs)."""
    if value is None:
        return None
    if "$ref" in schema:
        ref = schema["$ref"]
        target = defs[ref]
        return project(target, value, defs)
    if "oneOf" in schema:
        (branch,) = [b for b in schema["oneOf"] if b.get("type") != "null"]
        return project(branch, value, defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        (kind,) = [k for k in kind if k != "null"]
    if kind == "object" and schema.get("properties"):
        properties = schema["properties"].items()
        return {name: project(sub, value.get(name), defs) for name, sub in properties}
    if kind == "array" and isinstance(schema.get("items"), dict):
        return [project(schema["items"], v, defs) for v in value]
    if kind == "string" and schema.get("format") == "date-time":
        moment = datetime.fromisoformat(value)
        return (moment - EPOCH) // timedelta(microseconds=1)
    if kind == "string" and schema.get("format") == "date":
        return (date.fromisoformat(value) - date(1970, 1, 1)).days
    if kind in ("string", "integer", "number", "boolean"):
        return value
    return json_text(value)


def json_fixtures() -> None:
    registry = SchemaRegistryClient.new_client({"url": "mock://json-fixtures"})
    value = SerializationContext(TOPIC, MessageField.VALUE)
    src = JSON_DIR / "src"
    address = (src / "address.json").read_text()
    address_url = "https://example.com/schemas/address.json"
    registry.register_schema("address", Schema(address, "JSON"))
    versions = {
        "v1": Schema((src / "v1.json").read_text(), "JSON"),
        "v2": Schema(
            (src / "v2.json").read_text(),
            "JSON",
            [SchemaReference(address_url, "address", 1)],
        ),
    }
    conf = {"auto.register.schemas": True, "use.latest.version": False}
    payloads = []

    def serialize(version: str, record: dict[str, Any]) -> None:
        serializer = JSONSerializer(versions[version], registry, conf=conf)
        framed = serializer(record, value)
        assert framed is not None
        payloads.append(framed)

    serialize(
        "v1",
        {
            "id": 1,
            "customer": "ada",
            "amount": 12.5,
            "paid": True,
            "created": "2024-03-01T12:30:00.123456+02:00",
            "lines": [{"sku": "a", "qty": 2}, {"sku": "b"}],
            "old_field": "dropped by the reader",
        },
    )
    serialize("v1", {"id": 2})
    serialize(
        "v2",
        {
            "id": 3,
            "amount": 7,
            "created": "1969-12-31T23:59:59Z",
            "lines": [{"sku": "c", "qty": 1, "price": 0.1}],
            "ship_to": {"street": "1 Main St", "city": "Zürich", "zip": None},
            "day": "2024-02-29",
            "note": None,
            "tags": ["x", "y"],
            "attrs": {"b": "2", "a": "1"},
            "coupon": "SAVE",
            "extra": {"any": [1, "two", None, {"k": True}]},
        },
    )
    serialize("v2", {"id": 4, "customer": "émile ☃", "extra": "just a string", "tags": []})

    deserializer = JSONDeserializer(None, schema_registry_client=registry)
    reader = json.loads((src / "v2.json").read_text())
    defs = {
        "#/definitions/Line": reader["definitions"]["Line"],
        address_url: json.loads(address),
    }
    cases = []
    for framed in payloads:
        decoded = deserializer(framed, value)
        # The json module's own reading of the bytes after the framing, as the oracle.
        assert decoded == json.loads(framed[5:])
        cases.append({"framed": framed.hex(), "expected": project(reader, decoded, defs)})
    schemas = {}
    for framed in payloads:
        schema_id = int.from_bytes(framed[1:5], "big")
        schema = registry.get_schema(schema_id)
        references = []
        for ref in schema.references or []:
            ref_schema = registry.get_version(ref.subject, ref.version).schema
            references.append([ref.name, ref_schema.schema_str])
        schemas[str(schema_id)] = {"schema": schema.schema_str, "references": references}
    fixture = {
        "note": "written by tests/values/make_fixtures.py; do not edit",
        "reader": (src / "v2.json").read_text(),
        "reader_references": [[address_url, address]],
        "schemas": schemas,
        "cases": cases,
    }
    (JSON_DIR / "fixtures.json").write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")


def main() -> None:
    protobuf_fixtures()
    json_fixtures()


if __name__ == "__main__":
    main()
