"""``kafkalog convert``: records to Parquet, an Arrow IPC file or JSON lines, streaming, with a
progress line."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from kafkalog import reading
from kafkalog._isolation import ISOLATION_LEVELS
from kafkalog._native import partition_dir_name, read_topics
from kafkalog._storage import is_remote
from kafkalog.cli.arguments import (
    _bound_value,
    _column_list,
    add_storage_arguments,
    storage,
)
from kafkalog.cli.convert_tables import (
    TABLE_SCHEMES,
    add_table_arguments,
    cmd_table,
    refuse_table_options,
)
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_DATA, EXIT_OK, EXIT_USAGE, CliError
from kafkalog.cli.schemas import add_value_arguments, value_kwargs
from kafkalog.cli.text import _human_bytes, _json_values, _ms_column, _plural


class _Progress:
    """A progress line on stderr: records, bytes, rate and time left, from the segment bytes
    under the input path."""

    def __init__(self, total_bytes: int, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total_bytes
        self.records = 0
        self.done_segments = 0  # bytes of segments finished
        self.segment_end = 0  # end of the last batch seen in the current segment
        self.key: tuple[Any, ...] | None = None
        self.position = -1  # position of the last batch seen
        self.start = time.monotonic()
        self.last_draw = 0.0

    def update(self, batch: pa.RecordBatch) -> None:
        self.records += batch.num_rows
        if not self.enabled or batch.num_rows == 0:
            return
        pos = batch.column("batchPosition").to_pylist()
        size = batch.column("batchSize").to_pylist()
        topic = batch.column("topic").to_pylist()
        part = batch.column("partition").to_pylist()
        for i in range(batch.num_rows):
            key = (topic[i], part[i])
            if key == self.key and pos[i] == self.position:
                continue  # another record of the same batch
            if key != self.key or pos[i] < self.position:  # the next segment
                self.done_segments += self.segment_end
                self.segment_end = 0
                self.key = key
            self.position = pos[i]
            self.segment_end = max(self.segment_end, pos[i] + size[i])
        now = time.monotonic()
        if now - self.last_draw >= 0.5:
            self.last_draw = now
            self.draw(now)

    def draw(self, now: float, final: bool = False) -> None:
        if not self.enabled:
            return
        done = min(self.done_segments + self.segment_end, self.total) if not final else self.total
        elapsed = max(now - self.start, 1e-6)
        rate = done / elapsed
        line = (
            f"{self.records:,} records  {_human_bytes(done)} of {_human_bytes(self.total)}  "
            f"{_human_bytes(int(rate))}/s"
        )
        if final:
            line += f"  done in {elapsed:.1f} s"
        elif rate > 0 and self.total > done:
            left = int((self.total - done) / rate)
            line += f"  {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d} left"
        sys.stderr.write("\r" + line + "\x1b[K" + ("\n" if final else ""))
        sys.stderr.flush()


#: The reading bounds of :func:`kafkalog.read` that ``convert`` offers as options.
_BOUNDS = ("start_offset", "end_offset", "start_timestamp", "end_timestamp")


def _json_converter(
    schema: pa.Schema, binary: str, typed: frozenset[str] = frozenset()
) -> Callable[[pa.RecordBatch], Iterator[str]]:
    """Rows of a record batch as JSON text: binary as base64 or hex, timestamps as
    milliseconds since the epoch; the ``typed`` columns (decoded keys and values) as the core
    maps typed values to JSON (objects, ISO-8601 times, exact decimals: docs/values.md)."""
    encode: Callable[[bytes], str]
    if binary == "hex":
        encode = bytes.hex
    else:

        def encode(b: bytes) -> str:
            return base64.b64encode(b).decode("ascii")

    def plain(v: Any) -> Any:
        if isinstance(v, bytes):
            return encode(v)
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    def has_binary(t: pa.DataType) -> bool:
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            return True
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return has_binary(t.value_type)
        if pa.types.is_struct(t):
            return any(has_binary(t.field(i).type) for i in range(t.num_fields))
        return False

    names = schema.names
    binary_cols = [n for n in names if n not in typed and has_binary(schema.field(n).type)]
    ts_cols = [n for n in names if n not in typed and pa.types.is_timestamp(schema.field(n).type)]

    def convert(batch: pa.RecordBatch) -> Iterator[str]:
        columns = {}
        for n in names:
            col = batch.column(n)
            if n in typed:
                continue
            if n in ts_cols:
                col = _ms_column(col)
            columns[n] = col.to_pylist()
        for n in binary_cols:
            columns[n] = [plain(v) for v in columns[n]]
        dumps = json.dumps
        if not typed:
            for i in range(batch.num_rows):
                yield dumps({n: columns[n][i] for n in names}, ensure_ascii=False)
            return
        # Typed columns are JSON text already: the line is put together around them.
        texts = {n: _json_values(batch.column(n)) for n in names if n in typed}
        quoted = {n: dumps(n) for n in names}
        for i in range(batch.num_rows):
            cells = []
            for n in names:
                if n in typed:
                    text = texts[n][i]
                    cell = "null" if text is None else text
                else:
                    cell = dumps(columns[n][i], ensure_ascii=False)
                cells.append(f"{quoted[n]}: {cell}")
            yield "{" + ", ".join(cells) + "}"

    return convert


FORMAT_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}


def _out_format(out: str, given: str | None) -> str:
    """The format of ``out``: ``given``, else from its suffix (jsonl for stdout, parquet
    when it has none); another suffix is a usage error."""
    if given is not None:
        return given
    if out == "-":
        return "jsonl"
    for suffix, name in FORMAT_SUFFIXES.items():
        if out.lower().endswith(suffix):
            return name
    ext = os.path.splitext(os.path.basename(out.rstrip("/")))[1]
    if ext:
        known = ", ".join(FORMAT_SUFFIXES)
        raise CliError(
            f"convert: {out}: kafkalog does not write {ext} files; name the file "
            f"{known}, or give --format parquet, arrow or jsonl",
            EXIT_USAGE,
        )
    return "parquet"


#: The file name ending of each format, for the files of an output directory.
_FORMAT_EXTENSIONS = {"parquet": ".parquet", "arrow": ".arrow", "jsonl": ".jsonl"}


def _is_directory(out: str) -> bool:
    """Whether ``out`` names a directory: one that exists, or a path ending in ``/``."""
    if out == "-":
        return False
    return out.endswith(("/", os.sep)) or (not is_remote(out) and os.path.isdir(out))


def exact_topic(topic: str) -> str:
    """The ``topics`` pattern that matches ``topic`` alone (a valid topic name: letters,
    digits, ``.``, ``_`` and ``-``, of which only ``.`` means something in a pattern)."""
    partition_dir_name(topic, 0)  # a valid topic name, or InvalidArgumentError
    return topic.replace(".", "\\.")


def cmd_convert(args: argparse.Namespace) -> int:
    if args.out.startswith(TABLE_SCHEMES):
        return cmd_table(args)
    refuse_table_options(args)
    directory = _is_directory(args.out)
    fmt = _out_format(args.out, args.format)
    if args.out == "-" and fmt != "jsonl":
        raise CliError("convert: only --format jsonl can be written to stdout ('-')", EXIT_USAGE)
    if fmt == "jsonl" and args.compression:
        raise CliError("convert: --compression applies to parquet and arrow only", EXIT_USAGE)

    columns = [c for c in (args.columns or []) if c] or None
    base_schema = reading.schema(columns, batch_metadata=args.batch_metadata)
    store = storage(args)
    typed = value_kwargs(args)
    topics_pattern = getattr(args, "topics", None)
    if args.progress is None:
        show_progress = sys.stderr.isatty()
    else:
        show_progress = args.progress
    read_names = list(base_schema.names)
    if show_progress:
        read_names += [
            c for c in ("batchPosition", "batchSize", "topic", "partition") if c not in read_names
        ]
    bounds = {
        name: getattr(args, name) for name in _BOUNDS if getattr(args, name, None) is not None
    }
    if getattr(args, "isolation_level", None) is not None:
        bounds["isolation_level"] = args.isolation_level

    def open_reader(pattern: str | None) -> tuple[pa.RecordBatchReader, pa.Schema]:
        reader = reading.read(
            args.logdir,
            columns=read_names,
            include_control=args.include_control,
            check_crc=not args.no_check_crc,
            on_corrupt=args.on_corrupt,
            visibility=getattr(args, "visibility", "consumer"),
            topics=pattern,
            **bounds,
            **store,
            **typed,
        )
        out_names = list(base_schema.names)
        if typed:
            # Typed keys and values: their types, and the error columns decoding adds.
            out_names += [n for n in reader.schema.names if n not in read_names]
        return reader, pa.schema([reader.schema.field(n) for n in out_names])

    # One read per topic where a read cannot take them all: typed keys and values (each
    # topic's own subject, so each its own column type), or one output file per topic.
    per_topic = bool(typed) or directory
    topics: list[str] = []
    if per_topic:
        schemas_topic = (typed.get("value_options") or {}).get("schemas_topic") if typed else None
        topics, _left_out = read_topics(
            [args.logdir],
            topics=topics_pattern,
            typed=bool(typed),
            schemas_topic=schemas_topic,
            storage_options=store.get("storage_options"),
        )
        per_topic = directory or len(topics) > 1
    total = sum(
        s["size"] or 0
        for s in reading.segments(args.logdir, topics=topics_pattern, **store)
        if not per_topic or s["topic"] in topics
    )
    progress = _Progress(total, show_progress)

    if not per_topic:
        if directory:
            raise CliError(f"convert: {args.out} is a directory; name the output file", EXIT_USAGE)
        reader, out_schema = open_reader(topics_pattern)
        _write(args, fmt, args.out, out_schema, [reader], progress, store)
        progress.draw(time.monotonic(), final=True)
        _say_written(args, fmt, args.out, progress.records, show_progress)
        return EXIT_OK

    if not topics:
        raise CliError(f"convert: {args.logdir}: no topic to convert", EXIT_DATA)
    patterns = {t: exact_topic(t) for t in topics}
    if not directory:
        # One file: every topic's records have to share one schema.
        shapes: dict[str, list[str]] = {}
        for t in topics:
            reader, out_schema = open_reader(patterns[t])
            reader.close()
            shapes.setdefault(out_schema.to_string(), []).append(t)
        if len(shapes) > 1:
            groups = "; ".join(", ".join(ts) for ts in shapes.values())
            raise CliError(
                f"convert: the topics under {args.logdir} have different key or value schemas "
                f"({groups}): give a directory as OUT to write one file per topic "
                f"(OUT/<topic>{_FORMAT_EXTENSIONS[fmt]}), or --topics to choose topics that "
                "share one",
                EXIT_USAGE,
            )
        readers = []
        for t in topics:
            reader, out_schema = open_reader(patterns[t])
            readers.append(reader)
        _write(args, fmt, args.out, out_schema, readers, progress, store)
        progress.draw(time.monotonic(), final=True)
        _say_written(args, fmt, args.out, progress.records, show_progress)
        return EXIT_OK

    out_dir = args.out.rstrip("/") if is_remote(args.out) else args.out.rstrip("/" + os.sep)
    if not is_remote(out_dir):
        os.makedirs(out_dir or ".", exist_ok=True)
    for t in topics:
        reader, out_schema = open_reader(patterns[t])
        target = f"{out_dir}/{t}{_FORMAT_EXTENSIONS[fmt]}"
        before = progress.records
        _write(args, fmt, target, out_schema, [reader], progress, store)
        _say_written(args, fmt, target, progress.records - before, show_progress)
    progress.draw(time.monotonic(), final=True)
    return EXIT_OK


def _say_written(
    args: argparse.Namespace, fmt: str, target: str, records: int, show_progress: bool
) -> None:
    """One line on stdout saying what was written, where no progress line said it (and
    neither -q nor stdout as the output asks for silence)."""
    if show_progress or args.quiet or target == "-":
        return
    size = None if is_remote(target) else os.path.getsize(target)
    what = f"{fmt}, {_human_bytes(size)}" if size is not None else fmt
    print(f"{target}: {_plural(records, 'record')} written ({what})")


def _write(
    args: argparse.Namespace,
    fmt: str,
    target: str,
    out_schema: pa.Schema,
    readers: list[pa.RecordBatchReader],
    progress: _Progress,
    store: dict[str, Any],
) -> None:
    """The batches of ``readers``, one after the other, written to ``target`` in ``fmt``:
    under a temporary name renamed when complete (or uploaded as one object)."""
    out_names = out_schema.names

    def batches() -> Iterator[pa.RecordBatch]:
        for reader in readers:
            for batch in reader:
                progress.update(batch)
                yield batch.select(out_names) if batch.schema.names != out_names else batch

    tmp = None
    # An object-store output is written locally, then uploaded as one atomic object.
    remote = is_remote(target)
    if remote:
        tmp = os.path.join(tempfile.gettempdir(), f".kafkalog-convert-{os.getpid()}.tmp")
    elif target != "-":
        directory = os.path.dirname(os.path.abspath(target))
        tmp = os.path.join(directory, f".{os.path.basename(target)}.kafkalog-{os.getpid()}.tmp")
    ok = False
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            kw = {"compression": args.compression} if args.compression else {}
            with pq.ParquetWriter(tmp, out_schema, **kw) as writer:
                for batch in batches():
                    writer.write_batch(batch)
        elif fmt == "arrow":
            options = pa.ipc.IpcWriteOptions(compression=args.compression or None)
            with (
                pa.OSFile(tmp, "wb") as sink,
                pa.ipc.new_file(sink, out_schema, options=options) as w,
            ):
                for batch in batches():
                    w.write_batch(batch)
        else:
            typed = frozenset(
                n
                for n in ("key", "value")
                if value_kwargs(args)
                and n in out_names
                and not _is_binary(out_schema.field(n).type)
            )
            convert = _json_converter(out_schema, args.binary, typed)
            stream = (
                sys.stdout if tmp is None else open(tmp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
            )
            try:
                for batch in batches():
                    stream.write("".join(line + "\n" for line in convert(batch)))
                stream.flush()
            finally:
                if tmp is not None:
                    stream.close()
        if remote:
            from kafkalog._native import upload_file

            assert tmp is not None
            upload_file(tmp, target, store.get("storage_options"))
            os.unlink(tmp)
        elif tmp is not None:
            os.replace(tmp, target)
        ok = True
    finally:
        if tmp is not None and not ok:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _is_binary(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_binary_view(t)
    )


# --------------------------------------------------------------------------------------------
# info


CONVERT_HELP = """\
Write the records under LOGDIR (a .log segment, a partition directory <topic>-<partition>,
or a log directory of partition directories) to OUT, streaming batch by batch.

