"""knn_chunk(), knn_chunk_text(), knn_chunk_start(), knn_chunk_end(), knn_chunk_heading(), knn_chunks(n),
knn_chunk_section([max_tokens]) and knn_chunk_window(before, after) in a SELECT.

The planner calls :func:`rewrite` on a knn() query: each call becomes a subquery on the TEMP table
of passages (``tesseradb.vectors.passages``) correlated with the searched table's id, so SQLite
evaluates them wherever an expression may stand (select list, ORDER BY, a WHERE condition applied
after the search, INSERT ... SELECT). Outside a knn() query they are an error.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import sql_functions
from tesseradb.errors import UserError
from tesseradb.storage.catalog import quote
from tesseradb.catalog.values import literal
from tesseradb.vectors.passages import BEST_TABLE, TABLE, Needs, separator_sql
from tesseradb.sql.search import passage_around
from tesseradb.sql.search.passage_around import Source, source_of

#: function -> the column of the best chunk's row it reads
SINGLE = {"knn_chunk": "chunk", "knn_chunk_text": "text", "knn_chunk_start": "start", "knn_chunk_end": "end",
          "knn_chunk_heading": "heading"}
LIST = "knn_chunks"
AROUND = frozenset(passage_around.NAMES)      # the text around the chunk (passage_around.py)
NAMES = sql_functions.names("passage")      # catalog/sql_functions.py
_JSON_ROW = ("json_object('chunk', p.chunk, 'dist', p.dist, 'start', p.start, 'end', p.\"end\", "
             "'text', p.text, 'heading', p.heading)")


def _name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        name = str(node.this).lower()
        return name if name in NAMES else None
    return None


def calls(expr: exp.Expression) -> list[exp.Anonymous]:
    return [n for n in expr.find_all(exp.Anonymous) if _name(n)]


def mentions(expr: exp.Expression) -> bool:
    return any(True for _ in calls(expr))


def fixed(expr: exp.Expression) -> bool:
    """Whether the rewrite of ``expr`` is the same for any parameters: every ``knn_chunks(n)`` has a
    literal ``n`` (a ``?`` is written into the SQL as its value)."""
    return all(isinstance(n.expressions[0], exp.Literal) for n in calls(expr)
               if _name(n) == LIST and len(n.expressions) == 1) and \
        all(passage_around.fixed(n) for n in calls(expr) if _name(n) in AROUND)


def reject_outside_knn(expr: exp.Expression) -> None:
    """A statement without knn() has no matched passage to report."""
    found = calls(expr)
    if found:
        raise UserError(f"{_name(found[0]).upper()}() is only allowed in a query with knn(): "
                        "it reports the chunk that matched the knn() search", errors.SqlSyntaxError)


def _limit(node: exp.Anonymous, bound: dict[str, Any]) -> int:
    args = node.expressions
    ok, value = literal(args[0], bound) if len(args) in (1, 2) else (False, None)
    if not ok or isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError("knn_chunks(n) expects one positive integer: the number of chunks to return",
                        errors.SqlSyntaxError)
    return value


def _diversity(node: exp.Anonymous, bound: dict[str, Any]) -> float | None:
    """``knn_chunks(n, {mmr=λ})``: the document's n passages picked by MMR (vectors/mmr.py)."""
    if len(node.expressions) < 2:
        return None
    options = node.expressions[1]
    items = options.expressions if isinstance(options, exp.Struct) else []
    pairs = [(i.this.name.lower(), i.expression) if isinstance(i, (exp.PropertyEQ, exp.EQ)) else (i.alias.lower(), i.this)
             for i in items]
    ok, value = literal(pairs[0][1], bound) if len(pairs) == 1 and pairs[0][0] == "mmr" else (False, None)
    if not ok or isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise UserError("knn_chunks(n, {mmr=λ}) expects λ, a number in [0, 1]", errors.SqlSyntaxError)
    return float(value)


_DOC = "_tessera_doc"          # stands for the searched table's alias in the parsed templates


@lru_cache(maxsize=64)
def _template(name: str, n: int) -> exp.Expression:
    """The subquery that replaces a call, parsed once per (function, n)."""
    doc = f"{_DOC}.id"
    if name == LIST:
        sql = (f"SELECT json_group_array(json({_JSON_ROW}) ORDER BY p.rank) FROM temp.{TABLE} AS p "
               f"WHERE p.doc_id = {doc} AND p.rank <= {n}")
    else:
        sql = f"SELECT p.\"{SINGLE[name]}\" FROM temp.{BEST_TABLE} AS p WHERE p.doc_id = {doc}"
    return exp.Subquery(this=exp.maybe_parse(sql, dialect="sqlite"))


