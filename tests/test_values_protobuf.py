"""Protobuf values as Confluent's deserializers read them (issues 34 and 35): values framed by
confluent-kafka's ``ProtobufSerializer`` (several messages in one ``.proto``, nested messages,
a reference to another ``.proto`` file), each read as the message its message indexes name,
compared with what the protobuf runtime (upb) decodes; and the decoder against upb on random
messages (hypothesis), merged and read by an older version of the schema."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from values_fixtures import registered, write_partition

import kafkalog
from kafkalog.errors import UndecodedValueWarning

pytest.importorskip("confluent_kafka.schema_registry.protobuf")
hypothesis = pytest.importorskip("hypothesis")
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.protobuf import (  # noqa: E402
    ProtobufDeserializer,
    ProtobufSerializer,
)
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402
from google.protobuf.message import Message  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TOPIC = "evo"
F = descriptor_pb2.FieldDescriptorProto


def field(
    name: str,
    number: int,
    kind: int,
    *,
    type_name: str | None = None,
    repeated: bool = False,
    optional: bool = False,
) -> descriptor_pb2.FieldDescriptorProto:
    f = F(name=name, number=number, type=kind)  # type: ignore[arg-type]
    f.label = F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL
    if type_name is not None:
        f.type_name = type_name
    if optional:
        f.proto3_optional = True
    return f


def files() -> list[descriptor_pb2.FileDescriptorProto]:
    """``evo/common.proto`` (Money), and ``evo/second.proto`` importing it: Header, Order
    (nested Line, a map, nested Note: message indexes [1, 0], [1, 1], [1, 2]) and Envelope
    (nested Line, [2, 0])."""
    common = descriptor_pb2.FileDescriptorProto(
        name="evo/common.proto", package="evo.common", syntax="proto3"
    )
    common.message_type.add(name="Money").field.extend(
        [field("units", 1, F.TYPE_INT64), field("currency", 2, F.TYPE_STRING)]
    )
    second = descriptor_pb2.FileDescriptorProto(
        name="evo/second.proto",
        package="evo.second",
        syntax="proto3",
        dependency=["evo/common.proto"],
    )
    header = second.message_type.add(name="Header")
    header.field.extend([field("source", 1, F.TYPE_STRING), field("at", 2, F.TYPE_INT64)])
    order = second.message_type.add(name="Order")
    line = order.nested_type.add(name="Line")
    line.field.extend([field("sku", 1, F.TYPE_STRING), field("qty", 2, F.TYPE_INT32)])
    entry = order.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    entry.field.extend([field("key", 1, F.TYPE_STRING), field("value", 2, F.TYPE_INT32)])
    note = order.nested_type.add(name="Note")
    note.field.extend([field("text", 1, F.TYPE_STRING)])
    order.field.extend(
        [
            field("header", 1, F.TYPE_MESSAGE, type_name=".evo.second.Header"),
            field("id", 2, F.TYPE_INT64),
            field("total", 3, F.TYPE_MESSAGE, type_name=".evo.common.Money"),
            field("lines", 4, F.TYPE_MESSAGE, type_name=".evo.second.Order.Line", repeated=True),
            field(
                "counts",
                5,
                F.TYPE_MESSAGE,
                type_name=".evo.second.Order.CountsEntry",
                repeated=True,
            ),
            field("note", 6, F.TYPE_MESSAGE, type_name=".evo.second.Order.Note"),
            field("priority", 7, F.TYPE_INT32, optional=True),
        ]
    )
    order.oneof_decl.add(name="_priority")
    order.field[-1].oneof_index = 0
    envelope = second.message_type.add(name="Envelope")
    eline = envelope.nested_type.add(name="Line")
    eline.field.extend([field("sku", 1, F.TYPE_STRING), field("qty", 2, F.TYPE_INT32)])
    envelope.field.extend(
        [
            field("lines", 1, F.TYPE_MESSAGE, type_name=".evo.second.Envelope.Line", repeated=True),
            field("kind", 2, F.TYPE_STRING),
        ]
    )
    return [common, second]


def classes() -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    for f in files():
        pool.Add(f)
    names = ["Header", "Order", "Order.Note", "Envelope", "Envelope.Line"]
    return {
        n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"evo.second.{n}"))
        for n in names
    }


def walk(message: Message) -> dict[str, Any]:
    """A decoded message as the Arrow mapping gives it (docs/values-protobuf-json.md)."""
    out: dict[str, Any] = {}
    for f in message.DESCRIPTOR.fields:
        value = getattr(message, f.name)
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            out[f.name] = sorted(value.items())
        elif f.is_repeated:
            out[f.name] = [walk(v) if isinstance(v, Message) else v for v in value]
        elif f.has_presence and not message.HasField(f.name):
            out[f.name] = None
        elif isinstance(value, Message):
            out[f.name] = walk(value)
        else:
            out[f.name] = value
    return out


def arrow_value(value: Any) -> Any:
    """A pylist value of the column, maps as sorted (key, value) pairs."""
    if isinstance(value, dict):
        return {k: arrow_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [arrow_value(v) for v in value]
    return value


def evo_backup(root: Path, registry_url: str = "mock://issue35") -> dict[str, Any]:
    """Values of four messages of ``evo/second.proto`` framed by Confluent's serializer,
    in a partition ``evo-0`` of ``root`` beside the registry's storage topic."""
    client = SchemaRegistryClient.new_client({"url": registry_url})
    ctx = SerializationContext(TOPIC, MessageField.VALUE)
    conf = {"auto.register.schemas": True, "use.deprecated.format": False}
    cls = classes()
    made = [
        ("Order", {"id": 7, "header": {"source": "web"}, "lines": [{"sku": "a", "qty": 2}]}),
        ("Header", {"source": "batch", "at": 3}),
        ("Order.Note", {"text": "fragile"}),
        ("Envelope.Line", {"sku": "x", "qty": -1}),
        ("Order", {"id": 8, "total": {"units": 5, "currency": "EUR"}, "counts": {"b": 1, "a": 2}}),
        ("Order", {"priority": 0}),
    ]
    values: list[bytes] = []
    messages: list[tuple[str, Message]] = []
    for name, fields in made:
        message = cls[name](**fields)
        framed = ProtobufSerializer(cls[name], client, conf)(message, ctx)
        assert framed is not None
        values.append(framed)
        messages.append((name, message))
    # What the runtime reads each one as: Confluent's deserializer with the message's class.
    expected = []
    for (name, message), framed in zip(messages, values, strict=True):
        decoded = ProtobufDeserializer(cls[name], {"use.deprecated.format": False})(framed, ctx)
        assert decoded == message
        expected.append((f"evo.second.{name}", walk(decoded)))
    schema_records = []
    for subject in client.get_subjects():
        schema_records.extend(registered(client, subject))
    write_partition(root / "_schemas-0", schema_records)
    write_partition(root / f"{TOPIC}-0", [(None, v) for v in values])
    return {"root": root, "values": values, "expected": expected, "client": client}


