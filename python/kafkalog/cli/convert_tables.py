"""``kafkalog convert X delta://...`` and ``convert X iceberg://ns.table``: the records into a
lakehouse table (:func:`kafkalog.to_delta`, :func:`kafkalog.to_iceberg`), resumable, with the
summary on stdout; and the options only tables take."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkalog.cli.arguments import _column_list, _positive_int, storage
from kafkalog.cli.exits import EXIT_OK, EXIT_USAGE, CliError
from kafkalog.cli.schemas import value_kwargs

#: The reading bounds ``convert`` offers as options (kafkalog.read's).
_BOUNDS = ("start_offset", "end_offset", "start_timestamp", "end_timestamp")

#: Destinations that are tables rather than files.
TABLE_SCHEMES = ("delta://", "iceberg://")


def cmd_table(args: argparse.Namespace) -> int:
    """``convert X delta://...`` / ``iceberg://ns.table``: the records into a lakehouse table,
    resumable (kafkalog.to_delta, kafkalog.to_iceberg); the summary on stdout."""
    from kafkalog import tables

    for name, flag in (("format", "--format"), ("compression", "--compression")):
        if getattr(args, name):
            raise CliError(f"convert: {flag} applies to files, not tables", EXIT_USAGE)
    if args.columns or args.batch_metadata or args.include_control:
        raise CliError(
            "convert: a table takes Spark's Kafka columns: --columns, --batch-metadata and "
            "--include-control apply to files",
            EXIT_USAGE,
        )
    store = storage(args)
    typed = value_kwargs(args)
    bounds: dict[str, Any] = {
        name: getattr(args, name) for name in _BOUNDS if getattr(args, name, None) is not None
    }
    show_progress = sys.stderr.isatty() if args.progress is None else args.progress
    common: dict[str, Any] = dict(
        mode=args.mode,
        topics=args.topics,
        isolation_level=args.isolation_level,
        visibility=args.visibility,
        value_layout=args.value_layout,
        partition_by=args.partition_by,
        check_crc=not args.no_check_crc,
        on_corrupt=args.on_corrupt,
        progress=show_progress,
        **bounds,
        **store,
        **typed,
    )
    if args.target_file_size is not None:
        common["target_file_size"] = args.target_file_size
    if args.out.startswith("delta://"):
        if args.catalog or args.catalog_uri or args.warehouse:
            raise CliError(
                "convert: --catalog, --catalog-uri and --warehouse are for iceberg:// tables",
                EXIT_USAGE,
            )
        summary = tables.to_delta(args.logdir, args.out, **common)
    else:
        summary = tables.to_iceberg(
            args.logdir,
            args.out,
            catalog=args.catalog,
            catalog_uri=args.catalog_uri,
            warehouse=args.warehouse,
            **common,
        )
    sys.stdout.write(tables.describe(summary) + "\n")
    return EXIT_OK


def add_table_arguments(c: argparse.ArgumentParser) -> None:
    """The options of ``convert`` that only tables take."""
    tables = c.add_argument_group("tables (OUT delta://... or iceberg://ns.table)")
    tables.add_argument(
        "--mode",
        choices=("append", "upsert"),
        default="append",
        help="append: every record a row (default); upsert: the latest record of each key, "
        "tombstones deleting it (read_committed unless --isolation-level says otherwise)",
    )
    tables.add_argument(
        "--catalog", default=None, metavar="NAME", help="iceberg: a catalog of pyiceberg's config"
    )
    tables.add_argument(
        "--catalog-uri",
        default=None,
        metavar="URI",
        help="iceberg: pyiceberg's SQL catalog at URI (sqlite:///cat.db)",
    )
    tables.add_argument(
        "--warehouse", default=None, metavar="URI", help="iceberg: the catalog's warehouse"
    )
    tables.add_argument(
        "--value-layout",
        choices=("struct", "columns"),
        default="struct",
        help="a typed value as one value struct (default) or its fields as columns",
    )
    tables.add_argument(
        "--partition-by",
        type=_column_list,
        default=None,
        metavar="topic,partition,day",
        help="the table's partitioning (default topic,day; '' for none)",
    )
    tables.add_argument(
        "--target-file-size",
        type=_positive_int,
        default=None,
        metavar="BYTES",
        help="data files of about this size (default 128 MiB)",
    )


def refuse_table_options(args: argparse.Namespace) -> None:
    """A file output given an option of tables: a usage error saying so."""
    for flag, given in (
        ("--mode", args.mode != "append"),
        ("--catalog", args.catalog),
        ("--catalog-uri", args.catalog_uri),
        ("--warehouse", args.warehouse),
        ("--value-layout", args.value_layout != "struct"),
        ("--partition-by", args.partition_by),
        ("--target-file-size", args.target_file_size),
    ):
        if given:
            raise CliError(
                f"convert: {flag} is for tables (OUT delta://... or iceberg://ns.table)",
                EXIT_USAGE,
            )
