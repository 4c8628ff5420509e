"""Iceberg's side of the data files kafkalog writes, with pyiceberg's public types only: the
table's schema as Arrow and back (each field with its Iceberg field id, which the Parquet
files carry), and each file's metrics (Iceberg's ``column_sizes``, ``value_counts``,
``null_value_counts``, ``lower_bounds``, ``upper_bounds``, ``split_offsets``) from the Parquet
footer kafkalog's writer produced, read as physical values (a logical value would make pyarrow
import pandas).

Metrics follow the table's ``write.metadata.metrics.default`` (``truncate(16)`` unless set) and
``write.metadata.metrics.column.<name>`` properties, as pyiceberg's writer applies them: counts
for every column the mode does not turn off, bounds for top-level columns only (nested ones get
counts), strings and binaries truncated to the mode's length, the upper bound raised so that it
still bounds every value (the Iceberg spec's truncation of bounds). Bounds are serialized as
the spec's single-value serialization (Appendix D).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyiceberg.conversions import from_bytes, to_bytes
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from kafkalog.tables._rows import TableSchemaError

#: The Arrow field metadata key pyarrow writes as a Parquet field's id.
FIELD_ID = b"PARQUET:field_id"

DEFAULT_METRICS_MODE = "truncate(16)"
METRICS_DEFAULT = "write.metadata.metrics.default"
METRICS_COLUMN = "write.metadata.metrics.column."


# --------------------------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------------------------


def to_iceberg(schema: pa.Schema) -> Schema:
    """An Arrow schema (of :func:`kafkalog.tables._rows.table_type`'s types) as an Iceberg
    schema, with ids numbered in order (a catalog creating a table, or a schema update adding
    fields, assigns its own)."""
    ids = iter(range(1, 1 << 31))
    return Schema(*[_field(f, ids) for f in schema])


def _field(f: pa.Field, ids: Iterator[int]) -> NestedField:
    field_id = next(ids)
    return NestedField(
        field_id=field_id,
        name=f.name,
        field_type=_type(f.type, f.name, ids),
        required=not f.nullable,
    )


def _type(t: pa.DataType, where: str, ids: Iterator[int]) -> IcebergType:
    if pa.types.is_struct(t):
        return StructType(*[_field(t.field(i), ids) for i in range(t.num_fields)])
    if pa.types.is_list(t):
        element_id = next(ids)
        f = t.value_field
        return ListType(
            element_id, _type(f.type, f"{where}[]", ids), element_required=not f.nullable
        )
    if pa.types.is_map(t):
        key_id, value_id = next(ids), next(ids)
        return MapType(
            key_id,
            _type(t.key_type, f"{where}.key", ids),
            value_id,
            _type(t.item_type, f"{where}.value", ids),
            value_required=not t.item_field.nullable,
        )
    return _primitive(t, where)


def _primitive(t: pa.DataType, where: str) -> PrimitiveType:
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_int32(t):
        return IntegerType()
    if pa.types.is_int64(t):
        return LongType()
    if pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_float64(t):
        return DoubleType()
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale)
    if pa.types.is_date32(t):
        return DateType()
    if pa.types.is_time64(t) and t.unit == "us":
        return TimeType()
    if pa.types.is_timestamp(t) and t.unit == "us":
        return TimestampType() if t.tz is None else TimestamptzType()
    if pa.types.is_string(t):
        return StringType()
    if pa.types.is_binary(t):
        return BinaryType()
    if pa.types.is_fixed_size_binary(t):
        return FixedType(t.byte_width)
    raise TableSchemaError(f"{where}: {t} has no Iceberg type")


def to_arrow(schema: Schema) -> pa.Schema:
    """An Iceberg schema as Arrow, each field carrying its Iceberg field id (the data files'
    Parquet schema needs them); in kafkalog's types (strings and binaries not large)."""
    return pa.schema([_arrow_field(f) for f in schema.fields])


def _with_id(name: str, t: pa.DataType, nullable: bool, field_id: int) -> pa.Field:
    return pa.field(name, t, nullable=nullable, metadata={FIELD_ID: str(field_id).encode()})


def _arrow_field(f: NestedField) -> pa.Field:
    return _with_id(f.name, _arrow_type(f.field_type, f.name), not f.required, f.field_id)


def _arrow_type(t: IcebergType, where: str) -> pa.DataType:
    if isinstance(t, StructType):
        return pa.struct([_arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        element = _arrow_type(t.element_type, f"{where}[]")
        return pa.list_(_with_id("element", element, not t.element_required, t.element_id))
    if isinstance(t, MapType):
        key = _with_id("key", _arrow_type(t.key_type, f"{where}.key"), False, t.key_id)
        value = _with_id(
            "value", _arrow_type(t.value_type, f"{where}.value"), not t.value_required, t.value_id
        )
        return pa.map_(key, value)
    simple: dict[type, pa.DataType] = {
        BooleanType: pa.bool_(),
        IntegerType: pa.int32(),
        LongType: pa.int64(),
        FloatType: pa.float32(),
        DoubleType: pa.float64(),
        DateType: pa.date32(),
        TimeType: pa.time64("us"),
        TimestampType: pa.timestamp("us"),
        TimestamptzType: pa.timestamp("us", "UTC"),
        StringType: pa.string(),
        BinaryType: pa.binary(),
        UUIDType: pa.binary(16),
    }
    if type(t) in simple:
        return simple[type(t)]
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(len(t))
    raise TableSchemaError(f"{where}: the table's type {t} is not one kafkalog writes")


# --------------------------------------------------------------------------------------------
# Metrics from Parquet footers
# --------------------------------------------------------------------------------------------


class _Column:
    """A Parquet leaf column as Iceberg sees it: field id, type, and the metrics to keep."""

    def __init__(self, field_id: int, kind: IcebergType, mode: str, length: int | None) -> None:
        self.field_id = field_id
        self.kind = kind
        #: "none", "counts", "truncate" or "full"
        self.mode = mode
        self.length = length


def _mode(text: str) -> tuple[str, int | None]:
    mode = text.strip().lower()
    m = re.fullmatch(r"truncate\((\d+)\)", mode)
    if m and int(m.group(1)) > 0:
        return "truncate", int(m.group(1))
    if mode in ("none", "counts", "full"):
        return mode, None
    raise TableSchemaError(f"the table's metrics mode {text!r} is not one of Iceberg's")


class MetricsPlan:
    """Which metrics each Parquet column of a table's data files gets, by its path in the
    file (``headers.list.element.key``, as pyarrow names it)."""

    def __init__(self, schema: Schema, properties: Mapping[str, str]) -> None:
        default = properties.get(METRICS_DEFAULT, DEFAULT_METRICS_MODE)
        self.columns: dict[str, _Column] = {}

        def leaf(path: list[str], names: list[str], field_id: int, t: IcebergType) -> None:
            if isinstance(t, StructType):
                for f in t.fields:
                    leaf([*path, f.name], [*names, f.name], f.field_id, f.field_type)
            elif isinstance(t, ListType):
                leaf([*path, "list", "element"], [*names, "element"], t.element_id, t.element_type)
            elif isinstance(t, MapType):
                leaf([*path, "key_value", "key"], [*names, "key"], t.key_id, t.key_type)
                leaf([*path, "key_value", "value"], [*names, "value"], t.value_id, t.value_type)
            else:
                name = ".".join(names)
                mode, length = _mode(properties.get(METRICS_COLUMN + name, default))
                if mode == "truncate" and not isinstance(t, (StringType, BinaryType)):
                    mode, length = "full", None
                if len(names) > 1 and mode in ("truncate", "full"):
                    mode = "counts"  # bounds of top-level columns only
                self.columns[".".join(path)] = _Column(field_id, t, mode, length)

        for f in schema.fields:
            leaf([f.name], [f.name], f.field_id, f.field_type)

    def metrics(self, meta: Any) -> dict[str, Any]:
        """The metrics of a data file whose Parquet footer is ``meta`` (pyarrow's
        ``FileMetaData``), as ``DataFile`` takes them."""
        sizes: dict[int, int] = {}
        values: dict[int, int] = {}
        nulls: dict[int, int] = {}
        lows: dict[int, Any] = {}
        highs: dict[int, Any] = {}
        unknown: set[int] = set()  # a row group without statistics for the column
        splits = []
        for r in range(meta.num_row_groups):
            group = meta.row_group(r)
            first = group.column(0)
            start = first.data_page_offset
            if first.has_dictionary_page and first.dictionary_page_offset < start:
                start = first.dictionary_page_offset
            splits.append(start)
            for i in range(group.num_columns):
                chunk = group.column(i)
                column = self.columns.get(chunk.path_in_schema)
                if column is None:
                    raise TableSchemaError(
                        f"a data file's column {chunk.path_in_schema} is not in the table"
                    )
                fid = column.field_id
                sizes[fid] = sizes.get(fid, 0) + chunk.total_compressed_size
                if column.mode == "none":
                    continue
                values[fid] = values.get(fid, 0) + chunk.num_values
                stats = chunk.statistics if chunk.is_stats_set else None
                if stats is None or not stats.has_null_count:
                    unknown.add(fid)
                    continue
                nulls[fid] = nulls.get(fid, 0) + stats.null_count
                if column.mode == "counts":
                    continue
                if not stats.has_min_max:
                    if stats.null_count < chunk.num_values:
                        unknown.add(fid)  # values, but no bounds: none for the file
                    continue
                lo, hi = (
                    _physical(column.kind, stats.min_raw),
                    _physical(column.kind, stats.max_raw),
                )
                lows[fid] = lo if fid not in lows else min(lows[fid], lo)
                highs[fid] = hi if fid not in highs else max(highs[fid], hi)
        lower: dict[int, bytes] = {}
        upper: dict[int, bytes] = {}
        by_id = {c.field_id: c for c in self.columns.values()}
        for fid, lo in lows.items():
            if fid in unknown:
                continue
            column = by_id[fid]
            low = _serialize(column.kind, _truncate_lower(lo, column.length))
            high = _truncate_upper(highs[fid], column.length)
            lower[fid] = low
            if high is not None:
                upper[fid] = _serialize(column.kind, high)
        for fid in unknown:
            nulls.pop(fid, None)
        return {
            "record_count": meta.num_rows,
            "column_sizes": sizes,
            "value_counts": values,
            "null_value_counts": nulls,
            "nan_value_counts": {},
            "lower_bounds": lower,
            "upper_bounds": upper,
            "split_offsets": sorted(splits),
        }


def _physical(kind: IcebergType, raw: Any) -> Any:
    """A Parquet statistic's physical value as a value that orders as Iceberg orders the
    type: strings as text, decimals as their unscaled integer."""
    if isinstance(kind, StringType):
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if isinstance(kind, DecimalType) and isinstance(raw, bytes):
        # Parquet's bytes are Iceberg's (the unscaled value, big-endian two's complement).
        return int(Decimal(from_bytes(kind, raw)).scaleb(kind.scale))
    return raw


def _truncate_lower(value: Any, length: int | None) -> Any:
    if length is None or not isinstance(value, (str, bytes)):
        return value
    return value[:length]


def _truncate_upper(value: Any, length: int | None) -> Any:
    """The shortest value of at most ``length`` characters (bytes) that is at least
    ``value``'s upper bound: its prefix with the last character that can be incremented
    incremented; ``None`` when none can (no upper bound)."""
    if length is None or not isinstance(value, (str, bytes)) or len(value) <= length:
        return value
    if isinstance(value, bytes):
        for i in range(length - 1, -1, -1):
            if value[i] < 0xFF:
                return value[:i] + bytes([value[i] + 1])
        return None
    for i in range(length - 1, -1, -1):
        c = ord(value[i]) + 1
        if 0xD800 <= c <= 0xDFFF:
            c = 0xE000
        if c <= 0x10FFFF:
            return value[:i] + chr(c)
    return None


def _serialize(kind: IcebergType, value: Any) -> bytes:
    """Iceberg's single-value serialization (the spec's Appendix D), by pyiceberg's own
    ``to_bytes``; a decimal comes as its unscaled integer."""
    if isinstance(kind, DecimalType):
        value = Decimal(value).scaleb(-kind.scale)
    assert isinstance(kind, PrimitiveType), kind  # bounds are kept for top-level leaves only
    return to_bytes(kind, value)
