"""The Spark integration (kafkalog.spark): mapInArrow decoding, split planning, the ``kafkalog``
data source (read and write), the encode transformer, and errors from executors.

One local[2] Spark session serves the whole module; pyspark's Arrow schema validation is on
and the session time zone is not UTC, so any Arrow type Spark would not take fails here."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pytest
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

import kafkalog
import kafkalog.spark as ks

LOGS = Path(__file__).resolve().parent.parent / "examples" / "logs"
INVOICE = "segments/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0"

# A missing or empty .index/.timeindex only makes a seek a scan.
pytestmark = pytest.mark.filterwarnings("ignore:.*index not used")

# Timestamps inside examples/logs: the first falls in clicks-1's LogAppendTime batch, the
# second inside orders-1's transactions.
T1 = 1704067210000
T2 = 1704153600020


@pytest.fixture(scope="session")
def arrow_udfs():
    """pyspark's mapInArrow goes through pandas_udf, which wants pandas installed."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        pytest.fail("pyspark's mapInArrow needs pandas: install pyspark[sql] (pandas >= 2.2)")


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _headers(h):
    return None if h is None else tuple((x["key"], x["value"]) for x in h)


def table_rows(table: pa.Table, *, full: bool = True, headers: bool = False) -> list[tuple]:
    """Sorted (topic, partition, offset, key, value[, timestamp µs, timestampType
    [, headers]])."""
    columns = ["topic", "partition", "offset", "key", "value"]
    out = list(zip(*(table[c].to_pylist() for c in columns), strict=True))
    if full:
        ts = table["timestamp"].cast(pa.int64()).to_pylist()
        types = table["timestampType"].to_pylist()
        out = [r + extra for r, extra in zip(out, zip(ts, types, strict=True), strict=True)]
    if headers:
        hs = [_headers(h) for h in table["headers"].to_pylist()]
        out = [r + (h,) for r, h in zip(out, hs, strict=True)]
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


def df_rows(df, *, full: bool = True, headers: bool = False) -> list[tuple]:
    """The same from a Spark DataFrame (timestamps as epoch µs, whatever the session zone)."""
    cols = ["topic", "partition", "offset", "key", "value"]
    if full:
        cols += ["unix_micros(timestamp) AS timestamp", "timestampType"]
    if headers:
        cols += ["headers"]
    out = []
    for r in df.selectExpr(*cols).collect():
        row = (r.topic, r.partition, r.offset, bytes_or_none(r.key), bytes_or_none(r.value))
        if full:
            row += (r.timestamp, r.timestampType)
        if headers:
            row += (
                None
                if r.headers is None
                else tuple((h.key, bytes_or_none(h.value)) for h in r.headers),
            )
        out.append(row)
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


def bytes_or_none(v):
    return None if v is None else bytes(v)


def read_all(path, **options) -> pa.Table:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
        return kafkalog.read(path, **options).read_all()


def offsets_by_partition(rows) -> dict[tuple[str, int], list[int]]:
    out: dict[tuple[str, int], list[int]] = {}
    for r in rows:
        out.setdefault((r[0], r[1]), []).append(r[2])
    return out


def time_oracle(paths, start_ms: int | None, end_ms: int | None) -> list[tuple]:
    """Spark's Kafka source's time bounds, computed from the records alone: per partition,
    from the first offset whose timestamp is at or after the start, to before the first at or
    after the end. As Kafka's ListOffsets, control records (transaction markers) count."""
    paths = paths if isinstance(paths, list) else [paths]
    table = pa.concat_tables(
        [read_all(p, include_control=True, columns=[*kafkalog.COLUMNS, "isControl"]) for p in paths]
    )
    every = table_rows(table)
    control = {
        r[:3]
        for r in table_rows(table.filter(table["isControl"]))  # to leave out of the result
    }
    out = []
    for tp in offsets_by_partition(every):
        recs = [r for r in every if (r[0], r[1]) == tp]
        lo = hi = None
        if start_ms is not None:
            hits = [r[2] for r in recs if r[5] is not None and r[5] >= start_ms * 1000]
            if not hits:
                continue
            lo = min(hits)
        if end_ms is not None:
            hits = [r[2] for r in recs if r[5] is not None and r[5] >= end_ms * 1000]
            hi = min(hits) if hits else None
        out += [
            r
            for r in recs
            if (lo is None or r[2] >= lo) and (hi is None or r[2] < hi) and r[:3] not in control
        ]
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


