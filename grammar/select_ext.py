"""Manticore's SELECT extensions that sqlglot's MySQL parser does not know, lifted out of the text on
sqlglot's own tokens before the statement is parsed (strings and identifiers are never re-read):

* ``OPTION name=value, name=(a=1, b=2)`` at the end of a SELECT -> ``Query.options``;
* ``MATCH('query')`` (Manticore's one-argument form; MySQL's ``MATCH(cols) AGAINST(...)`` is left to
  sqlglot) -> the function ``_tessera_match('query')``;
* ``MATCH(...) AS name`` / ``knn(...) AS name`` inside WHERE (hybrid search side names) ->
  ``_tessera_as(call, 'name')``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from .errors import GrammarError

MATCH_FUNCTION = "_tessera_match"
ALIAS_FUNCTION = "_tessera_as"
NAMED_CALLS = {"match", "knn", "hybrid_match"}
_WHERE_ENDS = {TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.LIMIT, TokenType.HAVING}
_WORD_TOKENS = {TokenType.VAR, TokenType.IDENTIFIER}

_MAYBE = re.compile(r"\b(match|option|knn|hybrid_match)\b", re.IGNORECASE)
OptionValue = object     # int | float | str | tuple[tuple[str, OptionValue], ...]


@dataclass(frozen=True)
class Edit:
    start: int           # character range [start, end) of the text replaced
    end: int
    text: str


def _tokens(text: str) -> list[Token]:
    try:
        return MySQL().tokenize(text)
    except TokenError:
        return []        # sqlglot reports the error when it parses


def _close(tokens: list[Token], i: int) -> int:
    """Index of the ')' that closes the '(' at ``i`` (or -1)."""
    depth = 0
    for j in range(i, len(tokens)):
        kind = tokens[j].token_type
        depth += kind == TokenType.L_PAREN
        depth -= kind == TokenType.R_PAREN
        if depth == 0:
            return j
    return -1


def _word(tok: Token) -> str | None:
    """An identifier-like token's name (keywords such as TEXT count: ``AS text``)."""
    if tok.token_type in (TokenType.STRING, TokenType.NUMBER, TokenType.L_PAREN, TokenType.R_PAREN,
                          TokenType.COMMA, TokenType.EQ, TokenType.DASH, TokenType.PLUS):
        return None
    return tok.text if tok.text.replace("_", "a").isalnum() or tok.token_type == TokenType.IDENTIFIER else None


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def lift(text: str) -> tuple[str, tuple[tuple[str, OptionValue], ...]]:
    """(the statement without its extensions, the OPTION list as (lower-cased name, value) pairs)."""
    if not _MAYBE.search(text):
        return text, ()              # most statements: no second tokenizing pass
    tokens = _tokens(text)
    if not tokens:
        return text, ()
    options: tuple = ()
    cut = _option_start(tokens) if tokens[0].token_type == TokenType.SELECT else None
    if cut is not None:
        options = _parse_options(tokens[cut + 1:])
        text, tokens = text[:tokens[cut].start], tokens[:cut]
    edits = _match_edits(tokens) + _alias_edits(tokens)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    return text, options


def _option_start(tokens: list[Token]) -> int | None:
    depth = 0
    for i, tok in enumerate(tokens):
        depth += tok.token_type == TokenType.L_PAREN
        depth -= tok.token_type == TokenType.R_PAREN
        if depth == 0 and tok.token_type == TokenType.VAR and tok.text.lower() == "option" and i > 0:
            return i
    return None


def _match_edits(tokens: list[Token]) -> list[Edit]:
    edits = []
    for i, tok in enumerate(tokens[:-1]):
        if tok.text.lower() != "match" or tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        close = _close(tokens, i + 1)
        after = tokens[close + 1] if 0 <= close < len(tokens) - 1 else None
        if after is not None and after.text.lower() == "against":
            continue
        edits.append(Edit(tok.start, tok.end + 1, MATCH_FUNCTION))
    return edits


def _alias_edits(tokens: list[Token]) -> list[Edit]:
    """``call(...) AS name`` at the top level of WHERE."""
    edits, depth, in_where = [], 0, False
    for i, tok in enumerate(tokens):
        kind = tok.token_type
        if depth == 0 and kind == TokenType.WHERE:
            in_where = True
        elif depth == 0 and kind in _WHERE_ENDS:
            in_where = False
        depth += kind == TokenType.L_PAREN
        depth -= kind == TokenType.R_PAREN
        if not (in_where and depth == 0 and tok.text.lower() in NAMED_CALLS and i + 1 < len(tokens)
                and tokens[i + 1].token_type == TokenType.L_PAREN):
            continue
        close = _close(tokens, i + 1)
        if close < 0 or close + 2 >= len(tokens) or tokens[close + 1].token_type != TokenType.ALIAS:
            continue
        name = _word(tokens[close + 2])
        if name is None:
            raise GrammarError(f"syntax error, a name must follow AS near '{tokens[close + 2].text}'")
        edits.append(Edit(tok.start, tok.start, f"{ALIAS_FUNCTION}("))
        edits.append(Edit(tokens[close].end + 1, tokens[close + 2].end + 1, f", {_sql_string(name)})"))
    return edits


# -- OPTION name=value, ... ------------------------------------------------------------------------
def _parse_options(tokens: list[Token]) -> tuple[tuple[str, OptionValue], ...]:
    out, i = [], 0
    while i < len(tokens):
        name, value, i = _option(tokens, i)
        out.append((name.lower(), value))
        if i < len(tokens):
            if tokens[i].token_type != TokenType.COMMA:
                raise GrammarError(f"syntax error in OPTION near '{tokens[i].text}'")
            i += 1
    if not out:
        raise GrammarError("syntax error, OPTION without a name=value")
    return tuple(out)


def _option(tokens: list[Token], i: int) -> tuple[str, OptionValue, int]:
    name = _word(tokens[i])
    if name is None or i + 2 > len(tokens) or tokens[i + 1].token_type != TokenType.EQ:
        raise GrammarError(f"syntax error in OPTION near '{tokens[i].text}': expected name=value")
    i += 2
    if i >= len(tokens):
        raise GrammarError(f"syntax error in OPTION: no value for '{name}'")
    if tokens[i].token_type == TokenType.L_PAREN:
        close = _close(tokens, i)
        if close < 0:
            raise GrammarError(f"syntax error in OPTION: unclosed '(' after '{name}='")
        return name, _parse_options(tokens[i + 1:close]), close + 1
    value, i = _scalar(tokens, i, name)
    return name, value, i


def _scalar(tokens: list[Token], i: int, name: str) -> tuple[OptionValue, int]:
    sign = 1
    if tokens[i].token_type in (TokenType.DASH, TokenType.PLUS):
        sign = -1 if tokens[i].token_type == TokenType.DASH else 1
        i += 1
        if i >= len(tokens) or tokens[i].token_type != TokenType.NUMBER:
            raise GrammarError(f"syntax error in OPTION: a number must follow the sign of '{name}'")
    tok = tokens[i]
    if tok.token_type == TokenType.NUMBER:
        number = float(tok.text) if any(c in tok.text for c in ".eE") else int(tok.text)
        return sign * number, i + 1
    if tok.token_type == TokenType.STRING:
        return tok.text, i + 1
    word = _word(tok)
    if word is None:
        raise GrammarError(f"syntax error in OPTION near '{tok.text}'")
    return word, i + 1
