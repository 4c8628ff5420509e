"""The JVM data source (jvm/, rust/jni/): the same queries through it and through the Python
data source give equal tables, in local mode and with separate executor processes, typed keys
and values (Avro, Protobuf, JSON Schema) included; pruning and pushdown read less; typed
columns can be written by Spark to Parquet and ORC; bad input fails the query with the core's
message and leaves the JVM up; a session whose Python cannot start reads typed records.

Each group runs in a process of its own (tests/spark_jvm_job.py): the jar is on a JVM's
classpath from its start, and there ``format("kafkalog")`` is the JVM source."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jvm_crash
import pytest

import kafkalog
import kafkalog.spark
from kafkalog.errors import KafkaLogError

HERE = Path(__file__).resolve().parent
LOGS = HERE.parent / "examples" / "logs"
CORPUS = HERE / "corpus" / "segments"
# Inside examples/logs: in clicks-1's LogAppendTime batch, and inside orders-1's transactions.
T1 = 1704067210000
T2 = 1704153600020

pytestmark = pytest.mark.filterwarnings("ignore:.*index not used")


def _job(master: str, mode: str, args: list[dict] | dict, python: str = sys.executable) -> dict:
    """Runs tests/spark_jvm_job.py; ``python``: the program Spark starts its Python workers
    with (the driver is this Python)."""
    env = {**os.environ, "PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": sys.executable}
    crashes = jvm_crash.new_dir()
    done = subprocess.run(
        [sys.executable, str(HERE / "spark_jvm_job.py"), master, mode, json.dumps(args)],
        capture_output=True,
        text=True,
        env=jvm_crash.env(crashes, env),
        timeout=900,
    )
    jvm_crash.check(crashes)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _corpus_partitions() -> list[str]:
    """Every partition directory of the real-bytes corpus (internal topics included)."""
    dirs = sorted({str(p.parent) for p in CORPUS.rglob("*.log")})
    assert len(dirs) > 10
    return dirs


# --------------------------------------------------------------------------------------------
# Typed keys and values: backups framed by Confluent's serializers, every Avro logical type
# --------------------------------------------------------------------------------------------

#: An Avro record of every logical type (and the types Spark cannot write as they are: a time,
#: a decimal beyond 38 digits, a duration). A record without fields and a field of type
#: `null` are left out: the core's Avro decoder reads neither yet (arrow-avro builds no empty
#: struct, and no null child of a struct); rust/spark/shapes.rs's tests cover their shapes.
TYPES = {
    "type": "record",
    "name": "Types",
    "namespace": "t",
    "fields": [
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ts_ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
        {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "lts_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "lts_ns", "type": {"type": "long", "logicalType": "local-timestamp-nanos"}},
        {
            "name": "dec",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 4},
        },
        {
            "name": "dec_fixed",
            "type": {
                "type": "fixed",
                "name": "D8",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 2,
            },
        },
        {
            "name": "dec_big",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2},
        },
        {"name": "id_s", "type": {"type": "string", "logicalType": "uuid"}},
        {
            "name": "id_f",
            "type": {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"},
        },
        {
            "name": "span",
            "type": {"type": "fixed", "name": "Dur", "size": 12, "logicalType": "duration"},
        },
        {"name": "status", "type": {"type": "enum", "name": "S", "symbols": ["A", "B"]}},
        {"name": "opt_time", "type": ["null", {"type": "int", "logicalType": "time-millis"}]},
        {
            "name": "times",
            "type": {"type": "array", "items": {"type": "long", "logicalType": "time-micros"}},
        },
        {
            "name": "stamps",
            "type": {"type": "map", "values": {"type": "long", "logicalType": "timestamp-nanos"}},
        },
        {"name": "either", "type": ["int", "string"]},
    ],
}

#: What Spark gets of each field: the nearest type it can write where its own would not do.
TYPES_IN_SPARK = (
    "struct<day:date,t_ms:int,t_us:bigint,ts_ms:timestamp,ts_us:timestamp,ts_ns:timestamp,"
    "lts_ms:timestamp_ntz,lts_us:timestamp_ntz,lts_ns:timestamp_ntz,dec:decimal(20,4),"
    "dec_fixed:decimal(18,2),dec_big:string,id_s:string,id_f:binary,span:binary,"
    "status:string,"
    "opt_time:int,times:array<bigint>,stamps:map<string,timestamp>,"
    "either:struct<member0:int,member1:string>>"
)


def _physical(schema):
    """An Avro schema without its logical types (fastavro then writes the numbers given)."""
    if isinstance(schema, dict):
        return {k: _physical(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_physical(s) for s in schema]
    return schema


def _unscaled(n: int, size: int | None = None) -> bytes:
    width = size or max(1, (n.bit_length() + 8) // 8)
    return n.to_bytes(width, "big", signed=True)


def _types_backup(root: Path) -> None:
    """``types-0`` of six TYPES values framed as Confluent's serializer frames them (magic 0,
    id 1), and ``_schemas-0`` registering TYPES as ``types-value``."""
    import io

    import fastavro
    from values_fixtures import schema_key, schema_value, write_partition

    writer = fastavro.parse_schema(_physical(TYPES))
    values = []
    for i in range(6):
        sign = -1 if i % 2 else 1
        record = {
            "day": sign * i * 400,
            "t_ms": i * 3_600_123,
            "t_us": i * 3_600_123_456,
            "ts_ms": sign * i * 1_700_000_000_123,
            "ts_us": sign * i * 1_700_000_000_123_456,
            # Nanoseconds floored to Spark's microseconds. (Not in the second before the epoch:
            # Spark 4.3 writes timestamp_micros(-1) to ORC and reads back
            # 1970-01-01 00:00:00.999999, a value of its own or of ours alike.)
            "ts_ns": sign * i * 1_700_000_000_123_456_789 + 7,
            "lts_ms": i * 86_400_001,
            "lts_us": sign * i * 86_400_000_001,
            "lts_ns": i * 86_400_000_000_001,
            "dec": _unscaled(sign * i * 123_456_789_012),
            "dec_fixed": _unscaled(sign * i * 10**15 + i, 8),
            "dec_big": _unscaled(sign * (10**39 - i)),
            "id_s": f"{i:08x}-0000-4000-8000-{i:012x}",
            "id_f": bytes(range(i, i + 16)),
            "span": (i).to_bytes(4, "little")
            + (2 * i).to_bytes(4, "little")
            + (3000 * i).to_bytes(4, "little"),
            "status": "AB"[i % 2],
            "opt_time": None if i % 3 == 0 else i * 1000,
            "times": [i * 1_000_000 + k for k in range(i % 3)],
            "stamps": {f"k{k}": k * 10**12 + i for k in range(i % 2 + 1)},
            "either": i if i % 2 else f"s{i}",
        }
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, writer, record)
        values.append((f"k{i}".encode(), b"\x00\x00\x00\x00\x01" + buf.getvalue()))
    write_partition(root / "types-0", values)
    write_partition(
        root / "_schemas-0",
        [(schema_key("types-value", 1), schema_value("types-value", 1, 1, json.dumps(TYPES)))],
    )


def _fixture_backup(root: Path, kind: str) -> None:
    """``orders-0`` of the Protobuf or JSON Schema values tests/values/make_fixtures.py made
    with confluent-kafka's serializers, and ``_schemas-0`` registering their schemas (and the
    schemas they reference) as versions of ``orders-value``."""
    from values_fixtures import schema_key, schema_value, write_partition

    fixtures = json.loads((HERE / "values" / kind / "fixtures.json").read_text())
    schema_type = {"protobuf": "PROTOBUF", "json": "JSON"}[kind]
    records = []
    refs: dict[str, str] = {}
    for schema_id in sorted(fixtures["schemas"], key=int):
        for name, text in fixtures["schemas"][schema_id]["references"] or []:
            refs[name] = text
    for k, (name, text) in enumerate(sorted(refs.items())):
        records.append(
            (schema_key(name, 1), schema_value(name, 1, 1000 + k, text, schema_type=schema_type))
        )
    for version, schema_id in enumerate(sorted(fixtures["schemas"], key=int), 1):
        s = fixtures["schemas"][schema_id]
        references = [
            {"name": name, "subject": name, "version": 1} for name, _ in s["references"] or []
        ]
        records.append(
            (
                schema_key("orders-value", version),
                schema_value(
                    "orders-value",
                    version,
                    int(schema_id),
                    s["schema"],
                    schema_type=schema_type,
                    references=references,
                ),
            )
        )
    write_partition(root / "_schemas-0", records)
    write_partition(
        root / "orders-0", [(None, bytes.fromhex(c["framed"])) for c in fixtures["cases"]]
    )


def _hostile_backup(root: Path, registry: Path) -> None:
    """``orders-0`` of hostile values: random bytes after a valid framing (the id of the
    backup's first schema), truncations and huge lengths, against a copy of ``registry``."""
    import random

    from values_fixtures import write_partition

    rng = random.Random(37)
    prefix = b"\x00\x00\x00\x00\x01"
    values = [prefix + rng.randbytes(rng.randrange(0, 64)) for _ in range(300)]
    values += [prefix + b"\xff" * 10 + b"\x01", prefix, b"\x00", b"\x00\x7f\xff\xff\xff\x02"]
    write_partition(root / "orders-0", [(None, v) for v in values])
    shutil.copytree(registry / "_schemas-0", root / "_schemas-0")


@pytest.fixture(scope="module")
def typed(tmp_path_factory) -> dict[str, str]:
    """Typed backups: ``avro`` (tests/test_values.py's Backup: string keys, Avro values of two
    writer versions through confluent-kafka's serializer), ``bad`` (bad values among good
    ones), ``types`` (every Avro logical type), ``protobuf``, ``json``, ``hostile``."""
    pytest.importorskip("confluent_kafka")
    from test_values import Backup, bad_backup

    root = tmp_path_factory.mktemp("typed")
    backup = Backup(root / "avro", n=30)
    bad_backup(root / "bad", backup)
    _types_backup(root / "types")
    _fixture_backup(root / "protobuf", "protobuf")
    _fixture_backup(root / "json", "json")
    _hostile_backup(root / "hostile", root / "avro")
    from test_values_protobuf import evo_backup

    evo_backup(root / "messages", "mock://spark-jvm-messages")
    names = ("avro", "bad", "types", "protobuf", "json", "hostile", "messages")
    return {name: str(root / name) for name in names}


def _typed(root: str, topic: str, value_format: str = "avro", **options: str) -> dict:
    return {
        "paths": [f"{root}/{topic}-0"],
        "options": {"valueFormat": value_format, "schemaRegistry": root, **options},
    }


def _typed_cases(t: dict[str, str]) -> list[dict]:
    avro = _typed(t["avro"], "orders", keyFormat="string")
    return [
        {"name": "typed_avro", **avro},
        {"name": "typed_headers_metadata", **_typed(t["avro"], "orders", includeHeaders="true",
                                                   batchMetadata="true")},
        {
            "name": "typed_nested_pruning",
            **avro,
            "select": ["key", "value.id", "value.ship_to.city", "value.tags", "value.attrs"],
        },
        {
            "name": "typed_aggregates",
            **avro,
            "select": ["count(*)", "sum(value.id)", "max(value.amount)", "count(value.note)"],
        },
        {"name": "typed_where", **avro, "where": "value.status = 'PAID' and offset > 3"},
        {"name": "typed_bad_null", **_typed(t["bad"], "orders", onValueError="null")},
        {"name": "typed_types", **_typed(t["types"], "types")},
        {"name": "typed_protobuf", **_typed(t["protobuf"], "orders", "protobuf",
                                           onValueError="null")},
        {"name": "typed_json", **_typed(t["json"], "orders", "json", onValueError="null")},
        # Nested pruning into the compiled decoders (fields not asked for skipped on the
        # wire): a oneof member, a list of messages' field, a map; JSON's nested properties.
        {
            "name": "typed_protobuf_pruned",
            **_typed(t["protobuf"], "orders", "protobuf", onValueError="null"),
            # Its records name two messages (issue 35): a struct of both, one pruned away.
            "select": ["value.`fixtures.Order`.id", "value.`fixtures.Order`.card",
                       "value.`fixtures.Order`.lines.qty", "value.`fixtures.Order`.counters",
                       "value_error"],
        },
        {
            "name": "typed_json_pruned",
            **_typed(t["json"], "orders", "json", onValueError="null"),
            "select": ["value.id", "value.ship_to.city", "value.lines.sku", "value_error"],
        },
        {"name": "typed_auto", **_typed(t["protobuf"], "orders", "auto", onValueError="null")},
        {"name": "typed_hostile", **_typed(t["hostile"], "orders", onValueError="null")},
        {"name": "typed_protobuf_messages", **_typed(t["messages"], "evo", "protobuf")},
    ]  # fmt: skip


TYPED_NAMES = [
    "typed_avro",
    "typed_headers_metadata",
    "typed_nested_pruning",
    "typed_aggregates",
    "typed_where",
    "typed_bad_null",
    "typed_types",
    "typed_protobuf",
    "typed_json",
    "typed_protobuf_pruned",
    "typed_json_pruned",
    "typed_auto",
    "typed_hostile",
    "typed_protobuf_messages",
]


def _cases() -> list[dict]:
    logs = [str(LOGS)]
    every = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    return [
        {"name": "everything", "paths": logs},
        {"name": "headers", "paths": logs, "options": {"includeHeaders": "true"}},
        {"name": "metadata", "paths": logs, "options": {"batchMetadata": "true"}},
        {"name": "corpus", "paths": _corpus_partitions(), "options": {"includeHeaders": "true"}},
        {
            "name": "corpus_small_items",
            "paths": _corpus_partitions(),
            "options": {"targetBytes": "4096", "failOnDataLoss": "false"},
        },
        {
            "name": "subscribe_offsets_json",
            "paths": logs,
            "options": {
                "subscribe": "orders",
                "startingOffsets": '{"orders": {"0": 1, "1": -2}}',
                "endingOffsets": '{"orders": {"0": 4, "1": -1}}',
            },
        },
        {
            "name": "read_committed",
            "paths": logs,
            "options": {"kafka.isolation.level": "read_committed", "subscribePattern": "ord.*"},
        },
        {
            "name": "timestamps",
            "paths": logs,
            "options": {
                "startingTimestamp": str(T1),
                "endingTimestamp": str(T2),
                "startingOffsetsByTimestampStrategy": "latest",
            },
        },
        {"name": "assign", "paths": logs, "options": {"assign": '{"clicks": [1], "orders": [0]}'}},
        {"name": "schema", "paths": logs, "schema": "offset long, value binary, topic string"},
        {
            "name": "split_partitions",
            "paths": logs,
            "options": {"maxRecordsPerPartition": "3", "minPartitions": "7"},
        },
        {
            "name": "pushdown_timestamp",
            "paths": logs,
            "where": f"timestamp >= timestamp_millis({T1})",
        },
        {"name": "pushdown_offsets", "paths": logs, "where": "offset > 2 and offset <= 6"},
        {
            "name": "pushdown_topic_partition",
            "paths": logs,
            "where": "topic in ('orders', 'clicks') and partition = 1",
        },
        {"name": "pushdown_reversed", "paths": logs, "where": "5 > offset and 'users' = topic"},
        {
            "name": "aggregates",
            "paths": logs,
            "select": ["sum(length(value))", "max(offset)", "count(*)", "count(key)"],
        },
        {"name": "columns", "paths": logs, "select": ["topic", "partition", "offset"]},
        {"name": "all_columns_by_name", "paths": logs, "select": every},
    ]


@pytest.fixture(scope="module")
def jar() -> str:
    try:
        return kafkalog.spark.jar()
    except KafkaLogError as e:
        pytest.fail(f"{e} (make test builds it)")


@pytest.fixture(scope="module")
def compared(jar, typed) -> dict:
    return _job("local[2]", "compare", _cases() + _typed_cases(typed))


@pytest.mark.parametrize("name", [c["name"] for c in _cases()] + TYPED_NAMES)
def test_jvm_and_python_sources_give_equal_tables(compared, name):
    result = compared[name]
    assert "error" not in result, result.get("error")
    assert result["equal"], result
    assert result["rows"] > 0


def test_the_records_name_the_protobuf_messages(compared):
    # No valueMessage: both sources give the messages the records' indexes name (issue 35).
    from test_values_protobuf import ORDER_OF_RECORDS

    assert compared["typed_protobuf_messages"]["value_fields"] == [ORDER_OF_RECORDS] * 2


def test_local_cluster_reads_the_same_rows(jar, typed):
    """Two executor processes, each loading the native library from the jar (and decoding
    typed values with the options the driver resolved)."""
    names = ("everything", "headers", "pushdown_timestamp", "typed_avro", "typed_nested_pruning")
    cases = [c for c in _cases() + _typed_cases(typed) if c["name"] in names]
    result = _job("local-cluster[2,1,1024]", "compare", cases)
    for c in cases:
        assert result[c["name"]].get("equal"), result[c["name"]]


def test_writes_go_on_through_the_python_source_and_streams_are_the_jvms(jar, tmp_path):
    """With the jar, format("kafkalog") is the JVM source for every use: writes, which it does
    not do itself, it hands to the Python source of the same name; it streams itself."""
    args = {
        "src": str(LOGS),
        "out": str(tmp_path / "out"),
        "sink": str(tmp_path / "sink"),
        "checkpoint": str(tmp_path / "checkpoint"),
    }
    got = _job("local[2]", "delegate", args)
    assert got["written_equal"] and got["written"] > 0, got
    assert got["stream_error"] is None, got["stream_error"]
    assert got["streamed"] == got["all"] > 0, got
    assert got["stream_sources"] == [f"KafkaLogStream[{LOGS}]"], got["stream_sources"]


# --------------------------------------------------------------------------------------------
# Structured Streaming: the same queries through both sources, step by step in one session
# --------------------------------------------------------------------------------------------

JVM_STREAM = "KafkaLogStream["
PY_STREAM = "PythonMicroBatchStream"


def _run(label: str, fmt: str, path: Path, checkpoint: Path, **options: str) -> dict:
    return {
        "do": "run",
        "label": label,
        "format": fmt,
        "path": str(path),
        "checkpoint": str(checkpoint),
        "options": options,
    }


def _both(label: str, a: Path, b: Path, ca: Path, cb: Path, **options: str) -> list[dict]:
    """The JVM source on ``a`` (checkpoint ``ca``), the Python source on ``b`` (``cb``)."""
    return [
        _run(f"{label}_jvm", "kafkalog", a, ca, **options),
        _run(f"{label}_py", "kafkalog_python", b, cb, **options),
    ]


def _append(parts: list[Path], n: int) -> list[dict]:
    return [{"do": "append", "path": str(p), "n": n} for p in parts]


@pytest.fixture(scope="module")
def streamed(jar, typed, tmp_path_factory) -> dict:
    """Two copies of examples/logs, ``a`` streamed by the JVM source and ``b`` by the Python
    source, with the same limits and the same appends between runs; then each source restarts
    from the other's checkpoint. Also both over examples/logs as they are, and bad options."""
    tmp = tmp_path_factory.mktemp("streams")
    a, b, ca, cb = tmp / "a", tmp / "b", tmp / "ca", tmp / "cb"
    shutil.copytree(LOGS, a)
    shutil.copytree(LOGS, b)
    earliest = {"startingOffsets": "earliest"}
    steps = [
        *_both("all", LOGS, LOGS, tmp / "c1", tmp / "c2", includeHeaders="true", **earliest),
        *_both("limited", a, b, ca, cb, maxOffsetsPerTrigger="17", **earliest),
        # Stopped; records land in a partition and a new partition appears.
        *_append([a / "orders-1", b / "orders-1"], 9),
        *_append([a / "orders-2", b / "orders-2"], 4),
        *_both("restart", a, b, ca, cb, maxOffsetsPerTrigger="5"),
        *_append([a / "clicks-0", b / "clicks-0"], 6),
        # Each source goes on from the other's checkpoint.
        *_both("crossed", b, a, cb, ca),
        *_both("again", a, b, ca, cb),  # nothing new
        # minOffsetsPerTrigger above the backlog: a wait (nothing read before maxTriggerDelay).
        *_both(
            "wait", LOGS, LOGS, tmp / "c9", tmp / "c10", minOffsetsPerTrigger="1000", **earliest
        ),
        *_both(
            "waited",
            LOGS,
            LOGS,
            tmp / "c11",
            tmp / "c12",
            minOffsetsPerTrigger="1000",
            maxTriggerDelay="0s",
            **earliest,
        ),
        # Typed values, batch after batch, by both sources.
        *_both(
            "typed",
            Path(typed["avro"]) / "orders-0",
            Path(typed["avro"]) / "orders-0",
            tmp / "c13",
            tmp / "c14",
            keyFormat="string",
            valueFormat="avro",
            schemaRegistry=typed["avro"],
            maxOffsetsPerTrigger="7",
            **earliest,
        ),
        *_both("ending", LOGS, LOGS, tmp / "c3", tmp / "c4", endingOffsets="latest"),
        *_both("delay", LOGS, LOGS, tmp / "c5", tmp / "c6", maxTriggerDelay="soon"),
        *_both("not_json", LOGS, LOGS, tmp / "c7", tmp / "c8", startingOffsets="first"),
    ]
    got = _job("local[2]", "stream", steps)
    got["checkpoints"] = {
        name: [
            f.read_text().splitlines()[-1]
            for f in sorted((c / "offsets").glob("[0-9]*"), key=lambda f: int(f.name))
        ]
        for name, c in (("jvm", ca), ("python", cb))
    }
    return got


def _equal_batches(streamed: dict, label: str) -> list[list[str]]:
    jvm, py = streamed[f"{label}_jvm"], streamed[f"{label}_py"]
    assert jvm["error"] is None and py["error"] is None, (jvm["error"], py["error"])
    assert jvm["batches"] == py["batches"], label
    return jvm["batches"]


def test_available_now_streams_what_a_batch_read_reads(streamed):
    batches = _equal_batches(streamed, "all")
    everything = kafkalog.read(LOGS).read_all().num_rows
    assert [len(b) for b in batches] == [everything]


def test_max_offsets_per_trigger_cuts_the_same_micro_batches(streamed):
    batches = _equal_batches(streamed, "limited")
    sizes = [len(b) for b in batches]
    assert len(sizes) > 4 and max(sizes) <= 17, sizes  # records: at most the offsets
    assert sum(sizes) == kafkalog.read(LOGS).read_all().num_rows


def test_a_restart_reads_the_appended_records_once(streamed):
    batches = _equal_batches(streamed, "restart")
    assert [len(b) for b in batches] == [4, 4, 5]  # 9 + 4 new, 5 offsets per trigger
    # Rows are [key, value, topic, partition, ...]: only the new records.
    assert {tuple(json.loads(r)[2:4]) for b in batches for r in b} == {("orders", 1), ("orders", 2)}


def test_a_checkpoint_of_one_source_restarts_with_the_other(streamed):
    batches = _equal_batches(streamed, "crossed")
    assert [len(b) for b in batches] == [6]
    assert _equal_batches(streamed, "again") == []
    # Both wrote the same offsets, byte for byte: Spark Kafka's JSON as Python writes it.
    jvm, py = streamed["checkpoints"]["jvm"], streamed["checkpoints"]["python"]
    # limited (8 since examples/logs has payments-0 and _schemas-0, issue 38), restart,
    # crossed; again: none
    assert jvm == py and len(jvm) == 8 + 3 + 1
    assert json.loads(jvm[-1])["orders"] == {"0": 33, "1": 8 + 9, "2": 4}


def test_min_offsets_per_trigger_waits_alike(streamed):
    # Backlog below the minimum, delay not over: no row (an empty first micro-batch, as Spark
    # runs one from the initial offsets).
    assert [len(b) for b in _equal_batches(streamed, "wait")] in ([], [0])
    everything = kafkalog.read(LOGS).read_all().num_rows
    assert [len(b) for b in _equal_batches(streamed, "waited")] == [everything]


def test_typed_values_stream_alike_in_both_sources(streamed):
    batches = _equal_batches(streamed, "typed")
    assert len(batches) == 5 and max(len(b) for b in batches) <= 7, [len(b) for b in batches]
    first = json.loads(batches[0][0])  # [key, value, topic, ...]
    assert first[0].startswith("order-") and set(first[1]) >= {"id", "customer", "amount"}


def test_the_jvm_source_streams_itself(streamed):
    for label in ("all", "limited", "restart", "crossed", "typed"):
        assert streamed[f"{label}_jvm"]["sources"][0].startswith(JVM_STREAM), streamed[
            label + "_jvm"
        ]
        assert PY_STREAM in streamed[f"{label}_py"]["sources"][0], streamed[label + "_py"]


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("ending", "ending offsets are not valid in streaming queries"),
        ("delay", "option maxTriggerDelay: not a duration such as '15m' or '30s': 'soon'"),
        ("not_json", "startingOffsets must be 'earliest', 'latest' or JSON"),
    ],
)
def test_bad_stream_options_fail_alike(streamed, label, text):
    jvm, py = streamed[f"{label}_jvm"]["error"], streamed[f"{label}_py"]["error"]
    assert py is not None and text in py, py
    # The JVM source's own message (the Python source's comes through PYTHON_DATA_SOURCE_ERROR).
    assert jvm is not None and jvm.startswith(text) and "PYTHON_DATA_SOURCE" not in jvm, jvm


