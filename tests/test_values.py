"""Typed keys and values (issue 26): Confluent-serialized Avro values, framed by
confluent-kafka's own serializers, decoded with the registry folded from its storage topic
(written as Schema Registry writes it), equal to what fastavro decodes with the same writer
and reader schemas; several versions resolving to the latest; bad values as the issue says."""

from __future__ import annotations

import datetime
import decimal
import io
import json
import random
import uuid
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from values_fixtures import (
    ORDER_V1,
    ORDER_V2,
    registered,
    schema_key,
    schema_value,
    write_partition,
)

import kafkalog
from kafkalog.errors import InvalidArgumentError, UndecodedValueWarning, ValueDecodeError

fastavro = pytest.importorskip("fastavro")
ck = pytest.importorskip("confluent_kafka.schema_registry")
avro_serde = pytest.importorskip("confluent_kafka.schema_registry.avro")
from confluent_kafka.serialization import (  # noqa: E402
    MessageField,
    SerializationContext,
    StringSerializer,
)

TOPIC = "orders"


def order_v1(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"c{rng.randrange(1000)}-\u00e9",
        "amount": decimal.Decimal(rng.randrange(-(10**6), 10**6)) / 100,
    }


def order_v2(rng: random.Random, i: int) -> dict[str, Any]:
    base = order_v1(rng, i)
    base.update(
        note=rng.choice([None, "fragile", ""]),
        status=rng.choice(["NEW", "PAID", "SHIPPED"]),
        tags=[f"t{j}" for j in range(rng.randrange(3))],
        attrs={f"k{j}": rng.randrange(-5, 5) for j in range(rng.randrange(3))},
        ship_to=rng.choice([None, {"city": "Lyon", "zip": rng.randrange(99999)}]),
        day=datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randrange(2000)),
        at=datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)
        + datetime.timedelta(milliseconds=rng.randrange(10**9)),
        at_us=datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)
        + datetime.timedelta(microseconds=rng.randrange(10**12)),
        local=datetime.datetime(2024, 5, 1) + datetime.timedelta(milliseconds=rng.randrange(10**9)),
        time_ms=datetime.time(rng.randrange(24), rng.randrange(60), rng.randrange(60)),
        ref=str(uuid.UUID(int=rng.getrandbits(128))),
        checksum=bytes(rng.randrange(256) for _ in range(4)),
        score=rng.random() * 100,
        flag=rng.random() < 0.5,
    )
    return base


class Backup:
    """A log directory: ``_schemas-0`` and ``orders-0`` (string keys, Avro values of two
    versions, a tombstone), with the serializers' registry client."""

    def __init__(self, root: Path, n: int = 40) -> None:
        self.root = root
        self.client = ck.SchemaRegistryClient.new_client({"url": "mock://test-values"})
        ctx = SerializationContext(TOPIC, MessageField.VALUE)
        keys = StringSerializer()
        rng = random.Random(26)
        ser1 = avro_serde.AvroSerializer(self.client, json.dumps(ORDER_V1))
        ser2 = avro_serde.AvroSerializer(self.client, json.dumps(ORDER_V2))
        self.records: list[tuple[bytes | None, bytes | None]] = []
        for i in range(n):
            v2 = i % 3 != 0
            obj = order_v2(rng, i) if v2 else order_v1(rng, i)
            value = (ser2 if v2 else ser1)(obj, ctx)
            self.records.append((keys(f"order-{i}"), value))
        self.records.insert(5, (keys("order-gone"), None))  # a tombstone
        write_partition(root / f"{TOPIC}-0", self.records)
        self.schema_records = [
            (b'{"keytype":"NOOP","magic":0}', b"{}"),
            (
                b'{"keytype":"CONFIG","subject":null,"magic":0}',
                b'{"compatibilityLevel":"BACKWARD"}',
            ),
            *registered(self.client, f"{TOPIC}-value"),
        ]
        write_partition(root / "_schemas-0", self.schema_records)

    def expected(self, reader: dict[str, Any] = ORDER_V2) -> list[dict[str, Any] | None]:
        """What fastavro decodes from each value, with its writer schema (by the id in the
        framing) resolved to ``reader``."""
        parsed_reader = fastavro.parse_schema(reader)
        out: list[dict[str, Any] | None] = []
        for _, value in self.records:
            if value is None:
                out.append(None)
                continue
            schema_id = int.from_bytes(value[1:5], "big")
            writer = json.loads(self.client.get_schema(schema_id).schema_str)
            out.append(
                fastavro.schemaless_reader(
                    io.BytesIO(value[5:]), fastavro.parse_schema(writer), parsed_reader
                )
            )
        return out


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> Backup:
    return Backup(tmp_path_factory.mktemp("values"))


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def fastavro_defaults(v: dict[str, Any]) -> dict[str, Any]:
    """fastavro fills a field missing from the writer with the reader's default as written in
    the schema, without its logical type (0 rather than the epoch): as the logical type says."""
    raw = {
        "day": lambda d: datetime.date(1970, 1, 1) + datetime.timedelta(days=d),
        "at": lambda ms: EPOCH + datetime.timedelta(milliseconds=ms),
        "at_us": lambda us: EPOCH + datetime.timedelta(microseconds=us),
        "local": lambda ms: datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms),
        "time_ms": lambda ms: (
            datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
        ).time(),
        "checksum": lambda s: s.encode("latin-1"),
    }
    return {k: raw[k](x) if k in raw and isinstance(x, int | str) else x for k, x in v.items()}


