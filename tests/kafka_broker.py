"""A real Apache Kafka broker for the tests: Kafka's own code judges what kafkalog reads and writes.

Usage (the pytest fixtures in ``tests/conftest.py`` wrap this)::

    from kafka_broker import KafkaBroker, kafka_tool

    broker = KafkaBroker(tmp_path / "broker", extra={"log.segment.bytes": "16384"})
    broker.start()                      # formats the log dir the first time (KRaft, one node)
    kafka_tool(broker.bootstrap, "produce", spec={"topics": [...], "producers": [...]})
    rows = kafka_tool(broker.bootstrap, "consume", "--topic", "t", "--isolation", "read_committed")
    broker.stop()                       # clean shutdown: checkpoints written
    broker.log_dir                      # the broker's files, meta.properties included

The jars (``org.apache.kafka:kafka_2.13`` and ``kafka-clients``, version ``KAFKA_VERSION``, with
their runtime dependencies) are fetched from Maven Central with ``mvn`` on first use into
``~/.cache/kafkalog-tests/kafka-<version>/`` (``KAFKALOG_KAFKA_HOME`` overrides), under a file
lock, and count only once complete. ``tests/jvm/KafkaClientTool.java`` (produce, consume,
list-offsets, group-offsets, describe; JSON lines out) is compiled there, again when it changes.

The produce spec (JSON)::

    {"topics": [{"name": "t", "partitions": 2, "configs": {"segment.bytes": "16384"}}],
     "producers": [
        {"compression": "zstd", "idempotent": true, "transactional_id": "tx-1",
         "config": {"linger.ms": "50"},
         "actions": [
            {"action": "begin"},
            {"action": "send", "records": [
                {"topic": "t", "partition": 0, "key": "k", "value": "v", "timestamp": 1700000000000,
                 "headers": [["h", "text"], ["b", "AAE=", true], ["n", null]]}]},
            {"action": "send", "repeat": {"count": 100, "topic": "t", "partition": 1,
                                          "key": "k{i}", "value": "v{i}", "pad": 200}},
            {"action": "commit"}]}],
     "quiet": false}

``key_b64`` / ``value_b64`` give bytes; a header's third item ``true`` marks its value as base64.
Actions: send, begin, commit, abort, flush, sleep (``{"ms": N}``), halt (the JVM exits at
once, without closing the producer: a transaction begun stays open, as after a crash). Each
sent record is printed (topic, partition, offset, timestamp) unless ``quiet``.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

KAFKA_VERSION = os.environ.get("KAFKALOG_KAFKA_VERSION", "4.4.0")
TOOL_SOURCE = Path(__file__).resolve().parent / "jvm" / "KafkaClientTool.java"
# Log4j's SLF4J 1.x binding: Kafka's jars bring slf4j-api 1.7 and log4j-core, not the bridge.
LOG4J_SLF4J = ("org.apache.logging.log4j", "log4j-slf4j-impl", "2.25.5")


class KafkaHarnessError(RuntimeError):
    """The broker or its tools could not be set up or did not behave."""


def kafka_home() -> Path:
    env = os.environ.get("KAFKALOG_KAFKA_HOME")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "kafkalog-tests" / f"kafka-{KAFKA_VERSION}"


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _pom() -> str:
    deps = [
        ("org.apache.kafka", "kafka_2.13", KAFKA_VERSION),
        ("org.apache.kafka", "kafka-clients", KAFKA_VERSION),
        LOG4J_SLF4J,
    ]
    body = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in deps
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkalog.tests</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <dependencies>
{body}
  </dependencies>
</project>
"""


_LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_ERR
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${sys:kafkalog.log.level:-INFO}
rootLogger.appenderRef.out.ref = out
logger.kafka.name = org.apache.kafka.clients
logger.kafka.level = WARN
"""


def jars() -> Path:
    """The directory of the broker's jars, fetched with Maven on first use (under a lock; a
    half-finished fetch never counts: ``libs`` appears by rename only once complete)."""
    home = kafka_home()
    libs = home / "libs"
    if (home / "COMPLETE").is_file():
        return libs
    with _locked(home):
        if (home / "COMPLETE").is_file():
            return libs
        if shutil.which("mvn") is None:
            raise KafkaHarnessError(
                "the Kafka broker tests need Maven (`mvn`) on PATH to fetch "
                f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION} from Maven Central"
            )
        (home / "pom.xml").write_text(_pom())
        partial = home / "libs.partial"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(libs, ignore_errors=True)
        cmd = [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(home / "pom.xml"),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={partial}",
            "-DincludeScope=runtime",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0 or not any(partial.glob("kafka_2.13-*.jar")):
            tail = (done.stdout + done.stderr)[-4000:]
            raise KafkaHarnessError(
                f"fetching Kafka {KAFKA_VERSION}'s jars from Maven Central failed "
                f"(exit {done.returncode}): {' '.join(cmd)}\n{tail}"
            )
        partial.rename(libs)
        (home / "COMPLETE").write_text(KAFKA_VERSION + "\n")
    return libs


def classpath() -> str:
    return str(jars()) + "/*"


def tool_classes() -> Path:
    """``KafkaClientTool`` compiled against the jars, once per version of its source."""
    libs = jars()
    digest = hashlib.sha256(TOOL_SOURCE.read_bytes()).hexdigest()[:16]
    out = kafka_home() / f"tool-{digest}"
    if (out / "KafkaClientTool.class").is_file():
        return out
    with _locked(kafka_home()):
        if (out / "KafkaClientTool.class").is_file():
            return out
        partial = out.with_name(out.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        cmd = ["javac", "-nowarn", "-d", str(partial), "-cp", str(libs) + "/*", str(TOOL_SOURCE)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise KafkaHarnessError(f"javac of {TOOL_SOURCE} failed:\n{done.stderr[-4000:]}")
        partial.rename(out)
    return out


def _log4j_config() -> Path:
    """Log4j's configuration (to stderr: the tool's stdout is its JSON), one file per text."""
    path = kafka_home() / f"log4j2-{hashlib.sha256(_LOG4J2.encode()).hexdigest()[:12]}.properties"
    if not path.is_file():
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(_LOG4J2)
        partial.rename(path)
    return path


def _jvm_flags(heap: str) -> list[str]:
    crashes = kafka_home() / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    return [
        f"-Xmx{heap}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        f"-XX:ErrorFile={crashes}/hs_err_%p.log",
        f"-Dlog4j2.configurationFile={_log4j_config()}",
    ]


def kafka_tool(
    bootstrap: str,
    command: str,
    *args: str,
    spec: Mapping[str, Any] | None = None,
    timeout: float = 300,
    check: bool = True,
) -> list[dict[str, Any]]:
    """Runs KafkaClientTool ``command`` against ``bootstrap``; returns its JSON lines.
    ``spec`` (produce) goes to its stdin. A non-zero exit raises with the tool's stderr."""
    cp = f"{tool_classes()}:{classpath()}"
    cmd = [
        "java",
        *_jvm_flags("256m"),
        "-Dkafkalog.log.level=WARN",
        "-cp",
        cp,
        "KafkaClientTool",
        command,
        "--bootstrap",
        bootstrap,
        *args,
    ]
    stdin = json.dumps(spec) if spec is not None else ""
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise KafkaHarnessError(
            f"KafkaClientTool {command} {' '.join(args)} failed (exit {done.returncode}):\n"
            f"{done.stderr[-6000:]}"
        )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_id() -> str:
    # Kafka's Uuid text form; not one starting with "-", which the storage tool would take for
    # an option.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


