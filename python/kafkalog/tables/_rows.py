"""Records as table rows: Spark's Kafka columns (the value as a struct, or its fields as
columns), Arrow types a table format stores, and a table's schema grown by a registry version
that adds fields (schema evolution), or a conflict named exactly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog.errors import InvalidArgumentError, KafkaLogError

#: How a typed value goes into the table: one ``value`` column (a struct, Spark's shape), or
#: the struct's fields as the table's columns.
ValueLayout = Literal["struct", "columns"]
#: What a table is partitioned by: the topic, the Kafka partition, and the day (UTC) of the
#: record's timestamp.
PartitionBy = Sequence[Literal["topic", "partition", "day"]]
DEFAULT_PARTITION_BY: tuple[Literal["topic", "partition", "day"], ...] = ("topic", "day")

#: The column a Delta table is partitioned by for ``day`` (Iceberg's hidden ``day(timestamp)``
#: partition field has the same name).
DAY_COLUMN = "timestamp_day"

#: What marks a tombstone in an upsert's rows before the merge: never written to the table.
TOMBSTONE = "__kafkalog_tombstone"


class TableSchemaError(KafkaLogError):
    """The records cannot go into the table as it is: a column whose type differs from the
    table's, or a type the table format has no place for."""


def check_layout(layout: str) -> ValueLayout:
    if layout not in ("struct", "columns"):
        raise InvalidArgumentError(f'value_layout must be "struct" or "columns", not {layout!r}')
    return layout  # type: ignore[return-value]


def check_partition_by(partition_by: PartitionBy | Sequence[str] | str | None) -> tuple[str, ...]:
    if partition_by is None:
        return DEFAULT_PARTITION_BY
    if isinstance(partition_by, str):
        out: tuple[str, ...] = tuple(p.strip() for p in partition_by.split(",") if p.strip())
    else:
        out = tuple(partition_by)
    for p in out:
        if p not in ("topic", "partition", "day"):
            raise InvalidArgumentError(
                f'partition_by takes "topic", "partition" and "day", not {p!r}'
            )
    return out


def shape(batch: pa.RecordBatch, layout: ValueLayout, *, tombstones: bool = False) -> pa.Table:
    """A reader's batch as the table's rows: the value struct's fields as columns with
    ``layout="columns"`` (a field named like a Kafka column is an error), and with
    ``tombstones`` a column saying which records are tombstones (a null value that is not a
    value left null by ``on_value_error="null"``)."""
    table = pa.Table.from_batches([batch])
    if tombstones:
        value = table.column("value")
        dead = pc.is_null(value)
        if "value_error" in table.column_names:
            dead = pc.and_(dead, pc.is_null(table.column("value_error")))
        table = table.append_column(TOMBSTONE, dead)
    if layout == "columns":
        i = table.schema.get_field_index("value")
        value_type = table.schema.field(i).type
        if pa.types.is_struct(value_type):
            names = [value_type.field(j).name for j in range(value_type.num_fields)]
            clash = sorted(set(names) & set(table.column_names) - {"value"})
            if clash:
                raise TableSchemaError(
                    f"value_layout='columns': the value's fields {', '.join(clash)} have the "
                    "names of Kafka's columns; use value_layout='struct' (the value as one "
                    "column)"
                )
            value = table.column(i).combine_chunks()
            fields = value.flatten() if len(value) else [pa.array([], f.type) for f in value_type]
            table = table.remove_column(i)
            for j, array in enumerate(fields):
                table = table.add_column(i + j, value_type.field(j).with_type(array.type), array)
    return table


def groups(
    columns: Sequence[pa.ChunkedArray | pa.Array],
) -> list[tuple[tuple[object, ...], pa.Array | None]]:
    """The distinct combinations of ``columns``' values (null a value of its own), each with
    the mask of its rows (``None``: every row), without pyarrow's query engine (whose import
    takes seconds). The common cases are cheap: every column of one value (a batch of one
    partition and day), or one column with a few."""
    varying = []
    for i, c in enumerate(columns):
        if len(c) == 0 or c.null_count == len(c):
            continue
        if c.null_count == 0 and pc.all(pc.equal(c, c[0])).as_py():
            continue
        varying.append(i)
    first = tuple(c[0].as_py() if len(c) else None for c in columns)
    if not varying:
        return [(first, None)]
    if len(varying) == 1:
        i = varying[0]
        c = columns[i]
        out = []
        # Arrow scalars, not Python values: any conversion from Python (pa.array, pa.scalar,
        # a fill value) makes pyarrow import pandas, which takes seconds.
        for scalar in pc.unique(c):
            value = scalar.as_py()
            valid = pc.is_valid(c)
            mask = pc.invert(valid) if value is None else pc.and_kleene(valid, pc.equal(c, scalar))
            key = tuple(value if j == i else first[j] for j in range(len(columns)))
            out.append((key, mask))
        return out
    code = None
    for i in varying:
        encoded = pc.dictionary_encode(columns[i], null_encoding="encode")
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.unify_dictionaries().combine_chunks()
        indices = pc.cast(encoded.indices, pa.int64())
        radix = len(encoded.dictionary) + 1
        code = indices if code is None else pc.add(pc.multiply(code, radix), indices)
    assert code is not None
    out = []
    for scalar in pc.unique(code):
        row = pc.index(code, scalar).as_py()
        out.append((tuple(c[row].as_py() for c in columns), pc.equal(code, scalar)))
    return out


def add_day(table: pa.Table) -> pa.Table:
    """The ``timestamp_day`` column: the UTC day of each record's timestamp (null where Kafka
    stores none)."""
    ts = table.column("timestamp")
    return table.append_column(DAY_COLUMN, pc.cast(ts, pa.timestamp("us", "UTC")).cast(pa.date32()))


