"""The lakehouse libraries, imported when a table is written: ``import kafkalog`` needs
neither, and a missing one is an error saying which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from kafkalog.errors import MissingDependencyError

#: The name this error had before it was public (:class:`kafkalog.errors.MissingDependencyError`).
MissingLibraryError = MissingDependencyError


def missing(package: str, why: object, extra: str = "lake") -> MissingDependencyError:
    """The error for ``package`` not installed (``why``: what failed), naming kafkalog's
    ``extra`` that installs it."""
    return MissingDependencyError(
        f"writing this table needs {package}, which is not installed ({why}): "
        f"pip install 'kafkalog[{extra}]' (or pip install '{package}')"
    )


def require(module: str, package: str) -> ModuleType:
    """``module``, imported; if missing, an error naming ``package`` and kafkalog's
    ``lake`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise missing(package, e) from e
