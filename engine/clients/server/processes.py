"""Work is visible and ends with its client: connection ids, SHOW [FULL] PROCESSLIST, KILL, and the
watch that interrupts a statement whose client has gone.

- Connection ids are small and sequential (1, 2, 3 ...), as MySQL's, so that ``SHOW PROCESSLIST``
  and ``KILL`` are usable by hand (mysql-mimic's were a random server id times 65536 plus a counter).
- ``SHOW [FULL] PROCESSLIST`` lists every connection: Id, User, Host, db, Command (``Query`` while
  it runs a statement, ``Sleep`` otherwise), Time (seconds in that state), State and Info (the
  statement, its first 100 characters without FULL).
- ``KILL [CONNECTION | QUERY] id`` interrupts the statement the connection runs (it ends with
  error 1317) and, for CONNECTION, closes it; an unknown id is MySQL's error 1094.
- :func:`watch` checks, every ``WATCH_EVERY`` seconds on the server's own event loop, the socket of
  every client whose statement is running: when the client has disconnected the statement is
  interrupted (a statement no one will read used to run on until it finished, holding a core, a
  write lock or both). A statement runs on its connection's own thread and event loop (app.py), so
  the watch reads the socket itself (``poll``: the peer's close is seen even behind unread data).
"""
from __future__ import annotations

import asyncio
import itertools
import select
import time
from typing import Any

from mysql_mimic import ResultColumn
from mysql_mimic.constants import KillKind
from mysql_mimic.control import LocalControl
from mysql_mimic.types import ColumnType

from tesseradb import errors

SHORT_INFO = 100            # characters of Info without FULL (MySQL's)
WATCH_EVERY = 0.2           # seconds between checks of a running statement's client

COLUMNS = [("Id", ColumnType.LONGLONG), ("User", ColumnType.VAR_STRING), ("Host", ColumnType.VAR_STRING),
           ("db", ColumnType.VAR_STRING), ("Command", ColumnType.VAR_STRING), ("Time", ColumnType.LONGLONG),
           ("State", ColumnType.VAR_STRING), ("Info", ColumnType.VAR_STRING)]


class EngineControl(LocalControl):
    """The server's connections by id; KILL reaches the engine statement too."""

    def __init__(self) -> None:
        super().__init__(server_id=1)
        self._ids = itertools.count(1)

    def _new_connection_id(self) -> int:
        while (n := next(self._ids)) in self._connections:
            pass
        return n

    async def kill(self, connection_id: int, kind: KillKind = KillKind.CONNECTION) -> None:
        conn = self._connections.get(connection_id)
        if conn is None:
            raise errors.OperationalError(f"Unknown thread id: {connection_id}", 1094, "HY000")
        conn.session.interrupt()
        if kind == KillKind.CONNECTION:
            _on_its_loop(conn, conn.kill, kind)

    def processlist(self, full: bool) -> tuple[list[tuple], list[ResultColumn]]:
        now = time.monotonic()
        rows = [_row(conn_id, conn, full, now) for conn_id, conn in sorted(self._connections.items())]
        return rows, [ResultColumn(name=name, type=kind) for name, kind in COLUMNS]


def _row(conn_id: int, conn: Any, full: bool, now: float) -> tuple:
    session = conn.session
    info = session.info
    if info is not None and not full:
        info = info[:SHORT_INFO]
    running = info is not None
    return (conn_id, session.variables.get("external_user") or "", _host(conn), session.database,
            "Query" if running else "Sleep", int(now - session.since), "executing" if running else "", info)


def _host(conn: Any) -> str:
    try:
        peer = conn.stream.writer.get_extra_info("peername")
    except Exception:  # noqa: BLE001 - a closing socket has no peer
        peer = None
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "localhost"


def _on_its_loop(conn: Any, fn: Any, *args: Any) -> None:
    """``fn(*args)`` on the event loop of ``conn``'s own thread (asyncio objects are not thread-safe)."""
    loop = getattr(conn, "loop", None)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is None or loop is running:
        fn(*args)
        return
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:            # its loop has closed: the connection has ended already
        return
    wake = getattr(conn.stream, "wake", None)
    if wake is not None:            # its thread may be waiting on the socket (direct_socket.py)
        wake()


HUNG_UP = (getattr(select, "POLLHUP", 0) | getattr(select, "POLLERR", 0) | getattr(select, "POLLNVAL", 0)
           | getattr(select, "POLLRDHUP", 0))


def client_gone(stream: Any) -> bool:
    """The client closed its side (EOF read, the socket closing, or the peer's close seen on the
    socket itself: the connection's loop may be busy running the statement)."""
    try:
        if bool(getattr(stream.reader, "_eof", False)) or stream.writer.is_closing():
            return True
        sock = stream.writer.get_extra_info("socket")
        fd = sock.fileno() if sock is not None else -1
        if fd < 0:
            return True
    except Exception:  # noqa: BLE001 - a stream being torn down counts as gone
        return True
    if not hasattr(select, "poll"):     # no poll() (Windows): what the connection's loop has read is all
        return False
    poller = select.poll()
    poller.register(fd, HUNG_UP)
    try:
        return any(events & HUNG_UP for _, events in poller.poll(0))
    except OSError:
        return True


async def watch(connections: Any) -> None:
    """While ``connections()`` (the server's clients' connections) is not empty: every
    ``WATCH_EVERY`` seconds, interrupt the statement of each client that has gone, again and again
    until it ends."""
    while True:
        await asyncio.sleep(WATCH_EVERY)
        conns = connections()
        if not conns:
            return
        for conn in conns:
            session = conn.session
            if session.running and client_gone(conn.stream):
                session.interrupt()
