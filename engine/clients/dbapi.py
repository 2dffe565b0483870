"""PEP 249 (DB-API 2.0): connect(), Connection. Owns the transaction semantics: like sqlite3
and MySQL with autocommit off, the first statement that writes opens a transaction that lasts until
commit() or rollback().

``Connection`` is the public face; its pieces live beside it in ``tesseradb.clients`` and each of its
methods that is more than a line calls one of them: ``cursor`` (Cursor, Row), ``dbapi_types`` (PEP 249
type objects), ``public_errors`` (the one translation of engine errors), ``embedding``
(``Connection.embed`` and the truncation warning), ``table_info`` (``tables()``, ``describe()``: the
public catalog). A new feature of the connection (a catalog, model
downloads, chat ...) is a new module there and a short method here.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tesseradb import grammar
from tesseradb.grammar import ast
from tesseradb.grammar.lexing import Lexing, normalize
from tesseradb.grammar.literals import lift as lift_literals, lifts_nothing

from tesseradb import errors
from tesseradb.clients import embedding
from tesseradb.clients.cursor import Cursor, Row
from tesseradb.clients.dbapi_types import (BINARY, DATETIME, NUMBER, ROWID, STRING, Binary, Date, DateFromTicks,
                                           Time, TimeFromTicks, Timestamp, TimestampFromTicks)
from tesseradb.clients.public_errors import public_errors
from tesseradb.embed.remote.access import RemoteAccess
from tesseradb.results import Result
from tesseradb.sql import executor, planner
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import variables

if TYPE_CHECKING:       # loaded on first use (start-up)
    from tesseradb.clients.chat_call import ChatAnswer
    from tesseradb.clients import table_info

__all__ = ["connect", "Connection", "Cursor", "Row", "apilevel", "threadsafety", "paramstyle", "public_errors",
           "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp", "DateFromTicks",
           "TimeFromTicks", "TimestampFromTicks", "Binary"]

apilevel = "2.0"
threadsafety = 1          # threads may share the module, not connections: one connection per thread
paramstyle = "qmark"      # ? placeholders; :name placeholders with a mapping are accepted too
PLAIN_TEXTS = 256         # texts a connection remembers as needing no normalizing or lifting


def connect(path: str = ":memory:", *, autocommit: bool = False, timeout: float = 5.0,
            statement_timeout: float | None = None, secure_file_priv: str | None = None,
            read_only: bool = False, allow_remote: Sequence[str] | None = None,
            allow_env: Sequence[str] | None = None) -> Connection:
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
        self._explicit = False    # inside BEGIN ... COMMIT/ROLLBACK: autocommit waits for its end
        self._lock = threading.RLock()
        self.autocommit = autocommit
        self.row_factory: Any = None   # as in sqlite3: factory(cursor, row) builds each fetched row
        self._plain: dict[str, Lexing] = {}    # texts that read alike in that lexing and lift no literal

    @property
    def db(self) -> Database:
        if self._db is None:
            raise errors.InterfaceError("Cannot operate on a closed database.")
        return self._db

    @property
    def autocommit(self) -> bool:
        """Commit after every statement; ``SET autocommit = 0|1`` in SQL changes it too. Switching it on
        commits the open transaction (BEGIN's too), as MySQL and PEP 249 drivers do."""
        return bool(variables.session(self.db).system["autocommit"])

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        with self._lock:
            if value and self.db.store.in_transaction:
                self._explicit = False
                self._call(self.db.commit)
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

    def serve_charsets(self, values: Mapping[str, str | None]) -> None:
        """``tessera serve`` only: the character set and collation variables of the client this
        connection serves, as the server accepted them (it converts text at the wire), so that
        ``@@character_set_results`` in any statement reports them. In-process text is ``str``: SET
        keeps refusing sets other than UTF-8's (docs/server.md, "Character sets")."""
        self._call(variables.serve_charsets, self.db, values)

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

    def cursor(self) -> Cursor:
        self.db
        return Cursor(self)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Cursor:
        return Cursor(self).execute(sql, params)        # a closed connection: _run says so

    def executemany(self, sql: str, seq: Sequence[Any]) -> Cursor:
        return self.cursor().executemany(sql, seq)

    def sql(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Cursor:
        """``con.sql("SELECT ...").df()``: execute and return the cursor (DuckDB's spelling)."""
        return self.execute(sql, params)

    def embed(self, texts: str | Sequence[str], model: str | None = None, **settings: Any) -> Any:
        """The vectors a column with ``model_name=model`` (and the given chunk settings:
        chunk_strategy, max_tokens, overlap_tokens, max_chunks) would store for ``texts``.

        One text: a float32 array, (dims,) for ``truncate``/``mean``, (chunks, dims) otherwise.
        A list: an (n, dims) array for ``truncate``/``mean``, else a list of (chunks, dims) arrays."""
        return embedding.embed(self._call, texts, model, **settings)

    def chat(self, question: str, table: str, model: str, conversation: str | None = None,
             vector_field: str | None = None, on_token: Callable[[str], None] | None = None) -> "ChatAnswer":
        """``CALL CHAT`` (docs/chat.md): the chat model ``model``'s answer to ``question`` over ``table``,
        with its sources; ``on_token(text)`` receives the answer as it streams."""
        from tesseradb.clients import chat_call      # loaded with the first chat() (start-up)
        return chat_call.chat(self, question, table, model, conversation, vector_field, on_token)

    def set_chat_stream(self, callback: Callable[[str], None] | None) -> None:
        """callback(text) with each piece of a CALL CHAT answer as the model streams it (None: off)."""
        self.db.on_chat_token = callback

    def tables(self) -> tuple[table_info.TableInfo, ...]:
        """Every table of the database, by name (``TableInfo``: docs/dbapi.md#the-catalog)."""
        with self._lock:
            from tesseradb.clients import table_info     # loaded with the first tables()/describe()
            return self._call(lambda: tuple(table_info.describe(self.db, n) for n in table_info.table_names(self.db)))

    def describe(self, table: str) -> table_info.TableInfo:
        """The table called ``table`` (any case): its columns, keys and vector/full-text options, as
        frozen dataclasses (docs/dbapi.md#the-catalog); ERROR 1146 when there is none."""
        with self._lock:
            from tesseradb.clients import table_info
            return self._call(table_info.describe, self.db, table)

    def executescript(self, script: str) -> Cursor:
        cur = self.cursor()
        for piece in self._call(grammar.split, script, self.lexing):
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

    @property
    def max_result_bytes(self) -> int | None:
        """A bound on the rows a SELECT returns, by the size of their values (text and blobs by
        length, other values 8): the rows past it are not read, and a Warning 1301 says the result
        was cut. None (the default): no bound. The first row is always returned."""
        return self.db.max_result_bytes

    @max_result_bytes.setter
    def max_result_bytes(self, value: int | None) -> None:
        self.db.max_result_bytes = None if value is None else max(int(value), 1)

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
            db = self._db
            if db is None:
                raise errors.InterfaceError("Cannot operate on a closed database.")
            with public_errors(db, sql):   # the statement: its API keys are redacted from the message
                session = db.session
                lexing = session.lexing if session is not None else variables.lexing(db)
                if many is not None or self._plain.get(sql) != lexing:
                    sql, params = self._read(sql, params, lexing, many is None)
                stmt = db.statements.parse(sql)
                if many is not None:
                    result = executor.run_many(db, stmt, many)
                else:
                    result = executor.run(db, stmt, params)
                if type(stmt) is not ast.Query or db.store.in_transaction:
                    self._end_statement(db, stmt)       # (the usual SELECT: nothing to commit or end)
        if db.pending_warnings:     # after the statement: a filter that raises it gets it as is
            embedding.warn_truncated(db.pending_warnings)
        return result

    def _read(self, sql: str, params: Any, lexing: Lexing, lift: bool) -> tuple[str, Any]:
        """The text as the engine reads it: sql_mode's quoting read once, here; long vector literals
        become parameters (not for executemany). A text that both leave as it is, whatever the
        parameters, is remembered (``_plain``): the next execute of it skips them."""
        text = normalize(sql, lexing)
        if not lift:
            return text, params
        if text == sql and lifts_nothing(text):
            if len(self._plain) >= PLAIN_TEXTS:
                self._plain.clear()
            self._plain[sql] = lexing
            return sql, params
        return lift_literals(text, params)

    def _end_statement(self, db: Database, stmt: Any) -> None:
        """The connection's part of the transaction rules (the executor's bracket did the statement's):
        BEGIN holds autocommit off until COMMIT or ROLLBACK; a statement that commits implicitly
        (``planner.commits``: DDL, SET autocommit = 1) has ended BEGIN's transaction; otherwise, with
        autocommit on and no BEGIN, the statement's work is committed now."""
        if type(stmt) is ast.Query and not db.store.in_transaction:
            return              # nothing to commit, nothing BEGIN or DDL changed (the usual SELECT)
        if isinstance(stmt, ast.Transaction):
            self._explicit = stmt.verb == "begin"
        elif planner.commits(stmt):
            self._explicit = False
        elif self.autocommit and not self._explicit:
            db.commit()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._db is None:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
