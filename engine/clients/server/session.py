"""One client connection's session: its own tesseradb connection, on the connection's own thread.

mysql-mimic's :class:`Session` answers what clients probe (``SET NAMES``, ``SELECT @@version_comment``,
``SHOW VARIABLES``, ``information_schema`` from the schema we give it). Everything else goes to the
engine through the public DB-API, with the client's parameters bound, never spliced. Fixed here
against mysql-mimic's defaults: BEGIN / COMMIT / ROLLBACK are real (its middlewares made them
no-ops), ``SET autocommit`` reaches the engine connection, ``USE`` accepts only this database.

Every client connection is served on a thread and event loop of its own (app.py), and its statements
run right there, on that thread (one engine connection is used by one thread only): one slow
embedding never stalls any other client or the server's own loop (which accepts connections, serves
the HTTP API and watches for clients that have gone). There is no hand-off between threads per
statement (docs/benchmarks.md, "Queries at the model's limit").
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from mysql_mimic import ResultColumn, Session
from mysql_mimic.results import ensure_result_set
from mysql_mimic.schema import InfoSchema
from mysql_mimic.types import ServerStatus
from mysql_mimic.variables import Variables
from sqlglot.errors import ParseError

from tesseradb import errors
from tesseradb.clients.server import charsets, info_schema, statements, values
from tesseradb.clients.server.statements import Route, Statement


@dataclass
class Ok:
    affected: int = 0
    last_id: int = 0
    warnings: int = 0


@dataclass
class Rows:
    rows: list[tuple]
    columns: list[ResultColumn]
    warnings: int = 0


Outcome = Ok | Rows


class NotAProbe(Exception):
    """mysql-mimic reached the end of its middlewares: the statement is not one it answers."""


class ServerError(errors.DatabaseError):
    """An error the server itself raises, with MySQL's number and SQLSTATE."""


def unknown_database(name: str) -> ServerError:
    return ServerError(f"Unknown database '{name}'", 1049, "42000")


@dataclass
class Shared:
    """What every session of one server shares."""
    connect: Callable[..., Any]                 # tesseradb.connect (handed in: clients sit above it)
    path: str
    name: str                                   # the database name clients see (SHOW DATABASES, USE)
    variables: Variables
    read_only: bool = False
    statement_timeout: float | None = None
    secure_file_priv: str | None = ""           # "" refuses every file statement (engine/io/file_access.py)
    allow_remote: tuple[str, ...] = ()          # remote model endpoints the operator allows (none by default)
    allow_env: tuple[str, ...] = ()             # env: keys the operator allows (none by default)
    redact: Callable[[str], str] = str          # tesseradb.redact_statement: API keys out of shown statements


# Session variables a reset keeps: who is connected and the character set the client talks in.
KEPT_ON_RESET = ("external_user", "character_set_client", "character_set_connection",
                 "character_set_results", "collation_connection")
PROBE_DATABASES = {"information_schema", "mysql", "performance_schema", "sys"}
# Session variables the engine connection acts on: kept in step with mysql-mimic's on every SET.
SYNCED = ("sql_mode", "max_execution_time", "external_user")     # external_user: SHOW GRANTS names who USER() does
# The character sets and collations: this session's are the truth; the engine connection gets them
# whenever they change (handshake, COM_CHANGE_USER, reset, a SET), never per statement.
CHARSET_STATE = charsets.CHARSET_VARIABLES + charsets.COLLATION_VARIABLES


