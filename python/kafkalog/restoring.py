"""Restoring a backup into a stopped Kafka broker's log directory, every offset kept
(:func:`restore`; docs/restore.md).

The rules (leader epochs, transactions, checkpoints, where a group's offsets go) are Kafka's
and live in the Rust core (``rust/restore/``); this module only passes options.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from typing import Any

from kafkalog._native import restore as _restore
from kafkalog._storage import storage_kwargs
from kafkalog._time import millis
from kafkalog.types import RestoreReport

__all__ = ["restore"]


def restore(
    sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    to: str | os.PathLike[str],
    *,
    topics: str | None = None,
    until: int | datetime.datetime | None = None,
    groups: bool = False,
    plan: bool = False,
    fsync: bool = True,
    storage_options: Mapping[str, Any] | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
) -> RestoreReport:
    """Restore the backup ``sources`` into ``to``, a **stopped** broker's log directory, with
    every offset, timestamp, header and transaction as it was.

    ``sources`` is anything :func:`kafkalog.read` accepts: a log directory, partition
    directories, an object-store prefix, a tiered-storage bucket, several brokers' volumes.
    The target must be a broker's log directory (``meta.properties``) whose broker is stopped
    (its ``.lock`` is not held), and must already have every partition restored: create the
    topics first with as many partitions. Its ``partition.metadata`` (topic ids) is kept.

    - ``topics``: a regular expression (Kafka's consumer's pattern rule) of the topics to
      restore; internal topics only where it names them.
    - ``until``: cut each partition at its last whole batch whose max timestamp is at or
      before this time (int milliseconds or a datetime); a transaction open at the cut is
      aborted, as its coordinator would abort it after its timeout.
    - ``groups``: also write the backup's committed offsets (of the restored topics) into the
      target's ``__consumer_offsets``, so consumer groups resume where they stood.
    - ``plan``: write nothing; the report says what would be written.
    - ``fsync``: flush files to disk before a step counts as done.
    - ``storage_options``, ``encryption_keys``: for backups in object stores and tiered
      storage, as :func:`kafkalog.read` takes them.

    Each partition is swapped in atomically; a restore killed at any point and run again ends
    as one that ran through. Returns a report: per partition the offsets, segments, batches,
    bytes, the leader epoch batches were capped at, transactions aborted; per group where its
    commits went.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    options = storage_kwargs(storage_options, None, encryption_keys)["storage_options"]
    report: RestoreReport = _restore(
        [os.fspath(s) for s in sources],
        os.fspath(to),
        topics=topics,
        until_ms=millis(until),
        groups=groups,
        plan=plan,
        fsync=fsync,
        storage_options=options,
    )
    return report
