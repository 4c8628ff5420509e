"""``kafkalog.serve``: a read-only Kafka endpoint over backups.

Any Kafka client (the Java client, librdkafka and confluent-kafka, kafka-python, kcat, Spark's
own Kafka source) connects to it as to a one-node cluster and reads the backup's records byte
for byte, at their offsets, with their timestamps, headers and transactions, and with the
consumer groups' committed offsets as the backup's ``__consumer_offsets`` holds them. Nothing
under the served paths is ever written: requests that would write are refused with a Kafka
error. The server runs in the core, on its own threads; see ``docs/serve.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from kafkalog import _native
from kafkalog._storage import storage_kwargs

__all__ = ["Server", "serve"]


class Server:
    """A running endpoint (returned by :func:`serve`). A context manager: leaving the ``with``
    block closes it."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` the server listens on."""
        host, port = self._native.address
        return (str(host), int(port))

    @property
    def bootstrap_servers(self) -> str:
        """``"host:port"``, as a client's ``bootstrap.servers`` takes it."""
        host, port = self.address
        return f"{host}:{port}"

    @property
    def topics(self) -> int:
        """How many topics are served."""
        return int(self._native.topics)

    @property
    def partitions(self) -> int:
        """How many partitions are served."""
        return int(self._native.partitions)

    @property
    def running(self) -> bool:
        """Whether the server is still running."""
        return bool(self._native.running)

    def log_lines(self) -> list[str]:
        """The server's recent log lines: requests refused, connections dropped, reads that
        failed (the last thousand)."""
        return list(self._native.log_lines())

    def close(self) -> None:
        """Stops the server and closes its connections. Calling it again does nothing."""
        self._native.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else "closed"
        return (
            f"<kafkalog.Server {self.bootstrap_servers} {state}: {self.topics} topics, "
            f"{self.partitions} partitions>"
        )


def serve(
    *paths: str | os.PathLike[str],
    listen: str = "127.0.0.1:0",
    advertise: str | None = None,
    state: str | os.PathLike[str] | None = None,
    topics: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    encryption_keys: Mapping[str, Any] | None = None,
    log: bool = False,
    idle_timeout: float = 600.0,
    max_connections: int = 1024,
    max_request_bytes: int = 16 << 20,
) -> Server:
    """Serves ``paths`` as a read-only Kafka endpoint and returns the running :class:`Server`.

    ``paths``: what :func:`kafkalog.read` takes: a log directory, several brokers' log
    directories (one cluster's volumes: a partition found on several is served from the
    replica reaching furthest), an object-store prefix (``s3://...`` with ``storage_options``)
    or a tiered-storage bucket.

    ``listen``: ``HOST:PORT`` (port 0 picks a free one; the default, for tests and notebooks).
    ``advertise``: the ``HOST:PORT`` clients are told to connect to (default: the listening
    address). ``state``: a directory where offsets that consumers commit are kept across
    restarts (without it they live in memory; the backup is never written). ``topics``: a
    regular expression, Kafka's consumer pattern rule (the whole name; internal topics only
    where named). ``log``: print the server's log lines to standard error.

    Bounded: requests over ``max_request_bytes``, malformed requests and unknown APIs close
    their connection; at most ``max_connections`` connections; idle ones are closed after
    ``idle_timeout`` seconds.
    """
    if not paths:
        from kafkalog.errors import InvalidArgumentError

        raise InvalidArgumentError("serve needs at least one path")
    native = _native.Server(
        [os.fspath(p) for p in paths],
        listen,
        advertise=advertise,
        state=os.fspath(state) if state is not None else None,
        topics=topics,
        storage_options=storage_kwargs(storage_options, None, encryption_keys)["storage_options"],
        echo=log,
        idle_timeout_s=float(idle_timeout),
        max_connections=int(max_connections),
        max_request_bytes=int(max_request_bytes),
    )
    return Server(native)