def decode_here(d, rows: list[dict]) -> pa.Table:
    """Run a decoder in this process, as mapInArrow would on an executor."""
    out = list(d(iter([pa.RecordBatch.from_pylist(rows)])))
    for b in out:
        assert b.schema.equals(d.target)
    return pa.Table.from_batches(out, schema=d.target)


def item_rows(items) -> list[dict]:
    return [
        dict(i._asdict(), aborted=None if i.aborted is None else [list(a) for a in i.aborted])
        for i in items
    ]


@pytest.fixture(scope="session")
def split_txn_log(tmp_path_factory) -> Path:
    """orders-1 (a committed and an aborted transaction) with each batch in its own segment:
    every transaction's marker is in another file than its records."""
    root = tmp_path_factory.mktemp("txn")
    table = read_all(LOGS / "orders-1", include_control=True, batch_metadata=True)
    segments = kafkalog.write(root / "orders-1", table, segment_bytes=100)
    assert len(segments) == 5
    return root


# --------------------------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------------------------


def test_spark_schema_is_the_kafka_sources():
    headers = ArrayType(
        StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    )
    kafka_source = StructType(
        [
            StructField("key", BinaryType()),
            StructField("value", BinaryType()),
            StructField("topic", StringType()),
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("timestamp", TimestampType()),
            StructField("timestampType", IntegerType()),
            StructField("headers", headers),
        ]
    )
    # includeHeaders=false is Spark's default: no headers column.
    assert kafkalog.SPARK_SCHEMA == StructType(kafka_source.fields[:7])
    assert ks.spark_schema(include_headers=True) == kafka_source
    assert kafkalog.SPARK_SCHEMA is ks.SPARK_SCHEMA
    assert kafkalog.decode is ks.decode


@pytest.mark.parametrize("batch_metadata", [False, True])
def test_decoded_batches_have_pysparks_arrow_types(batch_metadata):
    d = ks.decoder(batch_metadata=batch_metadata)
    expected = to_arrow_schema(d.schema, timezone="UTC")
    assert ks.arrow_schema(batch_metadata=batch_metadata).equals(expected)
    table = decode_here(d, [{"path": str(LOGS)}])
    assert table.num_rows == 101  # examples/logs, with payments-0 and _schemas-0 (issue 38)
    assert table.schema.equals(expected)  # names, types, nullability, list item names
    # kafkalog's own schema differs (non-null offset): decode must have converted.
    assert not kafkalog.schema(batch_metadata=batch_metadata).equals(expected)


# --------------------------------------------------------------------------------------------
# mapInArrow decoding
# --------------------------------------------------------------------------------------------


def test_decode_log_dir_equals_read(spark, arrow_udfs):
    paths = spark.createDataFrame([(str(LOGS),)], "path string")
    df = paths.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)
    assert df_rows(df) == table_rows(read_all(LOGS))


def test_decode_files_with_overrides_and_metadata(spark, arrow_udfs):
    files = sorted(str(p) for p in LOGS.rglob("*.log"))
    rows = [(f, "renamed", 9) for f in files]
    d = ks.decoder(batch_metadata=True)
    df = spark.createDataFrame(rows, "path string, topic string, partition int").mapInArrow(
        d, d.schema
    )
    got = df.groupBy("topic", "partition").count().collect()
    assert [(r.topic, r.partition, r["count"]) for r in got] == [("renamed", 9, 101)]
    codecs = {r.compression for r in df.select("compression").distinct().collect()}
    assert codecs == {"none", "gzip", "snappy", "lz4", "zstd"}
    assert {r.magic for r in df.select("magic").distinct().collect()} == {0, 1, 2}


def test_decode_binary_file_content(spark, arrow_udfs):
    files = (
        spark.read.format("binaryFile")
        .option("pathGlobFilter", "*.log")
        .option("recursiveFileLookup", "true")
        .load(str(LOGS))
    )
    assert files.first().path.startswith("file:")
    df = files.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)
    # Spark's file sources leave out paths whose names start with "_" (as hidden, like
    # _SUCCESS): examples/logs' _schemas-0 (issue 38) is not among the files.
    every = read_all(LOGS)
    shown = every.filter(pc.not_equal(every["topic"], "_schemas"))
    assert df_rows(df) == table_rows(shown)


