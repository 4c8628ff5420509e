"""Compaction on Spark, for logs too big to scan on one machine.

The expensive part of a cleaning round, the offset map (the last offset of every key in the
dirty range), is computed across the cluster from the records the ``kafkalog`` data source
reads with ``read_committed`` (Kafka's cleaner leaves aborted transactions out of the map the
same way, and never cleans past the last stable offset). Each partition is then cleaned by one
task with that map, through the Rust core's cleaner and partition writer (atomic output), so
the result is byte for byte what :func:`kafkalog.compact` writes::

    import kafkalog.spark.cleanup
    reports = kafkalog.spark.cleanup.compact(spark, "/backup/kafka-logs", "/restore/kafka-logs",
                                             delete_retention_ms=86_400_000)

Which offsets are cleanable (first dirty and first uncleanable offset) is decided per partition
on the driver by :func:`kafkalog.cleanup.plan`, from batch headers. Kafka's rules stay in the
Rust core; this module only moves data. ``src`` and ``dst`` must be paths every executor sees
(local mode, or a shared mount).
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Unpack

import pyarrow as pa

from kafkalog import cleanup, reading
from kafkalog.types import CompactOptions, CompactReport

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["compact"]


def _partition_dirs(src: str) -> list[tuple[str, str | None, int | None]]:
    seen: dict[str, tuple[str | None, int | None]] = {}
    for seg in reading.segments(src):
        seen.setdefault(os.path.dirname(seg["path"]), (seg["topic"], seg["partition"]))
    return [(d, t, p) for d, (t, p) in seen.items()]


class PartitionReport(CompactReport):
    """:func:`kafkalog.compact`'s report for one partition, with the partition directory."""

    dir: str


def compact(
    spark: SparkSession,
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    **options: Unpack[CompactOptions],
) -> list[PartitionReport]:
    """Compact every partition under ``src`` (a log directory or a partition directory) into
    ``dst`` (a log directory: ``dst/<topic>-<partition>``), with :func:`kafkalog.compact`'s
    options. One clock (``now``, default the driver's) is used for every partition. Returns one
    report per partition (with ``dir``, the source partition directory)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from kafkalog.spark.source import register

    src, dst = os.path.abspath(os.fspath(src)), os.path.abspath(os.fspath(dst))
    if "now" not in options:
        options["now"] = int(time.time() * 1000)
    parts = _partition_dirs(src)
    plans = {d: cleanup.plan(d, **options) for d, _, _ in parts}
    to_map = [
        (t, p, d, plans[d]["first_dirty_offset"], plans[d]["first_uncleanable_offset"])
        for d, t, p in parts
        if plans[d]["cleaned"] and t is not None and p is not None
    ]
    reports: dict[str, PartitionReport] = {}
    if to_map:
        register(spark)
        bounds = spark.createDataFrame(
            to_map,
            StructType(
                [
                    StructField("topic", StringType()),
                    StructField("partition", LongType()),
                    StructField("dir", StringType()),
                    StructField("first_dirty", LongType()),
                    StructField("first_uncleanable", LongType()),
                ]
            ),
        )
        records = (
            spark.read.format("kafkalog")
            .option("kafka.isolation.level", "read_committed")
            .load(src)
            .select("topic", F.col("partition").cast("long").alias("partition"), "key", "offset")
        )
        last = (
            records.join(F.broadcast(bounds), ["topic", "partition"])
            .where(
                F.col("key").isNotNull()
                & (F.col("offset") >= F.col("first_dirty"))
                & (F.col("offset") < F.col("first_uncleanable"))
            )
            .groupBy("dir", "key")
            .agg(F.max("offset").alias("offset"))
        )

        def clean(table: pa.Table) -> pa.Table:
            d = table["dir"][0].as_py()
            out = os.path.join(dst, os.path.basename(d))
            report = cleanup.compact_with_offset_map(
                d, out, table["key"].to_pylist(), table["offset"].to_pylist(), **options
            )
            return pa.table({"dir": [d], "report": [json.dumps(PartitionReport(**report, dir=d))]})

        for row in last.groupBy("dir").applyInArrow(clean, "dir string, report string").collect():
            reports[row["dir"]] = json.loads(row["report"])
    for d, _, _ in parts:
        if d not in reports:
            # Nothing to map (nothing cleanable, or no keys in the dirty range): the cleaner
            # alone, on the driver.
            report = cleanup.compact(d, os.path.join(dst, os.path.basename(d)), **options)
            reports[d] = PartitionReport(**report, dir=d)
    return [reports[d] for d, _, _ in parts]
