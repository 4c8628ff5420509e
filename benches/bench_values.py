"""Avro values into Arrow (issue 26), one core, against Apache Avro's Java decoder and
fastavro, on the same Confluent-framed bytes.

    .venv/bin/python benches/bench_values.py [--records N] [--rounds R]

Data, generated here deterministically with fastavro: a 20-field record with nested records,
an array, a map, an enum, a nullable union, fixed bytes and logical types (decimal, uuid,
date, time, timestamps in ms and µs, a local timestamp), each value framed as Confluent's
serializers frame it (magic 0, 4-byte schema id). Two writer versions, as a producer upgraded
halfway through the topic: the first half of the values are written with version 1 (18
fields) and resolve to version 2 (the reader, 20 fields, two with defaults), the second half
with version 2. (``--interleaved`` alternates the versions value by value instead: the worst
case for kafkalog's decoder before issue 34, which decoded a batch's values version by
version and put them back in order.)

- kafkalog: the values in a partition written by kafkalog.write, read by
  ``kafkalog.read(value_format="avro", schemas=..., threads=1, columns=["value"])`` into Arrow
  (the Kafka segment's own decoding included), minus the same read without decoding.
- Java: Apache Avro's ``GenericDatumReader`` (the avro jar PySpark ships) decoding each value
  after its 5-byte prefix into a GenericRecord, its writer schema (by the id in its framing)
  resolved to the reader schema, as Confluent's KafkaAvroDeserializer does
  (benches/java/AvroBench.java, javac + java 17); all the values in one pass, in their order;
  best of R rounds after warm-up, wall and CPU time.
- fastavro: ``schemaless_reader`` of each value with writer and reader schema, in a loop.

``--write-values DIR`` writes the values (``values.bin``: each as a 4-byte big-endian length and
its framed bytes; ``values-v1.bin``, ``values-v2.bin``: each writer version's alone) and the
schemas (``v1.avsc``, ``v2.avsc``) to DIR and stops: the input of the Rust bench
``benches/values_avro.rs`` and of ``benches/java/AvroBench.java`` run side by side
(``benches/avro_vs_java.sh``).
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import fastavro
import pyarrow as pa

import kafkalog

HERE = Path(__file__).resolve().parent

ADDRESS = {
    "type": "record",
    "name": "Address",
    "fields": [
        {"name": "street", "type": "string"},
        {"name": "city", "type": "string"},
        {"name": "zip", "type": "int"},
        {
            "name": "geo",
            "type": {
                "type": "record",
                "name": "Geo",
                "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}],
            },
        },
    ],
}

FIELDS_V1 = [
    {"name": "id", "type": "long"},
    {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "updated", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
    {
        "name": "price",
        "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
    },
    {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "name", "type": "string"},
    {"name": "email", "type": "string"},
    {"name": "score", "type": "double"},
    {"name": "ratio", "type": "float"},
    {"name": "active", "type": "boolean"},
    {"name": "count", "type": "int"},
    {
        "name": "status",
        "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED", "DONE"]},
    },
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "address", "type": ADDRESS},
    {"name": "note", "type": ["null", "string"]},
]
FIELDS_V2 = FIELDS_V1 + [
    {
        "name": "checksum",
        "type": {"type": "fixed", "name": "Sum", "size": 16},
        "default": "\u0000" * 16,
    },
    {
        "name": "local",
        "type": {"type": "long", "logicalType": "local-timestamp-millis"},
        "default": 0,
    },
]
V1 = {"type": "record", "name": "Event", "namespace": "bench", "fields": FIELDS_V1}
V2 = {"type": "record", "name": "Event", "namespace": "bench", "fields": FIELDS_V2}


def record(rng: random.Random, i: int, v2: bool) -> dict:
    r = {
        "id": i,
        "created": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
        + datetime.timedelta(milliseconds=rng.randrange(10**10)),
        "updated": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
        + datetime.timedelta(microseconds=rng.randrange(10**13)),
        "day": datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randrange(3000)),
        "at": datetime.time(rng.randrange(24), rng.randrange(60), rng.randrange(60)),
        "price": decimal.Decimal(rng.randrange(10**9)) / 100,
        "ref": str(uuid.UUID(int=rng.getrandbits(128))),
        "name": f"customer {rng.randrange(10**6)}",
        "email": f"user{rng.randrange(10**6)}@example.com",
        "score": rng.random() * 1000,
        "ratio": rng.random(),
        "active": rng.random() < 0.5,
        "count": rng.randrange(10**6),
        "status": rng.choice(["NEW", "PAID", "SHIPPED", "DONE"]),
        "tags": [f"tag{rng.randrange(100)}" for _ in range(rng.randrange(4))],
        "attrs": {f"k{j}": rng.randrange(10**6) for j in range(rng.randrange(4))},
        "address": {
            "street": f"{rng.randrange(999)} Main Street",
            "city": rng.choice(["Lyon", "Paris", "Oslo", "Lima"]),
            "zip": rng.randrange(99999),
            "geo": {"lat": rng.uniform(-90, 90), "lon": rng.uniform(-180, 180)},
        },
        "note": rng.choice([None, "fragile", "gift wrap"]),
    }
    if v2:
        r["checksum"] = rng.randbytes(16)
        r["local"] = datetime.datetime(2025, 1, 1) + datetime.timedelta(
            milliseconds=rng.randrange(10**10)
        )
    return r


def is_v2(i: int, n: int, interleaved: bool) -> bool:
    return i % 2 == 1 if interleaved else i >= n // 2


def values(n: int, interleaved: bool = False) -> list[bytes]:
    rng = random.Random(26)
    p1, p2 = fastavro.parse_schema(V1), fastavro.parse_schema(V2)
    out = []
    for i in range(n):
        v2 = is_v2(i, n, interleaved)
        buf = io.BytesIO()
        buf.write(b"\x00" + (2 if v2 else 1).to_bytes(4, "big"))
        fastavro.schemaless_writer(buf, p2 if v2 else p1, record(rng, i, v2))
        out.append(buf.getvalue())
    return out


def schemas_partition(root: Path) -> None:
    def key(version: int) -> bytes:
        return json.dumps(
            {"keytype": "SCHEMA", "subject": "events-value", "version": version, "magic": 1}
        ).encode()

    def value(version: int, schema: dict) -> bytes:
        return json.dumps(
            {
                "subject": "events-value",
                "version": version,
                "id": version,
                "schema": json.dumps(schema),
                "deleted": False,
            }
        ).encode()

    kafkalog.write(
        root / "_schemas-0",
        pa.table(
            {
                "key": pa.array([key(1), key(2)], pa.binary()),
                "value": pa.array([value(1, V1), value(2, V2)], pa.binary()),
            }
        ),
    )


def write_values(out: Path, vals: list[bytes], interleaved: bool) -> None:
    """The values (all, and each writer version's alone) and the two schemas, in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    n = len(vals)
    files = {
        "values.bin": lambda i: True,
        "values-v1.bin": lambda i: not is_v2(i, n, interleaved),
        "values-v2.bin": lambda i: is_v2(i, n, interleaved),
    }
    for name, keep in files.items():
        with open(out / name, "wb") as f:
            for i, v in enumerate(vals):
                if keep(i):
                    f.write(len(v).to_bytes(4, "big") + v)
    (out / "v1.avsc").write_text(json.dumps(V1))
    (out / "v2.avsc").write_text(json.dumps(V2))


def best(f, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--interleaved", action="store_true")
    ap.add_argument("--write-values", type=Path, metavar="DIR")
    args = ap.parse_args()
    n = args.records
    if args.write_values:
        write_values(args.write_values, values(n, args.interleaved), args.interleaved)
        return
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-values-bench-"))
    try:
        vals = values(n, args.interleaved)
        size = sum(len(v) for v in vals)
        print(f"{n} values, {size / n:.0f} bytes each on average (framing included)")
        schemas_partition(tmp)
        kafkalog.write(
            tmp / "events-0", pa.table({"value": pa.array(vals, pa.binary())}), batch_records=1000
        )
        part = tmp / "events-0"

        def read_plain() -> None:
            kafkalog.read(part, columns=["value"], threads=1).read_all()

        def read_avro() -> None:
            t = kafkalog.read(
                part, columns=["value"], threads=1, value_format="avro", schemas=tmp
            ).read_all()
            assert t.num_rows == n and t.column("value").null_count == 0

        read_avro()  # warm: the registry fold and schema compile once
        plain = best(read_plain, args.rounds)
        typed = best(read_avro, args.rounds)
        avro_only = typed - plain
        print(f"kafkalog read, bytes only:      {n / plain / 1e6:6.2f} M rec/s ({plain:.3f} s)")
        print(f"kafkalog read, avro values:     {n / typed / 1e6:6.2f} M rec/s ({typed:.3f} s)")
        print(f"kafkalog avro decode alone:     {n / avro_only / 1e6:6.2f} M rec/s")

        # Java: Apache Avro's GenericDatumReader.
        write_values(tmp, vals, args.interleaved)
        jars = Path(__import__("pyspark").__file__).parent / "jars"
        classes = tmp / "classes"
        classes.mkdir()
        cp = f"{jars}/*"
        subprocess.run(
            ["javac", "-cp", cp, "-d", str(classes), str(HERE / "java" / "AvroBench.java")],
            check=True,
        )
        # All the values in one pass, each with its writer's reader (by the id in its framing).
        out = subprocess.run(
            [
                "java",
                "-cp",
                f"{classes}:{cp}",
                "AvroBench",
                str(tmp / "values.bin"),
                str(tmp / "v2.avsc"),
                str(args.rounds * 3),
                f"1={tmp / 'v1.avsc'}",
                f"2={tmp / 'v2.avsc'}",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        java = json.loads(out.strip().splitlines()[-1])
        jwall, jcpu = java["best_wall_s"], java["best_cpu_s"]
        print(
            f"Java GenericDatumReader:        {n / jwall / 1e6:6.2f} M rec/s wall, "
            f"{n / jcpu / 1e6:.2f} M rec/s CPU"
        )

        # fastavro.
        p1, p2 = fastavro.parse_schema(V1), fastavro.parse_schema(V2)

        def fast() -> None:
            for i, v in enumerate(vals):
                writer = p2 if is_v2(i, n, args.interleaved) else p1
                fastavro.schemaless_reader(io.BytesIO(v[5:]), writer, p2)

        fa = best(fast, max(1, args.rounds // 3))
        print(f"fastavro schemaless_reader:     {n / fa / 1e6:6.2f} M rec/s")
        print(
            f"kafkalog read with avro / Java wall: {jwall / typed:.2f}x; / fastavro: "
            f"{fa / typed:.2f}x"
        )
        print(
            f"kafkalog avro decode alone / Java wall: {jwall / avro_only:.2f}x, / Java CPU: "
            f"{jcpu / avro_only:.2f}x; / fastavro: {fa / avro_only:.2f}x"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
