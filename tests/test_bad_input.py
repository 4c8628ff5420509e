"""kafkalog against bad input: torn tails, flipped bytes, lying size fields, bombs, policies.

Each test states which Kafka behaviour it encodes, citing docs/format.md sections. The
bytes come from tests/hostile.py (hand-made from the documented layouts), never from kafkalog.

The rules the whole file enforces:
- kafkalog never raises anything but a ``kafkalog.KafkaLogError`` (no PanicException, no
  pyarrow or OS error leaking through) and never hangs;
- it never returns records that are not in the file without saying so: with ``check_crc=True``
  any change to bytes covered by a CRC is a ``CrcMismatchError`` naming the batch;
- a corrupt batch never contributes records, even partly decoded;
- errors and warnings name the position (and offset) of the batch at fault.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import threading
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import hostile as h
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkalog
from kafkalog import (
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    InvalidArgumentError,
    KafkaLogError,
    KafkaLogIOError,
    LimitExceededError,
    NotASegmentError,
    SkippedBatchWarning,
    StoppedAtCorruptionWarning,
    TruncatedSegmentWarning,
)

COLS = ["offset", "key", "value"]

# (magic, codec) combinations of the truncation and bit-damage sweeps.
COMBOS = [
    (0, h.NONE),
    (0, h.GZIP),
    (0, h.LZ4),  # v0 LZ4 frames carry Kafka's broken header checksum (docs/format.md §3.3)
    (1, h.NONE),
    (1, h.GZIP),
    (1, h.SNAPPY),
    (2, h.NONE),
    (2, h.GZIP),
    (2, h.SNAPPY),
    (2, h.LZ4),
    (2, h.ZSTD),
]
COMBO_IDS = [f"v{m}-{h.CODEC_NAMES[c]}" for m, c in COMBOS]

_SEGMENTS: dict[tuple[int, int], h.Segment] = {}


def seg(magic: int, codec: int) -> h.Segment:
    key = (magic, codec)
    if key not in _SEGMENTS:
        _SEGMENTS[key] = h.segment(magic, codec)
    return _SEGMENTS[key]


@dataclass
class Outcome:
    rows: list[tuple] | None
    error: KafkaLogError | None
    warnings: list[warnings.WarningMessage]

    def of(self, cls) -> list:
        return [w.message for w in self.warnings if issubclass(w.category, cls)]


def as_rows(table) -> list[tuple]:
    return [tuple(r[c] for c in table.column_names) for r in table.to_pylist()]


def expect_rows(records: list[h.Rec]) -> list[tuple]:
    return [(r.offset, r.key, r.value) for r in records]


def attempt(data: bytes, *, columns=COLS, **options) -> Outcome:
    """Reads ``data`` fully. A kafkalog error is part of the outcome; any other exception
    (including pyo3's PanicException, a BaseException) propagates and fails the test."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = kafkalog.read_bytes(data, columns=columns, **options).read_all()
        except KafkaLogError as err:
            return Outcome(None, err, list(caught))
    return Outcome(as_rows(table), None, list(caught))


def attempt_path(path, *, columns=COLS, **options) -> Outcome:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = kafkalog.read(path, columns=columns, **options).read_all()
        except KafkaLogError as err:
            return Outcome(None, err, list(caught))
    return Outcome(as_rows(table), None, list(caught))


def only_kafkalog_warnings(out: Outcome) -> None:
    others = [w for w in out.warnings if not issubclass(w.category, kafkalog.KafkaLogWarning)]
    assert not others, [str(w.message) for w in others]


# =====================================================================================
# 1. Truncation at every byte (docs/format.md §1.5 step 1 and 3, §6): Kafka's FileLogInputStream
#    stops silently when fewer than 18 bytes remain or when an entry extends past the end of
#    the file; recovery then truncates the file to the last complete batch. So a torn tail is
#    never an error: exactly the complete batches before the cut are the records.
# =====================================================================================


@pytest.mark.parametrize(("magic", "codec"), COMBOS, ids=COMBO_IDS)
def test_truncation_at_every_byte(magic, codec):
    s = seg(magic, codec)
    boundaries = s.boundaries()
    for cut in range(len(s.data) + 1):
        out = attempt(s.data[:cut])
        assert out.error is None, f"cut {cut}: {out.error!r}"
        assert out.rows == expect_rows(s.records_before(cut)), f"cut {cut}"
        only_kafkalog_warnings(out)
        torn = out.of(TruncatedSegmentWarning)
        if cut in boundaries:
            assert out.warnings == [], f"cut {cut} at a boundary warned"
        else:
            start, _, header_offset, _ = s.entry_at(cut)
            assert len(torn) == 1 and len(out.warnings) == 1, f"cut {cut}: {out.warnings}"
            w = torn[0]
            assert w.position == start, f"cut {cut}"
            assert w.bytes == cut - start, f"cut {cut}"
            assert w.path is None
            # The entry's offset is known once its 8 offset bytes are there.
            assert w.offset in (None, header_offset), f"cut {cut}"


def test_truncated_file_warning_names_the_file(tmp_path):
    s = seg(2, h.ZSTD)
    path = tmp_path / "00000000000000000000.log"
    cut = s.entries[-1][0] + 30
    path.write_bytes(s.data[:cut])
    out = attempt_path(path)
    assert out.error is None
    assert out.rows == expect_rows(s.records_before(cut))
    (w,) = out.of(TruncatedSegmentWarning)
    assert w.path == str(path)
    assert w.position == s.entries[-1][0]
    assert w.bytes == 30


def test_empty_input_is_no_records_and_no_warning(tmp_path):
    assert attempt(b"").rows == [] and attempt(b"").warnings == []
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"")
    out = attempt_path(path)
    assert out.rows == [] and out.warnings == [] and out.error is None


# =====================================================================================
# 2. Bit damage. v2: CRC-32C over [21, end) (docs/format.md §1.1); v0/v1: CRC-32 over the message
#    from its magic byte (entry offset 16) to its end (§2.1). Kafka's recovery runs
#    ensureValid() on every batch (§6), so with check_crc=True a changed covered byte (or a
#    changed stored CRC) must be a CrcMismatchError for that batch. Base offset, length,
#    leader epoch and magic (v2) / offset and size (v0/v1) are not covered (§1.1: the broker
#    rewrites them in place): changes there have the consequences Kafka gives them.
# =====================================================================================


def _expected_after_offset_change(s: h.Segment, magic, codec, entry, new_offset):
    """Records after the header offset of ``entry`` changed to ``new_offset``, or None when
    Kafka rejects the batch. v2 and uncompressed v0/v1: record offsets follow the header.
    v1 wrappers: base = wrapper offset - last inner offset (error if the wrapper offset is
    smaller and not 0; 0 means base 0). v0 wrappers: inner offsets are absolute, the wrapper's
    is ignored (docs/format.md §2.2 step 5)."""
    start, _, old, recs = entry
    if magic == 2 or codec == h.NONE:
        mine = [h.Rec(r.offset + new_offset - old, r.key, r.value) for r in recs]
    elif magic == 0:
        mine = recs
    else:
        last_inner = len(recs) - 1
        if new_offset == 0:
            mine = [h.Rec(i, r.key, r.value) for i, r in enumerate(recs)]
        elif new_offset < last_inner:
            return None
        else:
            base = new_offset - last_inner
            mine = [h.Rec(base + i, r.key, r.value) for i, r in enumerate(recs)]
    out = []
    for e in s.entries:
        out.extend(mine if e[0] == start else e[3])
    return out


