"""What a read-only connection (``tesseradb.connect(path, read_only=True)``) may run.

SQLite opens the file read-only, so no statement can change it whatever this module says. This
module refuses earlier, with one clear MySQL error, everything that would write the file or write or
read other files: the index caches (OPTIMIZE, REBUILD), INTO OUTFILE, LOAD DATA. It is an allow-list
of parsed statement kinds, never a look at the SQL text: a statement kind added later is refused
until it is listed here as reading only.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from tesseradb import errors
from tesseradb.grammar import ast

MESSAGE = "The database is open read-only (read_only=True) so it cannot execute this statement"

# statement kind -> None when it only reads, else why it is refused (a function of the statement)
Reason = Callable[[object], "str | None"]


def _query(stmt: ast.Query) -> str | None:
    if stmt.outfile is not None:
        return "INTO OUTFILE writes a file"
    return None if stmt.kind == "select" else f"{stmt.kind.upper()} changes the database"


READ_ONLY_TABLE_COMMANDS = {"describe", "show_create", "show_index"}
TABLE_COMMAND_REASONS = {
    # FTS5's integrity-check is an INSERT into the index table: SQLite counts it as a write
    "check": "CHECK TABLE runs the full-text integrity check, which SQLite counts as a write",
}


def _table_command(stmt: ast.TableCommand) -> str | None:
    if stmt.verb in READ_ONLY_TABLE_COMMANDS:
        return None
    return TABLE_COMMAND_REASONS.get(stmt.verb, f"{stmt.verb.upper()} TABLE changes the database or its index files")


def _reads(_stmt: object) -> None:
    return None


# keyed by the node's class name, as sql/planner.py's table (naming the classes would load them all)
ALLOWED: dict[str, Reason] = {
    "Query": _query,
    "TableCommand": _table_command,
    "ShowTables": _reads,
    "ShowWarnings": _reads,
    "ShowModels": _reads,
    "ShowChunks": _reads,
    "CallChunks": _reads,          # cuts a text given in the statement; stores nothing
    "ShowSession": _reads,
    "ShowColumns": _reads,
    "Explain": _reads,             # EXPLAIN plans; it does not run the statement
    "Transaction": _reads,
    "SetStatement": _reads,        # session variables only
    "UseDatabase": _reads,
    "ShowChatModels": _reads,
    "DescribeChatModel": _reads,
    "CallChat": _reads,            # the conversation's history is kept in memory (engine/chat/history.py)
}

REFUSED_KINDS: dict[str, str] = {
    "LoadData": "LOAD DATA reads files and writes the database",
}


def check(stmt: ast.Statement) -> None:
    """Raise ReadOnlyRefused unless ``stmt`` only reads the database."""
    name = type(stmt).__name__
    reason_of = ALLOWED.get(name)
    if reason_of is None:
        why = REFUSED_KINDS.get(name, f"{_spoken(name)} changes the database")
    else:
        why = reason_of(stmt)
        if why is None:
            return
    raise errors.ReadOnlyRefused(f"{MESSAGE}: {why}")


def _spoken(name: str) -> str:
    """CreateTable -> CREATE TABLE."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).upper()
