"""Write the sample Kafka log directory ``examples/logs/``.

    python examples/make_sample_logs.py [OUT_DIR]        # default: examples/logs

The segments are built with kafka-python's record builders (through ``tests/kafka_builders.py``,
which also applies the broker's offset assignment and LogAppendTime rewrites), laid out as a
broker lays out its log directory: ``<topic>-<partition>/<20-digit base offset>.log``. Fixed
timestamps, no randomness, gzip headers with MTIME 0: re-running writes identical bytes (as long
as the compression libraries' versions do not change their output).

What is in it:

- ``clicks-0``: magic v0 (Kafka 0.8), one segment with uncompressed, gzip, snappy and lz4
  entries (the lz4 frames carry Kafka's KAFKA-3160 header checksum, as v0 requires);
- ``clicks-1``: magic v1 (Kafka 0.10), uncompressed, gzip, snappy and lz4 entries; the snappy
  wrapper is LogAppendTime;
- ``orders-0``: magic v2, two segments (``00000000000000000000.log`` and
  ``00000000000000000015.log``): none, gzip, snappy, then lz4, zstd; record headers, a
  LogAppendTime batch and an idempotent producer's batches (producer id, epoch, sequences);
- ``orders-1``: magic v2 transactions: a committed transaction + COMMIT marker, an aborted one
  + ABORT marker, then a non-transactional batch;
- ``users-0``: a compacted topic (magic v2): offset gaps left by the cleaner, tombstones;
- ``events-0``: a partition that went through message format upgrades: v0, v1 then v2 entries
  in one segment;
- ``payments-0``: typed values: Avro records framed as Confluent's serializers frame them
  (magic byte, schema id), five of ``payments-value`` version 1 (gzip), then five of version 2
  (zstd: an enum, a map and a nullable field more); the values are confluent-kafka's own
  ``AvroSerializer``'s, against its mock registry client;
- ``_schemas-0``: the Schema Registry's storage topic holding those two versions, written with
  :func:`kafkalog.write_schemas` (the records the registry's ``KafkaStore`` writes).
"""

from __future__ import annotations

import datetime
import decimal
import json
import sys
from pathlib import Path

import kafkalog

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from kafka_builders import (  # noqa: E402
    CONTROL_ABORT,
    CONTROL_COMMIT,
    Rec,
    Segment,
    control_batch,
    kafka_python_batch,
    kafka_python_segment,
)

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z, in ms
SECOND = 1000
LEADER_EPOCH = 3


def click(i: int, ts: int) -> Rec:
    user = b"user-%02d" % (i % 7)
    page = ["/", "/cart", "/checkout", "/search?q=kafka", "/product/42"][i % 5]
    value = b'{"user":"%s","page":"%s","n":%d}' % (user, page.encode(), i)
    return Rec(key=user, value=value, timestamp=ts)


def order(i: int, ts: int, headers: bool = True) -> Rec:
    value = (
        b'{"order_id":%d,"customer":"c-%03d","items":[{"sku":"SKU-%04d","qty":%d}],'
        b'"currency":"EUR","total":%d.%02d}' % (i, i % 13, 1000 + i, 1 + i % 3, 10 + i, i % 100)
    )
    hdrs = ()
    if headers:
        hdrs = (
            ("trace-id", b"%032x" % (0xABCDEF * (i + 1))),
            ("source", b"web" if i % 2 else b"mobile"),
        )
        if i % 4 == 0:
            hdrs += (("retry", None),)  # a header without a value
    return Rec(key=b"order-%d" % i, value=value, timestamp=ts, headers=hdrs)


def clicks_v0() -> Segment:
    seg = None
    offset = 0
    for n, codec in zip((3, 4, 4, 4), ("none", "gzip", "snappy", "lz4"), strict=True):
        recs = [click(offset + i, 0) for i in range(n)]
        part = kafka_python_batch(0, codec, recs, base_offset=offset)
        seg = part if seg is None else seg + part
        offset += n
    return seg


