"""SELECT and EXPLAIN. SQLite runs the query; this module lifts ``knn(...)`` out of WHERE, runs the
vector search, puts (doc id, distance) rows in a TEMP table and rewrites the query to join it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import apsw
import apsw.ext
from sqlglot import exp

from tesseradb.grammar import ast

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.vectors.search import KnnRequest, run_knn, explain_knn
from tesseradb.catalog.types import reader_for
from tesseradb.catalog.values import bind

if TYPE_CHECKING:
    from tesseradb.sql.database import Database, Result

KNN_TABLE = "_tessera_knn"
CREATE_KNN_TABLE = (f"CREATE TEMP TABLE IF NOT EXISTS {KNN_TABLE} "
                    "(doc_id INTEGER PRIMARY KEY, dist REAL NOT NULL, chunk_id INTEGER)")


def _result(**kw):
    from tesseradb.sql.database import Result
    return Result(**kw)


def _is_call(node: exp.Expression, name: str) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() == name


def _conjuncts(where: exp.Expression | None) -> list[exp.Expression]:
    if where is None:
        return []
    return list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]


@dataclass
class Planned:
    sql: str
    bound: dict[str, Any]
    knn: KnnRequest | None = None


def _tables_in_from(db: "Database", select: exp.Select) -> dict[str, Any]:
    """alias (lower) -> Table, for the catalog tables named in FROM and JOINs."""
    out = {}
    for tbl in select.find_all(exp.Table):
        if tbl.name.lower() in db.tables:
            out[(tbl.alias_or_name).lower()] = db.tables[tbl.name.lower()]
    return out


def _rewrite_lengths(db: "Database", select: exp.Expression) -> None:
    """LENGTH(vector column) is its number of vectors (arrays) or dimensions (float_vector)."""
    if not isinstance(select, exp.Select):
        return
    tables = _tables_in_from(db, select)
    for node in list(select.find_all(exp.Length)):
        arg = node.this
        if not isinstance(arg, exp.Column):
            continue
        owners = [t for alias, t in tables.items() if (not arg.table or arg.table.lower() == alias)
                  and t.is_vector(arg.name)]
        if owners:
            kind = owners[0].column(arg.name).type
            fn = "_tessera_array_length" if kind == "float_vector_array" else "_tessera_vector_length"
            node.replace(exp.Anonymous(this=fn, expressions=[arg.copy()]))


def _keep_names(select: exp.Expression) -> None:
    """Projections that the planner rewrites (knn_dist(), LENGTH()) keep the name the user wrote."""
    if not isinstance(select, exp.Select):
        return
    for p in list(select.expressions):
        if not isinstance(p, (exp.Alias, exp.Column, exp.Star)) and (
                p.find(exp.Length) is not None or any(_is_call(n, "knn_dist") for n in p.find_all(exp.Anonymous))):
            p.replace(exp.alias_(p.copy(), p.sql(dialect="sqlite"), quoted=True))


def plan_select(db: "Database", expr: exp.Expression, bound: dict[str, Any]) -> Planned:
    expr = expr.copy()
    _check_internal(expr)
    _keep_names(expr)
    _rewrite_lengths(db, expr)
    knn_calls = [n for n in expr.find_all(exp.Anonymous) if _is_call(n, "knn")]
    dist_calls = [n for n in expr.find_all(exp.Anonymous) if _is_call(n, "knn_dist")]
    if not knn_calls:
        if dist_calls:
            raise UserError("KNN_DIST() attribute not available in this context")
        return Planned(expr.sql(dialect="sqlite"), bound)
    if len(knn_calls) > 1:
        raise UserError("only one knn() is supported per query")
    call = knn_calls[0]
    if not isinstance(expr, exp.Select) or call not in _conjuncts(expr.args.get("where")):
        raise UserError("knn() must be a condition of the outer WHERE, ANDed with the others")
    return _plan_knn(db, expr, call, bound)


def _check_internal(expr: exp.Expression) -> None:
    """The engine's own tables (catalog, chunk tables) are not part of the user's database."""
    for tbl in expr.find_all(exp.Table):
        if tbl.name.lower().startswith("_tessera_"):
            raise UserError(f"table '{tbl.name}' does not exist", errors.NoSuchTable)


def _plan_knn(db: "Database", select: exp.Select, call: exp.Anonymous, bound: dict[str, Any]) -> Planned:
    tables = _tables_in_from(db, select)
    request = KnnRequest.from_call(db, call, tables, bound)
    dist_aliases = {p.alias.lower() for p in select.expressions
                    if isinstance(p, exp.Alias) and any(_is_call(n, "knn_dist") for n in p.find_all(exp.Anonymous))}

    def is_post(cond: exp.Expression) -> bool:
        return any(_is_call(n, "knn_dist") for n in cond.find_all(exp.Anonymous)) or any(
            c.name.lower() in dist_aliases and not c.table for c in cond.find_all(exp.Column))

    rest = [c for c in _conjuncts(select.args.get("where")) if c is not call]
    pre = [c for c in rest if not is_post(c)]
    if pre:
        filt = exp.select(exp.column("id", table=request.alias)).distinct()
        filt.set("from_", select.args["from_"].copy())
        if select.args.get("joins"):
            filt.set("joins", [j.copy() for j in select.args["joins"]])
        filt.set("where", exp.Where(this=exp.and_(*[c.copy() for c in pre])))
        request.filter_sql = filt.sql(dialect="sqlite")
    _star_to_tables(select, tables)
    for node in list(select.find_all(exp.Anonymous)):
        if _is_call(node, "knn_dist"):
            node.replace(exp.column("dist", table="_knn"))
    on = exp.condition(f"_knn.doc_id = {exp.column('id', table=request.alias).sql()}")
    knn_table = exp.to_table(KNN_TABLE).as_("_knn")
    first = select.args["from_"].this
    if isinstance(first, exp.Table) and first.alias_or_name.lower() == request.alias:
        # The k hits drive the query: SQLite knows nothing of the TEMP table's size and would scan the
        # user's table and probe the hits (reading every row); CROSS JOIN fixes the loop order.
        select.set("from_", exp.From(this=knn_table))
        joins = [exp.Join(this=first.copy(), on=on, kind="CROSS")]
    else:
        joins = [exp.Join(this=knn_table, on=on)]
    select.set("joins", joins + list(select.args.get("joins") or []))
    select.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    if not select.args.get("order") and not select.args.get("group") and not select.find(exp.AggFunc):
        select.set("order", exp.Order(expressions=[exp.Ordered(this=exp.column("dist", table="_knn")),
                                                   exp.Ordered(this=exp.column("id", table=request.alias))]))
    return Planned(select.sql(dialect="sqlite"), bound, request)


def _star_to_tables(select: exp.Select, tables: dict[str, Any]) -> None:
    """``SELECT *`` must not show the joined knn table: list the query's own tables instead."""
    stars = [p for p in select.expressions if isinstance(p, exp.Star)]
    if not stars:
        return
    sources = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
    names = [t.alias_or_name for t in sources if t.alias_or_name]    # not tables of subqueries
    expanded = [exp.Column(this=exp.Star(), table=exp.to_identifier(n)) for n in names]
    new = []
    for p in select.expressions:
        new.extend(expanded if isinstance(p, exp.Star) else [p])
    select.set("expressions", new)


