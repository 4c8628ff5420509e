"""Decoding in Spark tasks: the ``mapInArrow`` functions :func:`decode` and :func:`decoder`,
and :func:`plan_df` (planned work items as a DataFrame to decode).

An input row is a work item (``path`` with ``start``/``end``, from :func:`plan_df`), a
``path`` to read whole (a segment, a partition or log directory), or the ``content`` of a
``.log`` file as ``spark.read.format("binaryFile")`` gives it. Every read goes to the native
core; this module only moves rows in and batches out.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from kafkalog import _native, planning, reading
from kafkalog._isolation import isolation_level as checked_isolation_level
from kafkalog._isolation import read_committed as read_committed_level
from kafkalog._native import DEFAULT_BATCH_SIZE, DEFAULT_MAX_DECOMPRESSED_SIZE
from kafkalog._storage import Route, route, storage_kwargs
from kafkalog.errors import IndexNotUsedWarning, InvalidArgumentError, KafkaLogError
from kafkalog.spark.planning import discover, items, offset_ranges, plan
from kafkalog.spark.schema import arrow_schema, conform, spark_columns, spark_schema
from kafkalog.spark.subscription import BoundSpec
from kafkalog.spark.values import resolve
from kafkalog.values import Format, OnValueError, extra_value_options
from kafkalog.values import value_options as _value_options

__all__ = ["WORK_ITEM_SCHEMA", "decode", "decoder", "plan_df", "read_work_items"]

#: The columns of :func:`plan_df` (what :func:`decode` reads besides ``path``/``content``).
WORK_ITEM_SCHEMA = StructType(
    [
        StructField("path", StringType(), False),
        StructField("start", LongType(), True),
        StructField("end", LongType(), True),
        StructField("topic", StringType(), True),
        StructField("partition", IntegerType(), True),
        StructField("base_offset", LongType(), True),
        StructField("size", LongType(), True),
        StructField("start_offset", LongType(), True),
        StructField("end_offset", LongType(), True),
        StructField(
            "aborted",
            ArrayType(
                StructType(
                    [
                        StructField("producerId", LongType(), False),
                        StructField("firstOffset", LongType(), False),
                        StructField("lastOffset", LongType(), False),
                    ]
                ),
                containsNull=False,
            ),
            True,
        ),
    ]
)


def _item_row(item: planning.WorkItem) -> tuple[Any, ...]:
    aborted = None
    if item.aborted is not None:
        aborted = [
            {"producerId": a[0], "firstOffset": a[1], "lastOffset": a[2]} for a in item.aborted
        ]
    return tuple(item[:-1]) + (aborted,)


def plan_df(spark: Any, paths: Any, **options: Any) -> Any:
    """:func:`plan`'s work items as a DataFrame (:data:`WORK_ITEM_SCHEMA`), one row per item,
    to decode with ``mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``. Options as
    :func:`plan`. Spark spreads the rows over ``spark.default.parallelism`` partitions;
    ``.repartition(n)`` for more tasks."""
    rows = [_item_row(i) for i in plan(paths, **options)]
    return spark.createDataFrame(rows, schema=WORK_ITEM_SCHEMA)


def quiet_executor() -> None:
    """In a Spark task, a segment without an index is no news (copies often lack them, and a
    task's warnings only reach its log): leave IndexNotUsedWarning out there."""
    if TaskContext.get() is not None:
        warnings.filterwarnings("ignore", category=IndexNotUsedWarning)


def task_threads() -> int:
    """Decode with the task's cores (``spark.task.cpus``), not the machine's: Spark runs a
    task per core already."""
    task = TaskContext.get()
    return 1 if task is None else max(1, int(task.cpus()))


def read_work_items(
    work: Sequence[planning.WorkItem],
    columns: Sequence[str],
    read: Mapping[str, Any],
    *,
    target: pa.Schema | None = None,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> Iterator[pa.RecordBatch]:
    """Decode work items in their order; item paths are URIs, each read from its store
    (consecutive items from one store in one native call). With ``target``, batches are
    given exactly that schema, and empty ones left out."""
    run: list[planning.WorkItem] = []
    current: Route | None = None

    def flush() -> Iterator[pa.RecordBatch]:
        if run and current is not None:
            r = current
            try:
                reader = planning.read_items(
                    run, columns=columns, threads=task_threads(), **read, **r.kwargs()
                )
                run.clear()
                for b in reader:
                    if target is None:
                        yield b
                    elif b.num_rows:
                        yield conform(b, target)
            except KafkaLogError as e:
                if r.prefix and e.path is not None and not e.path.startswith(r.prefix):
                    raise _name_file(e, r.uri(e.path), strip=e.path) from e
                raise

    for item in work:
        r = route(item.path, storage_options, filesystem)
        if current is not None and r.key() != current.key():
            yield from flush()
        current = r
        run.append(item._replace(path=r.path))
    yield from flush()


def _name_file(e: KafkaLogError, uri: str, strip: str | None = None) -> KafkaLogError:
    """The error naming ``uri`` as its file: bytes from memory come from it, or it is the
    URI of the path (``strip``) a filesystem named."""
    message = getattr(e, "message", None) or str(e)
    if strip is not None:
        message = message.replace(strip, uri)
    else:
        message = f"{uri}: {message}"
    return type(e)(message, path=uri, position=e.position, offset=e.offset, kind=e.kind)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


class _Decoder:
    """The ``mapInArrow`` function :func:`decoder` returns (picklable)."""

    def __init__(
        self,
        columns: list[str],
        read: dict[str, Any],
        bounds: BoundSpec,
        isolation_level: str,
        storage_options: Mapping[str, str] | None,
        filesystem: Any | None,
        decoded: pa.Schema | None = None,
    ) -> None:
        self.columns = columns
        self.target = arrow_schema(columns, decoded=decoded)
        #: The Spark schema of the batches it yields: ``mapInArrow``'s second argument.
        self.schema = spark_schema(columns, decoded=decoded)
        self.read_options = read
        self.bounds = bounds
        self.isolation_level = isolation_level
        self.storage_options = dict(storage_options) if storage_options else None
        self.filesystem = filesystem

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        quiet_executor()
        for batch in batches:
            names = batch.schema.names
            if "path" not in names and "content" not in names:
                raise InvalidArgumentError(
                    "kafkalog.decode reads a 'path' column (or binaryFile's 'content'); "
                    f"the input has {names}"
                )
            columns = {n: batch.column(n) for n in names}
            for i in range(batch.num_rows):
                row = {n: c[i].as_py() for n, c in columns.items()}
                for b in self.row(row):
                    if b.num_rows:
                        yield conform(b, self.target)

    def row(self, row: dict[str, Any]) -> Iterator[pa.RecordBatch]:
        path, content = row.get("path"), row.get("content")
        topic, partition = row.get("topic"), _int(row.get("partition"))
        if content is not None:
            yield from self._content(path, content, topic, partition)
            return
        if path is None:
            raise InvalidArgumentError("a row of kafkalog.decode's input has no path")
        planned = any(row.get(k) is not None for k in ("start", "end", "start_offset", "aborted"))
        if planned:  # a work item
            aborted = row.get("aborted")
            item = planning.WorkItem(
                path=path,
                start=_int(row.get("start")) or 0,
                end=_int(row.get("end")),
                topic=topic,
                partition=partition,
                base_offset=_int(row.get("base_offset")),
                size=_int(row.get("size")) or 0,
                start_offset=_int(row.get("start_offset")),
                end_offset=_int(row.get("end_offset")),
                aborted=None
                if aborted is None
                else [
                    (a["producerId"], a["firstOffset"], a["lastOffset"])
                    if isinstance(a, Mapping)
                    else tuple(a)
                    for a in aborted
                ],
            )
            work = [item]
        else:  # a whole path, within the decoder's bounds
            parts = discover(path, storage_options=self.storage_options, filesystem=self.filesystem)
            read_committed = read_committed_level(self.isolation_level)
            ranges = offset_ranges(
                parts,
                self.bounds,
                read_committed=read_committed,
                max_decompressed_size=self.read_options["max_decompressed_size"],
            )
            work = items(parts, ranges, read_committed=read_committed)
        if topic is not None or partition is not None:
            work = [
                w._replace(
                    topic=topic if topic is not None else w.topic,
                    partition=partition if partition is not None else w.partition,
                )
                for w in work
            ]
        yield from read_work_items(
            work,
            self.columns,
            self.read_options,
            storage_options=self.storage_options,
            filesystem=self.filesystem,
        )

    def _content(
        self, path: str | None, content: bytes, topic: str | None, partition: int | None
    ) -> Iterator[pa.RecordBatch]:
        if self.bounds != BoundSpec():
            raise InvalidArgumentError(
                "bounds need paths (an index, a partition's transactions), not file contents: "
                "decode binaryFile rows without bounds, or give the files' paths"
            )
        if path is not None and topic is None and partition is None:
            topic, partition, _ = _native.segment_origin(path)
        name = path or "<content>"
        try:
            yield from reading.read_bytes(
                content, columns=self.columns, topic=topic, partition=partition, **self.read_options
            )
        except KafkaLogError as e:
            if e.path is not None:
                raise
            raise _name_file(e, name) from e


def decoder(
    *,
    columns: Sequence[str] | None = None,
    include_headers: bool = False,
    batch_metadata: bool = False,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: str = "error",
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    batch_size: int = DEFAULT_BATCH_SIZE,
    start_offset: Any = None,
    end_offset: Any = None,
    start_timestamp: Any = None,
    end_timestamp: Any = None,
    isolation_level: str = "read_uncommitted",
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
    encryption_keys: Mapping[str, Any] | None = None,
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    topic: str | None = None,
    value_options: Mapping[str, Any] | None = None,
) -> _Decoder:
    """A :func:`decode` with options, for ``df.mapInArrow(d, d.schema)``.

    Typed keys and values as :func:`kafkalog.read` (``key_format``, ``value_format``,
    ``schemas``, ``on_value_error``, ``value_options``): the registry is read here, on the
    driver, and ``d.schema`` has the typed columns. ``topic`` names the default subjects
    (``<topic>-value``) when ``value_options`` names none.

    Columns: Spark's Kafka source columns (``headers`` with ``include_headers``, kafkalog's
    batch metadata with ``batch_metadata``), or any of kafkalog's ``columns``. Read options
    as :func:`kafkalog.read`. Bounds as :func:`plan` takes them, for rows naming a whole path
    (work items carry their own); ``storage_options``/``filesystem``/``encryption_keys`` as
    :func:`kafkalog.read` (keys are read here, on the driver).
    """
    isolation_level = checked_isolation_level(isolation_level)
    if columns is None:
        columns = spark_columns(include_headers=include_headers, batch_metadata=batch_metadata)
    reading.schema(columns)  # check the columns early
    read: dict[str, Any] = {
        "include_control": bool(include_control),
        "check_crc": bool(check_crc),
        "on_corrupt": on_corrupt,
        "max_decompressed_size": int(max_decompressed_size),
        "batch_size": int(batch_size),
    }
    bounds = BoundSpec.make(start_offset, end_offset, start_timestamp, end_timestamp)
    if encryption_keys:
        keys = storage_kwargs(None, None, encryption_keys)["storage_options"]
        storage_options = {**(storage_options or {}), **(keys or {})}
    decoded = None
    values = _value_options(
        key_format=key_format,
        value_format=value_format,
        schemas=schemas,
        on_value_error=on_value_error,
        **extra_value_options(value_options),
    )
    if values is not None:
        resolved, decoded = resolve(values, topic, storage_options)
        read.update(
            key_format=key_format,
            value_format=value_format,
            on_value_error=on_value_error,
            value_options={"resolved": resolved},
        )
    return _Decoder(
        list(columns), read, bounds, isolation_level, storage_options, filesystem, decoded
    )


@functools.cache
def _default_decoder() -> _Decoder:
    return decoder()


def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Decode the log files named in a DataFrame's rows, for
    ``df.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``.

    Input columns: ``path`` (a ``.log`` file, partition or log directory: local, ``file:``,
    object-store or pyarrow.fs URI), or ``content`` (the bytes of a ``.log`` file, as
    ``spark.read.format("binaryFile")`` gives; ``path`` then names it); optionally ``start``
    and ``end`` (a byte range of one file, at batch boundaries), ``topic`` and ``partition``
    (instead of the directory's name), and :func:`kafkalog.spark.plan_df`'s ``start_offset``,
    ``end_offset``, ``aborted``. Yields record batches of the Arrow schema of
    ``kafkalog.SPARK_SCHEMA`` (``kafkalog.spark.SPARK_ARROW_SCHEMA``).
    """
    return _default_decoder()(batches)
