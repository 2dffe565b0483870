"""LOAD DATA's ``SET col = expr, ...`` clause, read by sqlglot's MySQL parser as the SET list of an
UPDATE: each expression is kept as a sqlglot tree (the engine evaluates it, with the row's fields
bound as parameters: tesseradb.sql.statements.load_fields)."""
from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from .errors import GrammarError

_UPDATE_ONLY = {"this", "expressions"}      # anything else (WHERE, ORDER BY, LIMIT, FROM) is not SET's


def load_set(text: str) -> tuple[tuple[str, Any], ...]:
    """``SET a = expr, b = expr`` -> ((a, expr), (b, expr))."""
    body = text.strip().rstrip(";").strip()
    try:
        parsed = [p for p in sqlglot.parse("UPDATE _load_data_ " + body, read="mysql") if p is not None]
    except (ParseError, TokenError):
        raise GrammarError(f"syntax error near '{body[:80]}'") from None
    update = parsed[0] if len(parsed) == 1 else None
    if not isinstance(update, exp.Update) or {k for k, v in update.args.items() if v} - _UPDATE_ONLY:
        raise GrammarError(f"syntax error near '{body[:80]}'")
    pairs = []
    for item in update.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column) or item.this.table:
            raise GrammarError(f"syntax error near '{item.sql(dialect='mysql')[:80]}'")
        pairs.append((item.this.name, item.expression))
    return tuple(pairs)
