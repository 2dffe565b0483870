"""A hybrid_match() SELECT that shows its table's own rows, run without the fused rows' TEMP table
(issue 37), with knn_direct's machinery.

The general plan (hybrid.py, hybrid_query.py) fills ``_tessera_hybrid`` with the fused rows the query
can show and lets SQLite join them to the table and order them by hybrid_score() descending, id. For
the common shape, the table alone in FROM, hybrid_match() alone in WHERE, a select list of the
table's own expressions plus ``hybrid_score()`` / ``weight()`` / ``knn_dist()``, no GROUP BY, ORDER
BY, DISTINCT or window, no rerank and no passages, a literal LIMIT/OFFSET at most, the same rows come
from one cached statement that reads the shown fused documents' rows by id in their order
(``knn_direct.Direct.ordered``),
their fused values put in place, sorted as that ORDER BY sorts them, cut by LIMIT/OFFSET. A fused
document the table no longer holds is left out, as the join leaves it out; a select list of the
table's id alone reads no row, as knn_direct's does (the fused documents come from the index and the
chunks' full-text index, both of which hold exactly the table's documents). The executor runs it with
the short bracket, the catalog checked after the read (sql/executor._direct).
tests/vectors/test_hybrid_direct.py compares the rows of both paths to the last bit.
"""
from __future__ import annotations

from typing import Any

from sqlglot import exp

from tesseradb.sql.search import knn_direct
from tesseradb.sql.search.knn_direct import DIST, SCORE

WEIGHT = "weight"
# the fused rows' TEMP columns (hybrid_query.CREATE_TABLE) -> the values a direct row puts in place
VALUES = {"_tessera_score": SCORE, "_tessera_weight": WEIGHT, "_tessera_dist": DIST}


class HybridDirect(knn_direct.Direct):
    def rows(self, db: Any, prepare: Any) -> list[tuple] | None:     # type: ignore[override]
        """The result's rows before the readers (``prepare``: hybrid.Prepare for this execute's
        parameters); None when nothing was fused (no row read)."""
        shown = prepare.shown_rows()
        if not shown:
            return None
        shown.sort(key=_order)          # the general ORDER BY: hybrid_score() descending, id
        if self.ids_only:   # the fused documents are the rows (knn_direct: the table's id alone): no row read
            self._cursor_of(db).execute(self.sql.touch()).fetchall()     # (SQLite's data version brought up to date)
            return self.cut([(h.doc_id,) for h in shown])
        rows = iter(self.ordered(db, [h.doc_id for h in shown], with_id=True))     # in that order, id last
        row = next(rows, None)
        parts = self.parts
        out = []
        for h in shown:
            if row is not None and row[-1] == h.doc_id:     # else the table no longer holds it
                out.append(tuple([row[p] if type(p) is int else _value(h, p) for p in parts]))
                row = next(rows, None)
        return self.cut(out)


def _order(hit: Any) -> tuple[float, int]:
    return -hit.score, hit.doc_id


def _value(hit: Any, kind: str) -> float | None:
    """A fused row's value as the TEMP table's REAL column gives it back."""
    value = hit.score if kind == SCORE else hit.weight if kind == WEIGHT else hit.dist
    return None if value is None else float(value)


def shape(select: exp.Select, table: exp.Table, alias: str, window: tuple[int, int | None]) -> HybridDirect | None:
    """The direct form of the planned hybrid_match() ``select`` (rewritten to join ``_h``; ``window``:
    its OFFSET and LIMIT, read before planning), or None when its select list asks more than the
    table's own expressions and the fused values."""
    shown = knn_direct.items_of(select, "_h", VALUES)
    if shown is None:
        return None
    ids_only = shown[0] == [knn_direct.SQL] and knn_direct.is_id(select.expressions[0], alias)
    return HybridDirect(knn_direct.statement(table, alias, shown[1]), shown[0], *window, ids_only=ids_only)
