"""What tripped a new user in the first hour with kafkalog and typed records (issue 38), each
through the command line where the user met it: a file that is not a Kafka log, typed values
as JSON, a data partition given as the registry, where a bad value's batch is, directories
for ``dump``, Confluent's deserializer class names, the registry's storage topic written and
exported, and the smaller points."""

from __future__ import annotations

import datetime
import decimal
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kafkalog
from conftest import REPO
from kafkalog.cli.main import main
from kafkalog.cli.text import _human_bytes
from kafkalog.errors import (
    InvalidArgumentError,
    NotASegmentError,
    TruncatedSegmentWarning,
    ValueDecodeError,
)

EXAMPLES = REPO / "examples" / "logs"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    """The tool in-process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("kafkalog: "), err
    for fragment in fragments:
        assert fragment in lines[0], err
    return lines[0]


# --------------------------------------------------------------------------------------------
# 1. A file that is not a Kafka log is refused, naming it, byte 0 and why.


def test_a_text_file_is_not_a_log(capsys, tmp_path):
    passwd = tmp_path / "passwd"
    passwd.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n" * 40)
    out = tmp_path / "pw.parquet"
    code, stdout, err = run(capsys, "convert", passwd, out)
    assert code == 1
    one_line_error(
        err, str(passwd), "not a Kafka segment", "magic byte at byte 16 is 47",
        'starts with "root:x:0:0:root:"', "byte position 0",
    )  # fmt: skip
    assert not out.exists() and stdout == ""
    with pytest.raises(NotASegmentError) as e:
        kafkalog.read(passwd).read_all()
    assert (e.value.path, e.value.position, e.value.kind) == (str(passwd), 0, "not_a_segment")


@pytest.mark.parametrize("kind", ["readme", "parquet", "random"])
def test_a_file_copied_into_a_partition_is_not_a_log(capsys, tmp_path, kind):
    part = tmp_path / "orders-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    if kind == "readme":
        log.write_bytes((REPO / "README.md").read_bytes())
    elif kind == "parquet":
        pq.write_table(pa.table({"x": list(range(1000))}), log)
    else:
        log.write_bytes(random.Random(38).randbytes(5000))
    for argv in (["convert", part, tmp_path / "o.parquet"], ["info", part]):
        code, _, err = run(capsys, *argv)
        assert code == 1, (argv, err)
        one_line_error(err, str(log), "not a Kafka segment", "at byte 0")
        assert "warning" not in err
    code, out, _ = run(capsys, "verify", part)
    assert code == 1 and "not a Kafka segment" in out
    with pytest.raises(NotASegmentError):
        kafkalog.read(tmp_path).read_all()


def test_a_torn_segment_is_still_a_log(capsys, tmp_path):
    """A crash tears a segment's last batch (or its only one): the complete batches are kept
    and a warning says what was left, as Kafka's recovery does."""
    seg = (EXAMPLES / "orders-0" / "00000000000000000000.log").read_bytes()
    part = tmp_path / "orders-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    log.write_bytes(seg[:-100])  # the third batch (offsets 8-14) torn
    with pytest.warns(TruncatedSegmentWarning):
        t = kafkalog.read(part).read_all()
    assert t.column("offset").to_pylist() == list(range(8))
    log.write_bytes(seg[:150])  # the first and only batch torn
    with pytest.warns(TruncatedSegmentWarning) as w:
        assert kafkalog.read(part).read_all().num_rows == 0
    assert w[0].message.position == 0
    code, _, err = run(capsys, "convert", part, tmp_path / "o.parquet")
    assert code == 0 and err.startswith("warning: ") and "partial batch" in err
    # Renamed (its offsets are not its name's) but whole: Kafka splits such a segment and
    # reads it; so does kafkalog.
    shutil.copy(EXAMPLES / "orders-0" / "00000000000000000000.log", log)
    os.rename(log, part / "00000000000000000100.log")
    assert kafkalog.read(part).read_all().num_rows == 15


# --------------------------------------------------------------------------------------------
# Typed values: a backup whose values confluent-kafka's Avro serializer framed (test_values).


@pytest.fixture(scope="module")
def backup(tmp_path_factory):
    pytest.importorskip("confluent_kafka")
    from test_values import Backup

    return Backup(tmp_path_factory.mktemp("first-hour"), n=9)


