"""The command phase of one client connection, on top of mysql-mimic's packet layer.

What mysql-mimic's :class:`Connection` gets wrong for a database, and what this subclass does instead:

- COM_STMT_EXECUTE spliced parameters into the SQL text (``'{value}'``, no escaping: an injection);
  here they are bound as parameters of the engine statement.
- OK packets said 0 affected rows, last insert id 0 and no warnings; here they carry the statement's
  rowcount, lastrowid and warning count, and the autocommit / in-transaction status flags.
- Error packets used mysql-mimic's own code table (SQLSTATE HY000 for most); here they carry the
  engine's errno and SQLSTATE.
- A multi-statement COM_QUERY ran every statement but returned only the last result; here every
  statement sends its own result (SERVER_MORE_RESULTS_EXISTS between them) and the first error stops it.
- COM_STMT_RESET reset the whole session (rolled back the open transaction, autocommit back on);
  here it resets only the statement.
- COM_FIELD_LIST read columns 0 and 4 of ``SHOW COLUMNS``; here it asks the engine for the fields.
- A ``bytes`` parameter that is not UTF-8 was "Malformed packet"; here it is bound as bytes.
- A client that stays silent longer than the idle timeout is disconnected (MySQL's error 4031).
- Text values went out as UTF-8 whatever ``character_set_results`` said (only column names followed
  it), and the handshake's character set reached only ``character_set_client``; here both follow
  MySQL (charsets.py), and statement text is decoded as MySQL's own set (latin1 is cp1252).
"""
from __future__ import annotations

import asyncio
import io
import struct
import logging
from typing import Any

from mysql_mimic import packets, types
from mysql_mimic.connection import Connection
from mysql_mimic.errors import ErrorCode, MysqlError, get_sqlstate
from mysql_mimic.prepared import PreparedStatement
from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.charset import CharacterSet
from mysql_mimic.types import Capabilities, Commands, ServerStatus
from mysql_mimic.utils import aiterate, cooperative_iterate

from tesseradb import errors
from tesseradb.clients.server import charsets, checks, direct_socket, statements, temporal_params
from tesseradb.clients.server.session import Ok, Outcome, Rows
from tesseradb.clients.server.wire import IdleTimeout, PacketTooLarge

log = logging.getLogger("tesseradb.server")

SERVER_CAPABILITIES = (
    Capabilities(154699593)     # mysql-mimic's DEFAULT_SERVER_CAPABILITIES
    | Capabilities.CLIENT_MULTI_STATEMENTS | Capabilities.CLIENT_MULTI_RESULTS
    | Capabilities.CLIENT_PS_MULTI_RESULTS | Capabilities.CLIENT_TRANSACTIONS
)

# SQLSTATEs for the error numbers mysql-mimic raises that its own table leaves at HY000.
SQLSTATES = {1045: "28000", 1040: "08004", 1043: "08S01", 1047: "08S01", 1064: "42000", 1193: "HY000",
             1235: "42000", 1835: "HY000", 3162: "HY000", 4031: "HY000", 1153: "08S01"}


ROWS_PER_BATCH = 10_000     # rows serialized between two turns of the loop (mysql-mimic's)
KEPT_PACKETS = 256          # header and end packets a connection keeps (cleared when full)


def error_packet(capabilities: Capabilities, errno: int, sqlstate: str, msg: str) -> bytes:
    parts = [types.uint_1(0xFF), types.uint_2(errno)]
    if Capabilities.CLIENT_PROTOCOL_41 in capabilities:
        parts += [b"#", sqlstate.encode("ascii")[:5].ljust(5, b"0")]
    parts.append(str(msg).encode("utf-8", "replace"))
    return b"".join(parts)


