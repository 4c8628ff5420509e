"""Writing from Spark: DataFrames of records as Kafka partition directories, through the
core's writer (``kafkalog.write``) and its atomic placement.

:func:`write` groups a DataFrame's rows by topic-partition and saves them with the
``kafkalog`` data source, whose tasks write into a staging directory that the driver
publishes when every task succeeded; :func:`encode` is the same as a ``mapInArrow``
function. Topic and partition names are checked by the core as Kafka checks them, so no name
from data places a file outside the output directory.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from kafkalog import _native, errors, writing
from kafkalog._storage import is_remote, local_path
from kafkalog.errors import InvalidArgumentError

__all__ = [
    "ENCODE_SCHEMA",
    "WRITE_OPTIONS",
    "StreamWriter",
    "Writer",
    "encode",
    "write",
    "local_dir",
    "write_target",
]

#: The rows :func:`encode` yields: one per segment written.
ENCODE_SCHEMA = "topic string, partition int, path string, records long"
_ENCODE_ARROW_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("path", pa.string()),
        pa.field("records", pa.int64()),
    ]
)

#: The data source's write options (their Spark spelling) that are :func:`kafkalog.write`'s
#: arguments, by argument name: what :func:`write` passes on. The core checks them
#: (``rust/spark/write_options.rs``), for this source and the JVM one.
WRITE_OPTIONS: dict[str, str] = {
    "magic": "magic",
    "compression": "compression",
    "compression_level": "compressionLevel",
    "timestamp_type": "timestampType",
    "log_append_time": "logAppendTime",
    "base_offset": "baseOffset",
    "batch_records": "batchRecords",
    "batch_bytes": "batchBytes",
    "preserve_batches": "preserveBatches",
    "producer_id": "producerId",
    "producer_epoch": "producerEpoch",
    "base_sequence": "baseSequence",
    "transactional": "transactional",
    "partition_leader_epoch": "partitionLeaderEpoch",
    "segment_bytes": "segmentBytes",
    "index_interval_bytes": "indexIntervalBytes",
    "fsync": "fsync",
}


def _normalize(
    table: pa.Table, default_topic: str | None, default_partition: int | None
) -> pa.Table:
    """Rows as kafkalog.write takes them, with ``topic`` and ``partition`` columns (from the
    options where the rows have none; never null), key and value binary."""
    n = table.num_rows
    if "topic" not in table.column_names:
        if default_topic is None:
            raise InvalidArgumentError("the rows have no 'topic' column and no topic option")
        table = table.append_column("topic", pa.array([default_topic] * n, pa.string()))
    if "partition" not in table.column_names:
        if default_partition is None:
            raise InvalidArgumentError(
                "the rows have no 'partition' column and no partition option"
            )
        table = table.append_column("partition", pa.array([default_partition] * n, pa.int64()))
    for name in ("topic", "partition"):
        if table.column(name).null_count:
            raise InvalidArgumentError(f"a row to write has a null {name}")
    if "timestampType" in table.column_names and "baseOffset" not in table.column_names:
        # Without the batch metadata, records are batched afresh: a LogAppendTime batch would
        # get a new append time and lose the timestamps read. Keep them, as CreateTime (the
        # timestamp_type option still asks for LogAppendTime).
        table = table.drop_columns(["timestampType"])
    # Spark's Kafka sink takes key and value as string or binary.
    for name in ("key", "value"):
        if name in table.column_names:
            col = table.column(name)
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                table = table.set_column(
                    table.column_names.index(name), name, col.cast(pa.binary())
                )
        elif name == "key":
            table = table.append_column("key", pa.nulls(n, pa.binary()))
    return table


def _check_names(table: pa.Table) -> None:
    """Every (topic, partition) checked by Kafka's rule before one is written: a name from
    data decides where files go."""
    pairs = table.select(["topic", "partition"]).group_by(["topic", "partition"]).aggregate([])
    for topic, partition in zip(
        pairs.column("topic").to_pylist(), pairs.column("partition").to_pylist(), strict=True
    ):
        _native.partition_dir_name(topic, partition)


def _groups(
    batches: Iterable[pa.RecordBatch], default_topic: str | None, default_partition: int | None
) -> Iterator[tuple[str, int, pa.Table]]:
    """The rows of ``batches`` per (topic, partition), each in offset order (input order when
    there is no ``offset`` column), ready for kafkalog.write. Holds the task's rows."""
    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = _normalize(pa.Table.from_batches(batches), default_topic, default_partition)
    _check_names(table)
    keys = [("topic", "ascending"), ("partition", "ascending")]
    if "offset" in table.column_names:
        keys.append(("offset", "ascending"))
    table = table.take(pc.sort_indices(table, sort_keys=keys))  # stable
    counts = (
        table.group_by(["topic", "partition"])
        .aggregate([("topic", "count")])
        .sort_by([("topic", "ascending"), ("partition", "ascending")])
    )
    data = table.drop_columns(["topic", "partition"])
    at = 0
    for row in counts.to_pylist():
        count = row["topic_count"]
        yield row["topic"], int(row["partition"]), data.slice(at, count)
        at += count


