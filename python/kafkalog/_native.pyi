"""The Rust core's Python bindings (``rust/python/``): what ``kafkalog._native`` exports.

Private: the public API is :mod:`kafkalog`. Record batches and schemas cross as objects of the
Arrow PyCapsule interface (``pyarrow.record_batch(...)``/``pyarrow.schema(...)`` take them).
Options dicts may leave out any key; the defaults are the constants below.
"""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol, TypedDict, final, type_check_only

from kafkalog.types import (
    CompactReport,
    Issue,
    OnCorrupt,
    RebuiltIndexes,
    RestoreReport,
    RetainedPartition,
    Segment,
    VerifyReport,
    Visibility,
    WrittenSegment,
)

__version__: str

#: Kafka's ``ControlRecordType`` names by id.
CONTROL_TYPES: dict[int, str]
#: Kafka's timestamp type names by id (-1: none, magic 0).
TIMESTAMP_TYPES: dict[int, str]
FINDING_KINDS: list[str]
DEFAULT_BATCH_SIZE: int
DEFAULT_MAX_DECOMPRESSED_SIZE: int
DEFAULT_INDEX_INTERVAL_BYTES: int
DEFAULT_SEGMENT_BYTES: int
DEFAULT_BATCH_RECORDS: int
DEFAULT_BATCH_BYTES: int
DEFAULT_TARGET_BYTES: int
DEFAULT_DELETE_RETENTION_MS: int

@type_check_only
class ArrowArray(Protocol):
    """A record batch exported through the Arrow PyCapsule interface."""

    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...

@type_check_only
class ArrowSchema(Protocol):
    """A schema exported through the Arrow PyCapsule interface."""

    def __arrow_c_schema__(self) -> object: ...