def test_split_plan_equals_whole_read(spark, arrow_udfs, corpus):
    invoice = corpus / INVOICE
    items = ks.plan(invoice, target_bytes=64 << 10)
    assert len(items) >= 15
    # Items tile every file, and every cut is a batch boundary.
    for log in sorted(invoice.glob("*.log")):
        mine = [i for i in items if i.path == str(log)]
        assert mine[0].start == 0 and mine[-1].end is None
        assert all(a.end == b.start for a, b in zip(mine, mine[1:], strict=False))
        starts = set(kafkalog.read_batches(log).read_all()["batchPosition"].to_pylist())
        assert {i.start for i in mine} <= starts
        assert sum(i.size for i in mine) == log.stat().st_size
    assert any(i.start > 0 for i in items)

    expected = table_rows(read_all(invoice), full=False)
    df = ks.plan_df(spark, str(invoice), target_bytes=64 << 10)
    assert df.count() == len(items)
    decoded = df.repartition(4).mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)
    assert df_rows(decoded, full=False) == expected

    # The same items through pyarrow.fs (how s3://, gs://, hdfs:// paths are read): byte
    # ranges fetched with read_at and decoded from memory.
    uri_items = ks.plan_df(spark, invoice.as_uri(), target_bytes=64 << 10)
    assert uri_items.first().path.startswith("file:///")
    d = ks.decoder(filesystem=pafs.LocalFileSystem())
    assert df_rows(uri_items.mapInArrow(d, d.schema), full=False) == expected


# --------------------------------------------------------------------------------------------
# The data source
# --------------------------------------------------------------------------------------------


def test_data_source_reads_like_read(spark):
    df = spark.read.format("kafkalog").load(str(LOGS))
    assert df.schema == kafkalog.SPARK_SCHEMA
    assert df_rows(df) == table_rows(read_all(LOGS))
    # One Spark partition per work item when they are small enough to cut: each segment is
    # cut at its offset index's entries.
    many = spark.read.format("kafkalog").option("targetBytes", 1).load(str(LOGS))
    assert many.rdd.getNumPartitions() == len(ks.plan(LOGS, target_bytes=1)) >= 7
    assert df_rows(many) == df_rows(df)


def test_data_source_paths_uris_globs_and_schemas(spark):
    orders = spark.read.format("kafkalog").load(str(LOGS / "orders-*"))
    assert {(r.topic, r.partition) for r in orders.select("topic", "partition").collect()} == {
        ("orders", 0),
        ("orders", 1),
    }
    uri = spark.read.format("kafkalog").load(LOGS.as_uri())
    assert uri.count() == 101
    two = spark.read.format("kafkalog").load([str(LOGS / "users-0"), str(LOGS / "clicks-1")])
    assert two.count() == 8 + 15
    one_file = spark.read.format("kafkalog").load(
        str(LOGS / "orders-0" / "00000000000000000015.log")
    )
    assert [r.offset for r in one_file.select("offset").collect()] == list(range(15, 33))

    with_headers = spark.read.format("kafkalog").option("includeHeaders", "true").load(str(LOGS))
    assert with_headers.columns == list(kafkalog.COLUMNS)
    assert df_rows(with_headers, headers=True) == table_rows(read_all(LOGS), headers=True)
    meta = spark.read.format("kafkalog").option("batchMetadata", "true").load(str(LOGS))
    assert meta.columns == list(ks.SPARK_COLUMNS + kafkalog.METADATA_COLUMNS)
    assert meta.filter("isTransactional").count() == 5  # orders-1: 3 committed, 2 aborted
    picked = spark.read.format("kafkalog").schema("offset long, value binary").load(str(LOGS))
    assert picked.columns == ["offset", "value"] and picked.count() == 101


