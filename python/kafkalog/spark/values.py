"""Typed keys and values in Spark: the data source's ``keyFormat``, ``valueFormat``,
``schemaRegistry``, ``onValueError`` (and ``keySubject``, ``valueSubject``, ``keySubjects``,
``valueSubjects``) options, and
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
from kafkalog.spark.options import SourceOptions, option_texts
from kafkalog.spark.planning import discover
from kafkalog.spark.subscription import Subscription

__all__ = ["with_values", "resolve", "decoded_of"]


def resolve(
    values: Mapping[str, Any],
    topic: str | None,
    storage_options: Mapping[str, str] | None = None,
    files: Sequence[tuple[str, str | None, int | None]] | None = None,
) -> tuple[dict[str, Any], pa.Schema]:
    """``values`` (:func:`kafkalog.values.value_options`) resolved on the driver, and the Arrow
    schema of the typed ``key``/``value`` (and error) columns. ``files`` (path, topic,
    partition): segments whose first records name the Protobuf messages of sides that name
    none."""
    resolved, schema = _native.resolve_values(
        dict(values),
        topic=topic,
        storage_options=dict(storage_options or {}) or None,
        files=list(files or []) or None,
    )
    return resolved, pa.schema(schema)


def _topic_and_firsts(
    paths: Sequence[str],
    subscription: Subscription | None,
    storage_options: Any,
    values: Mapping[str, Any],
) -> tuple[str | None, list[tuple[str, str | None, int | None]]]:
    """The one topic the paths hold (None if several; it names the default subjects), the
    registry's storage topic and Kafka's own left out, and each partition's first segment as
    (path, topic, partition)."""
    parts = discover(
        paths, subscription=subscription, storage_options=storage_options, typed=values
    )
    topics = {p.topic for p in parts}
    topics.discard(None)
    firsts = [(str(p.segments[0][0]), p.topic, p.partition) for p in parts if p.segments]
    return (topics.pop() if len(topics) == 1 else None), firsts


def _resolved(
    values: Mapping[str, Any],
    paths: Sequence[str],
    subscription: Subscription | None,
    storage_options: Mapping[str, str] | None,
) -> tuple[dict[str, Any], pa.Schema]:
    """The typed-value options the core parsed, resolved (the registry read, here)."""
    topic, firsts = _topic_and_firsts(paths, subscription, storage_options, values)
    named = [k for k in ("key_subject", "value_subject", "key_subjects", "value_subjects")]
    if sum(values.get(k) is not None for k in named) >= 2:
        topic = None
    return resolve(values, topic, storage_options, firsts)


def _subscription(raw: Mapping[str, Any]) -> Subscription:
    o = {str(k).lower(): v for k, v in option_texts(raw).items()}
    topics = o.get("subscribe") if o.get("subscribe") is not None else o.get("topics")
    return Subscription.make(
        topics, o.get("subscribepattern"), o.get("assign"), o.get("partitions")
    )


def with_values(options: SourceOptions, raw: Mapping[str, Any]) -> SourceOptions:
    """``options`` with the typed keys and values they ask for resolved on the driver: the
    read options the tasks decode with, and the column types."""
    if options.values is None:
        return options
    resolved, decoded = _resolved(
        options.values, options.paths, options.subscription, options.storage_options
    )
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
    text = _native.spark_typed_options(option_texts(raw))
    if text is None:
        return None
    j = json.loads(text)
    storage = dict(j["storage"]) or None
    return _resolved(j["values"], j["paths"], _subscription(raw), storage)[1]