# --------------------------------------------------------------------------------------------
# Types a table format stores
# --------------------------------------------------------------------------------------------


def table_type(t: pa.DataType, fmt: Literal["delta", "iceberg"], where: str) -> pa.DataType:
    """The type ``t`` is stored as in a ``fmt`` table: timestamps in microseconds (both
    formats' unit), unsigned integers widened, dictionaries decoded, large and view types
    as their plain ones, fixed-size binary and times as Delta has them (binary; microseconds
    since midnight as int64). A type neither format has (unions) is a
    :class:`TableSchemaError` naming ``where``."""
    if pa.types.is_timestamp(t):
        # An instant whatever zone it is shown in ("+00:00", "Etc/UTC"): both formats keep it
        # in UTC (Delta takes no other zone name).
        return pa.timestamp("us", None if t.tz is None else "UTC")
    if pa.types.is_dictionary(t):
        return table_type(t.value_type, fmt, where)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_fixed_size_binary(t):
        return pa.binary() if fmt == "delta" else t
    if pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t):
        return pa.int64()
    if pa.types.is_uint64(t):
        return pa.decimal128(20, 0)
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        return pa.int32() if fmt == "iceberg" else t
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_time(t):
        return pa.int64() if fmt == "delta" else pa.time64("us")
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_decimal(t) and t.precision > 38:
        raise TableSchemaError(f"{where}: {t} has more than the 38 digits a table keeps")
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_union(t):
        raise TableSchemaError(
            f"{where}: {t} (a union of several types) has no table type; read the topic with "
            "value_options={'value_subjects': ...} (one field per type) or as bytes"
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        f = t.value_field
        return pa.list_(f.with_type(table_type(f.type, fmt, f"{where}[]")))
    if pa.types.is_map(t):
        k = table_type(t.key_type, fmt, f"{where}.key")
        v = table_type(t.item_type, fmt, f"{where}.value")
        return pa.map_(t.key_field.with_type(k), t.item_field.with_type(v))
    if pa.types.is_struct(t):
        return pa.struct(
            [
                t.field(i).with_type(table_type(t.field(i).type, fmt, f"{where}.{t.field(i).name}"))
                for i in range(t.num_fields)
            ]  # fmt: skip
        )
    if isinstance(t, pa.ExtensionType):
        return table_type(t.storage_type, fmt, where)
    return t


def table_schema(schema: pa.Schema, fmt: Literal["delta", "iceberg"]) -> pa.Schema:
    return pa.schema([f.with_type(table_type(f.type, fmt, f.name)) for f in schema])


def cast(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` as ``schema``: its columns cast, columns it lacks (fields of older or other
    records) null, in ``schema``'s order."""
    columns = []
    for field in schema:
        if field.name in table.column_names:
            columns.append(_cast_array(table.column(field.name), field.type))
        else:
            columns.append(pa.nulls(len(table), field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _cast_array(array: pa.ChunkedArray | pa.Array, t: pa.DataType) -> pa.ChunkedArray | pa.Array:
    if array.type == t:
        return array
    if pa.types.is_time(array.type) and pa.types.is_integer(t):
        micros = pc.cast(array, pa.time64("us"))
        return pc.cast(micros, pa.int64())
    if pa.types.is_struct(t) and pa.types.is_struct(array.type):
        chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
        out = []
        for chunk in chunks:
            names = [chunk.type.field(i).name for i in range(chunk.type.num_fields)]
            fields = []
            for i in range(t.num_fields):
                f = t.field(i)
                if f.name in names:
                    fields.append(_cast_array(chunk.field(f.name), f.type))
                else:
                    fields.append(pa.nulls(len(chunk), f.type))
            out.append(pa.StructArray.from_arrays(fields, fields=list(t), mask=chunk.is_null()))
        return pa.chunked_array(out, t) if isinstance(array, pa.ChunkedArray) else out[0]
    return pc.cast(array, t)


# --------------------------------------------------------------------------------------------
# Schema evolution
# --------------------------------------------------------------------------------------------


def merge(table: pa.Schema, records: pa.Schema, what: str) -> pa.Schema:
    """The table's schema grown by the records' new columns and struct fields (a registry
    version that adds fields), in the table's order; a column or field whose type differs is
    a :class:`TableSchemaError` naming it, both types and ``what``."""
    fields = list(table)
    names = table.names
    for f in records:
        if f.name not in names:
            fields.append(f.with_nullable(True))
            continue
        i = names.index(f.name)
        fields[i] = fields[i].with_type(_merge_type(fields[i].type, f.type, f.name, what))
    return pa.schema(fields, metadata=table.metadata)


def _merge_type(old: pa.DataType, new: pa.DataType, where: str, what: str) -> pa.DataType:
    if old == new or pa.types.is_null(new):
        return old
    if pa.types.is_struct(old) and pa.types.is_struct(new):
        return pa.struct(list(merge(pa.schema(list(old)), pa.schema(list(new)), what)))
    if pa.types.is_list(old) and pa.types.is_list(new):
        v = _merge_type(old.value_type, new.value_type, f"{where}[]", what)
        return pa.list_(old.value_field.with_type(v))
    if pa.types.is_map(old) and pa.types.is_map(new):
        k = _merge_type(old.key_type, new.key_type, f"{where}.key", what)
        v = _merge_type(old.item_type, new.item_type, f"{where}.value", what)
        return pa.map_(k, v)
    if pa.types.is_timestamp(old) and pa.types.is_timestamp(new):
        if (old.tz is None) == (new.tz is None):
            return old
    raise TableSchemaError(
        f"{what}: column {where} is {old} in the table but {new} in the records; a table "
        "takes new columns and fields, not a column of another type (write to another table, "
        "or read the topic with another subject version)"
    )
