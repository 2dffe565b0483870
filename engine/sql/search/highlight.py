"""HIGHLIGHT() and SNIPPET() in a SELECT.

* ``HIGHLIGHT([{options}] [, 'field1,field2'] [, 'query'])``: the row's text fields (default: all),
  with the words of the statement's MATCH() (or of ``query``) marked, cut into passages; fields
  without a match are left out; several fields are joined by ``field_separator``.
* ``SNIPPET(text_column, 'query' [, 'name=value' | value AS name ...])``: one field, with the words
  of ``query`` marked; a field without a match gives its beginning (unless ``allow_empty=1``).

Each becomes a call of a Python function (``tesseradb.catalog.snippets``) on FTS5's ``highlight()``
of the row, read by a correlated subquery on the table's full-text index with the words to mark bound
as a parameter. Options: see ``SnippetOptions``.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import asdict
from typing import Any

from sqlglot import exp

from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.catalog.snippets import CLOSE, OPEN, SnippetOptions
from tesseradb.catalog.tables import Table
from tesseradb.catalog.values import literal
from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar.match import Query, parse
from tesseradb.grammar.match_fts5 import to_fts5
from tesseradb.sql.search.match import TextSide, checked_query, positive_leaves, calls, tables_in_from
from tesseradb.sql.database import Database
from tesseradb.storage.fulltext import TextIndex

_counter = itertools.count(1)


def rewrite(db: Database, select: exp.Select, bound: dict[str, Any], sides: list[TextSide]) -> None:
    highlights, snippets = calls(select, "highlight"), calls(select, "snippet")
    if not highlights and not snippets:
        return
    tables = tables_in_from(db, select)
    bound.setdefault("_tessera_open", OPEN)
    bound.setdefault("_tessera_close", CLOSE)
    for node in highlights:
        node.replace(_highlight(node, bound, sides, tables))
    for node in snippets:
        node.replace(_snippet(node, bound, tables))


def _marked(index: TextIndex, column: str, table_alias: str, param: str) -> exp.Expression:
    pos = index.column_index(column)
    fts = exp.to_identifier(index.name, quoted=True).sql(dialect="sqlite")
    rowid = exp.column("id", table=table_alias).sql(dialect="sqlite")
    sql = (f"SELECT highlight({fts}, {pos}, :_tessera_open, :_tessera_close) FROM {fts} "
           f"WHERE {fts} MATCH :{param} AND {fts}.rowid = {rowid}")
    return exp.Subquery(this=exp.maybe_parse(sql, dialect="sqlite"))


def _bind(bound: dict[str, Any], value: Any) -> str:
    name = f"_tessera_hl{next(_counter)}"
    bound[name] = value
    return name


def _highlight(node: exp.Anonymous, bound: dict[str, Any], sides: list[TextSide],
               tables: dict[str, Table]) -> exp.Expression:
    args = list(node.expressions)
    options = _struct_options(args.pop(0), bound) if args and isinstance(args[0], exp.Struct) else {}
    texts = [_text(a, bound, "HIGHLIGHT()") for a in args]
    if len(texts) > 2:
        raise UserError("HIGHLIGHT() expects ([{options}] [, 'fields'] [, 'query'])", errors.SqlSyntaxError)
    table_alias, table = (sides[0].table_alias, sides[0].table) if sides else _first(tables)
    index = _index(table)
    fields = [f.strip() for f in texts[0].split(",") if f.strip()] if texts and texts[0].strip() else list(index.columns)
    for name in fields:
        if index.column_index(name) is None:
            raise UserError(f"HIGHLIGHT(): no field '{name}' found in schema", errors.SqlSyntaxError)
    if len(texts) == 2:
        expression = _marks_for(texts[1], table, index)
    elif sides:
        expression = " OR ".join(f"({s.highlight})" for s in sides if s.highlight) or None
    else:
        raise UserError("HIGHLIGHT() needs MATCH() in WHERE, or the query as its third argument", errors.SqlSyntaxError)
    opts = _options(options)
    if expression is None:
        return exp.Literal.string("")
    param = _bind(bound, expression)
    subqueries = [_marked(index, f, table_alias, param) for f in fields]
    return exp.Anonymous(this="_tessera_highlight",
                         expressions=[exp.Placeholder(this=_bind(bound, json.dumps(asdict(opts))))] + subqueries)


def _snippet(node: exp.Anonymous, bound: dict[str, Any], tables: dict[str, Table]) -> exp.Expression:
    args = list(node.expressions)
    if len(args) < 2 or not isinstance(args[0], exp.Column):
        raise UserError("SNIPPET() expects (text_column, 'query' [, 'name=value' ...])", errors.SqlSyntaxError)
    col = args[0]
    owner = next(((a, t) for a, t in tables.items() if (not col.table or col.table.lower() == a)
                  and t.column(col.name) is not None), None)
    if owner is None or owner[1].column(col.name).type != "text":
        raise UserError(f"SNIPPET(): '{col.name}' is not a text column of a table in FROM", errors.SqlSyntaxError)
    table_alias, table = owner
    index = _index(table)
    query = _text(args[1], bound, "SNIPPET()")
    opts = _options(_snippet_options(args[2:], bound))
    expression = _marks_for(query, table, index)
    marked = _marked(index, table.column(col.name).name, table_alias,
                     _bind(bound, expression)) if expression else exp.null()
    return exp.Anonymous(this="_tessera_snippet", expressions=[
        marked, col.copy(), exp.Placeholder(this=_bind(bound, json.dumps(asdict(opts))))])


def _marks_for(query: str, table: Table, index: TextIndex) -> str | None:
    tree = checked_query(lambda: parse(query), table)
    return checked_query(lambda: to_fts5(Query(positive_leaves(tree.root), tree.relaxed), index.columns,
                                         catalog_fulltext.stopwords(table)), table)


def _index(table: Table) -> TextIndex:
    index = catalog_fulltext.text_index(table)
    if index is None:
        raise UserError(f"table '{table.name}' has no full-text fields (text columns)", errors.SqlSyntaxError)
    return index


def _first(tables: dict[str, Table]) -> tuple[str, Table]:
    if not tables:
        raise UserError("HIGHLIGHT() needs a table in FROM", errors.SqlSyntaxError)
    return next(iter(tables.items()))


def _text(node: exp.Expression, bound: dict[str, Any], where: str) -> str:
    ok, value = literal(node, bound)
    if not ok or not isinstance(value, str):
        raise UserError(f"{where}: expected a string argument", errors.SqlSyntaxError)
    return value


def _options(pairs: dict[str, Any]) -> SnippetOptions:
    try:
        return SnippetOptions.parse(pairs)
    except ValueError as exc:
        raise UserError(str(exc), errors.SqlSyntaxError) from None


def _struct_options(node: exp.Struct, bound: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for item in node.expressions:
        is_eq = isinstance(item, (exp.PropertyEQ, exp.EQ))
        name = (item.this.name if is_eq else item.alias).lower()
        ok, value = literal(item.expression if is_eq else item.this, bound)
        if not ok:
            raise UserError(f"HIGHLIGHT() option {name}: expected a constant", errors.SqlSyntaxError)
        out[name] = value
    return out


def _snippet_options(args: list[exp.Expression], bound: dict[str, Any]) -> dict[str, Any]:
    """Manticore's forms: 'name=value' strings, or value AS name."""
    out = {}
    for arg in args:
        if isinstance(arg, exp.Alias):
            ok, value = literal(arg.this, bound)
            name = arg.alias
        else:
            ok, text = literal(arg, bound)
            if not ok or not isinstance(text, str) or "=" not in text:
                raise UserError("SNIPPET() options are 'name=value' strings or value AS name", errors.SqlSyntaxError)
            name, value = text.split("=", 1)
        if not ok:
            raise UserError(f"SNIPPET() option {name}: expected a constant", errors.SqlSyntaxError)
        out[name.strip().lower()] = value
    return out
