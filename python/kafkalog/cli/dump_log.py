"""``kafkalog dump`` of ``.log`` files (and KRaft ``.checkpoint`` snapshots): each batch, and
with ``--deep-iteration`` each record, as ``kafka-dump-log.sh`` prints them."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog import _native, reading
from kafkalog.cli.dump_state import DumpState, _base_offset, _size
from kafkalog.cli.exits import CliError, _stop_text
from kafkalog.cli.text import (
    TIMESTAMP_TYPES,
    _java_abs,
    _java_bool,
    _json_values,
    _ms_column,
    _optional_long,
    _utf8,
)
from kafkalog.errors import KafkaLogError, KafkaLogWarning, StoppedAtCorruptionWarning

JAVA_INT_MAX = 2**31 - 1


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


class _Typed:
    """Keys and values of one segment decoded by the core (``--key-decoder``,
    ``--value-decoder``), looked up by offset as the record printer goes through the file in
    order: each as printed (text as it is, typed values as JSON) and as JSON."""

    def __init__(self, reader: pa.RecordBatchReader) -> None:
        self._rows = (row for chunk in reader for row in _shown_rows(chunk))
        self._row: tuple[int, _Shown, _Shown] | None = None

    def get(self, offset: int) -> tuple[_Shown, _Shown]:
        while self._row is None or self._row[0] < offset:
            self._row = next(self._rows, None)
            if self._row is None:
                return _NOTHING, _NOTHING
        if self._row[0] != offset:
            return _NOTHING, _NOTHING
        return self._row[1], self._row[2]


#: A key or value as printed, and as JSON (None, None: absent).
_Shown = tuple[str | None, str | None]
_NOTHING: _Shown = (None, None)


def _shown(column: pa.Array) -> list[_Shown]:
    """Each value of a key or value column as dump prints it (bytes as UTF-8 text, as Kafka's
    StringDecoder; text as it is; typed values as JSON) and as JSON."""
    t = column.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        texts = [None if v is None else _utf8(v) for v in column.to_pylist()]
        return [(x, None if x is None else json.dumps(x, ensure_ascii=False)) for x in texts]
    js = _json_values(column)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return list(zip(column.to_pylist(), js, strict=True))
    return [(x, x) for x in js]


def _shown_rows(chunk: pa.RecordBatch) -> Iterator[tuple[int, _Shown, _Shown]]:
    return zip(
        chunk.column("offset").to_pylist(),
        _shown(chunk.column("key")),
        _shown(chunk.column("value")),
        strict=True,
    )


def _decoded_record(topic: str, r: dict[str, Any]) -> dict[str, Any]:
    """``--format json`` with a decoder: the key and payload as decoded objects."""
    decoded = json.loads(_native.decode_internal_record(topic, r["key"], r["value"]))
    out = {"payload": decoded.get("value")}
    if "key" in decoded:
        out = {"key": decoded["key"], **out}
    return out


class LogDump(DumpState):
    """Dumping ``.log`` files."""

    #: The current file's decoded keys and values (``--key-decoder``/``--value-decoder``).
    typed: _Typed | None = None

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
            snapshot = _native.snapshot_id(name)
            if snapshot is None:
                raise CliError(
                    f"{path}: not a KRaft snapshot name (<20-digit offset>-<10-digit "
                    "epoch>.checkpoint)"
                )
            end_offset, epoch = snapshot
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
            self.typed = None
            if self.deep:
                byte_range = None
                if limit < file_size:
                    end = self._boundary(path, limit)
                    byte_range = (0, end) if end > 0 else None
                if limit >= file_size or byte_range is not None:
                    reader = reading.read(
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
                    if self.values:
                        self.typed = _Typed(
                            reading.read(
                                path,
                                columns=["offset", "key", "value"],
                                check_crc=False,
                                on_corrupt="stop",
                                byte_range=byte_range,
                                visibility=self.visibility,
                                **self.storage,
                                **self.values,
                            )
                        )
            batches = reading.read_batches(
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
            for chunk in reading.read_batches(
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
                elif self.typed is not None:
                    # Decoded keys and values nested as JSON, not as strings of JSON.
                    (_, key), (_, payload) = self.typed.get(r["offset"])
                    self.out.json(obj, raw={"key": key, "payload": payload})
                    return
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
            elif self.typed is not None:
                (key, _), (payload, _) = self.typed.get(r["offset"])
            else:
                key = None if r["key"] is None else _utf8(r["key"])
                payload = None if r["value"] is None else _utf8(r["value"])
            if key is not None:
                parts.append(f"{prefix}key: {key}")
            if payload is not None:
                parts.append(f" payload: {payload}")
        self.out.line("".join(parts))
