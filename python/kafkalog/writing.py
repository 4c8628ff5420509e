"""Writing records as a Kafka partition directory a broker and any Kafka client read:
:func:`write`, also ``kafkalog.write``."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from kafkalog._native import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_RECORDS,
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_SEGMENT_BYTES,
)
from kafkalog._native import Writer as _Writer
from kafkalog._native import encode_values as _encode_values
from kafkalog._native import partition_dir as _partition_dir
from kafkalog._native import registry_records as _registry_records
from kafkalog._storage import PathLike as _PathLike
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog.errors import InvalidArgumentError
from kafkalog.types import Compression, TimestampTypeName, WrittenSegment
from kafkalog.values import extra_value_options as _extra_value_options
from kafkalog.values import value_options as _value_options

if TYPE_CHECKING:
    from kafkalog._native import WriterOptions as _WriterOptions

__all__ = [
    "write",
    "write_schemas",
    "DEFAULT_SEGMENT_BYTES",
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_BATCH_RECORDS",
    "DEFAULT_BATCH_BYTES",
]


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


def _encoded(
    batches: Iterator[pa.RecordBatch],
    values: dict[str, Any],
    topic: str | None,
    path: str,
    storage_options: Mapping[str, str] | None,
) -> Iterator[pa.RecordBatch]:
    """``batches`` with typed ``key``/``value`` columns encoded by the core."""
    for batch in batches:
        columns = list(batch.columns)
        for side in ("key", "value"):
            if values[f"{side}_format"] != "binary" and side in batch.schema.names:
                i = batch.schema.get_field_index(side)
                columns[i] = pa.array(
                    _encode_values(
                        columns[i],
                        values,
                        side,
                        topic=topic,
                        path=path,
                        storage_options=storage_options,
                    )
                )
        names = batch.schema.names
        yield pa.RecordBatch.from_arrays(columns, names=names)


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
    key_format: Literal["binary", "string", "avro"] = "binary",
    value_format: Literal["binary", "string", "avro"] = "binary",
    schemas: Any = None,
    value_options: Mapping[str, Any] | None = None,
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

    Typed keys and values are encoded as Kafka clients wrote them: ``key_format``/
    ``value_format`` ``"string"`` (UTF-8) or ``"avro"``: a column of the type
    :func:`kafkalog.read` gives for the subject's schema, encoded with the registered schema
    (``schemas``: the registry's storage topic or schemas by id; subject ``<topic>-value``'s
    latest version, or ``value_options`` ``value_subject``/``value_version``) and framed as
    Confluent's serializers frame it, which Confluent's deserializers read back.
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
    values = _value_options(
        key_format=key_format,
        value_format=value_format,
        schemas=schemas,
        **_extra_value_options(value_options),
    )
    if values is not None:
        batches = _encoded(batches, values, topic, os.fspath(path), options["storage_options"])
    writer = _Writer(os.fspath(path), options)
    try:
        for batch in batches:
            writer.write(batch)
        return writer.finish()
    except BaseException:
        writer.abort()  # nothing half-written is left
        raise


def write_schemas(
    path: str | os.PathLike[str],
    schemas: Iterable[Mapping[str, Any]] | pa.Table,
    *,
    topic: str | None = None,
    timestamp: int | datetime.datetime | None = None,
    overwrite: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """Write a Schema Registry's storage topic: the partition ``<path>/<topic>-0``
    (``_schemas-0`` by default) holding ``schemas``, registered in order as the registry
    registers them, with the records its ``KafkaStore`` writes (one a batch). For tests and
    sample data, for a backup whose registry is gone or is to be rebuilt elsewhere: any read's
    ``schemas=path`` (and a Schema Registry started on the topic) finds them there.

    ``schemas``: mappings with ``subject`` and ``schema`` (the text, or a dict for an Avro or
    JSON schema), and optionally ``version`` (default: the subject's next), ``id`` (default:
    the id the same schema has in its context, or a new one), ``schemaType`` (or ``type``:
    ``AVRO``, the default, ``PROTOBUF``, ``JSON``), ``references`` (``name``, ``subject``,
    ``version``) and ``deleted`` (soft-deleted after registering): what
    :func:`kafkalog.export_schemas` gives, and rows of ``kafkalog schemas --json``. Or a table
    as :func:`kafkalog.schemas` returns it, to
    copy a registry with its versions and ids. The registry's rules apply (``rust/values/
    registry/records.rs``): a schema the subject has already is not registered again, an id is
    never another schema's, references must name versions written before, each schema must
    compile; a schema that breaks one raises :class:`InvalidArgumentError`.

    ``timestamp``: the records' time (milliseconds since the epoch, or a datetime; default
    now). Returns the registry written, as :func:`schemas` would read it back.
    """
    if isinstance(schemas, pa.Table):
        rows = schemas.to_pylist()
        if "offset" in schemas.column_names:
            # In the order they were registered, so that references come first.
            rows.sort(key=lambda r: (r.get("offset") is None, r.get("offset") or 0, r["id"]))
    else:
        rows = [dict(r) for r in schemas]
    prepared = [_new_schema(r, i) for i, r in enumerate(rows)]
    records, table = _registry_records(prepared)
    if timestamp is None:
        timestamp = datetime.datetime.now(datetime.UTC)
    if isinstance(timestamp, datetime.datetime):
        timestamp = int(timestamp.timestamp() * 1000)
    data = pa.table(
        {
            "key": pa.array([k for k, _ in records], pa.binary()),
            "value": pa.array([v for _, v in records], pa.binary()),
            "timestamp": pa.array([timestamp] * len(records), pa.timestamp("ms", tz="UTC")),
        }
    )
    # One record a batch, uncompressed: the registry's producer sends each and waits.
    write(
        path,
        data,
        topic=topic or "_schemas",
        partition=0,
        batch_records=1,
        overwrite=overwrite,
        storage_options=storage_options,
    )
    return pa.Table.from_batches([pa.record_batch(table)])


def _new_schema(row: Mapping[str, Any], i: int) -> tuple[Any, ...]:
    """A schema to register, as the core takes it."""
    what = f"schemas[{i}]"
    subject = row.get("subject")
    if not isinstance(subject, str):
        raise InvalidArgumentError(f"{what}: a schema needs its subject (a string)")
    text = row.get("schema")
    if isinstance(text, Mapping | list):
        text = json.dumps(text)
    if not isinstance(text, str):
        raise InvalidArgumentError(f"{what} ({subject}): a schema needs its text (schema)")
    kind = row.get("schemaType") or row.get("type") or "AVRO"
    references = [
        (str(r["name"]), str(r["subject"]), int(r["version"])) for r in row.get("references") or []
    ]
    version = row.get("version")
    schema_id = row.get("id")
    return (
        subject,
        None if version is None else int(version),
        None if schema_id is None else int(schema_id),
        str(kind),
        text,
        references,
        bool(row.get("deleted")),
    )
