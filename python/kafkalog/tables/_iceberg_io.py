"""pyiceberg's FileIO for a run of kafkalog (pyiceberg's public ``FileIO`` interface): local
files with Python's own file objects, any other location through the FileIO pyiceberg picks
for its scheme (imported only when a table lives there).

pyiceberg's default for ``file://`` (and for ``s3://``) is its pyarrow FileIO, whose module
imports ``pyarrow.dataset`` and through it pandas: about half a CPU-second of imports for a
local table, before the first byte. kafkalog writes its data files itself; pyiceberg only
reads and writes metadata (JSON, Avro manifests) through this. A catalog configured with its
own ``py-io-impl`` keeps it.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote, urlparse

from pyiceberg.io import PY_IO_IMPL, FileIO, InputFile, InputStream, OutputFile, OutputStream
from pyiceberg.io import load_file_io as _load_file_io
from pyiceberg.typedef import EMPTY_DICT, Properties

#: This class, as a catalog's ``py-io-impl`` names it.
IMPL = f"{__name__}.LocalFirstFileIO"


def local_path(location: str) -> str | None:
    """The local path of ``location`` (``file:///a/b``, ``file:/a/b``, ``/a/b``), or
    ``None`` for a location of another scheme."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            return None
        return unquote(parsed.path)
    if parsed.scheme == "" and location.startswith("/"):
        return location
    return None


class _LocalInputFile(InputFile):
    def __init__(self, location: str, path: str) -> None:
        super().__init__(location)
        self._path = path

    def __len__(self) -> int:
        return os.path.getsize(self._path)

    def exists(self) -> bool:
        return os.path.isfile(self._path)

    def open(self, seekable: bool = True) -> InputStream:
        return open(self._path, "rb")  # noqa: SIM115 (the caller closes it)


class _LocalOutputFile(OutputFile):
    def __init__(self, location: str, path: str) -> None:
        super().__init__(location)
        self._path = path

    def __len__(self) -> int:
        return os.path.getsize(self._path)

    def exists(self) -> bool:
        return os.path.isfile(self._path)

    def to_input_file(self) -> InputFile:
        return _LocalInputFile(self.location, self._path)

    def create(self, overwrite: bool = False) -> OutputStream:
        os.makedirs(os.path.dirname(self._path) or ".", exist_ok=True)
        return open(self._path, "wb" if overwrite else "xb")  # noqa: SIM115 (the caller closes it)


class LocalFirstFileIO(FileIO):
    """Local locations with Python's file objects; others through pyiceberg's FileIO for their
    scheme, with the same properties."""

    def __init__(self, properties: Properties = EMPTY_DICT) -> None:
        super().__init__(properties)
        self._others: dict[str, FileIO] = {}

    def _other(self, location: str) -> FileIO:
        scheme = urlparse(location).scheme
        io = self._others.get(scheme)
        if io is None:
            props = {k: v for k, v in self.properties.items() if k != PY_IO_IMPL}
            io = self._others[scheme] = _load_file_io(props, location)
        return io

    def new_input(self, location: str) -> InputFile:
        path = local_path(location)
        if path is None:
            return self._other(location).new_input(location)
        return _LocalInputFile(location, path)

    def new_output(self, location: str) -> OutputFile:
        path = local_path(location)
        if path is None:
            return self._other(location).new_output(location)
        return _LocalOutputFile(location, path)

    def delete(self, location: str | InputFile | OutputFile) -> None:
        where = location if isinstance(location, str) else location.location
        path = local_path(where)
        if path is None:
            self._other(where).delete(location)
            return
        os.remove(path)


def use_for(catalog: Any) -> None:
    """Makes ``catalog`` (a pyiceberg catalog) open its tables' files through
    :class:`LocalFirstFileIO`, unless its properties name a FileIO of their own."""
    if PY_IO_IMPL not in catalog.properties:
        catalog.properties[PY_IO_IMPL] = IMPL
