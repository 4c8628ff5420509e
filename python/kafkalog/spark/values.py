"""Typed keys and values in Spark: the data source's ``keyFormat``, ``valueFormat``,
``schemaRegistry``, ``onValueError`` (and ``keySubject``, ``valueSubject``, ``keySubjects``,
``valueSubjects``, ``keyMessage``, ``valueMessage``) options, and
:func:`kafkalog.spark.decoder`'s ``key_format``/``value_format``/``schemas``. The registry is
read once, on the driver (``kafkalog._native.resolve_values``): the tasks get the schemas by
id and the column's schema, never the storage topic, and every task's batches have one type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from kafkalog import _native
from kafkalog.errors import InvalidArgumentError
from kafkalog.spark.options import VALUE_OPTION_NAMES, SourceOptions
from kafkalog.spark.planning import discover
from kafkalog.spark.selection import Subscription
from kafkalog.values import value_options

__all__ = ["VALUE_OPTION_NAMES", "with_values", "resolve", "decoded_of"]

#: The data source's Protobuf message options (lower-cased) and value_options' names of them.
MESSAGE_OPTIONS = (("keymessage", "key_message"), ("valuemessage", "value_message"))


def resolve(
    values: Mapping[str, Any],
    topic: str | None,
    storage_options: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], pa.Schema]:
    """``values`` (:func:`kafkalog.values.value_options`) resolved on the driver, and the Arrow
    schema of the typed ``key``/``value`` (and error) columns."""
    resolved, schema = _native.resolve_values(
        dict(values), topic=topic, storage_options=dict(storage_options or {}) or None
    )
    return resolved, pa.schema(schema)


def single_topic(
    paths: Sequence[str], subscription: Subscription | None, storage_options: Any
) -> str | None:
    """The one topic the paths hold (None if several): it names the default subjects."""
    topics = {
        p.topic for p in discover(paths, subscription=subscription, storage_options=storage_options)
    }
    topics.discard(None)
    return topics.pop() if len(topics) == 1 else None


def from_source_options(
    o: Mapping[str, Any],
    paths: Sequence[str],
    subscription: Subscription | None,
    storage_options: Mapping[str, str] | None,
) -> tuple[dict[str, Any], pa.Schema] | None:
    """The data source's typed-value options (``o``: lower-cased names) resolved, or None
    when neither keys nor values are decoded."""
    key_format = str(o.get("keyformat", "binary")).lower()
    value_format = str(o.get("valueformat", "binary")).lower()
    subjects: dict[str, Any] = {}
    if o.get("keysubject"):
        subjects["key_subject"] = str(o["keysubject"])
    if o.get("valuesubject"):
        subjects["value_subject"] = str(o["valuesubject"])
    # Several record types in one column: subjects separated by commas.
    if o.get("keysubjects"):
        subjects["key_subjects"] = str(o["keysubjects"])
    if o.get("valuesubjects"):
        subjects["value_subjects"] = str(o["valuesubjects"])
    # Protobuf: the column's message, or several separated by commas.
    messages: dict[str, Any] = {k: str(o[n]) for n, k in MESSAGE_OPTIONS if o.get(n)}
    values = value_options(
        key_format=key_format,  # type: ignore[arg-type]
        value_format=value_format,  # type: ignore[arg-type]
        schemas=o.get("schemaregistry"),
        on_value_error=str(o.get("onvalueerror", "error")).lower(),  # type: ignore[arg-type]
        **subjects,
        **messages,
    )
    if values is None:
        return None
    if {key_format, value_format} - {"binary", "string"} and not o.get("schemaregistry"):
        raise InvalidArgumentError(
            "keyFormat/valueFormat avro, protobuf, json or auto need the option "
            "schemaRegistry: the registry's storage topic (a log directory holding "
            "_schemas-0, or its URI)"
        )
    topic = None
    if not subjects or len(subjects) < 2:
        topic = single_topic(paths, subscription, storage_options)
    return resolve(values, topic, storage_options)


def with_values(options: SourceOptions, raw: Mapping[str, Any]) -> SourceOptions:
    """``options`` with the typed keys and values ``raw`` (the data source's options) ask for
    resolved on the driver: the read options the tasks decode with, and the column types."""
    o = {str(k).lower(): v for k, v in raw.items()}
    typed = from_source_options(o, options.paths, options.subscription, options.storage_options)
    if typed is None:
        return options
    resolved, decoded = typed
    read = dict(options.read)
    read["key_format"] = resolved["key_format"]
    read["value_format"] = resolved["value_format"]
    read["on_value_error"] = resolved["on_value_error"]
    read["value_options"] = {"resolved": resolved}
    options.read = read  # type: ignore[assignment]
    options.decoded = decoded
    return options


def decoded_of(raw: Mapping[str, Any]) -> pa.Schema | None:
    """The Arrow types of the typed columns the data source's options ``raw`` ask for (the
    schema is asked for before batch or streaming is known), or None."""
    o = {str(k).lower(): v for k, v in raw.items()}
    if {str(o.get("keyformat", "binary")), str(o.get("valueformat", "binary"))} <= {"binary"}:
        return None
    paths = json.loads(o["paths"]) if "paths" in o else [o["path"]]
    storage = {k[len("storage.") :]: str(v) for k, v in o.items() if k.startswith("storage.")}
    topics = o.get("subscribe") if o.get("subscribe") is not None else o.get("topics")
    subscription = Subscription.make(
        topics, o.get("subscribepattern"), o.get("assign"), o.get("partitions")
    )
    typed = from_source_options(o, paths, subscription, storage or None)
    return None if typed is None else typed[1]
