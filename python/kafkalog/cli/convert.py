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
from kafkalog._storage import is_remote
from kafkalog.cli.arguments import (
    _bound_value,
    _column_list,
    add_storage_arguments,
    storage,
)
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK, EXIT_USAGE, CliError
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


def cmd_convert(args: argparse.Namespace) -> int:
    fmt = args.format
    if fmt is None:
        fmt = "jsonl" if args.out == "-" else "parquet"
        for suffix, name in FORMAT_SUFFIXES.items():
            if args.out.lower().endswith(suffix):
                fmt = name
                break
        else:
            ext = os.path.splitext(os.path.basename(args.out))[1]
            if ext and args.out != "-":
                known = ", ".join(FORMAT_SUFFIXES)
                raise CliError(
                    f"convert: {args.out}: kafkalog does not write {ext} files; name the file "
                    f"{known}, or give --format parquet, arrow or jsonl",
                    EXIT_USAGE,
                )
    if args.out == "-" and fmt != "jsonl":
        raise CliError("convert: only --format jsonl can be written to stdout ('-')", EXIT_USAGE)
    if args.out != "-" and os.path.isdir(args.out):
        raise CliError(f"convert: {args.out} is a directory; name the output file", EXIT_USAGE)
    if fmt == "jsonl" and args.compression:
        raise CliError("convert: --compression applies to parquet and arrow only", EXIT_USAGE)

    columns = [c for c in (args.columns or []) if c] or None
    out_schema = reading.schema(columns, batch_metadata=args.batch_metadata)
    out_names = out_schema.names

    store = storage(args)
    total = sum(s["size"] or 0 for s in reading.segments(args.logdir, **store))
    if args.progress is None:
        show_progress = sys.stderr.isatty()
    else:
        show_progress = args.progress
    read_names = list(out_names)
    if show_progress:
        read_names += [
            c for c in ("batchPosition", "batchSize", "topic", "partition") if c not in read_names
        ]
    bounds = {
        name: getattr(args, name) for name in _BOUNDS if getattr(args, name, None) is not None
    }
    if getattr(args, "isolation_level", None) is not None:
        bounds["isolation_level"] = args.isolation_level
    reader = reading.read(
        args.logdir,
        columns=read_names,
        include_control=args.include_control,
        check_crc=not args.no_check_crc,
        on_corrupt=args.on_corrupt,
        visibility=getattr(args, "visibility", "consumer"),
        **bounds,
        **store,
        **value_kwargs(args),
    )
    if value_kwargs(args):
        # Typed keys and values: their types, and the error columns decoding adds.
        out_names = out_names + [n for n in reader.schema.names if n not in read_names]
        out_schema = pa.schema([reader.schema.field(n) for n in out_names])
    progress = _Progress(total, show_progress)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in reader:
            progress.update(batch)
            yield batch.select(out_names) if batch.schema.names != out_names else batch

    tmp = None
    target = args.out
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
    progress.draw(time.monotonic(), final=True)
    if not show_progress and not args.quiet and target != "-":
        size = os.path.getsize(target) if not remote else None
        what = f"{fmt}, {_human_bytes(size)}" if size is not None else fmt
        print(f"{target}: {_plural(progress.records, 'record')} written ({what})")
    return EXIT_OK


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
columns (typed Parquet): see docs/values.md.
OUT is written under a temporary name and renamed when complete.
A progress line is shown on stderr when it is a terminal; otherwise one line on stdout says
what was written (-q: nothing).
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
    c.add_argument("out", metavar="OUT", help="output file ('-': stdout, jsonl only)")
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
    add_storage_arguments(c)
    c.set_defaults(func=cmd_convert)
