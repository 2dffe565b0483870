"""MySQL's ``max_execution_time``: a time limit on reads.

A SELECT (not a write: INSERT ... SELECT, LOAD DATA, ALTER ... REBUILD and the rest keep no limit
of their own) stops after the session's ``max_execution_time`` milliseconds (0: no limit; the
DB-API's default, while ``tessera serve`` sets one, docs/server.md), or after the statement's own
optimizer hint ``SELECT /*+ MAX_EXECUTION_TIME(ms) */ ...``, with MySQL's error 3024. The
connection's ``statement_timeout`` (every statement, error 1317) is separate and still applies.
"""
from __future__ import annotations

from sqlglot import exp

from tesseradb import errors
from tesseradb.grammar import ast
from tesseradb.sql.mysql import variables
from tesseradb.sql.database import Database

HINT = "MAX_EXECUTION_TIME"
EXCEEDED = "Query execution was interrupted, maximum statement execution time exceeded"


def _hint_ms(expr: exp.Expression) -> int | None:
    hint = expr.args.get("hint")
    if hint is None:
        return None
    for call in hint.expressions:
        if isinstance(call, exp.Anonymous) and str(call.this).upper() == HINT and call.expressions:
            value = call.expressions[0]
            if isinstance(value, exp.Literal) and not value.is_string:
                return max(int(float(value.this)), 0)
    return None


def limit_ms(db: Database, stmt: ast.Statement) -> int:
    """The read limit of ``stmt`` in milliseconds (0: none)."""
    if not isinstance(stmt, ast.Query) or stmt.kind != "select":
        return 0
    hinted = _hint_ms(stmt.expr)
    if hinted is not None:
        return hinted
    return max(int(variables.session(db).system.get("max_execution_time") or 0), 0)


def limit_of(system: dict) -> float | None:
    """The session's max_execution_time in seconds (None: no limit), for a SELECT with no hint, from
    its system variables."""
    ms = max(int(system.get("max_execution_time") or 0), 0)
    return ms / 1000.0 if ms else None


def arm(db: Database, stmt: ast.Statement) -> None:
    """Before start_statement: the read limit of this statement."""
    ms = limit_ms(db, stmt)
    db.read_limit = ms / 1000.0 if ms else None


def exceeded() -> errors.Error:
    return errors.OperationalError(EXCEEDED, 3024, "HY000")
