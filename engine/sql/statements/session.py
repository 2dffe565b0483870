"""Statements about the session rather than a table: transactions, SHOW WARNINGS."""
from __future__ import annotations


from tesseradb.grammar import ast

from tesseradb.results import Result
from tesseradb.sql.database import Database



def show_warnings(db: Database, stmt: ast.ShowWarnings, params=None) -> Result:
    rows = [(w.level, w.code, w.message) for w in db.warnings]
    return Result(columns=[("Level", None), ("Code", None), ("Message", None)], rows=rows,
                   rowcount=len(rows))


def _begin(db: Database) -> None:
    db.commit()               # like MySQL: BEGIN inside a transaction commits it first
    db.begin()


TRANSACTIONS = {"begin": _begin, "commit": lambda db: db.commit(), "rollback": lambda db: db.rollback()}


def transaction(db: Database, stmt: ast.Transaction, params=None) -> Result:
    TRANSACTIONS[stmt.verb](db)
    return Result(rowcount=0)
