"""Structure checks for the client packets whose mysql-mimic parsers can hang on bad input.

mysql-mimic reads NUL-terminated strings with a loop that never ends when the data runs out before
a NUL (``types.read_str_null``: ``reader.read(1)`` returns ``b""`` forever). It runs on the event
loop, so one such packet from any client stopped the server for everyone. These walks follow the
same layouts as mysql-mimic's parsers (packets.py) and raise :class:`Malformed` (MySQL's error 1835)
before a parser would read past the end. Fields the parsers read with a length check fine alone.
"""
from __future__ import annotations

from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.types import Capabilities


class Malformed(MysqlError):
    def __init__(self, what: str):
        super().__init__(f"Malformed packet: {what}", ErrorCode.MALFORMED_PACKET)


class Walk:
    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def fixed(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise Malformed(self.what)
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def uint(self, n: int) -> int:
        return int.from_bytes(self.fixed(n), "little")

    def cstr(self) -> None:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise Malformed(self.what)
        self.pos = end + 1

    def lenenc(self) -> int:
        first = self.uint(1)
        return {0xFC: lambda: self.uint(2), 0xFD: lambda: self.uint(3), 0xFE: lambda: self.uint(8)}.get(
            first, lambda: first)()

    @property
    def more(self) -> bool:
        return self.pos < len(self.data)


def handshake_response(data: bytes, server_capabilities: int) -> str:
    """'ssl' for an SSLRequest, 'full' for a complete handshake response; raises Malformed."""
    w = Walk(data, "handshake response")
    caps = Capabilities(w.uint(4)) & Capabilities(server_capabilities)
    w.fixed(4 + 1 + 23)                 # max packet size, character set, filler
    if not w.more:
        return "ssl"
    w.cstr()                            # user name
    if Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA in caps:
        w.fixed(w.lenenc())
    else:
        w.fixed(w.uint(1))
    if Capabilities.CLIENT_CONNECT_WITH_DB in caps:
        w.cstr()
    if Capabilities.CLIENT_PLUGIN_AUTH in caps:
        w.cstr()
    return "full"


def change_user(data: bytes, capabilities: int) -> None:
    w = Walk(data, "COM_CHANGE_USER")
    caps = Capabilities(capabilities)
    w.cstr()                            # user name
    if Capabilities.CLIENT_SECURE_CONNECTION in caps:
        w.fixed(w.uint(1))
    else:
        w.cstr()
    w.cstr()                            # database
    if w.more:
        if Capabilities.CLIENT_PROTOCOL_41 in caps:
            w.fixed(2)
        if Capabilities.CLIENT_PLUGIN_AUTH in caps:
            w.cstr()


def field_list(data: bytes) -> None:
    Walk(data, "COM_FIELD_LIST").cstr()
