"""The TEMP tables a search's rewritten query joins (knn()'s hits, hybrid search's fused rows): created
if need be, emptied and filled in one call into SQLite (each statement its own call was three calls and
an executemany per query); and the join itself (``join_hits``)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

FILL_MAX = 64       # rows filled by one multi-row INSERT; more go through executemany
_SQL: dict[tuple[str, int], str] = {}


def _fill_sql(create: str, table: str, width: int, n: int) -> str:
    sql = _SQL.get((table, n))
    if sql is None:
        row = "(" + ", ".join(["?"] * width) + ")"
        sql = f"{create}; DELETE FROM temp.{table}" + (f"; INSERT INTO temp.{table} VALUES " + ",".join([row] * n) if n else "")
        _SQL[(table, n)] = sql
    return sql


def fill(store: Any, create: str, table: str, width: int, rows: Sequence[Sequence[Any]]) -> None:
    """``create`` (CREATE TEMP TABLE IF NOT EXISTS ``table``, ``width`` columns), then ``table`` holds
    exactly ``rows``, in their order."""
    n = len(rows) if len(rows) <= FILL_MAX else 0
    store.execute(_fill_sql(create, table, width, n), [v for row in rows for v in row] if n else None)
    if rows and not n:
        store.executemany(f"INSERT INTO temp.{table} VALUES (" + ", ".join(["?"] * width) + ")", rows)


def join_hits(select: exp.Select, hits: exp.Table, alias: str, on: exp.Expression,
              rest: list[exp.Expression]) -> None:
    """Join the TEMP table ``hits`` (aliased) to ``select`` on ``on``; ``rest``: the WHERE left. When
    the searched table (``alias``) is alone first in FROM, the hits drive the query: SQLite knows
    nothing of the TEMP table's size and would scan the user's table and probe the hits (reading every
    row); CROSS JOIN fixes the loop order."""
    first = select.args["from_"].this
    if isinstance(first, exp.Table) and first.alias_or_name.lower() == alias:
        select.set("from_", exp.From(this=hits))
        joins = [exp.Join(this=first.copy(), on=on, kind="CROSS")]
    else:
        joins = [exp.Join(this=hits, on=on)]
    select.set("joins", joins + list(select.args.get("joins") or []))
    select.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
