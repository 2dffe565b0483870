"""Errors of the storage layer. ``tesseradb.errors.translate`` turns them into PEP 249 classes."""
from __future__ import annotations


class StorageError(Exception):
    """Base of every error the storage layer raises on purpose."""


class IndexCorrupt(StorageError):
    """A saved vector index file is torn, corrupt, of another format version or fails its checksum.

    The index is a cache derived from SQLite: the caller rebuilds it from the chunk table.
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"vector index file {path!r} is unusable: {reason}")
        self.path = path
        self.reason = reason
