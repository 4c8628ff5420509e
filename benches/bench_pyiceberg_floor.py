"""pyiceberg's own fixed cost, without kafkalog: what a bare pyiceberg append of one tiny file
costs a process (issue 36, beside ``bench_lakehouse.py``), against kafkalog's Iceberg and
Parquet conversions of a tiny log.

    .venv/bin/python benches/bench_pyiceberg_floor.py [--rounds 5]

Each figure is one whole process under ``/usr/bin/time`` (CPU: user + system), best of the
rounds, interleaved:

- ``python``: the interpreter alone;
- ``pyiceberg import``: ``import pyiceberg.catalog.sql`` (the SQL catalog's modules: pydantic
  models, SQLAlchemy);
- ``pyiceberg append``: that import, ``load_catalog`` of a SQL catalog on a new SQLite file,
  ``create_table`` of a 3-column table and ``table.append`` of one row, as pyiceberg's users
  write (its own writer: this imports pyiceberg's pyarrow FileIO and pandas);
- ``kafkalog iceberg`` / ``kafkalog parquet``: ``kafkalog convert`` of a 4-record log into a new
  Iceberg table of the same kind of catalog, and into a Parquet file.

Inside the ``pyiceberg append`` process the phases are timed too (``time.process_time``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

import kafkalog

PY = sys.executable
KAFKALOG = str(Path(PY).parent / "kafkalog")

APPEND = """
import sys, time
c0 = time.process_time()
import pyiceberg.catalog.sql
c1 = time.process_time()
from pyiceberg.catalog import load_catalog
out = sys.argv[1]
catalog = load_catalog("default", type="sql", uri=f"sqlite:///{out}/cat.db",
                       warehouse=f"file://{out}/wh")
catalog.create_namespace("bench")
c2 = time.process_time()
import pyarrow as pa
rows = pa.table({"key": pa.array([b"k"]), "offset": pa.array([1], pa.int64()),
                 "topic": pa.array(["t"])})
table = catalog.create_table("bench.t", schema=rows.schema)
c3 = time.process_time()
table.append(rows)
c4 = time.process_time()
print(f"phases: import {c1 - c0:.3f} catalog {c2 - c1:.3f} create {c3 - c2:.3f} "
      f"append {c4 - c3:.3f}")
"""


def timed(argv: list[str]) -> tuple[float, float, str]:
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S", *argv], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{p.stderr[:3000]}")
    wall, user, system = (float(x) for x in p.stderr.strip().splitlines()[-1].split())
    return wall, user + system, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-ice-floor-"))
    log = base / "log"
    kafkalog.write(log / "tiny-0", pa.table({"key": [b"a", b"b", b"c", b"d"], "value": [b"v"] * 4}))
    out = base / "out"

    def fresh() -> str:
        shutil.rmtree(out, ignore_errors=True)
        (out / "wh").mkdir(parents=True)
        return str(out)

    commands = {
        "python": lambda: [PY, "-c", "pass"],
        "pyiceberg import": lambda: [PY, "-c", "import pyiceberg.catalog.sql"],
        "pyiceberg append": lambda: [PY, "-c", APPEND, fresh()],
        "kafkalog iceberg": lambda: [
            KAFKALOG, "convert", str(log), "iceberg://bench.t", "--no-progress",
            "--catalog-uri", f"sqlite:///{fresh()}/cat.db", "--warehouse", f"file://{out}/wh",
        ],  # fmt: skip
        "kafkalog parquet": lambda: [
            KAFKALOG, "convert", str(log), f"{fresh()}/x.parquet", "--no-progress",
        ],  # fmt: skip
    }
    best: dict[str, tuple[float, float]] = {}
    phases: list[str] = []
    for _ in range(args.rounds):
        for name, argv in commands.items():
            wall, cpu, stdout = timed(argv())
            w, c = best.get(name, (wall, cpu))
            best[name] = (min(w, wall), min(c, cpu))
            m = re.search(r"phases: .*", stdout)
            if m:
                phases.append(m.group(0))
    print(f"best of {args.rounds}, whole processes")
    print(f"{'':18}{'wall s':>8}{'cpu s':>8}")
    for name, (wall, cpu) in best.items():
        print(f"{name:18}{wall:8.2f}{cpu:8.2f}")
    print("pyiceberg append, CPU seconds inside the process:")
    for line in phases:
        print("  " + line)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