def _judge_flip(s: h.Segment, magic, codec, entry, pos) -> str | None:
    """What is wrong with kafkalog's answer to ``s.data`` with byte ``pos`` flipped (xor 0xff)
    and check_crc=True, or None when it is right."""
    start, end, header_offset, recs = entry
    rel = pos - start
    data = h.flip(s.data, pos)
    out = attempt(data, check_crc=True)
    only_kafkalog_warnings(out)
    err = out.error
    got = f"{type(err).__name__}{(err.position, err.offset)}: {err}" if err else f"{out}"

    def batch_error(cls=CorruptRecordError, offset=header_offset):
        if not isinstance(err, cls):
            return f"expected {cls.__name__} for the batch at {start}, got {got}"
        if err.position != start or (offset is not None and err.offset != offset):
            return f"expected position {start}, offset {offset}; got {got}"
        if str(start) not in str(err) or err.path is not None:
            return f"message should name position {start} (and no path): {got}"
        return None

    if rel >= (12 if magic < 2 else 17) and not (magic < 2 and rel == 16):
        # The stored CRC or a byte it covers: Kafka's ensureValid() fails (§1.1, §2.1, §6).
        return batch_error(CrcMismatchError)
    if magic < 2 and rel == 16:
        # The legacy magic byte is CRC-covered, but xor 0xff makes it negative: Kafka reads it
        # as legacy and fails the CRC (§1.5 step 4). A CorruptRecordError naming the batch
        # ("invalid magic") is as good.
        return batch_error()
    if rel < 8:
        # Offset: records move with it (or Kafka rejects a v1 wrapper, §2.2 step 5).
        new_offset = struct.unpack_from(">q", data, start)[0]
        expected = _expected_after_offset_change(s, magic, codec, entry, new_offset)
        if expected is None:
            return batch_error(offset=None)
        if err or out.warnings or out.rows != expect_rows(expected):
            return f"expected the records with shifted offsets, got {got}"
        return None
    if rel < 12:
        # Length: a length past the end is a torn tail (§1.5 step 3); otherwise the batch no
        # longer checks out (size < 14, size < 61, CRC over the wrong bytes).
        if err:
            return batch_error()
        torn = out.of(TruncatedSegmentWarning)
        if out.rows != expect_rows(s.records_before(start)) or len(torn) != 1:
            return f"expected the records before {start} and a torn tail, got {got}"
        if torn[0].position != start:
            return f"torn tail should be at {start}: {torn[0].position}"
        return None
    if rel < 16:
        # v2 partition leader epoch: not covered, not used for records (§1.1).
        if err or out.warnings or out.rows != expect_rows(s.records()):
            return f"expected the same records, got {got}"
        return None
    # v2 magic byte (not covered, §1.1): no longer a v2 batch.
    return batch_error()


@pytest.mark.parametrize(("magic", "codec"), COMBOS, ids=COMBO_IDS)
def test_flipped_byte_with_crc_check(magic, codec):
    s = seg(magic, codec)
    problems = []
    for entry in s.entries:
        for pos in range(entry[0], entry[1]):
            problem = _judge_flip(s, magic, codec, entry, pos)
            if problem:
                problems.append(f"byte {pos} (entry at {entry[0]} + {pos - entry[0]}): {problem}")
    assert not problems, f"{len(problems)} wrong answers:\n" + "\n".join(problems[:12])


V2_COMBOS = [c for c in COMBOS if c[0] == 2]


@pytest.mark.parametrize(
    ("magic", "codec"), V2_COMBOS, ids=[f"v2-{h.CODEC_NAMES[c]}" for _, c in V2_COMBOS]
)
def test_changed_leader_epoch_is_reported_as_is(magic, codec):
    """The partition leader epoch is outside the CRC (the broker rewrites it in place, §1.1):
    the records stay, the batch reports the new epoch."""
    s = seg(magic, codec)
    start, _, _, recs = s.entries[1]
    data = bytearray(s.data)
    struct.pack_into(">i", data, start + 12, 77)
    out = attempt(bytes(data), columns=["offset", "partitionLeaderEpoch"])
    assert out.error is None and out.warnings == []
    assert out.rows == [(r.offset, 77 if r in recs else -1) for r in s.records()]


@pytest.mark.parametrize(("magic", "codec"), COMBOS, ids=COMBO_IDS)
def test_flipped_byte_without_crc_check_is_typed(magic, codec):
    """check_crc=False: damage may decode to other records (Kafka's record iteration does not
    re-check the CRC, §1.5), but anything else must be a typed KafkaLogError with a position."""
    s = seg(magic, codec)
    problems = []
    for pos in range(len(s.data)):
        for mask in (0xFF, 0x01, 0x80):
            data = h.flip(s.data, pos, mask)
            try:
                out = attempt(data, check_crc=False)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # pyo3's PanicException is a BaseException
                problems.append(f"byte {pos} ^ {mask:#x}: {type(exc).__name__}: {exc}")
                continue
            only_kafkalog_warnings(out)
            if out.error is not None and out.error.position is None:
                problems.append(f"byte {pos} ^ {mask:#x}: no position: {out.error!r}")
    assert not problems, f"{len(problems)} wrong answers:\n" + "\n".join(problems[:12])


def test_corrupt_legacy_inner_crc_is_not_checked():
    """Kafka checks the wrapper CRC of a compressed v0/v1 message, not the inner messages'
    (docs/format.md §2.2 step 9): a wrong inner CRC under a valid wrapper CRC reads fine."""
    inner = h.legacy_entry(0, h.legacy_message(1, b"k", b"v", crc=0xDEADBEEF))
    wrapper = h.legacy_message(1, None, h.compress(h.GZIP, inner), attributes=h.GZIP)
    out = attempt(h.legacy_entry(5, wrapper))
    assert out.error is None
    assert out.rows == [(5, b"k", b"v")]


# =====================================================================================
# 3. Limits and impossible fields. Each must end in a typed error quickly, without huge
#    allocations.
# =====================================================================================


def test_size_field_claiming_2gb_is_a_torn_tail():
    """§1.5 step 3: an entry longer than the file is a truncated tail, not an allocation."""
    good = h.v2_batch(0, [(b"a", b"1")])
    bad = struct.pack(">qi", 1, 0x7FFFFFF0) + bytes(range(100))
    t0 = time.monotonic()
    out = attempt(good + bad)
    assert time.monotonic() - t0 < 2
    assert out.error is None
    assert out.rows == [(0, b"a", b"1")]
    (w,) = out.of(TruncatedSegmentWarning)
    assert (w.position, w.bytes) == (len(good), len(bad))


def _zstd_with_content_size(raw: bytes, claimed: int) -> bytes:
    """A zstd frame for ``raw`` whose header claims ``claimed`` bytes of content (8-byte
    Frame_Content_Size, single segment: a decoder trusting it sizes its window by it)."""
    frame = zstandard.ZstdCompressor(write_content_size=True, write_checksum=False).compress(raw)
    assert frame[4] == 0x20  # single segment, 1-byte content size
    return frame[:4] + b"\xe0" + struct.pack("<Q", claimed) + frame[6:]


# Each case: a segment whose bytes claim a huge size somewhere, and the outcome expected.
_XERIAL = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
_LZ4_HEAD = b"\x04\x22\x4d\x18\x60\x40\x82"
_GOOD = h.v2_batch(0, [(b"a", b"1")])
_HUGE_CLAIMS = {
    # entry size field (§1.5 step 3: torn tail)
    "size-field": (_GOOD + struct.pack(">qi", 1, 0x7FFFFFF0) + b"\x01" * 200, "Truncated"),
    # v2 records count (§1.5: premature EOF)
    "record-count": (h.set_v2_count(h.v2_batch(0, [(b"a", b"1")]), 2**31 - 1), "Corrupt"),
    # a record's key length
    "key-length": (
        h.v2_batch(
            0, raw_records=h.varint(13) + b"\x00\x00\x00" + h.varint(2**31 - 1) + b"k" * 8, count=1
        ),
        "Corrupt",
    ),
    # xerial chunk length (§3.2)
    "snappy-chunk": (
        h.v2_batch(
            0, compressed=_XERIAL + struct.pack(">i", 0x7FFFFFF0) + b"abc", codec=h.SNAPPY, count=1
        ),
        "Corrupt",
    ),
    # raw snappy block claiming 4 GiB uncompressed
    "snappy-raw": (
        h.v2_batch(0, compressed=b"\xff\xff\xff\xff\x0f\x00abc", codec=h.SNAPPY, count=1),
        "Corrupt|Limit",
    ),
    # lz4 block size (§3.3 "Block size exceeded max")
    "lz4-block": (
        h.v2_batch(
            0, compressed=_LZ4_HEAD + struct.pack("<I", 0x7FFFFFF0) + b"abc", codec=h.LZ4, count=1
        ),
        "Corrupt",
    ),
    # zstd frame content size of 1 TiB
    "zstd-content-size": (
        h.v2_batch(
            0,
            compressed=_zstd_with_content_size(h.v2_record(0, b"k", b"v"), 1 << 40),
            codec=h.ZSTD,
            count=1,
        ),
        "Corrupt|Limit",
    ),
    # gzip ISIZE trailer of 4 GiB
    "gzip-isize": (
        h.v2_batch(
            0,
            compressed=gzip.compress(h.v2_record(0, b"k", b"v"))[:-4] + b"\xff" * 4,
            codec=h.GZIP,
            count=1,
        ),
        "Corrupt",
    ),
}

_CAPPED_SCRIPT = """
import json, resource, sys, warnings
resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
import kafkalog
result = {}
for path in sys.argv[1:]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            t = kafkalog.read(path).read_all()
            result[path] = [type(x.message).__name__ for x in w] or ["ok"]
        except kafkalog.KafkaLogError as e:
            result[path] = [type(e).__name__, e.position]
print(json.dumps(result))
"""


