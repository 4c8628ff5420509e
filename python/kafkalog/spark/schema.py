"""Schemas: kafkalog's Arrow columns as Spark types, and the exact Arrow form pyspark expects
back from a Python data source or ``mapInArrow``. The Spark types are the core's
(``rust/spark/shapes.rs``, which the JVM source calls too): typed keys and values in types
Spark can write to Parquet and ORC (``docs/spark-jvm.md`` has the table).

Spark's Kafka source has seven columns (``key``, ``value``, ``topic``, ``partition``,
``offset``, ``timestamp``, ``timestampType``) and ``headers`` only with
``includeHeaders=true``; :data:`SPARK_SCHEMA` is exactly that default.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql.types import StructType

from kafkalog import _native, reading

__all__ = [
    "SPARK_COLUMNS",
    "SPARK_SCHEMA",
    "SPARK_ARROW_SCHEMA",
    "spark_columns",
    "spark_schema",
    "arrow_schema",
    "conform",
    "to_spark",
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


def _arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow layout pyspark expects for a Spark type, of the core's Arrow type holding its
    values (``to_arrow_type`` with the UTC time zone): every field nullable, list items named
    ``element``, enums' dictionaries and fixed bytes in plain layouts."""
    if pa.types.is_dictionary(t):
        return _arrow_type(t.value_type)
    if pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz is not None else None)
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


def spark_schema(
    columns: Sequence[str] | None = None,
    *,
    include_headers: bool = False,
    batch_metadata: bool = False,
    decoded: pa.Schema | None = None,
) -> StructType:
    """The Spark schema of these kafkalog columns (default: Spark's Kafka source schema, with
    ``headers`` and the batch metadata columns when asked), every field nullable as there;
    ``decoded`` types ``key`` and ``value`` (and adds their error columns)."""
    text = _native.spark_schema(_chosen(columns, include_headers, batch_metadata), decoded)
    return StructType.fromJson(json.loads(text))


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
    chosen = _chosen(columns, include_headers, batch_metadata)
    schema = pa.schema(_native.spark_arrow_schema(chosen, decoded))
    return pa.schema([pa.field(f.name, _arrow_type(f.type), nullable=True) for f in schema])


#: Spark's Kafka source schema: key binary, value binary, topic string, partition int,
#: offset long, timestamp timestamp, timestampType int.
SPARK_SCHEMA: StructType = spark_schema()
#: The Arrow form of :data:`SPARK_SCHEMA`.
SPARK_ARROW_SCHEMA: pa.Schema = arrow_schema()


def to_spark(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch``'s columns in the types that hold Spark's values (the core's conversion)."""
    return pa.record_batch(_native.spark_batch(batch))


def conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``target``'s schema (names, types, nullability): its values in
    Spark's types (:func:`to_spark`), then in the layouts pyspark expects."""
    batch = to_spark(batch)
    arrays = []
    for field in target:
        column = batch.column(field.name)
        if not column.type.equals(field.type):
            column = column.cast(field.type)
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, schema=target)
