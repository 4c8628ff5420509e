"""``kafkalog``: the command-line tool.

Subcommands:

- ``kafkalog dump --files a.log,b.index,...``: print segment, index, time index, transaction
  index and producer snapshot files as Apache Kafka's ``kafka-dump-log.sh`` does (its 3.x
  output, line for line), or as JSON lines with ``--format json``;
- ``kafkalog convert LOGDIR OUT``: write the records of a segment, partition or log directory
  to Parquet, an Arrow IPC file or JSON lines, streaming;
- ``kafkalog info LOGDIR``: topics, partitions, segments, offset and time ranges, formats and
  sizes, from the batch headers only (``--json`` for programs);
- ``kafkalog verify PATH``: :func:`kafkalog.verify`'s checks of segments and indexes, one line
  per problem, exit code 1 if any.
- ``kafkalog offsets LOGDIR [--group G]``: consumer groups' committed offsets, log end offsets
  and lag, as ``kafka-consumer-groups --describe`` shows them.

``dump --offsets-decoder`` (``--transaction-log-decoder``, ``--cluster-metadata-decoder``,
``--remote-log-metadata-decoder``) prints internal topics' records as kafka-dump-log does; the
decoding is in the Rust core (``kafkalog._native.dump_internal_record``).

This module only formats what the library returns (:func:`kafkalog.read`,
:func:`kafkalog.read_batches`, :func:`kafkalog.read_index`); it does not parse Kafka's bytes.
"""

from __future__ import annotations

import argparse
import base64
import datetime as _dt
import json
import os
import re
import struct
import sys
import tempfile
import time
import warnings
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

import kafkalog
from kafkalog import _native
from kafkalog.errors import (
    InvalidArgumentError,
    KafkaLogError,
    KafkaLogIOError,
    KafkaLogWarning,
    StoppedAtCorruptionWarning,
)

PROG = "kafkalog"

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_IO = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """\
exit codes:
  0    success
  1    the data is corrupt or failed verification (a corrupt batch, a problem found by
       verify, an index entry that does not match the log with --verify-index-only, a
       corrupt producer snapshot)
  2    usage error (unknown option, bad argument value)
  3    I/O error (a file is missing or cannot be read or written)
  4    internal error (a bug in kafkalog; set KAFKALOG_DEBUG=1 to see the traceback)
  130  interrupted
Errors are printed as one line on stderr: "kafkalog: <path>: <message> (batch at byte
position N, offset O)"; warnings (such as a partial batch at the end of a segment) as one line
"warning: <message>".
"""

#: Kafka's ``Integer.MAX_VALUE``: the default of ``--max-bytes``.
JAVA_INT_MAX = 2**31 - 1

TIMESTAMP_TYPES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}

#: ``ControlRecordType`` names by id, as Kafka 3.8+ knows them.
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


class CliError(Exception):
    """An error to report as one line, with the exit code to use."""

    def __init__(self, message: str, code: int = EXIT_DATA) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------------------------
# small helpers


def _java_file(path: str) -> str:
    """A path as Java's ``new File(path).toString()`` prints it on Unix: repeated separators
    collapsed, a trailing separator removed."""
    p = re.sub(r"/+", "/", path)
    if len(p) > 1 and p.endswith("/"):
        p = p[:-1]
    return p


def _java_abs(path: str) -> str:
    """Java's ``File.getAbsolutePath()`` (no normalisation of ``..``)."""
    p = _java_file(path)
    return p if os.path.isabs(p) else os.path.join(os.getcwd(), p)


def _base_offset(path: str) -> int:
    """The offset in a segment or index file's name (what precedes the first dot), as Kafka
    takes it (``name.split("\\\\.")(0).toLong``)."""
    name = os.path.basename(path)
    head = name.split(".")[0]
    if not re.fullmatch(r"-?\d+", head):
        raise CliError(
            f"{path}: cannot take the base offset from the file name {name!r} (Kafka's files "
            "are named <20-digit base offset>.<suffix>, e.g. 00000000000000000000.log)"
        )
    return int(head)


def _java_bool(value: Any) -> str:
    return "true" if value else "false"


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def _utf8(data: bytes) -> str:
    """Bytes as Kafka's StringDecoder shows them: UTF-8, malformed input replaced."""
    return data.decode("utf-8", errors="replace")


def _error_text(e: BaseException) -> str:
    """One line for an exception from kafkalog or the operating system."""
    if isinstance(e, KafkaLogError):
        text = str(e)
        if e.path and not text.startswith(str(e.path)):
            text = f"{e.path}: {text}"
    elif isinstance(e, OSError) and e.strerror:
        text = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split("\n")).strip()


def _stop_text(w: Warning) -> str:
    """The error behind a StoppedAtCorruptionWarning, as the error kafkalog would raise."""
    return str(w).replace("stopped reading at a corrupt batch: ", "", 1)


