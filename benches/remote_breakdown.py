"""Where a remote read of one large segment spends its time, beside the server's own ceiling.

    .venv/bin/python benches/remote_breakdown.py MB CODEC        (e.g. 256 none)

One segment of about MB MiB (kafkalog.write, CODEC) uploaded to a moto server on loopback,
then, best of 3 each: one boto3 whole-object GET, kafkalog.read of the local file, and from
s3:// kafkalog.read, read_batches without CRC checks (the transport and batch headers only),
read of the offset column only, and read on two threads. Printed: wall time per MiB and CPU
per MiB of this process and of the server.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import kafkalog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_remote import table  # noqa: E402
from moto_ceiling import _costs, moto_bucket  # noqa: E402


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
            uri = f"s3://bench/logs/c-0/{log.name}"

            def get() -> None:
                body = c.get_object(Bucket="bench", Key=f"logs/c-0/{log.name}")["Body"]
                while body.read(1 << 20):
                    pass

            def s3(**kw: object) -> None:
                kafkalog.read(uri, storage_options=opts, **kw).read_all()  # type: ignore[arg-type]

            cases = {
                "boto3 whole GET": get,
                "local read": lambda: kafkalog.read(log, threads=1).read_all(),
                "s3 read": lambda: s3(threads=1),
                "s3 read_batches, no CRC": lambda: kafkalog.read_batches(
                    uri, check_crc=False, storage_options=opts
                ).read_all(),
                "s3 read, offset only": lambda: s3(threads=1, columns=["offset"]),
                "s3 read, 2 threads": lambda: s3(threads=2),
            }
            print(f"{codec} {size:.0f} MiB; load average {os.getloadavg()}")
            for name, fn in cases.items():
                wall, me, server = _costs(fn, pid)
                print(
                    f"{name:24s} {size / wall:6.0f} MiB/s  wall {1000 * wall / size:.2f} ms/MiB  "
                    f"CPU {1000 * me / size:.2f} + server {1000 * server / size:.2f} ms/MiB"
                )


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
