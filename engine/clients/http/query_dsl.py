"""Manticore's JSON query language → one full-text query and one SQL condition with ``?`` parameters.

Every node of ``query`` (and of ``knn.filter``, ``/update``'s and ``/delete``'s ``query``) compiles to
a :class:`Condition`: the full-text part in Manticore's query syntax (it becomes ``MATCH(?)``, one
bound parameter) and the attribute part as SQL over quoted column names with the values bound.
One table of node types (``NODES``); ``bool`` combines its clauses:

| node | full text | SQL |
|---|---|---|
| ``match`` ``{"f1,f2": "w1 w2"}`` / ``{"f": {"query", "operator"}}`` | ``@(f1,f2) (w1 \\| w2)`` (``and``: ``w1 w2``) | |
| ``match_phrase`` ``{"f": "a b"}`` | ``@(f) "a b"`` | |
| ``query_string`` ``"text"`` | ``(text)`` as written | |
| ``match_all`` | | |
| ``equals`` ``{"f": v}`` / ``in`` ``{"f": [..]}`` | | ``f = ?`` / ``f IN (?, ..)`` |
| ``range`` ``{"f": {"gte": a, "lt": b}}`` | | ``f >= ? AND f < ?`` |
| ``bool`` must / filter / must_not / should | AND / ``-(..)`` / ``\\|`` | AND / NOT / OR |

The words of ``match`` and ``match_phrase`` are literal (operator characters escaped); ``_all`` (or
no field) searches every full-text field.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tesseradb.clients.http.fields import RequestError
from tesseradb.clients.http.tables import Table, quote

SPECIAL = re.compile(r'([\\()|\-!@~"&/^$=<>*?\[\]{}:.,+%])')


@dataclass
class Condition:
    text: str = ""                              # Manticore full-text query ("" = none)
    sql: str = ""                               # SQL condition ("" = none)
    params: list[Any] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.text and not self.sql


def compile_query(node: Any, table: Table) -> Condition:
    if not isinstance(node, dict):
        raise RequestError('"query" property value should be an object')
    parts = [_node(name, value, table) for name, value in node.items()]
    return all_of(parts)


def _node(name: str, value: Any, table: Table) -> Condition:
    handler = NODES.get(name)
    if handler is None:
        raise RequestError(f"unknown full-text node '{name}'")
    return handler(value, table)


# -- full text --------------------------------------------------------------------------------
def _escape(word: str) -> str:
    return SPECIAL.sub(r"\\\1", word)


def _fields(spec: str, table: Table) -> str:
    """``@(f1,f2) `` for named full-text fields; "" for ``_all``."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names or names == ["_all"] or "*" in names:
        return ""
    for n in names:
        column = table.column(n)
        if column is None or not column.full_text:
            raise RequestError(f"query error: no field '{n}' found in schema")
    return "@(" + ",".join(table.column(n).name for n in names) + ") "  # type: ignore[union-attr]


def _one_field(value: Any, what: str) -> tuple[str, Any]:
    if not isinstance(value, dict) or len(value) != 1:
        raise RequestError(f'"{what}" property value should be an object with one field')
    return next(iter(value.items()))


def _match(value: Any, table: Table) -> Condition:
    spec, query = _one_field(value, "match")
    operator = "or"
    if isinstance(query, dict):
        operator = query.get("operator", "or")
        if not isinstance(operator, str) or operator.lower() not in ("or", "and"):
            raise RequestError("Unknown \"operator\" value")
        operator, query = operator.lower(), query.get("query")
    if not isinstance(query, (str, int, float)) or isinstance(query, bool):
        raise RequestError('"match" query should be a string')
    words = [_escape(w) for w in str(query).split()]
    if not words:
        return Condition()
    joined = " | ".join(words) if operator == "or" else " ".join(words)
    return Condition(text=f"{_fields(spec, table)}({joined})")


def _match_phrase(value: Any, table: Table) -> Condition:
    spec, phrase = _one_field(value, "match_phrase")
    if isinstance(phrase, dict):
        phrase = phrase.get("query")
    if not isinstance(phrase, str):
        raise RequestError('"match_phrase" query should be a string')
    words = [_escape(w) for w in phrase.split()]
    if not words:
        return Condition()
    return Condition(text=f'{_fields(spec, table)}"{" ".join(words)}"')


def _query_string(value: Any, table: Table) -> Condition:
    if isinstance(value, dict):
        value = value.get("query")
    if not isinstance(value, str):
        raise RequestError('"query_string" property value should be a string')
    return Condition(text=f"({value})") if value.strip() else Condition()


def _match_all(value: Any, table: Table) -> Condition:
    return Condition()


