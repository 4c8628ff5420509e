"""``kafkalog info``: a summary of a log directory from its batch headers (topics,
partitions, segments, offset and time ranges, formats, sizes)."""

from __future__ import annotations

import argparse
import json
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog import _native, reading
from kafkalog.cli.arguments import add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_DATA, EXIT_OK, PROG, _stop_text
from kafkalog.cli.text import TIMESTAMP_TYPES, _err, _human_bytes, _iso_ms, _Output, _plural
from kafkalog.errors import (
    KafkaLogWarning,
    StoppedAtCorruptionWarning,
)


def _segment_summary(path: str, size: int, storage: Mapping[str, Any]) -> dict[str, Any]:
    """What the batch headers of one segment file say (via :func:`kafkalog.read_batches`)."""
    s: dict[str, Any] = {
        "file": os.path.basename(path),
        "path": path,
        "baseOffset": None,
        "bytes": size,
        "batches": 0,
        "records": 0,
        "firstOffset": None,
        "lastOffset": None,
        "firstTimestamp": None,
        "lastTimestamp": None,
        "magics": [],
        "compressions": [],
        "timestampTypes": [],
        "validBytes": 0,
        "trailingBytes": 0,
        "crcMismatches": 0,
        "controlBatches": 0,
        "transactionalBatches": 0,
        "error": None,
    }
    s["baseOffset"] = _native.base_offset_from_name(path)
    magics: set[int] = set()
    codecs: set[str] = set()
    ts_types: set[int] = set()
    first_ts: list[int] = []
    last_ts: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for chunk in reading.read_batches(path, on_corrupt="stop", visibility="all", **storage):
            if chunk.num_rows == 0:
                continue
            s["batches"] += chunk.num_rows
            s["records"] += pc.sum(chunk.column("recordCount")).as_py() or 0
            s["validBytes"] += pc.sum(chunk.column("batchSize")).as_py() or 0
            lo = pc.min(chunk.column("baseOffset")).as_py()
            hi = pc.max(chunk.column("lastOffset")).as_py()
            s["firstOffset"] = lo if s["firstOffset"] is None else min(s["firstOffset"], lo)
            s["lastOffset"] = hi if s["lastOffset"] is None else max(s["lastOffset"], hi)
            magics.update(pc.unique(chunk.column("magic")).to_pylist())
            codecs.update(pc.unique(chunk.column("compression")).to_pylist())
            ts_types.update(pc.unique(chunk.column("timestampType")).to_pylist())
            s["crcMismatches"] += chunk.num_rows - (pc.sum(chunk.column("crcValid")).as_py() or 0)
            s["controlBatches"] += pc.sum(chunk.column("isControl")).as_py() or 0
            s["transactionalBatches"] += pc.sum(chunk.column("isTransactional")).as_py() or 0
            # earliest: what each batch header says of its first record, by the core's rule
            early = pa.array(_native.batch_first_timestamps(chunk), pa.int64())
            early = pc.filter(early, pc.greater_equal(early, 0))
            late = chunk.column("maxTimestamp")
            late = pc.filter(late, pc.greater_equal(late, 0))
            if len(early):
                first_ts.append(pc.min(early).as_py())
            if len(late):
                last_ts.append(pc.max(late).as_py())
    for w in caught:
        if isinstance(w.message, StoppedAtCorruptionWarning):
            s["error"] = _stop_text(w.message)
        elif isinstance(w.message, KafkaLogWarning) and w.message.bytes:
            s["trailingBytes"] += w.message.bytes
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    s["firstTimestamp"] = min(first_ts) if first_ts else None
    s["lastTimestamp"] = max(last_ts) if last_ts else None
    if last_ts and s["firstTimestamp"] is not None:
        s["firstTimestamp"] = min(s["firstTimestamp"], s["lastTimestamp"])
    s["magics"] = sorted(magics)
    s["compressions"] = sorted(codecs)
    s["timestampTypes"] = [TIMESTAMP_TYPES.get(t, str(t)) for t in sorted(ts_types)]
    return s


