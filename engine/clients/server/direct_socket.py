"""A plain-TCP client's socket, read and written by the client's own thread after the handshake.

Every client has a thread and an event loop of its own (app.py) and its statements run inline on
that loop, so nothing else ever waits on it. Waiting for the next command through asyncio (epoll's
return, the transport's callback, the StreamReader's future, the task's wake-up: two turns of the
loop, each its own Python) cost more than the thread waking in ``poll()`` itself: a loopback round
trip of one small packet took 45 against 18 us warm, and about twice as long through asyncio right
after something else (a model run) had emptied the caches (docs/benchmarks.md, "Over the wire").
So once the handshake is done, a plain-TCP connection's bytes are read with ``recv()`` (``poll()``
when none are there) and written with ``send()`` by the client's thread, behind the
``StreamReader``/``StreamWriter`` methods mysql-mimic's ``MysqlStream`` calls: the MySQL protocol
is still mysql-mimic's. A TLS connection, or one whose transport still holds unsent bytes, stays on
asyncio's transport.

What other threads ask of the connection (KILL CONNECTION, the server's stop) is queued on its
loop with ``call_soon_threadsafe`` as before; :meth:`DirectSocket.wake` then wakes the ``poll()``
through a socket pair, and the loop runs what was queued before the read goes on. A client silent
for longer than the idle timeout, or announcing a packet over max_allowed_packet, is treated as by
:class:`~tesseradb.clients.server.wire.GuardedReader` (the asyncio side's reader).
"""
from __future__ import annotations

import asyncio
import select
import socket
from typing import Any

from tesseradb.clients.server.wire import GuardedReader, GuardedStream, IdleTimeout, check_header

RECV_BYTES = 2 ** 16
READABLE = select.POLLIN | select.POLLPRI if hasattr(select, "poll") else 0
WRITABLE = select.POLLOUT if hasattr(select, "poll") else 0


def attach(stream: GuardedStream) -> bool:
    """After the handshake: ``stream``'s socket read and written by the client's own thread from
    now on, with the limits its reader had, when the connection allows it (plain TCP on a platform
    with ``poll()``, nothing left in the transport's write buffer)."""
    inner = stream._inner                               # noqa: SLF001 - mysql-mimic's MysqlStream
    reader, writer = inner.reader, inner.writer
    if stream.sock is None or stream.direct is not None or not isinstance(reader, GuardedReader):
        return False
    transport = writer.transport
    if not hasattr(select, "poll") or transport.get_extra_info("sslcontext") is not None \
            or transport.is_closing() or transport.get_write_buffer_size() != 0:
        return False
    stream.direct = DirectSocket(stream.sock, reader, writer, idle_timeout=reader.idle_timeout,
                                 max_packet=reader.max_packet)
    inner.reader = inner.writer = stream.direct
    return True


class DirectSocket:
    """The reader and the writer ``MysqlStream`` uses, on the accepted socket itself.

    ``reader`` is the asyncio ``StreamReader`` that read the handshake: its transport stops
    reading, and the bytes it had buffered (a command sent right after the handshake) are read
    first. The transport stays the socket's owner: closing this closes it, on the loop."""

    def __init__(self, sock: socket.socket, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 idle_timeout: float | None, max_packet: int):
        self.sock = sock
        self.transport = writer.transport
        self.transport.pause_reading()
        self.buffer = bytearray(reader._buffer)       # noqa: SLF001 - read before the move, not yet taken
        reader._buffer.clear()                         # noqa: SLF001
        self._eof = bool(reader.at_eof())              # what processes.client_gone reads
        self.max_packet = max_packet
        self._packet_bytes = 0
        self._idle_ms = -1 if idle_timeout is None else max(int(idle_timeout * 1000), 1)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._pending = bytearray()     # written, not yet taken by the socket (a client not reading)
        self._pollers: dict[int, Any] = {}      # by the events waited for: the socket's and the wake-up's

    # -- what other threads do ---------------------------------------------------------------
    def wake(self) -> None:
        """Any thread: the loop has work queued (``call_soon_threadsafe``); stop waiting on the socket."""
        try:
            self._wake_w.send(b"\0")
        except OSError:         # full (a wake is pending anyway) or closed (the connection ended)
            pass

    # -- reading (asyncio.StreamReader's methods that MysqlStream calls) ---------------------
    async def read(self, n: int = -1) -> bytes:
        """mysql-mimic reads a packet header with ``read(4)``: all 4 bytes, or b"" at the end."""
        try:
            return await self.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""

    async def readexactly(self, n: int) -> bytes:
        buffer = self.buffer
        while len(buffer) < n:
            if not await self._receive():
                self._eof = True
                raise asyncio.IncompleteReadError(bytes(buffer), n)
        data = bytes(buffer[:n])
        del buffer[:n]
        if n == 4:
            self._packet_bytes = check_header(data, self._packet_bytes, self.max_packet)
        return data

    async def _receive(self) -> bool:
        """More bytes into the buffer; False at the end of the stream."""
        while True:
            if self.is_closing():
                return False
            try:
                chunk = self.sock.recv(RECV_BYTES)
            except (BlockingIOError, InterruptedError):
                await self._wait(READABLE, self._idle_ms, IdleTimeout)
                continue
            except OSError:                 # reset by the peer, or closed under us
                return False
            if not chunk:
                return False
            self.buffer += chunk
            return True

    async def _wait(self, events: int, timeout_ms: int, expired: type[Exception] | None) -> None:
        """Until the socket is ready for ``events`` or another thread wakes the connection (then the
        loop runs what it queued: a cancelled task is cancelled here)."""
        poller = self._pollers.get(events)
        if poller is None:
            poller = self._pollers[events] = select.poll()
            poller.register(self.sock.fileno(), events)
            poller.register(self._wake_r.fileno(), READABLE)
        ready = poller.poll(timeout_ms)     # this client's thread only: nothing else waits on it
        if not ready and expired is not None:
            raise expired("The client was disconnected by the server because of inactivity")
        if any(fd == self._wake_r.fileno() for fd, _ in ready):
            try:
                while self._wake_r.recv(64):
                    pass
            except OSError:
                pass
            await asyncio.sleep(0)

    def at_eof(self) -> bool:
        return self._eof and not self.buffer

    # -- writing (asyncio.StreamWriter's) -----------------------------------------------------
    def write(self, data: Any) -> None:
        if self.is_closing():
            raise ConnectionResetError("the connection is closing")
        if self._pending:
            self._pending += data
            return
        view = memoryview(data)
        try:
            sent = self.sock.send(view)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            raise ConnectionResetError(str(exc)) from None
        if sent < len(view):
            self._pending += view[sent:]

    async def drain(self) -> None:
        """What the socket did not take yet, sent as the client reads (as asyncio's drain waits)."""
        while self._pending:
            if self.is_closing():
                raise ConnectionResetError("the connection is closing")
            try:
                sent = self.sock.send(self._pending)
            except (BlockingIOError, InterruptedError):
                await self._wait(WRITABLE, -1, None)
                continue
            except OSError as exc:
                raise ConnectionResetError(str(exc)) from None
            del self._pending[:sent]

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def close(self) -> None:
        """On the connection's loop (app.py's stop queues it there): the transport closes the socket."""
        self.transport.close()

    def release(self) -> None:
        """The connection has ended: the wake-up pair goes."""
        self._wake_r.close()
        self._wake_w.close()
