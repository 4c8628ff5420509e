"""``kafkalog schemas``: the Schema Registry of a backup, from its storage topic; and the
options of typed keys and values other commands share (``--key-format``, ``--value-format``,
``--schemas``, ``--on-value-error``; ``dump``'s ``--key-decoder``/``--value-decoder``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafkalog import values
from kafkalog.cli.arguments import add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK, EXIT_USAGE, CliError

SCHEMAS_HELP = """\
Print the schemas of the Schema Registry whose storage topic (_schemas) is under LOGDIR (a log
directory holding _schemas-0, the partition, or an object-store URI), as the registry rebuilds
itself at startup: SUBJECT, VERSION, ID, TYPE, DELETED, then the schema (--schema) or one JSON
object a line (--json). Hard-deleted versions are not listed; soft-deleted ones are.

--export prints the registry as the requests that import it into a running Schema Registry
with the same ids and versions, one JSON object a line: the body of
POST /subjects/{subject}/versions (version, id, schemaType, references, schema) with its
subject beside, in the order they were registered, "deleted": true on soft-deleted versions.
Put the registry in IMPORT mode first (PUT /mode {"mode": "IMPORT"}); docs/values.md has the
loop that posts them. kafkalog write-schemas takes the same lines.

A LOGDIR that holds a partition of another topic (its records without a registry's keys) is
an error (exit 2), not an empty registry.
"""


def register(sub: Any) -> None:
    s = sub.add_parser(
        "schemas",
        help="the Schema Registry's schemas, from its storage topic in the backup",
        description=SCHEMAS_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("logdir", metavar="LOGDIR", help="log directory, or the _schemas partition")
    s.add_argument("--topic", default=None, help="the storage topic (default _schemas)")
    s.add_argument("--subject", default=None, help="only this subject")
    s.add_argument("--json", action="store_true", help="one JSON object a line")
    s.add_argument("--schema", action="store_true", help="also print each schema's text")
    s.add_argument(
        "--export",
        action="store_true",
        help="print the requests that import the registry into a Schema Registry (IMPORT "
        "mode), one JSON object a line",
    )
    add_storage_arguments(s)
    s.set_defaults(func=cmd_schemas)


def cmd_schemas(args: argparse.Namespace) -> int:
    if args.export:
        requests = values.export_schemas(args.logdir, topic=args.topic, **storage(args))
        for r in requests:
            if args.subject is None or r["subject"] == args.subject:
                sys.stdout.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
        return EXIT_OK
    rows = values.schemas(args.logdir, topic=args.topic, **storage(args)).to_pylist()
    if args.subject is not None:
        rows = [r for r in rows if r["subject"] == args.subject]
    out = sys.stdout
    if args.json:
        for r in rows:
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
        return EXIT_OK
    out.write("SUBJECT\tVERSION\tID\tTYPE\tDELETED\tREFERENCES\n")
    for r in rows:
        refs = ",".join(f"{x['name']}={x['subject']}/{x['version']}" for x in r["references"])
        out.write(
            f"{r['subject']}\t{r['version']}\t{r['id']}\t{r['type']}\t"
            f"{str(r['deleted']).lower()}\t{refs or '-'}\n"
        )
        if args.schema:
            out.write(r["schema"] + "\n")
    return EXIT_OK


def add_value_arguments(parser: argparse.ArgumentParser, *, decoders: bool = False) -> None:
    """The options of typed keys and values; ``decoders`` spells the formats as
    kafka-dump-log's ``--key-decoder``/``--value-decoder``."""
    group = parser.add_argument_group("typed keys and values")
    key, value = (
        ("--key-decoder", "--value-decoder")
        if decoders
        else (
            "--key-format",
            "--value-format",
        )
    )
    group.add_argument(
        key,
        dest="key_format",
        choices=values.FORMATS,
        default="binary",
        help="read keys as binary (default), string, avro, protobuf, json or auto",
    )
    group.add_argument(
        value,
        dest="value_format",
        choices=values.FORMATS,
        default="binary",
        help="read values as binary (default), string, avro, protobuf, json or auto",
    )
    group.add_argument(
        "--schemas",
        default=None,
        metavar="PATH",
        help="the Schema Registry's storage topic (a log directory holding _schemas-0, the "
        "partition, a URI), or a schema file (.avsc) for values written with no framing",
    )
    group.add_argument(
        "--subject", default=None, help="the value column's subject (default <topic>-value)"
    )
    group.add_argument(
        "--subjects",
        default=None,
        help="subjects of several record types (comma-separated), read into one value column",
    )
    group.add_argument(
        "--value-message",
        default=None,
        metavar="NAME",
        help="Protobuf: the value column's message by full name, or several (comma-separated) "
        "for a column with a field per message",
    )
    group.add_argument(
        "--key-message",
        default=None,
        metavar="NAME",
        help="Protobuf: the key column's message, as --value-message",
    )
    group.add_argument(
        "--on-value-error",
        choices=("error", "null"),
        default="error",
        help="a value that does not decode: fail (default), or null with value_error saying why",
    )


def value_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """kafkalog.read's keywords of typed keys and values, from the parsed options."""
    if args.key_format == "binary" and args.value_format == "binary":
        return {}
    options: dict[str, Any] = {}
    schemas: Any = args.schemas
    if schemas is not None and schemas.endswith((".avsc", ".json", ".proto")):
        options["value_schema"] = schemas
        options["framing"] = "none"
        schemas = None
    if args.subject is not None:
        options["value_subject"] = args.subject
    if args.subjects is not None:
        options["value_subjects"] = args.subjects
    if args.value_message is not None:
        options["value_message"] = args.value_message
    if args.key_message is not None:
        options["key_message"] = args.key_message
    needs = {args.key_format, args.value_format} - {"binary", "string"}
    if needs and schemas is None and "value_schema" not in options:
        raise CliError("--schemas is needed to read avro, protobuf, json or auto", EXIT_USAGE)
    return {
        "key_format": args.key_format,
        "value_format": args.value_format,
        "schemas": schemas,
        "on_value_error": args.on_value_error,
        "value_options": options,
    }