def _from_json(v: dict[str, Any]) -> dict[str, Any]:
    """An ORDER_V2 value as JSON back into Python's values, as fastavro gives them."""
    out = dict(v)
    out["amount"] = decimal.Decimal(str(v["amount"]))
    out["score"] = float(v["score"])
    out["day"] = datetime.date.fromisoformat(v["day"])
    for name in ("at", "at_us"):
        out[name] = datetime.datetime.fromisoformat(v[name].replace("Z", "+00:00"))
    out["local"] = datetime.datetime.fromisoformat(v["local"])
    out["time_ms"] = datetime.time.fromisoformat(v["time_ms"])
    out["checksum"] = v["checksum"].encode("latin-1")  # Avro's JSON encoding of bytes
    return out


# 2. convert ... o.jsonl with typed values: JSON lines of every value.


def test_typed_values_convert_to_json_lines(capsys, backup, tmp_path):
    from test_values import normalize

    out = tmp_path / "o.jsonl"
    code, _, err = run(
        capsys, "convert", backup.root / "orders-0", out, "--key-format", "string",
        "--value-format", "avro", "--schemas", backup.root,
    )  # fmt: skip
    assert code == 0, err
    lines = out.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line, parse_float=decimal.Decimal) for line in lines]
    assert [r["key"] for r in rows][:2] == ["order-0", "order-1"]
    got = [None if r["value"] is None else _from_json(r["value"]) for r in rows]
    assert got == [normalize(v) for v in backup.expected()]
    # Decimals are exact numbers in the text, maps objects, records nested.
    second = json.loads(lines[1])["value"]
    assert isinstance(second["attrs"], dict) and isinstance(second["tags"], list)
    assert f'"amount":{backup.expected()[1]["amount"]}' in lines[1]


# 3. A data partition given as the registry: one message, a failing exit.


def test_a_data_partition_is_not_the_registry(capsys, backup, tmp_path):
    data = backup.root / "orders-0"
    code, out, err = run(capsys, "schemas", data)
    assert code == 2 and out == ""
    one_line_error(err, str(data), "is not a Schema Registry storage topic", "10 records")
    code, _, err = run(
        capsys, "convert", data, tmp_path / "o.parquet", "--value-format", "avro",
        "--schemas", data,
    )  # fmt: skip
    assert code == 2
    one_line_error(err, "is not a Schema Registry storage topic")
    with pytest.raises(InvalidArgumentError, match="none of its 10 records"):
        kafkalog.schemas(data)


# 5. A value that does not decode names its batch: byte position and base offset.


def test_a_bad_value_names_its_batch(backup, tmp_path):
    from values_fixtures import write_partition

    records = list(backup.records[:8])
    unknown = b"\x00\x00\x00\x03\xe7" + records[1][1][5:]  # schema id 999
    records[6] = (records[6][0], unknown)  # offset 6, in the second batch (4-7)
    write_partition(tmp_path / "orders-0", records)
    shutil.copytree(backup.root / "_schemas-0", tmp_path / "_schemas-0")
    second = kafkalog.read_batches(tmp_path / "orders-0").read_all().to_pylist()[1]
    assert second["baseOffset"] == 4 and second["batchPosition"] > 0
    with pytest.raises(ValueDecodeError) as e:
        kafkalog.read(tmp_path / "orders-0", value_format="avro", schemas=tmp_path).read_all()
    assert (e.value.offset, e.value.position) == (4, second["batchPosition"])
    assert "value of orders-0 at offset 6 does not decode: schema id 999" in str(e.value)
    assert f"(batch at byte position {second['batchPosition']}, offset 4)" in str(e.value)
    assert e.value.path.endswith("00000000000000000000.log")


# 6. dump --value-decoder: the value as JSON, nested as an object in --format json.


