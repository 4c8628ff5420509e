"""Kafka log bytes built by independent implementations, for tests.

kafkalog is checked against two Kafka client libraries that can *write* Kafka's record formats:

- kafka-python: ``kafka.record.memory_records.MemoryRecordsBuilder`` (which drives
  ``kafka.record.legacy_records.LegacyRecordBatchBuilder`` for magic v0/v1 and
  ``kafka.record.default_records.DefaultRecordBatchBuilder`` for magic v2);
- aiokafka: ``aiokafka.record.legacy_records.LegacyRecordBatchBuilder`` and
  ``aiokafka.record.default_records.DefaultRecordBatchBuilder`` (C extensions when built).

kafka-python's gzip output is made deterministic (gzip MTIME 0, as Kafka's Java writer).

A client builds what a *producer* sends; a broker then assigns offsets before appending the
batch to a segment. :func:`build_batch` does the same in-place rewrites a broker does
(Kafka's ``LogValidator``; see ``docs/format.md`` sections 1-2):

- v2: the batch's baseOffset (outside the CRC), optionally the partition leader epoch (outside
  the CRC) and, for LogAppendTime, the timestamp-type attribute bit and maxTimestamp (CRC-32C
  recomputed);
- v0/v1 compressed: the wrapper's offset becomes the offset of the last inner message (inner
  offsets are absolute for v0 and relative for v1), the v1 wrapper timestamp becomes the max
  inner timestamp (CreateTime) or the append time (LogAppendTime) (CRC-32 recomputed);
- v1 uncompressed with LogAppendTime: each message's timestamp and attribute bit 3.

Control batches (transaction markers) cannot be written by either library (only brokers write
them), so :func:`control_batch` builds one by hand with ``struct`` and kafka-python's CRC-32C.

Records are :class:`Rec` values (or dicts with the same keys). A :class:`Segment` holds the
bytes plus the records with the absolute offsets they were given; :func:`expected_rows` turns
them into the rows Kafka's consumer (and Spark's Kafka source) would show.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import aiokafka.record.default_records as aio_default
import aiokafka.record.legacy_records as aio_legacy
import kafka.codec
import kafka.record.default_records as kp_default
import kafka.record.legacy_records as kp_legacy
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords
from kafka.record.memory_records import MemoryRecordsBuilder as KpMemoryRecordsBuilder
from kafka.record.util import calc_crc32c

__all__ = [
    "CODEC_IDS",
    "CODEC_NAMES",
    "MAGIC_CODECS",
    "LIBRARIES",
    "CREATE_TIME",
    "LOG_APPEND_TIME",
    "NO_TIMESTAMP_TYPE",
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "Rec",
    "Segment",
    "supports",
    "build_batch",
    "build_segment",
    "kafka_python_batch",
    "kafka_python_segment",
    "aiokafka_batch",
    "aiokafka_segment",
    "control_batch",
    "with_records_stream",
    "expected_rows",
    "segment_rows",
    "as_rec",
    "kafka_python_xxhash",
    "kafka_python_deterministic_gzip",
    "library_batches",
    "xxh32",
    "write_partition",
]

#: Kafka's compression codec ids (attribute bits 0-2).
CODEC_IDS: dict[str, int] = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CODEC_NAMES: dict[int, str] = {v: k for k, v in CODEC_IDS.items()}

#: Every (magic, codec) pair Kafka can store: zstd exists only for magic v2.
MAGIC_CODECS: tuple[tuple[int, str], ...] = (
    *((0, c) for c in ("none", "gzip", "snappy", "lz4")),
    *((1, c) for c in ("none", "gzip", "snappy", "lz4")),
    *((2, c) for c in ("none", "gzip", "snappy", "lz4", "zstd")),
)

LIBRARIES: tuple[str, ...] = ("kafka-python", "aiokafka")

#: Timestamp types as Kafka (and Spark's ``timestampType`` column) number them.
NO_TIMESTAMP_TYPE = -1
CREATE_TIME = 0
LOG_APPEND_TIME = 1

#: Control record types of transaction markers (key = int16 version, int16 type).
CONTROL_ABORT = 0
CONTROL_COMMIT = 1

_BIG_BATCH = 1 << 26  # builders refuse records past batch_size; never let that happen


@dataclass(frozen=True)
class Rec:
    """One record as a producer hands it over.

    ``timestamp`` is in ms (ignored for magic v0). ``headers`` are ``(str, bytes | None)``
    pairs (magic v2 only). ``offset`` is the absolute offset, filled in by the builders when
    left as ``None`` (next offset after the previous record).
    """

    key: bytes | None = None
    value: bytes | None = None
    timestamp: int = 0
    headers: tuple[tuple[str, bytes | None], ...] = ()
    offset: int | None = None


def as_rec(r: Rec | Mapping[str, Any] | Sequence[Any]) -> Rec:
    """A :class:`Rec` from a Rec, a dict with Rec's field names, or a (key, value, ts) tuple."""
    if isinstance(r, Rec):
        return r
    if isinstance(r, Mapping):
        d = dict(r)
        d["headers"] = tuple(tuple(h) for h in d.get("headers") or ())
        return Rec(**d)
    return as_rec(dict(zip(("key", "value", "timestamp", "headers", "offset"), r, strict=False)))


