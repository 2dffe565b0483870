"""Database: statement -> plan -> run. The single place that turns internal errors into user errors."""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw
import sqlglot

from tesseradb import grammar
from tesseradb.grammar import ast
from tesseradb.storage import catalog
from tesseradb.storage.chunks import ColumnIndex, index_directory, install_pending_triggers
from tesseradb.storage.errors import StorageError
from tesseradb.storage.rowstore import MEMORY, RowStore

from tesseradb import errors
from tesseradb.embed import EmbeddingCancelled
from tesseradb.embed import ModelError as EmbedModelError
from tesseradb.errors import UserError
from tesseradb.catalog.tables import Table


@dataclass
class Result:
    """What one statement produced."""
    columns: list[tuple[str, str | None]] | None = None   # (name, declared type) of a result set
    rows: list[tuple] = field(default_factory=list)
    rowcount: int = -1
    lastrowid: int | None = None
    message: str | None = None                          # e.g. for statements with no rows


@dataclass(frozen=True)
class Warn:
    level: str
    code: int
    message: str


Params = Sequence[Any] | dict[str, Any] | None


class Database:
    def __init__(self, path: str = MEMORY, *, busy_timeout: float = 5.0, timeout: float | None = None):
        self.path = path
        self.store = RowStore(path, busy_timeout_ms=int(busy_timeout * 1000))
        self.index_dir = index_directory(path)
        self.timeout = timeout
        self.tables: dict[str, Table] = {}
        self.indexes: dict[tuple[str, str], ColumnIndex] = {}
        self.warnings: list[Warn] = []
        self.pending_warnings: list[Warn] = []
        self.on_progress: Callable[[int, int], None] | None = None
        self._stop = False
        self._deadline: float | None = None
        from tesseradb.catalog import functions
        functions.register(self.store.conn)
        catalog.ensure(self.store)
        self.reload_catalog()

    # -- catalog ---------------------------------------------------------------------------
    def reload_catalog(self) -> None:
        self.tables = {k: Table.from_json(v) for k, v in catalog.load_all(self.store).items()}
        for table in self.tables.values():
            for layout in table.layouts():
                install_pending_triggers(self.store, layout)
        self._schema_version = self._current_schema_version()

    def _current_schema_version(self) -> int:
        return int(self.store.one("PRAGMA schema_version")[0])

    def _sync_catalog(self) -> None:
        """Another connection to the same file may have created, altered or dropped a table."""
        if self._current_schema_version() != self._schema_version:
            self.reload_catalog()

    def table(self, name: str) -> Table:
        table = self.tables.get(name.lower())
        if table is None:
            raise UserError(f"table '{name}' does not exist", errors.NoSuchTable)
        return table

    def column_index(self, table: Table, column: str) -> ColumnIndex:
        key = (table.name.lower(), column.lower())
        idx = self.indexes.get(key)
        if idx is None or idx.layout != table.layout(column):
            idx = self.indexes[key] = ColumnIndex(self.store, table.layout(column), self.index_dir)
        return idx

    def record_error(self, error: errors.Error) -> None:
        """Like MySQL: after a failed statement, SHOW WARNINGS lists its error."""
        self.warnings = [Warn("Error", error.errno, error.msg)]

    def warn(self, message: str, code: int = 1265, level: str = "Warning") -> None:
        self.pending_warnings.append(Warn(level, code, message))

    # -- running statements ----------------------------------------------------------------
    def execute(self, sql: str, params: Params = None) -> Result:
        """Run one statement. Raises only :class:`tesseradb.errors.Error` subclasses."""
        try:
            stmt = grammar.parse(sql)
            return self.run(stmt, params)
        except BaseException as exc:  # noqa: BLE001 - translated below, re-raised otherwise
            raise translate(exc) from (None if isinstance(exc, errors.Error) else exc)

    def run(self, stmt: ast.Statement, params: Params = None) -> Result:
        from tesseradb.sql.planner import handler_for, writes
        handler = handler_for(stmt)
        self._sync_catalog()
        self.pending_warnings = []
        self._stop = False
        self._deadline = time.monotonic() + self.timeout if self.timeout else None
        if self._deadline is not None:
            self.store.set_progress_handler(self._progress_check, 1000)
        began = False
        try:
            if writes(stmt):
                if not self.store.in_transaction:
                    self.begin()
                    began = True
                with self.store.savepoint():
                    result = handler(self, stmt, params)
            else:
                result = handler(self, stmt, params)
        except BaseException:
            if began:           # the failed statement opened the transaction: end it, empty, and unlock
                self.store.rollback()
            self.reload_catalog()   # DDL handlers update the cached catalog before the savepoint ends
            raise
        finally:
            if self._deadline is not None:
                self.store.set_progress_handler(None)
        if not isinstance(stmt, ast.ShowWarnings):
            self.warnings = self.pending_warnings
        return result

    def _progress_check(self) -> bool:
        return self._stop or (self._deadline is not None and time.monotonic() > self._deadline)

    def check_cancelled(self) -> bool:
        """True when the running statement should stop (interrupt() or timeout)."""
        return self._progress_check()

    def interrupt(self) -> None:
        self._stop = True
        self.store.interrupt()

    # -- transactions ----------------------------------------------------------------------
    def begin(self) -> None:
        """Open a write transaction. Loaded vector indexes are first caught up with what other
        connections committed: inside the transaction a search trusts the index for committed data,
        and right after BEGIN IMMEDIATE SQLite shows exactly that (no other writer can commit now)."""
        self.store.begin()
        for (name, column), idx in list(self.indexes.items()):
            table = self.tables.get(name)
            if idx.index is not None and table is not None and column in table.vectors \
                    and table.layout(column) == idx.layout:
                idx.catch_up()

    def commit(self) -> None:
        if not self.store.in_transaction:
            return
        pending = list(self.store.execute(
            "SELECT chunks, chunk_id, added FROM temp._tessera_pending")) if self._has_pending() else []
        self.store.commit()
        if pending:
            self.store.execute("DELETE FROM temp._tessera_pending")
            self._apply_pending(pending)
        for idx in self.indexes.values():
            idx.save(only_if_far_behind=True)

    def rollback(self) -> None:
        self.store.rollback()
        self.reload_catalog()

    def _has_pending(self) -> bool:
        return self.store.one("SELECT 1 FROM sqlite_temp_master WHERE name = '_tessera_pending'") is not None

    def _apply_pending(self, pending: list[tuple[str, int, int]]) -> None:
        by_chunks: dict[str, tuple[set[int], set[int]]] = {}
        for chunks, chunk_id, added in pending:
            adds, dels = by_chunks.setdefault(chunks, (set(), set()))
            (adds if added else dels).add(chunk_id)
        for table in list(self.tables.values()):
            for layout in table.layouts():
                if layout.chunks not in by_chunks:
                    continue
                idx = self.column_index(table, layout.column)
                if idx.index is None:
                    idx.catch_up()      # build (or load and catch up) now, not at the first query
                else:
                    adds, dels = by_chunks[layout.chunks]
                    idx.apply_committed(sorted(adds - dels), sorted(dels - adds))

    def save_indexes(self) -> None:
        for idx in self.indexes.values():
            idx.save()

    def close(self) -> None:
        try:
            self.rollback()
            self.save_indexes()
        finally:
            self.store.close()      # even when the above failed: never leave the file open


