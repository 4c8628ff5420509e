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
import datetime as _dt
import json
import logging
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from kafkalog._native import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_TARGET_BYTES,
)
from kafkalog._storage import storage_kwargs
from kafkalog._time import millis
from kafkalog.errors import InvalidArgumentError
from kafkalog.spark.schema import spark_columns
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


# Spark's Kafka source options (lower case), by what they mean here.
_SPARK_READ = {
    "assign",
    "subscribe",
    "subscribepattern",
    "startingoffsets",
    "endingoffsets",
    "startingtimestamp",
    "endingtimestamp",
    "startingoffsetsbytimestamp",
    "endingoffsetsbytimestamp",
    "startingoffsetsbytimestampstrategy",
    "failondataloss",
    "minpartitions",
    "maxrecordsperpartition",
    "maxoffsetspertrigger",
    "minoffsetspertrigger",
    "maxtriggerdelay",
    "includeheaders",
}
# Spark's, with nothing to do on files: accepted and ignored.
_SPARK_IGNORED = {
    "kafkaconsumer.polltimeoutms",
    "fetchoffset.numretries",
    "fetchoffset.retryintervalms",
    "groupidprefix",
}
# kafkalog's own.
_KAFKALOG_READ = {
    "path",
    "paths",
    "topics",
    "partitions",
    "isolationlevel",
    "batchmetadata",
    "includecontrol",
    "checkcrc",
    "oncorrupt",
    "maxdecompressedsize",
    "batchsize",
    "targetbytes",
    "encryptionkeys",
    "visibility",
}
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


def to_millis(value: Any) -> int | None:
    """A timestamp bound as epoch milliseconds: as :func:`kafkalog._time.millis` takes one,
    or the text of an int (Spark's options are strings)."""
    if isinstance(value, str) or (not isinstance(value, int | _dt.datetime) and value is not None):
        try:
            return int(str(value).strip())
        except ValueError:
            raise InvalidArgumentError(
                f"a timestamp must be epoch milliseconds or a datetime, not {value!r}"
            ) from None
    if isinstance(value, bool):
        raise InvalidArgumentError(f"a timestamp must be epoch milliseconds, not {value!r}")
    return millis(value)


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
# Which topic-partitions: assign, subscribe, subscribePattern
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Subscription:
    """Spark's ``assign`` / ``subscribe`` / ``subscribePattern`` (at most one), and
    kafkalog's ``partitions`` filter. No subscription: every topic-partition found."""

    topics: frozenset[str] | None = None
    pattern: str | None = None
    assign: frozenset[tuple[str, int]] | None = None
    partitions: frozenset[int] | None = None

    def __call__(self, topic: str | None, partition: int | None) -> bool:
        import re

        if self.topics is not None and topic not in self.topics:
            return False
        if self.pattern is not None and (topic is None or not re.fullmatch(self.pattern, topic)):
            return False
        if self.assign is not None and (topic, partition) not in self.assign:
            return False
        return self.partitions is None or partition in self.partitions

    @classmethod
    def make(
        cls,
        topics: Any = None,
        pattern: str | None = None,
        assign: Any = None,
        partitions: Any = None,
    ) -> Subscription:
        given = [n for n, v in (("assign", assign), ("subscribe", topics)) if v is not None]
        given += ["subscribePattern"] if pattern is not None else []
        if len(given) > 1:
            raise InvalidArgumentError(
                f"only one of assign, subscribe and subscribePattern can be given, not "
                f"{' and '.join(given)} (as Spark's Kafka source)"
            )
        if isinstance(topics, str):
            topics = topics.split(",")
        topic_set = None
        if topics is not None:
            topic_set = frozenset(t.strip() for t in topics if t.strip())
            if not topic_set:
                raise InvalidArgumentError("subscribe: no topic given")
        if pattern is not None:
            import re

            try:
                re.compile(pattern)
            except re.error as e:
                raise InvalidArgumentError(f"subscribePattern: bad pattern: {e}") from None
        assigned = None
        if assign is not None:
            if isinstance(assign, str):
                try:
                    assign = json.loads(assign)
                except ValueError as e:
                    raise InvalidArgumentError(f"assign: not valid JSON: {e}") from None
            if not isinstance(assign, Mapping) or not all(
                isinstance(ps, (list, tuple)) for ps in assign.values()
            ):
                raise InvalidArgumentError(f'assign: expected {{"topic": [0, 1]}}, not {assign!r}')
            assigned = frozenset((str(t), int(p)) for t, ps in assign.items() for p in ps)
        if isinstance(partitions, (int, str)):
            partitions = str(partitions).split(",")
        try:
            partition_set = None if partitions is None else frozenset(int(p) for p in partitions)
        except ValueError:
            raise InvalidArgumentError(f"partitions must be integers: {partitions!r}") from None
        return cls(topic_set, pattern, assigned, partition_set)


