"""Kafka backups in S3 into Delta Lake and Iceberg tables in S3 (issue 36), through a real S3
server on 127.0.0.1 (moto's, as the object-store tests run it), with the storage options of
reads: the tables equal ``kafkalog.read`` of the same log, a rerun writes only what is new,
and a server that goes away mid-run leaves the table at its last commit for the next run."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_lakehouse import expected, rows, write_log

import kafkalog
from conftest import free_port
from kafkalog.tables import TableCommitError

deltalake = pytest.importorskip("deltalake")
pytest.importorskip("pyiceberg")


@pytest.fixture(scope="module")
def source(s3, tmp_path_factory) -> tuple[str, Path]:
    local = write_log(tmp_path_factory.mktemp("lake-s3-log"), 60)
    return s3.upload(local, "lake-src"), local


def iceberg_catalog(s3, tmp_path: Path, warehouse: str) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}", "warehouse": warehouse}


def test_delta_on_s3(s3, source, tmp_path):
    uri, local = source
    table = "s3://kafka/lake-delta"
    summary = kafkalog.to_delta(uri, f"delta://{table}", storage_options=s3.options)
    assert summary["records"] == len(expected(local))
    dt = deltalake.DeltaTable(table, storage_options=s3.options)
    assert rows(dt.to_pyarrow_table()) == expected(local)
    assert dt.transaction_version("kafkalog:events-0") == 60
    again = kafkalog.to_delta(uri, table, storage_options=s3.options)
    assert again["commits"] == []


def test_iceberg_on_s3(s3, source, tmp_path):
    uri, local = source
    catalog = iceberg_catalog(s3, tmp_path, "s3://kafka/lake-iceberg")
    summary = kafkalog.to_iceberg(uri, "kafka.events", catalog=catalog, storage_options=s3.options)
    assert summary["records"] == len(expected(local))
    from pyiceberg.catalog import load_catalog

    props = {**catalog, "s3.endpoint": s3.endpoint, "s3.access-key-id": "test",
             "s3.secret-access-key": "test", "s3.region": "us-east-1"}  # fmt: skip
    table = load_catalog("default", **props).load_table("kafka.events")
    assert rows(table.scan().to_arrow()) == expected(local)
    assert s3.objects("lake-iceberg/kafka.db/events/data") or s3.objects(
        "lake-iceberg/kafka/events/data"
    )


def test_a_server_that_goes_away_mid_run(s3, tmp_path):
    """A bucket that drops connections: its own S3 server killed between two commits. The
    run fails with a clear error; the table stays at its last commit; the next run, with the
    server back, continues from it and every record is in the table once."""
    port = free_port()
    server = Path(sys.executable).parent / "moto_server"
    local = write_log(tmp_path / "log", 60)
    moto_dir = tmp_path / "moto"
    moto_dir.mkdir()

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(
            [str(server), "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import socket

        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)

    endpoint = f"http://127.0.0.1:{port}"
    # Few retries, so that the run fails in seconds rather than object_store's minutes.
    options = {**s3.options, "aws_endpoint": endpoint, "max_retries": "1", "retry_timeout": "2"}
    table = str(tmp_path / "delta")  # a local table; the source's bucket goes away
    proc = start()
    try:
        import boto3

        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="test",
                              aws_secret_access_key="test", region_name="us-east-1")  # fmt: skip
        client.create_bucket(Bucket="gone")
        for f in sorted(p for p in local.rglob("*") if p.is_file()):
            client.put_object(Bucket="gone", Key=f"src/{f.relative_to(local).as_posix()}",
                              Body=f.read_bytes())  # fmt: skip
        from kafkalog.tables import delta

        original = delta.DeltaSink._publish
        calls = []

        def publish_then_drop(self, *args):
            original(self, *args)
            calls.append(1)
            if len(calls) == 1:
                proc.send_signal(signal.SIGKILL)
                proc.wait()

        delta.DeltaSink._publish = publish_then_drop
        try:
            with pytest.raises((kafkalog.KafkaLogIOError, TableCommitError, OSError)):
                kafkalog.to_delta("s3://gone/src", table, storage_options=options,
                                  table_storage_options={}, commit_bytes=1)  # fmt: skip
        finally:
            delta.DeltaSink._publish = original
        first = deltalake.DeltaTable(table)
        assert first.version() >= 1
        partial = rows(first.to_pyarrow_table())
        assert 0 < len(partial) < len(expected(local))
        # The server is back, empty (moto keeps nothing): the same log uploaded again.
        proc = start()
        client.create_bucket(Bucket="gone")
        for f in sorted(p for p in local.rglob("*") if p.is_file()):
            client.put_object(Bucket="gone", Key=f"src/{f.relative_to(local).as_posix()}",
                              Body=f.read_bytes())  # fmt: skip
        kafkalog.to_delta("s3://gone/src", table, storage_options=options,
                          table_storage_options={})  # fmt: skip
        assert rows(deltalake.DeltaTable(table).to_pyarrow_table()) == expected(local)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
