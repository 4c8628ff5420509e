"""``kafkalog convert`` of a whole backup with typed values (issue 38, item 4), through the
command line: each topic decoded with its own subject, internal topics and the registry's
storage topic left out unless named, ``--topics`` (Kafka's consumer's pattern rule), and one file
per topic where the schemas differ."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from lake_fixtures import TypedBackup

import kafkalog
from kafkalog.cli.main import main

pytest.importorskip("confluent_kafka")

AVRO = ("--value-format", "avro")


@pytest.fixture(scope="module")
def backup(tmp_path_factory) -> TypedBackup:
    return TypedBackup(tmp_path_factory.mktemp("convert-topics"))


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def values(table, topic: str | None = None) -> list:
    rows = table.to_pylist()
    return [r["value"] for r in rows if topic is None or r["topic"] == topic]


def test_a_whole_backup_into_one_file_per_topic(capsys, backup, tmp_path):
    out = tmp_path / "out"
    code, said, err = run(
        capsys, "convert", backup.root, f"{out}/", *AVRO, "--schemas", backup.root, "--no-progress"
    )
    assert code == 0, err
    # Internal topics and the registry's storage topic are not converted.
    assert sorted(p.name for p in out.iterdir()) == [
        "clicks.parquet",
        "orders.eu.parquet",
        "orders.parquet",
    ]
    orders = pq.read_table(out / "orders.parquet")
    assert set(orders.column("topic").to_pylist()) == {"orders"}
    assert values(orders) == backup.orders["orders-0"] + backup.orders["orders-1"]
    clicks = pq.read_table(out / "clicks.parquet")
    assert values(clicks) == backup.clicks
    # One line on stdout per file written.
    assert "orders.parquet: 24 records written (parquet, " in said, said
    assert "clicks.parquet: " in said and not err


def test_one_file_when_the_topics_differ_is_an_error_saying_how(capsys, backup, tmp_path):
    code, _, err = run(capsys, "convert", backup.root, tmp_path / "all.parquet", *AVRO,
                       "--schemas", backup.root)  # fmt: skip
    assert code == 2
    assert "different key or value schemas" in err and "give a directory as OUT" in err
    assert "OUT/<topic>.parquet" in err and "--topics" in err
    assert not (tmp_path / "all.parquet").exists()


def test_topics_filter_into_one_file(capsys, backup, tmp_path):
    out = tmp_path / "orders.parquet"
    # orders and orders.eu share a schema: one file holds both, each decoded with its subject.
    code, _, err = run(capsys, "convert", backup.root, out, *AVRO, "--schemas", backup.root,
                       "--topics", "orders.*")  # fmt: skip
    assert code == 0, err
    t = pq.read_table(out)
    assert values(t, "orders.eu") == backup.orders["orders.eu-0"]
    assert values(t, "orders") == backup.orders["orders-0"] + backup.orders["orders-1"]
    # A pattern matches whole names: "orders" is not "orders.eu".
    code, _, err = run(capsys, "convert", backup.root, out, *AVRO, "--schemas", backup.root,
                       "--topics", "orders")  # fmt: skip
    assert code == 0, err
    assert set(pq.read_table(out).column("topic").to_pylist()) == {"orders"}
    # Untyped too: the filter is a read option.
    code, _, err = run(capsys, "convert", backup.root, out, "--topics", "clicks|_schemas")
    assert code == 0, err
    assert sorted(set(pq.read_table(out).column("topic").to_pylist())) == ["_schemas", "clicks"]


def test_a_named_internal_topic_is_read(capsys, backup, tmp_path):
    # Named by a pattern, __consumer_offsets is decoded as asked: with its own subject, which
    # the registry does not have; with another, its bytes are no Avro.
    code, _, err = run(capsys, "convert", backup.root, f"{tmp_path}/x/", *AVRO, "--schemas",
                       backup.root, "--topics", "__consumer_offsets|clicks")  # fmt: skip
    assert code == 2 and '"__consumer_offsets-value" is not in the registry' in err, err
    code, _, err = run(capsys, "convert", backup.root, f"{tmp_path}/y/", *AVRO, "--schemas",
                       backup.root, "--topics", "__consumer_offsets|clicks",
                       "--subject", "clicks-value", "--on-value-error", "null")  # fmt: skip
    assert code == 0, err
    bad = pq.read_table(tmp_path / "y" / "__consumer_offsets.parquet").to_pylist()
    assert bad[0]["value"] is None and "schema id" in bad[0]["value_error"]


def test_patterns_take_internal_topics_only_by_name(capsys, backup, tmp_path):
    # Kafka's consumer leaves internal topics out of a pattern subscription unless they are
    # named (exclude.internal.topics=true).
    def topics(pattern: str | None) -> set[str]:
        t = kafkalog.read(backup.root, topics=pattern, columns=["topic"]).read_all()
        return set(t.column("topic").to_pylist())

    assert topics(".*") == {"orders", "orders.eu", "clicks", "_schemas"}
    assert topics("__consumer_offsets") == {"__consumer_offsets"}
    assert topics("clicks|__consumer_offsets") == {"clicks", "__consumer_offsets"}
    assert "__consumer_offsets" in topics(None)  # a directory read without a pattern: all
    segs = kafkalog.segments(backup.root, topics="_.*")
    assert {s["topic"] for s in segs} == {"_schemas"}
    # Only internal topics matched: nothing to read, and the message says why.
    code, _, err = run(capsys, "convert", backup.root, f"{tmp_path}/o/", "--topics", "__.*")
    assert code == 1 and "it matches Kafka's internal topics __consumer_offsets" in err, err
    # A typed read of `.*` is the producers' topics: the registry's is left out unless named.
    typed = kafkalog.read(
        backup.root, value_format="avro", schemas=backup.root, topics=".*",
        value_options={"value_subject": "orders-value"}, columns=["topic"],
    ).read_all()  # fmt: skip
    assert set(typed.column("topic").to_pylist()) == {"orders", "orders.eu", "clicks"}


def test_bad_patterns_and_no_match(capsys, backup, tmp_path):
    code, _, err = run(capsys, "convert", backup.root, tmp_path / "o.parquet", "--topics", "(?=x)")
    assert code == 2 and "topics: " in err
    code, _, err = run(capsys, "convert", backup.root, f"{tmp_path}/o/", "--topics", "nothing")
    assert code == 1 and "no topic to convert" in err
    assert "of a topic matching" in err


def test_read_takes_topics(backup):
    t = kafkalog.read(backup.root, topics="orders|clicks", columns=["topic"]).read_all()
    assert sorted(set(t.column("topic").to_pylist())) == ["clicks", "orders"]
    segs = kafkalog.segments(backup.root, topics="orders")
    assert {s["topic"] for s in segs} == {"orders"} and len(segs) == 2
    with pytest.raises(kafkalog.InvalidArgumentError, match="topics"):
        kafkalog.read(backup.root, topics=["orders"])  # type: ignore[arg-type]
    # A typed read of the whole backup over one subject leaves the registry and internal
    # topics out.
    typed = kafkalog.read(
        backup.root, value_format="avro", schemas=backup.root,
        value_options={"value_subject": "orders-value"}, topics="orders.*",
    ).read_all()  # fmt: skip
    assert len(typed) == 36
