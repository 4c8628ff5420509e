"""Planning a Spark read: which topic-partitions, which offset range of each, as work items.

Spark's Kafka source resolves a query's bounds to an offset range per topic-partition (its
``KafkaOffsetReader``), then reads the ranges. So does this module, on the native core: the
partitions come from :func:`kafkalog.segments`, their earliest and latest offsets and the
offsets for timestamps from the core's ``ListOffsets`` (segment names, indexes, the last
segment's tail), and the ranges are cut into work items by the core's planner (indexes, not
logs; ``read_committed``'s aborted transactions and last stable offset included). Kafka's
rules all live in the core; what is here is Spark's meaning of its options.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafkalog import _native, reading
from kafkalog._isolation import read_committed as _read_committed
from kafkalog._native import DEFAULT_MAX_DECOMPRESSED_SIZE
from kafkalog._storage import Route, route
from kafkalog.errors import InvalidArgumentError, KafkaLogError
from kafkalog.planning import Bounds, WorkItem, plan_segments
from kafkalog.spark.options import DEFAULT_TARGET_BYTES
from kafkalog.spark.subscription import EARLIEST, LATEST, BoundSpec, Subscription
from kafkalog.types import Visibility

__all__ = [
    "Partition",
    "DataLossError",
    "discover",
    "list_offsets",
    "offset_ranges",
    "items",
    "plan",
]

_log = logging.getLogger("kafkalog.spark")

TopicPartition = tuple[str | None, int | None]


class DataLossError(KafkaLogError):
    """Offsets a query needs are gone (deleted by retention, or a segment missing), under
    ``failOnDataLoss=true``."""


@dataclasses.dataclass
class Partition:
    """One topic-partition's segment files, as the core lists them, and where they live."""

    topic: str | None
    partition: int | None
    #: ``(core path, topic, partition, size)`` for each segment, in offset order.
    segments: list[tuple[str, str | None, int | None, int | None]]
    route: Route
    earliest: int | None = None
    latest: int | None = None
    #: Offsets missing between segments that compaction cannot explain, ``[from, to)``.
    gaps: list[tuple[int, int]] = dataclasses.field(default_factory=list)

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def name(self) -> str:
        if self.topic is None:
            return self.route.uri(self.segments[0][0])
        return f"{self.topic}-{self.partition}"