#: Fields of ORDER_V2 that are Avro maps (Arrow gives a map as a list of pairs).
MAPS = {"attrs"}


def normalize(v: Any) -> Any:
    """Arrow's Python values and fastavro's into one shape: maps (Arrow's lists of pairs)
    as dicts, uuids (Arrow's 16 bytes, fastavro's text) as text."""
    if isinstance(v, dict):
        v = fastavro_defaults(v)
        out = {}
        for k, x in v.items():
            if k in MAPS and isinstance(x, list):
                x = dict(x)
            if k == "ref" and isinstance(x, bytes):
                x = str(uuid.UUID(bytes=x))
            out[k] = normalize(x)
        return out
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {k: normalize(x) for k, x in v}
        return [normalize(x) for x in v]
    if isinstance(v, uuid.UUID):
        return str(v)
    return v


def test_registry_table(backup):
    table = kafkalog.schemas(backup.root)
    rows = table.to_pylist()
    assert [(r["subject"], r["version"], r["type"], r["deleted"]) for r in rows] == [
        ("orders-value", 1, "AVRO", False),
        ("orders-value", 2, "AVRO", False),
    ]
    ids = [r["id"] for r in rows]
    assert ids == [backup.client.get_version("orders-value", v).schema_id for v in (1, 2)]
    assert json.loads(rows[1]["schema"]) == json.loads(
        backup.client.get_version("orders-value", 2).schema.schema_str
    )
    assert [r["offset"] for r in rows] == [2, 3], rows
    assert table.column_names == [
        "subject",
        "version",
        "id",
        "type",
        "schema",
        "references",
        "deleted",
        "offset",
        "context",
    ]


def test_avro_values_resolve_to_latest_version(backup):
    table = kafkalog.read(
        backup.root / f"{TOPIC}-0",
        key_format="string",
        value_format="avro",
        schemas=backup.root,
    ).read_all()
    assert table.column("key").to_pylist()[:2] == ["order-0", "order-1"]
    got = [normalize(v) for v in table.column("value").to_pylist()]
    want = [normalize(v) for v in backup.expected()]
    assert len(got) == len(want) == len(backup.records)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"record {i}"
    value_type = table.schema.field("value").type
    assert pa.types.is_struct(value_type)
    assert value_type.field("status").type == pa.dictionary(pa.int32(), pa.string())
    # Values of both versions in one batch: the enum's symbols once, in their order.
    for chunk in table.column("value").chunks:
        assert chunk.field("status").dictionary.to_pylist() == ["NEW", "PAID", "SHIPPED"]


def test_reader_schema_of_an_older_version(backup):
    table = kafkalog.read(
        backup.root / f"{TOPIC}-0",
        value_format="avro",
        schemas=backup.root,
        value_options={"value_version": 1},
    ).read_all()
    assert [f.name for f in table.schema.field("value").type] == ["id", "customer", "amount"]
    got = table.column("value").to_pylist()
    assert got == backup.expected(ORDER_V1)


def test_schemas_given_directly(backup):
    by_id = {
        backup.client.get_version("orders-value", v).schema_id: json.loads(
            backup.client.get_version("orders-value", v).schema.schema_str
        )
        for v in (1, 2)
    }
    table = kafkalog.read(backup.root / f"{TOPIC}-0", value_format="avro", schemas=by_id)
    got = [normalize(v) for v in table.read_all().column("value").to_pylist()]
    assert got == [normalize(v) for v in backup.expected()]


