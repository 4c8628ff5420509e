"""``kafkalog dump``: Apache Kafka's ``kafka-dump-log.sh`` (``DumpLogSegments``, Kafka 3.x),
line for line, or as JSON lines. Formats what the library returns; parses no Kafka bytes.

This module dispatches each file on its suffix and prints the reports Kafka prints after all
files; :mod:`kafkalog.cli.dump_log` dumps ``.log`` files, :mod:`kafkalog.cli.dump_indexes` the
files beside them, both on the state in :mod:`kafkalog.cli.dump_state`."""

from __future__ import annotations

import argparse
import os
from typing import Any

from kafkalog import reading
from kafkalog._storage import is_remote
from kafkalog.cli.arguments import _positive_int, add_storage_arguments, storage
from kafkalog.cli.dump_indexes import IndexDump
from kafkalog.cli.dump_log import JAVA_INT_MAX, LogDump
from kafkalog.cli.dump_state import _DECODERS
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_USAGE, CliError
from kafkalog.cli.schemas import add_value_arguments
from kafkalog.cli.text import _err, _java_file, _Output


class Dumper(LogDump, IndexDump):
    """``kafka-dump-log.sh`` (Apache Kafka 3.x ``DumpLogSegments``)."""

    # ---- dispatch

    def dump(self, arg: str) -> None:
        shown = _java_file(arg)
        name = os.path.basename(shown)
        suffix = name[name.rfind(".") :] if "." in name else ""
        kind = {
            ".log": "log",
            ".checkpoint": "log",
            ".index": "index",
            ".timeindex": "timeindex",
            ".snapshot": "snapshot",
            ".txnindex": "txnindex",
        }.get(suffix, "unknown")
        if self.json:
            self.out.json({"type": "file", "file": shown, "kind": kind})
        else:
            self.out.line(f"Dumping {shown}")
        if kind == "log":
            self.dump_log(arg, shown)
        elif kind == "index":
            self.dump_index(arg, shown)
        elif kind == "timeindex":
            self.dump_time_index(arg, shown)
        elif kind == "snapshot":
            self.dump_snapshot(arg, shown)
        elif kind == "txnindex":
            self.dump_txn_index(arg, shown)
        else:
            self.out.flush()
            _err(f"Ignoring unknown file {shown}")

    # ---- reports

    def report(self) -> None:
        """The reports Kafka prints to stderr after all files."""
        self.out.flush()
        lines: list[str] = []
        for name, pairs in self.index_mismatches.items():
            lines.append(f"Mismatches in :{name}")
            lines += [f"  Index offset: {a}, log offset: {b}" for a, b in reversed(pairs)]
        for name, pairs in self.time_mismatches.items():
            lines.append(f"Found timestamp mismatch in :{name}")
            lines += [f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs]
        for name, pairs in self.time_out_of_order.items():
            lines.append(f"Found out of order timestamp in :{name}")
            lines += [
                f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs
            ]
        for pairs in self.time_not_found.values():
            lines.append("The following indexed offsets are not found in the log.")
            lines += [f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs]
        for name, pairs in self.non_consecutive.items():
            lines.append(f"Non-consecutive offsets in {name}")
            lines += [f"  {a} is followed by {b}" for a, b in reversed(pairs)]
        if lines:
            _err("\n".join(lines))


def _expand(arg: str, store: dict[str, Any]) -> list[str]:
    """A file as it is; a partition or log directory (or an object-store prefix) as its
    segments, in the order every other command reads them."""
    name = os.path.basename(arg.rstrip("/"))
    if "." in name and not os.path.isdir(arg):
        return [arg]
    if not is_remote(arg) and not os.path.isdir(arg):
        return [arg]
    found = [s["path"] for s in reading.segments(arg, **store)]
    return found or [arg]


def cmd_dump(args: argparse.Namespace) -> int:
    files = [f for f in (args.files or "").split(",") if f] + list(args.paths or [])
    if not files:
        raise CliError("dump: give the files to dump with --files a.log,b.index,...", EXIT_USAGE)
    _confluent_classes(args)
    store = storage(args)
    files = [segment for f in files for segment in _expand(f, store)]
    out = _Output()
    dumper = Dumper(args, out)
    try:
        for f in files:
            dumper.dump(f)
    finally:
        out.flush()  # what was printed before an error stays printed, as with Kafka's tool
    dumper.report()
    return dumper.exit_code


