"""moto's own ceiling beside kafkalog's remote read, on the same object and in the same run.

    .venv/bin/python benches/moto_ceiling.py MB CODEC      (e.g. 256 none, 256 lz4)

Writes one segment of about MB MiB (kafkalog.write, CODEC), uploads it to a moto server on
loopback, and prints, best of 3, twice: one whole-object GET through boto3 (what this server
can deliver to one client), kafkalog.read from local disk and from s3:// (one thread), and
the ratios. On a two-core machine moto, kafkalog's I/O thread and its decoder share the cores.
With each, the CPU time it cost per MiB (user+sys, of this process and of the moto server, from
getrusage and /proc): robust where wall time is not on a loaded machine. Last, the fixed cost of
reading a partition of 10 records from s3:// (its requests: listing, checkpoints, the GET).
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3

import kafkalog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_remote import _free_port, table  # noqa: E402


def _cpu(pid: int | None) -> float:
    """CPU seconds (user+sys) of this process, or of process `pid`."""
    if pid is None:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _costs(fn: Callable[[], object], pid: int) -> tuple[float, float, float]:
    """Best of 3 by wall time: (wall s, this process's CPU s, the server's CPU s)."""
    runs = []
    for _ in range(3):
        w, me, srv = time.perf_counter(), _cpu(None), _cpu(pid)
        fn()
        runs.append((time.perf_counter() - w, _cpu(None) - me, _cpu(pid) - srv))
    return min(runs)


@contextlib.contextmanager
def moto_bucket() -> Iterator[tuple[int, Any, dict[str, str]]]:
    """A moto server on loopback with the bucket ``bench``: (its pid, a boto3 client, kafkalog's
    storage options for it); stopped on exit."""
    port = _free_port()
    moto = Path(sys.executable).parent / "moto_server"
    srv = subprocess.Popen(
        [str(moto), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(3)
        ep = f"http://127.0.0.1:{port}"
        keys = {"aws_access_key_id": "x", "aws_secret_access_key": "x"}
        c = boto3.client("s3", endpoint_url=ep, region_name="us-east-1", **keys)
        c.create_bucket(Bucket="bench")
        opts = {"aws_endpoint": ep, "aws_allow_http": "true", "aws_region": "us-east-1", **keys}
        yield srv.pid, c, opts
    finally:
        srv.terminate()
        srv.wait(timeout=10)


def main(mb: int, codec: str) -> None:
    with moto_bucket() as (pid, c, opts):
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / "c-0"
            rows = mb * (1 << 20) // 135
            kafkalog.write(local, table(rows), compression=codec, segment_bytes=4 << 30)
            for f in sorted(local.iterdir()):
                c.upload_file(str(f), "bench", f"logs/c-0/{f.name}")
            log = next(local.glob("*.log"))
            size = log.stat().st_size / 2**20

            def get() -> None:
                body = c.get_object(Bucket="bench", Key=f"logs/c-0/{log.name}")["Body"]
                while body.read(1 << 20):
                    pass

            def remote() -> None:
                kafkalog.read("s3://bench/logs/c-0", threads=1, storage_options=opts).read_all()

            tiny = Path(tmp) / "t-0"
            kafkalog.write(tiny, table(10), compression=codec)
            for f in sorted(tiny.iterdir()):
                c.upload_file(str(f), "bench", f"logs/t-0/{f.name}")

            def remote_tiny() -> None:
                kafkalog.read("s3://bench/logs/t-0", threads=1, storage_options=opts).read_all()

            def local_read() -> None:
                kafkalog.read(local, threads=1).read_all()

            for _ in range(2):
                g, loc, rem = (_costs(f, pid) for f in (get, local_read, remote))
                print(
                    f"{codec} {size:.0f} MiB: boto3 whole GET {size / g[0]:.0f} MiB/s; kafkalog "
                    f"local {size / loc[0]:.0f}, s3 {size / rem[0]:.0f} MiB/s, s3/local "
                    f"{loc[0] / rem[0]:.2f}, s3/GET-ceiling {g[0] / rem[0]:.2f}"
                )
                print(
                    "  CPU ms/MiB (this process + moto): "
                    + ", ".join(
                        f"{name} {1000 * me / size:.2f} + {1000 * server / size:.2f}"
                        for name, (_, me, server) in (("GET", g), ("local", loc), ("s3", rem))
                    )
                )
                t = _costs(remote_tiny, pid)
                print(
                    f"  10-record partition from s3: {1000 * t[0]:.1f} ms, CPU "
                    f"{1000 * t[1]:.1f} ms + moto {1000 * t[2]:.1f} ms"
                )


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
