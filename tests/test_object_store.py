"""Object stores, natively: partition directories read from a real S3 server on loopback
(moto's server, started here) give the same tables as the same directories on local disk, for
every magic and codec and with every bound; errors keep their kind and name the URI; the
command line reads ``s3://`` URIs.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import kafkalog
from conftest import BUCKET, free_port
from conftest import CORPUS as CORPUS_ROOT
from kafkalog import cli

REPO = Path(__file__).resolve().parent.parent
LOGS = REPO / "examples" / "logs"


def _rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def _same(local, remote, options: dict, **kw) -> pa.Table:
    want = kafkalog.read(local, **kw).read_all()
    got = kafkalog.read(remote, storage_options=options, **kw).read_all()
    assert got.schema == want.schema
    assert _rows(got) == _rows(want)
    return got


@pytest.fixture(scope="module")
def logs(s3) -> str:
    return s3.upload(LOGS, "logs")


def test_log_directory_reads_as_on_disk(s3, logs):
    got = _same(LOGS, logs, s3.options, batch_metadata=True, include_control=True)
    assert got.num_rows > 0
    assert set(got.column("topic").to_pylist()) == {
        p.name.rsplit("-", 1)[0] for p in LOGS.iterdir()
    }


@pytest.mark.parametrize("threads", [1, 2])
def test_partition_file_and_list(s3, logs, threads):
    part = sorted(p for p in LOGS.iterdir() if p.is_dir())[0]
    _same(part, f"{logs}/{part.name}", s3.options, threads=threads)
    seg = sorted(part.glob("*.log"))[0]
    _same(seg, f"{logs}/{part.name}/{seg.name}", s3.options, threads=threads)
    parts = sorted(p for p in LOGS.iterdir() if p.is_dir())[:2]
    _same(parts, [f"{logs}/{p.name}" for p in parts], s3.options)


BOUNDS = [
    {"start_offset": 3},
    {"start_offset": 2, "end_offset": 9},
    {"isolation_level": "read_committed"},
    {"start_timestamp": 1_700_000_000_000 + 5_000},
    {"end_timestamp": 1_700_000_000_000 + 10_000, "isolation_level": "read_committed"},
]


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: ",".join(b))
def test_bounds_as_on_disk(s3, logs, bounds):
    _same(LOGS, logs, s3.options, **bounds)


@pytest.mark.parametrize(
    "magic,compression",
    [
        (0, "none"),
        (0, "gzip"),
        (1, "snappy"),
        (1, "lz4"),
        (2, "none"),
        (2, "gzip"),
        (2, "snappy"),
        (2, "lz4"),
        (2, "zstd"),
    ],
)
def test_every_magic_and_codec(s3, tmp_path, magic, compression):
    n = 3000
    table = pa.table(
        {
            "key": [f"k{i % 97}".encode() for i in range(n)],
            "value": [os.urandom(40) + bytes([i % 251]) * 60 for i in range(n)],
            "timestamp": pa.array(
                [1_700_000_000_000 + i for i in range(n)], pa.timestamp("ms", "UTC")
            ),
        }
    )
    local = tmp_path / f"t{magic}{compression}-0"
    kafkalog.write(local, table, magic=magic, compression=compression, segment_bytes=64 << 10)
    remote = s3.upload(local, f"codecs/{local.name}")
    _same(local, remote, s3.options, batch_metadata=True)
    _same(local, remote, s3.options, start_offset=1234, end_offset=2100)
    _same(local, remote, s3.options, start_timestamp=1_700_000_000_000 + 1500)


def test_corpus_partitions(s3, corpus):
    root = corpus / "segments"
    dirs = sorted({p.parent for p in root.rglob("*.log")})
    uri = s3.upload(root, "corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in dirs:
            remote = f"{uri}/{d.relative_to(root).as_posix()}"
            try:
                want = kafkalog.read(d, include_control=True, on_corrupt="stop").read_all()
            except kafkalog.KafkaLogError as e:
                with pytest.raises(type(e)):
                    kafkalog.read(
                        remote, include_control=True, on_corrupt="stop", storage_options=s3.options
                    ).read_all()
                continue
            got = kafkalog.read(
                remote, include_control=True, on_corrupt="stop", storage_options=s3.options
            ).read_all()
            assert _rows(got) == _rows(want), d


def test_segments_verify_and_indexes(s3, logs):
    local = kafkalog.segments(LOGS)
    remote = kafkalog.segments(logs, storage_options=s3.options)
    assert [(s["topic"], s["partition"], s["base_offset"], s["size"]) for s in remote] == [
        (s["topic"], s["partition"], s["base_offset"], s["size"]) for s in local
    ]
    assert remote[0]["path"].startswith(f"{logs}/")
    report = kafkalog.verify(logs, storage_options=s3.options)
    assert report["ok"] == kafkalog.verify(LOGS)["ok"]
    assert len(report["segments"]) == len(local)
    index = sorted(LOGS.glob("*/*.index"))[0]
    rel = index.relative_to(LOGS).as_posix()
    assert kafkalog.read_index(f"{logs}/{rel}", storage_options=s3.options).equals(
        kafkalog.read_index(index)
    )


def test_missing_object_is_a_typed_file_not_found(s3, logs):
    uri = f"{logs}/orders-0/00000000000000099999.log"
    with pytest.raises(FileNotFoundError) as caught:
        kafkalog.read(uri, storage_options=s3.options).read_all()
    err = caught.value
    assert isinstance(err, kafkalog.KafkaLogIOError)
    assert isinstance(err, kafkalog.KafkaLogFileNotFoundError)
    assert err.path == uri and uri in str(err)
    # A missing local file too keeps its kind.
    with pytest.raises(FileNotFoundError):
        kafkalog.read("/nonexistent/kafkalog/orders-0").read_all()


def test_unknown_option_and_scheme_are_refused(s3, logs):
    with pytest.raises(kafkalog.InvalidArgumentError, match="no_such_option"):
        kafkalog.read(logs, storage_options={**s3.options, "no_such_option": "1"}).read_all()
    with pytest.raises(kafkalog.InvalidArgumentError, match="filesystem="):
        kafkalog.read("hdfs://namenode/kafka-logs").read_all()


def test_a_prefix_without_kafka_layout_warns(s3):
    s3.upload(Path(__file__), "not-kafka/readme.txt")
    with pytest.warns(UserWarning, match="no Kafka segment"):
        table = kafkalog.read(f"s3://{BUCKET}/not-kafka", storage_options=s3.options).read_all()
    assert table.num_rows == 0


def test_a_refused_connection_fails_fast_with_a_typed_error():
    port = free_port()  # nothing listens there
    options = {
        "aws_endpoint": f"http://127.0.0.1:{port}",
        "aws_allow_http": "true",
        "aws_access_key_id": "x",
        "aws_secret_access_key": "x",
        "aws_region": "us-east-1",
        "max_retries": "1",
        "retry_timeout": "2",
        "connect_timeout": "1s",
    }
    started = time.monotonic()
    with pytest.raises(kafkalog.KafkaLogIOError) as caught:
        kafkalog.read(f"s3://{BUCKET}/logs", storage_options=options).read_all()
    assert "s3://kafka/logs" in str(caught.value)
    assert time.monotonic() - started < 60


def test_filesystem_argument(s3, logs):
    fs = pafs.S3FileSystem(
        endpoint_override=s3.endpoint,
        scheme="http",
        access_key="test",
        secret_key="test",
        region="us-east-1",
    )
    want = kafkalog.read(LOGS).read_all()
    got = kafkalog.read(logs, filesystem=fs).read_all()
    assert _rows(got) == _rows(want)
    # And a local pyarrow filesystem, through the same path.
    got = kafkalog.read(str(LOGS), filesystem=pafs.LocalFileSystem()).read_all()
    assert _rows(got) == _rows(want)


def test_cli_convert_dump_info_verify(s3, logs, tmp_path, monkeypatch, capsys):
    for k, v in s3.env().items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    out = tmp_path / "out.parquet"
    assert cli.main(["convert", logs, str(out)]) == 0
    import pyarrow.parquet as pq

    assert _rows(pq.read_table(out)) == _rows(kafkalog.read(LOGS).read_all())
    capsys.readouterr()
    seg = sorted(LOGS.glob("orders-0/*.log"))[0]
    assert cli.main(["dump", "--files", str(seg), "--print-data-log"]) == 0
    local_dump = capsys.readouterr().out
    remote_seg = f"{logs}/orders-0/{seg.name}"
    assert cli.main(["dump", "--files", remote_seg, "--print-data-log"]) == 0
    remote_dump = capsys.readouterr().out
    # The same lines but for the file name kafka-dump-log prints first.
    assert remote_dump.splitlines()[1:] == local_dump.splitlines()[1:]
    assert cli.main(["info", "--json", logs]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info
    assert cli.main(["verify", logs]) == 0


def _no_aws_environment(monkeypatch) -> None:
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)


def test_cli_storage_options(s3, tmp_path, monkeypatch, capsys):
    """Every command that reads takes the store's options on the command line (-o KEY=VALUE),
    with no AWS_* environment: dump of each kind of file prints what it prints for the local
    copy, info, verify and convert (out to the store too) read the same records."""
    _no_aws_environment(monkeypatch)
    part = tmp_path / "cli-0"
    n = 2000
    data = pa.table(
        {"key": [b"k%d" % (i % 7) for i in range(n)], "value": [b"v" * (i % 50) for i in range(n)]}
    )
    kafkalog.write(part, data, segment_bytes=32 << 10, index_interval_bytes=512, batch_bytes=1024)
    remote = s3.upload(part, "cli-options/cli-0")
    opts = [a for k, v in s3.options.items() for a in ("-o", f"{k}={v}")]
    files = sorted(
        p.name for p in part.iterdir() if p.suffix in (".log", ".index", ".timeindex", ".snapshot")
    )
    assert any(f.endswith(".index") and (part / f).stat().st_size > 8 for f in files)
    for name in files:
        for flags in ([], ["--print-data-log"], ["--verify-index-only"], ["--index-sanity-check"]):
            capsys.readouterr()
            local_code = cli.main(["dump", "--files", str(part / name), *flags])
            local = capsys.readouterr()
            code = cli.main(["dump", "--files", f"{remote}/{name}", *flags, *opts])
            got = capsys.readouterr()
            assert (code, got.err) == (local_code, local.err.replace(str(part), remote)), name
            # The same lines, naming the file as kafka-dump-log names it (s3:// as s3:/).
            shown = remote.replace("s3://", "s3:/")
            assert got.out.replace(shown, "@") == local.out.replace(str(part), "@"), (name, flags)
    # Without the options the store is not reachable (no environment to fall back on).
    assert cli.main(["info", remote, "-o", "aws_endpoint=http://127.0.0.1:1"]) == 3
    capsys.readouterr()
    assert cli.main(["info", "--json", remote, *opts]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["records"] == n
    assert cli.main(["verify", remote, *opts]) == 0
    capsys.readouterr()
    out = f"s3://{BUCKET}/cli-options/out.parquet"
    assert cli.main(["convert", remote, out, *opts]) == 0
    import pyarrow.parquet as pq

    body = s3.client.get_object(Bucket=BUCKET, Key="cli-options/out.parquet")["Body"].read()
    got = pq.read_table(pa.BufferReader(body))
    assert got.column("value").to_pylist() == data.column("value").to_pylist()
    # A malformed option is a usage error.
    assert cli.main(["info", remote, "-o", "aws_endpoint"]) == 2


def test_no_segment_warning_obeys_warning_filters(s3):
    """The core's warnings go through Python's warnings machinery: a filter set to "error"
    raises them."""
    s3.client.put_object(Bucket=BUCKET, Key="not-kafka/readme.txt", Body=b"not a segment")
    empty = f"s3://{BUCKET}/not-kafka"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="no Kafka segment"):
            kafkalog.read(empty, storage_options=s3.options).read_all()
        with pytest.raises(UserWarning, match="no Kafka segment"):
            kafkalog.segments(empty, storage_options=s3.options)


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: ",".join(b))
@pytest.mark.parametrize("target", [1, None])
def test_plan_then_read_items_is_a_read(s3, logs, bounds, target):
    """The native plan, cut into items and decoded item by item (as Spark tasks do), gives
    the records of one read with the same bounds, from the store as from local disk."""
    want = _rows(kafkalog.read(LOGS, **bounds).read_all())
    for where, options in ((str(LOGS), None), (logs, s3.options)):
        items = kafkalog.plan(where, target_bytes=target, storage_options=options, **bounds)
        assert all(isinstance(i, kafkalog.WorkItem) for i in items)
        got = []
        for item in items:
            got += _rows(kafkalog.read_items([item], storage_options=options).read_all())
        assert got == want, where
        if bounds.get("isolation_level") == "read_committed":
            assert all(i.aborted is not None for i in items)


def test_plan_per_partition_bounds_and_keep(s3, logs):
    items = kafkalog.plan(
        logs,
        storage_options=s3.options,
        keep=lambda topic, partition: topic == "orders",
        partition_bounds={("orders", 0): {"start_offset": 5}},
    )
    assert {(i.topic, i.partition) for i in items} == {("orders", 0), ("orders", 1)}
    assert all(i.start_offset == 5 for i in items if i.partition == 0)
    assert all(i.start_offset is None for i in items if i.partition == 1)


def test_a_partition_read_asks_the_store_once_for_each_thing(s3, tmp_path):
    """Each request costs a round trip (and, against moto, milliseconds of its CPU): reading a
    one-segment partition lists it once and GETs the segment without a HEAD first; a
    checkpoint is one GET, not a HEAD and a GET. Counted through a forwarding proxy."""
    import http.client
    import http.server
    import threading
    from urllib.parse import urlparse

    target = urlparse(s3.options["aws_endpoint"])
    seen: list[str] = []

    class Forward(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            seen.append(f"{self.command} {self.path}")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
            conn.request(self.command, self.path, body or None, dict(self.headers))
            got = conn.getresponse()
            data = got.read()
            self.send_response(got.status)
            for k, v in got.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            # A HEAD answers with the object's length, and no body.
            length = got.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _forward

        def log_message(self, *args) -> None:
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        part = tmp_path / "counted-0"
        kafkalog.write(part, pa.table({"value": [b"v%d" % i for i in range(10)]}))
        uri = s3.upload(part, "counted/counted-0")
        options = {**s3.options, "aws_endpoint": f"http://127.0.0.1:{proxy.server_port}"}
        assert kafkalog.read(uri, storage_options=options).read_all().num_rows == 10
    finally:
        proxy.shutdown()
    log = next(p.name for p in part.iterdir() if p.suffix == ".log")
    lists = [r for r in seen if "list-type=2" in r]
    assert len(lists) == 1, seen
    assert not [r for r in seen if r.startswith("HEAD") and r.endswith(log)], seen
    assert [r for r in seen if r.startswith("GET") and r.endswith(log)], seen
    assert not [r for r in seen if r.startswith("HEAD") and "checkpoint" in r], seen
    assert len(seen) <= 5, seen


CORPUS = CORPUS_ROOT / "segments"


def test_internal_topics_from_the_store(s3, tmp_path, monkeypatch, capsys):
    """The internal-topic tables of a broker's log directory read from an object store equal
    those of the local copy: consumer offsets (with the lag against the data partitions),
    groups, KRaft metadata and the cluster state from a snapshot plus the log after it; the
    offsets command takes the store's options too."""
    _no_aws_environment(monkeypatch)
    logdir = CORPUS / "nomanazeem__Kafka-java" / "kafka-logs"
    if not logdir.is_dir():
        pytest.skip("corpus not present")
    remote = s3.upload(logdir, "internal/kafka-logs")
    opts = s3.options

    def same(fn, local, uri, **kw) -> None:
        want, got = fn(local, **kw), fn(uri, storage_options=opts, **kw)
        assert got.to_pylist() == want.to_pylist(), fn.__name__

    same(kafkalog.consumer_offsets, logdir, remote)
    same(kafkalog.consumer_groups, logdir, remote)
    meta = logdir / "__cluster_metadata-0"
    same(kafkalog.cluster_metadata, meta, f"{remote}/__cluster_metadata-0")
    # A snapshot beside the log: the state is the snapshot's plus what follows it.
    part = tmp_path / "__cluster_metadata-0"
    shutil.copytree(meta, part)
    shutil.copy(
        part / "00000000000000000000.log", part / "00000000000000000010-0000000001.checkpoint"
    )
    state_uri = s3.upload(part, "internal/with-snapshot/__cluster_metadata-0")
    want = kafkalog.cluster_state(part)
    got = kafkalog.cluster_state(state_uri, storage_options=opts)
    assert {k: t.to_pylist() for k, t in got.items()} == {k: t.to_pylist() for k, t in want.items()}
    capsys.readouterr()
    assert cli.main(["offsets", str(logdir)]) == 0
    local = capsys.readouterr().out
    args = [a for k, v in opts.items() for a in ("-o", f"{k}={v}")]
    assert cli.main(["offsets", remote, *args]) == 0
    assert capsys.readouterr().out == local