def _iso_ms(ms: int | None) -> str | None:
    if ms is None or ms < 0:
        return None
    try:
        t = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _ms_column(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A timestamp column as int64 milliseconds since the epoch, nulls kept."""
    unit = column.type.unit
    ints = pc.cast(column, pa.int64())
    if unit == "s":
        return pc.multiply(ints, 1000)
    if unit == "ms":
        return ints
    return pc.divide(ints, 1000 if unit == "us" else 1_000_000)


class _Output:
    """Buffered line output to stdout."""

    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)
        if len(self.lines) >= 4096:
            self.flush()

    def json(self, obj: dict) -> None:
        self.line(json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")))

    def flush(self) -> None:
        if self.lines:
            self.stream.write("\n".join(self.lines) + "\n")
            self.lines = []
        self.stream.flush()


def _err(text: str) -> None:
    sys.stdout.flush()
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# dump: kafka-dump-log.sh


class _Records:
    """The records of one segment file, grouped by the batch they belong to (the record reader
    and the batch reader both go through the file in order)."""

    COLUMNS = [
        "offset",
        "timestamp",
        "timestampType",
        "key",
        "value",
        "headers",
        "batchPosition",
        "sequence",
        "controlType",
        "recordCrc",
        "recordCrcValid",
    ]

    def __init__(self, reader: pa.RecordBatchReader, print_data: bool) -> None:
        self._it = iter(reader)
        self._print_data = print_data
        self._n = 0
        self._i = 0
        self._cols: dict[str, list] = {}
        self._value: pa.Array | None = None

    def _load(self) -> bool:
        while self._i >= self._n:
            chunk = next(self._it, None)
            if chunk is None:
                return False
            cols: dict[str, list] = {}
            for name in (
                "offset",
                "timestampType",
                "batchPosition",
                "sequence",
                "controlType",
                "recordCrc",
                "recordCrcValid",
                "headers",
            ):
                cols[name] = chunk.column(name).to_pylist()
            cols["timestamp"] = pc.fill_null(_ms_column(chunk.column("timestamp")), -1).to_pylist()
            for name in ("key", "value"):
                column = chunk.column(name)
                cols[name + "Size"] = pc.fill_null(pc.binary_length(column), -1).to_pylist()
                if self._print_data:
                    cols[name] = column.to_pylist()
            self._value = chunk.column("value")
            self._cols = cols
            self._i = 0
            self._n = chunk.num_rows
        return True

    def take(self, position: int) -> list[dict]:
        """The records of the batch at ``position``."""
        rows = []
        while self._load():
            i = self._i
            p = self._cols["batchPosition"][i]
            if p > position:
                break
            self._i += 1
            if p < position:  # a batch the batch reader did not list: cannot happen
                continue
            row = {name: values[i] for name, values in self._cols.items()}
            if row["controlType"] is not None:
                row["value"] = self._value[i].as_py()
            rows.append(row)
        return rows


class _LogBatches:
    """The batches of a ``.log`` file (position, size, last offset), read once per file, to
    verify index entries against."""

    def __init__(self, log_path: str) -> None:
        self.path = log_path
        if not os.path.exists(log_path):
            raise FileNotFoundError(2, "No such file or directory", log_path)
        positions: list[int] = []
        sizes: list[int] = []
        last_offsets: list[int] = []
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            reader = kafkalog.read_batches(
                log_path, check_crc=False, on_corrupt="stop", visibility="all"
            )
            for chunk in reader:
                positions += chunk.column("batchPosition").to_pylist()
                sizes += chunk.column("batchSize").to_pylist()
                last_offsets += chunk.column("lastOffset").to_pylist()
        self.positions = positions
        self.sizes = sizes
        self.last_offsets = last_offsets
        self.index = {p: i for i, p in enumerate(positions)}

    def first_batch_last_offset(self, position: int, max_size: int) -> int | None:
        """The last offset of the first complete batch in ``max_size`` bytes from ``position``
        (Kafka's ``log.slice(position, maxMessageSize).batches.iterator.next().lastOffset``)."""
        i = self.index.get(position)
        if i is not None and self.sizes[i] <= max_size:
            return self.last_offsets[i]
        # Not a batch boundary the whole-file read found: read that slice as Kafka does.
        with open(self.path, "rb") as f:
            f.seek(position)
            data = f.read(max_size)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            table = kafkalog.read_batches(data, check_crc=False, on_corrupt="stop").read_all()
        return table.column("lastOffset")[0].as_py() if table.num_rows else None

    def batch_at_or_after(self, position: int, offset: int) -> int | None:
        """Index of the first batch from ``position`` on whose last offset is ``>= offset``."""
        start = bisect_right(self.positions, position - 1)
        for i in range(start, len(self.positions)):
            if self.last_offsets[i] >= offset:
                return i
        return None


class Dumper:
    """``kafka-dump-log.sh`` (Apache Kafka 3.x ``DumpLogSegments``)."""

    def __init__(self, args: argparse.Namespace, out: _Output) -> None:
        self.out = out
        self.json = args.format == "json"
        # --offsets-decoder etc.: the internal topic whose records are decoded (implies
        # --print-data-log, as in Kafka).
        self.decoder = _internal_decoder(args)
        self.print_data = args.print_data_log or self.decoder is not None
        self.deep = args.deep_iteration or self.print_data
        self.skip_metadata = args.skip_record_metadata
        self.verify_only = args.verify_index_only
        self.sanity_only = args.index_sanity_check
        self.max_message_size = args.max_message_size
        self.max_bytes = args.max_bytes
        self.visibility = getattr(args, "visibility", "all")
        self.exit_code = EXIT_OK
        # reports printed to stderr after all files, as Kafka does
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        self._logs: dict[str, _LogBatches] = {}

    # ---- dispatch

    def dump(self, arg: str) -> None:
        shown = _java_file(arg)
        name = os.path.basename(shown)
        suffix = name[name.rfind(".") :] if "." in name else ""
        kind = {
            ".log": "log",
            ".checkpoint": "log",
            ".index": "index",
            ".timeindex": "timeindex",
            ".snapshot": "snapshot",
            ".txnindex": "txnindex",
        }.get(suffix, "unknown")
        if self.json:
            self.out.json({"type": "file", "file": shown, "kind": kind})
        else:
            self.out.line(f"Dumping {shown}")
        if kind == "log":
            self.dump_log(arg, shown)
        elif kind == "index":
            self.dump_index(arg, shown)
        elif kind == "timeindex":
            self.dump_time_index(arg, shown)
        elif kind == "snapshot":
            self.dump_snapshot(arg, shown)
        elif kind == "txnindex":
            self.dump_txn_index(arg, shown)
        else:
            self.out.flush()
            _err(f"Ignoring unknown file {shown}")

    # ---- .log

    def dump_log(self, path: str, shown: str) -> None:
        name = os.path.basename(shown)
        if name.endswith(".log"):
            start = _base_offset(path)
            if self.json:
                self.out.json({"type": "log_start", "file": shown, "baseOffset": start})
            else:
                self.out.line(f"Log starting offset: {start}")
        elif name == "bootstrap.checkpoint":
            if self.json:
                self.out.json({"type": "bootstrap_snapshot", "file": shown})
            else:
                self.out.line("KRaft bootstrap snapshot")
        else:
            m = re.fullmatch(r"(\d{20})-(\d{10})\.checkpoint", name)
            if not m:
                raise CliError(
                    f"{path}: not a KRaft snapshot name (<20-digit offset>-<10-digit "
                    "epoch>.checkpoint)"
                )
            end_offset, epoch = int(m.group(1)), int(m.group(2))
            if self.json:
                self.out.json(
                    {"type": "snapshot_id", "file": shown, "endOffset": end_offset, "epoch": epoch}
                )
            else:
                self.out.line(f"Snapshot end offset: {end_offset}, epoch: {epoch}")

        file_size = _size(path)
        limit = min(self.max_bytes, file_size)
        pairs: list[tuple[int, int]] = []
        last_offset = -1
        valid_bytes = 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            records = None
            if self.deep:
                byte_range = None
                if limit < file_size:
                    end = self._boundary(path, limit)
                    byte_range = (0, end) if end > 0 else None
                if limit >= file_size or byte_range is not None:
                    reader = kafkalog.read(
                        path,
                        columns=_Records.COLUMNS,
                        include_control=True,
                        check_crc=False,
                        on_corrupt="stop",
                        byte_range=byte_range,
                        visibility=self.visibility,
                    )
                    records = _Records(reader, self.print_data)
            batches = kafkalog.read_batches(path, on_corrupt="stop", visibility=self.visibility)
            done = False
            for chunk in batches:
                cols = chunk.to_pydict()
                for i in range(chunk.num_rows):
                    batch = {k: v[i] for k, v in cols.items()}
                    if batch["batchPosition"] + batch["batchSize"] > limit:
                        done = True
                        break
                    self._batch_line(shown, batch, valid_bytes)
                    if records is not None:
                        for record in records.take(batch["batchPosition"]):
                            if last_offset == -1:
                                last_offset = record["offset"]
                            elif record["offset"] != last_offset + 1:
                                pairs.append((last_offset, record["offset"]))
                            last_offset = record["offset"]
                            self._record_line(shown, batch, record)
                        self._raise_if_stopped(caught, batch["batchPosition"], limit, exact=True)
                    valid_bytes += batch["batchSize"]
                if done:
                    break
            if not done:
                self._raise_if_stopped(caught, None, limit, exact=False)
            for w in caught:
                if not issubclass(w.category, KafkaLogWarning):
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        if pairs:
            self.non_consecutive.setdefault(_java_abs(path), []).extend(pairs)
        trailing = limit - valid_bytes
        if trailing > 0 and self.max_bytes == JAVA_INT_MAX:
            if self.json:
                self.out.json({"type": "trailing_bytes", "file": shown, "bytes": trailing})
            else:
                self.out.line(f"Found {trailing} invalid bytes at the end of {name}")

    def _boundary(self, path: str, limit: int) -> int:
        """The end of the last batch that lies wholly inside the first ``limit`` bytes."""
        end = 0
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            for chunk in kafkalog.read_batches(
                path, check_crc=False, on_corrupt="stop", visibility="all"
            ):
                ends = pc.add(chunk.column("batchPosition"), chunk.column("batchSize"))
                inside = pc.filter(ends, pc.less_equal(ends, limit))
                if len(inside):
                    end = max(end, pc.max(inside).as_py())
                if len(inside) < len(ends):
                    break
        return end

    def _raise_if_stopped(self, caught: list, position: int | None, limit: int, exact: bool):
        for w in caught:
            if not issubclass(w.category, StoppedAtCorruptionWarning):
                continue
            at = w.message.position
            if exact and at != position:
                continue
            if not exact and at is not None and at >= limit:
                continue
            self.out.flush()
            raise CliError(_stop_text(w.message))

    def _batch_line(self, shown: str, b: dict, position: int) -> None:
        ts_type = TIMESTAMP_TYPES.get(b["timestampType"], "NoTimestampType")
        if self.json:
            obj = {
                "type": "batch",
                "file": shown,
                "position": position,
                "magic": b["magic"],
                "baseOffset": b["baseOffset"],
                "lastOffset": b["lastOffset"],
                "count": b["recordCount"],
            }
            if b["magic"] >= 2:
                obj.update(
                    baseSequence=b["baseSequence"],
                    lastSequence=b["lastSequence"],
                    producerId=b["producerId"],
                    producerEpoch=b["producerEpoch"],
                    partitionLeaderEpoch=b["partitionLeaderEpoch"],
                    isTransactional=b["isTransactional"],
                    isControl=b["isControl"],
                    deleteHorizonMs=b["deleteHorizonMs"],
                )
            obj.update(
                timestampType=ts_type,
                maxTimestamp=b["maxTimestamp"],
                size=b["batchSize"],
                compression=b["compression"],
                crc=b["crc"],
                isValid=bool(b["crcValid"]),
            )
            self.out.json(obj)
            return
        if b["magic"] >= 2:
            head = (
                f"baseOffset: {b['baseOffset']} lastOffset: {b['lastOffset']} "
                f"count: {b['recordCount']} baseSequence: {b['baseSequence']} "
                f"lastSequence: {b['lastSequence']} producerId: {b['producerId']} "
                f"producerEpoch: {b['producerEpoch']} "
                f"partitionLeaderEpoch: {b['partitionLeaderEpoch']} "
                f"isTransactional: {_java_bool(b['isTransactional'])} "
                f"isControl: {_java_bool(b['isControl'])} "
                f"deleteHorizonMs: {_optional_long(b['deleteHorizonMs'])}"
            )
        else:
            head = f"offset: {b['lastOffset']}"
        self.out.line(
            f"{head} position: {position} {ts_type}: {b['maxTimestamp']} "
            f"size: {b['batchSize']} magic: {b['magic']} compresscodec: {b['compression']} "
            f"crc: {b['crc']} isvalid: {_java_bool(b['crcValid'])}"
        )

    def _control(self, record: dict) -> tuple[str, int | None]:
        """(type name, coordinator epoch for transaction markers) of a control record."""
        type_id = record["controlType"]
        name = CONTROL_TYPES.get(type_id, "UNKNOWN") if type_id is not None else "UNKNOWN"
        if name not in ("ABORT", "COMMIT"):
            return name, None
        # EndTransactionMarker: int16 version, int32 coordinator epoch (Kafka's
        # EndTransactionMarker.deserialize; higher versions are read as version 0).
        value = record["value"] or b""
        if len(value) < 6:
            raise CliError(
                "Invalid value size found for end transaction marker. Must have at least 6 "
                f"bytes, but found only {len(value)} (control record at offset "
                f"{record['offset']})"
            )
        version, epoch = struct.unpack_from(">hi", value)
        if version < 0:
            raise CliError(
                f"Invalid version found for end transaction marker: {version}. May indicate "
                f"data corruption (control record at offset {record['offset']})"
            )
        return name, epoch

    def _record_line(self, shown: str, batch: dict, r: dict) -> None:
        legacy = batch["magic"] < 2
        control = bool(batch["isControl"])
        ts_type = TIMESTAMP_TYPES.get(r["timestampType"], "NoTimestampType")
        if self.json:
            obj: dict[str, Any] = {"type": "record", "file": shown, "offset": r["offset"]}
            if not self.skip_metadata:
                obj.update(
                    batchPosition=batch["batchPosition"],
                    timestampType=ts_type,
                    timestamp=r["timestamp"],
                    keySize=r["keySize"],
                    valueSize=r["valueSize"],
                )
                if not legacy:
                    obj["sequence"] = r["sequence"]
                    obj["headerKeys"] = [h["key"] for h in r["headers"] or []]
                else:
                    obj["isValid"] = bool(r["recordCrcValid"])
                    obj["crc"] = r["recordCrc"]
                if control:
                    name, epoch = self._control(r)
                    obj["controlType"] = name
                    obj["controlTypeId"] = r["controlType"]
                    if epoch is not None:
                        obj["coordinatorEpoch"] = epoch
            if self.print_data and not control:
                if self.decoder is not None:
                    obj.update(_decoded_record(self.decoder, r))
                else:
                    obj["key"] = None if r["key"] is None else _utf8(r["key"])
                    obj["payload"] = None if r["value"] is None else _utf8(r["value"])
            self.out.json(obj)
            return
        parts: list[str] = []
        prefix = "| "
        if not self.skip_metadata:
            parts.append(
                f"| offset: {r['offset']} {ts_type}: {r['timestamp']} "
                f"keySize: {r['keySize']} valueSize: {r['valueSize']}"
            )
            prefix = " "
            if not legacy:
                keys = ",".join(h["key"] for h in r["headers"] or [])
                parts.append(f" sequence: {r['sequence']} headerKeys: [{keys}]")
            else:
                # Kafka 3.x prints a stray "}" here (fixed in its later Java rewrite).
                parts.append(f" isValid: {_java_bool(r['recordCrcValid'])} crc: {r['recordCrc']}}}")
            if control:
                name, epoch = self._control(r)
                if epoch is not None:
                    parts.append(f" endTxnMarker: {name} coordinatorEpoch: {epoch}")
                else:
                    # Kafka 3.3+ prints SNAPSHOT_HEADER/FOOTER and 3.8+ KRAFT_VERSION/VOTERS as
                    # JSON of the decoded record; kafkalog does not decode those values.
                    parts.append(f" controlType: {name}({r['controlType']})")
        if self.print_data and not control:
            if self.decoder is not None:
                key, payload = _native.dump_internal_record(
                    self.decoder, r["key"], r["value"], r["offset"]
                )
            else:
                key = None if r["key"] is None else _utf8(r["key"])
                payload = None if r["value"] is None else _utf8(r["value"])
            if key is not None:
                parts.append(f"{prefix}key: {key}")
            if payload is not None:
                parts.append(f" payload: {payload}")
        self.out.line("".join(parts))

    # ---- .index

    def _log_for(self, index_path: str) -> _LogBatches:
        name = os.path.basename(index_path)
        log_path = os.path.join(
            os.path.dirname(os.path.abspath(index_path)), name.split(".")[0] + ".log"
        )
        if log_path not in self._logs:
            self._logs[log_path] = _LogBatches(log_path)
        return self._logs[log_path]

    def dump_index(self, path: str, shown: str) -> None:
        base = _base_offset(path)
        size = os.path.getsize(path)
        if size < 8:
            if self.json:
                self.out.json({"type": "empty", "file": shown})
            else:
                self.out.line(f"{shown} is empty.")
            return
        table = kafkalog.read_index(path)
        if self.sanity_only:
            self._sanity_index(path, shown, base, size, table)
            return
        log = self._log_for(path)
        mismatches = []
        offsets = table.column("offset").to_pylist()
        positions = table.column("position").to_pylist()
        for offset, position in zip(offsets, positions, strict=True):
            found = log.first_batch_last_offset(position, self.max_message_size)
            if found is None:
                self.out.flush()
                raise CliError(
                    f"{path}: no complete batch at position {position} of {log.path} within "
                    f"--max-message-size {self.max_message_size} bytes (index entry for offset "
                    f"{offset})"
                )
            if found != offset:
                mismatches.append((offset, found))
            if not self.verify_only:
                if self.json:
                    self.out.json(
                        {
                            "type": "index_entry",
                            "file": shown,
                            "offset": offset,
                            "position": position,
                        }
                    )
                else:
                    self.out.line(f"offset: {offset} position: {position}")
        if mismatches:
            self.index_mismatches.setdefault(_java_abs(path), []).extend(mismatches)
            if self.verify_only:
                self.exit_code = EXIT_DATA

    def _sanity_index(self, path, shown, base, size, table) -> None:
        abs_path = os.path.abspath(path)
        if size % 8 != 0:
            raise CliError(
                f"Index file {abs_path} is corrupt, found {size} bytes which is neither "
                "positive nor a multiple of 8"
            )
        if table.num_rows:
            last = table.column("offset")[table.num_rows - 1].as_py()
            if last < base:
                raise CliError(
                    f"Corrupt index found, index file {abs_path} has non-zero size but the "
                    f"last offset is {last} which is less than the base offset {base}"
                )
        self._passed(shown)

    def _passed(self, shown: str) -> None:
        if self.json:
            self.out.json({"type": "sanity_check", "file": shown, "passed": True})
        else:
            self.out.line(f"{shown} passed sanity check.")

    # ---- .timeindex

    def dump_time_index(self, path: str, shown: str) -> None:
        base = _base_offset(path)
        size = os.path.getsize(path)
        table = kafkalog.read_index(path) if size >= 12 else None
        if self.sanity_only:
            abs_path = os.path.abspath(path)
            if size % 12 != 0:
                raise CliError(
                    f"Time index file {abs_path} is corrupt, found {size} bytes which is "
                    "neither positive nor a multiple of 12"
                )
            if table is not None and table.num_rows:
                ts = table.column("timestamp").to_pylist()
                offs = table.column("offset").to_pylist()
                if ts[-1] < ts[0]:
                    raise CliError(
                        f"Corrupt time index found, time index file ({abs_path}) has non-zero "
                        f"size but the last timestamp is {ts[-1]} which is less than the first "
                        f"timestamp {ts[0]}"
                    )
                if offs[-1] < base:
                    raise CliError(
                        f"Corrupt time index found, time index file ({abs_path}) has non-zero "
                        f"size but the last offset is {offs[-1]} which is less than the first "
                        f"offset {base}"
                    )
            self._passed(shown)
            return
        if table is None or table.num_rows == 0:
            return
        log = self._log_for(path)
        index_path = os.path.join(
            os.path.dirname(os.path.abspath(path)),
            os.path.basename(path).split(".")[0] + ".index",
        )
        idx_offsets: list[int] = []
        idx_positions: list[int] = []
        if os.path.exists(index_path) and os.path.getsize(index_path) >= 8:
            idx = kafkalog.read_index(index_path)
            idx_offsets = idx.column("offset").to_pylist()
            idx_positions = idx.column("position").to_pylist()
        abs_path = _java_abs(path)
        prev = -1
        for ts, offset in zip(
            table.column("timestamp").to_pylist(), table.column("offset").to_pylist(), strict=True
        ):
            # OffsetIndex.lookup: the largest entry at or below the offset, else position 0
            k = bisect_right(idx_offsets, offset)
            start = idx_positions[k - 1] if k else 0
            i = log.batch_at_or_after(start, offset)
            if i is None:
                self.time_not_found.setdefault(abs_path, []).append((offset, -1))
            elif log.last_offsets[i] != offset:
                self.time_not_found.setdefault(abs_path, []).append((offset, log.last_offsets[i]))
            else:
                log_ts = self._max_record_timestamp(log, i)
                if log_ts != ts:
                    self.time_mismatches.setdefault(abs_path, []).append((ts, log_ts))
                if prev >= ts:
                    self.time_out_of_order.setdefault(abs_path, []).append((ts, prev))
            if not self.verify_only:
                if self.json:
                    self.out.json(
                        {
                            "type": "time_index_entry",
                            "file": shown,
                            "timestamp": ts,
                            "offset": offset,
                        }
                    )
                else:
                    self.out.line(f"timestamp: {ts} offset: {offset}")
            prev = ts
        if self.verify_only and (
            abs_path in self.time_not_found
            or abs_path in self.time_mismatches
            or abs_path in self.time_out_of_order
        ):
            self.exit_code = EXIT_DATA

    @staticmethod
    def _max_record_timestamp(log: _LogBatches, i: int) -> int:
        position = log.positions[i]
        table = kafkalog.read(
            log.path,
            columns=["timestamp"],
            include_control=True,
            check_crc=False,
            byte_range=(position, position + log.sizes[i]),
            visibility="all",
        ).read_all()
        ms = pc.fill_null(_ms_column(table.column("timestamp")), -1)
        best = pc.max(ms).as_py() if len(ms) else None
        return max(-1, best) if best is not None else -1

    # ---- .txnindex and .snapshot

    def dump_txn_index(self, path: str, shown: str) -> None:
        table = kafkalog.read_index(path)
        for row in table.to_pylist():
            if self.json:
                self.out.json({"type": "txn_index_entry", "file": shown, **row})
            else:
                self.out.line(
                    f"version: {row['version']} producerId: {row['producerId']} "
                    f"firstOffset: {row['firstOffset']} lastOffset: {row['lastOffset']} "
                    f"lastStableOffset: {row['lastStableOffset']}"
                )

    def dump_snapshot(self, path: str, shown: str) -> None:
        try:
            table = kafkalog.read_index(path)
        except KafkaLogIOError:
            raise
        except KafkaLogError as e:
            # Kafka prints the message of a CorruptSnapshotException and goes on.
            self.out.flush()
            _err(f"{PROG}: {_error_text(e)}")
            self.exit_code = EXIT_DATA
            return
        for row in table.to_pylist():
            txn = row["currentTxnFirstOffset"]
            txn = txn if txn is not None and txn >= 0 else None
            has_meta = row["lastOffset"] is not None and row["lastOffset"] >= 0
            if self.json:
                obj = {"type": "producer_snapshot_entry", "file": shown, **row}
                obj["currentTxnFirstOffset"] = txn
                if not has_meta:
                    for k in ("firstSequence", "lastSequence", "lastOffset", "offsetDelta"):
                        obj[k] = None
                self.out.json(obj)
                continue
            line = (
                f"producerId: {row['producerId']} producerEpoch: {row['producerEpoch']} "
                f"coordinatorEpoch: {row['coordinatorEpoch']} "
                f"currentTxnFirstOffset: {_optional_long(txn)} "
                f"lastTimestamp: {row['lastTimestamp']} "
            )
            if has_meta:
                line += (
                    f"firstSequence: {row['firstSequence']} lastSequence: {row['lastSequence']} "
                    f"lastOffset: {row['lastOffset']} offsetDelta: {row['offsetDelta']} "
                    f"timestamp: {row['lastTimestamp']}"
                )
            self.out.line(line)

    # ---- reports

    def report(self) -> None:
        """The reports Kafka prints to stderr after all files."""
        self.out.flush()
        lines: list[str] = []
        for name, pairs in self.index_mismatches.items():
            lines.append(f"Mismatches in :{name}")
            lines += [f"  Index offset: {a}, log offset: {b}" for a, b in reversed(pairs)]
        for name, pairs in self.time_mismatches.items():
            lines.append(f"Found timestamp mismatch in :{name}")
            lines += [f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs]
        for name, pairs in self.time_out_of_order.items():
            lines.append(f"Found out of order timestamp in :{name}")
            lines += [
                f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs
            ]
        for pairs in self.time_not_found.values():
            lines.append("The following indexed offsets are not found in the log.")
            lines += [f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs]
        for name, pairs in self.non_consecutive.items():
            lines.append(f"Non-consecutive offsets in {name}")
            lines += [f"  {a} is followed by {b}" for a, b in reversed(pairs)]
        if lines:
            _err("\n".join(lines))


def cmd_dump(args: argparse.Namespace) -> int:
    files = [f for f in (args.files or "").split(",") if f] + list(args.paths or [])
    if not files:
        raise CliError("dump: give the files to dump with --files a.log,b.index,...", EXIT_USAGE)
    out = _Output()
    dumper = Dumper(args, out)
    try:
        for f in files:
            dumper.dump(f)
    finally:
        out.flush()  # what was printed before an error stays printed, as with Kafka's tool
    dumper.report()
    return dumper.exit_code


# --------------------------------------------------------------------------------------------
# segment discovery (which files a path stands for), for info and progress


def discover(path: str) -> list[str]:
    """The segment files :func:`kafkalog.read` reads for ``path`` (local, or an object-store
    URI), in its order."""
    return [s["path"] for s in kafkalog.segments(path)]


def _size(path: str) -> int:
    """A segment file's size, local or in an object store."""
    return kafkalog.segments(path)[0]["size"] or 0


# --------------------------------------------------------------------------------------------
# convert


class _Progress:
    """A progress line on stderr: records, bytes, rate and time left, from the segment bytes
    under the input path."""

    def __init__(self, total_bytes: int, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total_bytes
        self.records = 0
        self.done_segments = 0  # bytes of segments finished
        self.segment_end = 0  # end of the last batch seen in the current segment
        self.key: tuple | None = None
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


def _bound_value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an integer nor an ISO 8601 time"
        ) from None
    return t if t.tzinfo else t.replace(tzinfo=_dt.UTC)


def _json_converter(schema: pa.Schema, binary: str) -> Callable[[pa.RecordBatch], Iterator[str]]:
    """Rows of a record batch as JSON text: binary as base64 or hex, timestamps as
    milliseconds since the epoch."""
    encode: Callable[[bytes], str]
    if binary == "hex":
        encode = bytes.hex
    else:

        def encode(b: bytes) -> str:
            return base64.b64encode(b).decode("ascii")

    def plain(v):
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
    binary_cols = [n for n in names if has_binary(schema.field(n).type)]
    ts_cols = [n for n in names if pa.types.is_timestamp(schema.field(n).type)]

    def convert(batch: pa.RecordBatch) -> Iterator[str]:
        columns = {}
        for n in names:
            col = batch.column(n)
            if n in ts_cols:
                col = _ms_column(col)
            columns[n] = col.to_pylist()
        for n in binary_cols:
            columns[n] = [plain(v) for v in columns[n]]
        dumps = json.dumps
        for i in range(batch.num_rows):
            yield dumps({n: columns[n][i] for n in names}, ensure_ascii=False)

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
    if args.out == "-" and fmt != "jsonl":
        raise CliError("convert: only --format jsonl can be written to stdout ('-')", EXIT_USAGE)
    if args.out != "-" and os.path.isdir(args.out):
        raise CliError(f"convert: {args.out} is a directory; name the output file", EXIT_USAGE)
    if fmt == "jsonl" and args.compression:
        raise CliError("convert: --compression applies to parquet and arrow only", EXIT_USAGE)

    columns = [c for c in (args.columns or []) if c] or None
    out_schema = kafkalog.schema(columns, batch_metadata=args.batch_metadata)
    out_names = out_schema.names

    total = sum(s["size"] or 0 for s in kafkalog.segments(args.logdir))
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
    reader = kafkalog.read(
        args.logdir,
        columns=read_names,
        include_control=args.include_control,
        check_crc=not args.no_check_crc,
        on_corrupt=args.on_corrupt,
        visibility=getattr(args, "visibility", "consumer"),
        **bounds,
    )
    progress = _Progress(total, show_progress)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in reader:
            progress.update(batch)
            yield batch.select(out_names) if batch.schema.names != out_names else batch

    tmp = None
    target = args.out
    # An object-store output is written locally, then uploaded as one atomic object.
    remote = "://" in target and not target.startswith("file://")
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
            convert = _json_converter(out_schema, args.binary)
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

            upload_file(tmp, target)
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
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# info


def _segment_summary(path: str, size: int) -> dict:
    """What the batch headers of one segment file say (via :func:`kafkalog.read_batches`)."""
    s: dict[str, Any] = {
        "file": os.path.basename(path),
        "path": path,
        "baseOffset": None,
        "bytes": size,
        "batches": 0,
        "records": 0,
        "firstOffset": None,
        "lastOffset": None,
        "firstTimestamp": None,
        "lastTimestamp": None,
        "magics": [],
        "compressions": [],
        "timestampTypes": [],
        "validBytes": 0,
        "trailingBytes": 0,
        "crcMismatches": 0,
        "controlBatches": 0,
        "transactionalBatches": 0,
        "error": None,
    }
    head = s["file"].split(".")[0]
    if head.isdigit():
        s["baseOffset"] = int(head)
    magics: set[int] = set()
    codecs: set[str] = set()
    ts_types: set[int] = set()
    first_ts: list[int] = []
    last_ts: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for chunk in kafkalog.read_batches(path, on_corrupt="stop", visibility="all"):
            if chunk.num_rows == 0:
                continue
            s["batches"] += chunk.num_rows
            s["records"] += pc.sum(chunk.column("recordCount")).as_py() or 0
            s["validBytes"] += pc.sum(chunk.column("batchSize")).as_py() or 0
            lo = pc.min(chunk.column("baseOffset")).as_py()
            hi = pc.max(chunk.column("lastOffset")).as_py()
            s["firstOffset"] = lo if s["firstOffset"] is None else min(s["firstOffset"], lo)
            s["lastOffset"] = hi if s["lastOffset"] is None else max(s["lastOffset"], hi)
            magics.update(pc.unique(chunk.column("magic")).to_pylist())
            codecs.update(pc.unique(chunk.column("compression")).to_pylist())
            ts_types.update(pc.unique(chunk.column("timestampType")).to_pylist())
            s["crcMismatches"] += chunk.num_rows - (pc.sum(chunk.column("crcValid")).as_py() or 0)
            s["controlBatches"] += pc.sum(chunk.column("isControl")).as_py() or 0
            s["transactionalBatches"] += pc.sum(chunk.column("isTransactional")).as_py() or 0
            # earliest: a v2 CreateTime batch's base timestamp (its first record's), unless it
            # holds a delete horizon; else the batch's max timestamp
            use_base = pc.and_(
                pc.and_(
                    pc.equal(chunk.column("magic"), 2),
                    pc.equal(chunk.column("timestampType"), 0),
                ),
                pc.is_null(chunk.column("deleteHorizonMs")),
            )
            early = pc.if_else(
                use_base, chunk.column("baseTimestamp"), chunk.column("maxTimestamp")
            )
            early = pc.filter(early, pc.greater_equal(early, 0))
            late = chunk.column("maxTimestamp")
            late = pc.filter(late, pc.greater_equal(late, 0))
            if len(early):
                first_ts.append(pc.min(early).as_py())
            if len(late):
                last_ts.append(pc.max(late).as_py())
    for w in caught:
        if isinstance(w.message, StoppedAtCorruptionWarning):
            s["error"] = _stop_text(w.message)
        elif isinstance(w.message, KafkaLogWarning) and w.message.bytes:
            s["trailingBytes"] += w.message.bytes
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    s["firstTimestamp"] = min(first_ts) if first_ts else None
    s["lastTimestamp"] = max(last_ts) if last_ts else None
    if last_ts and s["firstTimestamp"] is not None:
        s["firstTimestamp"] = min(s["firstTimestamp"], s["lastTimestamp"])
    s["magics"] = sorted(magics)
    s["compressions"] = sorted(codecs)
    s["timestampTypes"] = [TIMESTAMP_TYPES.get(t, str(t)) for t in sorted(ts_types)]
    return s


def _merge(items: list[dict], extra: dict) -> dict:
    def pick(key, fn):
        values = [i[key] for i in items if i[key] is not None]
        return fn(values) if values else None

    out = dict(extra)
    for key in (
        "bytes",
        "validBytes",
        "trailingBytes",
        "batches",
        "records",
        "crcMismatches",
        "controlBatches",
        "transactionalBatches",
    ):
        out[key] = sum(i[key] for i in items)
    out["firstOffset"] = pick("firstOffset", min)
    out["lastOffset"] = pick("lastOffset", max)
    out["firstTimestamp"] = pick("firstTimestamp", min)
    out["lastTimestamp"] = pick("lastTimestamp", max)
    out["magics"] = sorted({m for i in items for m in i["magics"]})
    out["compressions"] = sorted({c for i in items for c in i["compressions"]})
    order = list(TIMESTAMP_TYPES.values())
    out["timestampTypes"] = sorted(
        {t for i in items for t in i["timestampTypes"]},
        key=lambda t: order.index(t) if t in order else 99,
    )
    return out


def log_info(path: str) -> dict:
    """The summary ``kafkalog info`` prints, as a dict (what ``--json`` prints)."""
    partitions: dict[tuple, list[dict]] = {}
    for seg in kafkalog.segments(path):
        key = (seg["topic"], seg["partition"], os.path.dirname(seg["path"]))
        partitions.setdefault(key, []).append(_segment_summary(seg["path"], seg["size"] or 0))
    topics: dict[str | None, list[dict]] = {}
    for (topic, partition, directory), segs in partitions.items():
        summary = _merge(segs, {"topic": topic, "partition": partition, "path": directory or "."})
        summary["segments"] = segs
        topics.setdefault(topic, []).append(summary)
    topic_list = []
    for topic, parts in topics.items():
        t = _merge(parts, {"topic": topic})
        t["partitions"] = parts
        topic_list.append(t)
    all_parts = [p for t in topic_list for p in t["partitions"]]
    total = _merge(all_parts, {"path": path})
    total["topicCount"] = len([t for t in topic_list if t["topic"] is not None])
    total["partitionCount"] = len(all_parts)
    total["segmentCount"] = sum(len(segs) for segs in partitions.values())
    total["errors"] = [
        f"{s['path']}: {s['error']}" if not s["error"].startswith(s["path"]) else s["error"]
        for p in all_parts
        for s in p["segments"]
        if s["error"]
    ]
    total["topics"] = topic_list
    return total


def _range(a, b) -> str:
    if a is None:
        return "-"
    return f"{a}..{b}"


def _time_range(a, b) -> str:
    if a is None:
        return "-"
    return f"{_iso_ms(a)} .. {_iso_ms(b)}"


def _print_info(info: dict, out: _Output) -> None:
    out.line(
        f"{info['path']}: {_plural(info['topicCount'], 'topic')}, "
        f"{_plural(info['partitionCount'], 'partition')}, "
        f"{_plural(info['segmentCount'], 'segment')}, "
        f"{_plural(info['batches'], 'batch', 'batches')}, "
        f"{_plural(info['records'], 'record')}, {_human_bytes(info['bytes'])}"
    )
    for topic in info["topics"]:
        for p in topic["partitions"]:
            out.line("")
            if p["topic"] is None:
                label = p["path"]
            else:
                label = f"{p['topic']}-{p['partition']}  ({p['path']})"
            out.line(label)
            out.line(f"  segments     {len(p['segments'])}")
            out.line(
                f"  offsets      {_range(p['firstOffset'], p['lastOffset'])}  "
                f"({p['records']:,} records in {p['batches']:,} batches)"
            )
            out.line(f"  timestamps   {_time_range(p['firstTimestamp'], p['lastTimestamp'])}")
            out.line(
                "  magic        "
                + (", ".join(str(m) for m in p["magics"]) or "-")
                + "   compression  "
                + (", ".join(p["compressions"]) or "-")
                + "   timestamp types  "
                + (", ".join(p["timestampTypes"]) or "-")
            )
            out.line(f"  size         {p['bytes']:,} bytes ({_human_bytes(p['bytes'])})")
            notes = []
            if p["controlBatches"]:
                notes.append(f"{p['controlBatches']} control batches")
            if p["transactionalBatches"]:
                notes.append(f"{p['transactionalBatches']} transactional batches")
            if p["crcMismatches"]:
                notes.append(f"{p['crcMismatches']} batches with a CRC mismatch")
            if p["trailingBytes"]:
                notes.append(f"{p['trailingBytes']} bytes of partial batches at segment ends")
            if notes:
                out.line("  notes        " + ", ".join(notes))
            width = max(len(s["file"]) for s in p["segments"])
            for s in p["segments"]:
                line = (
                    f"    {s['file']:<{width}}  offsets {_range(s['firstOffset'], s['lastOffset'])}"
                    f"  {s['batches']:,} batches  {s['records']:,} records"
                    f"  {s['bytes']:,} bytes"
                )
                if s["firstTimestamp"] is not None:
                    line += f"  {_time_range(s['firstTimestamp'], s['lastTimestamp'])}"
                if s["trailingBytes"]:
                    line += f"  ({s['trailingBytes']} trailing bytes)"
                if s["error"]:
                    line += "  (stopped at a corrupt batch)"
                out.line(line)


def cmd_info(args: argparse.Namespace) -> int:
    info = log_info(args.logdir)
    out = _Output()
    if args.json:
        out.line(json.dumps(info, indent=2, ensure_ascii=False))
    else:
        _print_info(info, out)
    out.flush()
    for error in info["errors"]:
        _err(f"{PROG}: {error}")
    return EXIT_DATA if info["errors"] else EXIT_OK


# --------------------------------------------------------------------------------------------
# verify


def _finding_text(item: dict) -> str:
    """One problem or note of :func:`kafkalog.verify` as one line."""
    text = " ".join(str(item.get("message") or item.get("kind") or "").split("\n"))
    path = item.get("path")
    if path and not text.startswith(str(path)):
        text = f"{path}: {text}"
    where = []
    if item.get("position") is not None:
        what = "batch at byte position" if str(path or "").endswith(".log") else "byte position"
        where.append(f"{what} {item['position']}")
    if item.get("offset") is not None:
        where.append(f"offset {item['offset']}")
    if where and "(" + ", ".join(where) + ")" not in text:
        text += " (" + ", ".join(where) + ")"
    return text


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} " + (word if n == 1 else plural or word + "s")


def cmd_verify(args: argparse.Namespace) -> int:
    result = kafkalog.verify(args.path)
    out = _Output()
    if args.json:
        out.line(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        for item in result.get("problems", []):
            out.line(f"problem: {_finding_text(item)}")
        if args.notes:
            for item in result.get("notes", []):
                out.line(f"note: {_finding_text(item)}")
        segments = result.get("segments", [])
        problems = len(result.get("problems", []))
        notes = len(result.get("notes", []))
        summary = (
            f"{args.path}: {_plural(len(segments), 'segment')}, "
            f"{_plural(sum(s.get('batches') or 0 for s in segments), 'batch', 'batches')}, "
            f"{_plural(sum(s.get('records') or 0 for s in segments), 'record')} checked: "
            f"{_plural(problems, 'problem')}, {_plural(notes, 'note')}"
        )
        if notes and not args.notes:
            summary += " (--notes to list them)"
        out.line(summary + (": OK" if result.get("ok") else ": FAILED"))
    out.flush()
    return EXIT_OK if result.get("ok") else EXIT_DATA


# --------------------------------------------------------------------------------------------
# compact and retain: Kafka's log cleanup (kafkalog.compact, kafkalog.retain)


def cmd_compact(args: argparse.Namespace) -> int:
    report = kafkalog.compact(
        args.src,
        args.dst,
        delete_retention_ms=args.delete_retention_ms,
        min_compaction_lag_ms=args.min_compaction_lag_ms,
        max_compaction_lag_ms=args.max_compaction_lag_ms,
        min_cleanable_ratio=args.min_cleanable_ratio,
        segment_bytes=args.segment_bytes,
        first_dirty_offset=args.first_dirty_offset,
        now=args.now,
        overwrite=args.overwrite,
        on_corrupt=args.on_corrupt,
    )
    out = _Output()
    if args.json:
        out.line(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    else:
        for item in report["skipped"]:
            out.line(f"skipped: {_finding_text(item)}")
        if report["cleaned"]:
            out.line(
                f"{args.dst}: cleaned offsets {report['log_start_offset']} to "
                f"{report['next_dirty_offset'] - 1} ({report['segments_cleaned']} segments): "
                f"{_plural(report['records_read'], 'record')} read, "
                f"{report['records_written']} kept, "
                f"{_human_bytes(report['bytes_read'])} -> "
                f"{_human_bytes(report['bytes_written'])}"
                + (
                    f"; {_plural(report['invalid_records'], 'record')} without a key removed"
                    if report["invalid_records"]
                    else ""
                )
            )
        else:
            out.line(f"{args.dst}: nothing to clean; copied {args.src}")
    out.flush()
    return EXIT_OK


def cmd_retain(args: argparse.Namespace) -> int:
    result = kafkalog.retain(
        args.path,
        retention_ms=args.retention_ms,
        retention_bytes=args.retention_bytes,
        log_start_offset=args.log_start_offset,
        now=args.now,
        dry_run=args.dry_run,
        write_checkpoint=args.write_checkpoint,
    )
    out = _Output()
    if args.json:
        out.line(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        verb = "would remove" if args.dry_run else "removed"
        for part in result:
            for r in part["removed"]:
                out.line(
                    f"{verb} {r['path']} ({_human_bytes(r['bytes'])}, {r['reason']}, "
                    f"largest timestamp {_iso_ms(r['largest_timestamp'])})"
                )
            out.line(
                f"{part['dir']}: {_plural(len(part['removed']), 'segment')} {verb}; "
                f"log start offset {part['log_start_offset_before']} -> "
                f"{part['log_start_offset']}"
                + ("; rolled an empty active segment" if part["rolled"] else "")
            )
    out.flush()
    return EXIT_OK


def _add_cleanup_commands(sub) -> None:
    k = sub.add_parser(
        "compact",
        help="compact a partition directory into a new one, as Kafka's log cleaner does",
        description="Compact the partition directory SRC into DST as one round of Kafka's log "
        "cleaner: the last record of each key, offsets kept, tombstones removed after "
        "their delete horizon, aborted transactions removed. SRC is only read; DST is "
        "written atomically.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    k.add_argument("src", metavar="SRC", help="partition directory to compact")
    k.add_argument("dst", metavar="DST", help="partition directory to write")
    k.add_argument("--delete-retention-ms", type=int, default=86_400_000)
    k.add_argument("--min-compaction-lag-ms", type=int, default=0)
    k.add_argument("--max-compaction-lag-ms", type=int, default=2**63 - 1)
    k.add_argument("--min-cleanable-ratio", type=float, default=None)
    k.add_argument("--segment-bytes", type=_positive_int, default=1 << 30)
    k.add_argument(
        "--first-dirty-offset",
        type=int,
        default=None,
        help="where the last cleaning stopped (cleaner-offset-checkpoint)",
    )
    k.add_argument("--now", type=int, default=None, help="the cleaner's clock, ms since epoch")
    k.add_argument("--overwrite", action="store_true", help="replace DST if it exists")
    k.add_argument("--on-corrupt", choices=("error", "skip"), default="error")
    k.add_argument("--json", action="store_true", help="print the report as JSON")
    k.set_defaults(func=cmd_compact)

    r = sub.add_parser(
        "retain",
        help="apply retention (time, size, log start offset) as the broker does",
        description="Apply Kafka's retention to each partition under PATH: segments below "
        "the log start offset, then past --retention-bytes, then past --retention-ms, "
        "oldest first. With --dry-run nothing is touched.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("path", metavar="PATH", help="log directory or partition directory")
    r.add_argument("--retention-ms", type=int, default=None)
    r.add_argument("--retention-bytes", type=int, default=None)
    r.add_argument("--log-start-offset", type=int, default=None)
    r.add_argument("--now", type=int, default=None, help="the broker's clock, ms since epoch")
    r.add_argument("--dry-run", action="store_true", help="report what would be removed")
    r.add_argument(
        "--write-checkpoint",
        action="store_true",
        help="write the new log start offset to log-start-offset-checkpoint",
    )
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.set_defaults(func=cmd_retain)


# --------------------------------------------------------------------------------------------
# argument parsing


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _column_list(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


DUMP_HELP = """\
Print Kafka log files as Apache Kafka's kafka-dump-log.sh (DumpLogSegments, Kafka 3.x) does,
line for line. Files are dispatched on their suffix: .log (and KRaft .checkpoint snapshots),
.index, .timeindex, .txnindex, .snapshot; others are ignored with a message on stderr.

Reports Kafka prints after all files go to stderr: non-consecutive offsets (deep iteration),
index entries that do not match the log, time index mismatches.

--format json prints one JSON object a line instead, each with "type" and "file":
  file             {kind: log|index|timeindex|txnindex|snapshot|unknown}   (for "Dumping")
  log_start        {baseOffset}     snapshot_id {endOffset, epoch}     bootstrap_snapshot
  batch            {position, magic, baseOffset, lastOffset, count, [v2: baseSequence,
                   lastSequence, producerId, producerEpoch, partitionLeaderEpoch,
                   isTransactional, isControl, deleteHorizonMs (null if unset)],
                   timestampType, maxTimestamp, size, compression, crc, isValid}
  record           {offset, batchPosition, timestampType, timestamp, keySize, valueSize,
                   [v2: sequence, headerKeys] [v0/v1: isValid, crc]
                   [control: controlType, controlTypeId, coordinatorEpoch (markers)]
                   [--print-data-log: key, payload (UTF-8 text as Kafka's StringDecoder
                   shows it, null when absent; with a decoder option, the decoded key and
                   payload: {name, version, data} objects, payload null for a tombstone)]};
                   --skip-record-metadata keeps only offset and key/payload
  trailing_bytes   {bytes}          (Kafka's "Found N invalid bytes at the end of ...")
  index_entry      {offset, position}      time_index_entry {timestamp, offset}
  txn_index_entry  {version, producerId, firstOffset, lastOffset, lastStableOffset}
  producer_snapshot_entry {producerId, producerEpoch, coordinatorEpoch,
                   currentTxnFirstOffset, lastTimestamp, firstSequence, lastSequence,
                   lastOffset, offsetDelta}  (null where Kafka prints nothing)
  empty            (an index with no entries)   sanity_check {passed}
Timestamps are milliseconds since the epoch, -1 for none, as Kafka prints them.

Internal topics (decoder options, each implying --print-data-log, as in Kafka):
--offsets-decoder (__consumer_offsets), --transaction-log-decoder (__transaction_state),
--cluster-metadata-decoder (KRaft __cluster_metadata and .checkpoint snapshots),
--remote-log-metadata-decoder (__remote_log_metadata): key and payload printed as Kafka's
decoders print them (JSON in Kafka's field names, <DELETE> for a tombstone).
"""

CONVERT_HELP = """\
Write the records under LOGDIR (a .log segment, a partition directory <topic>-<partition>,
or a log directory of partition directories) to OUT, streaming batch by batch.

Formats (--format, else taken from OUT's suffix, else parquet):
  parquet  Apache Parquet (.parquet)
  arrow    Arrow IPC file format (.arrow, .feather)
  jsonl    one JSON object a line (.jsonl, .ndjson; "-" writes to stdout); binary values
           (key, value, header values) are base64 (--binary hex for lower-case hex),
           timestamps are integers, milliseconds since the epoch (null for none)
Columns are those of kafkalog.read (Spark's Kafka source): key, value, topic, partition,
offset, timestamp, timestampType, headers; --batch-metadata adds Kafka's per-batch values.
OUT is written under a temporary name and renamed when complete.
A progress line is shown on stderr when it is a terminal.
"""

INFO_HELP = """\
Summarise a log directory, partition directory or segment from its batch headers (records
are not decoded): topics, partitions, segments, offset ranges, timestamp ranges, message
formats (magic), compressions, batch and record counts (records as the batch headers count
them, control records included), sizes, CRC mismatches and partial batches at segment ends.
--json prints the same as one JSON document.
Timestamps: from the earliest batch base timestamp (v2 CreateTime) or batch max timestamp,
to the latest batch max timestamp, in UTC.
"""


VERIFY_HELP = """\
Check a log directory, partition directory or segment with kafkalog.verify: every batch is
decoded (CRC and records), offsets must increase, torn tails are reported, and each .index,
.timeindex and .txnindex entry is checked against the log.
Prints one line "problem: <path>: <message> (batch at byte position N, offset O)" per problem
(what Kafka would reject or repair), "note: ..." per note with --notes, then a summary line
ending in OK or FAILED. Exit code 0 when there is no problem, 1 otherwise.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit code 2
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n(see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Read Apache Kafka's on-disk log: dump it as kafka-dump-log.sh does, "
        "convert it to Parquet/Arrow/JSON lines, summarise it.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {kafkalog.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    d = sub.add_parser(
        "dump",
        help="print segment and index files as kafka-dump-log.sh does",
        description=DUMP_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument(
        "--files",
        metavar="file1,file2,...",
        help="REQUIRED (or give the files as arguments): comma-separated data and index files",
    )
    d.add_argument("paths", nargs="*", metavar="FILE", help=argparse.SUPPRESS)
    d.add_argument(
        "--print-data-log",
        action="store_true",
        help="print each record's key and payload (as UTF-8); implies --deep-iteration",
    )
    d.add_argument("--deep-iteration", action="store_true", help="print records, not just batches")
    d.add_argument(
        "--verify-index-only",
        action="store_true",
        help="check .index/.timeindex entries against the log without printing them",
    )
    d.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="run the broker's index sanity check and print whether it passed",
    )
    d.add_argument(
        "--max-message-size",
        type=_positive_int,
        default=5 * 1024 * 1024,
        metavar="N",
        help="bytes of the log read at an index entry's position to verify it (default 5242880)",
    )
    d.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=JAVA_INT_MAX,
        metavar="N",
        help="only the batches that lie wholly within the first N bytes of each .log; also "
        "turns off the trailing-bytes message (default 2147483647)",
    )
    d.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="do not print each record's metadata",
    )
    d.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: kafka-dump-log's lines (default); json: one JSON object a line",
    )
    d.add_argument(
        "--visibility",
        choices=("all", "consumer"),
        default="all",
        help="all: every batch on disk, as kafka-dump-log prints (default); consumer: only "
        "what a consumer could fetch, within the log directory's high watermark and log start "
        "offset checkpoints",
    )
    _add_decoder_options(d)
    d.set_defaults(func=cmd_dump)
    _add_offsets_command(sub)

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
        choices=("read_uncommitted", "read_committed"),
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
    c.set_defaults(func=cmd_convert)

    i = sub.add_parser(
        "info",
        help="summarise a log directory from its batch headers",
        description=INFO_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    i.add_argument("logdir", metavar="LOGDIR", help="log directory, partition directory or segment")
    i.add_argument("--json", action="store_true", help="print one JSON document")
    i.set_defaults(func=cmd_info)

    if hasattr(kafkalog, "verify"):
        v = sub.add_parser(
            "verify",
            help="check segments and their indexes (exit code 1 if something is wrong)",
            description=VERIFY_HELP,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        v.add_argument("path", metavar="PATH", help="log directory, partition directory or segment")
        v.add_argument("--json", action="store_true", help="print kafkalog.verify's result as JSON")
        v.add_argument(
            "--notes",
            action="store_true",
            help="also list notes (not wrong, worth knowing: missing indexes, index entries "
            "of multi-batch appends)",
        )
        v.set_defaults(func=cmd_verify)
    _add_cleanup_commands(sub)
    return parser


# --------------------------------------------------------------------------------------------
# main


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = " ".join(str(message).split("\n"))
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    print(f"warning: {text}", file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush does
    not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


# ---- internal topics: dump decoders and the offsets command

# kafka-dump-log's decoder options, in the order it gives them priority.
_DECODERS = (
    ("offsets_decoder", "--offsets-decoder", "__consumer_offsets"),
    ("transaction_log_decoder", "--transaction-log-decoder", "__transaction_state"),
    ("cluster_metadata_decoder", "--cluster-metadata-decoder", "__cluster_metadata"),
    ("remote_log_metadata_decoder", "--remote-log-metadata-decoder", "__remote_log_metadata"),
)


def _add_decoder_options(parser: argparse.ArgumentParser) -> None:
    for dest, flag, topic in _DECODERS:
        parser.add_argument(
            flag,
            dest=dest,
            action="store_true",
            help=f"decode the records as {topic} records (implies --print-data-log)",
        )


def _internal_decoder(args: argparse.Namespace) -> str | None:
    for dest, _, topic in _DECODERS:
        if getattr(args, dest, False):
            return topic
    return None


def _decoded_record(topic: str, r: dict) -> dict:
    """``--format json`` with a decoder: the key and payload as decoded objects."""
    decoded = json.loads(_native.decode_internal_record(topic, r["key"], r["value"]))
    out = {"payload": decoded.get("value")}
    if "key" in decoded:
        out = {"key": decoded["key"], **out}
    return out


OFFSETS_HELP = """\
Print the committed offsets of consumer groups as kafka-consumer-groups --describe shows
them: GROUP, TOPIC, PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG, CONSUMER-ID, HOST,
CLIENT-ID, one block per group, rows in topic, partition order. The offsets and the groups'
members come from the __consumer_offsets partitions under LOGDIR; the log end offsets from the
same directory's data partitions ("-" where the partition is not there).
"""


def _add_offsets_command(sub) -> None:
    o = sub.add_parser(
        "offsets",
        help="consumer groups' committed offsets and lag, as kafka-consumer-groups --describe",
        description=OFFSETS_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    o.add_argument("logdir", metavar="LOGDIR", help="log directory of a backup")
    o.add_argument("--group", help="only this group")
    o.add_argument("--json", action="store_true", help="one JSON object a line")
    o.set_defaults(func=cmd_offsets)


def cmd_offsets(args: argparse.Namespace) -> int:
    offsets = kafkalog.consumer_offsets(args.logdir, group=args.group).to_pylist()
    groups = {g["group"]: g for g in kafkalog.consumer_groups(args.logdir).to_pylist()}
    names = sorted(
        {r["group"] for r in offsets} | ({args.group} & set(groups) if args.group else set(groups))
    )
    if args.group is not None and not names:
        _err(f"{PROG}: Error: The consumer group '{args.group}' does not exist.")
        return EXIT_DATA
    for name in names:
        group = groups.get(name)
        # Which member holds each partition (classic groups' assignments).
        owner: dict[tuple[str, int], dict] = {}
        for member in (group or {}).get("members") or []:
            for tp in member["assignment"] or []:
                topic, _, partition = tp.rpartition("-")
                owner[(topic, int(partition))] = member
        rows = {(r["topic"], r["partition"]): r for r in offsets if r["group"] == name}
        cells = []
        for topic, partition in sorted(set(rows) | set(owner)):
            r, m = rows.get((topic, partition)), owner.get((topic, partition))
            cells.append(
                [
                    name,
                    topic,
                    str(partition),
                    _or_dash(r and r["offset"]),
                    _or_dash(r and r["logEndOffset"]),
                    _or_dash(r and r["lag"]),
                    _or_dash(m and m["memberId"]),
                    _or_dash(m and m["clientHost"]),
                    _or_dash(m and m["clientId"]),
                ]
            )
        if args.json:
            keys = ["group", "topic", "partition", "currentOffset", "logEndOffset", "lag"]
            keys += ["consumerId", "host", "clientId"]
            for row in cells:
                print(json.dumps(dict(zip(keys, row, strict=True))))
            continue
        state = group["state"] if group else "Empty"
        if state == "Empty":
            print(f"\nConsumer group '{name}' has no active members.", file=sys.stderr)
        # kafka-consumer-groups --describe's layout: a blank line, then left-aligned columns
        # at least 15 wide (PARTITION 10), the last one unpadded.
        widths = [15, 15, 10, 15, 15, 15, 15, 15]
        for i in (0, 1, 6, 7):
            widths[i] = max([widths[i]] + [len(c[i]) for c in cells])
        header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
        header += ["CONSUMER-ID", "HOST", "CLIENT-ID"]
        print()
        for line in [header, *cells]:
            padded = [c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)]
            print(" ".join([*padded, line[-1]]))
        print()
    return EXIT_OK


def _or_dash(value) -> str:
    return "-" if value is None else str(value)


def main(argv: list[str] | None = None) -> int:
    """Run ``kafkalog`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("always", KafkaLogWarning)
        warnings.showwarning = _show_warning
        try:
            return args.func(args)
        except CliError as e:
            _err(f"{PROG}: {e}")
            return e.code
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_OK
        except KafkaLogIOError as e:
            _err(f"{PROG}: {_error_text(e)}")
            return EXIT_IO
        except InvalidArgumentError as e:
            _err(f"{PROG}: {_error_text(e)}")
            return EXIT_USAGE
        except KafkaLogError as e:
            _err(f"{PROG}: {_error_text(e)}")
            return EXIT_DATA
        except OSError as e:
            _err(f"{PROG}: {_error_text(e)}")
            return EXIT_IO
        except KeyboardInterrupt:
            _err(f"{PROG}: interrupted")
            return EXIT_INTERRUPTED
        except Exception as e:
            if os.environ.get("KAFKALOG_DEBUG"):
                raise
            _err(
                f"{PROG}: internal error: {type(e).__name__}: {_error_text(e)} "
                "(set KAFKALOG_DEBUG=1 for the traceback)"
            )
            return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
