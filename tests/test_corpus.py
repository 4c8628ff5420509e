"""Every file of the real-bytes corpus (``tests/corpus``) decodes to exactly what Apache
Kafka's own Java client decodes from it (kafka-clients 3.9.1; see the corpus README).

Data-driven: each expected-values file is a test case, so adding a file to the corpus adds a
test. Batches are compared with :func:`kafkalog.read_batches`, records with :func:`kafkalog.read`
(control records and batch metadata included, CRCs unchecked, as the Java client iterates).
Where Java rejects the bytes, kafkalog must raise a typed error.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import kafkalog
from conftest import CORPUS

TIMESTAMP_TYPES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


def _cases(pattern: str) -> list:
    files = sorted(CORPUS.glob(pattern)) if CORPUS.is_dir() else []
    return [pytest.param(f, id=str(f.relative_to(CORPUS))) for f in files] or [
        pytest.param(None, id="corpus-missing")
    ]


SEGMENT_CASES = _cases("expected/**/*.log.json")
VECTOR_CASES = _cases("vectors/*/*.json")


def _hex(value: bytes | None):
    if value is None:
        return None
    if len(value) > 4096:
        return {"len": len(value), "sha256": hashlib.sha256(value).hexdigest()}
    return value.hex()


def _expected(spec_path: Path) -> tuple[list[dict], list[dict], dict]:
    """(batches, records with a `batch` index, the rest) from an expected-values file."""
    spec = json.loads(spec_path.read_text())
    expected = spec["expected"]
    if "batches_in" in expected:
        folder = spec_path.parent
        with gzip.open(folder / expected["batches_in"], "rt") as f:
            batches = [json.loads(line) for line in f]
        with gzip.open(folder / expected["records_in"], "rt") as f:
            records = [json.loads(line) for line in f]
    else:
        batches, records = [], []
        for i, batch in enumerate(expected["batches"]):
            for record in batch.pop("records", []):
                records.append({**record, "batch": i})
            batches.append(batch)
    return batches, records, expected


def _actual_batches(source) -> tuple[list[dict], list]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = kafkalog.read_batches(source).read_all()
    out = []
    for b in table.to_pylist():
        row = {
            "magic": b["magic"],
            "base_offset": b["baseOffset"],
            "last_offset": b["lastOffset"],
            "size_in_bytes": b["batchSize"],
            "compression": b["compression"],
            "timestamp_type": TIMESTAMP_TYPES[b["timestampType"]],
            "max_timestamp": b["maxTimestamp"],
            "crc": b["crc"],
            "crc_valid": b["crcValid"],
            "position": b["batchPosition"],
        }
        if b["magic"] == 2:
            row.update(
                partition_leader_epoch=b["partitionLeaderEpoch"],
                producer_id=b["producerId"],
                producer_epoch=b["producerEpoch"],
                base_sequence=b["baseSequence"],
                last_sequence=b["lastSequence"],
                is_transactional=b["isTransactional"],
                is_control=b["isControl"],
                record_count=b["recordCount"],
            )
        out.append(row)
    return out, caught


def _actual_records(source, positions: list[int]) -> list[dict]:
    kwargs = dict(batch_metadata=True, include_control=True, check_crc=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
        if isinstance(source, bytes):
            table = kafkalog.read_bytes(source, **kwargs).read_all()
        else:
            table = kafkalog.read(source, **kwargs).read_all()
    batch_index = {pos: i for i, pos in enumerate(positions)}
    out = []
    for r in table.to_pylist():
        ts = r["timestamp"]
        row = {
            "batch": batch_index[r["batchPosition"]],
            "offset": r["offset"],
            "timestamp": -1 if ts is None else _millis(ts),
            "key": _hex(r["key"]),
            "value": _hex(r["value"]),
            "headers": [[k["key"], _hex(k["value"])] for k in (r["headers"] or [])],
        }
        if r["magic"] == 2:
            row["sequence"] = r["sequence"]
        if r["isControl"]:
            row["control_type"] = CONTROL_TYPES.get(r["controlType"], "UNKNOWN")
            if row["control_type"] in ("ABORT", "COMMIT") and r["value"] is not None:
                row["coordinator_epoch"] = int.from_bytes(r["value"][2:6], "big", signed=True)
        out.append(row)
    return out


def _millis(ts) -> int:
    return int(pa.scalar(ts, pa.timestamp("us", "UTC")).value // 1000)


def _compare(batches, records, expected, actual_batches, actual_records):
    keys = ["batch", "offset", "timestamp", "key", "value", "headers", "sequence"]
    keys += ["control_type", "coordinator_epoch"]
    want_records = [{k: r[k] for k in keys if k in r} for r in records]
    assert len(actual_records) == len(want_records)
    for got, want in zip(actual_records, want_records, strict=True):
        assert {k: got.get(k) for k in want} == want
    assert len(actual_batches) == len(batches)
    for got, want in zip(actual_batches, batches, strict=True):
        want = {k: v for k, v in want.items() if k not in ("records", "batch")}
        assert {k: got.get(k) for k in want} == want


def _check(spec_path: Path, source, data: bytes):
    batches, records, expected = _expected(spec_path)
    consumed, trailing = expected["consumed_bytes"], expected["trailing_bytes"]
    if expected["error"]:
        # Java rejects these bytes; so must we, with a typed error at the first bad batch.
        with pytest.raises(kafkalog.CorruptRecordError) as info:
            kafkalog.read_bytes(data, check_crc=False).read_all()
        assert info.value.position == consumed
        return
    actual_batches, caught = _actual_batches(source)
    positions = [b.pop("position") for b in actual_batches]
    actual_records = _actual_records(source, positions)
    _compare(batches, records, expected, actual_batches, actual_records)
    assert sum(b["size_in_bytes"] for b in actual_batches) == consumed
    torn = [w.message for w in caught if isinstance(w.message, kafkalog.TruncatedSegmentWarning)]
    assert sum(w.bytes for w in torn) == trailing
    # With CRC checking on (the default), a batch whose CRC is wrong is an error.
    bad = [i for i, b in enumerate(actual_batches) if not b["crc_valid"]]
    if bad:
        with pytest.raises(kafkalog.CrcMismatchError) as info:
            kafkalog.read_bytes(data).read_all()
        assert info.value.position == positions[bad[0]]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
            assert kafkalog.read_bytes(data).read_all().num_rows == sum(
                1 for r in records if "control_type" not in r
            )


@pytest.mark.parametrize("spec_path", SEGMENT_CASES)
def test_segment_decodes_as_kafka_does(spec_path, corpus):
    segment = corpus / "segments" / spec_path.relative_to(corpus / "expected").with_suffix("")
    _check(spec_path, segment, segment.read_bytes())


@pytest.mark.parametrize("spec_path", VECTOR_CASES)
def test_vector_decodes_as_kafka_does(spec_path, corpus):
    data = (spec_path.parent / json.loads(spec_path.read_text())["file"]).read_bytes()
    _check(spec_path, data, data)


def test_segment_directories_read_whole(corpus):
    """Each partition directory reads as its segments in offset order, with topic and
    partition from the directory name."""
    for spec in sorted((corpus / "expected").glob("**/*.log.json")):
        folder = (corpus / "segments" / spec.relative_to(corpus / "expected")).parent
        name = folder.name.split("@")[0]
        if "-" not in name or not name.rsplit("-", 1)[1].isdigit():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
            table = kafkalog.read(folder, check_crc=False).read_all()
        if "@" in folder.name:
            continue  # a versioned copy: its directory name is not a partition name
        topic, partition = name.rsplit("-", 1)
        assert set(table.column("topic").to_pylist()) <= {topic}
        assert set(table.column("partition").to_pylist()) <= {int(partition)}
        offsets = table.column("offset").to_pylist()
        assert offsets == sorted(offsets)
