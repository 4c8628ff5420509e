"""Shared test fixtures: a real S3 server on loopback (moto's, ``s3``), and the real-bytes corpus
in ``tests/corpus`` (bytes Kafka brokers and other clients wrote, with what Kafka's own Java
client decodes from them; override the location with ``KAFKALOG_CORPUS``). Every suite decodes
all of it, so its absence is a failure, not a skip."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import jvm_crash
import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("KAFKALOG_CORPUS", REPO / "tests" / "corpus"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "README.md").is_file():
        pytest.fail(f"the corpus is missing: expected it at {CORPUS} (set KAFKALOG_CORPUS)")
    return CORPUS


BUCKET = "kafka"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3():
    """A moto S3 server on 127.0.0.1, with one bucket; stopped at the end."""
    boto3 = pytest.importorskip("boto3")
    port = free_port()
    server = Path(sys.executable).parent / "moto_server"
    proc = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.1)
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        options = {
            "aws_endpoint": endpoint,
            "aws_allow_http": "true",
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
            "aws_region": "us-east-1",
        }
        yield _S3(client, endpoint, options)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class _S3:
    def __init__(self, client, endpoint: str, options: dict) -> None:
        self.client = client
        self.endpoint = endpoint
        self.options = options

    def upload(self, local: Path, prefix: str) -> str:
        """Copies a file or directory tree under ``s3://kafka/<prefix>``; returns its URI."""
        files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
        for f in files:
            key = prefix if local.is_file() else f"{prefix}/{f.relative_to(local).as_posix()}"
            self.client.put_object(Bucket=BUCKET, Key=key, Body=f.read_bytes())
        return f"s3://{BUCKET}/{prefix}"

    def objects(self, prefix: str) -> dict[str, bytes]:
        """Every object under ``s3://kafka/<prefix>/``, by its key below the prefix."""
        listed = self.client.list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/")
        return {
            o["Key"][len(prefix) + 1 :]: self.client.get_object(Bucket=BUCKET, Key=o["Key"])[
                "Body"
            ].read()
            for o in listed.get("Contents", [])
        }

    def env(self) -> dict:
        return {
            **os.environ,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1",
        }


@pytest.fixture(scope="session")
def spark_crash_dir(tmp_path_factory) -> Path:
    """Where the session's JVMs (driver, executors) write a crash report (tests/jvm_crash.py)."""
    return tmp_path_factory.mktemp("spark-jvm")


@pytest.fixture(autouse=True)
def _jvm_crash_fails_the_test(request):
    """A test that used the Spark session fails when its JVM left a crash report, with the
    report's first lines."""
    uses = "spark" in request.fixturenames
    directory = request.getfixturevalue("spark_crash_dir") if uses else None
    yield
    if directory is not None:
        jvm_crash.check(directory)


@pytest.fixture(scope="session")
def spark(spark_crash_dir):
    """One local[2] Spark session for every suite: pyspark's Arrow schema validation on, and
    a session time zone that is not UTC, so any Arrow type Spark would not take fails. A JVM
    crash report goes to a temporary directory (``spark_crash_dir``), never the working one."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder
    if os.environ.get("KAFKALOG_SPARK_JVM") == "1":
        # The suites with the JVM data source's jar: format("kafkalog") is then the JVM
        # source (docs/spark-jvm.md); tests/test_spark_jvm.py compares the two directly.
        import kafkalog.spark

        builder = builder.config("spark.jars", kafkalog.spark.jar())
    for key, value in jvm_crash.spark_conf(spark_crash_dir).items():
        builder = builder.config(key, value)
    session = (
        builder.master("local[2]")
        .appName("kafkalog-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.pyspark.validateSchema.enabled", "true")
        .config("spark.sql.session.timeZone", "America/New_York")
        # Python workers (and the streaming source's planner process) connect back to the JVM
        # within this time; the default 15 s is too short on a two-core machine busy building.
        .config("spark.python.authenticate.socketTimeout", "120s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    # No registration: the data source is found by name (pyspark_kafkalog's DefaultSource).
    yield session
    session.stop()


# A real Apache Kafka broker (tests/kafka_broker.py): its jars come from Maven Central on first
# use, cached outside the repository. A failed fetch fails the tests that need the broker.
@pytest.fixture(scope="session")
def kafka_jars():
    """The broker's jars and the compiled client tool; fetched once, shared by every worker."""
    import kafka_broker

    kafka_broker.tool_classes()
    return kafka_broker.jars()


@pytest.fixture(scope="session")
def kafka_broker(kafka_jars, tmp_path_factory):
    """One running broker shared by a session's tests: give each test its own topic names."""
    from kafka_broker import KafkaBroker

    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-broker"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def kafka_broker_factory(kafka_jars, tmp_path):
    """Makes brokers of a test's own (``make(name, extra=..., log_dir=...)``, not yet
    started); stops every one still running at the end."""
    from kafka_broker import KafkaBroker

    made: list = []

    def make(name: str = "broker", **kwargs):
        broker = KafkaBroker(tmp_path / name, **kwargs)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        if broker.proc is not None:
            broker.stop()
