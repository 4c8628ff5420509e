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
from typing import Any, TypedDict

from kafkalog.errors import InvalidArgumentError

#: One local path or object-store URI.
PathLike = str | os.PathLike[str]
#: One path, or several read in the order given.
Paths = PathLike | Sequence[PathLike]


class StorageKwargs(TypedDict):
    """The storage arguments of the native functions."""

    storage_options: dict[str, str] | None
    filesystem: Any | None


def storage_kwargs(
    storage_options: Mapping[str, Any] | None, filesystem: Any | None
) -> StorageKwargs:
    """The ``storage_options`` and ``filesystem`` arguments of the native functions."""
    if storage_options is not None and filesystem is not None:
        raise InvalidArgumentError("give storage_options or filesystem, not both")
    options = None
    if storage_options is not None:
        if not isinstance(storage_options, Mapping):
            raise InvalidArgumentError(
                f"storage_options must be a mapping of strings, not {storage_options!r}"
            )
        options = {str(k): _option_value(v) for k, v in storage_options.items()}
    return {"storage_options": options, "filesystem": _pyarrow_filesystem(filesystem)}


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


def paths(path: Paths) -> list[str]:
    """One path or several, as strings."""
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    if isinstance(path, Sequence) and not isinstance(path, (bytes, bytearray)):  # type: ignore[unreachable]
        out = [os.fspath(p) for p in path]
        if not out:
            raise InvalidArgumentError("no path given")
        return out
    raise InvalidArgumentError(f"a path must be a string or path-like, not {path!r}")
