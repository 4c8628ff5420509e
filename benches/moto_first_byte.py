"""moto's time to the first byte of a GET, by object size, whole and as a 1 MiB range.

.venv/bin/python benches/moto_first_byte.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from moto_ceiling import moto_bucket  # noqa: E402


def main() -> None:
    with moto_bucket() as (_, c, _):
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


if __name__ == "__main__":
    main()
