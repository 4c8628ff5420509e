"""Typed values through the JVM source against Spark reading the same rows from Parquet
(issue 37), for ``benches/spark_jvm.py --section typed``.

Three topics of the same shape of record, each framed as Confluent's serializers frame them:

- Avro: benches/bench_values.py's 20-field record (nested records, an array, a map, an enum, a
  nullable union, fixed bytes, logical types), two writer versions (the first half of the
  values v1, resolved to v2);
- Protobuf and JSON Schema: a record of the same fields (``Event`` below), Protobuf encoded
  here by the wire format's rules (message index 0 after the id), JSON as ``json.dumps``
  writes it; timestamps as ``google.protobuf.Timestamp`` and ``date-time`` strings, the price
  a double.

The Parquet file of each is what Spark writes of the typed read (``df.write.parquet``), so both
sides hold the same rows and types. The query is the issue's: ``sum(value.id)``,
``count(value.address.city)``, ``max(value.price)``, ``sum(size(value.tags))``.
"""

from __future__ import annotations

import datetime
import json
import random
import struct
import sys
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_values  # noqa: E402

import kafkalog  # noqa: E402

QUERY = ("sum(value.id)", "count(value.address.city)", "max(value.price)", "sum(size(value.tags))")

PROTO = """syntax = "proto3";
package bench;

import "google/protobuf/timestamp.proto";

message Event {
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; DONE = 3; }
  message Geo { double lat = 1; double lon = 2; }
  message Address { string street = 1; string city = 2; int32 zip = 3; Geo geo = 4; }
  int64 id = 1;
  google.protobuf.Timestamp created = 2;
  google.protobuf.Timestamp updated = 3;
  int32 day = 4;
  int32 at = 5;
  double price = 6;
  string ref = 7;
  string name = 8;
  string email = 9;
  double score = 10;
  float ratio = 11;
  bool active = 12;
  int32 count = 13;
  Status status = 14;
  repeated string tags = 15;
  map<string, int64> attrs = 16;
  Address address = 17;
  optional string note = 18;
  bytes checksum = 19;
  int64 local = 20;
}
"""

JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Event",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "created": {"type": "string", "format": "date-time"},
        "updated": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "integer"},
        "price": {"type": "number"},
        "ref": {"type": "string"},
        "name": {"type": "string"},
        "email": {"type": "string"},
        "score": {"type": "number"},
        "ratio": {"type": "number"},
        "active": {"type": "boolean"},
        "count": {"type": "integer"},
        "status": {"type": "string", "enum": ["NEW", "PAID", "SHIPPED", "DONE"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {
            "type": "object",
            "properties": {"k0": {"type": "integer"}, "k1": {"type": "integer"}},
        },
        "address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "zip": {"type": "integer"},
                "geo": {
                    "type": "object",
                    "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                },
            },
        },
        "note": {"type": ["null", "string"]},
        "checksum": {"type": "string"},
        "local": {"type": "integer"},
    },
}

STATUS = ["NEW", "PAID", "SHIPPED", "DONE"]


# Protobuf's wire format (encoding.md): varints, fixed 32/64-bit, length-delimited.
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _tag(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, v: int) -> bytes:
    return _tag(field, 0) + _varint(v) if v else b""


def _len(field: int, data: bytes) -> bytes:
    return _tag(field, 2) + _varint(len(data)) + data


def _str(field: int, s: str) -> bytes:
    return _len(field, s.encode()) if s else b""


def _double(field: int, v: float) -> bytes:
    return _tag(field, 1) + struct.pack("<d", v) if v else b""


def _float(field: int, v: float) -> bytes:
    return _tag(field, 5) + struct.pack("<f", v) if v else b""


def _timestamp(dt: datetime.datetime) -> bytes:
    micros = (dt - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)) // datetime.timedelta(
        microseconds=1
    )
    seconds, us = divmod(micros, 1_000_000)
    return _int(1, seconds) + _int(2, us * 1000)


def protobuf_value(r: dict) -> bytes:
    """An ``Event`` on the wire, from bench_values' record."""
    addr = r["address"]
    geo = _double(1, addr["geo"]["lat"]) + _double(2, addr["geo"]["lon"])
    address = _str(1, addr["street"]) + _str(2, addr["city"]) + _int(3, addr["zip"]) + _len(4, geo)
    day = (r["day"] - datetime.date(1970, 1, 1)).days
    at = r["at"].hour * 3_600_000 + r["at"].minute * 60_000 + r["at"].second * 1000
    local = r.get("local") or datetime.datetime(1970, 1, 1)
    out = (
        _int(1, r["id"])
        + _len(2, _timestamp(r["created"]))
        + _len(3, _timestamp(r["updated"]))
        + _int(4, day)
        + _int(5, at)
        + _double(6, float(r["price"]))
        + _str(7, r["ref"])
        + _str(8, r["name"])
        + _str(9, r["email"])
        + _double(10, r["score"])
        + _float(11, r["ratio"])
        + _int(12, int(r["active"]))
        + _int(13, r["count"])
        + _int(14, STATUS.index(r["status"]))
        + b"".join(_str(15, t) for t in r["tags"])
        + b"".join(_len(16, _str(1, k) + _int(2, v)) for k, v in r["attrs"].items())
        + _len(17, address)
        + (_len(18, r["note"].encode()) if r["note"] is not None else b"")
        + (_len(19, r["checksum"]) if "checksum" in r else b"")
        + _int(20, (local - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1))
    )
    return b"\x00" + (1).to_bytes(4, "big") + b"\x00" + out


