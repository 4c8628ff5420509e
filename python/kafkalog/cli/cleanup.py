"""``kafkalog compact`` and ``kafkalog retain``: Kafka's log cleanup
(:func:`kafkalog.compact`, :func:`kafkalog.retain`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kafkalog import cleanup
from kafkalog.cli.arguments import _positive_int
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK
from kafkalog.cli.text import _finding_text, _human_bytes, _iso_ms, _Output, _plural


def cmd_compact(args: argparse.Namespace) -> int:
    report = cleanup.compact(
        args.src,
        args.dst,
        delete_retention_ms=args.delete_retention_ms,
        min_compaction_lag_ms=args.min_compaction_lag_ms,
        max_compaction_lag_ms=args.max_compaction_lag_ms,
        min_cleanable_ratio=args.min_cleanable_ratio,
        segment_bytes=args.segment_bytes,
        first_dirty_offset=args.first_dirty_offset,
        log_start_offset=args.log_start_offset,
        high_watermark=args.high_watermark,
        now=args.now,
        overwrite=args.overwrite,
        on_corrupt=args.on_corrupt,
    )
    out = _Output()
    if args.json:
        out.line(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    else:
        for item in report["skipped"]:
            out.line(f"skipped: {_finding_text(item)}")
        if report["cleaned"]:
            out.line(
                f"{args.dst}: cleaned offsets {report['log_start_offset']} to "
                f"{report['next_dirty_offset'] - 1} ({report['segments_cleaned']} segments): "
                f"{_plural(report['records_read'], 'record')} read, "
                f"{report['records_written']} kept, "
                f"{_human_bytes(report['bytes_read'])} -> "
                f"{_human_bytes(report['bytes_written'])}"
                + (
                    f"; {_plural(report['invalid_records'], 'record')} without a key removed"
                    if report["invalid_records"]
                    else ""
                )
            )
        else:
            out.line(f"{args.dst}: nothing to clean; copied {args.src}")
    out.flush()
    return EXIT_OK


def cmd_retain(args: argparse.Namespace) -> int:
    result = cleanup.retain(
        args.path,
        retention_ms=args.retention_ms,
        retention_bytes=args.retention_bytes,
        log_start_offset=args.log_start_offset,
        high_watermark=args.high_watermark,
        now=args.now,
        dry_run=args.dry_run,
        write_checkpoint=args.write_checkpoint,
    )
    out = _Output()
    if args.json:
        out.line(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        verb = "would remove" if args.dry_run else "removed"
        for part in result:
            for r in part["removed"]:
                out.line(
                    f"{verb} {r['path']} ({_human_bytes(r['bytes'])}, {r['reason']}, "
                    f"largest timestamp {_iso_ms(r['largest_timestamp'])})"
                )
            out.line(
                f"{part['dir']}: {_plural(len(part['removed']), 'segment')} {verb}; "
                f"log start offset {part['log_start_offset_before']} -> "
                f"{part['log_start_offset']}"
                + ("; rolled an empty active segment" if part["rolled"] else "")
            )
    out.flush()
    return EXIT_OK


def register(sub: Any) -> None:
    k = sub.add_parser(
        "compact",
        help="compact a partition directory into a new one, as Kafka's log cleaner does",
        description="Compact the partition directory SRC into DST as one round of Kafka's log "
        "cleaner: the last record of each key, offsets kept, tombstones removed after "
        "their delete horizon, aborted transactions removed. SRC is only read; DST is "
        "written atomically.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    k.add_argument("src", metavar="SRC", help="partition directory to compact")
    k.add_argument("dst", metavar="DST", help="partition directory to write")
    k.add_argument("--delete-retention-ms", type=int, default=86_400_000)
    k.add_argument("--min-compaction-lag-ms", type=int, default=0)
    k.add_argument("--max-compaction-lag-ms", type=int, default=2**63 - 1)
    k.add_argument("--min-cleanable-ratio", type=float, default=None)
    k.add_argument("--segment-bytes", type=_positive_int, default=1 << 30)
    k.add_argument(
        "--first-dirty-offset",
        type=int,
        default=None,
        help="where the last cleaning stopped (cleaner-offset-checkpoint)",
    )
    k.add_argument(
        "--log-start-offset",
        type=int,
        default=None,
        help="default: the log directory's log-start-offset-checkpoint, else the first segment",
    )
    k.add_argument(
        "--high-watermark",
        type=int,
        default=None,
        help="default: the log directory's replication-offset-checkpoint, else the log end",
    )
    k.add_argument("--now", type=int, default=None, help="the cleaner's clock, ms since epoch")
    k.add_argument("--overwrite", action="store_true", help="replace DST if it exists")
    k.add_argument("--on-corrupt", choices=("error", "skip"), default="error")
    k.add_argument("--json", action="store_true", help="print the report as JSON")
    k.set_defaults(func=cmd_compact)

    r = sub.add_parser(
        "retain",
        help="apply retention (time, size, log start offset) as the broker does",
        description="Apply Kafka's retention to each partition under PATH: segments below "
        "the log start offset, then past --retention-bytes, then past --retention-ms, "
        "oldest first. With --dry-run nothing is touched.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("path", metavar="PATH", help="log directory or partition directory")
    r.add_argument("--retention-ms", type=int, default=None)
    r.add_argument("--retention-bytes", type=int, default=None)
    r.add_argument("--log-start-offset", type=int, default=None)
    r.add_argument(
        "--high-watermark",
        type=int,
        default=None,
        help="default: the log directory's replication-offset-checkpoint, else the log end",
    )
    r.add_argument("--now", type=int, default=None, help="the broker's clock, ms since epoch")
    r.add_argument("--dry-run", action="store_true", help="report what would be removed")
    r.add_argument(
        "--write-checkpoint",
        action="store_true",
        help="write the new log start offset to log-start-offset-checkpoint",
    )
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.set_defaults(func=cmd_retain)


# --------------------------------------------------------------------------------------------
# argument parsing
