"""Spark partitions of a read: work items grouped into partitions of about ``targetBytes`` of
log (split by offset range where ``minPartitions`` or ``maxRecordsPerPartition`` ask), for the
batch source (:mod:`kafkalog.spark.source`) and the streaming one
(:mod:`kafkalog.spark.streaming`) alike."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pyspark.sql.datasource import InputPartition

from kafkalog import planning
from kafkalog.spark.options import SourceOptions
from kafkalog.spark.planning import Partition, TopicPartition, items

__all__ = ["ItemsPartition", "spark_partitions", "plan_partitions"]


class ItemsPartition(InputPartition):
    """A Spark partition of the data source: consecutive work items."""

    def __init__(self, index: int, items: list[planning.WorkItem]) -> None:
        super().__init__(index)
        self.items = items


def _offset_spans(work: list[planning.WorkItem]) -> list[tuple[planning.WorkItem, int, int]]:
    """Each item with the offsets it may hold, ``[low, high)``: from its base (or start
    bound) to where the next item of its partition begins (or its end bound)."""

    def low_of(item: planning.WorkItem) -> int:
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


def _split(item: planning.WorkItem, low: int, high: int, pieces: int) -> list[planning.WorkItem]:
    """``item`` as ``pieces`` items over the same bytes, its offsets ``[low, high)`` shared
    out evenly (a piece of a range, as Spark's Kafka source cuts one)."""
    if pieces <= 1:
        return [item]
    cuts = [low + (high - low) * k // pieces for k in range(pieces + 1)]
    return [
        item._replace(start_offset=a, end_offset=b) for a, b in zip(cuts, cuts[1:], strict=False)
    ]


def spark_partitions(
    work: list[planning.WorkItem],
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
    current: list[planning.WorkItem] = []
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
        read_committed=o.read_committed,
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