# -- the one place where internal errors become user errors -----------------------------------
_SQLITE_MESSAGES: list[tuple[re.Pattern[str], type[errors.Error], str]] = [
    (re.compile(r"no such table: (?:main\.)?(.+)"), errors.NoSuchTable, "table '{0}' does not exist"),
    (re.compile(r"no such column: (.+?)(?: - should this be a string literal in single-quotes\?)?"),
     errors.NoSuchColumn, "Unknown column '{0}' in 'field list'"),
    (re.compile(r"table (\S+) has no column named (.+)"), errors.NoSuchColumn, "Unknown column '{1}' in 'field list'"),
    (re.compile(r"(?:table|index) (\S+) already exists"), errors.TableExists, "table '{0}' already exists"),
    (re.compile(r"UNIQUE constraint failed: \S+\.id"), errors.DuplicateKey, "duplicate id"),
    (re.compile(r"UNIQUE constraint failed: (.+)"), errors.DuplicateKey, "Duplicate entry for unique index on {0}"),
    (re.compile(r"CHECK constraint failed: (.+)"), errors.DataError, "{0}"),
    (re.compile(r"integer overflow"), errors.DataError, "Out of range value: integer overflow"),
    (re.compile(r"NOT NULL constraint failed: \S+\.(.+)"), errors.ConstraintError, "Column '{0}' cannot be null"),
    (re.compile(r"(.*)"), errors.ProgrammingError, "{0}"),
]

