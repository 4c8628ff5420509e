"""Structured Streaming: ``spark.readStream.format("kafkalog")`` over files that grow (a broker
directory, a mirrored backup, a tiered-storage bucket filling), as Spark's Kafka source
streams a topic.

Offsets are Spark Kafka's JSON form, ``{"topic": {"0": 1234}}``: for each topic-partition the
next offset to read. At each trigger the files are listed again, so new segments and new
partitions are picked up (a new partition from its earliest offset, as Spark's source does);
``latestOffset`` is the end of what a consumer could fetch (the log end offset, or the last
stable offset under ``read_committed``). ``maxOffsetsPerTrigger`` shares a trigger's budget
among partitions by their backlog, ``minOffsetsPerTrigger`` waits for a backlog (at most
``maxTriggerDelay``), and ``Trigger.AvailableNow`` reads what was there when the query
started, in as many micro-batches as the limits make. Spark's checkpoint holds the offsets,
so a restarted query goes on exactly where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from kafkalog import _native
from kafkalog.errors import InvalidArgumentError, KafkaLogError
from kafkalog.spark.decoding import quiet_executor, read_work_items
from kafkalog.spark.options import SourceOptions
from kafkalog.spark.partitions import plan_partitions
from kafkalog.spark.planning import (
    Partition,
    TopicPartition,
    _lost,
    check_gaps,
    discover,
    list_offsets,
)
from kafkalog.spark.schema import arrow_schema
from kafkalog.spark.subscription import EARLIEST, LATEST

__all__ = ["StreamReader"]

Offsets = dict[tuple[str, int], int]
#: Offsets as Spark Kafka's JSON holds them, ``{"topic": {"0": 1234}}``.
SparkOffsets = dict[str, dict[str, int]]


def to_json(offsets: Offsets) -> SparkOffsets:
    """Offsets in Spark Kafka's form (topics and partitions in order)."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = int(offset)
    return out


def from_json(offsets: Mapping[str, Mapping[str, int | str]]) -> Offsets:
    try:
        return {(str(t), int(p)): int(o) for t, per in offsets.items() for p, o in per.items()}
    except (AttributeError, TypeError, ValueError):
        raise InvalidArgumentError(
            f'not an offset in Spark Kafka\'s form {{"topic": {{"0": 23}}}}: {offsets!r}'
        ) from None


def rate_limit(start: Offsets, latest: Offsets, limit: int) -> Offsets:
    """Spark Kafka's ``maxOffsetsPerTrigger``: each partition's share of ``limit`` by its
    backlog (rounded down, up where below one), and never more than ``limit`` in all; the
    core's arithmetic (``log/rate_limit.rs``), which the JVM source calls too."""
    keys = list(latest)  # in order: equal shares give back in this order
    ends = _native.rate_limit([(start[tp], latest[tp]) for tp in keys], limit)
    return dict(zip(keys, ends, strict=True))


def _key(p: Partition) -> tuple[str, int]:
    """The topic-partition a stream reads: every segment must be in a partition directory."""
    if p.topic is None or p.partition is None:
        raise InvalidArgumentError(
            f"{p.name}: a stream reads topic-partitions, and this segment is not in "
            "a <topic>-<partition> directory"
        )
    return p.topic, p.partition


