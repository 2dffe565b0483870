"""The executor: statement -> handler -> result, in a transaction and a savepoint when it writes.
Errors are left as raised: the client turns them into the public tree (``tesseradb.errors.translate``).

An INSERT that opens its own transaction embeds before it takes SQLite's write lock: its transaction
begins DEFERRED, so the rows are evaluated, chunk reuse is looked up and the model runs on a read
snapshot while other connections go on writing; the lock is taken by the first write. If another
connection committed meanwhile, that write fails (SQLITE_BUSY_SNAPSHOT) and the statement runs again
under BEGIN IMMEDIATE, with the vectors the model already made (``Database.fresh_vectors``; chunk reuse
looked up again under the lock). A statement larger than one write batch embeds its later batches
holding the lock its first batch's write took (docs/concurrency.md)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tesseradb.grammar import ast
from tesseradb.results import Params, Result
from tesseradb.sql.database import Database
from tesseradb.sql import passes, read_only
from tesseradb.sql.mysql import hidden, qualified_names, time_limit, variables
from tesseradb.sql.planner import Handler, commits, handler_for, writes
from tesseradb.storage.rowstore import stale_snapshot


class _Again(Exception):
    """The deferred first try of a statement could not take the write lock: run it again."""


def run(db: Database, stmt: ast.Statement, params: Params = None) -> Result:
    handler = handler_for(stmt)
    if db.read_only:
        read_only.check(stmt)
    hidden.check(stmt)          # the engine's own tables, sqlite_master, pragma_*, dbstat
    time_limit.arm(db, stmt)    # max_execution_time of a SELECT
    if isinstance(stmt, ast.Query):
        handler = _as_query(handler)
    qualified_names.check(db, stmt)
    if commits(stmt):
        db.commit()         # MySQL's implicit commit: the open transaction ends before DDL runs
    db.start_statement()
    try:
        try:
            return _attempt(db, stmt, params, handler, embeds_first(db, stmt))
        except _Again:
            db.pending_warnings = []
            return _attempt(db, stmt, params, handler, False)
    finally:
        db.fresh_vectors = None
        db.end_statement(show_warnings=isinstance(stmt, ast.ShowWarnings))


def embeds_first(db: Database, stmt: ast.Statement) -> bool:
    """An INSERT (or REPLACE) that opens its own transaction: it embeds before taking the write lock."""
    return isinstance(stmt, ast.Query) and stmt.kind == "insert" and not db.store.in_transaction


def _attempt(db: Database, stmt: ast.Statement, params: Params, handler: Handler, deferred: bool) -> Result:
    began = False
    try:
        if writes(stmt):
            if not db.store.in_transaction:
                db.begin(deferred=deferred)
                db.fresh_vectors = {} if deferred else db.fresh_vectors
                began = True
            with db.store.savepoint():
                result = handler(db, stmt, params)
            if began and deferred and not db.store.writing:
                db.store.rollback()         # it wrote nothing: no read snapshot stays open
        else:
            result = handler(db, stmt, params)
        if commits(stmt):
            db.commit()     # ... and the DDL itself is committed when it ends
        if not isinstance(stmt, ast.Query):
            db.statements.clear_plans()     # DDL and admin statements may change what a plan assumed
    except BaseException as exc:
        retry = began and deferred and stale_snapshot(exc) and not db.store.writing
        if began:           # the failed statement opened the transaction: end it, empty, and unlock
            db.store.rollback()
        db.reload_catalog()   # DDL handlers update the cached catalog before the savepoint ends
        if retry:
            raise _Again() from exc
        if db.read_limit_hit:
            raise time_limit.exceeded() from exc
        raise
    return result


def run_many(db: Database, stmt: ast.Statement, seq: Sequence[Any]) -> Result:
    """executemany: one statement, many parameter sets, one savepoint (INSERTs embed as one batch)."""
    seq = list(seq)
    if db.read_only:
        read_only.check(stmt)
    hidden.check(stmt)
    db.start_statement()        # catalog synced, warnings cleared, interrupt flag and time limit armed
    began = bool(seq) and not db.store.in_transaction
    if began:
        db.begin()
    try:
        with db.store.savepoint():
            if isinstance(stmt, ast.Query) and stmt.kind == "insert":    # the rows as one batch
                from tesseradb.sql.statements.insert import insert_many   # loads with the first INSERT
                return _as_query(lambda db, stmt, _: insert_many(db, stmt, seq))(db, stmt, None)
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


def _as_query(handler: Handler) -> Handler:
    """A query handler with what every query gets: the passes before it (sql/passes.py), and
    ROW_COUNT() / FOUND_ROWS() / LAST_INSERT_ID() after it."""
    def run_query(db: Database, stmt: ast.Query, params: Any = None) -> Result:
        stmt = passes.prepare(db, stmt, params)
        result = handler(db, stmt, params)
        variables.record(db, stmt.kind, result)
        return result
    return run_query