def _routes(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    storage_options: Mapping[str, Any] | None,
    filesystem: Any | None,
) -> list[tuple[Route, list[str]]]:
    """Paths grouped by where they are read from (in order of first appearance)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    groups: dict[tuple[Any, ...], tuple[Route, list[str]]] = {}
    for p in paths:
        r = route(p, storage_options, filesystem)
        groups.setdefault(r.key(), (r, []))[1].append(r.path)
    if not groups:
        raise InvalidArgumentError("no path given")
    return list(groups.values())


def discover(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    subscription: Subscription | None = None,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    typed: Mapping[str, Any] | None = None,
) -> list[Partition]:
    """The topic-partitions under ``paths`` (files, partition or log directories, globs;
    local, object-store or pyarrow-filesystem URIs) that ``subscription`` takes, in the core's
    order. ``typed``: the typed keys and values read (``kafkalog.values.value_options``' form):
    then the registry's storage topic and Kafka's own are left out of a read of other topics
    unless the subscription names them (the core's rule, ``Subscription::typed_left_out``)."""
    parts: list[Partition] = []
    for r, core_paths in _routes(paths, storage_options, filesystem):
        current: Partition | None = None
        for s in reading.segments(core_paths, **r.kwargs()):
            topic, partition = s["topic"], s["partition"]
            if subscription is not None and not subscription(topic, partition):
                continue
            # One Partition per log the core sees: a partition's tiered-storage segments and
            # its broker segments are one log, two replicas' directories are two.
            if current is None or not s["continues"]:
                current = Partition(topic, partition, [], r)
                parts.append(current)
            current.segments.append((s["path"], topic, partition, s.get("size")))
    if typed is not None:
        found = list(dict.fromkeys(p.topic for p in parts if p.topic is not None))
        texts = subscription.texts if subscription is not None else (None, None, None, None)
        topics, pattern, assign, partitions = texts
        left_out = set(
            _native.spark_typed_left_out(
                found,
                topics=topics,
                pattern=pattern,
                assign=assign,
                partitions=partitions,
                schemas_topic=typed.get("schemas_topic"),
            )
        )
        parts = [p for p in parts if p.topic not in left_out]
    return parts


def list_offsets(
    parts: list[Partition],
    *,
    read_committed: bool = False,
    timestamps: Mapping[TopicPartition, int] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    visibility: Visibility = "consumer",
) -> dict[TopicPartition, int | None]:
    """Sets each partition's earliest and latest offsets (the latest is the last stable
    offset under ``read_committed``), as a consumer's ``ListOffsets`` answers them; returns
    the offset for each partition's timestamp in ``timestamps`` (None where no record is at
    or after it)."""
    found: dict[TopicPartition, int | None] = {}
    by_route: dict[tuple[Any, ...], list[Partition]] = {}
    for p in parts:
        by_route.setdefault(p.route.key(), []).append(p)
    for group in by_route.values():
        r = group[0].route
        segments = [s for p in group for s in p.segments]
        stamps = {p.key: timestamps[p.key] for p in group if timestamps and p.key in timestamps}
        answers, _ = _native.list_offsets(
            segments,
            read_committed=read_committed,
            timestamps=stamps or None,
            max_decompressed_size=max_decompressed_size,
            visibility=visibility,
            **r.kwargs(),
        )
        if len(answers) != len(group):  # one answer per partition, in order
            raise KafkaLogError(f"listing offsets: {len(answers)} answers for {len(group)}")
        for p, (topic, partition, earliest, latest, for_ts, gaps) in zip(
            group, answers, strict=True
        ):
            if (topic, partition) != p.key:
                raise KafkaLogError(f"listing offsets: {topic}-{partition} answered for {p.name}")
            p.earliest, p.latest, p.gaps = earliest, latest, list(gaps)
            if p.key in stamps:
                found[p.key] = for_ts
    return found


def _lost(message: str, fail_on_data_loss: bool) -> None:
    """Spark's ``failOnDataLoss``: fail, or say so and go on."""
    if fail_on_data_loss:
        raise DataLossError(
            f"{message}. Some data may have been lost because it is not in the files any more "
            "(deleted by retention, or segments missing). If you want the query to go on in "
            'such cases, set the source option "failOnDataLoss" to "false".'
        )
    _log.warning("%s; going on (failOnDataLoss=false)", message)


def offset_ranges(
    parts: list[Partition],
    bounds: BoundSpec,
    *,
    read_committed: bool = False,
    fail_on_data_loss: bool = True,
    streaming: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    visibility: Visibility = "consumer",
) -> dict[TopicPartition, tuple[int, int]]:
    """Each partition's ``[start, end)`` offsets for ``bounds``, as Spark's Kafka source
    resolves a batch query's (or a stream's first) range: ``earliest``/-2 and ``latest``/-1
    through ``ListOffsets``, timestamps to the earliest offset at or after them (a start
    timestamp no record reaches fails the query, or starts at the latest offset, as
    ``startingOffsetsByTimestampStrategy`` says; an end timestamp no record reaches ends at
    the latest offset). A specific start below the earliest offset is data loss. Partitions
    whose range is empty are left out."""
    bounds.check_partitions({p.key for p in parts})
    start_ts: dict[TopicPartition, int] = {}
    end_ts: dict[TopicPartition, int] = {}
    for p in parts:
        start, end = bounds.start_of(p.key)[1], bounds.end_of(p.key)[1]
        if start is not None:
            start_ts[p.key] = start
        if end is not None:
            end_ts[p.key] = end
    at_start = list_offsets(
        parts,
        read_committed=read_committed,
        timestamps=start_ts,
        max_decompressed_size=max_decompressed_size,
        visibility=visibility,
    )
    at_end = {}
    if end_ts:
        at_end = list_offsets(
            parts, read_committed=read_committed, timestamps=end_ts, visibility=visibility
        )
    out: dict[TopicPartition, tuple[int, int]] = {}
    for p in parts:
        if p.earliest is None or p.latest is None:
            continue  # no batch at all
        offset, ts = bounds.start_of(p.key)
        if ts is not None:
            start = at_start.get(p.key)
            if start is None:
                if bounds.strategy == "error":
                    raise InvalidArgumentError(
                        f"no record of {p.name} has a timestamp at or after {ts} (the "
                        "starting timestamp); set startingOffsetsByTimestampStrategy=latest "
                        "to start at the latest offset instead"
                    )
                start = p.latest
        elif offset is None or offset == EARLIEST:
            start = p.earliest
        elif offset == LATEST:
            if not streaming:
                raise InvalidArgumentError(
                    f"starting offset of {p.name} is latest (-1): not valid for batch queries "
                    "(as in Spark's Kafka source), it reads nothing"
                )
            start = p.latest
        else:
            start = offset
            if start < p.earliest:
                _lost(
                    f"offsets {start} to {p.earliest - 1} of {p.name} are gone (its earliest "
                    f"offset is {p.earliest})",
                    fail_on_data_loss,
                )
                start = p.earliest
        offset, ts = bounds.end_of(p.key)
        if ts is not None:
            end = at_end.get(p.key)
            end = p.latest if end is None else min(end, p.latest)
        elif offset is None or offset == LATEST:
            end = p.latest
        elif offset == EARLIEST:
            raise InvalidArgumentError(
                f"ending offset of {p.name} is earliest (-2): not valid for batch queries "
                "(as in Spark's Kafka source), it reads nothing"
            )
        else:
            end = min(offset, p.latest)  # offsets past the end are not there (yet)
        if start < end:
            check_gaps(p, start, end, fail_on_data_loss)
            out[p.key] = (start, end)
    return out


def check_gaps(p: Partition, start: int, end: int, fail_on_data_loss: bool) -> None:
    """Offsets in ``[start, end)`` missing between segments where compaction cannot explain
    it (a segment deleted from the middle of a log) are data loss."""
    for a, b in p.gaps:
        if a < end and b > start:
            _lost(
                f"offsets {max(a, start)} to {min(b, end) - 1} of {p.name} are missing between "
                "segments, and the log cleaner's checkpoint shows no compaction there",
                fail_on_data_loss,
            )


def items(
    parts: Iterable[Partition],
    ranges: Mapping[TopicPartition, tuple[int, int]],
    *,
    read_committed: bool = False,
    target_bytes: int | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    visibility: Visibility = "consumer",
) -> list[WorkItem]:
    """The work items that read each partition's range (partitions without one are not
    read), cut at batch boundaries into pieces of about ``target_bytes``; item paths are
    URIs a task can open."""
    out: list[WorkItem] = []
    by_route: dict[tuple[Any, ...], list[Partition]] = {}
    for p in parts:
        if p.key in ranges:
            by_route.setdefault(p.route.key(), []).append(p)
    for group in by_route.values():
        r = group[0].route
        bounds: dict[TopicPartition, Bounds] = {
            p.key: (ranges[p.key][0], ranges[p.key][1], None, None) for p in group
        }
        planned, issues = plan_segments(
            [s for p in group for s in p.segments],
            default_bounds=(0, 0, None, None),  # a partition without a range reads nothing
            bounds=bounds,
            read_committed=read_committed,
            target_bytes=target_bytes,
            max_decompressed_size=max_decompressed_size,
            visibility=visibility,
            storage=r.kwargs(),
        )
        for issue in issues:
            _log.info("%s", issue["message"])
        out += [item._replace(path=r.uri(item.path)) for item in planned]
    return out


def plan(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    target_bytes: int | None = DEFAULT_TARGET_BYTES,
    topics: str | Iterable[str] | None = None,
    topic_pattern: str | None = None,
    assign: Mapping[str, Iterable[int]] | str | None = None,
    partitions: Iterable[int] | str | None = None,
    start_offset: Any = None,
    end_offset: Any = None,
    start_timestamp: Any = None,
    end_timestamp: Any = None,
    isolation_level: str = "read_uncommitted",
    fail_on_data_loss: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    visibility: Visibility = "consumer",
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
) -> list[WorkItem]:
    """Plan a read as work items of about ``target_bytes`` of log each (``None``: one per
    file), for tasks to decode with :func:`kafkalog.read_items` or :func:`kafkalog.decode`.

    :func:`kafkalog.plan` with Spark's Kafka source options: these are resolved to one offset
    range per topic-partition first, as Spark's Kafka source resolves them, and the ranges
    are then cut by the same planner :func:`kafkalog.plan` uses
    (:func:`kafkalog.planning.plan_segments`).

    ``topics`` (Spark's ``subscribe``), ``topic_pattern`` (``subscribePattern``) or
    ``assign`` (``{"topic": [0, 1]}``) choose the topic-partitions, at most one of them;
    ``partitions`` keeps only those partition numbers. Bounds are ints for every partition,
    or per partition as Spark's JSON ``{"topic": {"0": 23}}`` (or the same mapping), offsets
    with -2 for earliest and -1 for latest; the end offset is exclusive. A start timestamp
    starts at the earliest offset whose timestamp is at or after it (a partition with none
    reads nothing); an end timestamp ends before such an offset. ``read_committed`` leaves
    out aborted transactions and stops at the last stable offset. A start offset below a
    partition's earliest one is data loss: an error, or with ``fail_on_data_loss=False`` a
    warning and a start at the earliest. ``visibility`` as :func:`kafkalog.read`: by default
    what a consumer could fetch, within the broker's checkpoints where they are.
    """
    read_committed = _read_committed(isolation_level)
    subscription = Subscription.make(topics, topic_pattern, assign, partitions)
    bounds = BoundSpec.make(start_offset, end_offset, start_timestamp, end_timestamp)
    parts = discover(
        paths, subscription=subscription, storage_options=storage_options, filesystem=filesystem
    )
    ranges = offset_ranges(
        parts,
        bounds,
        read_committed=read_committed,
        fail_on_data_loss=fail_on_data_loss,
        max_decompressed_size=max_decompressed_size,
        visibility=visibility,
    )
    return items(
        parts,
        ranges,
        read_committed=read_committed,
        target_bytes=target_bytes,
        max_decompressed_size=max_decompressed_size,
        visibility=visibility,
    )
