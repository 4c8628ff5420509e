"""``kafkalog write-schemas``: a Schema Registry's storage topic written
(:func:`kafkalog.write_schemas`), from schema files, from the lines ``kafkalog schemas
--export`` prints, or from another backup's registry."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kafkalog import values, writing
from kafkalog._storage import is_remote
from kafkalog.cli.arguments import _bound_value, add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK, EXIT_USAGE, CliError

WRITE_SCHEMAS_HELP = """\
Write a Schema Registry's storage topic: the partition OUT/_schemas-0 (--topic names another
kafkastore.topic) holding the schemas of each SOURCE, registered in order as the registry
registers them (versions, ids, references and soft deletes by its rules), with the records
its KafkaStore writes. A read's --schemas OUT (or a Schema Registry started on the topic)
then finds them.

SOURCE is one of:
  SUBJECT=FILE   a schema file (.avsc, .proto, .json: Avro, Protobuf, JSON Schema)
                 registered as the subject's next version
  FILE.jsonl     schemas one JSON object a line: subject, schema, and optionally version,
                 id, schemaType, references, deleted (what kafkalog schemas --export prints;
                 --json rows too)
  LOGDIR         a backup's registry (its _schemas partition, as kafkalog schemas reads it):
                 every version copied with its id

Prints each version written: SUBJECT, VERSION, ID, TYPE.
"""

#: Schema files, by the language their suffix says.
_KINDS = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}


def _rows(source: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The schemas a SOURCE names, as :func:`kafkalog.write_schemas` takes them."""
    subject, sep, file = source.partition("=")
    if sep and subject and os.path.splitext(file)[1] in _KINDS:
        try:
            with open(file, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise CliError(f"write-schemas: {file}: {e.strerror}", EXIT_USAGE) from None
        return [
            {"subject": subject, "schema": text, "schemaType": _KINDS[os.path.splitext(file)[1]]}
        ]
    if source.endswith((".jsonl", ".ndjson")) and not is_remote(source):
        rows = []
        with open(source, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise CliError(f"write-schemas: {source}:{n}: not JSON: {e}") from None
        return rows
    return values.export_schemas(source, topic=args.source_topic, **storage(args))


def cmd_write_schemas(args: argparse.Namespace) -> int:
    rows = [row for source in args.sources for row in _rows(source, args)]
    if not rows:
        raise CliError("write-schemas: no schemas to write", EXIT_USAGE)
    table = writing.write_schemas(
        args.out,
        rows,
        topic=args.topic,
        timestamp=args.timestamp,
        overwrite=args.overwrite,
        **storage(args),
    )
    for r in table.to_pylist():
        print(f"{r['subject']}\t{r['version']}\t{r['id']}\t{r['type']}")
    return EXIT_OK


def register(sub: Any) -> None:
    w = sub.add_parser(
        "write-schemas",
        help="write a Schema Registry's storage topic (_schemas-0) from schemas",
        description=WRITE_SCHEMAS_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    w.add_argument("out", metavar="OUT", help="the log directory to write _schemas-0 in")
    w.add_argument(
        "sources", nargs="+", metavar="SOURCE", help="SUBJECT=FILE, FILE.jsonl or LOGDIR"
    )
    w.add_argument("--topic", default=None, help="the storage topic (default _schemas)")
    w.add_argument(
        "--source-topic", default=None, help="a LOGDIR source's storage topic (default _schemas)"
    )
    w.add_argument(
        "--timestamp",
        type=_bound_value,
        default=None,
        metavar="TIME",
        help="the records' time (milliseconds since the epoch or ISO 8601; default now)",
    )
    w.add_argument("--overwrite", action="store_true", help="replace the partition if it is there")
    add_storage_arguments(w)
    w.set_defaults(func=cmd_write_schemas)
