"""Hand-made byte builders for kafkalog's bad-input tests.

Everything here is written from the layouts in docs/format.md (sections 1-3), with
``struct`` and the CRCs, so a test can build a valid segment and then break exactly one thing:
a size field, a record count, a varint, a codec id, a CRC. Builders take overrides for the
fields a test wants to lie about and compute the rest (CRCs last, as Kafka's writers do).

Nothing here imports kafkalog: the bytes are independent of the code under test.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass, field

import cramjam
import lz4.block
import zstandard
from kafka.record.util import calc_crc32c

# Codec ids (docs/format.md §1.1 attributes bits 0-2, §2.1, §3).
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

V2_HEADER = 61  # RECORD_BATCH_OVERHEAD (docs/format.md §1.1)
V2_CRC_FROM = 21  # CRC-32C covers [21, batch end) (docs/format.md §1.1)
LEGACY_CRC_FROM = 16  # CRC-32 covers the message from its magic byte (entry offset 16, §2.1)
BASE_TS = 1_700_000_000_000


# --------------------------------------------------------------------------- varints (§1.3)


def uvarint(u: int) -> bytes:
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        if u:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(v: int) -> bytes:
    """Zigzag varint (also used for varlongs: the encoding is the same)."""
    return uvarint((v << 1) ^ (v >> 63))


# --------------------------------------------------------------------------- compression (§3)


def xerial_snappy(data: bytes, block: int = 32 * 1024) -> bytes:
    """snappy-java stream framing: 16-byte header, then (int32 BE length, raw block)*."""
    out = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for i in range(0, max(len(data), 1), block):
        chunk = bytes(cramjam.snappy.compress_raw(data[i : i + block]))
        out += struct.pack(">i", len(chunk)) + chunk
    return bytes(out)


def kafka_lz4(data: bytes, *, magic: int = 2) -> bytes:
    """Kafka's LZ4 frame: FLG 0x60, BD 0x40 (64 KiB blocks), HC, blocks, EndMark (§3.3).
    HC 0x82 is the correct descriptor checksum; v0 frames carry the broken 0x1A (KAFKA-3160)."""
    out = bytearray(b"\x04\x22\x4d\x18\x60\x40" + (b"\x1a" if magic == 0 else b"\x82"))
    for i in range(0, len(data), 64 * 1024):
        chunk = data[i : i + 64 * 1024]
        comp = lz4.block.compress(chunk, store_size=False)
        if len(comp) >= len(chunk):
            out += struct.pack("<I", len(chunk) | 0x80000000) + chunk
        else:
            out += struct.pack("<I", len(comp)) + comp
    out += b"\x00\x00\x00\x00"
    return bytes(out)


def compress(codec: int, data: bytes, *, magic: int = 2) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return gzip.compress(data, mtime=0)
    if codec == SNAPPY:
        return xerial_snappy(data)
    if codec == LZ4:
        return kafka_lz4(data, magic=magic)
    if codec == ZSTD:
        return zstandard.ZstdCompressor().compress(data)
    raise ValueError(codec)


def gzip_stream(parts) -> bytes:
    """One gzip member of the concatenation of ``parts`` (an iterable of bytes), streamed so
    that a bomb never exists uncompressed."""
    co = zlib.compressobj(1, zlib.DEFLATED, 31)
    out = [co.compress(p) for p in parts]
    out.append(co.flush())
    return b"".join(out)


def zstd_stream(parts) -> bytes:
    co = zstandard.ZstdCompressor().compressobj()
    out = [co.compress(p) for p in parts]
    out.append(co.flush())
    return b"".join(out)


# --------------------------------------------------------------------------- magic v2 (§1)


@dataclass
class Rec:
    """One record as the tests expect to read it back."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: list = field(default_factory=list)


def v2_record(
    offset_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers=(),
    *,
    timestamp_delta: int = 0,
    attributes: int = 0,
) -> bytes:
    body = bytearray()
    body.append(attributes)
    body += varint(timestamp_delta)
    body += varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk
        body += varint(-1) if hv is None else varint(len(hv)) + hv
    return varint(len(body)) + bytes(body)


