"""Work is visible and ends with its client: connection ids, SHOW [FULL] PROCESSLIST, KILL, and the
watch that interrupts a statement whose client has gone.

- Connection ids are small and sequential (1, 2, 3 ...), as MySQL's, so that ``SHOW PROCESSLIST``
  and ``KILL`` are usable by hand (mysql-mimic's were a random server id times 65536 plus a counter).
- ``SHOW [FULL] PROCESSLIST`` lists every connection: Id, User, Host, db, Command (``Query`` while
  it runs a statement, ``Sleep`` otherwise), Time (seconds in that state), State and Info (the
  statement, its first 100 characters without FULL).
- ``KILL [CONNECTION | QUERY] id`` interrupts the statement the connection runs (it ends with
  error 1317) and, for CONNECTION, closes it; an unknown id is MySQL's error 1094.
- :func:`watched` runs a statement and, while it runs, checks the client's socket: when the client
  has disconnected the statement is interrupted (a statement no one will read used to run on
  until it finished, holding a core, a write lock or both).
"""
from __future__ import annotations

import asyncio
import itertools
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
            conn.kill(kind)

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


def client_gone(stream: Any) -> bool:
    """The client closed its side (EOF read) or the socket is closing."""
    try:
        return bool(getattr(stream.reader, "_eof", False)) or stream.writer.is_closing()
    except Exception:  # noqa: BLE001 - a stream being torn down counts as gone
        return True


async def watched(stream: Any, session: Any, work: Any) -> Any:
    """Await ``work`` (a statement on the session's worker thread); interrupt the statement, again
    and again until it ends, once its client has gone."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=WATCH_EVERY)
        if done:
            return task.result()
        if client_gone(stream):
            session.interrupt()
