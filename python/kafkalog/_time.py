"""Timestamps as the API takes them (int milliseconds or a datetime) turned into Kafka's
milliseconds since the epoch, in one place for every function that takes one."""

from __future__ import annotations

import datetime

from kafkalog.errors import InvalidArgumentError


def millis(value: int | datetime.datetime | None) -> int | None:
    """A timestamp as Kafka's milliseconds: an int is taken as milliseconds already; a
    datetime without a time zone is taken as UTC."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return int(value.timestamp() * 1000)
    raise InvalidArgumentError(f"a timestamp must be int milliseconds or a datetime, not {value!r}")
