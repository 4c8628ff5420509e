"""Read a Kafka log directory with kafkalog and print what is in it.

    python examples/read_logs.py examples/logs

For each topic-partition: records, offset and time ranges, message formats and compressions,
then a few records. Any damage kafkalog read past (a torn tail, say) is printed as a warning.
"""

from __future__ import annotations

import sys
import warnings

import pyarrow.compute as pc

import kafkalog


def main(path: str) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", kafkalog.KafkaLogWarning)
        table = kafkalog.read(path, batch_metadata=True).read_all()
    print(f"{path}: {table.num_rows} records, {table.nbytes / 1e6:.2f} MB in Arrow\n")
    summary = table.group_by(["topic", "partition"]).aggregate(
        [
            ("offset", "count"),
            ("offset", "min"),
            ("offset", "max"),
            ("timestamp", "min"),
            ("timestamp", "max"),
            ("magic", "distinct"),
            ("compression", "distinct"),
        ]
    )
    header = f"{'topic-partition':32} {'records':>8} {'offsets':>15}  {'magic':8} compression"
    print(header)
    print("-" * len(header))
    for row in summary.sort_by([("topic", "ascending"), ("partition", "ascending")]).to_pylist():
        name = f"{row['topic']}-{row['partition']}"
        offsets = f"{row['offset_min']}..{row['offset_max']}"
        magics = ",".join(str(m) for m in sorted(row["magic_distinct"]))
        codecs = ",".join(sorted(row["compression_distinct"]))
        print(f"{name:32} {row['offset_count']:>8} {offsets:>15}  {magics:8} {codecs}")
    with_time = table.filter(pc.is_valid(table["timestamp"]))
    if with_time.num_rows:
        first, last = pc.min_max(with_time["timestamp"]).values()
        print(f"\ntimestamps from {first} to {last}")
    print("\nfirst records:")
    for r in table.slice(0, 5).to_pylist():
        headers = [(h["key"], h["value"]) for h in r["headers"] or []]
        print(
            f"  {r['topic']}-{r['partition']}@{r['offset']} key={r['key']!r} "
            f"value={r['value']!r} headers={headers}"
        )
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "examples/logs"))