# --------------------------------------------------------------------------------------------
# Bounds as given: offsets (with -2 earliest, -1 latest) or timestamps, all or per partition
# --------------------------------------------------------------------------------------------

#: Spark's special offsets in offsets JSON.
EARLIEST = -2
LATEST = -1

#: One bound as given: the value for every partition (``None``: none given), and values for
#: named (topic, partition)s, which win over it (a ``None`` there: no bound of this kind).
PartitionBound = tuple[int | None, dict[tuple[str, int], int | None]]


def _partition_map(spec: Any, what: str, timestamps: bool) -> PartitionBound:
    """A bound for every partition (an int, or ``earliest``/``latest``), or per partition: a
    mapping (or JSON) ``{"topic": {"0": value}}`` as Spark's Kafka source takes it."""
    if spec is None:
        return None, {}
    if isinstance(spec, str):
        text = spec.strip()
        if text.lower() in ("earliest", "latest") and not timestamps:
            return (EARLIEST if text.lower() == "earliest" else LATEST), {}
        if not text.startswith("{"):
            value = to_millis(text) if timestamps else _offset(text, what)
            return value, {}
        try:
            spec = json.loads(text)
        except ValueError as e:
            raise InvalidArgumentError(f"{what}: not valid JSON: {e}") from None
    if isinstance(spec, Mapping):
        out: dict[tuple[str, int], int | None] = {}
        for topic, per in spec.items():
            if not isinstance(per, Mapping):
                raise InvalidArgumentError(
                    f'{what}: expected {{"topic": {{"partition": value}}}}, got {spec!r}'
                )
            for p, value in per.items():
                try:
                    key = (str(topic), int(p))
                except ValueError:
                    raise InvalidArgumentError(f"{what}: bad partition {p!r}") from None
                out[key] = to_millis(value) if timestamps else _offset(value, what)
        return None, out
    if isinstance(spec, bool):
        pass
    elif timestamps and isinstance(spec, int | _dt.datetime):
        return to_millis(spec), {}
    elif isinstance(spec, int):
        return spec, {}
    raise InvalidArgumentError(f"{what}: expected an int or a per-partition mapping, not {spec!r}")


def _offset(value: Any, what: str) -> int:
    try:
        n = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise InvalidArgumentError(f"{what}: not an offset: {value!r}") from None
    if n < EARLIEST:
        raise InvalidArgumentError(f"{what}: invalid offset {n} (-2 is earliest, -1 latest)")
    return n


