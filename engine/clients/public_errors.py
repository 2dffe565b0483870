"""The client's one translation point: whatever the engine raises leaves the DB-API as the public
PEP 249 class (``tesseradb.errors.translate``), with MySQL's "did you mean" suggestion, and recorded for
SHOW WARNINGS."""
from __future__ import annotations

from types import TracebackType

from tesseradb import errors
from tesseradb.embed.remote import secrets
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import suggest


def _redacted(error: BaseException, sql: str | None) -> BaseException:
    """The error with every API key the statement gives taken out of its message (a syntax error
    quotes the statement near where it failed; docs/models.md#keys)."""
    if sql is None or not isinstance(error, errors.Error) or "api_key" not in sql.lower():
        return error
    shown = secrets.redact_message(error.msg, sql)
    if shown != error.msg:
        error.msg = shown
        error.args = (shown,)
    return error


class public_errors:
    """The client's one translation point: whatever the engine raises leaves as the public PEP 249
    class (``tesseradb.errors.translate``); after a failed statement SHOW WARNINGS shows its error.
    ``with public_errors(db, sql):`` around the statement (a class, not a generator: it brackets every
    execute, and right after a model run each frame of a generator's context manager costs ~3x)."""

    __slots__ = ("db", "sql")

    def __init__(self, db: Database | None = None, sql: str | None = None) -> None:
        self.db, self.sql = db, sql

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        if exc is None:
            return False
        db = self.db
        error = _redacted(errors.translate(exc), self.sql)
        if db is not None:
            error = suggest.with_suggestion(db, error)      # "did you mean 'products'?" (issue 22)
        if db is not None and isinstance(error, errors.Error):
            db.record_error(error)
        if error is exc:
            return False            # Ctrl-C stays KeyboardInterrupt (the statement was rolled back)
        raise error from (None if isinstance(exc, errors.Error) else exc)
