"""What one ``kafkalog dump`` run knows: its options, the files it reads (base offsets from
names, sizes, siblings, a ``.log``'s batches for checking index entries against) and the
reports it gathers for stderr. Shared by :mod:`kafkalog.cli.dump_log` and
:mod:`kafkalog.cli.dump_indexes`."""

from __future__ import annotations

import argparse
import os
import warnings
from bisect import bisect_right
from typing import Any

from kafkalog import _native, reading
from kafkalog._storage import is_remote
from kafkalog.cli.arguments import storage
from kafkalog.cli.exits import EXIT_OK, CliError
from kafkalog.cli.schemas import value_kwargs
from kafkalog.cli.text import _Output
from kafkalog.types import Visibility


def _base_offset(path: str) -> int:
    """The base offset in a segment or index file's name, as the core takes it."""
    base = _native.base_offset_from_name(path)
    if base is None:
        name = os.path.basename(path)
        raise CliError(
            f"{path}: cannot take the base offset from the file name {name!r} (Kafka's files "
            "are named <20-digit base offset>.<suffix>, e.g. 00000000000000000000.log)"
        )
    return base


def _size(path: str, store: dict[str, Any]) -> int:
    """A file's size, local or in an object store."""
    return _native.file_size(path, store.get("storage_options"))


def _sibling(path: str, name: str) -> str:
    """The file ``name`` in the directory (or object-store prefix) of ``path``."""
    if is_remote(path):
        return f"{path.rsplit('/', 1)[0]}/{name}"
    return os.path.join(os.path.dirname(os.path.abspath(path)), name)


class _LogBatches:
    """The batches of a ``.log`` file (position, size, last offset), read once per file, to
    verify index entries against."""

    def __init__(self, log_path: str, store: dict[str, Any]) -> None:
        self.path = log_path
        self.storage = store
        if not is_remote(log_path) and not os.path.exists(log_path):
            raise FileNotFoundError(2, "No such file or directory", log_path)
        positions: list[int] = []
        sizes: list[int] = []
        last_offsets: list[int] = []
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            reader = reading.read_batches(
                log_path, check_crc=False, on_corrupt="stop", visibility="all", **store
            )
            for chunk in reader:
                positions += chunk.column("batchPosition").to_pylist()
                sizes += chunk.column("batchSize").to_pylist()
                last_offsets += chunk.column("lastOffset").to_pylist()
        self.positions = positions
        self.sizes = sizes
        self.last_offsets = last_offsets
        self.index = {p: i for i, p in enumerate(positions)}

    def first_batch_last_offset(self, position: int, max_size: int) -> int | None:
        """The last offset of the first complete batch in ``max_size`` bytes from ``position``
        (Kafka's ``log.slice(position, maxMessageSize).batches.iterator.next().lastOffset``)."""
        i = self.index.get(position)
        if i is not None and self.sizes[i] <= max_size:
            return self.last_offsets[i]
        # Not a batch boundary the whole-file read found: read that slice as Kafka does.
        data = _native.read_range(
            self.path, position, max_size, self.storage.get("storage_options")
        )
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            table = reading.read_batches(data, check_crc=False, on_corrupt="stop").read_all()
        return table.column("lastOffset")[0].as_py() if table.num_rows else None

    def batch_at_or_after(self, position: int, offset: int) -> int | None:
        """Index of the first batch from ``position`` on whose last offset is ``>= offset``."""
        start = bisect_right(self.positions, position - 1)
        for i in range(start, len(self.positions)):
            if self.last_offsets[i] >= offset:
                return i
        return None


_DECODERS = (
    ("offsets_decoder", "--offsets-decoder", "__consumer_offsets"),
    ("transaction_log_decoder", "--transaction-log-decoder", "__transaction_state"),
    ("cluster_metadata_decoder", "--cluster-metadata-decoder", "__cluster_metadata"),
    ("remote_log_metadata_decoder", "--remote-log-metadata-decoder", "__remote_log_metadata"),
    ("share_group_state_decoder", "--share-group-state-decoder", "__share_group_state"),
)


def _internal_decoder(args: argparse.Namespace) -> str | None:
    for dest, _, topic in _DECODERS:
        if getattr(args, dest, False):
            return topic
    return None


class DumpState:
    """The options of a dump and what it gathers as it goes."""

    def __init__(self, args: argparse.Namespace, out: _Output) -> None:
        self.out = out
        self.json = args.format == "json"
        # --offsets-decoder etc.: the internal topic whose records are decoded (implies
        # --print-data-log, as in Kafka).
        self.decoder = _internal_decoder(args)
        # As in Kafka, naming a key or value decoder class prints the data.
        named_class = getattr(args, "key_decoder_class", None) or getattr(
            args, "value_decoder_class", None
        )
        # --key-decoder/--value-decoder avro|string|...: keys and values decoded in the core.
        self.values = value_kwargs(args) if hasattr(args, "value_format") else {}
        self.print_data = (
            args.print_data_log
            or self.decoder is not None
            or bool(named_class)
            or bool(self.values)
        )
        self.deep = args.deep_iteration or self.print_data
        self.skip_metadata = args.skip_record_metadata
        self.verify_only = args.verify_index_only
        self.sanity_only = args.index_sanity_check
        self.max_message_size = args.max_message_size
        self.max_bytes = args.max_bytes
        self.visibility: Visibility = (
            "consumer" if getattr(args, "visibility", "all") == "consumer" else "all"
        )
        self.storage = storage(args)
        self.exit_code = EXIT_OK
        # reports printed to stderr after all files, as Kafka does
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        self._logs: dict[str, _LogBatches] = {}
