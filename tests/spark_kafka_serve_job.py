"""Spark's own Kafka source (``format("kafka")``) over ``kafkalog serve``, against
``format("kafkalog")`` on the same files: run by tests/test_serve_kafka.py in a process of its
own (its session needs the Kafka source's jars). Prints one JSON line of what it compared.

    python spark_kafka_serve_job.py BOOTSTRAP LOGDIR TOPICS_REGEX JARS CHECKPOINT_DIR
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    bootstrap, logdir, topics, jars, checkpoint = sys.argv[1:6]
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kafkalog-serve-spark-kafka")
        .config("spark.jars", jars)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    columns = ["topic", "partition", "offset", "key", "value", "timestamp", "timestampType"]

    def rows(df):  # type: ignore[no-untyped-def]
        got = (
            df.select(*columns, F.to_json(F.col("headers")).alias("headers"))
            .orderBy("topic", "partition", "offset")
            .collect()
        )
        return [
            [
                r.topic,
                r.partition,
                r.offset,
                None if r.key is None else bytes(r.key).hex(),
                None if r.value is None else bytes(r.value).hex(),
                str(r.timestamp),
                r.timestampType,
                r.headers,
            ]
            for r in got
        ]

    kafka = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribePattern", topics)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
    )
    files = (
        spark.read.format("kafkalog")
        .option("subscribePattern", topics)
        .option("includeHeaders", "true")
        .load(logdir)
    )
    batch_kafka, batch_files = rows(kafka), rows(files)
    committed = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribePattern", topics)
        .option("kafka.isolation.level", "read_committed")
        .option("includeHeaders", "true")
        .load()
    )
    committed_files = (
        spark.read.format("kafkalog")
        .option("subscribePattern", topics)
        .option("kafka.isolation.level", "read_committed")
        .option("includeHeaders", "true")
        .load(logdir)
    )
    stream = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribePattern", topics)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
    )
    query = (
        stream.writeStream.format("memory")
        .queryName("served")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    streamed = rows(spark.table("served"))
    print(
        json.dumps(
            {
                "batch_equal": batch_kafka == batch_files,
                "rows": len(batch_kafka),
                "committed_equal": rows(committed) == rows(committed_files),
                "committed_rows": committed.count(),
                "stream_equal": streamed == batch_files,
                "first_difference": next(
                    ([a, b] for a, b in zip(batch_kafka, batch_files, strict=False) if a != b), None
                ),
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main()
