"""The PEP 249 exception tree, with MySQL error numbers and SQLSTATEs, and the one translation.

Lower layers raise narrow exceptions (``grammar.GrammarError``, ``storage.StorageError``,
``tesseradb.embed.ModelError``, ``UserError`` below, apsw errors); :func:`translate` turns them into
these classes in one place, SQLite's wording through the message tables below. Each client calls it
once (``clients/public_errors.py``). The engine's own texts that carry values (a duplicate key, an
unknown table or column, a row's bad value) are worded here too, by the functions that make them.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import apsw
import sqlglot

from tesseradb.grammar.errors import GrammarError
from tesseradb.storage.errors import StorageError


class Warning(Exception):  # noqa: A001 - PEP 249 name
    """PEP 249 Warning."""


class DataTruncatedWarning(UserWarning):
    """Issued with ``warnings.warn`` (once per statement and column) when a model-backed column
    embedded only part of some documents' text; SHOW WARNINGS lists each document."""


class Error(Exception):
    """Base of every error the engine raises. Carries a MySQL ``errno`` and ``sqlstate``."""

    errno = 1105
    sqlstate = "HY000"

    def __init__(self, msg: str, errno: int | None = None, sqlstate: str | None = None, *,
                 fields: Mapping[str, Any] | None = None):
        super().__init__(msg)
        self.msg = msg
        #: What the message says, as values (``table``, ``column``, ``row``, ``id``, ``key``, ``value``
        #: where it names them): read these, never the message.
        self.fields: dict[str, Any] = dict(fields or {})
        if errno is not None:
            self.errno = errno
        if sqlstate is not None:
            self.sqlstate = sqlstate

    def __str__(self) -> str:
        return f"ERROR {self.errno} ({self.sqlstate}): {self.msg}"


class InterfaceError(Error):
    errno, sqlstate = 2000, "HY000"


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    errno, sqlstate = 1366, "HY000"


class OperationalError(DatabaseError):
    errno, sqlstate = 1105, "HY000"


class IntegrityError(DatabaseError):
    errno, sqlstate = 1062, "23000"


class InternalError(DatabaseError):
    errno, sqlstate = 1815, "HY000"


class ProgrammingError(DatabaseError):
    errno, sqlstate = 1064, "42000"


class NotSupportedError(DatabaseError):
    errno, sqlstate = 1235, "42000"


# Engine subclasses (DuckDB style): catch the precise class or the PEP 249 one.
class SqlSyntaxError(ProgrammingError):
    errno, sqlstate = 1064, "42000"


class NoSuchTable(ProgrammingError):
    errno, sqlstate = 1146, "42S02"


class TableExists(ProgrammingError):
    errno, sqlstate = 1050, "42S01"


class NoSuchColumn(ProgrammingError):
    errno, sqlstate = 1054, "42S22"


class DuplicateColumn(ProgrammingError):
    errno, sqlstate = 1060, "42S21"


class DuplicateKey(IntegrityError):
    errno, sqlstate = 1062, "23000"


class ConstraintError(IntegrityError):
    errno, sqlstate = 1048, "23000"


class ModelError(ProgrammingError):
    errno, sqlstate = 1064, "42000"


class Interrupted(OperationalError):
    errno, sqlstate = 1317, "70100"


class Busy(OperationalError):
    errno, sqlstate = 1205, "HY000"


# MySQL session and constraint errors (issue 14; docs/compatibility.md#mysql)
class UnknownDatabase(ProgrammingError):
    errno, sqlstate = 1049, "42000"


class UnknownVariable(ProgrammingError):
    errno, sqlstate = 1193, "HY000"


class ReadOnlyVariable(ProgrammingError):
    errno, sqlstate = 1238, "HY000"


class WrongValueForVariable(ProgrammingError):
    errno, sqlstate = 1231, "42000"


class NoDefaultValue(IntegrityError):
    errno, sqlstate = 1364, "HY000"


class MultiplePrimaryKey(ProgrammingError):
    errno, sqlstate = 1068, "42000"


class UnknownTable(ProgrammingError):
    errno, sqlstate = 1051, "42S02"