def _pieces(
    batches: Iterable[pa.RecordBatch], default_topic: str | None, default_partition: int | None
) -> Iterator[tuple[tuple[str, int], pa.RecordBatch]]:
    """Each batch cut where its (topic, partition) changes, normalised."""
    for batch in batches:
        if not batch.num_rows:
            continue
        table = _normalize(pa.Table.from_batches([batch]), default_topic, default_partition)
        _check_names(table)
        topics, partitions = table.column("topic"), table.column("partition")
        n = table.num_rows
        changed = pc.or_(
            pc.not_equal(topics.slice(1), topics.slice(0, n - 1)),
            pc.not_equal(partitions.slice(1), partitions.slice(0, n - 1)),
        )
        starts = [0] + [i + 1 for i in pc.indices_nonzero(changed).to_pylist()] + [n]
        data = table.drop_columns(["topic", "partition"]).combine_chunks()
        for a, b in zip(starts, starts[1:], strict=False):
            key = (topics[a].as_py(), int(partitions[a].as_py()))
            for piece in data.slice(a, b - a).to_batches():
                yield key, piece


def _runs(
    batches: Iterable[pa.RecordBatch], default_topic: str | None, default_partition: int | None
) -> Iterator[tuple[str, int, pa.RecordBatchReader]]:
    """The rows of ``batches``, already grouped by (topic, partition) and in offset order
    (as :func:`write` arranges them), as one lazy reader per topic-partition: a task streams
    its rows into segments instead of holding them."""
    pieces = _pieces(batches, default_topic, default_partition)
    pending = next(pieces, None)
    done: set[tuple[str, int]] = set()
    while pending is not None:
        key, first = pending
        if key in done:
            raise InvalidArgumentError(
                f"the rows of {key[0]}-{key[1]} are not together in this task: sort them by "
                "topic, partition and offset first (kafkalog.spark.write does)"
            )
        done.add(key)

        def run(key: tuple[str, int] = key) -> Iterator[pa.RecordBatch]:
            nonlocal pending
            while pending is not None and pending[0] == key:
                yield pending[1]
                pending = next(pieces, None)

        reader = pa.RecordBatchReader.from_batches(first.schema, run())
        yield key[0], key[1], reader
        for _ in run():  # whatever the consumer left unread
            pass


def write_target(path: str | os.PathLike[str]) -> str:
    """Where the data source writes: a local directory (:func:`local_dir`) or an object-store
    prefix (``s3://bucket/logs``, kept as it is)."""
    text = os.fspath(path)
    return text.rstrip("/") if is_remote(text) else local_dir(text)


def local_dir(path: str | os.PathLike[str]) -> str:
    """The local directory a write goes to (plain paths and ``file:`` URIs)."""
    text = local_path(path)
    if text is None:
        raise InvalidArgumentError(
            f"kafkalog writes local (or mounted) directories; {os.fspath(path)!r} is not one"
        )
    return os.path.abspath(text)


class _Encoder:
    """The ``mapInArrow`` function :func:`encode` returns (picklable)."""

    def __init__(
        self,
        out_dir: str,
        options: dict[str, Any],
        topic: str | None,
        partition: int | None,
    ) -> None:
        self.out_dir = local_dir(out_dir)
        self.options = options
        self.topic = topic
        self.partition = partition

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for topic, partition, table in _groups(batches, self.topic, self.partition):
            segments = writing.write(
                self.out_dir, table, topic=topic, partition=partition, **self.options
            )
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array([topic] * len(segments), pa.string()),
                    pa.array([partition] * len(segments), pa.int32()),
                    pa.array([s["path"] for s in segments], pa.string()),
                    pa.array([s["records"] for s in segments], pa.int64()),
                ],
                schema=_ENCODE_ARROW_SCHEMA,
            )


