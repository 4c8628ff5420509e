"""Kafka's internal topics as tables: consumer offsets, consumer groups, transactions, KRaft
cluster metadata and tiered storage's remote log metadata.

Each function takes what :func:`kafkalog.read` takes (a log directory, a partition directory
or a segment file; KRaft snapshot ``.checkpoint`` files too). The Rust core does the rest in
one call (``kafkalog._native.internal_table``; ``cluster_state_tables`` for
:func:`cluster_state`): it finds the internal topic's partitions as :func:`kafkalog.read`
finds files, reads them and folds the records, where the record schemas and Kafka's loading
rules are (the loading tiered storage's reads use for ``__remote_log_metadata`` too).

Each also takes ``storage_options`` as :func:`kafkalog.read` does, for partitions in an object
store (``s3://...``).

Record types or versions newer than kafkalog knows are passed over with an
:class:`~kafkalog.errors.UndecodedRecordWarning` (the raw key and value on it). A record that does
not decode as its declared type and version raises :class:`~kafkalog.errors.CorruptRecordError`
naming file, position and offset; ``on_corrupt="skip"`` warns instead.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog._native import cluster_state_tables as _cluster_state_tables
from kafkalog._native import internal_table as _internal_table
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog._time import millis as _millis
from kafkalog.errors import UndecodedRecordWarning
from kafkalog.errors import warn as _warn_at_caller

if TYPE_CHECKING:
    from kafkalog._native import InternalIssue

__all__ = [
    "consumer_offsets",
    "consumer_groups",
    "transactions",
    "cluster_metadata",
    "remote_log_metadata",
    "cluster_state",
]


def _warn(issues: Iterable[InternalIssue]) -> None:
    for issue in issues:
        _warn_at_caller(
            UndecodedRecordWarning(
                issue["message"],
                path=issue["path"],
                position=issue["position"],
                offset=issue["offset"],
                key=issue["key"],
                value=issue["value"],
                corrupt=issue["corrupt"],
            ),
        )


def _fold(
    kind: str,
    topic: str,
    path: str | os.PathLike[str],
    *,
    history: bool = False,
    on_corrupt: str = "error",
    as_of: int | datetime.datetime | None = None,
    retention_ms: int | None = None,
    log_ends: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """The table of ``kind`` from ``topic``'s partitions under ``path``: found, read and
    folded in the core (``kafkalog._native.internal_table``), as the broker's coordinator
    loads them."""
    batch, issues = _internal_table(
        kind,
        topic,
        os.fspath(path),
        history=history,
        on_corrupt=on_corrupt,
        as_of=_millis(as_of),
        retention_ms=retention_ms,
        log_ends=log_ends,
        storage_options=_storage_kwargs(storage_options, None)["storage_options"],
    )
    _warn(issues)
    return pa.Table.from_batches([pa.record_batch(batch)])


def consumer_offsets(
    path: str | os.PathLike[str],
    *,
    history: bool = False,
    group: str | None = None,
    on_corrupt: str = "error",
    as_of: int | datetime.datetime | None = None,
    retention_ms: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """The committed offsets in the ``__consumer_offsets`` partitions under ``path``, as a
    group coordinator loads them: one row per (group, topic, partition), the last commit
    winning and a tombstone deleting (transactional commits only once committed).

    Columns: ``group``, ``topic``, ``partition``, ``offset``, ``leaderEpoch`` (null when the
    commit has none), ``metadata``, ``commitTimestamp``, ``expireTimestamp`` (null when absent),
    ``expired`` (by Kafka's rules at ``as_of``: int milliseconds or a datetime, one without a
    time zone taken as UTC; default the latest record timestamp read, with
    ``retention_ms``, default Kafka's 7 days), ``logEndOffset`` and ``lag`` (against the log end
    of the same backup's partition, null when it is not there), ``sourcePartition`` and
    ``sourceOffset`` (where in ``__consumer_offsets`` the commit is).

    ``history=True`` returns every commit and tombstone in log order instead (column
    ``deleted`` marks tombstones). ``group`` keeps one group's rows.
    """
    table = _fold(
        "consumer_offsets",
        "__consumer_offsets",
        path,
        history=history,
        on_corrupt=on_corrupt,
        as_of=as_of,
        retention_ms=retention_ms,
        log_ends=True,
        storage_options=storage_options,
    )
    if group is not None:
        table = table.filter(pc.equal(table["group"], group))
    return table


def consumer_groups(
    path: str | os.PathLike[str],
    *,
    on_corrupt: str = "error",
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """The groups in the ``__consumer_offsets`` partitions under ``path``, one row each:
    ``group``, ``type`` (classic, consumer, share), ``protocolType``, ``state`` (``Stable``
    with members, ``Empty`` without, as a coordinator loads a group), ``generation`` (the
    group epoch for consumer and share groups), ``protocol``, ``leader``,
    ``currentStateTimestamp``, ``members`` (member and client ids, host, timeouts, subscribed
    topics and assigned ``topic-partition``s; consumer groups' assignments name topic ids) and
    where the group's record is."""
    return _fold(
        "consumer_groups",
        "__consumer_offsets",
        path,
        on_corrupt=on_corrupt,
        storage_options=storage_options,
    )


def transactions(
    path: str | os.PathLike[str],
    *,
    on_corrupt: str = "error",
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """The transactional ids in the ``__transaction_state`` partitions under ``path``, as the
    transaction coordinator loads them: ``transactionalId``, ``producerId``,
    ``producerEpoch``, ``previousProducerId``, ``nextProducerId``, ``state`` (``Ongoing``,
    ``PrepareCommit``, ``CompleteCommit``, ...), ``transactionTimeoutMs``, ``partitions``,
    ``lastUpdateTimestamp``, ``startTimestamp``, ``clientTransactionVersion`` and where the
    record is. A tombstone deletes the id."""
    return _fold(
        "transactions",
        "__transaction_state",
        path,
        on_corrupt=on_corrupt,
        storage_options=storage_options,
    )


def cluster_metadata(
    path: str | os.PathLike[str],
    *,
    on_corrupt: str = "error",
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """One row per KRaft metadata record in ``__cluster_metadata-0`` (or a snapshot
    ``.checkpoint`` file): ``partition``, ``offset``, ``timestamp``, ``type`` (the record
    type's name, ``TopicRecord``, ``PartitionRecord``, ...), ``typeId``, ``version``, ``data``
    (the fields as JSON, in Kafka's field names) and ``raw`` (the value's bytes when it was not
    decoded)."""
    return _fold(
        "cluster_metadata",
        "__cluster_metadata",
        path,
        on_corrupt=on_corrupt,
        storage_options=storage_options,
    )


def cluster_state(
    path: str | os.PathLike[str], *, storage_options: Mapping[str, Any] | None = None
) -> dict[str, pa.Table]:
    """The cluster's state from KRaft metadata, as a controller rebuilds it: the latest
    snapshot (``<end offset>-<epoch>.checkpoint``) in ``path`` when there is one, then the
    log's records from the snapshot's end offset on (given a log directory: those of its
    ``__cluster_metadata-0``). Tables: ``topics`` (name, topicId, partitions), ``partitions``
    (topic, topicId, partition, replicas, isr, removingReplicas, addingReplicas, leader,
    leaderEpoch, partitionEpoch, leaderRecoveryState, eligibleLeaderReplicas, lastKnownElr),
    ``configs`` (resourceType, resourceName, name, value), ``brokers`` (brokerId,
    brokerEpoch, incarnationId, rack, fenced, inControlledShutdown, endpoints) and
    ``features`` (name, featureLevel). ``path`` may also be a single ``.log`` or
    ``.checkpoint`` file."""
    options = _storage_kwargs(storage_options, None)["storage_options"]
    tables = _cluster_state_tables(os.fspath(path), options)
    return {name: pa.Table.from_batches([pa.record_batch(b)]) for name, b in tables}


def remote_log_metadata(
    path: str | os.PathLike[str],
    *,
    history: bool = False,
    on_corrupt: str = "error",
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """Tiered storage's remote log segments from the ``__remote_log_metadata`` partitions
    under ``path``, one row per segment in its latest state (``COPY_SEGMENT_STARTED``,
    ``COPY_SEGMENT_FINISHED``, ``DELETE_SEGMENT_STARTED``, ``DELETE_SEGMENT_FINISHED``) with
    its topic, topic id, partition, offsets, broker, timestamps and size;
    ``history=True``: one row per record, as :func:`cluster_metadata`."""
    return _fold(
        "remote_log_metadata",
        "__remote_log_metadata",
        path,
        history=history,
        on_corrupt=on_corrupt,
        storage_options=storage_options,
    )
