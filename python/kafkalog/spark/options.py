"""The ``kafkalog`` data source's options: Spark's Kafka source options with Spark's meaning,
mapped onto files, and kafkalog's own.

Every option Spark's Kafka source documents is accepted, so an existing Kafka job runs with
only its format name and path changed. Connection and consumer settings (``kafka.*`` other
than ``kafka.isolation.level``, group ids, poll and fetch timeouts) have nothing to connect
to: they are accepted and ignored, with one log line saying so. An unknown option fails,
naming the known ones.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import pyarrow as pa

from kafkalog import _native
from kafkalog._isolation import read_committed
from kafkalog._native import DEFAULT_TARGET_BYTES
from kafkalog.spark.subscription import BoundSpec, Subscription, to_millis
from kafkalog.types import IsolationLevel, OnCorrupt, Visibility

__all__ = [
    "DEFAULT_TARGET_BYTES",
    "ReadOptions",
    "SourceOptions",
    "BoundSpec",
    "Subscription",
    "columns_of",
    "option_texts",
    "parse_bool",
    "to_millis",
]

_log = logging.getLogger("kafkalog.spark")

_ignored_logged: set[frozenset[str]] = set()


def parse_bool(value: Any, name: str) -> bool:
    """An option's boolean (``true``/``false``, ``1``/``0``, ``yes``/``no``, any case), as
    the core reads it."""
    if isinstance(value, bool):
        return value
    return bool(_native.spark_bool(str(value), name))


def option_texts(raw: Mapping[str, Any]) -> dict[str, str]:
    """Options as Spark holds them: strings (a bool as ``true``/``false``)."""
    out = {}
    for k, v in raw.items():
        if v is None:
            continue
        out[str(k)] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


# --------------------------------------------------------------------------------------------
# The data source's options
# --------------------------------------------------------------------------------------------


def columns_of(raw: Mapping[str, str]) -> list[str]:
    """The columns these options read (the schema is asked for before batch or streaming is
    known): Spark's Kafka source columns, ``headers`` with ``includeHeaders``."""
    return list(_native.spark_columns(option_texts(raw)))


class ReadOptions(TypedDict):
    """How work items are decoded: :func:`kafkalog.read`'s options of those names (typed
    keys and values with the registry resolved on the driver, when asked)."""

    include_control: bool
    check_crc: bool
    on_corrupt: OnCorrupt
    max_decompressed_size: int
    batch_size: int
    key_format: NotRequired[str]
    value_format: NotRequired[str]
    on_value_error: NotRequired[str]
    value_options: NotRequired[dict[str, Any]]


@dataclasses.dataclass
class SourceOptions:
    """Everything the data source was told, checked (by the core: ``rust/spark/options.rs``,
    which the JVM source calls too)."""

    paths: list[str]
    columns: list[str]
    subscription: Subscription
    bounds: BoundSpec
    isolation_level: IsolationLevel
    fail_on_data_loss: bool
    target_bytes: int
    min_partitions: int | None
    max_records_per_partition: int | None
    max_offsets_per_trigger: int | None
    min_offsets_per_trigger: int | None
    max_trigger_delay_ms: int
    read: ReadOptions
    storage_options: dict[str, str] | None
    visibility: Visibility = "consumer"
    #: The typed keys and values asked for (``kafkalog.values.value_options``' form, not yet
    #: resolved), or None.
    values: dict[str, Any] | None = None
    #: The Arrow types of the typed ``key``/``value`` and their error columns (None: bytes).
    decoded: pa.Schema | None = None

    @property
    def read_committed(self) -> bool:
        """Whether the query reads committed records only (``kafka.isolation.level``)."""
        return read_committed(self.isolation_level)

    @classmethod
    def parse(cls, raw: Mapping[str, str], *, streaming: bool = False) -> SourceOptions:
        texts = option_texts(raw)
        j = json.loads(_native.spark_read_options(texts, streaming))
        ignored = list(j["ignored"])
        if ignored and frozenset(ignored) not in _ignored_logged:
            _ignored_logged.add(frozenset(ignored))
            _log.info("kafkalog reads files, not a cluster: ignoring %s", ", ".join(ignored))
        o = {k.lower(): v for k, v in texts.items()}
        topics = o.get("subscribe") if o.get("subscribe") is not None else o.get("topics")
        subscription = Subscription.make(
            topics, o.get("subscribepattern"), o.get("assign"), o.get("partitions")
        )
        read = ReadOptions(
            include_control=j["include_control"],
            check_crc=j["check_crc"],
            on_corrupt=j["on_corrupt"],
            max_decompressed_size=j["max_decompressed_size"],
            batch_size=j["batch_size"],
        )
        return cls(
            paths=list(j["paths"]),
            columns=list(j["columns"]),
            subscription=subscription,
            bounds=BoundSpec.from_json(json.dumps(j["bounds"]), require_all=True),
            isolation_level=j["isolation_level"],
            fail_on_data_loss=j["fail_on_data_loss"],
            target_bytes=j["target_bytes"],
            min_partitions=j["min_partitions"],
            max_records_per_partition=j["max_records_per_partition"],
            max_offsets_per_trigger=j["max_offsets_per_trigger"],
            min_offsets_per_trigger=j["min_offsets_per_trigger"],
            max_trigger_delay_ms=j["max_trigger_delay_ms"],
            read=read,
            storage_options=dict(j["storage"]) or None,
            visibility=j["visibility"],
            values=j["values"],
        )
