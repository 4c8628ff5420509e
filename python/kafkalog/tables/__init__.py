"""Kafka backups into lakehouse tables: :func:`to_delta` (Delta Lake, through ``deltalake``)
and :func:`to_iceberg` (Apache Iceberg, through ``pyiceberg``), also ``kafkalog.to_delta``
and ``kafkalog.to_iceberg``, and ``kafkalog convert X delta://... | iceberg://ns.table``.

Resumable and exactly once: each commit records, in the same atomic table commit as its rows,
the next offset of every topic-partition it covers; a run starts from those offsets, so a run
killed at any point and run again leaves every record in the table once. The Kafka side
(partitions, offsets, bounds, transactions, what a consumer could fetch) comes from the core;
this package only writes tables. See ``docs/lakehouse.md``.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from typing import Any

from kafkalog._storage import Paths as _Paths
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog.errors import InvalidArgumentError
from kafkalog.tables._files import DEFAULT_TARGET_FILE_SIZE
from kafkalog.tables._rows import (
    DAY_COLUMN,
    PartitionBy,
    TableSchemaError,
    ValueLayout,
    check_layout,
    check_partition_by,
)
from kafkalog.tables._run import (
    DEFAULT_COMMIT_BYTES,
    Mode,
    PartitionSummary,
    TableCommitError,
    TableSummary,
    describe,
    run,
)
from kafkalog.tables._source import OffsetsLostWarning, Source
from kafkalog.types import IsolationLevel, OnCorrupt, Visibility
from kafkalog.values import Format, OnValueError

__all__ = [
    "to_delta",
    "to_iceberg",
    "foreach_batch_to_delta",
    "TableSummary",
    "PartitionSummary",
    "TableSchemaError",
    "TableCommitError",
    "OffsetsLostWarning",
    "DAY_COLUMN",
    "describe",
]


def _make_source(
    path: _Paths,
    *,
    mode: Mode,
    topics: str | None,
    start_offset: int | None,
    end_offset: int | None,
    start_timestamp: int | datetime.datetime | None,
    end_timestamp: int | datetime.datetime | None,
    isolation_level: IsolationLevel | None,
    visibility: Visibility,
    key_format: Format,
    value_format: Format,
    schemas: Any,
    on_value_error: OnValueError,
    value_options: Mapping[str, Any] | None,
    check_crc: bool,
    on_corrupt: OnCorrupt,
    threads: int | None,
    storage_options: Mapping[str, Any] | None,
    encryption_keys: Mapping[str, Any] | None,
) -> Source:
    if mode not in ("append", "upsert"):
        raise InvalidArgumentError(f'mode must be "append" or "upsert", not {mode!r}')
    if isolation_level is None:
        # An upsert keeps what the log cleaner keeps, whose offset map leaves out aborted
        # transactions and stops at the last stable offset: a read_committed read.
        isolation_level = "read_committed" if mode == "upsert" else "read_uncommitted"
    return Source(
        path=path,
        storage=_storage_kwargs(storage_options, None, encryption_keys),
        topics=topics,
        start_offset=start_offset,
        end_offset=end_offset,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        isolation_level=isolation_level,
        visibility=visibility,
        key_format=key_format,
        value_format=value_format,
        schemas=schemas,
        on_value_error=on_value_error,
        value_options=value_options,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        threads=threads,
    )


def to_delta(
    path: _Paths,
    table: str | os.PathLike[str],
    *,
    mode: Mode = "append",
    topics: str | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | datetime.datetime | None = None,
    end_timestamp: int | datetime.datetime | None = None,
    isolation_level: IsolationLevel | None = None,
    visibility: Visibility = "consumer",
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    value_options: Mapping[str, Any] | None = None,
    value_layout: ValueLayout = "struct",
    partition_by: PartitionBy | None = None,
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE,
    commit_bytes: int = DEFAULT_COMMIT_BYTES,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    threads: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    table_storage_options: Mapping[str, Any] | None = None,
    encryption_keys: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> TableSummary:
    """Write the records under ``path`` (what :func:`kafkalog.read` reads: a partition, a log
    directory, an object-store or tiered-storage URI) into the Delta table at ``table`` (a
    local path, an object-store URI, or ``delta://<either>``), created if missing.

    Resumable and exactly once: every commit adds its data files and, in the same Delta log
    entry, one application transaction (``txn``) per topic-partition: ``appId``
    ``kafkalog:<topic>-<partition>``, ``version`` the next offset. A run reads those and
    starts there; run it again to write only what is new (a backup that grew, a run that was
    killed). Returns a :class:`TableSummary`.

    Rows: Spark's Kafka columns (``key``, ``value``, ``topic``, ``partition``, ``offset``,
    ``timestamp``, ``timestampType``, ``headers``), typed as :func:`kafkalog.read` types them
    (``key_format``, ``value_format``, ``schemas``, ``on_value_error`` and its error columns,
    ``value_options``); ``value_layout="columns"`` puts a typed value's fields in columns of
    their own instead of one ``value`` struct. A registry version that adds fields adds
    columns (a commit of the new schema before the rows); a column of another type is a
    :class:`TableSchemaError` before anything is written.

    Reading: ``topics`` (a regular expression of whole topic names, as Kafka's consumer
    subscribes with a pattern; Kafka's internal topics and the registry's ``_schemas`` are left
    out unless it names them), offset and time bounds, ``isolation_level``, ``visibility``,
    ``check_crc``, ``on_corrupt``, ``threads`` and ``storage_options`` as :func:`kafkalog.read`
    takes them; the table uses ``storage_options`` too unless ``table_storage_options`` are
    given (object_store's keys, as delta-rs takes them).

    ``mode="upsert"``: the table keeps the latest record of each key of each topic-partition,
    a tombstone (a null value) deleting the key's row: what Kafka's log cleaner keeps. It
    reads ``read_committed`` unless told otherwise (the cleaner leaves aborted transactions
    out), leaves out records without a key (the cleaner removes them), and merges each
    commit's rows into the table (delta-rs's ``MERGE``).

    Layout: partitioned by ``partition_by`` (default ``("topic", "day")``: the topic and the
    ``timestamp_day`` column, the UTC day of the record's timestamp; ``()`` for none; an
    existing table keeps its own), data files of about ``target_file_size`` bytes, a commit
    at least every ``commit_bytes`` of rows. Memory stays bounded whatever the input's size.
    ``progress=True`` shows a progress line on stderr.
    """
    from kafkalog.tables.delta import DeltaSink

    source = _make_source(
        path,
        mode=mode,
        topics=topics,
        start_offset=start_offset,
        end_offset=end_offset,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        isolation_level=isolation_level,
        visibility=visibility,
        key_format=key_format,
        value_format=value_format,
        schemas=schemas,
        on_value_error=on_value_error,
        value_options=value_options,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        threads=threads,
        storage_options=storage_options,
        encryption_keys=encryption_keys,
    )
    options = table_storage_options if table_storage_options is not None else storage_options
    sink = DeltaSink(
        os.fspath(table),
        mode=mode,
        partition_by=check_partition_by(partition_by),
        storage_options=_storage_kwargs(options, None)["storage_options"],
        target_file_size=target_file_size,
    )
    return run(
        source,
        sink,
        fmt="delta",
        mode=mode,
        layout=check_layout(value_layout),
        commit_bytes=commit_bytes,
        progress=progress,
    )


def foreach_batch_to_delta(
    table: str | os.PathLike[str],
    *,
    app_id: str,
    partition_by: PartitionBy | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Any:
    """The incremental route through Spark: a ``foreachBatch`` function for a Structured
    Streaming query on the ``kafkalog`` source (with a checkpoint) that writes each micro-batch
    into the Delta table ``table`` exactly once, by its batch id (the version of the
    application transaction ``app_id``)::

        (spark.readStream.format("kafkalog").load("/backup/kafka-logs")
              .writeStream.foreachBatch(kafkalog.tables.foreach_batch_to_delta(
                  "/lake/events", app_id="events-stream"))
              .option("checkpointLocation", "/lake/_checkpoints/events")
              .trigger(availableNow=True).start())
    """
    from kafkalog.tables.delta import foreach_batch

    return foreach_batch(
        os.fspath(table),
        app_id=app_id,
        partition_by=check_partition_by(partition_by),
        storage_options=_storage_kwargs(storage_options, None)["storage_options"],
    )


def to_iceberg(
    path: _Paths,
    table: str,
    *,
    catalog: str | Mapping[str, Any] | None = None,
    catalog_uri: str | None = None,
    warehouse: str | None = None,
    mode: Mode = "append",
    topics: str | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | datetime.datetime | None = None,
    end_timestamp: int | datetime.datetime | None = None,
    isolation_level: IsolationLevel | None = None,
    visibility: Visibility = "consumer",
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    value_options: Mapping[str, Any] | None = None,
    value_layout: ValueLayout = "struct",
    partition_by: PartitionBy | None = None,
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE,
    commit_bytes: int = DEFAULT_COMMIT_BYTES,
    check_crc: bool = True,
    on_corrupt: OnCorrupt = "error",
    threads: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    encryption_keys: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> TableSummary:
    """Write the records under ``path`` into the Iceberg table ``table``
    (``<namespace>.<table>``, or ``iceberg://<namespace>.<table>``) of a pyiceberg catalog;
    a missing namespace and table are created.

    The catalog: ``catalog`` names one of pyiceberg's configuration (``~/.pyiceberg.yaml``,
    ``PYICEBERG_CATALOG__<NAME>__*``; default ``"default"``) or gives its properties
    (``{"type": "sql", "uri": "sqlite:///cat.db", "warehouse": "file:///wh"}``, REST, Glue,
    Hive, ...); ``catalog_uri`` and ``warehouse`` make pyiceberg's SQL catalog (a SQLite file
    is the embedded default). The read's ``storage_options`` (object_store's keys) become the
    table FileIO's ``s3.*`` properties where the catalog does not give them.

    Resumable and exactly once: each commit is one snapshot whose summary holds
    ``kafkalog.offsets`` (every topic-partition's next offset), made in the same atomic
    catalog commit as its data files. ``mode="upsert"`` deletes the rows of each commit's keys
    and appends their latest records, in one transaction. Partitioned by identity ``topic``
    and ``day(timestamp)`` (``timestamp_day``) unless ``partition_by`` says otherwise.
    Everything else as :func:`to_delta`.
    """
    from kafkalog.tables.iceberg import IcebergSink

    source = _make_source(
        path,
        mode=mode,
        topics=topics,
        start_offset=start_offset,
        end_offset=end_offset,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        isolation_level=isolation_level,
        visibility=visibility,
        key_format=key_format,
        value_format=value_format,
        schemas=schemas,
        on_value_error=on_value_error,
        value_options=value_options,
        check_crc=check_crc,
        on_corrupt=on_corrupt,
        threads=threads,
        storage_options=storage_options,
        encryption_keys=encryption_keys,
    )
    sink = IcebergSink(
        table,
        mode=mode,
        partition_by=check_partition_by(partition_by),
        catalog=catalog,
        catalog_uri=catalog_uri,
        warehouse=warehouse,
        storage_options=_storage_kwargs(storage_options, None)["storage_options"],
        target_file_size=target_file_size,
    )
    return run(
        source,
        sink,
        fmt="iceberg",
        mode=mode,
        layout=check_layout(value_layout),
        commit_bytes=commit_bytes,
        progress=progress,
    )
