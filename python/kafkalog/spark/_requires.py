"""Imported first by :mod:`kafkalog.spark`: without PySpark, an error that says what to
install rather than where an import failed (:class:`~kafkalog.errors.MissingDependencyError`,
an ``ImportError``)."""

from __future__ import annotations

from kafkalog.errors import MissingDependencyError

try:
    import pyspark  # noqa: F401
except ImportError as e:
    raise MissingDependencyError(
        f"kafkalog.spark needs PySpark, which is not installed ({e}): pip install 'kafkalog[spark]'"
    ) from e