DUMP_HELP = """\
Print Kafka log files as Apache Kafka's kafka-dump-log.sh (DumpLogSegments, Kafka 3.x) does,
line for line. Files are dispatched on their suffix: .log (and KRaft .checkpoint snapshots),
.index, .timeindex, .txnindex, .snapshot; others are ignored with a message on stderr. A
directory (a partition or a log directory, or an object-store prefix) is dumped as its
segments, in the order the other commands read them (topic, partition, base offset).

Reports Kafka prints after all files go to stderr: non-consecutive offsets (deep iteration),
index entries that do not match the log, time index mismatches.

--format json prints one JSON object a line instead, each with "type" and "file":
  file             {kind: log|index|timeindex|txnindex|snapshot|unknown}   (for "Dumping")
  log_start        {baseOffset}     snapshot_id {endOffset, epoch}     bootstrap_snapshot
  batch            {position, magic, baseOffset, lastOffset, count, [v2: baseSequence,
                   lastSequence, producerId, producerEpoch, partitionLeaderEpoch,
                   isTransactional, isControl, deleteHorizonMs (null if unset)],
                   timestampType, maxTimestamp, size, compression, crc, isValid}
  record           {offset, batchPosition, timestampType, timestamp, keySize, valueSize,
                   [v2: sequence, headerKeys] [v0/v1: isValid, crc]
                   [control: controlType, controlTypeId, coordinatorEpoch (markers)]
                   [--print-data-log: key, payload (UTF-8 text as Kafka's StringDecoder
                   shows it, null when absent; with a decoder option, the decoded key and
                   payload: {name, version, data} objects, payload null for a tombstone;
                   with --key-decoder/--value-decoder, the decoded key and payload as JSON:
                   records and maps as objects, ISO-8601 times, exact decimals)]};
                   --skip-record-metadata keeps only offset and key/payload
  trailing_bytes   {bytes}          (Kafka's "Found N invalid bytes at the end of ...")
  index_entry      {offset, position}      time_index_entry {timestamp, offset}
  txn_index_entry  {version, producerId, firstOffset, lastOffset, lastStableOffset}
  producer_snapshot_entry {producerId, producerEpoch, coordinatorEpoch,
                   currentTxnFirstOffset, lastTimestamp, firstSequence, lastSequence,
                   lastOffset, offsetDelta}  (null where Kafka prints nothing)
  empty            (an index with no entries)   sanity_check {passed}
Timestamps are milliseconds since the epoch, -1 for none, as Kafka prints them.

Internal topics (decoder options, each implying --print-data-log, as in Kafka):
--offsets-decoder (__consumer_offsets), --transaction-log-decoder (__transaction_state),
--cluster-metadata-decoder (KRaft __cluster_metadata and .checkpoint snapshots),
--remote-log-metadata-decoder (__remote_log_metadata), --share-group-state-decoder
(__share_group_state): key and payload printed as Kafka's
decoders print them (JSON in Kafka's field names, <DELETE> for a tombstone).
"""


#: The decoder classes kafka-dump-log's --key-decoder-class and --value-decoder-class name
#: that kafkalog prints as it does: UTF-8 text (Kafka's default).
STRING_DECODER = "kafka.serializer.StringDecoder"

#: Confluent's deserializers (and its Avro ``Decoder`` for Kafka's tools), which a Kafka user
#: names for values framed by Confluent's serializers: kafkalog decodes those itself, as
#: --key-decoder/--value-decoder FORMAT --schemas LOGDIR do.
CONFLUENT_DECODERS = {
    "io.confluent.kafka.serializers.KafkaAvroDeserializer": "avro",
    "io.confluent.kafka.serializers.KafkaAvroDecoder": "avro",
    "io.confluent.kafka.serializers.protobuf.KafkaProtobufDeserializer": "protobuf",
    "io.confluent.kafka.serializers.json.KafkaJsonSchemaDeserializer": "json",
}
_SHORT_NAMES = {name.rsplit(".", 1)[1]: name for name in CONFLUENT_DECODERS}


