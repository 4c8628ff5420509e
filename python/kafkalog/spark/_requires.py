"""Imported first by :mod:`kafkalog.spark`: without PySpark, an error that says what to
install rather than where an import failed."""

from __future__ import annotations

try:
    import pyspark  # noqa: F401
except ImportError as e:
    raise ModuleNotFoundError(
        "kafkalog.spark needs PySpark: pip install 'kafkalog[spark]'", name="pyspark"
    ) from e
