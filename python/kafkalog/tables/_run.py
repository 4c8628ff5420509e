"""One run of a table write, whatever the format: the ranges the core plans, the records
streamed a batch at a time into the table's writer (a :class:`Sink`), and commits that each
record, in the same atomic table commit as the rows, the next offset of every topic-partition
they cover. A run killed at any point leaves the table at its last commit; the next run starts
from the offsets that commit recorded, so every record is in the table once."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, TypedDict

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog.errors import KafkaLogIOError
from kafkalog.tables._rows import ValueLayout, groups, shape
from kafkalog.tables._source import PartitionRange, Source, TopicPartition, by_topic

Mode = Literal["append", "upsert"]

#: The snapshot property (Iceberg) and commit info key (Delta) holding the next offset of
#: every topic-partition the table holds: ``{"orders": {"0": 1234, "1": 99}}``.
OFFSETS_KEY = "kafkalog.offsets"
#: Delta: the application id of a topic-partition's transactions (``txn`` actions), whose
#: version is the partition's next offset.
APP_ID_PREFIX = "kafkalog:"

#: A commit's data files, by default: about this many bytes of Arrow data a commit (a run
#: longer than that commits several times, each commit recording where it stopped).
DEFAULT_COMMIT_BYTES = 2 << 30


class TableCommitError(KafkaLogIOError):
    """The table's library or catalog refused a commit, or could not be reached: nothing of
    the commit is in the table, which stays at its last commit; a new run continues from
    there."""


class PartitionSummary(TypedDict):
    topic: str
    partition: int
    #: The offsets this run covered: ``[start, end)``; ``end`` is the next offset recorded.
    start: int
    end: int


class TableSummary(TypedDict):
    """What a table write committed."""

    #: The table (a Delta table's URI, an Iceberg table's identifier).
    table: str
    format: Literal["delta", "iceberg"]
    mode: Mode
    #: Records read from the log and written (upsert: before keeping the latest per key).
    records: int
    #: Bytes of data files written.
    bytes: int
    files: int
    #: Each commit: Delta table versions, Iceberg snapshot ids.
    commits: list[int]
    #: The offsets each topic-partition advanced by in this run.
    partitions: list[PartitionSummary]
    seconds: float


class Commit(TypedDict):
    files: int
    bytes: int
    version: int


class Sink(Protocol):
    """A table's writer, as a run drives it."""

    #: The table, for messages and the summary.
    name: str

    def committed(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The next offset of each of ``keys`` the table's commits recorded (those it has)."""

    def open(self, schema: pa.Schema, what: str) -> None:
        """Rows of ``schema`` (shaped) follow, of ``what`` (a topic): grow the table's schema
        for them, or fail before anything is written."""

    def write(self, rows: pa.Table) -> None: ...

    def pending_bytes(self) -> int:
        """Bytes of rows written since the last commit."""

    def exists(self) -> bool:
        """Whether the table exists."""

    def commit(self, changed: Mapping[TopicPartition, int]) -> Commit:
        """Makes the rows written since the last commit part of the table, with the next
        offsets of ``changed`` (the partitions this commit advances) in the same atomic
        commit. Fails with a :class:`ConcurrentWriteError` if another writer advanced one of
        them since :meth:`committed`."""

    def abort(self) -> None:
        """Forget the rows written since the last commit (their files are never referenced)."""


def offsets_json(state: Mapping[TopicPartition, int]) -> str:
    """``state`` as the ``kafkalog.offsets`` JSON: ``{topic: {partition: next offset}}``."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(state.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return json.dumps(out, separators=(",", ":"))


def parse_offsets(text: str | None) -> dict[TopicPartition, int]:
    if not text:
        return {}
    data = json.loads(text)
    return {(t, int(p)): int(o) for t, parts in data.items() for p, o in parts.items()}


class _Progress:
    """A progress line on stderr: records, data written, rate, commits."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled = enabled
        self.total = total
        self.start = time.monotonic()
        self.last = 0.0

    def show(self, records: int, commits: int, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and now - self.last < 0.5:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-6)
        line = (
            f"{records:,} of {self.total:,} records  {records / elapsed:,.0f} records/s  "
            f"{commits} commit{'s' if commits != 1 else ''}"
        )
        if final:
            line += f"  done in {elapsed:.1f} s"
        sys.stderr.write("\r" + line + "\x1b[K" + ("\n" if final else ""))
        sys.stderr.flush()


def run(
    source: Source,
    sink: Sink,
    *,
    fmt: Literal["delta", "iceberg"],
    mode: Mode,
    layout: ValueLayout,
    commit_bytes: int = DEFAULT_COMMIT_BYTES,
    progress: bool = False,
) -> TableSummary:
    """Write what ``source`` holds past the table's recorded offsets into ``sink``."""
    started = time.monotonic()
    ranges = source.ranges(sink.committed)
    summary = TableSummary(
        table=sink.name,
        format=fmt,
        mode=mode,
        records=0,
        bytes=0,
        files=0,
        commits=[],
        partitions=[],
        seconds=0.0,
    )
    bar = _Progress(progress, sum(r.end - r.start for r in ranges))
    changed: dict[TopicPartition, int] = {}
    wrote = False

    def commit() -> None:
        done = sink.commit(dict(changed))
        summary["files"] += done["files"]
        summary["bytes"] += done["bytes"]
        summary["commits"].append(done["version"])
        changed.clear()

    try:
        for group in by_topic(ranges):
            reader = source.read(group)
            topic = group[0].topic
            opened = False
            for batch in reader:
                if batch.num_rows == 0:
                    continue
                rows = shape(batch, layout, tombstones=mode == "upsert")
                if not opened:
                    sink.open(rows.schema, f"topic {topic}")
                    opened = wrote = True
                sink.write(rows)
                summary["records"] += batch.num_rows
                _advance(changed, batch)
                bar.show(summary["records"], len(summary["commits"]))
                if sink.pending_bytes() >= commit_bytes:
                    commit()
            # The whole range of each partition was read: its next offset is the range's end
            # (past control records and aborted transactions at its tail).
            changed.update({(r.topic, r.partition): r.end for r in group})
        # Offsets alone (ranges holding only control records or aborted transactions) are
        # committed to a table that has rows; a table never written to is not created for
        # them (the next run reads those ranges again, and finds nothing again).
        if (changed and (wrote or sink.exists())) or sink.pending_bytes():
            commit()
    except BaseException:
        sink.abort()
        raise
    bar.show(summary["records"], len(summary["commits"]), final=True)
    summary["partitions"] = [_partition(r) for r in ranges]
    summary["seconds"] = round(time.monotonic() - started, 3)
    return summary


def _advance(changed: dict[TopicPartition, int], batch: pa.RecordBatch) -> None:
    """Each partition of ``batch`` read up to its last offset: the next offset to read is
    that plus one (records of a partition come in offset order)."""
    topics = batch.column("topic")
    partitions = batch.column("partition")
    offsets = batch.column("offset")
    first = (topics[0].as_py(), partitions[0].as_py())
    last = (topics[-1].as_py(), partitions[-1].as_py())
    if first == last:
        changed[first] = max(changed.get(first, 0), offsets[-1].as_py() + 1)
        return
    for (topic, partition), mask in groups([topics, partitions]):
        last = pc.max(offsets if mask is None else pc.filter(offsets, mask)).as_py()
        key = (str(topic), int(partition))  # type: ignore[call-overload]
        changed[key] = max(changed.get(key, 0), last + 1)


def _partition(r: PartitionRange) -> PartitionSummary:
    return PartitionSummary(topic=r.topic, partition=r.partition, start=r.start, end=r.end)


def latest_per_key(rows: pa.Table) -> tuple[pa.Table, int]:
    """An upsert's rows reduced to the last record of each key in each topic-partition (the
    highest offset: what Kafka's log cleaner keeps), keyless records left out as the cleaner
    removes them; and how many were keyless. Records of a partition arrive in offset order,
    so the last row of a key is its highest offset."""
    keyed = rows.filter(pc.is_valid(rows.column("key")))
    keyless = len(rows) - len(keyed)
    key_type = keyed.schema.field("key").type
    if pa.types.is_struct(key_type) or pa.types.is_list(key_type) or pa.types.is_map(key_type):
        from kafkalog.tables._rows import TableSchemaError

        raise TableSchemaError(
            f"mode='upsert' matches rows by key, and a key of type {key_type} cannot be "
            "compared: read keys as bytes or strings (key_format='binary' or 'string')"
        )
    if len(keyed) == 0:
        return keyed, keyless
    names = ["topic", "partition", "key"]
    indexed = keyed.select(names).append_column("__row", pa.array(range(len(keyed)), pa.int64()))
    order = pc.sort_indices(indexed, sort_keys=[(n, "ascending") for n in [*names, "__row"]])
    s = indexed.take(order)
    # The last row of each run of equal (topic, partition, key) in that order.
    differs = None
    for n in names:
        col = s.column(n).combine_chunks()
        d = pc.not_equal(col.slice(0, len(s) - 1), col.slice(1))
        differs = d if differs is None else pc.or_(differs, d)
    ends = pc.fill_null(differs, True) if differs is not None else pa.array([], pa.bool_())
    last = pa.concat_arrays([ends, pa.array([True])])
    rows_kept = pc.filter(s.column("__row"), last)
    return keyed.take(pc.take(rows_kept, pc.sort_indices(rows_kept))), keyless


def describe(summary: Mapping[str, Any]) -> str:
    """The summary as the lines ``kafkalog convert`` prints."""
    lines = [
        f"{summary['table']} ({summary['format']}, {summary['mode']}): "
        f"{summary['records']:,} records, {summary['files']} files, "
        f"{summary['bytes']:,} bytes, {len(summary['commits'])} commit(s) "
        f"{summary['commits']}, {summary['seconds']:.1f} s"
    ]
    if not summary["partitions"]:
        lines.append("  up to date: nothing past the offsets the table recorded")
    for p in summary["partitions"]:
        lines.append(f"  {p['topic']}-{p['partition']}: offsets {p['start']} to {p['end']}")
    return "\n".join(lines)
