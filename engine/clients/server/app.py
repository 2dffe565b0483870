"""The server: listens, gives every client its own thread, event loop, session and engine connection.

The server's own event loop accepts connections, serves the HTTP API (when asked) and watches for
clients that have gone (processes.watch). Each accepted connection is served on a thread of its own
running an event loop of its own (mysql-mimic's protocol code is asyncio), and its statements run
inline on that loop: nothing else waits on it, so a long statement stalls only its own client, and a
statement costs no hand-off between threads (two wake-ups through the OS scheduler per query when
statements ran on a worker thread beside one shared loop; docs/benchmarks.md). After the handshake a
plain-TCP client's thread reads and writes its socket itself (direct_socket.py), so what another
thread queues on a client's loop (``Client.call``, KILL) also wakes that thread's ``poll``.

``serve()`` blocks until SIGTERM or Ctrl-C (then every open transaction rolls back, every engine
connection closes and saves the vector indexes it loaded, and it returns 0). ``serve(...,
background=True)`` runs the same server on a thread and returns a handle with ``port`` and ``stop()``.
"""
from __future__ import annotations

import asyncio
import errno
import functools
import importlib.metadata
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mysql_mimic.stream import MysqlStream
from mysql_mimic.variables import GlobalVariables, SYSTEM_VARIABLES

from tesseradb.clients.server import charsets, config, processes, wire
from tesseradb.clients.server.auth import Accounts
from tesseradb.clients.server.config import ServerOptions
from tesseradb.clients.server.processes import EngineControl
from tesseradb.clients.server.protocol import SERVER_CAPABILITIES, WireConnection, error_packet
from tesseradb.clients.server.session import EngineSession, Shared

log = logging.getLogger("tesseradb.server")

SHUTDOWN_GRACE = 30.0       # seconds a running statement gets to notice the interrupt at shutdown
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}   # accept waits 1 s, as asyncio's
REFUSED = {"full": (1040, "08004", "Too many connections"),
           "stopping": (1053, "08S01", "Server shutdown in progress")}


def server_variables(options: ServerOptions) -> GlobalVariables:
    """MySQL's defaults where mysql-mimic's differ from what clients rely on (its sql_mode 'ANSI'
    makes SQLAlchemy quote identifiers with double quotes, which MySQL reads as strings)."""
    schema = dict(SYSTEM_VARIABLES)
    defaults = {
        "version": "8.0.36-tesseradb", "version_comment": f"tesseradb {importlib.metadata.version('tesseradb')}",
        "sql_mode": "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
        "transaction_isolation": "SERIALIZABLE", "default_storage_engine": "tesseradb",
        "default_tmp_storage_engine": "tesseradb", "max_allowed_packet": options.max_packet,
        "wait_timeout": int(options.idle_timeout or 0), "interactive_timeout": int(options.idle_timeout or 0),
        "transaction_read_only": options.read_only, "max_execution_time": options.max_execution_time,
    }
    for name, value in defaults.items():
        kind, _, dynamic = schema[name]
        schema[name] = (kind, value, dynamic)
    schema["tx_isolation"] = schema["transaction_isolation"]
    schema["read_only"] = (bool, options.read_only, False)
    schema["secure_file_priv"] = (str, options.secure_file_priv or None, False)   # NULL: file statements off
    for name, checked in charsets.variable_types().items():    # MySQL's errors for an unknown name
        _, value, dynamic = schema[name]
        schema[name] = (checked, value, dynamic)
    return GlobalVariables(schema)


