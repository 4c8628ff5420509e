"""The ``kafkalog`` program: its parser (each subcommand registered by its module), warnings
shown as one line, and every error mapped to its exit code in one place."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings
from typing import TextIO

from kafkalog._native import __version__
from kafkalog.cli import (
    cleanup,
    convert,
    dump,
    info,
    offsets,
    restore,
    schemas,
    serve,
    verify,
    write_schemas,
)
from kafkalog.cli.arguments import _Parser
from kafkalog.cli.exits import (
    EXIT_CODES_HELP,
    EXIT_DATA,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_MISSING,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    _error_text,
)
from kafkalog.cli.text import _err
from kafkalog.errors import (
    InvalidArgumentError,
    KafkaLogError,
    KafkaLogIOError,
    KafkaLogWarning,
    MissingDependencyError,
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Read Apache Kafka's on-disk log: dump it as kafka-dump-log.sh does, "
        "convert it to Parquet/Arrow/JSON lines, summarise it.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    dump.register(sub)
    offsets.register(sub)
    convert.register(sub)
    info.register(sub)
    verify.register(sub)
    cleanup.register(sub)
    restore.register(sub)
    schemas.register(sub)
    write_schemas.register(sub)
    serve.register(sub)
    return parser


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    text = " ".join(str(message).split("\n"))
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    print(f"warning: {text}", file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush does
    not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _exit_code(e: KafkaLogError | OSError) -> int:
    """The exit code of an error: a library not installed, I/O, bad arguments, or bad
    data."""
    if isinstance(e, MissingDependencyError):
        return EXIT_MISSING
    if isinstance(e, KafkaLogIOError) or not isinstance(e, KafkaLogError):
        return EXIT_IO
    if isinstance(e, InvalidArgumentError):
        return EXIT_USAGE
    return EXIT_DATA


def main(argv: list[str] | None = None) -> int:
    """Run ``kafkalog`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    code = _main(argv)
    if argv is None:
        # The process ends here (the console script, ``python -m kafkalog``): what the
        # command's libraries left is the OS's to free. Frozen, the interpreter's last
        # garbage collection at exit skips it: pyiceberg's and SQLAlchemy's modules (classes,
        # pydantic schemas) took 0.3 CPU-seconds to collect, a third of what their import
        # costs a table write. atexit handlers still run.
        gc.freeze()
    return code


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("always", KafkaLogWarning)
        warnings.showwarning = _show_warning
        try:
            code: int = args.func(args)
            return code
        except CliError as e:
            _err(f"{PROG}: {e}")
            return e.code
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_OK
        except (KafkaLogError, OSError) as e:
            _err(f"{PROG}: {_error_text(e)}")
            return _exit_code(e)
        except KeyboardInterrupt:
            _err(f"{PROG}: interrupted")
            return EXIT_INTERRUPTED
        except Exception as e:
            if os.environ.get("KAFKALOG_DEBUG"):
                raise
            _err(
                f"{PROG}: internal error: {type(e).__name__}: {_error_text(e)} "
                "(set KAFKALOG_DEBUG=1 for the traceback)"
            )
            return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
