"""The PEP 249 exception tree, with MySQL error numbers and SQLSTATEs.

Lower layers raise narrow exceptions (``grammar.GrammarError``, ``storage.StorageError``,
``tesseradb.embed.ModelError``, ``UserError`` below, apsw errors); :func:`translate` turns them into
these classes in one place (``tesseradb.sql.database``).
"""
from __future__ import annotations


class Warning(Exception):  # noqa: A001 - PEP 249 name
    """PEP 249 Warning."""


class Error(Exception):
    """Base of every error the engine raises. Carries a MySQL ``errno`` and ``sqlstate``."""

    errno = 1105
    sqlstate = "HY000"

    def __init__(self, msg: str, errno: int | None = None, sqlstate: str | None = None):
        super().__init__(msg)
        self.msg = msg
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


class UserError(Exception):
    """Raised by engine internals with the exact message a user should see.

    ``kind`` names the public class it becomes (a subclass of :class:`Error`).
    """

    def __init__(self, msg: str, kind: type[Error] = SqlSyntaxError):
        super().__init__(msg)
        self.msg = msg
        self.kind = kind
