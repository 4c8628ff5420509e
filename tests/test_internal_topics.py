"""Kafka's internal topics as tables and in ``kafkalog dump``'s decoders.

The records are checked against a small decoder written here, independently of the Rust
core's tables: one field list per version, transcribed from Kafka's message definitions
(``group-coordinator``, ``transaction-coordinator`` and ``metadata`` JSON files), with Kafka's
JSON conventions (bytes in base64, UUIDs in base64url, tagged fields only when not default).
The same tables encode the synthetic records.
"""

from __future__ import annotations

import base64
import glob
import json
import os
import shutil
import struct
import warnings

import pyarrow as pa
import pytest

import kafkalog
from conftest import CORPUS as CORPUS_ROOT
from kafkalog import _native
from kafkalog.cli import main as cli_main

CORPUS = str(CORPUS_ROOT / "segments")

# ---- an independent decoder: per-version field lists
#
# A field is (name, type) or (name, type, {"null": True}). Types: "i8", "i16", "u16", "i32",
# "i64", "bool", "uuid", "str", "bytes", ["arr", element type], ["struct", [fields]].
# Tagged fields of a version: {tag: (name, type, default)}.


def _f(name, ty, null=False):
    return (name, ty, {"null": null})


OFFSET_COMMIT_KEY = {
    v: [_f("group", "str"), _f("topic", "str"), _f("partition", "i32")] for v in (0, 1)
}
OFFSET_COMMIT_VALUE = {
    0: [_f("offset", "i64"), _f("metadata", "str"), _f("commitTimestamp", "i64")],
    1: [
        _f("offset", "i64"),
        _f("metadata", "str"),
        _f("commitTimestamp", "i64"),
        _f("expireTimestamp", "i64"),
    ],
    2: [_f("offset", "i64"), _f("metadata", "str"), _f("commitTimestamp", "i64")],
    3: [
        _f("offset", "i64"),
        _f("leaderEpoch", "i32"),
        _f("metadata", "str"),
        _f("commitTimestamp", "i64"),
    ],
}
OFFSET_COMMIT_VALUE[4] = OFFSET_COMMIT_VALUE[3]
GROUP_METADATA_KEY = {2: [_f("group", "str")]}


def _member(v):
    fields = [_f("memberId", "str")]
    if v >= 3:
        fields.append(_f("groupInstanceId", "str", True))
    fields += [_f("clientId", "str"), _f("clientHost", "str")]
    if v >= 1:
        fields.append(_f("rebalanceTimeout", "i32"))
    fields += [_f("sessionTimeout", "i32"), _f("subscription", "bytes"), _f("assignment", "bytes")]
    return fields


def _group_value(v):
    fields = [
        _f("protocolType", "str"),
        _f("generation", "i32"),
        _f("protocol", "str", True),
        _f("leader", "str", True),
    ]
    if v >= 2:
        fields.append(_f("currentStateTimestamp", "i64"))
    fields.append(_f("members", ["arr", ["struct", _member(v)]]))
    return fields


GROUP_METADATA_VALUE = {v: _group_value(v) for v in range(5)}
TOPIC_PARTITIONS = ["arr", ["struct", [_f("topic", "str"), _f("partitions", ["arr", "i32"])]]]
SUBSCRIPTION = {
    0: [_f("topics", ["arr", "str"]), _f("userData", "bytes", True)],
    1: [
        _f("topics", ["arr", "str"]),
        _f("userData", "bytes", True),
        _f("ownedPartitions", TOPIC_PARTITIONS),
    ],
}
SUBSCRIPTION[2] = SUBSCRIPTION[1] + [_f("generationId", "i32")]
SUBSCRIPTION[3] = SUBSCRIPTION[2] + [_f("rackId", "str", True)]
ASSIGNMENT = {
    v: [_f("assignedPartitions", TOPIC_PARTITIONS), _f("userData", "bytes", True)] for v in range(4)
}
TXN_KEY = {0: [_f("transactionalId", "str")]}
_TXN_FIELDS = [
    _f("producerId", "i64"),
    _f("producerEpoch", "i16"),
    _f("transactionTimeoutMs", "i32"),
    _f("transactionStatus", "i8"),
    _f(
        "transactionPartitions",
        ["arr", ["struct", [_f("topic", "str"), _f("partitionIds", ["arr", "i32"])]]],
        True,
    ),
    _f("transactionLastUpdateTimestampMs", "i64"),
    _f("transactionStartTimestampMs", "i64"),
]
TXN_VALUE = {0: _TXN_FIELDS, 1: _TXN_FIELDS}
TXN_VALUE_TAGS = {
    1: {
        0: ("previousProducerId", "i64", -1),
        1: ("nextProducerId", "i64", -1),
        2: ("clientTransactionVersion", "i16", 0),
    }
}
# Where tagged fields sit among the others in Kafka's JSON (declaration order).
TXN_ORDER = [
    "producerId",
    "previousProducerId",
    "nextProducerId",
    "producerEpoch",
    "transactionTimeoutMs",
    "transactionStatus",
    "transactionPartitions",
    "transactionLastUpdateTimestampMs",
    "transactionStartTimestampMs",
    "clientTransactionVersion",
]

_ENDPOINT = [
    "arr",
    [
        "struct",
        [_f("name", "str"), _f("host", "str"), _f("port", "u16"), _f("securityProtocol", "i16")],
    ],
]
_FEATURES = [
    "arr",
    [
        "struct",
        [_f("name", "str"), _f("minSupportedVersion", "i16"), _f("maxSupportedVersion", "i16")],
    ],
]

# KRaft metadata records: api key -> (name, {version: fields}, {version: tags}, field order).
METADATA = {
    20: ("NoOpRecord", {0: []}, {}, None),
    23: ("BeginTransactionRecord", {0: []}, {0: {0: ("name", ["str?"], None)}}, None),
    24: ("EndTransactionRecord", {0: []}, {}, None),
    12: ("FeatureLevelRecord", {0: [_f("name", "str"), _f("featureLevel", "i16")]}, {}, None),
    2: ("TopicRecord", {0: [_f("name", "str"), _f("topicId", "uuid")]}, {}, None),
    4: (
        "ConfigRecord",
        {
            0: [
                _f("resourceType", "i8"),
                _f("resourceName", "str"),
                _f("name", "str"),
                _f("value", "str", True),
            ]
        },
        {},
        None,
    ),
    21: ("ZkMigrationStateRecord", {0: [_f("zkMigrationState", "i8")]}, {}, None),
    15: (
        "ProducerIdsRecord",
        {0: [_f("brokerId", "i32"), _f("brokerEpoch", "i64"), _f("nextProducerId", "i64")]},
        {},
        None,
    ),
    27: (
        "RegisterControllerRecord",
        {
            0: [
                _f("controllerId", "i32"),
                _f("incarnationId", "uuid"),
                _f("zkMigrationReady", "bool"),
                _f("endPoints", _ENDPOINT),
                _f("features", _FEATURES),
            ]
        },
        {},
        None,
    ),
    0: (
        "RegisterBrokerRecord",
        {
            v: [_f("brokerId", "i32")]
            + ([_f("isMigratingZkBroker", "bool")] if v >= 2 else [])
            + [
                _f("incarnationId", "uuid"),
                _f("brokerEpoch", "i64"),
                _f("endPoints", _ENDPOINT),
                _f("features", _FEATURES),
                _f("rack", "str", True),
                _f("fenced", "bool"),
            ]
            + ([_f("inControlledShutdown", "bool")] if v >= 1 else [])
            for v in range(4)
        },
        {3: {0: ("logDirs", ["arr", "uuid"], "empty")}},
        None,
    ),
    17: (
        "BrokerRegistrationChangeRecord",
        {v: [_f("brokerId", "i32"), _f("brokerEpoch", "i64")] for v in range(3)},
        {
            0: {0: ("fenced", "i8", 0)},
            1: {0: ("fenced", "i8", 0), 1: ("inControlledShutdown", "i8", 0)},
            2: {
                0: ("fenced", "i8", 0),
                1: ("inControlledShutdown", "i8", 0),
                2: ("logDirs", ["arr", "uuid"], "empty"),
            },
        },
        None,
    ),
    3: (
        "PartitionRecord",
        {
            v: [
                _f("partitionId", "i32"),
                _f("topicId", "uuid"),
                _f("replicas", ["arr", "i32"]),
                _f("isr", ["arr", "i32"]),
                _f("removingReplicas", ["arr", "i32"]),
                _f("addingReplicas", ["arr", "i32"]),
                _f("leader", "i32"),
                _f("leaderEpoch", "i32"),
                _f("partitionEpoch", "i32"),
            ]
            + ([_f("directories", ["arr", "uuid"])] if v >= 1 else [])
            for v in range(3)
        },
        {
            v: {0: ("leaderRecoveryState", "i8", 0)}
            | (
                {
                    1: ("eligibleLeaderReplicas", ["arr?", "i32"], None),
                    2: ("lastKnownElr", ["arr?", "i32"], None),
                }
                if v >= 2
                else {}
            )
            for v in range(3)
        },
        [
            "partitionId",
            "topicId",
            "replicas",
            "isr",
            "removingReplicas",
            "addingReplicas",
            "leader",
            "leaderRecoveryState",
            "leaderEpoch",
            "partitionEpoch",
            "directories",
            "eligibleLeaderReplicas",
            "lastKnownElr",
        ],
    ),
    5: (
        "PartitionChangeRecord",
        {v: [_f("partitionId", "i32"), _f("topicId", "uuid")] for v in range(3)},
        {
            v: {
                0: ("isr", ["arr?", "i32"], None),
                1: ("leader", "i32", -2),
                2: ("replicas", ["arr?", "i32"], None),
                3: ("removingReplicas", ["arr?", "i32"], None),
                4: ("addingReplicas", ["arr?", "i32"], None),
                5: ("leaderRecoveryState", "i8", -1),
            }
            | ({8: ("directories", ["arr?", "uuid"], None)} if v >= 1 else {})
            | (
                {
                    6: ("eligibleLeaderReplicas", ["arr?", "i32"], None),
                    7: ("lastKnownElr", ["arr?", "i32"], None),
                }
                if v >= 2
                else {}
            )
            for v in range(3)
        },
        [
            "partitionId",
            "topicId",
            "isr",
            "leader",
            "replicas",
            "removingReplicas",
            "addingReplicas",
            "leaderRecoveryState",
            "directories",
            "eligibleLeaderReplicas",
            "lastKnownElr",
        ],
    ),
}


