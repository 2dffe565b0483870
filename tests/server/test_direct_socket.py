"""After the handshake a plain-TCP client's socket is read and written by its own thread
(engine/clients/server/direct_socket.py); TLS stays on asyncio's transport. What a client relies on
must hold either way: packets that arrive together or in pieces, a long statement that stalls no
other client, KILL and the server's stop reaching a client that waits for its next command."""
from __future__ import annotations

import struct

import pymysql
import pytest

import tesseradb
from tests.server.support import FOREVER, connect, processlist, run_forever, wait_for



@pytest.fixture
def unlimited(db_file):
    srv = tesseradb.serve(db_file, port=0, max_execution_time=0, background=True)
    yield srv
    srv.stop()


def _streams(srv) -> list:
    return [client.conn.stream for client in list(srv.server.clients.values())]


def _packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload) | seq << 24) + payload


def _read_packet(sock) -> bytes:
    header = b""
    while len(header) < 4:
        header += sock.recv(4 - len(header))
    length = struct.unpack("<I", header)[0] & 0xFFFFFF
    data = b""
    while len(data) < length:
        data += sock.recv(length - len(data))
    return data


def test_a_plain_connection_moves_to_its_thread(unlimited):
    with connect(unlimited.port) as c, c.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)
        streams = _streams(unlimited)
        assert len(streams) == 1 and streams[0].direct is not None


def test_commands_sent_together_or_byte_by_byte(unlimited):
    """Two commands in one segment are two commands; a command trickling in byte by byte is one."""
    with connect(unlimited.port) as c:
        sock = c._sock
        sock.sendall(_packet(0, b"\x0e") + _packet(0, b"\x0e"))           # COM_PING, COM_PING
        assert _read_packet(sock)[0] == 0x00 and _read_packet(sock)[0] == 0x00
        for byte in _packet(0, b"\x03SELECT 41 + 1"):                       # COM_QUERY
            sock.sendall(bytes([byte]))
        assert _read_packet(sock) == b"\x01"                                # one column
        _read_packet(sock)                                                  # its definition
        row = _read_packet(sock)
        if row[0] == 0xFE and len(row) < 9:                                 # the EOF before the rows
            row = _read_packet(sock)
        assert row == b"\x0242"
        assert _read_packet(sock)[0] == 0xFE                                # the end of the rows
        with c.cursor() as cur:
            cur.execute("SELECT 'still in step'")
            assert cur.fetchall() == (("still in step",),)


def test_a_long_statement_stalls_only_its_own_client(unlimited):
    busy = connect(unlimited.port, user="busy")
    worker, outcome = run_forever(busy)
    try:
        wait_for(lambda: any(r[7] == FOREVER for r in processlist(unlimited.port)))
        with connect(unlimited.port) as other, other.cursor() as cur:      # a new client, while it runs
            for n in range(20):
                cur.execute("SELECT %s", (n,))
                assert cur.fetchall() == ((n,),)
            cur.execute("SHOW PROCESSLIST")
            assert any(r[7] and r[7].startswith("WITH RECURSIVE") for r in cur.fetchall())   # still running
            cur.execute(f"KILL QUERY {busy.thread_id()}")
        worker.join(30)
        assert not worker.is_alive() and outcome == {"errno": 1317}
    finally:
        busy.close()



def test_kill_connection_reaches_a_client_waiting_for_its_next_command(unlimited):
    victim = connect(unlimited.port, user="victim", read_timeout=30)
    try:
        with connect(unlimited.port) as c, c.cursor() as cur:
            cur.execute(f"KILL CONNECTION {victim.thread_id()}")
        wait_for(lambda: all(r[1] != "victim" for r in processlist(unlimited.port)))
        with pytest.raises(pymysql.err.MySQLError) as info:
            victim.cursor().execute("SELECT 1")
        assert info.value.args[0] in (1927, 2013, 2006)     # killed, or the connection lost
    finally:
        victim.close()


def test_stop_ends_clients_waiting_for_their_next_command(db_file):
    srv = tesseradb.serve(db_file, port=0, background=True)
    idle = [connect(srv.port, read_timeout=30) for _ in range(3)]
    with idle[0].cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
        cur.execute("BEGIN")
        cur.execute("INSERT INTO t (n) VALUES (1)")
    srv.stop()
    assert srv.server.clients == {}                       # every client's thread has ended
    for c in idle:
        with pytest.raises(pymysql.err.MySQLError):
            c.cursor().execute("SELECT 1")
        c.close()
    with tesseradb.connect(db_file) as con:
        assert con.execute("SELECT n FROM t").fetchall() == []    # the open transaction rolled back
