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

import dataclasses
import functools
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict
from urllib.parse import unquote, urlsplit

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
    storage_options: Mapping[str, Any] | None,
    filesystem: Any | None,
    encryption_keys: Mapping[str, Any] | None = None,
) -> StorageKwargs:
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


# Schemes the core reads itself (object_store's, and local files).
_NATIVE_SCHEMES = frozenset(
    {"file", "s3", "s3a", "gs", "az", "adl", "azure", "abfs", "abfss", "http", "https"}
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def uri_scheme(path: str | os.PathLike[str]) -> str | None:
    """The scheme of ``path`` when it is a URI (lower case: ``s3``, ``file``, ``hdfs``...),
    ``None`` for a local path. The package's one rule for "is this path a URI": a scheme of
    two characters or more, so that ``C:\\`` on Windows is a path."""
    m = _SCHEME.match(os.fspath(path))
    return m.group(1).lower() if m and len(m.group(1)) > 1 else None


def is_remote(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URI other than ``file:``: an object store or another
    filesystem, where there is no local directory to rename in or list with :mod:`os`."""
    return uri_scheme(path) not in (None, "file")


def local_path(path: str | os.PathLike[str]) -> str | None:
    """The local path ``path`` names (a path, or a ``file:`` URI's path), ``None`` for any
    other URI."""
    text = os.fspath(path)
    scheme = uri_scheme(text)
    if scheme == "file":
        return unquote(urlsplit(text).path)
    return text if scheme is None else None


@dataclasses.dataclass(frozen=True)
class Route:
    """How a path reaches the core: the path the core is given, the storage arguments that
    go with it, and the prefix that turns a path the core lists back into a URI (for paths
    in a pyarrow filesystem a URI's scheme picked, e.g. ``hdfs://`` or ``mock://``)."""

    path: str
    storage_options: Mapping[str, str] | None = None
    filesystem: Any | None = None
    prefix: str = ""

    def kwargs(self) -> StorageKwargs:
        return storage_kwargs(self.storage_options, self.filesystem)

    def uri(self, core_path: str) -> str:
        return self.prefix + core_path if self.prefix else core_path

    def key(self) -> tuple[Any, ...]:
        """Paths with equal keys can be read in one native call."""
        options = tuple(sorted((self.storage_options or {}).items()))
        return (id(self.filesystem), options, self.prefix)


def route(
    path: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None = None,
    filesystem: Any | None = None,
) -> Route:
    """Where ``path`` is read from: local paths, ``file:`` and object-store URIs natively;
    a URI of any other scheme through :func:`pyarrow.fs.FileSystem.from_uri` (made once per
    process and scheme); any path through ``filesystem`` when one is given."""
    text = os.fspath(path)
    scheme = uri_scheme(text)
    if filesystem is not None:
        if scheme is not None:  # a URI: its path in the filesystem, as pyarrow takes it
            parts = urlsplit(text)
            text = unquote(parts.path if parts.scheme == "file" else parts.netloc + parts.path)
        return Route(text, None, filesystem)
    if scheme is None or scheme in _NATIVE_SCHEMES:
        options = None if storage_options is None else dict(storage_options)
        return Route(text, options)
    parts = urlsplit(text)
    root = f"{parts.scheme}://{parts.netloc}"
    fs, by_authority = _uri_filesystem(root, parts.query)
    if by_authority:
        return Route(unquote(parts.netloc + parts.path), None, fs, f"{parts.scheme}://")
    return Route(unquote(parts.path), None, fs, root)


@functools.lru_cache(maxsize=64)
def _uri_filesystem(root: str, query: str) -> tuple[Any, bool]:
    """The pyarrow filesystem of a ``scheme://authority``, and whether its paths start with
    the authority (as object stores' do) rather than after it (as hdfs's do)."""
    import pyarrow.fs as pafs

    fs, path = pafs.FileSystem.from_uri(root + "/" + (f"?{query}" if query else ""))
    authority = urlsplit(root).netloc
    return fs, bool(authority) and path.strip("/") == unquote(authority)