def clicks_v1() -> Segment:
    seg = None
    offset = 0
    for n, codec in zip((3, 4, 4, 4), ("none", "gzip", "snappy", "lz4"), strict=True):
        recs = [click(100 + offset + i, T0 + (offset + i) * SECOND) for i in range(n)]
        append_time = T0 + 3_600 * SECOND if codec == "snappy" else None
        part = kafka_python_batch(1, codec, recs, base_offset=offset, log_append_time=append_time)
        seg = part if seg is None else seg + part
        offset += n
    return seg


def orders_0() -> list[Segment]:
    first = kafka_python_segment(
        2,
        "none",
        [[order(0, T0)]],
        partition_leader_epoch=LEADER_EPOCH,
    )
    first += kafka_python_segment(
        2,
        "gzip",
        [[order(i, T0 + i * SECOND) for i in range(1, 8)]],
        base_offset=1,
        partition_leader_epoch=LEADER_EPOCH,
    )
    first += kafka_python_segment(
        2,
        "snappy",
        [[order(i, T0 + i * SECOND) for i in range(8, 15)]],
        base_offset=8,
        partition_leader_epoch=LEADER_EPOCH,
    )
    # the second segment, rolled at offset 15
    second = kafka_python_batch(
        2,
        "lz4",
        [order(i, T0 + i * SECOND) for i in range(15, 20)],
        base_offset=15,
        partition_leader_epoch=LEADER_EPOCH,
    )
    second += kafka_python_batch(
        2,
        "zstd",
        [order(i, T0 + i * SECOND) for i in range(20, 26)],
        base_offset=20,
        partition_leader_epoch=LEADER_EPOCH,
        log_append_time=T0 + 7_200 * SECOND,
    )
    second += kafka_python_segment(  # an idempotent producer, two batches
        2,
        "zstd",
        [
            [order(i, T0 + i * SECOND, headers=False) for i in range(26, 30)],
            [order(i, T0 + i * SECOND, headers=False) for i in range(30, 33)],
        ],
        base_offset=26,
        producer_id=4001,
        producer_epoch=0,
        base_sequence=0,
        partition_leader_epoch=LEADER_EPOCH,
    )
    return [first, second]


def orders_1() -> Segment:
    pid, epoch = 9002, 1
    txn = {"transactional": True, "producer_id": pid, "producer_epoch": epoch}
    t = T0 + 86_400 * SECOND
    seg = kafka_python_batch(
        2, "zstd", [order(100 + i, t + i) for i in range(3)], 0, base_sequence=0, **txn
    )
    seg += control_batch(3, CONTROL_COMMIT, producer_id=pid, producer_epoch=epoch, timestamp=t + 10)
    seg += kafka_python_batch(
        2, "gzip", [order(103 + i, t + 20 + i) for i in range(2)], 4, base_sequence=3, **txn
    )
    seg += control_batch(6, CONTROL_ABORT, producer_id=pid, producer_epoch=epoch, timestamp=t + 30)
    seg += kafka_python_batch(2, "none", [order(105, t + 40, headers=False)], 7)
    return seg


def users_0() -> Segment:
    """A compacted topic: the cleaner kept the latest value per key, left offset gaps, and
    kept tombstones (null values) until their delete horizon."""
    t = T0 + 172_800 * SECOND

    def user(o: int, k: int, name: str | None) -> Rec:
        value = None if name is None else b'{"name":"%s","plan":"pro"}' % name.encode()
        return Rec(key=b"user-%d" % k, value=value, timestamp=t + o * SECOND, offset=o)

    seg = kafka_python_batch(
        2, "gzip", [user(0, 1, "Ada"), user(2, 2, "Grace"), user(3, 3, "Linus")], 0
    )
    seg += kafka_python_batch(2, "none", [user(7, 4, None), user(9, 5, "Barbara")], 5)
    seg += kafka_python_batch(
        2, "snappy", [user(12, 2, None), user(13, 6, "Ken"), user(14, 1, "Ada L.")], 10
    )
    return seg


def events_0() -> Segment:
    """v0 entries from before the upgrade, then v1, then v2, offsets continuing."""
    recs = [Rec(b"event-%d" % i, b"payload %d " % i * 4, T0 + i * SECOND) for i in range(12)]
    seg = kafka_python_batch(0, "none", recs[0:2], 0)
    seg += kafka_python_batch(0, "gzip", recs[2:4], 2)
    seg += kafka_python_batch(1, "none", recs[4:6], 4)
    seg += kafka_python_batch(1, "lz4", recs[6:8], 6)
    seg += kafka_python_batch(2, "zstd", recs[8:10], 8)
    seg += kafka_python_batch(2, "none", recs[10:12], 10)
    return seg


