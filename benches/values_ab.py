"""The value decoders of two builds side by side: Avro, JSON Schema and Protobuf, each build's
bench binaries run in turns, every round starting with the other build, as BENCHMARKS.md
("The values room split by format") measured issue 47's before and after.

Build each tree's binaries the same way and copy them to a folder of their own:

    cargo bench --no-run --no-default-features --features mimalloc,oracles \\
        --bench values_avro --bench values_json --bench values_protobuf_json
    cp target/release/deps/values_avro-<hash> A/values_avro     # likewise the other two

then write the Avro payloads (``benches/bench_values.py --write-values DIR``) and run

    python benches/values_ab.py A B --avro-values DIR [--rounds 5]

It prints each run's best thread-CPU time of 21 passes (Avro, JSON, Protobuf) and criterion's
payloads/s (the Protobuf and JSON benches of ``values_protobuf_json``), then the medians and
their ratio (B over A).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

UNITS = {"elem/s": 1.0, "Kelem/s": 1e3, "Melem/s": 1e6, "Gelem/s": 1e9}


def best_cpu(binary: Path, env: dict[str, str], *args: str) -> float:
    out = subprocess.run(
        [str(binary), "--bench", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(lines) == 1, out
    return float(lines[0]["best_cpu_s"])


def criterion_rates(binary: Path) -> dict[str, float]:
    out = subprocess.run(
        [str(binary), "--bench", "--warm-up-time", "1", "--measurement-time", "4", "--noplot"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rates: dict[str, float] = {}
    name = None
    for line in out.splitlines():
        if line.startswith("values/"):
            name = line.split("  ")[0].strip()
        m = re.search(r"thrpt:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if m and name and name not in rates:
            rates[name] = float(m.group(1)) * UNITS[m.group(2)]
    return rates


def run(side: Path, avro_values: Path, scratch: Path) -> dict[str, float]:
    got = {
        "Avro best CPU ms": 1e3
        * best_cpu(
            side / "values_avro",
            {"KAFKALOG_AVRO_VALUES": str(avro_values), "KAFKALOG_AVRO_ONLY": "compiled"},
        ),
        "JSON best CPU ms": 1e3
        * best_cpu(side / "values_json", {"KAFKALOG_JSON_ORACLE": "0"}, "nothing-matches"),
        "Protobuf best CPU ms": 1e3
        * best_cpu(
            side / "values_protobuf_json",
            {"KAFKALOG_PROTOBUF_OUT": str(scratch), "KAFKALOG_PROTOBUF_ONLY": "kafkalog"},
        ),
    }
    for name, rate in criterion_rates(side / "values_protobuf_json").items():
        got[f"{name} payloads/s"] = rate
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path, help="the first build's folder of bench binaries")
    ap.add_argument("b", type=Path, help="the second build's")
    ap.add_argument("--avro-values", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    results: dict[tuple[str, str], list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):
            sides = [("A", args.a), ("B", args.b)]
            for label, folder in sides if round_ % 2 == 0 else sides[::-1]:
                load = Path("/proc/loadavg").read_text().split()[0]
                got = run(folder, args.avro_values, Path(scratch))
                print(f"round {round_ + 1} {label} (load {load}): {json.dumps(got)}", flush=True)
                for name, value in got.items():
                    results[(name, label)].append(value)
    for name in dict.fromkeys(n for n, _ in results):
        a, b = results[(name, "A")], results[(name, "B")]
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{name}: A {ma:.4g} B {mb:.4g} B/A {mb / ma:.3f}")


if __name__ == "__main__":
    main()