def _fill_knn(db: "Database", request: KnnRequest) -> None:
    hits = run_knn(db, request)
    db.store.execute(CREATE_KNN_TABLE)
    db.store.execute(f"DELETE FROM temp.{KNN_TABLE}")
    db.store.executemany(f"INSERT INTO temp.{KNN_TABLE} VALUES (?, ?, ?)", hits)


def _describe(db: "Database", cursor: apsw.Cursor, sql: str, bound: dict[str, Any]) -> list[tuple[str, str | None]]:
    try:
        return list(cursor.getdescription())
    except apsw.ExecutionCompleteError:
        return [tuple(d) for d in apsw.ext.query_info(db.store.conn, sql, bound).description]


def _name_expressions(expr: exp.Expression) -> None:
    """Result columns computed by an expression are named as the user wrote them (``knn_dist()``,
    ``COUNT(*)``), as MySQL does, not after the SQL generated for SQLite."""
    if not isinstance(expr, exp.Select):
        return
    named = []
    for p in expr.expressions:
        if not isinstance(p, (exp.Alias, exp.Column, exp.Star)):
            p = exp.alias_(p, p.sql(dialect="mysql", normalize_functions=False), quoted=True)
        named.append(p)
    expr.set("expressions", named)


def run_select(db: "Database", expr: exp.Expression, params: Any) -> "Result":
    expr, bound = bind(expr, params)
    expr = expr.copy()
    _name_expressions(expr)
    planned = plan_select(db, expr, bound)
    if planned.knn is not None:
        _fill_knn(db, planned.knn)
    cursor = db.store.execute(planned.sql, planned.bound)
    columns = _describe(db, cursor, planned.sql, planned.bound)
    readers = [reader_for(decl) for _, decl in columns]
    if any(readers):
        rows = [tuple(r(v) if r else v for r, v in zip(readers, row)) for row in cursor]
    else:
        rows = [tuple(row) for row in cursor]
    return _result(columns=columns, rows=rows, rowcount=len(rows))


def select(db: "Database", stmt: ast.Query, params=None) -> "Result":
    result = run_select(db, stmt.expr, params)
    if stmt.outfile:
        from tesseradb.io.arrowio import write_outfile
        return write_outfile(stmt.outfile, result)
    return result


def explain(db: "Database", stmt: ast.Explain, params=None) -> "Result":
    inner = stmt.statement
    rows: list[tuple] = []
    if isinstance(inner, ast.Query) and inner.kind == "select":
        expr, bound = bind(inner.expr, params)
        planned = plan_select(db, expr, bound)
        if planned.knn is not None:
            rows.extend(explain_knn(db, planned.knn))
            if planned.knn.filter_sql:
                rows.append(("filter", planned.knn.filter_sql))
                info = apsw.ext.query_info(db.store.conn, planned.knn.filter_sql, bound, explain_query_plan=True)
                rows.extend(("filter plan", _plan_text(step)) for step in _walk(info.query_plan))
        sql, bound = planned.sql, planned.bound
        if planned.knn is not None:
            db.store.execute(CREATE_KNN_TABLE)
    elif isinstance(inner, ast.Query):
        expr, bound = bind(inner.expr, params)
        sql = expr.sql(dialect="sqlite")
    else:
        return _result(columns=[("step", None), ("detail", None)],
                       rows=[("statement", type(inner).__name__)], rowcount=1)
    info = apsw.ext.query_info(db.store.conn, sql, bound, explain_query_plan=True)
    rows.append(("sqlite", sql))
    rows.extend(("plan", _plan_text(step)) for step in _walk(info.query_plan))
    return _result(columns=[("step", None), ("detail", None)], rows=rows, rowcount=len(rows))


def _walk(node, depth: int = 0):
    if node is None:
        return
    for sub in node.sub or []:
        yield depth, sub.detail
        yield from _walk(sub, depth + 1)


def _plan_text(step: tuple[int, str]) -> str:
    depth, detail = step
    return "  " * depth + detail