def test_huge_size_claims_allocate_nothing_big(tmp_path):
    """Size fields claiming gigabytes (entry size, record count, key length, snappy/lz4 chunk,
    zstd content size, gzip ISIZE), read in a child process whose address space is capped at
    1.5 GiB: a decoder that allocates what a field claims dies there. Each ends in the typed
    outcome Kafka's rules give it (torn tail, corrupt batch) or a LimitExceededError."""
    paths = {}
    for name, (data, _) in _HUGE_CLAIMS.items():
        paths[name] = tmp_path / name / "00000000000000000000.log"
        paths[name].parent.mkdir()
        paths[name].write_bytes(data)
    proc = subprocess.run(
        [sys.executable, "-c", _CAPPED_SCRIPT, *map(str, paths.values())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    for name, (_, expected) in _HUGE_CLAIMS.items():
        got = results[str(paths[name])]
        if expected == "Truncated":
            assert got == ["TruncatedSegmentWarning"], (name, got)
        else:
            kinds = {
                "Corrupt": ("CorruptRecordError", "DecompressionError", "CrcMismatchError"),
                "Limit": ("LimitExceededError",),
            }
            allowed = [k for part in expected.split("|") for k in kinds[part]]
            assert got[0] in allowed and got[1] == 0, (name, got)


_MB = 1 << 20
_BOMB_CHUNK = 64 * _MB


def _bomb(codec: int, value_size: int, offset: int = 7) -> bytes:
    """A v2 batch at ``offset`` holding one valid record whose value is ``value_size`` zero
    bytes, compressed as concatenated gzip members / zstd frames (both codecs' readers take
    concatenations, docs/format.md §3.1, §3.4) so that a 2 GiB bomb costs one 64 MiB
    compression."""
    stream = h.gzip_stream if codec == h.GZIP else h.zstd_stream
    member = lambda b: stream([b])  # noqa: E731
    head = b"\x00" + h.varint(0) + h.varint(0) + h.varint(-1) + h.varint(value_size)
    parts = [member(h.varint(len(head) + value_size + 1) + head)]
    full, rest = divmod(value_size, _BOMB_CHUNK)
    if full:
        parts += [member(bytes(_BOMB_CHUNK))] * full
    if rest:
        parts.append(member(bytes(rest)))
    parts.append(member(h.varint(0)))  # no headers
    return h.v2_batch(offset, codec=codec, compressed=b"".join(parts), count=1)


def _timed_read(data, **options):
    t0 = time.monotonic()
    table = kafkalog.read_bytes(data, columns=["offset", "value"], **options).read_all()
    return table, time.monotonic() - t0


_BOMB_SCRIPT = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import kafkalog
t0 = time.monotonic()
try:
    kafkalog.read(sys.argv[1]).read_all()
    print("no error")
except kafkalog.LimitExceededError as e:
    print("limit", e.position, e.offset, time.monotonic() - t0)
"""


@pytest.mark.parametrize("codec", [h.GZIP, h.ZSTD], ids=["gzip", "zstd"])
def test_decompression_bomb(codec, tmp_path):
    """Kafka has no cap on a batch's decompressed size (docs/format.md §3.5); kafkalog's
    max_decompressed_size (default 256 MiB) must stop a bomb with LimitExceededError naming
    the batch, early: a 2 GiB bomb (a few MB on disk) is read in a child process limited to
    3 GiB of address space, in a time close to that of decompressing 256 MiB. A raised limit
    reads a bomb that fits under it."""
    # Calibration and the raised-limit case: 16 MiB of zeros.
    small = _bomb(codec, 16 * _MB)
    table, t16 = _timed_read(small, max_decompressed_size=32 * _MB)
    assert table.column("offset").to_pylist() == [7]
    assert pc.binary_length(table.column("value")).to_pylist() == [16 * _MB]
    out = attempt(small, max_decompressed_size=8 * _MB)
    assert isinstance(out.error, LimitExceededError), out
    assert (out.error.position, out.error.offset) == (0, 7)

    first = h.v2_batch(0, [(b"a", b"1")])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(first + _bomb(codec, 2 * 1024 * _MB - _MB))
    assert path.stat().st_size < 16 * _MB
    proc = subprocess.run(
        [sys.executable, "-c", _BOMB_SCRIPT, str(path)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdict, position, offset, seconds = proc.stdout.split()
    assert (verdict, int(position), int(offset)) == ("limit", len(first), 7)
    # 256 MiB is 16 x the calibration; a decoder that went on to 2 GiB would take 8x longer.
    assert float(seconds) < 4 * 16 * t16 + 5, (seconds, t16)


def test_zstd_bomb_reads_under_a_raised_limit():
    """300 MB of zeros in 300 records of 1 MB: too big for the default limit, fine under 512."""
    head = lambda i: b"\x00" + h.varint(0) + h.varint(i) + h.varint(-1) + h.varint(_MB)  # noqa: E731
    parts = []
    for i in range(300):
        parts += [h.varint(len(head(i)) + _MB + 1) + head(i), bytes(_MB), h.varint(0)]
    bomb = h.v2_batch(7, codec=h.ZSTD, compressed=h.zstd_stream(parts), count=300)
    out = attempt(bomb, columns=["offset"])
    assert isinstance(out.error, LimitExceededError), out
    table, _ = _timed_read(bomb, max_decompressed_size=512 * _MB)
    assert table.column("offset").to_pylist() == list(range(7, 307))
    assert pc.sum(pc.binary_length(table.column("value"))).as_py() == 300 * _MB


V2_CODECS = [h.GZIP, h.SNAPPY, h.LZ4, h.ZSTD]


@pytest.mark.parametrize("codec", V2_CODECS, ids=lambda c: h.CODEC_NAMES[c])
def test_max_decompressed_size_is_exact_for_v2(codec):
    """The limit is on the decompressed records stream: exactly at it reads, one byte under
    it raises LimitExceededError for that batch."""
    recs = [(b"key%d" % i, b"v" * 300) for i in range(20)]
    raw = b"".join(h.v2_record(i, k, v, timestamp_delta=i) for i, (k, v) in enumerate(recs))
    first = h.v2_batch(0, [(b"a", b"b")])
    data = first + h.v2_batch(1, recs, codec=codec)
    ok = attempt(data, max_decompressed_size=len(raw))
    assert ok.error is None and len(ok.rows) == 21
    out = attempt(data, max_decompressed_size=len(raw) - 1)
    assert isinstance(out.error, LimitExceededError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)
    out = attempt(data, max_decompressed_size=16)
    assert isinstance(out.error, LimitExceededError), out
    # A batch over the limit is a corrupt batch to the policies.
    out = attempt(data + first, max_decompressed_size=16, on_corrupt="skip")
    assert out.rows == [(0, b"a", b"b"), (0, b"a", b"b")]
    assert [w.position for w in out.of(SkippedBatchWarning)] == [len(first)]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [h.GZIP, h.SNAPPY, h.LZ4], ids=lambda c: h.CODEC_NAMES[c])
def test_max_decompressed_size_applies_to_legacy_wrappers(magic, codec):
    data = h.legacy_batch(magic, 0, [(b"k%d" % i, b"x" * 1000) for i in range(50)], codec=codec)
    assert attempt(data).error is None
    out = attempt(data, max_decompressed_size=1000)
    assert isinstance(out.error, LimitExceededError), out
    assert (out.error.position, out.error.offset) == (0, 49)


@pytest.mark.parametrize("codec", [h.NONE, h.ZSTD], ids=["none", "zstd"])
def test_varint_that_never_ends(codec):
    """§1.3: a varint longer than 5 bytes (10 x 0xff) is 'Varint is too long' in Kafka, an
    InvalidRecordException: CorruptRecordError here."""
    first = h.v2_batch(0, [(b"a", b"b")])
    bad = h.v2_batch(1, codec=codec, raw_records=b"\xff" * 10, count=1)
    out = attempt(first + bad)
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)
    # Inside a record: the timestamp delta varlong never ends.
    body = b"\x00" + b"\xff" * 12
    bad = h.v2_batch(1, codec=codec, raw_records=h.varint(len(body)) + body, count=1)
    out = attempt(first + bad)
    assert isinstance(out.error, CorruptRecordError), out
    assert out.error.position == len(first)


@pytest.mark.parametrize("codec", [h.NONE, h.GZIP, h.ZSTD], ids=["none", "gzip", "zstd"])
@pytest.mark.parametrize("count", [2**31 - 1, 1000, 4])
def test_record_count_larger_than_records(codec, count):
    """§1.5: reading past the records is 'Incorrect declared batch size, premature EOF
    reached'. A count of 2^31-1 must fail as fast as a count of 4 (no preallocation)."""
    recs = [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    bad = h.v2_batch(0, recs, codec=codec, count=count, last_offset_delta=2)
    t0 = time.monotonic()
    out = attempt(bad)
    assert time.monotonic() - t0 < 1
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (0, 0)


@pytest.mark.parametrize("codec", [h.NONE, h.GZIP, h.ZSTD], ids=["none", "gzip", "zstd"])
def test_record_count_smaller_than_records(codec):
    """§1.5: bytes left after recordsCount records: 'records still remaining'."""
    recs = [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    out = attempt(h.v2_batch(0, recs, codec=codec, count=2, last_offset_delta=2))
    assert isinstance(out.error, CorruptRecordError), out
    assert out.error.position == 0


@pytest.mark.parametrize("count", [-1, -(2**31)])
def test_negative_record_count(count):
    """§1.5: 'Found invalid record count N in magic v2 batch'."""
    out = attempt(h.v2_batch(0, [(b"a", b"1")], count=count, last_offset_delta=0))
    assert isinstance(out.error, CorruptRecordError), out
    assert out.error.position == 0


def test_zero_count_batch_ignores_leftover_bytes():
    """§1.4: a batch with recordsCount 0 yields nothing and leftover bytes are not checked
    (the cleaner's empty batches). Not an error."""
    empty = h.v2_batch(0, count=0, last_offset_delta=4, raw_records=h.v2_record(0, b"k", b"v"))
    out = attempt(empty + h.v2_batch(5, [(b"a", b"1")]))
    assert out.error is None and out.warnings == []
    assert out.rows == [(5, b"a", b"1")]


def _record_with_body(body: bytes) -> bytes:
    return h.varint(len(body)) + body


BAD_RECORDS = {
    # body length claims more than the batch has (§1.5 "Invalid record size: expected N")
    "length-past-batch": h.varint(500) + b"\x00" * 10,
    # a record length of 2^31-1 in a tiny batch
    "length-2gb": h.varint(2**31 - 1) + b"\x00" * 10,
    # negative record length
    "length-negative": h.varint(-5) + b"\x00" * 10,
    # body shorter than its fields (key runs past the record)
    "key-past-record": _record_with_body(b"\x00" + h.varint(0) + h.varint(0) + h.varint(50) + b"k"),
    # key length 2^31-1
    "key-2gb": _record_with_body(
        b"\x00" + h.varint(0) + h.varint(0) + h.varint(2**31 - 1) + b"k" * 8
    ),
    # fields shorter than the declared body: bytes left over in the record (§1.5)
    "body-longer-than-fields": _record_with_body(
        b"\x00" + h.varint(0) + h.varint(0) + h.varint(-1) + h.varint(-1) + h.varint(0) + b"xyz"
    ),
    # negative header count (§1.5 "Found invalid number of record headers")
    "headers-negative": _record_with_body(
        b"\x00" + h.varint(0) + h.varint(0) + h.varint(-1) + h.varint(-1) + h.varint(-2)
    ),
    # header count larger than the remaining bytes
    "headers-too-many": _record_with_body(
        b"\x00" + h.varint(0) + h.varint(0) + h.varint(-1) + h.varint(-1) + h.varint(10**6)
    ),
    # negative header key length (§1.2 "Invalid negative header key size")
    "header-key-negative": _record_with_body(
        b"\x00"
        + h.varint(0)
        + h.varint(0)
        + h.varint(-1)
        + h.varint(-1)
        + h.varint(1)
        + h.varint(-1)
        + h.varint(-1)
    ),
}


@pytest.mark.parametrize("codec", [h.NONE, h.LZ4], ids=["none", "lz4"])
@pytest.mark.parametrize("name", list(BAD_RECORDS))
def test_malformed_record_is_corrupt(name, codec):
    """Record-level checks of DefaultRecord.readFrom (docs/format.md §1.5), under a valid CRC."""
    first = h.v2_batch(0, [(b"a", b"b")])
    good = h.v2_record(0, b"ok", b"fine")
    bad = h.v2_batch(1, codec=codec, raw_records=good + BAD_RECORDS[name], count=2)
    t0 = time.monotonic()
    out = attempt(first + bad)
    assert time.monotonic() - t0 < 1
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)


def test_non_utf8_header_key_is_typed():
    """Kafka does not validate header-key UTF-8 on read (§1.2); Arrow strings must be UTF-8.
    Either a typed error or a valid string, never a pyarrow exception."""
    rec = h.v2_record(0, b"k", b"v", headers=[(b"\xff\xfe", b"x")])
    out = attempt(h.v2_batch(0, raw_records=rec, count=1), columns=["headers"])
    if out.error is None:
        (row,) = out.rows
        assert isinstance(row[0][0]["key"], str)
    else:
        assert isinstance(out.error, CorruptRecordError)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("outer", [h.GZIP, h.SNAPPY, h.LZ4], ids=lambda c: h.CODEC_NAMES[c])
def test_nested_compression_in_legacy_wrapper(magic, outer):
    """§2.2 step 7: an inner message with compression bits set is 'Inner messages must not be
    compressed'. Both a real nested wrapper and an inner flagged as gzip are CorruptRecordError."""
    nested = h.legacy_batch(magic, 0, [(b"a", b"1"), (b"b", b"2")], codec=h.GZIP)
    wrapper = h.legacy_message(
        magic, None, h.compress(outer, nested, magic=magic), attributes=outer
    )
    first = h.legacy_batch(magic, 0, [(b"z", b"0")])
    for data in (
        first + h.legacy_entry(2, wrapper),
        first + h.legacy_batch(magic, 1, [(b"a", b"1")], codec=outer, inner_attributes=h.GZIP),
    ):
        out = attempt(data)
        assert isinstance(out.error, CorruptRecordError), out
        assert out.error.position == len(first)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_v2_codec(codec_id):
    """§1.1: compression ids 5-7 are 'Unknown compression type id'."""
    first = h.v2_batch(0, [(b"a", b"b")])
    bad = h.v2_batch(1, [(b"x", b"y")], attributes=codec_id)
    out = attempt(first + bad)
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec_id", [4, 5, 6, 7])
def test_unknown_legacy_codec(magic, codec_id):
    """§2.1: zstd (4) is illegal for v0/v1 ('Invalid wrapper compressionType'); 5-7 unknown."""
    first = h.legacy_batch(magic, 0, [(b"a", b"b")])
    inner = h.legacy_entry(0, h.legacy_message(magic, b"x", b"y"))
    wrapper = h.legacy_message(magic, None, h.compress(h.ZSTD, inner), attributes=codec_id)
    out = attempt(first + h.legacy_entry(1, wrapper))
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)


@pytest.mark.parametrize("magic", [3, 4, 127, -1, -128])
def test_unknown_magic(magic):
    """§1.5: magic outside 0..2 is 'Invalid magic found in record' (ByteBufferLogInputStream);
    a negative magic is read as legacy by FileLogInputStream and then fails its CRC-32."""
    first = h.v2_batch(0, [(b"a", b"b")])
    bad = h.v2_batch(1, [(b"x", b"y")], magic=magic)
    out = attempt(first + bad)
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)
    assert str(len(first)) in str(out.error)


@pytest.mark.parametrize("size", [*range(14), -1, -(2**31)])
def test_size_field_below_minimum(size):
    """§1.5 step 2: 'Found record size N smaller than minimum record overhead (14)'."""
    first = h.v2_batch(0, [(b"a", b"b")])
    bad = struct.pack(">qi", 42, size) + b"\x01" * 80
    out = attempt(first + bad)
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 42)
    assert str(len(first)) in str(out.error)