def test_the_spark_suites_pass_with_the_jvm_source(jar):
    """tests/test_spark.py, tests/test_spark_kafka_source.py and tests/test_values_spark.py in
    a session with the jar (conftest's KAFKALOG_SPARK_JVM): every format("kafkalog") there is
    the JVM source, which hands typed keys and values to the Python source."""
    env = {**os.environ, "KAFKALOG_SPARK_JVM": "1"}
    suites = [
        str(HERE / name)
        for name in ("test_spark.py", "test_spark_kafka_source.py", "test_values_spark.py")
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-6000:]


def test_jar_path_and_session_helper(jar):
    assert jar.endswith("kafkalog-spark.jar") and Path(jar).is_file()
    import zipfile

    names = zipfile.ZipFile(jar).namelist()
    assert "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister" in names
    assert any(n.endswith("/libkafkalog_jni.so") for n in names)


def test_pushdown_reads_less_and_shows_in_explain(jar):
    logs = [str(LOGS)]
    one = {"targetBytes": "1"}  # one Spark partition per work item: counts what is read
    got = _job(
        "local[1]",
        "plan",
        [
            {"name": "all", "paths": logs, "options": one},
            {"name": "topic", "paths": logs, "options": one, "where": "topic = 'orders'"},
            {
                "name": "timestamp",
                "paths": logs,
                "options": one,
                "where": f"timestamp >= timestamp_millis({T2})",
            },
            {"name": "offset", "paths": logs, "options": one, "where": "offset >= 1000000"},
            {"name": "partition", "paths": logs, "options": one, "where": "partition = 1"},
        ],
    )
    full = got["all"]["partitions"]
    for name in ("topic", "timestamp", "partition"):
        assert 0 < got[name]["partitions"] < full, (name, got[name], full)
        assert "PushedPredicates=[" in got[name]["explain"], got[name]["explain"]
    assert got["offset"]["partitions"] == 0 and got["offset"]["rows"] == 0
    assert "columns=[]" in got["all"]["count_explain"]  # count(*): no column for Spark
    assert "columns=[offset]" in got["offset"]["count_explain"]


