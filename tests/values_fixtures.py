"""Backups whose producers used Confluent's serializers, built from real components: values
framed by confluent-kafka's own serializers against its mock registry client (no server), and
the registry's storage topic ``_schemas`` written (with kafkalog.write) as Schema Registry's
KafkaStore writes it: JSON keys with a ``keytype``, schema values with ``id``, ``schema``,
``schemaType`` (left out for Avro), ``references`` and ``deleted``; tombstones for hard deletes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

import kafkalog

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
    ],
}

#: v2: a field with a default, a nullable union, an enum, an array, a map, a nested record,
#: fixed, and logical types (dates, times, timestamps, local timestamps, uuid).
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]},
            "default": "NEW",
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
        {"name": "attrs", "type": {"type": "map", "values": "long"}, "default": {}},
        {
            "name": "ship_to",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int"}],
                },
            ],
            "default": None,
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}, "default": 0},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}, "default": 0},
        {
            "name": "at_us",
            "type": {"type": "long", "logicalType": "timestamp-micros"},
            "default": 0,
        },
        {
            "name": "local",
            "type": {"type": "long", "logicalType": "local-timestamp-millis"},
            "default": 0,
        },
        {"name": "time_ms", "type": {"type": "int", "logicalType": "time-millis"}, "default": 0},
        {
            "name": "ref",
            "type": {"type": "string", "logicalType": "uuid"},
            "default": "00000000-0000-0000-0000-000000000000",
        },
        {
            "name": "checksum",
            "type": {"type": "fixed", "name": "Md5", "size": 4},
            "default": "\u0000\u0000\u0000\u0000",
        },
        {"name": "score", "type": "double", "default": 0.0},
        {"name": "flag", "type": "boolean", "default": False},
    ],
}


def schema_key(subject: str, version: int) -> bytes:
    """A ``SCHEMA`` key as Schema Registry writes it (Jackson's property order)."""
    return json.dumps(
        {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1},
        separators=(",", ":"),
    ).encode()


def schema_value(
    subject: str,
    version: int,
    schema_id: int,
    schema: str,
    *,
    schema_type: str | None = None,
    references: list[dict[str, Any]] | None = None,
    deleted: bool = False,
) -> bytes:
    value: dict[str, Any] = {"subject": subject, "version": version, "id": schema_id}
    if schema_type is not None and schema_type != "AVRO":
        value["schemaType"] = schema_type
    if references:
        value["references"] = references
    value["schema"] = schema
    value["deleted"] = deleted
    return json.dumps(value, separators=(",", ":")).encode()


def registered(client: Any, subject: str) -> list[tuple[bytes, bytes]]:
    """The ``SCHEMA`` records of every version of ``subject`` the (mock) registry client
    holds, as the registry's store wrote them."""
    out = []
    for version in sorted(client.get_versions(subject)):
        rs = client.get_version(subject, version)
        out.append(
            (
                schema_key(subject, version),
                schema_value(
                    subject,
                    version,
                    rs.schema_id,
                    rs.schema.schema_str,
                    schema_type=rs.schema.schema_type,
                    references=[
                        {"name": r.name, "subject": r.subject, "version": r.version}
                        for r in rs.schema.references or []
                    ],
                ),
            )
        )
    return out


def write_partition(
    path: Path,
    records: list[tuple[bytes | None, bytes | None]],
    headers: list[list[tuple[str, bytes]]] | None = None,
) -> None:
    """``records`` (key, value) written as a partition directory, one record per batch
    boundary of 4."""
    columns: dict[str, Any] = {
        "key": pa.array([k for k, _ in records], pa.binary()),
        "value": pa.array([v for _, v in records], pa.binary()),
    }
    if headers is not None:
        columns["headers"] = pa.array(
            [[{"key": k, "value": v} for k, v in h] for h in headers],
            pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
        )
    kafkalog.write(path, pa.table(columns), batch_records=4)