@type_check_only
class ArrowStream(Protocol):
    """Record batches exported through the Arrow PyCapsule interface."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

@type_check_only
class ReaderOptions(TypedDict, total=False):
    columns: list[str] | None
    batch_metadata: bool
    batch_size: int
    include_control: bool
    check_crc: bool
    on_corrupt: OnCorrupt
    max_decompressed_size: int
    topic: str | None
    partition: int | None
    topics: str | None
    list_batches: bool
    start_position: int | None
    end_position: int | None
    start_offset: int | None
    end_offset: int | None
    start_timestamp: int | None
    end_timestamp: int | None
    read_committed: bool
    visibility: Visibility
    threads: int | None
    storage_options: dict[str, str] | None
    filesystem: Any | None
    binary_view: bool
    values: dict[str, Any] | None

@type_check_only
class WriterOptions(TypedDict, total=False):
    magic: int | None
    compression: str | None
    compression_level: int | None
    timestamp_type: str | None
    log_append_time: int | None
    base_offset: int
    batch_records: int
    batch_bytes: int
    preserve_batches: bool
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    partition_leader_epoch: int
    segment_bytes: int
    index_interval_bytes: int
    overwrite: bool
    fsync: bool
    storage_options: dict[str, str] | None

#: A work item as it crosses: (path, start, end, topic, partition, base_offset, size,
#: start_offset, end_offset, aborted).
ItemTuple = tuple[
    str,
    int,
    int | None,
    str | None,
    int | None,
    int | None,
    int,
    int | None,
    int | None,
    list[tuple[int, int, int]] | None,
]
#: (start_offset, end_offset, start_timestamp, end_timestamp) of one partition.
BoundsTuple = tuple[int | None, int | None, int | None, int | None]

@final
class Reader:
    """An iterator of record batches; issues become warnings and stay in :attr:`issues`."""

    @staticmethod
    def open(paths: Sequence[str], options: ReaderOptions | None = None) -> Reader: ...
    @staticmethod
    def open_items(
        items: Sequence[ItemTuple | Sequence[Any]], options: ReaderOptions | None = None
    ) -> Reader: ...
    @staticmethod
    def from_bytes(data: bytes, options: ReaderOptions | None = None) -> Reader: ...
    @property
    def schema(self) -> ArrowSchema: ...
    @property
    def issues(self) -> list[Issue]: ...
    def __iter__(self) -> Iterator[ArrowArray]: ...
    def __next__(self) -> ArrowArray: ...

@final
class Writer:
    """Writes a partition directory batch by batch; ``abort`` leaves nothing behind."""

    def __new__(cls, path: str, options: WriterOptions) -> Writer: ...
    def write(self, batch: ArrowArray) -> None: ...
    def finish(self) -> list[WrittenSegment]: ...
    def abort(self) -> None: ...

@final
class Server:
    """A running read-only Kafka endpoint (``kafkalog.serve`` wraps it)."""

    def __new__(
        cls,
        paths: list[str],
        listen: str,
        advertise: str | None = None,
        state: str | None = None,
        topics: str | None = None,
        storage_options: Mapping[str, str] | None = None,
        echo: bool = False,
        idle_timeout_s: float = 600.0,
        max_connections: int = 1024,
        max_request_bytes: int = 16777216,
    ) -> Server: ...
    @property
    def address(self) -> tuple[str, int]: ...
    @property
    def topics(self) -> int: ...
    @property
    def partitions(self) -> int: ...
    @property
    def running(self) -> bool: ...
    def log_lines(self) -> list[str]: ...
    def close(self) -> None: ...

@final
class ControlRecord:
    """A control record as Kafka parses it."""

    @property
    def type(self) -> str: ...
    @property
    def type_id(self) -> int: ...
    @property
    def coordinator_epoch(self) -> int | None: ...

def control_record(key: bytes | None, value: bytes | None) -> ControlRecord: ...
def nearest_name(given: str, names: Sequence[str]) -> str | None: ...
def read_index(
    path: str,
    base_offset: int | None = None,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> ArrowArray: ...
def verify(
    path: str,
    max_decompressed_size: int = ...,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> VerifyReport: ...
def rebuild_indexes(
    path: str, index_interval_bytes: int = ..., max_decompressed_size: int = ...
) -> list[RebuiltIndexes]: ...
def segments(
    paths: Sequence[str],
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
    topics: str | None = None,
) -> list[Segment]: ...
def read_topics(
    paths: Sequence[str],
    topics: str | None = None,
    typed: bool = False,
    schemas_topic: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> tuple[list[str], list[str]]:
    """The topics a read of ``paths`` takes (``topics``: a pattern of whole topic names), in
    reading order, and those a typed read (``typed``) leaves out: Kafka's internal topics and
    the registry's storage topic, when the read spans several topics and the pattern does not
    name them."""

def plan(
    segments: Sequence[tuple[str, str | None, int | None, int | None]],
    *,
    default_bounds: BoundsTuple = ...,
    bounds: Mapping[tuple[str | None, int | None], BoundsTuple] | None = None,
    read_committed: bool = False,
    target_bytes: int | None = None,
    max_decompressed_size: int = ...,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
    visibility: Visibility = "consumer",
) -> tuple[list[ItemTuple], list[Issue]]: ...
def list_offsets(
    segments: Sequence[tuple[str, str | None, int | None, int | None]],
    *,
    read_committed: bool = False,
    timestamp: int | None = None,
    timestamps: Mapping[tuple[str | None, int | None], int] | None = None,
    max_decompressed_size: int = ...,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
    visibility: Visibility = "consumer",
) -> tuple[
    list[tuple[str | None, int | None, int | None, int | None, int | None, list[tuple[int, int]]]],
    list[Issue],
]: ...
def rate_limit(ranges: Sequence[tuple[int, int]], limit: int) -> list[int]: ...
def segment_origin(path: str) -> tuple[str | None, int | None, int | None]: ...
def base_offset_from_name(path: str) -> int | None:
    """The base offset in a segment or index file's name (``00000000000000001234.log``:
    1234; a tiered-storage ``<offset>-<segment id>.log`` too), ``None`` where the name does not
    give one."""

def snapshot_id(path: str) -> tuple[int, int] | None:
    """A KRaft snapshot's ``(end offset, epoch)`` from its file name
    (``<20-digit end offset>-<10-digit epoch>.checkpoint``), ``None`` for any other name."""

def index_sanity_check(
    path: str, storage_options: Mapping[str, str] | None = None, filesystem: Any | None = None
) -> str | None:
    """Kafka's sanity check of a ``.index`` or ``.timeindex`` (``kafka-dump-log
    --index-sanity-check``), by the core's checks: ``None`` when it passes, else what is
    wrong, in ``kafka-dump-log``'s words."""

def index_lookup(
    index_path: str, offsets: Sequence[int], storage_options: Mapping[str, str] | None = None
) -> list[int]:
    """Where Kafka's offset index lookup starts the search for each offset: the position of
    the ``.index``'s largest entry at or below it, 0 where there is none or no index."""

def batch_first_timestamps(listing: ArrowArray | ArrowStream) -> list[int]:
    """The earliest timestamp each batch header of a :func:`kafkalog.read_batches` listing
    gives for its records (-1 for none): a v2 CreateTime batch's base timestamp unless a
    delete horizon took its place, else the batch's max timestamp."""

def partition_dir(root: str, topic: str, partition: int) -> str: ...
def partition_dir_name(topic: str, partition: int) -> str: ...
def is_staging_dir_name(name: str) -> bool: ...
def spark_write_job(options: dict[str, str], streaming: bool) -> str:
    """The job (JSON) of Spark's write options: checked; a batch job's staging made."""