PAYMENT_V1 = {
    "type": "record",
    "name": "Payment",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "order_id", "type": "long"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "currency", "type": "string"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}

#: Version 2: fields with defaults, so that version 1's records read as version 2.
PAYMENT_V2 = {
    **PAYMENT_V1,
    "fields": [
        *PAYMENT_V1["fields"],
        {
            "name": "method",
            "type": {"type": "enum", "name": "Method", "symbols": ["CARD", "SEPA", "WALLET"]},
            "default": "CARD",
        },
        {"name": "attrs", "type": {"type": "map", "values": "string"}, "default": {}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def payments() -> tuple[Segment, list[dict[str, object]]]:
    """``payments-0``'s segment, and the registry's schemas its values were framed with."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient.new_client({"url": "mock://kafkalog-examples"})
    ctx = SerializationContext("payments", MessageField.VALUE)
    t = T0 + 259_200 * SECOND

    def payment(i: int) -> dict[str, object]:
        p: dict[str, object] = {
            "id": 5000 + i,
            "order_id": i,
            "amount": decimal.Decimal(1999 + 1250 * i) / 100,
            "currency": "EUR",
            "at": datetime.datetime.fromtimestamp((t + i * SECOND) / 1000, datetime.UTC),
        }
        if i >= 5:
            p["method"] = ["CARD", "SEPA", "WALLET"][i % 3]
            p["attrs"] = {"channel": "web" if i % 2 else "app", "country": "FR"}
            p["note"] = "gift" if i == 7 else None
        return p

    def records(schema: dict[str, object], ids: range) -> list[Rec]:
        serialize = AvroSerializer(client, json.dumps(schema))
        return [Rec(b"pay-%d" % i, serialize(payment(i), ctx), t + i * SECOND) for i in ids]

    seg = kafka_python_batch(2, "gzip", records(PAYMENT_V1, range(5)), 0)
    seg += kafka_python_batch(2, "zstd", records(PAYMENT_V2, range(5, 10)), 5)
    registered = []
    for version in sorted(client.get_versions("payments-value")):
        rs = client.get_version("payments-value", version)
        registered.append(
            {"subject": "payments-value", "version": version, "id": rs.schema_id,
             "schema": rs.schema.schema_str}
        )  # fmt: skip
    return seg, registered


def build() -> dict[str, list[Segment]]:
    """Partition directory name -> its segments, in offset order."""
    return {
        "clicks-0": [clicks_v0()],
        "clicks-1": [clicks_v1()],
        "orders-0": orders_0(),
        "orders-1": [orders_1()],
        "users-0": [users_0()],
        "events-0": [events_0()],
        "payments-0": [payments()[0]],
    }


def segment_name(seg: Segment) -> str:
    """A segment file is named after its first batch's base offset, padded to 20 digits."""
    return f"{seg.batches[0]['base_offset']:020d}.log"


def write(out: Path) -> list[Path]:
    written = []
    # The registry's storage topic, as the registry writes it for the payments' schemas.
    kafkalog.write_schemas(out, payments()[1], timestamp=T0 + 259_000 * SECOND, overwrite=True)
    written.append(out / "_schemas-0" / "00000000000000000000.log")
    for partition_dir, segments in build().items():
        d = out / partition_dir
        d.mkdir(parents=True, exist_ok=True)
        for seg in segments:
            path = d / segment_name(seg)
            path.write_bytes(seg.data)
            written.append(path)
        # The .index, .timeindex and .txnindex a broker keeps beside its segments, built the way
        # its log recovery builds them (small interval so these small segments get entries).
        kafkalog.rebuild_indexes(d, index_interval_bytes=256)
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE / "logs"
    files = write(out)
    total = sum(p.stat().st_size for p in files)
    for p in files:
        print(f"{p.relative_to(out)}  {p.stat().st_size} bytes")
    print(f"{len(files)} segments, {total} bytes in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
