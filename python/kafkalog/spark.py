"""Apache Spark integration: Kafka log files as Spark DataFrames, and DataFrames as Kafka logs.

Three ways in, from the most to the least managed (all need ``pyspark>=4.0``; the executors
need kafkalog installed too):

1. The data source (Spark 4's Python data source API)::

       import kafkalog.spark
       kafkalog.spark.register(spark)
       df = spark.read.format("kafkalog").load("/backup/kafka-logs")    # or a partition dir,
       df = (spark.read.format("kafkalog")                              # a .log file, a glob
             .option("topics", "orders,clicks")
             .option("startingOffsets", '{"orders": {"0": 5}}')
             .option("isolationLevel", "read_committed")
             .load("s3://bucket/kafka-logs"))

   Its rows and columns are those of Spark's Kafka source, so a job written against a live
   topic runs on files. Each Spark partition is a run of :func:`plan`'s work items.

2. Planned work items decoded with ``mapInArrow``::

       items = kafkalog.spark.plan_df(spark, "/backup/kafka-logs", target_bytes=64 << 20)
       df = items.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)

3. Any DataFrame with a ``path`` column (and optionally ``start``/``end`` byte positions,
   ``topic``/``partition`` overrides, or the ``content`` bytes ``spark.read.format("binaryFile")``
   gives) decoded with ``mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``.

And out: ``df.write.format("kafkalog").mode("append").save(dir)`` (or :func:`write`, which
first groups the rows by topic-partition), or ``df.mapInArrow(encode(dir), ENCODE_SCHEMA)``.

Paths are local paths, ``file:`` URIs, or any URI :func:`pyarrow.fs.FileSystem.from_uri`
understands (``s3://``, ``gs://``, ``hdfs://``, ...); local files are read natively (in
bounded memory), others are fetched (whole files, or the byte ranges of split work
items) and decoded from memory. Writing needs a local (or shared, mounted) directory.

Offset bounds follow Spark's Kafka source: the end offset is exclusive; a start timestamp
starts at the earliest offset whose timestamp is at or after it, an end timestamp ends before
the earliest offset whose timestamp is at or after it; ``read_committed`` leaves out aborted
transactions and stops at the last stable offset. Timestamp bounds and ``read_committed`` are
resolved per topic-partition on the driver by :func:`plan` (a scan of batch headers, decoding
only the batches it must), so split work items read exactly what a whole read would.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import fnmatch
import functools
import inspect
import json
import os
import re
import shutil
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

import kafkalog
from kafkalog import _native
from kafkalog._native import split_points as _split_points
from kafkalog.errors import InvalidArgumentError, KafkaLogError

__all__ = [
    "SPARK_SCHEMA",
    "SPARK_ARROW_SCHEMA",
    "WORK_ITEM_SCHEMA",
    "ENCODE_SCHEMA",
    "DEFAULT_TARGET_BYTES",
    "WorkItem",
    "KafkaLogDataSource",
    "spark_schema",
    "arrow_schema",
    "decode",
    "decoder",
    "plan",
    "plan_df",
    "encode",
    "write",
    "register",
]

#: Work items are cut to about this many bytes of log (Spark's ``maxPartitionBytes`` default
#: is 128 MiB of Parquet; Kafka logs expand more when decoded).
DEFAULT_TARGET_BYTES = 64 << 20

_DEFAULT_MAX_DECOMPRESSED = 256 << 20
_READ_UNCOMMITTED = "read_uncommitted"
_READ_COMMITTED = "read_committed"
_ISOLATION_LEVELS = (_READ_UNCOMMITTED, _READ_COMMITTED)


# --------------------------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------------------------


def _spark_type(t: pa.DataType) -> DataType:
    """The Spark type of an Arrow type kafkalog produces."""
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return BinaryType()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return StringType()
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_int8(t):
        return ByteType()
    if pa.types.is_int16(t):
        return ShortType()
    if pa.types.is_int32(t):
        return IntegerType()
    if pa.types.is_int64(t):
        return LongType()
    if pa.types.is_timestamp(t):
        return TimestampType()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ArrayType(_spark_type(t.value_type), containsNull=True)
    if pa.types.is_struct(t):
        return StructType([StructField(f.name, _spark_type(f.type), True) for f in t])
    raise InvalidArgumentError(f"no Spark type for Arrow type {t}")


def _arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type pyspark expects for the Spark type of ``t`` (``to_arrow_type`` with the
    UTC time zone): every field nullable, list items named ``element``, timestamps in
    microseconds with a time zone."""
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("element", _arrow_type(t.value_type), nullable=True))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _arrow_type(f.type), nullable=True) for f in t])
    return t


def _columns(columns: Sequence[str] | None, batch_metadata: bool) -> list[str]:
    return list(kafkalog.schema(columns, batch_metadata=batch_metadata).names)


def spark_schema(
    columns: Sequence[str] | None = None, *, batch_metadata: bool = False
) -> StructType:
    """The Spark schema of :func:`kafkalog.read`'s columns for these options; by default
    Spark's Kafka source schema (every field nullable, as there)."""
    schema = kafkalog.schema(columns, batch_metadata=batch_metadata)
    return StructType([StructField(f.name, _spark_type(f.type), True) for f in schema])


def arrow_schema(
    columns: Sequence[str] | None = None, *, batch_metadata: bool = False
) -> pa.Schema:
    """The Arrow schema :func:`decode` yields: exactly what pyspark's ``to_arrow_schema`` makes
    of :func:`spark_schema`, which Spark's Python data sources require to the letter."""
    schema = kafkalog.schema(columns, batch_metadata=batch_metadata)
    return pa.schema([pa.field(f.name, _arrow_type(f.type), nullable=True) for f in schema])


#: Spark's Kafka source schema: key binary, value binary, topic string, partition int,
#: offset long, timestamp timestamp, timestampType int,
#: headers array<struct<key: string, value: binary>>.
SPARK_SCHEMA: StructType = spark_schema()
#: The Arrow form of :data:`SPARK_SCHEMA` that :func:`decode` yields.
SPARK_ARROW_SCHEMA: pa.Schema = arrow_schema()

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


def _conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``target``'s schema (names, types, nullability)."""
    arrays = []
    for field in target:
        column = batch.column(field.name)
        if not column.type.equals(field.type):
            column = column.cast(field.type)
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# --------------------------------------------------------------------------------------------
# What the native reader supports
# --------------------------------------------------------------------------------------------


@functools.cache
def _native_parameters() -> Mapping[str, inspect.Parameter]:
    return dict(inspect.signature(kafkalog.read).parameters)


def _native_bounds() -> bool:
    """Whether :func:`kafkalog.read` takes offset bounds itself (``start_offset`` ...)."""
    return "start_offset" in _native_parameters()


def _native_isolation() -> bool:
    return "isolation_level" in _native_parameters()


def _default_isolation() -> str:
    """:func:`kafkalog.read`'s isolation level: what it does when not told."""
    p = _native_parameters().get("isolation_level")
    if p is None or p.default is inspect.Parameter.empty or p.default is None:
        return _READ_UNCOMMITTED
    return p.default


def _task_threads() -> dict:
    """In a Spark task, decode with the task's cores (``spark.task.cpus``), not the machine's:
    Spark runs a task per core already."""
    if "threads" not in _native_parameters():
        return {}
    task = TaskContext.get()
    return {} if task is None else {"threads": max(1, int(task.cpus()))}


def _isolation(level: str | None) -> str:
    level = _default_isolation() if level is None else level
    if level not in _ISOLATION_LEVELS:
        raise InvalidArgumentError(
            f"isolation level must be 'read_uncommitted' or 'read_committed', not {level!r}"
        )
    return level