@dataclass
class Segment:
    """Bytes of concatenated batches and what went into them.

    ``records`` carry absolute offsets; ``batches`` has one dict per batch built (for v0/v1
    uncompressed, one per *builder call*, which Kafka stores as one log entry per record).
    """

    data: bytes
    magic: int | None
    codec: str | None
    records: list[Rec] = field(default_factory=list)
    batches: list[dict[str, Any]] = field(default_factory=list)
    timestamp_type: int = CREATE_TIME
    log_append_time: int | None = None

    def __add__(self, other: Segment) -> Segment:
        """Concatenate two segments (e.g. a message format upgrade, v1 then v2)."""
        return Segment(
            data=self.data + other.data,
            magic=self.magic if self.magic == other.magic else None,
            codec=self.codec if self.codec == other.codec else None,
            records=self.records + other.records,
            batches=self.batches + other.batches,
            timestamp_type=self.timestamp_type,
            log_append_time=self.log_append_time,
        )


def supports(library: str, magic: int, codec: str) -> bool:
    """Whether ``library`` can write ``codec`` at ``magic`` (aiokafka refuses LZ4 for v0)."""
    if (magic, codec) not in MAGIC_CODECS:
        return False
    return not (library == "aiokafka" and magic == 0 and codec == "lz4")


# --- XXH32 (for kafka-python's "broken" v0 LZ4 header checksum) -------------------------------
#
# kafka-python frames v0 LZ4 with Kafka's KAFKA-3160 header checksum and needs the ``xxhash``
# package for it, which is not installed here. XXH32 written from its specification, offered to
# kafka-python while it builds or reads v0 LZ4 (see docs/format.md 3.3).

_P1, _P2, _P3, _P4, _P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """The XXH32 hash of ``data``."""
    data = bytes(data)
    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while i + 16 <= n:
            for j in range(4):
                lane = int.from_bytes(data[i + 4 * j : i + 4 * j + 4], "little")
                v[j] = (_rotl((v[j] + lane * _P2) & _M32, 13) * _P1) & _M32
            i += 16
        acc = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        acc = (seed + _P5) & _M32
    acc = (acc + n) & _M32
    while i + 4 <= n:
        lane = int.from_bytes(data[i : i + 4], "little")
        acc = (_rotl((acc + lane * _P3) & _M32, 17) * _P4) & _M32
        i += 4
    while i < n:
        acc = (_rotl((acc + data[i] * _P5) & _M32, 11) * _P1) & _M32
        i += 1
    acc ^= acc >> 15
    acc = (acc * _P2) & _M32
    acc ^= acc >> 13
    acc = (acc * _P3) & _M32
    acc ^= acc >> 16
    return acc


class _XXH32Digest:
    def __init__(self, data: bytes) -> None:
        self._h = xxh32(data)

    def digest(self) -> bytes:  # canonical (big-endian) form, as the xxhash package gives
        return self._h.to_bytes(4, "big")


class _XXHashModule:
    xxh32 = _XXH32Digest


@contextlib.contextmanager
def kafka_python_xxhash() -> Iterator[None]:
    """Let kafka-python encode/decode magic v0 LZ4 without the ``xxhash`` package."""
    if kafka.codec.xxhash is not None:
        yield
        return
    kafka.codec.xxhash = _XXHashModule
    try:
        yield
    finally:
        kafka.codec.xxhash = None


def _gzip_mtime_0(payload: bytes, compresslevel: int | None = None) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=compresslevel or 9, mtime=0) as f:
        f.write(payload)
    return buf.getvalue()


