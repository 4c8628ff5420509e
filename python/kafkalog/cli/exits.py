"""Exit codes, the one-line error a failure prints, and :class:`CliError` (an error with
its exit code)."""

from __future__ import annotations

from kafkalog.errors import (
    KafkaLogError,
)

PROG = "kafkalog"

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_IO = 3
EXIT_INTERNAL = 4
EXIT_MISSING = 5
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """\
exit codes:
  0    success
  1    the data is corrupt or failed verification (a corrupt batch, a problem found by
       verify, an index entry that does not match the log with --verify-index-only, a
       corrupt producer snapshot)
  2    usage error (unknown option, bad argument value)
  3    I/O error (a file is missing or cannot be read or written)
  4    internal error (a bug in kafkalog; set KAFKALOG_DEBUG=1 to see the traceback)
  5    a library this command needs is not installed (the message names it and the
       extra that installs it: pip install 'kafkalog[lake]' for delta:// and iceberg://)
  130  interrupted
Errors are printed as one line on stderr: "kafkalog: <path>: <message> (batch at byte
position N, offset O)"; warnings (such as a partial batch at the end of a segment) as one line
"warning: <message>".
"""


class CliError(Exception):
    """An error to report as one line, with the exit code to use."""

    def __init__(self, message: str, code: int = EXIT_DATA) -> None:
        super().__init__(message)
        self.code = code


def _error_text(e: BaseException) -> str:
    """One line for an exception from kafkalog or the operating system."""
    if isinstance(e, KafkaLogError):
        text = str(e)
        if e.path and not text.startswith(str(e.path)):
            text = f"{e.path}: {text}"
    elif isinstance(e, OSError) and e.strerror:
        text = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split("\n")).strip()


def _stop_text(w: Warning) -> str:
    """The error behind a StoppedAtCorruptionWarning, as the error kafkalog would raise."""
    return str(w).replace("stopped reading at a corrupt batch: ", "", 1)
