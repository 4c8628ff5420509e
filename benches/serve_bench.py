"""`kafkalog serve` against a real Kafka broker serving the same files (issue 45's speed table).

A real Kafka 4.x broker (tests/kafka_broker.py) writes a log of `--gb` GB: 1 KB values of
random bytes, lz4, one partition; it is stopped. Then, in turns (broker, endpoint, broker,
endpoint, ...), each serves those files to Kafka's Java consumer, which reads the whole log
(benches/java/ServeConsumerBench.java: ByteArrayDeserializer, the client's default fetch
sizes). Per run: the consumer's records/s, and the server process's CPU seconds (user + system,
from /proc) while the consumer ran, per GB served. With `--s3`, the same log uploaded to a moto
S3 server on 127.0.0.1 is served by the endpoint from the bucket, against its local rate, and
moto's own rate handing one client the segment whole; all sides take turns in every round.

    python benches/serve_bench.py --gb 1 --rounds 3 [--s3]

The log is kept in `--dir` (default target/bench-serve) and reused. Medians go to stdout, as a
Markdown table for BENCHMARKS.md, after one JSON line per run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import kafka_broker  # noqa: E402

TOPIC = "bench"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children... of its threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def bench_classes() -> Path:
    out = Path(args.dir) / "classes"
    source = ROOT / "benches" / "java" / "ServeConsumerBench.java"
    target = out / "ServeConsumerBench.class"
    if not target.is_file() or target.stat().st_mtime < source.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["javac", "-nowarn", "-d", str(out), "-cp", kafka_broker.classpath(), str(source)],
            check=True,
        )
    return out


def java(*argv: str) -> str:
    cp = f"{bench_classes()}:{kafka_broker.classpath()}"
    done = subprocess.run(
        ["java", "-Xmx1g", "-cp", cp, "ServeConsumerBench", *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def consume(bootstrap: str) -> dict:
    lines = [line for line in java(bootstrap, TOPIC).splitlines() if line.startswith("{")]
    return json.loads(lines[-1])


def make_broker() -> kafka_broker.KafkaBroker:
    """The bench's broker, on the same ports every time (its KRaft quorum names them)."""
    broker = kafka_broker.KafkaBroker(Path(args.dir) / "broker", heap="1g")
    ports = Path(args.dir) / "ports.json"
    if ports.is_file():
        broker.port, broker.controller_port = json.loads(ports.read_text())
    else:
        ports.write_text(json.dumps([broker.port, broker.controller_port]))
    return broker


def prepare() -> kafka_broker.KafkaBroker:
    ready = Path(args.dir) / f"READY-{args.gb}"
    if ready.is_file():
        return make_broker()
    shutil.rmtree(Path(args.dir), ignore_errors=True)
    Path(args.dir).mkdir(parents=True)
    broker = make_broker()
    broker.start()
    try:
        kafka_broker.kafka_tool(
            broker.bootstrap,
            "produce",
            spec={
                "topics": [{"name": TOPIC, "partitions": 1, "configs": {"retention.ms": "-1"}}],
                "producers": [],
                "quiet": True,
            },
        )
        count = int(args.gb * 1e9 / 1024)
        java("produce", broker.bootstrap, TOPIC, str(count), "1024")
    finally:
        broker.stop()
    ready.write_text("ok")
    return broker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_broker(broker: kafka_broker.KafkaBroker) -> dict:
    broker.start()
    try:
        assert broker.proc is not None
        before = cpu_seconds(broker.proc.pid)
        result = consume(broker.bootstrap)
        result["server_cpu"] = cpu_seconds(broker.proc.pid) - before
    finally:
        broker.stop()
    return result


def run_endpoint(paths: list[str], extra: list[str], env: dict | None = None) -> dict:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafkalog",
            "serve",
            *paths,
            "--listen",
            f"127.0.0.1:{port}",
            "--topics",
            TOPIC,
            "--quiet",
            *extra,
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on"), line
        before = cpu_seconds(proc.pid)
        result = consume(f"127.0.0.1:{port}")
        result["server_cpu"] = cpu_seconds(proc.pid) - before
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return result