def test_data_source_offset_bounds_and_topic_filters(spark):
    starting = '{"orders": {"0": 5, "1": -2}, "users": {"0": -2}}'
    ending = '{"orders": {"0": 20, "1": -1}, "users": {"0": -1}}'
    df = (
        spark.read.format("kafkalog")
        .option("subscribe", "orders,users")
        .option("startingOffsets", starting)
        .option("endingOffsets", ending)
        .load(str(LOGS))
    )
    got = offsets_by_partition(df_rows(df, full=False))
    assert got == {
        ("orders", 0): list(range(5, 20)),
        ("orders", 1): [0, 1, 2, 4, 5, 7],
        ("users", 0): read_all(LOGS / "users-0")["offset"].to_pylist(),  # compacted: gaps
    }
    # A split read with bounds reads the same (segments below the start are not read).
    split = (
        spark.read.format("kafkalog")
        .option("targetBytes", 1)
        .option("subscribe", "orders,users")
        .option("startingOffsets", starting)
        .option("endingOffsets", ending)
        .load(str(LOGS))
    )
    assert offsets_by_partition(df_rows(split, full=False)) == got

    pattern = (
        spark.read.format("kafkalog")
        .option("subscribePattern", "c.*")
        .option("partitions", "1")
        .load(str(LOGS))
    )
    assert {(r.topic, r.partition) for r in pattern.select("topic", "partition").collect()} == {
        ("clicks", 1)
    }
    assign = spark.read.format("kafkalog").option("assign", '{"events": [0]}').load(str(LOGS))
    assert assign.count() == 12


def test_data_source_rejects_bad_bounds(spark):
    def reader():
        return spark.read.format("kafkalog").option("subscribe", "orders")

    with pytest.raises(Exception, match="orders-7"):
        reader().option("startingOffsets", '{"orders": {"7": 1}}').load(str(LOGS)).count()
    with pytest.raises(Exception, match=r"orders-0 is latest \(-1\)"):
        reader().option("startingOffsets", '{"orders": {"0": -1, "1": -2}}').load(str(LOGS)).count()
    # As Spark's Kafka source: specific offsets must name every partition read.
    with pytest.raises(Exception, match="missing orders-1"):
        reader().option("startingOffsets", '{"orders": {"0": 3}}').load(str(LOGS)).count()
    with pytest.raises(Exception, match="not valid for batch"):
        reader().option("startingOffsets", "latest").load(str(LOGS)).count()
    # The JVM source names the option as written; PySpark lower-cases a Python source's options.
    with pytest.raises(Exception, match=r"(startingOffset|startingoffset) \(did you mean"):
        spark.read.format("kafkalog").option("startingOffset", "x").load(str(LOGS)).count()


def test_data_source_time_bounds(spark):
    expected = time_oracle(LOGS, T1, T2)
    assert 0 < len(expected) < 101
    df = (
        spark.read.format("kafkalog")
        .option("startingTimestamp", str(T1))
        .option("endingTimestamp", str(T2))
        .option("startingOffsetsByTimestampStrategy", "latest")
        .load(str(LOGS))
    )
    assert df_rows(df) == expected
    # Spark's default strategy: a partition with no record at or after the start fails.
    with pytest.raises(Exception, match="no record of .* has a timestamp at or after"):
        spark.read.format("kafkalog").option("startingTimestamp", str(T1)).load(str(LOGS)).count()
    # Per partition, as startingOffsetsByTimestamp (naming every partition, as Spark wants).
    # clicks-0 is magic 0, without timestamps: no offset has one at or after 0, so under the
    # "latest" strategy it starts at its end.
    by_partition = (
        spark.read.format("kafkalog")
        .option("startingOffsetsByTimestamp", f'{{"clicks": {{"0": 0, "1": {T1}}}}}')
        .option("startingOffsetsByTimestampStrategy", "latest")
        .load(str(LOGS / "clicks-*"))
    )
    got = offsets_by_partition(df_rows(by_partition, full=False))
    assert ("clicks", 0) not in got
    assert got[("clicks", 1)] == [o for (t, p, o, *_) in expected if (t, p) == ("clicks", 1)]


def test_data_source_isolation_levels(spark, split_txn_log):
    def offsets(path, level, **options):
        reader = spark.read.format("kafkalog").option("isolationLevel", level)
        for k, v in options.items():
            reader = reader.option(k, v)
        return sorted(r.offset for r in reader.load(str(path)).select("offset").collect())

    assert offsets(LOGS / "orders-1", "read_uncommitted") == [0, 1, 2, 4, 5, 7]
    assert offsets(LOGS / "orders-1", "read_committed") == [0, 1, 2, 7]
    # Markers in other files than their records, each file its own Spark partition.
    assert offsets(split_txn_log, "read_committed", targetBytes="1") == [0, 1, 2, 7]
    assert offsets(split_txn_log, "read_uncommitted", targetBytes="1") == [0, 1, 2, 4, 5, 7]


