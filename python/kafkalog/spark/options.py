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

from kafkalog._isolation import isolation_level, read_committed
from kafkalog._native import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_TARGET_BYTES,
)
from kafkalog._storage import storage_kwargs
from kafkalog.errors import InvalidArgumentError
from kafkalog.spark.schema import spark_columns
from kafkalog.spark.selection import BoundSpec, Subscription, to_millis
from kafkalog.types import IsolationLevel, OnCorrupt, Visibility

__all__ = [
    "DEFAULT_TARGET_BYTES",
    "ReadOptions",
    "SourceOptions",
    "BoundSpec",
    "Subscription",
    "columns_of",
    "parse_bool",
    "to_millis",
]

_log = logging.getLogger("kafkalog.spark")


# Spark's Kafka source options, spelled as Spark's documentation spells them (Spark matches
# option names in any case: the sets below are lower case).
_SPARK_READ_NAMES = (
    "assign",
    "subscribe",
    "subscribePattern",
    "startingOffsets",
    "endingOffsets",
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "failOnDataLoss",
    "minPartitions",
    "maxRecordsPerPartition",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "includeHeaders",
)
_SPARK_READ = {n.lower() for n in _SPARK_READ_NAMES}
# Spark's, with nothing to do on files: accepted and ignored.
_SPARK_IGNORED = {
    "kafkaconsumer.polltimeoutms",
    "fetchoffset.numretries",
    "fetchoffset.retryintervalms",
    "groupidprefix",
}
# kafkalog's own.
_KAFKALOG_OWN_NAMES = (
    "path",
    "paths",
    "topics",
    "partitions",
    "isolationLevel",
    "batchMetadata",
    "includeControl",
    "checkCrc",
    "onCorrupt",
    "maxDecompressedSize",
    "batchSize",
    "targetBytes",
    "encryptionKeys",
    "visibility",
)
#: The options of typed keys and values (kafkalog.spark.values; the jar's Options.java lists
#: the same names, to hand such reads to this source).
VALUE_OPTION_NAMES = (
    "keyFormat",
    "valueFormat",
    "schemaRegistry",
    "onValueError",
    "keySubject",
    "valueSubject",
    "keySubjects",
    "valueSubjects",
    "keyMessage",
    "valueMessage",
)
_KAFKALOG_READ_NAMES: tuple[str, ...] = _KAFKALOG_OWN_NAMES + VALUE_OPTION_NAMES
_KAFKALOG_READ = {n.lower() for n in _KAFKALOG_READ_NAMES}
_STORAGE_PREFIX = "storage."

_ignored_logged: set[frozenset[str]] = set()


def parse_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(f"option {name} must be true or false, not {value!r}")


def _int(o: Mapping[str, str], name: str, default: int | None = None) -> int | None:
    if o.get(name) is None:
        return default
    try:
        return int(str(o[name]).strip())
    except ValueError:
        raise InvalidArgumentError(f"option {name} must be an integer, not {o[name]!r}") from None


def _int_or(o: Mapping[str, str], name: str, default: int) -> int:
    value = _int(o, name)
    return default if value is None else value


def _duration_ms(text: str, name: str) -> int:
    """Spark's durations (``maxTriggerDelay``): ``15m``, ``30s``, ``500ms``, ``1h``..."""
    t = str(text).strip().lower().replace(" ", "")
    units = [("ms", 1), ("s", 1000), ("m", 60_000), ("min", 60_000), ("h", 3_600_000)]
    units += [("d", 86_400_000)]
    for suffix, scale in sorted(units, key=lambda u: -len(u[0])):
        if t.endswith(suffix) and t[: -len(suffix)].isdigit():
            return int(t[: -len(suffix)]) * scale
    if t.isdigit():
        return int(t)
    raise InvalidArgumentError(f"option {name}: not a duration such as '15m' or '30s': {text!r}")


def _visibility(value: str) -> Visibility:
    if value == "consumer":
        return "consumer"
    if value == "all":
        return "all"
    raise InvalidArgumentError(f"visibility must be 'consumer' or 'all', not {value!r}")