def test_read_bytes_and_auto(backup):
    seg = sorted((backup.root / f"{TOPIC}-0").glob("*.log"))[0]
    table = kafkalog.read_bytes(
        seg.read_bytes(),
        topic=TOPIC,
        value_format="auto",
        schemas=backup.root,
    ).read_all()
    got = [normalize(v) for v in table.column("value").to_pylist()]
    assert got == [normalize(v) for v in backup.expected()]


def bad_backup(root: Path, backup: Backup) -> list[tuple[bytes | None, bytes | None]]:
    good = backup.records[1][1]
    assert good is not None
    records = [
        (b"a", good),
        (b"b", b"\x01" + good[1:]),  # wrong magic byte
        (b"c", b"\x00\x00\x00\x03\xe7" + good[5:]),  # an id the registry does not have
        (b"d", good[:7]),  # truncated
        (b"e", None),  # a tombstone: not an error
        (b"f", good[:5] + b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01" + good[5:]),  # huge length
        (b"\xff\xfe", good),  # a key that is not UTF-8
        (b"g", b""),
        (b"h", good),
    ]
    write_partition(root / f"{TOPIC}-0", records)
    write_partition(root / "_schemas-0", backup.schema_records)
    return records


def test_bad_values_error_names_file_offset_and_schema(tmp_path, backup):
    bad_backup(tmp_path, backup)
    with pytest.raises(ValueDecodeError) as e:
        kafkalog.read(tmp_path / f"{TOPIC}-0", value_format="avro", schemas=tmp_path).read_all()
    # The error's offset and position are its batch's (issue 38); the message names the record.
    assert (e.value.offset, e.value.position) == (0, 0)
    assert "at offset 1 does not decode" in str(e.value)
    assert e.value.path is not None and e.value.path.endswith(".log")
    assert "magic byte 1" in str(e.value)


def test_bad_values_null_with_reasons(tmp_path, backup):
    records = bad_backup(tmp_path, backup)
    with pytest.warns(UndecodedValueWarning) as w:
        table = kafkalog.read(
            tmp_path / f"{TOPIC}-0",
            key_format="string",
            value_format="avro",
            schemas=tmp_path,
            on_value_error="null",
        ).read_all()
    assert [x.message.count for x in w if isinstance(x.message, UndecodedValueWarning)] == [6]
    values = table.column("value").to_pylist()
    errors = table.column("value_error").to_pylist()
    raw = table.column("value_raw").to_pylist()
    assert [v is not None for v in values] == [
        True,
        False,
        False,
        False,
        False,
        False,
        True,
        False,
        True,
    ]
    assert errors[0] is None and errors[4] is None  # tombstone: null, no error
    assert "magic byte 1" in errors[1]
    assert "999" in errors[2] and "not in the registry" in errors[2]
    assert errors[3] is not None and errors[5] is not None and errors[7] is not None
    assert raw[1] == records[1][1] and raw[0] is None and raw[4] is None
    assert table.column("key_error").to_pylist()[6].startswith("not UTF-8")
    assert table.column("key").to_pylist()[6] is None
    assert table.column("key_raw").to_pylist()[6] == b"\xff\xfe"


def test_options_are_checked(backup):
    with pytest.raises(InvalidArgumentError, match="value_format"):
        kafkalog.read(backup.root / f"{TOPIC}-0", value_format="xml")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="need schemas"):
        kafkalog.read(backup.root / f"{TOPIC}-0", value_format="avro")
    with pytest.raises(InvalidArgumentError, match="declares no message"):
        kafkalog.read(
            backup.root / f"{TOPIC}-0",
            value_format="protobuf",
            schemas={1: {"schema": 'syntax = "proto3";', "schemaType": "PROTOBUF"}},
        )
    with pytest.raises(InvalidArgumentError, match="subject"):
        kafkalog.read(
            backup.root / f"{TOPIC}-0",
            value_format="avro",
            schemas=backup.root,
            value_options={"value_subject": "nope"},
        )


def test_reads_without_decoding_are_unchanged(backup):
    plain = kafkalog.read(backup.root / f"{TOPIC}-0").read_all()
    assert plain.schema.field("value").type == pa.binary()
    assert plain.column("value").to_pylist() == [v for _, v in backup.records]