def json_value(r: dict) -> bytes:
    """An ``Event`` as JSON, from bench_values' record."""
    local = r.get("local") or datetime.datetime(1970, 1, 1)
    doc = {
        "id": r["id"],
        "created": r["created"].isoformat(),
        "updated": r["updated"].isoformat(),
        "day": r["day"].isoformat(),
        "at": r["at"].hour * 3_600_000 + r["at"].minute * 60_000 + r["at"].second * 1000,
        "price": float(r["price"]),
        "ref": r["ref"],
        "name": r["name"],
        "email": r["email"],
        "score": r["score"],
        "ratio": r["ratio"],
        "active": r["active"],
        "count": r["count"],
        "status": r["status"],
        "tags": r["tags"],
        "attrs": {k: v for k, v in r["attrs"].items() if k in ("k0", "k1")},
        "address": r["address"],
        "note": r["note"],
        "checksum": r.get("checksum", b"").hex(),
        "local": (local - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1),
    }
    return b"\x00" + (1).to_bytes(4, "big") + json.dumps(doc).encode()


def _registry(root: Path, subject: str, rows: list[tuple[int, str, str | None]]) -> None:
    """``_schemas-0`` holding ``rows`` (id, schema text, schemaType) as versions 1, 2, ...
    of ``subject``."""
    keys, values = [], []
    for version, (schema_id, text, kind) in enumerate(rows, 1):
        keys.append(
            json.dumps(
                {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}
            ).encode()
        )
        value = {"subject": subject, "version": version, "id": schema_id, "schema": text}
        if kind is not None:
            value["schemaType"] = kind
        value["deleted"] = False
        values.append(json.dumps(value).encode())
    kafkalog.write(
        root / "_schemas-0",
        pa.table({"key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary())}),
    )


def _topic(root: Path, name: str, vals: list[bytes], partitions: int) -> None:
    per = (len(vals) + partitions - 1) // partitions
    for p in range(partitions):
        part = vals[p * per : (p + 1) * per]
        kafkalog.write(
            root / f"{name}-{p}",
            pa.table({"value": pa.array(part, pa.binary())}),
            batch_records=1000,
        )


def make_topics(root: Path, n: int, partitions: int = 2) -> dict[str, Path]:
    """Each format's log directory (its own registry and one topic of ``n`` values, in
    ``partitions`` partitions), by format name."""
    rng = random.Random(26)
    records = [bench_values.record(rng, i, bench_values.is_v2(i, n, False)) for i in range(n)]
    out = {}
    avro = root / "avro"
    avro.mkdir(parents=True)
    _registry(
        avro,
        "events-value",
        [(1, json.dumps(bench_values.V1), None), (2, json.dumps(bench_values.V2), None)],
    )
    _topic(avro, "events", bench_values.values(n), partitions)
    out["avro"] = avro
    proto = root / "protobuf"
    proto.mkdir()
    _registry(proto, "events-value", [(1, PROTO, "PROTOBUF")])
    _topic(proto, "events", [protobuf_value(r) for r in records], partitions)
    out["protobuf"] = proto
    js = root / "json"
    js.mkdir()
    _registry(js, "events-value", [(1, json.dumps(JSON_SCHEMA), "JSON")])
    _topic(js, "events", [json_value(r) for r in records], partitions)
    out["json"] = js
    return out


def write_json_values(out: Path, n: int = 200_000) -> None:
    """``n`` JSON events, framed, as ``benches/values_json.rs`` reads a folder
    (``KAFKALOG_JSON_READ``): ``values.bin`` (each payload after its 4-byte big-endian
    length) and ``schema.json``."""
    rng = random.Random(26)
    out.mkdir(parents=True, exist_ok=True)
    data = bytearray()
    for i in range(n):
        value = json_value(bench_values.record(rng, i, bench_values.is_v2(i, n, False)))
        data += len(value).to_bytes(4, "big") + value
    (out / "values.bin").write_bytes(bytes(data))
    (out / "schema.json").write_text(json.dumps(JSON_SCHEMA))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Writes the JSON events for values_json.rs.")
    parser.add_argument("--json-values", type=Path, required=True, metavar="DIR")
    parser.add_argument("--count", type=int, default=200_000)
    args = parser.parse_args()
    write_json_values(args.json_values, args.count)
