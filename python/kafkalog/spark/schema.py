"""Schemas: kafkalog's Arrow columns as Spark types, and the exact Arrow form pyspark expects
back from a Python data source or ``mapInArrow``.

Spark's Kafka source has seven columns (``key``, ``value``, ``topic``, ``partition``,
``offset``, ``timestamp``, ``timestampType``) and ``headers`` only with
``includeHeaders=true``; :data:`SPARK_SCHEMA` is exactly that default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import types as _spark_types
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kafkalog import reading
from kafkalog.errors import InvalidArgumentError

#: Spark's TIME type (Spark 4.1 and later; None before).
TimeType: Any = getattr(_spark_types, "TimeType", None)

__all__ = [
    "SPARK_COLUMNS",
    "SPARK_SCHEMA",
    "SPARK_ARROW_SCHEMA",
    "spark_columns",
    "spark_schema",
    "arrow_schema",
    "conform",
]

#: The columns of Spark's Kafka source (without ``includeHeaders``).
SPARK_COLUMNS: tuple[str, ...] = tuple(c for c in reading.COLUMNS if c != "headers")


def spark_columns(*, include_headers: bool = False, batch_metadata: bool = False) -> list[str]:
    """Spark's Kafka source columns, with ``headers`` when asked (as its ``includeHeaders``),
    and kafkalog's batch metadata columns after them."""
    columns = list(reading.COLUMNS if include_headers else SPARK_COLUMNS)
    if batch_metadata:
        columns += list(reading.METADATA_COLUMNS)
    return columns


def _spark_type(t: pa.DataType) -> DataType:
    """The Spark type of an Arrow type kafkalog produces (typed keys and values too: an Avro
    enum's dictionary is a string, fixed bytes are binary, a time is Spark's TIME)."""
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return BinaryType()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return StringType()
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_int8(t):
        return ByteType()
    if pa.types.is_int16(t):
        return ShortType()
    if pa.types.is_int32(t):
        return IntegerType()
    if pa.types.is_int64(t):
        return LongType()
    if pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_float64(t):
        return DoubleType()
    if pa.types.is_decimal(t) and t.precision <= 38:
        return DecimalType(t.precision, t.scale)
    if pa.types.is_date32(t):
        return DateType()
    if pa.types.is_timestamp(t):
        return TimestampType() if t.tz is not None else TimestampNTZType()
    if pa.types.is_time(t) and TimeType is not None:
        time_type: DataType = TimeType(6)
        return time_type
    if pa.types.is_null(t):
        return NullType()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ArrayType(_spark_type(t.value_type), containsNull=True)
    if pa.types.is_map(t):
        return MapType(_spark_type(t.key_type), _spark_type(t.item_type), True)
    if pa.types.is_struct(t):
        return StructType([StructField(f.name, _spark_type(f.type), True) for f in t])
    raise InvalidArgumentError(
        f"no Spark type for Arrow type {t}: read that column as binary, or with kafkalog.read"
    )


def _arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type pyspark expects for the Spark type of ``t`` (``to_arrow_type`` with the
    UTC time zone): every field nullable, list items named ``element``, timestamps in
    microseconds (with the UTC time zone, or none for local ones)."""
    if pa.types.is_dictionary(t):
        return _arrow_type(t.value_type)
    if pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz is not None else None)
    if pa.types.is_time(t):
        return pa.time64("ns")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("element", _arrow_type(t.value_type), nullable=True))
    if pa.types.is_map(t):
        return pa.map_(_arrow_type(t.key_type), _arrow_type(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _arrow_type(f.type), nullable=True) for f in t])
    return t


def _chosen(
    columns: Sequence[str] | None, include_headers: bool, batch_metadata: bool
) -> list[str]:
    if columns is None:
        return spark_columns(include_headers=include_headers, batch_metadata=batch_metadata)
    return list(columns)


def _typed(columns: list[str], decoded: pa.Schema | None) -> pa.Schema:
    """kafkalog's Arrow schema of ``columns``, with ``key``/``value`` of the types decoding
    gives (``decoded``, from :func:`kafkalog.spark.values.resolve`) and its error columns."""
    schema = reading.schema([c for c in columns if decoded is None or c not in decoded.names])
    if decoded is None:
        return schema
    by_name = {f.name: f for f in schema}
    fields = [decoded.field(c) if c in decoded.names else by_name[c] for c in columns]
    fields += [f for f in decoded if f.name not in columns and f.name not in ("key", "value")]
    return pa.schema(fields)


def spark_schema(
    columns: Sequence[str] | None = None,
    *,
    include_headers: bool = False,
    batch_metadata: bool = False,
    decoded: pa.Schema | None = None,
) -> StructType:
    """The Spark schema of these kafkalog columns (default: Spark's Kafka source schema, with
    ``headers`` and the batch metadata columns when asked), every field nullable as there;
    ``decoded`` types ``key`` and ``value``."""
    schema = _typed(_chosen(columns, include_headers, batch_metadata), decoded)
    return StructType([StructField(f.name, _spark_type(f.type), True) for f in schema])


def arrow_schema(
    columns: Sequence[str] | None = None,
    *,
    include_headers: bool = False,
    batch_metadata: bool = False,
    decoded: pa.Schema | None = None,
) -> pa.Schema:
    """The Arrow schema decoding yields for these columns: exactly what pyspark's
    ``to_arrow_schema`` makes of :func:`spark_schema`, which Spark's Python data sources
    require to the letter."""
    schema = _typed(_chosen(columns, include_headers, batch_metadata), decoded)
    return pa.schema([pa.field(f.name, _arrow_type(f.type), nullable=True) for f in schema])


#: Spark's Kafka source schema: key binary, value binary, topic string, partition int,
#: offset long, timestamp timestamp, timestampType int.
SPARK_SCHEMA: StructType = spark_schema()
#: The Arrow form of :data:`SPARK_SCHEMA`.
SPARK_ARROW_SCHEMA: pa.Schema = arrow_schema()


def conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``target``'s schema (names, types, nullability)."""
    arrays = []
    for field in target:
        column = batch.column(field.name)
        if not column.type.equals(field.type):
            column = column.cast(field.type)
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, schema=target)
