"""MySQL session statements: the Transformer rules for USE / SHOW DATABASES / VARIABLES / STATUS /
ERRORS / [FULL] COLUMNS / TABLE STATUS (grammar in ddl.lark), and SET through sqlglot."""
from __future__ import annotations

import sqlglot
from lark import Token
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from . import ast
from .errors import GrammarError
from .sql import parse_query


class SessionRules:
    """Mixed into the DDL Transformer: one method per rule alternative of ``mysql_session``."""

    def like_pattern(self, items):
        return ("like", self.string(items))      # the DDL Transformer's string(): unquoted

    def from_in(self, items):
        return ("from", None)

    def use_database(self, items):
        return ast.UseDatabase(items[0])

    def show_databases(self, items):
        return ast.ShowSession("databases", like=_option(items, "like"))

    def show_variables(self, items):
        return ast.ShowSession("variables", like=_option(items, "like"))

    def show_status(self, items):
        return ast.ShowSession("status", like=_option(items, "like"))

    def show_errors(self, items):
        return ast.ShowSession("errors")

    def show_probe(self, items):
        word = str(items[0]).split()[-1].lower()
        return ast.ShowSession(word, like=_option(items, "like"))

    def show_charset(self, items):
        return ast.ShowSession("charset", like=_option(items, "like"))

    def show_columns(self, items):
        full = any(isinstance(i, Token) and i.type == "FULL_KW" for i in items)
        names = _names(items)
        return ast.ShowColumns(names[0], full=full, like=_option(items, "like"),
                               database=names[1] if len(names) > 1 else None)

    def view_columns(self, items):
        return tuple(items)

    def view_option(self, items):
        return None

    def create_view(self, items):
        replace = any(isinstance(i, Token) and i.type == "REPLACE_KW" for i in items)
        body = next(str(i) for i in items if isinstance(i, Token) and i.type == "VIEW_BODY")
        query = parse_query(body)
        if query.kind != "select" or query.outfile is not None:
            raise GrammarError("a view's body must be a SELECT")
        columns = next((i for i in items if isinstance(i, tuple)), ())
        name = next(i for i in items if isinstance(i, str) and not isinstance(i, Token))
        return ast.CreateView(name, query, columns, replace)

    def create_table_as(self, items):
        body = next(str(i) for i in items if isinstance(i, Token) and i.type == "VIEW_BODY")
        query = parse_query(body)
        if query.kind != "select" or query.outfile is not None:
            raise GrammarError("CREATE TABLE ... AS takes a SELECT")
        name = next(i for i in items if isinstance(i, str) and not isinstance(i, Token) and i != "if_not_exists")
        return ast.CreateTableAs(name, query, if_not_exists="if_not_exists" in items)

    def create_table_like(self, items):
        names = [i for i in items if isinstance(i, str) and not isinstance(i, Token) and i != "if_not_exists"]
        return ast.CreateTableLike(names[0], names[1], if_not_exists="if_not_exists" in items)

    def drop_view(self, items):
        names = tuple(i for i in items if isinstance(i, str) and not isinstance(i, Token) and i != "if_exists")
        return ast.DropView(names, if_exists="if_exists" in items)

    def lock_item(self, items):
        return ("lock", items[0])

    def lock_tables(self, items):
        return ast.LockTables(tuple(i[1] for i in items if isinstance(i, tuple) and i[0] == "lock"))

    def unlock_tables(self, items):
        return ast.LockTables(unlock=True)

    def show_full_tables(self, items):
        names = _names(items)
        return ast.ShowSession("full_tables", like=_option(items, "like"), database=names[0] if names else None)

    def show_table_status(self, items):
        names = _names(items)
        return ast.ShowSession("table_status", like=_option(items, "like"), database=names[0] if names else None)


def _option(items: list, key: str) -> str | None:
    return next((i[1] for i in items if isinstance(i, tuple) and i[0] == key), None)


def _names(items: list) -> list[str]:
    return [i for i in items if isinstance(i, str) and not isinstance(i, Token)]


def _items(text: str) -> list[str]:
    """The assignments of ``SET a = 1, @b := (SELECT ...)``, split at top-level commas, ``:=`` as ``=``
    (one at a time: sqlglot reads neither ``:=`` nor a subquery followed by more items)."""
    tokens = sqlglot.tokenize(text, read="mysql")
    body_start = tokens[1].start if len(tokens) > 1 else len(text)
    items, depth, start, parts = [], 0, body_start, []
    for tok in tokens[1:]:
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif tok.token_type == TokenType.COMMA and depth == 0:
            items.append("".join(parts) + text[start:tok.start])
            parts, start = [], tok.end + 1
            continue
        if tok.token_type == TokenType.COLON_EQ:
            parts.append(text[start:tok.start] + "=")
            start = tok.end + 1
    items.append("".join(parts) + text[start:])
    return [i.strip() for i in items]


def parse_set(text: str) -> ast.SetStatement:
    """``SET ...`` through sqlglot's MySQL parser (NAMES, CHARACTER SET, variables, @user := expr)."""
    merged: list[exp.Expression] = []
    for item in _items(text):
        try:
            expr = sqlglot.parse_one("SET " + item, read="mysql")
        except (ParseError, TokenError):
            raise GrammarError(f"syntax error near '{item[:80]}'") from None
        if not isinstance(expr, exp.Set):
            raise GrammarError(f"syntax error near '{item[:80]}'")
        merged.extend(expr.expressions)
    return ast.SetStatement(exp.Set(expressions=merged))
