"""Reading Kafka's log as Arrow: :func:`read` (paths), :func:`read_bytes` (bytes in memory),
:func:`read_batches` (one row per batch), :func:`read_index` (the files beside a segment),
:func:`segments` (which files a path stands for), :func:`schema` and :func:`issues`.

Each is also ``kafkalog.<name>``. The reader options are checked here once
(:func:`reader_options`) for every reading function, :func:`kafkalog.read_items` included.
"""

from __future__ import annotations

import datetime
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kafkalog._isolation import read_committed as _read_committed
from kafkalog._native import DEFAULT_BATCH_SIZE, DEFAULT_MAX_DECOMPRESSED_SIZE
from kafkalog._native import Reader as _Reader
from kafkalog._native import read_index as _read_index
from kafkalog._native import segments as _segments
from kafkalog._storage import PathLike as _PathLike
from kafkalog._storage import Paths as _Paths
from kafkalog._storage import paths as _paths
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog._time import millis as _millis
from kafkalog.cleanup import read_compacted as _read_compacted
from kafkalog.errors import InvalidArgumentError
from kafkalog.types import IsolationLevel, Issue, OnCorrupt, Segment, Visibility
from kafkalog.values import Format, OnValueError
from kafkalog.values import extra_value_options as _extra_value_options
from kafkalog.values import value_options as _value_options

if TYPE_CHECKING:
    from kafkalog._native import ReaderOptions as _ReaderOptions

__all__ = [
    "read",
    "read_bytes",
    "read_batches",
    "issues",
    "read_index",
    "segments",
    "schema",
    "COLUMNS",
    "METADATA_COLUMNS",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
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


def reader_options(
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
    topics: str | None = None,
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
    values: Mapping[str, Any] | None = None,
) -> _ReaderOptions:
    """The options the native reader takes, checked: the one check of every reading
    function's options."""
    if threads is not None and threads < 1:
        raise InvalidArgumentError(f"threads must be at least 1, not {threads}")
    if batch_size <= 0:
        raise InvalidArgumentError(f"batch_size must be positive, not {batch_size}")
    if max_decompressed_size <= 0:
        raise InvalidArgumentError(
            f"max_decompressed_size must be positive, not {max_decompressed_size}"
        )
    if isinstance(columns, str):
        raise InvalidArgumentError("columns must be a list of column names, not a string")
    if topics is not None and not isinstance(topics, str):
        raise InvalidArgumentError(
            f"topics is a regular expression of topic names (a str), not {type(topics).__name__}"
        )
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
        "topics": topics,
        "list_batches": list_batches,
        "start_position": None if byte_range is None else int(byte_range[0]),
        "end_position": None if byte_range is None or byte_range[1] is None else int(byte_range[1]),
        "start_offset": start_offset,
        "end_offset": end_offset,
        "start_timestamp": _millis(start_timestamp),
        "end_timestamp": _millis(end_timestamp),
        "read_committed": _read_committed(isolation_level),
        "visibility": visibility,
        "threads": threads,
        "binary_view": bool(binary_view),
        "values": dict(values) if values is not None else None,
        **_storage_kwargs(storage_options, filesystem, encryption_keys),
    }


