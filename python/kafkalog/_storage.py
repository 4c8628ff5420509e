"""Where a read's bytes come from, as the native core takes it.

kafkalog reads local paths and object-store URIs (``s3://``, ``s3a://``, ``gs://``,
``az://``, ``abfs(s)://``, ``http(s)://``) natively, through Apache Arrow's ``object_store``
crate: credentials and endpoints from the usual environment variables (``AWS_*``,
``GOOGLE_*``, ``AZURE_*``) and from ``storage_options`` (``object_store``'s configuration
keys, e.g. ``{"aws_endpoint": "http://127.0.0.1:9000", "aws_allow_http": "true"}``).

For any other store (``hdfs://``, ...), or to read through a filesystem you already hold, pass
``filesystem=``: a ``pyarrow.fs.FileSystem`` or an fsspec filesystem; paths are then that
filesystem's paths (a URI's scheme is dropped, as pyarrow does).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from kafkalog.errors import InvalidArgumentError


def storage_kwargs(
    storage_options: Mapping[str, Any] | None,
    filesystem: Any | None,
    encryption_keys: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``storage_options`` and ``filesystem`` arguments of the native functions.

    ``encryption_keys`` (``{key_id: private key}``, for encrypted tiered-storage segments)
    travel to the core as the storage options ``kafkalog.encryption_key.<key_id>``, each a
    PEM text; a key is given as PEM text or bytes, or as the path of a PEM file."""
    if storage_options is not None and filesystem is not None:
        raise InvalidArgumentError("give storage_options or filesystem, not both")
    options = None
    if storage_options is not None:
        if not isinstance(storage_options, Mapping):
            raise InvalidArgumentError(
                f"storage_options must be a mapping of strings, not {storage_options!r}"
            )
        options = {str(k): _option_value(v) for k, v in storage_options.items()}
    if encryption_keys:
        if not isinstance(encryption_keys, Mapping):
            raise InvalidArgumentError(
                "encryption_keys must be a mapping of key ids to private keys (PEM or a path)"
            )
        options = dict(options or {})
        for key_id, key in encryption_keys.items():
            options[ENCRYPTION_KEY_OPTION + str(key_id)] = _pem(str(key_id), key)
    return {"storage_options": options, "filesystem": _pyarrow_filesystem(filesystem)}


#: The storage option prefix under which the core takes a tiered-storage encryption key.
ENCRYPTION_KEY_OPTION = "kafkalog.encryption_key."


def _pem(key_id: str, key: Any) -> str:
    """A private key as PEM text: given as such, as bytes, or as a file's path."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        key = bytes(key).decode("ascii", errors="replace")
    elif isinstance(key, os.PathLike) or (isinstance(key, str) and "-----BEGIN" not in key):
        try:
            with open(os.fspath(key), encoding="ascii", errors="replace") as f:
                key = f.read()
        except OSError as e:
            raise InvalidArgumentError(
                f"encryption key {key_id!r}: cannot read the key file: {e.strerror}"
            ) from None
    if not isinstance(key, str):
        raise InvalidArgumentError(
            f"encryption key {key_id!r} must be PEM text or bytes, or a file path"
        )
    return key


def _option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _pyarrow_filesystem(filesystem: Any | None) -> Any | None:
    if filesystem is None:
        return None
    import pyarrow.fs as pafs

    if isinstance(filesystem, pafs.FileSystem):
        return filesystem
    try:
        import fsspec  # noqa: F401
    except ImportError:
        fsspec = None
    if fsspec is not None and isinstance(filesystem, fsspec.AbstractFileSystem):
        return pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    raise InvalidArgumentError(
        f"filesystem must be a pyarrow.fs.FileSystem or an fsspec filesystem, not {filesystem!r}"
    )


def paths(path: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str]:
    """One path or several, as strings."""
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    if isinstance(path, Sequence) and not isinstance(path, (bytes, bytearray)):
        out = [os.fspath(p) for p in path]
        if not out:
            raise InvalidArgumentError("no path given")
        return out
    raise InvalidArgumentError(f"a path must be a string or path-like, not {path!r}")
