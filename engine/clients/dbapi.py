"""PEP 249 (DB-API 2.0): connect(), Connection, Cursor. Owns the transaction semantics: like sqlite3
and MySQL with autocommit off, the first statement that writes opens a transaction that lasts until
commit() or rollback()."""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sys
import threading
import warnings as _warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from tesseradb import grammar
from tesseradb.grammar import ast
from tesseradb.grammar.lexing import Lexing, normalize
from tesseradb.grammar.literals import lift as lift_literals

from tesseradb import errors
from tesseradb.embed.remote import secrets
from tesseradb.embed.remote.access import RemoteAccess
from tesseradb.embed.texts import DEFAULT_MODEL, embed_texts
from tesseradb.results import Result
from tesseradb.sql import executor, planner
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import suggest, variables

apilevel = "2.0"
threadsafety = 1          # threads may share the module, not connections: one connection per thread
paramstyle = "qmark"      # ? placeholders; :name placeholders with a mapping are accepted too


# -- PEP 249 type objects and constructors ----------------------------------------------------------
class DBAPITypeObject:
    """Compares equal to the type codes of ``Cursor.description`` (the declared type) of its kind."""

    def __init__(self, name: str, *codes: str):
        self.name, self.codes = name, frozenset(codes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.upper() in self.codes

    def __hash__(self) -> int:
        return hash(self.codes)

    def __repr__(self) -> str:
        return self.name


STRING = DBAPITypeObject("STRING", "TEXT", "STRING_TEXT", "JSON_TEXT")
BINARY = DBAPITypeObject("BINARY", "BLOB", "FLOAT_VECTOR_BLOB", "FLOAT_VECTOR_ARRAY_BLOB")
NUMBER = DBAPITypeObject("NUMBER", "INTEGER", "BIGINT", "FLOAT", "REAL", "BOOL_INT", "TIMESTAMP_INT")
DATETIME = DBAPITypeObject("DATETIME", "TIMESTAMP_INT", "DATE_TEXT", "DATETIME_TEXT", "TIME_TEXT")
ROWID = DBAPITypeObject("ROWID", "INTEGER")

Date, Time, Timestamp = _dt.date, _dt.time, _dt.datetime   # bound dates become Unix seconds (UTC)
Binary = bytes


def DateFromTicks(ticks: float) -> _dt.date:  # noqa: N802 - PEP 249 name
    return _dt.datetime.fromtimestamp(ticks, _dt.timezone.utc).date()


def TimeFromTicks(ticks: float) -> _dt.time:  # noqa: N802 - PEP 249 name
    return _dt.datetime.fromtimestamp(ticks, _dt.timezone.utc).time()


def TimestampFromTicks(ticks: float) -> _dt.datetime:  # noqa: N802 - PEP 249 name
    return _dt.datetime.fromtimestamp(ticks, _dt.timezone.utc)


def connect(path: str = ":memory:", *, autocommit: bool = False, timeout: float = 5.0,
            statement_timeout: float | None = None, secure_file_priv: str | None = None,
            read_only: bool = False, allow_remote: Sequence[str] | None = None,
            allow_env: Sequence[str] | None = None) -> "Connection":
    """Open (or create) the database at ``path`` (``":memory:"`` for a private in-memory one).

    ``timeout``: seconds a writer waits for another connection's lock before failing.
    ``statement_timeout``: seconds after which a statement is interrupted (None = no limit).
    ``secure_file_priv``: the files LOAD DATA and INTO OUTFILE may use (MySQL's option): None
    (default) any file; a directory: only files inside it, and INTO OUTFILE never replaces a file;
    ``""``: no file statement at all (docs/security.md).
    ``read_only``: refuse every statement that writes (error 1290).
    ``allow_remote``: the URL prefixes remote models may call (None, the default: any, as an embedded
    program is its own operator); ``allow_env``: the environment variables ``api_key='env:NAME'`` may
    read (None: any). Servers pass what their operator listed (docs/models.md#over-a-server).
    """
    if read_only and path != ":memory:" and not os.path.isfile(path):
        raise errors.OperationalError(f"cannot open '{path}' read-only: no such database file")
    with public_errors():
        db = Database(path, busy_timeout=timeout, timeout=statement_timeout,
                      secure_file_priv=secure_file_priv, read_only=read_only,
                      remote_access=RemoteAccess(None if allow_remote is None else tuple(allow_remote),
                                                 None if allow_env is None else frozenset(allow_env)))
    return Connection(db, autocommit=autocommit)


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


class Connection:
    Error = errors.Error
    Warning = errors.Warning
    InterfaceError = errors.InterfaceError
    DatabaseError = errors.DatabaseError
    DataError = errors.DataError
    OperationalError = errors.OperationalError
    IntegrityError = errors.IntegrityError
    InternalError = errors.InternalError
    ProgrammingError = errors.ProgrammingError
    NotSupportedError = errors.NotSupportedError

    def __init__(self, db: Database, *, autocommit: bool = False):
        self._db: Database | None = db
        self.autocommit = autocommit
        self._explicit = False    # inside BEGIN ... COMMIT/ROLLBACK: autocommit waits for its end
        self._lock = threading.RLock()
        self.row_factory: Any = None   # as in sqlite3: factory(cursor, row) builds each fetched row

    @property
    def db(self) -> Database:
        if self._db is None:
            raise errors.InterfaceError("Cannot operate on a closed database.")
        return self._db

    @property
    def autocommit(self) -> bool:
        """Commit after every statement; ``SET autocommit = 0|1`` in SQL changes it too (as in MySQL,
        switching it on commits the open transaction)."""
        return bool(variables.session(self.db).system["autocommit"])

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        variables.session(self.db).system["autocommit"] = 1 if value else 0

    @property
    def sql_mode(self) -> str:
        """The session's ``sql_mode`` (``SET sql_mode = ...`` in SQL changes it too); setting it checks
        the names (MySQL's error 1231) and returns MySQL's canonical list."""
        return str(variables.session(self.db).system["sql_mode"])

    @sql_mode.setter
    def sql_mode(self, value: str) -> None:
        self.set_variable("sql_mode", value)

    def set_variable(self, name: str, value: Any) -> Any:
        """``SET SESSION name = value`` with the value bound, not written into SQL: checked as SET
        checks it; returns the value stored (``sql_mode`` in MySQL's canonical form)."""
        self._call(variables.set_system, self.db, name.lower(), value)
        return variables.session(self.db).system[name.lower()]

    @property
    def lexing(self) -> Lexing:
        """How this session reads quotes and backslashes (NO_BACKSLASH_ESCAPES, ANSI_QUOTES in
        sql_mode); ``lexing.tokenize(text)`` gives the tokens the engine will read."""
        return variables.lexing(self.db)

    @property
    def closed(self) -> bool:
        return self._db is None

    @property
    def read_only(self) -> bool:
        """Whether the connection was opened with ``read_only=True``."""
        return self.db.read_only

    @property
    def in_transaction(self) -> bool:
        return self.db.store.in_transaction

    def cursor(self) -> "Cursor":
        self.db
        return Cursor(self)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> "Cursor":
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq: Sequence[Any]) -> "Cursor":
        return self.cursor().executemany(sql, seq)

    def sql(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> "Cursor":
        """``con.sql("SELECT ...").df()``: execute and return the cursor (DuckDB's spelling)."""
        return self.execute(sql, params)

    def embed(self, texts: str | Sequence[str], model: str = DEFAULT_MODEL, **settings: Any) -> Any:
        """The vectors a column with ``model_name=model`` (and the given chunk settings:
        chunk_strategy, max_tokens, overlap_tokens, max_chunks) would store for ``texts``.

        One text: a float32 array, (dims,) for ``truncate``/``mean``, (chunks, dims) otherwise.
        A list: an (n, dims) array for ``truncate``/``mean``, else a list of (chunks, dims) arrays."""
        single = isinstance(texts, str)
        vectors = self._call(lambda: embed_texts([texts] if single else texts, model, **settings))
        chunked = str(settings.get("chunk_strategy", "truncate")).lower() not in ("truncate", "mean")
        if chunked:
            return vectors[0] if single else vectors
        stacked = _stack(vectors)
        return stacked[0] if single else stacked

    def executescript(self, script: str) -> "Cursor":
        cur = self.cursor()
        for piece in _split(script, self.lexing):
            cur.execute(piece.text)
        return cur

    def backup(self, path: str) -> str:
        """``BACKUP TO path`` without writing SQL: a consistent copy of the database (saved vector
        indexes included) into the new file ``path``; returns the statement's message."""
        with self._lock:
            return self._call(lambda: executor.run(self.db, ast.Backup(path=str(path)), None)).message

    def commit(self) -> None:
        with self._lock:
            self._explicit = False
            self._call(self.db.commit)

    def rollback(self) -> None:
        with self._lock:
            self._explicit = False
            self._call(self.db.rollback)

    def close(self) -> None:
        if self._db is not None:
            with self._lock:
                try:
                    self._call(self._db.close)
                finally:
                    self._db = None

    def interrupt(self) -> None:
        """Stop the statement running on this connection (from another thread)."""
        if self._db is not None:
            self._db.interrupt()

    @property
    def warnings(self) -> list[tuple[str, int, str]]:
        return [(w.level, w.code, w.message) for w in self.db.warnings]

    def set_progress(self, callback) -> None:
        """callback(done, total) while a statement embeds text (chunks done / total)."""
        self.db.on_progress = callback

    def _call(self, fn, *args):
        with public_errors():
            return fn(*args)

    def _run(self, sql: str, params: Any, many: Sequence[Any] | None = None) -> Result:
        with self._lock:
            db = self.db
            with public_errors(db, sql):
                sql = normalize(sql, variables.lexing(db))     # sql_mode's quoting read once, here
                if many is None:
                    sql, params = lift_literals(sql, params)   # long vector literals become parameters
                stmt = db.statements.parse(sql)
                if many is not None:
                    result = executor.run_many(db, stmt, many)
                else:
                    result = executor.run(db, stmt, params)
                if isinstance(stmt, ast.Transaction):
                    self._explicit = stmt.verb == "begin"
                elif planner.commits(stmt):
                    self._explicit = False      # DDL committed the transaction BEGIN opened (MySQL)
                elif isinstance(stmt, ast.SetStatement) and self.autocommit:
                    self._explicit = False      # SET autocommit=1 commits, even inside BEGIN (MySQL)
                    db.commit()
                elif self.autocommit and not self._explicit:
                    db.commit()
        _warn_truncated(db.pending_warnings)    # after the statement: a filter that raises it gets it as is
        return result

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._db is None:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


def _warn_truncated(warned: list) -> None:
    """One DataTruncatedWarning per column whose documents the model embedded only in part."""
    for column, n in Counter(w.truncated for w in warned if w.truncated).items():
        docs = "1 document" if n == 1 else f"{n:,} documents"
        _warnings.warn(f"column '{column}': the model embedded only part of the text of {docs} (SHOW WARNINGS "
                       f"lists them); a chunk_strategy such as 'recursive' embeds all of it",
                       errors.DataTruncatedWarning, stacklevel=_outside_the_package())


def _outside_the_package() -> int:
    """The stacklevel of the first caller outside tesseradb (warnings then name the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tesseradb."):
        frame, level = frame.f_back, level + 1
    return level


def _stack(vectors: list) -> Any:
    return np.vstack(vectors) if vectors else np.empty((0, 0), dtype=np.float32)


class Row(tuple):
    """A row factory like ``sqlite3.Row``: ``con.row_factory = tesseradb.Row``; items by position or
    by column name (case-insensitive), ``keys()``, compares equal to the plain tuple."""

    _names: tuple[str, ...]

    def __new__(cls, cursor: "Cursor", row: Sequence[Any]) -> "Row":
        self = super().__new__(cls, row)
        self._names = tuple(d[0] for d in cursor.description or ())
        return self

    def keys(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            lowered = key.lower()
            for i, name in enumerate(self._names):
                if name.lower() == lowered:
                    return tuple.__getitem__(self, i)
            raise IndexError(f"No item with that key: {key!r}")
        return tuple.__getitem__(self, key)


def _split(script: str, lexing: Lexing):
    with public_errors():
        return grammar.split(script, lexing)


class Cursor:
    def __init__(self, connection: Connection):
        self.connection = connection
        self.arraysize = 1
        self.row_factory: Any = connection.row_factory
        self._result: Result | None = None
        self._pos = 0
        self._closed = False

    # -- PEP 249 ---------------------------------------------------------------------------
    @property
    def description(self):
        if self._result is None or self._result.columns is None:
            return None
        return [(name, decl, None, None, None, None, None) for name, decl in self._result.columns]

    @property
    def rowcount(self) -> int:
        return -1 if self._result is None else self._result.rowcount

    @property
    def lastrowid(self) -> int | None:
        return None if self._result is None else self._result.lastrowid

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> "Cursor":
        self._check()
        self._result, self._pos = None, 0
        self._result = self.connection._run(sql, params)
        return self

    def executemany(self, sql: str, seq: Sequence[Any]) -> "Cursor":
        self._check()
        self._result, self._pos = None, 0
        self._result = self.connection._run(sql, None, many=seq)
        return self

    def fetchone(self) -> tuple | None:
        rows = self._rows()
        if self._pos >= len(rows):
            return None
        self._pos += 1
        return self._made([rows[self._pos - 1]])[0]

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        rows = self._rows()
        size = self.arraysize if size is None else size
        out = rows[self._pos:self._pos + size]
        self._pos += len(out)
        return self._made(out)

    def fetchall(self) -> list[tuple]:
        return self._made(self._rest())

    def _rest(self) -> list[tuple]:
        rows = self._rows()
        out = rows[self._pos:]
        self._pos = len(rows)
        return out

    def _made(self, rows: list[tuple]) -> list:
        factory = self.row_factory
        return rows if factory is None else [factory(self, row) for row in rows]

    def close(self) -> None:
        self._closed = True
        self._result = None

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    def __iter__(self) -> Iterator[tuple]:
        while (row := self.fetchone()) is not None:
            yield row

    # -- extras ----------------------------------------------------------------------------
    def fetch_arrow_table(self):
        """The remaining rows of the result as a pyarrow Table."""
        if self._result is None or self._result.columns is None:
            raise errors.ProgrammingError("no result set to fetch: execute a SELECT first")
        rest = Result(columns=self._result.columns, rows=self._rest())
        from tesseradb.io.export import result_to_arrow      # pyarrow loads with the first Arrow result
        return result_to_arrow(rest)

    def fetchdf(self):
        """The remaining rows as a pandas DataFrame (pandas: the optional extra ``tesseradb[pandas]``)."""
        from tesseradb.clients import frames
        return frames.to_pandas(self.fetch_arrow_table())

    df = fetchdf

    def fetchnumpy(self) -> dict:
        """The remaining rows as {column name: NumPy array}; a vector column is a 2-D float32 array."""
        from tesseradb.clients import frames
        return frames.to_numpy(self.fetch_arrow_table())

    def _rows(self) -> list[tuple]:
        self._check()
        if self._result is None or self._result.columns is None:
            raise errors.ProgrammingError("no result set to fetch: execute a SELECT first")
        return self._result.rows

    def _check(self) -> None:
        if self._closed:
            raise errors.InterfaceError("Cannot operate on a closed cursor.")
        self.connection.db
