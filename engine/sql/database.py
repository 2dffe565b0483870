"""Database: the state of one connection to one file: the row store, the cached catalog, the loaded
vector indexes, warnings, the time limit and the transaction (whose commit updates the indexes).
Running statements is the executor's job (``tesseradb.sql.executor``)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tesseradb import errors
from tesseradb.catalog import date_upgrade, functions
from tesseradb.embed import heading_upgrade, sql_tokens
from tesseradb.embed.prepared import Prepared
from tesseradb.embed.remote.access import RemoteAccess
from tesseradb.catalog.tables import Table
from tesseradb.errors import UserError
from tesseradb.io.file_access import FileAccess
from tesseradb.results import Warn
from tesseradb.sql.statement_cache import StatementCache
from tesseradb.storage import catalog
from tesseradb.storage.chunk_table import ColumnLayout, committed_changes, install_pending_triggers
from tesseradb.storage.chunks import ColumnIndex, legacy_index_directory
from tesseradb.storage.rowstore import MEMORY, RowStore


class Database:
    def __init__(self, path: str = MEMORY, *, busy_timeout: float = 5.0, timeout: float | None = None,
                 secure_file_priv: str | None = None, read_only: bool = False,
                 remote_access: RemoteAccess = RemoteAccess()):
        self.path = path
        self.file_access = FileAccess(secure_file_priv)     # which files SQL may read and write
        self.remote_access = remote_access      # which endpoints and env: keys remote models may use
        self.read_only = read_only      # statements that write are refused (sql/read_only.py)
        self.store = RowStore(path, busy_timeout_ms=int(busy_timeout * 1000), read_only=read_only)
        self.legacy_index_dir = legacy_index_directory(path)    # release 0.2's side files, migrated
        self.timeout = timeout
        self.tables: dict[str, Table] = {}
        self.indexes: dict[tuple[str, str], ColumnIndex] = {}
        self.warnings: list[Warn] = []
        self.pending_warnings: list[Warn] = []
        self.on_progress: Callable[[int, int], None] | None = None
        self.prepared: Prepared | None = None   # what a write embedded before its transaction (sql/embed_first.py)
        self.on_chat_token: Callable[[str], None] | None = None   # CALL CHAT streams its answer here (shell)
        self.max_result_bytes: int | None = None    # a SELECT's rows stop past this (statements/query.py)
        self._stop = False
        self._deadline: float | None = None
        self.read_limit: float | None = None       # this statement's max_execution_time (sql/time_limit.py)
        self._read_deadline: float | None = None
        self.read_limit_hit = False
        self.statements = StatementCache()      # parsed SELECTs and their plans (statement_cache.py)
        self.session: Any = None                # MySQL session state (sql/mysql/variables.py)
        self.schemas: dict[tuple[str, int], Any] = {}   # INSERT's key facts per schema version (sql/mysql/schema_info.py)
        functions.register(self.store.conn)
        sql_tokens.register(self.store.conn)         # knn_chunk_section(max_tokens)'s tokenizer
        catalog.ensure(self.store)      # read-only: a no-op on a tesseradb file, refused on another
        self.reload_catalog()
        if not read_only and self.tables:         # (a new or empty file has nothing to upgrade)
            from tesseradb.catalog import fulltext
            heading_upgrade.upgrade(self.store, self.tables.values())   # chunk rows from before heading paths
            fulltext.upgrade(self.store, self.tables.values())   # a file from before full-text search
            if date_upgrade.upgrade(self.store, self.tables.values()):   # DATE/DATETIME held Unix seconds
                self.reload_catalog()

    # -- catalog ---------------------------------------------------------------------------
    def reload_catalog(self) -> None:
        self.tables = {k: Table.from_json(v) for k, v in catalog.load_all(self.store).items()}
        self.statements.clear_plans()
        for table in self.tables.values():
            for layout in table.layouts():
                install_pending_triggers(self.store, layout)
        self._schema_version = self._current_schema_version()

    def _current_schema_version(self) -> int:
        version = int(self.store.one("PRAGMA schema_version")[0])
        # the data version of the read that saw this schema version: a read that later finds the same
        # one knows that nothing was committed since, by any connection (``read_unchanged``)
        self.checked_data_version = self.store.data_version()
        return version

    def read_unchanged(self) -> bool:
        """Whether nothing was committed (by any connection, this one included) between the last
        catalog check and this connection's latest read: SQLite's data version (a file control, no
        statement) is brought up to date when a read transaction starts. A statement that ran on the
        catalog as it was, then read the database, knows by this that the catalog and the loaded
        indexes were current (search/knn_direct.py: a cached knn() SELECT checks after its rows)."""
        return self.store.data_version() == self.checked_data_version

    def sync_catalog(self) -> None:
        """Another connection to the same file may have created, altered or dropped a table."""
        if self._current_schema_version() != self._schema_version:
            self.reload_catalog()

    def table(self, name: str) -> Table:
        table = self.tables.get(name.lower())
        if table is None:
            raise errors.no_such_table(name)
        return table

    def column_index(self, table: Table, column: str, layout: ColumnLayout | None = None) -> ColumnIndex:
        """The index of ``table.column`` (``layout``: its layout, when the caller has it already)."""
        key = (table.name.lower(), column.lower())
        idx = self.indexes.get(key)
        layout = table.layout(column) if layout is None else layout
        if idx is None or (idx.layout is not layout and idx.layout != layout):
            idx = self.indexes[key] = ColumnIndex(self.store, layout, self.legacy_index_dir)
        return idx

    def record_error(self, error: errors.Error) -> None:
        """Like MySQL: after a failed statement, SHOW WARNINGS lists its error."""
        self.warnings = [Warn("Error", error.errno, error.msg)]

    def warn(self, message: str, code: int = 1265, level: str = "Warning", *, truncated: str | None = None) -> None:
        self.pending_warnings.append(Warn(level, code, message, truncated))

    # -- running statements ----------------------------------------------------------------
    def start_statement(self) -> None:
        """Before each statement: see other connections' DDL, clear its warnings, arm the time limit."""
        self.store.end_turn()       # a transaction SQLite ended by itself gives the write turn back
        self.sync_catalog()
        self._begin_statement()

    def start_read(self) -> None:
        """``start_statement`` without the catalog check: for a statement that checks after it read
        (``read_unchanged``) and runs again by the general path when something changed."""
        self.store.end_turn()
        self._begin_statement()

    def _begin_statement(self) -> None:
        self.pending_warnings = []
        self._stop = False
        now = time.monotonic()
        self._deadline = now + self.timeout if self.timeout else None
        self._read_deadline = now + self.read_limit if self.read_limit else None
        self.read_limit_hit = False
        if self._deadline is not None or self._read_deadline is not None:
            self.store.set_progress_handler(self._progress_check, 1000)

    def end_statement(self, show_warnings: bool) -> None:
        if self._deadline is not None or self._read_deadline is not None:
            self.store.set_progress_handler(None)
        self.read_limit = None
        if not show_warnings:
            self.warnings = self.pending_warnings

    def _progress_check(self) -> bool:
        if self._read_deadline is not None and time.monotonic() > self._read_deadline:
            self.read_limit_hit = True
            return True
        return self._stop or (self._deadline is not None and time.monotonic() > self._deadline)

    def check_cancelled(self) -> bool:
        """True when the running statement should stop (interrupt() or timeout)."""
        return self._progress_check()

    def interrupt(self) -> None:
        self._stop = True
        self.store.interrupt()

    # -- transactions ----------------------------------------------------------------------
    def begin(self) -> None:
        """Open a write transaction (BEGIN IMMEDIATE: SQLite's write lock is held from now on). Loaded
        vector indexes are caught up with what other connections committed: inside the transaction a
        search trusts the index for committed data, and right after BEGIN IMMEDIATE SQLite shows
        exactly that (no other writer can commit now). Most of that work (adding the others' new
        chunks to this connection's graphs) is done first, on one read snapshot before the lock, so
        that under the lock only what was committed in between is left."""
        if self.indexes and not self.store.in_transaction:
            with self.store.savepoint():
                self._catch_up_indexes()
        self.store.begin()
        self._catch_up_indexes()

    def _catch_up_indexes(self) -> None:
        for (name, column), idx in list(self.indexes.items()):
            table = self.tables.get(name)
            if idx.index is not None and table is not None and column in table.vectors \
                    and table.layout(column) == idx.layout:
                idx.catch_up()

    def commit(self) -> None:
        if not self.store.in_transaction:
            return
        self.store.commit()
        if self.has_pending():
            try:        # the committed TEMP rows are read a page at a time as they are applied
                self._apply_pending(committed_changes(self.store))
            finally:
                self.store.execute("DELETE FROM temp._tessera_pending")
        for idx in self.indexes.values():
            idx.save(only_if_far_behind=True)

    def rollback(self) -> None:
        self.store.rollback()
        self.reload_catalog()

    def has_pending(self) -> bool:
        return self.store.one("SELECT 1 FROM sqlite_temp_master WHERE name = '_tessera_pending'") is not None

    def _apply_pending(self, pending: dict[str, tuple[Any, Any]]) -> None:
        for table in list(self.tables.values()):
            for layout in table.layouts():
                if layout.chunks not in pending:
                    continue
                idx = self.column_index(table, layout.column)
                if idx.index is None:
                    idx.catch_up()      # build (or load and catch up) now, not at the first query
                else:
                    idx.apply_committed(*pending[layout.chunks])

    def save_indexes(self, *, force: bool = False) -> None:
        for idx in self.indexes.values():
            idx.save(force=force)

    def close(self) -> None:
        try:
            self.rollback()
            self.save_indexes()
        finally:
            self.store.close()      # even when the above failed: never leave the file open


