"""Delta Lake tables through ``deltalake`` (delta-rs).

Data files are Parquet written a batch at a time (``_files.py``); each commit is one Delta
log entry (``create_write_transaction``; a merge for ``mode="upsert"``) that adds them and,
in the same atomic entry, one application transaction (``txn`` action) per topic-partition it
advances: ``appId`` ``kafkalog:<topic>-<partition>``, ``version`` the partition's next offset
(the Delta protocol's "Set Transaction": what an application records to write idempotently).
The commit info carries every partition's next offset as ``kafkalog.offsets`` for people.
delta-rs refuses a commit whose application transactions another commit set since the table
version this one read (a concurrent writer); kafkalog also checks them again just before.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from kafkalog.errors import ConcurrentWriteError, InvalidArgumentError
from kafkalog.tables._files import DataFile, PartitionedFiles
from kafkalog.tables._lazy import require
from kafkalog.tables._rows import (
    DAY_COLUMN,
    TOMBSTONE,
    add_day,
    cast,
    merge,
    table_schema,
)
from kafkalog.tables._run import (
    APP_ID_PREFIX,
    OFFSETS_KEY,
    Commit,
    Mode,
    TableCommitError,
    latest_per_key,
    offsets_json,
)
from kafkalog.tables._source import TopicPartition

#: Partition columns of ``partition_by``'s names.
_COLUMNS = {"topic": "topic", "partition": "partition", "day": DAY_COLUMN}


def table_uri(table: str) -> str:
    """A ``delta://`` destination's table location: ``delta:///lake/t`` is ``/lake/t``,
    ``delta://s3://b/t`` is ``s3://b/t``; anything else is taken as the location."""
    if table.startswith("delta://"):
        table = table[len("delta://") :]
    if not table:
        raise InvalidArgumentError("delta://: no table location given")
    return table


def app_id(key: TopicPartition) -> str:
    return f"{APP_ID_PREFIX}{key[0]}-{key[1]}"


def _path_value(v: Any) -> str:
    if v is None:
        return "__HIVE_DEFAULT_PARTITION__"
    if isinstance(v, datetime.date):
        return v.isoformat()
    return str(v)


