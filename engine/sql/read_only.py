"""A read-only connection (``tesseradb.connect(..., read_only=True)``, ``tessera serve --read-only``)
refuses every statement that writes, decided from the parsed statement the executor is about to run
(never from words of the text): what ``planner.writes`` says changes the database, and
``SELECT ... INTO OUTFILE``, which writes a file."""
from __future__ import annotations

from tesseradb import errors
from tesseradb.grammar import ast
from tesseradb.sql.database import Database
from tesseradb.sql.planner import writes


def writes_anything(stmt: ast.Statement) -> bool:
    if isinstance(stmt, ast.Explain):
        return False                    # EXPLAIN runs nothing
    return writes(stmt) or bool(getattr(stmt, "outfile", None))


def check(db: Database, stmt: ast.Statement) -> None:
    if db.read_only and writes_anything(stmt):
        raise errors.OperationalError("The server is running with --read-only so it cannot execute this "
                                      "statement", errno=1290, sqlstate="HY000")
