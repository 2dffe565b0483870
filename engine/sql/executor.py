"""The executor: statement -> handler -> result, inside the one statement bracket (``statement``): a
transaction and a savepoint when it writes, MySQL's implicit commit where the planner says so.
Errors are left as raised: the client turns them into the public tree (``tesseradb.errors.translate``).

An INSERT that opens its own transaction embeds before it takes SQLite's write lock: its transaction
begins DEFERRED, so the rows are evaluated, chunk reuse is looked up and the model runs on a read
snapshot while other connections go on writing; the lock is taken by the first write. If another
connection committed meanwhile, that write fails (SQLITE_BUSY_SNAPSHOT) and the statement runs again
under BEGIN IMMEDIATE, with the vectors the model already made (``Database.fresh_vectors``; chunk reuse
looked up again under the lock). A statement larger than one write batch embeds its later batches
holding the lock its first batch's write took (docs/durability.md)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
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
    if isinstance(stmt, ast.Query):
        handler = _as_query(handler)
    first = embeds_first(db, stmt)
    try:
        try:
            with statement(db, stmt, opens=writes(stmt), deferred=first):
                return handler(db, stmt, params)
        except _Again:              # someone committed while it embedded: again, holding the lock
            with statement(db, stmt, opens=writes(stmt)):
                return handler(db, stmt, params)
    finally:
        db.fresh_vectors = None


def embeds_first(db: Database, stmt: ast.Statement) -> bool:
    """An INSERT (or REPLACE) that opens its own transaction: it embeds before taking the write lock."""
    return isinstance(stmt, ast.Query) and stmt.kind == "insert" and not db.store.in_transaction


def run_many(db: Database, stmt: ast.Statement, seq: Sequence[Any]) -> Result:
    """executemany: one statement, many parameter sets, one savepoint (INSERTs embed as one batch);
    every other statement runs each parameter set as a statement of its own inside the batch's bracket."""
    seq = list(seq)
    with statement(db, stmt, opens=bool(seq), batch=True):
        if isinstance(stmt, ast.Query) and stmt.kind == "insert":    # the rows as one batch
            from tesseradb.sql.statements.insert import insert_many   # loads with the first INSERT
            return _as_query(lambda db, stmt, _: insert_many(db, stmt, seq))(db, stmt, None)
        total = Result(rowcount=0)
        for params in seq:
            result = run(db, stmt, params)
            total.rowcount += max(result.rowcount, 0)
            total.lastrowid = result.lastrowid
        return total


@contextlib.contextmanager
def statement(db: Database, stmt: ast.Statement, *, opens: bool, batch: bool = False,
              deferred: bool = False) -> Iterator[None]:
    """The one bracket of a statement (``run``) or of a batch of parameter sets (``run_many``):

    1. refused first: a write on a read-only connection, the engine's own tables; a single statement
       also arms its time limit (max_execution_time) and checks its qualified names;
    2. MySQL's implicit commit (``planner.commits``: DDL, TRUNCATE, SET autocommit = 1) ends the open
       transaction before the statement runs;
    3. ``start_statement``: other connections' DDL seen, warnings cleared, the interrupt flag reset;
    4. ``opens`` (the statement writes; a non-empty batch): the transaction is opened if none is, and
       the statement runs in a savepoint, so a failure undoes all of it and nothing before it;
    5. success: a committing statement commits itself; a statement that is not a query clears the
       cached query plans;
    6. failure: the transaction the statement opened is rolled back (empty, unlocked), the catalog is
       reloaded (DDL updates it before the savepoint ends), a read over its time limit says so;
    7. ``end_statement``: its warnings become SHOW WARNINGS' (not for SHOW WARNINGS itself).

    ``deferred`` (``embeds_first``): the transaction it opens begins DEFERRED, the model's vectors are
    kept (``Database.fresh_vectors``), and a first write that finds the lock taken or the snapshot
    stale raises ``_Again`` for ``run`` to run the statement once more under BEGIN IMMEDIATE.

    Whether the connection then commits (autocommit) is the connection's business
    (``clients/dbapi.py``), which reads the same ``planner.commits``.
    """
    if db.read_only:
        read_only.check(stmt)
    hidden.check(stmt)          # the engine's own tables, sqlite_master, pragma_*, dbstat
    if not batch:
        time_limit.arm(db, stmt)    # max_execution_time of a SELECT
        qualified_names.check(db, stmt)
        if commits(stmt):
            db.commit()         # MySQL's implicit commit: the open transaction ends before DDL runs
    db.start_statement()
    began = False
    try:
        if opens and not db.store.in_transaction:
            db.begin(deferred=deferred)
            if deferred:
                db.fresh_vectors = {}
            began = True
        if opens:
            with db.store.savepoint():
                yield
            if began and deferred and not db.store.writing:
                db.store.rollback()         # it wrote nothing: no read snapshot stays open
        else:
            yield
        if not batch:
            if commits(stmt):
                db.commit()     # ... and the DDL itself is committed when it ends
            if not isinstance(stmt, ast.Query):
                db.statements.clear_plans()     # DDL and admin statements may change what a plan assumed
    except BaseException as exc:
        again = began and deferred and stale_snapshot(exc) and not db.store.writing
        if began:           # the failed statement opened the transaction: end it, empty, and unlock
            db.store.rollback()
        db.reload_catalog()   # DDL handlers update the cached catalog before the savepoint ends
        if again:
            raise _Again() from exc
        if db.read_limit_hit:
            raise time_limit.exceeded() from exc
        raise
    finally:
        db.end_statement(show_warnings=not batch and isinstance(stmt, ast.ShowWarnings))


def _as_query(handler: Handler) -> Handler:
    """A query handler with what every query gets: the passes before it (sql/passes.py), and
    ROW_COUNT() / FOUND_ROWS() / LAST_INSERT_ID() after it."""
    def run_query(db: Database, stmt: ast.Query, params: Any = None) -> Result:
        stmt = passes.prepare(db, stmt, params)
        result = handler(db, stmt, params)
        variables.record(db, stmt.kind, result)
        return result
    return run_query


