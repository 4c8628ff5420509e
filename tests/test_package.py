"""The package's shape: public names, the typed boundary to the core, one vocabulary.

What a newcomer and a type checker rely on: every name in ``__all__`` resolves, ``decode`` and
``SPARK_SCHEMA`` are listed without importing pyspark, the defaults of the public functions
are the core's, the native options dicts take any subset of their keys, control records are
parsed by the core, issues are spelled as errors are, and no module of the package parses
Kafka's bytes itself.
"""

from __future__ import annotations

import ast
import datetime
import inspect
import subprocess
import sys
import warnings
from pathlib import Path

import hostile as h
import pyarrow as pa
import pytest

import kafkalog
from kafkalog import _native, types
from kafkalog.errors import CorruptRecordError, InvalidArgumentError, TruncatedSegmentWarning

PACKAGE = Path(kafkalog.__file__).parent


def test_all_names_resolve():
    for name in kafkalog.__all__:
        assert getattr(kafkalog, name) is not None, name
    assert len(set(kafkalog.__all__)) == len(kafkalog.__all__)


def test_spark_names_are_listed_without_importing_pyspark():
    code = (
        "import sys, kafkalog\n"
        "assert 'decode' in dir(kafkalog) and 'SPARK_SCHEMA' in dir(kafkalog)\n"
        "assert 'pyspark' not in sys.modules, 'import kafkalog imported pyspark'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_defaults_are_the_cores():
    read = inspect.signature(kafkalog.read).parameters
    assert read["batch_size"].default == _native.DEFAULT_BATCH_SIZE == 65536
    assert read["max_decompressed_size"].default == _native.DEFAULT_MAX_DECOMPRESSED_SIZE
    assert _native.DEFAULT_MAX_DECOMPRESSED_SIZE == 256 << 20
    write = inspect.signature(kafkalog.write).parameters
    assert write["segment_bytes"].default == _native.DEFAULT_SEGMENT_BYTES == 1 << 30
    assert write["index_interval_bytes"].default == _native.DEFAULT_INDEX_INTERVAL_BYTES == 4096
    assert write["batch_records"].default == _native.DEFAULT_BATCH_RECORDS
    assert write["batch_bytes"].default == _native.DEFAULT_BATCH_BYTES
    plan = inspect.signature(kafkalog.plan).parameters
    assert plan["target_bytes"].default == _native.DEFAULT_TARGET_BYTES == 64 << 20
    compact = inspect.signature(kafkalog.compact).parameters
    assert compact["delete_retention_ms"].default == _native.DEFAULT_DELETE_RETENTION_MS


def test_literal_types_match_what_the_core_accepts():
    assert set(types.OnCorrupt.__args__) == {"error", "skip", "stop"}
    data = h.v2_batch(0, [(b"k", b"v")])
    for value in types.OnCorrupt.__args__:
        assert kafkalog.read_bytes(data, on_corrupt=value).read_all().num_rows == 1
    with pytest.raises(InvalidArgumentError):
        kafkalog.read_bytes(data, on_corrupt="ignore").read_all()  # type: ignore[arg-type]


def test_naive_datetimes_are_documented_as_utc_where_they_are_taken():
    # _time.millis takes a datetime without a time zone as UTC: the public docs say so.
    for fn in (kafkalog.read, kafkalog.consumer_offsets):
        assert "taken as UTC" in " ".join((fn.__doc__ or "").split()), fn.__name__
    logs = Path(__file__).resolve().parent.parent / "examples" / "logs"
    naive = kafkalog.read(logs, start_timestamp=datetime.datetime(2000, 1, 1))
    assert naive.read_all().num_rows > 0


def test_finding_kinds_are_the_cores():
    assert list(types.FindingKind.__args__) == _native.FINDING_KINDS
    assert "torn_tail" in _native.FINDING_KINDS and "index_mismatch" in _native.FINDING_KINDS


def test_native_options_take_any_subset_of_keys():
    data = h.v2_batch(0, [(b"k", b"v")]) + h.v2_batch(1, [(b"k2", b"v2")])
    batches = list(_native.Reader.from_bytes(data, {"batch_size": 1, "columns": ["offset"]}))
    assert len(batches) == 2  # batch_size taken, every other key defaulted
    table = pa.Table.from_batches([pa.record_batch(b) for b in batches])
    assert table.column_names == ["offset"] and table.column("offset").to_pylist() == [0, 1]
    assert pa.schema(_native.Reader.from_bytes(b"", {}).schema).names == list(kafkalog.COLUMNS)


def test_a_wrongly_typed_option_names_its_key():
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        _native.Reader.from_bytes(b"", {"batch_size": "many"})


def test_control_records_are_parsed_by_the_core():
    assert _native.CONTROL_TYPES[0] == "ABORT" and _native.CONTROL_TYPES[6] == "KRAFT_VOTERS"
    assert _native.TIMESTAMP_TYPES == {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
    commit = _native.control_record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07")
    assert (commit.type, commit.type_id, commit.coordinator_epoch) == ("COMMIT", 1, 7)
    leader = _native.control_record(b"\x00\x00\x00\x02", b"anything")
    assert (leader.type, leader.coordinator_epoch) == ("LEADER_CHANGE", None)
    unknown = _native.control_record(b"\x00\x00\x00\x63", None)
    assert (unknown.type, unknown.type_id) == ("UNKNOWN", 99)
    for key, value in [
        (b"\x00", None),  # key shorter than 4 bytes
        (b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x00"),  # negative key version
        (b"\x00\x00\x00\x00", b"\x00\x00"),  # marker value shorter than 6 bytes
        (b"\x00\x00\x00\x01", b"\xff\xff\x00\x00\x00\x00"),  # negative marker version
    ]:
        with pytest.raises(CorruptRecordError):
            _native.control_record(key, value)


def test_issue_kinds_are_spelled_as_errors_are():
    data = h.v2_batch(0, [(b"k", b"v")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reader = _native.Reader.from_bytes(data + data[:20])
        list(reader)
        issues = reader.issues
    assert [i["kind"] for i in issues] == ["torn_tail"]
    assert issues[0]["kind"] in types.IssueKind.__args__
    torn = [w.message for w in caught if isinstance(w.message, TruncatedSegmentWarning)]
    assert [w.kind for w in torn] == ["torn_tail"]


def test_no_module_parses_kafka_bytes():
    """The package formats and passes what the core returns; it never unpacks Kafka's binary
    layouts itself (no struct, no int.from_bytes)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if "struct" in names:
                    offenders.append(f"{path.name}: imports struct")
            if isinstance(node, ast.Attribute) and node.attr == "from_bytes":
                if isinstance(node.value, ast.Name) and node.value.id == "int":
                    offenders.append(f"{path.name}: int.from_bytes")
    assert offenders == []


def test_cli_modules_say_what_they_own():
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc, f"{path.name} has no module docstring"


def test_issues_of_a_reader_are_reachable():
    data = h.v2_batch(0, [(b"k", b"v")])
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        reader = kafkalog.read_bytes(data + data[:20])
        assert reader.read_all().num_rows == 1
    (issue,) = kafkalog.issues(reader)
    assert issue["kind"] == "torn_tail" and issue["bytes"] == 20 and issue["position"] == len(data)
    clean = kafkalog.read_bytes(data)
    clean.read_all()
    assert kafkalog.issues(clean) == []
    with pytest.raises(InvalidArgumentError):
        kafkalog.issues(pa.RecordBatchReader.from_batches(pa.schema([]), iter([])))


def test_the_clis_kafka_rules_are_the_cores(tmp_path):
    """The command line takes a base offset or a KRaft snapshot's id from a file name, Kafka's
    index sanity check and offset index lookup and a batch's earliest timestamp from the core,
    not from rules of its own."""
    assert _native.base_offset_from_name("/logs/orders-0/00000000000000001234.log") == 1234
    assert _native.base_offset_from_name("/logs/orders-0/00000000000000001234.index") == 1234
    assert _native.base_offset_from_name("leader-epoch-checkpoint") is None
    assert _native.snapshot_id("/m/00000000000000001234-0000000007.checkpoint") == (1234, 7)
    assert _native.snapshot_id("/m/bootstrap.checkpoint") is None
    index = tmp_path / "00000000000000000100.index"
    index.write_bytes((0).to_bytes(4, "big") + (0).to_bytes(4, "big"))
    assert _native.index_sanity_check(str(index)) is None
    entry = (5).to_bytes(4, "big") + (4096).to_bytes(4, "big")
    index.write_bytes(index.read_bytes() + entry)
    assert _native.index_lookup(str(index), [99, 100, 104, 105, 200]) == [0, 0, 0, 4096, 4096]
    assert _native.index_lookup(str(tmp_path / "00000000000000000100.x.index"), [150]) == [0]
    index.write_bytes(b"\0" * 9)
    problem = _native.index_sanity_check(str(index))
    assert problem is not None and "neither positive nor a multiple of 8" in problem
    plain = h.v2_batch(0, [(b"k", b"v")], base_timestamp=1_000, max_timestamp=2_000)
    # Bit 6: the base timestamp holds the cleaner's delete horizon, not a record's time.
    horizon = h.v2_batch(1, [(b"k", None)], attributes=0x40, base_timestamp=9_000)
    listing = kafkalog.read_batches(plain + horizon).read_all()
    maxes = listing.column("maxTimestamp").to_pylist()
    assert _native.batch_first_timestamps(listing) == [1_000, maxes[1]]


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports, at any level (type-checking imports left out)."""
    tree = ast.parse(path.read_text())
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            out |= subs
            if len(subs) < len(node.names):
                out.add(node.module)
    return out & modules


def test_modules_import_downward_without_circles():
    """No import circle among the package's modules, and the library's modules never import
    the command line or the Spark integration built on them (the package's lazy
    ``kafkalog.decode`` and ``python -m kafkalog`` are the two ways in from the top)."""
    files = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    modules = set(files) | {"kafkalog._native"}
    graph = {m: _imports(p, modules) - {m} for m, p in files.items()}
    graph["kafkalog._native"] = set()
    top = ("kafkalog.spark", "kafkalog.cli")
    upward = {
        (m, d)
        for m, deps in graph.items()
        if not m.startswith(top)
        for d in deps
        if d.startswith(top)
    }
    assert upward == {("kafkalog", "kafkalog.spark"), ("kafkalog.__main__", "kafkalog.cli.main")}
    graph["kafkalog"] -= {"kafkalog.spark"}  # the lazy re-export of decode and SPARK_SCHEMA
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        assert m not in path, "import circle: " + " -> ".join([*path, m])
        if m in done:
            return
        for d in sorted(graph[m]):
            visit(d, [*path, m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])


def test_every_module_is_under_600_lines():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) >= 600
    }
    assert long == {}


def test_make_demo_installs_the_spark_extra_only_and_quietly(tmp_path):
    """`make demo` on a fresh machine (issue 28): only the `spark` extra (not test,dev), the
    `demo` profile, pip's and cargo's lines kept in a log, a few lines of progress."""
    repo = Path(__file__).parent.parent
    p = subprocess.run(
        ["make", "-n", "demo", f"VENV={tmp_path / 'venv'}"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    plan = p.stdout
    assert "test,dev" not in plan and "maturin develop" not in plan
    assert "['optional-dependencies']['spark']" in plan
    assert "--profile demo" in plan
    assert "pip install -q" in plan and "demo-setup.log" in plan
    assert "examples/spark_job.py examples/logs" in plan
    # The job runs on the JVM source: the jar built with the same profile (issue 27).
    assert "jar PROFILE=demo" in plan and "kafkalog-spark.jar" in plan
    cargo = (repo / "Cargo.toml").read_text()
    assert "[profile.demo]" in cargo
    # What the user sees besides the job's own output: the echo lines and the progress lines
    # (one per 50 crates; a fresh build compiles fewer than 500).
    echoes = [line for line in plan.splitlines() if line.lstrip().startswith("echo ")]
    assert len(echoes) + 500 // 50 < 30


def test_docstrings_name_what_there_is():
    """`decode` is `kafkalog.decode`: the names its docstring refers to unqualified are
    kafkalog's; `segments()` lists every key it returns."""
    import re

    pytest.importorskip("pyspark")
    for ref in re.findall(r":(?:data|func|class):`~?([\w.]+)`", kafkalog.decode.__doc__ or ""):
        owner, name = (ref.rsplit(".", 1)) if "." in ref else ("kafkalog", ref)
        assert hasattr(__import__(owner, fromlist=[name]), name), ref
    (segment, *_) = kafkalog.segments(Path(__file__).parent.parent / "examples" / "logs")
    for key in segment:
        assert f"``{key}``" in (kafkalog.segments.__doc__ or ""), key
