"""Topics of several record types (Confluent's RecordNameStrategy and TopicRecordNameStrategy)
read in one column that keeps every type: a struct with one field per record type, named by
its full name, the one of the record's type set. Values and keys framed by confluent-kafka's
own AvroSerializer with those subject strategies, the registry written as Schema Registry's
store writes it; expected values from fastavro (each record resolved to the latest version of
its own subject)."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from values_fixtures import registered, write_partition

import kafkalog
from kafkalog.errors import InvalidArgumentError, UndecodedValueWarning, ValueDecodeError

fastavro = pytest.importorskip("fastavro")
ck = pytest.importorskip("confluent_kafka.schema_registry")
avro_serde = pytest.importorskip("confluent_kafka.schema_registry.avro")
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

TOPIC = "payments"


def record(name: str, fields: list[tuple[str, Any]] | list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "namespace": "shop",
        "fields": [f if isinstance(f, dict) else {"name": f[0], "type": f[1]} for f in fields],
    }


ORDER = record("Order", [("id", "long"), ("amount", "double")])
REFUND_V1 = record("Refund", [("id", "long"), ("reason", "string")])
REFUND_V2 = record(
    "Refund",
    [
        ("id", "long"),
        ("reason", "string"),
        {"name": "partial", "type": "boolean", "default": False},
    ],
)
OTHER = record("Audit", [("who", "string")])
ORDER_KEY = record("OrderKey", [("order", "long")])
REFUND_KEY = record("RefundKey", [("refund", "long")])


class Backup:
    """``payments-0``: orders, refunds of two versions, audits and a tombstone, values and
    keys serialized with ``strategy``; ``_schemas-0`` with every subject the serializers
    registered."""

    def __init__(self, root: Path, strategy: Any, url: str) -> None:
        self.root = root
        self.client = ck.SchemaRegistryClient.new_client({"url": url})
        conf = {"subject.name.strategy": strategy}
        values = SerializationContext(TOPIC, MessageField.VALUE)
        keys = SerializationContext(TOPIC, MessageField.KEY)
        ser = {
            name: avro_serde.AvroSerializer(self.client, json.dumps(schema), conf=conf)
            for name, schema in [
                ("order", ORDER),
                ("refund1", REFUND_V1),
                ("refund2", REFUND_V2),
                ("audit", OTHER),
                ("order_key", ORDER_KEY),
                ("refund_key", REFUND_KEY),
            ]
        }
        rng = random.Random(3)
        self.records: list[tuple[bytes | None, bytes | None]] = []
        for i in range(24):
            kind = ["order", "refund1", "refund2", "order", "refund2", "audit"][i % 6]
            if kind == "order":
                value = ser["order"]({"id": i, "amount": rng.random()}, values)
                key = ser["order_key"]({"order": i}, keys)
            elif kind == "audit":
                value = ser["audit"]({"who": f"w{i}"}, values)
                key = None
            else:
                obj = {"id": i, "reason": f"r{i}", "partial": i % 4 == 0}
                value = ser[kind](obj, values)
                key = ser["refund_key"]({"refund": i}, keys)
            self.records.append((key, value))
        self.records.insert(4, (None, None))
        write_partition(root / f"{TOPIC}-0", self.records)
        rows = []
        for subject in self.client.get_subjects():
            rows.extend(registered(self.client, subject))
        write_partition(root / "_schemas-0", rows)
        self.partition = root / f"{TOPIC}-0"

    def type_of(self, raw: bytes | None) -> str | None:
        """The full name of the record type ``raw`` was written with."""
        if raw is None:
            return None
        writer = json.loads(self.client.get_schema(int.from_bytes(raw[1:5], "big")).schema_str)
        return f"{writer['namespace']}.{writer['name']}"

    def expected(self, field: int, readers: dict[str, dict[str, Any]]) -> list[Any]:
        """Each key (``field`` 0) or value (1) as fastavro decodes it, resolved to the reader
        of its type (by full name), in the struct kafkalog gives: None where the type is not
        one of ``readers``."""
        out: list[Any] = []
        for rec in self.records:
            raw = rec[field]
            if raw is None:
                out.append(None)
                continue
            writer = json.loads(self.client.get_schema(int.from_bytes(raw[1:5], "big")).schema_str)
            name = f"{writer['namespace']}.{writer['name']}"
            if name not in readers:
                out.append(None)
                continue
            decoded = fastavro.schemaless_reader(
                io.BytesIO(raw[5:]),
                fastavro.parse_schema(writer),
                fastavro.parse_schema(readers[name]),
            )
            out.append({n: decoded if n == name else None for n in readers})
        return out


@pytest.fixture(scope="module")
def topic_record(tmp_path_factory) -> Backup:
    return Backup(
        tmp_path_factory.mktemp("topic-record"),
        ck.topic_record_subject_name_strategy,
        "mock://test-topic-record",
    )


@pytest.fixture(scope="module")
def record_name(tmp_path_factory) -> Backup:
    return Backup(
        tmp_path_factory.mktemp("record-name"),
        ck.record_subject_name_strategy,
        "mock://test-record-name",
    )


ALL = {"shop.Audit": OTHER, "shop.Order": ORDER, "shop.Refund": REFUND_V2}


def test_topic_record_subjects_are_found(topic_record):
    subjects = set(kafkalog.schemas(topic_record.root).column("subject").to_pylist())
    assert f"{TOPIC}-shop.Refund" in subjects and f"{TOPIC}-value" not in subjects
    t = kafkalog.read(
        topic_record.partition, value_format="avro", schemas=topic_record.root
    ).read_all()
    value = t.schema.field("value").type
    # Every <topic>-<full name> subject is a field: the value types, and the key types too
    # (their subjects are named alike), whose fields stay null here.
    assert [value.field(i).name for i in range(value.num_fields)] == [
        "shop.Audit",
        "shop.Order",
        "shop.OrderKey",
        "shop.Refund",
        "shop.RefundKey",
    ]
    assert value.field("shop.Refund").type == pa.struct(
        [("id", pa.int64()), ("reason", pa.string()), ("partial", pa.bool_())]
    )
    got = t.column("value").to_pylist()
    want = topic_record.expected(1, ALL)
    want = [
        None if w is None else dict(w, **{"shop.OrderKey": None, "shop.RefundKey": None})
        for w in want
    ]
    assert got == want
    assert sum(1 for g in got if g and g["shop.Refund"] and not g["shop.Refund"]["partial"]) > 0


def test_subjects_named_record_name_strategy(record_name):
    with pytest.raises(InvalidArgumentError, match="payments-value"):
        kafkalog.read(record_name.partition, value_format="avro", schemas=record_name.root)
    t = kafkalog.read(
        record_name.partition,
        value_format="avro",
        key_format="avro",
        schemas=record_name.root,
        on_value_error="null",
        value_options={
            "value_subjects": ["shop.Order", "shop.Refund"],
            "key_subjects": "shop.OrderKey,shop.RefundKey",
        },
    )
    with pytest.warns(UndecodedValueWarning):
        t = t.read_all()
    readers = {"shop.Order": ORDER, "shop.Refund": REFUND_V2}
    assert t.column("value").to_pylist() == record_name.expected(1, readers)
    keys = {"shop.OrderKey": ORDER_KEY, "shop.RefundKey": REFUND_KEY}
    assert t.column("key").to_pylist() == record_name.expected(0, keys)
    # The audits are of no subject read: bad values, their bytes kept.
    errors = t.column("value_error").to_pylist()
    raws = t.column("value_raw").to_pylist()
    audits = [
        i for i, (_, v) in enumerate(record_name.records) if record_name.type_of(v) == "shop.Audit"
    ]
    assert audits and [i for i, e in enumerate(errors) if e] == audits
    assert all("not a version of the subjects read" in errors[i] for i in audits)
    assert all(raws[i] == record_name.records[i][1] for i in audits)


def test_a_record_of_no_subject_read_fails_the_read(record_name):
    with pytest.raises(ValueDecodeError, match="not a version of the subjects read"):
        kafkalog.read(
            record_name.partition,
            value_format="avro",
            schemas=record_name.root,
            value_options={"value_subjects": ["shop.Order", "shop.Refund"]},
        ).read_all()


def test_subjects_and_a_subject_are_exclusive(record_name):
    with pytest.raises(InvalidArgumentError, match="exclusive"):
        kafkalog.read(
            record_name.partition,
            value_format="avro",
            schemas=record_name.root,
            value_options={"value_subjects": ["shop.Order"], "value_subject": "shop.Order"},
        )


def test_spark_reads_several_record_types(spark, record_name, topic_record):
    pytest.importorskip("pyspark")
    import kafkalog.spark as ks

    df = (
        spark.read.format("kafkalog")
        .option("valueFormat", "avro")
        .option("schemaRegistry", str(record_name.root))
        .option("valueSubjects", "shop.Order,shop.Refund,shop.Audit")
        .load(str(record_name.partition))
    )
    value = df.schema["value"].dataType
    assert [f.name for f in value.fields] == ["shop.Order", "shop.Refund", "shop.Audit"]
    rows = df.orderBy("offset").collect()
    got = [None if r["value"] is None else r["value"].asDict(recursive=True) for r in rows]
    readers = {"shop.Order": ORDER, "shop.Refund": REFUND_V2, "shop.Audit": OTHER}
    assert got == record_name.expected(1, readers)

    # Found on the driver, the same in the tasks: the topic's <topic>-<full name> subjects.
    d = ks.decoder(value_format="avro", schemas=str(topic_record.root), topic=TOPIC)
    assert "shop.Refund" in d.schema["value"].dataType.fieldNames()
    paths = spark.createDataFrame([(str(topic_record.partition),)], ["path"])
    rows = paths.mapInArrow(d, d.schema).orderBy("offset").collect()
    refunds = [r["value"]["shop.Refund"] for r in rows if r["value"] is not None]
    assert [r.asDict() if r else None for r in refunds] == [
        w["shop.Refund"] for w in topic_record.expected(1, ALL) if w is not None
    ]


def test_writing_several_record_types_is_refused(record_name, tmp_path):
    value = pa.array([{"shop.Order": {"id": 1, "amount": 1.0}}])
    with pytest.raises(InvalidArgumentError, match="several record types"):
        kafkalog.write(
            tmp_path / f"{TOPIC}-0",
            pa.table({"key": pa.array([None], pa.binary()), "value": value}),
            value_format="avro",
            schemas=record_name.root,
            value_options={"value_subjects": ["shop.Order"]},
        )


def test_convert_with_subjects(record_name, tmp_path, capsys):
    import pyarrow.parquet as pq

    from kafkalog.cli.main import main

    out = tmp_path / "payments.parquet"
    code = main(
        ["convert", str(record_name.partition), str(out), "--value-format", "avro",
         "--schemas", str(record_name.root), "--subjects", "shop.Order,shop.Refund",
         "--on-value-error", "null"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    readers = {"shop.Order": ORDER, "shop.Refund": REFUND_V2}
    assert pq.read_table(out).column("value").to_pylist() == record_name.expected(1, readers)
