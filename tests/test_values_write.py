"""Writing typed keys and values back (issue 26): what kafkalog.write encodes with the
registered Avro schema and Confluent's framing, confluent-kafka's own AvroDeserializer reads
back equal (its registry client given the same schemas under the same ids)."""

from __future__ import annotations

import json

import pytest
from test_values import TOPIC, Backup, normalize

import kafkalog
from kafkalog.errors import InvalidArgumentError

pytest.importorskip("confluent_kafka")
from confluent_kafka.schema_registry.avro import AvroDeserializer  # noqa: E402
from confluent_kafka.serialization import (  # noqa: E402
    MessageField,
    SerializationContext,
    StringDeserializer,
)


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> Backup:
    return Backup(tmp_path_factory.mktemp("values-write"), n=25)


def test_round_trip_through_confluents_deserializer(backup, tmp_path):
    typed = kafkalog.read(
        backup.root / f"{TOPIC}-0", key_format="string", value_format="avro",
        schemas=backup.root,
    ).read_all()  # fmt: skip
    out = tmp_path / f"{TOPIC}-0"
    kafkalog.write(
        out,
        typed.select(["key", "value"]),
        key_format="string",
        value_format="avro",
        schemas=backup.root,
    )
    raw = kafkalog.read(out).read_all()
    latest = backup.client.get_latest_version(f"{TOPIC}-value")
    ctx = SerializationContext(TOPIC, MessageField.VALUE)
    deserialize = AvroDeserializer(backup.client)
    keys = StringDeserializer()
    got = []
    for key, value in zip(
        raw.column("key").to_pylist(), raw.column("value").to_pylist(), strict=True
    ):
        if value is not None:
            assert value[:5] == b"\x00" + latest.schema_id.to_bytes(4, "big")
        got.append((keys(key, ctx), None if value is None else deserialize(value, ctx)))
    assert [k for k, _ in got] == typed.column("key").to_pylist()
    assert [normalize(v) for _, v in got] == [normalize(v) for v in backup.expected()]


def test_writing_avro_needs_the_registry(backup, tmp_path):
    typed = kafkalog.read(
        backup.root / f"{TOPIC}-0", value_format="avro", schemas=backup.root
    ).read_all()
    with pytest.raises(InvalidArgumentError, match="registry"):
        kafkalog.write(tmp_path / "x-0", typed.select(["value"]), value_format="avro")
    # A column that is not of the schema's type fails before anything is written.
    v1 = json.loads(backup.client.get_version(f"{TOPIC}-value", 1).schema.schema_str)
    assert v1["name"] == "Order"
    with pytest.raises(InvalidArgumentError):
        kafkalog.write(
            tmp_path / "orders-0",
            typed.select(["offset"]).rename_columns(["value"]),
            value_format="avro",
            schemas=backup.root,
        )
    assert not (tmp_path / "orders-0").exists()
