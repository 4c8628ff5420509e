"""Writing partitions to an object store (a real S3 server, moto's, on loopback): staged, then
published with a conditional put of a manifest, so that a reader never sees half a partition;
two writers conflict with a typed error; a failed or killed write is never read.

The written bytes are checked against a local write of the same table (byte for byte) and
decoded by kafka-python's own reader, as Kafka's clients read them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import warnings

import pyarrow as pa
import pytest

import kafkalog
from conftest import BUCKET, REPO
from kafka_builders import library_batches
from kafkalog import cli

LOGS = REPO / "examples" / "logs"


def table(n: int = 3000) -> pa.Table:
    return pa.table(
        {
            "key": pa.array([b"k%d" % (i % 7) for i in range(n)], pa.binary()),
            "value": pa.array([b"v" * 50 + b"%d" % i for i in range(n)], pa.binary()),
            "timestamp": pa.array([1_700_000_000_000 + i for i in range(n)], pa.timestamp("ms")),
        }
    )


def rows(source, **kw) -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = kafkalog.read(source, columns=["offset", "key", "value", "timestamp"], **kw).read_all()
    return t.to_pylist()


@pytest.mark.parametrize("compression", [None, "zstd"])
def test_written_segments_read_back_as_written(s3, tmp_path, compression):
    data = table()
    prefix = f"write/{compression}/orders-0"
    uri = f"s3://{BUCKET}/{prefix}"
    kw = {"segment_bytes": 20_000, "index_interval_bytes": 1000, "compression": compression}
    summary = kafkalog.write(uri, data, storage_options=s3.options, **kw)
    assert len(summary) > (3 if compression is None else 0)
    assert all(s["path"].startswith(uri + "/") for s in summary)
    kafkalog.write(tmp_path / "orders-0", data, **kw)
    remote = s3.objects(prefix)
    local = {p.name: p.read_bytes() for p in (tmp_path / "orders-0").iterdir()}
    # The same files, byte for byte, and the manifest listing them with their sizes.
    manifest = remote.pop(".kafkalog-manifest").decode().splitlines()
    assert remote == local
    assert sorted(manifest[2:]) == sorted(f"{n} {len(b)}" for n, b in local.items())
    assert int(manifest[1]) == len(local)
    assert rows(uri, storage_options=s3.options) == rows(tmp_path / "orders-0")
    assert [r["offset"] for r in rows(uri, storage_options=s3.options)] == list(range(3000))
    # kafka-python's reader decodes the uploaded segments to the input.
    values = [
        r["value"]
        for name in sorted(n for n in remote if n.endswith(".log"))
        for b in library_batches(remote[name], "kafka-python")
        for r in b["records"]
    ]
    assert values == data.column("value").to_pylist()


def test_topic_and_partition_under_a_prefix(s3):
    root = f"s3://{BUCKET}/named"
    kafkalog.write(root, table(10), topic="orders", partition=3, storage_options=s3.options)
    got = kafkalog.read(root, storage_options=s3.options).read_all()
    assert set(got.column("topic").to_pylist()) == {"orders"}
    assert set(got.column("partition").to_pylist()) == {3}
    for bad in ("..", "a/b", "../../etc"):
        with pytest.raises(kafkalog.InvalidArgumentError):
            kafkalog.write(root, table(1), topic=bad, storage_options=s3.options)
    assert sorted(s3.objects("named")) == [
        "orders-3/.kafkalog-manifest",
        "orders-3/00000000000000000000.index",
        "orders-3/00000000000000000000.log",
        "orders-3/00000000000000000000.timeindex",
        "orders-3/00000000000000000010.snapshot",  # the producers at the end, as a broker's
    ]


def test_nothing_is_read_before_publish_and_a_failed_write_leaves_nothing(s3):
    uri = f"s3://{BUCKET}/failed/orders-0"
    data = table()
    seen = []

    def batches():
        for i, b in enumerate(data.to_batches(max_chunksize=300)):
            if i == 8:
                # Segments are uploaded by now, but nothing is published.
                assert any(k.endswith(".log") for k in s3.objects("failed/orders-0"))
                seen.append(rows(uri, storage_options=s3.options))
                with pytest.raises(kafkalog.ConcurrentWriteError):
                    kafkalog.write(uri, data, storage_options=s3.options)
                raise RuntimeError("the input failed")
            yield b

    with pytest.raises(RuntimeError, match="the input failed"):
        kafkalog.write(
            uri,
            pa.RecordBatchReader.from_batches(data.schema, batches()),
            segment_bytes=20_000,
            storage_options=s3.options,
        )
    assert seen == [[]]
    assert s3.objects("failed/orders-0") == {}, "a failed write removes what it uploaded"
    kafkalog.write(uri, data, segment_bytes=20_000, storage_options=s3.options)
    assert len(rows(uri, storage_options=s3.options)) == 3000


def test_a_killed_writer_is_never_read_and_its_marker_is_taken_over(s3):
    uri = f"s3://{BUCKET}/killed/orders-0"
    script = textwrap.dedent(
        f"""
        import os, signal, pyarrow as pa, kafkalog
        t = pa.table({{"value": pa.array([b"x" * 100] * 5000, pa.binary())}})
        def batches():
            for i, b in enumerate(t.to_batches(max_chunksize=500)):
                if i == 6:
                    os.kill(os.getpid(), signal.SIGKILL)
                yield b
        kafkalog.write({uri!r}, pa.RecordBatchReader.from_batches(t.schema, batches()),
                       segment_bytes=20_000,
                       storage_options={s3.options!r})
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], env=os.environ, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    left = s3.objects("killed/orders-0")
    assert ".kafkalog-writing" in left and any(k.endswith(".log") for k in left)
    assert ".kafkalog-manifest" not in left
    assert rows(uri, storage_options=s3.options) == []
    assert rows(f"s3://{BUCKET}/killed", storage_options=s3.options) == []
    marker = left[".kafkalog-writing"].decode()
    assert marker.startswith("kafkalog-writer 1\n") and f"host {os.uname().nodename}\n" in marker
    # Its process is gone from this host: the next writer takes the marker over (and the
    # dead writer's unpublished uploads go with it, overwrite or not).
    kafkalog.write(uri, table(5), storage_options=s3.options)
    assert [r["offset"] for r in rows(uri, storage_options=s3.options)] == list(range(5))
    assert sorted(s3.objects("killed/orders-0")) == [
        ".kafkalog-manifest",
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "00000000000000000005.snapshot",
    ]


