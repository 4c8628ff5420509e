"""Kafka's internal topics as tables: consumer offsets, consumer groups, transactions, KRaft
cluster metadata and tiered storage's remote log metadata.

Each function takes what :func:`kafkalog.read` takes (a log directory, a partition directory
or a segment file; KRaft snapshot ``.checkpoint`` files too), picks the partitions of its
internal topic, reads them with :func:`kafkalog.read` and folds the records in the Rust core
(``kafkalog._native.InternalFold``), where the record schemas and Kafka's loading rules are.

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
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog._native import ClusterStateFold as _ClusterStateFold
from kafkalog._native import InternalFold as _InternalFold
from kafkalog._native import list_files as _list_files
from kafkalog._native import log_end_offset as _log_end_offset
from kafkalog._native import path_kind as _path_kind
from kafkalog._time import millis as _millis
from kafkalog.errors import UndecodedRecordWarning

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

_COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "batchPosition"]


#: Storage keyword arguments of kafkalog's readers.
_Storage = dict[str, Any]


def _storage(storage_options: Mapping[str, Any] | None) -> _Storage:
    return {} if storage_options is None else {"storage_options": dict(storage_options)}


def _options(store: _Storage) -> dict[str, str] | None:
    options = store.get("storage_options")
    return None if options is None else {str(k): str(v) for k, v in options.items()}


def _is_file(path: str, store: _Storage) -> bool:
    return _path_kind(path, _options(store)) == "file"


def _checkpoints(path: str, store: _Storage) -> list[str]:
    """The KRaft snapshot files (``.checkpoint``) directly in ``path``, sorted."""
    return [f for f, _ in _list_files(path, _options(store)) if f.endswith(".checkpoint")]


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _partitions(path: str, topic: str, store: _Storage) -> list[tuple[str, list[tuple[int, str]]]]:
    """The partitions of ``topic`` under ``path``, each as (what to read, its segment files
    as (base offset, path)). A path whose names do not say the topic is taken as given."""
    import kafkalog

    path = os.fspath(path)
    if _is_file(path, store):
        name = _name(path)
        base = int(name.split(".")[0]) if name.split(".")[0].isdigit() else 0
        return [(path, [(base, path)])]
    groups: dict[tuple[str | None, int | None], list[tuple[int, str]]] = {}
    with warnings.catch_warnings():
        # A directory of KRaft snapshots only has no segment: not worth a warning here.
        warnings.simplefilter("ignore", UserWarning)
        segments = kafkalog.segments(path, **store)
    for seg in segments:
        if seg["topic"] not in (topic, None):
            continue
        groups.setdefault((seg["topic"], seg["partition"]), []).append(
            (seg["base_offset"] or 0, seg["path"])
        )
    out = []
    for files in groups.values():
        directory = files[0][1].rsplit("/", 1)[0]
        out.append((directory, files))
    # A KRaft snapshot (.checkpoint) is a sequence of batches too: read it as a file.
    if topic == "__cluster_metadata" and not out:
        for full in _checkpoints(path, store):
            out.append((full, [(0, full)]))
    return out


def _warn(issues: Iterable[InternalIssue]) -> None:
    for issue in issues:
        warnings.warn(
            UndecodedRecordWarning(
                issue["message"],
                path=issue["path"],
                position=issue["position"],
                offset=issue["offset"],
                key=issue["key"],
                value=issue["value"],
                corrupt=issue["corrupt"],
            ),
            stacklevel=3,
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
    import kafkalog

    fold = _InternalFold(
        kind,
        history=history,
        on_corrupt=on_corrupt,
        as_of=_millis(as_of),
        retention_ms=retention_ms,
    )
    store = _storage(storage_options)
    for source, files in _partitions(os.fspath(path), topic, store):
        # read_committed: a coordinator loads only committed transactional records.
        reader = kafkalog.read(
            source,
            columns=_COLUMNS,
            isolation_level="read_committed",
            on_corrupt="skip" if on_corrupt == "skip" else "error",
            **store,
        )
        for batch in reader:
            fold.feed(batch, source, files)
            _warn(fold.take_issues())
    if log_ends:
        for (data_topic, partition), (base, last) in _last_segments(path, store).items():
            listing = kafkalog.read_batches(last, check_crc=False, on_corrupt="skip", **store)
            fold.set_log_end(data_topic, partition, _log_end_offset(listing, base))
    table = pa.Table.from_batches([pa.record_batch(fold.finish())])
    _warn(fold.take_issues())
    return table


def _last_segments(
    path: str | os.PathLike[str], store: _Storage
) -> dict[tuple[str, int], tuple[int, str]]:
    """Each data partition's last segment (base offset, path) under ``path``."""
    import kafkalog

    path = os.fspath(path)
    if _is_file(path, store):
        return {}
    last: dict[tuple[str, int], tuple[int, str]] = {}
    for seg in kafkalog.segments(path, **store):
        topic, partition = seg["topic"], seg["partition"]
        if topic is None or partition is None or topic.startswith("__"):
            continue
        last[(topic, partition)] = (seg["base_offset"] or 0, seg["path"])
    return last


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
    ``expired`` (by Kafka's rules at ``as_of``, default the latest record timestamp read, with
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
    import kafkalog

    path = os.fspath(path)
    store = _storage(storage_options)
    fold = _ClusterStateFold()
    if _is_file(path, store):
        fold.feed(kafkalog.read(path, columns=["value"], **store))
    else:
        # A log directory: its metadata partition, where the snapshots are too.
        partition = path.rstrip("/") + "/__cluster_metadata-0"
        if _path_kind(partition, _options(store)) == "dir":
            path = partition
        snapshots = _checkpoints(path, store)
        start = None
        if snapshots:
            fold.feed(kafkalog.read(snapshots[-1], columns=["value"], **store))
            start = int(_name(snapshots[-1]).split("-")[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a directory of snapshots only
            segments = kafkalog.segments(path, **store)
        if segments:
            fold.feed(kafkalog.read(path, columns=["value"], start_offset=start, **store))
    return {name: pa.Table.from_batches([pa.record_batch(b)]) for name, b in fold.tables()}


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
