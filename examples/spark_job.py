"""A Spark job on a Kafka log directory, through kafkalog's Spark data source.

    python examples/spark_job.py examples/logs

Starts Spark in local mode, reads every partition of the log directory (each message format,
v0, v1 and v2, and each compression) with ``spark.read.format("kafkalog")``, and prints per
topic-partition: records, offsets, times, formats and codecs; then a few records, a read with
Spark Kafka-source options (starting offsets, read_committed), typed values (Avro records of
two schema versions decoded with the Schema Registry's storage topic in the same directory),
the same files decoded with ``mapInArrow``, a round trip (the DataFrame written back as a
Kafka log and read again), and a Structured Streaming query that picks up a segment as a
broker rolls one.

No registration: the ``kafkalog`` format is found by name wherever kafkalog is installed.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time


def main(path: str) -> int:
    # Spark's Python workers must run this interpreter (the one with kafkalog installed).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    import pyarrow as pa
    from pyspark.sql import SparkSession, Window
    from pyspark.sql import functions as F

    import kafkalog
    import kafkalog.errors
    import kafkalog.spark
    import kafkalog.spark.jvm

    started = time.monotonic()
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kafkalog-spark-job")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.log.level", "ERROR")
    )
    # With kafkalog's jar (wheels ship it; `make demo` builds it) the session starts with the
    # JVM data source, and format("kafkalog") reads inside the JVM; without it, the same name
    # is the Python data source.
    try:
        spark = kafkalog.spark.jvm.session(builder)
    except kafkalog.errors.KafkaLogError:
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source = "JVM" if kafkalog.spark.jvm.in_session(spark) else "Python"
    print(
        f"Spark {spark.version} (local[2]) up in {time.monotonic() - started:.1f}s; "
        f'format("kafkalog") is the {source} data source\n'
    )

    # 1. The whole log directory, with Kafka's per-batch metadata.
    df = (
        spark.read.format("kafkalog")
        .option("includeHeaders", "true")
        .option("batchMetadata", "true")
        .load(path)
    )
    df.cache()
    total = df.count()
    print(f"== {path}: {total} records, {df.rdd.getNumPartitions()} Spark partition(s)\n")
    summary = (
        df.groupBy("topic", "partition")
        .agg(
            F.count("*").alias("records"),
            F.min("offset").alias("first"),
            F.max("offset").alias("last"),
            F.date_format(F.min("timestamp"), "yyyy-MM-dd HH:mm:ss").alias("from"),
            F.date_format(F.max("timestamp"), "yyyy-MM-dd HH:mm:ss").alias("to"),
            F.array_join(F.array_sort(F.collect_set(F.col("magic").cast("string"))), ",").alias(
                "magic"
            ),
            F.array_join(F.array_sort(F.collect_set("compression")), ",").alias("codecs"),
            F.sum(F.col("isTransactional").cast("int")).alias("txn"),
        )
        .orderBy("topic", "partition")
    )
    header = (
        f"{'topic-partition':18} {'records':>7} {'offsets':>9}  {'from':19}  {'to':19}  "
        f"{'magic':6} {'txn':>3}  codecs"
    )
    print(header)
    print("-" * len(header))
    for r in summary.collect():
        print(
            f"{r.topic + '-' + str(r.partition):18} {r.records:>7} "
            f"{str(r.first) + '..' + str(r.last):>9}  {r['from'] or '-':19}  {r.to or '-':19}  "
            f"{r.magic:6} {r.txn:>3}  {r.codecs}"
        )

    # 2. The first record of every topic-partition, as Spark's Kafka source shows records.
    print("\n== the first record of each topic-partition")
    first = (
        df.withColumn(
            "n", F.row_number().over(Window.partitionBy("topic", "partition").orderBy("offset"))
        )
        .where("n = 1")
        .orderBy("topic", "partition")
        .select(
            "topic",
            "partition",
            "offset",
            "magic",
            "compression",
            F.col("key").cast("string").alias("key"),
            # Bytes that are not text (payments' Avro) shown as dots.
            F.regexp_replace(
                F.substring(F.col("value").cast("string"), 1, 40), "[^\\x20-\\x7e]", "."
            ).alias("value"),
            F.transform("headers", lambda h: h["key"]).alias("headers"),
        )
    )
    for r in first.collect():
        where = f"{r.topic}-{r.partition}@{r.offset}"
        headers = ",".join(r.headers or []) or "-"
        print(
            f"  {where:12} v{r.magic} {r.compression:6} key={r.key!s:9} headers={headers:22} "
            f"{r.value}"
        )

    # 3. Kafka-source options: where to start, and what a read_committed consumer sees.
    print("\n== orders from offset 5 (orders-0), read_uncommitted vs read_committed")
    for level in ("read_uncommitted", "read_committed"):
        bounded = (
            spark.read.format("kafkalog")
            .option("kafka.bootstrap.servers", "ignored:9092")  # an existing job's options
            .option("subscribe", "orders")
            .option("startingOffsets", '{"orders": {"0": 5, "1": -2}}')
            .option("kafka.isolation.level", level)
            .load(path)
        )
        counts = bounded.groupBy("partition").agg(
            F.count("*").alias("n"), F.sort_array(F.collect_list("offset")).alias("offsets")
        )
        for r in counts.orderBy("partition").collect():
            shown = r.offsets if len(r.offsets) <= 8 else f"{r.offsets[:3]} .. {r.offsets[-2:]}"
            print(f"  {level:16} orders-{r.partition}: {r.n:>2} records, offsets {shown}")

    # 4. Typed values: payments-0's values are Avro records framed by Confluent's serializer
    #    (magic byte, schema id), of two versions of payments-value; the registry that knew
    #    them is its storage topic, _schemas-0, in the same directory.
    typed = (
        spark.read.format("kafkalog")
        .option("subscribe", "payments")
        .option("keyFormat", "string")
        .option("valueFormat", "avro")
        .option("schemaRegistry", path)
        .load(path)
    )
    print("\n== payments: Avro values decoded with the backup's own registry (_schemas-0)")
    print(f"   value: {typed.schema['value'].dataType.simpleString()}")
    rows = (
        typed.select("offset", "key", "value.*")
        .where("offset between 3 and 7")
        .orderBy("offset")
        .collect()
    )
    for r in rows:
        attrs = ",".join(f"{k}={v}" for k, v in sorted((r.attrs or {}).items())) or "-"
        print(
            f"   {r.offset} {r.key}  id={r.id} amount={r.amount} {r.currency} "
            f"method={r.method} attrs={attrs} at={r.at:%Y-%m-%d %H:%M:%S}"
        )
    print("   (offsets 0-4 were written with version 1, which has no method or attrs: read as")
    print("   the latest version, they take its defaults)")

    # 5. The same files as binaryFile rows, decoded with mapInArrow (needs pandas, as every
    #    pyspark Arrow UDF does).
    try:
        import pandas  # noqa: F401

        files = (
            spark.read.format("binaryFile")
            .option("pathGlobFilter", "*.log")
            .option("recursiveFileLookup", "true")
            .load(path)
        )
        decoded = files.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)
        print(
            f"\n== binaryFile rows + mapInArrow(kafkalog.decode): {decoded.count()} records "
            "(Spark's file sources pass over _schemas-0: names starting with _ are hidden to them)"
        )
    except ImportError:
        print("\n== mapInArrow skipped: pyspark's Arrow UDFs need pandas (pyspark[sql])")

    # 6. Round trip: write the records back as a Kafka log (zstd), then read that.
    key = ["topic", "partition", "offset", "key", "value"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "kafka-logs")
        kafkalog.spark.write(df.select(*kafkalog.COLUMNS), out, compression="zstd")
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
        again = (
            spark.read.format("kafkalog")
            .option("batchMetadata", "true")
            .load(out)
            .select(*key, "compression")
            .collect()
        )
        written = sorted(tuple(r[:5]) for r in again)
        same = written == sorted(tuple(r) for r in df.select(*key).collect())
        codecs = sorted({r.compression for r in again})
        print(
            f"\n== written back with df.write.format('kafkalog'): {len(again)} records, "
            f"{len(os.listdir(out))} partition dirs, {size} bytes, codecs {codecs}: "
            f"{'the same records' if same else 'DIFFERENT RECORDS'}"
        )

    # 7. Structured Streaming over a copy of the directory: everything there, at most 20
    #    offsets per micro-batch; then a new segment lands in orders-0 and the query, restarted
    #    from its checkpoint, reads exactly the new records.
    with tempfile.TemporaryDirectory() as tmp:
        logs = os.path.join(tmp, "kafka-logs")
        shutil.copytree(path, logs)
        checkpoint = os.path.join(tmp, "checkpoint")

        def run() -> list[int]:
            query = (
                spark.readStream.format("kafkalog")
                .option("subscribe", "orders")
                .option("startingOffsets", "earliest")
                .option("maxOffsetsPerTrigger", "20")
                .load(logs)
                .select("topic", "partition", "offset", "value")
                .writeStream.format("parquet")
                .option("path", os.path.join(tmp, "orders-table"))
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]

        first = run()
        print(
            f"\n== readStream of orders, availableNow, maxOffsetsPerTrigger=20: {sum(first)} "
            f"records in {len(first)} micro-batches of {', '.join(map(str, first))}"
        )
        new = pa.table(
            {
                "key": [f"k{i}".encode() for i in range(5)],
                "value": [f"late order {i}".encode() for i in range(5)],
            }
        )
        end = kafkalog.read(os.path.join(logs, "orders-0")).read_all()["offset"][-1].as_py() + 1
        staging = os.path.join(tmp, "roll", "orders-0")
        kafkalog.write(staging, new, base_offset=end)  # the segment a broker would roll
        for f in os.listdir(staging):
            shutil.move(os.path.join(staging, f), os.path.join(logs, "orders-0", f))
        again = run()
        print(
            f"   a new segment of {new.num_rows} records lands in orders-0 at offset {end}; the "
            f"query restarted from its checkpoint reads just those: {sum(again)} records"
        )

    spark.stop()
    print(f"\ndone in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "examples/logs"))
