"""Tiered storage (KIP-405) buckets read in place: Aiven's plugin layout (chunked, optionally
zstd-compressed and AES-256-GCM encrypted segments with a JSON manifest) and Kafka's
LocalTieredStorage layout.

The buckets are built here from the plugin's documented format (the encoder below, written from
the format, not from the plugin's code), out of real broker segments (examples/logs and the
corpus), and read back against the same segments in their broker directories.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import struct
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import kafkalog
from kafkalog.errors import (
    CorruptRecordError,
    DecryptionError,
    EncryptionKeyError,
    InvalidArgumentError,
    TieredStorageError,
)

zstandard = pytest.importorskip("zstandard")
aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
rsa_mod = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")
from cryptography.hazmat.primitives import serialization  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "logs"
TOPIC_ID = "MWJ6FHTfRYy67jzw-deq_Q"  # base64url: may hold - and _


# --- the encoder -----------------------------------------------------------------------------


def _mgf1(seed: bytes, length: int) -> bytes:
    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.sha3_512(seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return out[:length]


def oaep_sha3_512(public_key, message: bytes) -> bytes:
    """RSA-OAEP (RFC 8017) with SHA3-512 as the hash and in MGF1, no label: how the plugin
    wraps a data key (BouncyCastle's OAEPWithSHA3-512AndMGF1Padding)."""
    numbers = public_key.public_numbers()
    k = (numbers.n.bit_length() + 7) // 8
    h = 64
    db = hashlib.sha3_512(b"").digest() + b"\0" * (k - len(message) - 2 * h - 2) + b"\1" + message
    seed = os.urandom(h)
    masked_db = bytes(a ^ b for a, b in zip(db, _mgf1(seed, k - h - 1), strict=True))
    masked_seed = bytes(a ^ b for a, b in zip(seed, _mgf1(masked_db, h), strict=True))
    em = int.from_bytes(b"\0" + masked_seed + masked_db, "big")
    return pow(em, numbers.e, numbers.n).to_bytes(k, "big")


def chunk_sizes_codec(values: list[int]) -> bytes:
    """The variable chunk index's binary codec."""
    out = struct.pack(">i", len(values))
    if len(values) == 1:
        out += struct.pack(">i", values[0])
    elif len(values) > 1:
        base = min(values[:-1])
        width = max(max(1, ((v - base).bit_length() + 7) // 8) for v in values[:-1])
        out += struct.pack(">ib", base, width)
        for v in values[:-1]:
            out += (v - base).to_bytes(4, "big")[4 - width :]
        out += struct.pack(">i", values[-1])
    return out


def zstd_frame(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_content_size=True).compress(data)


class Keys:
    def __init__(self, key_id: str = "key-2024") -> None:
        self.key_id = key_id
        self.private = rsa_mod.generate_private_key(public_exponent=65537, key_size=2048)
        self.pem = self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def aiven_segment(
    out: Path,
    segment: Path,
    *,
    topic: str,
    partition: int,
    chunk_size: int,
    index: str = "fixed",
    compression: bool = False,
    keys: Keys | None = None,
    epochs: dict[int, int] | None = None,
    segment_id: str | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    log_bytes: bytes | None = None,
) -> Path:
    """Writes one segment as Aiven's plugin uploads it, under
    ``out/<topic>-<topicId>/<partition>/``; returns that directory."""
    log = segment.read_bytes() if log_bytes is None else log_bytes
    base = int(segment.name.split(".")[0])
    start = base if start_offset is None else start_offset
    if end_offset is None:
        end_offset = max(kafkalog.read(segment).read_all()["offset"].to_pylist())
    segment_id = segment_id or base64.urlsafe_b64encode(os.urandom(16)).decode()[:22]
    data_key, aad = os.urandom(32), os.urandom(32)

    def transform(chunk: bytes, compress: bool) -> bytes:
        if compress:
            chunk = zstd_frame(chunk)
        if keys is not None:
            iv = os.urandom(12)
            chunk = iv + aead.AESGCM(data_key).encrypt(iv, chunk, aad)
        return chunk

    chunks = [
        transform(log[i : i + chunk_size], compression) for i in range(0, len(log), chunk_size)
    ]
    if index == "fixed":
        assert not compression, "the plugin writes a fixed index only without compression"
        full = chunk_size + (28 if keys else 0)
        chunk_index = {
            "type": "fixed",
            "originalChunkSize": chunk_size,
            "originalFileSize": len(log),
            "transformedChunkSize": full,
            "finalTransformedChunkSize": len(chunks[-1]) if chunks else 0,
        }
    else:
        chunk_index = {
            "type": "variable",
            "originalChunkSize": chunk_size,
            "originalFileSize": len(log),
            "transformedChunks": base64.b64encode(
                zstd_frame(chunk_sizes_codec([len(c) for c in chunks]))
            ).decode(),
        }
    indexes = b""
    slots = {}
    stem = segment.with_suffix("")
    epochs = epochs if epochs is not None else {0: start}
    epoch_text = f"0\n{len(epochs)}\n" + "".join(f"{e} {o}\n" for e, o in sorted(epochs.items()))
    sources = {
        "offset": stem.with_suffix(".index"),
        "timestamp": stem.with_suffix(".timeindex"),
        "producerSnapshot": stem.with_suffix(".snapshot"),
        "leaderEpoch": epoch_text.encode(),
        "transaction": stem.with_suffix(".txnindex"),
    }
    for name, src in sources.items():
        if isinstance(src, Path):
            if not src.exists():
                if name == "transaction":
                    slots[name] = None
                    continue
                raw = b""
            else:
                raw = src.read_bytes()
        else:
            raw = src
        stored = transform(raw, False) if raw else b""
        slots[name] = {"position": len(indexes), "size": len(stored)}
        indexes += stored
    manifest = {
        "version": "1",
        "chunkIndex": chunk_index,
        "segmentIndexes": slots,
        "compression": compression,
        "remoteLogSegmentMetadata": {
            "remoteLogSegmentId": {
                "topicIdPartition": {
                    "topicId": TOPIC_ID,
                    "topicPartition": {"topic": topic, "partition": partition},
                },
                "id": segment_id,
            },
            "startOffset": start,
            "endOffset": end_offset,
            "maxTimestampMs": 0,
            "brokerId": 1,
            "eventTimestampMs": 0,
            "segmentLeaderEpochs": {str(e): o for e, o in epochs.items()},
        },
    }
    if keys is not None:
        wrapped = oaep_sha3_512(keys.private.public_key(), data_key)
        manifest["encryption"] = {
            "dataKey": f"{keys.key_id}:{base64.b64encode(wrapped).decode()}",
            "aad": base64.b64encode(aad).decode(),
        }
    d = out / f"{topic}-{TOPIC_ID}" / str(partition)
    d.mkdir(parents=True, exist_ok=True)
    name = f"{start:020d}-{segment_id}"
    (d / f"{name}.log").write_bytes(b"".join(chunks))
    (d / f"{name}.indexes").write_bytes(indexes)
    (d / f"{name}.rsm-manifest").write_text(json.dumps(manifest))
    return d


def aiven_partition(out: Path, partition_dir: Path, topic: str, partition: int, **kw) -> Path:
    d = None
    for seg in sorted(partition_dir.glob("*.log")):
        d = aiven_segment(out, seg, topic=topic, partition=partition, **kw)
    return d


def local_tiered_partition(out: Path, partition_dir: Path, topic: str, partition: int) -> Path:
    """Kafka's LocalTieredStorage layout: ``<topic>-<partition>-<topicId>/<offset>-<id>.*``."""
    d = out / f"{topic}-{partition}-{TOPIC_ID}"
    d.mkdir(parents=True)
    for seg in sorted(partition_dir.glob("*.log")):
        base = int(seg.name.split(".")[0])
        sid = base64.urlsafe_b64encode(os.urandom(16)).decode()[:22]
        for suffix in ("log", "index", "timeindex", "txnindex"):
            src = seg.with_suffix("." + suffix)
            if src.exists():
                shutil.copy(src, d / f"{base}-{sid}.{suffix}")
        (d / f"{base}-{sid}.leader_epoch_checkpoint").write_text(f"0\n1\n0 {base}\n")
        # The producer snapshot (copied last by LocalTieredStorage): an empty one.
        body = struct.pack(">i", 0)
        crc = _crc32c(body)
        (d / f"{base}-{sid}.snapshot").write_bytes(struct.pack(">hI", 1, crc) + body)
    return d


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def table(source, **kw) -> pa.Table:
    return kafkalog.read(source, **kw).read_all()


def listing(source, **kw) -> pa.Table:
    return kafkalog.read_batches(source, **kw).read_all()


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


COMBOS = [
    ("fixed", False, False),
    ("fixed", False, True),
    ("variable", False, False),
    ("variable", False, True),
    ("variable", True, False),
    ("variable", True, True),
]


# --- reading ---------------------------------------------------------------------------------


@pytest.mark.parametrize("index,compression,encrypted", COMBOS)
def test_every_chunk_layout_reads_as_the_broker_directory(
    tmp_path, keys, index, compression, encrypted
):
    src = EXAMPLES / "orders-0"
    aiven_partition(
        tmp_path,
        src,
        "orders",
        0,
        chunk_size=200,
        index=index,
        compression=compression,
        keys=keys if encrypted else None,
    )
    ek = {keys.key_id: keys.pem} if encrypted else None
    # The segments, their topic and partition from the manifests.
    segs = kafkalog.segments(tmp_path, encryption_keys=ek)
    assert [(s["topic"], s["partition"], s["base_offset"]) for s in segs] == [
        ("orders", 0, 0),
        ("orders", 0, 15),
    ]
    assert [s["size"] for s in segs] == [p.stat().st_size for p in sorted(src.glob("*.log"))]
    # The reassembled bytes: every batch at the same position, of the same size, with a valid
    # CRC over its bytes, as in the original segments.
    got = listing(tmp_path, encryption_keys=ek).drop_columns(["topic", "partition"])
    want = listing(src).drop_columns(["topic", "partition"])
    assert got.equals(want)
    assert all(got["crcValid"].to_pylist())
    # Records, and the indexes inside .indexes as the broker's files.
    assert table(tmp_path, encryption_keys=ek).equals(table(src))
    log = segs[1]["path"]
    for suffix in ("index", "timeindex"):
        virtual = log[: -len("log")] + suffix
        original = src / f"00000000000000000015.{suffix}"
        assert kafkalog.read_index(virtual, encryption_keys=ek).equals(
            kafkalog.read_index(original)
        )
    # Offset and timestamp bounds go through the segments' indexes.
    ts = table(src)["timestamp"].to_pylist()[20]
    for bounds in ({"start_offset": 17, "end_offset": 25}, {"start_timestamp": ts}):
        assert table(tmp_path, encryption_keys=ek, **bounds).equals(table(src, **bounds))


def test_s3_bucket_plan_and_read_committed(tmp_path, keys, s3):
    aiven_partition(
        tmp_path / "b",
        EXAMPLES / "orders-0",
        "orders",
        0,
        chunk_size=300,
        index="variable",
        compression=True,
        keys=keys,
    )
    aiven_partition(tmp_path / "b", EXAMPLES / "orders-1", "orders", 1, chunk_size=300)
    uri = s3.upload(tmp_path / "b", "tiered-a") + "/"
    opts = dict(storage_options=s3.options, encryption_keys={keys.key_id: keys.pem})
    want = table([EXAMPLES / "orders-0", EXAMPLES / "orders-1"])
    assert table(uri, **opts).equals(want)
    # The key as a file path.
    pem = tmp_path / "k.pem"
    pem.write_bytes(keys.pem)
    assert table(uri, storage_options=s3.options, encryption_keys={keys.key_id: pem}).equals(want)
    assert table(uri, isolation_level="read_committed", **opts).equals(
        table([EXAMPLES / "orders-0", EXAMPLES / "orders-1"], isolation_level="read_committed")
    )
    items = kafkalog.plan(uri, target_bytes=500, **opts)
    assert {i.partition for i in items} == {0, 1}
    assert kafkalog.read_items(items, **opts).read_all().equals(want)


def test_local_tiered_storage_layout(tmp_path):
    local_tiered_partition(tmp_path, EXAMPLES / "orders-0", "orders", 0)
    local_tiered_partition(tmp_path, EXAMPLES / "users-0", "users", 0)
    segs = kafkalog.segments(tmp_path)
    assert [(s["topic"], s["partition"], s["base_offset"]) for s in segs] == [
        ("orders", 0, 0),
        ("orders", 0, 15),
        ("users", 0, 0),
    ]
    assert table(tmp_path).equals(table([EXAMPLES / "orders-0", EXAMPLES / "users-0"]))
    assert table(tmp_path, start_offset=16).equals(
        table([EXAMPLES / "orders-0", EXAMPLES / "users-0"], start_offset=16)
    )


def test_remote_and_local_read_as_one_partition(tmp_path):
    # The broker still holds the newest segment (already uploaded too).
    bucket, local = _remote_and_local(tmp_path, chunk_size=256)
    want = table(EXAMPLES / "orders-0")
    for paths in ([bucket, local], [local, bucket]):
        got = table(paths)
        assert got.equals(want), paths
    items = kafkalog.plan([bucket, local], target_bytes=None)
    assert kafkalog.read_items(items).read_all().equals(want)


def test_duplicates_after_a_leader_change_and_orphans(tmp_path):
    src = EXAMPLES / "orders-0"
    first, second = sorted(src.glob("*.log"))
    out = tmp_path / "bucket"
    # Segment 0 uploaded twice (by the old and the new leader), then segment 15 in epoch 1.
    aiven_segment(out, first, topic="orders", partition=0, chunk_size=256, epochs={0: 0})
    aiven_segment(out, first, topic="orders", partition=0, chunk_size=256, epochs={0: 0})
    aiven_segment(out, second, topic="orders", partition=0, chunk_size=256, epochs={0: 0, 1: 15})
    # A replica that was truncated later uploaded other records at 15.. in epoch 0.
    stale = aiven_segment(
        out,
        second,
        topic="orders",
        partition=0,
        chunk_size=256,
        epochs={0: 0},
        log_bytes=(EXAMPLES / "clicks-0" / "00000000000000000000.log").read_bytes(),
    )
    # A failed upload: segment objects without a manifest.
    orphan = stale / "00000000000000000030-AAAAAAAAAAAAAAAAAAAAAA"
    orphan.with_suffix(".log").write_bytes(b"junk")
    orphan.with_suffix(".indexes").write_bytes(b"")
    with pytest.warns(UserWarning) as caught:
        got = table(out)
    assert got.equals(table(src))
    message = "\n".join(str(w.message) for w in caught)
    assert "00000000000000000030-AAAAAAAAAAAAAAAAAAAAAA.log: no manifest" in message
    assert "duplicate" in message and "leader-epoch lineage" in message
    assert "junk" not in message


def test_a_truncated_replica_segment_serves_only_its_valid_offsets(tmp_path):
    src = EXAMPLES / "orders-0"
    records = table(src)
    whole = tmp_path / "whole"
    # One segment holding offsets 0.. in small batches (so offset 15 starts a batch).
    kafkalog.write(
        whole,
        records.select(["key", "value", "timestamp"]),
        batch_records=5,
        topic="orders",
        partition=0,
    )
    seg = next(whole.rglob("*.log"))
    out = tmp_path / "bucket"
    # The old leader's segment covers everything in epoch 0; the new leader's starts at 15 in
    # epoch 1: the old one's records from 15 on are not on the lineage.
    aiven_segment(out, seg, topic="orders", partition=0, chunk_size=128, epochs={0: 0})
    aiven_segment(
        out,
        sorted(src.glob("*.log"))[1],
        topic="orders",
        partition=0,
        chunk_size=128,
        epochs={0: 0, 1: 15},
    )
    got = table(out)
    assert got["offset"].to_pylist() == records["offset"].to_pylist()
    assert got.slice(15).equals(records.slice(15).cast(got.schema))


# --- what is fetched -------------------------------------------------------------------------


class _Counting(pafs.FileSystemHandler):
    """A local filesystem counting the bytes read from each file."""

    def __init__(self) -> None:
        self.fs = pafs.LocalFileSystem()
        self.read: dict[str, int] = {}

    def get_type_name(self):
        return "counting"

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.fs.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.fs.get_file_info(selector)

    def open_input_file(self, path):
        counts = self.read

        class F:
            def __init__(self):
                self.f = open(path, "rb")

            def read(self, n=-1):
                data = self.f.read(n)
                counts[path] = counts.get(path, 0) + len(data)
                return data

            def seek(self, *a):
                return self.f.seek(*a)

            def tell(self):
                return self.f.tell()

            def close(self):
                self.f.close()

            @property
            def closed(self):
                return self.f.closed

            def readable(self):
                return True

            def seekable(self):
                return True

        return pa.PythonFile(F(), mode="r")

    def open_input_stream(self, path):
        return self.open_input_file(path)

    def create_dir(self, *a):
        raise NotImplementedError

    delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = create_dir
    move = copy_file = open_output_stream = open_append_stream = create_dir


def test_a_bounded_read_fetches_only_the_chunks_it_needs(tmp_path, corpus, keys):
    part = corpus / "segments/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0"
    seg = part / "00000000000000000000.log"
    chunk = 64 << 10
    d = aiven_segment(
        tmp_path,
        seg,
        topic="invoice",
        partition=0,
        chunk_size=chunk,
        index="variable",
        compression=True,
        keys=keys,
    )
    log_obj = next(d.glob("*.log"))
    handler = _Counting()
    fs = pafs.PyFileSystem(handler)
    ek = {keys.key_id: keys.pem}
    offsets = table(seg, columns=["offset"])["offset"].to_pylist()
    target = offsets[len(offsets) * 3 // 4]
    bounds = {"start_offset": target, "end_offset": target + 10}
    got = table(tmp_path, filesystem=fs, encryption_keys=ek, **bounds)
    assert got["offset"].to_pylist() == list(range(target, target + 10))
    assert got.equals(table(seg, **bounds))
    fetched = handler.read.get(str(log_obj), 0)
    # Only the chunks holding the ten records (three quarters in): not the ones before, and no
    # read-ahead past them (the segment has about fifteen 64 KiB chunks). A chunk is at most
    # its original size plus zstd's and GCM's few bytes.
    assert 0 < fetched <= 2 * (chunk + 1024), (fetched, log_obj.stat().st_size)
    # Planning spreads the segment over items of whole chunks; decoding them reads the same.
    items = kafkalog.plan(tmp_path, target_bytes=chunk // 2, filesystem=fs, encryption_keys=ek)
    assert len(items) > 4
    assert all(i.size >= chunk or i is items[-1] for i in items)
    assert (
        kafkalog.read_items(items, filesystem=fs, encryption_keys=ek)
        .read_all()
        .equals(table(tmp_path, filesystem=fs, encryption_keys=ek))
    )
    # A whole read fetches each byte of the object once.
    handler.read.clear()
    table(tmp_path, filesystem=fs, encryption_keys=ek, columns=["offset"])
    assert handler.read[str(log_obj)] == log_obj.stat().st_size


# --- bad input -------------------------------------------------------------------------------


def _one_encrypted(tmp_path, keys) -> Path:
    return aiven_segment(
        tmp_path,
        EXAMPLES / "orders-0" / "00000000000000000000.log",
        topic="orders",
        partition=0,
        chunk_size=200,
        index="variable",
        compression=True,
        keys=keys,
    )


def test_missing_and_wrong_keys(tmp_path, keys):
    _one_encrypted(tmp_path, keys)
    with pytest.raises(EncryptionKeyError, match="key-2024.*not given") as e:
        table(tmp_path)
    assert ".rsm-manifest" in str(e.value)
    other = Keys(keys.key_id)
    with pytest.raises(EncryptionKeyError, match="could not be unwrapped") as e:
        table(tmp_path, encryption_keys={keys.key_id: other.pem})
    assert "PRIVATE KEY" not in str(e.value)
    with pytest.raises(EncryptionKeyError, match="not an RSA private key"):
        table(tmp_path, encryption_keys={keys.key_id: b"-----BEGIN PRIVATE KEY-----\nAAAA\n"})


def test_a_tampered_chunk_fails_its_tag(tmp_path, keys):
    d = _one_encrypted(tmp_path, keys)
    log = next(d.glob("*.log"))
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 1
    log.write_bytes(bytes(data))
    failed = r"chunk \d+ \(object bytes \d+\.\.\d+.*authentication failed"
    with pytest.raises(DecryptionError, match=failed) as e:
        table(tmp_path, encryption_keys={keys.key_id: keys.pem})
    assert e.value.path.endswith(".log")
    assert e.value.kind == "decryption"
    assert str(keys.pem if isinstance(keys.pem, str) else keys.pem.decode())[40:80] not in str(
        e.value
    )


def test_bad_manifest_and_chunk_index(tmp_path):
    d = aiven_segment(
        tmp_path,
        EXAMPLES / "orders-0" / "00000000000000000000.log",
        topic="orders",
        partition=0,
        chunk_size=200,
        index="variable",
        compression=True,
    )
    log = next(d.glob("*.log"))
    manifest = next(d.glob("*.rsm-manifest"))
    good = manifest.read_text()
    log.write_bytes(log.read_bytes()[:-5])
    with pytest.raises(TieredStorageError, match="chunk index.*describes") as e:
        table(tmp_path)
    assert e.value.path == str(log)
    assert e.value.kind == "tiered_storage"
    manifest.write_text(good[:50])
    with pytest.raises(TieredStorageError, match="segment manifest: not JSON") as e:
        table(tmp_path)
    assert e.value.path == str(manifest)
    # Each also the broader class a caller may already catch.
    assert issubclass(TieredStorageError, CorruptRecordError)
    assert issubclass(DecryptionError, TieredStorageError)
    assert issubclass(EncryptionKeyError, InvalidArgumentError)


def test_a_remote_segment_crossing_the_local_log_start_ends_there(tmp_path):
    src = EXAMPLES / "orders-0"
    records = table(src)
    whole = tmp_path / "whole"
    kafkalog.write(
        whole,
        records.select(["key", "value", "timestamp"]),
        batch_records=5,
        topic="orders",
        partition=0,
    )
    aiven_segment(
        tmp_path / "bucket",
        next(whole.rglob("*.log")),
        topic="orders",
        partition=0,
        chunk_size=128,
        index="variable",
        compression=True,
    )
    local = _broker_with_newest_segment(tmp_path)
    for got in (
        table([tmp_path / "bucket", local]),
        kafkalog.read_items(kafkalog.plan([local, tmp_path / "bucket"])).read_all(),
    ):
        assert got["offset"].to_pylist() == records["offset"].to_pylist()
        assert got["value"].to_pylist() == records["value"].to_pylist()
        # Offsets from 15 on come from the broker's own segment.
        assert got.slice(15).equals(records.slice(15))


def test_manifests_without_segment_metadata(tmp_path, keys):
    """Older manifests lack remoteLogSegmentMetadata: topic and partition come from the key,
    leader epochs from the leader-epoch index inside .indexes, and a segment's end from the
    next one's start."""
    src = EXAMPLES / "orders-0"
    d = aiven_partition(tmp_path, src, "orders", 0, chunk_size=256, keys=keys)
    for m in d.glob("*.rsm-manifest"):
        manifest = json.loads(m.read_text())
        del manifest["remoteLogSegmentMetadata"]
        m.write_text(json.dumps(manifest))
    ek = {keys.key_id: keys.pem}
    segs = kafkalog.segments(tmp_path, encryption_keys=ek)
    assert [(s["topic"], s["partition"], s["base_offset"]) for s in segs] == [
        ("orders", 0, 0),
        ("orders", 0, 15),
    ]
    assert table(tmp_path, encryption_keys=ek).equals(table(src))


def test_a_real_broker_partition_round_trips(tmp_path, corpus, keys):
    part = corpus / "segments/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0"
    aiven_partition(
        tmp_path,
        part,
        "invoice",
        0,
        chunk_size=256 << 10,
        index="variable",
        compression=True,
        keys=keys,
    )
    ek = {keys.key_id: keys.pem}
    assert [s["base_offset"] for s in kafkalog.segments(tmp_path, encryption_keys=ek)] == [
        0,
        30626,
        60611,
        90867,
    ]
    assert listing(tmp_path, encryption_keys=ek).equals(listing(part))
    assert table(tmp_path, encryption_keys=ek).equals(table(part))
    bounds = {"start_offset": 45000, "end_offset": 70000, "isolation_level": "read_committed"}
    assert table(tmp_path, encryption_keys=ek, **bounds).equals(table(part, **bounds))


def test_spark_reads_an_encrypted_bucket_with_encryption_keys(tmp_path, keys, spark):
    """The data source and mapInArrow decoding take the keys (read on the driver)."""
    import kafkalog.spark as ks

    src = EXAMPLES / "orders-0"
    aiven_partition(
        tmp_path, src, "orders", 0, chunk_size=200, index="variable", compression=True, keys=keys
    )
    key_file = tmp_path.parent / f"{tmp_path.name}-key.pem"
    key_file.write_bytes(keys.pem if isinstance(keys.pem, bytes) else keys.pem.encode())
    df = (
        spark.read.format("kafkalog")
        .option("subscribe", "orders")
        .option("encryptionKeys", json.dumps({keys.key_id: str(key_file)}))
        .option("targetBytes", "1")
        .load(str(tmp_path))
    )
    got = sorted((r.offset, bytes(r.value)) for r in df.select("offset", "value").collect())
    want = table(src)
    assert got == sorted(zip(want["offset"].to_pylist(), want["value"].to_pylist(), strict=True))
    d = ks.decoder(encryption_keys={keys.key_id: keys.pem})
    decoded = pa.Table.from_batches(
        list(d(iter([pa.RecordBatch.from_pylist([{"path": str(tmp_path)}])])))
    )
    assert decoded.num_rows == want.num_rows
    with pytest.raises(Exception, match=keys.key_id):
        spark.read.format("kafkalog").load(str(tmp_path)).count()  # no key: named, refused


def _remote_and_local(tmp_path, chunk_size: int = 64) -> tuple[Path, Path]:
    """orders-0 with all its segments in an Aiven bucket and its newest one still local."""
    src = EXAMPLES / "orders-0"
    aiven_partition(
        tmp_path / "bucket",
        src,
        "orders",
        0,
        chunk_size=chunk_size,
        index="variable",
        compression=True,
    )
    return tmp_path / "bucket", _broker_with_newest_segment(tmp_path)


def _broker_with_newest_segment(tmp_path) -> Path:
    """A broker's orders-0 directory still holding its newest segment (base offset 15)."""
    local = tmp_path / "logs" / "orders-0"
    local.mkdir(parents=True)
    for f in (EXAMPLES / "orders-0").glob("00000000000000000015.*"):
        shutil.copy(f, local / f.name)
    return local


def test_remote_and_local_list_as_one_partition(tmp_path):
    """segments() says the broker's segments continue the tiered ones, and ListOffsets
    answers for one partition from the first remote offset to the local log end."""
    from kafkalog.spark import planning

    bucket, local = _remote_and_local(tmp_path)
    for paths in ([bucket, local], [local, bucket]):
        segs = kafkalog.segments(paths)
        assert [s["continues"] for s in segs] == [False] + [True] * (len(segs) - 1)
        parts = planning.discover(paths)
        assert [p.key for p in parts] == [("orders", 0)]
        planning.list_offsets(parts)
        want = table(EXAMPLES / "orders-0")
        assert (parts[0].earliest, parts[0].latest) == (
            want["offset"][0].as_py(),
            want["offset"][-1].as_py() + 1,
        )
    # Two copies of one broker partition are two logs, as before.
    other = tmp_path / "copy" / "orders-0"
    shutil.copytree(local, other)
    assert [p.key for p in planning.discover([local, other])] == [("orders", 0)] * 2


def test_spark_reads_remote_and_local_as_one_partition_split_at_chunks(tmp_path, spark):
    """Each offset once, in one Spark partition key, and a tiered segment spread over several
    tasks (cut at chunk boundaries) when targetBytes asks for small pieces."""
    bucket, local = _remote_and_local(tmp_path)
    want = table(EXAMPLES / "orders-0")
    df = spark.read.format("kafkalog").option("targetBytes", "1").load([str(bucket), str(local)])
    rows = df.select("partition", "offset", "value").collect()
    assert sorted(r.offset for r in rows) == want["offset"].to_pylist()
    assert {r.partition for r in rows} == {0}
    got = sorted((r.offset, bytes(r.value)) for r in rows)
    assert got == list(zip(want["offset"].to_pylist(), want["value"].to_pylist(), strict=True))
    assert df.rdd.getNumPartitions() > 2
    tasks_with_rows = df.rdd.mapPartitions(lambda it: [sum(1 for _ in it)]).collect()
    assert sum(1 for n in tasks_with_rows if n) > 2, tasks_with_rows


def test_a_forced_layout(tmp_path):
    """kafkalog.tiered_layout forces how names are read; a layout that does not match what
    is there is an error naming the path."""
    src = EXAMPLES / "orders-0"
    aiven_partition(tmp_path, src, "orders", 0, chunk_size=256, index="variable")
    want = table(src)
    assert table(tmp_path, storage_options={"kafkalog.tiered_layout": "aiven"}).equals(want)
    assert table(tmp_path, storage_options={"kafkalog.tiered_layout": "auto"}).equals(want)
    with pytest.raises(InvalidArgumentError, match='tiered_layout="kafka".*another layout'):
        table(tmp_path, storage_options={"kafkalog.tiered_layout": "kafka"})
    with pytest.warns(UserWarning, match="no Kafka"):
        got = table(tmp_path, storage_options={"kafkalog.tiered_layout": "broker"})
    assert got.num_rows == 0
    with pytest.raises(InvalidArgumentError, match="auto, broker, aiven, kafka"):
        table(tmp_path, storage_options={"kafkalog.tiered_layout": "s3"})
    # Kafka's own naming read with its layout forced.
    local = tmp_path / "local"
    local_tiered_partition(local, src, "orders", 0)
    assert table(local, storage_options={"kafkalog.tiered_layout": "kafka"}).equals(want)
    with pytest.raises(InvalidArgumentError, match="another layout"):
        table(local, storage_options={"kafkalog.tiered_layout": "aiven"})


def _remote_log_metadata(
    root: Path,
    segments: list[tuple[str, bytes, int, int, list[int]]],
    *,
    topic_id: bytes | None = None,
    partition_deletes: list[tuple[str, bytes, int]] | None = None,
):
    """A __remote_log_metadata-0 directory: per segment (topic, segment id, start, end,
    states after the first record), a RemoteLogSegmentMetadataRecord (COPY_SEGMENT_STARTED)
    and a RemoteLogSegmentMetadataUpdateRecord per further state, all of partition 0 of the
    topic id ``topic_id`` (the bucket's by default); then per (topic, topic id, state) a
    RemotePartitionDeleteMetadataRecord of partition 0."""
    from test_internal_topics import _framed, _segment_id, _uvarint, write_topic

    if topic_id is None:
        topic_id = base64.urlsafe_b64decode(TOPIC_ID + "==")
    records = []
    for topic, seg, start, end, states in segments:
        sid = _segment_id(topic, topic_id, 0, seg)
        records.append(
            _framed(
                0,
                sid
                + struct.pack(">qqiqq", start, end, 1, 5000, 6000)
                + _uvarint(2)
                + struct.pack(">iq", 0, start)
                + b"\0"
                + struct.pack(">i", 4096)
                + b"\0"
                + struct.pack(">b", 0)
                + b"\0",
            )
        )
        for state in states:
            update = sid + struct.pack(">iq", 1, 7000) + b"\0" + struct.pack(">b", state) + b"\0"
            records.append(_framed(1, update))
    for topic, deleted_id, state in partition_deletes or []:
        tp = _uvarint(len(topic) + 1) + topic.encode() + deleted_id + struct.pack(">i", 0) + b"\0"
        records.append(_framed(2, tp + struct.pack(">iqb", 1, 8000, state) + b"\0"))
    return Path(write_topic(root, "__remote_log_metadata", 0, [(None, r) for r in records]))


def _segment_ids(bucket: Path) -> dict[int, bytes]:
    """Each remote .log's base offset -> its segment id's 16 bytes (from its object name)."""
    out = {}
    for log in bucket.rglob("*.log"):
        base, ident = log.stem.split("-", 1)
        out[int(base)] = base64.urlsafe_b64decode(ident + "==")
    return out


def test_remote_log_metadata_is_the_authoritative_list(tmp_path):
    """With __remote_log_metadata given, only segments it has as COPY_SEGMENT_FINISHED are
    read; one still copying and one it does not know are skipped with a warning naming them,
    and a finished one missing from the bucket is named too."""
    src = EXAMPLES / "orders-0"
    bucket = tmp_path / "bucket"
    aiven_partition(bucket, src, "orders", 0, chunk_size=256, index="variable")
    ids = _segment_ids(bucket)
    assert sorted(ids) == [0, 15]
    want = table(src)
    meta = _remote_log_metadata(
        tmp_path / "meta",
        [
            ("orders", ids[0], 0, 14, [1]),  # COPY_SEGMENT_FINISHED
            ("orders", ids[15], 15, 29, []),  # COPY_SEGMENT_STARTED only
            ("orders", bytes(range(100, 116)), 30, 40, [1]),  # finished, not in the bucket
        ],
    )
    opts = {"kafkalog.remote_log_metadata": str(meta)}
    with pytest.warns(UserWarning) as w:
        got = table(bucket, storage_options=opts)
    text = "\n".join(str(x.message) for x in w)
    assert "COPY_SEGMENT_STARTED" in text and "not among the paths read" in text
    assert got["offset"].to_pylist() == [o for o in want["offset"].to_pylist() if o < 15]
    assert got.equals(want.slice(0, got.num_rows))
    # Without it, the listing's heuristic reads both.
    assert table(bucket).equals(want)
    # Once the second segment finished copying, it is read too; a segment the metadata does
    # not know is not.
    meta2 = _remote_log_metadata(
        tmp_path / "meta2",
        [("orders", ids[0], 0, 14, [1]), ("orders", ids[15], 15, 29, [1])],
    )
    assert table(bucket, storage_options={"kafkalog.remote_log_metadata": str(meta2)}).equals(want)
    meta3 = _remote_log_metadata(tmp_path / "meta3", [("orders", ids[15], 15, 29, [1, 2])])
    with pytest.warns(UserWarning, match="not in __remote_log_metadata"):
        got = table(bucket, storage_options={"kafkalog.remote_log_metadata": str(meta3)})
    assert got.num_rows == 0  # the first unknown, the second being deleted
    (tmp_path / "meta4").mkdir()
    with pytest.raises(InvalidArgumentError, match="no segment of __remote_log_metadata"):
        table(bucket, storage_options={"kafkalog.remote_log_metadata": str(tmp_path / "meta4")})


def test_a_partition_delete_applies_to_its_topic_id_only(tmp_path):
    """Kafka keeps remote log metadata per topic id and partition: the delete marker of a
    topic deleted and created again under its name leaves the new topic's segments readable,
    even where the metadata partition given holds only the old topic's records; a marker of
    the bucket's own topic id skips its segments with a warning."""
    src = EXAMPLES / "orders-0"
    bucket = tmp_path / "bucket"
    aiven_partition(bucket, src, "orders", 0, chunk_size=256, index="variable")
    ids = _segment_ids(bucket)
    want = table(src)
    old_id, new_id = bytes(range(16)), base64.urlsafe_b64decode(TOPIC_ID + "==")
    assert old_id != new_id
    old_deleted = [("orders", old_id, 2)]  # DELETE_PARTITION_FINISHED
    finished = [("orders", ids[0], 0, 14, [1]), ("orders", ids[15], 15, 29, [1])]
    both = _remote_log_metadata(tmp_path / "m1", finished, partition_deletes=old_deleted)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = table(bucket, storage_options={"kafkalog.remote_log_metadata": str(both)})
    assert got.equals(want)
    assert not [x for x in w if "not read" in str(x.message)]
    only_old = _remote_log_metadata(tmp_path / "m2", [], partition_deletes=old_deleted)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = table(bucket, storage_options={"kafkalog.remote_log_metadata": str(only_old)})
    assert got.equals(want)
    assert not [x for x in w if "not read" in str(x.message)]
    for state in (0, 1, 2):  # marked, started, finished: none of it is served
        own = _remote_log_metadata(
            tmp_path / f"m3-{state}", finished, partition_deletes=[("orders", new_id, state)]
        )
        with pytest.warns(UserWarning, match="remote data deleted") as w:
            got = table(bucket, storage_options={"kafkalog.remote_log_metadata": str(own)})
        assert got.num_rows == 0
        assert not any("not among the paths read" in str(x.message) for x in w)
