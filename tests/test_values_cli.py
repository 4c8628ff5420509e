"""The command line of typed keys and values: ``kafkalog schemas``, ``convert
--value-format``, ``dump --value-decoder``, on a backup whose values confluent-kafka's own
Avro serializer framed (see test_values.py)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from test_values import TOPIC, Backup, normalize

from kafkalog.cli.main import main

pytest.importorskip("confluent_kafka")


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> Backup:
    return Backup(tmp_path_factory.mktemp("values-cli"), n=9)


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_schemas_lists_the_registry(capsys, backup):
    code, out, _ = run(capsys, "schemas", backup.root)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split("\t")[:5] == ["SUBJECT", "VERSION", "ID", "TYPE", "DELETED"]
    assert [line.split("\t")[:2] for line in lines[1:]] == [
        ["orders-value", "1"],
        ["orders-value", "2"],
    ]
    code, out, _ = run(capsys, "schemas", backup.root, "--json")
    assert [json.loads(line)["version"] for line in out.splitlines()] == [1, 2]


def test_convert_writes_typed_parquet(capsys, backup, tmp_path):
    out = tmp_path / "orders.parquet"
    code, _, err = run(
        capsys, "convert", backup.root / f"{TOPIC}-0", out,
        "--key-format", "string", "--value-format", "avro", "--schemas", backup.root,
    )  # fmt: skip
    assert code == 0, err
    table = pq.read_table(out)
    assert table.column("key").to_pylist()[0] == "order-0"
    got = [normalize(v) for v in table.column("value").to_pylist()]
    assert got == [normalize(v) for v in backup.expected()]


def test_convert_needs_schemas(capsys, backup, tmp_path):
    code, _, err = run(
        capsys, "convert", backup.root / f"{TOPIC}-0", tmp_path / "o.parquet",
        "--value-format", "avro",
    )  # fmt: skip
    assert code == 2 and "--schemas" in err


def test_dump_prints_decoded_values_as_json(capsys, backup):
    seg = sorted((backup.root / f"{TOPIC}-0").glob("*.log"))[0]
    code, out, err = run(
        capsys, "dump", "--files", seg, "--key-decoder", "string",
        "--value-decoder", "avro", "--schemas", backup.root,
    )  # fmt: skip
    assert code == 0, err
    payloads = [line.split(" payload: ", 1) for line in out.splitlines() if "payload: " in line]
    first = json.loads(payloads[0][1])
    assert first["id"] == 0 and first["customer"] == backup.expected()[0]["customer"]
    assert "key: order-0" in payloads[0][0]
    code, out, _ = run(
        capsys, "dump", "--files", seg, "--value-decoder", "avro", "--schemas", backup.root,
        "--format", "json",
    )  # fmt: skip
    records = [json.loads(line) for line in out.splitlines()]
    records = [r for r in records if r.get("type") == "record"]
    assert records[1]["payload"]["id"] == 1  # nested as JSON, not a string of it (issue 38)
    # The tombstone (record 5) has no payload.
    assert records[5]["payload"] is None
