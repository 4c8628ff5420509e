"""``kafkalog offsets``: consumer groups' committed offsets, log end offsets and lag, as
``kafka-consumer-groups --describe`` shows them."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

from kafkalog import internal
from kafkalog.cli.arguments import add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK, EXIT_USAGE, PROG
from kafkalog.cli.text import _err

OFFSETS_HELP = """\
Print the committed offsets of consumer groups as kafka-consumer-groups --describe shows
them: GROUP, TOPIC, PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG, CONSUMER-ID, HOST,
CLIENT-ID, one block per group, rows in topic, partition order. The offsets and the groups'
members come from the __consumer_offsets partitions under LOGDIR; the log end offsets from the
same directory's data partitions ("-" where the partition is not there).
"""


def register(sub: Any) -> None:
    o = sub.add_parser(
        "offsets",
        help="consumer groups' committed offsets and lag, as kafka-consumer-groups --describe",
        description=OFFSETS_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    o.add_argument("logdir", metavar="LOGDIR", help="log directory of a backup")
    o.add_argument("--group", help="only this group")
    o.add_argument("--json", action="store_true", help="one JSON object a line")
    add_storage_arguments(o)
    o.set_defaults(func=cmd_offsets)


def cmd_offsets(args: argparse.Namespace) -> int:
    store = storage(args)
    # Both read __consumer_offsets: what they warn about is shown once.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        offsets = internal.consumer_offsets(args.logdir, group=args.group, **store).to_pylist()
        listed = internal.consumer_groups(args.logdir, **store).to_pylist()
    seen: set[tuple[type[Warning], str]] = set()
    for w in caught:
        if (w.category, str(w.message)) not in seen:
            seen.add((w.category, str(w.message)))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    groups = {g["group"]: g for g in listed}
    names = sorted(
        {r["group"] for r in offsets} | ({args.group} & set(groups) if args.group else set(groups))
    )
    if args.group is not None and not names:
        # Not corrupt data (exit code 1): a group that is not there, as a bad argument.
        _err(f"{PROG}: Error: The consumer group '{args.group}' does not exist.")
        return EXIT_USAGE
    if not names:
        _err(f"{PROG}: {args.logdir}: no consumer group has committed offsets there")
        return EXIT_OK
    for name in names:
        group = groups.get(name)
        # Which member holds each partition (classic groups' assignments).
        owner: dict[tuple[str, int], dict[str, Any]] = {}
        for member in (group or {}).get("members") or []:
            for tp in member["assignment"] or []:
                topic, _, partition = tp.rpartition("-")
                owner[(topic, int(partition))] = member
        rows = {(r["topic"], r["partition"]): r for r in offsets if r["group"] == name}
        # Each row's values (None where there is none): JSON prints them as they are, the
        # table as text with "-" for none.
        typed: list[list[Any]] = []
        for topic, partition in sorted(set(rows) | set(owner)):
            r, m = rows.get((topic, partition)), owner.get((topic, partition))
            typed.append(
                [
                    name,
                    topic,
                    partition,
                    r["offset"] if r else None,
                    r["logEndOffset"] if r else None,
                    r["lag"] if r else None,
                    m["memberId"] if m else None,
                    m["clientHost"] if m else None,
                    m["clientId"] if m else None,
                ]
            )
        cells = [[_or_dash(v) for v in row] for row in typed]
        if args.json:
            keys = ["group", "topic", "partition", "currentOffset", "logEndOffset", "lag"]
            keys += ["consumerId", "host", "clientId"]
            for row in typed:
                print(json.dumps(dict(zip(keys, row, strict=True))))
            continue
        state = group["state"] if group else "Empty"
        if state == "Empty":
            print(f"\nConsumer group '{name}' has no active members.", file=sys.stderr)
        # kafka-consumer-groups --describe's layout: a blank line, then left-aligned columns
        # at least 15 wide (PARTITION 10), the last one unpadded.
        widths = [15, 15, 10, 15, 15, 15, 15, 15]
        for i in (0, 1, 6, 7):
            widths[i] = max([widths[i]] + [len(c[i]) for c in cells])
        header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
        header += ["CONSUMER-ID", "HOST", "CLIENT-ID"]
        print()
        for line in [header, *cells]:
            padded = [c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)]
            print(" ".join([*padded, line[-1]]))
        print()
    return EXIT_OK


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)
