"""What the server needs to know about a statement before it runs: where one statement ends in a
multi-statement COM_QUERY, how many ``?`` placeholders a prepared statement has, and who answers it
(the engine, or the protocol layer for what clients probe at connect time).

Everything here reads sqlglot's MySQL *tokens*, never a regular expression over the text: quotes,
backticks and comments are the tokenizer's business (mysql-mimic counts placeholders with a regex
that miscounts a ``?`` after an escaped quote). Text is never rewritten: a statement is a slice of
what the client sent. One shortcut (:func:`read`): a text that cannot be anything but one statement
for the engine is not tokenized here at all (the engine reads it anyway); which texts qualify is
decided conservatively, and any doubt takes the tokens' way (tests/server/test_statement_routes.py).
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any

from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

_DIALECT = MySQL()


class Route(enum.Enum):
    ENGINE = "engine"        # tesseradb runs it (everything a user means as SQL)
    PROBE = "probe"          # mysql-mimic answers it from server variables and our schema
    PROBE_FALLBACK = "probe_fallback"   # the engine first; if it says "syntax error", mysql-mimic
    USE = "use"              # change the default database
    SET = "set"              # session variables (autocommit reaches the engine connection)
    PROCESSLIST = "processlist"   # SHOW [FULL] PROCESSLIST (processes.py)
    INFO_SCHEMA = "info_schema"   # the engine's information_schema first; tables it lacks: mysql-mimic's
    MIXED_SET = "mixed_set"       # SET @x = ..., NAMES ...: refused (the server sets character sets itself)


@dataclass(frozen=True)
class Statement:
    text: str
    tokens: tuple[Token, ...]
    route: Route

    @property
    def params(self) -> int:
        return sum(1 for t in self.tokens if t.token_type == TokenType.PLACEHOLDER)

    @property
    def first(self) -> str:
        return self.tokens[0].text.upper() if self.tokens else ""


# SHOW forms the protocol layer owns: server state, not tables (the engine answers SHOW TABLES,
# SHOW CREATE TABLE, SHOW COLUMNS, SHOW INDEX, SHOW WARNINGS...).
PROBE_SHOW = {"DATABASES", "SCHEMAS", "VARIABLES", "STATUS", "SESSION", "GLOBAL", "PROCESSLIST", "ERRORS",
              "PRIVILEGES"}     # ENGINES, CHARSET, COLLATION, PLUGINS, GRANTS: the engine answers (issue 22)
# Functions a connecting client asks about the session; answered with the server's values.
PROBE_FUNCTIONS = {"DATABASE", "SCHEMA", "USER", "CURRENT_USER", "SESSION_USER", "SYSTEM_USER",
                   "CONNECTION_ID", "VERSION", "CURRENT_SCHEMA"}
INFO_SCHEMA = {"INFORMATION_SCHEMA", "MYSQL", "PERFORMANCE_SCHEMA", "SYS"}


def tokenize(sql: str, lexing: Any = None) -> list[Token] | None:
    """sqlglot's MySQL tokens, read as the session's sql_mode reads quotes and backslashes
    (``lexing``: the engine connection's ``Connection.lexing``)."""
    try:
        return (lexing.dialect if lexing is not None else _DIALECT).tokenize(sql)
    except TokenError:
        return None


def split(sql: str, lexing: Any = None) -> list[Statement]:
    """The statements of a COM_QUERY, in order. Text the tokenizer cannot read is one statement:
    the engine then reports the error in its own words."""
    tokens = tokenize(sql, lexing)
    if tokens is None:
        head = _first_statement(sql, lexing)
        if head is not None:        # the rest is read after it ran (a SET sql_mode may change how)
            rest = sql[head.tokens[-1].end + 1:].strip().lstrip(";").strip()
            return [head] + ([Statement(rest, (), Route.ENGINE)] if rest else [])
        text = sql.strip().rstrip(";").strip()
        return [Statement(text, (), Route.ENGINE)] if text else []
    out: list[Statement] = []
    current: list[Token] = []
    for token in tokens + [None]:
        if token is None or token.token_type == TokenType.SEMICOLON:
            if current:
                text = sql[current[0].start:current[-1].end + 1]
                out.append(Statement(text, tuple(current), route(current)))
            current = []
        else:
            current.append(token)
    return out


def read(sql: str, lexing: Any = None) -> list[Statement]:
    """The statements of a COM_QUERY, as :func:`split` reads them; a text that can only be one
    statement the engine answers is not tokenized (~60 µs of each query that a text-protocol client
    sends, then tokenized again by the engine)."""
    plain = _plain_engine_statement(sql)
    return [plain] if plain is not None else split(sql, lexing)


_FIRST_WORD = re.compile(r"[ \t\r\n]*([A-Za-z]+)[ \t\r\n]")
# No backslash escape and no control character but tab, CR, LF anywhere: every quoted piece ends at
# the first unpaired quote of its kind, as the tokenizer reads it.
_UNSAFE = re.compile(r"[\\\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Outside quotes: no ';' (one statement), no comment, so a word a token would carry is found in the
# text itself.
_NOT_PLAIN = re.compile(r"[;#]|/\*|--")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
# What a SELECT must not contain to be surely the engine's: what _select_route looks for (a session
# or user variable, a probe function, an information_schema database), as pieces of words.
_MAYBE_NOT_ENGINE = ("@", "database", "schema", "user", "connection_id", "version", "mysql", "sys")


def _unquoted(match: re.Match) -> str:
    """A single-quoted string is a value whatever it says (routing never reads one): its content goes.
    A double-quoted piece (an identifier under ANSI_QUOTES) and a backquoted one keep their words."""
    piece = match.group()
    return "0" if piece[0] == "'" else " " + piece[1:-1] + " "


def _plain_engine_statement(sql: str) -> Statement | None:
    """``sql`` as the one ENGINE statement :func:`split` would make of it, when that is sure without
    tokens; else None. What a single-quoted string holds does not count: a question in a knn()
    text may well say "user", "version" or "database", or be written in any language."""
    if _UNSAFE.search(sql) is not None:
        return None
    outside = _QUOTED.sub(_unquoted, sql) if ("'" in sql or '"' in sql or "`" in sql) else sql
    if not outside.isascii() or _NOT_PLAIN.search(outside) is not None or any(q in outside for q in "'\"`"):
        return None         # a quote left open, a comment, several statements: the tokens decide
    first = _FIRST_WORD.match(outside)
    if first is None:
        return None
    word = first.group(1).upper()
    if word in ROUTES and (word != "SELECT" or any(piece in outside.lower() for piece in _MAYBE_NOT_ENGINE)):
        return None
    return Statement(sql.strip(" \t\r\n"), (), Route.ENGINE)


def _first_statement(sql: str, lexing: Any) -> Statement | None:
    """When the whole text cannot be tokenized under this mode: its first statement, if the text up to
    some ``;`` can (``SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 'a\\'`` is read in two modes)."""
    for n, char in enumerate(sql):
        if char != ";":
            continue
        tokens = tokenize(sql[:n + 1], lexing)
        if tokens and tokens[-1].token_type == TokenType.SEMICOLON and tokens[-1].start == n and len(tokens) > 1:
            head = tokens[:-1]
            if any(t.token_type == TokenType.SEMICOLON for t in head):
                return None
            return Statement(sql[head[0].start:head[-1].end + 1], tuple(head), route(head))
    return None


def one(sql: str, lexing: Any = None) -> Statement:
    """A prepared statement: the whole text is one statement (a trailing ``;`` is allowed)."""
    parts = split(sql, lexing)
    if len(parts) == 1:
        return parts[0]
    tokens = tokenize(sql, lexing) or []
    return Statement(sql.strip(), tuple(tokens), Route.ENGINE)


# -- routing -----------------------------------------------------------------------------------
def _words(tokens: list[Token]) -> list[str]:
    return [t.text.upper() for t in tokens]


def _reads_info_schema(tokens: list[Token]) -> bool:
    words = _words(tokens)
    return any(w in INFO_SCHEMA and i + 1 < len(words) and words[i + 1] == "." for i, w in enumerate(words))


def _is_probe_select(tokens: list[Token]) -> bool:
    words = _words(tokens)
    if "FROM" in words:
        return False
    session = any(t.token_type == TokenType.SESSION_PARAMETER for t in tokens)
    called = any(w in PROBE_FUNCTIONS and i + 1 < len(words) and words[i + 1] == "("
                 for i, w in enumerate(words))
    return session or called


def _show_route(tokens: list[Token]) -> Route:
    words = _words(tokens)
    second = words[1] if len(words) > 1 else ""
    if second == "PROCESSLIST" or words[1:3] == ["FULL", "PROCESSLIST"]:
        return Route.PROCESSLIST
    if second in PROBE_SHOW:
        return Route.PROBE
    return Route.PROBE_FALLBACK


def _user_variable(tokens: list[Token]) -> bool:
    """``@x``: user variables live in the engine's session, the same in the shell, the DB-API and here."""
    return any(t.token_type == TokenType.PARAMETER and t.text == "@" for t in tokens)


# What a SET item sets when it sets a character set or collation (SET NAMES, SET CHARACTER SET / CHARSET,
# SET [SESSION] [@@[session.]]character_set_results = ...).
CHARSET_TARGETS = {"NAMES", "CHARACTER", "CHARSET", "CHARACTER_SET_CLIENT", "CHARACTER_SET_CONNECTION",
                   "CHARACTER_SET_RESULTS", "CHARACTER_SET_DATABASE", "CHARACTER_SET_SERVER",
                   "COLLATION_CONNECTION", "COLLATION_DATABASE", "COLLATION_SERVER"}
_ASSIGN = {TokenType.EQ, TokenType.COLON_EQ}


def _sets_charsets(tokens: list[Token]) -> bool:
    """A SET with an item that sets a character set or collation (not one that only reads one)."""
    depth, target, assigned = 0, False, False
    for token in tokens[1:] + [None]:
        kind = token.token_type if token is not None else TokenType.COMMA
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
        elif kind == TokenType.COMMA and depth == 0:
            if target:
                return True
            assigned = False
        elif kind in _ASSIGN and depth == 0:
            assigned = True
        elif not assigned and kind != TokenType.STRING and token.text.upper() in CHARSET_TARGETS:
            target = True
    return False


def _set_route(tokens: list[Token]) -> Route:
    """User variables live in the engine's session; character sets in the server's (it converts the
    text): a SET of both is refused before anything changes."""
    if not _user_variable(tokens):
        return Route.SET
    return Route.MIXED_SET if _sets_charsets(tokens) else Route.ENGINE


def _select_route(tokens: list[Token]) -> Route:
    if _reads_info_schema(tokens):
        return Route.INFO_SCHEMA        # the same answer as in-process (ENGINE, collations: issue 22)
    return Route.PROBE if _is_probe_select(tokens) and not _user_variable(tokens) else Route.ENGINE


ROUTES = {
    "SET": _set_route,
    "USE": lambda tokens: Route.USE,
    "SHOW": _show_route,
    "SELECT": _select_route,
    "KILL": lambda tokens: Route.PROBE,
}


def route(tokens: list[Token]) -> Route:
    first = tokens[0].text.upper() if tokens else ""
    decide = ROUTES.get(first)
    return decide(tokens) if decide else Route.ENGINE


# -- result column names of probes ------------------------------------------------------------
WORDLIKE = {TokenType.VAR, TokenType.IDENTIFIER, TokenType.NUMBER, TokenType.STRING, TokenType.R_PAREN}


def _aliased(item: list[Token]) -> bool:
    if any(t.token_type == TokenType.ALIAS for t in item):
        return True
    return (len(item) >= 2 and item[-1].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            and item[-2].token_type in WORDLIKE)


def select_names(stmt: Statement, lexing: Any) -> list[str | None]:
    """MySQL names an unaliased result column by its text (``@@version_comment``, ``DATABASE()``);
    mysql-mimic names it after its own rewrite (``CURRENT_SCHEMA()``). None where an alias names it.
    The select list is cut by the engine's own splitter (``lexing``: ``Connection.lexing``)."""
    if stmt.first != "SELECT" or lexing is None:
        return []
    return [None if not item or _aliased(item) else stmt.text[item[0].start - stmt.tokens[0].start:
                                                             item[-1].end - stmt.tokens[0].start + 1]
            for item in lexing.select_items(list(stmt.tokens))]
