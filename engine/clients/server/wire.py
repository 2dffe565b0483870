"""The socket side: a stream reader that bounds what one client can make the server wait for or hold.

mysql-mimic's packet reader waits forever for the next packet and joins continuation packets without
a limit. :class:`GuardedReader` is the ``asyncio.StreamReader`` it reads from: every wait is bounded by
the idle timeout (MySQL's ``wait_timeout``) and a packet longer than ``max_packet`` bytes is refused
before its payload is read (MySQL's ``max_allowed_packet``). It watches the 4-byte packet headers as
mysql-mimic reads them, so the protocol code stays mysql-mimic's.
"""
from __future__ import annotations

import asyncio
import socket
import struct

from mysql_mimic import packets

from tesseradb.clients.server import checks


class IdleTimeout(Exception):
    """The client sent nothing for longer than the idle timeout."""


class PacketTooLarge(Exception):
    """The client announced a packet longer than max_allowed_packet."""


CONTINUED = 0xFFFFFF        # a payload of this length continues in the next packet


class GuardedReader(asyncio.StreamReader):
    def __init__(self, *, idle_timeout: float | None, max_packet: int, **kwargs):
        super().__init__(**kwargs)
        self.idle_timeout = idle_timeout
        self.max_packet = max_packet
        self._packet_bytes = 0          # payload announced so far for the packet being read

    async def _bounded(self, waiter):
        """Await a read; when the idle timeout passes first, the read fails with IdleTimeout. A timer
        rather than ``asyncio.wait_for``: a wrapping task would add loop turns between reading the
        TLS request and starting TLS, and the client's first TLS bytes would land in the plain buffer."""
        if self.idle_timeout is None:
            return await waiter
        timer = asyncio.get_running_loop().call_later(self.idle_timeout, self.set_exception, IdleTimeout())
        try:
            return await waiter
        finally:
            timer.cancel()

    async def read(self, n: int = -1) -> bytes:
        """mysql-mimic reads a packet header with ``read(4)``, which may return part of it: read all 4
        (or nothing, at the end of the stream)."""
        if n != 4:
            return await self._bounded(super().read(n))
        try:
            return await self.readexactly(4)
        except asyncio.IncompleteReadError:
            return b""

    async def readexactly(self, n: int) -> bytes:
        if len(self._buffer) >= n:      # already here: no wait to bound (a packet's payload, mostly)
            data = await super().readexactly(n)
        else:
            data = await self._bounded(super().readexactly(n))
        if n == 4:
            self._packet_bytes = check_header(data, self._packet_bytes, self.max_packet)
        return data


def check_header(header: bytes, so_far: int, max_packet: int) -> int:
    """A packet header read: the payload announced so far for the packet being read (0 when this
    piece ends it); PacketTooLarge past ``max_packet`` bytes, before the payload is read."""
    length = struct.unpack("<I", header)[0] & 0xFFFFFF
    so_far += length
    if so_far > max_packet:
        raise PacketTooLarge(f"Got a packet bigger than 'max_allowed_packet' bytes ({max_packet})")
    return so_far if length == CONTINUED else 0


