"""The Kafka side of a table write: which topic-partitions, which offsets of each, and the
records, all from the core.

A run is a consumer's: each partition's range starts at the next offset the table recorded
(else at the start bound or the log start offset) and ends at what a consumer could fetch
(``ListOffsets``' latest: the log end offset, the last stable offset under ``read_committed``,
within the broker's high watermark with ``visibility="consumer"``) or the end bound. Offsets
for timestamps, the visible range, aborted transactions and the work items come from the core
(:func:`kafkalog.segments`, the core's ``list_offsets`` and planner); nothing of Kafka's is
decided here.
"""

from __future__ import annotations

import dataclasses
import datetime
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from kafkalog._isolation import read_committed as _read_committed
from kafkalog._native import list_offsets as _list_offsets
from kafkalog._native import read_topics as _read_topics
from kafkalog._storage import StorageKwargs
from kafkalog._storage import paths as _paths
from kafkalog._time import millis as _millis
from kafkalog.errors import InvalidArgumentError, KafkaLogWarning
from kafkalog.planning import plan_segments, read_items
from kafkalog.reading import segments as _segments
from kafkalog.types import IsolationLevel, Visibility

#: (topic, partition)
TopicPartition = tuple[str, int]


class OffsetsLostWarning(KafkaLogWarning):
    """A partition's next offset recorded in the table is below its log start offset now:
    the records between were deleted (retention, ``DeleteRecords``) before this run."""


@dataclasses.dataclass
class PartitionRange:
    """One topic-partition's offsets this run reads: ``[start, end)``."""

    topic: str
    partition: int
    start: int
    end: int
    #: Segment files of the partition, as the planner takes them.
    segments: list[tuple[str, str | None, int | None, int | None]]