def _merge(items: list[dict[str, Any]], extra: dict[str, Any]) -> dict[str, Any]:
    def pick(key: str, fn: Callable[[list[Any]], Any]) -> Any:
        values = [i[key] for i in items if i[key] is not None]
        return fn(values) if values else None

    out = dict(extra)
    for key in (
        "bytes",
        "validBytes",
        "trailingBytes",
        "batches",
        "records",
        "crcMismatches",
        "controlBatches",
        "transactionalBatches",
    ):
        out[key] = sum(i[key] for i in items)
    out["firstOffset"] = pick("firstOffset", min)
    out["lastOffset"] = pick("lastOffset", max)
    out["firstTimestamp"] = pick("firstTimestamp", min)
    out["lastTimestamp"] = pick("lastTimestamp", max)
    out["magics"] = sorted({m for i in items for m in i["magics"]})
    out["compressions"] = sorted({c for i in items for c in i["compressions"]})
    order = list(TIMESTAMP_TYPES.values())
    out["timestampTypes"] = sorted(
        {t for i in items for t in i["timestampTypes"]},
        key=lambda t: order.index(t) if t in order else 99,
    )
    return out


def log_info(path: str, storage_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The summary ``kafkalog info`` prints, as a dict (what ``--json`` prints);
    ``storage_options`` as :func:`kafkalog.read` takes them."""
    storage = {} if storage_options is None else {"storage_options": storage_options}
    partitions: dict[tuple[str | None, int | None, str], list[dict[str, Any]]] = {}
    bounds: dict[tuple[str | None, int | None, str], tuple[int | None, int | None]] = {}
    directory = ""
    for seg in reading.segments(path, storage_options=storage.get("storage_options")):
        # One partition per log the core sees (a partition's tiered and broker segments are one).
        if not seg["continues"]:
            directory = os.path.dirname(seg["path"])
        key = (seg["topic"], seg["partition"], directory)
        partitions.setdefault(key, []).append(
            _segment_summary(seg["path"], seg["size"] or 0, storage)
        )
        partitions[key][-1]["hidden"] = seg["hidden"]  # outside what a consumer sees
        bounds[key] = (seg["log_start_offset"], seg["high_watermark"])
    topics: dict[str | None, list[dict[str, Any]]] = {}
    for (topic, partition, directory), segs in partitions.items():
        summary = _merge(segs, {"topic": topic, "partition": partition, "path": directory or "."})
        summary["segments"] = segs
        summary["logStartOffset"], summary["highWatermark"] = bounds[(topic, partition, directory)]
        topics.setdefault(topic, []).append(summary)
    topic_list = []
    for topic, parts in topics.items():
        t = _merge(parts, {"topic": topic})
        t["partitions"] = parts
        topic_list.append(t)
    all_parts = [p for t in topic_list for p in t["partitions"]]
    total = _merge(all_parts, {"path": path})
    total["topicCount"] = len([t for t in topic_list if t["topic"] is not None])
    total["partitionCount"] = len(all_parts)
    total["segmentCount"] = sum(len(segs) for segs in partitions.values())
    total["errors"] = [
        f"{s['path']}: {s['error']}" if not s["error"].startswith(s["path"]) else s["error"]
        for p in all_parts
        for s in p["segments"]
        if s["error"]
    ]
    total["topics"] = topic_list
    return total


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _range(a: int | None, b: int | None) -> str:
    if a is None:
        return "-"
    return f"{a}..{b}"


def _time_range(a: int | None, b: int | None) -> str:
    if a is None:
        return "-"
    return f"{_iso_ms(a)} .. {_iso_ms(b)}"


def _print_info(info: dict[str, Any], out: _Output) -> None:
    out.line(
        f"{info['path']}: {_plural(info['topicCount'], 'topic')}, "
        f"{_plural(info['partitionCount'], 'partition')}, "
        f"{_plural(info['segmentCount'], 'segment')}, "
        f"{_plural(info['batches'], 'batch', 'batches')}, "
        f"{_plural(info['records'], 'record')}, {_human_bytes(info['bytes'])}"
    )
    for topic in info["topics"]:
        for p in topic["partitions"]:
            out.line("")
            if p["topic"] is None:
                label = p["path"]
            else:
                label = f"{p['topic']}-{p['partition']}  ({p['path']})"
            out.line(label)
            out.line(f"  segments     {len(p['segments'])}")
            out.line(
                f"  offsets      {_range(p['firstOffset'], p['lastOffset'])}  "
                f"({p['records']:,} records in {p['batches']:,} batches)"
            )
            out.line(f"  timestamps   {_time_range(p['firstTimestamp'], p['lastTimestamp'])}")
            if p["logStartOffset"] is not None or p["highWatermark"] is not None:
                out.line(
                    f"  consumer     log start offset {_or_dash(p['logStartOffset'])}, high "
                    f"watermark {_or_dash(p['highWatermark'])} (from the broker's checkpoints)"
                )
            out.line(
                "  magic        "
                + (", ".join(str(m) for m in p["magics"]) or "-")
                + "   compression  "
                + (", ".join(p["compressions"]) or "-")
                + "   timestamp types  "
                + (", ".join(p["timestampTypes"]) or "-")
            )
            out.line(f"  size         {p['bytes']:,} bytes ({_human_bytes(p['bytes'])})")
            notes = []
            if p["controlBatches"]:
                notes.append(f"{p['controlBatches']} control batches")
            if p["transactionalBatches"]:
                notes.append(f"{p['transactionalBatches']} transactional batches")
            if p["crcMismatches"]:
                notes.append(f"{p['crcMismatches']} batches with a CRC mismatch")
            if p["trailingBytes"]:
                notes.append(f"{p['trailingBytes']} bytes of partial batches at segment ends")
            if notes:
                out.line("  notes        " + ", ".join(notes))
            width = max(len(s["file"]) for s in p["segments"])
            for s in p["segments"]:
                line = (
                    f"    {s['file']:<{width}}  offsets {_range(s['firstOffset'], s['lastOffset'])}"
                    f"  {s['batches']:,} batches  {s['records']:,} records"
                    f"  {s['bytes']:,} bytes"
                )
                if s["firstTimestamp"] is not None:
                    line += f"  {_time_range(s['firstTimestamp'], s['lastTimestamp'])}"
                if s["trailingBytes"]:
                    line += f"  ({s['trailingBytes']} trailing bytes)"
                if s.get("hidden"):
                    line += f"  (not fetchable: {s['hidden'].replace('_', ' ')})"
                if s["error"]:
                    line += "  (stopped at a corrupt batch)"
                out.line(line)


def cmd_info(args: argparse.Namespace) -> int:
    info = log_info(args.logdir, **storage(args))
    out = _Output()
    if args.json:
        out.line(json.dumps(info, indent=2, ensure_ascii=False))
    else:
        _print_info(info, out)
    out.flush()
    for error in info["errors"]:
        _err(f"{PROG}: {error}")
    return EXIT_DATA if info["errors"] else EXIT_OK


# --------------------------------------------------------------------------------------------
# verify


INFO_HELP = """\
Summarise a log directory, partition directory or segment from its batch headers (records
are not decoded): topics, partitions, segments, offset ranges, timestamp ranges, message
formats (magic), compressions, batch and record counts (records as the batch headers count
them, control records included), sizes, CRC mismatches and partial batches at segment ends.
--json prints the same as one JSON document.
Timestamps: from the earliest batch base timestamp (v2 CreateTime) or batch max timestamp,
to the latest batch max timestamp, in UTC.
"""


def register(sub: Any) -> None:
    i = sub.add_parser(
        "info",
        help="summarise a log directory from its batch headers",
        description=INFO_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    i.add_argument("logdir", metavar="LOGDIR", help="log directory, partition directory or segment")
    i.add_argument("--json", action="store_true", help="print one JSON document")
    add_storage_arguments(i)
    i.set_defaults(func=cmd_info)