@pytest.mark.parametrize("length", [14, 30, 48])
def test_v2_batch_smaller_than_header(length):
    """§1.5: v2 size < 61 is 'Record batch is corrupt (the size N is smaller than the minimum
    allowed overhead 61)' (length counts after the 12 bytes of offset and size, so 49)."""
    first = h.v2_batch(0, [(b"a", b"b")])
    body = struct.pack(">ibI", -1, 2, 0) + b"\x00" * 100
    bad = struct.pack(">qi", 9, length) + body[:length]
    out = attempt(first + bad + h.v2_batch(10, [(b"c", b"d")]), check_crc=False)
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 9)


def test_v2_batch_of_exactly_61_bytes_is_empty():
    """§1.4: the cleaner's empty batch (61 bytes, count 0) holds no records; not an error."""
    empty = h.v2_batch(3, count=0, last_offset_delta=2)
    assert len(empty) == 61
    out = attempt(h.v2_batch(0, [(b"a", b"1")]) + empty + h.v2_batch(4, [(b"b", b"2")]))
    assert out.error is None and out.warnings == []
    assert out.rows == [(0, b"a", b"1"), (4, b"b", b"2")]


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_shorter_than_its_fields(magic):
    """A v0/v1 message whose key length runs past the message (§2.1) or whose size leaves no
    room for its fixed fields, under a valid CRC: CorruptRecordError."""
    first = h.legacy_batch(magic, 0, [(b"a", b"b")])
    msg = bytearray(h.legacy_message(magic, b"key", b"value"))
    key_len_at = 6 if magic == 0 else 14
    struct.pack_into(">i", msg, key_len_at, 1000)
    struct.pack_into(">I", msg, 0, zlib.crc32(bytes(msg[4:])))
    out = attempt(first + h.legacy_entry(1, bytes(msg)))
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)
    if magic == 1:
        # Size 16, under v1's 22-byte overhead: CRC fine, no room for the key length.
        short = bytes([1, 0]) + b"\x00" * 10
        short = struct.pack(">I", zlib.crc32(short)) + short
        out = attempt(first + h.legacy_entry(1, short))
        assert isinstance(out.error, CorruptRecordError), out
        assert out.error.position == len(first)


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_wrapper_defects(magic):
    """§2.2: null wrapper value, no inner records, inner size < 14 are errors; a truncated
    final inner entry is silently dropped (step 3)."""
    first = h.legacy_batch(magic, 0, [(b"a", b"b")])
    n = len(first)
    null_value = h.legacy_message(magic, None, None, attributes=h.GZIP)
    empty = h.legacy_message(magic, None, h.compress(h.GZIP, b""), attributes=h.GZIP)
    small_inner = h.legacy_message(
        magic, None, h.compress(h.GZIP, struct.pack(">qi", 0, 5) + b"\x00" * 5), attributes=1
    )
    for wrapper in (null_value, empty, small_inner):
        out = attempt(first + h.legacy_entry(1, wrapper))
        assert isinstance(out.error, CorruptRecordError), out
        assert (out.error.position, out.error.offset) == (n, 1)
    inner_offsets = (0, 1) if magic == 1 else (1, 2)
    inner = b"".join(
        h.legacy_entry(o, h.legacy_message(magic, b"k%d" % o, b"v")) for o in inner_offsets
    )
    torn = h.legacy_message(magic, None, h.compress(h.GZIP, inner[:-3]), attributes=h.GZIP)
    out = attempt(first + h.legacy_entry(1, torn))
    assert out.error is None, out
    assert out.rows[1:] == [(1, b"k%d" % inner_offsets[0], b"v")]


