"""``kafkalog dump`` of the files beside a segment: ``.index`` and ``.timeindex`` entries
(checked against the log with ``--verify-index-only``, or Kafka's sanity check with
``--index-sanity-check``), ``.txnindex`` entries and producer ``.snapshot`` files, as
``kafka-dump-log.sh`` prints them."""

from __future__ import annotations

import os

import pyarrow.compute as pc

from kafkalog import _native, reading
from kafkalog._storage import is_remote
from kafkalog.cli.dump_state import DumpState, _base_offset, _LogBatches, _sibling, _size
from kafkalog.cli.exits import EXIT_DATA, PROG, CliError, _error_text
from kafkalog.cli.text import _err, _java_abs, _ms_column, _optional_long
from kafkalog.errors import KafkaLogError, KafkaLogIOError


class IndexDump(DumpState):
    """Dumping ``.index``, ``.timeindex``, ``.txnindex`` and ``.snapshot`` files."""

    # ---- .index

    def _log_for(self, index_path: str) -> _LogBatches:
        name = os.path.basename(index_path)
        log_path = _sibling(index_path, name.split(".")[0] + ".log")
        if log_path not in self._logs:
            self._logs[log_path] = _LogBatches(log_path, self.storage)
        return self._logs[log_path]

    def dump_index(self, path: str, shown: str) -> None:
        _base_offset(path)  # a name without a base offset fails here, as in Kafka
        size = _size(path, self.storage)
        if size < 8:
            if self.json:
                self.out.json({"type": "empty", "file": shown})
            else:
                self.out.line(f"{shown} is empty.")
            return
        if self.sanity_only:
            self._sanity_check(path, shown)
            return
        table = reading.read_index(path, **self.storage)
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

    def _sanity_check(self, path: str, shown: str) -> None:
        """Kafka's sanity check of an offset or time index, as the core runs it."""
        target = path if is_remote(path) else os.path.abspath(path)
        problem = _native.index_sanity_check(target, self.storage.get("storage_options"))
        if problem is not None:
            raise CliError(problem)
        self._passed(shown)

    def _passed(self, shown: str) -> None:
        if self.json:
            self.out.json({"type": "sanity_check", "file": shown, "passed": True})
        else:
            self.out.line(f"{shown} passed sanity check.")

    # ---- .timeindex

    def dump_time_index(self, path: str, shown: str) -> None:
        _base_offset(path)  # a name without a base offset fails here, as in Kafka
        size = _size(path, self.storage)
        if self.sanity_only:
            self._sanity_check(path, shown)
            return
        table = reading.read_index(path, **self.storage) if size >= 12 else None
        if table is None or table.num_rows == 0:
            return
        log = self._log_for(path)
        index_path = _sibling(path, os.path.basename(path).split(".")[0] + ".index")
        offsets = table.column("offset").to_pylist()
        # Where Kafka's OffsetIndex.lookup starts each search, as the core looks it up.
        starts = _native.index_lookup(index_path, offsets, self.storage.get("storage_options"))
        abs_path = _java_abs(path)
        prev = -1
        for ts, offset, start in zip(
            table.column("timestamp").to_pylist(), offsets, starts, strict=True
        ):
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
        table = reading.read(
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
        table = reading.read_index(path, **self.storage)
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
            table = reading.read_index(path, **self.storage)
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
