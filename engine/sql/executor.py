"""The executor: statement -> handler -> result, in a transaction and a savepoint when it writes.
The single place that turns internal errors into user errors (:func:`translate`)."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import apsw
import sqlglot

from tesseradb import errors, grammar
from tesseradb.embed import EmbeddingCancelled
from tesseradb.embed import ModelError as EmbedModelError
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Params, Result
from tesseradb.sql.database import Database
from tesseradb.sql import qualified_names, query_session
from tesseradb.sql.planner import commits, handler_for, writes
from tesseradb.storage.errors import StorageError


def execute(db: Database, sql: str, params: Params = None) -> Result:
    """Parse and run one statement. Raises only :class:`tesseradb.errors.Error` subclasses."""
    try:
        return run(db, grammar.parse(sql), params)
    except BaseException as exc:  # noqa: BLE001 - translated below, re-raised otherwise
        error = translate(exc)
        if error is exc:
            raise
        raise error from (None if isinstance(exc, errors.Error) else exc)


def run(db: Database, stmt: ast.Statement, params: Params = None) -> Result:
    handler = handler_for(stmt)
    qualified_names.check(db, stmt)
    if commits(stmt):
        db.commit()         # MySQL's implicit commit: the open transaction ends before DDL runs
    db.start_statement()
    began = False
    try:
        if writes(stmt):
            if not db.store.in_transaction:
                db.begin()
                began = True
            with db.store.savepoint():
                result = handler(db, stmt, params)
        else:
            result = handler(db, stmt, params)
        if commits(stmt):
            db.commit()     # ... and the DDL itself is committed when it ends
        if not isinstance(stmt, ast.Query):
            db.statements.clear_plans()     # DDL and admin statements may change what a plan assumed
    except BaseException:
        if began:           # the failed statement opened the transaction: end it, empty, and unlock
            db.store.rollback()
        db.reload_catalog()   # DDL handlers update the cached catalog before the savepoint ends
        raise
    finally:
        db.end_statement(show_warnings=isinstance(stmt, ast.ShowWarnings))
    return result


def run_many(db: Database, stmt: ast.Statement, seq: Sequence[Any]) -> Result:
    """executemany: one statement, many parameter sets, one savepoint (INSERTs embed as one batch)."""
    seq = list(seq)
    db.start_statement()        # catalog synced, warnings cleared, interrupt flag and time limit armed
    began = bool(seq) and not db.store.in_transaction
    if began:
        db.begin()
    try:
        with db.store.savepoint():
            if isinstance(stmt, ast.Query) and stmt.kind == "insert":
                return query_session.insert_many(db, stmt, seq)     # MySQL's INSERT rules (issue 14)
            total = Result(rowcount=0)
            for params in seq:
                result = run(db, stmt, params)
                total.rowcount += max(result.rowcount, 0)
                total.lastrowid = result.lastrowid
            return total
    except BaseException:
        if began:               # the failed batch opened the transaction: end it, empty, and unlock
            db.store.rollback()
            db.reload_catalog()
        raise
    finally:
        db.end_statement(show_warnings=False)   # the batch's warnings become SHOW WARNINGS'


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
    if isinstance(exc, KeyboardInterrupt):
        return exc          # Ctrl-C: the statement was rolled back; KeyboardInterrupt, as sqlite3 raises
    if isinstance(exc, EmbeddingCancelled):
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
