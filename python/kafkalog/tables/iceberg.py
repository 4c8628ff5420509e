"""Apache Iceberg tables through ``pyiceberg``, in any catalog pyiceberg is configured with
(its SQL catalog on a SQLite file is the embedded default: ``catalog_uri`` and ``warehouse``).

Rows are written as data files by kafkalog's streaming writer (as Delta's), their Iceberg
metrics taken from the Parquet footers it wrote (``_iceberg_files.py``); each commit is one
pyiceberg transaction (a fast append of the files; for ``mode="upsert"`` a delete of the keys'
rows and an append) whose snapshots' summary carries ``kafkalog.offsets``: the next offset of
every topic-partition the table holds (the Iceberg spec's snapshot ``summary`` map, written in
the same atomic metadata swap as the files). A run reads it from the newest snapshot that has
it, walking back through the current snapshot's ancestors (other writers' snapshots have
none). A commit that lost a race to another writer is built again on the new head by kafkalog
(never rebased by pyiceberg), only when no other commit recorded offsets of the same
partitions since this run read them.

Only pyiceberg's public API is used; its modules are imported when a table is written, and its
pyarrow FileIO (which imports pandas) only for tables outside the local disk
(``_iceberg_io.py``).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import os
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog.errors import ConcurrentWriteError, InvalidArgumentError
from kafkalog.tables._files import PartitionedFiles
from kafkalog.tables._lazy import missing, require
from kafkalog.tables._rows import (
    DAY_COLUMN,
    TOMBSTONE,
    TableSchemaError,
    add_day,
    cast,
    groups,
    merge,
    table_schema,
)
from kafkalog.tables._run import (
    OFFSETS_KEY,
    Commit,
    Mode,
    TableCommitError,
    latest_per_key,
    offsets_json,
    parse_offsets,
)
from kafkalog.tables._source import TopicPartition

_EPOCH = datetime.date(1970, 1, 1)


def _days(value: Any) -> int | None:
    """A ``day`` partition value: days since 1970-01-01 (Iceberg's day transform)."""
    return None if value is None else (value - _EPOCH).days


def _path_value(v: Any) -> str:
    return "null" if v is None else str(v)


#: object_store's storage options (kafkalog's) and pyiceberg's FileIO properties of the same.
_FILE_IO = {
    "aws_endpoint": "s3.endpoint",
    "aws_endpoint_url": "s3.endpoint",
    "endpoint": "s3.endpoint",
    "aws_access_key_id": "s3.access-key-id",
    "access_key_id": "s3.access-key-id",
    "aws_secret_access_key": "s3.secret-access-key",
    "secret_access_key": "s3.secret-access-key",
    "aws_session_token": "s3.session-token",
    "session_token": "s3.session-token",
    "aws_region": "s3.region",
    "region": "s3.region",
}


def identifier(table: str) -> tuple[str, ...]:
    """An ``iceberg://`` destination's table identifier: ``iceberg://db.events`` is
    ``("db", "events")`` (a nested namespace: ``a.b.events``)."""
    if table.startswith("iceberg://"):
        table = table[len("iceberg://") :]
    parts = tuple(p for p in table.split("."))
    if len(parts) < 2 or not all(parts):
        raise InvalidArgumentError(
            f"iceberg://{table}: an Iceberg table is named <namespace>.<table>"
        )
    return parts


def catalog_properties(
    catalog: str | Mapping[str, Any] | None,
    catalog_uri: str | None,
    warehouse: str | None,
    storage_options: Mapping[str, str] | None,
) -> tuple[str, dict[str, Any]]:
    """The catalog's name and the properties pyiceberg loads it with: ``catalog`` as a name of
    pyiceberg's configuration (``~/.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``) or as properties;
    ``catalog_uri`` and ``warehouse`` make a SQL catalog (a SQLite file: ``sqlite:///cat.db``);
    the read's storage options become the FileIO's where the catalog does not give them."""
    name = "default"
    props: dict[str, Any] = {}
    if isinstance(catalog, str):
        name = catalog
    elif catalog is not None:
        props = {str(k): v for k, v in catalog.items()}
        name = str(props.pop("name", name))
    if catalog_uri is not None:
        props.setdefault("type", "sql")
        props["uri"] = catalog_uri
    if warehouse is not None:
        props["warehouse"] = warehouse
    for key, value in dict(storage_options or {}).items():
        mapped = _FILE_IO.get(key.lower())
        if mapped is not None:
            props.setdefault(mapped, value)
    if "s3.endpoint" not in props and os.environ.get("AWS_ENDPOINT_URL"):
        props["s3.endpoint"] = os.environ["AWS_ENDPOINT_URL"]
    return name, props


class _Conflict(Exception):
    """The catalog refused a commit because the table moved since the commit was built (another
    writer's commit): kafkalog checks the offsets on the new head, and builds it again."""


class _NoRebase:
    """The catalog as a pyiceberg ``Table`` of one commit sees it: a commit the catalog refuses
    because the table moved comes back as :class:`_Conflict`, which pyiceberg's transaction
    does not retry (it would rebase the snapshots on the new head without knowing that another
    run may have written the same offsets). Everything else is the catalog's."""

    def __init__(self, catalog: Any) -> None:
        self._catalog = catalog

    def commit_table(self, table: Any, requirements: Any, updates: Any) -> Any:
        from pyiceberg.exceptions import CommitFailedException

        try:
            return self._catalog.commit_table(table, requirements, updates)
        except CommitFailedException as e:
            raise _Conflict(" ".join(str(e).split())) from e

    def __getattr__(self, name: str) -> Any:
        return getattr(self._catalog, name)


class IcebergSink:
    """An Iceberg table as a run writes it."""

    def __init__(
        self,
        table: str,
        *,
        mode: Mode,
        partition_by: Sequence[str],
        catalog: str | Mapping[str, Any] | None,
        catalog_uri: str | None,
        warehouse: str | None,
        storage_options: Mapping[str, str] | None,
        target_file_size: int,
    ) -> None:
        require("pyiceberg", "pyiceberg[sql-sqlite,pyiceberg-core]")
        if mode == "upsert":  # its delete evaluates partitions through pyiceberg-core
            require("pyiceberg_core", "pyiceberg[pyiceberg-core]")
        self.identifier = identifier(table)
        self.name = ".".join(self.identifier)
        self.mode = mode
        self.partition_by = list(partition_by)
        self.target_file_size = target_file_size
        self.catalog_name, props = catalog_properties(
            catalog, catalog_uri, warehouse, storage_options
        )
        # pyiceberg's modules take most of a CPU-second to import, and its catalog is loaded
        # and the table read before anything is written: in a thread, while the core lists
        # and indexes the log (which releases the GIL). committed() waits for it.
        self._connecting: concurrent.futures.Future[tuple[Any, Any]] = concurrent.futures.Future()
        threading.Thread(
            target=self._connect, args=(props,), name="kafkalog-iceberg-catalog"
        ).start()
        self._first = True
        self.catalog: Any = None
        self.table: Any = None
        self.expected: dict[TopicPartition, int | None] = {}
        self.schema: pa.Schema | None = None
        self.buffer: list[pa.Table] = []
        self.written = 0
        self.storage_options = dict(storage_options) if storage_options else None
        self.writer: PartitionedFiles | None = None
        self.spec_columns: list[str] = []
        self.files: list[Any] = []
        #: An upsert's keys of the commit being made (their old rows are deleted).
        self.keys: pa.Table | None = None
        self.commit_id = uuid.uuid4().hex

    # -- the table ---------------------------------------------------------------------------

    def _connect(self, props: dict[str, Any]) -> None:
        """The catalog loaded and the table read (``None`` if it does not exist), into
        ``self._connecting``."""
        try:
            from pyiceberg.catalog import load_catalog

            from kafkalog.tables._iceberg_io import use_for

            try:
                catalog = load_catalog(self.catalog_name, **props)
            except Exception as e:
                why = f"{type(e).__name__}: {' '.join(str(e).split())}"
                no_uri = "uri" in why.lower() and "uri" not in props  # its hint: pyiceberg's --uri
                cause, why = (None, "no catalog URI given or configured") if no_uri else (e, why)
                raise InvalidArgumentError(
                    f"iceberg://{self.name}: catalog {self.catalog_name!r} could not be loaded "
                    f"({why}); give --catalog-uri URI and --warehouse DIR (catalog_uri= and "
                    "warehouse= in Python), or name a catalog of pyiceberg's configuration "
                    "(--catalog NAME: ~/.pyiceberg.yaml, PYICEBERG_CATALOG__<NAME>__URI)"
                ) from cause
            use_for(catalog)
            self.catalog = catalog
            self._connecting.set_result((catalog, self._load()))
        except BaseException as e:
            self._connecting.set_exception(e)

    def _load(self) -> Any:
        from pyiceberg.exceptions import NoSuchTableError

        try:
            return self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            return None

    def _offsets(self, table: Any) -> dict[TopicPartition, int]:
        """``kafkalog.offsets`` of the newest snapshot in the current one's ancestry that has
        them."""
        snapshot = table.current_snapshot()
        while snapshot is not None:
            summary = snapshot.summary
            props = summary.additional_properties if summary is not None else {}
            if OFFSETS_KEY in props:
                return parse_offsets(props[OFFSETS_KEY])
            parent = snapshot.parent_snapshot_id
            snapshot = None if parent is None else table.metadata.snapshot_by_id(parent)
        return {}

    def committed(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        catalog, table = self._connecting.result()
        self.catalog = catalog
        # The table as the connection read it, the first time; read again after that.
        self.table = table if self._first else self._load()
        self._first = False
        state = {} if self.table is None else self._offsets(self.table)
        out = {}
        for key in keys:
            self.expected[key] = state.get(key)
            if key in state:
                out[key] = state[key]
        if self.table is not None:
            self.schema = self._arrow_schema(self.table)
        return out

    def _arrow_schema(self, table: Any) -> pa.Schema:
        """The table's schema as Arrow, in kafkalog's types, each field carrying its Iceberg
        field id (the data files' Parquet schema needs them)."""
        from kafkalog.tables._iceberg_files import to_arrow

        return table_schema(to_arrow(table.schema()), "iceberg")

    def _create(self, rows: pa.Schema) -> Any:
        """The table, created in one catalog call with its partition spec (the namespace too,
        if missing)."""
        from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.transforms import DayTransform, IdentityTransform

        from kafkalog.tables._iceberg_files import to_iceberg

        schema = to_iceberg(rows)
        fields: list[tuple[str, Any, str]] = []
        for column in ("topic", "partition"):
            if column in self.partition_by:
                fields.append((column, IdentityTransform(), column))
        if "day" in self.partition_by:
            fields.append(("timestamp", DayTransform(), DAY_COLUMN))
        spec = PartitionSpec(
            *[
                PartitionField(
                    source_id=schema.find_field(source).field_id,
                    field_id=1000 + i,
                    transform=transform,
                    name=name,
                )
                for i, (source, transform, name) in enumerate(fields)
            ]
        )
        properties = {
            "write.target-file-size-bytes": str(self.target_file_size),
            # As `kafkalog convert` writes Parquet (pyiceberg's default is zstd).
            "write.parquet.compression-codec": "snappy",
        }
        namespace = self.identifier[:-1]
        try:
            self.catalog.create_namespace(namespace)
        except NamespaceAlreadyExistsError:
            pass
        try:
            return self.catalog.create_table(
                self.identifier, schema=schema, partition_spec=spec, properties=properties
            )
        except TableAlreadyExistsError:
            return self._load()

    def open(self, records: pa.Schema, what: str) -> None:
        rows = table_schema(records, "iceberg")
        rows = pa.schema([f for f in rows if f.name != TOMBSTONE])
        if self.table is None:
            self.table = self._create(rows)
            self.schema = self._arrow_schema(self.table)
        assert self.schema is not None
        merged = merge(self.schema, rows, f"{self.name}: {what}")
        if merged != self.schema:
            from kafkalog.tables._iceberg_files import to_iceberg

            self._flush()  # rows of the old schema are written with it
            try:
                with self.table.update_schema() as update:
                    update.union_by_name(to_iceberg(merged))
            except Exception as e:
                raise _error(self.name, e) from e
            self.table = self._load()
            self.schema = self._arrow_schema(self.table)

    # -- rows --------------------------------------------------------------------------------

    def write(self, rows: pa.Table) -> None:
        assert self.schema is not None
        self.written += rows.nbytes
        if self.mode == "upsert":
            dead = rows.column(TOMBSTONE)
            rows = cast(rows.drop_columns([TOMBSTONE]), self.schema).append_column(TOMBSTONE, dead)
            self.buffer.append(rows)
            return
        self._write_rows(cast(rows, self.schema))

    def _write_rows(self, rows: pa.Table) -> None:
        if self.writer is None:
            self.writer = self._writer()
        if "day" in self.spec_columns:
            rows = add_day(rows)
        self.writer.write(rows)

    def _writer(self) -> PartitionedFiles:
        """Data files written as the rows come, under the table's ``data/``."""
        assert self.schema is not None
        spec = self.table.spec()
        schema = self.table.schema()
        names = []
        for field in spec.fields:
            source = schema.find_column_name(field.source_id)
            kind = str(field.transform)
            if kind == "identity" and source in ("topic", "partition"):
                names.append(source)
            elif kind == "day" and source == "timestamp":
                names.append("day")
            else:
                raise TableSchemaError(
                    f"{self.name}: kafkalog writes tables partitioned by identity(topic), "
                    f"identity(partition) and day(timestamp), not {kind}({source})"
                )
        self.spec_columns = names
        columns = [DAY_COLUMN if n == "day" else n for n in names]
        codec = self.table.properties.get("write.parquet.compression-codec", "zstd")
        return PartitionedFiles(
            f"{self.table.location().rstrip('/')}/data",
            columns,
            storage_options=self.storage_options,
            target_file_size=self.target_file_size,
            compression="none" if codec == "uncompressed" else codec,
            path_value=_path_value,
            drop=[DAY_COLUMN] if "day" in names else [],
            schema=self.schema,
        )

    def _flush(self) -> None:
        """The data files written so far closed and described (not yet in the table): their
        metrics from the footers kafkalog's writer produced."""
        if self.writer is None:
            return
        from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
        from pyiceberg.typedef import Record

        from kafkalog.tables._iceberg_files import MetricsPlan

        done = self.writer.take()
        self.writer = None
        if not done:
            return
        plan = MetricsPlan(self.table.schema(), self.table.properties)
        root = f"{self.table.location().rstrip('/')}/data"
        for f in done:
            values = [
                _days(v) if n == "day" else v for n, v in zip(self.spec_columns, f.key, strict=True)
            ]
            self.files.append(
                DataFile.from_args(
                    content=DataFileContent.DATA,
                    file_path=f"{root}/{f.path}",
                    file_format=FileFormat.PARQUET,
                    partition=Record(*values),
                    file_size_in_bytes=f.size,
                    sort_order_id=None,
                    spec_id=self.table.metadata.default_spec_id,
                    equality_ids=None,
                    key_metadata=None,
                    **plan.metrics(f.metadata),
                )
            )

    def exists(self) -> bool:
        self._connecting.result()
        return self.table is not None or self._load() is not None

    def pending_bytes(self) -> int:
        return self.written

    # -- commits -----------------------------------------------------------------------------

    def _check(self, table: Any, changed: Mapping[TopicPartition, int]) -> None:
        now = self._offsets(table)
        for key in changed:
            if now.get(key) != self.expected.get(key):
                raise ConcurrentWriteError(
                    f"{self.name}: another writer committed {key[0]}-{key[1]} up to offset "
                    f"{now.get(key)} while this run was writing from {self.expected.get(key)}; "
                    "nothing of this commit is in the table, and a new run continues from there"
                )

    def commit(self, changed: Mapping[TopicPartition, int]) -> Commit:
        """One catalog commit of the data files and the offsets, built on the table as this run
        last saw it. If another writer committed first (the catalog refuses a commit whose
        parent snapshot is no longer the head), the commit is built again on the new head, as
        long as no other commit advanced the same partitions (else a
        :class:`ConcurrentWriteError`); at most ``commit.retry.num-retries`` times (the
        table's property, pyiceberg's and Iceberg's default: 4), waiting as its
        ``commit.retry.*-wait-ms`` say."""
        from pyiceberg.table import Table

        if self.mode == "upsert":
            self._write_live()
        self._flush()
        files, self.files = self.files, []
        table = self.table
        if table is None:
            raise TableCommitError(f"{self.name}: the table is gone")
        props = table.properties
        retries = max(0, int(props.get("commit.retry.num-retries", 4)))
        wait_ms = max(0, int(props.get("commit.retry.min-wait-ms", 100)))
        max_wait_ms = max(0, int(props.get("commit.retry.max-wait-ms", 60000)))
        for attempt in range(retries + 1):
            self._check(table, changed)
            state = dict(self._offsets(table))
            state.update(changed)
            summary = {OFFSETS_KEY: offsets_json(state), "kafkalog.commit": self.commit_id}
            one = Table(
                self.identifier,
                table.metadata,
                table.metadata_location,
                table.io,
                _NoRebase(self.catalog),  # type: ignore[arg-type]
            )
            tx = one.transaction()
            if self.mode == "upsert":
                self._delete_keys(tx, summary)
            with tx.update_snapshot(snapshot_properties=summary).fast_append() as append:
                for f in files:
                    append.append_data_file(f)
            try:
                self._publish(tx)
                break
            except _Conflict as conflict:
                if attempt == retries:
                    raise ConcurrentWriteError(
                        f"{self.name}: the catalog refused the commit {retries + 1} times "
                        f"({conflict}); nothing of this commit is in the table, and a new run "
                        "continues from the last commit"
                    ) from conflict
                time.sleep(min(wait_ms * 2**attempt, max_wait_ms) / 1000)
                table = self._load()
                if table is None:
                    raise TableCommitError(f"{self.name}: the table is gone") from conflict
        self.table = Table(
            self.identifier, one.metadata, one.metadata_location, one.io, self.catalog
        )
        self.schema = self._arrow_schema(self.table)
        self.expected.update(changed)
        self.written = 0
        self.keys = None
        size = sum(int(f.file_size_in_bytes) for f in files)
        version = self._snapshot_id(self.table)
        self.commit_id = uuid.uuid4().hex
        return Commit(files=len(files), bytes=size, version=version)

    def _publish(self, tx: Any) -> None:
        """The commit: one metadata swap in the catalog holding the snapshot(s) with their
        files and offsets; atomic."""
        try:
            tx.commit_transaction()
        except (ConcurrentWriteError, _Conflict):
            raise
        except Exception as e:
            raise _error(self.name, e) from e

    # -- upsert ------------------------------------------------------------------------------

    def _write_live(self) -> None:
        """An upsert's rows of this commit reduced to the latest record per key: the live ones
        written as data files, the keys kept for the delete of their old rows."""
        self.keys = None
        if not self.buffer:
            return
        rows, _keyless = latest_per_key(pa.concat_tables(self.buffer))
        self.buffer = []
        self.keys = rows.select(["topic", "partition", "key"])
        live = rows.filter(pc.invert(rows.column(TOMBSTONE))).drop_columns([TOMBSTONE])
        if len(live):
            self._write_rows(live)

    def _delete_keys(self, tx: Any, summary: dict[str, str]) -> None:
        """The rows of this commit's keys deleted (pyiceberg's delete: whole files dropped,
        files holding some of them rewritten), in the transaction of the new rows."""
        from pyiceberg.expressions import And, EqualTo, In, Or

        keys = self.keys
        if keys is None or len(keys) == 0:
            return
        conditions = []
        for (topic, partition), mask in groups([keys.column("topic"), keys.column("partition")]):
            column = keys.column("key")
            values = set((column if mask is None else pc.filter(column, mask)).to_pylist())
            conditions.append(
                And(
                    EqualTo("topic", topic),  # type: ignore[call-arg, arg-type]
                    EqualTo("partition", partition),  # type: ignore[call-arg, arg-type]
                    In("key", values),  # type: ignore[call-arg, arg-type]
                )
            )
        condition = conditions[0] if len(conditions) == 1 else Or(*conditions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "did not match any records": new keys
            tx.delete(delete_filter=condition, snapshot_properties=summary)

    def _snapshot_id(self, table: Any) -> int:
        snapshot = table.current_snapshot()
        while snapshot is not None:
            if (
                snapshot.summary
                and snapshot.summary.additional_properties.get("kafkalog.commit") == self.commit_id
            ):
                return int(snapshot.snapshot_id)
            parent = snapshot.parent_snapshot_id
            snapshot = None if parent is None else table.metadata.snapshot_by_id(parent)
        current = table.current_snapshot()
        return int(current.snapshot_id) if current is not None else -1

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()
        self.buffer = []
        self.files = []
        self.keys = None


def _error(name: str, e: Exception) -> Exception:
    text = " ".join(str(e).split())
    if type(e).__name__ == "NotInstalledError":  # pyiceberg's: pyiceberg-core missing
        return missing("pyiceberg[pyiceberg-core]", text)
    if type(e).__name__ == "CommitFailedException":
        return ConcurrentWriteError(
            f"{name}: the catalog refused the commit ({type(e).__name__}: {text}); nothing of "
            "this commit is in the table, and a new run continues from the last commit"
        )
    if type(e).__name__ == "CommitStateUnknownException":
        return TableCommitError(
            f"{name}: the catalog did not say whether the commit was made ({text}); the "
            "offsets are in the same commit as the rows, so a new run continues from whichever "
            "commit is the table's last"
        )
    return TableCommitError(
        f"{name}: the commit failed ({type(e).__name__}: {text}); the table is at its last "
        "commit, and a new run continues from there"
    )
