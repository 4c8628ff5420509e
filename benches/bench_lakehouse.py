"""Backfill into lakehouse tables (issue 36) against ``kafkalog convert`` to Parquet, side by
side on the same log, interleaved, each a whole ``kafkalog`` process under ``/usr/bin/time -v``
(wall time, CPU time, peak RSS).

    .venv/bin/python benches/bench_lakehouse.py [--records N] [--rounds R] [--scale 0.25]

Two logs, generated here deterministically and written with ``kafkalog.write`` (4 partitions,
snappy batches of 500 records, timestamps over 4 days):

- bytes: a 16-byte key and a 200-byte value per record;
- avro: a 12-field Avro record per value (nested record, array, map, enum, nullable union,
  decimal, timestamps), framed as Confluent's serializers frame it, with the registry's
  ``_schemas-0`` beside it; converted with ``--value-format avro --schemas LOG``.

Each round runs, in turn: ``kafkalog convert LOG out.parquet``, ``kafkalog convert LOG
delta://DIR`` and ``kafkalog convert LOG iceberg://bench.t --catalog-uri sqlite:///... 
--warehouse file://...``, each into a fresh output. ``--scale`` also runs every command on a
log of that fraction of the records, to show peak memory does not grow with the input.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import fastavro
import pyarrow as pa

import kafkalog

KAFKALOG = str(Path(sys.executable).parent / "kafkalog")

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
        },
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]},
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {
            "name": "ship_to",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int"}],
            },
        },
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "score", "type": "double"},
        {"name": "flag", "type": "boolean"},
    ],
}
START = datetime.datetime(2024, 6, 1, tzinfo=datetime.UTC)


def avro_values(n: int) -> list[bytes]:
    """``n`` framed values (schema id 1), 4,096 distinct ones repeated."""
    rng = random.Random(36)
    schema = fastavro.parse_schema(ORDER)
    distinct = []
    for i in range(min(n, 4096)):
        buf = io.BytesIO()
        buf.write(b"\x00" + (1).to_bytes(4, "big"))
        fastavro.schemaless_writer(
            buf,
            schema,
            {
                "id": i,
                "customer": f"customer-{rng.randrange(10**6)}",
                "amount": decimal.Decimal(rng.randrange(10**8)) / 100,
                "note": rng.choice([None, "fragile", "gift"]),
                "status": rng.choice(["NEW", "PAID", "SHIPPED"]),
                "tags": [f"t{j}" for j in range(rng.randrange(4))],
                "attrs": {f"k{j}": rng.randrange(100) for j in range(rng.randrange(3))},
                "ship_to": {"city": rng.choice(["Lyon", "Oslo", "Lima"]), "zip": rng.randrange(99999)},
                "at": START + datetime.timedelta(milliseconds=rng.randrange(10**9)),
                "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randrange(300)),
                "score": rng.random(),
                "flag": rng.random() < 0.5,
            },
        )
        distinct.append(buf.getvalue())
    return [distinct[i % len(distinct)] for i in range(n)]


def write_log(root: Path, n: int, kind: str) -> Path:
    if root.exists():
        return root
    partitions = 4
    per = n // partitions
    values = avro_values(per) if kind == "avro" else None
    span_ms = 4 * 86_400_000
    for p in range(partitions):
        if kind == "avro":
            vals = values
        else:
            vals = [(b"%08d" % i) * 25 for i in range(per)]
        ts = pa.array(
            [int(START.timestamp() * 1000) + i * span_ms // per for i in range(per)],
            pa.timestamp("ms", "UTC"),
        )
        table = pa.table(
            {
                "key": pa.array([b"key-%012d" % i for i in range(per)], pa.binary()),
                "value": pa.array(vals, pa.binary()),
                "timestamp": ts,
            }
        )
        kafkalog.write(root / f"{kind}-{p}", table, batch_records=500, compression="snappy")
    if kind == "avro":
        key = json.dumps(
            {"keytype": "SCHEMA", "subject": "avro-value", "version": 1, "magic": 1},
            separators=(",", ":"),
        ).encode()
        value = json.dumps(
            {"subject": "avro-value", "version": 1, "id": 1, "schema": json.dumps(ORDER),
             "deleted": False},
            separators=(",", ":"),
        ).encode()  # fmt: skip
        kafkalog.write(root / "_schemas-0", pa.table({"key": [key], "value": [value]}))
    return root


def timed(argv: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one process."""
    p = subprocess.run(
        ["/usr/bin/time", "-v", *argv], capture_output=True, text=True, env={**os.environ}
    )
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{p.stderr[:3000]}")

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: (.+)", p.stderr)
        assert m, name
        return m.group(1).strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")]
    seconds = sum(v * 60 ** (len(parts) - 1 - i) for i, v in enumerate(parts))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss = int(field("Maximum resident set size (kbytes)")) / 1024
    return {"wall": seconds, "cpu": cpu, "rss": rss}


def commands(log: Path, out: Path, kind: str) -> dict[str, list[str]]:
    typed = ["--value-format", "avro", "--schemas", str(log)] if kind == "avro" else []
    common = ["--no-progress", *typed]
    return {
        "parquet": [KAFKALOG, "convert", str(log), str(out / "out.parquet"), *common],
        "delta": [KAFKALOG, "convert", str(log), f"delta://{out / 'delta'}", *common],
        "iceberg": [
            KAFKALOG, "convert", str(log), "iceberg://bench.t", "--catalog-uri",
            f"sqlite:///{out / 'cat.db'}", "--warehouse", f"file://{out / 'wh'}", *common,
        ],  # fmt: skip
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=None)
    ap.add_argument("--kinds", default="bytes,avro")
    ap.add_argument("--dir", default=None, help="keep the logs here between runs")
    args = ap.parse_args()
    base = Path(args.dir or tempfile.mkdtemp(prefix="bench-lake-"))
    base.mkdir(parents=True, exist_ok=True)
    sizes = [args.records] + ([int(args.records * args.scale)] if args.scale else [])
    for kind in args.kinds.split(","):
        for n in sizes:
            log = write_log(base / f"log-{kind}-{n}", n, kind)
            size = sum(f.stat().st_size for f in log.rglob("*.log"))
            best: dict[str, dict[str, float]] = {}
            for _ in range(args.rounds):
                for name, argv in commands(log, base / "out", kind).items():
                    shutil.rmtree(base / "out", ignore_errors=True)
                    (base / "out" / "wh").mkdir(parents=True)
                    argv = commands(log, base / "out", kind)[name]
                    got = timed(argv)
                    b = best.setdefault(name, dict(got))
                    for k in got:
                        b[k] = min(b[k], got[k])
            print(f"\n{kind}: {n:,} records, {size / 2**20:.0f} MiB of log, best of {args.rounds}")
            print(f"{'':10}{'wall s':>9}{'cpu s':>9}{'records/s':>12}{'vs parquet':>12}{'peak MiB':>10}")
            for name, b in best.items():
                ratio = best["parquet"]["wall"] / b["wall"]
                print(
                    f"{name:10}{b['wall']:9.2f}{b['cpu']:9.2f}{n / b['wall']:12,.0f}"
                    f"{ratio:11.2f}x{b['rss']:10.0f}"
                )
    shutil.rmtree(base / "out", ignore_errors=True)
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
