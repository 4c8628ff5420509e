"""moto's own ceiling beside kafkalog's remote read, on the same object and in the same run.

    .venv/bin/python benches/moto_ceiling.py MB CODEC      (e.g. 256 none, 256 lz4)

Writes one segment of about MB MiB (kafkalog.write, CODEC), uploads it to a moto server on
loopback, and prints, best of 3, twice: one whole-object GET through boto3 (what this server
can deliver to one client), kafkalog.read from local disk and from s3:// (one thread), and
the ratios. On a two-core machine moto, kafkalog's I/O thread and its decoder share the cores.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3

import kafkalog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_remote import _free_port, best_of, table  # noqa: E402


def main(mb: int, codec: str) -> None:
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

            for _ in range(2):
                g = best_of(get, 3)
                loc = best_of(lambda: kafkalog.read(local, threads=1).read_all(), 3)
                rem = best_of(remote, 3)
                print(
                    f"{codec} {size:.0f} MiB: boto3 whole GET {size / g:.0f} MiB/s; kafkalog "
                    f"local {size / loc:.0f}, s3 {size / rem:.0f} MiB/s, s3/local "
                    f"{loc / rem:.2f}, s3/GET-ceiling {g / rem:.2f}"
                )
    finally:
        srv.terminate()
        srv.wait(timeout=10)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
