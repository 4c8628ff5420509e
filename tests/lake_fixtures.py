"""Backups for the tests of whole-backup conversion (``test_convert_topics.py``) and of
lakehouse tables (``test_lakehouse*.py``): several topics whose values confluent-kafka's own
Avro serializer framed, the registry's storage topic ``_schemas``, and an internal topic, all
written with ``kafkalog.write``."""

from __future__ import annotations

import datetime
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
from values_fixtures import ORDER_V1, registered, write_partition

import kafkalog

CLICK = {
    "type": "record",
    "name": "Click",
    "namespace": "web",
    "fields": [
        {"name": "page", "type": "string"},
        {"name": "ms", "type": "long"},
    ],
}

#: ORDER_V1 with one field more: a registry version that adds a field.
ORDER_V1_PLUS = {
    **ORDER_V1,
    "fields": [*ORDER_V1["fields"], {"name": "channel", "type": "string", "default": "web"}],
}


def serializer(client: Any, schema: dict[str, Any]) -> Any:
    from confluent_kafka.schema_registry.avro import AvroSerializer

    return AvroSerializer(client, json.dumps(schema))


def context(topic: str) -> Any:
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext(topic, MessageField.VALUE)


def order(rng: random.Random, i: int) -> dict[str, Any]:
    import decimal

    return {
        "id": i,
        "customer": f"c{rng.randrange(1000)}",
        "amount": decimal.Decimal(rng.randrange(-(10**6), 10**6)) / 100,
    }


class TypedBackup:
    """A log directory: ``orders-0``, ``orders-1`` and ``orders.eu-0`` (Avro orders, subjects
    ``orders-value`` and ``orders.eu-value`` with the same schema), ``clicks-0`` (Avro clicks,
    ``clicks-value``), ``_schemas-0`` and ``__consumer_offsets-0`` (bytes no Avro decoder
    takes)."""

    def __init__(self, root: Path, n: int = 12) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        self.root = root
        self.client = SchemaRegistryClient.new_client({"url": f"mock://lake-{id(self)}"})
        rng = random.Random(36)
        self.orders: dict[str, list[dict[str, Any]]] = {}
        for topic, partitions in (("orders", 2), ("orders.eu", 1)):
            ser = serializer(self.client, ORDER_V1)
            for p in range(partitions):
                values = [order(rng, i) for i in range(n)]
                self.orders[f"{topic}-{p}"] = values
                write_partition(
                    root / f"{topic}-{p}",
                    [(f"k{i}".encode(), ser(v, context(topic))) for i, v in enumerate(values)],
                )
        ser = serializer(self.client, CLICK)
        self.clicks = [{"page": f"/p{i}", "ms": i * 10} for i in range(n)]
        write_partition(root / "clicks-0", [(None, ser(v, context("clicks"))) for v in self.clicks])
        schemas = [(b'{"keytype":"NOOP","magic":0}', b"{}")]
        for subject in ("orders-value", "orders.eu-value", "clicks-value"):
            schemas += registered(self.client, subject)
        write_partition(root / "_schemas-0", schemas)
        kafkalog.write(
            root / "__consumer_offsets-0",
            pa.table({"key": [b"\x00\x01\x00\x02go"], "value": [b"\x00\x03\xff\xff"]}),
        )


def day_ms(day: int, ms: int = 0) -> int:
    """Milliseconds since the epoch of 2024-06-01 plus ``day`` days and ``ms``."""
    start = datetime.datetime(2024, 6, 1, tzinfo=datetime.UTC)
    return int((start + datetime.timedelta(days=day)).timestamp() * 1000) + ms
