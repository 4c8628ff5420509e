"""``kafkalog dump``: Apache Kafka's ``kafka-dump-log.sh`` (``DumpLogSegments``, Kafka 3.x),
line for line, or as JSON lines. Formats what the library returns; parses no Kafka bytes."""

from __future__ import annotations

import argparse
import json
import os
import re
import warnings
from bisect import bisect_right
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

import kafkalog
from kafkalog import _native
from kafkalog.cli.arguments import _positive_int, add_storage_arguments, storage
from kafkalog.cli.exits import (
    EXIT_CODES_HELP,
    EXIT_DATA,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    _error_text,
    _stop_text,
)
from kafkalog.cli.text import (
    TIMESTAMP_TYPES,
    _err,
    _java_abs,
    _java_bool,
    _java_file,
    _ms_column,
    _optional_long,
    _Output,
    _utf8,
)
from kafkalog.errors import (
    KafkaLogError,
    KafkaLogIOError,
    KafkaLogWarning,
    StoppedAtCorruptionWarning,
)
from kafkalog.types import Visibility

JAVA_INT_MAX = 2**31 - 1


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
        self._cols: dict[str, list[Any]] = {}
        self._key: pa.Array | None = None
        self._value: pa.Array | None = None

    def _load(self) -> bool:
        while self._i >= self._n:
            chunk = next(self._it, None)
            if chunk is None:
                return False
            cols: dict[str, list[Any]] = {}
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
            self._key = chunk.column("key")
            self._value = chunk.column("value")
            self._cols = cols
            self._i = 0
            self._n = chunk.num_rows
        return True

    def take(self, position: int) -> list[dict[str, Any]]:
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
                # control records are parsed by the core (_native.control_record)
                assert self._key is not None and self._value is not None
                row["key"] = self._key[i].as_py()
                row["value"] = self._value[i].as_py()
            rows.append(row)
        return rows


