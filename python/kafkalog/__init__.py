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

import os
from collections.abc import Iterator, Sequence

import pyarrow as pa

from kafkalog import errors
from kafkalog._native import Reader as _Reader
from kafkalog._native import __version__
from kafkalog.errors import (
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    InvalidArgumentError,
    KafkaLogError,
    KafkaLogIOError,
    KafkaLogWarning,
    LimitExceededError,
    SkippedBatchWarning,
    StoppedAtCorruptionWarning,
    TruncatedSegmentWarning,
)

__all__ = [
    "__version__",
    "read",
    "read_bytes",
    "read_batches",
    "schema",
    "COLUMNS",
    "METADATA_COLUMNS",
    "errors",
    "KafkaLogError",
    "CorruptRecordError",
    "CrcMismatchError",
    "DecompressionError",
    "LimitExceededError",
    "InvalidArgumentError",
    "KafkaLogIOError",
    "KafkaLogWarning",
    "TruncatedSegmentWarning",
    "SkippedBatchWarning",
    "StoppedAtCorruptionWarning",
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
#: partition leader epoch, transactional and control flags, the batch's max timestamp (ms),
#: its delete horizon (ms, null when unset), and the control record type (null for data).
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
    "maxTimestamp",
    "deleteHorizonMs",
    "controlType",
)

_DEFAULT_MAX_DECOMPRESSED = 256 * 1024 * 1024


def _options(
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = 65536,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: str = "error",
    max_decompressed_size: int = _DEFAULT_MAX_DECOMPRESSED,
    topic: str | None = None,
    partition: int | None = None,
    list_batches: bool = False,
) -> dict:
    """The options the native reader takes, checked."""
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
    }


def _to_reader(native: _Reader) -> pa.RecordBatchReader:
    # from_batches keeps the exceptions our iterator raises as they are (typed, with their
    # attributes), where a C stream would flatten them into ArrowInvalid.
    schema = pa.schema(native.schema)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in native:
            yield pa.record_batch(batch)

    return pa.RecordBatchReader.from_batches(schema, batches())


def read(
    path: str | os.PathLike,
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = 65536,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: str = "error",
    max_decompressed_size: int = _DEFAULT_MAX_DECOMPRESSED,
    topic: str | None = None,
    partition: int | None = None,
) -> pa.RecordBatchReader:
    """Stream the records of Kafka segment files as Arrow record batches.

    ``path`` is a ``.log`` segment file, a partition directory ``<topic>-<partition>`` (its
    segments are read in offset order), or a log directory holding partition directories (read
    in topic, partition order). Memory stays bounded by ``batch_size``, not by the files.

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

    A partial batch at the end of a segment is not an error: the complete batches are returned
    and a :class:`TruncatedSegmentWarning` says how many bytes were left.
    """
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
    )
    return _to_reader(_Reader.open(os.fspath(path), options))


def read_bytes(
    data: bytes | bytearray | memoryview,
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    batch_size: int = 65536,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: str = "error",
    max_decompressed_size: int = _DEFAULT_MAX_DECOMPRESSED,
    topic: str | None = None,
    partition: int | None = None,
) -> pa.RecordBatchReader:
    """Decode log entries already in memory: a segment's bytes, or the ``records`` field of a
    Fetch response. Options as :func:`read`; positions in errors count from the buffer's start.
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
    )
    return _to_reader(_Reader.from_bytes(bytes(data), options))


def read_batches(
    source: str | os.PathLike | bytes | bytearray | memoryview,
    *,
    check_crc: bool = True,
    on_corrupt: str = "error",
    max_decompressed_size: int = _DEFAULT_MAX_DECOMPRESSED,
    batch_size: int = 65536,
    topic: str | None = None,
    partition: int | None = None,
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
    """
    options = _options(
        batch_size=batch_size,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        max_decompressed_size=max_decompressed_size,
        topic=topic,
        partition=partition,
        list_batches=True,
    )
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _to_reader(_Reader.from_bytes(bytes(source), options))
    return _to_reader(_Reader.open(os.fspath(source), options))


def schema(columns: Sequence[str] | None = None, *, batch_metadata: bool = False) -> pa.Schema:
    """The Arrow schema :func:`read` produces for these options."""
    options = _options(columns=columns, batch_metadata=batch_metadata)
    return pa.schema(_Reader.from_bytes(b"", options).schema)
