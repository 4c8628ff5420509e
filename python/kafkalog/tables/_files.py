"""Parquet data files written a batch at a time, one open file per table partition, each rolled
at a target size, with bounded memory: rows wait in a partition's buffer until a row group's
worth (or the buffers' total cap) and are then written. Local tables are written in place
(a file no commit references is never read); object-store tables through a local file
uploaded whole with the storage options of reads."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kafkalog._storage import is_remote, local_path
from kafkalog.tables._rows import groups

#: Rows of one partition written as one row group once there are this many.
ROW_GROUP_ROWS = 32 * 1024
#: All partitions' waiting rows together: past this the largest buffer is written.
BUFFER_CAP_ROWS = 256 * 1024
#: A data file is closed once it holds this many bytes.
DEFAULT_TARGET_FILE_SIZE = 128 << 20

#: A partition's values, in the order of the partition columns.
PartitionKey = tuple[Any, ...]


class DataFile:
    """One written data file: its path relative to the table, partition, rows, size and the
    Parquet footer (for statistics)."""

    def __init__(self, path: str, key: PartitionKey, rows: int, size: int, meta: Any) -> None:
        self.path = path
        self.key = key
        self.rows = rows
        self.size = size
        self.metadata = meta


class _Open:
    def __init__(self, local: str, rel: str, schema: pa.Schema, compression: str) -> None:
        self.local = local
        self.rel = rel
        self.sink = pa.OSFile(local, "wb")
        self.writer = pq.ParquetWriter(self.sink, schema, compression=compression)
        self.rows = 0
        self.buffer: list[pa.Table] = []
        self.buffered = 0


class PartitionedFiles:
    """Writes rows into ``root`` (a local directory or an object-store URI), split by the
    values of ``partition_by`` (columns of the rows, left out of the files as Delta keeps
    them), into Hive-style ``col=value/`` directories."""

    def __init__(
        self,
        root: str,
        partition_by: Sequence[str],
        *,
        storage_options: dict[str, str] | None,
        target_file_size: int = DEFAULT_TARGET_FILE_SIZE,
        compression: str = "snappy",
        path_value: Callable[[Any], str],
        drop: Sequence[str] | None = None,
        schema: pa.Schema | None = None,
    ) -> None:
        self.root = root.rstrip("/")
        self.remote = is_remote(root)
        self.local_root = None if self.remote else local_path(root)
        self.partition_by = list(partition_by)
        #: Columns left out of the files (Delta keeps partition values only in its log).
        self.drop = list(partition_by if drop is None else drop)
        #: The files' schema (e.g. with Iceberg's field ids), else the rows'.
        self.schema = schema
        self.storage_options = storage_options
        self.target = target_file_size
        self.compression = compression
        self.path_value = path_value
        self.run = uuid.uuid4().hex
        self.count = 0
        self.open: dict[PartitionKey, _Open] = {}
        self.done: list[DataFile] = []
        self.written = 0  # bytes of rows taken since the last take()
        self.tmpdir: str | None = None

    def write(self, rows: pa.Table) -> None:
        self.written += rows.nbytes
        for key, part in self._split(rows):
            f = self.open.get(key)
            if f is None:
                f = self._new(key, part.schema)
            f.buffer.append(part)
            f.buffered += len(part)
            # A reader's batch is a row group of its own, as `convert` writes them; the rows
            # of a batch split across partitions wait for more (a row group of a few rows
            # would make the file slow to read).
            if f.buffered >= ROW_GROUP_ROWS:
                self._flush(key, f)
        waiting = sum(f.buffered for f in self.open.values())
        while waiting > BUFFER_CAP_ROWS:
            key, f = max(self.open.items(), key=lambda kv: kv[1].buffered)
            waiting -= f.buffered
            self._flush(key, f)

    def _split(self, rows: pa.Table) -> list[tuple[PartitionKey, pa.Table]]:
        data = rows.drop_columns(self.drop)
        if not self.partition_by:
            return [((), data)]
        cols = [rows.column(c) for c in self.partition_by]
        if all(pc.count_distinct(c, mode="all").as_py() == 1 for c in cols):
            return [(tuple(c[0].as_py() for c in cols), data)]
        return [(key, data if mask is None else data.filter(mask)) for key, mask in groups(cols)]

    def _new(self, key: PartitionKey, schema: pa.Schema) -> _Open:
        self.count += 1
        parts = [f"{c}={self.path_value(v)}" for c, v in zip(self.partition_by, key, strict=True)]
        name = f"part-{self.count:05d}-{self.run}.c000.{self.compression}.parquet"
        rel = "/".join([*parts, name])
        if self.local_root is not None:
            local = os.path.join(self.local_root, *rel.split("/"))
            os.makedirs(os.path.dirname(local), exist_ok=True)
        else:
            if self.tmpdir is None:
                self.tmpdir = tempfile.mkdtemp(prefix=".kafkalog-table-")
            local = os.path.join(self.tmpdir, f"{self.count:05d}.parquet")
        f = _Open(local, rel, self.schema or schema, self.compression)
        self.open[key] = f
        return f

    def _flush(self, key: PartitionKey, f: _Open) -> None:
        if f.buffer:
            table = pa.concat_tables(f.buffer) if len(f.buffer) > 1 else f.buffer[0]
            f.writer.write_table(table, row_group_size=max(len(table), 1))
            f.rows += len(table)
            f.buffer = []
            f.buffered = 0
        if f.sink.tell() >= self.target:
            self._close(key, f)

    def _close(self, key: PartitionKey, f: _Open) -> None:
        if f.buffer:
            table = pa.concat_tables(f.buffer)
            f.writer.write_table(table, row_group_size=max(len(table), 1))
            f.rows += len(table)
            f.buffer = []
        f.writer.close()
        meta = f.writer.writer.metadata if hasattr(f.writer, "writer") else None
        f.sink.close()
        size = os.path.getsize(f.local)
        if meta is None:
            meta = pq.read_metadata(f.local)
        if self.remote:
            from kafkalog._native import upload_file

            upload_file(f.local, f"{self.root}/{f.rel}", self.storage_options)
            os.unlink(f.local)
        self.done.append(DataFile(f.rel, key, f.rows, size, meta))
        del self.open[key]

    def take(self) -> list[DataFile]:
        """Closes every open file and hands over the files written since the last call."""
        for key, f in list(self.open.items()):
            self._close(key, f)
        done, self.done = self.done, []
        self.written = 0
        return done

    def abort(self) -> None:
        """Drops what was written since the last :meth:`take`: open files are closed and
        removed where they are local (a file no commit references is never read)."""
        for f in list(self.open.values()):
            try:
                f.writer.close()
                f.sink.close()
                os.unlink(f.local)
            except OSError:
                pass
        self.open.clear()
        if self.tmpdir is not None:
            import shutil

            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
