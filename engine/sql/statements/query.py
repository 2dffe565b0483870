"""SELECT and EXPLAIN statements: plan (the passes of ``tesseradb.sql.passes``, then
``tesseradb.sql.search.select_plan``), run the vector search, let SQLite run the rest, convert the
values back to their declared types."""
from __future__ import annotations

from typing import Any

import apsw
from sqlglot import exp

from tesseradb.catalog.types import reader_for
from tesseradb.catalog.values import bind
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql import passes
from tesseradb.sql.mysql import time_limit
from tesseradb.sql.search.planned import Planned
from tesseradb.sql.statement_cache import reusable


def _describe(db: Database, cursor: apsw.Cursor, sql: str, bound: dict[str, Any]) -> list[tuple[str, str | None]]:
    try:
        return list(cursor.getdescription())
    except apsw.ExecutionCompleteError:
        return [tuple(d) for d in _query_info(db.store.conn, sql, bound).description]


def _plan(db: Database, expr: exp.Expression, params: Any, options: tuple) -> Planned:
    """The plan of a SELECT: reused when this parsed tree was planned before (statement_cache)."""
    cached = db.statements.plan_for(expr)
    if cached is not None:
        bound = cached.bind(params)
        knn = cached.remake_knn(db, bound) if cached.remake_knn is not None else None
        prepare = cached.remake_prepare(db, bound) if cached.remake_prepare is not None else None
        return Planned(cached.sql, bound, knn, prepare=prepare, direct=cached.direct)
    bound_expr, bound = bind(expr, params)
    planned = passes.plan(db, bound_expr, bound, options)
    db.statements.keep_plan(expr, reusable(expr, planned))
    return planned


_FILL: list = []


def _fill_knn():
    """select_plan.fill_knn, imported once (the planning of a search loaded it; the import statement
    on every execute cost a few us right after a model run)."""
    if not _FILL:
        from tesseradb.sql.search.select_plan import fill_knn
        _FILL.append(fill_knn)
    return _FILL[0]


def run_select(db: Database, expr: exp.Expression, params: Any, options: tuple = (),
               bounded: bool = False) -> Result:
    planned = _plan(db, expr, params, options)
    direct = planned.direct
    if direct is not None and direct.columns is not None and not (bounded and _cuts(db, expr)):
        return _direct_result(direct, direct.rows(db, planned.knn if planned.knn is not None else planned.prepare) or [])
    if planned.prepare is not None:
        planned.prepare()
    if planned.knn is not None:
        _fill_knn()(db, planned.knn)
    cursor = db.store.execute(planned.sql, planned.bound)
    columns = _describe(db, cursor, planned.sql, planned.bound)
    readers = [reader_for(decl) for _, decl in columns]
    if bounded:
        cursor = _bounded(db, expr, cursor)
    if any(readers):
        rows = [tuple(r(v) if r else v for r, v in zip(readers, row)) for row in cursor]
    else:
        rows = [tuple(row) for row in cursor]
    if direct is not None and direct.columns is None:
        direct.learn(columns, readers)
    return Result(columns=columns, rows=rows, rowcount=len(rows))


def run_direct(db: Database, plan: Any, direct: Any, params: Any) -> Result | None:
    """The rows of a cached knn() or hybrid_match() plan (``plan``: statement_cache.ReusablePlan) that
    has a direct form (``direct``: search/knn_direct.Direct or search/hybrid_direct.HybridDirect, whose
    columns the general path learnt); None when the search found nothing (no row was read: the executor cannot tell whether the catalog was current)."""
    bound = plan.bind(params)
    rows = direct.rows(db, plan.remake_knn(db, bound) if plan.remake_knn is not None else plan.remake_prepare(db, bound))
    return None if rows is None else _direct_result(direct, rows)


def _direct_result(direct: Any, rows: list[tuple]) -> Result:
    if direct.convert:
        readers = direct.readers
        rows = [tuple(r(v) if r else v for r, v in zip(readers, row)) for row in rows]
    return Result(columns=direct.columns, rows=rows, rowcount=len(rows))


def plain_read(db: Database, expr: exp.Expression) -> float | None | bool:
    """False unless a SELECT runs with no time limit but the session's max_execution_time (which the
    executor's direct path arms itself: ``tessera serve`` sets one for every client; not
    statement_timeout, not a hint) and every row of its result goes to the client (no
    sql_select_limit, no max_result_bytes): what the executor's direct path leaves out. Otherwise
    that time limit, in seconds (None: none; time_limit.limit_of)."""
    session = db.session
    if db.timeout or db.max_result_bytes is not None or session is None or expr.args.get("hint") is not None:
        return False        # a hint may be MAX_EXECUTION_TIME's (sql/mysql/time_limit.py)
    system = session.system
    if int(system.get("sql_select_limit", _NO_LIMIT)) < _NO_LIMIT and expr.args.get("limit") is None:
        return False
    return time_limit.limit_of(system)


