"""A pyarrow filesystem that counts the bytes read from ``.log`` files: the planning byte
budget is measured through it (tests and benches/bench_remote.py)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs

__all__ = ["Counting"]


class Counting(pafs.FileSystemHandler):
    """A pyarrow filesystem that counts the bytes read from .log files."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self.inner = inner
        self.log_bytes = 0

    def get_type_name(self):
        return "counting"

    def equals(self, other):
        return self is other

    def get_file_info(self, paths):
        return self.inner.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.inner.get_file_info(selector)

    def normalize_path(self, path):
        return path

    def open_input_file(self, path):
        handler = self
        f = self.inner.open_input_file(path)

        class File(pa.PythonFile):
            pass

        class Reader:
            def __init__(self):
                self.pos = 0

            def read(self, n=-1):
                data = f.read(n)
                if path.endswith(".log"):
                    handler.log_bytes += len(data)
                return data

            def seek(self, pos, whence=0):
                return f.seek(pos, whence)

            def tell(self):
                return f.tell()

            def size(self):
                return f.size()

            def readable(self):
                return True

            def seekable(self):
                return True

            def close(self):
                f.close()

            @property
            def closed(self):
                return f.closed

        return pa.PythonFile(Reader(), mode="r")

    def open_input_stream(self, path):
        return self.open_input_file(path)

    for _name in (
        "create_dir",
        "delete_dir",
        "delete_dir_contents",
        "delete_root_dir_contents",
        "delete_file",
        "move",
        "copy_file",
        "open_output_stream",
        "open_append_stream",
    ):
        locals()[_name] = lambda self, *a, **k: (_ for _ in ()).throw(NotImplementedError())
