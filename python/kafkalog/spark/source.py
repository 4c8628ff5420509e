"""The ``kafkalog`` data source: ``spark.read.format("kafkalog")`` (batch),
``spark.readStream.format("kafkalog")`` (Structured Streaming, see
:mod:`kafkalog.spark.streaming`) and ``df.write.format("kafkalog")``.

It is found by name in any session where kafkalog is installed (PySpark imports the
top-level ``pyspark_kafkalog`` module, whose ``DefaultSource`` this is); :func:`register`
does the same by hand.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
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

import kafkalog
from kafkalog.errors import InvalidArgumentError
from kafkalog.spark.decoding import quiet_executor, read_work_items
from kafkalog.spark.options import SourceOptions, columns_of, parse_bool
from kafkalog.spark.planning import (
    Partition,
    TopicPartition,
    discover,
    items,
    offset_ranges,
)
from kafkalog.spark.schema import SPARK_SCHEMA, arrow_schema, spark_schema
from kafkalog.spark.writing import WRITE_OPTIONS, StreamWriter, Writer, write_target

__all__ = [
    "KafkaLogDataSource",
    "register",
    "spark_partitions",
    "plan_partitions",
    "ItemsPartition",
]


class ItemsPartition(InputPartition):
    """A Spark partition of the data source: consecutive work items."""

    def __init__(self, index: int, items: list[kafkalog.WorkItem]) -> None:
        super().__init__(index)
        self.items = items


def _offset_spans(work: list[kafkalog.WorkItem]) -> list[tuple[kafkalog.WorkItem, int, int]]:
    """Each item with the offsets it may hold, ``[low, high)``: from its base (or start
    bound) to where the next item of its partition begins (or its end bound)."""

    def low_of(item: kafkalog.WorkItem) -> int:
        return max(x for x in (item.base_offset, item.start_offset, 0) if x is not None)

    out = []
    for k, item in enumerate(work):
        low = low_of(item)
        nxt = work[k + 1] if k + 1 < len(work) else None
        same = nxt is not None and (nxt.topic, nxt.partition) == (item.topic, item.partition)
        # Items of a partition are in offset order: this one ends where the next begins.
        highs = [item.end_offset] + ([low_of(nxt)] if same and nxt is not None else [])
        known = [h for h in highs if h is not None]
        high = min(known) if known else low + 1
        out.append((item, low, max(high, low + 1)))
    return out


def _split(item: kafkalog.WorkItem, low: int, high: int, pieces: int) -> list[kafkalog.WorkItem]:
    """``item`` as ``pieces`` items over the same bytes, its offsets ``[low, high)`` shared
    out evenly (a piece of a range, as Spark's Kafka source cuts one)."""
    if pieces <= 1:
        return [item]
    cuts = [low + (high - low) * k // pieces for k in range(pieces + 1)]
    return [
        item._replace(start_offset=a, end_offset=b) for a, b in zip(cuts, cuts[1:], strict=False)
    ]


def spark_partitions(
    work: list[kafkalog.WorkItem],
    *,
    target_bytes: int,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[ItemsPartition]:
    """Work items grouped into Spark partitions of about ``target_bytes`` of log each, at
    least ``min_partitions`` of them where the items allow (items split by offset range
    when there are too few, each in proportion to its share of offsets), none holding more
    than ``max_records_per_partition`` offsets."""
    if max_records_per_partition:
        most = max_records_per_partition
        work = [
            piece
            for item, low, high in _offset_spans(work)
            for piece in _split(item, low, high, math.ceil((high - low) / most))
        ]
    if min_partitions and len(work) < min_partitions and work:
        spans = _offset_spans(work)
        total = sum(high - low for _, low, high in spans)
        work = [
            piece
            for item, low, high in spans
            for piece in _split(
                item, low, high, min(high - low, math.ceil((high - low) * min_partitions / total))
            )
        ]
    out: list[ItemsPartition] = []
    current: list[kafkalog.WorkItem] = []
    size = offsets = 0
    for item, low, high in _offset_spans(work):
        full = current and size + item.size > target_bytes
        if max_records_per_partition and current:
            full = full or offsets + (high - low) > max_records_per_partition
        if full:
            out.append(ItemsPartition(len(out), current))
            current, size, offsets = [], 0, 0
        current.append(item)
        size += item.size
        offsets += high - low
    if current:
        out.append(ItemsPartition(len(out), current))
    return out


def plan_partitions(
    parts: list[Partition], ranges: Mapping[TopicPartition, tuple[int, int]], o: SourceOptions
) -> list[ItemsPartition]:
    """The Spark partitions that read each partition's offset range: work items of about
    ``targetBytes`` (less where ``minPartitions`` asks for more pieces), grouped."""
    target = o.target_bytes
    if o.min_partitions:
        total = sum(s[3] or 0 for p in parts if p.key in ranges for s in p.segments)
        target = max(1, min(target, total // o.min_partitions))
    work = items(
        parts,
        ranges,
        read_committed=o.isolation_level == "read_committed",
        target_bytes=target,
        max_decompressed_size=o.read["max_decompressed_size"],
        visibility=o.visibility,
    )
    return spark_partitions(
        work,
        target_bytes=target,
        min_partitions=o.min_partitions,
        max_records_per_partition=o.max_records_per_partition,
    )


class _BatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.columns = _columns(options, schema)

    def partitions(self) -> Sequence[InputPartition]:
        o = self.options
        parts = discover(o.paths, subscription=o.subscription, storage_options=o.storage_options)
        ranges = offset_ranges(
            parts,
            o.bounds,
            read_committed=o.isolation_level == "read_committed",
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
            target=arrow_schema(self.columns),
            storage_options=self.options.storage_options,
        )


def _columns(options: SourceOptions, schema: StructType) -> list[str]:
    """The columns to decode: the options' (Spark's schema), or those of a schema given with
    ``.schema(...)``, checked against what kafkalog reads."""
    names = list(schema.fieldNames())
    if names != options.columns:
        full = spark_schema(list(kafkalog.COLUMNS + kafkalog.METADATA_COLUMNS))
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

    kafkalog's own: ``batchMetadata`` (add :data:`kafkalog.METADATA_COLUMNS`),
    ``includeControl``, ``checkCrc``, ``onCorrupt`` (error, skip, stop),
    ``maxDecompressedSize``, ``batchSize``, ``targetBytes`` (bytes of log per Spark
    partition, default 64 MiB), ``partitions`` (keep these partition numbers), ``topics``
    (as ``subscribe``), ``storage.<key>`` (object-store options, as :func:`kafkalog.read`'s
    ``storage_options``), and ``encryptionKeys`` (JSON ``{"key id": "PEM or its path"}`` for
    encrypted tiered-storage segments, read on the driver).

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
        return spark_schema(columns_of(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return _BatchReader(SourceOptions.parse(self.options), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from kafkalog.spark.streaming import StreamReader

        options = SourceOptions.parse(self.options, streaming=True)
        return StreamReader(options, _columns(options, schema))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        path, options, _ = self._write_options(streaming=False)
        return Writer(path, options, overwrite, options.pop("storage_options", None))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamArrowWriter:
        if overwrite:
            raise InvalidArgumentError(
                "the kafkalog sink appends, as a broker does: use outputMode('append')"
            )
        path, options, writer_id = self._write_options(streaming=True)
        return StreamWriter(path, options, writer_id)

    def _write_options(self, *, streaming: bool) -> tuple[str, dict[str, Any], str]:
        o = {str(k).lower(): v for k, v in self.options.items()}
        if "path" not in o:
            raise InvalidArgumentError('give the directory to write: .save("/path/to/logs")')
        path = write_target(o.pop("path"))
        writer_id = str(o.pop("writerid", "spark")) if streaming else ""
        options: dict[str, Any] = {}
        for key, value in o.items():
            if key in ("topic", "partition"):
                options[key] = value
            elif key in WRITE_OPTIONS:
                arg, parse = WRITE_OPTIONS[key]
                options[arg] = parse(value)
            elif key == "rowsgrouped" and not streaming:
                options["grouped"] = parse_bool(value, "rowsGrouped")
            elif key.startswith("storage."):
                options.setdefault("storage_options", {})[key[len("storage.") :]] = str(value)
            elif key == "maxrewritebytes" and streaming:
                options["max_rewrite_bytes"] = int(value)
            elif key.startswith("kafka.") or key in ("includeheaders", "checkpointlocation"):
                continue  # Spark's Kafka sink options with nothing to do on files
            else:
                raise InvalidArgumentError(f"unknown write option {key!r} for kafkalog")
        return path, options, writer_id


def register(spark: Any) -> None:
    """Make ``format("kafkalog")`` available in this Spark session by hand (it is found by
    name where kafkalog is installed)."""
    spark.dataSource.register(KafkaLogDataSource)
