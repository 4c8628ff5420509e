"""Exceptions and warnings of kafkalog.

Every error kafkalog raises about the bytes it reads is a :class:`KafkaLogError`. Each carries
attributes a program can act on:

- ``path``: the file the bytes came from (``None`` for a buffer in memory);
- ``position``: the byte position, in that file or buffer, of the log entry (batch) at fault;
- ``offset``: the batch's offset as its header states it, when it could be read;
- ``kind``: a short machine-readable category (``"corrupt"``, ``"crc_mismatch"``, ...).

Damage that kafkalog reads past without failing (a partial batch at the end of a segment, a
batch left out with ``on_corrupt="skip"``) is reported as a :class:`KafkaLogWarning`.
"""

from __future__ import annotations

import errno
import os
import sys
import warnings
from typing import Any

__all__ = [
    "KafkaLogError",
    "CorruptRecordError",
    "CrcMismatchError",
    "DecompressionError",
    "LimitExceededError",
    "InvalidArgumentError",
    "KafkaLogIOError",
    "KafkaLogFileNotFoundError",
    "KafkaLogPermissionError",
    "ConcurrentWriteError",
    "TieredStorageError",
    "DecryptionError",
    "EncryptionKeyError",
    "KafkaLogWarning",
    "TruncatedSegmentWarning",
    "SkippedBatchWarning",
    "StoppedAtCorruptionWarning",
    "IndexNotUsedWarning",
    "UndecodedRecordWarning",
    "ValueDecodeError",
    "UndecodedValueWarning",
    "NotASegmentError",
    "MissingDependencyError",
]


class KafkaLogError(Exception):
    """Base class of every kafkalog error."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        position: int | None = None,
        offset: int | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.position = position
        self.offset = offset
        self.kind = kind

    def __reduce__(self) -> tuple[Any, ...]:  # survive pickling (Spark ships exceptions)
        return (
            _rebuild,
            (type(self), self.message, self.path, self.position, self.offset, self.kind),
        )


def _rebuild(
    cls: type[KafkaLogError],
    message: str,
    path: str | None,
    position: int | None,
    offset: int | None,
    kind: str | None,
) -> KafkaLogError:
    return cls(message, path=path, position=position, offset=offset, kind=kind)


class CorruptRecordError(KafkaLogError):
    """The bytes are not a valid Kafka batch or record: an impossible size, a bad varint,
    a record running past its batch, an unknown magic or codec."""


class NotASegmentError(CorruptRecordError):
    """A file read as a Kafka segment is not one: the header of its first entry cannot be
    Kafka's (an offset that is not the file name's base offset plus a 32-bit relative offset,
    a magic byte other than 0, 1 or 2, a size below the smallest entry). ``position`` is 0;
    the message says which field at the start is wrong and shows the file's first bytes. A real
    segment whose last (or only) batch was torn still reads, with a
    :class:`TruncatedSegmentWarning`."""


class ValueDecodeError(CorruptRecordError):
    """A record's key or value does not decode as its format says (``key_format``,
    ``value_format``): no Schema Registry framing, a schema id the registry does not hold, bytes
    that are not valid for the writer schema, text that is not UTF-8. ``path``, ``position``
    and ``offset`` name the record's batch (its file, byte position and base offset), as for
    every error; the message names the record's offset, the schema id and why."""


class CrcMismatchError(CorruptRecordError):
    """A batch's stored CRC does not match its bytes (CRC-32C for v2, CRC-32 for v0/v1)."""


class DecompressionError(CorruptRecordError):
    """A batch's compressed records could not be decompressed."""


class LimitExceededError(KafkaLogError):
    """A configured limit was reached, such as ``max_decompressed_size``."""


class InvalidArgumentError(KafkaLogError, ValueError):
    """An option or input value is not acceptable."""


class MissingDependencyError(KafkaLogError, ImportError):
    """A library an optional part of kafkalog needs is not installed (deltalake, pyiceberg and
    pyiceberg-core for tables, PySpark for Spark): the message names it and the extra that
    installs it (``pip install 'kafkalog[lake]'``). The command line exits with code 5."""


class TieredStorageError(CorruptRecordError):
    """A tiered-storage segment's objects disagree with each other: a ``.rsm-manifest`` that
    does not parse, a chunk index that does not fit the ``.log`` object, a chunk that decodes
    to the wrong size. ``path`` names the object; the message names the chunk and byte range."""


