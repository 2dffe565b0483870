"""A ``/search`` request → one SELECT with bound parameters (and what its answer needs to know).

``knn`` becomes ``knn(col, ?, ?, {ef=?, ...})`` (a text ``query`` on a model-backed column is embedded
by the engine; ``query_vector`` and ``doc_id`` as in SQL), ``hybrid`` becomes ``hybrid_match(?, col)``,
``query`` becomes ``MATCH(?)`` and the SQL condition of :mod:`query_dsl`; ``sort``, ``limit``/``size``,
``offset``/``from`` become ORDER BY and ``LIMIT ? OFFSET ?``; ``highlight`` one ``HIGHLIGHT()`` per
field. Only column names of the table reach the SQL text, quoted.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from tesseradb.clients.http import query_dsl
from tesseradb.clients.http.fields import RequestError, get
from tesseradb.clients.http.tables import Column, Table, quote

DEFAULT_LIMIT = 20                  # Manticore's default page
SNIPPET_SEPARATOR = "\x1e"          # between the passages of one field's HIGHLIGHT(), split back into a list
# Manticore's JSON highlight option -> HIGHLIGHT()'s option, and the type it takes
HIGHLIGHT_OPTIONS = {
    "before_match": ("before_match", str), "after_match": ("after_match", str),
    "pre_tags": ("before_match", str), "post_tags": ("after_match", str),
    "limit": ("limit", int), "fragment_size": ("limit", int), "around": ("around", int),
    "limit_snippets": ("limit_snippets", int), "number_of_fragments": ("limit_snippets", int),
    "limit_words": ("limit_words", int), "allow_empty": ("allow_empty", bool),
}
JSON_TAGS = {"before_match": "<strong>", "after_match": "</strong>"}   # Manticore's JSON defaults


@dataclass
class Plan:
    table: Table
    sql: str = ""
    params: list[Any] = field(default_factory=list)
    where: str = ""                       # FROM ... WHERE ..., shared with the count and the aggregations
    where_params: list[Any] = field(default_factory=list)
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    source: list[Column] = field(default_factory=list)
    score: str | None = None              # "weight" | "hybrid" | None (knn only or filters)
    knn: bool = False
    passage: bool = False
    highlight: list[str] = field(default_factory=list)
    aggs: dict[str, Any] = field(default_factory=dict)


def plan(request: dict[str, Any], table: Table) -> Plan:
    p = Plan(table)
    p.limit = _non_negative(get(request, "limit", "integer") if "limit" in request else get(request, "size", "integer"), "limit", DEFAULT_LIMIT)
    p.offset = _non_negative(get(request, "offset", "integer") if "offset" in request else get(request, "from", "integer"), "offset", 0)
    condition = query_dsl.compile_query(request["query"], table) if request.get("query") is not None else query_dsl.Condition()
    knn_sql, knn_params = "", []
    if request.get("hybrid") is not None and request.get("knn") is not None:
        raise RequestError('"hybrid" and "knn" cannot be used together')
    if request.get("knn") is not None:
        knn_sql, knn_params, knn_filter = _knn(request["knn"], table, p)
        condition = query_dsl.all_of([condition, knn_filter])
    elif request.get("hybrid") is not None:
        knn_sql, knn_params = _hybrid(request["hybrid"], table, p)
        if condition.text:
            raise RequestError('"hybrid" searches its own text: give attribute filters only in "query"')
    if condition.text and not p.knn:
        p.score = "weight"
    p.passage = bool(get(request, "passage", "boolean", default=False))
    if p.passage and not p.knn:
        raise RequestError('"passage" needs a "knn" or "hybrid" search on a model-backed column')
    conds, params = [], []
    if knn_sql:
        conds.append(knn_sql)
        params += knn_params
    if condition.text:
        conds.append("MATCH(?)")
        params.append(condition.text)
    if condition.sql:
        conds.append(condition.sql if len(conds) == 0 else f"({condition.sql})")
        params += condition.params
    p.where = f"FROM {quote(table.name)}" + (" WHERE " + " AND ".join(conds) if conds else "")
    p.where_params = params
    p.source = _source(request.get("_source", True), table)
    select, select_params = _select_list(request, p, bool(condition.text))
    order = _order(request.get("sort"), p, table)
    p.sql = f"SELECT {select} {p.where}{order} LIMIT ? OFFSET ?"
    p.params = select_params + params + [p.limit, p.offset]
    p.aggs = get(request, "aggs", "object", default={}) or get(request, "aggregations", "object", default={})
    return p


def _non_negative(value: int | None, name: str, default: int) -> int:
    if value is None:
        return default
    if value < 0:
        raise RequestError(f'"{name}" should not be negative')
    return value


# -- knn and hybrid -------------------------------------------------------------------------------
def _vector_column(name: Any, table: Table) -> Column:
    column = table.require(name, "knn field")
    if not column.is_vector:
        raise RequestError(f"knn field '{column.name}' is not a float_vector column")
    return column


def _knn(knn: Any, table: Table, p: Plan) -> tuple[str, list[Any], query_dsl.Condition]:
    if isinstance(knn, list):
        if len(knn) != 1:
            raise RequestError("multiple KNN clauses require hybrid fusion: use SQL (docs/hybrid.md)")
        knn = knn[0]
    if not isinstance(knn, dict):
        raise RequestError('"knn" property value should be an object')
    column = _vector_column(get(knn, "field", "string", required=True), table)
    k = get(knn, "k", "integer", default=None)
    if k is not None and k <= 0:
        raise RequestError("k parameter must be positive")
    target = _knn_target(knn, column)
    options, option_params = [], []
    for name, kind in (("ef", "integer"), ("rescore", "boolean"), ("oversampling", "number")):
        value = get(knn, name, kind)
        if value is None:
            continue
        if name == "oversampling" and value < 1:
            raise RequestError("oversampling parameter must be >= 1.0")
        if name == "ef" and value < 0:
            raise RequestError("ef parameter must be non-negative")
        options.append(f"{name}=?")
        option_params.append(int(value) if name == "rescore" else value)
    braces = ", {" + ", ".join(options) + "}" if options else ""
    p.knn = True
    p.score = None
    k_value = k if k is not None else p.limit + p.offset
    sql = f"knn({quote(column.name)}, ?, ?{braces})"
    filter_node = knn.get("filter")
    flt = query_dsl.compile_query(filter_node, table) if filter_node is not None else query_dsl.Condition()
    return sql, [k_value, target] + option_params, flt


def _knn_target(knn: dict[str, Any], column: Column) -> Any:
    given = [n for n in ("query", "query_vector", "doc_id") if knn.get(n) is not None]
    if len(given) != 1:
        raise RequestError('knn needs one of "query", "query_vector" or "doc_id"')
    value = knn[given[0]]
    if given[0] == "doc_id":
        return get(knn, "doc_id", "integer")
    if isinstance(value, str):
        if given[0] == "query_vector":
            raise RequestError('"query_vector" property value should be an array')
        if not column.model_backed:
            raise RequestError(f"knn field '{column.name}' has no model_name: search it with query_vector")
        return value
    if not isinstance(value, list) or not value or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise RequestError(f'"{given[0]}" property value should be an array of numbers')
    return [float(x) for x in value]


def _hybrid(hybrid: Any, table: Table, p: Plan) -> tuple[str, list[Any]]:
    if not isinstance(hybrid, dict):
        raise RequestError('"hybrid" property value should be an object')
    text = get(hybrid, "query", "string", required=True)
    name = get(hybrid, "field", "string")
    column = _vector_column(name, table) if name else next((c for c in table.columns if c.model_backed), None)
    if column is None or not column.model_backed:
        raise RequestError("hybrid search needs a model-backed vector column (model_name ... from)")
    p.knn, p.score = True, "hybrid"
    return f"hybrid_match(?, {quote(column.name)})", [text]


# -- what is selected --------------------------------------------------------------------------------
def _patterns(value: Any, what: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise RequestError(f'{what} should be a string or an array of strings')
    return [n.strip() for i in items for n in i.split(",") if n.strip()]


def _source(value: Any, table: Table) -> list[Column]:
    """``_source``: true (default columns), false (none), names or patterns, {includes, excludes}."""
    if value is True:
        return table.source_columns
    if value is False:
        return []
    includes, excludes = None, []
    if isinstance(value, dict):
        if value.get("includes") is not None:
            includes = _patterns(value["includes"], '"_source" "includes"')
        excludes = _patterns(value.get("excludes") or [], '"_source" "excludes"')
    elif isinstance(value, (str, list)):
        includes = _patterns(value, '"_source"')
    else:
        raise RequestError('"_source" property should be a string or an array or an object')
    pool = [c for c in table.columns if c.name.lower() != "id"]
    chosen = table.source_columns if not includes else [
        c for c in pool if any(fnmatch.fnmatchcase(c.name.lower(), i.lower()) for i in includes)]
    return [c for c in chosen if not any(fnmatch.fnmatchcase(c.name.lower(), e.lower()) for e in excludes)]


def _select_list(request: dict[str, Any], p: Plan, text: bool) -> tuple[str, list[Any]]:
    items = ["`id`"] + [quote(c.name) for c in p.source]
    params: list[Any] = []
    if p.score == "weight":
        items.append("weight() AS `_weight`")
    if p.score == "hybrid":
        items.append("hybrid_score() AS `_hybrid_score`")
    if p.knn:
        items.append("knn_dist() AS `_knn_dist`")
    if p.passage:
        items += ["knn_chunk() AS `_chunk`", "knn_chunk_text() AS `_chunk_text`",
                  "knn_chunk_start() AS `_chunk_start`", "knn_chunk_end() AS `_chunk_end`"]
    highlight = request.get("highlight")
    if highlight is not None and (text or p.score == "hybrid"):
        options, option_params, fields = _highlight(highlight, p.table)
        for i, name in enumerate(fields):
            items.append(f"HIGHLIGHT({{{options}}}, ?) AS `_hl{i}`")
            params += option_params + [name]
        p.highlight = fields
    return ", ".join(items), params


def _highlight(value: Any, table: Table) -> tuple[str, list[Any], list[str]]:
    if not isinstance(value, dict):
        raise RequestError('"highlight" property value should be an object')
    chosen = {**JSON_TAGS, "chunk_separator": SNIPPET_SEPARATOR}
    for name, (option, kind) in HIGHLIGHT_OPTIONS.items():
        given = value.get(name)
        if given is None:
            continue
        if kind is int and (not isinstance(given, int) or isinstance(given, bool)):
            raise RequestError(f'"{name}" property value should be an integer')
        if kind is str and not isinstance(given, str):
            raise RequestError(f'"{name}" property value should be a string')
        if name in ("pre_tags", "post_tags") and given == JSON_TAGS[option] and option in value:
            continue            # the client always sends both spellings; the one that differs wins
        chosen[option] = int(given) if kind is bool else given
    if value.get("no_match_size") == 0:
        chosen["allow_empty"] = 1
    fields = value.get("fields")
    if fields is None:
        names = [c.name for c in table.full_text_fields]
    elif isinstance(fields, dict):
        names = list(fields)
    else:
        names = _patterns(fields, '"fields"')
    for n in names:
        column = table.column(n)
        if column is None or not column.full_text:
            raise RequestError(f"highlight: no full-text field '{n}' in table '{table.name}'")
    options = ", ".join(f"{k}=?" for k in chosen)
    return options, list(chosen.values()), [table.column(n).name for n in names]  # type: ignore[union-attr]


# -- order -------------------------------------------------------------------------------------------
def _order(sort: Any, p: Plan, table: Table) -> str:
    if sort is None:
        if p.score == "weight" and not p.knn:
            return " ORDER BY `_weight` DESC, `id` ASC"
        return "" if p.knn else " ORDER BY `id` ASC"
    items = sort if isinstance(sort, list) else [sort]
    if not isinstance(sort, (list, dict)):
        raise RequestError('"sort" property value should be an array or an object')
    out = []
    for item in items:
        pairs = [(item, None)] if isinstance(item, str) else list(item.items()) if isinstance(item, dict) else None
        if pairs is None:
            raise RequestError('"sort" items should be field names or objects')
        for name, how in pairs:
            out.append(_sort_key(name, how, p, table))
    return " ORDER BY " + ", ".join(out)


def _sort_key(name: str, how: Any, p: Plan, table: Table) -> str:
    if isinstance(how, dict):
        how = how.get("order")
    special = {"_score": {"weight": "`_weight`", "hybrid": "`_hybrid_score`"}.get(p.score or "", None),
               "_knn_dist": "`_knn_dist`" if p.knn else None, "_id": "`id`"}
    if name in special:
        if special[name] is None:
            raise RequestError(f"sort by '{name}' needs a search that gives it")
        expr = special[name]
        default = "desc" if name == "_score" else "asc"
    else:
        column = table.require(name, "sort field")
        if column.is_vector:
            raise RequestError(f"can't sort by the vector column '{column.name}'")
        expr, default = quote(column.name), "asc"
    direction = (how or default)
    if not isinstance(direction, str) or direction.lower() not in ("asc", "desc"):
        raise RequestError(f"sort order of '{name}' should be asc or desc")
    return f"{expr} {direction.upper()}"