# --------------------------------------------------------------------------------------------
# Files: local paths and pyarrow.fs URIs
# --------------------------------------------------------------------------------------------

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_GLOB = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=64)
def _filesystem(root: str, query: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem of a ``scheme://authority`` (made once per process), and how its paths
    relate to URIs: ``"authority"`` when they start with the authority (s3, gs), else
    ``"path"`` (hdfs)."""
    fs, path = pafs.FileSystem.from_uri(root + "/" + (f"?{query}" if query else ""))
    authority = urlsplit(root).netloc
    kind = "authority" if authority and path.strip("/") == unquote(authority) else "path"
    return fs, kind


@dataclasses.dataclass(frozen=True)
class _Loc:
    """A file or directory: a local path (``fs`` None), or a path in a pyarrow filesystem
    with the URI prefix that rebuilds its URI."""

    path: str
    fs: pafs.FileSystem | None = None
    prefix: str = ""

    @property
    def local(self) -> bool:
        return self.fs is None

    @property
    def uri(self) -> str:
        return self.path if self.fs is None else self.prefix + self.path

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] if self.fs else os.path.basename(self.path)

    def child(self, name: str) -> _Loc:
        if self.fs is None:
            return _Loc(os.path.join(self.path, name))
        return _Loc(self.path.rstrip("/") + "/" + name, self.fs, self.prefix)

    def parent(self) -> _Loc:
        if self.fs is None:
            return _Loc(os.path.dirname(os.path.abspath(self.path)))
        return _Loc(self.path.rstrip("/").rsplit("/", 1)[0], self.fs, self.prefix)

    def kind(self) -> str:
        """``"file"``, ``"dir"`` or ``"missing"``."""
        if self.fs is None:
            if os.path.isdir(self.path):
                return "dir"
            return "file" if os.path.exists(self.path) else "missing"
        info = self.fs.get_file_info(self.path)
        if info.type == pafs.FileType.Directory:
            return "dir"
        return "file" if info.type == pafs.FileType.File else "missing"

    def size(self) -> int:
        if self.fs is None:
            return os.path.getsize(self.path)
        return self.fs.get_file_info(self.path).size

    def children(self) -> list[tuple[str, bool]]:
        """(name, is_dir) of the entries in this directory, sorted by name."""
        if self.fs is None:
            with os.scandir(self.path) as it:
                entries = [(e.name, e.is_dir()) for e in it]
        else:
            infos = self.fs.get_file_info(pafs.FileSelector(self.path))
            entries = [(i.base_name, i.type == pafs.FileType.Directory) for i in infos]
        return sorted(entries)

    def read(self, start: int = 0, end: int | None = None) -> bytes:
        if self.fs is None:
            with open(self.path, "rb") as f:
                f.seek(start)
                return f.read() if end is None else f.read(max(0, end - start))
        with self.fs.open_input_file(self.path) as f:
            if start == 0 and end is None:
                data = f.readall()
            else:
                length = (f.size() if end is None else end) - start
                data = f.read_at(max(0, length), start)
        return data if isinstance(data, bytes) else data.to_pybytes()


def _locate(path: str | os.PathLike, filesystem: pafs.FileSystem | None = None) -> _Loc:
    """Where ``path`` is: ``file:`` URIs and plain paths are local (unless ``filesystem`` is
    given); other URIs go through :func:`pyarrow.fs.FileSystem.from_uri`."""
    path = os.fspath(path)
    m = _SCHEME.match(path)
    scheme = m.group(1).lower() if m and len(m.group(1)) > 1 else None  # not C:\ on Windows
    if scheme == "file":
        path = unquote(urlsplit(path).path)
        scheme = None
    if filesystem is not None:
        if scheme is not None:
            parts = urlsplit(path)
            path = unquote(parts.netloc + parts.path)
        return _Loc(path, filesystem, "")
    if scheme is None:
        return _Loc(path)
    parts = urlsplit(path)
    root = f"{parts.scheme}://{parts.netloc}"
    fs, kind = _filesystem(root, parts.query)
    if isinstance(fs, pafs.LocalFileSystem):
        return _Loc(unquote(parts.path))
    if kind == "authority":
        return _Loc(unquote(parts.netloc + parts.path), fs, f"{parts.scheme}://")
    return _Loc(unquote(parts.path), fs, root)


def _expand(loc: _Loc) -> list[_Loc]:
    """A path with glob characters as the matching paths (sorted), else itself."""
    if not _GLOB.search(loc.path):
        return [loc]
    absolute = loc.path.startswith("/")
    parts = [p for p in loc.path.split("/") if p]
    first = next(i for i, p in enumerate(parts) if _GLOB.search(p))
    base = "/".join(parts[:first])
    base = ("/" + base) if absolute else (base or ".")
    found = [dataclasses.replace(loc, path=base)]
    for part in parts[first:]:
        nxt = []
        for d in found:
            if d.kind() != "dir":
                continue
            if _GLOB.search(part):
                nxt.extend(d.child(n) for n, _ in d.children() if fnmatch.fnmatchcase(n, part))
            else:
                c = d.child(part)
                if c.kind() != "missing":
                    nxt.append(c)
        found = nxt
    return found


def _topic_partition(name: str) -> tuple[str, int] | None:
    """Topic and partition from a partition directory name, as kafkalog.read takes it."""
    topic, sep, partition = name.rpartition("-")
    if not sep or not topic or not partition.isascii() or not partition.isdigit():
        return None
    n = int(partition)
    return (topic, n) if n < 2**31 else None


def _base_offset(name: str) -> int | None:
    digits = name.split(".", 1)[0]
    return int(digits) if digits and digits.isascii() and digits.isdigit() else None


def _is_segment(name: str) -> bool:
    return name.endswith(".log") and _base_offset(name) is not None


@dataclasses.dataclass
class _Seg:
    """One segment file (or the bytes of one, from binaryFile's ``content``)."""

    loc: _Loc
    base_offset: int | None
    size: int
    data: bytes | None = None

    def batches(self, **options) -> pa.Table:
        if self.data is not None:
            return kafkalog.read_batches(self.data, **options).read_all()
        if self.loc.local:
            return kafkalog.read_batches(self.loc.path, **options).read_all()
        return _relocated(
            lambda: kafkalog.read_batches(self.loc.read(), **options).read_all(), self.loc.uri, 0
        )

    def records(self, start: int, end: int | None, **options) -> Iterator[pa.RecordBatch]:
        """Decode the entries in ``[start, end)``."""
        if self.data is None and self.loc.local:
            byte_range = None if start == 0 and end is None else (start, end)
            yield from kafkalog.read(
                self.loc.path, byte_range=byte_range, **options, **_task_threads()
            )
            return
        if self.data is not None:
            data = self.data if start == 0 and end is None else self.data[start:end]
        else:
            data = self.loc.read(start, end)
        yield from _relocated_iter(
            lambda: kafkalog.read_bytes(data, **options), self.loc.uri, start
        )


@dataclasses.dataclass
class _Part:
    """The segments of one topic-partition (a partition directory), or a lone file."""

    topic: str | None
    partition: int | None
    segments: list[_Seg]
    key: str  # the directory's (or lone file's) URI


def _segments(d: _Loc) -> list[_Seg]:
    segs = []
    for name, is_dir in d.children():
        if not is_dir and _is_segment(name):
            loc = d.child(name)
            segs.append(_Seg(loc, _base_offset(name), loc.size()))
    segs.sort(key=lambda s: s.base_offset)
    return segs


def _discover(loc: _Loc) -> list[_Part]:
    """The partitions under a path, in kafkalog.read's order: a file; a partition directory;
    a log directory's partition directories by topic and partition."""
    kind = loc.kind()
    if kind == "missing":
        raise kafkalog.KafkaLogIOError(f"{loc.uri}: no such file or directory", path=loc.uri)
    if kind == "file":
        tp = _topic_partition(loc.parent().name) or (None, None)
        return [_Part(tp[0], tp[1], [_Seg(loc, _base_offset(loc.name), loc.size())], loc.uri)]
    segs = _segments(loc)
    if segs:
        tp = _topic_partition(loc.name) or (None, None)
        return [_Part(tp[0], tp[1], segs, loc.uri)]
    parts = []
    for name, is_dir in loc.children():
        tp = _topic_partition(name) if is_dir else None
        if tp is not None:
            d = loc.child(name)
            segs = _segments(d)
            if segs:
                parts.append(_Part(tp[0], tp[1], segs, d.uri))
    parts.sort(key=lambda p: (p.topic, p.partition))
    return parts


# --------------------------------------------------------------------------------------------
# Errors from bytes in memory: name the file and the position in it
# --------------------------------------------------------------------------------------------

_POSITION = re.compile(r"byte position (\d+)")


def _relocate(e: KafkaLogError, uri: str, shift: int) -> KafkaLogError:
    message = getattr(e, "message", None) or str(e)
    if shift:
        message = _POSITION.sub(lambda m: f"byte position {int(m.group(1)) + shift}", message)
    position = None if e.position is None else e.position + shift
    return type(e)(f"{uri}: {message}", path=uri, position=position, offset=e.offset, kind=e.kind)


def _relocated(fn: Callable[[], Any], uri: str, shift: int) -> Any:
    try:
        return fn()
    except KafkaLogError as e:
        if e.path is not None:
            raise
        raise _relocate(e, uri, shift) from e


def _relocated_iter(open_: Callable[[], Iterable], uri: str, shift: int) -> Iterator:
    try:
        yield from open_()  # opening may decode (and fail) already
    except KafkaLogError as e:
        if e.path is not None:
            raise
        raise _relocate(e, uri, shift) from e


# --------------------------------------------------------------------------------------------
# Bounds: offsets, timestamps, transactions, resolved per topic-partition
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Bounds:
    start_offset: int | None = None
    end_offset: int | None = None
    start_timestamp: int | None = None
    end_timestamp: int | None = None
    read_committed: bool = False

    @property
    def needs_scan(self) -> bool:
        return (
            self.start_timestamp is not None
            or self.end_timestamp is not None
            or self.read_committed
        )

    @property
    def unbounded(self) -> bool:
        return self == _Bounds()


@dataclasses.dataclass(frozen=True)
class _Resolved:
    """A partition's bounds as offsets: keep ``[start, end)`` minus the aborted transactions
    ``(producerId, firstOffset, lastOffset)``."""

    start: int | None = None
    end: int | None = None
    aborted: tuple[tuple[int, int, int], ...] = ()


_EMPTY = _Resolved(0, 0)
_SCAN_COLUMNS = [
    "batchPosition",
    "batchSize",
    "magic",
    "baseOffset",
    "lastOffset",
    "maxTimestamp",
    "producerId",
    "isTransactional",
    "isControl",
]


def _to_ms(value: Any) -> int | None:
    """A timestamp bound as epoch milliseconds (ints are milliseconds; naive datetimes UTC)."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            return int(str(value).strip())
        except ValueError:
            raise InvalidArgumentError(
                f"a timestamp bound must be epoch milliseconds or a datetime, not {value!r}"
            ) from None
    return value


def _resolve(part: _Part, bounds: _Bounds, options: dict) -> _Resolved | None:
    """``bounds`` as offsets for one partition; None when nothing is in them. Reads batch
    headers, and decodes only the batches a timestamp lookup or a marker's type needs."""
    start, end = bounds.start_offset, bounds.end_offset
    aborted: list[tuple[int, int, int]] = []
    if bounds.needs_scan:
        scan = {k: options[k] for k in ("on_corrupt", "max_decompressed_size") if k in options}
        decode = dict(scan, check_crc=False)
        tables = [
            (seg, seg.batches(check_crc=False, **scan).select(_SCAN_COLUMNS))
            for seg in part.segments
        ]

        def first_at_or_after(ts: int, min_offset: int | None) -> int | None:
            for seg, batches in tables:
                # As Kafka's ListOffsets (FileRecords.searchForTimestamp): every batch counts,
                # control batches and aborted records included.
                wanted = pc.greater_equal(batches["maxTimestamp"], ts)
                if min_offset is not None:
                    wanted = pc.and_(wanted, pc.greater_equal(batches["lastOffset"], min_offset))
                for b in batches.filter(wanted).to_pylist():
                    pos = b["batchPosition"]
                    for rb in seg.records(
                        pos,
                        pos + b["batchSize"],
                        columns=["offset", "timestamp"],
                        include_control=True,
                        **decode,
                    ):
                        for offset, t in zip(
                            rb.column(0).to_pylist(),
                            rb.column(1).cast(pa.int64()).to_pylist(),
                            strict=True,
                        ):
                            if t is not None and t >= ts * 1000:
                                if min_offset is None or offset >= min_offset:
                                    return offset
            return None

        if bounds.start_timestamp is not None:
            found = first_at_or_after(bounds.start_timestamp, start)
            if found is None:
                return None
            start = found if start is None else max(start, found)
        if bounds.end_timestamp is not None:
            found = first_at_or_after(bounds.end_timestamp, None)
            if found is not None:
                end = found if end is None else min(end, found)
        if bounds.read_committed:
            open_txns: dict[int, int] = {}
            for seg, batches in tables:
                transactional = pc.and_(
                    pc.and_(pc.equal(batches["magic"], 2), batches["isTransactional"]),
                    pc.greater_equal(batches["producerId"], 0),
                )
                for b in batches.filter(transactional).to_pylist():
                    pid = b["producerId"]
                    if not b["isControl"]:
                        open_txns.setdefault(pid, b["baseOffset"])
                        continue
                    pos = b["batchPosition"]
                    kinds = [
                        k
                        for rb in seg.records(
                            pos,
                            pos + b["batchSize"],
                            columns=["controlType"],
                            include_control=True,
                            **decode,
                        )
                        for k in rb.column(0).to_pylist()
                    ]
                    kind = kinds[0] if kinds else None
                    if kind in (0, 1) and pid in open_txns:
                        first = open_txns.pop(pid)
                        if kind == 0:  # ABORT
                            aborted.append((pid, first, b["lastOffset"]))
            if open_txns:  # the last stable offset
                lso = min(open_txns.values())
                end = lso if end is None else min(end, lso)
    if start is not None and end is not None and start >= end:
        return None
    return _Resolved(start, end, tuple(aborted))


def _partition_map(spec: Any, what: str) -> tuple[int | None, dict[tuple[str, int], int]]:
    """A bound given for every partition (an int), or per partition: a mapping (or JSON)
    ``{"topic": {"0": value}}`` as Spark's Kafka source takes it."""
    if spec is None:
        return None, {}
    if isinstance(spec, str):
        text = spec.strip()
        if not text.startswith("{"):
            return _to_ms(text), {}
        try:
            spec = json.loads(text)
        except ValueError as e:
            raise InvalidArgumentError(f"{what}: not valid JSON: {e}") from None
    if isinstance(spec, Mapping):
        out: dict[tuple[str, int], int] = {}
        for topic, per in spec.items():
            if not isinstance(per, Mapping):
                raise InvalidArgumentError(
                    f'{what}: expected {{"topic": {{"partition": value}}}}, got {spec!r}'
                )
            for p, value in per.items():
                try:
                    out[(str(topic), int(p))] = _to_ms(value)
                except ValueError:
                    raise InvalidArgumentError(f"{what}: bad partition {p!r}") from None
        return None, out
    if isinstance(spec, (int, _dt.datetime)):
        return _to_ms(spec), {}
    raise InvalidArgumentError(f"{what}: expected an int or a per-partition mapping, not {spec!r}")


@dataclasses.dataclass(frozen=True)
class _BoundSpec:
    """Bounds as given, to be looked up per topic-partition."""

    start_offset: tuple = (None, {})
    end_offset: tuple = (None, {})
    start_timestamp: tuple = (None, {})
    end_timestamp: tuple = (None, {})
    read_committed: bool = False

    @classmethod
    def make(
        cls, start_offset, end_offset, start_timestamp, end_timestamp, isolation_level
    ) -> _BoundSpec:
        return cls(
            _partition_map(start_offset, "start offset"),
            _partition_map(end_offset, "end offset"),
            _partition_map(start_timestamp, "start timestamp"),
            _partition_map(end_timestamp, "end timestamp"),
            _isolation(isolation_level) == _READ_COMMITTED,
        )

    def named(self) -> set[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        for _, per in (
            self.start_offset,
            self.end_offset,
            self.start_timestamp,
            self.end_timestamp,
        ):
            out.update(per)
        return out

    def of(self, topic: str | None, partition: int | None) -> _Bounds:
        def pick(spec, earliest_or_latest):
            default, per = spec
            value = per.get((topic, partition), default)
            # Spark's special offsets: -2 earliest, -1 latest.
            if value is not None and value < 0 and earliest_or_latest is not None:
                which = {-2: "earliest", -1: "latest"}.get(value)
                if which is None:
                    raise InvalidArgumentError(f"invalid offset {value} for {topic}-{partition}")
                if which != earliest_or_latest:
                    raise InvalidArgumentError(
                        f"a {'start' if earliest_or_latest == 'earliest' else 'end'} offset "
                        f"of {which} ({value}) for {topic}-{partition} reads nothing; "
                        "Spark's Kafka source refuses it for batch queries too"
                    )
                return None
            return value

        return _Bounds(
            start_offset=pick(self.start_offset, "earliest"),
            end_offset=pick(self.end_offset, "latest"),
            start_timestamp=pick(self.start_timestamp, None),
            end_timestamp=pick(self.end_timestamp, None),
            read_committed=self.read_committed,
        )


# --------------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------------


#: A piece of one segment file for one task (see :func:`kafkalog.plan`).
WorkItem = kafkalog.WorkItem


def _cuts(seg: _Seg, target_bytes: int) -> list[tuple[int, int | None, int | None]]:
    """Where the segment is cut into items of about ``target_bytes``: batch starts from its
    offset index, each checked against the log by the native reader (reading the few bytes it
    needs through pyarrow.fs for segments not on a local disk). ``(position, lower, upper)``:
    every offset from ``position`` on is at least ``lower``, every offset before it below
    ``upper``. The first is ``(0, base offset, None)``."""
    whole = [(0, seg.base_offset, None)]
    if seg.base_offset is None or seg.data is not None or seg.size <= target_bytes:
        return whole
    if seg.loc.local:
        cuts = _split_points(seg.base_offset, target_bytes, path=seg.loc.path)
    else:
        index = seg.loc.parent().child(seg.loc.name[: -len(".log")] + ".index")
        try:
            index_bytes = index.read()
        except OSError:
            return whole
        cuts = _split_points(
            seg.base_offset,
            target_bytes,
            index=index_bytes,
            log_len=seg.size,
            read_at=lambda position, length: seg.loc.read(position, position + length),
        )
    return [tuple(c) for c in cuts]


def _filter_parts(
    parts: list[_Part],
    topics: Iterable[str] | None,
    topic_pattern: str | None,
    partitions: Iterable[int] | None,
    assign: Mapping[str, Iterable[int]] | None,
) -> list[_Part]:
    if isinstance(topics, str):
        topics = topics.split(",")
    if isinstance(partitions, (int, str)):
        partitions = str(partitions).split(",")
    topic_set = None if topics is None else {t.strip() for t in topics if t.strip()}
    pattern = None if topic_pattern is None else re.compile(topic_pattern)
    partition_set = None if partitions is None else {int(p) for p in partitions}
    assigned = None
    if assign is not None:
        assigned = {(str(t), int(p)) for t, ps in assign.items() for p in ps}
    out = []
    for p in parts:
        if topic_set is not None and p.topic not in topic_set:
            continue
        if pattern is not None and (p.topic is None or not pattern.fullmatch(p.topic)):
            continue
        if partition_set is not None and p.partition not in partition_set:
            continue
        if assigned is not None and (p.topic, p.partition) not in assigned:
            continue
        out.append(p)
    return out


def _items_of(part: _Part, resolved: _Resolved, target_bytes: int | None) -> list[WorkItem]:
    start, end = resolved.start, resolved.end
    segs = part.segments
    items = []
    for i, seg in enumerate(segs):
        next_base = segs[i + 1].base_offset if i + 1 < len(segs) else None
        if next_base is not None and start is not None and next_base <= start:
            continue  # wholly before the start
        if seg.base_offset is not None and end is not None and seg.base_offset >= end:
            break  # wholly after the end (segments are in offset order)
        cuts = _cuts(seg, target_bytes) if target_bytes else [(0, seg.base_offset, None)]
        for k, (position, lower, _) in enumerate(cuts):
            stop = cuts[k + 1][0] if k + 1 < len(cuts) else None
            # Every offset in the item is below this (a segment's, below the next segment's).
            upper = cuts[k + 1][2] if k + 1 < len(cuts) else next_base
            if upper is not None and start is not None and upper <= start:
                continue
            if lower is not None and end is not None and lower >= end:
                continue
            aborted = tuple(
                a
                for a in resolved.aborted
                if (upper is None or a[1] < upper) and (lower is None or a[2] >= lower)
            )
            items.append(
                WorkItem(
                    path=seg.loc.uri,
                    start=position,
                    end=stop,
                    topic=part.topic,
                    partition=part.partition,
                    base_offset=lower,
                    size=(seg.size if stop is None else stop) - position,
                    start_offset=start,
                    end_offset=end,
                    aborted=aborted,
                )
            )
    return items


def _parts(paths, filesystem) -> list[_Part]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    seen: set[str] = set()
    parts: list[_Part] = []
    for path in paths:
        loc = _locate(path, filesystem)
        if loc.local:
            loc = _Loc(os.path.abspath(loc.path))
        matches = _expand(loc)
        if not matches:
            raise kafkalog.KafkaLogIOError(f"{loc.uri}: no file matches", path=loc.uri)
        for m in matches:
            for p in _discover(m):
                if p.key not in seen:
                    seen.add(p.key)
                    parts.append(p)
    return parts


def plan(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    target_bytes: int | None = DEFAULT_TARGET_BYTES,
    topics: Iterable[str] | None = None,
    topic_pattern: str | None = None,
    partitions: Iterable[int] | None = None,
    assign: Mapping[str, Iterable[int]] | None = None,
    start_offset: int | Mapping | str | None = None,
    end_offset: int | Mapping | str | None = None,
    start_timestamp: int | _dt.datetime | Mapping | str | None = None,
    end_timestamp: int | _dt.datetime | Mapping | str | None = None,
    isolation_level: str | None = None,
    filesystem: pafs.FileSystem | None = None,
    on_corrupt: str = "error",
    max_decompressed_size: int = _DEFAULT_MAX_DECOMPRESSED,
) -> list[WorkItem]:
    """Cut log files into work items of about ``target_bytes`` each, at batch boundaries.

    ``paths``: ``.log`` files, partition directories, log directories or globs of them
    (local, ``file:`` or pyarrow.fs URIs). A segment larger than ``target_bytes`` is cut at
    entries of its offset index (``.index``; each entry's position is the start of a batch,
    checked before use); without a usable index it is one item. ``target_bytes=None`` makes one
    item per file.

    ``topics``, ``topic_pattern`` (a regex matching the whole name), ``partitions`` and
    ``assign`` (``{"topic": [0, 1]}``) keep only those topic-partitions.

    Bounds, per topic-partition: ``start_offset`` (inclusive) and ``end_offset`` (exclusive),
    ``start_timestamp``/``end_timestamp`` (epoch ms or datetimes: from the first record at or
    after the start, to before the first at or after the end) and ``isolation_level``
    (``"read_committed"``: no aborted transactions, nothing from the last stable offset on;
    default as :func:`kafkalog.read`). Each is a value for every partition or a mapping (or
    JSON) ``{"topic": {"partition": value}}``; offsets -2 and -1 mean earliest and latest as
    in Spark. They are resolved here to offsets; items wholly outside them are left out, and
    each item carries the offsets and aborted transactions its records are filtered by.
    """
    if target_bytes is not None and target_bytes <= 0:
        raise InvalidArgumentError(f"target_bytes must be positive, not {target_bytes}")
    spec = _BoundSpec.make(
        start_offset, end_offset, start_timestamp, end_timestamp, isolation_level
    )
    all_parts = _parts(paths, filesystem)
    unknown = spec.named() - {(p.topic, p.partition) for p in all_parts}
    if unknown:
        names = ", ".join(f"{t}-{p}" for t, p in sorted(unknown))
        raise InvalidArgumentError(f"bounds name topic-partitions that are not there: {names}")
    options = {"on_corrupt": on_corrupt, "max_decompressed_size": max_decompressed_size}
    items: list[WorkItem] = []
    for part in _filter_parts(all_parts, topics, topic_pattern, partitions, assign):
        resolved = _resolve(part, spec.of(part.topic, part.partition), options)
        if resolved is not None:
            items.extend(_items_of(part, resolved, target_bytes))
    return items


def _item_row(item: WorkItem) -> tuple:
    return tuple(item[:-1]) + (
        [{"producerId": a[0], "firstOffset": a[1], "lastOffset": a[2]} for a in item.aborted],
    )


def plan_df(spark, paths, **options):
    """:func:`plan`'s work items as a DataFrame (:data:`WORK_ITEM_SCHEMA`), one row per item,
    to decode with ``mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``. Options as
    :func:`plan`. Spark spreads the rows over ``spark.default.parallelism`` partitions;
    ``.repartition(n)`` for more tasks."""
    items = plan(paths, **options)
    return spark.createDataFrame([_item_row(i) for i in items], schema=WORK_ITEM_SCHEMA)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def _quiet_executor() -> None:
    """In a Spark task, a segment without an index is no news (copies often lack them, and a
    task's warnings only reach its log): leave IndexNotUsedWarning out there."""
    category = getattr(kafkalog.errors, "IndexNotUsedWarning", None)
    if category is not None and TaskContext.get() is not None:
        warnings.filterwarnings("ignore", category=category)


def _int(value) -> int | None:
    return None if value is None else int(value)


class _Decoder:
    """The ``mapInArrow`` function :func:`decoder` returns (picklable)."""

    def __init__(
        self,
        columns: Sequence[str] | None,
        batch_metadata: bool,
        include_control: bool,
        check_crc: bool,
        on_corrupt: str,
        max_decompressed_size: int,
        batch_size: int,
        bounds: _BoundSpec,
        filesystem: pafs.FileSystem | None,
        target: pa.Schema | None = None,
    ) -> None:
        self.columns = _columns(columns, batch_metadata)
        self.target = target if target is not None else arrow_schema(self.columns)
        self.schema = spark_schema(self.columns)
        self.options = {
            "include_control": bool(include_control),
            "check_crc": bool(check_crc),
            "on_corrupt": on_corrupt,
            "max_decompressed_size": int(max_decompressed_size),
            "batch_size": int(batch_size),
        }
        self.bounds = bounds
        self.filesystem = filesystem

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_cache")}

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        _quiet_executor()
        for batch in batches:
            names = batch.schema.names
            if "path" not in names and "content" not in names:
                raise InvalidArgumentError(
                    "kafkalog.decode reads a 'path' column (or binaryFile's 'content'); "
                    f"the input has {names}"
                )
            columns = {n: batch.column(n) for n in names}
            for i in range(batch.num_rows):
                row = {n: c[i].as_py() for n, c in columns.items() if n != "content"}
                if "content" in columns:
                    row["content"] = columns["content"][i].as_py()
                yield from self.row(row)

    # One input row -------------------------------------------------------------------------

    def row(self, row: dict) -> Iterator[pa.RecordBatch]:
        path, content = row.get("path"), row.get("content")
        start, end = _int(row.get("start")), _int(row.get("end"))
        topic, partition = row.get("topic"), _int(row.get("partition"))
        planned = _Resolved(
            _int(row.get("start_offset")),
            _int(row.get("end_offset")),
            tuple(
                (a["producerId"], a["firstOffset"], a["lastOffset"])
                if isinstance(a, Mapping)
                else tuple(a)
                for a in row.get("aborted") or ()
            ),
        )
        if content is not None:
            loc = _locate(path) if path else _Loc("<content>")
            if topic is None and path:
                topic, partition = _topic_partition(loc.parent().name) or (None, partition)
            seg = _Seg(loc, _base_offset(loc.name), len(content), data=content)
            part = _Part(topic, partition, [seg], loc.uri)
            yield from self.part_range(part, seg, start or 0, end, planned, topic, partition)
            return
        if path is None:
            raise InvalidArgumentError("a row of kafkalog.decode's input has no path")
        loc = _locate(path, self.filesystem)
        if start is not None or end is not None:  # a split work item
            if topic is None:
                topic, partition = _topic_partition(loc.parent().name) or (None, partition)
            seg = _Seg(loc, _base_offset(loc.name), 0)
            whole = self._parent_part(loc, topic, partition)
            yield from self.part_range(whole, seg, start or 0, end, planned, topic, partition)
            return
        native_all = self.bounds == _BoundSpec() or (
            _native_bounds() and _native_isolation() and not self.bounds.named()
        )
        if loc.local and native_all and planned == _Resolved():
            # kafkalog.read does it all: a file, a partition or a log directory.
            extra = {}
            if _native_bounds():
                b = self.bounds.of(None, None)
                extra = {
                    k: v
                    for k, v in (
                        ("start_offset", b.start_offset),
                        ("end_offset", b.end_offset),
                        ("start_timestamp", b.start_timestamp),
                        ("end_timestamp", b.end_timestamp),
                    )
                    if v is not None
                }
                extra["isolation_level"] = (
                    _READ_COMMITTED if b.read_committed else _READ_UNCOMMITTED
                )
            reader = kafkalog.read(
                loc.path,
                columns=self.columns,
                topic=topic,
                partition=partition,
                **self.options,
                **extra,
                **_task_threads(),
            )
            for b in reader:
                if b.num_rows:
                    yield _conform(b, self.target)
            return
        for part in _discover(loc):
            t = topic if topic is not None else part.topic
            p = partition if partition is not None else part.partition
            resolved = self._resolved(part, t, p, planned)
            if resolved is None:
                continue
            for item in _items_of(part, resolved, None):
                seg = next(s for s in part.segments if s.loc.uri == item.path)
                yield from self.read(seg, item.start, item.end, resolved, t, p)

    def _parent_part(self, loc: _Loc, topic, partition) -> _Part | None:
        """The whole partition a split item belongs to, when bounds must be resolved on it."""
        if self.bounds == _BoundSpec() or (not self.bounds.of(topic, partition).needs_scan):
            return None
        parent = loc.parent()
        segs = _segments(parent) if parent.kind() == "dir" else []
        if not any(s.loc.uri == loc.uri for s in segs):
            segs = [_Seg(loc, _base_offset(loc.name), loc.size())]
        return _Part(topic, partition, segs, parent.uri)

    def _resolved(
        self, part: _Part | None, topic, partition, planned: _Resolved
    ) -> _Resolved | None:
        """The decoder's bounds for a partition, combined with an item's planned ones."""
        b = self.bounds.of(topic, partition)
        if b.unbounded:
            mine = _Resolved()
        elif not b.needs_scan or part is None:
            mine = _Resolved(b.start_offset, b.end_offset)
        else:
            cache = self.__dict__.setdefault("_cache", {})
            key = (part.key, topic, partition)
            if key not in cache:
                cache[key] = _resolve(part, b, self.options)
            mine = cache[key]
            if mine is None:
                return None

        def tighter(a, b, f):
            return b if a is None else a if b is None else f(a, b)

        start = tighter(mine.start, planned.start, max)
        end = tighter(mine.end, planned.end, min)
        if start is not None and end is not None and start >= end:
            return None
        return _Resolved(start, end, tuple(sorted(set(mine.aborted) | set(planned.aborted))))

    def part_range(self, part, seg, start, end, planned, topic, partition):
        resolved = self._resolved(part, topic, partition, planned)
        if resolved is not None:
            yield from self.read(seg, start, end, resolved, topic, partition)

    # Reading one byte range ------------------------------------------------------------------

    def read(
        self, seg: _Seg, start: int, end: int | None, bounds: _Resolved, topic, partition
    ) -> Iterator[pa.RecordBatch]:
        # kafkalog.read takes offset bounds (seeking with the index); bytes are filtered here.
        native = _native_bounds() and _native_isolation() and seg.data is None and seg.loc.local
        filter_offsets = not native and (bounds.start is not None or bounds.end is not None)
        extra = []
        if filter_offsets or bounds.aborted:
            extra.append("offset")
        if bounds.aborted:
            extra += ["producerId", "isTransactional", "isControl"]
        columns = self.columns + [c for c in extra if c not in self.columns]
        options = dict(self.options, columns=columns, topic=topic, partition=partition)
        if native:
            options["isolation_level"] = _READ_UNCOMMITTED  # transactions are ours to filter
            if bounds.start is not None:
                options["start_offset"] = bounds.start
            if bounds.end is not None:
                options["end_offset"] = bounds.end
        for batch in seg.records(start, end, **options):
            keep = None
            if filter_offsets:
                offsets = batch.column("offset")
                if bounds.start is not None:
                    keep = pc.greater_equal(offsets, bounds.start)
                if bounds.end is not None:
                    below = pc.less(offsets, bounds.end)
                    keep = below if keep is None else pc.and_(keep, below)
            if bounds.aborted:
                offsets = batch.column("offset")
                producers = batch.column("producerId")
                data = pc.and_(
                    batch.column("isTransactional"), pc.invert(batch.column("isControl"))
                )
                for pid, first, last in bounds.aborted:
                    hit = pc.and_(
                        pc.and_(data, pc.equal(producers, pid)),
                        pc.and_(pc.greater_equal(offsets, first), pc.less_equal(offsets, last)),
                    )
                    out = pc.invert(hit)
                    keep = out if keep is None else pc.and_(keep, out)
            if keep is not None:
                batch = batch.filter(keep)
            if batch.num_rows:
                yield _conform(batch, self.target)


def decoder(
    *,
    columns: Sequence[str] | None = None,
    batch_metadata: bool = False,
    include_control: bool = False,
    check_crc: bool = True,
    on_corrupt: str = "error",
    max_decompressed_size: int = _DEFAULT_MAX_DECOMPRESSED,
    batch_size: int = 65536,
    start_offset: int | Mapping | str | None = None,
    end_offset: int | Mapping | str | None = None,
    start_timestamp: int | _dt.datetime | Mapping | str | None = None,
    end_timestamp: int | _dt.datetime | Mapping | str | None = None,
    isolation_level: str | None = None,
    filesystem: pafs.FileSystem | None = None,
) -> _Decoder:
    """A :func:`decode` with options, for ``df.mapInArrow(d, d.schema)``.

    Read options as :func:`kafkalog.read`; ``d.schema`` is the Spark schema of the columns
    chosen. Bounds as :func:`plan` takes them, applied per topic-partition: for a split work
    item (a row with ``start``/``end``), timestamps and ``read_committed`` are resolved on its
    whole partition directory (once per task); better pass them to :func:`plan_df`, which
    resolves them once, on the driver. ``filesystem``: a :class:`pyarrow.fs.FileSystem` to
    read every path from (for credentials or options a URI cannot carry).
    """
    kafkalog.schema(columns, batch_metadata=batch_metadata)  # check the columns early
    return _Decoder(
        columns,
        batch_metadata,
        include_control,
        check_crc,
        on_corrupt,
        max_decompressed_size,
        batch_size,
        _BoundSpec.make(start_offset, end_offset, start_timestamp, end_timestamp, isolation_level),
        filesystem,
    )


@functools.cache
def _default_decoder() -> _Decoder:
    return decoder()


def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Decode the log files named in a DataFrame's rows, for
    ``df.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``.

    Input columns: ``path`` (a ``.log`` file, partition or log directory: local, ``file:`` or
    a pyarrow.fs URI), or ``content`` (the bytes of a ``.log`` file, as
    ``spark.read.format("binaryFile")`` gives; ``path`` then names it); optionally ``start``
    and ``end`` (a byte range of one file, at batch boundaries), ``topic`` and ``partition``
    (instead of the directory's name), and :func:`plan_df`'s ``start_offset``, ``end_offset``,
    ``aborted``. Yields record batches of exactly :data:`SPARK_ARROW_SCHEMA`.
    """
    return _default_decoder()(batches)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------

_WRITE_OPTIONS = {
    # data source option (lower case) -> kafkalog.write argument, parser
    "magic": ("magic", int),
    "compression": ("compression", str),
    "compressionlevel": ("compression_level", int),
    "timestamptype": ("timestamp_type", str),
    "logappendtime": ("log_append_time", int),
    "baseoffset": ("base_offset", int),
    "batchrecords": ("batch_records", int),
    "batchbytes": ("batch_bytes", int),
    "preservebatches": ("preserve_batches", lambda v: _bool(v, "preserveBatches")),
    "producerid": ("producer_id", int),
    "producerepoch": ("producer_epoch", int),
    "basesequence": ("base_sequence", int),
    "transactional": ("transactional", lambda v: _bool(v, "transactional")),
    "partitionleaderepoch": ("partition_leader_epoch", int),
    "segmentbytes": ("segment_bytes", int),
    "indexintervalbytes": ("index_interval_bytes", int),
    "fsync": ("fsync", lambda v: _bool(v, "fsync")),
}


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(f"option {name} must be true or false, not {value!r}")


def _groups(
    batches: Iterable[pa.RecordBatch], default_topic: str | None, default_partition: int | None
) -> Iterator[tuple[str, int, pa.Table]]:
    """The rows of ``batches`` per (topic, partition), each in offset order (input order when
    there is no ``offset`` column), ready for kafkalog.write."""
    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches)
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
    # Every (topic, partition) checked by Kafka's rule before the first is written: a name
    # from data decides where files go.
    pairs = table.select(["topic", "partition"]).group_by(["topic", "partition"]).aggregate([])
    for topic, partition in zip(
        pairs.column("topic").to_pylist(), pairs.column("partition").to_pylist(), strict=True
    ):
        _native.partition_dir_name(topic, partition)
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


def _local_dir(path: str) -> str:
    loc = _locate(path)
    if not loc.local:
        raise InvalidArgumentError(
            f"kafkalog writes local (or mounted) directories; {path!r} is not one"
        )
    return os.path.abspath(loc.path)


class _Encoder:
    """The ``mapInArrow`` function :func:`encode` returns (picklable)."""

    def __init__(self, out_dir: str, options: dict, topic: str | None, partition: int | None):
        self.out_dir = _local_dir(out_dir)
        self.options = options
        self.topic = topic
        self.partition = partition

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for topic, partition, table in _groups(batches, self.topic, self.partition):
            segments = kafkalog.write(
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
    out_dir: str | os.PathLike,
    *,
    topic: str | None = None,
    partition: int | None = None,
    **write_options,
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
    as the directory exists (unless ``overwrite=True``, when the last one wins). ``key`` and
    ``value`` may be strings (written as UTF-8). Records keep their timestamps: without the
    batch-metadata columns, batches are formed afresh as CreateTime (``timestamp_type`` asks
    for LogAppendTime). A task holds its rows in memory.
    """
    inspect.signature(kafkalog.write).bind("x", None, **write_options)  # unknown options
    return _Encoder(os.fspath(out_dir), write_options, topic, partition)


@dataclasses.dataclass
class _Staged(WriterCommitMessage):
    """What one write task left in the staging directory: (topic, partition, dir, segments)."""

    partitions: list[tuple[str, int, str, list[dict]]]


class _Writer(DataSourceArrowWriter):
    def __init__(self, path: str, options: dict, overwrite: bool) -> None:
        self.path = path
        self.options = options
        self.overwrite = overwrite
        self.topic = options.pop("topic", None)
        partition = options.pop("partition", None)
        self.partition = None if partition is None else int(partition)
        # The job's staging directory (never read as data; removed by commit or abort, or by a
        # later write once old if the driver dies).
        self.staging = _native.create_job_staging(path, "spark")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Staged:
        task_dir = os.path.join(self.staging, uuid.uuid4().hex)
        staged = []
        for topic, partition, table in _groups(iterator, self.topic, self.partition):
            segments = kafkalog.write(
                task_dir, table, topic=topic, partition=partition, **self.options
            )
            target = _native.partition_dir(task_dir, topic, partition)
            staged.append((topic, partition, target, segments))
        return _Staged(staged)

    def commit(self, messages: list[_Staged | None]) -> None:
        try:
            owners: dict[tuple[str, int], str] = {}
            for m in messages:
                for topic, partition, staged, _ in m.partitions if m else ():
                    if (topic, partition) in owners:
                        raise InvalidArgumentError(
                            f"topic-partition {topic}-{partition} was written by two Spark "
                            "tasks; a partition directory is written in one piece, so the rows "
                            "of a topic-partition must be in one task: use "
                            "kafkalog.spark.write(df, path), or "
                            'df.repartition("topic", "partition")'
                            '.sortWithinPartitions("offset") first'
                        )
                    owners[(topic, partition)] = staged
            targets = {tp: _native.partition_dir(self.path, tp[0], tp[1]) for tp in owners}
            if not self.overwrite:
                there = [t for t in targets.values() if os.path.exists(t)]
                if there:
                    raise InvalidArgumentError(
                        f"{', '.join(sorted(there))} already exist: kafkalog cannot append to a "
                        'partition directory; use mode("overwrite") to replace them'
                    )
            fsync = self.options.get("fsync", True)
            for tp, staged in owners.items():
                # Under the target's lock; an overwrite is one atomic swap.
                _native.publish(staged, targets[tp], self.overwrite, fsync)
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self, messages: list[_Staged | None]) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def write(
    df,
    path: str | os.PathLike,
    *,
    mode: str = "append",
    **write_options,
) -> None:
    """Write a DataFrame of records as Kafka partition directories ``<path>/<topic>-<partition>``:
    groups the rows of each topic-partition into one task in offset order, then saves with the
    ``kafkalog`` data source. ``mode``: ``"append"`` (a topic-partition already there is an
    error) or ``"overwrite"`` (the topic-partitions written replace those there; others are
    left alone). ``write_options`` as :func:`kafkalog.write` takes them (``magic``,
    ``compression``, ``segment_bytes``, ...), and ``topic``/``partition`` for rows without
    those columns."""
    register(df.sparkSession)
    by = [c for c in ("topic", "partition") if c in df.columns]
    order = by + (["offset"] if "offset" in df.columns else [])
    if by:
        df = df.repartition(*by)
    if order:
        df = df.sortWithinPartitions(*order)
    names = {arg: opt for opt, (arg, _) in _WRITE_OPTIONS.items()}
    options = {}
    for key, value in write_options.items():
        if key in ("topic", "partition"):
            options[key] = str(value)
        elif key in names:
            options[names[key]] = str(value)
        else:
            raise InvalidArgumentError(f"unknown write option {key!r}")
    df.write.format("kafkalog").mode(mode).options(**options).save(os.fspath(path))


# --------------------------------------------------------------------------------------------
# The data source
# --------------------------------------------------------------------------------------------

_READ_OPTIONS = {
    "path",
    "paths",
    "topics",
    "subscribe",
    "subscribepattern",
    "assign",
    "partitions",
    "startingoffsets",
    "endingoffsets",
    "startingtimestamp",
    "endingtimestamp",
    "startingoffsetsbytimestamp",
    "endingoffsetsbytimestamp",
    "includeheaders",
    "isolationlevel",
    "batchmetadata",
    "includecontrol",
    "checkcrc",
    "oncorrupt",
    "maxdecompressedsize",
    "batchsize",
    "targetbytes",
}


def _comma_list(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


@dataclasses.dataclass
class _SourceOptions:
    paths: list[str]
    columns: list[str]
    plan: dict
    read: dict

    @classmethod
    def parse(cls, raw: Mapping[str, str], *, reading: bool = True) -> _SourceOptions:
        o = {str(k).lower(): v for k, v in raw.items()}
        if reading:
            unknown = sorted(set(o) - _READ_OPTIONS)
            if unknown:
                raise InvalidArgumentError(
                    f"unknown option(s) for the kafkalog data source: {', '.join(unknown)}"
                )
        if "paths" in o:
            paths = json.loads(o["paths"])
        elif "path" in o:
            paths = [o["path"]]
        else:
            raise InvalidArgumentError('give the log files to read: .load("/path/to/logs")')

        def flag(name: str, default: bool) -> bool:
            return _bool(o[name], name) if name in o else default

        # Spark's precedence: a timestamp over offsets by timestamp over offsets.
        def bound(offsets: str, by_timestamp: str, timestamp: str, special: str):
            if o.get(timestamp) is not None:
                return None, _to_ms(o[timestamp])
            if o.get(by_timestamp) is not None:
                return None, o[by_timestamp]
            value = o.get(offsets)
            if value is None or value.strip().lower() == special:
                return None, None
            if not value.strip().startswith("{"):
                raise InvalidArgumentError(
                    f"{offsets} must be {special!r} or JSON such as "
                    f'{{"topic": {{"0": 23}}}}, not {value!r}'
                )
            return value, None

        start_offset, start_timestamp = bound(
            "startingoffsets", "startingoffsetsbytimestamp", "startingtimestamp", "earliest"
        )
        end_offset, end_timestamp = bound(
            "endingoffsets", "endingoffsetsbytimestamp", "endingtimestamp", "latest"
        )
        topics = _comma_list(o.get("topics")) or _comma_list(o.get("subscribe"))
        partitions = _comma_list(o.get("partitions"))
        try:
            partitions = None if partitions is None else [int(p) for p in partitions]
        except ValueError:
            raise InvalidArgumentError(
                f"partitions must be integers: {o['partitions']!r}"
            ) from None
        assign = json.loads(o["assign"]) if o.get("assign") else None
        columns = list(kafkalog.COLUMNS)
        if not flag("includeheaders", True):
            columns.remove("headers")
        if flag("batchmetadata", False):
            columns += list(kafkalog.METADATA_COLUMNS)
        read = {
            "include_control": flag("includecontrol", False),
            "check_crc": flag("checkcrc", True),
            "on_corrupt": o.get("oncorrupt", "error"),
            "max_decompressed_size": int(o.get("maxdecompressedsize", _DEFAULT_MAX_DECOMPRESSED)),
            "batch_size": int(o.get("batchsize", 65536)),
        }
        plan_options = {
            "target_bytes": int(o.get("targetbytes", DEFAULT_TARGET_BYTES)),
            "topics": topics,
            "topic_pattern": o.get("subscribepattern"),
            "partitions": partitions,
            "assign": assign,
            "start_offset": start_offset,
            "end_offset": end_offset,
            "start_timestamp": start_timestamp,
            "end_timestamp": end_timestamp,
            "isolation_level": o.get("isolationlevel"),
            "on_corrupt": read["on_corrupt"],
            "max_decompressed_size": read["max_decompressed_size"],
        }
        return cls(paths, columns, plan_options, read)


class _ItemsPartition(InputPartition):
    """A Spark partition of the data source: consecutive work items."""

    def __init__(self, index: int, items: list[WorkItem]) -> None:
        super().__init__(index)
        self.items = items


class _SourceReader(DataSourceReader):
    def __init__(self, options: _SourceOptions, schema: StructType) -> None:
        self.options = options
        names = list(schema.fieldNames())
        if names != options.columns:
            # A schema given with .schema(...): its columns, checked against what we make.
            full = spark_schema(kafkalog.COLUMNS + kafkalog.METADATA_COLUMNS)
            known = {f.name: f.dataType for f in full}
            for f in schema:
                if f.name not in known or known[f.name] != f.dataType:
                    raise InvalidArgumentError(
                        f"column {f.name} {f.dataType.simpleString()} is not one kafkalog "
                        f"reads; its columns are {full.simpleString()}"
                    )
        self.columns = names
        self.decoder = _Decoder(
            names,
            False,
            bounds=_BoundSpec(),
            filesystem=None,
            **options.read,
        )

    def partitions(self) -> list[_ItemsPartition]:
        target = self.options.plan["target_bytes"]
        items = plan(self.options.paths, **self.options.plan)
        out: list[_ItemsPartition] = []
        current: list[WorkItem] = []
        size = 0
        for item in items:
            if current and size + item.size > target:
                out.append(_ItemsPartition(len(out), current))
                current, size = [], 0
            current.append(item)
            size += item.size
        if current:
            out.append(_ItemsPartition(len(out), current))
        return out

    def read(self, partition: _ItemsPartition) -> Iterator[pa.RecordBatch]:
        _quiet_executor()
        d = self.decoder
        # With no work items, Spark still reads one (plain) partition.
        for item in getattr(partition, "items", ()):
            loc = _locate(item.path)
            seg = _Seg(loc, item.base_offset, item.size)
            bounds = _Resolved(item.start_offset, item.end_offset, tuple(item.aborted))
            yield from d.read(seg, item.start, item.end, bounds, item.topic, item.partition)


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafkalog")`` and ``df.write.format("kafkalog")``; register it with
    :func:`register`.

    Reading options (names as Spark's Kafka source where it has them):

    - ``topics`` (or ``subscribe``): comma-separated topics; ``subscribePattern``: a regex;
      ``assign``: JSON ``{"topic": [0, 1]}``; ``partitions``: comma-separated partitions.
    - ``startingOffsets`` (``earliest`` or JSON ``{"topic": {"0": 23}}``, -2 = earliest),
      ``endingOffsets`` (``latest`` or JSON, -1 = latest; exclusive),
      ``startingOffsetsByTimestamp``/``endingOffsetsByTimestamp`` (JSON of epoch ms),
      ``startingTimestamp``/``endingTimestamp`` (epoch ms, every partition), with Spark's
      precedence: timestamp, then by-timestamp, then offsets. A partition with no record at or
      after the starting timestamp reads nothing (Spark would fail by default).
    - ``isolationLevel``: ``read_uncommitted`` or ``read_committed`` (default as
      :func:`kafkalog.read`).
    - ``includeHeaders`` (default true), ``batchMetadata`` (add :data:`kafkalog.METADATA_COLUMNS`),
      ``includeControl``, ``checkCrc``, ``onCorrupt`` (error, skip, stop: where a segment is
      split, ``stop`` stops its work item, not the whole partition as a whole read does),
      ``maxDecompressedSize``, ``batchSize``, and ``targetBytes`` (bytes of log per Spark
      partition, default 64 MiB).

    A schema given with ``.schema(...)`` selects columns (names and types as kafkalog has them).
    Filters are not pushed down (a Python data source that takes them fails unless
    ``spark.sql.python.filterPushdown.enabled`` is set): bound the read with the options.

    Writing (``mode("append")`` or ``mode("overwrite")``): one partition directory
    ``<path>/<topic>-<partition>`` per topic-partition in the rows, each written by one task
    (group them first: :func:`write` does); options ``magic``, ``compression``,
    ``compressionLevel``, ``segmentBytes``, ``batchRecords``, ``batchBytes``,
    ``timestampType``, ``indexIntervalBytes``, ``preserveBatches``, ``transactional``,
    ``producerId``, ``producerEpoch``, ..., and ``topic``/``partition`` for rows without those
    columns. Records keep their timestamps (batches are CreateTime unless the rows carry the
    batch metadata, or ``timestampType`` says otherwise). Tasks write into a staging directory;
    the driver moves the partitions into place when every task succeeded. ``overwrite``
    replaces the topic-partitions written, and leaves the others in ``path`` alone.
    """

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> StructType:
        if "path" not in {k.lower() for k in self.options} and "paths" not in {
            k.lower() for k in self.options
        }:
            return SPARK_SCHEMA  # a write: the schema is the DataFrame's
        return spark_schema(_SourceOptions.parse(self.options, reading=False).columns)

    def reader(self, schema: StructType) -> DataSourceReader:
        return _SourceReader(_SourceOptions.parse(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        o = {str(k).lower(): v for k, v in self.options.items()}
        if "path" not in o:
            raise InvalidArgumentError('give the directory to write: .save("/path/to/logs")')
        path = _local_dir(o.pop("path"))
        options: dict[str, Any] = {}
        for key, value in o.items():
            if key in ("topic", "partition"):
                options[key] = value
            elif key in _WRITE_OPTIONS:
                arg, parse = _WRITE_OPTIONS[key]
                options[arg] = parse(value)
            else:
                raise InvalidArgumentError(f"unknown write option {key!r} for kafkalog")
        return _Writer(path, options, overwrite)


def register(spark) -> None:
    """Make ``spark.read.format("kafkalog")`` and ``df.write.format("kafkalog")`` available
    in this Spark session."""
    spark.dataSource.register(KafkaLogDataSource)
