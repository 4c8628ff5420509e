"""Reading several segment files on several threads gives exactly what one thread gives, in
the same order, and a reader abandoned half way does not hang or leak its workers."""

from __future__ import annotations

import threading
import warnings

import pytest

import kafkalog
from conftest import CORPUS, REPO

DIRECTORIES = [
    REPO / "examples" / "logs",
    CORPUS / "segments" / "dipendrasaini__kafka-learnning-series" / "tmp" / "kafka-logs-1",
    CORPUS / "segments" / "DonaldY__kafka-2.7.1" / "kafka-logs",
    CORPUS / "segments" / "nomanazeem__Kafka-java" / "kafka-logs",
]


def _read(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kafkalog.KafkaLogWarning)
        return kafkalog.read(path, batch_metadata=True, check_crc=False, **options).read_all()


@pytest.mark.parametrize("path", DIRECTORIES, ids=lambda p: p.name)
def test_threads_change_nothing_but_speed(path, corpus):
    one = _read(path, threads=1)
    assert one.num_rows > 0
    for threads in (2, 3):
        assert _read(path, threads=threads).equals(one)


def test_bounds_and_transactions_read_the_same_in_parallel(corpus):
    path = DIRECTORIES[1]
    for options in (
        {"start_offset": 30_000, "end_offset": 70_000},
        {"isolation_level": "read_committed"},
    ):
        assert _read(path, threads=2, **options).equals(_read(path, threads=1, **options))


def test_an_abandoned_reader_stops_its_workers(corpus):
    before = threading.active_count()
    for _ in range(5):
        reader = kafkalog.read(DIRECTORIES[1], threads=2, batch_size=1000)
        reader.read_next_batch()
        reader.close()
        del reader
    # Native worker threads are not Python threads; what must hold is that this returned at all
    # (no deadlock on a full channel) and that Python's own threads are untouched.
    assert threading.active_count() == before


def test_one_large_segment_is_read_in_pieces_with_the_same_result(tmp_path):
    """A segment larger than a piece (8 MiB) is decoded on several threads; damage in the middle
    is skipped or stops the read at the same place as on one thread."""
    import pyarrow as pa

    n = 150_000
    table = pa.table(
        {
            "key": [b"k%07d" % i for i in range(n)],
            "value": [b"v%07d-" % i + b"x" * 90 for i in range(n)],
        }
    )
    kafkalog.write(tmp_path / "t-0", table, batch_bytes=64 * 1024)
    log = next((tmp_path / "t-0").glob("*.log"))
    assert log.stat().st_size > 2 * 8 * 1024 * 1024
    one = _read(log, threads=1)
    assert one.num_rows == n
    assert _read(log, threads=2).equals(one)

    damaged = bytearray(log.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    log.write_bytes(bytes(damaged))
    for policy in ("skip", "stop"):
        with warnings.catch_warnings(record=True) as seen_one:
            warnings.simplefilter("always")
            one = kafkalog.read(log, threads=1, on_corrupt=policy).read_all()
        with warnings.catch_warnings(record=True) as seen_two:
            warnings.simplefilter("always")
            two = kafkalog.read(log, threads=2, on_corrupt=policy).read_all()
        assert 0 < one.num_rows < n
        assert two.equals(one), policy
        assert [str(w.message) for w in seen_two] == [str(w.message) for w in seen_one]
    with pytest.raises(kafkalog.CorruptRecordError):
        kafkalog.read(log, threads=2).read_all()