def test_a_live_or_foreign_writers_marker_blocks_and_two_take_over_a_dead_one_once(s3):
    import threading

    uri = f"s3://{BUCKET}/takeover/orders-0"
    key = "takeover/orders-0/.kafkalog-writing"
    # A marker of an older kafkalog: never taken over. One of a writer on another host, or
    # of this host's live process (this one): not while its lease holds (it was just put).
    for body, why in (
        (b"kafkalog write started by process 1 at 0 ms\n", "not a kafkalog writer's note"),
        (
            b"kafkalog-writer 1\nowner x\nhost elsewhere.invalid\npid 1\ncreated_ms 0\n",
            r"process 1 on host \"elsewhere.invalid\", last refreshed .* has not expired",
        ),
        (
            f"kafkalog-writer 1\nowner x\nhost {os.uname().nodename}\npid {os.getpid()}\n"
            "created_ms 0\n".encode(),
            "has not expired",
        ),
    ):
        s3.client.put_object(Bucket=BUCKET, Key=key, Body=body)
        with pytest.raises(kafkalog.ConcurrentWriteError, match=why):
            kafkalog.write(uri, table(5), storage_options=s3.options)
        assert s3.objects("takeover/orders-0") == {".kafkalog-writing": body}
    # A dead process of this host: two writers race; exactly one writes.
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    body = (
        f"kafkalog-writer 1\nowner x\nhost {os.uname().nodename}\npid {dead.stdout.strip()}\n"
        "created_ms 0\n"
    ).encode()
    for _ in range(3):
        s3.client.delete_object(Bucket=BUCKET, Key=key)
        for k in s3.objects("takeover/orders-0"):
            s3.client.delete_object(Bucket=BUCKET, Key=f"takeover/orders-0/{k}")
        s3.client.put_object(Bucket=BUCKET, Key=key, Body=body)
        outcomes: list[str] = []

        def write(n: int, outcomes: list[str] = outcomes) -> None:
            try:
                kafkalog.write(uri, table(n), storage_options=s3.options)
                outcomes.append(f"wrote {n}")
            except (kafkalog.ConcurrentWriteError, kafkalog.InvalidArgumentError) as e:
                outcomes.append(type(e).__name__)

        threads = [threading.Thread(target=write, args=(n,)) for n in (5, 7)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wrote = [o for o in outcomes if o.startswith("wrote")]
        assert len(wrote) == 1, outcomes
        n = int(wrote[0].split()[1])
        assert [r["offset"] for r in rows(uri, storage_options=s3.options)] == list(range(n))
        assert ".kafkalog-writing" not in s3.objects("takeover/orders-0")


def test_a_big_segment_is_uploaded_in_parts_and_streamed_back(s3, tmp_path):
    """Over 16 MiB: a multipart upload, complete only at the end. Over 32 MiB, reading it
    back is one streaming GET (open-ended), or a bounded one for a read with an end."""
    n = 70_000
    data = pa.table({"value": pa.array([os.urandom(512) for _ in range(n)], pa.binary())})
    uri = f"s3://{BUCKET}/big/orders-0"
    kafkalog.write(uri, data, storage_options=s3.options)
    size = s3.client.head_object(Bucket=BUCKET, Key="big/orders-0/00000000000000000000.log")
    assert size["ContentLength"] > 16 << 20
    assert "-" in size["ETag"], "a multipart upload's ETag"
    for threads in (1, 2):
        got = kafkalog.read(
            uri, storage_options=s3.options, columns=["value"], threads=threads
        ).read_all()
        assert got.column("value") == data.column("value")
    got = kafkalog.read(
        uri, storage_options=s3.options, columns=["offset"], start_offset=100, end_offset=n - 100
    ).read_all()
    assert got.column("offset").to_pylist() == list(range(100, n - 100))
    got = kafkalog.read(
        uri + "/00000000000000000000.log",
        storage_options=s3.options,
        columns=["value"],
        byte_range=(0, 34 << 20),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the range ends inside a batch: a torn tail
        values = got.read_all().column("value")
    assert values == data.column("value").slice(0, len(values)) and len(values) > 60_000


def test_cli_convert_to_an_object_store(s3, monkeypatch):
    for k, v in s3.env().items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    out = f"s3://{BUCKET}/converted/logs.parquet"
    assert cli.main(["convert", str(LOGS), out, "--no-progress"]) == 0
    import io

    import pyarrow.parquet as pq

    body = s3.client.get_object(Bucket=BUCKET, Key="converted/logs.parquet")["Body"].read()
    got = pq.read_table(io.BytesIO(body))
    assert got.num_rows == kafkalog.read(LOGS).read_all().num_rows


class CuttingProxy:
    """A TCP proxy in front of the S3 server that drops the first ``cuts`` connections whose
    responses pass ``after`` bytes: a connection dropped in the middle of a large GET."""

    def __init__(self, port: int, after: int, cuts: int) -> None:
        import socket
        import threading

        self.target, self.after, self.cuts = port, after, cuts
        self.cut = 0
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self.pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self.pump, args=(upstream, client, True), daemon=True).start()

    def pump(self, src, dst, responses: bool) -> None:
        sent = 0
        try:
            while data := src.recv(1 << 16):
                sent += len(data)
                if responses and sent > self.after:
                    with self.lock:
                        drop = self.cut < self.cuts
                        self.cut += drop
                    if drop:
                        break
                dst.sendall(data)
        except OSError:
            pass
        import socket

        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)  # a FIN now, even with the other pump blocked
                s.close()
            except OSError:
                pass

    def close(self) -> None:
        self.server.close()