def test_input_metrics_count_the_rows_and_bytes_read(jar):
    # Spark's "Input" (stage and task pages, event logs): every row, and the bytes of the
    # segments read; a source outside Hadoop's file systems shows 0 bytes unless it counts them.
    got = _job("local[2]", "metrics", {"path": str(LOGS)})
    log_bytes = sum(p.stat().st_size for p in LOGS.rglob("*.log"))
    scans = [s for s in got["stages"] if s["input_records"] > 0]
    assert len(scans) == 2, got  # the count and the sum, each one scan stage
    for stage in scans:
        assert stage["input_records"] == got["rows"], (stage, got["rows"])
        assert stage["input_bytes"] == log_bytes, (stage, log_bytes)


@pytest.fixture
def corrupt(tmp_path) -> Path:
    """orders-0 with a flipped byte inside its second batch."""
    shutil.copytree(LOGS / "orders-0", tmp_path / "orders-0")
    log = tmp_path / "orders-0" / "00000000000000000000.log"
    positions = kafkalog.read_batches(log).read_all()["batchPosition"].to_pylist()
    data = bytearray(log.read_bytes())
    data[positions[1] + 100] ^= 0xFF
    log.write_bytes(bytes(data))
    return tmp_path / "orders-0"


def test_bad_input_fails_with_the_cores_message_and_the_jvm_stays_up(jar, corrupt, typed, tmp_path):
    alive = str(LOGS)
    empty = tmp_path / "no-registry"
    empty.mkdir()
    cases = [
        {"name": "corrupt", "paths": [str(corrupt)], "alive": alive},
        {"name": "missing", "paths": [str(tmp_path / "nowhere-0")], "alive": alive},
        {"name": "unknown_option", "paths": [alive], "options": {"startingOffset": "earliest"}},
        {"name": "bad_offsets", "paths": [alive], "options": {"startingOffsets": "first"}},
        {"name": "latest_start", "paths": [alive], "options": {"startingOffsets": "latest"}},
        {"name": "bad_schema", "paths": [alive], "schema": "offset string"},
        {
            "name": "data_loss",
            "paths": [alive],
            "options": {"subscribe": "orders", "startingOffsets": '{"orders": {"0": -2}}'},
        },
        {"name": "bad_value", **_typed(typed["bad"], "orders")},
        {"name": "hostile_values", **_typed(typed["hostile"], "orders")},
        {
            "name": "no_registry",
            "paths": [f"{typed['avro']}/orders-0"],
            "options": {"valueFormat": "avro", "schemaRegistry": str(empty)},
        },
        {"name": "bad_format", **_typed(typed["avro"], "orders", "xml")},
    ]
    got = _job("local[1]", "errors", cases)
    assert got["after"] > 0  # the same JVM read everything after the failures
    expected = {
        "corrupt": (
            "record is corrupt (stored crc = 1379684124, computed crc = 2523488637) "
            "(batch at byte position 241, offset 1)"
        ),
        "missing": "nowhere-0",
        "unknown_option": "(did you mean startingOffsets?); it takes Spark's Kafka source",
        "bad_offsets": "startingOffsets must be 'earliest', 'latest' or JSON",
        "latest_start": "startingOffsets=latest is not valid for batch queries",
        "bad_schema": "column offset string is not one kafkalog reads",
        "data_loss": "must name every partition read",
        # A value that does not decode: file, offset, topic-partition and why.
        "bad_value": "orders-0/00000000000000000000.log: value of orders-0 at offset 1 does not "
        "decode: magic byte 1",
        "hostile_values": "does not decode",
        "no_registry": "no partition of the registry's storage topic",
        "bad_format": "valueFormat must be one of binary, string, avro, protobuf, json, auto",
    }
    for name, text in expected.items():
        jvm, py = got[name]["jvm"], got[name]["python"]
        assert py is not None and text in py, (name, py)
        assert jvm is not None and text in jvm, (name, jvm)
        # The source's own exception, never the Python data source's.
        assert "KafkaLogException" in jvm and "PYTHON_DATA_SOURCE" not in jvm, (name, jvm)
    assert "ValueDecodeError" in got["bad_value"]["jvm"], got["bad_value"]["jvm"]
    # The JVM source has the options as written (PySpark lower-cases a Python source's).
    assert "source: startingOffset (did" in got["unknown_option"]["jvm"]


