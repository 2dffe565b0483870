"""A result column computed by an expression is named by its text as written (MySQL's rule, issue 22):
``IFNULL(NULL, 1)`` stays ``IFNULL(NULL, 1)``, not sqlglot's ``COALESCE(NULL, 1)``, and
``meta->'$.x'`` stays ``meta->'$.x'``. The outermost SELECT's list is cut at top-level commas on
sqlglot's MySQL tokens (quotes and comments are the tokenizer's business) and each item's text is
kept in its node's ``meta["written"]``, where the engine's column naming reads it."""
from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

_DIALECT = MySQL()
ENDS = {"FROM", "WHERE", "LIMIT", "ORDER", "GROUP", "HAVING", "INTO", "UNION", "WINDOW", "OPTION",
        "EXCEPT", "INTERSECT", "FOR", "LOCK"}
MODIFIERS = {"DISTINCT", "ALL", "DISTINCTROW", "SQL_CALC_FOUND_ROWS", "SQL_NO_CACHE", "SQL_CACHE",
             "HIGH_PRIORITY", "STRAIGHT_JOIN", "SQL_SMALL_RESULT", "SQL_BIG_RESULT", "SQL_BUFFER_RESULT"}


def select_items(tokens: list[Token]) -> list[list[Token]]:
    """The tokens of each item of the outermost SELECT's list (cut at top-level commas, after the
    modifiers such as DISTINCT, up to FROM/WHERE/...): the one select-list splitter, which the wire
    server reads its probes' column names with too (``Lexing.select_items``)."""
    start = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.SELECT), None)
    if start is None:
        return []
    body = tokens[start + 1:]
    while body and body[0].text.upper() in MODIFIERS:
        body = body[1:]
    items: list[list[Token]] = [[]]
    depth = 0
    for token in body:
        if depth == 0 and token.text.upper() in ENDS and token.token_type != TokenType.STRING:
            break
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth == 0 and token.token_type == TokenType.COMMA:
            items.append([])
        else:
            items[-1].append(token)
    return items


def attach(text: str, expr: exp.Expression) -> exp.Expression:
    if not isinstance(expr, exp.Select) or text.lstrip()[:1] == "(":
        return expr
    try:
        items = select_items(_DIALECT.tokenize(text))
    except TokenError:
        return expr
    if len(items) != len(expr.expressions) or not all(items):
        return expr
    for node, item in zip(expr.expressions, items):
        if not isinstance(node, (exp.Alias, exp.Column, exp.Star)):
            node.meta["written"] = text[item[0].start:item[-1].end + 1]
    return expr
