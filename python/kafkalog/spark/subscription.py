"""Which topic-partitions and which offsets of each a Spark query reads, as Spark's Kafka source
options say: ``assign``, ``subscribe``, ``subscribePattern`` (:class:`Subscription`) and the
starting and ending offsets or timestamps, for all partitions or per partition
(:class:`BoundSpec`). Resolved to offsets by :mod:`kafkalog.spark.planning`.

The rules are the core's (``rust/spark/selection.rs``, which the JVM source calls too): the
options are checked there, topics matched there; these classes hold its answer."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from kafkalog import _native
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
                f"a timestamp must be epoch milliseconds or a datetime, not '{value}'"
            ) from None
    if isinstance(value, bool):
        raise InvalidArgumentError(f"a timestamp must be epoch milliseconds, not {value!r}")
    return millis(value)


# --------------------------------------------------------------------------------------------
# Which topic-partitions: assign, subscribe, subscribePattern
# --------------------------------------------------------------------------------------------

#: The option texts of a subscription, as the core takes them: subscribe, subscribePattern,
#: assign, partitions.
Texts = tuple[str | None, str | None, str | None, str | None]


@functools.lru_cache(maxsize=4096)
def _takes(texts: Texts, topic: str | None, partition: int | None) -> bool:
    topics, pattern, assign, partitions = texts
    return bool(
        _native.spark_subscribed(
            [(topic, partition)],
            topics=topics,
            pattern=pattern,
            assign=assign,
            partitions=partitions,
        )[0]
    )


@dataclasses.dataclass(frozen=True)
class Subscription:
    """Spark's ``assign`` / ``subscribe`` / ``subscribePattern`` (at most one), and
    kafkalog's ``partitions`` filter. No subscription: every topic-partition found."""

    topics: frozenset[str] | None = None
    pattern: str | None = None
    assign: frozenset[tuple[str, int]] | None = None
    partitions: frozenset[int] | None = None
    texts: Texts = dataclasses.field(default=(None, None, None, None), compare=False)

    def __call__(self, topic: str | None, partition: int | None) -> bool:
        if self.texts == (None, None, None, None):
            return True
        return _takes(self.texts, topic, partition)

    @classmethod
    def make(
        cls,
        topics: Any = None,
        pattern: str | None = None,
        assign: Any = None,
        partitions: Any = None,
    ) -> Subscription:
        """From the options' texts (``subscribe``, ``subscribePattern``, ``assign`` as JSON,
        ``partitions`` separated by commas), or Python values of the same (a list of topics,
        a mapping of topic to partitions, a list of partitions)."""
        if topics is not None and not isinstance(topics, str):
            topics = ",".join(str(t) for t in topics)
        if assign is not None and not isinstance(assign, str):
            if not isinstance(assign, Mapping) or not all(
                isinstance(ps, (list, tuple)) for ps in assign.values()
            ):
                raise InvalidArgumentError(f'assign: expected {{"topic": [0, 1]}}, not {assign!r}')
            assign = json.dumps({str(t): list(ps) for t, ps in assign.items()})
        if partitions is not None and not isinstance(partitions, str):
            parts: Iterable[Any] = [partitions] if isinstance(partitions, int) else partitions
            partitions = ",".join(str(p) for p in parts)
        texts: Texts = (topics, pattern, assign, partitions)
        j = json.loads(_native.spark_subscription(*texts))
        return cls(
            topics=None if j["topics"] is None else frozenset(j["topics"]),
            pattern=j["pattern"],
            assign=None if j["assign"] is None else frozenset((t, p) for t, p in j["assign"]),
            partitions=None if j["partitions"] is None else frozenset(j["partitions"]),
            texts=texts,
        )


# --------------------------------------------------------------------------------------------
# Bounds as given: offsets (with -2 earliest, -1 latest) or timestamps, all or per partition
# --------------------------------------------------------------------------------------------

#: Spark's special offsets in offsets JSON.
EARLIEST = -2
LATEST = -1

#: One bound as given: the value for every partition (``None``: none given), and values for
#: named (topic, partition)s, which win over it.
PartitionBound = tuple[int | None, dict[tuple[str, int], int]]


def _text(spec: Any, what: str, timestamps: bool) -> str | None:
    """A bound as the core takes it: the text of a Spark option (a number, ``earliest`` or
    ``latest``, or JSON per partition); Python values (an int, a datetime for timestamps, a
    mapping ``{"topic": {"0": value}}``) are written as such."""
    if spec is None or isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        out: dict[str, dict[str, Any]] = {}
        for topic, per in spec.items():
            if not isinstance(per, Mapping):
                raise InvalidArgumentError(
                    f'{what}: expected {{"topic": {{"partition": value}}}}, got {spec!r}'
                )
            out[str(topic)] = {
                str(p): (to_millis(v) if timestamps else v) if not isinstance(v, str) else v.strip()
                for p, v in per.items()
            }
        return json.dumps(out)
    if isinstance(spec, bool):
        pass
    elif timestamps and isinstance(spec, int | _dt.datetime):
        return str(to_millis(spec))
    elif isinstance(spec, int):
        return str(spec)
    raise InvalidArgumentError(f"{what}: expected an int or a per-partition mapping, not {spec!r}")


def _bound(j: Mapping[str, Any]) -> PartitionBound:
    return j["every"], {(t, p): v for t, p, v in j["per"]}


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
    #: The bounds as the core holds them.
    json: str = dataclasses.field(default="", compare=False, repr=False)

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
        text = _native.spark_bounds(
            _text(start_offset, "starting offsets", False),
            _text(end_offset, "ending offsets", False),
            _text(start_timestamp, "starting timestamp", True),
            _text(end_timestamp, "ending timestamp", True),
            strategy,
        )
        return cls.from_json(text, require_all=require_all)

    @classmethod
    def from_json(cls, text: str, *, require_all: bool) -> BoundSpec:
        """The bounds the core parsed (``spark_bounds``, or a read's options)."""
        j = json.loads(text)
        strategy: Literal["error", "latest"] = "latest" if j["strategy"] == "latest" else "error"
        return cls(
            _bound(j["start_offset"]),
            _bound(j["end_offset"]),
            _bound(j["start_timestamp"]),
            _bound(j["end_timestamp"]),
            strategy,
            require_all,
            text,
        )

    def check_partitions(self, found: set[tuple[str | None, int | None]]) -> None:
        """Per-partition bounds must name partitions that are there, and (as Spark requires
        of specific offsets) every partition read."""
        bounds = self.json or BoundSpec.make(strategy=self.strategy).json
        _native.spark_check_partitions(bounds, sorted(found, key=str), self.require_all)

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