class _LogBatches:
    """The batches of a ``.log`` file (position, size, last offset), read once per file, to
    verify index entries against."""

    def __init__(self, log_path: str, store: dict[str, Any]) -> None:
        self.path = log_path
        self.storage = store
        if not _is_uri(log_path) and not os.path.exists(log_path):
            raise FileNotFoundError(2, "No such file or directory", log_path)
        positions: list[int] = []
        sizes: list[int] = []
        last_offsets: list[int] = []
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            reader = kafkalog.read_batches(
                log_path, check_crc=False, on_corrupt="stop", visibility="all", **store
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
        data = _native.read_range(
            self.path, position, max_size, self.storage.get("storage_options")
        )
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
        self.visibility: Visibility = (
            "consumer" if getattr(args, "visibility", "all") == "consumer" else "all"
        )
        self.storage = storage(args)
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

        file_size = _size(path, self.storage)
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
                        **self.storage,
                    )
                    records = _Records(reader, self.print_data)
            batches = kafkalog.read_batches(
                path, on_corrupt="stop", visibility=self.visibility, **self.storage
            )
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
                path, check_crc=False, on_corrupt="stop", visibility="all", **self.storage
            ):
                ends = pc.add(chunk.column("batchPosition"), chunk.column("batchSize"))
                inside = pc.filter(ends, pc.less_equal(ends, limit))
                if len(inside):
                    end = max(end, pc.max(inside).as_py())
                if len(inside) < len(ends):
                    break
        return end

    def _raise_if_stopped(
        self, caught: list[warnings.WarningMessage], position: int | None, limit: int, exact: bool
    ) -> None:
        for w in caught:
            if not issubclass(w.category, StoppedAtCorruptionWarning):
                continue
            assert isinstance(w.message, StoppedAtCorruptionWarning)
            at = w.message.position
            if exact and at != position:
                continue
            if not exact and at is not None and at >= limit:
                continue
            self.out.flush()
            raise CliError(_stop_text(w.message))

    def _batch_line(self, shown: str, b: dict[str, Any], position: int) -> None:
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

    def _control(self, record: dict[str, Any]) -> tuple[str, int | None]:
        """(type name, coordinator epoch for transaction markers) of a control record, as the
        core parses it."""
        try:
            control = _native.control_record(record["key"], record["value"])
        except KafkaLogError as e:
            raise CliError(f"{e} (control record at offset {record['offset']})") from None
        return control.type, control.coordinator_epoch

    def _record_line(self, shown: str, batch: dict[str, Any], r: dict[str, Any]) -> None:
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
                    # KRaft's control records as Kafka's tool prints them, decoded in the core.
                    text = _native.dump_control_record(r["controlType"], r["value"])
                    parts.append(" " + (text or f"controlType: {name}({r['controlType']})"))
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
        log_path = _sibling(index_path, name.split(".")[0] + ".log")
        if log_path not in self._logs:
            self._logs[log_path] = _LogBatches(log_path, self.storage)
        return self._logs[log_path]

    def dump_index(self, path: str, shown: str) -> None:
        base = _base_offset(path)
        size = _size(path, self.storage)
        if size < 8:
            if self.json:
                self.out.json({"type": "empty", "file": shown})
            else:
                self.out.line(f"{shown} is empty.")
            return
        table = kafkalog.read_index(path, **self.storage)
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

    def _sanity_index(self, path: str, shown: str, base: int, size: int, table: pa.Table) -> None:
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
        size = _size(path, self.storage)
        table = kafkalog.read_index(path, **self.storage) if size >= 12 else None
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
        index_path = _sibling(path, os.path.basename(path).split(".")[0] + ".index")
        idx_offsets: list[int] = []
        idx_positions: list[int] = []
        try:
            index_size = _size(index_path, self.storage)
        except FileNotFoundError:
            index_size = 0
        if index_size >= 8:
            idx = kafkalog.read_index(index_path, **self.storage)
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
            **log.storage,
        ).read_all()
        ms = pc.fill_null(_ms_column(table.column("timestamp")), -1)
        best = pc.max(ms).as_py() if len(ms) else None
        return max(-1, best) if best is not None else -1

    # ---- .txnindex and .snapshot

    def dump_txn_index(self, path: str, shown: str) -> None:
        table = kafkalog.read_index(path, **self.storage)
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
            table = kafkalog.read_index(path, **self.storage)
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


def _size(path: str, store: dict[str, Any]) -> int:
    """A file's size, local or in an object store."""
    return _native.file_size(path, store.get("storage_options"))


def _is_uri(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _sibling(path: str, name: str) -> str:
    """The file ``name`` in the directory (or object-store prefix) of ``path``."""
    if _is_uri(path):
        return f"{path.rsplit('/', 1)[0]}/{name}"
    return os.path.join(os.path.dirname(os.path.abspath(path)), name)


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
--remote-log-metadata-decoder (__remote_log_metadata), --share-group-state-decoder
(__share_group_state): key and payload printed as Kafka's
decoders print them (JSON in Kafka's field names, <DELETE> for a tombstone).
"""


_DECODERS = (
    ("offsets_decoder", "--offsets-decoder", "__consumer_offsets"),
    ("transaction_log_decoder", "--transaction-log-decoder", "__transaction_state"),
    ("cluster_metadata_decoder", "--cluster-metadata-decoder", "__cluster_metadata"),
    ("remote_log_metadata_decoder", "--remote-log-metadata-decoder", "__remote_log_metadata"),
    ("share_group_state_decoder", "--share-group-state-decoder", "__share_group_state"),
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


def _decoded_record(topic: str, r: dict[str, Any]) -> dict[str, Any]:
    """``--format json`` with a decoder: the key and payload as decoded objects."""
    decoded = json.loads(_native.decode_internal_record(topic, r["key"], r["value"]))
    out = {"payload": decoded.get("value")}
    if "key" in decoded:
        out = {"key": decoded["key"], **out}
    return out


def register(sub: Any) -> None:
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
    add_storage_arguments(d)
    d.set_defaults(func=cmd_dump)
