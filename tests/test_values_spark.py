"""Typed keys and values in Spark: the data source's keyFormat/valueFormat/schemaRegistry/
onValueError options (batch and streaming; the registry read on the driver), and
``kafkalog.spark.decoder(value_format=..., schemas=...)`` for mapInArrow with its schema.
Values framed by confluent-kafka's own Avro serializer, expected values from fastavro."""

from __future__ import annotations

import decimal

import pytest
from test_values import TOPIC, Backup

pytest.importorskip("confluent_kafka")
pytest.importorskip("pyspark")

import kafkalog.spark as ks  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*index not used")


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> Backup:
    return Backup(tmp_path_factory.mktemp("values-spark"), n=30)


def comparable(row: dict) -> dict:
    """A decoded order as Spark and fastavro both give it: the fields every version has."""
    return {"id": row["id"], "customer": row["customer"], "amount": decimal.Decimal(row["amount"])}


def test_data_source_reads_typed_values(spark, backup):
    df = (
        spark.read.format("kafkalog")
        .option("keyFormat", "string")
        .option("valueFormat", "avro")
        .option("schemaRegistry", str(backup.root))
        .load(str(backup.root / f"{TOPIC}-0"))
    )
    value = df.schema["value"].dataType
    assert value.simpleString().startswith("struct<id:bigint,customer:string,amount:decimal(10,2)")
    assert df.schema["key"].dataType.simpleString() == "string"
    rows = df.orderBy("offset").collect()
    expected = backup.expected()
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected, strict=True):
        if want is None:
            assert row["value"] is None
            continue
        got = row["value"].asDict(recursive=True)
        assert comparable(got) == comparable(want)
        assert got["status"] == want.get("status", "NEW")
        assert got["tags"] == want.get("tags", [])
    assert rows[0]["key"] == "order-0"


def test_data_source_on_value_error_null(spark, backup, tmp_path):
    from test_values import bad_backup

    bad_backup(tmp_path, backup)
    df = (
        spark.read.format("kafkalog")
        .option("valueFormat", "avro")
        .option("schemaRegistry", str(tmp_path))
        .option("onValueError", "null")
        .load(str(tmp_path / f"{TOPIC}-0"))
    )
    assert "value_error" in df.columns and "value_raw" in df.columns
    rows = df.orderBy("offset").collect()
    assert rows[0]["value"] is not None and rows[0]["value_error"] is None
    assert "magic byte 1" in rows[1]["value_error"]
    assert rows[1]["value_raw"] is not None


def test_streaming_reads_typed_values(spark, backup, tmp_path):
    query = (
        spark.readStream.format("kafkalog")
        .option("valueFormat", "avro")
        .option("schemaRegistry", str(backup.root))
        .option("startingOffsets", "earliest")
        .load(str(backup.root / f"{TOPIC}-0"))
        .select("offset", "value.id")
        .writeStream.format("memory")
        .queryName("typed_values")
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .start()
    )
    query.awaitTermination(300)
    got = spark.sql("select * from typed_values order by offset").collect()
    want = backup.expected()
    assert [r["id"] for r in got] == [None if w is None else w["id"] for w in want]


def test_map_in_arrow_decoder(spark, backup):
    d = ks.decoder(value_format="avro", schemas=str(backup.root), topic=TOPIC)
    assert d.schema["value"].dataType.simpleString().startswith("struct<id:bigint")
    paths = spark.createDataFrame([(str(backup.root / f"{TOPIC}-0"),)], ["path"])
    rows = paths.mapInArrow(d, d.schema).orderBy("offset").collect()
    want = backup.expected()
    assert [None if r["value"] is None else r["value"]["id"] for r in rows] == [
        None if w is None else w["id"] for w in want
    ]