_NO_LIMIT = 18446744073709551615        # sql_select_limit's default: no limit


def _bounded(db: Database, expr: exp.Expression, cursor):
    """The rows a client is sent: at most ``sql_select_limit`` when the SELECT has no LIMIT of its
    own (MySQL's rule), and none past ``db.max_result_bytes`` (``Connection.max_result_bytes``: the
    rows read so far are kept, a Warning 1301 says the result was cut)."""
    cuts = _cuts(db, expr)
    if cuts is None:
        return cursor           # every row (no generator stepping each one)
    return _cut(db, cursor, *cuts)


def _cuts(db: Database, expr: exp.Expression) -> tuple[int | None, int | None] | None:
    """(rows left, byte budget) of ``_bounded``, or None when neither bounds the rows."""
    session = db.session
    limit = int(session.system.get("sql_select_limit", _NO_LIMIT)) if session is not None else _NO_LIMIT
    rows_left = limit if limit < _NO_LIMIT and expr.args.get("limit") is None else None
    budget = db.max_result_bytes
    return None if rows_left is None and budget is None else (rows_left, budget)


def _cut(db: Database, cursor, rows_left: int | None, budget: int | None):
    used = 0
    for n, row in enumerate(cursor):
        if rows_left is not None and n >= rows_left:
            return
        used += sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in row)
        if budget is not None and used > budget and n:
            db.warn(f"the result was cut after {n} rows: its values passed max_result_bytes "
                    f"({budget:,} bytes)", code=1301)
            return
        yield row


def select(db: Database, stmt: ast.Query, params=None) -> Result:
    target = db.file_access.target(stmt.outfile) if stmt.outfile else None   # refused before it runs
    result = run_select(db, stmt.expr, params, stmt.options, bounded=target is None)
    if target is not None:
        from tesseradb.io.export import write_outfile     # pyarrow loads with the first export
        return write_outfile(target, result, db.file_access, shown=stmt.outfile)
    return result


def explain(db: Database, stmt: ast.Explain, params=None) -> Result:
    inner = stmt.statement
    rows: list[tuple] = []
    trace = passes.Trace()
    if isinstance(inner, ast.Query):
        inner = passes.prepare(db, inner, params, trace)
    if isinstance(inner, ast.Query) and inner.kind == "select":
        expr, bound = bind(inner.expr, params)
        planned = passes.plan(db, expr, bound, inner.options, trace)
        if planned.knn is not None:
            from tesseradb.vectors.search import explain_knn
            rows.extend(explain_knn(db, planned.knn))
            if planned.knn.filter_sql:
                rows.append(("filter", planned.knn.filter_sql))
                info = _query_info(db.store.conn, planned.knn.filter_sql, bound, explain_query_plan=True)
                rows.extend(("filter plan", _plan_text(step)) for step in _walk(info.query_plan))
        describe = getattr(planned.prepare, "describe", None)       # hybrid search: its sides
        if describe is not None:
            rows.extend(describe())
        sql, bound = planned.sql, planned.bound
        if planned.knn is not None:
            from tesseradb.sql.search.select_plan import CREATE_KNN_TABLE
            db.store.execute(CREATE_KNN_TABLE)
    elif isinstance(inner, ast.Query):
        expr, bound = bind(inner.expr, params)
        sql = expr.sql(dialect="sqlite")
    else:
        return Result(columns=[("step", None), ("detail", None)],
                       rows=[("statement", type(inner).__name__)], rowcount=1)
    info = _query_info(db.store.conn, sql, bound, explain_query_plan=True)
    rows.append(("sqlite", sql))
    rows.extend(("plan", _plan_text(step)) for step in _walk(info.query_plan))
    rows.extend(("pass", name) for name in trace.changed)      # the passes that changed the statement
    return Result(columns=[("step", None), ("detail", None)], rows=rows, rowcount=len(rows))


def _walk(node, depth: int = 0):
    if node is None:
        return
    for sub in node.sub or []:
        yield depth, sub.detail
        yield from _walk(sub, depth + 1)


def _plan_text(step: tuple[int, str]) -> str:
    depth, detail = step
    return "  " * depth + detail


def _query_info(*args, **kwargs):
    """apsw.ext costs a tenth of start-up (it imports most of the standard library): only EXPLAIN and
    statements that return no rows read it."""
    import apsw.ext
    return apsw.ext.query_info(*args, **kwargs)