def test_v1_wrapper_offset_below_last_inner_offset():
    """§2.2 step 5: wrapper offset < last inner offset and not 0 is an error; 0 means base 0."""
    recs = [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    out = attempt(h.legacy_batch(1, 0, recs, codec=h.GZIP, wrapper_offset=1))
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (0, 1)
    out = attempt(h.legacy_batch(1, 0, recs, codec=h.GZIP, wrapper_offset=0))
    assert out.rows == [(0, b"a", b"1"), (1, b"b", b"2"), (2, b"c", b"3")]


def test_v1_wrapper_offset_arithmetic_does_not_overflow():
    """§2.2 step 5: base = wrapper offset - last inner offset, in Java's wrapping long
    arithmetic, then each inner offset is base + inner. Inner offsets are not CRC-checked
    (step 9), so a valid wrapper can hold any. With one inner message at offset -2^63 and the
    wrapper at 5, Kafka computes base = 5 - (-2^63) (wraps) and offset = base + (-2^63) = 5.
    Either that or a CorruptRecordError naming the batch; never a panic."""
    inner = h.legacy_entry(-(2**63), h.legacy_message(1, b"k", b"v"))
    wrapper = h.legacy_message(1, None, h.compress(h.GZIP, inner), attributes=h.GZIP)
    data = h.legacy_entry(5, wrapper)
    for check_crc in (True, False):
        out = attempt(data, check_crc=check_crc)
        if out.error is None:
            assert out.rows == [(5, b"k", b"v")]
        else:
            assert isinstance(out.error, CorruptRecordError)
            assert (out.error.position, out.error.offset) == (0, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kafkalog.read_batches(data).read_all()
        except KafkaLogError as err:
            assert err.position == 0


@pytest.mark.parametrize(
    ("base", "last_offset_delta", "n"),
    [(2**63 - 2, 2, 3), (2**63 - 1, 2**31 - 1, 1), (-(2**63), -5, 1)],
)
def test_offsets_at_the_ends_of_int64(base, last_offset_delta, n):
    """Offsets are Java longs: lastOffset = baseOffset + lastOffsetDelta and record offset =
    baseOffset + offsetDelta wrap (§1.1, §1.2). Neither read nor read_batches may panic; where
    both answer, they agree on lastOffset."""
    data = h.v2_batch(
        base, [(b"k%d" % i, b"v") for i in range(n)], last_offset_delta=last_offset_delta
    )
    wrapped = (base + last_offset_delta + 2**63) % 2**64 - 2**63
    out = attempt(data, columns=["offset", "lastOffset"])
    if out.error is None:
        assert out.rows == [((base + i + 2**63) % 2**64 - 2**63, wrapped) for i in range(n)]
    else:
        assert isinstance(out.error, CorruptRecordError) and out.error.position == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = kafkalog.read_batches(data).read_all()
        except KafkaLogError as err:
            assert isinstance(err, CorruptRecordError) and err.position == 0
        else:
            assert t.column("baseOffset").to_pylist() == [base]
            assert t.column("lastOffset").to_pylist() == [wrapped]


@pytest.mark.parametrize("codec", V2_CODECS, ids=lambda c: h.CODEC_NAMES[c])
def test_garbage_compressed_stream(codec):
    """Under a valid CRC, bytes that are not a stream of the codec: Kafka's
    'Failed to decompress record stream' (§1.5) -> DecompressionError; a stream cut short
    is a DecompressionError or CorruptRecordError, never records."""
    first = h.v2_batch(0, [(b"a", b"b")])
    garbage = b"this is not compressed at all, not even a little" * 3
    if codec == h.SNAPPY:  # raw snappy fallback would read a literal: make it invalid
        garbage = b"\x0a\x05\xff" + garbage  # 10 bytes, then a copy from before the start
    out = attempt(first + h.v2_batch(1, compressed=garbage, codec=codec, count=1))
    assert isinstance(out.error, DecompressionError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)
    recs = [(b"k%d" % i, b"v" * 200) for i in range(30)]
    stream = h.compress(codec, b"".join(h.v2_record(i, k, v) for i, (k, v) in enumerate(recs)))
    for cut in (len(stream) // 2, len(stream) - 1):
        bad = h.v2_batch(1, compressed=stream[:cut], codec=codec, count=30)
        out = attempt(first + bad)
        assert isinstance(out.error, CorruptRecordError), (cut, out)
        assert out.error.position == len(first)


def test_v2_lz4_wrong_header_checksum():
    """§3.3: v1/v2 LZ4 frames have their header checksum verified ('Stream frame descriptor
    corrupted')."""
    raw = h.v2_record(0, b"k", b"v")
    frame = bytearray(h.kafka_lz4(raw))
    frame[6] = 0x1A  # the broken (v0) checksum is wrong for v2
    out = attempt(h.v2_batch(0, compressed=bytes(frame), codec=h.LZ4, count=1))
    assert isinstance(out.error, CorruptRecordError), out
    assert out.error.position == 0


def test_lz4_frame_leniencies_of_kafka():
    """§3.3: Kafka's LZ4 reader ignores anything after the first frame's EndMark, skips the
    header checksum of magic v0 frames, and reads but does not verify a content checksum.
    Bad input Kafka accepts must read the same here."""
    raw = h.v2_record(0, b"k", b"v")
    framed = h.kafka_lz4(raw)
    out = attempt(h.v2_batch(0, compressed=framed + b"trailing garbage", codec=h.LZ4, count=1))
    assert out.error is None and out.rows == [(0, b"k", b"v")]
    # FLG 0x64 (content checksum flag) + BD 0x40 -> HC 0xA7; the checksum itself is bogus.
    with_checksum = b"\x04\x22\x4d\x18\x64\x40\xa7" + framed[7:] + b"\xde\xad\xbe\xef"
    out = attempt(h.v2_batch(0, compressed=with_checksum, codec=h.LZ4, count=1))
    assert out.error is None and out.rows == [(0, b"k", b"v")]
    # v0 wrapper: any HC byte is accepted.
    inner = h.legacy_entry(3, h.legacy_message(0, b"k", b"v"))
    frame = bytearray(h.kafka_lz4(inner, magic=0))
    frame[6] = 0x00
    wrapper = h.legacy_message(0, None, bytes(frame), attributes=h.LZ4)
    out = attempt(h.legacy_entry(3, wrapper))
    assert out.error is None and out.rows == [(3, b"k", b"v")]


def _control_batch(key, value) -> bytes:
    rec = h.v2_record(0, key, value)
    return h.v2_batch(0, raw_records=rec, count=1, attributes=0x30, producer_id=1, producer_epoch=0)


BAD_CONTROL = {
    # §4: key shorter than 4 bytes -> "Invalid value size found for end control record key"
    "key-too-short": (b"\x00", b"\x00\x00\x00\x00\x00\x05"),
    "key-null": (None, b"\x00\x00\x00\x00\x00\x05"),
    # §4: negative version -> "Invalid version found for control record"
    "key-negative-version": (b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x05"),
    # §4: COMMIT marker value shorter than 6 bytes
    "marker-too-short": (b"\x00\x00\x00\x01", b"\x00\x00"),
    # §4: negative marker version
    "marker-negative-version": (b"\x00\x00\x00\x00", b"\xff\xff\x00\x00\x00\x05"),
}


@pytest.mark.parametrize("name", list(BAD_CONTROL))
def test_malformed_control_record(name):
    """Kafka parses control records on read (the consumer reads each control key, log
    recovery parses transaction markers, §4 and §6) and fails on these. Asked for control
    records, kafkalog must report the batch as corrupt, not invent or drop its type."""
    first = h.v2_batch(0, [(b"a", b"b")])
    data = first + h.set_offset(_control_batch(*BAD_CONTROL[name]), 1)
    out = attempt(data, include_control=True, columns=["offset", "controlType"])
    assert isinstance(out.error, CorruptRecordError), out
    assert (out.error.position, out.error.offset) == (len(first), 1)
    # An unknown control type is not an error (§4: UNKNOWN, ignored).
    ok = attempt(
        first + h.set_offset(_control_batch(b"\x00\x00\x00\x63", b"zz"), 1),
        include_control=True,
        columns=["offset", "controlType"],
    )
    assert ok.error is None and ok.rows == [(0, None), (1, 99)]


# Preallocated / zero tails (§6: log.preallocate=true or a crash leaves zeros; Kafka's recovery
# reads 'record size 0' and truncates there).


@pytest.mark.parametrize("zeros", [1, 11, 12, 17, 18, 61, 4096])
def test_zero_tail(zeros):
    s = seg(2, h.ZSTD)
    out = attempt(s.data + bytes(zeros))
    assert out.error is None, out
    assert out.rows == expect_rows(s.records())
    (w,) = out.of(TruncatedSegmentWarning)
    assert (w.position, w.bytes) == (len(s.data), zeros)


def test_only_zeros():
    out = attempt(bytes(1000))
    assert out.error is None and out.rows == []
    (w,) = out.of(TruncatedSegmentWarning)
    assert (w.position, w.bytes) == (0, 1000)


@pytest.mark.parametrize("zeros", [12, 64, 4096])
def test_zeros_followed_by_data(zeros):
    """Zeros in the middle of a segment are corruption, not a preallocated tail."""
    s = seg(2, h.NONE)
    out = attempt(s.data + bytes(zeros) + h.v2_batch(100, [(b"a", b"b")]))
    assert isinstance(out.error, CorruptRecordError), out
    assert out.error.position == len(s.data)
    out = attempt(s.data + bytes(zeros) + h.v2_batch(100, [(b"a", b"b")]), on_corrupt="stop")
    assert out.rows == expect_rows(s.records())
    (w,) = out.of(StoppedAtCorruptionWarning)
    assert w.position == len(s.data)


def test_large_preallocated_file(tmp_path):
    """A preallocated segment file (sparse zeros well beyond the read chunk)."""
    s = seg(1, h.GZIP)
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.write(s.data)
        f.truncate(len(s.data) + 24 * _MB)
    out = attempt_path(path)
    assert out.error is None and out.rows == expect_rows(s.records())
    (w,) = out.of(TruncatedSegmentWarning)
    assert (w.position, w.bytes, w.path) == (len(s.data), 24 * _MB, str(path))


def test_zeros_beyond_read_chunk_then_data(tmp_path):
    """Zeros longer than one read chunk followed by a batch are still corruption, not a tail:
    the zero check must look at the rest of the file, not only the buffer in hand."""
    s = seg(2, h.NONE)
    path = tmp_path / "00000000000000000000.log"
    gap = 9 * _MB
    with open(path, "wb") as f:
        f.write(s.data)
        f.seek(len(s.data) + gap)
        f.write(h.v2_batch(100, [(b"a", b"b")]))
    out = attempt_path(path)
    assert isinstance(out.error, CorruptRecordError), out
    assert out.error.position == len(s.data)
    assert out.error.path == str(path)


# =====================================================================================
# 4. Policies (§6): Kafka's recovery stops at the first invalid batch of a segment and drops
#    everything after it in the partition ("stop"); "skip" leaves only the bad batch out;
#    "error" raises. A partly decoded corrupt batch never contributes records.
# =====================================================================================


def _three_batches(magic, codec):
    s = h.segment(magic, codec, n_batches=3, per_batch=4)
    assert len(s.entries) == 3
    return s


def _break_crc(s: h.Segment, index: int) -> bytes:
    start, end, _, _ = s.entries[index]
    return h.flip(s.data, end - 2, 0x10)  # a byte near the end: CRC-covered, all formats


POLICY_COMBOS = [(2, h.NONE), (2, h.ZSTD), (1, h.GZIP), (0, h.SNAPPY)]
POLICY_IDS = [f"v{m}-{h.CODEC_NAMES[c]}" for m, c in POLICY_COMBOS]


@pytest.mark.parametrize(("magic", "codec"), POLICY_COMBOS, ids=POLICY_IDS)
def test_policies_on_a_broken_middle_batch(magic, codec):
    s = _three_batches(magic, codec)
    data = _break_crc(s, 1)
    mid_start, mid_end, mid_offset, _ = s.entries[1]
    first, third = s.entries[0][3], s.entries[2][3]

    out = attempt(data)
    assert isinstance(out.error, CrcMismatchError)
    assert (out.error.position, out.error.offset) == (mid_start, mid_offset)

    out = attempt(data, on_corrupt="skip")
    assert out.error is None
    assert out.rows == expect_rows(first + third)
    (w,) = out.of(SkippedBatchWarning)
    assert len(out.warnings) == 1
    assert (w.position, w.offset, w.path) == (mid_start, mid_offset, None)
    assert w.bytes in (None, mid_end - mid_start)
    assert str(mid_start) in str(w)

    out = attempt(data, on_corrupt="stop")
    assert out.error is None
    assert out.rows == expect_rows(first)
    (w,) = out.of(StoppedAtCorruptionWarning)
    assert len(out.warnings) == 1
    assert (w.position, w.offset) == (mid_start, mid_offset)

    # check_crc=False reads the damaged batch (the flipped byte is in a value or compressed
    # stream): no policy applies unless decoding fails.
    out = attempt(data, check_crc=False)
    assert out.error is not None or len(out.rows) == 12


def test_read_batches_reports_crc_without_failing():
    """read_batches lists each batch with crcValid, like kafka-dump-log's isvalid (§7.2)."""
    s = _three_batches(2, h.LZ4)
    data = _break_crc(s, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = kafkalog.read_batches(data).read_all()
        assert t.column("crcValid").to_pylist() == [True, False, True]
        assert t.column("batchPosition").to_pylist() == [e[0] for e in s.entries]
        t = kafkalog.read_batches(data, check_crc=False).read_all()
        assert t.column("crcValid").to_pylist() == [None, None, None]


def test_skip_cannot_resync_after_a_broken_size_field():
    """ "skip" needs the size field to find the next batch; when the size itself is broken it
    stops there (StoppedAtCorruptionWarning)."""
    s = _three_batches(2, h.NONE)
    data = bytearray(s.data)
    mid = s.entries[1][0]
    struct.pack_into(">i", data, mid + 8, 3)
    out = attempt(bytes(data), on_corrupt="skip")
    assert out.error is None
    assert out.rows == expect_rows(s.entries[0][3])
    (w,) = out.of(StoppedAtCorruptionWarning)
    assert w.position == mid


def _batch_with_bad_fourth_record(base: int) -> tuple[bytes, list]:
    recs = [(b"r%d" % i, b"v%d" % i) for i in range(6)]
    raw = b"".join(h.v2_record(i, k, v, timestamp_delta=i) for i, (k, v) in enumerate(recs[:3]))
    raw += h.varint(200) + b"\x00" * 5  # record 4 claims more than the batch holds
    return h.v2_batch(base, raw_records=raw, count=6), recs


@pytest.mark.parametrize("batch_size", [1, 2, 65536])
def test_partly_decoded_batch_is_rolled_back(batch_size):
    """The first three records of a batch decode, the fourth is broken (valid CRC). None of the
    batch's records may be returned, whatever the output batch size."""
    before = h.v2_batch(0, [(b"a", b"1"), (b"b", b"2")])
    bad, _ = _batch_with_bad_fourth_record(2)
    after = h.v2_batch(8, [(b"c", b"3")])
    data = before + bad + after

    out = attempt(data, on_corrupt="skip", batch_size=batch_size)
    assert out.rows == [(0, b"a", b"1"), (1, b"b", b"2"), (8, b"c", b"3")]
    assert [w.position for w in out.of(SkippedBatchWarning)] == [len(before)]
    out = attempt(data, on_corrupt="stop", batch_size=batch_size)
    assert out.rows == [(0, b"a", b"1"), (1, b"b", b"2")]

    # on_corrupt="error": what was handed out before the error holds nothing of the batch.
    seen = []
    with pytest.raises(CorruptRecordError) as info:
        for rb in kafkalog.read_bytes(data, columns=COLS, batch_size=batch_size):
            seen.extend(rb.column("offset").to_pylist())
    assert set(seen) <= {0, 1}
    assert (info.value.position, info.value.offset) == (len(before), 2)


def _write_partition(dir_path, segments: dict[int, bytes]):
    dir_path.mkdir(parents=True, exist_ok=True)
    paths = {}
    for base, data in segments.items():
        p = dir_path / f"{base:020d}.log"
        p.write_bytes(data)
        paths[base] = p
    return paths


@pytest.mark.parametrize(("magic", "codec"), POLICY_COMBOS, ids=POLICY_IDS)
def test_policies_across_segments_of_a_partition(tmp_path, magic, codec):
    s1 = _three_batches(magic, codec)
    second = [(b"s2-%d" % i, b"x%d" % i) for i in range(3)]
    if magic == 2:
        seg2 = h.v2_batch(12, second, codec=codec)
    else:
        seg2 = h.legacy_batch(magic, 12, second, codec=codec)
    paths = _write_partition(tmp_path / "orders-0", {0: _break_crc(s1, 1), 12: seg2})
    mid_start = s1.entries[1][0]
    first, third = s1.entries[0][3], s1.entries[2][3]
    rows2 = [(12 + i, k, v) for i, (k, v) in enumerate(second)]

    out = attempt_path(tmp_path / "orders-0")
    assert isinstance(out.error, CrcMismatchError)
    assert (out.error.path, out.error.position) == (str(paths[0]), mid_start)

    # Kafka's recovery drops the rest of the partition after a corruption (§6).
    out = attempt_path(tmp_path / "orders-0", on_corrupt="stop")
    assert out.rows == expect_rows(first)
    (w,) = out.of(StoppedAtCorruptionWarning)
    assert (w.path, w.position) == (str(paths[0]), mid_start)
    assert len(out.warnings) == 1

    out = attempt_path(tmp_path / "orders-0", on_corrupt="skip")
    assert out.rows == expect_rows(first + third) + rows2
    (w,) = out.of(SkippedBatchWarning)
    assert (w.path, w.position) == (str(paths[0]), mid_start)


def test_stop_is_per_partition(tmp_path):
    """Recovery is per partition (§6): stopping in one partition of a log directory does not
    stop the others."""
    s = _three_batches(2, h.NONE)
    _write_partition(tmp_path / "a-0", {0: _break_crc(s, 1), 12: h.v2_batch(12, [(b"q", b"q")])})
    _write_partition(tmp_path / "b-0", {0: s.data})
    out = attempt_path(tmp_path, on_corrupt="stop")
    assert out.error is None
    assert out.rows == expect_rows(s.entries[0][3]) + expect_rows(s.records())
    assert len(out.of(StoppedAtCorruptionWarning)) == 1


def test_error_in_a_later_segment_names_that_file(tmp_path):
    s = _three_batches(2, h.GZIP)
    seg2 = h.segment(2, h.NONE, n_batches=3, per_batch=2)
    bad2 = h.flip(seg2.data, seg2.entries[2][1] - 1)
    paths = _write_partition(tmp_path / "t-3", {0: s.data, 100: bad2})
    out = attempt_path(tmp_path / "t-3")
    assert isinstance(out.error, CrcMismatchError)
    assert out.error.path == str(paths[100])
    assert out.error.position == seg2.entries[2][0]
    assert out.error.offset == seg2.entries[2][2]
    assert str(paths[100]) in str(out.error)


# =====================================================================================
# 5. Error attributes and argument errors.
# =====================================================================================


def test_error_attributes_from_a_file(tmp_path):
    s = _three_batches(2, h.SNAPPY)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_break_crc(s, 2))
    with pytest.raises(CrcMismatchError) as info:
        kafkalog.read(path).read_all()
    err = info.value
    assert isinstance(err, CorruptRecordError) and isinstance(err, KafkaLogError)
    assert err.path == str(path)
    assert err.position == s.entries[2][0]
    assert err.offset == s.entries[2][2]
    assert err.kind == "crc_mismatch"
    assert str(s.entries[2][0]) in str(err)
    with pytest.raises(CrcMismatchError) as info:
        kafkalog.read_bytes(path.read_bytes()).read_all()
    assert info.value.path is None and info.value.position == s.entries[2][0]


def test_errors_survive_pickling():
    import pickle

    out = attempt(_break_crc(_three_batches(2, h.NONE), 0))
    again = pickle.loads(pickle.dumps(out.error))
    assert type(again) is CrcMismatchError
    assert (again.position, again.offset, again.kind) == (0, 0, "crc_mismatch")


def test_nonexistent_path(tmp_path):
    missing = tmp_path / "nope" / "00000000000000000000.log"
    with pytest.raises(KafkaLogIOError) as info:
        kafkalog.read(missing).read_all()
    assert isinstance(info.value, OSError) and isinstance(info.value, KafkaLogError)
    assert info.value.path == str(missing)
    with pytest.raises(OSError):
        kafkalog.read_batches(str(missing)).read_all()


@pytest.mark.parametrize(
    "options",
    [
        {"on_corrupt": "bogus"},
        {"columns": ["offset", "no_such_column"]},
        {"columns": "offset"},
        {"batch_size": 0},
        {"batch_size": -5},
        {"max_decompressed_size": 0},
        {"max_decompressed_size": (1 << 30) + 1},
    ],
    ids=lambda o: repr(o),
)
def test_bad_options(options, tmp_path):
    data = h.v2_batch(0, [(b"a", b"b")])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    for read in (
        lambda: kafkalog.read_bytes(data, **options),
        lambda: kafkalog.read(path, **options),
    ):
        with pytest.raises(InvalidArgumentError) as info:
            read().read_all()
        assert isinstance(info.value, ValueError)


def test_largest_allowed_limit_is_accepted():
    data = h.v2_batch(0, [(b"a", b"b")], codec=h.ZSTD)
    assert attempt(data, max_decompressed_size=1 << 30).rows == [(0, b"a", b"b")]


# =====================================================================================
# 6. Concurrency: readers are independent; the same files from several threads at once give
#    identical results.
# =====================================================================================


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    combos = [(2, h.ZSTD), (2, h.NONE), (1, h.GZIP), (2, h.LZ4)]
    for p, (magic, codec) in enumerate(combos):
        segs = {}
        base = 0
        for _ in range(3):
            s = h.segment(magic, codec, n_batches=60, per_batch=20)
            data = bytearray()
            for start, end, _, _ in s.entries:  # rebase offsets onto this segment
                entry = bytearray(s.data[start:end])
                struct.pack_into(">q", entry, 0, struct.unpack_from(">q", entry)[0] + base)
                data += entry
            segs[base] = bytes(data)
            base += 60 * 20
        _write_partition(root / f"topic{p}-{p}", segs)
    return root


def _read_all(path, **options):
    return kafkalog.read(path, batch_metadata=True, batch_size=500, **options).read_all()


def test_same_directory_from_four_threads(log_dir):
    expected = _read_all(log_dir)
    assert expected.num_rows == 4 * 3 * 1200
    barrier = threading.Barrier(4)
    results, errors = [None] * 4, []

    def work(i):
        try:
            barrier.wait()
            results[i] = _read_all(log_dir)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    for r in results:
        assert r is not None and r.equals(expected)


def test_one_reader_per_thread_on_different_files(log_dir):
    files = sorted(log_dir.glob("*/*.log"))[:8]
    expected = [_read_all(f) for f in files]
    results, errors = [None] * len(files), []
    barrier = threading.Barrier(len(files))

    def work(i):
        try:
            barrier.wait()
            results[i] = _read_all(files[i])
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(files))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    for got, want in zip(results, expected, strict=True):
        assert got is not None and got.equals(want)


def test_interleaved_iteration_of_two_readers(log_dir):
    """Two readers stepped alternately in one thread do not share state."""
    files = sorted(log_dir.glob("*/*.log"))
    a = kafkalog.read(files[0], batch_size=100)
    b = kafkalog.read(files[1], batch_size=100)
    got_a, got_b = [], []
    ia, ib = iter(a), iter(b)
    while ia or ib:
        for it, got in ((ia, got_a), (ib, got_b)):
            if it is not None:
                nxt = next(it, None)
                if nxt is None:
                    if it is ia:
                        ia = None
                    else:
                        ib = None
                else:
                    got.append(nxt)
    assert pa.Table.from_batches(got_a).equals(kafkalog.read(files[0]).read_all())
    assert pa.Table.from_batches(got_b).equals(kafkalog.read(files[1]).read_all())


# =====================================================================================
# 7. Fuzz: random bytes and random damage to valid segments. Only kafkalog errors or results;
#    every call quick; with check_crc=True no (key, value) that is not in the segment.
# =====================================================================================

FUZZ_BASES = [
    h.segment(0, h.NONE, 2, 2),
    h.segment(0, h.LZ4, 2, 3),
    h.segment(1, h.GZIP, 2, 3),
    h.segment(1, h.SNAPPY, 2, 3),
    h.segment(2, h.NONE, 3, 3),
    h.segment(2, h.ZSTD, 2, 3),
    h.segment(2, h.LZ4, 2, 3),
    h.segment(2, h.SNAPPY, 2, 3),
]

_mutation = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 10**6)),
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 16)),
    st.tuples(st.just("int32"), st.integers(0, 10**6), st.integers(-(2**31), 2**31 - 1)),
)