class NotGrouped(ProgrammingError):
    errno, sqlstate = 1055, "42000"


class MixedAggregate(ProgrammingError):
    errno, sqlstate = 1140, "42000"


class NoSuchFunction(ProgrammingError):
    errno, sqlstate = 1305, "42000"


class WrongDateValue(DataError):
    """``Incorrect datetime value: 'x'`` (a DATE/DATETIME/TIME column, or a timestamp comparison)."""
    errno, sqlstate = 1292, "22007"


class BinaryJson(DataError):
    """Bytes bound for a JSON column: MySQL's ER_INVALID_JSON_CHARSET."""
    errno, sqlstate = 3144, "22032"


class FileExists(OperationalError):
    errno, sqlstate = 1086, "HY000"


class ActiveTransaction(OperationalError):
    errno, sqlstate = 1192, "HY000"


class UserError(Exception):
    """Raised by engine internals with the exact message a user should see.

    ``kind`` names the public class it becomes (a subclass of :class:`Error`), always at the raise.
    ``fields`` are what the message says, as values (row, id, key, value, column, table): a caller that
    needs them reads them here, never from the text. An error made by :func:`at` says where it happened
    (``place``: "row 3 (id 5)") before its ``detail``; :func:`relocated` says it of another place.
    """

    def __init__(self, msg: str, kind: type[Error], *, detail: str | None = None, place: str | None = None,
                 **fields: Any):
        super().__init__(msg)
        self.msg = msg
        self.kind = kind
        self.detail = detail
        self.place = place
        self.fields = fields


class ReadOnlyRefused(OperationalError):
    """A read-only connection (``connect(path, read_only=True)``) refused a statement: MySQL's
    ER_OPTION_PREVENTS_STATEMENT, as a server running with ``--read-only`` gives it."""
    errno, sqlstate = 1290, "HY000"


class ModelFailure(Exception):
    """Base of the embedding layer's ModelError (``tesseradb.embed.errors``): a model cannot be
    resolved, verified or loaded; the message is shown verbatim."""


class Cancelled(Exception):
    """Base of the embedding layer's EmbeddingCancelled: the statement was interrupted between batches."""


# -- the engine's own error texts, worded once ------------------------------------------------------------
# Errors that carry fields are made here, so that a text is chosen in one place and a caller reads the
# fields (never a regex over the message).
def duplicate_entry(value: str, key: str, *, id: int | None = None) -> UserError:
    """MySQL's 1062, the value included: ``Duplicate entry '5' for key 'r1x'`` (several columns: '1-2').
    ``id``: the row id the duplicate is of, when the key is the id."""
    extra = {} if id is None else {"id": id}
    return UserError(f"Duplicate entry '{value}' for key '{key}'", DuplicateKey, key=key, value=value, **extra)


def duplicate_id(value: int, key: str | None = None) -> UserError:
    """A repeated row id: Manticore's ``duplicate id '5'`` for its implicit id, MySQL's 1062 for a key
    declared MySQL's way (``key``: its name, PRIMARY)."""
    if key is not None:
        return duplicate_entry(str(value), key, id=value)
    return UserError(f"duplicate id '{value}'", DuplicateKey, id=value, value=str(value))


def no_such_table(name: str) -> UserError:
    return UserError(f"table '{name}' does not exist", NoSuchTable, table=name)


def missing_search_column(name: str, call: str) -> UserError:
    """A column that knn() or hybrid_match() names and the table lacks, in Manticore's words for knn()
    (``requested KNN search attribute 'chunk' not found``)."""
    text = (f"requested KNN search attribute '{name}' not found" if call == "knn"
            else f"{call}(): column '{name}' not found")
    return UserError(text, NoSuchColumn, column=name)


def unknown_column(name: str, where: str = "field list") -> UserError:
    """MySQL's 1054: ``Unknown column 'x' in 'where clause'``."""
    return UserError(f"Unknown column '{name}' in '{where}'", NoSuchColumn, column=name)


