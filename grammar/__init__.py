"""grammar: text -> statements. Knows nothing about tables, files or models.

``parse(sql)`` turns one statement into a node of :mod:`grammar.ast`; ``split(script)`` cuts a script
into statements. Extension statements go to the Lark grammar, standard SQL to sqlglot (MySQL).
"""
from __future__ import annotations

import re

from . import ast
from .errors import GrammarError
from .split import Piece, split
from .sql import parse_query
from .type_names import TYPE_ALIASES

__all__ = ["parse", "split", "Piece", "GrammarError", "ast", "TYPE_ALIASES"]

# First keyword -> which front end parses the statement.
_EXTENSION_WORDS = {
    "create", "drop", "alter", "show", "describe", "desc", "truncate", "optimize", "check",
    "repair", "begin", "start", "commit", "rollback", "load", "call",
    "use", "lock", "unlock", "backup",
}
_QUERY_WORDS = {"select", "insert", "replace", "update", "delete", "with", "("}
_FIRST_WORD = re.compile(r"\s*(?:(?:--[^\n]*|#[^\n]*)\n\s*|/\*.*?\*/\s*)*(\(|[A-Za-z_]+)", re.DOTALL)


def parse(sql: str) -> ast.Statement:
    """Parse exactly one statement (a trailing ';' is allowed)."""
    text = sql.strip().rstrip(";").strip()
    match = _FIRST_WORD.match(text)
    if not text or match is None:
        raise GrammarError("syntax error, empty statement")
    word = match.group(1).lower()
    if word == "explain":
        inner = text[match.end():]
        return ast.Explain(parse(inner))
    if word == "call":
        _check_procedure(text[match.end():])
    if word == "set":
        from .session import parse_set      # Lark (the extension grammar) loads with the first statement
        return parse_set(text)              # that needs it: a plain query does not pay for it
    if word in _EXTENSION_WORDS:
        from .ddl import parse_extension
        return parse_extension(text)
    if word in _QUERY_WORDS:
        return parse_query(text)
    raise GrammarError(f"syntax error, unexpected '{match.group(1)}' near '{text[:60]}'")


_PROCEDURES = {"chunks", "evaluate", "chat"}
_PROCEDURE_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)")


def _check_procedure(rest: str) -> None:
    """CALL runs the built-in procedures only (CALL CHUNKS(...)); any other name is MySQL's error."""
    match = _PROCEDURE_NAME.match(rest)
    name = match.group(1) if match else ""
    if name.lower() not in _PROCEDURES:
        raise GrammarError(f"syntax error: PROCEDURE {name or '?'} does not exist (CALL runs CHUNKS(...), EVALUATE(...) and CHAT(...) only)")