def _mutate(data: bytes, ops) -> bytes:
    b = bytearray(data)
    for op in ops:
        if not b:
            break
        pos = op[1] % (len(b) + 1)
        if op[0] == "truncate":
            del b[pos:]
        elif op[0] == "flip" and pos < len(b):
            b[pos] ^= op[2]
        elif op[0] == "insert":
            b[pos:pos] = op[2]
        elif op[0] == "delete":
            del b[pos : pos + op[2]]
        elif op[0] == "int32" and pos + 4 <= len(b):
            struct.pack_into(">i", b, pos, op[2])
    return bytes(b)


def _fuzz_once(data: bytes, check_crc: bool, on_corrupt: str, known=None):
    t0 = time.monotonic()
    out = attempt(data, check_crc=check_crc, on_corrupt=on_corrupt, max_decompressed_size=_MB)
    assert time.monotonic() - t0 < 5
    only_kafkalog_warnings(out)
    if out.error is not None:
        assert type(out.error).__module__ == "kafkalog.errors"
    elif known is not None and check_crc:
        pairs = {(r.key, r.value) for r in known}
        assert all((k, v) in pairs for _, k, v in out.rows), out.rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kafkalog.read_batches(data, check_crc=check_crc, on_corrupt=on_corrupt).read_all()
        except KafkaLogError:
            pass


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(
    base=st.sampled_from(range(len(FUZZ_BASES))),
    ops=st.lists(_mutation, min_size=1, max_size=4),
    check_crc=st.booleans(),
    on_corrupt=st.sampled_from(["error", "skip", "stop"]),
)
def test_fuzz_mutated_segments(base, ops, check_crc, on_corrupt):
    s = FUZZ_BASES[base]
    _fuzz_once(_mutate(s.data, ops), check_crc, on_corrupt, known=s.records())


