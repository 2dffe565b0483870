"""The client's one translation point: whatever the engine raises leaves the DB-API as the public
PEP 249 class (``tesseradb.errors.translate``), with MySQL's "did you mean" suggestion, and recorded for
SHOW WARNINGS."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

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


@contextlib.contextmanager
def public_errors(db: Database | None = None, sql: str | None = None) -> Iterator[None]:
    """The client's one translation point: whatever the engine raises leaves as the public PEP 249
    class (``tesseradb.errors.translate``); after a failed statement SHOW WARNINGS shows its error."""
    try:
        yield
    except BaseException as exc:  # noqa: BLE001 - translated
        error = _redacted(errors.translate(exc), sql)
        if db is not None:
            error = suggest.with_suggestion(db, error)      # "did you mean 'products'?" (issue 22)
        if db is not None and isinstance(error, errors.Error):
            db.record_error(error)
        if error is exc:
            raise                   # Ctrl-C stays KeyboardInterrupt (the statement was rolled back)
        raise error from (None if isinstance(exc, errors.Error) else exc)