def test_a_stream_dropped_midway_is_resumed(s3):
    """A dropped connection in the middle of a streaming GET: the read starts again from the
    next byte it has not received, and returns every record once."""
    n = 70_000
    data = pa.table({"value": pa.array([os.urandom(512) for _ in range(n)], pa.binary())})
    uri = f"s3://{BUCKET}/dropped/orders-0"
    kafkalog.write(uri, data, storage_options=s3.options)
    port = int(s3.endpoint.rsplit(":", 1)[1])
    proxy = CuttingProxy(port, after=12 << 20, cuts=2)
    try:
        # object_store resumes a broken body itself; with its retries off, kafkalog's own
        # restart of the stream is what resumes it.
        options = {
            **s3.options,
            "aws_endpoint": f"http://127.0.0.1:{proxy.port}",
            "max_retries": "0",
        }
        got = kafkalog.read(uri, storage_options=options, columns=["value"]).read_all()
    finally:
        proxy.close()
    assert proxy.cut == 2, "the connection was dropped twice"
    assert got.column("value") == data.column("value")


# --------------------------------------------------------------------------------------------
# The Spark writer: tasks stage, the driver publishes at commit
# --------------------------------------------------------------------------------------------


def _spark_source(spark):
    return spark.read.format("kafkalog").option("targetBytes", 1).load(str(LOGS))


