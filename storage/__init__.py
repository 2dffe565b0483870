"""Storage layer: SQLite rows and chunks (the source of truth) and the FAISS vector indexes derived from them."""
from __future__ import annotations

from .errors import IndexCorrupt, StorageError

__all__ = ["IndexCorrupt", "StorageError"]
