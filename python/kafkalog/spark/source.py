"""The ``kafkalog`` data source: ``spark.read.format("kafkalog")`` (batch),
``spark.readStream.format("kafkalog")`` (Structured Streaming, see
:mod:`kafkalog.spark.streaming`) and ``df.write.format("kafkalog")``.

It is found by name in any session where kafkalog is installed (PySpark imports the
top-level ``pyspark_kafkalog`` module, whose ``DefaultSource`` this is); :func:`register`
does the same by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructType

from kafkalog import reading
from kafkalog.errors import InvalidArgumentError
from kafkalog.spark.decoding import quiet_executor, read_work_items
from kafkalog.spark.options import SourceOptions, columns_of
from kafkalog.spark.partitions import ItemsPartition, plan_partitions, spark_partitions
from kafkalog.spark.planning import (
    discover,
    offset_ranges,
)
from kafkalog.spark.schema import SPARK_SCHEMA, arrow_schema, spark_schema
from kafkalog.spark.values import decoded_of, with_values
from kafkalog.spark.writing import StreamWriter, Writer

__all__ = [
    "KafkaLogDataSource",
    "register",
    "spark_partitions",
    "plan_partitions",
    "ItemsPartition",
]


class _BatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.columns = _columns(options, schema)
        self.target = arrow_schema(self.columns, decoded=options.decoded)

    def partitions(self) -> Sequence[InputPartition]:
        o = self.options
        parts = discover(
            o.paths,
            subscription=o.subscription,
            storage_options=o.storage_options,
            typed=o.values,
        )
        ranges = offset_ranges(
            parts,
            o.bounds,
            read_committed=o.read_committed,
            fail_on_data_loss=o.fail_on_data_loss,
            max_decompressed_size=o.read["max_decompressed_size"],
            visibility=o.visibility,
        )
        return plan_partitions(parts, ranges, o)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        quiet_executor()
        # With no work items, Spark still reads one (plain) partition.
        work = getattr(partition, "items", [])
        yield from read_work_items(
            work,
            self.columns,
            self.options.read,
            target=self.target,
            storage_options=self.options.storage_options,
        )


def _columns(options: SourceOptions, schema: StructType) -> list[str]:
    """The columns to decode: the options' (Spark's schema), or those of a schema given with
    ``.schema(...)``, checked against what kafkalog reads."""
    names = list(schema.fieldNames())
    typed = spark_schema(options.columns, decoded=options.decoded)
    if names == typed.fieldNames():
        return list(options.columns)
    if names != options.columns:
        full = spark_schema(
            list(reading.COLUMNS + reading.METADATA_COLUMNS), decoded=options.decoded
        )
        known = {f.name: f.dataType for f in full}
        for f in schema:
            if f.name not in known or known[f.name] != f.dataType:
                raise InvalidArgumentError(
                    f"column {f.name} {f.dataType.simpleString()} is not one kafkalog "
                    f"reads; its columns are {full.simpleString()}"
                )
    return names


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafkalog")``, ``spark.readStream.format("kafkalog")`` and
    ``df.write.format("kafkalog")``: Kafka log files read as Spark's Kafka source reads a
    topic, with its options and schema.

    Spark's Kafka source options, with their meaning there:

    - ``subscribe`` (comma-separated topics), ``subscribePattern`` (a regex) or ``assign``
      (JSON ``{"topic": [0, 1]}``): at most one; none reads every topic-partition found.
    - ``startingOffsets`` (``earliest``, ``latest`` or JSON ``{"topic": {"0": 23}}`` with -2
      for earliest and -1 for latest; batch default ``earliest``, streaming ``latest``),
      ``endingOffsets`` (batch only; ``latest`` or JSON; exclusive),
      ``startingTimestamp``/``endingTimestamp`` (epoch ms, every partition),
      ``startingOffsetsByTimestamp``/``endingOffsetsByTimestamp`` (JSON of epoch ms), with
      Spark's precedence (timestamp, then by-timestamp, then offsets). JSON offsets and
      timestamps must name every partition read, as Spark requires.
      ``startingOffsetsByTimestampStrategy``: ``error`` (default: a partition with no record
      at or after the starting timestamp fails the query) or ``latest``.
    - ``kafka.isolation.level``: ``read_uncommitted`` (default) or ``read_committed``.
    - ``failOnDataLoss`` (default true): offsets a query needs that are gone (deleted by
      retention, before its start or between two triggers) fail the query, naming the range;
      false logs a warning and goes on from the earliest offset there.
    - ``minPartitions``, ``maxRecordsPerPartition``; streaming: ``maxOffsetsPerTrigger``,
      ``minOffsetsPerTrigger``, ``maxTriggerDelay``.
    - ``includeHeaders`` (default false): the ``headers`` column, as there.
    - ``kafka.*`` consumer settings, ``groupIdPrefix``, ``kafkaConsumer.pollTimeoutMs``,
      ``fetchOffset.*``: accepted and ignored (one log line says so).

    Typed keys and values (``docs/values.md``): ``keyFormat``, ``valueFormat`` (``binary``,
    ``string``, ``avro``, ``protobuf``, ``json``, ``auto``), ``schemaRegistry`` (the
    registry's storage topic: a log directory holding ``_schemas-0``, or its URI; read once,
    on the driver), ``onValueError`` (``error`` or ``null``, which adds ``value_error`` and
    ``value_raw``), ``keySubject``, ``valueSubject`` (default ``<topic>-key``/``-value``),
    ``keySubjects``, ``valueSubjects`` (several record types in one column: subjects separated
    by commas), ``keyMessage``, ``valueMessage`` (Protobuf: the column's message by full
    name, or several separated by commas).

    kafkalog's own: ``batchMetadata`` (add :data:`kafkalog.METADATA_COLUMNS`),
    ``includeControl``, ``checkCrc``, ``onCorrupt`` (error, skip, stop),
    ``maxDecompressedSize``, ``batchSize`` (rows per Arrow batch, default 8,192),
    ``targetBytes`` (bytes of log per Spark partition, default 64 MiB), ``partitions`` (keep
    these partition numbers), ``topics`` (as ``subscribe``), ``storage.<key>`` (object-store
    options, as :func:`kafkalog.read`'s ``storage_options``), and ``encryptionKeys`` (JSON
    ``{"key id": "PEM or its path"}`` for encrypted tiered-storage segments, read on the
    driver).

    A schema given with ``.schema(...)`` selects columns (names and types as kafkalog has
    them). Writing: see :func:`kafkalog.spark.write`.
    """

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> StructType:
        keys = {k.lower() for k in self.options}
        if "path" not in keys and "paths" not in keys:
            return SPARK_SCHEMA  # a write: the schema is the DataFrame's
        return spark_schema(columns_of(self.options), decoded=decoded_of(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        options = with_values(SourceOptions.parse(self.options), self.options)
        return _BatchReader(options, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from kafkalog.spark.streaming import StreamReader

        options = with_values(SourceOptions.parse(self.options, streaming=True), self.options)
        return StreamReader(options, _columns(options, schema))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return Writer(self.options, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamArrowWriter:
        if overwrite:
            raise InvalidArgumentError(
                "the kafkalog sink appends, as a broker does: use outputMode('append')"
            )
        return StreamWriter(self.options)


def register(spark: Any) -> None:
    """Make ``format("kafkalog")`` available in this Spark session by hand (it is found by
    name where kafkalog is installed). In a session with the JVM source's jar, the name is
    the JVM source's already (Spark refuses a Python source of the same name): nothing to do."""
    from kafkalog.spark.jvm import in_session

    if not in_session(spark):
        spark.dataSource.register(KafkaLogDataSource)