_APSW_CLASSES: list[tuple[type[BaseException], type[errors.Error]]] = [
    (apsw.BusyError, errors.Busy),
    (apsw.LockedError, errors.Busy),
    (apsw.InterruptError, errors.Interrupted),
    (apsw.FullError, errors.OperationalError),
    (apsw.IOError, errors.OperationalError),
    (apsw.CorruptError, errors.InternalError),
    (apsw.TooBigError, errors.DataError),
    (apsw.MismatchError, errors.DataError),
    (apsw.CantOpenError, errors.OperationalError),     # the file: missing folder, a directory, no access
    (apsw.ReadOnlyError, errors.OperationalError),
    (apsw.PermissionsError, errors.OperationalError),
    (apsw.NotADBError, errors.OperationalError),
]


def _from_sqlite(exc: apsw.Error) -> errors.Error:
    text = re.sub(r"^\w+Error: ", "", str(exc))
    for cls, kind in _APSW_CLASSES:
        if isinstance(exc, cls):
            return kind("Query execution was interrupted" if kind is errors.Interrupted else text)
    for pattern, kind, template in _SQLITE_MESSAGES:
        match = pattern.fullmatch(text.strip())
        if match:
            return kind(template.format(*[g.strip('"') for g in match.groups()]))
    return errors.ProgrammingError(text)


_PARSER_DIR = os.path.dirname(sqlglot.__file__) + os.sep


def _raised_in_parser(exc: BaseException) -> bool:
    """True when the exception comes from inside sqlglot: it could not handle the input."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_PARSER_DIR):
            return True
        tb = tb.tb_next
    return False


def translate(exc: BaseException) -> BaseException:
    """Map any exception raised below the engine to the public error tree."""
    if isinstance(exc, errors.Error):
        return exc
    if isinstance(exc, UserError):
        return exc.kind(exc.msg)
    if isinstance(exc, grammar.GrammarError):
        return errors.SqlSyntaxError(exc.msg)
    if isinstance(exc, EmbedModelError):
        return errors.ModelError(str(exc))
    if isinstance(exc, StorageError):
        return errors.OperationalError(str(exc))
    if isinstance(exc, apsw.Error):
        return _from_sqlite(exc)
    if isinstance(exc, (KeyboardInterrupt, EmbeddingCancelled)):
        return errors.Interrupted("Query execution was interrupted")
    if isinstance(exc, (MemoryError, RecursionError)):
        return errors.OperationalError(f"statement too large or too deeply nested ({type(exc).__name__})")
    if isinstance(exc, UnicodeError):     # a str with lone surrogates cannot be stored as UTF-8
        return errors.DataError(f"Incorrect string value: not valid UTF-8 ({getattr(exc, 'reason', exc)})")
    if isinstance(exc, OverflowError):    # e.g. an integer beyond 64 bits bound to SQLite
        return errors.DataError(f"Out of range value: {exc}")
    if isinstance(exc, TypeError) and str(exc).startswith("Bad binding argument type"):
        return errors.ProgrammingError(f"Error binding parameter: {str(exc).split(' - ', 1)[-1]} is not supported")
    if isinstance(exc, OSError):          # the disk: full, read-only, gone
        return errors.OperationalError(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError) and str(exc) == "null character in query":
        return errors.SqlSyntaxError("syntax error: NUL character in the statement (pass such text as a parameter)")
    if isinstance(exc, Exception) and _raised_in_parser(exc):
        return errors.SqlSyntaxError(f"syntax error: the statement could not be parsed ({type(exc).__name__})")
    if isinstance(exc, Exception):
        return errors.InternalError(f"internal error: {type(exc).__name__}: {exc}")
    return exc
