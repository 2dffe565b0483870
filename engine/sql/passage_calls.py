"""knn_chunk(), knn_chunk_text(), knn_chunk_start(), knn_chunk_end() and knn_chunks(n) in a SELECT.

The planner calls :func:`rewrite` on a knn() query: each call becomes a subquery on the TEMP table
of passages (``tesseradb.vectors.passages``) correlated with the searched table's id, so SQLite
evaluates them wherever an expression may stand (select list, ORDER BY, a WHERE condition applied
after the search, INSERT ... SELECT). Outside a knn() query they are an error.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlglot import exp

from tesseradb.errors import UserError
from tesseradb.catalog.values import literal
from tesseradb.vectors.passages import TABLE, Needs

#: function -> the column of the best chunk's row it reads
SINGLE = {"knn_chunk": "chunk", "knn_chunk_text": "text", "knn_chunk_start": "start", "knn_chunk_end": "end"}
LIST = "knn_chunks"
NAMES = frozenset(SINGLE) | {LIST}
_JSON_ROW = ("json_object('chunk', p.chunk, 'dist', p.dist, 'start', p.start, 'end', p.\"end\", "
             "'text', p.text)")


def _name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        name = str(node.this).lower()
        return name if name in NAMES else None
    return None


def calls(expr: exp.Expression) -> list[exp.Anonymous]:
    return [n for n in expr.find_all(exp.Anonymous) if _name(n)]


def mentions(expr: exp.Expression) -> bool:
    return any(True for _ in calls(expr))


def reject_outside_knn(expr: exp.Expression) -> None:
    """A statement without knn() has no matched passage to report."""
    found = calls(expr)
    if found:
        raise UserError(f"{_name(found[0]).upper()}() is only allowed in a query with knn(): "
                        "it reports the chunk that matched the knn() search")


def _limit(node: exp.Anonymous, bound: dict[str, Any]) -> int:
    args = node.expressions
    ok, value = literal(args[0], bound) if len(args) == 1 else (False, None)
    if not ok or isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError("knn_chunks(n) expects one positive integer: the number of chunks to return")
    return value


_DOC = "_tessera_doc"          # stands for the searched table's alias in the parsed templates


@lru_cache(maxsize=64)
def _template(name: str, n: int) -> exp.Expression:
    """The subquery that replaces a call, parsed once per (function, n)."""
    doc = f"{_DOC}.id"
    if name == LIST:
        sql = (f"SELECT json_group_array(json({_JSON_ROW}) ORDER BY p.rank) FROM temp.{TABLE} AS p "
               f"WHERE p.doc_id = {doc} AND p.rank <= {n}")
    else:
        sql = f"SELECT p.\"{SINGLE[name]}\" FROM temp.{TABLE} AS p WHERE p.doc_id = {doc} AND p.rank = 1"
    return exp.Subquery(this=exp.maybe_parse(sql, dialect="sqlite"))


def _replacement(node: exp.Anonymous, alias: str, bound: dict[str, Any]) -> exp.Expression:
    name = _name(node)
    if name != LIST and node.expressions:
        raise UserError(f"{name.upper()}() takes no arguments")
    sub = _template(name, _limit(node, bound) if name == LIST else 1).copy()
    for col in sub.find_all(exp.Column):
        if col.table == _DOC:
            col.replace(exp.column("id", table=alias))
    return sub


def rewrite(select: exp.Expression, alias: str, bound: dict[str, Any]) -> Needs | None:
    """Replace every passage call in ``select`` by its subquery; say what the TEMP table must hold."""
    found = calls(select)
    if not found:
        return None
    names = {_name(n) for n in found}
    limit = max([_limit(n, bound) for n in found if _name(n) == LIST], default=1)
    for node in found:
        node.replace(_replacement(node, alias, bound))
    return Needs(limit=limit, text=bool(names - {"knn_chunk"}))
