"""The types of kafkalog's API: the values its string options accept (``Literal`` types) and
the shape of each dict it returns (``TypedDict`` types).

The names are the core's (``rust/``): one spelling for each kind, in snake case, whether it is
an error's :attr:`~kafkalog.KafkaLogError.kind`, a warning's ``kind``, an issue's or a
finding of :func:`kafkalog.verify`.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = [
    "RestoreReport",
    "RestoredPartition",
    "RestoredGroup",
    "RestoredCommit",
    "RestoredTransaction",
    "OnCorrupt",
    "IsolationLevel",
    "Compression",
    "TimestampTypeName",
    "ErrorKind",
    "IssueKind",
    "Segment",
    "Issue",
    "Finding",
    "FindingKind",
    "VerifiedSegment",
    "VerifyReport",
    "RebuiltIndexes",
    "WrittenSegment",
    "CompactReport",
    "CompactOptions",
    "RemovedSegment",
    "RetainedPartition",
]

#: What a read does at a corrupt batch: raise, leave it out (and warn), or end the partition
#: there (and warn), as Kafka's log recovery does.
OnCorrupt = Literal["error", "skip", "stop"]

#: A consumer's ``isolation.level``.
IsolationLevel = Literal["read_uncommitted", "read_committed"]

#: What a read returns: what a consumer could fetch (within the broker's checkpoints), or
#: every byte on disk.
Visibility = Literal["consumer", "all"]

#: Kafka's compression codecs (``zstd`` from magic 2 on).
Compression = Literal["none", "gzip", "snappy", "lz4", "zstd"]

#: The timestamp types a writer may give a batch.
TimestampTypeName = Literal["CreateTime", "LogAppendTime"]

#: :attr:`kafkalog.KafkaLogError.kind`.
ErrorKind = Literal[
    "corrupt",
    "crc_mismatch",
    "decompression",
    "limit_exceeded",
    "invalid_argument",
    "io",
    "conflict",
    "internal",
    "tiered_storage",
    "decryption",
    "encryption_key",
    "value",
    "not_a_segment",
]

#: What a read passed over without failing (each also a :class:`kafkalog.KafkaLogWarning`):
#: a partial batch or zero bytes at the end of a segment, a batch left out, a partition ended
#: at a corrupt batch, an index not used for a seek.
IssueKind = Literal["torn_tail", "zero_tail", "skipped_batch", "stopped", "index_not_used"]

FindingKind = Literal[
    "corrupt_batch",
    "crc_mismatch",
    "offsets_not_increasing",
    "offset_before_segment_base",
    "offset_past_next_segment",
    "torn_tail",
    "unreadable",
    "index_missing",
    "index_corrupt",
    "index_entry_not_at_batch",
    "index_entry_after_batch",
    "index_mismatch",
    "time_index_missing",
    "time_index_corrupt",
    "time_index_offset_not_found",
    "time_index_timestamp_mismatch",
    "txn_index_corrupt",
    "txn_index_missing_entry",
    "txn_index_unknown_entry",
]
"""What a :func:`kafkalog.verify` finding is about (the core's ``FindingKind``, in the order
of the checks; ``kafkalog._native.FINDING_KINDS`` lists the same)."""


class Segment(TypedDict):
    """A segment file :func:`kafkalog.segments` lists."""

    path: str
    topic: str | None
    partition: int | None
    base_offset: int | None
    #: Bytes, where the listing says (``None`` where it does not).
    size: int | None
    #: The partition's log start offset and high watermark from the broker's checkpoint
    #: files beside it (``None`` where they do not list it): a consumer fetches
    #: ``[log_start_offset, high_watermark)`` (``None`` too where a checkpoint file cannot be
    #: parsed: :func:`kafkalog.read` says why).
    log_start_offset: int | None
    high_watermark: int | None
    #: Why the whole segment is outside that, when its offsets say so:
    #: ``"above_high_watermark"`` or ``"below_log_start"``; else ``None``.
    hidden: str | None
    #: Whether it continues the log of the segment listed before it: the same partition in
    #: the same directory, or a partition's broker segments after its tiered-storage ones.
    continues: bool


class Issue(TypedDict):
    """Something a read passed over, as :func:`kafkalog.plan` reports it."""

    kind: IssueKind
    message: str
    path: str | None
    position: int | None
    offset: int | None
    #: Bytes passed over.
    bytes: int | None


class Finding(TypedDict):
    """A problem or note of :func:`kafkalog.verify`, or a batch :func:`kafkalog.compact`
    skipped. For ``verify``, ``kind`` is a :data:`FindingKind`; for a batch ``compact``
    skipped, the error's kind (``corrupt``, ``crc_mismatch``, ...)."""

    kind: str
    message: str
    path: str | None
    position: int | None
    offset: int | None