class KafkaBroker:
    """One Kafka node in KRaft combined mode (broker and controller) on 127.0.0.1.

    ``workdir`` holds ``server.properties``, ``server.log`` (the broker's output) and, unless
    ``log_dir`` says otherwise, the log directory ``workdir/logs``. ``extra`` adds or overrides
    broker properties (e.g. ``log.segment.bytes``, ``log.cleaner.*``)."""

    START_TIMEOUT = 120.0
    STOP_TIMEOUT = 60.0

    def __init__(
        self,
        workdir: Path,
        *,
        log_dir: Path | None = None,
        extra: Mapping[str, str] | None = None,
        heap: str = "512m",
    ) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_dir = Path(log_dir) if log_dir is not None else self.workdir / "logs"
        self.port = free_port()
        self.controller_port = free_port()
        self.extra = dict(extra or {})
        self.heap = heap
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def meta_properties(self) -> Path:
        return self.log_dir / "meta.properties"

    @property
    def server_log(self) -> Path:
        return self.workdir / "server.log"

    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "num.partitions": "1",
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.flush.interval.messages": "9223372036854775807",
        }
        props.update(self.extra)
        return props

    def _write_properties(self) -> Path:
        path = self.workdir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))
        return path

    def _java(self, main: str, *args: str) -> list[str]:
        return ["java", *_jvm_flags(self.heap), "-cp", classpath(), main, *args]

    def format(self) -> None:
        """Formats the log directory (a new cluster id), as ``kafka-storage.sh format`` does."""
        props = self._write_properties()
        cmd = self._java("kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c", str(props))
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise KafkaHarnessError(
                f"formatting {self.log_dir} failed (exit {done.returncode}):\n"
                f"{(done.stdout + done.stderr)[-4000:]}"
            )

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.server_log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server.log)"

    def start(self) -> KafkaBroker:
        if self.proc is not None:
            raise KafkaHarnessError("the broker is already running")
        if not self.meta_properties.is_file():
            self.format()
        props = self._write_properties()
        self._log = open(self.server_log, "ab")
        mark = self.server_log.stat().st_size
        self.proc = subprocess.Popen(
            self._java("kafka.Kafka", str(props)),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.START_TIMEOUT
        while True:
            with open(self.server_log, "rb") as f:
                f.seek(mark)
                out = f.read()
            if b"Kafka Server started" in out:
                return self
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self._close()
                raise KafkaHarnessError(
                    f"the Kafka broker exited ({code}) while starting:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise KafkaHarnessError(
                    f"the Kafka broker did not start within {self.START_TIMEOUT:.0f}s:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(0.2)

    def _close(self) -> None:
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> int:
        """Clean shutdown (SIGTERM, so the broker writes its checkpoints); kills it after
        ``STOP_TIMEOUT``. Returns the exit status."""
        if self.proc is None:
            return 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=self.STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
            self._close()
            raise KafkaHarnessError(
                f"the broker did not stop within {self.STOP_TIMEOUT:.0f}s; killed:\n"
                f"{self.log_tail()}"
            ) from None
        self._close()
        return code

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self._close()

    def restart(self) -> KafkaBroker:
        self.stop()
        return self.start()

    def errors(self) -> list[str]:
        """ERROR lines (and FATAL) in the broker's output so far."""
        return [
            line
            for line in self.server_log.read_text(errors="replace").splitlines()
            if "] ERROR " in line or "] FATAL " in line
        ]

    # Convenience wrappers around the client tool.
    def produce(self, spec: Mapping[str, Any]) -> list[dict[str, Any]]:
        return kafka_tool(self.bootstrap, "produce", spec=spec)

    def consume(self, topic: str, *args: str) -> list[dict[str, Any]]:
        return kafka_tool(self.bootstrap, "consume", "--topic", topic, *args)

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            try:
                self.stop()
            except KafkaHarnessError:
                pass
