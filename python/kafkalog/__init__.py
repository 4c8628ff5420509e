"""kafkalog: Apache Kafka's on-disk log as Apache Arrow.

Read Kafka segment files (``.log``) of every message format (magic v0, v1, v2) and every
compression straight into Arrow record batches::

    import kafkalog
    reader = kafkalog.read("/backup/kafka-logs/orders-3")   # pyarrow.RecordBatchReader
    table = reader.read_all()

The columns are those of Spark's Kafka source (``key``, ``value``, ``topic``, ``partition``,
``offset``, ``timestamp``, ``timestampType``, ``headers``), so code written against a live topic
runs unchanged on files; ``batch_metadata=True`` adds what Kafka keeps per batch.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import pyarrow as pa

from kafkalog import errors, types
from kafkalog._native import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_RECORDS,
    DEFAULT_BATCH_SIZE,
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_SEGMENT_BYTES,
    DEFAULT_TARGET_BYTES,
    __version__,
)
from kafkalog._native import Reader as _Reader
from kafkalog._native import Writer as _Writer
from kafkalog._native import partition_dir as _partition_dir
from kafkalog._native import plan as _plan
from kafkalog._native import read_index as _read_index
from kafkalog._native import rebuild_indexes as _rebuild_indexes
from kafkalog._native import segments as _segments
from kafkalog._native import verify as _verify
from kafkalog._storage import PathLike as _PathLike
from kafkalog._storage import Paths as _Paths
from kafkalog._storage import paths as _paths
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog._time import millis as _millis
from kafkalog.cleanup import compact, retain
from kafkalog.errors import (
    ConcurrentWriteError,
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    DecryptionError,
    EncryptionKeyError,
    IndexNotUsedWarning,
    InvalidArgumentError,
    KafkaLogError,
    KafkaLogFileNotFoundError,
    KafkaLogIOError,
    KafkaLogPermissionError,
    KafkaLogWarning,
    LimitExceededError,
    SkippedBatchWarning,
    StoppedAtCorruptionWarning,
    TieredStorageError,
    TruncatedSegmentWarning,
)
from kafkalog.types import (
    CompactReport,
    Compression,
    IsolationLevel,
    Issue,
    OnCorrupt,
    RebuiltIndexes,
    RetainedPartition,
    Segment,
    TimestampTypeName,
    VerifyReport,
    Visibility,
    WrittenSegment,
)

if TYPE_CHECKING:
    from kafkalog._native import ReaderOptions as _ReaderOptions
    from kafkalog._native import WriterOptions as _WriterOptions

    # Reached through __getattr__ at run time, so that ``import kafkalog`` needs no pyspark.
    from kafkalog.spark import SPARK_SCHEMA as SPARK_SCHEMA
    from kafkalog.spark import decode as decode

__all__ = [
    "__version__",
    "read",
    "read_bytes",
    "read_batches",
    "issues",
    "read_index",
    "verify",
    "segments",
    "plan",
    "read_items",
    "WorkItem",
    "rebuild_indexes",
    "write",
    "compact",
    "retain",
    "schema",
    "COLUMNS",
    "METADATA_COLUMNS",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_SEGMENT_BYTES",
    "DEFAULT_BATCH_RECORDS",
    "DEFAULT_BATCH_BYTES",
    "DEFAULT_TARGET_BYTES",
    "errors",
    "types",
    "OnCorrupt",
    "IsolationLevel",
    "Compression",
    "TimestampTypeName",
    "Segment",
    "Issue",
    "VerifyReport",
    "RebuiltIndexes",
    "WrittenSegment",
    "CompactReport",
    "RetainedPartition",
    "KafkaLogError",
    "CorruptRecordError",
    "CrcMismatchError",
    "DecompressionError",
    "LimitExceededError",
    "InvalidArgumentError",
    "KafkaLogIOError",
    "KafkaLogFileNotFoundError",
    "KafkaLogPermissionError",
    "ConcurrentWriteError",
    "TieredStorageError",
    "DecryptionError",
    "EncryptionKeyError",
    "KafkaLogWarning",
    "TruncatedSegmentWarning",
    "SkippedBatchWarning",
    "StoppedAtCorruptionWarning",
    "IndexNotUsedWarning",
]

#: The columns of Spark's Kafka source, in its order: what :func:`read` returns by default.
COLUMNS: tuple[str, ...] = (
    "key",
    "value",
    "topic",
    "partition",
    "offset",
    "timestamp",
    "timestampType",
    "headers",
)

#: Kafka's per-batch values, added by ``batch_metadata=True`` (or named in ``columns``):
#: the batch's base and last offset, byte position and size in the file, magic, compression,
#: CRC check result (null when not checked), producer id and epoch, the record's sequence,
#: partition leader epoch, transactional and control flags, the batch's base and max
#: timestamps (ms, as stored: the base is the delete horizon when one is set),
#: its delete horizon (ms, null when unset), the control record type (null for data), and
#: for v0/v1 the record's own stored CRC and whether it matches (null for v2).
METADATA_COLUMNS: tuple[str, ...] = (
    "baseOffset",
    "lastOffset",
    "batchPosition",
    "batchSize",
    "magic",
    "compression",
    "crcValid",
    "producerId",
    "producerEpoch",
    "sequence",
    "partitionLeaderEpoch",
    "isTransactional",
    "isControl",
    "baseTimestamp",
    "maxTimestamp",
    "deleteHorizonMs",
    "controlType",
    "recordCrc",
    "recordCrcValid",
)


def _options(
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    topic: str | None = None,
    partition: int | None = None,
    list_batches: bool = False,
    byte_range: tuple[int, int | None] | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | datetime.datetime | None = None,
    end_timestamp: int | datetime.datetime | None = None,
    isolation_level: IsolationLevel = "read_uncommitted",
    threads: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
    visibility: Visibility = "consumer",
    binary_view: bool = False,
) -> _ReaderOptions:
    """The options the native reader takes, checked."""
    if threads is not None and threads < 1:
        raise InvalidArgumentError(f"threads must be at least 1, not {threads}")
    if isolation_level not in ("read_uncommitted", "read_committed"):
        raise InvalidArgumentError(
            "isolation_level must be 'read_uncommitted' or 'read_committed', "
            f"not {isolation_level!r}"
        )
    if batch_size <= 0:
        raise InvalidArgumentError(f"batch_size must be positive, not {batch_size}")
    if max_decompressed_size <= 0:
        raise InvalidArgumentError(
            f"max_decompressed_size must be positive, not {max_decompressed_size}"
        )
    if isinstance(columns, str):
        raise InvalidArgumentError("columns must be a list of column names, not a string")
    return {
        "columns": list(columns) if columns is not None else None,
        "batch_metadata": bool(batch_metadata),
        "batch_size": int(batch_size),
        "include_control": bool(include_control),
        "check_crc": bool(check_crc),
        "on_corrupt": on_corrupt,
        "max_decompressed_size": int(max_decompressed_size),
        "topic": topic,
        "partition": partition,
        "list_batches": list_batches,
        "start_position": None if byte_range is None else int(byte_range[0]),
        "end_position": None if byte_range is None or byte_range[1] is None else int(byte_range[1]),
        "start_offset": start_offset,
        "end_offset": end_offset,
        "start_timestamp": _millis(start_timestamp),
        "end_timestamp": _millis(end_timestamp),
        "read_committed": isolation_level == "read_committed",
        "visibility": visibility,
        "threads": threads,
        "binary_view": bool(binary_view),
        **_storage_kwargs(storage_options, filesystem, encryption_keys),
    }


def _to_reader(native: _Reader) -> pa.RecordBatchReader:
    # from_batches keeps the exceptions our iterator raises as they are (typed, with their
    # attributes), where a C stream would flatten them into ArrowInvalid.
    schema = pa.schema(native.schema)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in native:
            yield pa.record_batch(batch)

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    _NATIVE_READERS[reader] = native
    return reader


#: The native reader behind each reader handed out, for :func:`issues`.
_NATIVE_READERS: weakref.WeakKeyDictionary[pa.RecordBatchReader, _Reader] = (
    weakref.WeakKeyDictionary()
)


def issues(reader: pa.RecordBatchReader) -> list[Issue]:
    """What ``reader`` (returned by :func:`read`, :func:`read_bytes`, :func:`read_batches` or
    :func:`read_items`) has passed over so far without failing: partial batches or zero bytes
    at segment ends, batches left out, partitions ended at a corrupt batch, indexes not used.
    The same as the :class:`KafkaLogWarning` it gave, as dicts (``kind``, ``message``,
    ``path``, ``position``, ``offset``, ``bytes``), for programs that would rather not catch
    warnings. Any other reader (a ``compacted=True`` read's too) is an
    :class:`InvalidArgumentError`.
    """
    native = _NATIVE_READERS.get(reader)
    if native is None:
        raise InvalidArgumentError("not a reader returned by kafkalog.read or its siblings")
    return native.issues


def read(
    path: _Paths,
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    topic: str | None = None,
    partition: int | None = None,
    byte_range: tuple[int, int | None] | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | datetime.datetime | None = None,
    end_timestamp: int | datetime.datetime | None = None,
    isolation_level: IsolationLevel = "read_uncommitted",
    threads: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
    compacted: bool | Mapping[str, Any] = False,
    visibility: Visibility = "consumer",
    binary_view: bool = False,
) -> pa.RecordBatchReader:
    """Stream the records of Kafka segment files as Arrow record batches.

    ``path`` is a ``.log`` segment file, a partition directory ``<topic>-<partition>`` (its
    segments are read in offset order), or a log directory holding partition directories (read
    in topic, partition order), or a list of them (read in the order given). Memory stays
    bounded by ``batch_size``, not by the files.

    Paths are local, or object-store URIs (``s3://bucket/kafka-logs/orders-0``, ``gs://``,
    ``az://``, ``https://``) read natively with ranged requests: credentials and endpoints
    come from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...) and from
    ``storage_options`` (``object_store`` keys, e.g. ``{"aws_endpoint": ...,
    "aws_allow_http": "true"}``). ``filesystem`` (a ``pyarrow.fs`` or fsspec filesystem)
    reads through that filesystem instead, for stores read no other way (``hdfs://``).

    A tiered-storage bucket (KIP-405; Aiven's plugin or Kafka's LocalTieredStorage layout) is
    read in place: its remote segments are found from their manifests and object names, read
    chunk by chunk, and a partition's offsets are each read once. ``encryption_keys``
    (``{key_id: PEM text, bytes or file path}``) are the RSA private keys of encrypted
    segments.

    Options:

    - ``columns``: the columns to produce, in order (see :data:`COLUMNS` and
      :data:`METADATA_COLUMNS`); work for the others is skipped.
    - ``batch_metadata``: add :data:`METADATA_COLUMNS` after the default columns.
    - ``batch_size``: target rows per record batch (a Kafka batch is never split).
    - ``include_control``: also return control records (transaction markers, KRaft control
      records); Kafka's consumers never see them, so they are left out by default.
    - ``check_crc``: verify each batch's CRC (on by default, as Kafka's log recovery does).
    - ``on_corrupt``: ``"error"`` raises a :class:`CorruptRecordError`; ``"skip"`` leaves the
      corrupt batch out and warns; ``"stop"`` ends the partition there and warns, as Kafka's
      log recovery truncates at the first invalid batch.
    - ``max_decompressed_size``: cap on one batch's decompressed bytes (at most 1 GiB).
    - ``topic``, ``partition``: values for those columns, overriding the directory name (a
      file outside a ``<topic>-<partition>`` directory otherwise gets nulls).
    - ``start_offset``, ``end_offset``: read offsets from ``start_offset`` up to (not
      including) ``end_offset``, in every partition read. Segments are picked by their base
      offsets and the first is entered through its ``.index``, not scanned.
    - ``start_timestamp``, ``end_timestamp`` (int milliseconds, or a datetime): start at the
      earliest offset whose timestamp is at or after ``start_timestamp``; end before the
      earliest offset whose timestamp is at or after ``end_timestamp`` (Spark's Kafka source's
      meaning), found through the ``.timeindex``.
    - ``isolation_level``: ``"read_committed"`` reads what a read_committed consumer sees:
      records of aborted transactions and control records left out, and nothing from the
      first offset of a transaction still open at the end of the log (the last stable
      offset). The default is ``"read_uncommitted"``, as in Kafka.
    - ``threads``: threads decoding at once (default: one per core). Segments are cut into
      pieces of about one output batch, so one large segment uses them too. The output is the
      same, in the same order; memory stays bounded.
    - ``byte_range``: ``(start, end)`` byte positions of a single ``.log`` file to read, both
      batch boundaries (``end`` may be ``None`` for the end of the file): how a large segment
      is split across tasks.
    - ``visibility``: ``"consumer"`` (the default) returns what a consumer could fetch: where
      the log directory holding the partition directories has the broker's
      ``replication-offset-checkpoint`` and ``log-start-offset-checkpoint``, records at or
      above the high watermark (never acknowledged) and below the log start offset (deleted
      by retention or DeleteRecords, still on disk) are left out, and ``read_committed``'s
      last stable offset never passes the high watermark. ``"all"`` returns every record on
      disk, for forensics.
    - ``binary_view``: ``key`` and ``value`` as Arrow ``binary_view`` columns that point into
      the bytes read instead of ``binary`` columns holding copies of them (faster, and no
      output to allocate and fill), for consumers that take views (pyarrow, polars, DuckDB;
      ``column.cast(pa.binary())`` gives the default's column). Values of up to 12 bytes are
      stored in the view itself; longer ones point into the segment's memory map (local files
      of 1 MiB or more), the buffers a file was read into (smaller files, object stores), or a
      compressed batch's decompressed records. Header values stay ``binary``. The table keeps
      what it points into alive: a mapped segment stays mapped (and its disk space in use, if
      retention deletes the file) until the table is dropped; everything else is memory the
      default would have used for the copies. A table outlives the reader and the file being
      deleted or compacted away, as Kafka replaces files rather than rewriting them. The one
      exception is a broker truncating a segment in place (a follower's truncation on a leader
      change, or log recovery) while you hold a table pointing into its map: values from the
      truncated part then read as zero bytes, or as the records the broker appended there
      since. Nothing crashes; cast to ``binary`` (or leave the option off) to keep a table of a
      live broker's newest segments for long.

    A partial batch at the end of a segment is not an error: the complete batches are returned
    and a :class:`TruncatedSegmentWarning` says how many bytes were left. An index that cannot
    be used for a seek gives an :class:`IndexNotUsedWarning` and a scan.

    ``compacted=True`` (or a dict of :func:`compact` options) reads the partition directory
    as Kafka's log cleaner would leave it: see :func:`kafkalog.cleanup.read_compacted`.
    """
    if compacted is not False:
        from kafkalog.cleanup import read_compacted

        compact_options: dict[str, Any] = {} if compacted is True else dict(compacted)
        kwargs = dict(locals())
        for name in ("path", "compacted", "compact_options", "read_compacted"):
            kwargs.pop(name)
        if not isinstance(path, str | os.PathLike):
            raise InvalidArgumentError("compacted=True reads one partition directory")
        return read_compacted(path, compact_options, read, **kwargs)
    options = _options(
        columns=columns,
        batch_metadata=batch_metadata,
        batch_size=batch_size,
        include_control=include_control,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        max_decompressed_size=max_decompressed_size,
        topic=topic,
        partition=partition,
        byte_range=byte_range,
        start_offset=start_offset,
        end_offset=end_offset,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        isolation_level=isolation_level,
        threads=threads,
        storage_options=storage_options,
        filesystem=filesystem,
        encryption_keys=encryption_keys,
        visibility=visibility,
        binary_view=binary_view,
    )
    return _to_reader(_Reader.open(_paths(path), options))


def read_bytes(
    data: bytes | bytearray | memoryview,
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    topic: str | None = None,
    partition: int | None = None,
    binary_view: bool = False,
) -> pa.RecordBatchReader:
    """Decode log entries already in memory: a segment's bytes, or the ``records`` field of a
    Fetch response. Options as :func:`read`; positions in errors count from the buffer's start.
    With ``binary_view`` the columns point into ``data`` (a ``bytes`` object is kept alive, not
    copied) and into decompressed batches.
    """
    if isinstance(data, memoryview):
        data = data.tobytes()
    options = _options(
        columns=columns,
        batch_metadata=batch_metadata,
        batch_size=batch_size,
        include_control=include_control,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        max_decompressed_size=max_decompressed_size,
        topic=topic,
        partition=partition,
        binary_view=binary_view,
    )
    return _to_reader(_Reader.from_bytes(bytes(data), options))


def read_batches(
    source: _PathLike | bytes | bytearray | memoryview,
    *,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    batch_size: int = DEFAULT_BATCH_SIZE,
    topic: str | None = None,
    partition: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
    visibility: Visibility = "consumer",
) -> pa.RecordBatchReader:
    """List batches instead of records: one row per Kafka batch, as ``kafka-dump-log`` prints
    them without ``--deep-iteration``.

    ``source`` is a path (as :func:`read` takes) or bytes in memory. Columns: topic, partition,
    batchPosition, batchSize, magic, baseOffset, lastOffset, recordCount, crc, crcValid,
    compression, timestampType, baseTimestamp, maxTimestamp, partitionLeaderEpoch, producerId,
    producerEpoch, baseSequence, lastSequence, isTransactional, isControl, deleteHorizonMs.

    Records are not decoded. Each CRC is computed and reported in ``crcValid`` without failing
    (``check_crc=False`` skips it and leaves ``crcValid`` null). For magic v0/v1, a compressed
    wrapper is one batch and each uncompressed message is its own batch, as in Kafka.
    ``visibility`` as :func:`read`: by default a batch is listed when a consumer could fetch
    one of its offsets; ``"all"`` lists every batch on disk, as ``kafka-dump-log`` does.
    """
    options = _options(
        batch_size=batch_size,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        max_decompressed_size=max_decompressed_size,
        topic=topic,
        partition=partition,
        list_batches=True,
        storage_options=storage_options,
        filesystem=filesystem,
        encryption_keys=encryption_keys,
        visibility=visibility,
    )
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _to_reader(_Reader.from_bytes(bytes(source), options))
    return _to_reader(_Reader.open(_paths(source), options))


def read_index(
    path: _PathLike,
    *,
    base_offset: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
) -> pa.Table:
    """Read one of the files beside a segment into a table, by its name:

    - ``.index``: offset, relativeOffset, position;
    - ``.timeindex``: timestamp, offset, relativeOffset;
    - ``.txnindex``: version, producerId, firstOffset, lastOffset, lastStableOffset;
    - ``.snapshot``: one row per producer (producerId, producerEpoch, coordinatorEpoch,
      currentTxnFirstOffset, lastTimestamp, firstSequence, lastSequence, lastOffset,
      offsetDelta), its CRC verified;
    - ``leader-epoch-checkpoint``: epoch, startOffset.

    Offset and time indexes stop at the first preallocated (zero) slot, as
    ``kafka-dump-log`` does. ``base_offset`` is needed only when the name does not give it.
    Index files are returned whole, whatever the broker's high watermark and log start
    offset (``visibility`` does not apply): they describe bytes on disk, as the broker's own
    index files do, not what a consumer may fetch.
    """
    native = _read_index(
        os.fspath(path),
        base_offset,
        **_storage_kwargs(storage_options, filesystem, encryption_keys),
    )
    return pa.Table.from_batches([pa.record_batch(native)])


def segments(
    path: _Paths,
    *,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
) -> list[Segment]:
    """The segment files :func:`read` reads for ``path``, in its order: the file itself; a
    partition directory's ``<20-digit offset>.log`` files in offset order; or, for a log
    directory, those of each ``<topic>-<partition>`` directory in topic, partition order
    (directories Kafka is deleting or moving, and ``.log.deleted``/``.cleaned``/``.swap``
    files, are left out, as a broker leaves them out). Each is a dict with ``path``,
    ``topic``, ``partition`` and ``base_offset`` (``None`` where the names do not say),
    ``size``, and what a consumer could fetch of the partition: ``log_start_offset`` and
    ``high_watermark`` from the broker's checkpoint files, and ``hidden``
    (``"above_high_watermark"``/``"below_log_start"`` for a segment wholly outside them).
    Every segment on disk is listed, whatever ``visibility`` a read would use.
    """
    return _segments(_paths(path), **_storage_kwargs(storage_options, filesystem, encryption_keys))


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


_Bounds = tuple[int | None, int | None, int | None, int | None]


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
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, str | bytes | os.PathLike[str]] | None = None,
    visibility: Visibility = "consumer",
) -> list[WorkItem]:
    """Plan a read as work items of about ``target_bytes`` each, cut at batch boundaries
    (``None``: one item per file), for tasks to decode with :func:`read_items`.

    Bounds as :func:`read` takes them, for every partition, or per partition in
    ``partition_bounds`` (``{(topic, partition): {"start_offset": ..., ...}}``); ``keep``
    chooses the partitions. Planning reads indexes, producer snapshots and the few log bytes
    that confirm them, as a broker serves a fetch: timestamps become offsets through the
    ``.timeindex``, ``read_committed`` takes aborted transactions from the ``.txnindex``
    files and the last stable offset from the latest producer snapshot and the log after it.
    Each item carries the offsets and aborted transactions its records are filtered by.
    ``visibility`` as :func:`read`.
    """
    if isolation_level not in ("read_uncommitted", "read_committed"):
        raise InvalidArgumentError(f"isolation_level: not {isolation_level!r}")
    if target_bytes is not None and target_bytes <= 0:
        raise InvalidArgumentError(f"target_bytes must be positive, not {target_bytes}")
    storage = _storage_kwargs(storage_options, filesystem, encryption_keys)

    def four(b: Mapping[str, Any]) -> _Bounds:
        return (
            b.get("start_offset"),
            b.get("end_offset"),
            _millis(b.get("start_timestamp")),
            _millis(b.get("end_timestamp")),
        )

    segs = [
        (s["path"], s["topic"], s["partition"], s["size"])
        for s in _segments(_paths(path), **storage)
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
    items, issues = _plan(
        segs,
        default_bounds=default,
        bounds=per,
        read_committed=isolation_level == "read_committed",
        target_bytes=target_bytes,
        max_decompressed_size=max_decompressed_size,
        visibility=visibility,
        **storage,
    )
    for issue in issues:
        warnings.warn(
            IndexNotUsedWarning(
                issue["message"],
                path=issue["path"],
                position=issue["position"],
                offset=issue["offset"],
                bytes=issue["bytes"],
            ),
            stacklevel=2,
        )
    return [WorkItem(*i) for i in items]


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
) -> pa.RecordBatchReader:
    """Decode work items made by :func:`plan` (in their order), without planning again.
    Options as :func:`read`; ``threads`` defaults to one (a task's share)."""
    options = _options(
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
    )
    rows = [tuple(i) for i in items]
    return _to_reader(_Reader.open_items(rows, options))


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


def schema(
    columns: Sequence[str] | None = None,
    *,
    batch_metadata: bool = False,
    binary_view: bool = False,
) -> pa.Schema:
    """The Arrow schema :func:`read` produces for these options."""
    options = _options(columns=columns, batch_metadata=batch_metadata, binary_view=binary_view)
    return pa.schema(_Reader.from_bytes(b"", options).schema)


def _batches(data: Any) -> Iterator[pa.RecordBatch]:
    """The record batches of anything Arrow-shaped, lazily."""
    if isinstance(data, pa.RecordBatch):
        return iter([data])
    if isinstance(data, pa.Table):
        return iter(data.to_batches())
    if isinstance(data, pa.RecordBatchReader):
        return iter(data)
    if hasattr(data, "__arrow_c_stream__"):
        return iter(pa.RecordBatchReader.from_stream(data))
    if isinstance(data, list | tuple) and all(isinstance(b, pa.RecordBatch) for b in data):
        return iter(data)
    raise InvalidArgumentError(
        "data must be a pyarrow Table, RecordBatch, RecordBatchReader, a list of batches, or "
        f"an object with __arrow_c_stream__; got {type(data).__name__}"
    )


def write(
    path: _PathLike,
    data: Any,
    *,
    magic: int | None = None,
    compression: Compression | None = None,
    compression_level: int | None = None,
    timestamp_type: TimestampTypeName | None = None,
    log_append_time: int | None = None,
    base_offset: int = 0,
    batch_records: int = DEFAULT_BATCH_RECORDS,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    preserve_batches: bool = True,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    partition_leader_epoch: int = 0,
    segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    overwrite: bool = False,
    topic: str | None = None,
    partition: int | None = None,
    fsync: bool = True,
    storage_options: Mapping[str, Any] | None = None,
) -> list[WrittenSegment]:
    """Write records as a Kafka partition directory that a broker and any Kafka client read.

    ``path`` is the partition directory to create (``.../<topic>-<partition>``): segments
    ``<20-digit base offset>.log`` rolled before ``segment_bytes`` (``log.segment.bytes``), each
    with ``.index`` and ``.timeindex`` entries every ``index_interval_bytes`` as a broker adds
    them, a ``.txnindex`` where a transaction is aborted, and producer snapshots
    (``<offset>.snapshot``) at each roll and at the end, as a broker takes them. The write is
    atomic: it is built in a hidden directory beside ``path`` and renamed into place when
    complete; an existing ``path`` is only replaced with ``overwrite=True``, in one atomic swap
    (readers see the old directory or the new one, never a mix). One writer at a time: a second
    writer of the same directory raises :class:`ConcurrentWriteError`. Files and directories are
    fsynced before the directory is published (``fsync=False`` skips that: faster, but a power
    cut may then lose a write that returned). A symbolic link at ``path`` is refused.

    With ``topic`` (and ``partition``, default 0), ``path`` is the log directory and the
    partition directory written is ``<path>/<topic>-<partition>``; the topic and partition are
    checked as Kafka checks them (ASCII letters, digits, ``.``, ``_``, ``-``; 1 to 249
    characters; not ``.`` or ``..``; partition 0 to 2**31-1), so a name taken from data cannot
    place files outside ``path`` (:class:`InvalidArgumentError` otherwise, before anything is
    written).

    ``data``: a pyarrow Table, RecordBatch(es) or RecordBatchReader with :func:`read`'s columns:
    ``key`` and ``value`` (binary), ``timestamp``, ``headers``, optionally ``offset`` (kept:
    strictly increasing, gaps allowed; else assigned from ``base_offset``) and optionally the
    batch-metadata columns. With the metadata (``read(..., batch_metadata=True)``) and
    ``preserve_batches``, each batch is rebuilt as it was: uncompressed batches come out byte
    for byte, compressed ones with the same records and boundaries. (A v2 LogAppendTime batch
    is the exception: readers see only the append time, never its records' original
    timestamps, so those cannot be written back.) Otherwise records are
    batched as a producer does: up to ``batch_records`` records and ``batch_bytes``
    uncompressed bytes (the producer's ``batch.size``) per batch.

    ``magic`` (0, 1 or 2) and ``compression`` (``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``
    from magic 2) default to the ``magic``/``compression`` columns when present, else 2 and
    none. ``timestamp_type`` is ``"CreateTime"`` or ``"LogAppendTime"`` (then every batch gets
    ``log_append_time``; by default the rows' own latest timestamp, which rows read from a
    LogAppendTime batch carry, else the time of the write). ``producer_id``,
    ``producer_epoch``, ``base_sequence`` and ``transactional`` set the producer fields of
    fresh batches.

    ``path`` may be an object-store prefix (``s3://bucket/kafka-logs/orders-0``; credentials
    from the environment and ``storage_options``, as :func:`read` takes them). There is no
    rename there: the write claims the prefix with a conditional put of a
    ``.kafkalog-writing`` marker (a second writer fails with :class:`ConcurrentWriteError`),
    uploads each segment as it is complete, and publishes with a conditional put of a
    ``.kafkalog-manifest`` listing every file; readers read only what a manifest lists and
    nothing under a prefix still being written, so a failed or killed write is never read.
    A killed writer leaves its marker: delete it to write that partition again.

    Bad input (headers or control records for magic 0/1, zstd below magic 2, decreasing
    offsets, a null header key, a non-binary key) raises before anything is written.
    Returns one dict per segment written (path, base_offset, last_offset, batches, records,
    bytes).
    """
    options: _WriterOptions = {
        "magic": magic,
        "compression": compression,
        "compression_level": compression_level,
        "timestamp_type": timestamp_type,
        "log_append_time": log_append_time,
        "base_offset": base_offset,
        "batch_records": batch_records,
        "batch_bytes": batch_bytes,
        "preserve_batches": preserve_batches,
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": base_sequence,
        "transactional": transactional,
        "partition_leader_epoch": partition_leader_epoch,
        "segment_bytes": segment_bytes,
        "index_interval_bytes": index_interval_bytes,
        "overwrite": overwrite,
        "fsync": fsync,
        "storage_options": _storage_kwargs(storage_options, None)["storage_options"],
    }
    if topic is not None:
        path = _partition_dir(os.fspath(path), topic, 0 if partition is None else partition)
    elif partition is not None:
        raise InvalidArgumentError("partition is given without topic")
    batches = _batches(data)
    writer = _Writer(os.fspath(path), options)
    try:
        for batch in batches:
            writer.write(batch)
        return writer.finish()
    except BaseException:
        writer.abort()  # nothing half-written is left
        raise


# Kafka's internal topics as tables (kafkalog/internal.py).
from kafkalog.errors import UndecodedRecordWarning  # noqa: E402
from kafkalog.internal import (  # noqa: E402
    cluster_metadata,
    cluster_state,
    consumer_groups,
    consumer_offsets,
    remote_log_metadata,
    transactions,
)

__all__ += [
    "consumer_offsets",
    "consumer_groups",
    "transactions",
    "cluster_metadata",
    "cluster_state",
    "remote_log_metadata",
    "UndecodedRecordWarning",
]


# The Spark integration (kafkalog.spark) needs pyspark, so it is imported on first use:
# ``df.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``. Type checkers see the two names
# through the TYPE_CHECKING import above, dir() through __dir__; they are in __all__ where
# pyspark is installed (``from kafkalog import *`` would otherwise fail on them).
_SPARK_NAMES = ("decode", "SPARK_SCHEMA")
if importlib.util.find_spec("pyspark") is not None:
    __all__ += list(_SPARK_NAMES)


def __getattr__(name: str) -> Any:
    if name in _SPARK_NAMES:
        from kafkalog import spark

        return getattr(spark, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SPARK_NAMES))