@settings(max_examples=60, deadline=None, database=None)
@given(
    data=st.binary(max_size=400),
    check_crc=st.booleans(),
    on_corrupt=st.sampled_from(["error", "skip", "stop"]),
)
def test_fuzz_random_bytes(data, check_crc, on_corrupt):
    _fuzz_once(data, check_crc, on_corrupt)


@settings(max_examples=60, deadline=None, database=None)
@given(
    magic=st.sampled_from([0, 1, 2]),
    body=st.binary(min_size=0, max_size=200),
    check_crc=st.booleans(),
)
def test_fuzz_plausible_headers(magic, body, check_crc):
    """Random bodies behind a plausible entry header (right size, known magic, correct CRC),
    so the fuzz gets past framing and the CRC into batch and record decoding."""
    if magic == 2:
        rest = struct.pack(">ibI", -1, 2, h.calc_crc32c(body)) + body
    else:
        rest = struct.pack(">I", zlib.crc32(bytes([magic]) + body)) + bytes([magic]) + body
    _fuzz_once(struct.pack(">qi", 0, len(rest)) + rest, check_crc, "error")


# --------------------------------------------------------------------------------------------
# Wrong input a new user gives (issue 28)

EXAMPLE_LOGS = Path(__file__).parent.parent / "examples" / "logs"


