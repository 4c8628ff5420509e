"""Avro unions other than ``[null, T]`` and ``uuid`` strings in the shapes Spark's own Avro
support gives them (``from_avro``): a union of ``int`` and ``long`` a ``long``, of ``float``
and ``double`` a ``double``, any other a struct of ``member0``, ``member1``, ... (one per
non-null branch, the one the value was written with set); a ``uuid`` its text. The same
column in Arrow (read), Parquet (convert), Spark (the data source, ``decoder``), and written
back (confluent-kafka's AvroDeserializer reads it equal). Values framed by confluent-kafka's
own AvroSerializer (fastavro underneath), expected values from fastavro's reader."""

from __future__ import annotations

import io
import json
import random
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from values_fixtures import registered, write_partition

import kafkalog
from kafkalog.cli.main import main
from kafkalog.errors import InvalidArgumentError

fastavro = pytest.importorskip("fastavro")
ck = pytest.importorskip("confluent_kafka.schema_registry")
avro_serde = pytest.importorskip("confluent_kafka.schema_registry.avro")
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

TOPIC = "events"

CLICK = {"type": "record", "name": "Click", "fields": [{"name": "x", "type": "int"}]}

EVENT = {
    "type": "record",
    "name": "Event",
    "namespace": "shop",
    "fields": [
        {"name": "payload", "type": ["null", "int", "string", CLICK]},
        {"name": "n", "type": ["int", "long"]},
        {"name": "f", "type": ["float", "double"]},
        {"name": "xs", "type": {"type": "array", "items": ["string", "long"]}},
        {"name": "m", "type": {"type": "map", "values": ["null", "boolean", "string"]}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "maybe", "type": ["null", "long", "int"]},
    ],
}


def event(rng: random.Random) -> dict[str, Any]:
    return {
        "payload": rng.choice([None, rng.randrange(-99, 99), f"s{rng.randrange(9)}", {"x": 3}]),
        # fastavro writes a number in the first branch it fits: both branches appear.
        "n": rng.choice([rng.randrange(-(2**31), 2**31), rng.randrange(2**40, 2**50)]),
        "f": rng.choice([0.5, 1e300, -2.25]),
        "xs": [rng.choice(["a", 7, 2**40]) for _ in range(rng.randrange(3))],
        "m": {f"k{j}": rng.choice([None, True, "v"]) for j in range(rng.randrange(3))},
        "ref": str(uuid.UUID(int=rng.getrandbits(128))),
        "maybe": rng.choice([None, 5, 2**40]),
    }


def member(value: Any, branches: list[type]) -> dict[str, Any] | None:
    """A union value as Spark's member struct: the field of the branch its Python type says."""
    if value is None:
        return None
    out: dict[str, Any] = {f"member{i}": None for i in range(len(branches))}
    for i, kind in enumerate(branches):
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            out[f"member{i}"] = value
            return out
    raise AssertionError(value)


def shaped(v: dict[str, Any] | None) -> dict[str, Any] | None:
    """fastavro's decoded event in the shapes kafkalog gives (maps as pairs, as Arrow's)."""
    if v is None:
        return None
    return {
        "payload": member(v["payload"], [int, str, dict]),
        "n": v["n"],
        "f": v["f"],
        "xs": [member(x, [str, int]) for x in v["xs"]],
        "m": [(k, member(x, [bool, str])) for k, x in v["m"].items()],
        "ref": str(v["ref"]),
        "maybe": v["maybe"],
    }


class Backup:
    def __init__(self, root: Path, n: int = 30) -> None:
        self.root = root
        self.client = ck.SchemaRegistryClient.new_client({"url": "mock://test-shapes"})
        ser = avro_serde.AvroSerializer(self.client, json.dumps(EVENT))
        ctx = SerializationContext(TOPIC, MessageField.VALUE)
        rng = random.Random(9)
        self.records: list[tuple[bytes | None, bytes | None]] = [
            (None, ser(event(rng), ctx)) for _ in range(n)
        ]
        self.records.insert(3, (b"gone", None))
        write_partition(root / f"{TOPIC}-0", self.records)
        write_partition(root / "_schemas-0", registered(self.client, f"{TOPIC}-value"))
        self.partition = root / f"{TOPIC}-0"

    def expected(self) -> list[dict[str, Any] | None]:
        parsed = fastavro.parse_schema(EVENT)
        return [
            None if v is None else fastavro.schemaless_reader(io.BytesIO(v[5:]), parsed, parsed)
            for _, v in self.records
        ]


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> Backup:
    return Backup(tmp_path_factory.mktemp("values-shapes"))