@dataclasses.dataclass(frozen=True)
class BoundSpec:
    """Start and end as given (Spark's precedence already applied: a timestamp over offsets
    by timestamp over offsets), to be resolved per topic-partition."""

    start_offset: PartitionBound = (None, {})
    end_offset: PartitionBound = (None, {})
    start_timestamp: PartitionBound = (None, {})
    end_timestamp: PartitionBound = (None, {})
    #: What a start timestamp no record reaches means: ``error`` (Spark's default) fails the
    #: query; ``latest`` starts at the latest offset (reads nothing there).
    strategy: Literal["error", "latest"] = "latest"
    #: Spark requires per-partition offsets (and timestamps) to name every partition read.
    require_all: bool = False

    @classmethod
    def make(
        cls,
        start_offset: Any = None,
        end_offset: Any = None,
        start_timestamp: Any = None,
        end_timestamp: Any = None,
        *,
        strategy: str = "latest",
        require_all: bool = False,
    ) -> BoundSpec:
        if strategy == "error":
            known: Literal["error", "latest"] = "error"
        elif strategy == "latest":
            known = "latest"
        else:
            raise InvalidArgumentError(
                f"startingOffsetsByTimestampStrategy must be 'error' or 'latest', not {strategy!r}"
            )
        return cls(
            _partition_map(start_offset, "starting offsets", False),
            _partition_map(end_offset, "ending offsets", False),
            _partition_map(start_timestamp, "starting timestamp", True),
            _partition_map(end_timestamp, "ending timestamp", True),
            known,
            require_all,
        )

    def named(self) -> set[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        for _, per in (
            self.start_offset,
            self.end_offset,
            self.start_timestamp,
            self.end_timestamp,
        ):
            out.update(per)
        return out

    def check_partitions(self, found: set[tuple[str | None, int | None]]) -> None:
        """Per-partition bounds must name partitions that are there, and (as Spark requires
        of specific offsets) every partition read."""
        unknown = self.named() - found
        if unknown:
            names = ", ".join(f"{t}-{p}" for t, p in sorted(unknown))
            raise InvalidArgumentError(f"bounds name topic-partitions that are not there: {names}")
        if not self.require_all:
            return
        for what, (_, per) in (
            ("startingOffsets", self.start_offset),
            ("endingOffsets", self.end_offset),
            ("startingOffsetsByTimestamp", self.start_timestamp),
            ("endingOffsetsByTimestamp", self.end_timestamp),
        ):
            missing = found - set(per) if per else set()
            if missing:
                names = ", ".join(f"{t}-{p}" for t, p in sorted(missing, key=str))
                raise InvalidArgumentError(
                    f"{what} names specific partitions, so it must name every partition read "
                    f"(as Spark's Kafka source requires; -2 is earliest, -1 latest): "
                    f"missing {names}"
                )

    def start_of(self, tp: tuple[str | None, int | None]) -> tuple[int | None, int | None]:
        """(offset or EARLIEST/LATEST or None, timestamp or None) to start a partition at."""
        ts = _bound_of(self.start_timestamp, tp)
        if ts is not None:
            return None, ts
        return _bound_of(self.start_offset, tp), None

    def end_of(self, tp: tuple[str | None, int | None]) -> tuple[int | None, int | None]:
        ts = _bound_of(self.end_timestamp, tp)
        if ts is not None:
            return None, ts
        return _bound_of(self.end_offset, tp), None


def _bound_of(bound: PartitionBound, tp: tuple[str | None, int | None]) -> int | None:
    """The bound for one topic-partition: its own where named, else the one for all."""
    every, per = bound
    topic, partition = tp
    if topic is not None and partition is not None and (topic, partition) in per:
        return per[(topic, partition)]
    return every


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
    """How work items are decoded: :func:`kafkalog.read`'s options of those names."""

    include_control: bool
    check_crc: bool
    on_corrupt: OnCorrupt
    max_decompressed_size: int
    batch_size: int


def _on_corrupt(value: str) -> OnCorrupt:
    if value in ("error", "raise"):
        return "error"
    if value == "skip":
        return "skip"
    if value == "stop":
        return "stop"
    raise InvalidArgumentError(f'onCorrupt must be "error", "skip" or "stop", not {value!r}')


def _isolation_level(value: str) -> IsolationLevel:
    if value == "read_uncommitted":
        return "read_uncommitted"
    if value == "read_committed":
        return "read_committed"
    raise InvalidArgumentError(
        f"kafka.isolation.level must be read_uncommitted or read_committed, not {value!r}"
    )


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
            k
            for k in o
            if k not in known and not k.startswith("kafka.") and not k.startswith(_STORAGE_PREFIX)
        )
        if unknown:
            raise InvalidArgumentError(
                f"unknown option(s) for the kafkalog data source: {', '.join(unknown)}; it "
                f"takes Spark's Kafka source options ({', '.join(sorted(_SPARK_READ))}, "
                f"kafka.*), and {', '.join(sorted(_KAFKALOG_READ))}, storage.<key>"
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
        level = _isolation_level(
            o.get("kafka.isolation.level") or o.get("isolationlevel") or "read_uncommitted"
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