def test_typed_reads_are_planned_in_the_jvm_with_nested_pruning(jar, typed):
    avro = _typed(typed["avro"], "orders", keyFormat="string")
    got = _job(
        "local[1]",
        "plan",
        [
            {"name": "whole", **avro},
            {"name": "nested", **avro, "select": ["value.id", "value.ship_to.city"]},
        ],
    )
    for name in ("whole", "nested"):
        plan = got[name]["explain"]
        assert "BatchScan kafkalog[" in plan and "(Python)" not in plan, plan
    # Only the fields asked for reach Spark: the core drops the others' arrays.
    assert "read=value:struct<id:bigint,ship_to:struct<city:string>>" in got["nested"]["explain"]
    assert got["whole"]["rows"] == 31


def test_a_session_whose_python_cannot_start_reads_typed_records(jar, typed):
    """Spark's Python workers cannot start (PYSPARK_PYTHON names no program): the JVM source
    reads typed values all the same (schema, registry and decoding in the core), where the
    Python source fails."""
    case = {"name": "typed", **_typed(typed["avro"], "orders", keyFormat="string")}
    got = _job("local[1]", "nopython", {"case": case}, python="/nonexistent/python3")
    assert got["rows"] == 31 and got["sum"] == sum(range(30)), got
    assert "BatchScan kafkalog[" in got["plan"] and "(Python)" not in got["plan"], got["plan"]
    assert got["python"] is not None and "nonexistent" in got["python"], got["python"]


