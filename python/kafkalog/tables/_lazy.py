"""The lakehouse libraries, imported when a table is written: ``import kafkalog`` needs
neither, and a missing one is an error saying which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from kafkalog.errors import KafkaLogError


class MissingLibraryError(KafkaLogError, ImportError):
    """A table format's library is not installed."""


def require(module: str, package: str) -> ModuleType:
    """``module``, imported; if missing, an error naming ``package`` and kafkalog's
    ``lake`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingLibraryError(
            f"writing this table needs {package} ({e}): pip install 'kafkalog[lake]' "
            f"(or pip install '{package}')"
        ) from e