def test_dump_prints_typed_values_as_json(capsys, backup):
    from test_values import normalize

    seg = backup.root / "orders-0" / "00000000000000000000.log"
    code, out, err = run(capsys, "dump", seg, "--value-decoder", "avro", "--schemas", backup.root)
    assert code == 0, err
    payloads = [line.split(" payload: ", 1)[1] for line in out.splitlines() if " payload: " in line]
    expected = [normalize(v) for v in backup.expected() if v is not None]
    assert [_from_json(json.loads(p)) for p in payloads] == expected
    assert "[[" not in out and "\\x" not in out and "+00:00" not in out
    code, out, err = run(
        capsys, "dump", seg, "--value-decoder", "avro", "--schemas", backup.root,
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    records = [r for r in map(json.loads, out.splitlines()) if r["type"] == "record"]
    values = [r["payload"] for r in records if r["payload"] is not None]
    assert all(isinstance(v, dict) for v in values)
    assert [_from_json(v) for v in values] == expected
    assert records[0]["key"] == "order-0"


# 7. dump of a directory: its segments, in order.


def test_dump_a_directory(capsys):
    code, out, err = run(capsys, "dump", EXAMPLES / "orders-0")
    assert code == 0 and "Ignoring" not in err
    dumped = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("Dumping")]
    assert [Path(p).name for p in dumped] == [
        "00000000000000000000.log",
        "00000000000000000015.log",
    ]
    code, out, _ = run(capsys, "dump", EXAMPLES, "--format", "json")
    assert code == 0
    files = [r["file"] for r in map(json.loads, out.splitlines()) if r["type"] == "file"]
    assert files == [s["path"] for s in kafkalog.segments(EXAMPLES)]


# 8. Confluent's deserializer class names: the decoder they stand for.


def test_confluent_deserializer_classes(capsys, backup):
    seg = backup.root / "orders-0" / "00000000000000000000.log"
    code, by_format, _ = run(
        capsys, "dump", seg, "--value-decoder", "avro", "--schemas", backup.root
    )
    assert code == 0
    for name in (
        "io.confluent.kafka.serializers.KafkaAvroDeserializer",
        "KafkaAvroDeserializer",
        "io.confluent.kafka.serializers.KafkaAvroDecoder",
    ):
        code, out, err = run(
            capsys, "dump", seg, "--value-decoder-class", name, "--schemas", backup.root
        )
        assert (code, out) == (0, by_format), err
    for name, fmt in (
        ("io.confluent.kafka.serializers.KafkaAvroDeserializer", "avro"),
        ("io.confluent.kafka.serializers.protobuf.KafkaProtobufDeserializer", "protobuf"),
        ("io.confluent.kafka.serializers.json.KafkaJsonSchemaDeserializer", "json"),
    ):
        code, _, err = run(capsys, "dump", seg, "--value-decoder-class", name)
        assert code == 2
        one_line_error(err, f"--value-decoder {fmt} --schemas LOGDIR")
    code, _, err = run(capsys, "dump", seg, "--value-decoder-class", "com.example.MyDecoder")
    assert code == 2 and "--value-decoder avro|protobuf|json --schemas LOGDIR" in err


# --------------------------------------------------------------------------------------------
# 9. The registry's storage topic written, and exported as Schema Registry imports it.


def test_write_schemas_writes_what_the_registry_writes(backup, tmp_path):
    from values_fixtures import registered

    client = backup.client
    rows = [
        {
            "subject": "orders-value",
            "schema": client.get_version("orders-value", v).schema.schema_str,
        }
        for v in (1, 2)
    ]
    table = kafkalog.write_schemas(tmp_path, rows, timestamp=0)
    # The records, byte for byte, as Schema Registry's serializer writes them (the fixtures
    # spell its Jackson output), with the ids the registry gave.
    got = kafkalog.read(tmp_path / "_schemas-0").read_all()
    assert list(zip(got["key"].to_pylist(), got["value"].to_pylist(), strict=True)) == registered(
        client, "orders-value"
    )
    assert got["timestamp"].to_pylist()[0].timestamp() == 0
    assert (
        kafkalog.schemas(tmp_path).drop_columns(["offset"]).equals(table.drop_columns(["offset"]))
    )
    # Typed values decode with it as with the registry's own.
    data = kafkalog.read(backup.root / "orders-0", value_format="avro", schemas=tmp_path)
    same = kafkalog.read(backup.root / "orders-0", value_format="avro", schemas=backup.root)
    assert data.read_all().equals(same.read_all())
    # The registry's rules: a schema it has already is not registered again; an id belongs to
    # one schema; references name what is there; a schema compiles.
    again = kafkalog.write_schemas(tmp_path / "again", rows + rows[:1], timestamp=0)
    assert again.num_rows == 2
    for bad, why in [
        ([rows[0], {**rows[1], "id": 1}], "id 1 is another schema's"),
        ([{**rows[0], "references": [{"name": "x", "subject": "y", "version": 1}]}], "references"),
        ([{"subject": "s", "schema": '{"type": "nope"}'}], "does not compile"),
    ]:
        with pytest.raises(InvalidArgumentError, match=why):
            kafkalog.write_schemas(tmp_path / "bad", bad)


