"""Local segments of 1 MiB or more are memory-mapped rather than read: the records, issues and
errors are those of reading the same bytes, `KAFKALOG_MMAP=0` falls back to reading, and a file
truncated while it is mapped gives a typed error, not a SIGBUS that ends the process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings

import pyarrow as pa
import pyarrow.feather as feather
import pytest

import kafkalog


@pytest.fixture
def segment(tmp_path):
    n = 60_000
    table = pa.table(
        {
            "key": [b"k%07d" % i for i in range(n)],
            "value": [b"v%07d-" % i + b"x" * 90 for i in range(n)],
        }
    )
    kafkalog.write(tmp_path / "t-0", table, batch_bytes=64 * 1024)
    log = next((tmp_path / "t-0").glob("*.log"))
    assert log.stat().st_size > 4 * 1024 * 1024  # well over the 1 MiB below which files are read
    return log, n


def _quiet_read(source, reader, **options):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = reader(source, batch_metadata=True, **options).read_all()
    return table, [str(w.message) for w in seen]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_mapped_segment_reads_as_its_bytes(segment, threads):
    log, n = segment
    # A torn tail, as a crash mid-append leaves: the same issue from the map as from the bytes.
    with open(log, "r+b") as f:
        f.truncate(log.stat().st_size - 50)
    data = log.read_bytes()
    mapped, mapped_issues = _quiet_read(log, kafkalog.read, threads=threads)
    expected, expected_issues = _quiet_read(data, kafkalog.read_bytes)
    assert 0 < mapped.num_rows < n
    # topic and partition come from the file's directory, which bytes alone do not have.
    origin = ["topic", "partition"]
    assert mapped.drop_columns(origin).equals(expected.drop_columns(origin))
    assert len(mapped_issues) == len(expected_issues) == 1


def test_without_maps_the_file_is_read_to_the_same_table(segment, tmp_path):
    log, n = segment
    out = tmp_path / "unmapped.feather"
    code = (
        "import sys, kafkalog, pyarrow.feather as f\n"
        "f.write_feather(kafkalog.read(sys.argv[1], threads=1).read_all(), sys.argv[2])\n"
    )
    env = dict(os.environ, KAFKALOG_MMAP="0")
    subprocess.run([sys.executable, "-c", code, str(log), str(out)], check=True, env=env)
    unmapped = feather.read_table(out)
    assert unmapped.num_rows == n
    assert kafkalog.read(log, threads=1).read_all().equals(unmapped)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_segment_truncated_under_its_map_is_an_io_error(segment, threads):
    log, _ = segment
    reader = kafkalog.read(log, threads=threads, batch_size=1000)
    first = reader.read_next_batch()
    assert 0 < first.num_rows < 10_000
    with open(log, "r+b") as f:
        f.truncate(4096)
    with pytest.raises(kafkalog.KafkaLogIOError, match="truncated while it was being read"):
        while True:
            reader.read_next_batch()


def test_the_guard_survives_faulthandler_in_a_fresh_process(segment):
    """The first map installs the SIGBUS guard in front of Python's faulthandler (which pytest
    and `python -X faulthandler` enable): a truncation is still an exception."""
    log, _ = segment
    code = (
        "import sys, kafkalog\n"
        "r = kafkalog.read(sys.argv[1], threads=1, batch_size=1000)\n"
        "r.read_next_batch()\n"
        "open(sys.argv[1], 'r+b').truncate(0)\n"
        "try:\n"
        "    r.read_all()\n"
        "except kafkalog.KafkaLogIOError as e:\n"
        "    print('typed', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code, str(log)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("typed "), out.stdout


@pytest.mark.parametrize("faulthandler", [False, True])
def test_a_sigbus_outside_kafkalogs_maps_still_ends_the_process(segment, tmp_path, faulthandler):
    """The guard handles faults in its own maps only: another map's SIGBUS reaches the handler
    that was there before (faulthandler, or the default action), never a silent retry."""
    log, _ = segment
    other = tmp_path / "other.bin"
    other.write_bytes(b"x" * (1 << 20))
    code = (
        "import mmap, sys, kafkalog\n"
        "r = kafkalog.read(sys.argv[1], threads=1, batch_size=1000)\n"
        "r.read_next_batch()\n"  # a map is open: the guard is installed
        "f = open(sys.argv[2], 'r+b')\n"
        "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)\n"
        "f.truncate(0)\n"
        "print('survived', m[len(m) - 1])\n"
    )
    flags = ["-X", "faulthandler"] if faulthandler else []
    out = subprocess.run(
        [sys.executable, *flags, "-c", code, str(log), str(other)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == -signal.SIGBUS, (out.returncode, out.stdout, out.stderr)
    assert "survived" not in out.stdout
    if faulthandler:
        assert "Bus error" in out.stderr
