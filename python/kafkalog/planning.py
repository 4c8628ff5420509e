"""Planning a distributed read: :func:`plan` cuts a read into :class:`WorkItem` pieces of about
``target_bytes`` at batch boundaries, and :func:`read_items` decodes them in tasks without
planning again. Each is also ``kafkalog.<name>``.

:func:`plan_segments` is the one planner: :func:`plan` (bounds as :func:`kafkalog.read` takes
them) and :func:`kafkalog.spark.plan` (Spark's Kafka source options, resolved to an offset range
per partition first) both hand it segment files and bounds, and the core does the rest.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import pyarrow as pa

from kafkalog._isolation import read_committed as _read_committed
from kafkalog._native import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_TARGET_BYTES,
)
from kafkalog._native import Reader as _Reader
from kafkalog._native import plan as _plan
from kafkalog._native import segments as _segments
from kafkalog._storage import Paths as _Paths
from kafkalog._storage import StorageKwargs
from kafkalog._storage import paths as _paths
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog._time import millis as _millis
from kafkalog.errors import IndexNotUsedWarning, InvalidArgumentError
from kafkalog.errors import warn as _warn
from kafkalog.reading import reader_options, to_reader
from kafkalog.types import IsolationLevel, Issue, OnCorrupt, Visibility
from kafkalog.values import Format, OnValueError
from kafkalog.values import extra_value_options as _extra_value_options
from kafkalog.values import value_options as _value_options

__all__ = ["plan", "read_items", "WorkItem", "DEFAULT_TARGET_BYTES"]


class WorkItem(NamedTuple):
    """A piece of one segment file to decode in one task (see :func:`plan`): entries from
    byte ``start`` to ``end`` (exclusive, ``None`` for the end of the file), both batch
    boundaries, with the bounds its records are kept within."""

    path: str
    start: int
    end: int | None
    topic: str | None
    partition: int | None
    #: No record in the item has a lower offset (from the file name, or the offset index).
    base_offset: int | None
    #: Bytes of log in the item.
    size: int
    #: Keep offsets at or after this (None: no bound).
    start_offset: int | None = None
    #: Keep offsets before this.
    end_offset: int | None = None
    #: Aborted transactions whose records are left out, (producerId, firstOffset,
    #: lastOffset); None when the read is not read_committed.
    aborted: list[tuple[int, int, int]] | None = None


#: One partition's bounds: start offset, end offset, start timestamp, end timestamp (ms);
#: ``None`` where unbounded.
Bounds = tuple[int | None, int | None, int | None, int | None]
#: A segment file as the planner takes it: (path, topic, partition, size), as
#: :func:`kafkalog.segments` lists them.
SegmentRow = tuple[str, str | None, int | None, int | None]


def plan_segments(
    segments: Sequence[SegmentRow],
    *,
    default_bounds: Bounds,
    bounds: Mapping[tuple[str | None, int | None], Bounds],
    read_committed: bool,
    target_bytes: int | None,
    max_decompressed_size: int,
    visibility: Visibility,
    storage: StorageKwargs,
) -> tuple[list[WorkItem], list[Issue]]:
    """Segment files cut by the core into work items of about ``target_bytes`` within their
    partition's ``bounds`` (``default_bounds`` for a partition not in it), and the indexes the
    planner could not use: what :func:`plan` and :func:`kafkalog.spark.plan` both do once
    they know the files and bounds."""
    if target_bytes is not None and target_bytes <= 0:
        raise InvalidArgumentError(f"target_bytes must be positive, not {target_bytes}")
    items, issues = _plan(
        list(segments),
        default_bounds=default_bounds,
        bounds=dict(bounds),
        read_committed=read_committed,
        target_bytes=target_bytes,
        max_decompressed_size=max_decompressed_size,
        visibility=visibility,
        **storage,
    )
    return [WorkItem(*i) for i in items], issues


def plan(
    path: _Paths,
    *,
    target_bytes: int | None = DEFAULT_TARGET_BYTES,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | datetime.datetime | None = None,
    end_timestamp: int | datetime.datetime | None = None,
    isolation_level: IsolationLevel = "read_uncommitted",
    partition_bounds: Mapping[tuple[str | None, int | None], Mapping[str, Any]] | None = None,
    keep: Callable[[str | None, int | None], bool] | None = None,
    topics: str | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
    visibility: Visibility = "consumer",
) -> list[WorkItem]:
    """Plan a read as work items of about ``target_bytes`` each, cut at batch boundaries
    (``None``: one item per file), for tasks to decode with :func:`read_items`.

    Bounds as :func:`read` takes them, for every partition, or per partition in
    ``partition_bounds`` (``{(topic, partition): {"start_offset": ..., ...}}``); ``topics``
    (a pattern of whole topic names, as :func:`kafkalog.read`) and ``keep`` choose the
    partitions. Planning reads indexes, producer snapshots and the few log bytes
    that confirm them, as a broker serves a fetch: timestamps become offsets through the
    ``.timeindex``, ``read_committed`` takes aborted transactions from the ``.txnindex``
    files and the last stable offset from the latest producer snapshot and the log after it.
    Each item carries the offsets and aborted transactions its records are filtered by.
    ``visibility`` as :func:`read`.
    """
    committed = _read_committed(isolation_level)
    storage = _storage_kwargs(storage_options, filesystem, encryption_keys)

    def four(b: Mapping[str, Any]) -> Bounds:
        return (
            b.get("start_offset"),
            b.get("end_offset"),
            _millis(b.get("start_timestamp")),
            _millis(b.get("end_timestamp")),
        )

    segs = [
        (s["path"], s["topic"], s["partition"], s["size"])
        for s in _segments(_paths(path), **storage, topics=topics)
        if keep is None or keep(s["topic"], s["partition"])
    ]
    default = four(
        {
            "start_offset": start_offset,
            "end_offset": end_offset,
            "start_timestamp": start_timestamp,
            "end_timestamp": end_timestamp,
        }
    )
    per = {(k[0], k[1]): four(v) for k, v in (partition_bounds or {}).items()}
    items, issues = plan_segments(
        segs,
        default_bounds=default,
        bounds=per,
        read_committed=committed,
        target_bytes=target_bytes,
        max_decompressed_size=max_decompressed_size,
        visibility=visibility,
        storage=storage,
    )
    for issue in issues:
        _warn(
            IndexNotUsedWarning(
                issue["message"],
                path=issue["path"],
                position=issue["position"],
                offset=issue["offset"],
                bytes=issue["bytes"],
            ),
        )
    return items


def read_items(
    items: Sequence[WorkItem | tuple[Any, ...]],
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    threads: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
    binary_view: bool = False,
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    value_options: Mapping[str, Any] | None = None,
) -> pa.RecordBatchReader:
    """Decode work items made by :func:`plan` (in their order), without planning again.
    Options as :func:`read`; ``threads`` defaults to one (a task's share)."""
    options = reader_options(
        columns=columns,
        batch_metadata=batch_metadata,
        batch_size=batch_size,
        include_control=include_control,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        max_decompressed_size=max_decompressed_size,
        threads=threads,
        storage_options=storage_options,
        filesystem=filesystem,
        encryption_keys=encryption_keys,
        binary_view=binary_view,
        values=_value_options(
            key_format=key_format,
            value_format=value_format,
            schemas=schemas,
            on_value_error=on_value_error,
            **_extra_value_options(value_options),
        ),
    )
    rows = [tuple(i) for i in items]
    return to_reader(_Reader.open_items(rows, options))