class WireConnection(Connection):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.status_flags = ServerStatus.SERVER_STATUS_AUTOCOMMIT    # MySQL's default, told at handshake
        self.loop = asyncio.get_running_loop()      # this connection's own (processes.py acts on it from others)
        self._warnings = 0
        self._parsed: dict[int, statements.Statement] = {}
        self._headers: dict[int, tuple[list, Any, list[bytes]]] = {}    # a result shape's header packets
        self._ends: dict[tuple, bytes] = {}         # the packet after the rows, by row count and status
        self._converted: dict[int, tuple[list, Any, list]] = {}   # a result's columns in the results' set
        self.commands = {
            Commands.COM_QUERY: self.handle_query,
            Commands.COM_STMT_PREPARE: self.handle_stmt_prepare,
            Commands.COM_STMT_SEND_LONG_DATA: self.handle_stmt_send_long_data,
            Commands.COM_STMT_EXECUTE: self.handle_stmt_execute,
            Commands.COM_STMT_FETCH: self.handle_stmt_fetch,
            Commands.COM_STMT_RESET: self.handle_stmt_reset,
            Commands.COM_STMT_CLOSE: self.handle_stmt_close,
            Commands.COM_PING: self.handle_ping,
            Commands.COM_CHANGE_USER: self.handle_change_user,
            Commands.COM_RESET_CONNECTION: self.handle_reset_connection,
            Commands.COM_DEBUG: self.handle_debug,
            Commands.COM_INIT_DB: self.handle_init_db,
            Commands.COM_FIELD_LIST: self.handle_field_list,
        }

    # -- character sets (charsets.py) ----------------------------------------------------------
    @property
    def server_charset(self) -> CharacterSet:
        """What mysql-mimic's packet builders encode with: only ASCII reaches them here ('?' parameter
        names, empty OK info); names and values in ``character_set_results`` are charsets.py's."""
        return CharacterSet.utf8mb4

    @property
    def client_charset(self) -> CharacterSet:
        """What mysql-mimic's parsers decode user and database names with."""
        client = self.session.client_text
        return CharacterSet.utf8mb4 if client is None else client.mimic

    def _text(self, data: bytes) -> str:
        """Statement text, decoded in ``character_set_client``."""
        client = self.session.client_text
        return data.decode("utf-8") if client is None else client.decode(data)

    def _columns(self, columns: list) -> list:
        """A result's columns in ``character_set_results`` (kept per result shape, as its header)."""
        charset = self.session.result_text
        if charset is None:
            return columns
        kept = self._converted.get(id(columns))
        if kept is not None and kept[0] is columns and kept[1] is charset:
            return kept[2]
        if len(self._converted) >= KEPT_PACKETS:
            self._converted.clear()
        converted = charsets.columns(columns, charset)
        self._converted[id(columns)] = (columns, charset, converted)
        return converted

    def _definition(self, name: str, **kwargs: Any) -> bytes:
        """A column definition, its names in ``character_set_results``."""
        charset = self.session.result_text
        return packets.make_column_definition_41(
            server_charset=charsets.name_charset(charset), name=charsets.wire_text(name, charset),
            **{k: charsets.wire_text(v, charset) if k == "table" else v for k, v in kwargs.items()})

    # -- the command loop ------------------------------------------------------------------
    async def command_phase(self) -> None:
        direct_socket.attach(self.stream)   # the socket read on this thread from now on, when it can be
        try:
            await self._commands()
        finally:
            self.stream.release()

    async def _commands(self) -> None:
        while True:
            try:
                data = await self.stream.read()
            except (ConnectionClosed, ConnectionError, asyncio.IncompleteReadError):
                return
            except IdleTimeout:
                await self._write_error(4031, "HY000", "The client was disconnected by the server because of inactivity")
                return
            except PacketTooLarge as exc:
                await self._write_error(1153, "08S01", str(exc))
                return
            if not data or data[0] == Commands.COM_QUIT:
                return
            await self._command(data)

    async def _command(self, data: bytes) -> None:
        try:
            handler = self.commands.get(data[0])
            if handler is None:
                raise MysqlError(f"Unsupported command: {hex(data[0])}", ErrorCode.UNKNOWN_COM_ERROR)
            await handler(data[1:])
        except errors.Error as exc:
            await self._write_error(exc.errno, exc.sqlstate, exc.msg)
        except MysqlError as exc:
            await self._write_error(int(exc.code), _sqlstate(int(exc.code)), exc.msg)
        except (ConnectionError, ConnectionClosed):
            raise
        except (IndexError, ValueError, EOFError, struct.error) as exc:   # mysql-mimic's packet parsers
            log.debug("malformed packet", exc_info=True)
            await self._write_error(1835, "HY000", f"Malformed packet ({type(exc).__name__})")
        except Exception as exc:  # noqa: BLE001 - one command's failure must cost its client, not the server
            log.warning("command failed", exc_info=True)
            await self._write_error(1105, "HY000", f"internal server error ({type(exc).__name__})")
        finally:
            self._warnings = 0
            self.stream.reset_seq()

    async def _write_error(self, errno: int, sqlstate: str, msg: str) -> None:
        try:
            await self.stream.write(error_packet(self.capabilities, errno, sqlstate, msg))
        except (ConnectionError, RuntimeError):
            pass

    def error(self, msg: Any = "", code: int = ErrorCode.UNKNOWN_ERROR, **_: Any) -> bytes:
        return error_packet(self.capabilities, int(code), _sqlstate(int(code)), str(msg))

    def ok_or_eof(self, affected_rows: int = 0, last_insert_id: int = 0, warnings: int = 0,
                  flags: int = 0) -> bytes:
        return super().ok_or_eof(affected_rows, last_insert_id, warnings or self._warnings, flags)

    # -- text protocol -------------------------------------------------------------------------
    async def handle_query(self, data: bytes) -> None:
        if Capabilities.CLIENT_QUERY_ATTRIBUTES in self.capabilities:
            # latin1 keeps every byte: the text is decoded in the client's set below
            sql = self._text(packets.parse_com_query(capabilities=self.capabilities, data=data,
                                                     client_charset=CharacterSet.latin1).sql.encode("latin-1"))
        else:                           # no attributes before it: the payload is the text
            sql = self._text(data)
        self._refuse_too_complex(sql)
        stmts = statements.read(sql, self.session.lexing)
        if not stmts:
            raise MysqlError("Query was empty", ErrorCode.EMPTY_QUERY)
        if len(stmts) > 1 and Capabilities.CLIENT_MULTI_STATEMENTS not in self.capabilities:
            raise MysqlError("several statements in one query need the client's CLIENT_MULTI_STATEMENTS "
                             "option", ErrorCode.PARSE_ERROR)
        source = sql                    # the text ``stmts`` was split from (token offsets are in it)
        client = self.session.client_text
        while stmts:
            stmt, lexing = stmts[0], self.session.lexing
            outcome = await self.session.run(stmt)
            stmts = stmts[1:]
            if stmts and (self.session.lexing != lexing or not stmts[0].tokens   # read the rest as its SET left
                          or self.session.client_text is not client):           # the mode or the client's set
                source = source[stmt.tokens[-1].end + 1:] if stmt.tokens else ""
                if self.session.client_text is not client:      # as MySQL: the rest's bytes in the new set
                    source = self._text((client or charsets.UTF8MB4).encode(source))
                    client = self.session.client_text
                stmts = statements.split(source, self.session.lexing)
            await self.write_outcome(outcome, more=bool(stmts))

    def _refuse_too_complex(self, sql: str) -> None:
        """Before the tokenizer sees it: a statement that would take many seconds to refuse."""
        reason = self.session.lexing.too_complex(sql) if self.session.lexing is not None else None
        if reason is not None:
            raise MysqlError(f"statement too complex to run: {reason}", ErrorCode.PARSE_ERROR)

    async def write_outcome(self, outcome: Outcome, more: bool = False, binary: bool = False,
                            stmt: PreparedStatement | None = None, use_cursor: bool = False) -> None:
        self.status_flags = self.session.status | (ServerStatus.SERVER_MORE_RESULTS_EXISTS if more else 0)
        self._warnings = outcome.warnings
        try:
            if isinstance(outcome, Ok) or not outcome.columns:
                await self.stream.write(self.ok(affected_rows=getattr(outcome, "affected", 0),
                                                last_insert_id=getattr(outcome, "last_id", 0),
                                                warnings=outcome.warnings))
            elif binary:
                await self.write_binary_resultset(outcome, self._columns(outcome.columns), stmt, use_cursor)
            else:
                await self.write_text_rows(outcome.rows, self._columns(outcome.columns))
        finally:
            self.status_flags = self.session.status
            self._warnings = 0

    async def write_text_rows(self, rows: list[tuple], columns: list) -> None:
        """mysql-mimic's ``write_text_resultset`` for a list of rows, with its packet builders, the
        header packets of a result shape made once per connection (``_header``) and the end packet
        once per row count and status (``_rows_end``): a query run again costs their Python once."""
        stream = self.stream
        stream.write_many(self._header(columns))
        if not self.deprecate_eof():
            stream.write_many([self.eof()])
        for start in range(0, len(rows), ROWS_PER_BATCH):
            stream.write_text_rows(rows[start:start + ROWS_PER_BATCH], columns)
            if start + ROWS_PER_BATCH < len(rows):
                await asyncio.sleep(0)
        await stream.write(self._rows_end(len(rows)), drain=False)
        await stream.drain()

    def _header(self, columns: list) -> list[bytes]:
        """The column count and column definitions of a result (by its column list: values.result_set
        hands out one list per shape and connection)."""
        charset = self.session.result_text      # SET NAMES / character_set_results may change it
        kept = self._headers.get(id(columns))
        if kept is not None and kept[0] is columns and kept[1] is charset:
            return kept[2]
        header = [packets.make_column_count(capabilities=self.capabilities, column_count=len(columns))]
        header += [self._definition(c.name, column_type=c.type, character_set=c.character_set) for c in columns]
        if len(self._headers) >= KEPT_PACKETS:
            self._headers.clear()
        self._headers[id(columns)] = (columns, charset, header)
        return header

    def _rows_end(self, count: int) -> bytes:
        key = (count, self._warnings, self.status_flags)
        packet = self._ends.get(key)
        if packet is None:
            if len(self._ends) >= KEPT_PACKETS:
                self._ends.clear()
            packet = self._ends[key] = self.ok_or_eof(affected_rows=count)
        return packet

    # -- prepared statements: parameters are bound, never spliced ------------------------------
    async def handle_stmt_prepare(self, data: bytes) -> None:
        sql = self._text(data)
        self._refuse_too_complex(sql)
        parsed = statements.one(sql, self.session.lexing)
        stmt_id = next(self.prepared_stmt_seq)
        stmt = PreparedStatement(stmt_id=stmt_id, sql=sql, num_params=parsed.params)
        self.prepared_stmts[stmt_id] = stmt
        self._parsed[stmt_id] = parsed
        for packet in self.com_stmt_prepare_response(stmt):
            await self.stream.write(packet, drain=False)
        await self.stream.drain()

    async def handle_stmt_close(self, data: bytes) -> None:
        await super().handle_stmt_close(data)
        self._parsed = {k: v for k, v in self._parsed.items() if k in self.prepared_stmts}

    async def handle_stmt_execute(self, data: bytes) -> None:
        r = io.BytesIO(data)
        stmt = self.get_stmt(types.read_uint_4(r))
        use_cursor, count_available = packets._read_cursor_flags(r)
        types.read_uint_4(r)                     # iteration count: always 1
        count = stmt.num_params
        if (count > 0 or count_available) and Capabilities.CLIENT_QUERY_ATTRIBUTES in self.capabilities:
            count = types.read_uint_len(r)
        # read as latin1 (every byte one character, losslessly), then decoded in _param; dates too
        params = temporal_params.read_params(self.capabilities, CharacterSet.latin1, r, count,
                                             stmt.param_buffers) if count else []
        stmt.param_buffers = None
        if len(params) < stmt.num_params:
            raise MysqlError(f"statement needs {stmt.num_params} parameters, got {len(params)}",
                             ErrorCode.PARSE_ERROR)
        client = self.session.client_text or charsets.UTF8MB4
        bound = [_param(value, client) for _, value in params[:stmt.num_params]]
        outcome = await self.session.run(self._parsed[stmt.stmt_id], bound)
        await self.write_outcome(outcome, binary=True, stmt=stmt, use_cursor=use_cursor)

    async def handle_stmt_reset(self, data: bytes) -> None:
        """COM_STMT_RESET forgets the statement's long data and cursor. (mysql-mimic also reset the
        whole session here, which ended the client's transaction and switched autocommit back on.)"""
        stmt = self.get_stmt(packets.parse_com_stmt_reset(data).stmt_id)
        stmt.param_buffers = None
        stmt.cursor = None
        await self.stream.write(self.ok())

    async def write_binary_resultset(self, outcome: Rows, columns: list, stmt: PreparedStatement | None,
                                     use_cursor: bool) -> None:
        await self.stream.write(types.uint_len(len(columns)))
        for column in columns:
            await self.stream.write(self._definition(column.name, column_type=column.type,
                                                     character_set=column.character_set))

        async def rows():
            async for row in cooperative_iterate(aiterate(outcome.rows)):
                yield packets.make_binary_resultrow(row, columns)

        if use_cursor and stmt is not None:
            stmt.cursor = rows()
            await self.stream.write(self.ok_or_eof(flags=ServerStatus.SERVER_STATUS_CURSOR_EXISTS))
            return
        if not self.deprecate_eof():
            await self.stream.write(self.eof())
        async for row in rows():
            await self.stream.write(row, drain=False)
        await self.stream.write(self.ok_or_eof())

    # -- small commands ------------------------------------------------------------------------
    async def handle_field_list(self, data: bytes) -> None:
        checks.field_list(data)
        request = packets.parse_com_field_list(self.client_charset, data)
        fields = await self.session.fields(request.table)
        for name, _ in fields:
            await self.stream.write(self._definition(name, table=request.table, is_com_field_list=True),
                                    drain=False)
        await self.stream.write(self.ok_or_eof())

    async def handle_change_user(self, data: bytes) -> None:
        checks.change_user(data, self.capabilities)
        await super().handle_change_user(data)
        self.session.follow_client()        # the packet's character set, for results too

    async def handle_reset_connection(self, data: bytes) -> None:
        await self.session.reset()
        self.prepared_stmts.clear()
        self._parsed.clear()
        self.status_flags = self.session.status
        await self.stream.write(self.ok())


def _sqlstate(code: int) -> str:
    return SQLSTATES.get(code) or get_sqlstate(code).decode()


def _param(value: Any, charset: Any) -> Any:
    """A bound value as the engine takes it: a string or BLOB parameter is text when its bytes are
    text in the client's character set, else exactly those bytes (mysql-mimic decoded every one and
    answered a binary value with "Malformed packet")."""
    if isinstance(value, str):
        raw = value.encode("latin-1")
        try:
            return charset.decode(raw)
        except UnicodeDecodeError:
            return raw
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return bytes(value)
    return value
