"""kafkalog: Apache Kafka's on-disk log as Apache Arrow.

Read Kafka segment files (``.log``) of every message format (magic v0, v1, v2) and every
compression straight into Arrow record batches::

    import kafkalog
    reader = kafkalog.read("/backup/kafka-logs/orders-3")   # pyarrow.RecordBatchReader
    table = reader.read_all()

The columns are those of Spark's Kafka source (``key``, ``value``, ``topic``, ``partition``,
``offset``, ``timestamp``, ``timestampType``, ``headers``), so code written against a live topic
runs unchanged on files; ``batch_metadata=True`` adds what Kafka keeps per batch.

The package's face: every public name is defined in the module of its concern and re-exported
here (``kafkalog.read`` is :func:`kafkalog.reading.read`):

- :mod:`kafkalog.reading`: read, read_bytes, read_batches, read_index, segments, schema, issues;
- :mod:`kafkalog.planning`: plan, read_items, WorkItem (a read cut for distributed tasks);
- :mod:`kafkalog.writing`: write;
- :mod:`kafkalog.checking`: verify, rebuild_indexes;
- :mod:`kafkalog.cleanup`: compact, retain; :mod:`kafkalog.internal`: internal topics;
- :mod:`kafkalog.restoring`: restore (a backup into a stopped broker's log directory);
- :mod:`kafkalog.tables`: to_delta, to_iceberg (lakehouse tables, resumable);
- :mod:`kafkalog.errors`, :mod:`kafkalog.types`; :mod:`kafkalog.spark` and
  :mod:`kafkalog.cli` on top, which import these modules and are never imported by them.
"""

from importlib.util import find_spec as _find_spec
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from kafkalog import errors, types
from kafkalog._native import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_RECORDS,
    DEFAULT_BATCH_SIZE,
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_SEGMENT_BYTES,
    DEFAULT_TARGET_BYTES,
    __version__,
)
from kafkalog.checking import rebuild_indexes, verify
from kafkalog.cleanup import compact, retain
from kafkalog.errors import (
    ConcurrentWriteError,
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    DecryptionError,
    EncryptionKeyError,
    IndexNotUsedWarning,
    InvalidArgumentError,
    KafkaLogError,
    KafkaLogFileNotFoundError,
    KafkaLogIOError,
    KafkaLogPermissionError,
    KafkaLogWarning,
    LimitExceededError,
    MissingDependencyError,
    NotASegmentError,
    SkippedBatchWarning,
    StoppedAtCorruptionWarning,
    TieredStorageError,
    TruncatedSegmentWarning,
    UndecodedRecordWarning,
    UndecodedValueWarning,
    ValueDecodeError,
)
from kafkalog.internal import (
    cluster_metadata,
    cluster_state,
    consumer_groups,
    consumer_offsets,
    remote_log_metadata,
    transactions,
)
from kafkalog.planning import WorkItem, plan, read_items
from kafkalog.reading import (
    COLUMNS,
    METADATA_COLUMNS,
    issues,
    read,
    read_batches,
    read_bytes,
    read_index,
    schema,
    segments,
)
from kafkalog.restoring import restore
from kafkalog.serving import Server, serve
from kafkalog.tables import to_delta, to_iceberg
from kafkalog.types import (
    CompactReport,
    Compression,
    IsolationLevel,
    Issue,
    OnCorrupt,
    RebuiltIndexes,
    RestoreReport,
    RetainedPartition,
    Segment,
    TimestampTypeName,
    VerifyReport,
    WrittenSegment,
)
from kafkalog.types import (
    Visibility as Visibility,
)
from kafkalog.values import export_schemas, schemas
from kafkalog.writing import write, write_schemas

if _TYPE_CHECKING:
    # Reached through __getattr__ at run time, so that ``import kafkalog`` needs no pyspark.
    from kafkalog.spark import SPARK_SCHEMA as SPARK_SCHEMA
    from kafkalog.spark import decode as decode

__all__ = [
    "__version__",
    "read",
    "read_bytes",
    "read_batches",
    "issues",
    "read_index",
    "verify",
    "segments",
    "plan",
    "read_items",
    "WorkItem",
    "rebuild_indexes",
    "write",
    "compact",
    "retain",
    "restore",
    "RestoreReport",
    "schema",
    "COLUMNS",
    "METADATA_COLUMNS",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_SEGMENT_BYTES",
    "DEFAULT_BATCH_RECORDS",
    "DEFAULT_BATCH_BYTES",
    "DEFAULT_TARGET_BYTES",
    "errors",
    "types",
    "OnCorrupt",
    "IsolationLevel",
    "Visibility",
    "Compression",
    "TimestampTypeName",
    "Segment",
    "Issue",
    "VerifyReport",
    "RebuiltIndexes",
    "WrittenSegment",
    "CompactReport",
    "RetainedPartition",
    "KafkaLogError",
    "CorruptRecordError",
    "CrcMismatchError",
    "DecompressionError",
    "LimitExceededError",
    "NotASegmentError",
    "MissingDependencyError",
    "InvalidArgumentError",
    "KafkaLogIOError",
    "KafkaLogFileNotFoundError",
    "KafkaLogPermissionError",
    "ConcurrentWriteError",
    "TieredStorageError",
    "DecryptionError",
    "EncryptionKeyError",
    "KafkaLogWarning",
    "TruncatedSegmentWarning",
    "SkippedBatchWarning",
    "StoppedAtCorruptionWarning",
    "IndexNotUsedWarning",
    "ValueDecodeError",
    "UndecodedValueWarning",
    "schemas",
    "to_delta",
    "to_iceberg",
    "write_schemas",
    "serve",
    "Server",
    "export_schemas",
]

__all__ += [
    "consumer_offsets",
    "consumer_groups",
    "transactions",
    "cluster_metadata",
    "cluster_state",
    "remote_log_metadata",
    "UndecodedRecordWarning",
]


# The Spark integration (kafkalog.spark) needs pyspark, so it is imported on first use:
# ``df.mapInArrow(kafkalog.decode, kafkalog.SPARK_SCHEMA)``. Type checkers see the two names
# through the TYPE_CHECKING import above, dir() through __dir__; they are in __all__ where
# pyspark is installed (``from kafkalog import *`` would otherwise fail on them).
_SPARK_NAMES = ("decode", "SPARK_SCHEMA")
if _find_spec("pyspark") is not None:
    __all__ += list(_SPARK_NAMES)


def __getattr__(name: str) -> _Any:
    if name in _SPARK_NAMES:
        from kafkalog import spark

        return getattr(spark, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # What the package offers: its names, the Spark ones and the module of each concern;
    # not what this file imports for itself.
    modules = {n for n, v in globals().items() if isinstance(v, _ModuleType) and n[0] != "_"}
    return sorted(set(__all__) | set(_SPARK_NAMES) | modules)
