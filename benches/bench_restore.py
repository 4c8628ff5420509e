"""Restore speed against `cp -r` of the same files (issue 46: at least 0.8x `cp -r`).

    .venv/bin/python benches/bench_restore.py [--gib 1.0] [--dir /tmp/kafkalog-bench-restore]

Writes a backup of about `--gib` GiB with kafkalog.write (4 partitions, 1 KiB incompressible
values, 128 KiB zstd-less batches, 256 MiB segments), a target log directory shaped as a
broker leaves one for the same topic (meta.properties, empty partition directories with
their partition.metadata), then times, alternately, `cp -r` of the backup's partition
directories and `kafkalog.restore` into the target, with and without fsync (`cp -r` then
`sync` for the fsync row). The page cache is warm for both (each runs after the other has
read the same files). Prints one line per run and the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pyarrow as pa

import kafkalog

PARTITIONS = 4
VALUE = 1024
BATCH_ROWS = 128


def make_backup(root: Path, gib: float) -> Path:
    backup = root / "backup"
    if (backup / "DONE").is_file():
        return backup
    shutil.rmtree(backup, ignore_errors=True)
    backup.mkdir(parents=True)
    per_partition = int(gib * (1 << 30) / PARTITIONS / (VALUE + 80))
    chunk = 20_000
    for p in range(PARTITIONS):
        tables = []
        for start in range(0, per_partition, chunk):
            n = min(chunk, per_partition - start)
            tables.append(
                pa.table(
                    {
                        "key": [f"k{start + i}".encode() for i in range(n)],
                        "value": [os.urandom(VALUE) for _ in range(n)],
                        "timestamp": pa.array(
                            [1_700_000_000_000 + start + i for i in range(n)], pa.int64()
                        ),
                    }
                )
            )
        kafkalog.write(
            backup,
            pa.concat_tables(tables),
            topic="bench",
            partition=p,
            batch_records=BATCH_ROWS,
            segment_bytes=256 << 20,
            fsync=False,
        )
    (backup / "DONE").write_text("")
    return backup


def make_target(root: Path) -> Path:
    target = root / "target"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    (target / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=bench\n")
    for p in range(PARTITIONS):
        d = target / f"bench-{p}"
        d.mkdir()
        (d / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    return target


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--dir", default="/tmp/kafkalog-bench-restore")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    root = Path(args.dir)
    backup = make_backup(root, args.gib)
    size = sum(f.stat().st_size for f in backup.rglob("*") if f.is_file())
    print(f"backup: {size / (1 << 30):.2f} GiB in {backup}")
    sources = [backup / f"bench-{p}" for p in range(PARTITIONS)]
    results: dict[str, list[float]] = {k: [] for k in ("cp", "restore", "cp+sync", "restore fsync")}

    def cp(sync: bool) -> None:
        dest = root / "copy"
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        subprocess.run(["cp", "-r", *map(str, sources), str(dest)], check=True)
        if sync:
            subprocess.run(["sync"], check=True)

    def restore(fsync: bool) -> None:
        kafkalog.restore(sources, make_target(root), fsync=fsync)

    subprocess.run(["sync"], check=True)
    for run in range(args.runs):
        for name, fn in (
            ("cp", lambda: cp(False)),
            ("restore", lambda: restore(False)),
            ("cp+sync", lambda: cp(True)),
            ("restore fsync", lambda: restore(True)),
        ):
            subprocess.run(["sync"], check=True)
            s = timed(fn)
            results[name].append(s)
            print(f"run {run}: {name:14s} {s:6.2f} s  {size / s / (1 << 20):7.0f} MiB/s")
    med = {k: statistics.median(v) for k, v in results.items()}
    print(
        f"median: cp -r {med['cp']:.2f} s, restore {med['restore']:.2f} s "
        f"({med['cp'] / med['restore']:.2f}x cp's speed); cp -r + sync {med['cp+sync']:.2f} s, "
        f"restore with fsync {med['restore fsync']:.2f} s "
        f"({med['cp+sync'] / med['restore fsync']:.2f}x)"
    )


if __name__ == "__main__":
    main()
