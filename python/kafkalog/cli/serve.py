"""``kafkalog serve``: a read-only Kafka endpoint over backups (:func:`kafkalog.serve`)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from kafkalog.cli.arguments import add_storage_arguments, storage
from kafkalog.cli.exits import EXIT_CODES_HELP, EXIT_OK
from kafkalog.serving import serve

SERVE_HELP = """\
Serve backups to any Kafka client as a read-only, one-node Kafka cluster: the records of
PATH (a log directory, several brokers' log directories, an object-store prefix or a
tiered-storage bucket) at their offsets, byte for byte, with their consumer groups' committed
offsets. Requests that would write (produce, create or delete topics, ...) are refused; nothing
under PATH is ever written. The first line on standard output says where it listens; SIGINT or
SIGTERM stops it. See docs/serve.md for recipes (kcat, kafka-console-consumer,
confluent-kafka, Spark's Kafka source, Kafka Connect).
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve backups to Kafka clients (a read-only Kafka endpoint)",
        description=SERVE_HELP,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="what to serve")
    p.add_argument(
        "--listen", default="127.0.0.1:9092", metavar="HOST:PORT", help="default 127.0.0.1:9092"
    )
    p.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="the address clients are told to connect to (default: the listening one)",
    )
    p.add_argument(
        "--state",
        metavar="DIR",
        help="keep offsets consumers commit here, across restarts (default: in memory)",
    )
    p.add_argument(
        "--topics",
        metavar="REGEX",
        help="serve only the topics whose whole name matches (internal ones only if named)",
    )
    p.add_argument("--quiet", action="store_true", help="no log lines on standard error")
    add_storage_arguments(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    server = serve(
        *args.paths,
        listen=args.listen,
        advertise=args.advertise,
        state=args.state,
        topics=args.topics,
        log=not args.quiet,
        **storage(args),
    )
    stop = threading.Event()

    def _stop(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        host, port = server.address
        print(
            f"listening on {host}:{port} ({server.topics} topics, {server.partitions} partitions)",
            flush=True,
        )
        while not stop.wait(0.5):
            pass
    finally:
        server.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    print("stopped", file=sys.stderr, flush=True)
    return EXIT_OK