class VerifiedSegment(TypedDict):
    """One segment in :func:`kafkalog.verify`'s report."""

    path: str
    topic: str | None
    partition: int | None
    base_offset: int | None
    bytes: int
    batches: int
    records: int
    first_offset: int | None
    last_offset: int | None
    max_timestamp: int | None
    trailing_bytes: int
    index_entries: int | None
    time_index_entries: int | None
    aborted_transactions: int | None


class VerifyReport(TypedDict):
    """:func:`kafkalog.verify`'s result."""

    ok: bool
    segments: list[VerifiedSegment]
    problems: list[Finding]
    notes: list[Finding]


class RebuiltIndexes(TypedDict):
    """One segment whose indexes :func:`kafkalog.rebuild_indexes` wrote."""

    path: str
    index_entries: int
    time_index_entries: int
    aborted_transactions: int
    valid_bytes: int
    log_bytes: int
    #: Why indexing stopped early, or ``None``.
    stopped: str | None


class WrittenSegment(TypedDict):
    """One segment :func:`kafkalog.write` (or :func:`kafkalog.compact`) wrote."""

    path: str
    base_offset: int
    last_offset: int
    batches: int
    records: int
    bytes: int


class CompactOptions(TypedDict, total=False):
    """:func:`kafkalog.compact`'s keyword options (the topic configs of Kafka's log cleaner,
    named after them), for functions that pass them on."""

    delete_retention_ms: int
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    min_cleanable_ratio: float | None
    segment_bytes: int
    max_index_size: int
    index_interval_bytes: int
    log_start_offset: int | None
    high_watermark: int | None
    first_dirty_offset: int | None
    producer_id_expiration_ms: int | None
    now: int | None
    max_decompressed_size: int
    overwrite: bool
    on_corrupt: OnCorrupt


class CompactReport(TypedDict):
    """:func:`kafkalog.compact`'s report."""

    cleaned: bool
    now_ms: int
    log_start_offset: int
    log_end_offset: int
    first_dirty_offset: int
    first_uncleanable_offset: int
    next_dirty_offset: int
    cleanable_ratio: float
    delete_horizon_ms: int | None
    segments_cleaned: int
    records_read: int
    records_written: int
    batches_read: int
    batches_written: int
    bytes_read: int
    bytes_written: int
    invalid_records: int
    skipped: list[Finding]
    segments: list[WrittenSegment]


class RemovedSegment(TypedDict):
    """A segment :func:`kafkalog.retain` removed (or would remove)."""

    path: str
    base_offset: int
    bytes: int
    largest_timestamp: int
    #: The retention rule: ``log_start_offset``, ``retention_bytes`` or ``retention_ms``.
    reason: str


class RetainedPartition(TypedDict):
    """One partition in :func:`kafkalog.retain`'s result."""

    dir: str
    topic: str | None
    partition: int | None
    removed: list[RemovedSegment]
    log_start_offset_before: int
    log_start_offset: int
    log_end_offset: int
    segments_left: int
    bytes_left: int
    rolled: bool
    dry_run: bool


class RestoredTransaction(TypedDict):
    """A transaction the backup left open, aborted by :func:`kafkalog.restore`."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    marker_offset: int


class RestoredPartition(TypedDict):
    """One partition in :func:`kafkalog.restore`'s report."""

    topic: str
    partition: int
    dir: str
    log_start_offset: int
    log_end_offset: int
    segments: int
    batches: int
    records: int
    bytes: int
    leader_epoch: int
    epochs_lowered: int
    cut: str | None
    aborted: list[RestoredTransaction]


class RestoredCommit(TypedDict):
    """One committed offset :func:`kafkalog.restore` wrote for a group."""

    topic: str
    partition: int
    offset: int
    metadata: str
    commit_timestamp: int


class RestoredGroup(TypedDict):
    """One consumer group in :func:`kafkalog.restore`'s report."""

    group: str
    offsets_partition: int
    written_at: int | None
    note: str | None
    commits: list[RestoredCommit]


class RestoreReport(TypedDict):
    """What :func:`kafkalog.restore` wrote (or, with ``plan=True``, would write)."""

    target: str
    plan: bool
    partitions: list[RestoredPartition]
    missing: list[tuple[str, int]]
    groups: list[RestoredGroup]
    expired_commits: int
    notes: list[str]