def test_export_schemas_as_the_rest_api_imports_them(capsys, backup, tmp_path):
    exported = kafkalog.export_schemas(backup.root)
    client = backup.client
    assert exported == [
        {
            "subject": "orders-value",
            "version": v,
            "id": client.get_version("orders-value", v).schema_id,
            "schemaType": "AVRO",
            "schema": client.get_version("orders-value", v).schema.schema_str,
        }
        for v in (1, 2)
    ]
    # The command line: exported, then written back from those lines; and copied directly.
    code, out, _ = run(capsys, "schemas", backup.root, "--export")
    assert code == 0 and [json.loads(line) for line in out.splitlines()] == exported
    (tmp_path / "export.jsonl").write_text(out)
    code, out, err = run(capsys, "write-schemas", tmp_path / "a", tmp_path / "export.jsonl")
    assert code == 0, err
    assert [line.split("\t")[:3] for line in out.splitlines()] == [
        ["orders-value", str(r["version"]), str(r["id"])] for r in exported
    ]
    code, _, err = run(capsys, "write-schemas", tmp_path / "b", backup.root, "--timestamp", "0")
    assert code == 0, err
    for copy in ("a", "b"):
        assert kafkalog.export_schemas(tmp_path / copy) == exported
    avsc = tmp_path / "p.avsc"
    avsc.write_text('{"type": "record", "name": "P", "fields": [{"name": "a", "type": "int"}]}')
    code, out, err = run(capsys, "write-schemas", tmp_path / "c", f"p-value={avsc}")
    assert (code, out) == (0, "p-value\t1\t1\tAVRO\n"), err


# --------------------------------------------------------------------------------------------
# 10. The smaller points.


def test_convert_says_what_it_wrote(capsys, tmp_path):
    out = tmp_path / "o.parquet"
    code, stdout, err = run(capsys, "convert", EXAMPLES / "orders-0", out)
    assert code == 0 and err == ""
    assert stdout == f"{out}: 33 records written (parquet, {_human_bytes(out.stat().st_size)})\n"
    code, stdout, _ = run(capsys, "convert", EXAMPLES / "orders-0", out, "--quiet")
    assert code == 0 and stdout == ""


def test_verify_of_nothing_does_not_print_a_summary(capsys, tmp_path):
    code, out, err = run(capsys, "verify", tmp_path)
    assert code == 1 and out == ""
    one_line_error(err, "no segments found: nothing was verified")


def test_dir_of_the_package_is_its_api():
    names = dir(kafkalog)
    for private in ("annotations", "importlib", "Any", "TYPE_CHECKING"):
        assert private not in names
    assert all(hasattr(kafkalog, n) for n in names)
    assert {"read", "write_schemas", "export_schemas", "NotASegmentError", "reading"} <= set(names)


def test_nested_timestamps_are_utc_as_the_record_columns(backup):
    t = kafkalog.read(backup.root / "orders-0", value_format="avro", schemas=backup.root)
    value = t.schema.field("value").type
    assert value.field("at").type == pa.timestamp("ms", tz="UTC")
    assert value.field("at_us").type == pa.timestamp("us", tz="UTC")
    assert value.field("local").type == pa.timestamp("ms")
    assert t.schema.field("timestamp").type.tz == "UTC"


def test_demo_says_what_to_do_next():
    import subprocess

    plan = subprocess.run(
        ["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True, timeout=60
    ).stdout
    for step in ("source .venv/bin/activate", "kafkalog --help", "pip install ."):
        assert step in plan, plan
    job = (REPO / "examples" / "spark_job.py").read_text()
    assert "restarted from the checkpoint: {" not in job


def test_getting_started_says_headers_come_by_default():
    text = (REPO / "docs" / "getting-started.md").read_text()
    assert "on request" not in text
    assert "From a clone" in text
