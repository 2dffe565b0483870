"""The executor: statement -> handler -> result, inside the one statement bracket (``statement``): a
transaction and a savepoint when it writes, MySQL's implicit commit where the planner says so.
Errors are left as raised: the client turns them into the public tree (``tesseradb.errors.translate``).

A write that embeds and opens its own transaction (INSERT/REPLACE ... VALUES or SELECT, UPDATE of a
``from`` column, executemany of them, LOAD DATA) embeds before it takes SQLite's write lock: the bracket runs its first
pass (``statements/embed_first.py``: rows evaluated, texts cut, the model run, no transaction open),
then BEGIN IMMEDIATE, then the statement, which finds its cuts and vectors made. Other writers wait
for its SQLite writes only (docs/durability.md).

A SELECT whose plan is cached takes a shorter way (``_direct``): no bracket, its catalog check after
its read (``Database.read_unchanged``), the general way again when anything was committed since."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tesseradb.grammar import ast
from tesseradb.results import Params, Result
from tesseradb.sql.database import Database
from tesseradb.sql import passes, read_only
from tesseradb.sql.mysql import hidden, qualified_names, time_limit, variables
from tesseradb.sql.planner import Handler, commits, handler_for, writes
from tesseradb.sql.statements import query

EMBEDS = {"insert", "update"}       # the queries that may embed (statements/embed_first.py); LOAD DATA too


def run(db: Database, stmt: ast.Statement, params: Params = None) -> Result:
    if type(stmt) is ast.Query and stmt.kind == "select":
        result = _direct(db, stmt, params)
        if result is not None:
            return result
    handler = handler_for(stmt)
    if isinstance(stmt, ast.Query):
        handler = _as_query(handler)
    with statement(db, stmt, opens=writes(stmt), first=_first_pass(db, stmt, [params])):
        return handler(db, stmt, params)


def _direct(db: Database, stmt: ast.Query, params: Params) -> Result | None:
    """A SELECT whose plan is cached, run with only what the bracket below does for a plain read: the
    session's max_execution_time armed as the bracket arms it (``tessera serve`` sets one: every
    SELECT a client sends has it), no other time limit, no session pass, no row bound, no OPTION
    (each is a reason for the general path),
    warnings cleared and kept. A knn() SELECT of its table's own rows takes its direct form
    (search/knn_direct.py). The catalog check comes after the rows, not before:
    ``Database.read_unchanged`` says whether anything was committed since the last check (a read
    of the database brings SQLite's data version up to date; a SELECT that reads none of it depends
    on no table), and if so the statement runs again by the general path, the catalog checked first.
    None: the general path (``statement`` and the query handler) runs it. Right after a model run
    each step of the bracket costs ~3x its warm time (issue 37)."""
    cache = db.statements
    plan = cache.plan_for(stmt.expr)
    if plan is None or stmt.outfile is not None or stmt.options or not cache.wants_no_session_pass(stmt):
        return None
    limit = query.plain_read(db, stmt.expr)       # max_execution_time (no hint: plain_read says so)
    if limit is False:
        return None
    # a plan is kept only after the bracket ran this very tree, which refused the engine's own tables
    # (a check of the tree alone) and read_only's (a SELECT without OUTFILE passes)
    direct = plan.direct
    db.read_limit = limit
    db.start_read()
    try:
        if direct is not None and direct.columns is not None:
            result = query.run_direct(db, plan, direct, params)
        else:
            result = query.run_select(db, stmt.expr, params)
        if result is None or not db.read_unchanged():
            return None             # no row read (no knn() hit), or a commit since the catalog check
        variables.record(db, "select", result)
        return result
    except Exception as exc:
        if not db.read_unchanged() and not db.check_cancelled():
            return None             # perhaps the catalog's fault: the general path checks it first
        db.reload_catalog()         # as the bracket does
        if db.read_limit_hit:
            raise time_limit.exceeded() from exc
        raise
    finally:
        db.end_statement(show_warnings=False)


def _first_pass(db: Database, stmt: ast.Statement, param_sets: Sequence[Any],
                many: bool = False) -> Callable[[], None] | None:
    """The embedding a write does before its transaction (statements/embed_first.py), or None."""
    embeds = stmt.kind in EMBEDS if isinstance(stmt, ast.Query) else isinstance(stmt, ast.LoadData)
    if not (embeds and param_sets):
        return None

    def first() -> None:
        from tesseradb.sql.statements.embed_first import embed_first   # loads with the first such write
        embed_first(db, stmt, param_sets, many=many)
    return first


def run_many(db: Database, stmt: ast.Statement, seq: Sequence[Any]) -> Result:
    """executemany: one statement, many parameter sets, one savepoint (INSERTs embed as one batch);
    every other statement runs each parameter set as a statement of its own inside the batch's bracket."""
    seq = list(seq)
    with statement(db, stmt, opens=bool(seq), batch=True, first=_first_pass(db, stmt, seq, many=True)):
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
              first: Callable[[], None] | None = None) -> Iterator[None]:
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

    ``first``: a write that embeds runs its first pass (statements/embed_first.py) before 4 opens the
    transaction, so the model runs with no lock held; its cuts and vectors (``Database.prepared``)
    are dropped when the bracket ends. Inside an open transaction there is no first pass: the lock
    is held already (BEGIN takes it, and so does a transaction's first write).

    Whether the connection then commits (autocommit) is the connection's business
    (``clients/dbapi.py``), which reads the same ``planner.commits``.
    """
    if db.read_only:
        read_only.check(stmt)
    db.statements.names_no_hidden_table(stmt, hidden.check)   # the engine's own tables, sqlite_master, pragma_*, dbstat
    if not batch:
        time_limit.arm(db, stmt)    # max_execution_time of a SELECT
        qualified_names.check(db, stmt)
        if commits(stmt):
            db.commit()         # MySQL's implicit commit: the open transaction ends before DDL runs
    db.start_statement()
    began = prepared = False
    try:
        if opens and not db.store.in_transaction:
            if first is not None:
                prepared = True
                first()
            db.begin()
            began = True
        if opens:
            with db.store.savepoint():
                yield
        else:
            yield
        if not batch:
            if commits(stmt):
                db.commit()     # ... and the DDL itself is committed when it ends
            if not isinstance(stmt, ast.Query):
                db.statements.clear_plans()     # DDL and admin statements may change what a plan assumed
    except BaseException as exc:
        if began:           # the failed statement opened the transaction: end it, empty, and unlock
            db.store.rollback()
        db.reload_catalog()   # DDL handlers update the cached catalog before the savepoint ends
        if db.read_limit_hit:
            raise time_limit.exceeded() from exc
        raise
    finally:
        if prepared:
            if db.prepared is not None and db.prepared.restore is not None:
                db.prepared.restore()
            db.prepared = None
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


