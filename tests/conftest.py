"""Shared fixtures (a fresh connection per test, the indexes saved inside a file) and the rule that
marks the slow part of the suite.

``slow`` (registered in pyproject.toml) marks a test that starts a process, opens a socket or
stresses the engine: ``bash scripts/test -m "not slow"`` runs the rest in a few minutes; the README's
``bash scripts/test`` runs everything. Folders and files that are slow as a whole are listed in
``SLOW_PATHS``, fixtures that start a process in ``SLOW_FIXTURES``; a single slow test elsewhere
carries ``@pytest.mark.slow`` itself.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import tesseradb

TESTS = Path(__file__).resolve().parent
# relative to tests/: a folder (trailing slash) or a file, and why its tests are slow
SLOW_PATHS = {
    "server/": "a tessera serve on a real socket, driven by real MySQL clients and processes",
    "http/": "tessera serve's HTTP JSON API on a real socket, driven by the official manticoresearch client",
    "mcp/": "tessera mcp over stdio or HTTP: a server process, the MCP SDK's client",
    "distributed/": "a local Ray cluster",
    "stress/": "concurrency, crash and fuzz runs",
    "embed/remote/": "loopback HTTP stand-ins of hosted APIs, over sockets",
    "chat/test_call_chat.py": "CALL CHAT against a loopback stand-in of the OpenAI chat API, over sockets",
    "chat/test_chat_docs.py": "docs/chat.md's CALL CHAT examples against the loopback stand-in",
    "chat/test_standin.py": "the official openai client against the loopback stand-in",
    "chat/test_chat_server.py": "tessera serve on a real socket, PyMySQL, and the chat stand-in",
    "chat/test_chat_mcp.py": "tessera mcp over stdio with the MCP SDK's client, and the chat stand-in",
    "chat/test_chat_http.py": "tessera serve --http on a real socket, and the chat stand-in",
    "chat/test_chat_shell.py": "the tessera shell in a terminal and in batch mode against the stand-in",
    "install/": "a plain install in its own virtual environment",
    "docs/test_docs_code.py": "every docs page run through the tessera shell process",
    "docs/test_sql_examples.py": "every sql_examples script run through the tessera shell process",
    "architecture/test_startup_imports.py": "fresh Python processes, one per probe",
}
# fixtures of tests that start a process (tests/shell/conftest.py: the shell in batch mode, in a
# terminal, and the environment a test passes to a shell it starts itself)
SLOW_FIXTURES = {"run", "terminal", "shell_env"}


def is_slow(relative: str, fixtures) -> bool:
    return any(relative == p or (p.endswith("/") and relative.startswith(p)) for p in SLOW_PATHS) \
        or bool(SLOW_FIXTURES & set(fixtures))


def pytest_collection_modifyitems(config, items):
    for item in items:
        try:
            relative = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
        except ValueError:
            continue
        if item.get_closest_marker("stress") or is_slow(relative, getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

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