@pytest.fixture(scope="module")
def topic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """:func:`evo_backup` in a directory of its own."""
    return evo_backup(tmp_path_factory.mktemp("protobuf"))


def test_message_indexes_name_the_message(topic: dict[str, Any]) -> None:
    # The indexes Confluent's serializer wrote: [1] (Order), a single 0 (Header), [1, 2]
    # (Order.Note: the map's entry counts), [2, 0] (Envelope.Line).
    framing = [v[5:7] for v in topic["values"][:4]]
    assert framing == [b"\x02\x02", b"\x00\x0a", b"\x04\x02", b"\x04\x04"]


def read_orders(topic: dict[str, Any]) -> pa.Table:
    with pytest.warns(UndecodedValueWarning, match="3 keys or values"):
        return kafkalog.read(
            topic["root"] / f"{TOPIC}-0",
            value_format="protobuf",
            schemas=topic["root"],
            on_value_error="null",
            value_options={"value_message": "evo.second.Order"},
        ).read_all()


def test_the_message_named_is_the_column(topic: dict[str, Any]) -> None:
    t = read_orders(topic)
    got = t.column("value").to_pylist()
    errors = t.column("value_error").to_pylist()
    for i, (name, expected) in enumerate(topic["expected"]):
        if name == "evo.second.Order":
            assert errors[i] is None
            assert arrow_value(got[i]) == expected, i
        else:
            assert got[i] is None
            assert f"written as message {name}" in errors[i]


def test_several_messages_one_column(topic: dict[str, Any]) -> None:
    names = ["evo.second.Order", "evo.second.Header", "evo.second.Order.Note"]
    names.append("evo.second.Envelope.Line")
    t = kafkalog.read(
        topic["root"] / f"{TOPIC}-0",
        value_format="auto",
        schemas=topic["root"],
        value_options={"value_message": names},
    ).read_all()
    column = t.column("value")
    assert [f.name for f in column.type] == names
    for row, (name, expected) in zip(column.to_pylist(), topic["expected"], strict=True):
        assert [n for n, v in row.items() if v is not None] == [name]
        assert arrow_value(row[name]) == expected
    # The same, comma-separated; and on the command line.
    again = kafkalog.read(
        topic["root"] / f"{TOPIC}-0",
        value_format="protobuf",
        schemas=topic["root"],
        value_options={"value_message": ",".join(names)},
    ).read_all()
    assert again.column("value").equals(column)


ORDER_OF_RECORDS = [
    "evo.second.Order",
    "evo.second.Header",
    "evo.second.Order.Note",
    "evo.second.Envelope.Line",
]