def v2_batch(
    base_offset: int,
    records: list[tuple[bytes | None, bytes | None]] | None = None,
    *,
    codec: int = NONE,
    raw_records: bytes | None = None,
    compressed: bytes | None = None,
    count: int | None = None,
    last_offset_delta: int | None = None,
    attributes: int | None = None,
    leader_epoch: int = -1,
    magic: int = 2,
    base_timestamp: int = BASE_TS,
    max_timestamp: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    length: int | None = None,
    crc: int | None = None,
) -> bytes:
    """A v2 batch. ``records`` are (key, value) pairs at offset deltas 0, 1, 2...;
    ``raw_records`` replaces their encoding (before compression), ``compressed`` replaces the
    compressed stream. The CRC-32C is computed unless ``crc`` is given."""
    records = records or []
    if raw_records is None:
        raw_records = b"".join(
            v2_record(i, k, v, timestamp_delta=i) for i, (k, v) in enumerate(records)
        )
    payload = compressed if compressed is not None else compress(codec, raw_records)
    if count is None:
        count = len(records)
    if last_offset_delta is None:
        last_offset_delta = max(count - 1, 0)
    if attributes is None:
        attributes = codec
    after_crc = (
        struct.pack(
            ">hiqqqhii",
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp if max_timestamp is not None else base_timestamp + max(count - 1, 0),
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
        + payload
    )
    if crc is None:
        crc = calc_crc32c(after_crc)
    body = struct.pack(">ibI", leader_epoch, magic, crc) + after_crc
    if length is None:
        length = len(body)
    return struct.pack(">qi", base_offset, length) + body


def v2_expected(base_offset: int, records) -> list[Rec]:
    return [Rec(base_offset + i, k, v) for i, (k, v) in enumerate(records)]


# --------------------------------------------------------------------------- magic v0/v1 (§2)


def legacy_message(
    magic: int,
    key: bytes | None,
    value: bytes | None,
    *,
    attributes: int = 0,
    timestamp: int = BASE_TS,
    crc: int | None = None,
) -> bytes:
    """One message (crc .. value), without the 12-byte offset/size entry header."""
    rest = struct.pack(">bb", magic, attributes)
    if magic >= 1:
        rest += struct.pack(">q", timestamp)
    rest += struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key
    rest += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    if crc is None:
        crc = zlib.crc32(rest)
    return struct.pack(">I", crc) + rest


def legacy_entry(offset: int, message: bytes, *, size: int | None = None) -> bytes:
    return struct.pack(">qi", offset, len(message) if size is None else size) + message


def legacy_batch(
    magic: int,
    first_offset: int,
    records: list[tuple[bytes | None, bytes | None]],
    *,
    codec: int = NONE,
    inner_attributes: int = 0,
    wrapper_offset: int | None = None,
) -> bytes:
    """Uncompressed: one entry per record (each is its own "batch" in Kafka's terms).
    Compressed: one wrapper entry whose value is the compressed inner entries; inner offsets
    are relative (0, 1, ...) for magic 1 and absolute for magic 0; the wrapper carries the
    last offset (docs/format.md §2.2)."""
    if codec == NONE:
        return b"".join(
            legacy_entry(
                first_offset + i,
                legacy_message(magic, k, v, timestamp=BASE_TS + i, attributes=inner_attributes),
            )
            for i, (k, v) in enumerate(records)
        )
    inner = b"".join(
        legacy_entry(
            (i if magic == 1 else first_offset + i),
            legacy_message(magic, k, v, timestamp=BASE_TS + i, attributes=inner_attributes),
        )
        for i, (k, v) in enumerate(records)
    )
    last = first_offset + len(records) - 1
    wrapper = legacy_message(
        magic,
        None,
        compress(codec, inner, magic=magic),
        attributes=codec,
        timestamp=BASE_TS + len(records) - 1,
    )
    return legacy_entry(last if wrapper_offset is None else wrapper_offset, wrapper)


def legacy_expected(first_offset: int, records) -> list[Rec]:
    return [Rec(first_offset + i, k, v) for i, (k, v) in enumerate(records)]


# --------------------------------------------------------------------------- segments


@dataclass
class Segment:
    """A segment's bytes and, per log entry, its start, end, header offset and the records it
    holds when read back."""

    data: bytes
    entries: list[tuple[int, int, int, list[Rec]]]  # (start, end, header offset, records)

    def records(self) -> list[Rec]:
        return [r for *_, recs in self.entries for r in recs]

    def records_before(self, cut: int) -> list[Rec]:
        """Records of the entries that end at or before byte ``cut``."""
        return [r for _, end, _, recs in self.entries if end <= cut for r in recs]

    def entry_at(self, pos: int):
        for e in self.entries:
            if e[0] <= pos < e[1]:
                return e
        raise IndexError(pos)

    def boundaries(self) -> set[int]:
        return {0} | {end for _, end, _, _ in self.entries}


def segment(magic: int, codec: int, n_batches: int = 3, per_batch: int = 3) -> Segment:
    """A segment of ``n_batches`` batches (each of ``per_batch`` records, varied keys/values,
    some null) in one magic and codec. For uncompressed v0/v1 every record is its own entry."""
    data = bytearray()
    entries = []
    offset = 0
    for b in range(n_batches):
        recs = []
        for i in range(per_batch):
            n = b * per_batch + i
            key = None if n % 4 == 3 else b"k%d" % n
            value = None if n % 5 == 4 else (b"value-%d-" % n) * (1 + n % 3)
            recs.append((key, value))
        if magic == 2:
            chunks = [(v2_batch(offset, recs, codec=codec), v2_expected(offset, recs))]
        elif codec == NONE:
            chunks = [
                (legacy_batch(magic, offset + i, [r]), legacy_expected(offset + i, [r]))
                for i, r in enumerate(recs)
            ]
        else:
            chunks = [
                (
                    legacy_batch(magic, offset, recs, codec=codec),
                    legacy_expected(offset, recs),
                )
            ]
        for raw, expected in chunks:
            header_offset = struct.unpack_from(">q", raw)[0]
            entries.append((len(data), len(data) + len(raw), header_offset, expected))
            data += raw
        offset += per_batch
    return Segment(bytes(data), entries)


def flip(data: bytes, pos: int, mask: int = 0xFF) -> bytes:
    b = bytearray(data)
    b[pos] ^= mask
    return bytes(b)


def set_v2_count(batch: bytes, count: int, *, fix_crc: bool = True) -> bytes:
    """Rewrites a v2 batch's recordsCount (and its CRC unless told not to)."""
    b = bytearray(batch)
    struct.pack_into(">i", b, 57, count)
    if fix_crc:
        struct.pack_into(">I", b, 17, calc_crc32c(bytes(b[21:])))
    return bytes(b)


def set_offset(entry: bytes, offset: int) -> bytes:
    """Rewrites an entry's offset field (outside every CRC)."""
    return struct.pack(">q", offset) + entry[8:]