def test_plan_leaves_out_items_outside_offset_bounds(corpus):
    invoice = corpus / INVOICE
    every = ks.plan(invoice, target_bytes=64 << 10)
    held = {
        (i.path, i.start): set(decode_here(ks.decoder(), item_rows([i]))["offset"].to_pylist())
        for i in every
    }
    assert sorted(o for offsets in held.values() for o in offsets) == list(range(100294))
    # Within a segment, across segments, at a segment's base, at the ends.
    for start, end in [(5000, 9000), (0, 10), (30626, 30700), (60000, 61000), (100000, 100294)]:
        items = ks.plan(invoice, target_bytes=64 << 10, start_offset=start, end_offset=end)
        kept = {(i.path, i.start) for i in items}
        assert len(kept) < len(every) / 2
        # Only items without an offset in bounds are left out.
        for key, offsets in held.items():
            if key not in kept:
                assert not any(start <= o < end for o in offsets), (start, end, key)
        got = decode_here(ks.decoder(), item_rows(items))
        assert sorted(got["offset"].to_pylist()) == list(range(start, end))


@pytest.mark.parametrize(
    "bounds",
    [
        {"start_offset": 3, "end_offset": 12},
        {"start_timestamp": T1},
        {"end_timestamp": T2},
        {"start_timestamp": T1, "end_timestamp": T2, "isolation_level": "read_committed"},
        {"isolation_level": "read_committed"},
    ],
)
def test_native_bounds_agree(bounds):
    """kafkalog.read's own bounds, the planned split items and the decoder's pass-through read
    the same records."""
    native = table_rows(read_all(LOGS, **bounds))
    items = ks.plan(LOGS, target_bytes=1, **bounds)
    assert table_rows(decode_here(ks.decoder(), item_rows(items))) == native
    assert table_rows(decode_here(ks.decoder(**bounds), [{"path": str(LOGS)}])) == native
    if "start_offset" not in bounds and "isolation_level" not in bounds:
        start, end = bounds.get("start_timestamp"), bounds.get("end_timestamp")
        assert native == time_oracle(LOGS, start, end)


def test_native_bounds_through_spark(spark, arrow_udfs):
    options = {
        "startingTimestamp": str(T1),
        "startingOffsetsByTimestampStrategy": "latest",
        "kafka.isolation.level": "read_committed",
    }
    df = spark.read.format("kafkalog").options(**options).load(str(LOGS))
    expected = table_rows(read_all(LOGS, start_timestamp=T1, isolation_level="read_committed"))
    assert df_rows(df) == expected
    d = ks.decoder(start_timestamp=T1, isolation_level="read_committed")
    paths = spark.createDataFrame([(str(LOGS),)], "path string")
    assert df_rows(paths.mapInArrow(d, d.schema)) == expected


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _written_equal(out: Path, source: pa.Table):
    """What was written reads back as the source: same records, offsets, timestamps and
    headers (magic 2 has no "no headers", and no LogAppendTime without the metadata)."""

    def norm(rows):
        return [r[:6] for r in rows]

    assert norm(table_rows(read_all(out))) == norm(table_rows(source))


def test_data_source_writer_round_trip(spark, tmp_path):
    out = tmp_path / "out"
    df = spark.read.format("kafkalog").option("targetBytes", 1).load(str(LOGS))
    ks.write(df, out, compression="zstd", segment_bytes=1024, batch_records=4)
    assert sorted(p.name for p in out.iterdir()) == [
        "_schemas-0",
        "clicks-0",
        "clicks-1",
        "events-0",
        "orders-0",
        "orders-1",
        "payments-0",
        "users-0",
    ]
    _written_equal(out, read_all(LOGS))
    batches = kafkalog.read_batches(out).read_all()
    assert set(batches["compression"].to_pylist()) == {"zstd"}
    assert len(list((out / "orders-0").glob("*.log"))) > 1  # segment_bytes rolled
    # And back through the data source.
    assert spark.read.format("kafkalog").load(str(out)).count() == 101

    # Append continues partitions that are there (the next offsets); overwrite replaces the
    # ones written only.
    before = read_all(out / "users-0")["offset"].to_pylist()
    ks.write(df.filter("topic = 'users'").limit(2), out)
    offsets = read_all(out / "users-0")["offset"].to_pylist()
    assert offsets[: len(before)] == before
    # The first record appended gets the log end offset; the gap between the two rows'
    # offsets (users is compacted) is kept, as their batch holds them.
    appended = offsets[len(before) :]
    assert len(appended) == 2 and appended[0] == before[-1] + 1 and appended[1] > appended[0]
    ks.write(df.filter("topic = 'users'").limit(3), out, mode="overwrite")
    assert read_all(out / "users-0").num_rows == 3
    assert read_all(out / "orders-0").num_rows == 33
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging left


