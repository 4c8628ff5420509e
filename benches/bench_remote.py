"""Reading from an object store against reading the same bytes from local disk.

    .venv/bin/python benches/bench_remote.py [--mb 512] [--repeat 3]

Starts a real S3 server on loopback (moto's server), writes a partition of one large segment
(--mb MB; v2, lz4 and uncompressed), uploads it, and reads it with kafkalog.read from local
disk and from s3:// (best of --repeat, one thread and all cores). Also prints how many .log
bytes planning a timestamp-bounded and a read_committed read fetched from the store.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs

import kafkalog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from counting_fs import Counting  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def table(n: int) -> pa.Table:
    filler = b"lorem ipsum dolor sit amet " * 8
    return pa.table(
        {
            "key": [b"key-%06d" % (i % 1_000_000) for i in range(n)],
            "value": [(b'{"id":%d,"note":"' % i + filler)[:100] for i in range(n)],
            "timestamp": pa.array([1_700_000_000_000 + i for i in range(n)], pa.int64()),
        }
    )


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import boto3

    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="x",
            aws_secret_access_key="x",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket="bench")
        options = {
            "aws_endpoint": endpoint,
            "aws_allow_http": "true",
            "aws_access_key_id": "x",
            "aws_secret_access_key": "x",
            "aws_region": "us-east-1",
        }
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
        print(f"kafkalog {kafkalog.__version__}, python {platform.python_version()}")
        n = args.mb * (1 << 20) // 135
        with tempfile.TemporaryDirectory() as tmp:
            for compression in ("none", "lz4"):
                local = Path(tmp) / f"bench{compression}-0"
                t = table(n)
                kafkalog.write(local, t, compression=compression, segment_bytes=4 << 30)
                for f in sorted(local.iterdir()):
                    client.upload_file(str(f), "bench", f"logs/{local.name}/{f.name}")
                uri = f"s3://bench/logs/{local.name}"
                size = sum(f.stat().st_size for f in local.glob("*.log"))
                for threads in (1, None):
                    loc = best_of(
                        lambda local=local, threads=threads: kafkalog.read(
                            local, threads=threads
                        ).read_all(),
                        args.repeat,
                    )
                    rem = best_of(
                        lambda uri=uri, threads=threads: kafkalog.read(
                            uri, threads=threads, storage_options=options
                        ).read_all(),
                        args.repeat,
                    )
                    print(
                        f"{compression:5} threads={threads or 'all':3} {size / 2**20:7.0f} MiB: "
                        f"local {size / loc / 2**20:7.0f} MiB/s, s3 {size / rem / 2**20:7.0f} "
                        f"MiB/s, s3/local {loc / rem:.2f}"
                    )
                # Planning through a byte-counting filesystem (the S3 store behind it).
                s3fs = pafs.S3FileSystem(
                    endpoint_override=endpoint,
                    scheme="http",
                    access_key="x",
                    secret_key="x",
                    region="us-east-1",
                )
                for name, bounds in (
                    ("start_timestamp", {"start_timestamp": 1_700_000_000_000 + n // 2}),
                    ("read_committed", {"isolation_level": "read_committed"}),
                ):
                    handler = Counting(s3fs)
                    fs = pafs.PyFileSystem(handler)
                    kafkalog.plan(
                        uri,
                        target_bytes=64 << 20,
                        filesystem=fs,
                        **bounds,
                    )
                    print(
                        f"{compression:5} planning {name}: {handler.log_bytes} of {size} "
                        f".log bytes ({handler.log_bytes * 100 / size:.3f}%)"
                    )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