def listening_sockets(host: str, port: int, backlog: int = 100) -> list[socket.socket]:
    """Sockets listening on every address ``host`` resolves to, as ``loop.create_server`` binds them
    (SO_REUSEADDR, IPv6 sockets IPv6-only). Their connections are accepted on the server's event loop
    and each served on a thread and event loop of its own (app.py)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


# its socket, its loop's epoll and wake-up pair, direct_socket's wake-up pair, the engine connection's files
DESCRIPTORS_PER_CLIENT = 10


def enough_descriptors(max_connections: int, spare: int = 256) -> None:
    """Raise the soft limit on open files, up to the hard one, to what ``max_connections`` clients
    need (as mysqld does at start-up: open_files_limit); a limit already high enough stays."""
    try:
        import resource
    except ImportError:                 # not on this platform
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = spare + DESCRIPTORS_PER_CLIENT * max_connections
    if soft == resource.RLIM_INFINITY or soft >= want:
        return
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):   # not allowed here: clients beyond the limit get an error
            pass


async def open_stream(sock: socket.socket, *, idle_timeout: float | None, max_packet: int
                      ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """An accepted connection as a stream on the running loop, :class:`GuardedReader` its reader."""
    loop = asyncio.get_running_loop()
    reader = GuardedReader(idle_timeout=idle_timeout, max_packet=max_packet, limit=2 ** 16, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


class GuardedStream:
    """mysql-mimic's ``MysqlStream``, with two fixes.

    - Packets are checked before mysql-mimic parses them where its parser can loop forever: its
      ``read_str_null`` spins at the end of the data when a NUL-terminated field has no NUL, which
      froze the whole server on one malformed handshake (found by tests/server/test_stress.py).
    - Packets of 16 MiB or more are split (MySQL's 0xFFFFFF-byte pieces, an empty one after an exact
      multiple). mysql-mimic's ``write`` splits, but its fast paths for result rows and header
      packets (``write_text_rows``, ``write_many``) wrote the length into 3 bytes unchecked: a value
      of 16 MiB or more came back as "Packet sequence number wrong" (PyMySQL) or error 2027 (mariadb).
    - ``start_tls`` does not lose the client's first TLS bytes. A client sends its TLS hello right
      after the SSLRequest packet, without waiting; when both arrive in one read they sit in the
      plain-text reader's buffer, the TLS layer never sees the hello, and the handshake hangs until
      the client gives up (mysql-mimic's start_tls, and asyncio's, only read from the socket).

    Everything else is the wrapped stream's."""

    def __init__(self, inner, capabilities: int, sock: socket.socket | None = None):
        self._inner = inner
        self.capabilities = capabilities
        self.expect_handshake = True
        self.sock = sock                # the accepted socket (direct_socket.py reads it after the handshake)
        self.direct = None              # its DirectSocket, once the connection moved to it
        # called for every command: the wrapped stream's own methods, not found through __getattr__
        self.write, self.drain, self.reset_seq = inner.write, inner.drain, inner.reset_seq

    def wake(self) -> None:
        """Any thread, after queuing work on the connection's loop: a direct read stops waiting."""
        direct = self.direct
        if direct is not None:
            direct.wake()

    def release(self) -> None:
        if self.direct is not None:
            self.direct.release()

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def write_many(self, packets_: list[bytes]) -> None:
        small: list[bytes] = []
        for packet in packets_:
            if len(packet) < CONTINUED:
                small.append(packet)
                continue
            self._inner.write_many(small)
            small = []
            self._inner.write_many(split(packet))
        self._inner.write_many(small)

    def write_text_rows(self, rows, columns) -> int:
        """mysql-mimic's row serializer for ordinary rows; a row that may reach 16 MiB is serialized
        on its own and split (none can when all the batch's text together is shorter: one pass)."""
        if _text_length(rows) <= LARGE_ROW:
            return self._inner.write_text_rows(rows, columns)
        plain: list = []
        for row in rows:
            if not _maybe_large(row):
                plain.append(row)
                continue
            if plain:
                self._inner.write_text_rows(plain, columns)
                plain = []
            self.write_many([packets.make_text_resultset_row(row, columns)])
        if plain:
            self._inner.write_text_rows(plain, columns)
        return len(rows)

    async def read(self) -> bytes:
        data = await self._inner.read()
        if self.expect_handshake:
            self.expect_handshake = checks.handshake_response(data, self.capabilities) == "ssl"
        return data

    async def start_tls(self, context) -> None:
        reader, writer = self._inner.reader, self._inner.writer
        early = bytes(reader._buffer)
        reader._buffer.clear()
        transport = writer.transport
        loop = asyncio.get_running_loop()
        if early:
            # start_tls installs the TLS protocol, then queues its connection_made; hand it the early
            # bytes one loop turn later, after connection_made and before any more socket data.
            loop.call_soon(loop.call_soon, _feed, transport, early)
        protocol = transport.get_protocol()
        tls = await loop.start_tls(transport, protocol, context, server_side=True)
        writer._transport = tls
        reader._transport = tls
        protocol._over_ssl = True       # as if it had connected over TLS: no warning at the client's EOF


LARGE_ROW = CONTINUED // 4 - 1024        # UTF-8 takes at most 4 bytes per character


_TEXT = (str, bytes, bytearray)


def _maybe_large(row) -> bool:
    return sum(len(v) for v in row if isinstance(v, _TEXT)) > LARGE_ROW


def _text_length(rows) -> int:
    return sum(len(v) for row in rows for v in row if isinstance(v, _TEXT))


def split(payload: bytes) -> list[bytes]:
    """A payload as MySQL packets carry it: 0xFFFFFF-byte pieces, then the rest (empty when the
    payload is an exact multiple: the reader stops at the first piece shorter than 0xFFFFFF)."""
    pieces = [payload[i:i + CONTINUED] for i in range(0, len(payload), CONTINUED)]
    if len(pieces[-1]) == CONTINUED:
        pieces.append(b"")
    return pieces


def _feed(transport, data: bytes) -> None:
    protocol = transport.get_protocol()             # the TLS protocol start_tls installed
    while data:
        view = protocol.get_buffer(len(data))
        n = min(len(view), len(data))
        view[:n] = data[:n]
        protocol.buffer_updated(n)
        data = data[n:]