class EngineSession(Session):
    def __init__(self, shared: Shared):
        super().__init__(charsets.WireVariables(shared.variables))
        no_ops = {self._begin_middleware, self._commit_middleware, self._rollback_middleware}
        self.middlewares = [m for m in self.middlewares if m not in no_ops]
        self.shared = shared
        self.database = shared.name
        self.con: Any = None
        self.status = ServerStatus.SERVER_STATUS_AUTOCOMMIT
        self._running = False                   # a statement runs (read by other threads: a bool under the GIL)
        self.shapes: dict = {}                  # result columns by shape (values.result_set)
        self._closed = False
        self.stopping = False                   # the server is shutting down: no new statements
        self._lexing: Any = None                # until init: sqlglot's default MySQL reading
        self.info: str | None = None            # the statement running now (SHOW PROCESSLIST)
        self.since = time.monotonic()           # when it started, or when the last one ended
        # the character sets text is converted from and to; None: UTF-8 as it is (charsets.py)
        self.client_text: charsets.Charset | None = None
        self.result_text: charsets.Charset | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    async def init(self, connection: Any) -> None:
        await super().init(connection)
        self.follow_client()                    # the handshake's character set
        self.con = await self._call(self.shared.connect, self.shared.path, autocommit=True,
                                    statement_timeout=self.shared.statement_timeout,
                                    read_only=self.shared.read_only,
                                    secure_file_priv=self.shared.secure_file_priv,
                                    allow_remote=self.shared.allow_remote, allow_env=self.shared.allow_env)
        await self._call(_sync, self.con, {name: self.variables.get(name) for name in SYNCED})
        self.push_charsets()
        self.lexing = self.con.lexing

    @property
    def lexing(self) -> Any:
        """How this session reads quotes and backslashes (sql_mode): the engine connection's."""
        return self._lexing

    @lexing.setter
    def lexing(self, value: Any) -> None:
        self._lexing = value

    async def close(self) -> None:
        """The client left (or the server stops): roll back what it left open, close its engine
        connection (which saves the vector indexes it loaded)."""
        if self._closed:
            return
        self._closed = True
        self.interrupt()
        if self.con is not None:
            _close(self.con)
        await super().close()

    async def reset(self) -> None:
        """COM_RESET_CONNECTION / COM_CHANGE_USER: a fresh session on the same engine connection."""
        kept = {name: self.variables.get(name) for name in KEPT_ON_RESET}
        self.variables = charsets.WireVariables(self.shared.variables)
        for name, value in kept.items():
            self.variables.set(name, value, force=True)
        self.client_text, self.result_text = charsets.conversions(self.variables)
        if self.con is not None:
            await self._call(_reset, self.con, {name: self.variables.get(name) for name in SYNCED})
            self.push_charsets()
            self.lexing = self.con.lexing
        self.database = self.shared.name
        self.status = ServerStatus.SERVER_STATUS_AUTOCOMMIT

    def follow_client(self) -> None:
        """After the handshake or COM_CHANGE_USER: results and connection in the client's set."""
        charsets.follow_client(self.variables)
        self.client_text, self.result_text = charsets.conversions(self.variables)
        self.push_charsets()

    def push_charsets(self) -> None:
        """The engine connection's @@character_set_* and @@collation_* become this session's (an
        engine call, on this connection's thread; before the engine connection exists, nothing)."""
        if self.con is not None:
            self.con.serve_charsets({name: self.variables.get(name) for name in CHARSET_STATE})

    @property
    def running(self) -> bool:
        """A statement is running (any thread may ask)."""
        return self._running

    def interrupt(self) -> None:
        """Stop the statement this session is running (KILL QUERY, shutdown, client gone); any thread."""
        if self.con is not None and self._running:
            self.con.interrupt()

    async def _call(self, fn, *args, **kwargs):
        """An engine call, on this connection's own thread (the loop serves this client only)."""
        return fn(*args, **kwargs)

    # -- statements ------------------------------------------------------------------------
    async def run(self, stmt: Statement, params: list[Any] | None = None) -> Outcome:
        if params and stmt.route not in (Route.ENGINE, Route.INFO_SCHEMA):
            raise ServerError("this statement takes no parameters", 1210, "HY000")
        self.info, self.since = self.shared.redact(stmt.text), time.monotonic()   # keys never shown
        try:
            return await RUNNERS[stmt.route](self, stmt, params)
        finally:
            self.info, self.since = None, time.monotonic()

    async def _processlist(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        full = len(stmt.tokens) > 1 and stmt.tokens[1].text.upper() == "FULL"
        rows, columns = self.connection.control.processlist(full)
        return Rows(rows, columns)

    async def _engine(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        # --read-only: the engine connection refuses writes, decided from the statement it parsed
        outcome, self.status = await self._call(self._execute, stmt.text, params)
        return outcome

    def _execute(self, text: str, params: list[Any] | None) -> tuple[Outcome, ServerStatus]:
        assert self.con is not None
        self._running = True
        try:
            if self.stopping:
                raise ServerError("Server shutdown in progress", 1053, "08S01")
            cur = self.con.cursor()
            cur.execute(text, params if params else None)
            warnings = len(self.con.warnings)
            if cur.description is None:
                outcome: Outcome = Ok(max(cur.rowcount, 0), cur.lastrowid or 0, warnings)
            else:
                rows, columns = values.result_set(cur.description, cur.fetchall(), self.shapes)
                outcome = Rows(rows, columns, warnings)
            return outcome, _status(self.con)
        finally:
            self._running = False

    async def _probe(self, stmt: Statement, params: list[Any] | None = None) -> Outcome:
        text = self.lexing.normalize(stmt.text) if self.lexing is not None else stmt.text
        result = await ensure_result_set(await super().handle_query(text, {}))
        if not result.columns:
            return Ok()
        rows = result.rows if isinstance(result.rows, list) else [r async for r in _aiter(result.rows)]
        columns = list(result.columns)
        names = statements.select_names(stmt, self.lexing)
        if len(names) == len(columns):
            for column, name in zip(columns, names):
                column.name = name or column.name
        return Rows(list(rows), columns)

    async def _probe_or_engine(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        """What clients probe, mysql-mimic's answer; a form it does not answer (``SELECT @@x UNION
        SELECT ...``) is the engine's, whose session variables are the same (sql_mode, the character
        sets: pushed on every change)."""
        try:
            return await self._probe(stmt, params)
        except NotAProbe:
            return await self._engine(stmt, params)

    async def _probe_fallback(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        try:
            return await self._engine(stmt, params)
        except errors.ProgrammingError as exc:
            if exc.errno != 1064:
                raise
            try:
                return await self._probe(stmt)
            except Exception:  # noqa: BLE001 - mysql-mimic cannot answer it either: the engine's error stands
                raise exc from None

    async def _info_schema(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        """information_schema as in-process; what the engine's lacks, mysql-mimic's (info_schema.py)."""
        try:
            return await self._engine(stmt, params)
        except errors.ProgrammingError as exc:
            if params:
                raise
            try:
                return await self._probe(stmt)
            except Exception:  # noqa: BLE001 - mysql-mimic cannot answer it either: the engine's error stands
                raise exc from None

    async def _mixed_set(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        raise ServerError("SET of a user variable and a character set: tessera serve sets character sets "
                          "in a SET statement of their own", 1235, "42000")

    async def _use(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        name = stmt.tokens[1].text if len(stmt.tokens) == 2 else ""
        await self.use(name)
        return Ok()

    async def _set(self, stmt: Statement, params: list[Any] | None) -> Outcome:
        before = {name: self.variables.get(name) for name in SYNCED}
        sets = [self.variables.get(name) for name in CHARSET_STATE]
        kept = {name: self.variables.get(name) for name in self.variables}   # a failed SET changes nothing
        try:
            await self._probe_set(stmt)
            charsets.check(self.variables)
        except (ValueError, TypeError):         # mysql-mimic converting the value to the variable's type
            self._restore(kept)
            raise ServerError("Incorrect argument type to variable", 1232, "42000") from None
        except BaseException:                   # an unknown character set, one item of several...
            self._restore(kept)
            raise
        self.client_text, self.result_text = charsets.conversions(self.variables)
        if sets != [self.variables.get(name) for name in CHARSET_STATE]:
            self.push_charsets()
        wanted = bool(self.variables.get("autocommit"))
        if self.con is not None and wanted != self.con.autocommit:
            self.status = await self._call(_set_autocommit, self.con, wanted)
        changed = {name: self.variables.get(name) for name in SYNCED if self.variables.get(name) != before[name]}
        if self.con is not None and changed:
            await self._sync(changed, before)
        return Ok()

    async def _probe_set(self, stmt: Statement) -> None:
        try:
            await self._probe(stmt)
        except ParseError:
            quoted = charsets.binary_quoted(stmt.text, stmt.tokens)
            if quoted is None:
                raise ServerError("You have an error in your SQL syntax near "
                                  f"'{stmt.text[:80]}'", 1064, "42000") from None
            await self._probe(Statement(quoted, stmt.tokens, stmt.route))

    def _restore(self, kept: dict[str, Any]) -> None:
        for name, value in kept.items():
            if self.variables.get(name) != value:
                self.variables.set(name, value, force=True)

    # SET NAMES and SET CHARACTER SET: MySQL's checks and variables (mysql-mimic's took any name)
    def _set_names(self, item: Any) -> None:
        charsets.set_names(self.variables, item.name, item.text("collate") or None)

    def _set_charset(self, item: Any) -> None:
        charsets.set_character_set(self.variables, item.name)

    async def _sync(self, changed: dict[str, Any], before: dict[str, Any]) -> None:
        """Variables the engine acts on reach it, checked there: ``sql_mode`` (the engine reads text
        with it from now on; the status flag SERVER_STATUS_NO_BACKSLASH_ESCAPES tells PyMySQL and
        libmysqlclient how to escape, mysql-connector reads @@sql_mode) and ``max_execution_time``."""
        try:
            stored = await self._call(_sync, self.con, changed)
        except errors.Error:
            for name, value in before.items():
                self.variables.set(name, value, force=True)
            raise
        for name, value in stored.items():
            self.variables.set(name, value, force=True)
        self.lexing = self.con.lexing
        self.status = await self._call(_status, self.con)

    async def use(self, database: str) -> None:
        if database.lower() != self.shared.name.lower() and database.lower() not in PROBE_DATABASES:
            raise unknown_database(database)
        self.database = database

    async def query(self, expression, sql, attrs):
        raise NotAProbe(sql)

    # -- what mysql-mimic serves information_schema and SHOW DATABASES from --------------------
    async def schema(self) -> InfoSchema:
        return await self._call(info_schema.build, self.con)

    async def fields(self, table: str) -> list[tuple[str, str]]:
        """COM_FIELD_LIST: (name, MySQL type) of each column of ``table``."""
        return await self._call(lambda: [(n, values.schema_type(k)) for n, k in describe(self.con, table)])


RUNNERS = {
    Route.ENGINE: EngineSession._engine,
    Route.PROBE: EngineSession._probe_or_engine,
    Route.PROBE_FALLBACK: EngineSession._probe_fallback,
    Route.USE: EngineSession._use,
    Route.SET: EngineSession._set,
    Route.PROCESSLIST: EngineSession._processlist,
    Route.INFO_SCHEMA: EngineSession._info_schema,
    Route.MIXED_SET: EngineSession._mixed_set,
}


# -- engine calls, always on the connection's own thread -------------------------------------------
def _status(con: Any) -> ServerStatus:
    status = ServerStatus(0)
    if con.autocommit:
        status |= ServerStatus.SERVER_STATUS_AUTOCOMMIT
    if con.in_transaction:
        status |= ServerStatus.SERVER_STATUS_IN_TRANS
    if con.lexing.no_backslash_escapes:
        status |= ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES
    return status


def _sync(con: Any, values: dict[str, Any]) -> dict[str, Any]:
    return {name: con.set_variable(name, value) for name, value in values.items()}


def _set_autocommit(con: Any, on: bool) -> ServerStatus:
    """The connection owns autocommit: switching it on commits the open transaction (as MySQL does)."""
    con.autocommit = on
    return _status(con)


def _reset(con: Any, values: dict[str, Any]) -> None:
    con.rollback()
    con.autocommit = True
    _sync(con, values)


def _close(con: Any) -> None:
    try:
        con.rollback()
    finally:
        con.close()


def describe(con: Any, table: str) -> list[tuple[str, str]]:
    """(name, type as declared) of each column of ``table``, from the catalog (``Connection.describe``)."""
    assert con is not None
    return [(c.name, c.declared_type) for c in con.describe(table).columns]


async def _aiter(rows):
    async for row in rows:
        yield row
