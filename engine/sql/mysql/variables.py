"""MySQL session state: system variables (``SET autocommit=0``, ``SELECT @@version``), user variables
(``SET @x = ...``, ``@x`` in queries), ``SET NAMES``, ``USE``, and the values of ``LAST_INSERT_ID()``,
``ROW_COUNT()``, ``FOUND_ROWS()``, ``CONNECTION_ID()``, ``VERSION()``.

Variables live beside the Database (one session per connection). In a statement they are replaced by
literals before the statement is planned, so SQLite sees plain values and nothing of the user's text
becomes SQL. Which variables exist and what each accepts is the table :data:`SYSTEM`.
"""
from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.values import bind
from tesseradb.errors import UserError
from tesseradb.grammar.lexing import HONOURED, BadSqlMode, Lexing, canonical_sql_mode
from tesseradb.results import Result
from tesseradb.sql.database import Database

DATABASE_NAME = "main"               # SQLite's name for the one database: always accepted by USE
SERVER_VERSION = "8.0.36-tesseradb"  # what MySQL tools read from VERSION() / @@version
UTF8 = {"utf8mb4", "utf8", "utf8mb3"}
DEFAULT_SQL_MODE = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")
_ids = itertools.count(1)


@dataclass(frozen=True)
class Variable:
    default: Any
    check: Callable[[str, Any], Any] | None = None     # None: read-only


def _bool(name: str, value: Any) -> int:
    text = str(value).strip().lower()
    table = {"1": 1, "0": 0, "on": 1, "off": 0, "true": 1, "false": 0}
    if text not in table:
        raise UserError(f"Variable '{name}' can't be set to the value of '{value}'", errors.WrongValueForVariable)
    return table[text]


def _text(name: str, value: Any) -> str:
    return "" if value is None else str(value)


