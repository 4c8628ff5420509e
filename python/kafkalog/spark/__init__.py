"""Apache Spark integration: Kafka log files as Spark DataFrames, batch and streaming, and
DataFrames as Kafka logs. Needs ``pyspark>=4.0`` (the executors need kafkalog too).

1. The data source, found by name wherever kafkalog is installed (no import, no
   registration), with Spark's Kafka source options and schema, so a job written against a
   live topic runs on files with only the format and path changed::

       df = (spark.read.format("kafkalog")
             .option("subscribe", "orders")
             .option("startingOffsets", '{"orders": {"0": 5, "1": -2}}')
             .option("kafka.isolation.level", "read_committed")
             .load("s3://bucket/kafka-logs"))
       stream = spark.readStream.format("kafkalog").option("subscribe", "orders").load(path)

2. Planned work items decoded with ``mapInArrow``::

       items = kafkalog.spark.plan_df(spark, "/backup/kafka-logs", target_bytes=64 << 20)
       df = items.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)

3. Any DataFrame with a ``path`` column (or binaryFile's ``content``) decoded with
   ``mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``.

4. The same data source inside the JVM (Java over the same core, columnar): on the
   classpath of sessions started with ``spark.jars`` set to :func:`jar`, or with
   :func:`kafkalog.spark.jvm.session`; see :mod:`~kafkalog.spark.jvm`.

And out: :func:`write` (or ``df.write.format("kafkalog")``) and :func:`encode`.

The modules, one concern each: :mod:`~kafkalog.spark.schema` (Spark and Arrow schemas),
:mod:`~kafkalog.spark.options` (the data source's options), :mod:`~kafkalog.spark.planning`
(offset ranges and work items, on the core), :mod:`~kafkalog.spark.decoding` (``mapInArrow``
decoding), :mod:`~kafkalog.spark.source` (the data source), :mod:`~kafkalog.spark.streaming`
(Structured Streaming), :mod:`~kafkalog.spark.writing` (writing),
:mod:`~kafkalog.spark.cleanup` (compaction with the offset map computed on the cluster).
"""

from __future__ import annotations

from kafkalog import planning
from kafkalog.spark import _requires  # noqa: F401  (first: says to install kafkalog[spark])
from kafkalog.spark.decoding import WORK_ITEM_SCHEMA, decode, decoder, plan_df
from kafkalog.spark.jvm import jar
from kafkalog.spark.options import DEFAULT_TARGET_BYTES
from kafkalog.spark.planning import DataLossError, plan
from kafkalog.spark.schema import (
    SPARK_ARROW_SCHEMA,
    SPARK_COLUMNS,
    SPARK_SCHEMA,
    arrow_schema,
    spark_schema,
)
from kafkalog.spark.source import KafkaLogDataSource, register
from kafkalog.spark.writing import ENCODE_SCHEMA, encode, write

#: A piece of one segment file for one task (see :func:`kafkalog.plan`).
WorkItem = planning.WorkItem

__all__ = [
    "SPARK_SCHEMA",
    "SPARK_ARROW_SCHEMA",
    "SPARK_COLUMNS",
    "WORK_ITEM_SCHEMA",
    "ENCODE_SCHEMA",
    "DEFAULT_TARGET_BYTES",
    "WorkItem",
    "DataLossError",
    "KafkaLogDataSource",
    "spark_schema",
    "arrow_schema",
    "decode",
    "decoder",
    "plan",
    "plan_df",
    "encode",
    "write",
    "register",
    "jar",
]
