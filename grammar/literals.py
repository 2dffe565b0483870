"""Long numeric vector literals, and the query text of knn(), lifted out of SQL text before the
parser sees them.

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

- The text argument of ``knn(col, k, 'text')`` / ``knn(col, 'text')``: a single-quoted string that
  is the whole argument. Every driver that interpolates parameters on the client (PyMySQL, the text
  protocol) sends a new SQL text per question; with the text lifted, the statement cache sees one
  statement and reuses its parse and plan. The value is decoded by sqlglot's own MySQL tokenizer,
  so it is exactly the string the parser would have read.

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
    r"""(?P<skip>\s+|"(?:[^"\\]|\\.|"")*"|`(?:[^`]|``)*`"""
    r"""|--[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z))"""
    r"|(?P<string>'(?:[^'\\]|\\.|'')*')"
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


_KNN_CALL = re.compile(r"\bknn\s*\(", re.IGNORECASE)
_TEXT_ARGUMENTS = {"knn": (1, 2)}      # function -> which argument positions hold a query text


# What a text-protocol client sends for a knn() question (PyMySQL, the mysql shell): the statement's one
# string is the whole text argument of knn(column, k, '...') or knn(column, '...') and holds no quote or
# backslash; around it there is no other quote, parameter, comment or bracket. Such a text is lifted
# without the scanner (~20 us warm, a few times that right after a model run), to exactly what the
# scanner makes of it (tests/grammar/test_literal_lifting.py compares the two).
_KNN_TEXT = re.compile(r"\bknn\s*\(\s*[A-Za-z_][A-Za-z0-9_$]*\s*,\s*(?:\d+\s*,\s*)?('[^'\\\\\"]*')\s*[,)]",
                       re.IGNORECASE)
_NOT_SIMPLE = re.compile(r"[\"`?:#\\\\\[]|--|/\*")     # around it: no other quote, parameter, comment or bracket


def _one_knn_text(sql: str, params: Any) -> tuple[str, list[Any]] | None:
    if (params is not None and (isinstance(params, Mapping) or len(params))) or sql.count("'") != 2:
        return None
    if sql.count(",") >= MIN_VALUES - 1:        # room for a numeric tuple: the scanner decides
        return None
    match = _KNN_TEXT.search(sql)
    if match is None:
        return None
    start, end = match.span(1)
    if _NOT_SIMPLE.search(sql, 0, start) is not None or _NOT_SIMPLE.search(sql, end) is not None:
        return None
    return sql[:start] + "?" + sql[end:], [sql[start + 1:end - 1]]


def lift(sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
         ) -> tuple[str, Sequence[Any] | Mapping[str, Any] | None]:
    """``(sql, params)`` with long numeric literals and knn() query texts replaced by placeholders
    and their values bound."""
    if "'" in sql:
        simple = _one_knn_text(sql, params)
        if simple is not None:
            return simple
    return scanned(sql, params)


def lifts_nothing(sql: str) -> bool:
    """Whether :func:`lift` returns ``sql`` and its parameters as they are, whatever the parameters
    (no quote for a knn() text, no room for a long numeric tuple): a caller may remember it by text."""
    return "'" not in sql and not (len(sql) >= MIN_TEXT and sql.count(",") >= MIN_VALUES - 1)


def scanned(sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
            ) -> tuple[str, Sequence[Any] | Mapping[str, Any] | None]:
    """:func:`lift` by the scanner alone."""
    vectors = len(sql) >= MIN_TEXT and sql.count(",") >= MIN_VALUES - 1
    if not vectors and ("'" not in sql or not _KNN_CALL.search(sql)):
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
    if named:       # a named plan with lifted names is not reused (statement_cache): keep texts in place
        spans = [span for span in spans if not isinstance(span[2], str)]
        if not spans:
            return sql, params
    return _rewrite(sql, params, spans, named)


def _candidates(sql: str) -> tuple[list[tuple[int, int, Any, int]], str | None] | None:
    """Spans ``(start, end, value, index of the ? before it)`` to lift and the parameter style."""
    spans: list[tuple[int, int, Any, int]] = []
    depth, prev, positional, style = 0, "", 0, None
    calls: list[list] = []          # per open parenthesis: [the function it calls, argument index]
    word = ""
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
        if kind == "string":
            if _is_text_argument(calls, prev, sql, match.end()):
                value = _decode(match.group(kind))
                if value is not None:
                    spans.append((start, match.end(), value, positional))
            prev = "value"
            pos = match.end()
            continue
        if kind == "open":
            calls.append([word.lower() if prev == "word" else "", 0])
        elif kind == "close" and calls:
            calls.pop()
        elif kind == "comma" and calls:
            calls[-1][1] += 1
        if kind == "word":
            word = match.group(kind)
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


def _is_text_argument(calls: list[list], prev: str, sql: str, after: int) -> bool:
    """A string that is the whole query-text argument of knn()."""
    if not calls or prev not in ("(", ",") or calls[-1][1] not in _TEXT_ARGUMENTS.get(calls[-1][0], ()):
        return False
    rest = sql[after:].lstrip()
    return rest[:1] in (",", ")")


_PLAIN_ESCAPES = re.compile(r"[\\'\"]")     # what a MySQL string's value can differ from its text by


def _decode(text: str) -> str | None:
    """The value of one MySQL string literal, as sqlglot's tokenizer (the parser's) reads it. Without
    a backslash or a quote between its quotes it is that text (a query text over the wire almost
    always: tokenizing it cost ~30 µs of each knn query a text-protocol client sends)."""
    if _PLAIN_ESCAPES.search(text, 1, len(text) - 1) is None:
        return text[1:-1]
    from sqlglot.dialects.mysql import MySQL
    from sqlglot.tokens import TokenType
    try:
        tokens = MySQL().tokenize(text)
    except Exception:  # noqa: BLE001 - not a literal this scanner understands: leave it in the text
        return None
    if len(tokens) != 1 or tokens[0].token_type != TokenType.STRING:
        return None
    return tokens[0].text


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
