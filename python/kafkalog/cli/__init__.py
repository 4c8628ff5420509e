"""``kafkalog``: the command-line tool.

Subcommands:

- ``kafkalog dump --files a.log,b.index,...``: print segment, index, time index, transaction
  index and producer snapshot files as Apache Kafka's ``kafka-dump-log.sh`` does (its 3.x
  output, line for line), or as JSON lines with ``--format json``;
- ``kafkalog convert LOGDIR OUT``: write the records of a segment, partition or log directory
  to Parquet, an Arrow IPC file or JSON lines, streaming;
- ``kafkalog info LOGDIR``: topics, partitions, segments, offset and time ranges, formats and
  sizes, from the batch headers only (``--json`` for programs);
- ``kafkalog verify PATH``: :func:`kafkalog.verify`'s checks of segments and indexes, one line
  per problem, exit code 1 if any.
- ``kafkalog offsets LOGDIR [--group G]``: consumer groups' committed offsets, log end offsets
  and lag, as ``kafka-consumer-groups --describe`` shows them;
- ``kafkalog compact SRC DST`` and ``kafkalog retain PATH``: Kafka's log cleanup.

``dump --offsets-decoder`` (``--transaction-log-decoder``, ``--cluster-metadata-decoder``,
``--remote-log-metadata-decoder``) prints internal topics' records as kafka-dump-log does; the
decoding is in the Rust core (``kafkalog._native.dump_internal_record``).

The package only formats what the library returns (:func:`kafkalog.read`,
:func:`kafkalog.read_batches`, :func:`kafkalog.read_index`); it does not parse Kafka's bytes
(control records too are parsed by the core, ``kafkalog._native.control_record``). Its
modules, one per concern:

- ``main``: the parser (each command registers its own subparser) and :func:`main`, where
  every error becomes its exit code;
- ``exits``: the exit codes, :class:`~kafkalog.cli.exits.CliError` and the one-line error;
- ``text``: buffered output and values printed as Kafka's Java tools print them;
- ``arguments``: the parser class and the option value types;
- one module per command: ``dump``, ``convert``, ``info``, ``verify``, ``offsets``,
  ``cleanup`` (``compact`` and ``retain``).
"""

from kafkalog.cli.main import build_parser, main

__all__ = ["main", "build_parser"]
