"""``/search``: run the planned SELECT and answer in Manticore's shape.

``{"took", "timed_out", "hits": {"total", "total_relation", "max_score", "hits": [{"_id", "_score",
"_source", "_knn_dist", "highlight"}]}, "aggregations"}``. Manticore's clients read ``_score``,
``max_score`` and ``_id`` as integers: ``_score`` is ``round(weight() * 1000)`` for a full-text search
(tesseradb's BM25 is a float), ``round(hybrid_score() * 1000)`` for ``hybrid``, 1 otherwise.
tesseradb's extras: ``_hybrid_score`` (the float) and, with ``"passage": true``, ``_passage``.
"""
from __future__ import annotations

import time
from typing import Any

from tesseradb.clients.http import chat, search_plan, tables
from tesseradb.clients.http.fields import RequestError, get, table_name
from tesseradb.clients.http.responses import json_value
from tesseradb.clients.http.search_plan import SNIPPET_SEPARATOR, Plan
from tesseradb.clients.http.tables import quote

SCORE_SCALE = 1000
DEFAULT_BUCKETS = 20


def search(con: Any, request: dict[str, Any]) -> dict[str, Any]:
    if "chat" in request:           # conversational search (docs/chat.md#over-http)
        return chat.answer(con, request)
    started = time.perf_counter()
    table = tables.read(con, table_name(request))
    p = search_plan.plan(request, table)
    cur = con.cursor()
    cur.execute(p.sql, p.params)
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, row)) for row in cur.fetchall()]
    hits = [_hit(row, p) for row in rows]
    total = p.offset + len(rows)
    if len(rows) == p.limit or (p.offset and not rows):        # a full page: count them all
        cur.execute(f"SELECT COUNT(*) {p.where}", p.where_params)
        total = cur.fetchone()[0]
    out: dict[str, Any] = {"took": 0, "timed_out": False,
                           "hits": {"total": total, "total_relation": "eq", "hits": hits}}
    if hits:
        out["hits"]["max_score"] = max(h["_score"] for h in hits)
    if p.aggs:
        out["aggregations"] = {name: _aggregate(con, name, spec, p) for name, spec in p.aggs.items()}
    out["took"] = int((time.perf_counter() - started) * 1000)
    return out


def _score(row: dict[str, Any], p: Plan) -> int:
    value = row.get("_weight") if p.score == "weight" else row.get("_hybrid_score") if p.score == "hybrid" else None
    return 1 if value is None else int(round(float(value) * SCORE_SCALE))


def _hit(row: dict[str, Any], p: Plan) -> dict[str, Any]:
    hit: dict[str, Any] = {"_id": row["id"], "_score": _score(row, p),
                           "_source": {c.name: json_value(row[c.name]) for c in p.source}}
    if p.knn:
        hit["_knn_dist"] = json_value(row["_knn_dist"])
    if p.score == "hybrid":
        hit["_hybrid_score"] = json_value(row["_hybrid_score"])
    if p.passage:
        hit["_passage"] = {"chunk": row["_chunk"], "text": row["_chunk_text"],
                           "start": row["_chunk_start"], "end": row["_chunk_end"]}
    if p.highlight:
        marked = {name: [s for s in (row[f"_hl{i}"] or "").split(SNIPPET_SEPARATOR) if s]
                  for i, name in enumerate(p.highlight)}
        hit["highlight"] = {name: snippets for name, snippets in marked.items() if snippets}
    return hit


# -- aggregations --------------------------------------------------------------------------------------
def _aggregate(con: Any, name: str, spec: Any, p: Plan) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise RequestError(f'aggregation "{name}" should be an object')
    kind = next((k for k in AGGREGATIONS if k in spec), None)
    if kind is None:
        raise RequestError(f'aggregation "{name}": supported are terms and histogram')
    return AGGREGATIONS[kind](con, spec[kind], p)


def _group_column(spec: Any, p: Plan, kind: str) -> str:
    if not isinstance(spec, dict):
        raise RequestError(f'"{kind}" property value should be an object')
    column = p.table.require(get(spec, "field", "string", required=True), "aggregation field")
    if column.is_vector:
        raise RequestError(f"can't aggregate by the vector column '{column.name}'")
    return quote(column.name)


def _terms(con: Any, spec: Any, p: Plan) -> dict[str, Any]:
    column = _group_column(spec, p, "terms")
    size = get(spec, "size", "integer", default=DEFAULT_BUCKETS)
    cur = con.cursor()
    cur.execute(f"SELECT {column}, COUNT(*) {p.where} GROUP BY {column} ORDER BY COUNT(*) DESC, {column} ASC "
                "LIMIT ?", p.where_params + [size])
    return {"buckets": [{"key": json_value(k), "doc_count": n} for k, n in cur.fetchall()]}


def _histogram(con: Any, spec: Any, p: Plan) -> dict[str, Any]:
    column = _group_column(spec, p, "histogram")
    interval = get(spec, "interval", "number", required=True)
    if interval <= 0:
        raise RequestError('"interval" should be positive')
    offset = get(spec, "offset", "number", default=0)
    key = f"FLOOR(({column} - ?) / ?) * ? + ?"
    cur = con.cursor()
    cur.execute(f"SELECT {key} AS `key`, COUNT(*) {p.where} AND {column} IS NOT NULL GROUP BY `key` ORDER BY `key`"
                if " WHERE " in p.where else
                f"SELECT {key} AS `key`, COUNT(*) {p.where} WHERE {column} IS NOT NULL GROUP BY `key` ORDER BY `key`",
                [offset, interval, interval, offset] + p.where_params)
    buckets = [{"key": json_value(_number(k)), "doc_count": n} for k, n in cur.fetchall()]
    if get(spec, "keyed", "boolean", default=False):
        return {"buckets": {str(b["key"]): b for b in buckets}}
    return {"buckets": buckets}


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


AGGREGATIONS = {"terms": _terms, "histogram": _histogram}
