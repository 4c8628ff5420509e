"""Kafka's ``isolation.level`` as every function that takes one checks it, in one place:
:func:`kafkalog.read`, :func:`kafkalog.plan`, :func:`kafkalog.spark.plan`,
:func:`kafkalog.spark.decoder` and the data source's ``kafka.isolation.level``."""

from __future__ import annotations

from kafkalog.errors import InvalidArgumentError
from kafkalog.types import IsolationLevel

#: The levels Kafka's consumers take, the default first.
ISOLATION_LEVELS: tuple[IsolationLevel, ...] = ("read_uncommitted", "read_committed")


def isolation_level(value: object, name: str = "isolation_level") -> IsolationLevel:
    """``value`` as an isolation level; anything else is an
    :class:`~kafkalog.errors.InvalidArgumentError` naming the option ``name``."""
    for level in ISOLATION_LEVELS:
        if value == level:
            return level
    raise InvalidArgumentError(
        f"{name} must be 'read_uncommitted' or 'read_committed', not {value!r}"
    )


def read_committed(value: object, name: str = "isolation_level") -> bool:
    """Whether a read at isolation level ``value`` (checked as :func:`isolation_level` does)
    sees committed records only."""
    return isolation_level(value, name) == "read_committed"