@dataclasses.dataclass
class Source:
    """What a run reads, and how: the options of :func:`kafkalog.read` a table write takes."""

    path: Any
    storage: StorageKwargs
    topics: str | None = None
    start_offset: int | None = None
    end_offset: int | None = None
    start_timestamp: int | datetime.datetime | None = None
    end_timestamp: int | datetime.datetime | None = None
    isolation_level: IsolationLevel = "read_uncommitted"
    visibility: Visibility = "consumer"
    key_format: str = "binary"
    value_format: str = "binary"
    schemas: Any = None
    on_value_error: str = "error"
    value_options: Mapping[str, Any] | None = None
    check_crc: bool = True
    on_corrupt: str = "error"
    threads: int | None = None
    batch_size: int | None = None

    @property
    def typed(self) -> bool:
        return self.key_format != "binary" or self.value_format != "binary"

    def topic_names(self) -> list[str]:
        """The topics read, in reading order: those ``topics`` takes, without Kafka's
        internal topics and the registry's storage topic unless ``topics`` names them (a
        table holds the producers' records)."""
        schemas_topic = dict(self.value_options or {}).get("schemas_topic")
        kept, _ = _read_topics(
            _paths(self.path),
            topics=self.topics,
            typed=True,
            schemas_topic=schemas_topic,
            **self.storage,
        )
        return kept

    def ranges(
        self, committed: Callable[[list[TopicPartition]], Mapping[TopicPartition, int]]
    ) -> list[PartitionRange]:
        """Each partition's range this run reads, given the next offsets the table recorded
        (``committed`` of the partitions found, asked last: the core lists the log first, while
        a table library may still be loading); partitions with nothing to read are left out."""
        names = set(self.topic_names())
        by_partition: dict[TopicPartition, list[tuple[str, str | None, int | None, int | None]]]
        by_partition = {}
        for s in _segments(self.path, topics=self.topics, **self.storage):
            if s["topic"] is None or s["partition"] is None:
                raise InvalidArgumentError(
                    f"{s['path']}: a table records offsets per topic-partition, and this "
                    "segment is not in a <topic>-<partition> directory"
                )
            if s["topic"] in names:
                key = (s["topic"], s["partition"])
                by_partition.setdefault(key, []).append(
                    (s["path"], s["topic"], s["partition"], s["size"])
                )
        if not by_partition:
            committed([])  # the table is asked all the same: a catalog that fails says so
            return []
        committed_rc = _read_committed(self.isolation_level)
        segs = [seg for group in by_partition.values() for seg in group]
        starts = self._offsets(segs, committed_rc, self.start_timestamp)
        ends = (
            starts
            if self.end_timestamp is None
            else self._offsets(segs, committed_rc, self.end_timestamp)
        )
        done_offsets = committed(list(by_partition))
        out = []
        for key, group in by_partition.items():
            earliest, latest, at_start = starts.get(key, (None, None, None))
            _, _, at_end = ends.get(key, (None, None, None))
            if earliest is None or latest is None:
                continue
            lo = earliest
            if self.start_offset is not None:
                lo = max(lo, self.start_offset)
            if self.start_timestamp is not None:
                lo = max(lo, latest if at_start is None else at_start)
            hi = latest
            if self.end_offset is not None:
                hi = min(hi, self.end_offset)
            if self.end_timestamp is not None and at_end is not None:
                hi = min(hi, at_end)
            done = done_offsets.get(key)
            if done is not None:
                if done < earliest:
                    warnings.warn(
                        OffsetsLostWarning(
                            f"{key[0]}-{key[1]}: the table's next offset is {done}, but the "
                            f"log starts at {earliest} now: offsets {done} to {earliest} "
                            "were deleted before they were written to the table"
                        ),
                        stacklevel=3,
                    )
                lo = max(lo, done)
            if lo < hi:
                out.append(PartitionRange(key[0], key[1], lo, hi, group))
        return out

    def _offsets(
        self,
        segs: Sequence[tuple[str, str | None, int | None, int | None]],
        read_committed: bool,
        timestamp: int | datetime.datetime | None,
    ) -> dict[TopicPartition, tuple[int | None, int | None, int | None]]:
        """Earliest, latest (``ListOffsets``) and the offset for ``timestamp`` of each
        partition, from the core."""
        parts, _issues = _list_offsets(
            list(segs),
            read_committed=read_committed,
            timestamp=_millis(timestamp),
            visibility=self.visibility,
            **self.storage,
        )
        return {
            (t, p): (earliest, latest, at)
            for t, p, earliest, latest, at, _gaps in parts
            if t is not None and p is not None
        }

    def read(self, ranges: Sequence[PartitionRange]) -> pa.RecordBatchReader:
        """The records of ``ranges`` (all of one topic), decoded on every core."""
        segs = [seg for r in ranges for seg in r.segments]
        bounds: dict[
            tuple[str | None, int | None], tuple[int | None, int | None, int | None, int | None]
        ] = {(r.topic, r.partition): (r.start, r.end, None, None) for r in ranges}
        items, _issues = plan_segments(
            segs,
            default_bounds=(None, None, None, None),
            bounds=bounds,
            read_committed=_read_committed(self.isolation_level),
            target_bytes=None,
            max_decompressed_size=256 * 1024 * 1024,
            visibility=self.visibility,
            storage=self.storage,
        )
        options: dict[str, Any] = {}
        if self.batch_size is not None:
            options["batch_size"] = self.batch_size
        return read_items(
            items,
            check_crc=self.check_crc,
            on_corrupt=self.on_corrupt,  # type: ignore[arg-type]
            threads=self.threads or _cores(),
            key_format=self.key_format,  # type: ignore[arg-type]
            value_format=self.value_format,  # type: ignore[arg-type]
            schemas=self.schemas,
            on_value_error=self.on_value_error,  # type: ignore[arg-type]
            value_options=self.value_options,
            **options,
            **self.storage,
        )


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def by_topic(ranges: Sequence[PartitionRange]) -> Iterator[list[PartitionRange]]:
    """``ranges`` grouped by topic, in order: one read each (a typed read decodes one topic's
    subject)."""
    group: list[PartitionRange] = []
    for r in ranges:
        if group and group[0].topic != r.topic:
            yield group
            group = []
        group.append(r)
    if group:
        yield group
