"""Shared fixtures: a fresh connection per test."""
from __future__ import annotations

import pytest

import tesseradb
@pytest.fixture
def con():
    connection = tesseradb.connect(":memory:")
    yield connection
    connection.close()


@pytest.fixture
def cur(con):
    return con.cursor()


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "test.db")


class SavedIndexes:
    """The vector indexes a closed database file holds inside it (storage/index_cache.py), read and
    damaged by hand the way a disk or a careless tool would."""

    def __init__(self, path: str):
        self.path = path

    def _db(self):
        import apsw
        return apsw.Connection(self.path)

    def names(self) -> list[str]:
        from tesseradb.storage import index_cache
        db = self._db()
        try:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (index_cache.HEAD,)).fetchall():
                return []
            return sorted(r[0] for r in db.execute(f"SELECT name FROM {index_cache.HEAD}"))
        finally:
            db.close()

    def read(self, name: str) -> bytes:
        from tesseradb.storage import index_cache
        db = self._db()
        try:
            return b"".join(r[0] for r in db.execute(
                f"SELECT c.data FROM {index_cache.TABLE} c JOIN {index_cache.HEAD} h "
                "ON h.name = c.name AND h.gen = c.gen WHERE c.name = ? ORDER BY c.part", (name,)))
        finally:
            db.close()

    def write(self, name: str, data: bytes) -> None:
        """Replace the saved stream of ``name`` by ``data`` (one part)."""
        from tesseradb.storage import index_cache
        db = self._db()
        try:
            with db:
                gen = db.execute(f"SELECT gen FROM {index_cache.HEAD} WHERE name = ?", (name,)).fetchall()[0][0]
                db.execute(f"DELETE FROM {index_cache.TABLE} WHERE name = ?", (name,))
                db.execute(f"INSERT INTO {index_cache.TABLE} (name, gen, part, data) VALUES (?, ?, 0, ?)",
                           (name, gen, data))
        finally:
            db.close()

    def delete(self, name: str) -> None:
        from tesseradb.storage import index_cache
        db = self._db()
        try:
            with db:
                db.execute(f"DELETE FROM {index_cache.HEAD} WHERE name = ?", (name,))
                db.execute(f"DELETE FROM {index_cache.TABLE} WHERE name = ?", (name,))
        finally:
            db.close()


@pytest.fixture
def saved_indexes():
    """``saved_indexes(db_path)``: the vector indexes saved inside a (closed) database file."""
    return SavedIndexes
