"""Writing safely (issue 16): names taken from data never place files outside the output
directory; writes never follow planted symbolic links; one writer per partition directory; a
killed, full-disk or read-only write leaves the previous contents intact and nothing partial;
stale staging directories are cleaned and never read as data. And reading a segment still
being appended, or a log directory of 100,000 segments."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import jvm_crash
import pyarrow as pa
import pytest

import kafkalog
from kafkalog import _native
from kafkalog.errors import (
    ConcurrentWriteError,
    InvalidArgumentError,
    KafkaLogIOError,
    TruncatedSegmentWarning,
)

REFUSED_TOPICS = ["../escaped", "../../a/escaped", "/tmp/x", ".", "..", "a/b", "", "x" * 250]
REFUSED_PARTITIONS = [-1, 2**31]


def records(n: int, size: int = 16, tag: bytes = b"") -> pa.Table:
    values = [tag + i.to_bytes(8, "big") + b"v" * size for i in range(n)]
    return pa.table(
        {"key": pa.array([None] * n, pa.binary()), "value": pa.array(values, pa.binary())}
    )


def tree(root: Path) -> list[str]:
    """Every path under root (and root's parent, where an escape would land), sorted."""
    return sorted(str(p.relative_to(root.parent)) for p in root.parent.rglob("*"))


def staging_left(parent: Path) -> list[str]:
    return sorted(n for n in os.listdir(parent) if n.startswith("."))


def values(path: Path) -> list[bytes]:
    return kafkalog.read(str(path)).read_all().column("value").to_pylist()


# ----------------------------------------------------------------------------------------
# Names from data
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("topic", REFUSED_TOPICS)
def test_write_refuses_topic(tmp_path, topic):
    root = tmp_path / "out"
    root.mkdir()
    before = tree(root)
    with pytest.raises(InvalidArgumentError, match="topic name is invalid") as e:
        kafkalog.write(root, records(3), topic=topic, partition=0, overwrite=True)
    assert topic in str(e.value)
    assert tree(root) == before


@pytest.mark.parametrize("partition", REFUSED_PARTITIONS)
def test_write_refuses_partition(tmp_path, partition):
    with pytest.raises(InvalidArgumentError, match=f"partition {partition} is invalid"):
        kafkalog.write(tmp_path, records(3), topic="orders", partition=partition)
    assert os.listdir(tmp_path) == []


def test_write_with_topic_places_the_partition_directory(tmp_path):
    kafkalog.write(tmp_path, records(5), topic="orders.v1_x-y", partition=7)
    assert os.listdir(tmp_path) == ["orders.v1_x-y-7"]
    assert len(values(tmp_path / "orders.v1_x-y-7")) == 5
    longest = "t" * 249
    kafkalog.write(tmp_path, records(1), topic=longest, partition=9)
    assert (tmp_path / f"{longest}-9").is_dir()
    kafkalog.write(tmp_path, records(1), topic="x", partition=2**31 - 1)
    assert (tmp_path / f"x-{2**31 - 1}").is_dir()
    with pytest.raises(InvalidArgumentError, match="without topic"):
        kafkalog.write(tmp_path / "x-0", records(1), partition=0)


def test_absolute_topic_does_not_replace_a_directory_elsewhere(tmp_path):
    victim = tmp_path / "victim-0"
    victim.mkdir()
    (victim / "precious").write_bytes(b"keep")
    out = tmp_path / "out"
    with pytest.raises(InvalidArgumentError):
        kafkalog.write(out, records(1), topic=str(tmp_path / "victim"), overwrite=True)
    assert os.listdir(victim) == ["precious"]


def encode_rows(topics: list[str], partitions: list[int]) -> pa.RecordBatch:
    n = len(topics)
    return pa.record_batch(
        {
            "topic": pa.array(topics, pa.string()),
            "partition": pa.array(partitions, pa.int64()),
            "key": pa.array([None] * n, pa.binary()),
            "value": pa.array([b"v%d" % i for i in range(n)], pa.binary()),
        }
    )


@pytest.mark.parametrize("topic", REFUSED_TOPICS)
def test_spark_encode_refuses_topic_before_writing_anything(tmp_path, topic):
    import kafkalog.spark as ks

    out = tmp_path / "out"
    out.mkdir()
    before = tree(out)
    # A good topic-partition in the same task is not written either: the check comes first.
    batch = encode_rows(["aaa-good", topic, "zzz-good"], [0, 0, 0])
    with pytest.raises(InvalidArgumentError, match="topic name is invalid"):
        list(ks.encode(out, overwrite=True)(iter([batch])))
    assert tree(out) == before


@pytest.mark.parametrize("partition", REFUSED_PARTITIONS)
def test_spark_encode_refuses_partition(tmp_path, partition):
    import kafkalog.spark as ks

    batch = encode_rows(["good", "good"], [0, partition])
    with pytest.raises(InvalidArgumentError, match=f"partition {partition} is invalid"):
        list(ks.encode(tmp_path)(iter([batch])))
    assert os.listdir(tmp_path) == []
    # The topic and partition options are checked the same way.
    plain = batch.drop_columns(["topic", "partition"])
    with pytest.raises(InvalidArgumentError, match="topic name is invalid"):
        list(ks.encode(tmp_path, topic="../up", partition=0)(iter([plain])))
    with pytest.raises(InvalidArgumentError, match=f"partition {partition} is invalid"):
        list(ks.encode(tmp_path, topic="t", partition=partition)(iter([plain])))
    assert os.listdir(tmp_path) == []


def test_spark_encode_writes_valid_names(tmp_path):
    import kafkalog.spark as ks

    batch = encode_rows(["a", "b.c", "a"], [1, 0, 1])
    out = list(ks.encode(tmp_path)(iter([batch])))
    assert sorted(os.listdir(tmp_path)) == ["a-1", "b.c-0"]
    assert sum(b.num_rows for b in out) == 2


def test_spark_dataframe_writer_refuses_escaping_topic(tmp_path):
    pytest.importorskip("pandas")
    from pyspark.sql import SparkSession

    import kafkalog.spark as ks

    # Reuse a session the Spark tests left running; else start one and stop it after.
    spark = SparkSession.getActiveSession()
    own = spark is None
    if own:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        spark = (
            SparkSession.builder.master("local[1]")
            .appName("kafkalog-write-safety")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config(map=jvm_crash.spark_conf(tmp_path))
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("OFF")
    try:
        spark_escape_case(spark, ks, tmp_path)
    finally:
        if own:
            spark.stop()
            jvm_crash.check(tmp_path)


def spark_escape_case(spark, ks, tmp_path):
    ks.register(spark)
    out = tmp_path / "out"
    out.mkdir()
    df = spark.createDataFrame(
        [("../escaped", 0, b"k", b"v"), ("ok", 0, b"k", b"v")],
        "topic string, partition int, key binary, value binary",
    )
    with pytest.raises(Exception, match="topic name is invalid"):
        df.write.format("kafkalog").mode("overwrite").save(str(out))
    assert not (tmp_path / "escaped-0").exists()
    assert [n for n in os.listdir(out) if not n.startswith(".")] == []
    good = spark.createDataFrame(
        [("ok", 0, b"k", b"v"), ("ok", 1, b"k", b"w")],
        "topic string, partition int, key binary, value binary",
    )
    good.write.format("kafkalog").mode("overwrite").save(str(out))
    assert sorted(os.listdir(out)) == ["ok-0", "ok-1"]  # no staging left behind


# ----------------------------------------------------------------------------------------
# Symbolic links
# ----------------------------------------------------------------------------------------


def test_symlink_at_target_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_bytes(b"keep")
    root = tmp_path / "out"
    root.mkdir()
    (root / "orders-0").symlink_to(outside)
    for overwrite in (False, True):
        with pytest.raises(InvalidArgumentError, match="symbolic link"):
            kafkalog.write(root, records(2), topic="orders", overwrite=overwrite)
        with pytest.raises(InvalidArgumentError, match="symbolic link"):
            kafkalog.write(root / "orders-0", records(2), overwrite=overwrite)
    assert os.listdir(outside) == ["precious"]
    assert os.path.islink(root / "orders-0")
    # A dangling link is refused too (a rename would otherwise replace it).
    (root / "gone-0").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InvalidArgumentError, match="symbolic link"):
        kafkalog.write(root, records(2), topic="gone")
    assert not (tmp_path / "nowhere").exists()


def test_link_named_like_a_staging_directory_is_removed_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_bytes(b"keep")
    root = tmp_path / "out"
    root.mkdir()
    planted = root / ".orders-0.kafkalog-staging.1-1-0.tmp"
    planted.symlink_to(outside)
    kafkalog.write(root, records(2), topic="orders")
    assert os.listdir(outside) == ["precious"]
    assert sorted(os.listdir(root)) == ["orders-0"]


def test_link_planted_inside_the_staging_directory_is_not_followed(tmp_path):
    """A link planted in the live staging directory, at the name of a file the writer is about
    to create, makes the write fail; the file it points to is untouched."""
    victim = tmp_path / "victim"
    root = tmp_path / "out"
    root.mkdir()
    for attempt in range(5):
        victim.write_bytes(b"keep")
        planted = threading.Event()

        def plant(planted=planted):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                for name in os.listdir(root):
                    if _native.is_staging_dir_name(name) and not name.endswith("lock"):
                        try:
                            os.symlink(victim, root / name / "00000000000000000000.index")
                            planted.set()
                        except OSError:
                            pass
                        return

        t = threading.Thread(target=plant)
        t.start()
        try:
            kafkalog.write(root, records(400_000 * (attempt + 1), 64), topic="big", fsync=False)
        except KafkaLogIOError as e:
            assert e.errno == errno.EEXIST
            t.join()
            assert planted.is_set()
            assert victim.read_bytes() == b"keep"
            assert os.listdir(root) == []  # no target, no staging
            return
        t.join()
        # The write won the race: try again with more data.
        kafkalog.write(root, records(1), topic="big", overwrite=True)
        for n in os.listdir(root):
            os.system(f"rm -rf {root / n}")
    pytest.fail("the planting thread never got in before the index was written")


# ----------------------------------------------------------------------------------------
# Two writers, killed writers
# ----------------------------------------------------------------------------------------

SLOW_WRITER = textwrap.dedent(
    """
    import os, sys, time
    import pyarrow as pa
    import kafkalog

    root, flag_started, flag_go = sys.argv[1:4]
    schema = pa.schema([("key", pa.binary()), ("value", pa.binary())])

    def batches():
        for i in range(2):
            yield pa.record_batch([pa.array([None], pa.binary()), pa.array([b"A%d" % i])],
                                  schema=schema)
            if i == 0:
                open(flag_started, "w").close()
                while not os.path.exists(flag_go):
                    time.sleep(0.01)

    kafkalog.write(root, pa.RecordBatchReader.from_batches(schema, batches()),
                   topic="orders", partition=0, overwrite=True)
    """
)


def test_two_writers_one_wins_the_other_gets_a_clear_error(tmp_path):
    root = tmp_path / "out"
    started, go = tmp_path / "started", tmp_path / "go"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(root), str(started), str(go)])
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        with pytest.raises(ConcurrentWriteError, match="another writer") as e:
            kafkalog.write(root, records(3, tag=b"B"), topic="orders", overwrite=True)
        assert isinstance(e.value, KafkaLogIOError)
        # A writer of another partition in the same directory is not blocked, and leaves the
        # live writer's staging directory alone.
        kafkalog.write(root, records(3), topic="orders", partition=1)
        assert any(_native.is_staging_dir_name(n) for n in os.listdir(root))
    finally:
        go.touch()
        assert proc.wait(60) == 0
    assert values(root / "orders-0") == [b"A0", b"A1"]
    assert sorted(os.listdir(root)) == ["orders-0", "orders-1"]


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    import kafkalog

    root, n, tag, overwrite = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
    values = [tag + i.to_bytes(8, "big") + b"v" * 100 for i in range(n)]
    table = pa.table({"key": pa.array([None] * n, pa.binary()), "value": pa.array(values)})
    print("ready", flush=True)
    kafkalog.write(root, table, topic="orders", partition=0, segment_bytes=1 << 18,
                   batch_records=200, overwrite=overwrite == "1")
    """
)
KILL_ROWS = 30_000


def check_partition(target: Path, allowed: dict[bytes, int]) -> bytes | None:
    """The target is absent or complete: every row of one write and nothing else."""
    if not target.exists():
        return None
    got = values(target)
    tag = got[0][:1]
    assert len(got) == allowed[tag], (tag, len(got))
    assert got == [tag + i.to_bytes(8, "big") + b"v" * 100 for i in range(len(got))]
    kafkalog.verify(str(target))
    return tag


def test_sigkill_at_many_points_leaves_nothing_partial(tmp_path):
    root = tmp_path / "out"
    root.mkdir()
    target = root / "orders-0"
    # How long an uninterrupted write takes, from the moment the script is ready.
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(root), str(KILL_ROWS), "N", "0"],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout.readline() == b"ready\n"
    start = time.monotonic()
    assert proc.wait(120) == 0
    took = time.monotonic() - start
    kafkalog.write(root, records(7, 100, b"O"), topic="orders", overwrite=True)
    kills = 24
    seen = {"absent": 0, "O": 0, "N": 0}
    for i in range(kills):
        overwrite = i % 2 == 1
        if not overwrite and target.exists():
            os.system(f"rm -rf {target}")
        elif overwrite and not target.exists():
            kafkalog.write(root, records(7, 100, b"O"), topic="orders")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                KILLED_WRITER,
                str(root),
                str(KILL_ROWS),
                "N",
                str(int(overwrite)),
            ],
            stdout=subprocess.PIPE,
        )
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(took * 1.2 * (i + 0.5) / kills)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        tag = check_partition(target, {b"N": KILL_ROWS, b"O": 7})
        if not overwrite:
            assert tag in (None, b"N")
        else:
            assert tag in (b"O", b"N")  # an overwrite never leaves the target absent
        seen["absent" if tag is None else tag.decode()] += 1
        # The next write in the same parent removes what the killed writer left.
        kafkalog.write(root, records(1), topic="other", overwrite=True)
        assert staging_left(root) == [], i
        assert sorted(os.listdir(root)) == sorted(["other-0"] + (["orders-0"] if tag else []))
    # The kill points span the write: some before the publish, some after.
    assert seen["N"] > 0 and seen["absent"] + seen["O"] > 0, seen


# ----------------------------------------------------------------------------------------
# Full disk, read-only file system
# ----------------------------------------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_disk_full_is_a_typed_error_and_keeps_the_previous_contents(small_tmpfs):
    kafkalog.write(small_tmpfs, records(10, tag=b"O"), topic="orders")
    old = values(small_tmpfs / "orders-0")
    for topic, overwrite in (("orders", True), ("fresh", False)):
        with pytest.raises(KafkaLogIOError) as e:
            kafkalog.write(small_tmpfs, records(30_000, 64), topic=topic, overwrite=overwrite)
        assert e.value.errno == errno.ENOSPC, e.value
        assert e.value.path is not None
        assert os.listdir(small_tmpfs) == ["orders-0"]  # staging removed, nothing else
        assert values(small_tmpfs / "orders-0") == old


def test_read_only_target_is_a_typed_error(small_tmpfs):
    kafkalog.write(small_tmpfs, records(10, tag=b"O"), topic="orders")
    old = values(small_tmpfs / "orders-0")
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    for topic, overwrite in (("orders", True), ("fresh", False)):
        with pytest.raises(KafkaLogIOError) as e:
            kafkalog.write(small_tmpfs, records(5), topic=topic, overwrite=overwrite)
        assert e.value.errno == errno.EROFS, e.value
    assert os.listdir(small_tmpfs) == ["orders-0"]
    assert values(small_tmpfs / "orders-0") == old


# ----------------------------------------------------------------------------------------
# Staging directories are not data; fsync is optional
# ----------------------------------------------------------------------------------------


def test_staging_directories_are_never_read_as_data(tmp_path):
    kafkalog.write(tmp_path, records(3), topic="orders")
    # A copy of a complete partition, under names a killed writer leaves.
    for name in (".orders-1.kafkalog-staging.9-9-0.tmp", ".spark.kafkalog-job.9-9-0.tmp"):
        os.system(f"cp -r {tmp_path / 'orders-0'} {tmp_path / name}")
        assert _native.is_staging_dir_name(name)
    table = kafkalog.read(str(tmp_path)).read_all()
    assert table.num_rows == 3
    assert set(table.column("partition").to_pylist()) == {0}
    assert not _native.is_staging_dir_name("orders-0")
    assert not _native.is_staging_dir_name(".hidden-0")  # a valid Kafka topic name


def test_fsync_off_writes_the_same_bytes(tmp_path):
    kafkalog.write(tmp_path, records(500), topic="a", fsync=True)
    kafkalog.write(tmp_path, records(500), topic="b", fsync=False)
    for name in sorted(os.listdir(tmp_path / "a-0")):
        assert (tmp_path / "a-0" / name).read_bytes() == (tmp_path / "b-0" / name).read_bytes()


# ----------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------


def test_reading_a_segment_being_appended(tmp_path):
    src = tmp_path / "src"
    kafkalog.write(src, records(3000, 50), batch_records=7)
    data = (src / "00000000000000000000.log").read_bytes()
    live = tmp_path / "live-0" / "00000000000000000000.log"
    live.parent.mkdir()
    live.write_bytes(b"")
    done = threading.Event()

    def append():
        with open(live, "ab") as f:
            for at in range(0, len(data), 997):  # never on a batch boundary for long
                f.write(data[at : at + 997])
                f.flush()
                time.sleep(0.0005)
        done.set()

    t = threading.Thread(target=append)
    t.start()
    reads = torn = 0
    while not done.is_set() or reads < 3:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = kafkalog.read(str(live)).read_all()
        offsets = got.column("offset").to_pylist()
        assert offsets == list(range(len(offsets)))
        assert len(offsets) % 7 == 0 or len(offsets) == 3000  # whole batches only
        torn += any(issubclass(x.category, TruncatedSegmentWarning) for x in w)
        reads += 1
    t.join()
    assert kafkalog.read(str(live)).read_all().num_rows == 3000
    assert torn > 0


FD_READER = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), int(sys.argv[2])))
    import kafkalog
    n = 0
    for batch in kafkalog.read_batches(sys.argv[1], batch_size=4096):
        n += batch.num_rows
    print(n, kafkalog.read(sys.argv[1]).read_all().num_rows)
    """
)


def test_a_hundred_thousand_segments_read_with_few_file_descriptors(tmp_path):
    one = tmp_path / "one"
    kafkalog.write(one, records(1, 4))
    entry = (one / "00000000000000000000.log").read_bytes()
    part = tmp_path / "many-0"
    part.mkdir()
    n = 100_000
    for i in range(n):
        # A v2 batch's base offset (its first 8 bytes) is outside its CRC.
        with open(part / f"{i:020}.log", "wb") as f:
            f.write(i.to_bytes(8, "big") + entry[8:])
    r = subprocess.run(
        [sys.executable, "-c", FD_READER, str(part), "256"], capture_output=True, timeout=600
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert r.stdout.split() == [str(n).encode()] * 2