def _number(name: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UserError(f"Incorrect argument type to variable '{name}'", errors.WrongValueForVariable) from None


def _sql_mode(name: str, value: Any) -> str:
    try:
        return canonical_sql_mode("" if value is None else str(value))
    except BadSqlMode as bad:
        raise UserError(f"Variable '{name}' can't be set to the value of '{bad}'",
                        errors.WrongValueForVariable) from None


def _charset(name: str, value: Any) -> str:
    """In-process (the DB-API, the shell) text is Python ``str``, UTF-8 by construction: SET accepts
    the UTF-8 family only. A served connection's other sets are the server's (:func:`serve_charsets`)."""
    text = str(value).strip().lower()
    if text not in UTF8:
        raise UserError(f"character set '{value}': tessera stores and returns text as UTF-8 only "
                        "(utf8mb4, utf8, utf8mb3)", errors.NotSupportedError)
    return "utf8mb4" if text == "utf8mb4" else "utf8mb3"


def _collation(name: str, value: Any) -> str:
    text = str(value).strip().lower()
    if not text.startswith(tuple(UTF8)):
        raise UserError(f"collation '{value}': tessera's text is UTF-8 (utf8mb4_*)", errors.NotSupportedError)
    return text


# name -> default and how a SET value is checked (None: read-only)
SYSTEM: dict[str, Variable] = {
    "autocommit": Variable(1, _bool),
    "sql_mode": Variable(DEFAULT_SQL_MODE, _sql_mode),
    "character_set_client": Variable("utf8mb4", _charset),
    "character_set_connection": Variable("utf8mb4", _charset),
    "character_set_results": Variable("utf8mb4", _charset),
    "character_set_database": Variable("utf8mb4"),
    "character_set_server": Variable("utf8mb4"),
    "character_set_system": Variable("utf8mb3"),
    "collation_connection": Variable("utf8mb4_0900_ai_ci", _collation),
    "collation_database": Variable("utf8mb4_0900_ai_ci"),
    "collation_server": Variable("utf8mb4_0900_ai_ci"),
    "version": Variable(SERVER_VERSION),
    "version_comment": Variable("tesseradb (embedded; SQLite executes relational SQL)"),
    "time_zone": Variable("SYSTEM", _text),
    "system_time_zone": Variable("UTC"),
    "transaction_isolation": Variable("SERIALIZABLE", _text),
    "tx_isolation": Variable("SERIALIZABLE", _text),
    "transaction_read_only": Variable(0, _bool),
    "foreign_key_checks": Variable(1, _bool),
    "unique_checks": Variable(1, _bool),
    "sql_auto_is_null": Variable(0, _bool),
    "sql_safe_updates": Variable(0, _bool),
    "sql_notes": Variable(1, _bool),
    "sql_warnings": Variable(0, _bool),
    "big_tables": Variable(0, _bool),
    "max_execution_time": Variable(0, _number),
    "group_concat_max_len": Variable(1024, _number),
    "div_precision_increment": Variable(4),
    "sql_select_limit": Variable(18446744073709551615, _number),
    "max_allowed_packet": Variable(67108864, _number),
    "net_buffer_length": Variable(16384, _number),
    "wait_timeout": Variable(28800, _number),
    "interactive_timeout": Variable(28800, _number),
    "net_write_timeout": Variable(60, _number),
    "net_read_timeout": Variable(30, _number),
    "lower_case_table_names": Variable(2),
    "auto_increment_increment": Variable(1),
    "auto_increment_offset": Variable(1),
    "license": Variable("Apache-2.0"),
    "init_connect": Variable(""),
    "have_ssl": Variable("DISABLED"),
    "performance_schema": Variable(0),
    "query_cache_type": Variable("OFF"),
    "default_storage_engine": Variable("SQLite"),
    "storage_engine": Variable("SQLite"),
    "protocol_version": Variable(10),
    "port": Variable(0),
    "hostname": Variable("localhost"),
    # the account USER(), CURRENT_USER() and SHOW GRANTS name (issue 36: one name everywhere); tessera
    # serve sets it to the user that connected
    "external_user": Variable("root@localhost", _text),
}
NAMES = ("character_set_client", "character_set_connection", "character_set_results")
# What tessera serve keeps for the client a connection serves (clients/server/charsets.py converts
# text at the wire); pushed here by :func:`serve_charsets` so that @@x in any statement agrees.
SERVED_CHARSETS = ("character_set_client", "character_set_connection", "character_set_results",
                   "character_set_database", "character_set_server",
                   "collation_connection", "collation_database", "collation_server")
_CHARSET_NAME = re.compile(r"[a-z0-9_]+\Z")      # MySQL's character set and collation names


@dataclass
class Session:
    connection_id: int = field(default_factory=lambda: next(_ids))
    system: dict[str, Any] = field(default_factory=lambda: {k: v.default for k, v in SYSTEM.items()})
    user: dict[str, Any] = field(default_factory=dict)
    last_insert_id: int = 0
    row_count: int = -1
    found_rows: int = 0
    lexing: Lexing = Lexing()          # what sql_mode makes of quotes and backslashes (grammar/lexing.py)
    served: bool = False               # tessera serve's connection: its character sets are the server's


def session(db: Database) -> Session:
    """The session state of ``db`` (created on first use; it lives on the Database)."""
    if db.session is None:
        db.session = Session()
    return db.session


def lexing(db: Database) -> Lexing:
    """The lexing flags of the session's sql_mode (NO_BACKSLASH_ESCAPES, ANSI_QUOTES): the one place
    to read them (the DB-API reads statements with them; a statement cache keyed by text needs them)."""
    return session(db).lexing


def account(db: Database) -> str:
    """The session's user, as USER() and SHOW GRANTS name it."""
    return str(session(db).system["external_user"])


def database_name(db: Database) -> str:
    """The one database's name, as ``tessera serve`` shows it too: the file's name without its
    extension (``docs.db`` -> ``docs``), ``main`` in memory."""
    path = str(getattr(db, "path", "") or "")
    if not path or path == ":memory:":
        return DATABASE_NAME
    return os.path.splitext(os.path.basename(path))[0] or DATABASE_NAME


def is_this_database(db: Database, name: str) -> bool:
    return name.strip("`").lower() in (database_name(db).lower(), DATABASE_NAME)


# -- SET (the statement's handler: tesseradb.sql.statements.set) -------------------------------------
def set_value(value: exp.Expression) -> Any:
    if isinstance(value, exp.Literal):
        return value.this if value.is_string else value.to_py()
    if isinstance(value, (exp.Var, exp.Column, exp.Identifier)):
        return value.name
    if isinstance(value, exp.Boolean):
        return int(value.this)
    if isinstance(value, exp.Null):
        return None
    return value.sql(dialect="mysql")


def set_system(db: Database, name: str, value: Any, scope: str = "") -> None:
    spec = SYSTEM.get(name)
    if spec is None:
        raise UserError(f"Unknown system variable '{name}'", errors.UnknownVariable)
    if spec.check is None:
        raise UserError(f"Variable '{name}' is a read only variable", errors.ReadOnlyVariable)
    if name in SERVED_CHARSETS:
        _not_while_served(db, name)
    if str(value).upper() == "DEFAULT":
        value = spec.default
    state = session(db)
    state.system[name] = spec.check(name, value)
    if scope == "GLOBAL":
        db.warn(f"SET GLOBAL {name} applies to this connection only: an embedded database has no "
                "server-wide settings", 1287, "Note")
    if name == "sql_mode":
        state.lexing = Lexing.from_sql_mode(state.system[name])
        ignored = [m for m in state.system[name].split(",") if m and m not in HONOURED
                   and m not in DEFAULT_SQL_MODE.split(",")]
        if ignored:
            db.warn(f"sql_mode {', '.join(ignored)} is stored and reported, but tessera's SQL does not "
                    "change with it (docs/compatibility.md#mysql)", 1287, "Note")


def _not_while_served(db: Database, name: str) -> None:
    """A served connection's character sets are set by the server's own SET (it converts the text):
    the engine sees a SET of them only beside a user variable, refused before anything changes."""
    if session(db).served:
        raise UserError(f"{name} in a SET with a user variable: tessera serve sets character sets in a "
                        "SET statement of their own", errors.NotSupportedError)


def set_names(db: Database, item: exp.Expression) -> None:
    _not_while_served(db, "SET NAMES")
    charset = set_value(item.this) if item.this is not None else "utf8mb4"
    canonical = _charset("character_set_client", charset)
    for name in NAMES:
        session(db).system[name] = canonical
    collate = item.args.get("collate")
    session(db).system["collation_connection"] = (
        _collation("collation_connection", set_value(collate)) if collate is not None
        else "utf8mb4_0900_ai_ci")


def serve_charsets(db: Database, values: Mapping[str, str | None]) -> None:
    """tessera serve only: the character set and collation variables of the client this connection
    serves, as the server's session accepted them (the handshake, COM_CHANGE_USER, SET NAMES, SET
    CHARACTER SET, SET character_set_*): checked there against MySQL's sets and the codecs the
    server converts with, so that ``@@character_set_results`` in any statement, SHOW VARIABLES and
    the server's own answers agree. The engine's text stays Unicode: the server converts at the wire.
    Here only the form is checked (a known variable; a name, or NULL for character_set_results)."""
    checked: dict[str, str | None] = {}
    for name, value in values.items():
        if name not in SERVED_CHARSETS:
            raise UserError(f"Unknown system variable '{name}'", errors.UnknownVariable)
        text = None if value is None else str(value).strip().lower()
        if (text is None and name != "character_set_results") or (text is not None and not _CHARSET_NAME.match(text)):
            raise UserError(f"Variable '{name}' can't be set to the value of '{value}'", errors.WrongValueForVariable)
        checked[name] = text
    state = session(db)
    state.system.update(checked)
    state.served = True


def evaluate(db: Database, value: exp.Expression, params: Any = None) -> Any:
    """A SET @x = <expr> value, computed by SQLite like a SELECT of it."""
    select = exp.select(substitute(db, value.copy()))
    select, bound = bind(select, params)
    row = db.store.one(select.sql(dialect="sqlite"), bound)
    return row[0] if row else None


# -- variables and session functions in a statement ----------------------------------------------------
def _literal(value: Any) -> exp.Expression:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Literal.number(int(value))
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def system_value(db: Database, name: str) -> Any:
    state = session(db)
    if name not in state.system:
        raise UserError(f"Unknown system variable '{name}'", errors.UnknownVariable)
    return state.system[name]


# MySQL function (upper-case name) -> its value in this session
FUNCTIONS: dict[str, Callable[[Database], Any]] = {
    "CONNECTION_ID": lambda db: session(db).connection_id,
    "LAST_INSERT_ID": lambda db: session(db).last_insert_id,
    "ROW_COUNT": lambda db: session(db).row_count,
    "FOUND_ROWS": lambda db: session(db).found_rows,
    "VERSION": lambda db: session(db).system["version"],
    "DATABASE": lambda db: database_name(db),
    "SCHEMA": lambda db: database_name(db),
    "CURRENT_USER": lambda db: account(db),
    "USER": lambda db: account(db),
    "SESSION_USER": lambda db: account(db),
    "SYSTEM_USER": lambda db: account(db),
}


# sqlglot's own nodes for some of them
NODE_FUNCTIONS: dict[type, str] = {exp.CurrentSchema: "DATABASE", exp.CurrentVersion: "VERSION",
                                   exp.CurrentUser: "CURRENT_USER"}


def _function_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        return None if node.expressions else str(node.this).upper()
    return NODE_FUNCTIONS.get(type(node))


def _replacement(db: Database, node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.SessionParameter):
        return _literal(system_value(db, node.name.lower()))
    if isinstance(node, exp.Parameter):
        return _literal(session(db).user.get(node.name.lower()))
    name = _function_name(node)
    return _literal(FUNCTIONS[name](db)) if name in FUNCTIONS else None


def substitute(db: Database, expr: exp.Expression) -> exp.Expression:
    """``expr`` with @user and @@system variables and the session functions replaced by literals."""
    def visit(node: exp.Expression) -> exp.Expression:
        new = _replacement(db, node)
        return new if new is not None else node
    return expr.transform(visit, copy=False)


def needs_substitution(expr: exp.Expression) -> bool:
    return any(is_candidate(n) for n in expr.walk())


def is_candidate(node: exp.Expression) -> bool:
    """A node that substitute() replaces: a variable or a session function."""
    if isinstance(node, (exp.SessionParameter, exp.Parameter)):
        return True
    return _function_name(node) in FUNCTIONS


def record(db: Database, kind: str, result: Result) -> None:
    """After a statement: what ROW_COUNT(), FOUND_ROWS() and LAST_INSERT_ID() return next."""
    state = session(db)
    if kind == "select":
        state.row_count = -1
        state.found_rows = len(result.rows or [])
    else:
        state.row_count = max(result.rowcount, 0)
        if kind == "insert" and result.lastrowid:
            state.last_insert_id = result.lastrowid