# --------------------------------------------------------------------------------------------
# What a failed connection says (issue 28)


def _no_aws_environment(monkeypatch):
    for name in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_s3_without_credentials_says_none_were_found(monkeypatch):
    _no_aws_environment(monkeypatch)
    # The instance metadata endpoint (the builder's last resort) at a port nobody listens on.
    endpoint = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_METADATA_ENDPOINT", endpoint)
    with pytest.raises(kafkalog.KafkaLogIOError) as info:
        kafkalog.read("s3://bucket/logs/orders-0", storage_options={"max_retries": "0"})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("s3://bucket/logs/orders-0: no AWS credentials found: tried ")
    assert "AWS_ACCESS_KEY_ID" in message
    assert f"the instance metadata endpoint {endpoint}" in message
    assert message.endswith("Connection refused (os error 111)")


def test_s3_without_a_server_says_the_connection_was_refused(monkeypatch):
    _no_aws_environment(monkeypatch)
    endpoint = f"http://127.0.0.1:{free_port()}"
    options = {
        "aws_endpoint": endpoint,
        "aws_allow_http": "true",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
        "max_retries": "1",
    }
    with pytest.raises(kafkalog.KafkaLogIOError) as info:
        kafkalog.read("s3://bucket/logs/orders-0", storage_options=options)
    message = str(info.value)
    assert "\n" not in message
    assert f"HEAD {endpoint}/bucket/logs/orders-0 failed (after 1 retries)" in message
    assert message.endswith("Connection refused (os error 111)")
