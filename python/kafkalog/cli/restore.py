"""``kafkalog restore``: a backup laid into a stopped broker's log directory with every offset
intact (:func:`kafkalog.restore`, docs/restore.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kafkalog import restoring
from kafkalog.cli.arguments import STORAGE_HELP, _bound_value, add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK
from kafkalog.cli.text import _human_bytes, _Output, _plural


def cmd_restore(args: argparse.Namespace) -> int:
    report = restoring.restore(
        args.src,
        args.to,
        topics=args.topics,
        until=args.until,
        groups=args.groups,
        plan=args.plan,
        **storage(args),
    )
    out = _Output()
    if args.json:
        out.line(json.dumps(report, indent=2, ensure_ascii=False, default=str))
        out.flush()
        return EXIT_OK
    verb = "would restore" if report["plan"] else "restored"
    for p in report["partitions"]:
        extra = []
        if p["cut"]:
            extra.append(f"cut at the {p['cut'].replace('_', ' ')}")
        if p["epochs_lowered"]:
            extra.append(
                f"{_plural(p['epochs_lowered'], 'batch', 'batches')} lowered to leader epoch "
                f"{p['leader_epoch']}"
            )
        for a in p["aborted"]:
            extra.append(
                f"open transaction of producer {a['producer_id']} (from offset "
                f"{a['first_offset']}) aborted at offset {a['marker_offset']}"
            )
        out.line(
            f"{verb} {p['topic']}-{p['partition']}: offsets {p['log_start_offset']} to "
            f"{p['log_end_offset'] - 1}, {_plural(p['segments'], 'segment')}, "
            f"{_plural(p['batches'], 'batch', 'batches')}, {_human_bytes(p['bytes'])}"
            + ("; " + "; ".join(extra) if extra else "")
        )
    for topic, partition in report["missing"]:
        out.line(f"missing in the target: {topic}-{partition} (create the topic first)")
    for g in report["groups"]:
        where = f"__consumer_offsets-{g['offsets_partition']}" + (
            f" at offset {g['written_at']}" if g["written_at"] is not None else ""
        )
        note = f" ({g['note']})" if g["note"] else ""
        out.line(
            f"group {g['group']}: {_plural(len(g['commits']), 'committed offset')} -> {where}{note}"
        )
    for note in report["notes"]:
        out.line(f"note: {note}")
    out.flush()
    return EXIT_OK


def register(sub: Any) -> None:
    r = sub.add_parser(
        "restore",
        help="restore a backup into a stopped broker's log directory, every offset kept",
        description="Restore the backup SRC (anything kafkalog reads: log directories, "
        "partition directories, object-store prefixes, tiered-storage buckets) into LOG_DIR, "
        "the log directory of a STOPPED broker that already has the topics (same partition "
        "counts). Offsets, timestamps, headers, transactions and (with --groups) committed "
        "group offsets are kept; each partition is swapped in atomically. See "
        "docs/restore.md.",
        epilog=STORAGE_HELP + "\n" + EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("src", metavar="SRC", nargs="+", help="the backup")
    r.add_argument("--to", required=True, metavar="LOG_DIR", help="a stopped broker's log dir")
    r.add_argument("--topics", metavar="REGEX", default=None, help="only these topics")
    r.add_argument(
        "--until",
        type=_bound_value,
        default=None,
        metavar="TIME",
        help="cut each partition at its last batch at or before TIME (ms or ISO 8601); a "
        "transaction open there is aborted",
    )
    r.add_argument(
        "--groups",
        action="store_true",
        help="also restore the committed offsets of consumer groups",
    )
    r.add_argument("--plan", action="store_true", help="print what would be written; write nothing")
    r.add_argument("--json", action="store_true", help="print the report as JSON")
    add_storage_arguments(r)
    r.set_defaults(func=cmd_restore)
