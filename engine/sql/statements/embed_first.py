"""Embedding before the write lock (issue 33): the first pass of a writing statement that embeds.

Before a statement that opens its own transaction takes SQLite's write lock (``sql/executor.py``,
the statement bracket), this pass works out the texts it will embed, without a transaction open:
the rows of an INSERT or REPLACE (VALUES, every parameter set of an executemany, the first rows of
a SELECT), the new texts of an UPDATE's rows, the first rows of a LOAD DATA's files or documents, or
the first new and changed files of a SYNC (statements/embed_first_load.py). It cuts them and runs the model on them, chunk reuse looked up in committed
data, keeping the cuts and vectors in ``Database.prepared`` (embed/prepared.py). Then the statement
runs for real under BEGIN IMMEDIATE and finds them there: other writers wait for its SQLite writes
only, never for its model.

The pass is a cache and nothing else. It writes nothing and says nothing: its warnings are dropped
(the real run says them, with the row's id), an error that belongs to a row is left for the real
run to raise (it does so before running the model), anything it cannot work out is left to the
real run. What it made stays right whatever other connections commit meanwhile: a cut and a
vector depend on the text alone. It covers at most ``prepared.BUDGET_CHARS`` characters of text
(always at least one row); the rest of a larger statement is embedded under the lock.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.values import bind, bind_many, evaluate_row
from tesseradb.embed.prepared import BUDGET_CHARS, Prepared
from tesseradb.embed.rows import embed_texts, source_text, source_title
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.sql import passes
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import keys
from tesseradb.sql.search import match
from tesseradb.sql.statements import insert as insert_statement

Work = list[tuple[Any, list[dict[str, Any]]]]       # (model column's spec, the records it embeds)


def embed_first(db: Database, stmt: ast.Statement, param_sets: Sequence[Any], *, many: bool = False) -> None:
    """Run the model for what ``stmt`` will embed, before its transaction; fills ``db.prepared``."""
    if isinstance(stmt, ast.Query):
        gather = _GATHER.get(stmt.kind)
        if gather is None:
            return
        work_of = lambda: gather(db, passes.prepare(db, stmt, None if many else param_sets[0]), param_sets)  # noqa: E731
    elif isinstance(stmt, ast.LoadData):
        from tesseradb.sql.statements import embed_first_load as load   # pyarrow: with the first LOAD DATA
        work_of = lambda: load.gather(db, stmt, param_sets)     # noqa: E731
    else:
        return
    ahead, done = None, False
    db.prepared = Prepared()
    said, db.pending_warnings = db.pending_warnings, []     # what the pass would say, the real run says
    rising = None
    try:
        try:
            work = work_of()
            if isinstance(stmt, ast.LoadData):
                work, ahead = work
        except Exception:       # noqa: BLE001 - the real run meets the same problem and says it properly
            db.prepared = None
            if db.check_cancelled():
                raise
            return
        if not isinstance(stmt, ast.Query) and work:
            rising = load.one_progress(db)
        parts = ahead.parts(work) if ahead is not None else \
            ((spec, records, range(1, len(records) + 1)) for spec, records in work)
        for spec, records, numbers in parts:
            labels = [errors.Place(row=n) for n in numbers]
            embed_texts(db, spec, [source_text(spec, r) for r in records], labels,
                        [source_title(spec, r) for r in records], on_cut=ahead.start if ahead else None)
        done = True
    except UserError as exc:
        if exc.place is None:       # the model's own failure: the real run would only repeat it
            raise
    finally:
        if ahead is not None:
            ahead.finish(stop=not done)     # before its warnings are dropped and the transaction begins
        db.pending_warnings = said
        if rising is not None:
            db.on_progress = rising         # the statement's own reports follow on
        if db.prepared is not None:
            db.prepared.filling = False


def _within_budget(specs: list, records: Any) -> list[dict[str, Any]]:
    """The first records whose texts fit in the budget (always the first one)."""
    out, chars = [], 0
    for rec in records:
        if out and chars >= BUDGET_CHARS:
            break
        out.append(rec)
        chars += sum(len(source_text(s, rec)) for s in specs)
    return out


def _chars(work: Work) -> int:
    return sum(len(source_text(s, r)) for s, rs in work for r in rs)


def _insert(db: Database, stmt: ast.Query, param_sets: Sequence[Any]) -> Work:
    """The rows of an INSERT or REPLACE ... VALUES, or the first rows of its SELECT."""
    expr: exp.Insert = stmt.expr
    if expr.args.get("overwrite"):
        return []
    table = db.table(insert_statement.target_name(expr))
    expr = keys.with_column_list(table, expr)
    names = [c.name.lower() for c in insert_statement.columns_of(table, expr)]
    specs = [s for s in table.model_columns() if s.column.lower() not in names]
    if not specs:
        return []

    def records():
        for bound_expr, bound in bind_many(expr, param_sets):
            if isinstance(bound_expr.expression, exp.Values):
                for tup in bound_expr.expression.expressions:
                    row = evaluate_row(db.store, tup.expressions if isinstance(tup, exp.Tuple) else [tup], bound)
                    yield dict(zip(names, row))
            else:
                yield from _selected(db, bound_expr.expression, bound, names)
    rows = records()
    try:
        chosen = _within_budget(specs, rows)
    finally:
        rows.close()            # a SELECT's cursor is closed: no read snapshot stays open
    return [(spec, chosen) for spec in specs]


def _selected(db: Database, select: exp.Expression, bound: dict[str, Any], names: list[str]):
    """The first rows of an INSERT ... SELECT, read from the SELECT's own cursor (only as many as the
    budget takes; the statement then streams them all, statements/insert_select.py)."""
    planned = passes.plan(db, select, bound)        # as the statement plans it: knn(), LENGTH(v)
    if planned.prepare is not None:
        planned.prepare()
    if planned.knn is not None:
        from tesseradb.sql.search.select_plan import fill_knn     # loads with the first search
        fill_knn(db, planned.knn)
    cursor = db.store.execute(planned.sql, planned.bound)
    try:
        for row in cursor:
            yield dict(zip(names, row))
    finally:
        cursor.close()


def _update(db: Database, stmt: ast.Query, param_sets: Sequence[Any]) -> Work:
    """The new texts of the rows an UPDATE changes, for each model column whose ``from`` columns it
    sets: the same WHERE (MATCH included), ORDER BY and LIMIT, read as a SELECT."""
    out: Work = []
    for params in param_sets:
        expr, bound = bind(stmt.expr, params)
        table = db.table(expr.this.name)
        sets = {e.this.name.lower(): e for e in expr.expressions if isinstance(e, exp.EQ)}
        stale = [s for s in table.model_columns() if s.column.lower() not in sets
                 and any(f.lower() in sets for f in s.from_columns)]
        if not stale:
            continue
        expr = match.write_filter(db, table, expr, bound)
        sources = sorted({f.lower() for s in stale for f in s.from_columns})
        select = exp.select(*[(sets[f].expression.copy() if f in sets else exp.column(f, quoted=True)).as_(f"c{i}")
                              for i, f in enumerate(sources)]).from_(expr.this.copy())
        for part in ("where", "order", "limit"):
            if expr.args.get(part) is not None:
                select.set(part, expr.args[part].copy())
        rows = db.store.execute(select.sql(dialect="sqlite"), bound)
        records = _within_budget(stale, (dict(zip(sources, r)) for r in rows))
        out.extend((spec, records) for spec in stale)
        if _chars(out) >= BUDGET_CHARS:
            break
    return out


_GATHER = {"insert": _insert, "update": _update}        # ast.Query, by kind
