"""moto's time to the first byte of a GET, by object size, whole and as a 1 MiB range.

.venv/bin/python benches/moto_first_byte.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_remote import _free_port  # noqa: E402


def main() -> None:
    port = _free_port()
    moto = Path(sys.executable).parent / "moto_server"
    srv = subprocess.Popen(
        [str(moto), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(3)
        keys = {"aws_access_key_id": "x", "aws_secret_access_key": "x"}
        ep = f"http://127.0.0.1:{port}"
        c = boto3.client("s3", endpoint_url=ep, region_name="us-east-1", **keys)
        c.create_bucket(Bucket="bench")
        for mb in (1, 16, 64, 229):
            c.put_object(Bucket="bench", Key="k", Body=os.urandom(mb << 20))
            for rng in (None, "bytes=0-1048575"):
                runs = []
                for _ in range(3):
                    t = time.perf_counter()
                    extra = {} if rng is None else {"Range": rng}
                    body = c.get_object(Bucket="bench", Key="k", **extra)["Body"]
                    body.read(1)
                    first = time.perf_counter() - t
                    while body.read(1 << 20):
                        pass
                    runs.append((first, time.perf_counter() - t))
                first, whole = min(runs)
                what = "whole" if rng is None else "1 MiB range"
                print(
                    f"{mb:4d} MiB object, {what}: first byte {1000 * first:.1f} ms, "
                    f"all {1000 * whole:.1f} ms"
                )
    finally:
        srv.terminate()
        srv.wait(timeout=10)


if __name__ == "__main__":
    main()
