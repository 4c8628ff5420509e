"""The argument parser's class and the value types of options (non-negative integers,
column lists, offsets or times)."""

from __future__ import annotations

import argparse
import datetime as _dt
from typing import Any, NoReturn

from kafkalog.cli.exits import EXIT_USAGE


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit code 2
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n(see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _column_list(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _bound_value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an integer nor an ISO 8601 time"
        ) from None
    return t if t.tzinfo else t.replace(tzinfo=_dt.UTC)
