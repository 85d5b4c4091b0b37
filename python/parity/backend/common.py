"""Loaders that work on bytes (Polygraphy's backend.common)."""
import os

from parity import _parity
from parity.backend.base import BaseLoader, call_loader


def bytes_from_path(path):
    """The file's bytes."""
    return _parity.bytes_from_path(os.fspath(path))


class BytesFromPath(BaseLoader):
    """Reads a file's bytes when called."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def call_impl(self):
        return bytes_from_path(self.path)


class SaveBytes(BaseLoader):
    """Writes the bytes a loader returns to ``path`` and passes them on."""

    def __init__(self, obj, path):
        self.obj = obj
        self.path = os.fspath(path)

    def call_impl(self):
        data = call_loader(self.obj)
        with open(self.path, "wb") as f:
            f.write(data)
        return data