@dataclass(frozen=True)
class Place:
    """Where a value of a statement's rows is: its row (1-based) and/or its id."""
    row: int | None = None
    id: int | None = None

    def __str__(self) -> str:
        if self.row is None:
            return f"id {self.id}"
        return f"row {self.row}" + ("" if self.id is None else f" (id {self.id})")


def at(place: Place | str, detail: str, kind: type[Error], *, column: str | None = None, **fields: Any) -> UserError:
    """An error of one row's value: ``row 3 (id 5), column 'v': <detail>``."""
    where = str(place) + ("" if column is None else f", column '{column}'")
    if isinstance(place, Place):
        fields = {"row": place.row, "id": place.id, **fields}
    return UserError(f"{where}: {detail}", kind, detail=detail, place=str(place), column=column, **fields)


def relocated(exc: UserError, where: str) -> UserError:
    """The same error said of another place (a file and its line instead of a statement's row); an
    error made without a place (:func:`at`) keeps its whole text after ``where``."""
    if exc.detail is None:
        return prefixed(exc, where)
    column = exc.fields.get("column")
    text = where + ("" if column is None else f", column '{column}'")
    return UserError(f"{text}: {exc.detail}", exc.kind, detail=exc.detail, place=where, **exc.fields)


def prefixed(exc: UserError, where: str) -> UserError:
    """The same error, its whole text said of ``where`` (``'f.csv' lines 1-500: <text>``)."""
    return UserError(f"{where}: {exc.msg}", exc.kind, detail=exc.msg, place=where, **exc.fields)


# -- the one place where internal errors become user errors --- -----------------------------------
_SQLITE_MESSAGES: list[tuple[re.Pattern[str], type[Error], str]] = [
    (re.compile(r"no such table: (?:main\.)?(?P<table>.+)"), NoSuchTable, "table '{0}' does not exist"),
    (re.compile(r"no such column: (?P<column>.+?)(?: - should this be a string literal in single-quotes\?)?"),
     NoSuchColumn, "Unknown column '{0}' in 'field list'"),
    (re.compile(r"table (?P<table>\S+) has no column named (?P<column>.+)"), NoSuchColumn,
     "Unknown column '{1}' in 'field list'"),
    (re.compile(r"(?:table|index) (\S+) already exists"), TableExists, "table '{0}' already exists"),
    (re.compile(r"UNIQUE constraint failed: \S+\.id"), DuplicateKey, "duplicate id"),
    (re.compile(r"UNIQUE constraint failed: (.+)"), DuplicateKey, "Duplicate entry for unique index on {0}"),
    (re.compile(r"CHECK constraint failed: (.+)"), DataError, "{0}"),
    (re.compile(r"integer overflow"), DataError, "Out of range value: integer overflow"),
    (re.compile(r"NOT NULL constraint failed: \S+\.(.+)"), ConstraintError, "Column '{0}' cannot be null"),
    (re.compile(r"(.*)"), ProgrammingError, "{0}"),
]

# SQLite's complaints about the SQL it was given (apsw.SQLError: our translation of a statement), in MySQL's words
_SQLITE_SQL_ERRORS: list[tuple[re.Pattern[str], type[Error], str]] = [
    (re.compile(r"no such function: (?P<function>\w+)"), NoSuchFunction, "FUNCTION {0} does not exist"),
    (re.compile(r'near "(.*)": syntax error'), NotSupportedError,
     "This version of tesseradb doesn't yet support this statement: SQLite cannot run its translation "
     "(near '{0}')"),
    (re.compile(r"(.+) is not supported.*"), NotSupportedError, "This version of tesseradb doesn't yet "
     "support '{0}'"),
]


_APSW_CLASSES: list[tuple[type[BaseException], type[Error]]] = [
    (apsw.BusyError, Busy),
    (apsw.LockedError, Busy),
    (apsw.InterruptError, Interrupted),
    (apsw.FullError, OperationalError),
    (apsw.IOError, OperationalError),
    (apsw.CorruptError, InternalError),
    (apsw.TooBigError, DataError),
    (apsw.MismatchError, DataError),
    (apsw.CantOpenError, OperationalError),     # the file: missing folder, a directory, no access
    (apsw.ReadOnlyError, ReadOnlyRefused),     # a read-only connection, or a read-only file
    (apsw.PermissionsError, OperationalError),
    (apsw.NotADBError, OperationalError),
]


