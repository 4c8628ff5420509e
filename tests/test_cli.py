"""The ``kafkalog`` command-line tool (``kafkalog.cli``).

``dump`` is checked against Apache Kafka's ``kafka-dump-log.sh`` output format (3.x, see
``docs/format.md`` section 7): the expected lines are built here, independently of
kafkalog, from the corpus's expected values (what Kafka's Java client decodes from each file;
``corpus/README.md``) and from index and snapshot files built with ``struct``. ``convert`` is
checked by reading its output back, ``info`` against :func:`kafkalog.read_batches`.

Most tests call :func:`kafkalog.cli.main` in-process; a few run ``python -m kafkalog`` and the
installed ``kafkalog`` script in a subprocess.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from kafka.record.util import calc_crc32c

import kafkalog
from conftest import CORPUS, REPO
from kafkalog.cli import main

EXAMPLES = REPO / "examples" / "logs"
ANY_CRC = "<CRC>"
CONTROL_IDS = {
    "ABORT": 0,
    "COMMIT": 1,
    "LEADER_CHANGE": 2,
    "SNAPSHOT_HEADER": 3,
    "SNAPSHOT_FOOTER": 4,
    "KRAFT_VERSION": 5,
    "KRAFT_VOTERS": 6,
}


# --------------------------------------------------------------------------------------------
# helpers


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Run the tool in-process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_subprocess(*argv: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("KAFKALOG_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "kafkalog", *[str(a) for a in argv]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def assert_one_line_error(err: str, *fragments: str) -> None:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("kafkalog: "), err
    for fragment in fragments:
        assert fragment in lines[0], err


def _cases(pattern: str, root: Path | None = None) -> list:
    root = root or CORPUS
    files = sorted(root.glob(pattern)) if root.is_dir() else []
    return [pytest.param(f, id=str(f.relative_to(CORPUS))) for f in files] or [
        pytest.param(None, id="corpus-missing")
    ]


SEGMENT_CASES = _cases("expected/**/*.log.json")
INDEX_CASES = _cases("expected/**/*.index.json")
TIME_INDEX_CASES = _cases("expected/**/*.timeindex.json")
VECTOR_CASES = _cases("vectors/*/*.json")


def load_expected(spec_path: Path) -> tuple[dict, list[dict], list[dict]]:
    """(the spec, its batches, its records each with its batch's index ``batch``)."""
    spec = json.loads(spec_path.read_text())
    expected = spec["expected"]
    if "batches_in" in expected:
        with gzip.open(spec_path.parent / expected["batches_in"], "rt") as f:
            batches = [json.loads(line) for line in f]
        with gzip.open(spec_path.parent / expected["records_in"], "rt") as f:
            records = [json.loads(line) for line in f]
    else:
        batches, records = [], []
        for i, batch in enumerate(expected["batches"]):
            batch = dict(batch)
            for record in batch.pop("records", []):
                records.append({**record, "batch": i})
            batches.append(batch)
    return spec, batches, records


def segment_of(spec_path: Path) -> Path:
    """The corpus file an expected-values file describes."""
    rel = spec_path.relative_to(CORPUS / "expected")
    return CORPUS / "segments" / str(rel)[: -len(".json")]


def _size(value) -> int:
    if value is None:
        return -1
    if isinstance(value, dict):
        return value["len"]
    return len(value) // 2


def _bool(value) -> str:
    return "true" if value else "false"


def _text(value) -> str:
    return bytes.fromhex(value).decode("utf-8", errors="replace")


def batch_positions(batches: list[dict]) -> list[int]:
    positions, position = [], 0
    for b in batches:
        positions.append(position)
        position += b["size_in_bytes"]
    return positions


def expected_batch_line(b: dict, position: int) -> str:
    """kafka-dump-log's batch line (docs/format.md 7.2), from expected values."""
    if b["magic"] >= 2:
        head = (
            f"baseOffset: {b['base_offset']} lastOffset: {b['last_offset']} "
            f"count: {b['record_count']} baseSequence: {b['base_sequence']} "
            f"lastSequence: {b['last_sequence']} producerId: {b['producer_id']} "
            f"producerEpoch: {b['producer_epoch']} "
            f"partitionLeaderEpoch: {b['partition_leader_epoch']} "
            f"isTransactional: {_bool(b['is_transactional'])} "
            f"isControl: {_bool(b['is_control'])} "
            # no corpus batch carries a delete horizon (the expected values do not list it)
            "deleteHorizonMs: OptionalLong.empty"
        )
    else:
        head = f"offset: {b['last_offset']}"
    return (
        f"{head} position: {position} {b['timestamp_type']}: {b['max_timestamp']} "
        f"size: {b['size_in_bytes']} magic: {b['magic']} compresscodec: {b['compression']} "
        f"crc: {b['crc']} isvalid: {_bool(b['crc_valid'])}"
    )


def _leader_change(value_hex: str) -> str:
    """A LeaderChangeMessage value (clients' definition, read at version 0: int16 version, int32
    leaderId, voters and grantingVoters as compact arrays of {int32 voterId, tagged fields},
    tagged fields) as Kafka's JSON converter writes it. Small counts only (one-byte varints)."""
    buf = bytes.fromhex(value_hex)
    version, leader = struct.unpack_from(">hi", buf)
    pos, lists = 6, []
    for _ in range(2):
        count, pos = buf[pos] - 1, pos + 1
        ids = []
        for _ in range(count):
            ids.append(struct.unpack_from(">i", buf, pos)[0])
            assert buf[pos + 4] == 0  # no tagged fields
            pos += 5
        lists.append([{"voterId": i} for i in ids])
    obj = {"version": version, "leaderId": leader, "voters": lists[0], "grantingVoters": lists[1]}
    return json.dumps(obj, separators=(",", ":"))


def expected_record_line(
    b: dict, r: dict, *, print_data: bool = False, skip_metadata: bool = False
) -> str:
    """kafka-dump-log's record line (HEAD/3.x; control records as Kafka 4.1+ prints them)."""
    parts = []
    prefix = "| "
    if not skip_metadata:
        parts.append(
            f"| offset: {r['offset']} {b['timestamp_type']}: {r['timestamp']} "
            f"keySize: {_size(r['key'])} valueSize: {_size(r['value'])}"
        )
        prefix = " "
        if b["magic"] >= 2:
            keys = ",".join(h[0] for h in r["headers"])
            parts.append(f" sequence: {r['sequence']} headerKeys: [{keys}]")
        else:
            # An uncompressed v0/v1 message is its own batch: its CRC is the batch's. The CRC
            # of a message inside a compressed wrapper is not among the expected values.
            crc = b["crc"] if b["compression"] == "none" else ANY_CRC
            parts.append(f" isValid: {_bool(r['record_crc_valid'])} crc: {crc}}}")
        if b.get("is_control"):
            control = r["control_type"]
            if control in ("ABORT", "COMMIT"):
                parts.append(f" endTxnMarker: {control} coordinatorEpoch: {r['coordinator_epoch']}")
            elif control == "LEADER_CHANGE":
                parts.append(f" LeaderChange: {_leader_change(r['value'])}")
            else:
                parts.append(f" controlType: {control}({CONTROL_IDS[control]})")
    if print_data and not b.get("is_control"):
        if r["key"] is not None:
            parts.append(f"{prefix}key: {_text(r['key'])}")
        if r["value"] is not None:
            parts.append(f" payload: {_text(r['value'])}")
    return "".join(parts)


def expected_dump(
    shown: str,
    batches: list[dict],
    records: list[dict],
    *,
    deep: bool,
    print_data: bool = False,
    skip_metadata: bool = False,
    trailing: int = 0,
    start: int = 0,
) -> list[str]:
    lines = [f"Dumping {shown}", f"Log starting offset: {start}"]
    by_batch: dict[int, list[dict]] = {}
    for r in records:
        by_batch.setdefault(r["batch"], []).append(r)
    for i, (b, position) in enumerate(zip(batches, batch_positions(batches), strict=True)):
        lines.append(expected_batch_line(b, position))
        if deep:
            for r in by_batch.get(i, []):
                lines.append(
                    expected_record_line(b, r, print_data=print_data, skip_metadata=skip_metadata)
                )
    if trailing:
        lines.append(f"Found {trailing} invalid bytes at the end of {Path(shown).name}")
    return lines


def expected_non_consecutive(abs_path: str, records: list[dict]) -> list[str]:
    """Kafka 3.x's stderr report: pairs newest first; the first record is not compared."""
    pairs, last = [], None
    for r in records:
        if last is not None and r["offset"] != last + 1:
            pairs.append((last, r["offset"]))
        last = r["offset"]
    if not pairs:
        return []
    return [f"Non-consecutive offsets in {abs_path}"] + [
        f"  {a} is followed by {b}" for a, b in reversed(pairs)
    ]


def lines_of(text: str) -> list[str]:
    """Output lines, split on "\\n" only (keys and values may hold other line breaks)."""
    assert text == "" or text.endswith("\n")
    return text.split("\n")[:-1]


def assert_lines(actual: list[str], expected: list[str]) -> None:
    """The output is exactly the expected lines, where ``<CRC>`` stands for any number."""
    text = "".join(line + "\n" for line in actual)
    want = "".join(line + "\n" for line in expected)
    if text == want:
        return
    if ANY_CRC in want:
        pattern = re.escape(want).replace(re.escape(ANY_CRC), r"\d+")
        if re.fullmatch(pattern, text, flags=re.S):
            return
    got = text.split("\n")
    for n, line in enumerate(want.split("\n")):
        line_pattern = re.escape(line).replace(re.escape(ANY_CRC), r"\d+")
        assert n < len(got), f"missing line {n + 1}: {line}"
        assert re.fullmatch(line_pattern, got[n]), (
            f"line {n + 1}:\n  actual:   {got[n]}\n  expected: {line}"
        )
    raise AssertionError(f"{len(got)} lines, expected {len(want.split(chr(10)))}")


@pytest.fixture(scope="module")
def vectors_dir(tmp_path_factory):
    """Each corpus vector (a raw record set) copied as a segment file of its own."""
    root = tmp_path_factory.mktemp("vectors")
    out = {}
    for spec in sorted((CORPUS / "vectors").glob("*/*.json")):
        d = root / f"{spec.parent.name}-{spec.stem}"
        d.mkdir()
        seg = d / "00000000000000000000.log"
        shutil.copyfile(spec.with_suffix(".bin"), seg)
        out[spec] = seg
    return out


# --------------------------------------------------------------------------------------------
# dump: .log files against kafka-dump-log's format


@pytest.mark.parametrize("spec_path", SEGMENT_CASES)
def test_dump_log_batches_and_records(corpus, capsys, spec_path):
    spec, batches, records = load_expected(spec_path)
    seg = segment_of(spec_path)
    start = int(seg.name.split(".")[0])
    trailing = spec["expected"]["trailing_bytes"]
    assert spec["expected"]["error"] is None

    code, out, err = run(capsys, "dump", "--files", seg)
    assert code == 0, err
    assert err == ""
    expected = expected_dump(str(seg), batches, records, deep=False, trailing=trailing, start=start)
    assert_lines(lines_of(out), expected)

    code, out, err = run(capsys, "dump", "--files", seg, "--deep-iteration")
    assert code == 0, err
    expected = expected_dump(str(seg), batches, records, deep=True, trailing=trailing, start=start)
    assert_lines(lines_of(out), expected)
    assert err.splitlines() == expected_non_consecutive(str(seg), records)


@pytest.mark.parametrize(
    "relative",
    [
        "xpxwo100__bullShit/tmp/kafka-logs/topic1-0/00000000000000000000.log",  # magic 1
        "seanorth__kafka-server/kafka-logs/some-topic-0/00000000000000000000.log",  # snappy v2
        "anchor123__kafka/tmp/kafka-logs/test-0/00000000000000000000.log",
        "thomaskwscott__kaspar/resources/00000000000000000000.log",
    ],
)
@pytest.mark.parametrize("skip_metadata", [False, True])
def test_dump_print_data_log(corpus, capsys, relative, skip_metadata):
    seg = CORPUS / "segments" / relative
    spec, batches, records = load_expected(CORPUS / "expected" / (relative + ".json"))
    argv = ["dump", "--files", seg, "--print-data-log"]
    if skip_metadata:
        argv.append("--skip-record-metadata")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    expected = expected_dump(
        str(seg), batches, records, deep=True, print_data=True, skip_metadata=skip_metadata
    )
    assert_lines(lines_of(out), expected)


def test_dump_skip_record_metadata_payload_prefix(corpus, capsys, vectors_dir):
    """HEAD quirk: with --skip-record-metadata and a null key the payload keeps a single
    leading space and no "|"."""
    seg = vectors_dir[CORPUS / "vectors/kafka-python/record_batch_data_v1.json"]
    code, out, _ = run(capsys, "dump", "--files", seg, "--print-data-log", "--skip-record-metadata")
    assert code == 0
    assert " payload: 123" in out.splitlines()
    assert "| payload: 123" not in out


@pytest.mark.parametrize("spec_path", VECTOR_CASES)
def test_dump_vectors(corpus, capsys, vectors_dir, spec_path):
    """Record sets of every magic (v0, v1, v2, mixed v1/v2 in one file), compressed wrappers,
    control batches, torn tails; the ones Kafka rejects give one error line."""
    spec, batches, records = load_expected(spec_path)
    seg = vectors_dir[spec_path]
    outcome = spec["expected_outcome"]
    code, out, err = run(capsys, "dump", "--files", seg, "--deep-iteration")
    if outcome == "error":
        assert code == 1
        assert_one_line_error(err, str(seg), "batch at byte position")
        assert out.splitlines()[:2] == [f"Dumping {seg}", "Log starting offset: 0"]
        return
    assert code == 0, err
    expected = expected_dump(
        str(seg), batches, records, deep=True, trailing=spec["expected"]["trailing_bytes"]
    )
    assert_lines(lines_of(out), expected)
    assert err.splitlines() == expected_non_consecutive(str(seg), records)
    if all(_size(r["key"]) < 4096 and _size(r["value"]) < 4096 for r in records):
        code, out, err = run(capsys, "dump", "--files", seg, "--print-data-log")
        assert code == 0, err
        expected = expected_dump(
            str(seg),
            batches,
            records,
            deep=True,
            print_data=True,
            trailing=spec["expected"]["trailing_bytes"],
        )
        assert_lines(lines_of(out), expected)


def test_dump_mixed_magic_and_compressed_legacy(corpus, capsys, vectors_dir):
    """One file holding v1, gzip v1 wrappers and v2 batches: each prints in its own format."""
    seg = vectors_dir[
        CORPUS / "vectors/kafka-go/fetch_v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.json"
    ]
    code, out, _ = run(capsys, "dump", "--files", seg, "--deep-iteration")
    assert code == 0
    lines = out.splitlines()
    assert any(
        line.startswith("offset: ") and "magic: 1 compresscodec: gzip" in line for line in lines
    )
    assert any(line.startswith("baseOffset: ") and "magic: 2" in line for line in lines)
    legacy = [line for line in lines if line.startswith("| ") and " isValid: " in line]
    assert legacy and all(line.endswith("}") for line in legacy)  # HEAD's stray "}"
    v2 = [line for line in lines if line.startswith("| ") and " sequence: " in line]
    assert v2 and not any("}" in line for line in v2)


def test_dump_control_records(corpus, capsys, vectors_dir):
    seg = vectors_dir[CORPUS / "vectors/kafka-python/control_batch_data_v2.json"]
    code, out, _ = run(capsys, "dump", "--files", seg, "--print-data-log")
    assert code == 0
    lines = out.splitlines()
    assert "isControl: true" in lines[2] and lines[2].endswith("isvalid: false")
    assert lines[3] == (
        "| offset: 0 CreateTime: 9999999 keySize: 4 valueSize: 22 sequence: -1 headerKeys: [] "
        "endTxnMarker: ABORT coordinatorEpoch: 1634825573"
    )  # control records: no key/payload even with --print-data-log
    for relative in (
        "nomanazeem__Kafka-java/kafka-logs/__cluster_metadata-0/00000000000000000000.log",
        "Niloufar1171__LDI-POC/__cluster_metadata-0/00000000000000000000.log",
    ):
        code, out, _ = run(
            capsys, "dump", "--files", CORPUS / "segments" / relative, "--deep-iteration"
        )
        assert code == 0
        # Kafka 4.1+ (KAFKA-19069) prints the leader change decoded.
        control = [line for line in out.splitlines() if "LeaderChange" in line]
        assert len(control) == 1 and "controlType" not in out
        assert control[0].endswith(
            ' sequence: -1 headerKeys: [] LeaderChange: {"version":0,"leaderId":1,'
            '"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'
        )


def test_dump_transaction_markers_in_examples(capsys):
    code, out, _ = run(
        capsys,
        "dump",
        "--files",
        EXAMPLES / "orders-1/00000000000000000000.log",
        "--deep-iteration",
    )
    assert code == 0
    assert sum("endTxnMarker: COMMIT coordinatorEpoch: 0" in x for x in out.splitlines()) == 1
    assert sum("endTxnMarker: ABORT coordinatorEpoch: 0" in x for x in out.splitlines()) == 1


def test_dump_max_bytes(corpus, capsys, tmp_path):
    rel = "anchor123__kafka/tmp/kafka-logs/test-0/00000000000000000000.log"
    spec, batches, records = load_expected(CORPUS / "expected" / (rel + ".json"))
    # a copy with a torn tail: --max-bytes also turns off the trailing-bytes message
    seg = tmp_path / "test-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    data = (CORPUS / "segments" / rel).read_bytes()
    seg.write_bytes(data + data[:40])
    positions = batch_positions(batches)
    limit = positions[4] + batches[4]["size_in_bytes"] + 10  # batches 0-4 fit, 5 does not
    keep = [b for b, p in zip(batches, positions, strict=True) if p + b["size_in_bytes"] <= limit]
    assert len(keep) == 5
    kept = [r for r in records if r["batch"] < 5]
    code, out, err = run(capsys, "dump", "--files", seg, "--deep-iteration", "--max-bytes", limit)
    assert code == 0, err
    assert_lines(lines_of(out), expected_dump(str(seg), keep, kept, deep=True))
    code, out, _ = run(capsys, "dump", "--files", seg)
    assert out.splitlines()[-1] == "Found 40 invalid bytes at the end of 00000000000000000000.log"


def test_dump_torn_tail_and_zero_tail(corpus, capsys, tmp_path):
    rel = "KAIPASUBHASH__kafka-logs/subhash-0/00000000000000000000.log"
    spec, batches, records = load_expected(CORPUS / "expected" / (rel + ".json"))
    data = (CORPUS / "segments" / rel).read_bytes()
    torn = tmp_path / "00000000000000000000.log"
    torn.write_bytes(data[:-10])  # the last batch loses 10 bytes
    code, out, err = run(capsys, "dump", "--files", torn, "--deep-iteration")
    assert code == 0, err
    expected = expected_dump(
        str(torn),
        batches[:-1],
        [r for r in records if r["batch"] < len(batches) - 1],
        deep=True,
        trailing=batches[-1]["size_in_bytes"] - 10,
    )
    assert_lines(lines_of(out), expected)
    zeros = tmp_path / "z" / "00000000000000000000.log"
    zeros.parent.mkdir()
    zeros.write_bytes(data + bytes(4096))  # preallocated space
    code, out, err = run(capsys, "dump", "--files", zeros)
    assert code == 0, err
    assert out.splitlines()[-1] == "Found 4096 invalid bytes at the end of 00000000000000000000.log"


def test_dump_kraft_snapshot_files(corpus, capsys, tmp_path):
    """KRaft snapshots (.checkpoint) are dumped as logs, with their own first line."""
    rel = "KAIPASUBHASH__kafka-logs/subhash-0/00000000000000000000.log"
    _, batches, records = load_expected(CORPUS / "expected" / (rel + ".json"))
    for name, first in (
        ("00000000000000000005-0000000002.checkpoint", "Snapshot end offset: 5, epoch: 2"),
        ("bootstrap.checkpoint", "KRaft bootstrap snapshot"),
    ):
        snap = tmp_path / name
        shutil.copyfile(CORPUS / "segments" / rel, snap)
        code, out, err = run(capsys, "dump", "--files", snap, "--deep-iteration")
        assert code == 0, err
        expected = expected_dump(str(snap), batches, records, deep=True)
        expected[1] = first
        assert_lines(lines_of(out), expected)


def test_dump_json(corpus, capsys, vectors_dir):
    spec_path = CORPUS / "vectors/kafka-go/fetch_v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.json"
    spec, batches, records = load_expected(spec_path)
    seg = vectors_dir[spec_path]
    code, out, err = run(capsys, "dump", "--files", seg, "--print-data-log", "--format", "json")
    assert code == 0, err
    objs = [json.loads(line) for line in out.splitlines()]
    assert objs[0] == {"type": "file", "file": str(seg), "kind": "log"}
    assert objs[1] == {"type": "log_start", "file": str(seg), "baseOffset": 0}
    got_batches = [o for o in objs if o["type"] == "batch"]
    got_records = [o for o in objs if o["type"] == "record"]
    assert len(got_batches) == len(batches)
    for o, b, position in zip(got_batches, batches, batch_positions(batches), strict=True):
        assert (o["magic"], o["lastOffset"], o["size"], o["crc"], o["isValid"]) == (
            b["magic"],
            b["last_offset"],
            b["size_in_bytes"],
            b["crc"],
            b["crc_valid"],
        )
        assert (o["position"], o["compression"], o["timestampType"], o["maxTimestamp"]) == (
            position,
            b["compression"],
            b["timestamp_type"],
            b["max_timestamp"],
        )
        if b["magic"] >= 2:
            assert (o["baseOffset"], o["count"], o["producerId"]) == (
                b["base_offset"],
                b["record_count"],
                b["producer_id"],
            )
    assert len(got_records) == len(records)
    for o, r in zip(got_records, records, strict=True):
        assert (o["offset"], o["timestamp"], o["keySize"], o["valueSize"]) == (
            r["offset"],
            r["timestamp"],
            _size(r["key"]),
            _size(r["value"]),
        )
        assert o["key"] == (None if r["key"] is None else _text(r["key"]))
        assert o["payload"] == (None if r["value"] is None else _text(r["value"]))


# --------------------------------------------------------------------------------------------
# dump: index files


def _index_report(index_abs: str, entries: list[dict], batches: list[dict]) -> list[str]:
    """Kafka's check of each .index entry: the batch at its position must end at its offset."""
    by_position = dict(zip(batch_positions(batches), batches, strict=True))
    mismatches = [
        (e["offset"], by_position[e["position"]]["last_offset"])
        for e in entries
        if by_position[e["position"]]["last_offset"] != e["offset"]
    ]
    if not mismatches:
        return []
    return [f"Mismatches in :{index_abs}"] + [
        f"  Index offset: {a}, log offset: {b}" for a, b in reversed(mismatches)
    ]


@pytest.mark.parametrize("spec_path", INDEX_CASES)
def test_dump_offset_index(corpus, capsys, spec_path):
    spec = json.loads(spec_path.read_text())
    index = segment_of(spec_path)
    log_spec = spec_path.with_name(index.name.split(".")[0] + ".log.json")
    _, batches, _ = load_expected(log_spec)
    code, out, err = run(capsys, "dump", "--files", index)
    assert code == 0, err
    if not spec["entries"] and index.stat().st_size < 8:
        assert out.splitlines() == [f"Dumping {index}", f"{index} is empty."]
        return
    expected = [f"Dumping {index}"] + [
        f"offset: {e['offset']} position: {e['position']}" for e in spec["entries"]
    ]
    assert out.splitlines() == expected
    report = _index_report(str(index), spec["entries"], batches)
    assert err.splitlines() == report
    # --verify-index-only: the same report, no entries; exit 1 when something does not match
    code, out, err = run(capsys, "dump", "--files", index, "--verify-index-only")
    assert out.splitlines() == [f"Dumping {index}"]
    assert err.splitlines() == report
    assert code == (1 if report else 0)
    code, out, _ = run(capsys, "dump", "--files", index, "--index-sanity-check")
    assert code == 0
    assert out.splitlines() == [f"Dumping {index}", f"{index} passed sanity check."]


def _time_index_report(abs_path, entries, index_entries, batches, records) -> list[str]:
    """Kafka's check of each .timeindex entry (docs/format.md 7.4)."""
    positions = batch_positions(batches)
    max_ts: dict[int, int] = {}
    for r in records:
        max_ts[r["batch"]] = max(max_ts.get(r["batch"], -1), r["timestamp"])
    mismatch, order, missing = [], [], []
    prev = -1
    for e in entries:
        below = [x for x in index_entries if x["offset"] <= e["offset"]]
        start = below[-1]["position"] if below else 0
        found = next(
            (
                i
                for i, b in enumerate(batches)
                if positions[i] >= start and b["last_offset"] >= e["offset"]
            ),
            None,
        )
        if found is None:
            missing.append((e["offset"], -1))
        elif batches[found]["last_offset"] != e["offset"]:
            missing.append((e["offset"], batches[found]["last_offset"]))
        else:
            if max_ts.get(found, -1) != e["timestamp"]:
                mismatch.append((e["timestamp"], max_ts.get(found, -1)))
            if prev >= e["timestamp"]:
                order.append((e["timestamp"], prev))
        prev = e["timestamp"]
    lines = []
    if mismatch:
        lines.append(f"Found timestamp mismatch in :{abs_path}")
        lines += [f"  Index timestamp: {a}, log timestamp: {b}" for a, b in mismatch]
    if order:
        lines.append(f"Found out of order timestamp in :{abs_path}")
        lines += [f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in order]
    if missing:
        lines.append("The following indexed offsets are not found in the log.")
        lines += [f"Indexed offset: {a}, found log offset: {b}" for a, b in missing]
    return lines


@pytest.mark.parametrize("spec_path", TIME_INDEX_CASES)
def test_dump_time_index(corpus, capsys, spec_path):
    spec = json.loads(spec_path.read_text())
    tindex = segment_of(spec_path)
    base = tindex.name.split(".")[0]
    _, batches, records = load_expected(spec_path.with_name(base + ".log.json"))
    index_spec = spec_path.with_name(base + ".index.json")
    index_entries = json.loads(index_spec.read_text())["entries"] if index_spec.exists() else []
    code, out, err = run(capsys, "dump", "--files", tindex)
    assert code == 0, err
    assert out.splitlines() == [f"Dumping {tindex}"] + [
        f"timestamp: {e['timestamp']} offset: {e['offset']}" for e in spec["entries"]
    ]
    assert err.splitlines() == _time_index_report(
        str(tindex), spec["entries"], index_entries, batches, records
    )


def test_dump_index_verification_mismatch(corpus, capsys, tmp_path):
    """An .index entry naming the wrong offset is reported on stderr, as Kafka does."""
    rel = "Niloufar1171__LDI-POC/__consumer_offsets-6/00000000000000000000"
    for suffix in (".log", ".timeindex"):
        shutil.copyfile(CORPUS / "segments" / (rel + suffix), tmp_path / ("0" * 20 + suffix))
    entries = json.loads((CORPUS / "expected" / (rel + ".index.json")).read_text())["entries"]
    assert [e["offset"] for e in entries] == [3, 7]
    index = tmp_path / ("0" * 20 + ".index")
    index.write_bytes(
        struct.pack(">ii", 3, entries[0]["position"])
        + struct.pack(">ii", 6, entries[1]["position"])
    )
    code, out, err = run(capsys, "dump", "--files", index)
    assert code == 0
    assert out.splitlines()[1:] == [
        f"offset: 3 position: {entries[0]['position']}",
        f"offset: 6 position: {entries[1]['position']}",
    ]
    assert err.splitlines() == [f"Mismatches in :{index}", "  Index offset: 6, log offset: 7"]
    code, out, err = run(capsys, "dump", "--files", index, "--verify-index-only")
    assert code == 1
    assert out.splitlines() == [f"Dumping {index}"]
    # a preallocated (zero) tail is not listed; the time index now finds offset 7 via it
    index.write_bytes(index.read_bytes() + bytes(64))
    code, out, _ = run(capsys, "dump", "--files", index)
    assert len(out.splitlines()) == 3


def test_dump_time_index_verification(corpus, capsys, tmp_path):
    """Time index entries that disagree with the log: reported as Kafka does."""
    rel = "Niloufar1171__LDI-POC/__consumer_offsets-6/00000000000000000000"
    for suffix in (".log", ".index"):
        shutil.copyfile(CORPUS / "segments" / (rel + suffix), tmp_path / ("0" * 20 + suffix))
    good = json.loads((CORPUS / "expected" / (rel + ".timeindex.json")).read_text())["entries"]
    (t3, o3), (t7, o7), (t12, o12) = [(e["timestamp"], e["offset"]) for e in good]
    entries = [(t3, o3), (t3, o7), (t12 + 5, o12), (t12 + 6, 100)]  # equal ts, wrong ts, no batch
    tindex = tmp_path / ("0" * 20 + ".timeindex")
    tindex.write_bytes(b"".join(struct.pack(">qi", t, o) for t, o in entries))
    code, out, err = run(capsys, "dump", "--files", tindex)
    assert code == 0
    assert out.splitlines()[1:] == [f"timestamp: {t} offset: {o}" for t, o in entries]
    assert err.splitlines() == [
        f"Found timestamp mismatch in :{tindex}",
        f"  Index timestamp: {t3}, log timestamp: {t7}",
        f"  Index timestamp: {t12 + 5}, log timestamp: {t12}",
        f"Found out of order timestamp in :{tindex}",
        f"  Index timestamp: {t3}, Previously indexed timestamp: {t3}",
        "The following indexed offsets are not found in the log.",
        "Indexed offset: 100, found log offset: -1",
    ]
    _, batches, records = load_expected(CORPUS / "expected" / (rel + ".log.json"))
    index_entries = json.loads((CORPUS / "expected" / (rel + ".index.json")).read_text())["entries"]
    assert err.splitlines() == _time_index_report(
        str(tindex),
        [{"timestamp": t, "offset": o} for t, o in entries],
        index_entries,
        batches,
        records,
    )
    code, out, err = run(capsys, "dump", "--files", tindex, "--verify-index-only")
    assert code == 1
    assert out.splitlines() == [f"Dumping {tindex}"]


def test_dump_index_sanity_check_fails(corpus, capsys, tmp_path):
    rel = "Niloufar1171__LDI-POC/__consumer_offsets-6/00000000000000000000"
    shutil.copyfile(CORPUS / "segments" / (rel + ".log"), tmp_path / ("0" * 20 + ".log"))
    index = tmp_path / ("0" * 20 + ".index")
    index.write_bytes((CORPUS / "segments" / (rel + ".index")).read_bytes() + b"\x00\x00\x00")
    code, out, err = run(capsys, "dump", "--files", index, "--index-sanity-check")
    assert code == 1
    assert_one_line_error(
        err, "is corrupt, found 19 bytes which is neither positive nor a multiple of 8"
    )


def test_dump_txn_index_and_snapshot(capsys, tmp_path):
    txn = tmp_path / "00000000000000000000.txnindex"
    txn.write_bytes(
        struct.pack(">hqqqq", 0, 5, 10, 20, 21) + struct.pack(">hqqqq", 0, 6, 30, 45, 46)
    )
    # producer snapshot: version 1, CRC-32C of what follows the CRC, entry count, entries
    entries = [
        (1000, 3, 41, 120, 4, 1700000000123, -1, -1),
        (1001, 0, -1, -1, 0, 1700000000456, 7, 90),  # no batch metadata, open transaction
    ]
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    snap = tmp_path / "00000000000000000121.snapshot"
    snap.write_bytes(struct.pack(">hI", 1, calc_crc32c(body)) + body)
    code, out, err = run(capsys, "dump", "--files", f"{txn},{snap}")
    assert code == 0, err
    assert out.splitlines() == [
        f"Dumping {txn}",
        "version: 0 producerId: 5 firstOffset: 10 lastOffset: 20 lastStableOffset: 21",
        "version: 0 producerId: 6 firstOffset: 30 lastOffset: 45 lastStableOffset: 46",
        f"Dumping {snap}",
        "producerId: 1000 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1700000000123 firstSequence: 37 lastSequence: 41 "
        "lastOffset: 120 offsetDelta: 4 timestamp: 1700000000123",
        # HEAD leaves a trailing space when there is no batch metadata
        "producerId: 1001 producerEpoch: 0 coordinatorEpoch: 7 currentTxnFirstOffset: "
        "OptionalLong[90] lastTimestamp: 1700000000456 ",
    ]
    # a corrupt snapshot: its message on stderr, the other files still dumped
    bad = tmp_path / "00000000000000000122.snapshot"
    bad.write_bytes(snap.read_bytes()[:-1] + b"\xff")
    code, out, err = run(capsys, "dump", "--files", f"{bad},{txn}")
    assert code == 1
    assert out.splitlines()[0] == f"Dumping {bad}"
    assert out.splitlines()[1] == f"Dumping {txn}"
    assert_one_line_error(err, str(bad))


def test_dump_unknown_file(capsys, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("x")
    code, out, err = run(capsys, "dump", "--files", f)
    assert code == 0
    assert out.splitlines() == [f"Dumping {f}"]
    assert err.splitlines() == [f"Ignoring unknown file {f}"]


# --------------------------------------------------------------------------------------------
# errors


def test_errors_are_one_line(corpus, capsys, tmp_path):
    missing = tmp_path / "00000000000000000000.log"
    code, out, err = run(capsys, "dump", "--files", missing)
    assert code == 3
    assert_one_line_error(err, str(missing))
    for argv in (
        ["info", tmp_path / "nope"],
        ["convert", tmp_path / "nope", tmp_path / "o.parquet"],
    ):
        code, _, err = run(capsys, *argv)
        assert code == 3
        assert_one_line_error(err, "nope", "No such file or directory")

    # a batch whose size field is below Kafka's minimum, after two good ones
    good = (CORPUS / "vectors/kafka-python/record_batch_data_v2.bin").read_bytes()
    corrupt = tmp_path / "t-0" / "00000000000000000000.log"
    corrupt.parent.mkdir()
    corrupt.write_bytes(good + struct.pack(">qi", 9, 5) + bytes(40))
    code, out, err = run(capsys, "dump", "--files", corrupt, "--deep-iteration")
    assert code == 1
    assert_one_line_error(err, str(corrupt), f"batch at byte position {len(good)}")
    # everything before the corrupt batch was printed
    assert len([x for x in out.splitlines() if x.startswith("baseOffset: ")]) == 4
    for argv in (["convert", corrupt, tmp_path / "o.parquet"], ["info", corrupt]):
        code, _, err = run(capsys, *argv)
        assert code == 1
        assert_one_line_error(err, str(corrupt), f"batch at byte position {len(good)}")
    assert not (tmp_path / "o.parquet").exists()  # no partial output left behind

    code, _, err = run(capsys, "convert", EXAMPLES, tmp_path / "o.jsonl", "--columns", "nope")
    assert code == 2
    assert_one_line_error(err, "nope")


def test_usage_errors(capsys):
    code, _, err = run(capsys, "dump", "--bogus")
    assert code == 2 and "Traceback" not in err
    code, _, err = run(capsys, "dump")
    assert code == 2
    code, _, err = run(capsys)
    assert code == 2
    code, _, err = run(capsys, "convert", EXAMPLES, "out.x", "--format", "csv")
    assert code == 2
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "exit codes:" in out and "I/O error" in out
    code, out, _ = run(capsys, "dump", "--help")
    assert code == 0 and "--print-data-log" in out and "trailing_bytes" in out


def test_subprocess_errors(corpus, tmp_path):
    p = run_subprocess("dump", "--files", tmp_path / "00000000000000000000.log")
    assert p.returncode == 3
    assert_one_line_error(p.stderr, "No such file or directory")
    bad = tmp_path / "00000000000000000000.log"
    bad.write_bytes(struct.pack(">qi", 0, 1) + bytes(30))
    p = run_subprocess("convert", bad, tmp_path / "o.arrow")
    assert p.returncode == 1
    assert_one_line_error(p.stderr, str(bad), "batch at byte position 0")
    p = run_subprocess("info", bad, "--json")
    assert p.returncode == 1
    assert "Traceback" not in p.stderr


def test_subprocess_dump_matches_in_process(corpus, capsys):
    rel = "xpxwo100__bullShit/tmp/kafka-logs/topic1-0/00000000000000000000.log"
    seg = CORPUS / "segments" / rel
    code, out, err = run(capsys, "dump", "--files", seg, "--print-data-log")
    p = run_subprocess("dump", "--files", seg, "--print-data-log")
    assert p.returncode == code == 0
    assert p.stdout == out
    assert p.stderr == err
    _, batches, records = load_expected(CORPUS / "expected" / (rel + ".json"))
    assert_lines(
        lines_of(p.stdout), expected_dump(str(seg), batches, records, deep=True, print_data=True)
    )


def test_console_script(corpus):
    script = Path(sys.executable).parent / "kafkalog"
    assert script.exists(), "the kafkalog console script is not installed (maturin develop)"
    seg = CORPUS / "segments/CancerTiN__Golearn/tmp/kafka-logs/web_log-0/00000000000000000000.log"
    p = subprocess.run([script, "dump", "--files", seg], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[:2] == [f"Dumping {seg}", "Log starting offset: 0"]


# --------------------------------------------------------------------------------------------
# convert


def _reference(path, **kw) -> pa.Table:
    return kafkalog.read(path, **kw).read_all()


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_convert_parquet_arrow(capsys, tmp_path, fmt):
    out = tmp_path / f"out.{fmt}"
    code, stdout, err = run(capsys, "convert", EXAMPLES, out, "--no-progress")
    assert code == 0, err
    assert err == "" and stdout.startswith(f"{out}: 101 records written ({fmt}, ")
    table = pq.read_table(out) if fmt == "parquet" else pa.ipc.open_file(out).read_all()
    ref = _reference(EXAMPLES)
    # examples/logs: 89 records, and since issue 38 payments-0 (10) and _schemas-0 (2)
    assert table.num_rows == ref.num_rows == 101
    assert table.schema.names == ref.schema.names
    assert table.equals(ref)


def test_convert_metadata_and_control(capsys, tmp_path):
    out = tmp_path / "out.parquet"
    code, _, err = run(
        capsys,
        "convert",
        EXAMPLES,
        out,
        "--batch-metadata",
        "--include-control",
        "--compression",
        "zstd",
    )
    assert code == 0, err
    table = pq.read_table(out)
    ref = _reference(EXAMPLES, batch_metadata=True, include_control=True)
    assert table.num_rows == ref.num_rows == 103  # and 2 markers
    assert table.equals(ref)
    assert table.column("controlType").drop_null().to_pylist() == [1, 0]


@pytest.mark.parametrize("binary", ["base64", "hex"])
def test_convert_jsonl(capsys, tmp_path, binary):
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "convert", EXAMPLES, out, "--binary", binary)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    ref = _reference(EXAMPLES).to_pylist()
    assert len(rows) == len(ref) == 101

    def decode(s):
        if s is None:
            return None
        return base64.b64decode(s) if binary == "base64" else bytes.fromhex(s)

    for row, r in zip(rows, ref, strict=True):
        assert decode(row["key"]) == r["key"]
        assert decode(row["value"]) == r["value"]
        assert (row["topic"], row["partition"], row["offset"]) == (
            r["topic"],
            r["partition"],
            r["offset"],
        )
        ts = r["timestamp"]
        assert row["timestamp"] == (None if ts is None else int(ts.timestamp() * 1000))
        headers = [(h["key"], decode(h["value"])) for h in row["headers"] or []]
        assert headers == [(h["key"], h["value"]) for h in r["headers"] or []]


def test_convert_corpus_values(corpus, capsys, tmp_path):
    """Converted values are the ones Kafka's Java client decodes from the corpus."""
    rel = "seanorth__kafka-server/kafka-logs/some-topic-0/00000000000000000000.log"
    _, _, records = load_expected(CORPUS / "expected" / (rel + ".json"))
    out = tmp_path / "x.jsonl"
    code, _, err = run(
        capsys,
        "convert",
        (CORPUS / "segments" / rel).parent,
        out,
        "--binary",
        "hex",
        "--columns",
        "offset,key,value,timestamp",
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["offset"], r["key"], r["value"], r["timestamp"]) for r in rows] == [
        (r["offset"], r["key"], r["value"], r["timestamp"]) for r in records
    ]
    assert list(rows[0]) == ["offset", "key", "value", "timestamp"]


def test_convert_stdout_and_progress(capsys, tmp_path):
    code, out, err = run(capsys, "convert", EXAMPLES / "orders-0", "-", "--columns", "offset")
    assert code == 0
    assert [json.loads(line)["offset"] for line in out.splitlines()] == list(range(33))
    assert err == ""  # quiet when stderr is not a terminal
    code, _, err = run(capsys, "convert", EXAMPLES, tmp_path / "o.arrow", "--progress")
    assert code == 0
    assert "101 records" in err and "\r" in err and "of 8.6 KiB" in err
    p = run_subprocess("convert", EXAMPLES, tmp_path / "p.parquet")
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.startswith(f"{tmp_path / 'p.parquet'}: 101 records written (parquet, ")
    assert pq.read_table(tmp_path / "p.parquet").num_rows == 101


def test_convert_crc_and_on_corrupt(corpus, capsys, tmp_path, vectors_dir):
    seg = vectors_dir[CORPUS / "vectors/kafka-python/control_batch_data_v2.json"]
    v2 = (CORPUS / "vectors/kafka-python/record_batch_data_v2.bin").read_bytes()
    d = tmp_path / "bad-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(v2 + seg.read_bytes())  # CRC mismatch last
    code, _, err = run(capsys, "convert", d, tmp_path / "a.parquet")
    assert code == 1
    assert_one_line_error(err, "crc")
    code, _, err = run(
        capsys, "convert", d, tmp_path / "a.parquet", "--no-check-crc", "--include-control"
    )
    assert code == 0, err
    assert pq.read_table(tmp_path / "a.parquet").num_rows == 6
    code, _, err = run(capsys, "convert", d, tmp_path / "b.parquet", "--on-corrupt", "skip")
    assert code == 0
    assert err.startswith("warning: ") and len(err.splitlines()) == 1
    assert pq.read_table(tmp_path / "b.parquet").num_rows == 5


# --------------------------------------------------------------------------------------------
# info


def _batch_totals(path) -> dict:
    t = kafkalog.read_batches(path).read_all()
    return {
        "batches": t.num_rows,
        "records": sum(t.column("recordCount").to_pylist()),
        "firstOffset": min(t.column("baseOffset").to_pylist()),
        "lastOffset": max(t.column("lastOffset").to_pylist()),
        "magics": sorted(set(t.column("magic").to_pylist())),
        "compressions": sorted(set(t.column("compression").to_pylist())),
        "validBytes": sum(t.column("batchSize").to_pylist()),
    }


@pytest.mark.parametrize(
    "path",
    [
        EXAMPLES,
        EXAMPLES / "orders-0",
        CORPUS / "segments/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1",
        CORPUS / "segments/DonaldY__kafka-2.7.1/kafka-logs",
    ],
    ids=["examples", "partition", "corpus-multi-segment", "corpus-logdir"],
)
def test_info_matches_read_batches(corpus, capsys, path):
    code, out, err = run(capsys, "info", path, "--json")
    assert code == 0, err
    info = json.loads(out)
    totals = _batch_totals(path)
    for key, value in totals.items():
        assert info[key] == value, key
    partitions = [p for t in info["topics"] for p in t["partitions"]]
    assert info["partitionCount"] == len(partitions)
    assert info["segmentCount"] == sum(len(p["segments"]) for p in partitions)
    for p in partitions:
        got = _batch_totals(p["path"])
        assert p["batches"] == got["batches"] and p["records"] == got["records"]
        assert (p["firstOffset"], p["lastOffset"]) == (got["firstOffset"], got["lastOffset"])
        assert p["bytes"] == sum(os.path.getsize(s["path"]) for s in p["segments"])
        for s in p["segments"]:
            if s["batches"]:
                assert s["baseOffset"] <= s["firstOffset"] <= s["lastOffset"]
    code, text, _ = run(capsys, "info", path)
    assert code == 0
    assert f"{info['batches']:,} batches" in text.splitlines()[0]
    assert f"{info['records']:,} records" in text.splitlines()[0]


def test_info_examples_text(capsys):
    code, out, _ = run(capsys, "info", EXAMPLES)
    assert code == 0
    lines = out.splitlines()
    # Since issue 38 with payments-0 and _schemas-0: 2 topics, 2 segments and 4 batches more.
    assert lines[0].startswith(f"{EXAMPLES}: 6 topics, 8 partitions, 9 segments, 39 batches")
    assert any(x.startswith("orders-0  (") for x in lines)
    assert any("2 control batches" in x for x in lines)
    info = json.loads(run(capsys, "info", EXAMPLES, "--json")[1])
    orders = next(t for t in info["topics"] if t["topic"] == "orders")
    assert [p["partition"] for p in orders["partitions"]] == [0, 1]
    assert [s["file"] for s in orders["partitions"][0]["segments"]] == [
        "00000000000000000000.log",
        "00000000000000000015.log",
    ]
    assert info["firstTimestamp"] == 1704067200000  # 2024-01-01T00:00:00Z


def test_info_trailing_bytes(corpus, capsys, tmp_path):
    rel = "KAIPASUBHASH__kafka-logs/subhash-0/00000000000000000000.log"
    d = tmp_path / "subhash-0"
    d.mkdir()
    data = (CORPUS / "segments" / rel).read_bytes()
    (d / "00000000000000000000.log").write_bytes(data + data[:20])
    code, out, err = run(capsys, "info", d, "--json")
    assert code == 0
    info = json.loads(out)
    assert info["trailingBytes"] == 20
    assert info["bytes"] == len(data) + 20


# --------------------------------------------------------------------------------------------
# convert: reading bounds and isolation level, passed through to kafkalog.read


def test_convert_bounds(capsys, tmp_path):
    out = tmp_path / "b.jsonl"
    code, _, err = run(
        capsys,
        "convert",
        EXAMPLES / "orders-0",
        out,
        "--columns",
        "offset",
        "--start-offset",
        "5",
        "--end-offset",
        "20",
    )
    assert code == 0, err
    assert [json.loads(x)["offset"] for x in out.read_text().splitlines()] == list(range(5, 20))
    # a time as ISO 8601 or as milliseconds since the epoch
    for start in ("2024-01-01T00:00:10Z", "1704067210000"):
        code, _, err = run(
            capsys,
            "convert",
            EXAMPLES / "orders-0",
            out,
            "--columns",
            "offset,timestamp",
            "--start-timestamp",
            start,
        )
        assert code == 0, err
        rows = [json.loads(x) for x in out.read_text().splitlines()]
        ref = _reference(EXAMPLES / "orders-0", columns=["offset"], start_timestamp=1704067210000)
        assert [r["offset"] for r in rows] == ref.column("offset").to_pylist()
        assert rows and rows[0]["timestamp"] >= 1704067210000
    code, _, err = run(
        capsys,
        "convert",
        EXAMPLES / "orders-1",
        out,
        "--columns",
        "offset",
        "--isolation-level",
        "read_committed",
    )
    assert code == 0, err
    committed = [json.loads(x)["offset"] for x in out.read_text().splitlines()]
    ref = _reference(EXAMPLES / "orders-1", columns=["offset"], isolation_level="read_committed")
    assert committed == ref.column("offset").to_pylist()
    assert len(committed) < _reference(EXAMPLES / "orders-1").num_rows  # the aborted ones left out
    code, _, err = run(capsys, "convert", EXAMPLES, out, "--start-timestamp", "yesterday")
    assert code == 2


# --------------------------------------------------------------------------------------------
# verify (kafkalog.verify)


def test_verify(corpus, capsys, tmp_path):
    ok = CORPUS / "segments/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0"
    code, out, err = run(capsys, "verify", ok)
    assert code == 0, err
    lines = out.splitlines()
    assert not any(x.startswith("problem: ") for x in lines)
    assert lines[-1].startswith(f"{ok}: 4 segments, ") and lines[-1].endswith(": OK")
    code, out, _ = run(capsys, "verify", ok, "--notes")
    notes = [x for x in out.splitlines() if x.startswith("note: ")]
    assert any(
        "00000000000000000000.index: Index offset: 5664, log offset: 5152" in x for x in notes
    )
    code, out, _ = run(capsys, "verify", ok, "--json")
    assert code == 0
    assert json.loads(out) == json.loads(json.dumps(kafkalog.verify(ok), default=str))

    good = (CORPUS / "vectors/kafka-python/record_batch_data_v1.bin").read_bytes()
    d = tmp_path / "t-0"
    d.mkdir()
    seg = d / "00000000000000000000.log"
    seg.write_bytes(good + (CORPUS / "vectors/sarama/message_emptyGzipMessage.bin").read_bytes())
    p = run_subprocess("verify", d)
    assert p.returncode == 1
    problems = [x for x in p.stdout.splitlines() if x.startswith("problem: ")]
    assert problems == [
        f"problem: {seg}: found invalid compressed record set with no inner records "
        f"(batch at byte position {len(good)}, offset 0)"
    ]
    assert p.stdout.splitlines()[-1].endswith(": FAILED")
    code, _, err = run(capsys, "verify", tmp_path / "nope")
    assert code == 3
    assert_one_line_error(err, "nope")


# --------------------------------------------------------------------------------------------
# The first hour of a new user (issue 28)


def test_verify_without_segments_fails_saying_so(capsys, tmp_path):
    empty = tmp_path / "logs"
    (empty / "orders-0").mkdir(parents=True)
    code, out, err = run(capsys, "verify", empty)
    assert code == 1
    assert out == ""  # not a summary of nothing ("0 problems, 0 notes: FAILED", issue 38)
    assert "no segments found: nothing was verified" in err
    p = run_subprocess("verify", empty, "--json")
    assert p.returncode == 1 and "no segments found" in p.stderr


def test_dump_takes_kafkas_decoder_class_options(corpus, capsys):
    seg = EXAMPLES / "orders-0" / "00000000000000000000.log"
    _, want, _ = run(capsys, "dump", "--files", seg, "--print-data-log")
    for flag in ("--value-decoder-class", "--key-decoder-class"):
        code, out, err = run(capsys, "dump", "--files", seg, flag, "kafka.serializer.StringDecoder")
        assert code == 0, err
        assert out == want  # as in Kafka: a decoder class implies --print-data-log
    code, _, err = run(capsys, "dump", "--files", seg, "--value-decoder-class", "com.x.Avro")
    assert code == 2
    assert "kafka.serializer.StringDecoder" in err


def test_convert_refuses_an_unknown_suffix(capsys, tmp_path):
    out = tmp_path / "out.csv"
    code, _, err = run(capsys, "convert", EXAMPLES, out)
    assert code == 2
    assert_one_line_error(err, "out.csv", ".parquet", ".arrow", ".jsonl")
    assert not out.exists()
    code, _, err = run(capsys, "convert", EXAMPLES, out, "--format", "jsonl")
    assert code == 0, err  # a --format given says what to write, whatever the name


def test_a_missing_path_is_named_once(capsys, tmp_path):
    missing = tmp_path / "bad" / "nonexistent"
    code, _, err = run(capsys, "info", missing)
    assert code == 3
    assert_one_line_error(err)
    assert err.strip() == f"kafkalog: {missing}: No such file or directory"


def test_reading_an_index_file_says_it_is_not_a_log(capsys):
    index = EXAMPLES / "orders-0" / "00000000000000000000.index"
    code, _, err = run(capsys, "info", index)
    assert code == 2
    assert_one_line_error(err, "is an offset index, not a log segment")
