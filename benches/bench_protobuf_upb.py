"""Python's protobuf runtime (upb, C) parsing the Protobuf benchmark's values, for the side by
side run of ``benches/protobuf_vs_java.sh``: each value's bytes after its Confluent framing
(magic byte, 4-byte schema id, the single 0 byte of its message indexes) parsed by
``FromString`` of the message's class, built from the ``FileDescriptorSet`` the Rust bench
wrote. Best of ROUNDS passes, wall and process CPU time, as one JSON line.

    .venv/bin/python benches/bench_protobuf_upb.py DIR MESSAGE [ROUNDS]
"""

from __future__ import annotations

import json
import struct
import sys
import time
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import api_implementation


def main() -> None:
    directory, message = Path(sys.argv[1]), sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    files = descriptor_pb2.FileDescriptorSet.FromString((directory / "order.desc").read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(message))
    data = (directory / "values.bin").read_bytes()
    payloads = []
    at = 0
    while at + 4 <= len(data):
        (n,) = struct.unpack_from(">I", data, at)
        framed = data[at + 4 : at + 4 + n]
        assert framed[0] == 0 and framed[5] == 0, "framing"
        payloads.append(framed[6:])
        at += 4 + n
    parse = cls.FromString
    best_wall = best_cpu = float("inf")
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        for p in payloads:
            parse(p)
        best_wall = min(best_wall, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    print(
        json.dumps(
            {
                "values": len(payloads),
                "best_wall_s": round(best_wall, 6),
                "best_cpu_s": round(best_cpu, 6),
                "implementation": api_implementation.Type(),
            }
        )
    )


if __name__ == "__main__":
    main()