class Server:
    def __init__(self, options: ServerOptions, connect: Callable[..., Any], redact: Callable[[str], str] = str):
        config.check(options)
        self.options = options
        self.ssl = config.ssl_context(options)
        self.shared = Shared(connect=connect, path=options.database, name=options.name, variables=server_variables(options),
                             read_only=options.read_only, statement_timeout=options.statement_timeout,
                             secure_file_priv=options.secure_file_priv, allow_remote=options.allow_remote,
                             allow_env=options.allow_env, redact=redact)
        self.accounts = Accounts(options.user, options.password)
        self.control = EngineControl()
        self.clients: dict[int, Client] = {}        # by thread id; each client's thread adds and removes itself
        self._admit = threading.Lock()              # max_connections: the count and the add, together
        self._starting: set[threading.Thread] = set()   # accepted, not yet among the clients (the watch waits for them)
        self._stopping = False
        self.port: int | None = None
        self._sockets: list[Any] = []
        self._accepting: list[asyncio.Task] = []
        self._watch: asyncio.Task | None = None
        self.http: Any = None                   # the HTTP JSON API (tesseradb.clients.http), when asked for
        # the HTTP side's connections: the same operator allow-list for remote models (docs/models.md)
        self._connect = functools.partial(connect, allow_remote=options.allow_remote, allow_env=options.allow_env)

    async def start(self) -> None:
        self.shared.connect(self.options.database).close()   # create it now; report a bad path at once
        loop = asyncio.get_running_loop()
        wire.enough_descriptors(self.options.max_connections)
        self._sockets = wire.listening_sockets(self.options.host, self.options.port)
        self.port = self._sockets[0].getsockname()[1]
        self._accepting = [loop.create_task(self._accept(sock)) for sock in self._sockets]
        if self.options.http_port is not None:
            await self._start_http()

    async def _start_http(self) -> None:
        """The HTTP JSON API over the same database, with the same rules (docs/http.md)."""
        from tesseradb.clients.http.service import HttpService, rules   # loads uvicorn only when asked
        o = self.options
        self.http = HttpService(rules(self._connect, o.database, read_only=o.read_only,
                                      statement_timeout=o.statement_timeout, secure_file_priv=o.secure_file_priv,
                                      max_execution_time=o.max_execution_time),
                                host=o.host, port=o.http_port, user=o.user, password=o.password,
                                ssl_cert=o.ssl_cert, ssl_key=o.ssl_key, max_body=o.max_packet,
                                idle_timeout=o.idle_timeout)
        try:
            await self.http.start()
        except OSError as exc:
            await self._close_listeners()
            raise OSError(exc.errno, f"{exc.strerror} (the HTTP port, {o.http_port})") from None
        except BaseException:
            await self._close_listeners()
            raise

    async def _close_listeners(self) -> None:
        for task in self._accepting:
            task.cancel()
        await asyncio.gather(*self._accepting, return_exceptions=True)
        for sock in self._sockets:
            sock.close()
        self._accepting, self._sockets = [], []

    async def _accept(self, listener: Any) -> None:
        """Accept connections on ``listener``; each is served on a new thread of its own."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(listener)
            except asyncio.CancelledError:
                raise
            except OSError as exc:      # reset before it was accepted; out of descriptors or memory: wait
                log.warning("accepting a connection failed: %s", exc)
                await asyncio.sleep(1.0 if exc.errno in OUT_OF_RESOURCES else 0)
                continue
            thread = threading.Thread(target=self._serve_client, args=(sock,), name="tessera-client", daemon=True)
            with self._admit:
                self._starting.add(thread)
            try:
                thread.start()
            except RuntimeError:        # no thread to be had: this client is refused, the server goes on
                log.warning("cannot start a thread for a new client", exc_info=True)
                with self._admit:
                    self._starting.discard(thread)
                sock.close()
                continue
            if self._watch is None or self._watch.done():
                self._watch = loop.create_task(processes.watch(self._connections))

    def _connections(self) -> list[Any] | None:
        """The clients' connections; None once there are none, not even one starting (the watch ends)."""
        with self._admit:
            if not self.clients and not self._starting:
                return None
            return [client.conn for client in self.clients.values()]

    def _serve_client(self, sock: Any) -> None:
        """The client's thread: its own event loop, for as long as the connection lasts."""
        try:
            asyncio.run(self._client(sock))
        except Exception:  # noqa: BLE001 - one client's failure never reaches the server
            log.debug("client thread ended with an error", exc_info=True)
            sock.close()
        finally:
            with self._admit:
                self._starting.discard(threading.current_thread())      # refused, or failed before it registered

    async def _client(self, sock: Any) -> None:
        reader, writer = await wire.open_stream(sock, idle_timeout=self.options.idle_timeout,
                                                max_packet=self.options.max_packet)
        try:
            await self._on_client(reader, writer, sock)
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except Exception:  # noqa: BLE001 - the client reset the connection: it is closed either way
                pass

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sock: Any) -> None:
        """One client's connection, on its own thread and event loop, until it ends."""
        stream = wire.GuardedStream(MysqlStream(reader, writer), SERVER_CAPABILITIES, sock)
        session = EngineSession(self.shared)
        conn = WireConnection(stream=stream, session=session, control=self.control,
                              identity_provider=self.accounts, server_capabilities=SERVER_CAPABILITIES,
                              ssl=self.ssl)
        me = threading.get_ident()
        with self._admit:
            refused = (REFUSED["stopping"] if self._stopping else
                       REFUSED["full"] if len(self.clients) >= self.options.max_connections else None)
            if refused is None:
                self.clients[me] = Client(conn, asyncio.get_running_loop(), asyncio.current_task())
                self._starting.discard(threading.current_thread())     # counted among the clients from now on
        if refused is not None:
            await stream.write(error_packet(SERVER_CAPABILITIES, *refused))
            writer.close()
            return
        conn.connection_id = await self.control.add(conn)
        try:
            await conn.start()
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - one client's broken handshake or socket never stops the server
            log.debug("client %s ended with an error", conn.connection_id, exc_info=True)
        finally:
            await session.close()
            writer.close()
            await self.control.remove(conn.connection_id)
            self.clients.pop(me, None)

    async def stop(self) -> None:
        """Stop listening; interrupt what clients run; roll back, close and save every session."""
        with self._admit:
            self._stopping = True               # a client accepted just now is refused
        await self._close_listeners()
        if self.http is not None:
            await self.http.stop()
        for client in list(self.clients.values()):
            client.conn.session.stopping = True
            client.call(client.conn.stream.writer.close)
        deadline = time.monotonic() + SHUTDOWN_GRACE
        while (self.clients or self._starting) and time.monotonic() < deadline:
            for client in list(self.clients.values()):
                client.conn.session.interrupt()     # again and again: a statement may be just starting
            await asyncio.sleep(0.1)
        for client in list(self.clients.values()):
            client.call(client.task.cancel)
        deadline = time.monotonic() + SHUTDOWN_GRACE
        while (self.clients or self._starting) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        if self._watch is not None:
            self._watch.cancel()


