"""API keys: never shown back, and ``env:NAME`` references read at use.

A key is stored with the column (as Manticore stores it) and printed nowhere: SHOW CREATE TABLE,
DESCRIBE, SHOW MODELS, ``Connection.describe()``, the servers' answers and every error message
that quotes a statement show ``api_key='<redacted>'`` instead. A statement that gives
``api_key='<redacted>'`` back (a re-run SHOW CREATE TABLE) is refused: the key is not in the text.
``api_key='env:NAME'`` is not a secret (it names one): it is shown as written and read from the
environment each time the model is used (over a server, only the names the operator lists;
:mod:`.access`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from tesseradb import errors
from tesseradb.errors import UserError

REDACTED = "<redacted>"
ENV_PREFIX = "env:"
#: Option names whose values are secrets (Manticore's api_key; h38's chat options use the same name).
SECRET_OPTIONS = frozenset({"api_key"})
# api_key = '...' / "..." / `...` (MySQL's escapes: \' and '' inside single quotes), case-insensitive
_QUOTED = r"""'(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.|"")*"?|`[^`]*`?"""
_KEY_IN_SQL = re.compile(rf"""(?P<name>\bapi_key(?:\s*=\s*|\s+(?=['"`])))(?P<value>{_QUOTED}|(?<==)[^\s,)]+|(?<=\s)[^\s,)]+)""",
                         re.IGNORECASE | re.DOTALL)


def is_env_ref(value: str | None) -> bool:
    return isinstance(value, str) and value.startswith(ENV_PREFIX) and len(value) > len(ENV_PREFIX)


def env_name(value: str) -> str:
    """``NAME`` of ``env:NAME``."""
    return value[len(ENV_PREFIX):]


def redact_key(value: str | None) -> str | None:
    """What may be shown of a key: an ``env:`` reference as written, anything else ``<redacted>``."""
    if value is None or value == "" or is_env_ref(value):
        return value
    return REDACTED


def redact_options(options: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(name, value)`` pairs with every secret option's value redacted."""
    return [(k, redact_key(v) or "") if k.lower() in SECRET_OPTIONS else (k, v) for k, v in options]


def _redact_match(match: re.Match[str]) -> str:
    raw = match.group("value")
    inner = raw[1:-1] if len(raw) >= 2 and raw[0] in "'\"`" and raw[-1] == raw[0] else raw
    if is_env_ref(inner) or inner == REDACTED:
        return match.group(0)
    return f"{match.group('name')}'{REDACTED}'"


def redact_statement(sql: str) -> str:
    """``sql`` with the value of every ``api_key=`` option replaced by ``'<redacted>'``.

    For every message that quotes a statement (syntax errors, the process list, logs). An
    unterminated literal is redacted to the end of the text.
    """
    if not isinstance(sql, str) or "api_key" not in sql.lower():
        return sql
    return _KEY_IN_SQL.sub(_redact_match, sql)


def statement_keys(sql: str) -> list[str]:
    """The key values a statement gives (``api_key='...'``, unquoted), to redact from messages
    that quote a piece of the statement (``syntax error near ''sk-...')'``)."""
    if not isinstance(sql, str) or "api_key" not in sql.lower():
        return []
    out = []
    for match in _KEY_IN_SQL.finditer(sql):
        raw = match.group("value")
        inner = raw[1:-1] if len(raw) >= 2 and raw[0] in "'\"`" and raw[-1] == raw[0] else raw.lstrip("'\"`")
        if inner and not is_env_ref(inner) and inner != REDACTED:
            out += [inner, raw]
    return out


def redact_message(message: str, sql: str) -> str:
    """A message about ``sql`` with every key the statement gives redacted (and any api_key=... in it)."""
    return redact_statement(redact_text(message, statement_keys(sql)))


def redact_text(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each (non-trivial) secret replaced by ``<redacted>``:
    for messages built from a server's reply, which may echo the key."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return text


def check_not_redacted(value: str | None) -> None:
    """Refuse ``api_key='<redacted>'``: a SHOW CREATE TABLE re-run without its key."""
    if value is not None and value.strip() == REDACTED:
        raise UserError("api_key='<redacted>' is not a key: SHOW CREATE TABLE hides the key; give it again "
                        "(api_key='...') or name an environment variable (api_key='env:NAME')",
                        errors.SqlSyntaxError)
