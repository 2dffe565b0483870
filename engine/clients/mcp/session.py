"""The state of one ``tessera mcp`` process: its connections, the tables it shows, its options.

Each worker thread has its own read connection (and write connection, with --allow-writes): a
connection belongs to one thread, and a slow call on one worker does not hold the others
(``tesseradb.clients.mcp.server.Worker``). ``reader`` and ``writer`` are the calling thread's."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import tesseradb
from tesseradb.clients.mcp import schema
from tesseradb.clients.mcp.limits import MAX_SQL_BYTES, MAX_SQL_ROWS
from tesseradb.clients.mcp.schema import TableInfo


CATALOG_SECONDS = 10.0          # how long the tables read at the last look are trusted


class ToolFailure(Exception):
    """A request the tool refuses; the message tells the agent what to send instead."""


@dataclass
class Session:
    path: str
    only: list[str] | None = None           # --table: the tables the tools show (None: all)
    allow_writes: bool = False
    sync_root: str | None = None            # --allow-sync DIR, resolved
    timeout: float | None = None            # statement_timeout of every connection
    allow_remote: tuple[str, ...] = ()      # --allow-remote: endpoints remote models may call (none: refused)
    allow_env: tuple[str, ...] = ()         # --allow-env: what api_key='env:NAME' may read
    chat_model: str | None = None           # --chat-model: the ask tool's chat model (docs/chat.md)
    tables: dict[str, TableInfo] = field(default_factory=dict)
    loaded_at: float = 0.0
    _local: threading.local = field(default_factory=threading.local, repr=False)
    _opened: list[tesseradb.Connection] = field(default_factory=list, repr=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def open(self) -> None:
        """Connect this thread and read the catalog (the first worker thread, at start)."""
        self.open_thread()
        self.refresh()

    def open_thread(self) -> None:
        """This thread's connections: a read-only one with no file statement at all, bounded to
        MAX_SQL_ROWS rows (MySQL's ``sql_select_limit``) and MAX_SQL_BYTES of values per SELECT."""
        if getattr(self._local, "reader", None) is not None:
            return
        remote = {"allow_remote": self.allow_remote, "allow_env": self.allow_env}   # docs/models.md
        reader = tesseradb.connect(self.path, read_only=True, statement_timeout=self.timeout,
                                   secure_file_priv="", **remote)
        reader.execute(f"SET sql_select_limit = {MAX_SQL_ROWS + 1}")
        reader.max_result_bytes = MAX_SQL_BYTES
        writer = None
        if self.allow_writes:
            writer = tesseradb.connect(self.path, autocommit=True, statement_timeout=self.timeout,
                                       secure_file_priv=self.sync_root or "", **remote)   # files: --allow-sync only
        self._local.reader, self._local.writer = reader, writer
        with self._guard:
            self._opened.extend(c for c in (writer, reader) if c is not None)

    @property
    def reader(self) -> tesseradb.Connection:
        if getattr(self._local, "reader", None) is None:
            self.open_thread()
        return self._local.reader

    @property
    def writer(self) -> tesseradb.Connection | None:
        self.reader                 # noqa: B018 - opens this thread's connections
        return self._local.writer

    def connections(self) -> list[tesseradb.Connection]:
        """The calling thread's connections (to interrupt them from another thread)."""
        return [c for c in (getattr(self._local, "writer", None), getattr(self._local, "reader", None)) if c]

    def refresh(self) -> None:
        self.tables = schema.load(self.reader, self.only)
        self.loaded_at = time.monotonic()

    def current_tables(self) -> dict[str, TableInfo]:
        """The catalog as last read, read again when older than CATALOG_SECONDS. Not on every call:
        SHOW and DESCRIBE make the engine drop its cached query plans, which a search reuses."""
        if time.monotonic() - self.loaded_at > CATALOG_SECONDS:
            self.refresh()
        return self.tables

    def close(self) -> None:
        with self._guard:
            opened, self._opened = self._opened, []
        for con in opened:
            con.close()

    @property
    def name(self) -> str:
        return os.path.splitext(os.path.basename(self.path))[0] or "tessera"

    def table(self, name: str | None, *, searchable: bool = False) -> TableInfo:
        """The table an agent named, or the only (searchable) one when it named none."""
        tables = self.current_tables()
        if name is not None and str(name).lower() not in tables:
            self.refresh()              # created since the catalog was read?
            tables = self.tables
        candidates = [t for t in tables.values() if not searchable or t.search_column or t.text_columns]
        if name is None:
            if len(candidates) == 1:
                return candidates[0]
            listed = ", ".join(t.name for t in candidates) or "none"
            raise ToolFailure(f"name a table: this database has several ({listed})" if candidates
                              else "this database has no table that can be searched")
        info = tables.get(str(name).lower())
        if info is None:
            listed = ", ".join(t.name for t in tables.values()) or "none"
            raise ToolFailure(f"unknown table {name!r} (tables: {listed})")
        if searchable and info not in candidates:
            raise ToolFailure(f"table '{info.name}' has no text or model-backed vector column to search")
        return info

    def write_connection(self) -> tesseradb.Connection:
        if self.writer is None:
            raise ToolFailure("the server is read-only: start it with --allow-writes to change documents")
        return self.writer