class DeltaSink:
    """A Delta table as a run writes it."""

    def __init__(
        self,
        table: str,
        *,
        mode: Mode,
        partition_by: Sequence[str],
        storage_options: Mapping[str, str] | None,
        target_file_size: int,
    ) -> None:
        self.deltalake = require("deltalake", "deltalake")
        self.uri = table_uri(table)
        self.name = self.uri
        self.mode = mode
        self.partition_by = [_COLUMNS[p] for p in partition_by]
        self.storage_options = dict(storage_options) if storage_options else None
        self.target_file_size = target_file_size
        self.expected: dict[TopicPartition, int | None] = {}
        self.schema: pa.Schema | None = None  # the table's, in kafkalog's types
        self.files: PartitionedFiles | None = None
        self.upserts: list[pa.Table] = []
        self.upsert_bytes = 0
        self.pending_files: list[DataFile] = []
        self.commit_id = uuid.uuid4().hex

    # -- the table ---------------------------------------------------------------------------

    def _load(self) -> Any:
        from deltalake.exceptions import TableNotFoundError

        try:
            return self.deltalake.DeltaTable(self.uri, storage_options=self.storage_options)
        except TableNotFoundError:
            return None

    def committed(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        dt = self._load()
        out: dict[TopicPartition, int] = {}
        for key in keys:
            version = None if dt is None else dt.transaction_version(app_id(key))
            self.expected[key] = version
            if version is not None:
                out[key] = int(version)
        if dt is not None:
            self.schema = table_schema(pa.schema(dt.schema().to_arrow()), "delta")
            # An existing table keeps its own partitioning.
            self.partition_by = list(dt.metadata().partition_columns)
        return out

    def open(self, records: pa.Schema, what: str) -> None:
        rows = self._rows_schema(records)
        if self.schema is None:
            dt = self._load()
            if dt is None:
                self.deltalake.DeltaTable.create(
                    self.uri,
                    schema=rows,
                    partition_by=self.partition_by or None,
                    storage_options=self.storage_options,
                    mode="ignore",
                )
                dt = self._load()
            self.schema = table_schema(pa.schema(dt.schema().to_arrow()), "delta")
        merged = merge(self.schema, rows, f"{self.name}: {what}")
        if merged != self.schema:
            self._finish_files()  # rows of the old schema go into their files first
            self.deltalake.write_deltalake(
                self.uri,
                merged.empty_table(),
                mode="append",
                schema_mode="merge",
                partition_by=self.partition_by or None,
                storage_options=self.storage_options,
            )
            self.schema = merged
        if self.files is None and self.mode == "append":
            self.files = self._new_files()

    def _rows_schema(self, records: pa.Schema) -> pa.Schema:
        schema = table_schema(records, "delta")
        schema = pa.schema([f for f in schema if f.name != TOMBSTONE])
        if DAY_COLUMN in self.partition_by and DAY_COLUMN not in schema.names:
            schema = schema.append(pa.field(DAY_COLUMN, pa.date32()))
        return schema

    def _new_files(self) -> PartitionedFiles:
        return PartitionedFiles(
            self.uri,
            self.partition_by,
            storage_options=self.storage_options,
            target_file_size=self.target_file_size,
            path_value=_path_value,
        )

    def _finish_files(self) -> None:
        if self.files is not None and self.files.open:
            self.pending_files += self.files.take()

    # -- rows --------------------------------------------------------------------------------

    def write(self, rows: pa.Table) -> None:
        assert self.schema is not None
        if DAY_COLUMN in self.partition_by:
            rows = add_day(rows)
        if self.mode == "upsert":
            dead = rows.column(TOMBSTONE)
            rows = cast(rows.drop_columns([TOMBSTONE]), self.schema).append_column(TOMBSTONE, dead)
            self.upserts.append(rows)
            self.upsert_bytes += rows.nbytes
            return
        assert self.files is not None
        self.files.write(cast(rows, self.schema))

    def exists(self) -> bool:
        return self.schema is not None or self._load() is not None

    def pending_bytes(self) -> int:
        if self.mode == "upsert":
            return self.upsert_bytes
        return self.files.written if self.files is not None else 0

    # -- commits -----------------------------------------------------------------------------

    def _check(self, dt: Any, changed: Mapping[TopicPartition, int]) -> None:
        for key in changed:
            now = dt.transaction_version(app_id(key))
            if now != self.expected.get(key):
                raise ConcurrentWriteError(
                    f"{self.name}: another writer committed {key[0]}-{key[1]} up to offset "
                    f"{now} while this run was writing from {self.expected.get(key)}; nothing "
                    "of this commit is in the table, and a new run continues from there"
                )

    def commit(self, changed: Mapping[TopicPartition, int]) -> Commit:
        from deltalake.transaction import AddAction, CommitProperties, Transaction

        dt = self._load()
        if dt is None:
            raise TableCommitError(f"{self.name}: the table is gone")
        self._check(dt, changed)
        state = {k: v for k, v in self.expected.items() if v is not None}
        state.update(changed)
        properties = CommitProperties(
            custom_metadata={OFFSETS_KEY: offsets_json(state), "kafkalog.commit": self.commit_id},
            app_transactions=[Transaction(app_id(k), int(v)) for k, v in sorted(changed.items())],
        )
        if self.mode == "upsert":
            rows = self.upserts
            self.upserts, self.upsert_bytes = [], 0
            size = self._merge(dt, rows, properties)
            files = 0
        else:
            done = [*self.pending_files, *(self.files.take() if self.files else [])]
            self.pending_files = []
            actions = [self._add(f, AddAction) for f in done]
            assert self.schema is not None
            self._publish(dt, actions, properties)
            size, files = sum(f.size for f in done), len(done)
        self.expected.update(changed)
        version = self._version()
        self.commit_id = uuid.uuid4().hex
        return Commit(files=files, bytes=size, version=version)

    def _publish(self, dt: Any, actions: list[Any], properties: Any) -> None:
        """The commit: one Delta log entry adding ``actions`` with the offsets' ``txn``
        actions; atomic (it is there whole, or not at all)."""
        try:
            dt.create_write_transaction(
                actions,
                "append",
                pa.schema(dt.schema().to_arrow()),
                partition_by=self.partition_by or None,
                commit_properties=properties,
            )
        except Exception as e:
            raise _commit_error(self.name, e) from e

    def _merge(self, dt: Any, batches: list[pa.Table], properties: Any) -> int:
        if not batches:
            self._publish(dt, [], properties)
            return 0
        rows, _keyless = latest_per_key(pa.concat_tables(batches))
        if len(rows) == 0:
            self._publish(dt, [], properties)
            return 0
        on = " AND ".join(f"t.`{c}` = s.`{c}`" for c in ("topic", "partition", "key"))
        try:
            (
                dt.merge(
                    source=rows,
                    predicate=on,
                    source_alias="s",
                    target_alias="t",
                    commit_properties=properties,
                )
                .when_matched_delete(predicate=f"s.{TOMBSTONE}")
                .when_matched_update_all(predicate=f"NOT s.{TOMBSTONE}", except_cols=[TOMBSTONE])
                .when_not_matched_insert_all(
                    predicate=f"NOT s.{TOMBSTONE}", except_cols=[TOMBSTONE]
                )
                .execute()
            )
        except Exception as e:
            raise _commit_error(self.name, e) from e
        return int(rows.nbytes)

    def _add(self, f: DataFile, action: Any) -> Any:
        values = {
            c: (None if v is None else _path_value(v))
            for c, v in zip(self.partition_by, f.key, strict=True)
        }
        return action(
            f.path,
            f.size,
            values,
            int(datetime.datetime.now(datetime.UTC).timestamp() * 1000),
            True,
            json.dumps(_stats(f)),
        )

    def _version(self) -> int:
        dt = self._load()
        for entry in dt.history(20):
            if entry.get("kafkalog.commit") == self.commit_id:
                return int(entry["version"])
        return int(dt.version())

    def abort(self) -> None:
        if self.files is not None:
            self.files.abort()
        self.upserts = []


def _commit_error(name: str, e: Exception) -> Exception:
    text = " ".join(str(e).split())
    if "oncurrent" in text or "conflict" in text.lower():
        return ConcurrentWriteError(
            f"{name}: another writer's commit conflicts with this one ({text}); nothing of "
            "this commit is in the table, and a new run continues from the last commit"
        )
    return TableCommitError(
        f"{name}: the commit failed ({type(e).__name__}: {text}); the table is at its last "
        "commit, and a new run continues from there"
    )


def _stats(f: DataFile) -> dict[str, Any]:
    """Delta's file statistics from the Parquet footer: the record count, and the smallest
    and largest value and null count of the plain top-level columns."""
    out: dict[str, Any] = {"numRecords": f.rows}
    meta = f.metadata
    if meta is None or meta.num_row_groups == 0:
        return out
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    # The footer's columns by path (its Arrow schema would make pyarrow import pandas).
    paths = {meta.schema.column(j).path: j for j in range(meta.num_columns)}
    for name in ("offset", "partition", "timestamp", "timestampType"):
        col = paths.get(name)
        if col is None:
            continue
        lo = hi = None
        count = 0
        for g in range(meta.num_row_groups):
            st = meta.row_group(g).column(col).statistics
            if st is None or not st.has_min_max:
                lo = hi = None
                break
            # The physical values (the logical ones go through pandas for timestamps).
            lo = st.min_raw if lo is None else min(lo, st.min_raw)
            hi = st.max_raw if hi is None else max(hi, st.max_raw)
            count += st.null_count or 0
        if lo is None or hi is None:
            continue
        if name == "timestamp":
            # Microseconds since the epoch (the files' unit). Delta's statistics keep
            # milliseconds: the largest rounded up, so that no reader skips the file for a
            # time inside it.
            lo, hi = _iso(lo // 1000), _iso(-(-hi // 1000))
        mins[name], maxs[name], nulls[name] = lo, hi, count
    if mins:
        out.update(minValues=mins, maxValues=maxs, nullCount=nulls)
    return out


def _iso(ms: int) -> str:
    """Milliseconds since the epoch as Delta's statistics write a timestamp."""
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def foreach_batch(
    table: str,
    *,
    app_id: str,
    partition_by: Sequence[str] | None = ("topic", "day"),
    storage_options: Mapping[str, str] | None = None,
) -> Any:
    """A Structured Streaming ``foreachBatch`` function writing each micro-batch (Spark's
    Kafka columns, from the ``kafkalog`` source) into the Delta table ``table`` exactly once:
    the micro-batch's id is the ``version`` of the application transaction ``app_id`` it
    commits with, and a micro-batch Spark runs again after a failure (same id, same offsets,
    from the checkpoint) is skipped once the table has it. Each micro-batch is collected on
    the driver (``toArrow``): bound it with ``maxOffsetsPerTrigger``."""
    deltalake = require("deltalake", "deltalake")
    from deltalake.transaction import CommitProperties, Transaction

    from kafkalog.tables._rows import check_partition_by

    uri = table_uri(table)
    options = dict(storage_options) if storage_options else None
    columns = [_COLUMNS[p] for p in check_partition_by(partition_by)]

    def write(batch: Any, batch_id: int) -> None:
        try:
            done = deltalake.DeltaTable(uri, storage_options=options).transaction_version(app_id)
        except deltalake.exceptions.TableNotFoundError:
            done = None
        if done is not None and batch_id <= done:
            return
        data = batch.toArrow()
        if DAY_COLUMN in columns:
            data = add_day(data)
        data = cast(data, table_schema(data.schema, "delta"))
        deltalake.write_deltalake(
            uri,
            data,
            mode="append",
            schema_mode="merge",
            partition_by=columns or None,
            storage_options=options,
            commit_properties=CommitProperties(
                app_transactions=[Transaction(app_id, int(batch_id))]
            ),
        )

    return write