@dataclass(frozen=True)
class Matched:
    """Where the search's own chunk of each row is: ``chunk_id`` (an SQL column of the joined hits table)
    in the ``chunks`` table; the source text is the ``from`` columns of the row. Then the matched chunk
    is read by plain SQL, nothing is computed beforehand."""
    chunk_id: str
    chunks: str
    from_columns: tuple[str, ...]
    separator: str = "' '"       # SQL: how the from columns are joined (vectors.passages.separator_sql)


def searched_chunk(table: Any, column: str, chunk_id: str) -> Matched | None:
    """The search's own chunk can be read directly unless the column embeds text: then a text query's
    words take part in choosing the passage (vectors/passage_words.py), and the model may have cut
    the chunk (``truncate``, or the last chunk ``max_chunks`` stretched) so that the kept span needs
    the tokenizer; both go through the TEMP table."""
    spec = table.vectors[column.lower()]
    if spec.model_name or spec.chunk_strategy == "truncate" or spec.max_chunks:
        return None
    return Matched(chunk_id, table.layout(column).chunks, tuple(spec.from_columns) if spec.model_name else (),
                   separator_sql(spec))


def _direct(name: str, alias: str, where: Matched) -> exp.Expression:
    """A call read straight from the chunk row the search matched (no TEMP table)."""
    source = f" || {where.separator} || ".join(f"COALESCE({exp.column(c, table=alias, quoted=True).sql(dialect='sqlite')}, '')"
                                for c in where.from_columns) or "NULL"
    value = {"knn_chunk": "c.ord + 1", "knn_chunk_start": "c.start", "knn_chunk_end": 'c."end"',
             "knn_chunk_heading": "c.heading",
             "knn_chunk_text": f'substr({source}, c.start + 1, c."end" - c.start)'}[name]
    sql = f'SELECT {value} FROM main.{quote(where.chunks)} AS c WHERE c.chunk_id = {where.chunk_id}'
    return exp.Subquery(this=exp.maybe_parse(sql, dialect="sqlite"))


def _replacement(node: exp.Anonymous, alias: str, bound: dict[str, Any], where: Matched | None,
                 source: Source | None) -> exp.Expression:
    name = _name(node)
    if name in AROUND:
        if source is None:
            raise UserError(f"{name.upper()}() is only allowed in a query with knn() on a vector column",
                            errors.SqlSyntaxError)
        return passage_around.replacement(name, node.expressions, alias, bound, source,
                                          where.chunk_id if where is not None else None)
    if name != LIST and node.expressions:
        raise UserError(f"{name.upper()}() takes no arguments", errors.SqlSyntaxError)
    if name != LIST and where is not None:
        return _direct(name, alias, where)
    sub = _template(name, _limit(node, bound) if name == LIST else 1).copy()
    for col in sub.find_all(exp.Column):
        if col.table == _DOC:
            col.replace(exp.column("id", table=alias))
    return sub


def rewrite(select: exp.Expression, alias: str, bound: dict[str, Any], where: Matched | None = None,
            source: Source | None = None) -> Needs | None:
    """Replace every passage call in ``select`` by its subquery; say what the TEMP tables must hold.
    With ``where``, the knn_chunk*() calls read the search's matched chunk directly; ``source`` (the
    searched column's text and chunk rows) is what the section and window calls read."""
    found = calls(select)
    if not found:
        return None
    names = {_name(n) for n in found}
    limit = max([_limit(n, bound) for n in found if _name(n) == LIST], default=0)
    diversity = {_diversity(n, bound) for n in found if _name(n) == LIST}
    if len(diversity) > 1:
        raise UserError("every knn_chunks() of a query must ask for the same {mmr=λ}", errors.SqlSyntaxError)
    for node in found:
        node.replace(_replacement(node, alias, bound, where, source))
    return Needs(best=bool(names & (set(SINGLE) | AROUND)) and where is None, limit=limit,
                 text=bool(names - {"knn_chunk"}), mmr=next(iter(diversity), None))