@dataclass
class Client:
    """A connected client: its connection, and the event loop and task of its own thread."""
    conn: WireConnection
    loop: asyncio.AbstractEventLoop
    task: asyncio.Task | None

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """``fn(*args)`` on the client's own loop (from the server's)."""
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:            # its loop has closed: the client has just ended
            return
        self.conn.stream.wake()         # its thread may be waiting on the socket (direct_socket.py)


# -- running it ---------------------------------------------------------------------------------
def serve(database: str, *, connect: Callable[..., Any], host: str = "127.0.0.1", port: int = config.DEFAULT_PORT,
          user: str | None = None, password: str | None = None, ssl_cert: str | None = None,
          ssl_key: str | None = None, max_connections: int = config.DEFAULT_MAX_CONNECTIONS,
          idle_timeout: float | None = config.DEFAULT_IDLE_TIMEOUT, read_only: bool = False,
          statement_timeout: float | None = None, max_packet: int = config.DEFAULT_MAX_PACKET,
          secure_file_priv: str | None = "", max_execution_time: int = config.DEFAULT_MAX_EXECUTION_TIME,
          http_port: int | None = None, allow_remote: tuple[str, ...] = (), allow_env: tuple[str, ...] = (),
          background: bool = False, redact: Callable[[str], str] = str):
    """Serve ``database`` over the MySQL protocol (and, with ``http_port``, Manticore's HTTP JSON API
    beside it). Blocks until SIGTERM / Ctrl-C and returns 0, or with ``background=True`` returns a
    :class:`Background` handle at once (``.port``, ``.http_port``, ``.stop()``).
    ``connect`` is ``tesseradb.connect``: ``tesseradb.serve()`` hands it in (the server is a client of
    the public API and must not import the package that exports it)."""
    if password and user is None:
        user = "root"
    options = ServerOptions(database=database, host=host, port=port, user=user, password=password,
                            ssl_cert=ssl_cert, ssl_key=ssl_key, max_connections=max_connections,
                            idle_timeout=idle_timeout, read_only=read_only,
                            statement_timeout=statement_timeout, max_packet=max_packet,
                            secure_file_priv=secure_file_priv, max_execution_time=max_execution_time,
                            http_port=http_port, allow_remote=tuple(allow_remote), allow_env=tuple(allow_env))
    server = Server(options, connect, redact)
    if background:
        return Background(server)
    return asyncio.run(_run_forever(server))


async def _run_forever(server: Server) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    where = f"{server.options.host}:{server.port}"
    sys.stderr.write(f"tessera serve: {server.options.database} on {where} (database `{server.options.name}`); "
                     "Ctrl-C or SIGTERM stops it\n")
    if server.http is not None:
        sys.stderr.write(f"tessera serve: Manticore's HTTP JSON API on {server.http.url}\n")
    sys.stderr.flush()
    await stop.wait()
    sys.stderr.write("tessera serve: stopping: rolling back open transactions, saving indexes\n")
    await server.stop()
    sys.stderr.write("tessera serve: stopped\n")
    return 0


class Background:
    """A server on its own thread and event loop (tests, notebooks, an application's side port)."""

    def __init__(self, server: Server):
        self.server = server
        self.loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="tessera-serve", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            raise self._error

    @property
    def port(self) -> int:
        assert self.server.port is not None
        return self.server.port

    @property
    def http_port(self) -> int | None:
        return self.server.http.port if self.server.http is not None else None

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.server.start())
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that started us
            self._error = exc
            self._started.set()
            return
        self._started.set()
        self.loop.run_forever()

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

    def __enter__(self) -> "Background":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
