"""The argument parser's class and the value types of options (non-negative integers,
column lists, offsets or times)."""

from __future__ import annotations

import argparse
import datetime as _dt
from typing import Any, NoReturn

from kafkalog._storage import storage_kwargs
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


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value


STORAGE_HELP = """\
Object stores (s3://, gs://, az://, http(s)://) take credentials and endpoints from the usual
environment variables (AWS_*, GOOGLE_*, AZURE_*) and from -o KEY=VALUE (object_store's keys,
e.g. -o aws_endpoint=http://127.0.0.1:9000 -o aws_allow_http=true), as kafkalog.read's
storage_options. kafkalog's own options go the same way: -o kafkalog.tiered_layout=aiven,
-o kafkalog.remote_log_metadata=PATH[,PATH...]. Encrypted tiered-storage segments need their
key: --encryption-key KEY_ID=PEM_FILE.
"""


def add_storage_arguments(parser: argparse.ArgumentParser) -> None:
    """``-o KEY=VALUE`` and ``--encryption-key KEY_ID=PEM_FILE``: the storage options of the
    paths a command reads (repeatable)."""
    group = parser.add_argument_group("storage")
    group.add_argument(
        "-o",
        "--storage-option",
        dest="storage_options",
        action="append",
        type=_key_value,
        metavar="KEY=VALUE",
        help="a storage option (object_store's keys, or kafkalog.*); repeatable",
    )
    group.add_argument(
        "--encryption-key",
        dest="encryption_keys",
        action="append",
        type=_key_value,
        metavar="KEY_ID=PEM_FILE",
        help="the private key of encrypted tiered-storage segments; repeatable",
    )


def storage(args: argparse.Namespace) -> dict[str, Any]:
    """The ``storage_options`` keyword of kafkalog's functions from ``args`` (none when no
    storage argument was given); encryption keys travel inside them, as the core takes them."""
    options = dict(getattr(args, "storage_options", None) or [])
    keys = dict(getattr(args, "encryption_keys", None) or [])
    if not options and not keys:
        return {}
    return {"storage_options": storage_kwargs(options, None, keys or None)["storage_options"]}