class DecryptionError(TieredStorageError):
    """An encrypted tiered-storage chunk or index does not decrypt (its AES-GCM tag fails: the
    object was altered), or a data key unwraps to something that is not an AES-256 key. The
    message never holds a key or decrypted bytes."""


class EncryptionKeyError(InvalidArgumentError):
    """An encryption key for tiered storage cannot be used: none was given for the key id a
    segment's manifest names, it is not an RSA private key, or the segment's data key does not
    unwrap with it (a wrong key). The message names the key id, never the key."""


class KafkaLogIOError(KafkaLogError, OSError):
    """Reading or writing a file or object failed (the operating system, or an object store,
    said so). ``errno`` is the error number where the cause is known (``errno.ENOSPC`` for a
    full disk, ``errno.EROFS`` for a read-only file system, ``ENOENT`` for a missing file)."""

    _errno: int | None = None

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.errno = self._errno
        self.strerror = message
        self.filename = kwargs.get("path")

    def __str__(self) -> str:
        # The message names the path already: not OSError's "[Errno 2] <message>: '<path>'".
        return self.message


class KafkaLogFileNotFoundError(KafkaLogIOError, FileNotFoundError):
    """The file, object or directory is not there (also a :class:`FileNotFoundError`)."""

    _errno = errno.ENOENT


class KafkaLogPermissionError(KafkaLogIOError, PermissionError):
    """Reading or writing was refused (also a :class:`PermissionError`)."""

    _errno = errno.EACCES


class ConcurrentWriteError(KafkaLogIOError):
    """Another writer (another process, another Spark task) is writing the same partition
    directory. Nothing was written; the other write is not disturbed."""


class KafkaLogWarning(UserWarning):
    """Base class of kafkalog's warnings; carries ``path``, ``position``, ``offset``,
    ``bytes`` (how many bytes were passed over) and ``kind`` (a
    :data:`kafkalog.types.IssueKind`: ``"torn_tail"``, ``"skipped_batch"``, ...)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        position: int | None = None,
        offset: int | None = None,
        bytes: int | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.position = position
        self.offset = offset
        self.bytes = bytes
        self.kind = kind


class TruncatedSegmentWarning(KafkaLogWarning):
    """A segment ends in a partial batch (a crash, or a copy of a live segment) or in zero
    bytes never written. The complete batches before it were returned."""


class SkippedBatchWarning(KafkaLogWarning):
    """A corrupt batch was left out (``on_corrupt="skip"``)."""


class StoppedAtCorruptionWarning(KafkaLogWarning):
    """Reading a partition stopped at a corrupt batch (``on_corrupt="stop"``, as Kafka's log
    recovery does, or ``"skip"`` where the batch's size itself is broken)."""


class IndexNotUsedWarning(KafkaLogWarning):
    """An index file (``.index``/``.timeindex``) could not be used for a seek because it is
    missing, stale or corrupt; the segment was scanned instead. Results are the same."""


class UndecodedRecordWarning(KafkaLogWarning):
    """An internal-topic record (``__consumer_offsets``, ``__cluster_metadata``, ...) was passed
    over: its type or version is newer than kafkalog knows, or (``on_corrupt="skip"``) it did
    not decode. ``key`` and ``value`` hold its raw bytes; ``corrupt`` tells the two apart."""

    def __init__(
        self,
        message: str,
        *,
        key: bytes | None = None,
        value: bytes | None = None,
        corrupt: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.key = key
        self.value = value
        self.corrupt = corrupt


class UndecodedValueWarning(KafkaLogWarning):
    """Keys or values did not decode and were left null (``on_value_error="null"``): the
    message counts them; the ``key_error``/``value_error`` columns say why for each, and
    ``key_raw``/``value_raw`` keep their bytes. ``count`` is the number."""

    def __init__(self, message: str, *, count: int = 0, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.count = count


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(warning: Warning) -> None:
    """Issue ``warning`` at the first line outside kafkalog on the stack (the caller's line,
    however deep in kafkalog, or in the core, it was found)."""
    frame = sys._getframe(1)
    level = 2  # warn's caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(warning, stacklevel=level)
