"""Which topic-partitions and which offsets of each a Spark query reads, as Spark's Kafka source
options say: ``assign``, ``subscribe``, ``subscribePattern`` (:class:`Subscription`) and the
starting and ending offsets or timestamps, for all partitions or per partition
(:class:`BoundSpec`). Resolved to offsets by :mod:`kafkalog.spark.planning`."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from collections.abc import Mapping
from typing import Any, Literal

from kafkalog._time import millis
from kafkalog.errors import InvalidArgumentError

__all__ = ["Subscription", "BoundSpec", "EARLIEST", "LATEST", "to_millis"]


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