# -- attributes --------------------------------------------------------------------------------
def _scalar(value: Any, what: str) -> Any:
    if isinstance(value, (str, int, float)) or value is None:
        return value
    raise RequestError(f'"{what}" filter expects a number, string or boolean value')


def _attribute(name: str, table: Table) -> str:
    column = table.require(name, "attribute")
    if column.is_vector:
        raise RequestError(f"attribute '{column.name}' is a vector: it can't be filtered")
    return quote(column.name)


def _equals(value: Any, table: Table) -> Condition:
    if not isinstance(value, dict) or not value:
        raise RequestError('"equals" property value should be an object')
    out = [Condition(sql=f"{_attribute(n, table)} IS NULL") if v is None else
           Condition(sql=f"{_attribute(n, table)} = ?", params=[_scalar(v, "equals")]) for n, v in value.items()]
    return all_of(out)


def _in(value: Any, table: Table) -> Condition:
    if not isinstance(value, dict) or not value:
        raise RequestError('"in" property value should be an object')
    out = []
    for n, values in value.items():
        if not isinstance(values, list):
            raise RequestError(f'"in" filter of \'{n}\' should be an array')
        if not values:
            out.append(Condition(sql="1 = 0"))
            continue
        marks = ", ".join("?" * len(values))
        out.append(Condition(sql=f"{_attribute(n, table)} IN ({marks})", params=[_scalar(v, "in") for v in values]))
    return all_of(out)


RANGE_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _range(value: Any, table: Table) -> Condition:
    if not isinstance(value, dict) or not value:
        raise RequestError('"range" property value should be an object')
    out = []
    for n, bounds in value.items():
        if not isinstance(bounds, dict) or not bounds:
            raise RequestError(f'"range" filter of \'{n}\' should be an object with gt, gte, lt or lte')
        column = _attribute(n, table)
        for op, bound in bounds.items():
            if op not in RANGE_OPS:
                if op in ("format", "time_zone", "boost"):
                    continue
                raise RequestError(f"unknown range operator '{op}': expected gt, gte, lt or lte")
            if bound is None:
                continue
            out.append(Condition(sql=f"{column} {RANGE_OPS[op]} ?", params=[_scalar(bound, "range")]))
    return all_of(out)


# -- bool ----------------------------------------------------------------------------------------
def _clauses(value: Any, name: str, table: Table) -> list[Condition]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if item is None:
            continue
        if not isinstance(item, dict):
            raise RequestError(f'"{name}" items should be objects')
        out.append(compile_query(item, table))
    return [c for c in out if not c.empty]


def _bool(value: Any, table: Table) -> Condition:
    if not isinstance(value, dict):
        raise RequestError('"bool" property value should be an object')
    unknown = set(value) - {"must", "filter", "must_not", "should", "minimum_should_match", "boost"}
    if unknown:
        raise RequestError(f'unknown bool query type: "{sorted(unknown)[0]}"')
    must = _clauses(value.get("must", []), "must", table) + _clauses(value.get("filter", []), "filter", table)
    parts = must + [_negate(c) for c in _clauses(value.get("must_not", []), "must_not", table)]
    should = _clauses(value.get("should", []), "should", table)
    if should:
        parts.append(_any_of(should))
    return all_of(parts)


def _negate(c: Condition) -> Condition:
    if c.text and c.sql:
        raise RequestError("must_not can't combine full-text and attribute conditions in one clause")
    if c.text:
        return Condition(text=f"-({c.text})")
    return Condition(sql=f"NOT ({c.sql})", params=c.params)


def _any_of(parts: list[Condition]) -> Condition:
    if len(parts) == 1:
        return parts[0]
    if all(c.text and not c.sql for c in parts):
        return Condition(text="(" + " | ".join(f"({c.text})" for c in parts) + ")")
    if all(c.sql and not c.text for c in parts):
        return Condition(sql="(" + " OR ".join(f"({c.sql})" for c in parts) + ")",
                         params=[p for c in parts for p in c.params])
    raise RequestError("should can't mix full-text and attribute conditions: put the full-text clauses "
                       "and the filters in separate should lists (a nested bool in must)")


def all_of(parts: list[Condition]) -> Condition:
    texts = [c.text for c in parts if c.text]
    sqls = [c for c in parts if c.sql]
    return Condition(text=" ".join(texts),
                     sql=" AND ".join(f"({c.sql})" if len(sqls) > 1 else c.sql for c in sqls),
                     params=[p for c in sqls for p in c.params])


NODES = {
    "match": _match, "match_phrase": _match_phrase, "query_string": _query_string, "match_all": _match_all,
    "equals": _equals, "in": _in, "range": _range, "bool": _bool,
}