def encode(
    out_dir: str | os.PathLike[str],
    *,
    topic: str | None = None,
    partition: int | None = None,
    **write_options: Any,
) -> _Encoder:
    """A ``mapInArrow`` function that writes its input as Kafka partition directories::

        df.mapInArrow(kafkalog.spark.encode("/out", compression="zstd"), ENCODE_SCHEMA)

    Each task groups its rows by (``topic``, ``partition``) (columns, else the ``topic`` and
    ``partition`` given here), orders each group by ``offset`` when there is one, and writes it
    with :func:`kafkalog.write` (``write_options``) to ``<out_dir>/<topic>-<partition>``,
    yielding one row per segment written (:data:`ENCODE_SCHEMA`). Topics and partitions are
    checked as Kafka checks them (a name from the data cannot place files outside
    ``out_dir``): a task with a bad one raises :class:`InvalidArgumentError` naming it before
    writing anything. A topic-partition must be in
    one task only (``df.repartition("topic", "partition")``): a second task writing it fails,
    as the directory exists (unless ``overwrite=True``, when the last one wins); the data
    source (``df.write.format("kafkalog")``) joins such pieces instead. ``key`` and
    ``value`` may be strings (written as UTF-8). Records keep their timestamps: without the
    batch-metadata columns, batches are formed afresh as CreateTime (``timestamp_type`` asks
    for LogAppendTime). A task holds its rows in memory.
    """
    inspect.signature(writing.write).bind("x", None, **write_options)  # unknown options
    return _Encoder(os.fspath(out_dir), write_options, topic, partition)


@dataclasses.dataclass
class _Staged(WriterCommitMessage):
    """What one write task left in staging: the core's commit message (JSON, see
    ``rust/spark/writing.rs``), as the JVM source's tasks report it too."""

    json: str


def _messages(messages: list[WriterCommitMessage | None]) -> list[str | None]:
    """The commit messages of this module's tasks (Spark passes None for a task that sent
    none)."""
    out: list[str | None] = []
    for m in messages:
        if m is not None and not isinstance(m, _Staged):
            raise InvalidArgumentError(f"not a kafkalog writer's commit message: {m!r}")
        out.append(None if m is None else m.json)
    return out


def _task(job: str, iterator: Iterator[pa.RecordBatch]) -> _Staged:
    """One write task: its rows through the core's task writer."""
    task = _native.SparkTaskWriter(job)
    try:
        for batch in iterator:
            task.write(batch)
        return _Staged(task.finish())
    except BaseException:
        task.abort()  # nothing half-written is left
        raise


