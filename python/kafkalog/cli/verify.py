"""``kafkalog verify``: :func:`kafkalog.verify`'s checks, one line per problem."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kafkalog import checking
from kafkalog.cli.arguments import add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_DATA, EXIT_OK, PROG
from kafkalog.cli.text import _err, _finding_text, _Output, _plural


def cmd_verify(args: argparse.Namespace) -> int:
    result = checking.verify(args.path, **storage(args))
    if not args.json and not result.get("segments") and not result.get("problems"):
        # A check that checked nothing did not pass; there is nothing to summarise.
        _err(f"{PROG}: {args.path}: no segments found: nothing was verified")
        return EXIT_DATA
    out = _Output()
    if args.json:
        out.line(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        for item in result.get("problems", []):
            out.line(f"problem: {_finding_text(item)}")
        if args.notes:
            for item in result.get("notes", []):
                out.line(f"note: {_finding_text(item)}")
        segments = result.get("segments", [])
        problems = len(result.get("problems", []))
        notes = len(result.get("notes", []))
        summary = (
            f"{args.path}: {_plural(len(segments), 'segment')}, "
            f"{_plural(sum(s.get('batches') or 0 for s in segments), 'batch', 'batches')}, "
            f"{_plural(sum(s.get('records') or 0 for s in segments), 'record')} checked: "
            f"{_plural(problems, 'problem')}, {_plural(notes, 'note')}"
        )
        if notes and not args.notes:
            summary += " (--notes to list them)"
        ok = result.get("ok") and segments
        out.line(summary + (": OK" if ok else ": FAILED"))
    out.flush()
    if not result.get("segments"):
        # A check that checked nothing did not pass.
        _err(f"{PROG}: {args.path}: no segments found: nothing was verified")
        return EXIT_DATA
    return EXIT_OK if result.get("ok") else EXIT_DATA


# --------------------------------------------------------------------------------------------
# compact and retain: Kafka's log cleanup (kafkalog.compact, kafkalog.retain)


VERIFY_HELP = """\
Check a log directory, partition directory or segment with kafkalog.verify: every batch is
decoded (CRC and records), offsets must increase, torn tails are reported, and each .index,
.timeindex and .txnindex entry is checked against the log.
Prints one line "problem: <path>: <message> (batch at byte position N, offset O)" per problem
(what Kafka would reject or repair), "note: ..." per note with --notes, then a summary line
ending in OK or FAILED. Exit code 0 when there is no problem, 1 otherwise (and when PATH
holds no segment at all: nothing was verified).
"""


def register(sub: Any) -> None:
    v = sub.add_parser(
        "verify",
        help="check segments and their indexes (exit code 1 if something is wrong)",
        description=VERIFY_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("path", metavar="PATH", help="log directory, partition directory or segment")
    v.add_argument("--json", action="store_true", help="print kafkalog.verify's result as JSON")
    v.add_argument(
        "--notes",
        action="store_true",
        help="also list notes (not wrong, worth knowing: missing indexes, index entries "
        "of multi-batch appends)",
    )
    add_storage_arguments(v)
    v.set_defaults(func=cmd_verify)