def _encryption_keys(text: str) -> dict[str, str]:
    """``encryptionKeys``: JSON ``{"key id": "PEM text or the path of a PEM file"}`` for
    encrypted tiered-storage segments, read here (on the driver) into the storage options."""
    try:
        keys = json.loads(text)
    except ValueError:
        raise InvalidArgumentError(
            'encryptionKeys must be JSON such as {"key-2024": "/secrets/rsm-private.pem"}'
        ) from None
    if not isinstance(keys, Mapping):
        raise InvalidArgumentError("encryptionKeys must be a JSON object of key ids to keys")
    return storage_kwargs(None, None, keys)["storage_options"] or {}


# --------------------------------------------------------------------------------------------
# The data source's options
# --------------------------------------------------------------------------------------------


def columns_of(raw: Mapping[str, str]) -> list[str]:
    """The columns these options read (the schema is asked for before batch or streaming is
    known): Spark's Kafka source columns, ``headers`` with ``includeHeaders``."""
    o = {str(k).lower(): v for k, v in raw.items()}
    headers = parse_bool(o.get("includeheaders", False), "includeHeaders")
    metadata = parse_bool(o.get("batchmetadata", False), "batchMetadata")
    return spark_columns(include_headers=headers, batch_metadata=metadata)


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


def _on_corrupt(value: str) -> OnCorrupt:
    if value in ("error", "raise"):
        return "error"
    if value == "skip":
        return "skip"
    if value == "stop":
        return "stop"
    raise InvalidArgumentError(f'onCorrupt must be "error", "skip" or "stop", not {value!r}')


