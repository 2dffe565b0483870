"""Statements about the session rather than a table: transactions, SHOW WARNINGS, LOAD DATA."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tesseradb.grammar import ast

if TYPE_CHECKING:
    from tesseradb.sql.database import Database, Result


def _result(**kw):
    from tesseradb.sql.database import Result
    return Result(**kw)


def show_warnings(db: "Database", stmt: ast.ShowWarnings, params=None) -> "Result":
    rows = [(w.level, w.code, w.message) for w in db.warnings]
    return _result(columns=[("Level", None), ("Code", None), ("Message", None)], rows=rows,
                   rowcount=len(rows))


def _begin(db: "Database") -> None:
    db.commit()               # like MySQL: BEGIN inside a transaction commits it first
    db.begin()


TRANSACTIONS = {"begin": _begin, "commit": lambda db: db.commit(), "rollback": lambda db: db.rollback()}


def transaction(db: "Database", stmt: ast.Transaction, params=None) -> "Result":
    TRANSACTIONS[stmt.verb](db)
    return _result(rowcount=0)


def load_data(db: "Database", stmt: ast.LoadData, params=None) -> "Result":
    from tesseradb.io.arrowio import load_data as load
    return load(db, stmt)