def main() -> None:
    broker = prepare()
    log_dir = broker.log_dir
    size = sum(p.stat().st_size for p in (log_dir / f"{TOPIC}-0").glob("*.log"))
    gb = size / 1e9
    sides = ["broker", "kafkalog serve"]
    with contextlib.ExitStack() as stack:
        s3 = stack.enter_context(moto_bucket(log_dir)) if args.s3 else None
        if s3 is not None:
            sides += ["kafkalog serve, moto S3", "moto S3 itself: one whole GET"]
        runs: dict[str, list[dict]] = {side: [] for side in sides}
        records = 0
        for i in range(args.rounds):
            # Each round in another order, so that the machine's drift falls on every side.
            order = sides[i % len(sides) :] + sides[: i % len(sides)]
            for side in order:
                if side == "broker":
                    r = run_broker(broker)
                elif side == "kafkalog serve":
                    r = run_endpoint([str(log_dir)], [])
                elif side == "kafkalog serve, moto S3":
                    assert s3 is not None
                    r = run_endpoint(["s3://bench/logs"], s3.options)
                else:
                    assert s3 is not None
                    r = s3.whole_get()
                r["side"], r["round"] = side, i
                r["cpu_per_gb"] = r["server_cpu"] / gb
                records = r.get("records", records)
                print(json.dumps(r), flush=True)
                runs[side].append(r)
    for r in runs.get("moto S3 itself: one whole GET", []):
        r["records_per_s"] = records / r["seconds"]
    print()
    print(f"log: {size / 1e9:.2f} GB, {records} records, lz4, 1 KB values")
    print("| server | consumer records/s (median) | server CPU s per GB (median) |")
    print("|---|---:|---:|")
    med = {}
    for side, rs in runs.items():
        rate = statistics.median(r["records_per_s"] for r in rs)
        cpu = statistics.median(r["cpu_per_gb"] for r in rs)
        med[side] = (rate, cpu)
        print(f"| {side} | {rate:,.0f} | {cpu:.2f} |")
    b, k = med["broker"], med["kafkalog serve"]
    print(f"\nkafkalog/broker: records/s {k[0] / b[0]:.2f}x, CPU per GB {k[1] / b[1]:.2f}x")
    if "kafkalog serve, moto S3" in med:
        print(f"moto S3 / local: records/s {med['kafkalog serve, moto S3'][0] / k[0]:.2f}x")


class MotoBucket:
    """The log uploaded to a moto S3 server on 127.0.0.1: the endpoint's storage options, and
    the store's own ceiling (one client reading the segment whole, the bytes thrown away)."""

    def __init__(self, endpoint: str, client: Any, key: str) -> None:
        self.client, self.key = client, key
        self.options = [
            "-o",
            f"aws_endpoint={endpoint}",
            "-o",
            "aws_allow_http=true",
            "-o",
            "aws_access_key_id=test",
            "-o",
            "aws_secret_access_key=test",
            "-o",
            "aws_region=us-east-1",
        ]

    def whole_get(self) -> dict:
        start = time.perf_counter()
        body = self.client.get_object(Bucket="bench", Key=self.key)["Body"]
        while body.read(8 << 20):
            pass
        return {"seconds": time.perf_counter() - start, "server_cpu": 0.0}


@contextlib.contextmanager
def moto_bucket(log_dir: Path) -> Iterator[MotoBucket]:
    import boto3

    port = free_port()
    server = Path(sys.executable).parent / "moto_server"
    proc = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        time.sleep(2)
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket="bench")
        for f in sorted((log_dir / f"{TOPIC}-0").iterdir()):
            if f.is_file():
                client.upload_file(str(f), "bench", f"logs/{TOPIC}-0/{f.name}")
        (segment,) = sorted((log_dir / f"{TOPIC}-0").glob("*.log"))
        yield MotoBucket(endpoint, client, f"logs/{TOPIC}-0/{segment.name}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--s3", action="store_true")
    parser.add_argument("--dir", default=str(ROOT / "target" / "bench-serve"))
    args = parser.parse_args()
    main()
