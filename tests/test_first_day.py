"""What still tripped a new user on the first day (issue 48), through the command line and the
Python API where the user met it: files that are not Kafka segments whatever their name, a
missing optional library's exit code and message, a Protobuf read of a subject holding Avro,
a misspelt ``value_options`` key, an Iceberg table with no catalog, and a JVM's crash report
kept out of the working directory. (The Spark points: tests/test_spark_first_day.py.)"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import jvm_crash
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kafkalog
from conftest import REPO
from kafkalog.cli.main import main
from kafkalog.errors import InvalidArgumentError, MissingDependencyError, NotASegmentError

LOGS = REPO / "examples" / "logs"
SEGMENT = LOGS / "orders-0" / "00000000000000000000.log"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    """The tool in-process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("kafkalog: "), err
    for fragment in fragments:
        assert fragment in lines[0], err
    return lines[0]


# --------------------------------------------------------------------------------------------
# 3. A file that is not a segment is told by its bytes, whatever its name.


def _parquet(kind: str, path: Path) -> Path:
    if kind == "pyarrow":  # its magic byte (byte 16) is no entry's
        pq.write_table(pa.table({"x": list(range(1000))}), path)
    elif kind == "kafkalog":  # a plausible header whose first entry runs past the end
        assert main(["convert", str(LOGS / "orders-0"), str(path)]) == 0
    else:  # the issue's: a size field below the smallest entry's
        path.write_bytes(b"PAR1\x15\x04\x15\x80" + struct.pack(">i", -1056827974) + bytes(200))
    return path


@pytest.mark.parametrize("kind", ["pyarrow", "kafkalog", "negative size"])
def test_a_parquet_file_is_not_a_segment_whatever_its_name(capsys, tmp_path, kind):
    parquet = _parquet(kind, tmp_path / "sensors.parquet")
    capsys.readouterr()
    out = tmp_path / "x.parquet"
    code, stdout, err = run(capsys, "convert", parquet, out)
    assert code == 1, err
    one_line_error(
        err, str(parquet), "not a Kafka segment", 'starts with "PAR1', "byte position 0"
    )  # fmt: skip
    assert "record size" not in err and "warning" not in err
    assert not out.exists() and stdout == ""
    with pytest.raises(NotASegmentError):
        kafkalog.read(parquet).read_all()
    code, out_text, _ = run(capsys, "verify", parquet)
    assert code == 1 and "not a Kafka segment" in out_text
    # The same bytes named like a segment were refused before (issue 38), and still are.
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(parquet.read_bytes())
    with pytest.raises(NotASegmentError):
        kafkalog.read(part).read_all()


def test_a_file_shorter_than_an_entry_is_a_segment_only_when_named_like_one(capsys, tmp_path):
    hostname = tmp_path / "hostname"
    hostname.write_bytes(b"vm\n")
    out = tmp_path / "x.parquet"
    code, _, err = run(capsys, "convert", hostname, out)
    assert code == 1, err
    one_line_error(err, str(hostname), "not a Kafka segment", "the file is 3 bytes")
    assert not out.exists()
    with pytest.raises(NotASegmentError):
        kafkalog.read(hostname).read_all()
    # Named like a segment, the same bytes are a torn one: a warning, as before.
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"vm\n")
    code, _, err = run(capsys, "convert", part, out)
    assert code == 0, err
    assert "warning: " in err and "invalid bytes at the end (a partial batch)" in err


def test_a_renamed_segment_still_reads_and_its_torn_tail_is_a_warning(capsys, tmp_path):
    want = kafkalog.read(SEGMENT).read_all()
    copy = tmp_path / "orders.bin"
    copy.write_bytes(SEGMENT.read_bytes())
    assert kafkalog.read(copy).read_all().num_rows == want.num_rows
    copy.write_bytes(SEGMENT.read_bytes()[:-3])
    out = tmp_path / "x.parquet"
    code, _, err = run(capsys, "convert", copy, out)
    assert code == 0, err
    assert "invalid bytes at the end (a partial batch)" in err
    assert 0 < pq.read_table(out).num_rows < want.num_rows


# --------------------------------------------------------------------------------------------
# 4. A missing optional library: exit code 5 and the extra to install.


