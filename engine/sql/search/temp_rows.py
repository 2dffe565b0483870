"""The TEMP tables a search's rewritten query joins (knn()'s hits, hybrid search's fused rows): created
if need be, emptied and filled in one call into SQLite (each statement its own call was three calls and
an executemany per query)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