def test_registry_log_with_deletes_and_contexts(tmp_path):
    s = '"string"'
    records = [
        (schema_key("a-value", 1), schema_value("a-value", 1, 1, s)),
        (schema_key("a-value", 2), schema_value("a-value", 2, 2, '"long"')),
        (schema_key("a-value", 3), schema_value("a-value", 3, 3, '"int"')),
        # Version 3 soft-deleted, then hard-deleted (a tombstone).
        (schema_key("a-value", 3), schema_value("a-value", 3, 3, '"int"', deleted=True)),
        (schema_key("a-value", 3), None),
        # A subject deleted up to version 1, then cleared.
        (schema_key("b-value", 1), schema_value("b-value", 1, 4, s)),
        (
            b'{"keytype":"DELETE_SUBJECT","subject":"b-value","magic":0}',
            b'{"subject":"b-value","version":1}',
        ),
        (b'{"keytype":"CLEAR_SUBJECT","subject":"b-value","magic":0}', b'{"subject":"b-value"}'),
        # Another context, with its own ids.
        (schema_key(":.staging:a-value", 1), schema_value(":.staging:a-value", 1, 1, '"bytes"')),
        # A reference.
        (
            schema_key("c-value", 1),
            schema_value(
                "c-value",
                1,
                5,
                '{"type":"record","name":"C","fields":[{"name":"s","type":"S"}]}',
                references=[{"name": "S", "subject": "s", "version": 1}],
            ),
        ),
        (schema_key("s", 1), schema_value("s", 1, 6, '{"type":"fixed","name":"S","size":2}')),
        (b'{"keytype":"UNKNOWN_TYPE","magic":0}', b"{}"),
    ]
    write_partition(tmp_path / "_schemas-0", records)
    with pytest.warns(kafkalog.errors.UndecodedRecordWarning, match="unknown keytype"):
        table = kafkalog.schemas(tmp_path)
    rows = [
        (r["subject"], r["version"], r["id"], r["deleted"], r["context"]) for r in table.to_pylist()
    ]
    assert rows == [
        (":.staging:a-value", 1, 1, False, ".staging"),
        ("a-value", 1, 1, False, "."),
        ("a-value", 2, 2, False, "."),
        ("c-value", 1, 5, False, "."),
        ("s", 1, 6, False, "."),
    ]
    refs = table.to_pylist()[3]["references"]
    assert refs == [{"name": "S", "subject": "s", "version": 1}]
    # c-value's reference is written in: values of it decode.
    write_partition(tmp_path / "c-0", [(None, b"\x00\x00\x00\x00\x05" + b"hi")])
    got = kafkalog.read(
        tmp_path / "c-0",
        value_format="avro",
        schemas=tmp_path,
        value_options={"value_subject": "c-value"},
    ).read_all()
    assert got.column("value").to_pylist() == [{"s": b"hi"}]
    # A hard-deleted schema's records still decode by id.
    write_partition(tmp_path / "a-0", [(None, b"\x00\x00\x00\x00\x03" + b"\x04")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = kafkalog.read(
            tmp_path / "a-0",
            value_format="avro",
            schemas=tmp_path,
            value_options={"value_version": 2},
        ).read_all()
    assert got.column("value").to_pylist() == [2]


def test_schema_ids_in_headers_and_other_framings(tmp_path, backup):
    """Newer Confluent serializers put the schema's GUID in a ``__value_schema_id`` header (the
    registry stores it as the schema's md5); Apicurio's 8-byte ids; unframed values with the
    schema given."""
    good = backup.records[1][1]
    assert good is not None
    latest = backup.client.get_latest_version(f"{TOPIC}-value")
    guid = uuid.UUID(str(latest.guid))
    schemas = [
        (schema_key(f"{TOPIC}-value", 2), json.dumps({
            "subject": f"{TOPIC}-value", "version": 2, "id": latest.schema_id,
            "md5": __import__("base64").b64encode(guid.bytes).decode(),
            "schema": latest.schema.schema_str, "deleted": False,
        }).encode()),
    ]  # fmt: skip
    write_partition(tmp_path / "_schemas-0", schemas)
    ser = avro_serde.AvroSerializer(
        backup.client,
        json.dumps(ORDER_V2),
        conf={"schema.id.serializer": ck.header_schema_id_serializer},
    )
    ctx = SerializationContext(TOPIC, MessageField.VALUE, headers=[])
    obj = order_v2(random.Random(5), 7)
    payload = ser(obj, ctx)
    assert payload[:1] != b"\x00" and ctx.headers[0][0] == "__value_schema_id"
    write_partition(tmp_path / f"{TOPIC}-0", [(None, payload)], headers=[ctx.headers])
    got = kafkalog.read(tmp_path / f"{TOPIC}-0", value_format="avro", schemas=tmp_path)
    value = got.read_all().column("value").to_pylist()[0]
    want = fastavro.schemaless_reader(io.BytesIO(payload), fastavro.parse_schema(ORDER_V2))
    assert normalize(value) == normalize(want)

    # Apicurio: magic 0 and an 8-byte id.
    apicurio = b"\x00" + latest.schema_id.to_bytes(8, "big") + good[5:]
    write_partition(tmp_path / "a-0", [(None, apicurio)])
    got = kafkalog.read(
        tmp_path / "a-0",
        value_format="avro",
        schemas=tmp_path,
        value_options={"framing": "apicurio", "value_subject": f"{TOPIC}-value"},
    )
    assert got.read_all().column("value").to_pylist()[0]["id"] == 1

    # No framing, the schema given (as a dict, and as a .avsc file).
    (tmp_path / "order.avsc").write_text(json.dumps(ORDER_V2))
    write_partition(tmp_path / "b-0", [(None, good[5:])])
    for schema in (ORDER_V2, str(tmp_path / "order.avsc")):
        got = kafkalog.read(
            tmp_path / "b-0",
            value_format="avro",
            value_options={"framing": "none", "value_schema": schema},
        )
        assert got.read_all().column("value").to_pylist()[0]["id"] == 1


def test_object_store_backup(s3, backup):
    """The registry and the values read from a bucket (moto's S3 server) as from disk."""
    uri = s3.upload(backup.root, "values-backup")
    local = kafkalog.read(
        backup.root / f"{TOPIC}-0", value_format="avro", schemas=backup.root
    ).read_all()
    remote = kafkalog.read(
        f"{uri}/{TOPIC}-0", value_format="avro", schemas=uri, storage_options=s3.options
    ).read_all()
    assert remote.column("value").to_pylist() == local.column("value").to_pylist()
    assert (
        kafkalog.schemas(uri, storage_options=s3.options).to_pylist()
        == kafkalog.schemas(backup.root).to_pylist()
    )


def test_columns_without_the_key(backup):
    """A key format with the key column not read, errors as nulls: only the value's columns."""
    table = kafkalog.read(
        backup.root / f"{TOPIC}-0",
        columns=["value", "offset"],
        key_format="string",
        value_format="avro",
        schemas=backup.root,
        on_value_error="null",
    ).read_all()
    assert table.column_names == ["value", "offset", "value_error", "value_raw"]
    assert table.column("value_error").null_count == table.num_rows


def _plain(v: Any) -> Any:
    """Timestamps as µs since the epoch and dates as days, as the JSON fixtures hold them."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, datetime.datetime):
        return (v - EPOCH) // datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    return v


def test_json_schema_values_through_the_same_read(tmp_path):
    """The JSON Schema decoder (values/json/decoder.rs) behind value_format="json": values
    framed by confluent-kafka's JSONSerializer (tests/values/make_fixtures.py), decoded equal to
    what the json module and the reader schema give."""
    fixtures = json.loads((Path(__file__).parent / "values/json/fixtures.json").read_text())
    write_partition(
        tmp_path / "orders-0", [(None, bytes.fromhex(c["framed"])) for c in fixtures["cases"]]
    )
    schemas = {
        int(k): {"schema": v["schema"], "schemaType": "JSON",
                 "references": dict(v["references"] or [])}
        for k, v in fixtures["schemas"].items()
    }  # fmt: skip
    reader = {
        "schema": fixtures["reader"],
        "schemaType": "JSON",
        "references": dict(fixtures["reader_references"]),
    }
    table = kafkalog.read(
        tmp_path / "orders-0", value_format="json", schemas=schemas,
        value_options={"value_schema": reader},
    ).read_all()  # fmt: skip
    got = [_plain(v) for v in table.column("value").to_pylist()]
    assert got == [c["expected"] for c in fixtures["cases"]]