def _readme_spark_write() -> str:
    """The README's ``df.write.format("kafkalog")`` line, as written there."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    (line,) = [x for x in readme.splitlines() if x.startswith('df.write.format("kafkalog")')]
    return line.split("#")[0].strip()


def test_data_source_write_modes_as_spark_means_them(spark, tmp_path):
    out = tmp_path / "restore" / "kafka-logs"
    # orders-0 in several Spark partitions: several tasks write pieces of orders-0.
    df = spark.read.format("kafkalog").option("targetBytes", 1).load(str(LOGS / "orders-0"))
    assert df.rdd.getNumPartitions() >= 2
    source = read_all(LOGS / "orders-0")
    line = _readme_spark_write().replace('"/restore/kafka-logs"', "out")
    exec(line, {"df": df, "out": str(out)})  # the README's example, as written there
    written = read_all(out / "orders-0")
    assert written["offset"].to_pylist() == source["offset"].to_pylist()
    assert written["value"].to_pylist() == source["value"].to_pylist()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging left
    # append again: the same records after them, offsets continuing.
    df.write.format("kafkalog").mode("append").save(str(out))
    again = read_all(out / "orders-0")
    n, end = source.num_rows, source["offset"].to_pylist()[-1] + 1
    assert again["value"].to_pylist() == source["value"].to_pylist() * 2
    assert again["offset"].to_pylist()[n:] == list(range(end, end + n))
    # overwrite: replaced.
    df.limit(2).write.format("kafkalog").mode("overwrite").save(str(out))
    assert read_all(out / "orders-0").num_rows == 2
    # Spark refuses the other modes before kafkalog is called (said so in the README).
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        df.write.format("kafkalog").save(str(tmp_path / "other"))
    # Grouped by the helper; string keys and values are written as UTF-8.
    texts = df.withColumn("key", df.key.cast("string")).withColumn("value", df.value.cast("string"))
    assert dict(texts.dtypes)["value"] == "string"
    ks.write(texts.drop("headers"), tmp_path / "texts")
    assert (
        read_all(tmp_path / "texts" / "orders-0")["value"].to_pylist()
        == source["value"].to_pylist()
    )


def test_encode_round_trip(spark, arrow_udfs, tmp_path):
    out = tmp_path / "encoded"
    df = spark.read.format("kafkalog").option("targetBytes", 1).load(str(LOGS))
    fn = ks.encode(str(out), compression="lz4", segment_bytes=4096)
    segments = df.repartition("topic", "partition").mapInArrow(fn, ks.ENCODE_SCHEMA).collect()
    assert sum(r.records for r in segments) == 101
    assert {(r.topic, r.partition) for r in segments} == {
        ("_schemas", 0),
        ("clicks", 0),
        ("clicks", 1),
        ("events", 0),
        ("orders", 0),
        ("orders", 1),
        ("payments", 0),
        ("users", 0),
    }
    assert all(Path(r.path).is_file() and r.path.startswith(str(out)) for r in segments)
    _written_equal(out, read_all(LOGS))
    assert set(kafkalog.read_batches(out).read_all()["compression"].to_pylist()) == {"lz4"}


# --------------------------------------------------------------------------------------------
# Errors from executors
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def corrupt_log(tmp_path_factory) -> tuple[Path, int]:
    """orders-0 with a flipped byte inside its second batch; returns the dir and that batch's
    position."""
    root = tmp_path_factory.mktemp("corrupt")
    shutil.copytree(LOGS / "orders-0", root / "orders-0")
    log = root / "orders-0" / "00000000000000000000.log"
    positions = kafkalog.read_batches(log).read_all()["batchPosition"].to_pylist()
    data = bytearray(log.read_bytes())
    data[positions[1] + 100] ^= 0xFF
    log.write_bytes(bytes(data))
    return log, positions[1]


def test_corrupt_file_error_names_file_and_position(spark, arrow_udfs, corrupt_log):
    log, position = corrupt_log
    with pytest.raises(Exception) as info:
        spark.read.format("kafkalog").load(str(log.parent)).collect()
    message = str(info.value)
    assert str(log) in message and f"position {position}" in message
    assert "CrcMismatchError" in message

    # From bytes in memory (binaryFile), the file and position are named all the same.
    files = spark.read.format("binaryFile").load(str(log))
    with pytest.raises(Exception) as info:
        files.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA).collect()
    message = str(info.value)
    assert str(log) in message and f"position {position}" in message

    # onCorrupt=skip reads past it.
    skipped = spark.read.format("kafkalog").option("onCorrupt", "skip").load(str(log.parent))
    assert skipped.count() == 33 - 7


def test_errors_from_byte_ranges_count_from_the_file_start(corrupt_log):
    """A split item fetched as bytes (the pyarrow.fs route) reports positions in the file."""
    log, position = corrupt_log
    d = ks.decoder(filesystem=pafs.LocalFileSystem())
    with pytest.raises(kafkalog.CrcMismatchError) as info:
        decode_here(d, [{"path": str(log), "start": position, "end": None}])
    e = info.value
    assert e.path == str(log) and e.position == position
    assert f"byte position {position}" in str(e) and str(log) in str(e)
    # The same error pickles (as Spark ships it) with its attributes.
    import pickle

    again = pickle.loads(pickle.dumps(e))
    assert (type(again), again.path, again.position) == (type(e), e.path, e.position)


def test_pyarrow_filesystem_uris(corpus, corrupt_log):
    """A non-local filesystem (pyarrow's in-memory mock://, in this process) is listed,
    globbed, split at its indexes and read by byte ranges like s3:// or hdfs:// would be."""
    from kafkalog._storage import _uri_filesystem

    fs = _uri_filesystem("mock://", "")[0]

    def upload(local: Path, remote: str):
        for f in sorted(local.iterdir()):
            fs.create_dir(remote)
            with fs.open_output_stream(f"{remote}/{f.name}") as out:
                out.write(f.read_bytes())

    for d in sorted(LOGS.iterdir()):
        upload(d, f"/logs/{d.name}")
    upload(corpus / INVOICE, "/logs/invoice-0")
    upload(corrupt_log[0].parent, "/bad/orders-0")

    items = ks.plan("mock:///logs/*-0", target_bytes=64 << 10)
    assert all(i.path.startswith("mock:///logs/") for i in items)
    assert any(i.start > 0 for i in items if "invoice" in i.path)
    assert {(i.topic, i.partition) for i in items} == {
        ("_schemas", 0),
        ("clicks", 0),
        ("events", 0),
        ("invoice", 0),
        ("orders", 0),
        ("payments", 0),
        ("users", 0),
    }
    got = decode_here(ks.decoder(), item_rows(items))
    local = pa.concat_tables(
        [
            read_all(LOGS / n)
            for n in ("_schemas-0", "clicks-0", "events-0", "orders-0", "payments-0", "users-0")
        ]
        + [read_all(corpus / INVOICE)]
    )
    assert table_rows(got, full=False) == table_rows(local, full=False)
    # Whole directories by URI, with bounds resolved from the remote bytes.
    got = decode_here(
        ks.decoder(start_timestamp=T1, isolation_level="read_committed"),
        [{"path": "mock:///logs/orders-1"}, {"path": "mock:///logs/clicks-1"}],
    )
    expected = time_oracle([LOGS / "orders-1", LOGS / "clicks-1"], T1, None)
    assert table_rows(got) == [
        r for r in expected if r[:3] not in {("orders", 1, 4), ("orders", 1, 5)}
    ]

    log, position = corrupt_log
    with pytest.raises(kafkalog.CrcMismatchError) as info:
        decode_here(ks.decoder(), [{"path": "mock:///bad/orders-0"}])
    uri = "mock:///bad/orders-0/00000000000000000000.log"
    assert info.value.path == uri and info.value.position == position
    assert uri in str(info.value) and f"position {position}" in str(info.value)


def test_no_rows_and_missing_paths(spark, tmp_path):
    empty = spark.read.format("kafkalog").option("topics", "nope").load(str(LOGS))
    assert empty.count() == 0
    with pytest.raises(Exception, match="no-such"):
        spark.read.format("kafkalog").load(str(tmp_path / "no-such")).count()
    assert ks.plan(LOGS, start_timestamp=4102444800000) == []  # 2100: nothing after it
    assert pc.sum(pa.array([i.size for i in ks.plan(LOGS)])).as_py() == sum(
        p.stat().st_size for p in LOGS.rglob("*.log")
    )
