"""Standard SQL (SELECT / INSERT / REPLACE / UPDATE / DELETE) through sqlglot's MySQL dialect."""
from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError

from sqlglot.tokens import TokenType

from . import ast, mysql_semantics, written_names
from .lexing import DEFAULT

# sqlglot reports constructs it drops or falls back on (FOR UPDATE, unknown SET forms) as log warnings;
# with no handler configured Python would print them to stderr in the middle of the shell's output.
# Our own errors say what matters; an application that configures logging still gets them.
logging.getLogger("sqlglot").addHandler(logging.NullHandler())
from .errors import GrammarError
from .manticore import rewrite_knn_dist
from .select_ext import lift as lift_select_extensions

# Top-level expression classes we accept, and the statement kind each one is.
QUERY_KINDS: dict[type, str] = {
    exp.Select: "select", exp.Union: "select", exp.Intersect: "select", exp.Except: "select",
    exp.Insert: "insert", exp.Update: "update", exp.Delete: "delete",
}

_REPLACE = re.compile(r"^\s*REPLACE(\s+INTO)?\b", re.IGNORECASE)
_FILE_TARGETS = {"OUTFILE", "DUMPFILE"}


def _strip_outfile(text: str) -> tuple[str, str | None]:
    """Lift ``INTO OUTFILE 'path'`` out of a SELECT (sqlglot's MySQL parser has no node for it), found
    on the tokenizer's tokens: words inside strings, quoted names and comments are never clauses."""
    if "outfile" not in text.lower() and "dumpfile" not in text.lower():
        return text, None                  # most statements: no tokenizing pass here
    tokens = DEFAULT.tokenize(text)
    for i, tok in enumerate(tokens[:-1]):
        if tok.token_type != TokenType.INTO or tokens[i + 1].token_type != TokenType.VAR:
            continue
        word = tokens[i + 1].text.upper()
        if word not in _FILE_TARGETS:
            continue
        if word == "DUMPFILE":
            raise GrammarError("SELECT ... INTO DUMPFILE is not supported: use INTO OUTFILE 'file.csv'")
        path = tokens[i + 2] if i + 2 < len(tokens) else None
        if path is None or path.token_type != TokenType.STRING:
            raise GrammarError("syntax error, INTO OUTFILE needs a quoted file name")
        return text[:tok.start] + " " + text[path.end + 1:], path.text
    return text, None


def _nul_strings(expr: exp.Expression) -> exp.Expression:
    """A string literal holding NUL (``'a\\0b'``, what PyMySQL sends for a NUL in a value) becomes
    ``CAST(X'..' AS TEXT)``: SQLite's SQL text cannot hold a NUL inside a quoted string."""
    for node in list(expr.find_all(exp.Literal)):
        if node.is_string and "\0" in node.this:
            blob = exp.HexString(this=node.this.encode("utf-8").hex())
            node.replace(exp.Cast(this=blob, to=exp.DataType.build("TEXT")))
    return expr


def _unparenthesize(expr: exp.Expression) -> exp.Expression:
    """``(SELECT ...)`` alone is that SELECT (MySQL); with ORDER BY / LIMIT outside the parentheses
    it is a SELECT over it."""
    while isinstance(expr, exp.Subquery) and not expr.alias:
        outer = {k: v for k, v in expr.args.items() if k != "this" and v}
        if not outer:
            expr = expr.this
            continue
        select = exp.select("*").from_(exp.Subquery(this=expr.this, alias=exp.TableAlias(this=exp.to_identifier("_q"))))
        for key, value in outer.items():
            select.set(key, value)
        return select
    return expr


def _operand(side: exp.Expression, n: int) -> exp.Expression:
    if not isinstance(side, exp.Subquery) or side.alias:
        return side
    inner = side.this
    if isinstance(inner, exp.Select) and not any(inner.args.get(k) for k in ("order", "limit", "offset")):
        return inner
    alias = exp.TableAlias(this=exp.to_identifier(f"_u{n}"))
    return exp.select("*").from_(exp.Subquery(this=inner, alias=alias))


def _set_operands(expr: exp.Expression) -> exp.Expression:
    """``(SELECT ...) UNION (SELECT ... LIMIT 1)``: SQLite takes no parentheses around the operands of
    UNION / INTERSECT / EXCEPT, so a plain operand loses them and one with its own ORDER BY / LIMIT
    (or a nested set operation) becomes ``SELECT * FROM (...)``."""
    for n, node in enumerate(list(expr.find_all(exp.Union, exp.Intersect, exp.Except))):
        for key in ("this", "expression"):
            side = node.args.get(key)
            if side is not None:
                node.set(key, _operand(side, 2 * n + (key == "expression")))
    return expr


def parse_query(text: str) -> ast.Query:
    replace = False
    if _REPLACE.match(text):
        text = _REPLACE.sub("INSERT INTO", text, count=1)
        replace = True
    text, outfile = _strip_outfile(text)
    text, options = lift_select_extensions(text)     # OPTION, MATCH('q'), MATCH(...) AS side
    try:
        expressions = sqlglot.parse(text, read="mysql", error_level=ErrorLevel.RAISE)
    except ParseError as exc:
        err = exc.errors[0] if exc.errors else {}
        desc = re.sub(r"<Token token_type: TokenType\.\w+, text: ([^,]*),.*?>", r"'\1'",
                      err.get("description", str(exc)).split(". Line")[0])
        if desc.startswith("Required keyword"):   # sqlglot's wording for a clause cut short
            desc = "syntax error, incomplete statement"
        near = (err.get("highlight") or "") + (err.get("end_context") or "")
        raise GrammarError(f"{desc} near '{near.strip()[:80]}'" if near.strip() else desc,
                           err.get("line"), err.get("col"), str(exc)) from None
    except TokenError as exc:
        raise GrammarError(f"syntax error: {exc}") from None
    expressions = [e for e in expressions if e is not None]
    if len(expressions) != 1:
        raise GrammarError("expected exactly one statement")
    expr = mysql_semantics.apply(_set_operands(_unparenthesize(expressions[0])))
    kind = QUERY_KINDS.get(type(expr))
    if kind is None:
        word = text.strip().split(None, 1)[0] if text.strip() else ""
        raise GrammarError(f"syntax error, unexpected '{word[:40]}'")
    expr = written_names.attach(text, expr)     # IFNULL(NULL, 1) is named as written
    expr = rewrite_knn_dist(expr)       # Manticore's @knn_dist is knn_dist(), not a variable
    expr = _nul_strings(expr)
    # @user and @@system variables are the session's (engine/sql/mysql/variables.py replaces them by values)
    if (kind == "insert" and expr.expression is None) or (kind == "update" and not expr.expressions):
        raise GrammarError("syntax error, incomplete statement")
    if outfile is not None and kind != "select":
        raise GrammarError("INTO OUTFILE is only valid in SELECT")
    return ast.Query(expr=expr, kind=kind, replace=replace, outfile=outfile, options=options)