def _decoder_class(text: str) -> str:
    if text in (STRING_DECODER, "StringDecoder"):
        return STRING_DECODER
    name = _SHORT_NAMES.get(text, text)
    if name in CONFLUENT_DECODERS:
        return name
    raise argparse.ArgumentTypeError(
        f"{text!r}: kafkalog loads no Java class; it prints keys and values as "
        f"{STRING_DECODER} does (UTF-8 text), as an internal topic's decoder option does, or "
        "decoded with the backup's Schema Registry: --value-decoder avro|protobuf|json "
        "--schemas LOGDIR (what Confluent's KafkaAvroDeserializer, KafkaProtobufDeserializer "
        "and KafkaJsonSchemaDeserializer decode)"
    )


def _confluent_classes(args: argparse.Namespace) -> None:
    """--key-decoder-class/--value-decoder-class naming Confluent's deserializers, taken as
    the --key-decoder/--value-decoder format they decode."""
    for side in ("key", "value"):
        name = getattr(args, f"{side}_decoder_class", None)
        fmt = CONFLUENT_DECODERS.get(name or "")
        if fmt is None:
            continue
        flag = f"--{side}-decoder"
        given = getattr(args, f"{side}_format")
        if given not in ("binary", fmt):
            raise CliError(
                f"dump: --{side}-decoder-class {name} is {flag} {fmt}; not both with "
                f"{flag} {given}",
                EXIT_USAGE,
            )
        if args.schemas is None:
            raise CliError(
                f"dump: {name} decodes with a Schema Registry; kafkalog reads the registry "
                f"from its storage topic in the backup: {flag} {fmt} --schemas LOGDIR (the log "
                "directory holding _schemas-0)",
                EXIT_USAGE,
            )
        setattr(args, f"{side}_format", fmt)
        setattr(args, f"{side}_decoder_class", None)


def _add_decoder_options(parser: argparse.ArgumentParser) -> None:
    for flag in ("--key-decoder-class", "--value-decoder-class"):
        parser.add_argument(
            flag,
            type=_decoder_class,
            metavar="CLASS",
            help=f"as in Kafka: {STRING_DECODER} (the default; implies --print-data-log); "
            "Confluent's KafkaAvroDeserializer, KafkaProtobufDeserializer or "
            "KafkaJsonSchemaDeserializer decode as --key-decoder/--value-decoder avro, protobuf "
            "or json do (with --schemas LOGDIR)",
        )
    for dest, flag, topic in _DECODERS:
        parser.add_argument(
            flag,
            dest=dest,
            action="store_true",
            help=f"decode the records as {topic} records (implies --print-data-log)",
        )


def register(sub: Any) -> None:
    d = sub.add_parser(
        "dump",
        help="print segment and index files as kafka-dump-log.sh does",
        description=DUMP_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument(
        "--files",
        metavar="file1,file2,...",
        help="REQUIRED (or give the files as arguments): comma-separated data and index files",
    )
    d.add_argument("paths", nargs="*", metavar="FILE", help=argparse.SUPPRESS)
    d.add_argument(
        "--print-data-log",
        action="store_true",
        help="print each record's key and payload (as UTF-8); implies --deep-iteration",
    )
    d.add_argument("--deep-iteration", action="store_true", help="print records, not just batches")
    d.add_argument(
        "--verify-index-only",
        action="store_true",
        help="check .index/.timeindex entries against the log without printing them",
    )
    d.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="run the broker's index sanity check and print whether it passed",
    )
    d.add_argument(
        "--max-message-size",
        type=_positive_int,
        default=5 * 1024 * 1024,
        metavar="N",
        help="bytes of the log read at an index entry's position to verify it (default 5242880)",
    )
    d.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=JAVA_INT_MAX,
        metavar="N",
        help="only the batches that lie wholly within the first N bytes of each .log; also "
        "turns off the trailing-bytes message (default 2147483647)",
    )
    d.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="do not print each record's metadata",
    )
    d.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: kafka-dump-log's lines (default); json: one JSON object a line",
    )
    d.add_argument(
        "--visibility",
        choices=("all", "consumer"),
        default="all",
        help="all: every batch on disk, as kafka-dump-log prints (default); consumer: only "
        "what a consumer could fetch, within the log directory's high watermark and log start "
        "offset checkpoints",
    )
    _add_decoder_options(d)
    add_value_arguments(d, decoders=True)
    add_storage_arguments(d)
    d.set_defaults(func=cmd_dump)