def test_exit_code_5_is_documented():
    help_text = subprocess.run(
        [sys.executable, "-m", "kafkalog", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "5    a library this command needs is not installed" in help_text
    assert "pip install 'kafkalog[lake]'" in help_text


def test_a_missing_table_library_exits_5_naming_the_extra(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "deltalake", None)
    code, _, err = run(capsys, "convert", LOGS / "orders-0", f"delta://{tmp_path / 'd'}")
    assert code == 5, err
    one_line_error(err, "needs deltalake", "pip install 'kafkalog[lake]'")
    assert "internal error" not in err
    with pytest.raises(MissingDependencyError, match=r"pip install 'kafkalog\[lake\]'"):
        kafkalog.to_delta(LOGS / "orders-0", str(tmp_path / "d"))


def test_an_iceberg_upsert_without_pyiceberg_core_exits_5(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyiceberg_core", None)
    code, _, err = run(
        capsys, "convert", LOGS / "orders-0", "iceberg://shop.orders", "--mode", "upsert",
        "--catalog-uri", f"sqlite:///{tmp_path / 'cat.db'}",
        "--warehouse", f"file://{tmp_path / 'wh'}",
    )  # fmt: skip
    assert code == 5, err
    one_line_error(err, "pyiceberg[pyiceberg-core]", "pip install 'kafkalog[lake]'")
    assert "NotInstalledError" not in err and "internal error" not in err


def test_kafkalog_spark_without_pyspark_is_a_missing_dependency():
    code = (
        "import sys; sys.modules['pyspark'] = None\n"
        "from kafkalog.errors import MissingDependencyError\n"
        "try:\n    import kafkalog.spark\n"
        "except MissingDependencyError as e:\n    print(e)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "pip install 'kafkalog[spark]'" in p.stdout


# --------------------------------------------------------------------------------------------
# 5. A Protobuf read of a subject that holds Avro.


def test_a_protobuf_read_of_an_avro_subject_says_which_format_reads_it(capsys):
    code, _, err = run(
        capsys, "convert", LOGS / "payments-0", "-", "--value-format", "protobuf",
        "--schemas", LOGS,
    )  # fmt: skip
    assert code == 2, err
    line = one_line_error(
        err, 'subject "payments-value" version 2 (schema id 2) holds an Avro schema',
        "not a Protobuf one", "--value-format avro",
    )  # fmt: skip
    assert "given to the Protobuf decoder" not in line
    with pytest.raises(InvalidArgumentError, match="holds an Avro schema"):
        kafkalog.read(LOGS / "payments-0", value_format="protobuf", schemas=LOGS).read_all()


# --------------------------------------------------------------------------------------------
# 7. A misspelt value_options key.


def test_a_misspelt_value_option_is_kafkalogs_own_error():
    with pytest.raises(InvalidArgumentError) as e:
        kafkalog.read(
            LOGS / "payments-0",
            value_format="avro",
            schemas=LOGS,
            value_options={"value_subjet": "payments-value"},
        )
    text = str(e.value)
    assert "'value_subjet'" in text and "did you mean value_subject?" in text, text
    assert "value_options()" not in text
    with pytest.raises(InvalidArgumentError, match="value_format is an argument of its own"):
        kafkalog.read(LOGS / "payments-0", value_options={"value_format": "avro"})
    # A key that is an option still reads.
    got = kafkalog.read(
        LOGS / "payments-0",
        value_format="avro",
        schemas=LOGS,
        value_options={"value_subject": "payments-value"},
    ).read_all()
    assert got.num_rows > 0


# --------------------------------------------------------------------------------------------
# 8. An Iceberg table and no catalog.


def test_an_iceberg_table_without_a_catalog_names_kafkalogs_flags(capsys, monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("PYICEBERG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))  # no ~/.pyiceberg.yaml either
    monkeypatch.setenv("HOME", str(tmp_path))
    code, _, err = run(capsys, "convert", LOGS / "orders-0", "iceberg://shop.orders")
    assert code == 2, err
    one_line_error(err, "iceberg://shop.orders", "--catalog-uri", "--warehouse")
    assert "--uri" not in err, err


# --------------------------------------------------------------------------------------------
# 9. A JVM's crash report goes to the test's temporary directory.


def test_a_crashed_jvm_fails_the_test_with_its_report(tmp_path):
    """A JVM made to crash (on running out of memory) writes its report where
    tests/jvm_crash.py points it, not into its working directory; the check then fails the
    test with the report's first lines."""
    crash = tmp_path / "Crash.java"
    crash.write_text(
        "public class Crash { public static void main(String[] a) {"
        " java.util.List<long[]> l = new java.util.ArrayList<>();"
        " while (true) l.add(new long[1 << 16]); } }"
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    reports = tmp_path / "reports"
    reports.mkdir()
    done = subprocess.run(
        [
            "java",
            "-Xmx32m",
            "-XX:+CrashOnOutOfMemoryError",
            "-XX:-CreateCoredumpOnCrash",
            str(crash),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=jvm_crash.env(reports),
        timeout=300,
    )
    assert done.returncode != 0
    assert list(cwd.iterdir()) == []
    with pytest.raises(pytest.fail.Exception) as e:
        jvm_crash.check(reports)
    assert "a JVM crashed" in str(e.value)
    assert "# A fatal error has been detected by the Java Runtime Environment" in str(e.value)


def test_no_crash_report_is_committed_and_none_can_be():
    tracked = subprocess.run(
        ["git", "ls-files", "*hs_err_pid*"], capture_output=True, text=True, cwd=REPO, check=True
    ).stdout
    assert tracked == ""
    assert "hs_err_pid*.log" in (REPO / ".gitignore").read_text().splitlines()