Formats (--format, else taken from OUT's suffix, else parquet; another suffix is an error):
  parquet  Apache Parquet (.parquet)
  arrow    Arrow IPC file format (.arrow, .feather)
  jsonl    one JSON object a line (.jsonl, .ndjson; "-" writes to stdout); binary values
           (key, value, header values) are base64 (--binary hex for lower-case hex),
           timestamps are integers, milliseconds since the epoch (null for none); typed
           keys and values (--value-format avro, ...) are JSON: records and maps as
           objects, timestamps and dates in ISO-8601, decimals as exact numbers, bytes as
           Avro's JSON encoding (docs/values.md)
Columns are those of kafkalog.read (Spark's Kafka source): key, value, topic, partition,
offset, timestamp, timestampType, headers; --batch-metadata adds Kafka's per-batch values.
--key-format/--value-format (string, avro, ...) with --schemas write typed key and value
columns (typed Parquet): see docs/values.md. Each topic is decoded with its own subject
(<topic>-value, <topic>-key); a log directory's internal topics (__consumer_offsets, ...)
and the registry's storage topic (_schemas) are left out unless --topics names them.
--topics REGEX converts only the topics whose whole name matches (Kafka's consumer's rule);
as Kafka's consumer, internal topics only where REGEX names them ('orders|__consumer_offsets').
OUT ending in "/" (or an existing directory) gets one file per topic: OUT/<topic>.parquet
(.arrow, .jsonl with --format). Topics whose typed schemas differ need that: one file holds
one schema, and converting them into one file is an error saying so.
OUT is written under a temporary name and renamed when complete.
A progress line is shown on stderr when it is a terminal; otherwise one line on stdout says
what was written (-q: nothing).

Tables (docs/lakehouse.md): OUT delta://PATH-OR-URI (Delta Lake, through deltalake) or
iceberg://NAMESPACE.TABLE (Apache Iceberg, through pyiceberg: --catalog NAME of pyiceberg's
configuration, or --catalog-uri sqlite:///cat.db --warehouse file:///wh). Each commit records
the next offset of every topic-partition in the same atomic table commit as its rows: run
again to write only what is new, also after a run was killed. --mode upsert keeps the latest
record of each key (a tombstone deletes it), as compaction does. Partitioned by topic and
timestamp day (--partition-by); the summary is printed at the end. Needs kafkalog[lake].
"""


def register(sub: Any) -> None:
    c = sub.add_parser(
        "convert",
        help="write the records to Parquet, Arrow IPC or JSON lines",
        description=CONVERT_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("logdir", metavar="LOGDIR", help="segment file, partition or log directory")
    c.add_argument(
        "out",
        metavar="OUT",
        help="output file ('-': stdout, jsonl only), or a directory (ending in '/'): one file "
        "per topic",
    )
    c.add_argument(
        "--topics",
        default=None,
        metavar="REGEX",
        help="only the topics whose whole name matches REGEX (as Kafka's consumer)",
    )
    c.add_argument("--format", choices=("parquet", "arrow", "jsonl"), default=None)
    c.add_argument(
        "--columns",
        type=_column_list,
        action="extend",
        metavar="COL,COL,...",
        help="the columns to write, in order (comma-separated; may be repeated)",
    )
    c.add_argument(
        "--batch-metadata", action="store_true", help="add Kafka's per-batch values as columns"
    )
    c.add_argument(
        "--include-control",
        action="store_true",
        help="also write control records (transaction markers, KRaft control records)",
    )
    c.add_argument("--no-check-crc", action="store_true", help="do not verify batch CRCs")
    c.add_argument(
        "--on-corrupt",
        choices=("error", "skip", "stop"),
        default="error",
        help="at a corrupt batch: fail (default), leave it out with a warning, or end the "
        "partition there with a warning (as Kafka's log recovery does)",
    )
    c.add_argument(
        "--binary",
        choices=("base64", "hex"),
        default="base64",
        help="jsonl: how binary values are written (default base64)",
    )
    c.add_argument(
        "--compression",
        default=None,
        metavar="CODEC",
        help="parquet: snappy (default), zstd, gzip, lz4, brotli, none; arrow: lz4 or zstd",
    )
    progress = c.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show the progress line even when stderr is not a terminal",
    )
    progress.add_argument(
        "--no-progress", dest="progress", action="store_false", help="never show it"
    )
    c.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing on success (otherwise, without the progress line, one line says "
        "how many records were written where)",
    )
    for name in _BOUNDS:
        what = name.split("_", 1)[1]
        first = "first" if name.startswith("start_") else "end (exclusive)"
        timestamp = "timestamp" in name or "time" in name
        c.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            type=_bound_value,
            default=None,
            metavar="TIME" if timestamp else "N",
            help=f"{first} {what} to read (kafkalog.read's {name}"
            + ("; milliseconds since the epoch or ISO 8601)" if timestamp else ")"),
        )
    c.add_argument(
        "--isolation-level",
        choices=ISOLATION_LEVELS,
        default=None,
        help="read_committed leaves out the records of aborted transactions, as a "
        "consumer with isolation.level=read_committed does (default read_uncommitted)",
    )
    c.add_argument(
        "--visibility",
        choices=("consumer", "all"),
        default="consumer",
        help="consumer: what a consumer could fetch, within the log directory's high "
        "watermark and log start offset checkpoints (default); all: every record on disk",
    )
    add_value_arguments(c)
    add_table_arguments(c)
    add_storage_arguments(c)
    c.set_defaults(func=cmd_convert)