_FIXED_MESSAGES: dict[type[Error], str] = {
    Interrupted: "Query execution was interrupted",
    ReadOnlyRefused: "The database is read-only so it cannot execute this statement",
}


def _from_sqlite(exc: apsw.Error) -> Error:
    text = re.sub(r"^\w+Error: ", "", str(exc))
    for cls, kind in _APSW_CLASSES:
        if isinstance(exc, cls):
            return kind(_FIXED_MESSAGES.get(kind, text))
    tables = _SQLITE_SQL_ERRORS + _SQLITE_MESSAGES if isinstance(exc, apsw.SQLError) else _SQLITE_MESSAGES
    for pattern, kind, template in tables:
        match = pattern.fullmatch(text.strip())
        if match:
            fields = {name: value.strip('"') for name, value in match.groupdict().items()}
            return kind(template.format(*[g.strip('"') for g in match.groups()]), fields=fields)
    return ProgrammingError(text)


def unique_columns(exc: apsw.ConstraintError) -> tuple[str, ...] | None:
    """The columns (lower case, no table) of the UNIQUE constraint SQLite names in ``exc``
    (``UNIQUE constraint failed: t.a, t.b``), or None for another constraint: SQLite says it only in
    its message, which is read here, beside the tables above."""
    text = str(exc)
    if "UNIQUE constraint failed" not in text:
        return None
    return tuple(part.strip().split(".")[-1].lower() for part in text.split(":", 1)[1].split(","))


_PARSER_DIR = os.path.dirname(sqlglot.__file__) + os.sep


def _raised_in_parser(exc: BaseException) -> bool:
    """True when the exception comes from inside sqlglot: it could not handle the input."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_PARSER_DIR):
            return True
        tb = tb.tb_next
    return False


def translate(exc: BaseException) -> BaseException:
    """Map any exception raised below the engine to the public error tree."""
    if isinstance(exc, Error):
        return exc
    if isinstance(exc, UserError):
        return exc.kind(exc.msg, fields={k: v for k, v in exc.fields.items() if v is not None})
    if isinstance(exc, GrammarError):
        return SqlSyntaxError(exc.msg)
    if isinstance(exc, ModelFailure):
        return ModelError(str(exc))
    if isinstance(exc, StorageError):
        return OperationalError(str(exc))
    if isinstance(exc, apsw.Error):
        return _from_sqlite(exc)
    if isinstance(exc, KeyboardInterrupt):
        return exc          # Ctrl-C: the statement was rolled back; KeyboardInterrupt, as sqlite3 raises
    if isinstance(exc, Cancelled):
        return Interrupted("Query execution was interrupted")
    if isinstance(exc, (MemoryError, RecursionError)):
        return OperationalError(f"statement too large or too deeply nested ({type(exc).__name__})")
    if isinstance(exc, UnicodeError):     # a str with lone surrogates cannot be stored as UTF-8
        return DataError(f"Incorrect string value: not valid UTF-8 ({getattr(exc, 'reason', exc)})")
    if isinstance(exc, OverflowError):    # e.g. an integer beyond 64 bits bound to SQLite
        return DataError(f"Out of range value: {exc}")
    if isinstance(exc, TypeError) and str(exc).startswith("Bad binding argument type"):
        return ProgrammingError(f"Error binding parameter: {str(exc).split(' - ', 1)[-1]} is not supported")
    if isinstance(exc, OSError):          # the disk: full, read-only, gone
        return OperationalError(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError) and str(exc) == "null character in query":
        return SqlSyntaxError("syntax error: NUL character in the statement (pass such text as a parameter)")
    if isinstance(exc, Exception) and _raised_in_parser(exc):
        return SqlSyntaxError(f"syntax error: the statement could not be parsed ({type(exc).__name__})")
    if isinstance(exc, Exception):
        return InternalError(f"internal error: {type(exc).__name__}: {exc}")
    return exc