def _partition_rows(source, **kw) -> dict[str, list]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = kafkalog.read(source, columns=["topic", "partition", "offset", "key", "value"], **kw)
        t = t.read_all()
    return sorted(t.to_pylist(), key=lambda r: (r["topic"], r["partition"], r["offset"]))


def test_spark_writer_publishes_to_s3_at_commit(spark, s3):
    import kafkalog.spark as ks

    uri = f"s3://{BUCKET}/spark-write"
    df = _spark_source(spark)
    ks.write(df, uri, storage_options=s3.options, compression="zstd", segment_bytes=1024)
    assert _partition_rows(uri, storage_options=s3.options) == _partition_rows(LOGS)
    names = s3.objects("spark-write")
    # Every partition published with its manifest, and no staging or marker left.
    partitions = {n.split("/")[0] for n in names}
    assert partitions == {
        "_schemas-0", "clicks-0", "clicks-1", "events-0", "orders-0", "orders-1", "payments-0",
        "users-0",
    }  # fmt: skip
    assert all(f"{p}/.kafkalog-manifest" in names for p in partitions)
    assert not [n for n in names if n.endswith(".kafkalog-writing") or "kafkalog-job" in n]
    # Back through the data source.
    loaded = (
        spark.read.format("kafkalog")
        .options(**{f"storage.{k}": v for k, v in s3.options.items()})
        .load(uri)
    )
    assert loaded.count() == 101  # examples/logs, with payments-0 and _schemas-0 (issue 38)

    # Append continues a partition that is there; overwrite replaces only those written.
    ks.write(df.filter("topic = 'users'").limit(2), uri, storage_options=s3.options)
    assert len(_partition_rows(f"{uri}/users-0", storage_options=s3.options)) == (
        len(_partition_rows(LOGS / "users-0")) + 2
    )
    ks.write(
        df.filter("topic = 'users'").limit(3), uri, mode="overwrite", storage_options=s3.options
    )
    assert len(_partition_rows(f"{uri}/users-0", storage_options=s3.options)) == 3
    assert len(_partition_rows(f"{uri}/orders-0", storage_options=s3.options)) == 33
    assert not [n for n in s3.objects("spark-write") if "kafkalog-job" in n]


def test_spark_writer_failed_job_publishes_nothing_in_s3(spark, s3):
    from pyspark.sql import functions as F

    import kafkalog.spark as ks

    uri = f"s3://{BUCKET}/spark-abort"
    df = _spark_source(spark)
    # One task's rows include a topic Kafka refuses: that task raises after the others may
    # have staged theirs, so the job aborts.
    bad = df.withColumn(
        "topic", F.when(df.topic == "users", F.lit("bad/topic")).otherwise(df.topic)
    )
    with pytest.raises(Exception, match="bad/topic"):
        ks.write(bad, uri, storage_options=s3.options)
    assert s3.objects("spark-abort") == {}  # nothing published, staging removed

    # A job whose task dies while others have staged (a row that fails in a Python UDF).
    @F.udf("string")
    def explode(topic):
        if topic == "users":
            raise RuntimeError("task failed on purpose")
        return topic

    with pytest.raises(Exception, match="task failed on purpose"):
        ks.write(df.withColumn("topic", explode(df.topic)), uri, storage_options=s3.options)
    assert s3.objects("spark-abort") == {}