def to_reader(native: _Reader) -> pa.RecordBatchReader:
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
    topics: str | None = None,
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
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    value_options: Mapping[str, Any] | None = None,
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
    - ``topics``: only the topics whose whole name matches this regular expression, as Kafka's
      consumer subscribes with a pattern (``"orders-.*"``; ``"orders"`` does not take
      ``orders-eu``; Spark's ``subscribePattern`` finds a pattern anywhere in a name
      instead). Java's syntax for what topic names need; look-around and back-references are
      an :class:`InvalidArgumentError`. As Kafka's consumer
      (``exclude.internal.topics``, true by default), Kafka's internal topics
      (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``) are taken
      only where the pattern names them (``"orders|__consumer_offsets"``), not where it only
      matches them (``".*"``). A file whose topic is not known (outside a
      ``<topic>-<partition>`` directory) is left out when a pattern is given.
    - ``start_offset``, ``end_offset``: read offsets from ``start_offset`` up to (not
      including) ``end_offset``, in every partition read. Segments are picked by their base
      offsets and the first is entered through its ``.index``, not scanned.
    - ``start_timestamp``, ``end_timestamp`` (int milliseconds since the epoch, or a
      datetime; a datetime without a time zone is taken as UTC): start at the earliest offset
      whose timestamp is at or after ``start_timestamp``; end before the earliest offset whose
      timestamp is at or after ``end_timestamp`` (Spark's Kafka source's meaning), found
      through the ``.timeindex``.
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
    - ``key_format``, ``value_format``: ``"binary"`` (the default: the bytes as stored),
      ``"string"`` (UTF-8), ``"avro"``, ``"protobuf"``, ``"json"`` (Schema Registry framing),
      or ``"auto"`` (by the type registered for the column's schema): the column becomes
      that type, decoded in the core a batch at a time. See ``docs/values.md``.
    - ``schemas``: where the schemas are: a path or URI of the registry's storage topic
      (a log directory holding ``_schemas-0``, the partition, ``s3://...``), or a mapping of
      schema id to schema (text, dict, or ``{"schema": ..., "schemaType": ...,
      "references": {name: text}}``). The column's schema is the latest version of subject
      ``<topic>-value`` (``<topic>-key``); every other version resolves to it. A typed read
      of several topics (a log directory) leaves out Kafka's internal topics
      (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``,
      ``__cluster_metadata``, ``__remote_log_metadata``) and the registry's storage topic
      unless ``topics`` names them (``"_schemas|orders"``; ``".*"`` does not); one read
      gives one column type, so the topics left must share a subject (``value_subject``), or
      be read one at a time (``kafkalog convert`` writes one file per topic).
    - ``on_value_error``: ``"error"`` raises a :class:`ValueDecodeError` naming file, offset,
      schema id and why; ``"null"`` leaves the key or value null, with ``value_error``
      (``key_error``) saying why and ``value_raw`` (``key_raw``) keeping its bytes, and an
      :class:`UndecodedValueWarning` counting them at the end. Tombstones stay null.
    - ``value_options``: more of the same, by name: ``value_subject``, ``key_subject``,
      ``value_version``, ``key_version`` (another subject or version as the column's schema),
      ``value_subjects``, ``key_subjects`` (subjects of several record types, one column),
      ``value_schema``, ``key_schema`` (the column's schema given directly), ``framing``
      (``"confluent"``, ``"apicurio"`` for 8-byte ids, ``"none"`` for values written with the
      given schema and no framing), ``schemas_topic`` (the storage topic's name),
      ``value_message``, ``key_message`` (Protobuf: the column's message by full name, or
      several, a list or names separated by commas, for a struct with a field per message;
      each record is read as the message its message indexes name).

    A partial batch at the end of a segment is not an error: the complete batches are returned
    and a :class:`TruncatedSegmentWarning` says how many bytes were left. An index that cannot
    be used for a seek gives an :class:`IndexNotUsedWarning` and a scan.

    ``compacted=True`` (or a dict of :func:`compact` options) reads the partition directory
    as Kafka's log cleaner would leave it: see :func:`kafkalog.cleanup.read_compacted`.
    """
    if compacted is not False:
        compact_options: dict[str, Any] = {} if compacted is True else dict(compacted)
        kwargs = dict(locals())
        for name in ("path", "compacted", "compact_options"):
            kwargs.pop(name)
        if not isinstance(path, str | os.PathLike):
            raise InvalidArgumentError("compacted=True reads one partition directory")
        return _read_compacted(path, compact_options, read, **kwargs)
    options = reader_options(
        columns=columns,
        batch_metadata=batch_metadata,
        batch_size=batch_size,
        include_control=include_control,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        max_decompressed_size=max_decompressed_size,
        topic=topic,
        partition=partition,
        topics=topics,
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
        values=_value_options(
            key_format=key_format,
            value_format=value_format,
            schemas=schemas,
            on_value_error=on_value_error,
            **_extra_value_options(value_options),
        ),
    )
    return to_reader(_Reader.open(_paths(path), options))


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
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    value_options: Mapping[str, Any] | None = None,
) -> pa.RecordBatchReader:
    """Decode log entries already in memory: a segment's bytes, or the ``records`` field of a
    Fetch response. Options as :func:`read`; positions in errors count from the buffer's start.
    With ``binary_view`` the columns point into ``data`` (a ``bytes`` object is kept alive, not
    copied) and into decompressed batches.
    """
    if isinstance(data, memoryview):
        data = data.tobytes()
    options = reader_options(
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
        values=_value_options(
            key_format=key_format,
            value_format=value_format,
            schemas=schemas,
            on_value_error=on_value_error,
            **_extra_value_options(value_options),
        ),
    )
    return to_reader(_Reader.from_bytes(bytes(data), options))


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
    options = reader_options(
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
        return to_reader(_Reader.from_bytes(bytes(source), options))
    return to_reader(_Reader.open(_paths(source), options))


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
    topics: str | None = None,
) -> list[Segment]:
    """The segment files :func:`read` reads for ``path``, in its order: the file itself; a
    partition directory's ``<20-digit offset>.log`` files in offset order; or, for a log
    directory, those of each ``<topic>-<partition>`` directory in topic, partition order
    (directories Kafka is deleting or moving, and ``.log.deleted``/``.cleaned``/``.swap``
    files, are left out, as a broker leaves them out). Each is a dict with ``path``,
    ``topic``, ``partition`` and ``base_offset`` (``None`` where the names do not say),
    ``size``, and what a consumer could fetch of the partition: ``log_start_offset`` and
    ``high_watermark`` from the broker's checkpoint files, and ``hidden``
    (``"above_high_watermark"``/``"below_log_start"`` for a segment wholly outside them),
    and ``continues``: whether it continues the log of the segment listed before it (the same
    partition, in the same directory or across tiered and local storage). Every segment on
    disk is listed, whatever ``visibility`` a read would use. ``topics`` as :func:`read`.
    """
    return _segments(
        _paths(path),
        **_storage_kwargs(storage_options, filesystem, encryption_keys),
        topics=topics,
    )


def schema(
    columns: Sequence[str] | None = None,
    *,
    batch_metadata: bool = False,
    binary_view: bool = False,
) -> pa.Schema:
    """The Arrow schema :func:`read` produces for these options."""
    options = reader_options(
        columns=columns, batch_metadata=batch_metadata, binary_view=binary_view
    )
    return pa.schema(_Reader.from_bytes(b"", options).schema)
