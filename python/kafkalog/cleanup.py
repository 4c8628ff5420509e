"""Kafka's log cleanup, offline: compaction (:func:`compact`) and retention (:func:`retain`).

The rules are Kafka's own and live in the Rust core (``rust/arrow/compact.rs`` and
``rust/arrow/retention.rs``); this module only passes options and shapes results.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from kafkalog._native import DEFAULT_DELETE_RETENTION_MS as _DAY_MS
from kafkalog._native import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_SEGMENT_BYTES,
)
from kafkalog._native import compact as _compact
from kafkalog._native import retain as _retain
from kafkalog.types import CompactReport, OnCorrupt, RetainedPartition

__all__ = ["compact", "plan", "compact_with_offset_map", "retain", "read_compacted"]


def compact(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    delete_retention_ms: int = _DAY_MS,
    min_compaction_lag_ms: int = 0,
    max_compaction_lag_ms: int = 2**63 - 1,
    min_cleanable_ratio: float | None = None,
    segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    max_index_size: int = 10 * 1024 * 1024,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    log_start_offset: int | None = None,
    high_watermark: int | None = None,
    first_dirty_offset: int | None = None,
    producer_id_expiration_ms: int | None = _DAY_MS,
    now: int | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    overwrite: bool = False,
    on_corrupt: OnCorrupt = "error",
) -> CompactReport:
    """Compact the partition directory ``src`` into a new partition directory ``dst`` as one
    round of Kafka's log cleaner would, with the topic's settings given as arguments (named
    after the topic configs: ``delete.retention.ms``, ``min.compaction.lag.ms``,
    ``max.compaction.lag.ms``, ``min.cleanable.dirty.ratio``, ``segment.bytes``,
    ``segment.index.bytes``, ``index.interval.bytes``, ``producer.id.expiration.ms``).

    For each key only its last record is kept; offsets are never renumbered. The active (last)
    segment, anything from the last stable offset on, and segments inside
    ``min_compaction_lag_ms`` are copied unchanged. Records without a key are removed, as the
    cleaner removes them. Records of aborted transactions go; markers go once no longer
    needed; emptied batches stay where Kafka keeps them (a producer's last batch). Tombstones
    follow Kafka's delete horizon: a v2 batch keeping a tombstone is stamped with
    ``now + delete_retention_ms`` the first time, and the tombstone goes in a later round run
    at or after that time (v0/v1 tombstones go when their segment was last modified before the
    last clean segment's time minus ``delete_retention_ms``). ``now`` (ms since the epoch)
    defaults to the clock.

    ``log_start_offset`` and ``high_watermark`` default to the partition's entries in its log
    directory's ``log-start-offset-checkpoint`` and ``replication-offset-checkpoint``, as a
    broker loads them (else the first base offset and the log end offset); cleaning stops at
    the last stable offset, which the high watermark caps.

    ``first_dirty_offset`` is where the last cleaning stopped (the ``cleaner-offset-checkpoint``
    entry; default: the log start offset). With ``min_cleanable_ratio`` set, cleaning happens
    only when the broker would pick the log (dirty ratio above it, or
    ``max_compaction_lag_ms`` passed); otherwise the output is a copy. ``on_corrupt``:
    ``"error"`` (default) stops at a batch that cannot be decoded, naming file, position and
    offset; ``"skip"`` leaves it out of the cleaned segments and lists it in ``skipped``.

    The output is written atomically (an existing ``dst`` is replaced only with
    ``overwrite=True``); ``src`` is only read. Returns a report: ``cleaned``, the offsets
    (``first_dirty_offset``, ``first_uncleanable_offset``, ``next_dirty_offset``, ...),
    records and bytes read and written, ``invalid_records`` (keyless, removed), ``skipped``
    and the output ``segments``.
    """
    return _native_compact(
        src,
        dst,
        now=now,
        delete_retention_ms=delete_retention_ms,
        min_compaction_lag_ms=min_compaction_lag_ms,
        max_compaction_lag_ms=max_compaction_lag_ms,
        min_cleanable_ratio=min_cleanable_ratio,
        segment_bytes=segment_bytes,
        max_index_size=max_index_size,
        index_interval_bytes=index_interval_bytes,
        log_start_offset=log_start_offset,
        high_watermark=high_watermark,
        first_dirty_offset=first_dirty_offset,
        producer_id_expiration_ms=producer_id_expiration_ms,
        max_decompressed_size=max_decompressed_size,
        overwrite=overwrite,
        on_corrupt=on_corrupt,
    )


def _native_compact(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    now: int | None = None,
    **options: Any,
) -> CompactReport:
    return _compact(os.fspath(src), os.fspath(dst), now_ms=now, **options)


def plan(src: str | os.PathLike[str], **options: Any) -> CompactReport:
    """What :func:`compact` (with the same options) would clean, without writing anything:
    its report's offsets, ``cleaned`` saying whether a round would run. The offset map is
    built from the records from ``first_dirty_offset`` up to ``first_uncleanable_offset``
    (those with a key, outside aborted transactions)."""
    return _native_compact(src, src, plan_only=True, **options)


def compact_with_offset_map(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    keys: Sequence[bytes],
    offsets: Sequence[int],
    **options: Any,
) -> CompactReport:
    """:func:`compact` with the offset map computed elsewhere (by the Spark job in
    :mod:`kafkalog.spark.cleanup`): ``keys[i]``'s last offset in the dirty range is
    ``offsets[i]``. With the map :func:`plan` describes, the output is :func:`compact`'s."""
    return _native_compact(
        src, dst, offset_map_keys=list(keys), offset_map_offsets=list(offsets), **options
    )


def retain(
    path: str | os.PathLike[str],
    *,
    retention_ms: int | None = None,
    retention_bytes: int | None = None,
    log_start_offset: int | None = None,
    high_watermark: int | None = None,
    delete_policy: bool = True,
    now: int | None = None,
    dry_run: bool = True,
    write_checkpoint: bool = False,
) -> list[RetainedPartition]:
    """Apply Kafka's retention to every partition under ``path`` (a partition directory or a
    log directory), as the broker's ``deleteOldSegments`` does: first segments wholly below
    the log start offset, then oldest segments while the partition stays at or above
    ``retention_bytes`` without them, then oldest segments whose largest timestamp is more
    than ``retention_ms`` before ``now`` (default: the clock). Each rule stops at the first
    segment it keeps. ``None`` or a negative limit means none. ``delete_policy=False``
    (``cleanup.policy=compact``) applies only the log start offset rule.

    When every segment goes, Kafka first rolls a new empty segment at the log end offset; so
    does this (empty ``.log``/``.index``/``.timeindex``). The log start offset defaults to
    the log directory's ``log-start-offset-checkpoint`` entry, else the first segment's base.
    No rule removes a segment reaching past the high watermark (default: the log directory's
    ``replication-offset-checkpoint`` entry, else the log end offset), so the log start offset
    never passes it.

    ``dry_run=True`` (the default) only reports. Otherwise the segments' files (and their
    producer snapshots) are removed in place, and with ``write_checkpoint=True`` the new log
    start offset is written to the log directory's ``log-start-offset-checkpoint``.

    Returns one dict per partition: ``removed`` (each with path, base_offset, bytes,
    largest_timestamp and the ``reason`` rule), ``log_start_offset`` (new) and
    ``log_start_offset_before``, ``log_end_offset``, ``segments_left``, ``bytes_left``,
    ``rolled``, ``dry_run``.
    """
    return _retain(
        os.fspath(path),
        now_ms=now,
        retention_ms=retention_ms,
        retention_bytes=retention_bytes,
        log_start_offset=log_start_offset,
        high_watermark=high_watermark,
        delete_policy=delete_policy,
        dry_run=dry_run,
        write_checkpoint=write_checkpoint,
    )


def read_compacted(
    path: str | os.PathLike[str],
    compact_options: dict[str, Any],
    read: Callable[..., pa.RecordBatchReader],
    **read_options: Any,
) -> pa.RecordBatchReader:
    """The compacted view of the partition directory ``path``: it is compacted into a
    temporary directory (removed when the returned reader is exhausted or closed) and read
    from there with ``read(..., **read_options)``. Disk use is that of the compacted output.
    """
    src = os.path.abspath(os.fspath(path))
    tmp = tempfile.mkdtemp(prefix=".kafkalog-compacted-")
    try:
        # Same directory name, so topic and partition come out as they would from ``path``.
        dst = os.path.join(tmp, os.path.basename(src.rstrip(os.sep)))
        compact(src, dst, **compact_options)
        reader = read(dst, **read_options)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            yield from reader
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return pa.RecordBatchReader.from_batches(reader.schema, batches())
