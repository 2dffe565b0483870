"""knn_chunk_section([max_tokens]) and knn_chunk_window(before, after): the text around the matched chunk.

Both are read from what is stored, never re-chunked at query time: the matched chunk's row knows its
section (``sec_start``/``sec_end``, written with the chunk: ``tesseradb.embed.chunk_context``), and its
neighbours are the chunk rows of the same document with the nearby ordinals. The text is cut by SQLite
from the row's ``from`` columns (joined as the embedder joined them), so no page is copied into Python;
only ``max_tokens`` needs the model's tokenizer (``embed.sql_tokens``, registered per connection).

* ``knn_chunk_section()``: the whole section holding the chunk, its heading through the end of its
  sub-sections (before the first heading: the text up to it); with ``max_tokens``, its first
  ``max_tokens`` model tokens.
* ``knn_chunk_window(before, after)``: from the start of the chunk ``before`` ordinals earlier to the
  end of the one ``after`` later (fewer at the document's ends), one span: overlaps are not repeated.

Supplied vectors (no text) give NULL.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from tesseradb.catalog.values import literal
from tesseradb.embed.sql_tokens import FIRST_TOKENS
from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.storage.catalog import quote
from tesseradb.vectors.passages import BEST_TABLE, separator_sql

SECTION, WINDOW = "knn_chunk_section", "knn_chunk_window"
NAMES = (SECTION, WINDOW)


@dataclass(frozen=True)
class Source:
    """Where a model column's text and chunk rows are."""
    chunks: str
    from_columns: tuple[str, ...]
    separator: str            # SQL
    model: str | None


def source_of(table: Any, column: str) -> Source:
    spec = table.vectors[column.lower()]
    return Source(table.layout(column).chunks, tuple(spec.from_columns) if spec.model_name else (),
                  separator_sql(spec), spec.model_name)


def text_sql(source: Source, alias: str) -> str:
    """The row's source text, as the embedder joined it."""
    columns = [f"COALESCE({exp.column(c, table=alias, quoted=True).sql(dialect='sqlite')}, '')"
               for c in source.from_columns]
    return f" || {source.separator} || ".join(columns) or "NULL"


def _count(arg: exp.Expression, bound: dict[str, Any], low: int) -> int | None:
    ok, value = literal(arg, bound)
    if not ok or isinstance(value, bool) or not isinstance(value, int) or value < low:
        return None
    return value


def _arguments(name: str, args: list[exp.Expression], bound: dict[str, Any]) -> tuple[int, ...]:
    if name == SECTION:
        values = tuple(_count(a, bound, 1) for a in args)
        if len(args) > 1 or None in values:
            raise UserError("KNN_CHUNK_SECTION() takes at most one argument, a positive integer: "
                            "the most tokens of the section to return", errors.SqlSyntaxError)
        return values
    values = tuple(_count(a, bound, 0) for a in args)
    if len(args) != 2 or None in values:
        raise UserError("KNN_CHUNK_WINDOW(before, after) expects two non-negative integers: the chunks "
                        "to join before and after the matched one", errors.SqlSyntaxError)
    return values


def fixed(node: exp.Anonymous) -> bool:
    """Whether the call's SQL is the same for any parameters (its arguments are literals)."""
    return all(isinstance(a, exp.Literal) for a in node.expressions)


def replacement(name: str, args: list[exp.Expression], alias: str, bound: dict[str, Any], source: Source,
                chunk_id: str | None) -> exp.Expression:
    """The subquery for a call: on the search's own chunk (``chunk_id``, an SQL column) or, without it,
    on the chunk the TEMP passage table holds for the row."""
    values = _arguments(name, args, bound)
    doc = exp.column("id", table=alias).sql(dialect="sqlite")
    matched = (f"c.chunk_id = {chunk_id}" if chunk_id else
               f"c.doc_id = {doc} AND c.ord = (SELECT p.chunk - 1 FROM temp.{BEST_TABLE} AS p WHERE p.doc_id = {doc})")
    chunks, text = quote(source.chunks), text_sql(source, alias)
    if name == SECTION:
        value = f"substr({text}, c.sec_start + 1, c.sec_end - c.sec_start)"
        if values and source.model:
            value = f"{FIRST_TOKENS}({value}, {values[0]}, {_sql_string(source.model)})"
        sql = f"SELECT {value} FROM main.{chunks} AS c WHERE {matched} AND c.start IS NOT NULL"
    else:
        before, after = values
        sql = (f"SELECT substr({text}, MIN(w.start) + 1, MAX(w.\"end\") - MIN(w.start)) FROM main.{chunks} AS c "
               f"JOIN main.{chunks} AS w ON w.doc_id = c.doc_id AND w.ord BETWEEN c.ord - {before} AND "
               f"c.ord + {after} AND w.start IS NOT NULL WHERE {matched} AND c.start IS NOT NULL")
    return exp.Subquery(this=exp.maybe_parse(sql, dialect="sqlite"))


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