class SparkTaskWriter:
    """A Spark write task through the core (rust/spark/writing.rs)."""

    def __new__(cls, job: str) -> SparkTaskWriter: ...
    def write(self, batch: Any) -> None: ...
    def finish(self) -> str: ...
    def abort(self) -> None: ...

def spark_write_commit(job: str, messages: list[str | None], overwrite: bool) -> None: ...
def spark_write_abort(job: str) -> None: ...
def spark_stream_commit(job: str, messages: list[str | None], epoch: int) -> None: ...
def spark_stream_abort(job: str, messages: list[str | None]) -> None: ...
def publish(
    staged: str,
    target: str,
    overwrite: bool,
    fsync: bool = True,
    storage_options: Mapping[str, str] | None = None,
) -> None: ...
def create_job_staging(parent: str, tag: str) -> str: ...
def remove_staging(path: str, storage_options: Mapping[str, str] | None = None) -> None: ...
def existing_targets(
    targets: list[str], storage_options: Mapping[str, str] | None = None
) -> list[str]: ...
def upload_file(
    source: str, target: str, storage_options: Mapping[str, str] | None = None
) -> None: ...
def file_size(
    path: str, storage_options: Mapping[str, str] | None = None, filesystem: Any | None = None
) -> int: ...
def read_range(
    path: str,
    start: int,
    length: int,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> bytes: ...
def path_kind(
    path: str, storage_options: Mapping[str, str] | None = None, filesystem: Any | None = None
) -> Literal["file", "dir", "missing"]: ...
def list_files(
    path: str, storage_options: Mapping[str, str] | None = None, filesystem: Any | None = None
) -> list[tuple[str, int]]: ...

class AppendResult(TypedDict):
    skipped: bool
    start_offset: int
    next_offset: int
    records: int
    batches: int
    truncated_bytes: int

def append(
    target: str,
    staged: Sequence[str],
    *,
    writer_id: str | None = None,
    sequence: int | None = None,
    segment_bytes: int = ...,
    index_interval_bytes: int = ...,
    fsync: bool = True,
    storage_options: Mapping[str, str] | None = None,
    max_rewrite_bytes: int = ...,
) -> AppendResult: ...
def compact(
    src: str,
    dst: str,
    *,
    now_ms: int | None = None,
    delete_retention_ms: int = ...,
    min_compaction_lag_ms: int = 0,
    max_compaction_lag_ms: int = ...,
    min_cleanable_ratio: float | None = None,
    segment_bytes: int = ...,
    max_index_size: int = ...,
    index_interval_bytes: int = ...,
    log_start_offset: int | None = None,
    high_watermark: int | None = None,
    first_dirty_offset: int | None = None,
    producer_id_expiration_ms: int | None = ...,
    max_decompressed_size: int = ...,
    overwrite: bool = False,
    on_corrupt: str = "error",
    offset_map_keys: Sequence[bytes] | None = None,
    offset_map_offsets: Sequence[int] | None = None,
    plan_only: bool = False,
) -> CompactReport: ...
def restore(
    sources: Sequence[str],
    to: str,
    *,
    topics: str | None = None,
    until_ms: int | None = None,
    groups: bool = False,
    plan: bool = False,
    fsync: bool = True,
    storage_options: Mapping[str, str] | None = None,
) -> RestoreReport: ...
def retain(
    path: str,
    *,
    now_ms: int | None = None,
    retention_ms: int | None = None,
    retention_bytes: int | None = None,
    log_start_offset: int | None = None,
    high_watermark: int | None = None,
    delete_policy: bool = True,
    dry_run: bool = True,
    write_checkpoint: bool = False,
) -> list[RetainedPartition]: ...

class InternalIssue(TypedDict):
    message: str
    path: str | None
    position: int | None
    offset: int | None
    key: bytes | None
    value: bytes | None
    corrupt: bool

@final
class InternalFold:
    """Folds an internal topic's records (``rust/arrow/internal_tables.rs``)."""

    def __new__(
        cls,
        kind: str,
        *,
        history: bool = False,
        on_corrupt: str = "error",
        as_of: int | None = None,
        retention_ms: int | None = None,
    ) -> InternalFold: ...
    def feed(
        self,
        data: ArrowArray | ArrowStream,
        path: str | None = None,
        files: Sequence[tuple[int, str]] | None = None,
    ) -> None: ...
    def set_log_end(self, topic: str, partition: int, log_end: int) -> None: ...
    def finish(self) -> ArrowArray: ...
    def take_issues(self) -> list[InternalIssue]: ...

def cluster_state_tables(
    path: str, storage_options: Mapping[str, str] | None = None
) -> list[tuple[str, ArrowArray]]:
    """The cluster's state from the KRaft metadata under ``path`` (the latest snapshot, then
    the log from its end offset on), read and replayed by the core: (name, table) pairs for
    topics, partitions, configs, brokers and features."""

def schemas_table(
    path: str,
    topic: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> tuple[ArrowArray, list[tuple[int, str]]]:
    """Schema Registry's storage topic under ``path`` folded into its table, with the records
    the fold passed over as (offset, why)."""

def resolve_values(
    values: Mapping[str, Any],
    topic: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
    files: Sequence[tuple[str, str | None, int | None]] | None = None,
) -> tuple[dict[str, Any], ArrowSchema]:
    """A read's ``values`` option resolved once (registry read, reader schemas explicit),
    and the Arrow schema of the decoded ``key`` and ``value`` columns (and error columns).
    ``files``: (path, topic, partition) of segments read, where the Protobuf messages of
    sides that name none are found (the first records of each partition)."""

def encode_values(
    array: Any,
    values: Mapping[str, Any],
    side: str,
    topic: str | None = None,
    path: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> ArrowArray:
    """A typed key or value column encoded (Avro with Confluent's framing, or UTF-8)."""

def json_texts(array: Any) -> list[str | None]:
    """Each value of a typed key or value column as JSON text (None where null)."""

def registry_records(
    schemas: Sequence[
        tuple[str, int | None, int | None, str, str, Sequence[tuple[str, str, int]], bool]
    ],
) -> tuple[list[tuple[bytes, bytes | None]], ArrowArray]:
    """Schemas (subject, version, id, type, schema, references, deleted) registered in order
    as Schema Registry registers them: its storage topic's records, and its table."""

def registry_import_requests(
    path: str,
    topic: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    filesystem: Any | None = None,
) -> tuple[list[str], list[tuple[int, str]]]:
    """The registry under ``path`` as the JSON requests that import it into a Schema Registry,
    with the records the fold passed over as (offset, why)."""

def internal_table(
    kind: str,
    topic: str,
    path: str,
    *,
    history: bool = False,
    on_corrupt: str = "error",
    as_of: int | None = None,
    retention_ms: int | None = None,
    log_ends: bool = False,
    storage_options: Mapping[str, str] | None = None,
) -> tuple[ArrowArray, list[InternalIssue]]:
    """An internal topic's table from the partitions of ``topic`` under ``path``: found as
    :func:`kafkalog.read` finds files, read ``read_committed`` and folded by the core (with
    ``log_ends``, each data partition's log end offset from its last segment, for the lag
    column); and the fold's issues."""

def dump_internal_record(
    topic_name: str, key: bytes | None, value: bytes | None, offset: int
) -> tuple[str | None, str | None]: ...
def dump_control_record(control_type: int, value: bytes | None) -> str | None: ...
def decode_internal_record(topic_name: str, key: bytes | None, value: bytes | None) -> str: ...

# Spark's options and column shapes (rust/spark/), for the Python data source; the JVM source
# calls the same functions through JNI.
def spark_read_options(options: Mapping[str, str], streaming: bool = False) -> str:
    """The data source's read options checked; the answer as JSON."""

def spark_typed_options(options: Mapping[str, str]) -> str | None:
    """The typed keys and values the options ask for, with paths and storage, as JSON."""

def spark_columns(options: Mapping[str, str]) -> list[str]:
    """The columns the options read."""

def spark_schema(columns: Sequence[str], decoded: ArrowSchema | None = None) -> str:
    """The Spark schema (JSON of a StructType) of kafkalog's columns, typed as decoded."""

def spark_arrow_schema(columns: Sequence[str], decoded: ArrowSchema | None = None) -> ArrowSchema:
    """The Arrow schema of the same columns in the types holding Spark's values."""

def spark_bool(value: str, name: str) -> bool: ...
def spark_subscription(
    topics: str | None = None,
    pattern: str | None = None,
    assign: str | None = None,
    partitions: str | None = None,
) -> str: ...
def spark_subscribed(
    parts: Sequence[tuple[str | None, int | None]],
    topics: str | None = None,
    pattern: str | None = None,
    assign: str | None = None,
    partitions: str | None = None,
) -> list[bool]: ...
def spark_typed_left_out(
    found: Sequence[str],
    topics: str | None = None,
    pattern: str | None = None,
    assign: str | None = None,
    partitions: str | None = None,
    schemas_topic: str | None = None,
) -> list[str]: ...
def spark_bounds(
    start_offset: str | None = None,
    end_offset: str | None = None,
    start_timestamp: str | None = None,
    end_timestamp: str | None = None,
    strategy: str = "error",
) -> str: ...
def spark_check_partitions(
    bounds: str, found: Sequence[tuple[str | None, int | None]], require_all: bool
) -> None: ...
def spark_batch(batch: Any) -> Any:
    """A batch's columns in the Arrow types holding Spark's values."""