@dataclasses.dataclass
class SourceOptions:
    """Everything the data source was told, checked."""

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
    #: The Arrow types of the typed ``key``/``value`` and their error columns (None: bytes).
    decoded: pa.Schema | None = None

    @property
    def read_committed(self) -> bool:
        """Whether the query reads committed records only (``kafka.isolation.level``)."""
        return read_committed(self.isolation_level)

    @classmethod
    def parse(cls, raw: Mapping[str, str], *, streaming: bool = False) -> SourceOptions:
        o = {str(k).lower(): v for k, v in raw.items()}
        known = _SPARK_READ | _SPARK_IGNORED | _KAFKALOG_READ
        ignored = sorted(
            k
            for k in o
            if k in _SPARK_IGNORED or (k.startswith("kafka.") and k != "kafka.isolation.level")
        )
        unknown = sorted(
            str(k)
            for k in raw
            if (low := str(k).lower()) not in known
            and not low.startswith("kafka.")
            and not low.startswith(_STORAGE_PREFIX)
        )
        if unknown:
            raise InvalidArgumentError(
                f"unknown option(s) for the kafkalog data source: {', '.join(unknown)}; it "
                f"takes Spark's Kafka source options ({', '.join(_SPARK_READ_NAMES)}, "
                f"kafka.*), and {', '.join(_KAFKALOG_READ_NAMES)}, storage.<key>"
            )
        if ignored and frozenset(ignored) not in _ignored_logged:
            _ignored_logged.add(frozenset(ignored))
            _log.info("kafkalog reads files, not a cluster: ignoring %s", ", ".join(ignored))
        if "paths" in o:
            paths = json.loads(o["paths"])
        elif "path" in o:
            paths = [o["path"]]
        else:
            raise InvalidArgumentError('give the log files to read: .load("/path/to/logs")')

        def flag(name: str, default: bool) -> bool:
            return parse_bool(o[name], name) if o.get(name) is not None else default

        if streaming and any(
            o.get(k) is not None
            for k in ("endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp")
        ):
            raise InvalidArgumentError(
                "ending offsets are not valid in streaming queries (as in Spark's Kafka "
                "source): a streaming query reads on as the log grows"
            )
        start_default = "latest" if streaming else "earliest"
        # Spark's precedence: a timestamp over offsets by timestamp over offsets.
        start_offset: str | None = None
        end_offset: str | None = None
        start_ts: int | str | None = None
        end_ts: int | str | None = None
        if o.get("startingtimestamp") is not None:
            start_ts = to_millis(o["startingtimestamp"])
        elif o.get("startingoffsetsbytimestamp") is not None:
            start_ts = o["startingoffsetsbytimestamp"]
        else:
            start_offset = o.get("startingoffsets") or start_default
        if o.get("endingtimestamp") is not None:
            end_ts = to_millis(o["endingtimestamp"])
        elif o.get("endingoffsetsbytimestamp") is not None:
            end_ts = o["endingoffsetsbytimestamp"]
        else:
            end_offset = o.get("endingoffsets") or "latest"
        for name, value, bad in (
            ("startingOffsets", start_offset, "latest"),
            ("endingOffsets", end_offset, "earliest"),
        ):
            if isinstance(value, str) and not value.strip().startswith("{"):
                if value.strip().lower() not in ("earliest", "latest"):
                    raise InvalidArgumentError(
                        f"{name} must be 'earliest', 'latest' or JSON such as "
                        f'{{"topic": {{"0": 23}}}}, not {value!r}'
                    )
                if value.strip().lower() == bad and not streaming:
                    raise InvalidArgumentError(
                        f"{name}={bad} is not valid for batch queries (as in Spark's Kafka "
                        "source): it reads nothing"
                    )
        strategy = str(o.get("startingoffsetsbytimestampstrategy", "error")).strip().lower()
        bounds = BoundSpec.make(
            start_offset, end_offset, start_ts, end_ts, strategy=strategy, require_all=True
        )
        level = isolation_level(
            o.get("kafka.isolation.level") or o.get("isolationlevel") or "read_uncommitted",
            "kafka.isolation.level",
        )
        topics = o.get("subscribe") if o.get("subscribe") is not None else o.get("topics")
        subscription = Subscription.make(
            topics, o.get("subscribepattern"), o.get("assign"), o.get("partitions")
        )
        read = ReadOptions(
            include_control=flag("includecontrol", False),
            check_crc=flag("checkcrc", True),
            on_corrupt=_on_corrupt(o.get("oncorrupt", "error")),
            max_decompressed_size=_int_or(o, "maxdecompressedsize", DEFAULT_MAX_DECOMPRESSED_SIZE),
            batch_size=_int_or(o, "batchsize", DEFAULT_BATCH_SIZE),
        )
        positive = {
            name: _int(o, name)
            for name in (
                "minpartitions",
                "maxrecordsperpartition",
                "maxoffsetspertrigger",
                "minoffsetspertrigger",
                "targetbytes",
            )
        }
        for option, number in positive.items():
            if number is not None and number <= 0:
                raise InvalidArgumentError(f"option {option} must be positive, not {number}")
        storage = {
            k[len(_STORAGE_PREFIX) :]: str(v) for k, v in o.items() if k.startswith(_STORAGE_PREFIX)
        }
        if o.get("encryptionkeys"):
            storage.update(_encryption_keys(o["encryptionkeys"]))
        return cls(
            paths=paths,
            columns=spark_columns(
                include_headers=flag("includeheaders", False),
                batch_metadata=flag("batchmetadata", False),
            ),
            subscription=subscription,
            bounds=bounds,
            isolation_level=level,
            fail_on_data_loss=flag("failondataloss", True),
            target_bytes=positive["targetbytes"] or DEFAULT_TARGET_BYTES,
            min_partitions=positive["minpartitions"],
            max_records_per_partition=positive["maxrecordsperpartition"],
            max_offsets_per_trigger=positive["maxoffsetspertrigger"],
            min_offsets_per_trigger=positive["minoffsetspertrigger"],
            max_trigger_delay_ms=_duration_ms(o.get("maxtriggerdelay", "15m"), "maxTriggerDelay"),
            read=read,
            storage_options=storage or None,
            visibility=_visibility(o.get("visibility", "consumer")),
        )