def test_the_records_name_the_column(topic: dict[str, Any]) -> None:
    # No message named: the messages the records' indexes name, in the order first met, as
    # Confluent's deserializer reads each; the same column as naming them.
    t = kafkalog.read(
        topic["root"] / f"{TOPIC}-0", value_format="protobuf", schemas=topic["root"]
    ).read_all()
    column = t.column("value")
    assert [f.name for f in column.type] == ORDER_OF_RECORDS
    for row, (name, expected) in zip(column.to_pylist(), topic["expected"], strict=True):
        assert [n for n, v in row.items() if v is not None] == [name]
        assert arrow_value(row[name]) == expected
    named = kafkalog.read(
        topic["root"] / f"{TOPIC}-0",
        value_format="auto",
        schemas=topic["root"],
        value_options={"value_message": ORDER_OF_RECORDS},
    ).read_all()
    assert named.column("value").equals(column)
    with pytest.raises(kafkalog.errors.InvalidArgumentError, match="no message"):
        kafkalog.read(
            topic["root"] / f"{TOPIC}-0",
            value_format="protobuf",
            schemas=topic["root"],
            value_options={"value_message": "evo.second.Missing"},
        )


@pytest.fixture(scope="module")
def lines(topic: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A partition of the same topic (its registry is ``topic``'s) whose first records are
    all ``Envelope.Line``s, then, past the sample, an ``Order``."""
    root = tmp_path_factory.mktemp("lines")
    line = topic["values"][3]
    write_partition(root / f"{TOPIC}-1", [(None, line)] * 1200 + [(None, topic["values"][0])])
    return root


def test_one_message_named_by_the_records_is_the_column(topic: dict[str, Any], lines: Path) -> None:
    # A topic whose records name one nested message reads as that message, not the file's
    # first; a record past the sample written as another is a bad value naming both.
    t = kafkalog.read(
        lines / f"{TOPIC}-1",
        value_format="protobuf",
        schemas=topic["root"],
        on_value_error="null",
    )
    with pytest.warns(UndecodedValueWarning, match="1 keys or values"):
        table = t.read_all()
    assert [f.name for f in table.column("value").type] == ["sku", "qty"]
    values = table.column("value").to_pylist()
    assert values[0] == {"sku": "x", "qty": -1} and values[-1] is None
    error = table.column("value_error").to_pylist()[-1]
    assert "written as message evo.second.Order, the column holds evo.second.Envelope.Line" in (
        error
    )


def test_command_line_and_spark_options(topic: dict[str, Any], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from kafkalog.cli.main import main
    from kafkalog.spark.values import decoded_of

    out = tmp_path / "notes.parquet"
    code = main(
        [
            "convert",
            str(topic["root"] / f"{TOPIC}-0"),
            str(out),
            "--value-format",
            "protobuf",
            "--schemas",
            str(topic["root"]),
            "--value-message",
            "evo.second.Order.Note",
            "--on-value-error",
            "null",
        ]
    )
    assert code in (0, None)
    notes = pq.read_table(out).column("value").to_pylist()
    assert notes[2] == {"text": "fragile"} and notes[0] is None
    schema = decoded_of(
        {
            "path": str(topic["root"] / f"{TOPIC}-0"),
            "valueFormat": "protobuf",
            "schemaRegistry": str(topic["root"]),
            "valueMessage": "evo.second.Envelope.Line,evo.second.Header",
        }
    )
    assert schema is not None
    value = schema.field("value").type
    assert [f.name for f in value] == ["evo.second.Envelope.Line", "evo.second.Header"]
    # Without the option, the command line and Spark take the messages the records name.
    everything = tmp_path / "everything.parquet"
    code = main(
        [
            "convert",
            str(topic["root"] / f"{TOPIC}-0"),
            str(everything),
            "--value-format",
            "protobuf",
            "--schemas",
            str(topic["root"]),
        ]
    )
    assert code in (0, None)
    value = pq.read_table(everything).schema.field("value").type
    assert [f.name for f in value] == ORDER_OF_RECORDS
    schema = decoded_of(
        {
            "path": str(topic["root"] / f"{TOPIC}-0"),
            "valueFormat": "protobuf",
            "schemaRegistry": str(topic["root"]),
        }
    )
    assert schema is not None
    assert [f.name for f in schema.field("value").type] == ORDER_OF_RECORDS


# The decoder against upb on random messages of a schema with every kind of field.

RICH = descriptor_pb2.FileDescriptorProto(name="rich.proto", package="rich", syntax="proto3")


def _rich() -> dict[str, Any]:
    inner = RICH.message_type.add(name="Inner")
    inner.field.extend([field("s", 1, F.TYPE_STRING), field("n", 2, F.TYPE_SINT64, repeated=True)])
    e = RICH.enum_type.add(name="E")
    for i, n in enumerate(["Z", "ONE", "TWO"]):
        e.value.add(name=n, number=i)
    m = RICH.message_type.add(name="All")
    entry = m.nested_type.add(name="ByNameEntry")
    entry.options.map_entry = True
    entry.field.extend(
        [
            field("key", 1, F.TYPE_STRING),
            field("value", 2, F.TYPE_MESSAGE, type_name=".rich.Inner"),
        ]
    )
    m.field.extend(
        [
            field("d", 1, F.TYPE_DOUBLE),
            field("i32", 2, F.TYPE_INT32),
            field("u64", 3, F.TYPE_UINT64),
            field("s64", 4, F.TYPE_SINT64),
            field("fx", 5, F.TYPE_FIXED32),
            field("b", 6, F.TYPE_BOOL),
            field("text", 7, F.TYPE_STRING),
            field("raw", 8, F.TYPE_BYTES),
            field("e", 9, F.TYPE_ENUM, type_name=".rich.E"),
            field("inner", 10, F.TYPE_MESSAGE, type_name=".rich.Inner"),
            field("inners", 11, F.TYPE_MESSAGE, type_name=".rich.Inner", repeated=True),
            field("packed", 12, F.TYPE_INT64, repeated=True),
            field("by_name", 13, F.TYPE_MESSAGE, type_name=".rich.All.ByNameEntry", repeated=True),
            field("one", 14, F.TYPE_STRING),
            field("other", 15, F.TYPE_MESSAGE, type_name=".rich.Inner"),
            field("maybe", 16, F.TYPE_INT32, optional=True),
        ]
    )
    m.oneof_decl.add(name="pick")
    m.oneof_decl.add(name="_maybe")
    m.field[13].oneof_index = 0
    m.field[14].oneof_index = 0
    m.field[15].oneof_index = 1
    pool = descriptor_pool.DescriptorPool()
    pool.Add(RICH)
    return {
        "All": message_factory.GetMessageClass(pool.FindMessageTypeByName("rich.All")),
        "text": base64.b64encode(RICH.SerializeToString()).decode(),
    }


RICH_CLASSES = _rich()

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=5)
inners = st.fixed_dictionaries(
    {"s": texts, "n": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3)}
)
alls = st.fixed_dictionaries(
    {},
    optional={
        "d": st.floats(allow_nan=False),
        "i32": st.integers(-(2**31), 2**31 - 1),
        "u64": st.integers(0, 2**64 - 1),
        "s64": st.integers(-(2**63), 2**63 - 1),
        "fx": st.integers(0, 2**32 - 1),
        "b": st.booleans(),
        "text": texts,
        "raw": st.binary(max_size=5),
        "e": st.integers(0, 5),
        "inner": inners,
        "inners": st.lists(inners, max_size=2),
        "packed": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4),
        "by_name": st.dictionaries(texts, inners, max_size=3),
        "one": texts,
        "other": inners,
        "maybe": st.integers(-5, 5),
    },
)


def _expected(message: Message) -> dict[str, Any]:
    out = walk(message)
    # An open enum's unknown number is its decimal text; names otherwise.
    e = message.DESCRIPTOR.fields_by_name["e"].enum_type.values_by_number.get(out["e"])
    out["e"] = e.name if e is not None else str(out["e"])
    out["by_name"] = [(k, walk(v)) for k, v in out["by_name"]]
    return out


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(alls, st.none() | alls), min_size=1, max_size=8))
def test_the_decoder_reads_what_upb_reads(tmp_path_factory: Any, messages: list[Any]) -> None:
    cls = RICH_CLASSES["All"]
    values = []
    for first, second in messages:
        data = cls(**first).SerializeToString()
        if second is not None:
            # Two messages back to back: upb merges them (the last scalar wins, messages
            # merge, repeated fields append, a oneof keeps its last member).
            data += cls(**second).SerializeToString()
        values.append(data)
    path = tmp_path_factory.mktemp("upb") / "rich-0"
    write_partition(path, [(None, v) for v in values])
    schema = {"schema": RICH_CLASSES["text"], "schemaType": "PROTOBUF"}
    got = (
        kafkalog.read(
            path,
            value_format="protobuf",
            value_options={"value_schema": schema, "framing": "none", "value_message": "rich.All"},
        )
        .read_all()
        .column("value")
        .to_pylist()
    )
    for data, row in zip(values, got, strict=True):
        expected = _expected(cls.FromString(data))
        assert arrow_value(row) == expected


def test_types_are_the_mappings(topic: dict[str, Any]) -> None:
    t = read_orders(topic)
    order = t.schema.field("value").type
    assert order.field("counts").type == pa.map_(pa.string(), pa.int32())
    assert order.field("priority").type == pa.int32()
    assert order.field("lines").type.value_type.field("qty").type == pa.int32()