def test_typed_columns_carry_onward_to_parquet_and_orc(jar, typed, tmp_path):
    """Every Avro logical type (and a Protobuf and a JSON Schema record) read through either
    source is written by Spark to Parquet and ORC with its default settings, and read back
    equal; both sources give the same types and rows, and the values the fixtures hold."""
    cases = [
        {"name": "types", **_typed(typed["types"], "types")},
        {"name": "avro", **_typed(typed["avro"], "orders", keyFormat="string")},
        {"name": "protobuf", **_typed(typed["protobuf"], "orders", "protobuf",
                                      onValueError="null")},
        {"name": "json", **_typed(typed["json"], "orders", "json", onValueError="null")},
    ]  # fmt: skip
    got = _job("local[2]", "carry", {"cases": cases, "out": str(tmp_path)})
    for case in cases:
        jvm, py = got[f"{case['name']}:kafkalog"], got[f"{case['name']}:kafkalog_python"]
        for result in (jvm, py):
            assert "error" not in result, result.get("error")
            assert result["parquet"] and result["orc"], case["name"]
            if case["options"]["valueFormat"] == "avro":
                # A typed read written back with valueFormat=avro reads again the same.
                assert result["written_back"], case["name"]
        assert jvm["schema"] == py["schema"] and jvm["rows"] == py["rows"], case["name"]
    # The Protobuf and JSON Schema values (read with onValueError=null) are the values
    # Confluent's deserializers read (tests/values/make_fixtures.py), not nulls.
    fields = {
        "protobuf": ("id", "customer", "note", "status", "flag"),
        "json": ("id", "customer", "note", "paid", "coupon"),
    }
    for kind, names in fields.items():
        fixtures = json.loads((HERE / "values" / kind / "fixtures.json").read_text())
        for fmt in ("kafkalog", "kafkalog_python"):
            # By offset: [key, value, topic, partition, offset, ...], or Spark's JSON of the
            # row where a timestamp is out of Python's range (nulls left out).
            values = {}
            for row in map(json.loads, got[f"{kind}:{fmt}"]["rows"]):
                if isinstance(row, dict):
                    values[row["offset"]] = row.get("value")
                else:
                    values[row[4]] = row[1]
            assert sorted(values) == list(range(len(fixtures["cases"]))), (kind, fmt)
            for offset, fixture in enumerate(fixtures["cases"]):
                value, want = values[offset], fixture["expected"]
                if kind == "protobuf":
                    # The schema's messages, a field each: the fixtures are Orders (a payload
                    # the Order deserializer refuses is another message, or null).
                    value = (value or {}).get("fixtures.Order")
                if fixture.get("error"):
                    assert value is None, (kind, fmt, offset, value)
                    continue
                # An enum number the fixture's writer schema does not name (want: "4") is
                # named by the newest version, the read's reader schema: not compared.
                same = [n for n in names if not (n == "status" and str(want[n]).isdigit())]
                got_fields = {n: value.get(n) for n in same}
                assert got_fields == {n: want[n] for n in same}, (kind, fmt, offset)
    types = got["types:kafkalog"]
    assert f"value:{TYPES_IN_SPARK}" in types["schema"], types["schema"]
    first = json.loads(sorted(types["rows"])[0])  # [key, value, ...] of k0
    value = first[1]
    assert value["t_ms"] == 0 and value["times"] == []
    row = json.loads(sorted(types["rows"])[3])[1]  # k3: odd, so negative
    assert row["t_ms"] == 3 * 3_600_123 and row["t_us"] == 3 * 3_600_123_456
    assert (
        row["span"]
        == "b:"
        + (
            (3).to_bytes(4, "little") + (6).to_bytes(4, "little") + (9000).to_bytes(4, "little")
        ).hex()
    )
    assert row["dec_big"] == "-" + str(10**39 - 3)[:-2] + "." + str(10**39 - 3)[-2:]
    assert row["either"] == {"member0": 3, "member1": None}