class Writer(DataSourceArrowWriter):
    """The data source's batch writer: tasks stage, the driver publishes; the rules are the
    core's (``rust/spark/writing.rs``), the same as the JVM source's.

    Locally, tasks write complete partition directories in the job's staging directory and
    the driver renames each into place. In an object store (``s3://...``), tasks write each
    partition to the job's staging prefix (published there with its manifest); the driver then
    copies each one's files (server-side) to ``<path>/<topic>-<partition>`` and publishes it
    there with a conditional put of its manifest. Either way a reader sees no partition of a
    job before its commit, and none of a job that failed or was aborted; the staging directory
    is removed by commit and abort.

    Without ``overwrite`` (``mode("append")``), a topic-partition already at the target is
    appended to by the core (the next offsets, magic 2 data batches only). The rows of one
    topic-partition that several tasks wrote are made one log at commit, in Spark's partition
    order, before it is published. Rows that arrive grouped by topic-partition
    (``rowsGrouped``: :func:`write` sorts them) are streamed into segments; others are held in
    the task's memory and grouped first."""

    def __init__(self, options: Mapping[str, Any], overwrite: bool) -> None:
        # The options checked by the core and the job's staging directory made (on the
        # driver; never read as data, removed by commit or abort, or by a later write once old
        # if the driver dies).
        self.job = _native.spark_write_job({str(k): str(v) for k, v in options.items()}, False)
        self.overwrite = overwrite

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Staged:
        return _task(self.job, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        _native.spark_write_commit(self.job, _messages(messages), self.overwrite)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        try:
            _native.spark_write_abort(self.job)
        except errors.KafkaLogError:
            pass  # left for a later write's cleanup (locally) or the bucket's lifecycle rule


class StreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("kafkalog")``: each micro-batch appended to the partition
    directories ``<path>/<topic>-<partition>`` as a broker appends a producer's batches (the
    next offsets, the active segment filled to ``segmentBytes`` then rolled, indexes kept).

    Tasks encode their rows into a staging directory; the driver appends each partition's
    staged batches in one atomic step per partition, marking it with the query's
    ``writerId`` (default ``spark``) and the micro-batch id, so a micro-batch Spark replays
    after a failure is not written twice. As with Spark's file sink, one query writes one
    output directory: a new query (a new checkpoint) there needs its own ``writerId``.
    Records get new offsets (an ``offset`` column is ignored, as Spark's Kafka sink ignores
    it), magic 2 batches, the record's ``timestamp`` when given.

    ``path`` may be an object-store prefix (``s3://bucket/logs``, with ``storage.<key>``
    options): tasks stage each partition under a staging prefix there, and the driver
    appends it with the core's object-store append (the partition's marker held as a lease,
    the active segment rewritten while below ``maxRewriteBytes``, default 64 MiB, then new
    segments, all published with one conditional put of the partition's manifest, which
    also holds the writers' marks). Readers see each partition before or after a
    micro-batch; a second query writing the same partition at once fails with a
    ``ConcurrentWriteError``; ``storage.kafkalog.lease_seconds`` sets the marker's lease (see
    :func:`write`). Measured against a local S3 server, appending 256 KiB micro-batches costs
    about 80 ms while the active segment is small and about 190 ms once it holds 15 MiB,
    and leaves one segment where a segment per micro-batch would leave 60 (read back 6x
    slower).
    """

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.job = _native.spark_write_job({str(k): str(v) for k, v in options.items()}, True)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Staged:
        return _task(self.job, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        _native.spark_stream_commit(self.job, _messages(messages), int(batchId))

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        _native.spark_stream_abort(self.job, _messages(messages))


def write(
    df: Any,
    path: str | os.PathLike[str],
    *,
    mode: str = "append",
    storage_options: Mapping[str, str] | None = None,
    **write_options: Any,
) -> None:
    """Write a DataFrame of records as Kafka partition directories ``<path>/<topic>-<partition>``:
    groups the rows of each topic-partition into one task in offset order, then saves with the
    ``kafkalog`` data source. ``mode``: ``"append"`` (a missing topic-partition is created
    with the rows' offsets; one already there is continued from its log end offset, as a
    producer's records would be) or ``"overwrite"`` (the topic-partitions written replace
    those there; others are left alone). Spark gives a Python data source no other mode:
    ``errorifexists`` and ``ignore`` fail in Spark with ``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``.
    ``write_options`` as :func:`kafkalog.write` takes them (``magic``, ``compression``,
    ``segment_bytes``, ...), and ``topic``/``partition`` for rows without
    those columns. Each task streams its rows into segments as they come, so a topic-partition
    larger than a task's memory is written all the same. ``path`` may be an object-store URI
    (``s3://bucket/logs``, with ``storage_options`` as :func:`kafkalog.write` takes them):
    tasks stage, and the driver publishes each partition when the job commits (see
    :class:`Writer`).

    In an object store a writer holds each partition's ``.kafkalog-writing`` marker as a lease
    of ``storage_options["kafkalog.lease_seconds"]`` (default 60): it refreshes the marker
    every third of that while it writes, and a marker not refreshed for longer (by the
    store's clock, the marker's last-modified time) is taken over by the next writer, so a
    writer whose host died blocks its partitions for one lease only. A live holder's marker
    is a ``ConcurrentWriteError`` naming its host, process and age."""
    by = [c for c in ("topic", "partition") if c in df.columns]
    order = by + (["offset"] if "offset" in df.columns else [])
    if by:
        df = df.repartition(*by)
    if order:
        df = df.sortWithinPartitions(*order)
    options = {}
    for key, value in write_options.items():
        if key in ("topic", "partition"):
            options[key] = str(value)
        elif key in WRITE_OPTIONS:
            options[WRITE_OPTIONS[key]] = str(value)
        else:
            raise InvalidArgumentError(f"unknown write option {key!r}")
    for key, value in (storage_options or {}).items():
        options[f"storage.{key}"] = str(value)
    # Grouped and sorted: each task streams its rows into segments.
    options["rowsGrouped"] = "true"
    df.write.format("kafkalog").mode(mode).options(**options).save(os.fspath(path))
