"""How the session's ``sql_mode`` changes the way text is read: MySQL's two lexing modes.

- ``NO_BACKSLASH_ESCAPES``: ``\\`` is an ordinary character inside a string (``'a\\'`` is the two
  characters ``a\\``); only a doubled quote escapes a quote.
- ``ANSI_QUOTES``: ``"x"`` is a quoted identifier, as in standard SQL, not a string.

A driver escapes its parameters for the mode it believes is on (PyMySQL and libmysqlclient from the
server's ``SERVER_STATUS_NO_BACKSLASH_ESCAPES`` flag, mysql-connector from ``@@sql_mode``), so the
server must read text exactly that way, or a value crafted for one reading becomes SQL in the other.

:class:`Lexing` holds the two flags; :func:`normalize` reads a statement with the session's flags
(sqlglot's MySQL tokenizer, configured for them) and writes each string literal and quoted identifier
back in the default reading (``'...'`` with ``\\`` and ``'`` escaped, identifiers in backticks).
Everything after it (the literal lifter, the Lark grammar, sqlglot's parser) then reads the default
lexing only. Text between tokens (spaces, comments) is kept as it is.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from . import written_names
from .errors import GrammarError
from .limits import too_complex

# MySQL 8's sql_mode names, in the order MySQL reports them; the combination modes expand.
MODES = ("REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", "ONLY_FULL_GROUP_BY",
         "NO_UNSIGNED_SUBTRACTION", "NO_DIR_IN_CREATE", "ANSI", "NO_AUTO_VALUE_ON_ZERO",
         "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE",
         "NO_ZERO_DATE", "ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL",
         "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION", "PAD_CHAR_TO_FULL_LENGTH",
         "TIME_TRUNCATE_FRACTIONAL")
COMBINED = {
    "ANSI": ("REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", "ONLY_FULL_GROUP_BY"),
    "TRADITIONAL": ("STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
                    "ERROR_FOR_DIVISION_BY_ZERO", "NO_ENGINE_SUBSTITUTION"),
}
#: the modes that change how tessera reads or runs SQL (the rest are stored and reported only)
HONOURED = {"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ONLY_FULL_GROUP_BY", "NO_AUTO_VALUE_ON_ZERO"}


class BadSqlMode(ValueError):
    """A name in a sql_mode list that MySQL does not know."""


def canonical_sql_mode(value: str) -> str:
    """``'ansi_quotes, no_backslash_escapes'`` -> ``'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'`` (MySQL's
    order, combination modes expanded as MySQL shows them); raises :class:`BadSqlMode`."""
    names = {part.strip().upper() for part in str(value or "").split(",") if part.strip()}
    unknown = sorted(names.difference(MODES))
    if unknown:
        raise BadSqlMode(unknown[0])
    for combined, parts in COMBINED.items():
        if combined in names:
            names.update(parts)
    return ",".join(m for m in MODES if m in names)


class Lexing(NamedTuple):
    no_backslash_escapes: bool = False
    ansi_quotes: bool = False

    @classmethod
    def from_sql_mode(cls, sql_mode: str) -> "Lexing":
        names = {part.strip().upper() for part in str(sql_mode or "").split(",")}
        ansi = "ANSI_QUOTES" in names or "ANSI" in names
        return cls("NO_BACKSLASH_ESCAPES" in names, ansi)

    @property
    def dialect(self) -> MySQL:
        """sqlglot's MySQL dialect reading this mode (its ``tokenize`` raises sqlglot's TokenError)."""
        return dialect(self)

    def tokenize(self, text: str) -> list[Token]:
        """sqlglot's MySQL tokens of ``text`` read in this mode; raises GrammarError."""
        try:
            return dialect(self).tokenize(text)
        except TokenError as exc:
            raise GrammarError(f"syntax error: {exc}") from None

    def normalize(self, text: str) -> str:
        """:func:`normalize` with this mode (raises GrammarError)."""
        return normalize(text, self)

    @staticmethod
    def select_items(tokens: list[Token]) -> list[list[Token]]:
        """The tokens of each item of the outermost SELECT's list (grammar/written_names.py)."""
        return written_names.select_items(tokens)

    @staticmethod
    def too_complex(text: str) -> str | None:
        """Why ``text`` is too complex to tokenize and run (grammar/limits.py), or None."""
        return too_complex(text)


DEFAULT = Lexing()


@lru_cache(maxsize=None)
def dialect(lexing: Lexing) -> MySQL:
    """sqlglot's MySQL dialect with its tokenizer set for ``lexing``."""
    if lexing == DEFAULT:
        return MySQL()
    quotes = ["'"] if lexing.ansi_quotes else ["'", '"']
    identifiers = ["`", '"'] if lexing.ansi_quotes else ["`"]
    escapes = [q for q in quotes] + ([] if lexing.no_backslash_escapes else ["\\"])

    class Tokenizer(MySQL.Tokenizer):
        QUOTES = quotes
        IDENTIFIERS = identifiers
        STRING_ESCAPES = escapes

    name = "MySQL" + ("NoBackslash" if lexing.no_backslash_escapes else "") + ("AnsiQuotes" if lexing.ansi_quotes else "")
    return type(name, (MySQL,), {"Tokenizer": Tokenizer})()


# -- writing literals back in the default reading ---------------------------------------------------
def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''").replace("\0", "\\0") + "'"


def _identifier(text: str) -> str:
    return "`" + text.replace("`", "``") + "`"


REQUOTE = {
    TokenType.STRING: _string,
    TokenType.NATIONAL_STRING: lambda text: "N" + _string(text),
    TokenType.IDENTIFIER: _identifier,
}


def normalize(text: str, lexing: Lexing) -> str:
    """``text`` as the default lexing must read it to mean what ``lexing`` reads (identity for the
    default). A string the mode cannot read (an unterminated quote) is a syntax error here, never
    read again another way."""
    reason = too_complex(text)
    if reason is not None:
        raise GrammarError(f"statement too complex to run: {reason}")
    if lexing == DEFAULT:
        return text
    parts, last = [], 0
    for token in lexing.tokenize(text):
        requote = REQUOTE.get(token.token_type)
        if requote is None:
            continue
        parts.append(text[last:token.start])
        parts.append(requote(token.text))
        last = token.end + 1
    parts.append(text[last:])
    return "".join(parts)