class _Buf:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("short")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7


def _uuid(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def _read(buf: _Buf, ty, flexible: bool, nullable: bool = False):
    if isinstance(ty, list) and ty[0] == "str?":
        return _read(buf, "str", flexible, True)
    if isinstance(ty, list) and ty[0] == "arr?":
        return _read(buf, ["arr", ty[1]], flexible, True)
    if ty == "i8":
        return buf.unpack(">b")
    if ty == "i16":
        return buf.unpack(">h")
    if ty == "u16":
        return buf.unpack(">H")
    if ty == "i32":
        return buf.unpack(">i")
    if ty == "i64":
        return buf.unpack(">q")
    if ty == "bool":
        return buf.take(1) != b"\0"
    if ty == "uuid":
        return _uuid(buf.take(16))
    if ty in ("str", "bytes"):
        if flexible:
            n = buf.uvarint() - 1
        else:
            n = buf.unpack(">h" if ty == "str" else ">i")
        if n < 0:
            assert nullable
            return None
        raw = buf.take(n)
        return raw.decode() if ty == "str" else base64.b64encode(raw).decode()
    if ty[0] == "arr":
        n = buf.uvarint() - 1 if flexible else buf.unpack(">i")
        if n < 0:
            assert nullable
            return None
        return [_read(buf, ty[1], flexible) for _ in range(n)]
    if ty[0] == "struct":
        return _read_fields(buf, ty[1], flexible, {}, None)
    raise AssertionError(ty)


def _read_fields(buf, fields, flexible, tags, order):
    out = {}
    for name, ty, opts in fields:
        out[name] = _read(buf, ty, flexible, opts["null"])
    if flexible:
        for _ in range(buf.uvarint()):
            tag, size = buf.uvarint(), buf.uvarint()
            raw = buf.take(size)
            if tag in tags:
                name, ty, default = tags[tag]
                value = _read(_Buf(raw), ty, True)
                if not (value == default or (default == "empty" and value == [])):
                    out[name] = value
    if order:
        out = {k: out[k] for k in order if k in out}
    return out


def decode_versioned(raw: bytes, table, flexible_from, tags=None, order=None):
    buf = _Buf(raw)
    version = buf.unpack(">h")
    data = _read_fields(
        buf, table[version], version >= flexible_from, (tags or {}).get(version, {}), order
    )
    return version, data


def decode_group_record(key: bytes, value: bytes | None):
    rtype, k = decode_versioned(
        key, OFFSET_COMMIT_KEY if key[:2] in (b"\0\0", b"\0\1") else GROUP_METADATA_KEY, 99
    )
    if value is None:
        return rtype, k, None, None
    if rtype in (0, 1):
        version, v = decode_versioned(value, OFFSET_COMMIT_VALUE, 4)
    else:
        version, v = decode_versioned(value, GROUP_METADATA_VALUE, 4)
        if v["protocolType"] == "consumer":
            for m in v["members"]:
                for name, table in (("subscription", SUBSCRIPTION), ("assignment", ASSIGNMENT)):
                    raw = base64.b64decode(m[name])
                    m[name] = decode_versioned(raw, table, 99)[1]
    return rtype, k, version, v


def decode_metadata_record(value: bytes):
    buf = _Buf(value)
    assert buf.uvarint() == 1
    api, version = buf.uvarint(), buf.uvarint()
    name, versions, tags, order = METADATA[api]
    data = _read_fields(buf, versions[version], True, tags.get(version, {}), order)
    assert buf.pos == len(value)
    return name, version, data


# ---- the encoder for synthetic records (same tables)


def _w(ty, value, flexible, nullable=False) -> bytes:
    if ty == "i8":
        return struct.pack(">b", value)
    if ty == "i16":
        return struct.pack(">h", value)
    if ty == "i32":
        return struct.pack(">i", value)
    if ty == "i64":
        return struct.pack(">q", value)
    if ty in ("str", "bytes"):
        if value is None:
            return b"\0" if flexible else (b"\xff\xff" if ty == "str" else b"\xff\xff\xff\xff")
        raw = value.encode() if ty == "str" else value
        return (
            _uvarint(len(raw) + 1)
            if flexible
            else struct.pack(">h" if ty == "str" else ">i", len(raw))
        ) + raw
    if ty[0] == "arr":
        if value is None:
            return b"\0" if flexible else b"\xff\xff\xff\xff"
        head = _uvarint(len(value) + 1) if flexible else struct.pack(">i", len(value))
        return head + b"".join(_w(ty[1], x, flexible) for x in value)
    if ty[0] == "struct":
        return _w_fields(ty[1], value, flexible, {})
    raise AssertionError(ty)


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _w_fields(fields, values, flexible, tagged: dict[int, bytes]) -> bytes:
    out = b"".join(_w(ty, values[name], flexible, opts["null"]) for name, ty, opts in fields)
    if flexible:
        out += _uvarint(len(tagged))
        for tag in sorted(tagged):
            out += _uvarint(tag) + _uvarint(len(tagged[tag])) + tagged[tag]
    return out


def commit_key(group, topic, partition, version=1) -> bytes:
    return struct.pack(">h", version) + _w_fields(
        OFFSET_COMMIT_KEY[version],
        {"group": group, "topic": topic, "partition": partition},
        False,
        {},
    )


def commit_value(version, tagged=None, **values) -> bytes:
    values.setdefault("metadata", "")
    return struct.pack(">h", version) + _w_fields(
        OFFSET_COMMIT_VALUE[version], values, version >= 4, tagged or {}
    )


def txn_key(tid: str) -> bytes:
    return struct.pack(">h", 0) + _w_fields(TXN_KEY[0], {"transactionalId": tid}, False, {})


def txn_value(version, tagged=None, **values) -> bytes:
    return struct.pack(">h", version) + _w_fields(
        TXN_VALUE[version], values, version >= 1, tagged or {}
    )


def write_topic(root, topic, partition, records, timestamps=None):
    """Writes (key, value) records as a partition directory with kafkalog.write."""
    n = len(records)
    table = pa.table(
        {
            "key": pa.array([k for k, _ in records], pa.binary()),
            "value": pa.array([v for _, v in records], pa.binary()),
            "timestamp": pa.array(
                timestamps or [1_700_000_000_000 + i for i in range(n)], pa.timestamp("ms", "UTC")
            ),
        }
    )
    path = os.path.join(str(root), f"{topic}-{partition}")
    kafkalog.write(path, table, batch_records=3)
    return path


def _records(path):
    for batch in kafkalog.read(path, columns=["key", "value", "offset", "partition"]):
        yield from zip(
            batch["key"].to_pylist(),
            batch["value"].to_pylist(),
            batch["offset"].to_pylist(),
            batch["partition"].to_pylist(),
            strict=True,
        )


def _corpus_dirs(pattern):
    return sorted(
        {os.path.dirname(f) for f in glob.glob(f"{CORPUS}/**/{pattern}/*.log", recursive=True)}
    )


OFFSETS_DIRS = _corpus_dirs("__consumer_offsets-*")
METADATA_DIRS = _corpus_dirs("__cluster_metadata-*")


# ---- the real corpus


def test_corpus_has_internal_topics():
    assert len(OFFSETS_DIRS) >= 10
    assert len(METADATA_DIRS) >= 2


@pytest.mark.parametrize("path", OFFSETS_DIRS, ids=lambda p: os.path.relpath(p, CORPUS))
def test_corpus_consumer_offsets_records_decode(path):
    count = 0
    for key, value, _offset, _ in _records(path):
        got = json.loads(_native.decode_internal_record("__consumer_offsets", key, value))
        rtype, k, version, v = decode_group_record(key, value)
        assert got["key"]["version"] == rtype
        assert got["key"]["data"] == k
        if value is None:
            assert got["value"] is None
        else:
            assert got["value"]["version"] == version
            assert got["value"]["data"] == v
        count += 1
    assert count > 0


@pytest.mark.parametrize("path", METADATA_DIRS, ids=lambda p: os.path.relpath(p, CORPUS))
def test_corpus_cluster_metadata_records_decode(path):
    table = kafkalog.cluster_metadata(path)
    rows = table.to_pylist()
    expected = [(o, decode_metadata_record(v)) for _, v, o, _ in _records(path)]
    assert len(rows) == len(expected) > 0
    for row, (offset, (name, version, data)) in zip(rows, expected, strict=True):
        assert row["offset"] == offset
        assert (row["type"], row["version"]) == (name, version)
        assert json.loads(row["data"]) == data
        assert row["raw"] is None


def _expected_offsets(paths):
    latest = {}
    for path in paths:
        for key, value, offset, partition in _records(path):
            rtype, k, _, v = decode_group_record(key, value)
            if rtype not in (0, 1):
                continue
            ident = (k["group"], k["topic"], k["partition"])
            if v is None:
                latest.pop(ident, None)
            else:
                latest[ident] = (
                    v["offset"],
                    v["commitTimestamp"],
                    v.get("expireTimestamp"),
                    partition,
                    offset,
                )
    return latest


@pytest.mark.parametrize(
    "logdir",
    sorted({os.path.dirname(p) for p in OFFSETS_DIRS}),
    ids=lambda p: os.path.relpath(p, CORPUS),
)
def test_corpus_consumer_offsets_table(logdir):
    table = kafkalog.consumer_offsets(logdir)
    expected = _expected_offsets([p for p in OFFSETS_DIRS if os.path.dirname(p) == logdir])
    got = {
        (r["group"], r["topic"], r["partition"]): (
            r["offset"],
            int(r["commitTimestamp"].timestamp() * 1000),
            None if r["expireTimestamp"] is None else int(r["expireTimestamp"].timestamp() * 1000),
            r["sourcePartition"],
            r["sourceOffset"],
        )
        for r in table.to_pylist()
    }
    assert got == expected


def test_corpus_consumer_groups():
    logdir = f"{CORPUS}/KAIPASUBHASH__kafka-logs"
    groups = {g["group"]: g for g in kafkalog.consumer_groups(logdir).to_pylist()}
    assert set(groups) == {
        "console-consumer-23934",
        "console-consumer-30598",
        "console-consumer-70224",
    }
    for g in groups.values():
        assert g["type"] == "classic"
        assert g["protocolType"] == "consumer"
        # The last record of each is a GroupMetadata with no members: the group is Empty.
        assert g["state"] == "Empty" and g["members"] == []
    # The first record of console-consumer-70224 had one member, subscribed to TestTopic.
    first = next(
        _records(f"{logdir}/__consumer_offsets-26"),
    )
    _, _, _, v = decode_group_record(first[0], first[1])
    assert v["members"][0]["subscription"]["topics"] == ["TestTopic"]


# ---- synthetic __consumer_offsets


@pytest.fixture
def offsets_dir(tmp_path):
    records = [
        # v1 with an expire timestamp, then a later v3 commit with a leader epoch wins.
        (
            commit_key("g1", "orders", 0),
            commit_value(1, offset=5, commitTimestamp=1000, expireTimestamp=9000),
        ),
        (
            commit_key("g1", "orders", 0),
            commit_value(3, offset=7, leaderEpoch=4, metadata="m", commitTimestamp=2000),
        ),
        # A commit, then its tombstone.
        (commit_key("g1", "orders", 1), commit_value(0, offset=3, commitTimestamp=1500)),
        (commit_key("g1", "orders", 1), None),
        # Flexible v4 with an unknown tagged field (skipped, as Kafka skips it).
        (
            commit_key("g2", "orders", 0, version=0),
            commit_value(4, {7: b"\x01\x02"}, offset=11, leaderEpoch=-1, commitTimestamp=3000),
        ),
        # v2: neither leader epoch nor expire timestamp.
        (commit_key("g2", "orders", 1), commit_value(2, offset=1, commitTimestamp=3100)),
    ]
    root = tmp_path / "logs"
    root.mkdir()
    write_topic(root, "__consumer_offsets", 3, records)
    # The data partition the commits are on: its log end offset gives the lag.
    write_topic(root, "orders", 0, [(None, b"x")] * 10)
    return root


def test_latest_commit_wins_and_tombstones_delete(offsets_dir):
    rows = kafkalog.consumer_offsets(offsets_dir).to_pylist()
    got = {(r["group"], r["topic"], r["partition"]): r for r in rows}
    assert sorted(got) == [("g1", "orders", 0), ("g2", "orders", 0), ("g2", "orders", 1)]
    g1 = got[("g1", "orders", 0)]
    assert (g1["offset"], g1["leaderEpoch"], g1["metadata"]) == (7, 4, "m")
    assert g1["expireTimestamp"] is None
    assert int(g1["commitTimestamp"].timestamp() * 1000) == 2000
    assert (g1["sourcePartition"], g1["sourceOffset"]) == (3, 1)
    assert (g1["logEndOffset"], g1["lag"]) == (10, 3)
    g2 = got[("g2", "orders", 0)]
    assert (g2["offset"], g2["leaderEpoch"], g2["lag"]) == (11, None, -1)
    assert got[("g2", "orders", 1)]["logEndOffset"] is None  # orders-1 is not in the backup


def test_internal_table_loads_paths_in_one_core_call(offsets_dir):
    """The table comes from the core in one call, paths to table (discovery, reads, fold and
    log ends), the same table the public function returns."""
    batch, issues = _native.internal_table(
        "consumer_offsets", "__consumer_offsets", str(offsets_dir), log_ends=True
    )
    assert issues == []
    table = pa.Table.from_batches([pa.record_batch(batch)])
    assert table.equals(kafkalog.consumer_offsets(offsets_dir))
    without_ends, _ = _native.internal_table(
        "consumer_offsets", "__consumer_offsets", str(offsets_dir)
    )
    assert pa.record_batch(without_ends).column("logEndOffset").null_count == 3


def test_history_keeps_every_commit(offsets_dir):
    rows = kafkalog.consumer_offsets(offsets_dir, history=True).to_pylist()
    assert [(r["group"], r["partition"], r["offset"], r["deleted"]) for r in rows] == [
        ("g1", 0, 5, False),
        ("g1", 0, 7, False),
        ("g1", 1, 3, False),
        ("g1", 1, None, True),
        ("g2", 0, 11, False),
        ("g2", 1, 1, False),
    ]
    first = rows[0]
    assert int(first["expireTimestamp"].timestamp() * 1000) == 9000
    assert first["leaderEpoch"] is None
    assert rows[3]["sourceOffset"] == 3


def test_expiry(offsets_dir):
    # v1's explicit expire timestamp: expired at and after it.
    rows = kafkalog.consumer_offsets(offsets_dir, history=True, as_of=9000).to_pylist()
    assert rows[0]["expired"] is True
    rows = kafkalog.consumer_offsets(offsets_dir, history=True, as_of=8999).to_pylist()
    assert rows[0]["expired"] is False
    # No group metadata: retention counts from the commit.
    rows = kafkalog.consumer_offsets(offsets_dir, as_of=2500, retention_ms=500).to_pylist()
    assert {(r["group"], r["partition"]): r["expired"] for r in rows} == {
        ("g1", 0): True,
        ("g2", 0): False,
        ("g2", 1): False,
    }


def _group_value(members, version=3) -> bytes:
    """A classic consumer group's GroupMetadataValue with members (id, topic, partitions)."""
    encoded = []
    for member_id, topic, partitions in members:
        subscription = struct.pack(">h", 0) + _w_fields(
            SUBSCRIPTION[0], {"topics": [topic], "userData": None}, False, {}
        )
        assignment = struct.pack(">h", 0) + _w_fields(
            ASSIGNMENT[0],
            {"assignedPartitions": [{"topic": topic, "partitions": partitions}], "userData": b""},
            False,
            {},
        )
        encoded.append(
            {
                "memberId": member_id,
                "groupInstanceId": None,
                "clientId": "client-" + member_id,
                "clientHost": "/10.0.0.1",
                "rebalanceTimeout": 300000,
                "sessionTimeout": 45000,
                "subscription": subscription,
                "assignment": assignment,
            }
        )
    values = {
        "protocolType": "consumer",
        "generation": 4,
        "protocol": "range",
        "leader": members[0][0] if members else None,
        "currentStateTimestamp": 1234,
        "members": encoded,
    }
    return struct.pack(">h", version) + _w_fields(
        GROUP_METADATA_VALUE[version], values, version >= 4, {}
    )


def _group_key(group: str) -> bytes:
    return struct.pack(">h", 2) + _w_fields(GROUP_METADATA_KEY[2], {"group": group}, False, {})


def test_offsets_command(offsets_dir, capsys):
    assert cli_main(["offsets", str(offsets_dir), "--group", "g1"]) == 0
    captured = capsys.readouterr()
    out = captured.out.split("\n")
    # As kafka-consumer-groups --describe: a blank line, the header, the rows, a blank line.
    assert out[0] == ""
    assert out[1].split() == [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ]
    assert out[1].startswith("GROUP           TOPIC           PARTITION  CURRENT-OFFSET  ")
    assert out[2].split() == ["g1", "orders", "0", "7", "10", "3", "-", "-", "-"]
    assert out[3:] == ["", ""]
    assert "Consumer group 'g1' has no active members." in captured.err
    # A group that is not there is a bad argument (2), not corrupt data (1).
    assert cli_main(["offsets", str(offsets_dir), "--group", "nope"]) == 2
    assert "The consumer group 'nope' does not exist" in capsys.readouterr().err


def test_offsets_command_json_is_typed(offsets_dir, capsys):
    assert cli_main(["offsets", str(offsets_dir), "--group", "g1", "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row == {
        "group": "g1",
        "topic": "orders",
        "partition": 0,
        "currentOffset": 7,
        "logEndOffset": 10,
        "lag": 3,
        "consumerId": None,
        "host": None,
        "clientId": None,
    }


def test_offsets_command_without_groups_says_so(tmp_path, capsys):
    root = tmp_path / "logs"
    root.mkdir()
    write_topic(root, "orders", 0, [(None, b"x")] * 3)
    assert cli_main(["offsets", str(root)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no consumer group" in captured.err


def test_offsets_command_warns_once(offsets_dir, tmp_path, capsys):
    root = tmp_path / "copy"
    shutil.copytree(offsets_dir, root)
    for index in root.rglob("*.index"):
        index.unlink()
    assert cli_main(["offsets", str(root), "--group", "g1"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning")]
    assert warned and len(warned) == len(set(warned)), warned


def test_consumer_groups_and_offsets_with_members(tmp_path, capsys):
    records = [
        (
            commit_key("pay", "orders", 0),
            commit_value(3, offset=4, leaderEpoch=0, commitTimestamp=10),
        ),
        (_group_key("pay"), _group_value([("m-1", "orders", [0, 1])])),
        (_group_key("gone"), _group_value([("m-2", "orders", [0])])),
        (_group_key("gone"), None),
    ]
    root = tmp_path / "logs"
    root.mkdir()
    write_topic(root, "__consumer_offsets", 0, records)
    write_topic(root, "orders", 0, [(None, b"x")] * 6)
    (group,) = kafkalog.consumer_groups(root).to_pylist()
    assert (group["group"], group["state"], group["generation"], group["protocol"]) == (
        "pay",
        "Stable",
        4,
        "range",
    )
    (member,) = group["members"]
    assert member["memberId"] == "m-1" and member["clientId"] == "client-m-1"
    assert member["topics"] == ["orders"] and member["assignment"] == ["orders-0", "orders-1"]
    assert int(group["currentStateTimestamp"].timestamp() * 1000) == 1234
    # The group is not empty: its commits do not expire.
    (commit,) = kafkalog.consumer_offsets(root, as_of=10**13).to_pylist()
    assert commit["expired"] is False
    assert cli_main(["offsets", str(root), "--group", "pay"]) == 0
    captured = capsys.readouterr()
    rows = [line.split() for line in captured.out.splitlines()[2:] if line]
    assert rows == [
        ["pay", "orders", "0", "4", "6", "2", "m-1", "/10.0.0.1", "client-m-1"],
        ["pay", "orders", "1", "-", "-", "-", "m-1", "/10.0.0.1", "client-m-1"],
    ]
    assert "no active members" not in captured.err


def test_dump_offsets_decoder_lines(offsets_dir, capsys):
    log = f"{offsets_dir}/__consumer_offsets-3/00000000000000000000.log"
    assert cli_main(["dump", "--files", log, "--offsets-decoder"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    tails = [line[line.index(" key: ") + 1 :] for line in lines]
    assert tails == [
        'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":0}} payload: '
        '{"version":"1","data":{"offset":5,"metadata":"","commitTimestamp":1000,"expireTimestamp":9000}}',
        'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":0}} payload: '
        '{"version":"3","data":{"offset":7,"leaderEpoch":4,"metadata":"m","commitTimestamp":2000}}',
        'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":1}} payload: '
        '{"version":"0","data":{"offset":3,"metadata":"","commitTimestamp":1500}}',
        'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":1}} payload: <DELETE>',
        'key: {"type":"0","data":{"group":"g2","topic":"orders","partition":0}} payload: '
        '{"version":"4","data":{"offset":11,"leaderEpoch":-1,"metadata":"","commitTimestamp":3000}}',
        'key: {"type":"1","data":{"group":"g2","topic":"orders","partition":1}} payload: '
        '{"version":"2","data":{"offset":1,"metadata":"","commitTimestamp":3100}}',
    ]
    assert lines[0].startswith("| offset: 0 CreateTime: 1700000000000 keySize: ")


def test_dump_offsets_decoder_json(offsets_dir, capsys):
    log = f"{offsets_dir}/__consumer_offsets-3/00000000000000000000.log"
    assert cli_main(["dump", "--files", log, "--offsets-decoder", "--format", "json"]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    records = [r for r in records if r["type"] == "record"]
    assert records[3]["key"]["data"] == {"group": "g1", "topic": "orders", "partition": 1}
    assert records[3]["payload"] is None
    assert records[1]["payload"] == {
        "name": "OffsetCommitValue",
        "version": 3,
        "data": {"offset": 7, "leaderEpoch": 4, "metadata": "m", "commitTimestamp": 2000},
    }


def test_dump_corpus_offsets_decoder_matches_independent_decoder(capsys):
    log = f"{CORPUS}/KAIPASUBHASH__kafka-logs/__consumer_offsets-26/00000000000000000000.log"
    assert cli_main(["dump", "--files", log, "--offsets-decoder"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    records = list(_records(log))
    assert len(lines) == len(records)
    for line, (key, value, _, _) in zip(lines, records, strict=True):
        rtype, k, version, v = decode_group_record(key, value)
        key_json = json.dumps({"type": str(rtype), "data": k}, separators=(",", ":"))
        payload = (
            "<DELETE>"
            if v is None
            else json.dumps({"version": str(version), "data": v}, separators=(",", ":"))
        )
        assert line.endswith(f" key: {key_json} payload: {payload}")


# ---- unknown types and corrupt records


def test_unknown_record_type_is_a_warning(tmp_path):
    path = write_topic(
        tmp_path,
        "__consumer_offsets",
        0,
        [
            (struct.pack(">h", 77) + b"future", b"\x00\x00abc"),
            (commit_key("g", "t", 0), b"\x00\x09" + b"\0" * 20),  # value version 9
            (
                commit_key("g", "t", 0),
                commit_value(1, offset=1, commitTimestamp=1, expireTimestamp=2),
            ),
        ],
    )
    with pytest.warns(kafkalog.UndecodedRecordWarning) as caught:
        table = kafkalog.consumer_offsets(path)
    assert table.num_rows == 1
    messages = [str(w.message) for w in caught]
    assert any("record type 77" in m for m in messages)
    assert any("version 9" in m for m in messages)
    first = next(w.message for w in caught if "77" in str(w.message))
    assert (
        first.key == struct.pack(">h", 77) + b"future" and first.offset == 0 and not first.corrupt
    )


def test_corrupt_record_is_a_typed_error(tmp_path):
    bad = commit_value(1, offset=1, commitTimestamp=1, expireTimestamp=2)[:-3]
    path = write_topic(
        tmp_path,
        "__consumer_offsets",
        0,
        [(commit_key("g", "t", 0), commit_value(0, offset=1, commitTimestamp=1))] * 4
        + [(commit_key("g", "t", 1), bad)],
    )
    with pytest.raises(kafkalog.CorruptRecordError) as e:
        kafkalog.consumer_offsets(path)
    assert e.value.offset == 4
    assert e.value.path.endswith("00000000000000000000.log")
    assert e.value.position is not None and e.value.position > 0
    assert "OffsetCommitValue" in str(e.value)
    with pytest.warns(kafkalog.UndecodedRecordWarning) as caught:
        table = kafkalog.consumer_offsets(path, on_corrupt="skip")
    assert table.num_rows == 1
    (w,) = [w.message for w in caught]
    assert w.corrupt and w.value == bad and w.offset == 4


def test_corrupt_metadata_record_skip_keeps_raw_bytes(tmp_path):
    good = b"\x01\x14\x00\x00"  # NoOpRecord v0
    bad = b"\x01\x02\x00\x03ab"  # TopicRecord v0 cut short
    unknown = b"\x01\x63\x00\x00"  # record type 99
    path = write_topic(
        tmp_path, "__cluster_metadata", 0, [(None, good), (None, bad), (None, unknown)]
    )
    with pytest.raises(kafkalog.CorruptRecordError):
        kafkalog.cluster_metadata(path)
    with pytest.warns(kafkalog.UndecodedRecordWarning):
        rows = kafkalog.cluster_metadata(path, on_corrupt="skip").to_pylist()
    assert [(r["type"], r["typeId"], r["raw"]) for r in rows] == [
        ("NoOpRecord", 20, None),
        (None, None, bad),
        (None, 99, unknown),
    ]


# ---- transactions


def test_transactions_and_transaction_log_decoder(tmp_path, capsys):
    parts = [{"topic": "orders", "partitionIds": [0, 2]}, {"topic": "audit", "partitionIds": [1]}]
    common = {
        "producerId": 1000,
        "producerEpoch": 3,
        "transactionTimeoutMs": 60000,
        "transactionLastUpdateTimestampMs": 5000,
        "transactionStartTimestampMs": 4000,
    }
    records = [
        (txn_key("t1"), txn_value(0, transactionStatus=1, transactionPartitions=parts, **common)),
        # v1 (flexible) with tagged previousProducerId and clientTransactionVersion.
        (
            txn_key("t2"),
            txn_value(
                1,
                {0: struct.pack(">q", 999), 2: struct.pack(">h", 2)},
                transactionStatus=4,
                transactionPartitions=[],
                **common,
            ),
        ),
        (txn_key("t3"), txn_value(0, transactionStatus=0, transactionPartitions=parts, **common)),
        (txn_key("t3"), None),
    ]
    path = write_topic(tmp_path, "__transaction_state", 0, records)
    rows = {r["transactionalId"]: r for r in kafkalog.transactions(path).to_pylist()}
    assert sorted(rows) == ["t1", "t2"]
    t1, t2 = rows["t1"], rows["t2"]
    assert (t1["state"], t1["producerId"], t1["producerEpoch"]) == ("Ongoing", 1000, 3)
    assert t1["partitions"] == [
        {"topic": "orders", "partition": 0},
        {"topic": "orders", "partition": 2},
        {"topic": "audit", "partition": 1},
    ]
    assert t1["previousProducerId"] is None
    assert (t2["state"], t2["previousProducerId"], t2["clientTransactionVersion"]) == (
        "CompleteCommit",
        999,
        2,
    )

    # The independent decoder agrees with the JSON of every record.
    for key, value, _, _ in _records(path):
        got = json.loads(_native.decode_internal_record("__transaction_state", key, value))
        assert got["key"]["data"] == decode_versioned(key, TXN_KEY, 99)[1]
        if value is not None:
            assert (
                got["value"]["data"]
                == decode_versioned(value, TXN_VALUE, 1, TXN_VALUE_TAGS, TXN_ORDER)[1]
            )

    log = f"{path}/00000000000000000000.log"
    assert cli_main(["dump", "--files", log, "--transaction-log-decoder"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| ")]
    tails = [x[x.index(" key: ") + 1 :] for x in lines]
    assert tails == [
        "key: transaction_metadata::transactionalId=t1 payload: producerId:1000,producerEpoch:3,"
        "state=Ongoing,partitions=[orders-0,orders-2,audit-1],txnLastUpdateTimestamp=5000,txnTimeoutMs=60000",
        "key: transaction_metadata::transactionalId=t2 payload: producerId:1000,producerEpoch:3,"
        "state=CompleteCommit,partitions=[],txnLastUpdateTimestamp=5000,txnTimeoutMs=60000",
        # An Empty transaction's partitions are not loaded.
        "key: transaction_metadata::transactionalId=t3 payload: producerId:1000,producerEpoch:3,"
        "state=Empty,partitions=[],txnLastUpdateTimestamp=5000,txnTimeoutMs=60000",
        "key: transaction_metadata::transactionalId=t3 payload: <DELETE>",
    ]


# ---- cluster metadata


def test_cluster_metadata_dump_lines_match_independent_decoder(capsys):
    log = (
        f"{CORPUS}/nomanazeem__Kafka-java/kafka-logs/__cluster_metadata-0/00000000000000000000.log"
    )
    assert cli_main(["dump", "--files", log, "--cluster-metadata-decoder"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if " payload: " in x]
    records = [v for _, v, _, _ in _records(log)]
    assert len(lines) == len(records) > 2000
    for line, value in zip(lines, records, strict=True):
        name, version, data = decode_metadata_record(value)
        constant = "".join("_" + c if c.isupper() and i else c for i, c in enumerate(name)).upper()
        expected = json.dumps(
            {"type": constant, "version": version, "data": data}, separators=(",", ":")
        )
        assert line.endswith(" payload: " + expected), line
    topic_lines = [x for x in lines if "TOPIC_RECORD" in x]
    assert topic_lines and '"topicId":"' in topic_lines[0]


def test_dump_decodes_kraft_control_records(tmp_path, capsys):
    from kafka_builders import control_batch

    directory = bytes(range(16))
    # The values as Kafka's definitions lay them out (clients' SnapshotHeaderRecord,
    # KRaftVersionRecord, VotersRecord, LeaderChangeMessage, SnapshotFooterRecord; version 0,
    # flexible: compact arrays and strings, a tagged-field section after every struct).
    values = {
        3: struct.pack(">hq", 0, 1_700_000_000_123) + b"\0",
        5: struct.pack(">hh", 0, 1) + b"\0",
        6: struct.pack(">h", 0)
        + _uvarint(2)
        + struct.pack(">i", 1)
        + directory
        + _uvarint(2)
        + _cstr("CONTROLLER")
        + _cstr("localhost")
        + struct.pack(">H", 9093)
        + b"\0"
        + struct.pack(">hh", 0, 1)
        + b"\0"
        + b"\0"
        + b"\0",
        2: struct.pack(">hi", 0, 1) + (_uvarint(2) + struct.pack(">i", 1) + b"\0") * 2 + b"\0",
        4: struct.pack(">h", 0) + b"\0",
    }
    batches = [
        control_batch(
            i, t, producer_id=-1, producer_epoch=-1, timestamp=1, value=v, transactional=False
        ).data
        for i, (t, v) in enumerate(values.items())
    ]
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(batches))
    voter = _uuid(directory)
    expected = [
        'SnapshotHeader {"version":0,"lastContainedLogTimestamp":1700000000123}',
        'KRaftVersion {"version":0,"kRaftVersion":1}',
        f'KRaftVoters {{"version":0,"voters":[{{"voterId":1,"voterDirectoryId":"{voter}",'
        '"endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}',
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
        '"grantingVoters":[{"voterId":1}]}',
        'SnapshotFooter {"version":0}',
    ]
    # Kafka's DumpLogSegments prints them so whatever the decoder.
    for options in (["--cluster-metadata-decoder"], ["--deep-iteration"]):
        assert cli_main(["dump", "--files", str(log), *options]) == 0
        lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| ")]
        assert [x.split(" headerKeys: [] ", 1)[1] for x in lines] == expected


def test_cluster_metadata_snapshot_checkpoint(tmp_path):
    src = (
        f"{CORPUS}/nomanazeem__Kafka-java/kafka-logs/__cluster_metadata-0/00000000000000000000.log"
    )
    snapshot = tmp_path / "00000000000000002067-0000000001.checkpoint"
    shutil.copy(src, snapshot)
    from_file = kafkalog.cluster_metadata(snapshot)
    from_log = kafkalog.cluster_metadata(os.path.dirname(src))
    assert from_file.column("data").to_pylist() == from_log.column("data").to_pylist()
    # A directory holding only a snapshot.
    assert kafkalog.cluster_metadata(tmp_path).num_rows == from_log.num_rows


# ---- remote log metadata


def _framed(api_key: int, body: bytes) -> bytes:
    return b"\x01" + _uvarint(api_key) + b"\x00" + body


def _segment_id(topic: str, topic_id: bytes, partition: int, seg: bytes) -> bytes:
    tp = _uvarint(len(topic) + 1) + topic.encode() + topic_id + struct.pack(">i", partition) + b"\0"
    return tp + seg + b"\0"


def test_remote_log_metadata(tmp_path, capsys):
    topic_id, seg = bytes(range(16)), bytes(range(16, 32))
    sid = _segment_id("orders", topic_id, 2, seg)
    created = _framed(
        0,
        sid
        + struct.pack(">qqiqq", 100, 199, 7, 5000, 6000)
        + _uvarint(2)
        + struct.pack(">iq", 3, 100)
        + b"\0"
        + struct.pack(">i", 4096)
        + b"\0"  # customMetadata: null
        + struct.pack(">b", 0)
        + b"\0",
    )
    finished = _framed(1, sid + struct.pack(">iq", 8, 7000) + b"\0" + struct.pack(">b", 1) + b"\0")
    path = write_topic(tmp_path, "__remote_log_metadata", 0, [(None, created), (None, finished)])
    (row,) = kafkalog.remote_log_metadata(path).to_pylist()
    assert (row["topic"], row["partition"], row["startOffset"], row["endOffset"]) == (
        "orders",
        2,
        100,
        199,
    )
    assert row["state"] == "COPY_SEGMENT_FINISHED"
    assert row["brokerId"] == 8 and row["segmentSizeInBytes"] == 4096
    assert row["topicId"] == _uuid(topic_id) and row["segmentId"] == _uuid(seg)
    history = kafkalog.remote_log_metadata(path, history=True).to_pylist()
    assert [r["type"] for r in history] == [
        "RemoteLogSegmentMetadataRecord",
        "RemoteLogSegmentMetadataUpdateRecord",
    ]
    assert json.loads(history[0]["data"])["segmentLeaderEpochs"] == [
        {"leaderEpoch": 3, "offset": 100}
    ]
    log = f"{path}/00000000000000000000.log"
    assert cli_main(["dump", "--files", log, "--remote-log-metadata-decoder"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if " payload: " in x]
    sid_text = f"RemoteLogSegmentId{{topicIdPartition={_uuid(topic_id)}:orders-2, id={_uuid(seg)}}}"
    # As kafka-dump-log prints them: the toString of Kafka's remote log metadata objects.
    assert lines[0].endswith(
        f" payload: RemoteLogSegmentMetadata{{remoteLogSegmentId={sid_text}, startOffset=100, "
        "endOffset=199, brokerId=7, maxTimestampMs=5000, eventTimestampMs=6000, "
        "segmentLeaderEpochs={3=100}, segmentSizeInBytes=4096, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_STARTED}"
    )
    assert lines[1].endswith(
        f" payload: RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={sid_text}, "
        "customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED, eventTimestampMs=7000, "
        "brokerId=8}"
    )


def test_records_of_kafka_trunk_decode():
    """Fields Kafka added after December 2024, encoded as its trunk's definitions (November
    2025) lay them out."""

    def decoded(topic, key, value):
        return json.loads(_native.decode_internal_record(topic, key, value))["value"]

    def s16(text):  # a non-flexible (int16-length) string
        return struct.pack(">h", len(text)) + text.encode()

    topic_id = bytes(range(16))
    # OffsetCommitValue v4: topicId, tag 0.
    value = (
        struct.pack(">hqi", 4, 10, 2) + _cstr("m") + struct.pack(">q", 1000) + _tags({0: topic_id})
    )
    got = decoded("__consumer_offsets", commit_key("g", "t", 0), value)
    assert got["data"] == {
        "offset": 10,
        "leaderEpoch": 2,
        "metadata": "m",
        "commitTimestamp": 1000,
        "topicId": _uuid(topic_id),
    }
    # ConsumerGroupMetadataValue (type 3): metadataHash, tag 0.
    value = struct.pack(">hi", 0, 7) + _tags({0: struct.pack(">q", 99)})
    got = decoded("__consumer_offsets", struct.pack(">h", 3) + s16("g"), value)
    assert got["data"] == {"epoch": 7, "metadataHash": 99}
    # ShareGroupMetadataValue (type 11): metadataHash, a plain field.
    value = struct.pack(">hiq", 0, 5, 42) + _tags({})
    got = decoded("__consumer_offsets", struct.pack(">h", 11) + s16("sg"), value)
    assert got["data"] == {"epoch": 5, "metadataHash": 42}
    # StreamsGroupMetadataValue (type 17): metadataHash, then validatedTopologyEpoch (tag 0)
    # and lastAssignmentConfigs (tag 1, compact array of key/value structs).
    configs = _uvarint(2) + _cstr("num.standby.replicas") + _cstr("1") + _tags({})
    value = struct.pack(">hiq", 0, 3, 8) + _tags({0: struct.pack(">i", 2), 1: configs})
    got = decoded("__consumer_offsets", struct.pack(">h", 17) + s16("st"), value)
    assert got["data"] == {
        "epoch": 3,
        "metadataHash": 8,
        "validatedTopologyEpoch": 2,
        "lastAssignmentConfigs": [{"key": "num.standby.replicas", "value": "1"}],
    }
    # TransactionLogValue v1: nextProducerEpoch, tag 3.
    value = txn_value(
        1,
        {3: struct.pack(">h", 6)},
        producerId=1,
        producerEpoch=5,
        transactionTimeoutMs=60000,
        transactionStatus=4,
        transactionPartitions=[],
        transactionLastUpdateTimestampMs=2,
        transactionStartTimestampMs=1,
    )
    got = decoded("__transaction_state", txn_key("tx"), value)
    assert got["data"]["nextProducerEpoch"] == 6


def test_share_group_state_decoder(tmp_path, capsys):
    """``__share_group_state`` records hand-encoded from Kafka's share-coordinator definitions
    (ShareSnapshotKey/Value type 0, ShareUpdateKey/Value type 1), printed as Kafka's
    ``--share-group-state-decoder`` prints them."""
    topic_id = bytes([6] * 16)

    def key(record_type: int) -> bytes:
        return struct.pack(">hh", record_type, 2) + b"sg" + topic_id + struct.pack(">i", 4)

    batch = struct.pack(">qqbh", 100, 109, 2, 1) + _tags({})
    snapshot = (
        struct.pack(">hiiiq", 0, 1, 2, 3, 100)
        + struct.pack(">qq", 1000, 2000)
        + _uvarint(2)
        + batch
        + _tags({0: struct.pack(">i", 5)})
    )
    update = struct.pack(">hiiq", 0, 1, 3, 110) + _uvarint(1) + _tags({})
    records = [(key(0), snapshot), (key(1), update), (key(1), None)]
    path = write_topic(tmp_path, "__share_group_state", 0, records)
    log = f"{path}/00000000000000000000.log"
    assert cli_main(["dump", "--files", log, "--share-group-state-decoder"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| ")]
    tails = [x[x.index(" key: ") + 1 :] for x in lines]
    tp = f'"groupId":"sg","topicId":"{_uuid(topic_id)}","partition":4'
    assert tails == [
        f'key: {{"type":"0","data":{{{tp}}}}} payload: {{"version":"0","data":{{'
        '"snapshotEpoch":1,"stateEpoch":2,"leaderEpoch":3,"startOffset":100,'
        '"deliveryCompleteCount":5,"createTimestamp":1000,"writeTimestamp":2000,'
        '"stateBatches":[{"firstOffset":100,"lastOffset":109,"deliveryState":2,'
        '"deliveryCount":1}]}}',
        f'key: {{"type":"1","data":{{{tp}}}}} payload: {{"version":"0","data":{{'
        '"snapshotEpoch":1,"leaderEpoch":3,"startOffset":110,"stateBatches":[]}}',
        f'key: {{"type":"1","data":{{{tp}}}}} payload: <DELETE>',
    ]
    got = json.loads(_native.decode_internal_record("__share_group_state", key(1), update))
    assert got["key"]["name"] == "ShareUpdateKey" and got["value"]["name"] == "ShareUpdateValue"


def test_issues_do_not_leak_between_calls(offsets_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kafkalog.consumer_offsets(offsets_dir)
        kafkalog.consumer_groups(offsets_dir)


# ---- cluster state


def _cstr(s: str | None) -> bytes:
    return b"\0" if s is None else _uvarint(len(s.encode()) + 1) + s.encode()


def _cints(xs) -> bytes:
    return _uvarint(len(xs) + 1) + b"".join(struct.pack(">i", x) for x in xs)


def _tags(tags: dict[int, bytes]) -> bytes:
    out = _uvarint(len(tags))
    for tag in sorted(tags):
        out += _uvarint(tag) + _uvarint(len(tags[tag])) + tags[tag]
    return out


def test_cluster_state_replays_metadata(tmp_path):
    tid, ghost = bytes([7] * 16), bytes([9] * 16)
    records = [
        _framed(2, _cstr("orders") + tid + _tags({})),
        _framed(
            3,
            struct.pack(">i", 0)
            + tid
            + _cints([1, 2])
            + _cints([1, 2])
            + _cints([])
            + _cints([])
            + struct.pack(">iii", 1, 0, 0)
            + _tags({}),
        ),
        # ISR shrinks to [2] and the leader moves to 2: the leader epoch and the partition
        # epoch go up by one.
        _framed(5, struct.pack(">i", 0) + tid + _tags({0: _cints([2]), 1: struct.pack(">i", 2)})),
        _framed(4, b"\x02" + _cstr("orders") + _cstr("retention.ms") + _cstr("1000") + _tags({})),
        _framed(
            4, b"\x02" + _cstr("orders") + _cstr("cleanup.policy") + _cstr("compact") + _tags({})
        ),
        _framed(4, b"\x02" + _cstr("orders") + _cstr("retention.ms") + _cstr(None) + _tags({})),
        # An aborted metadata transaction leaves nothing behind.
        _framed(23, _tags({})),
        _framed(2, _cstr("ghost") + ghost + _tags({})),
        _framed(25, _tags({})),
        _framed(12, _cstr("metadata.version") + struct.pack(">h", 21) + _tags({})),
    ]
    path = write_topic(tmp_path, "__cluster_metadata", 0, [(None, v) for v in records])
    state = kafkalog.cluster_state(path)
    assert state["topics"].to_pylist() == [
        {"name": "orders", "topicId": _uuid(tid), "partitions": 1}
    ]
    (p,) = state["partitions"].to_pylist()
    assert (p["replicas"], p["isr"], p["leader"]) == ([1, 2], [2], 2)
    assert (p["leaderEpoch"], p["partitionEpoch"]) == (1, 1)
    assert state["configs"].to_pylist() == [
        {
            "resourceType": "TOPIC",
            "resourceName": "orders",
            "name": "cleanup.policy",
            "value": "compact",
        }
    ]
    assert state["features"].to_pylist() == [{"name": "metadata.version", "featureLevel": 21}]
    # Every record is also a row of cluster_metadata, the aborted ones included.
    assert kafkalog.cluster_metadata(path).num_rows == len(records)


def _framed_v(api_key: int, version: int, body: bytes) -> bytes:
    return b"\x01" + _uvarint(api_key) + _uvarint(version) + body


def _partition_v2(pid, tid, replicas, isr, elr=None, last_known_elr=None, epoch=0) -> bytes:
    """A PartitionRecord (apiKey 3) version 2, laid out as Kafka's PartitionRecord.json says:
    partitionId, topicId, replicas, isr, removingReplicas, addingReplicas, leader,
    leaderEpoch, partitionEpoch, directories, then the tagged fields (0 leaderRecoveryState,
    1 eligibleLeaderReplicas, 2 lastKnownElr; null when left out)."""
    tags = {}
    if elr is not None:
        tags[1] = _cints(elr)
    if last_known_elr is not None:
        tags[2] = _cints(last_known_elr)
    body = (
        struct.pack(">i", pid)
        + tid
        + _cints(replicas)
        + _cints(isr)
        + _cints([])
        + _cints([])
        + struct.pack(">iii", replicas[0], 0, epoch)
        + _uvarint(len(replicas) + 1)
        + b"\0" * 16 * len(replicas)
        + _tags(tags)
    )
    return _framed_v(3, 2, body)


def _clear_elr(topic: str) -> bytes:
    # ClearElrRecord (apiKey 28) version 0, flexible: topicName (compact string), tags.
    return _framed(28, _cstr(topic) + _tags({}))


def test_cluster_state_clears_elrs_as_kafka_merges_them(tmp_path):
    orders, other = bytes([1] * 16), bytes([2] * 16)
    records = [
        _framed(2, _cstr("orders") + orders + _tags({})),
        _framed(2, _cstr("other") + other + _tags({})),
        _partition_v2(0, orders, [1, 2, 3], [1], elr=[3], epoch=4),
        _partition_v2(1, orders, [1, 2, 4], [1], last_known_elr=[4], epoch=2),
        _partition_v2(2, orders, [1, 2], [1, 2], epoch=7),
        _partition_v2(0, other, [5, 6], [6], elr=[5], last_known_elr=[], epoch=1),
        # Only the named topic's partitions with an ELR or last known ELR change.
        _clear_elr("orders"),
    ]
    path = write_topic(tmp_path / "a", "__cluster_metadata", 0, [(None, v) for v in records])
    rows = kafkalog.cluster_metadata(path).to_pylist()
    assert rows[-1]["type"] == "ClearElrRecord" and rows[-1]["typeId"] == 28
    assert json.loads(rows[-1]["data"]) == {"topicName": "orders"}

    def parts(path):
        return {
            (p["topic"], p["partition"]): (
                p["eligibleLeaderReplicas"],
                p["lastKnownElr"],
                p["partitionEpoch"],
            )
            for p in kafkalog.cluster_state(path)["partitions"].to_pylist()
        }

    assert parts(path) == {
        ("orders", 0): ([], [], 5),
        ("orders", 1): ([], [], 3),
        ("orders", 2): ([], [], 7),
        ("other", 0): ([5], [], 1),
    }
    # An empty topic name clears every topic's.
    path = write_topic(
        tmp_path / "b", "__cluster_metadata", 0, [(None, v) for v in [*records, _clear_elr("")]]
    )
    assert parts(path) == {
        ("orders", 0): ([], [], 5),
        ("orders", 1): ([], [], 3),
        ("orders", 2): ([], [], 7),
        ("other", 0): ([], [], 2),
    }


def test_cluster_state_remove_topic_deletes_its_configs(tmp_path):
    tid = bytes([3] * 16)
    records = [
        _framed(2, _cstr("gone") + tid + _tags({})),
        _framed(4, b"\x02" + _cstr("gone") + _cstr("retention.ms") + _cstr("1000") + _tags({})),
        _framed(4, b"\x02" + _cstr("kept") + _cstr("retention.ms") + _cstr("5") + _tags({})),
        _framed(4, b"\x04" + _cstr("") + _cstr("log.retention.ms") + _cstr("9") + _tags({})),
        # RemoveTopicRecord (apiKey 9): ReplicationControlManager deletes the topic's configs.
        _framed(9, tid + _tags({})),
    ]
    path = write_topic(tmp_path, "__cluster_metadata", 0, [(None, v) for v in records])
    state = kafkalog.cluster_state(path)
    assert state["topics"].num_rows == 0
    assert [(c["resourceType"], c["resourceName"]) for c in state["configs"].to_pylist()] == [
        ("TOPIC", "kept"),
        ("BROKER", ""),
    ]


def test_cluster_state_of_a_log_directory_uses_the_snapshot(tmp_path):
    tid = bytes([4] * 16)
    snapshot_records = [
        _framed(2, _cstr("orders") + tid + _tags({})),
        _framed(
            4, b"\x02" + _cstr("orders") + _cstr("cleanup.policy") + _cstr("compact") + _tags({})
        ),
        _framed(12, _cstr("metadata.version") + struct.pack(">h", 21) + _tags({})),
    ]
    scratch = write_topic(tmp_path / "scratch", "s", 0, [(None, v) for v in snapshot_records])
    logdir = tmp_path / "logdir"
    meta = logdir / "__cluster_metadata-0"
    # The snapshot covers offsets 0-2 (its name is its end offset and epoch); the older
    # segments are gone and the log goes on from offset 3.
    later = pa.table(
        {"value": pa.array([_framed(2, _cstr("later") + bytes([5] * 16) + _tags({}))])}
    )
    kafkalog.write(meta, later, base_offset=3)
    shutil.copy(f"{scratch}/{0:020d}.log", meta / "00000000000000000003-0000000001.checkpoint")
    write_topic(logdir, "orders", 0, [(b"k", b"v")])
    for path in (meta, logdir):
        state = kafkalog.cluster_state(path)
        assert [t["name"] for t in state["topics"].to_pylist()] == ["later", "orders"], path
        assert state["configs"].num_rows == 1 and state["features"].num_rows == 1


def test_cluster_state_starts_from_the_latest_snapshot(tmp_path):
    """The latest snapshot, then the log from the snapshot's end offset on, loaded in one
    core call: the log's records before that offset are not replayed."""
    tid, snap_tid = bytes([7] * 16), bytes([8] * 16)
    log = [(None, _framed(2, _cstr("orders") + tid + _tags({})))] * 2
    part = write_topic(tmp_path / "logs", "__cluster_metadata", 0, log)
    snapshot = write_topic(
        tmp_path / "snap",
        "__cluster_metadata",
        0,
        [(None, _framed(2, _cstr("snap") + snap_tid + _tags({})))],
    )
    name = "00000000000000000002-0000000001.checkpoint"  # ends where the log ends
    shutil.copy(os.path.join(snapshot, "00000000000000000000.log"), os.path.join(part, name))
    tables = dict(_native.cluster_state_tables(part))
    names = pa.Table.from_batches([pa.record_batch(tables["topics"])]).column("name")
    assert names.to_pylist() == ["snap"]
    assert kafkalog.cluster_state(part)["topics"].column("name").to_pylist() == ["snap"]


def test_cluster_state_of_the_corpus():
    path = f"{CORPUS}/nomanazeem__Kafka-java/kafka-logs/__cluster_metadata-0"
    state = kafkalog.cluster_state(path)
    topics = {t["name"]: t for t in state["topics"].to_pylist()}
    assert set(topics) == {"__consumer_offsets", "demo-topic"}
    assert topics["__consumer_offsets"]["partitions"] == 50
    rows = kafkalog.cluster_metadata(path).to_pylist()
    created = {
        json.loads(r["data"])["name"]: json.loads(r["data"])["topicId"]
        for r in rows
        if r["type"] == "TopicRecord"
    }
    assert {n: t["topicId"] for n, t in topics.items()} == created
    assert state["brokers"].num_rows == 1


# ---- arbitrary bytes


@pytest.mark.parametrize(
    "topic",
    [
        "__consumer_offsets",
        "__transaction_state",
        "__cluster_metadata",
        "__remote_log_metadata",
        "__share_group_state",
    ],
)
def test_arbitrary_bytes_never_crash(topic):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    seeds = [
        commit_key("g", "t", 0),
        commit_value(4, {3: b"\x01"}, offset=1, leaderEpoch=2, commitTimestamp=3),
        _group_value([("m", "t", [0, 1])]),
        txn_value(
            1,
            {0: b"\0" * 8},
            producerId=1,
            producerEpoch=0,
            transactionTimeoutMs=1,
            transactionStatus=1,
            transactionPartitions=None,
            transactionLastUpdateTimestampMs=0,
            transactionStartTimestampMs=0,
        ),
        b"\x01\x03\x00" + b"\x00" * 40,
    ]

    @settings(max_examples=300, deadline=None)
    @given(
        st.one_of(st.binary(max_size=64), st.sampled_from(seeds)),
        st.one_of(st.none(), st.binary(max_size=64), st.sampled_from(seeds)),
        st.integers(0, 63),
        st.integers(0, 255),
    )
    def check(key, value, at, byte):
        if value is not None and value:
            value = bytearray(value)
            value[at % len(value)] = byte
            value = bytes(value)
        key_text, payload = _native.dump_internal_record(topic, key, value, 7)
        assert key_text is None or isinstance(key_text, str)
        assert payload is None or isinstance(payload, str)
        json.loads(_native.decode_internal_record(topic, key, value))

    check()


@pytest.mark.parametrize(
    "kind",
    [
        "consumer_offsets",
        "consumer_groups",
        "transactions",
        "cluster_metadata",
        "remote_log_metadata",
    ],
)
def test_folds_of_arbitrary_bytes_skip_or_raise_typed_errors(kind):
    import random

    rng = random.Random(kind)
    seeds = [commit_key("g", "t", 0), commit_value(3, offset=1, leaderEpoch=0, commitTimestamp=1)]
    seeds += [txn_key("x"), b"\x01\x02\x00\x02a" + b"\x07" * 16 + b"\x00", _group_key("g")]
    keys, values = [], []
    for _ in range(2000):
        k = bytearray(rng.choice(seeds))
        v = bytearray(rng.choice(seeds))
        for b in (k, v):
            for _ in range(rng.randrange(3)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            if rng.random() < 0.3:
                del b[rng.randrange(len(b) + 1) :]
        keys.append(bytes(k))
        values.append(None if rng.random() < 0.1 else bytes(v))
    batch = pa.record_batch(
        {
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
            "offset": pa.array(range(len(keys)), pa.int64()),
        }
    )
    fold = _native.InternalFold(kind, on_corrupt="skip")
    fold.feed(batch)
    fold.finish()
    assert all(set(i) >= {"message", "offset", "corrupt"} for i in fold.take_issues())
    strict = _native.InternalFold(kind)
    try:
        strict.feed(batch)
    except kafkalog.CorruptRecordError as e:
        assert e.offset is not None


def test_consumer_protocol_groups(tmp_path):
    def key(record_type, *strings):
        return struct.pack(">h", record_type) + b"".join(
            struct.pack(">h", len(s)) + s.encode() for s in strings
        )

    member = (
        _cstr(None)  # instanceId
        + _cstr(None)  # rackId
        + _cstr("client-a")
        + _cstr("/10.0.0.2")
        + _uvarint(2)
        + _cstr("orders")  # subscribedTopicNames
        + _cstr(None)  # subscribedTopicRegex
        + struct.pack(">i", 30000)
        + _cstr("uniform")
        + _tags({})
    )
    tid = bytes([5] * 16)
    assignment = (
        struct.pack(">iib", 3, 2, 0)
        + _uvarint(2)
        + tid
        + _cints([0, 1])
        + _tags({})  # assignedPartitions
        + _uvarint(1)  # partitionsPendingRevocation: empty
        + _tags({})
    )
    records = [
        (key(3, "cg"), struct.pack(">hi", 0, 3) + _tags({})),
        (key(5, "cg", "m-a"), struct.pack(">h", 0) + member),
        (key(8, "cg", "m-a"), struct.pack(">h", 0) + assignment),
        (key(5, "cg", "m-b"), struct.pack(">h", 0) + member),
        (key(5, "cg", "m-b"), None),  # the member left
    ]
    path = write_topic(tmp_path, "__consumer_offsets", 0, records)
    (group,) = kafkalog.consumer_groups(path).to_pylist()
    assert (group["group"], group["type"], group["generation"], group["state"]) == (
        "cg",
        "consumer",
        3,
        "Stable",
    )
    (m,) = group["members"]
    assert (m["memberId"], m["clientId"], m["rebalanceTimeout"]) == ("m-a", "client-a", 30000)
    assert m["topics"] == ["orders"]
    assert m["assignment"] == [f"{_uuid(tid)}-0", f"{_uuid(tid)}-1"]
