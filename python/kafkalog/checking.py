"""Checking and repairing a log on disk: :func:`verify` (what ``kafka-dump-log
--verify-index-only --index-sanity-check`` checks, and more) and :func:`rebuild_indexes` (as
Kafka's log recovery regenerates them). Each is also ``kafkalog.<name>``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from kafkalog._native import DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_DECOMPRESSED_SIZE
from kafkalog._native import rebuild_indexes as _rebuild_indexes
from kafkalog._native import verify as _verify
from kafkalog._storage import PathLike as _PathLike
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog.types import RebuiltIndexes, VerifyReport

__all__ = ["verify", "rebuild_indexes"]


def verify(
    path: _PathLike,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
) -> VerifyReport:
    """Check a log directory, partition directory or segment, as ``kafka-dump-log
    --verify-index-only --index-sanity-check`` does and more.

    Every batch is decoded (CRC and records), offsets must increase within and across
    segments, a torn tail is reported, and each ``.index``, ``.timeindex`` and ``.txnindex``
    entry is checked against the log: offset-index entries must point at batch starts,
    time-index entries must hold the log's running maximum timestamp at their offset, and
    the transaction index must list exactly the aborted transactions the markers say.

    Returns ``{"ok": bool, "segments": [...], "problems": [...], "notes": [...]}``; each
    problem and note is a dict with ``kind``, ``message``, ``path``, ``position`` and
    ``offset``. Problems are what Kafka would reject or repair; notes are worth knowing but
    not wrong (a missing index, or an index entry that names a later batch of the same
    append, which ``kafka-dump-log`` lists as a mismatch although lookups stay correct).
    Every byte on disk is checked, whatever ``visibility`` a read would use: records above the
    high watermark or below the log start offset are not problems (a broker keeps both
    until it truncates or deletes them); :func:`segments` and ``kafkalog info`` say which
    segments lie outside what a consumer sees.
    """
    return _verify(
        os.fspath(path), max_decompressed_size, **_storage_kwargs(storage_options, filesystem)
    )


def rebuild_indexes(
    path: _PathLike,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[RebuiltIndexes]:
    """Regenerate the ``.index``, ``.timeindex`` and ``.txnindex`` of every segment under
    ``path`` from the logs, as Kafka's log recovery does: an entry whenever more than
    ``index_interval_bytes`` passed since the last one, a final time entry, and the aborted
    transactions found from the markers. Indexing stops at the first invalid batch, like
    recovery, but the ``.log`` is never modified. Each file is replaced atomically.

    Returns one dict per segment: path, index_entries, time_index_entries,
    aborted_transactions, valid_bytes, log_bytes, and ``stopped`` (why indexing stopped
    early, or ``None``).
    """
    return _rebuild_indexes(os.fspath(path), index_interval_bytes, max_decompressed_size)