def _offsets(p: Partition) -> tuple[int, int]:
    """A partition's earliest and latest offsets (``_partitions`` keeps only those it has)."""
    if p.earliest is None or p.latest is None:
        raise KafkaLogError(f"{p.name}: its offsets were not listed")
    return p.earliest, p.latest


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The data source's stream reader (see the module's docstring)."""

    def __init__(self, options: SourceOptions, columns: list[str]) -> None:
        self.options = options
        self.columns = columns
        self.read_committed = options.read_committed
        self.target: Offsets | None = None  # Trigger.AvailableNow's end
        self.last_batch = time.monotonic()
        self.seen: Offsets | None = None  # the latest offsets at the last look

    # What is there ---------------------------------------------------------------------------

    def _partitions(self) -> list[Partition]:
        o = self.options
        parts = discover(
            o.paths,
            subscription=o.subscription,
            storage_options=o.storage_options,
            typed=o.values,
        )
        for p in parts:
            _key(p)
        list_offsets(
            parts,
            read_committed=self.read_committed,
            max_decompressed_size=o.read["max_decompressed_size"],
            visibility=o.visibility,
        )
        return [p for p in parts if p.earliest is not None and p.latest is not None]

    @staticmethod
    def _latest(parts: Sequence[Partition]) -> Offsets:
        return {_key(p): _offsets(p)[1] for p in parts}

    # Spark's calls ---------------------------------------------------------------------------

    def initialOffset(self) -> SparkOffsets:
        """Where a new query starts: ``startingOffsets`` (default ``latest``) or the
        timestamps, per partition."""
        o = self.options
        parts = self._partitions()
        o.bounds.check_partitions({p.key for p in parts})
        stamps: dict[TopicPartition, int] = {}
        for p in parts:
            ts = o.bounds.start_of(p.key)[1]
            if ts is not None:
                stamps[p.key] = ts
        found = list_offsets(
            parts,
            read_committed=self.read_committed,
            timestamps=stamps,
            visibility=o.visibility,
        )
        start: Offsets = {}
        for p in parts:
            key, (earliest, latest) = _key(p), _offsets(p)
            offset, ts = o.bounds.start_of(p.key)
            if ts is not None:
                at = found.get(p.key)
                if at is None and o.bounds.strategy == "error":
                    raise InvalidArgumentError(
                        f"no record of {p.name} has a timestamp at or after {ts} (the starting "
                        "timestamp); set startingOffsetsByTimestampStrategy=latest to start at "
                        "the latest offset instead"
                    )
                start[key] = latest if at is None else at
            elif offset is None or offset == LATEST:
                start[key] = latest
            elif offset == EARLIEST:
                start[key] = earliest
            else:
                start[key] = offset
        return to_json(start)

    def getDefaultReadLimit(self) -> ReadLimit:
        o = self.options
        if o.max_offsets_per_trigger:
            return ReadMaxRows(o.max_offsets_per_trigger)
        if o.min_offsets_per_trigger:
            return ReadMinRows(o.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._latest(self._partitions())

    def latestOffset(self, start: SparkOffsets, limit: ReadLimit) -> SparkOffsets:
        parts = self._partitions()
        begin = from_json(start)
        latest = self._latest(parts)
        self.seen = dict(latest)
        for p in parts:  # new partitions are read from their earliest offset
            begin.setdefault(_key(p), _offsets(p)[0])
        if self.target is not None:
            latest = {
                tp: min(end, self.target[tp]) if tp in self.target else begin[tp]
                for tp, end in latest.items()
            }
        # A partition's end never goes back (after retention, start may be past the end).
        latest = {tp: max(end, begin[tp]) for tp, end in latest.items()}
        for tp in begin:
            latest.setdefault(tp, begin[tp])  # gone: partitions() reports the loss
        if not isinstance(limit, ReadAllAvailable):
            backlog = sum(latest[tp] - begin[tp] for tp in latest)
            least = self.options.min_offsets_per_trigger
            if isinstance(limit, ReadMinRows):
                least = limit.min_rows
            waited = (time.monotonic() - self.last_batch) * 1000
            if least and backlog < least and waited < self.options.max_trigger_delay_ms:
                return to_json({tp: begin[tp] for tp in latest})
            most = limit.max_rows if isinstance(limit, ReadMaxRows) else None
            if most is not None:
                latest = rate_limit(begin, latest, most)
        if latest != {tp: begin[tp] for tp in latest}:
            self.last_batch = time.monotonic()
        return to_json(latest)

    def reportLatestOffset(self) -> SparkOffsets:
        """The latest offsets seen at the last trigger (listing the files again only when
        there was none)."""
        if self.seen is None:
            self.seen = self._latest(self._partitions())
        return to_json(self.seen)

    def partitions(self, start: SparkOffsets, end: SparkOffsets) -> Sequence[InputPartition]:
        o = self.options
        parts = {_key(p): p for p in self._partitions()}
        begin, until = from_json(start), from_json(end)
        ranges: dict[TopicPartition, tuple[int, int]] = {}
        for tp, stop in until.items():
            p = parts.get(tp)
            first = begin.get(tp)
            if p is None:
                if first is not None and stop > first:
                    _lost(
                        f"{tp[0]}-{tp[1]} is gone: offsets {first} to {stop - 1} cannot be read",
                        o.fail_on_data_loss,
                    )
                continue
            earliest = _offsets(p)[0]
            if first is None:
                first = earliest
            if first < earliest:  # deleted (retention) since the offsets were decided
                _lost(
                    f"offsets {first} to {min(stop, earliest) - 1} of {p.name} are gone (its "
                    f"earliest offset is now {earliest})",
                    o.fail_on_data_loss,
                )
                first = earliest
            if first < stop:
                check_gaps(p, first, stop, o.fail_on_data_loss)
                ranges[tp] = (first, stop)
        return plan_partitions(list(parts.values()), ranges, o)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        quiet_executor()
        yield from read_work_items(
            getattr(partition, "items", []),
            self.columns,
            self.options.read,
            target=arrow_schema(self.columns, decoded=self.options.decoded),
            storage_options=self.options.storage_options,
        )

    def commit(self, end: SparkOffsets) -> None:
        """Nothing to acknowledge: the files are read, never consumed."""