@pytest.mark.parametrize("suffix", ["index", "timeindex"])
def test_reading_an_index_file_is_refused(suffix):
    index = EXAMPLE_LOGS / "orders-0" / f"00000000000000000000.{suffix}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no misleading "partial batch" warning either
        with pytest.raises(InvalidArgumentError, match="not a log segment"):
            kafkalog.read(index)


def test_inverted_bounds_are_refused():
    logs = EXAMPLE_LOGS / "orders-0"
    with pytest.raises(InvalidArgumentError, match="end_offset=5 is before start_offset=10"):
        kafkalog.read(logs, start_offset=10, end_offset=5)
    with pytest.raises(InvalidArgumentError, match="end_timestamp"):
        kafkalog.read(logs, start_timestamp=2000, end_timestamp=1000)
    assert kafkalog.read(logs, start_offset=5, end_offset=5).read_all().num_rows == 0


def test_a_missing_path_is_named_once(tmp_path):
    missing = tmp_path / "bad" / "nonexistent"
    with pytest.raises(KafkaLogIOError) as info:
        kafkalog.read(missing)
    assert str(info.value) == f"{missing}: No such file or directory"


def test_warnings_point_at_the_callers_line(tmp_path):
    d = tmp_path / "t-0"
    d.mkdir()
    seg = (EXAMPLE_LOGS / "orders-0" / "00000000000000000000.log").read_bytes()
    (d / "00000000000000000000.log").write_bytes(seg[:-3])  # a partial batch at the end
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kafkalog.read(d).read_all()
    torn = [w for w in caught if issubclass(w.category, TruncatedSegmentWarning)]
    assert torn
    assert all(w.filename == __file__ for w in torn), [(w.filename, w.lineno) for w in torn]


def test_import_kafkalog_spark_without_pyspark_says_what_to_install():
    code = "import sys; sys.modules['pyspark'] = None; import kafkalog.spark"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert "pip install 'kafkalog[spark]'" in p.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("name", "field", "reported"),
    [
        # Garbage in the offset field (the random bytes): not an offset of the segment.
        ("00000000000000000000.log", 5725774384215588310, None),
        ("00000000000000000000.log", -6463073338252302474, None),
        ("00000000000000001000.log", 1000 + 2**31, None),
        # An offset the segment can hold is the batch's, whatever else is wrong with it.
        ("00000000000000000000.log", 3, 3),
        ("00000000000000001000.log", 1000 + 2**31 - 1, 1000 + 2**31 - 1),
    ],
)
def test_an_offset_read_from_garbage_is_not_reported_as_one(tmp_path, name, field, reported):
    """A header whose size is plausible but whose magic is not 0-2 fails; its offset field is
    reported only when a segment with the file's base offset could hold it (offsets are kept
    within Int.MaxValue of the segment's base, docs/format.md §5.1). Neither the offset nor
    the magic byte a segment's: not a segment at all (issue 38), a NotASegmentError."""
    log = tmp_path / "t-0" / name
    log.parent.mkdir()
    log.write_bytes(struct.pack(">qiib", field, 100, 0, 72) + bytes(96))
    with pytest.raises(CorruptRecordError) as caught:
        kafkalog.read(log).read_all()
    err = caught.value
    assert err.position == 0
    assert err.offset == reported
    if reported is None:
        assert isinstance(err, NotASegmentError)
        assert "not a Kafka segment: the offset at byte 0 is" in str(err)
        assert "the magic byte at byte 16 is 72" in str(err)
        assert f"offset {field})" not in str(err)
    else:
        assert "invalid magic byte 72" in str(err)
        assert f"offset {reported})" in str(err)
