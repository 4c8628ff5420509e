"""Output and formatting: buffered stdout lines, one-line messages on stderr, and values
printed as Kafka's Java tools print them (paths, booleans, optionals, UTF-8, times, sizes)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from collections.abc import Mapping
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.compute as pc

from kafkalog import _native

#: Kafka's timestamp type names by id, from the core.
TIMESTAMP_TYPES: dict[int, str] = dict(_native.TIMESTAMP_TYPES)


def _java_file(path: str) -> str:
    """A path as Java's ``new File(path).toString()`` prints it on Unix: repeated separators
    collapsed, a trailing separator removed."""
    p = re.sub(r"/+", "/", path)
    if len(p) > 1 and p.endswith("/"):
        p = p[:-1]
    return p


def _java_abs(path: str) -> str:
    """Java's ``File.getAbsolutePath()`` (no normalisation of ``..``)."""
    p = _java_file(path)
    return p if os.path.isabs(p) else os.path.join(os.getcwd(), p)


def _java_bool(value: Any) -> str:
    return "true" if value else "false"


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def _utf8(data: bytes) -> str:
    """Bytes as Kafka's StringDecoder shows them: UTF-8, malformed input replaced."""
    return data.decode("utf-8", errors="replace")


def _iso_ms(ms: int | None) -> str | None:
    if ms is None or ms < 0:
        return None
    try:
        t = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _json_values(column: pa.Array | pa.ChunkedArray) -> list[str | None]:
    """Each value of a typed key or value column as JSON text (None for null): the core's one
    mapping of typed values to JSON (``rust/values/json/texts.rs``, docs/values.md)."""
    if isinstance(column, pa.ChunkedArray):
        return [t for chunk in column.chunks for t in _native.json_texts(chunk)]
    texts: list[str | None] = _native.json_texts(column)
    return texts


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _ms_column(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A timestamp column as int64 milliseconds since the epoch, nulls kept."""
    unit = column.type.unit
    ints = pc.cast(column, pa.int64())
    if unit == "s":
        return pc.multiply(ints, 1000)
    if unit == "ms":
        return ints
    return pc.divide(ints, 1000 if unit == "us" else 1_000_000)


class _Output:
    """Buffered line output to stdout."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)
        if len(self.lines) >= 4096:
            self.flush()

    def json(self, obj: dict[str, Any], raw: Mapping[str, str | None] | None = None) -> None:
        """``obj`` as one JSON line; ``raw``: members appended as they are (JSON text already,
        None for null)."""
        line = json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))
        if raw:
            members = ", ".join(
                f"{json.dumps(k)}: {'null' if v is None else v}" for k, v in raw.items()
            )
            line = line[:-1] + (", " if obj else "") + members + "}"
        self.line(line)

    def flush(self) -> None:
        if self.lines:
            self.stream.write("\n".join(self.lines) + "\n")
            self.lines = []
        self.stream.flush()


def _err(text: str) -> None:
    sys.stdout.flush()
    print(text, file=sys.stderr, flush=True)


def _finding_text(item: Mapping[str, Any]) -> str:
    """One problem or note of :func:`kafkalog.verify` as one line."""
    text = " ".join(str(item.get("message") or item.get("kind") or "").split("\n"))
    path = item.get("path")
    if path and not text.startswith(str(path)):
        text = f"{path}: {text}"
    where = []
    if item.get("position") is not None:
        what = "batch at byte position" if str(path or "").endswith(".log") else "byte position"
        where.append(f"{what} {item['position']}")
    if item.get("offset") is not None:
        where.append(f"offset {item['offset']}")
    if where and "(" + ", ".join(where) + ")" not in text:
        text += " (" + ", ".join(where) + ")"
    return text


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} " + (word if n == 1 else plural or word + "s")