@contextlib.contextmanager
def kafka_python_deterministic_gzip() -> Iterator[None]:
    """kafka-python's gzip streams carry the current time (gzip MTIME), so equal input gives
    different bytes from one second to the next. Kafka's Java writer puts MTIME 0; do the same
    (same ``gzip`` module and level, only the header's time differs)."""
    saved = kp_default.gzip_encode, kp_legacy.gzip_encode
    kp_default.gzip_encode = kp_legacy.gzip_encode = _gzip_mtime_0
    try:
        yield
    finally:
        kp_default.gzip_encode, kp_legacy.gzip_encode = saved


# --- the raw, producer-side builds ------------------------------------------------------------


def _builder_offsets(magic: int, codec: str, base_offset: int, recs: list[Rec]) -> list[int]:
    """Offsets a producer writes into its batch: deltas for v2, relative inner offsets for a
    v1 wrapper, absolute offsets otherwise (v0 wrapper inner messages, uncompressed v0/v1)."""
    relative = magic == 2 or (magic == 1 and codec != "none")
    return [r.offset - base_offset if relative else r.offset for r in recs]


def _kafka_python_raw(
    magic: int,
    codec: str,
    base_offset: int,
    recs: list[Rec],
    *,
    transactional: bool,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> bytes:
    offsets = _builder_offsets(magic, codec, base_offset, recs)
    builder = KpMemoryRecordsBuilder(
        magic,
        CODEC_IDS[codec],
        _BIG_BATCH,
        offset=offsets[0],
        transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )
    for off, r in zip(offsets, recs, strict=True):
        builder.skip(off - builder.next_offset())  # offset gaps, as left by compaction
        meta = builder.append(r.timestamp, r.key, r.value, list(r.headers))
        assert meta is not None and meta.offset == off, (meta, off)
    with kafka_python_xxhash(), kafka_python_deterministic_gzip():
        builder.close()
    return bytes(builder.buffer())


def _aiokafka_raw(
    magic: int,
    codec: str,
    base_offset: int,
    recs: list[Rec],
    *,
    transactional: bool,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> bytes:
    offsets = _builder_offsets(magic, codec, base_offset, recs)
    if magic == 2:
        builder = aio_default.DefaultRecordBatchBuilder(
            magic,
            CODEC_IDS[codec],
            int(transactional),
            producer_id,
            producer_epoch,
            base_sequence,
            _BIG_BATCH,
        )
    else:
        if transactional or producer_id != -1:
            raise ValueError("magic v0/v1 have no producer id or transactions")
        builder = aio_legacy.LegacyRecordBatchBuilder(magic, CODEC_IDS[codec], _BIG_BATCH)
    for off, r in zip(offsets, recs, strict=True):
        headers = list(r.headers) if magic == 2 else None
        meta = builder.append(off, r.timestamp, r.key, r.value, headers)
        assert meta is not None and meta.offset == off, (meta, off)
    return bytes(builder.build())


_RAW_BUILDERS = {"kafka-python": _kafka_python_raw, "aiokafka": _aiokafka_raw}


# --- broker-side rewrites ---------------------------------------------------------------------

_V2_HEADER = struct.Struct(">qiibIhiqqqhii")
_LEGACY_V0 = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_LEGACY_V1 = struct.Struct(">qiIbbq")  # ... timestamp


def _legacy_entries(buf: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each log entry in a v0/v1 message set."""
    pos = 0
    while pos < len(buf):
        (size,) = struct.unpack_from(">i", buf, pos + 8)
        yield pos, pos + 12 + size
        pos += 12 + size


def _legacy_rewrite(
    entry: bytearray, *, offset: int | None, timestamp: int | None, log_append: bool
) -> None:
    """Set a v0/v1 entry's offset, v1 timestamp and timestamp-type bit; fix its CRC-32."""
    if offset is not None:
        struct.pack_into(">q", entry, 0, offset)
    if entry[16] == 1:
        if timestamp is not None:
            struct.pack_into(">q", entry, 18, timestamp)
        if log_append:
            entry[17] |= 0x08
    struct.pack_into(">I", entry, 12, zlib.crc32(entry[16:]))


def _broker_rewrite(
    raw: bytes,
    magic: int,
    codec: str,
    base_offset: int,
    recs: list[Rec],
    *,
    log_append_time: int | None,
    partition_leader_epoch: int | None,
) -> bytes:
    buf = bytearray(raw)
    if magic == 2:
        struct.pack_into(">q", buf, 0, base_offset)
        if partition_leader_epoch is not None:
            struct.pack_into(">i", buf, 12, partition_leader_epoch)
        if log_append_time is not None:
            (attrs,) = struct.unpack_from(">h", buf, 21)
            struct.pack_into(">h", buf, 21, attrs | 0x08)
            struct.pack_into(">q", buf, 35, log_append_time)
            struct.pack_into(">I", buf, 17, calc_crc32c(bytes(buf[21:])))
        return bytes(buf)
    if codec != "none":
        # one wrapper message; its offset is that of the last inner message
        if magic == 1:
            ts = log_append_time if log_append_time is not None else max(r.timestamp for r in recs)
        else:
            ts = None
        _legacy_rewrite(
            buf, offset=recs[-1].offset, timestamp=ts, log_append=log_append_time is not None
        )
        return bytes(buf)
    out = bytearray()
    for start, end in _legacy_entries(raw):
        entry = bytearray(raw[start:end])
        if magic == 1 and log_append_time is not None:
            _legacy_rewrite(entry, offset=None, timestamp=log_append_time, log_append=True)
        out += entry
    return bytes(out)


def _actual_codec(data: bytes, magic: int) -> str:
    """The codec a built batch really uses (v2 builders fall back to none when compressing
    does not make the batch smaller)."""
    if magic == 2:
        return CODEC_NAMES[struct.unpack_from(">h", data, 21)[0] & 0x07]
    return CODEC_NAMES[data[17] & 0x07]


def build_batch(
    library: str,
    magic: int,
    codec: str,
    records: Iterable[Rec | Mapping[str, Any]],
    base_offset: int = 0,
    *,
    log_append_time: int | None = None,
    transactional: bool = False,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int | None = None,
    require_codec: bool = True,
) -> Segment:
    """One batch (v2) / wrapper message or message set (v0/v1), as a broker stores it.

    Records without an ``offset`` get consecutive offsets from ``base_offset``. With
    ``log_append_time`` the batch is marked LogAppendTime with that append time (v1, v2).
    ``require_codec`` raises if the library decided not to compress (v2 builders do that when
    compression does not pay off), so a test cannot silently lose its codec.
    """
    if not supports(library, magic, codec):
        raise ValueError(f"{library} cannot write magic {magic} with {codec}")
    recs: list[Rec] = []
    nxt = base_offset
    for r in map(as_rec, records):
        off = nxt if r.offset is None else r.offset
        if off < nxt:
            raise ValueError(f"offsets must increase: {off} after {nxt - 1}")
        if magic < 2 and r.headers:
            raise ValueError("headers need magic v2")
        recs.append(replace(r, offset=off))
        nxt = off + 1
    if not recs:
        raise ValueError("a batch needs at least one record")
    if magic == 0 and log_append_time is not None:
        raise ValueError("magic v0 has no timestamps")
    raw = _RAW_BUILDERS[library](
        magic,
        codec,
        base_offset,
        recs,
        transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )
    data = _broker_rewrite(
        raw,
        magic,
        codec,
        base_offset,
        recs,
        log_append_time=log_append_time,
        partition_leader_epoch=partition_leader_epoch,
    )
    actual = _actual_codec(data, magic)
    if require_codec and actual != codec:
        raise ValueError(f"{library} wrote {actual} instead of {codec}: records too small?")
    info = {
        "magic": magic,
        "codec": actual,
        "base_offset": base_offset if magic == 2 else recs[0].offset,
        "last_offset": recs[-1].offset,
        "count": len(recs),
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": base_sequence,
        "transactional": transactional,
    }
    return Segment(
        data=data,
        magic=magic,
        codec=actual,
        records=recs,
        batches=[info],
        timestamp_type=(
            NO_TIMESTAMP_TYPE
            if magic == 0
            else LOG_APPEND_TIME
            if log_append_time is not None
            else CREATE_TIME
        ),
        log_append_time=log_append_time,
    )


def build_segment(
    library: str,
    magic: int,
    codec: str,
    batches: Iterable[Iterable[Rec | Mapping[str, Any]]],
    base_offset: int = 0,
    *,
    gap: int = 0,
    base_sequence: int = -1,
    **batch_options: Any,
) -> Segment:
    """Several batches of one format back to back.

    Batch i starts right after batch i-1's last offset, plus ``gap`` offsets left out (records
    with explicit offsets keep them). With ``base_sequence`` >= 0 each batch continues the
    sequence numbers of the one before it, as an idempotent producer does.
    """
    seg: Segment | None = None
    nxt = base_offset
    seq = base_sequence
    for batch in batches:
        recs = [as_rec(r) for r in batch]
        start = nxt if recs[0].offset is None else recs[0].offset
        one = build_batch(library, magic, codec, recs, start, base_sequence=seq, **batch_options)
        seg = one if seg is None else seg + one
        nxt = one.records[-1].offset + 1 + gap
        if seq >= 0:
            seq += one.records[-1].offset - start + 1
    if seg is None:
        raise ValueError("no batches")
    return seg


def kafka_python_batch(magic: int, codec: str, records, base_offset: int = 0, **kw) -> Segment:
    """:func:`build_batch` with kafka-python's ``MemoryRecordsBuilder``."""
    return build_batch("kafka-python", magic, codec, records, base_offset, **kw)


def aiokafka_batch(magic: int, codec: str, records, base_offset: int = 0, **kw) -> Segment:
    """:func:`build_batch` with aiokafka's ``LegacyRecordBatchBuilder`` /
    ``DefaultRecordBatchBuilder``."""
    return build_batch("aiokafka", magic, codec, records, base_offset, **kw)


def kafka_python_segment(magic: int, codec: str, batches, base_offset: int = 0, **kw) -> Segment:
    """:func:`build_segment` with kafka-python."""
    return build_segment("kafka-python", magic, codec, batches, base_offset, **kw)


def aiokafka_segment(magic: int, codec: str, batches, base_offset: int = 0, **kw) -> Segment:
    """:func:`build_segment` with aiokafka."""
    return build_segment("aiokafka", magic, codec, batches, base_offset, **kw)


def with_records_stream(batch: bytes, codec: str, stream: bytes) -> bytes:
    """A copy of an *uncompressed* v2 batch whose records section (from byte 61) is replaced by
    ``stream`` (those records compressed by some other codec implementation), with the codec
    attribute, batch length and CRC-32C fixed up. For codec streams as other clients write
    them (librdkafka's raw snappy, LZ4 frames with checksums, ...)."""
    if batch[16] != 2 or struct.unpack_from(">h", batch, 21)[0] & 0x07:
        raise ValueError("needs an uncompressed v2 batch")
    buf = bytearray(batch[:61]) + stream
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    (attrs,) = struct.unpack_from(">h", buf, 21)
    struct.pack_into(">h", buf, 21, (attrs & ~0x07) | CODEC_IDS[codec])
    struct.pack_into(">I", buf, 17, calc_crc32c(bytes(buf[21:])))
    return bytes(buf)


# --- control batches (hand-built: no client library writes them) ------------------------------


def _zigzag_varint(n: int) -> bytes:
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        if u:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def control_batch(
    offset: int,
    control_type: int,
    *,
    producer_id: int,
    producer_epoch: int,
    timestamp: int,
    coordinator_epoch: int = 0,
    partition_leader_epoch: int = 0,
    value: bytes | None = None,
    transactional: bool = True,
) -> Segment:
    """A v2 transaction marker (ABORT = 0 / COMMIT = 1) as the broker writes it: one record,
    key = (int16 version 0, int16 type), value = (int16 version 0, int32 coordinator epoch),
    attributes transactional + control, CreateTime, no compression, base sequence -1. With
    ``value`` and ``transactional=False``: another control record (KRaft's) with that value."""
    key = struct.pack(">hh", 0, control_type)
    if value is None:
        value = struct.pack(">hi", 0, coordinator_epoch)
    body = (
        b"\x00"  # record attributes
        + _zigzag_varint(0)  # timestamp delta
        + _zigzag_varint(0)  # offset delta
        + _zigzag_varint(len(key))
        + key
        + _zigzag_varint(len(value))
        + value
        + _zigzag_varint(0)  # no headers
    )
    records = _zigzag_varint(len(body)) + body
    attributes = (0x10 if transactional else 0) | 0x20
    after_crc = (
        struct.pack(
            ">hiqqqhii", attributes, 0, timestamp, timestamp, producer_id, producer_epoch, -1, 1
        )
        + records
    )
    crc = calc_crc32c(after_crc)
    length = 4 + 1 + 4 + len(after_crc)  # leader epoch, magic, crc, rest
    data = struct.pack(">qiibI", offset, length, partition_leader_epoch, 2, crc) + after_crc
    assert _V2_HEADER.size == 61 and len(data) == 12 + length
    rec = Rec(key=key, value=value, timestamp=timestamp, offset=offset)
    info = {
        "magic": 2,
        "codec": "none",
        "base_offset": offset,
        "last_offset": offset,
        "count": 1,
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": -1,
        "transactional": transactional,
        "control_type": control_type,
    }
    return Segment(data=data, magic=2, codec="none", records=[rec], batches=[info])


# --- expectations -----------------------------------------------------------------------------


def expected_rows(
    records: Iterable[Rec],
    magic: int,
    timestamp_type: int = CREATE_TIME,
    log_append_time: int | None = None,
) -> list[dict[str, Any]]:
    """The rows Kafka's consumer shows for records of one format: offset, timestamp (ms, or
    None when Kafka has no timestamp: magic v0 or -1), timestampType (-1 v0, 0 CreateTime,
    1 LogAppendTime: every record then gets the append time), key, value, headers (None when
    a record has none, as Spark gives; else a list of {key, value})."""
    rows = []
    for r in records:
        if magic == 0:
            ts, tt = None, NO_TIMESTAMP_TYPE
        elif timestamp_type == LOG_APPEND_TIME:
            ts, tt = log_append_time, LOG_APPEND_TIME
        else:
            ts, tt = r.timestamp, CREATE_TIME
        if ts == -1:
            ts = None
        rows.append(
            {
                "offset": r.offset,
                "timestamp": ts,
                "timestampType": tt,
                "key": r.key,
                "value": r.value,
                "headers": [{"key": k, "value": v} for k, v in r.headers] or None,
            }
        )
    return rows


def segment_rows(seg: Segment) -> list[dict[str, Any]]:
    """:func:`expected_rows` for a single-format segment built here."""
    assert seg.magic is not None, "mixed-format segment: use expected_rows per part"
    return expected_rows(seg.records, seg.magic, seg.timestamp_type, seg.log_append_time)


# --- what the libraries' own readers report ---------------------------------------------------


def library_batches(data: bytes, library: str) -> list[dict[str, Any]]:
    """Iterate ``data`` with the library's own ``MemoryRecords`` reader.

    One dict per batch with what that reader reports: magic, compression, baseOffset,
    lastOffset, recordCount, crcValid, and ``records`` (offset, timestamp, timestampType,
    key, value, headers), plus batchSize where the reader exposes it. aiokafka's legacy batch
    objects expose no magic or codec, nor any batch size: those keys are None there. For
    v0/v1, lastOffset is the entry's offset and baseOffset the first (inner) record's offset,
    as Kafka defines them.
    """
    reader = KpMemoryRecords(bytes(data)) if library == "kafka-python" else None
    if reader is None:
        reader = AioMemoryRecords(bytes(data))
    out = []
    with kafka_python_xxhash():
        while reader.has_next():
            batch = reader.next_batch()
            crc_valid = batch.validate_crc()  # must come before iteration (kafka-python)
            records = [
                {
                    "offset": r.offset,
                    "timestamp": r.timestamp,
                    "timestampType": r.timestamp_type,
                    "key": r.key,
                    "value": r.value,
                    "headers": list(r.headers),
                }
                for r in batch
            ]
            is_v2 = hasattr(batch, "last_offset_delta")
            if is_v2:
                magic = batch.magic
                codec = CODEC_NAMES[batch.compression_type]
                base = batch.base_offset
                last = batch.base_offset + batch.last_offset_delta
                count = len(records)
            else:
                magic = getattr(batch, "magic", None)
                ct = getattr(batch, "compression_type", None)
                codec = None if ct is None else CODEC_NAMES[ct]
                base = records[0]["offset"]
                last = batch.next_offset - 1 if library == "aiokafka" else batch.base_offset
                count = len(records)
            size = getattr(batch, "size_in_bytes", None)
            out.append(
                {
                    "batchSize": size if isinstance(size, int) else None,
                    "magic": magic,
                    "compression": codec,
                    "baseOffset": base,
                    "lastOffset": last,
                    "recordCount": count,
                    "crcValid": crc_valid,
                    "isTransactional": bool(getattr(batch, "is_transactional", False)),
                    "isControl": bool(getattr(batch, "is_control_batch", False)),
                    "records": records,
                }
            )
    return out


def write_partition(root, topic: str, partition: int, segments: Sequence[Segment]):
    """Write segments as a broker lays them out: ``root/<topic>-<partition>/<base>.log``, the
    file name being the first offset of the segment padded to 20 digits. Returns the dir."""
    import pathlib

    d = pathlib.Path(root) / f"{topic}-{partition}"
    d.mkdir(parents=True, exist_ok=True)
    for seg in segments:
        first = seg.batches[0]["base_offset"]
        (d / f"{first:020d}.log").write_bytes(seg.data)
    return d