def test_arrow_types_are_sparks_shapes(backup):
    t = kafkalog.read(backup.partition, value_format="avro", schemas=backup.root).read_all()
    value = t.schema.field("value").type
    assert value.field("payload").type == pa.struct(
        [
            ("member0", pa.int32()),
            ("member1", pa.string()),
            ("member2", pa.struct([("x", pa.int32())])),
        ]
    )
    assert value.field("n").type == pa.int64()
    assert value.field("f").type == pa.float64()
    assert value.field("xs").type.value_type == pa.struct(
        [("member0", pa.string()), ("member1", pa.int64())]
    )
    assert value.field("m").type.item_type == pa.struct(
        [("member0", pa.bool_()), ("member1", pa.string())]
    )
    assert value.field("ref").type == pa.string()
    assert value.field("maybe").type == pa.int64()
    got = t.column("value").to_pylist()
    want = [shaped(v) for v in backup.expected()]
    assert got == want
    # Both branches of each union are there.
    ns = [v["n"] for v in got if v]
    assert any(abs(n) < 2**31 for n in ns) and any(n >= 2**40 for n in ns)
    assert {k for v in got if v and v["payload"] for k, x in v["payload"].items() if x} == {
        "member0",
        "member1",
        "member2",
    }


def test_convert_writes_the_shapes_to_parquet(backup, tmp_path, capsys):
    out = tmp_path / "events.parquet"
    code = main(
        ["convert", str(backup.partition), str(out), "--value-format", "avro",
         "--schemas", str(backup.root)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    got = pq.read_table(out).column("value").to_pylist()
    assert got == [shaped(v) for v in backup.expected()]


def test_written_back_confluents_deserializer_reads_it_equal(backup, tmp_path):
    typed = kafkalog.read(backup.partition, value_format="avro", schemas=backup.root).read_all()
    out = tmp_path / f"{TOPIC}-0"
    kafkalog.write(out, typed.select(["key", "value"]), value_format="avro", schemas=backup.root)
    deserialize = avro_serde.AvroDeserializer(backup.client)
    ctx = SerializationContext(TOPIC, MessageField.VALUE)
    raw = kafkalog.read(out).read_all().column("value").to_pylist()
    got = [None if v is None else deserialize(v, ctx) for v in raw]
    assert got == backup.expected()


def test_a_value_in_two_members_does_not_write(backup, tmp_path):
    typed = kafkalog.read(backup.partition, value_format="avro", schemas=backup.root).read_all()
    rows = [v for v in typed.column("value").to_pylist() if v is not None][:1]
    rows[0]["payload"] = {"member0": 1, "member1": "two", "member2": None}
    value = pa.array(rows, typed.schema.field("value").type)
    with pytest.raises(InvalidArgumentError, match="several members"):
        kafkalog.write(
            tmp_path / f"{TOPIC}-0",
            pa.table({"key": pa.array([None], pa.binary()), "value": value}),
            value_format="avro",
            schemas=backup.root,
        )


def test_spark_source_and_decoder_give_the_shapes(spark, backup):
    pytest.importorskip("pyspark")
    import kafkalog.spark as ks

    df = (
        spark.read.format("kafkalog")
        .option("valueFormat", "avro")
        .option("schemaRegistry", str(backup.root))
        .load(str(backup.partition))
    )
    value = df.schema["value"].dataType
    assert value["payload"].dataType.simpleString() == (
        "struct<member0:int,member1:string,member2:struct<x:int>>"
    )
    assert value["n"].dataType.simpleString() == "bigint"
    assert value["f"].dataType.simpleString() == "double"
    assert value["ref"].dataType.simpleString() == "string"
    rows = df.orderBy("offset").collect()
    want = [shaped(v) for v in backup.expected()]
    got = [None if r["value"] is None else r["value"].asDict(recursive=True) for r in rows]
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None
            continue
        w = dict(w, m=dict(w["m"]))
        assert g == w

    d = ks.decoder(value_format="avro", schemas=str(backup.root), topic=TOPIC)
    assert d.schema["value"].dataType == value
    paths = spark.createDataFrame([(str(backup.partition),)], ["path"])
    rows = paths.mapInArrow(d, d.schema).orderBy("offset").collect()
    payloads = [r["value"]["payload"] if r["value"] else None for r in rows]
    assert [p.asDict(recursive=True) if p else None for p in payloads] == [
        None if w is None else w["payload"] for w in want
    ]
