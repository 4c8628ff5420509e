"""The incremental route through Spark (issue 36): Structured Streaming from the ``kafkalog``
source with a checkpoint, each micro-batch written into a Delta table by
``kafkalog.tables.foreach_batch_to_delta`` with its batch id as the application transaction's
version. A query that fails after a micro-batch reached the table but before Spark recorded
it, started again from its checkpoint, runs that micro-batch again: it is skipped, and every
record is in the table once. (Delta's and Iceberg's own Spark runtimes come from Maven, which
is not reachable here: docs/lakehouse.md.)"""

from __future__ import annotations

import pytest
from test_lakehouse import expected, rows, write_log

import kafkalog.tables

deltalake = pytest.importorskip("deltalake")
pytest.importorskip("pyspark")


def run(spark, src, checkpoint, write) -> None:
    query = (
        spark.readStream.format("kafkalog")
        .option("subscribePattern", "events")
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .option("maxOffsetsPerTrigger", "40")
        .load(str(src))
        .writeStream.foreachBatch(write)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    exc = query.exception()
    if exc is not None:
        raise exc


def test_foreach_batch_into_delta_once_per_batch(spark, tmp_path):
    src = write_log(tmp_path / "log", 60)
    table = str(tmp_path / "delta")
    checkpoint = tmp_path / "checkpoint"
    write = kafkalog.tables.foreach_batch_to_delta(table, app_id="events-stream")
    seen: list[int] = []

    def fail_once(batch, batch_id):
        write(batch, batch_id)
        seen.append(batch_id)
        if batch_id == 1 and seen.count(1) == 1:
            raise RuntimeError("the driver dies after the table has batch 1")

    with pytest.raises(Exception, match="the driver dies"):
        run(spark, src, checkpoint, fail_once)
    assert deltalake.DeltaTable(table).transaction_version("events-stream") == 1
    run(spark, src, checkpoint, fail_once)
    assert seen.count(1) == 2  # Spark ran batch 1 again: the table took it once
    got = rows(deltalake.DeltaTable(table).to_pyarrow_table())
    assert got == expected(src, topics="events")
