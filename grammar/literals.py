"""Long numeric vector literals lifted out of SQL text before the parser sees them.

A 384-value vector written in SQL (``knn(v, 10, (0.012, -0.094, ...))``, ``INSERT ... VALUES (1,
(0.01, ...))``, ``[[...], [...]]``) costs sqlglot hundreds of tokens and nodes to parse, copy and
generate on every execute; passed as a parameter it costs one. :func:`lift` finds such literals with
one regular-expression scan and replaces each by a placeholder, returning the values to bind, so
that the statement means exactly what it meant.

What is lifted (outside strings, quoted identifiers and comments):

- ``( n, n, ... )`` with at least ``MIN_VALUES`` plain decimal numbers, opened inside another
  parenthesis (a function argument or an element of a row) right after ``(`` or ``,``. A row of
  ``VALUES`` (depth 0), an ``IN (...)`` list (after ``IN``) and a function's own argument list
  (after a name) are never lifted.
- ``[ ... ]`` holding only numbers and nested brackets (a ``float_vector_array`` literal, ``[]``
  included), in the same places.

Tuple elements are bound as Python floats (a vector column stores float32 either way); bracketed
numbers keep int or float as written. Placeholders follow the statement's own style: ``?`` (values merged with the caller's positional
parameters in text order) or, when the statement uses ``:name`` parameters, ``:_tessera_lit<n>``.
A statement that mixes both, or that has anything this scanner does not understand around a
candidate, is left alone: the parser then reports what it always did.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

MIN_VALUES = 16           # shorter tuples stay in the text (cheap to parse; rows and IN lists are short)
MIN_TEXT = 2 * MIN_VALUES  # a text shorter than this cannot hold a long literal
NAMED_PREFIX = "_tessera_lit"

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_TOKEN = re.compile(
    r"""(?P<skip>\s+|'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`]|``)*`"""
    r"""|--[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z))"""
    r"|(?P<param>\?|:[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<open>[(\[])|(?P<close>[)\]])|(?P<comma>,)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_$]*)"
    r"|(?P<number>" + _NUMBER + r")"
    r"|(?P<other>\S)",
    re.DOTALL)
_NUMERIC_CHARS = b"0123456789.eE+-, \t\r\n"


def _numeric_text(text: str) -> bool:
    """Only digits, signs, dots, exponents, commas and whitespace (a bytes translate: fast)."""
    return text.isascii() and not text.encode("ascii").translate(None, _NUMERIC_CHARS)


_BRACKETS = re.compile(r"\[[\s\d.eE+\-,\[\]]*\]")
_FLOATISH = frozenset(".eE")


def _value(text: str) -> int | float:
    return float(text) if _FLOATISH.intersection(text) else int(text)


def _brackets(text: str) -> list | None:
    """``[1, [2, 3]]`` as nested lists of numbers, or None when it is not that."""
    stack: list[list] = [[]]
    pos = 0
    for match in re.finditer(r"\s*(\[|\]|,|" + _NUMBER + r")", text):
        if match.start() != pos:
            return None
        pos = match.end()
        tok = match.group(1)
        if tok == "[":
            stack.append([])
        elif tok == "]":
            if len(stack) < 2:
                return None
            done = stack.pop()
            stack[-1].append(done)
        elif tok != ",":
            stack[-1].append(_value(tok))
    if pos != len(text.rstrip()) or len(stack) != 1 or len(stack[0]) != 1:
        return None
    return stack[0][0]


def lift(sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
         ) -> tuple[str, Sequence[Any] | Mapping[str, Any] | None]:
    """``(sql, params)`` with long numeric literals replaced by placeholders and their values bound."""
    if len(sql) < MIN_TEXT or sql.count(",") < MIN_VALUES - 1:
        return sql, params
    found = _candidates(sql)
    if found is None or not found[0]:
        return sql, params
    spans, style = found
    named = style == "named" or (style is None and isinstance(params, Mapping))
    if named and params is not None and not isinstance(params, Mapping):
        return sql, params
    if not named and isinstance(params, Mapping) and params:
        return sql, params
    return _rewrite(sql, params, spans, named)


def _candidates(sql: str) -> tuple[list[tuple[int, int, Any, int]], str | None] | None:
    """Spans ``(start, end, value, index of the ? before it)`` to lift and the parameter style."""
    spans: list[tuple[int, int, Any, int]] = []
    depth, prev, positional, style = 0, "", 0, None
    pos, end = 0, len(sql)
    while pos < end:
        match = _TOKEN.match(sql, pos)
        if match is None:
            break
        kind = match.lastgroup
        if kind == "skip":
            pos = match.end()
            continue
        start = match.start(kind)
        if kind == "open" and depth >= 1 and prev in ("(", ","):
            lifted = _lift_at(sql, start)
            if lifted is not None:
                stop, value = lifted
                spans.append((start, stop, value, positional))
                pos, prev = stop, "value"
                continue
        if kind == "param":
            this = "positional" if match.group(kind) == "?" else "named"
            if style not in (None, this):
                return None
            style = this
            positional += this == "positional"
        depth += (kind == "open") - (kind == "close")
        prev = match.group(kind) if kind in ("open", "close", "comma") else kind
        pos = match.end()
    return spans, style


def _lift_at(sql: str, start: int) -> tuple[int, Any] | None:
    if sql[start] == "(":
        close = sql.find(")", start)
        inner = sql[start + 1:close]
        if close < 0 or inner.count(",") < MIN_VALUES - 1 or not _numeric_text(inner):
            return None
        try:                     # float() takes exactly the plain decimal numbers the class lets through
            return close + 1, list(map(float, inner.split(",")))
        except ValueError:       # '1e', '+-1', '1..2', an empty element: not a tuple of numbers
            return None
    match = _BRACKETS.match(sql, start)
    if match is None:
        return None
    value = _brackets(match.group())
    return None if value is None else (match.end(), value)


def _rewrite(sql: str, params: Any, spans: list[tuple[int, int, Any, int]], named: bool
             ) -> tuple[str, Sequence[Any] | Mapping[str, Any]]:
    parts, last = [], 0
    values: dict[str, Any] = dict(params or {}) if named else {}
    merged = list(params or []) if not named else []
    for n, (start, stop, value, before) in enumerate(spans):
        parts.append(sql[last:start])
        if named:
            name = f"{NAMED_PREFIX}{n}"
            parts.append(":" + name)
            values[name] = value
        else:
            parts.append("?")
            merged.insert(before + n, value)
        last = stop
    parts.append(sql[last:])
    return "".join(parts), (values if named else merged)
