"""Reliability of `tessera serve` under load and abuse (marked stress; bounded, loopback only).

The issue asks for 32 clients for 60 s; CI shares 2 cores with everything else, so the mixed load
runs 32 clients for LOAD_SECONDS (docs/server.md says so). What is checked is exact: every
acknowledged insert is there once, nothing else is, every error a client saw is a MySQL error.
"""
from __future__ import annotations

import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pymysql
import pytest

import tesseradb
from tests.server.support import connect, load_docs

pytestmark = pytest.mark.stress

LOAD_SECONDS = 20.0
CLIENTS = 32
WORDS = ("certificate rotate backup region pasta water index vector shard replica token model "
         "chunk query latency disk memory socket thread commit rollback").split()
QUESTIONS = ["how do I rotate certificates", "where are backups stored", "cooking pasta",
             "what is a replica", "disk latency problems"]
# A busy writer lock (1205) is a clean MySQL error a client may see under write contention.
CLEAN_ERRORS = {1205}


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))).capitalize() + "."


class Client(threading.Thread):
    """One client: a mix of inserts (embedded by the server) and knn text queries until the deadline."""

    def __init__(self, port: int, number: int, deadline: float, stop_on_disconnect: bool = False):
        super().__init__(daemon=True)
        self.port, self.number, self.deadline = port, number, deadline
        self.stop_on_disconnect = stop_on_disconnect
        self.acknowledged: list[str] = []
        self.failed: list[str] = []
        self.mysql_errors: list[int] = []
        self.other_errors: list[BaseException] = []
        self.queries = 0

    def run(self) -> None:
        rng = random.Random(self.number)
        try:
            con = connect(self.port, read_timeout=120)
        except pymysql.err.MySQLError as exc:
            self.other_errors.append(exc)
            return
        seq = 0
        with con:
            cur = con.cursor()
            while time.monotonic() < self.deadline:
                try:
                    if rng.random() < 0.5:
                        seq += 1
                        title = f"c{self.number}-{seq}"
                        body = " ".join(_sentence(rng) for _ in range(rng.randint(1, 4)))
                        try:
                            cur.execute("INSERT INTO docs (title, body, tag) VALUES (%s, %s, 'load')",
                                        (title, body))
                        except pymysql.err.MySQLError:
                            self.failed.append(title)
                            raise
                        self.acknowledged.append(title)
                    else:
                        cur.execute("SELECT id, title FROM docs WHERE knn(chunks, 3, %s)",
                                    (rng.choice(QUESTIONS),))
                        assert len(cur.fetchall()) <= 3
                        self.queries += 1
                except pymysql.err.MySQLError as exc:
                    self.mysql_errors.append(exc.args[0])
                    if self.stop_on_disconnect and exc.args[0] >= 2000:
                        return
                except BaseException as exc:  # noqa: BLE001 - reported by the test
                    self.other_errors.append(exc)
                    return


def _titles(port: int) -> list[str]:
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT title FROM docs WHERE tag = 'load'")
        return [r[0] for r in cur.fetchall()]


def test_concurrent_clients_lose_and_duplicate_nothing(start_process, db_file):
    proc = start_process(db_file)
    load_docs(proc.port)
    deadline = time.monotonic() + LOAD_SECONDS
    clients = [Client(proc.port, n, deadline) for n in range(CLIENTS)]
    for c in clients:
        c.start()
    for c in clients:
        c.join(timeout=LOAD_SECONDS + 300)
    assert all(not c.is_alive() for c in clients)
    assert [e for c in clients for e in c.other_errors] == []
    assert set(e for c in clients for e in c.mysql_errors) <= CLEAN_ERRORS
    acknowledged = [t for c in clients for t in c.acknowledged]
    failed = {t for c in clients for t in c.failed}
    stored = _titles(proc.port)
    queries = sum(c.queries for c in clients)
    print(f"{CLIENTS} clients, {LOAD_SECONDS:.0f} s: {len(acknowledged)} inserts, {queries} knn queries, "
          f"MySQL errors {sorted(e for c in clients for e in c.mysql_errors)}")
    assert len(acknowledged) > CLIENTS and queries > CLIENTS
    assert sorted(stored) == sorted(acknowledged)          # none lost, none duplicated
    assert not failed & set(stored)                        # a failed insert left nothing
    with connect(proc.port) as c, c.cursor() as cur:       # every stored row is searchable
        cur.execute("SELECT COUNT(*) FROM docs WHERE knn(chunks, 100000, 'anything at all')")
        assert cur.fetchall()[0][0] == len(stored) + 3
    code, err = proc.stop(signal.SIGTERM)
    assert code == 0, err


KILLED_CLIENT = """
import sys, time, pymysql
c = pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="app", database="docs")
cur = c.cursor()
cur.execute("BEGIN")
cur.execute("INSERT INTO docs (title, body, tag) VALUES ('half-done', 'never committed', 'ghost')")
print("inserted", flush=True)
time.sleep(600)
"""


def test_client_killed_mid_transaction_leaves_nothing(server):
    load_docs(server.port)
    child = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, str(server.port)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "inserted"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("INSERT INTO docs (title, body, tag) VALUES ('after', 'the lock is free', 'x')")
        cur.execute("SELECT COUNT(*) FROM docs WHERE tag = 'ghost'")
        assert cur.fetchall() == ((0,),)


def test_server_killed_mid_load_keeps_every_acknowledged_commit(start_process, db_file):
    proc = start_process(db_file)
    load_docs(proc.port)
    deadline = time.monotonic() + 120
    clients = [Client(proc.port, n, deadline, stop_on_disconnect=True) for n in range(8)]
    for c in clients:
        c.start()
    while sum(len(c.acknowledged) for c in clients) < 40:
        time.sleep(0.05)
    proc.stop(signal.SIGKILL)
    for c in clients:
        c.join(timeout=120)
    assert [e for c in clients for e in c.other_errors] == []
    acknowledged = {t for c in clients for t in c.acknowledged}
    restarted = start_process(db_file)
    stored = _titles(restarted.port)
    assert len(stored) == len(set(stored))
    assert acknowledged <= set(stored)
    assert len(set(stored) - acknowledged) <= len(clients)     # at most the one in flight per client
    with connect(restarted.port) as c, c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM docs WHERE knn(chunks, 100000, 'rotate')")
        assert cur.fetchall()[0][0] == len(stored) + 3


# -- malformed and oversized packets -------------------------------------------------------------------
def _packet(payload: bytes, seq: int) -> bytes:
    return struct.pack("<I", len(payload) | (seq << 24)) + payload


def _drain(sock: socket.socket) -> None:
    sock.settimeout(5)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, ConnectionError):
        pass


FUZZ_CASES = 150


def test_malformed_and_oversized_packets_never_crash_it(db_file):
    srv = tesseradb.serve(db_file, port=0, idle_timeout=2, max_packet=64 * 1024, background=True)
    rng = random.Random(15)
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute("CREATE TABLE t (s text, n int)")
        for case in range(FUZZ_CASES):
            kind = case % 5
            if kind == 0:                       # garbage instead of a handshake response
                with socket.create_connection(("127.0.0.1", srv.port)) as s:
                    s.recv(4096)
                    s.sendall(_packet(rng.randbytes(rng.randint(0, 200)), 1))
                    _drain(s)
            elif kind == 1:                     # raw garbage, not even framed
                with socket.create_connection(("127.0.0.1", srv.port)) as s:
                    s.recv(4096)
                    s.sendall(rng.randbytes(rng.randint(1, 300)))
                    s.shutdown(socket.SHUT_WR)
                    _drain(s)
            else:                               # after login: a random command, a broken execute, too big
                c = connect(srv.port)
                sock = c._sock
                if kind == 2:
                    payload = bytes([rng.randint(0, 0x20)]) + rng.randbytes(rng.randint(0, 100))
                elif kind == 3:
                    payload = b"\x17" + struct.pack("<I", rng.randint(0, 3)) + rng.randbytes(rng.randint(0, 40))
                else:
                    sock.sendall(struct.pack("<I", 0xFFFFFF) + b"\x03" + b"x" * 1000)
                    _drain(sock)
                    c._sock = None
                    continue
                sock.sendall(_packet(payload, 0))
                sock.settimeout(5)
                try:
                    sock.recv(65536)
                except (socket.timeout, ConnectionError):
                    pass
                sock.close()
        with connect(srv.port) as c, c.cursor() as cur:     # still serving, still correct
            cur.execute("INSERT INTO t (s, n) VALUES (%s, %s)", ("alive", 1))
            cur.execute("SELECT s FROM t")
            assert cur.fetchall() == (("alive",),)
        deadline = time.monotonic() + 30
        while srv.server.clients and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not srv.server.clients           # every broken connection was cleaned up
    finally:
        srv.stop()


def test_oversized_packet_gets_error_1153(db_file):
    srv = tesseradb.serve(db_file, port=0, max_packet=64 * 1024, background=True)
    try:
        c = connect(srv.port)
        with pytest.raises(pymysql.err.MySQLError) as info:
            c.cursor().execute("SELECT '" + "x" * (128 * 1024) + "'")
        assert info.value.args[0] in (1153, 2013)
        with connect(srv.port) as ok, ok.cursor() as cur:
            cur.execute("SELECT '" + "y" * 1000 + "' AS s")
            assert len(cur.fetchall()[0][0]) == 1000
    finally:
        srv.stop()


def test_slow_client_times_out(db_file):
    srv = tesseradb.serve(db_file, port=0, idle_timeout=0.5, background=True)
    try:
        c = connect(srv.port)
        sock = c._sock
        sock.sendall(struct.pack("<I", 100)[:3] + b"\x00")  # a 100-byte packet announced...
        sock.settimeout(30)
        try:
            for _ in range(60):                 # ...then trickled, a byte every 0.2 s
                sock.sendall(b"\x03")
                time.sleep(0.2)
            closed = False
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        if not closed:
            _drain(sock)
        deadline = time.monotonic() + 30
        while srv.server.clients and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not srv.server.clients
    finally:
        srv.stop()


def test_many_idle_clients_are_all_disconnected(db_file):
    srv = tesseradb.serve(db_file, port=0, idle_timeout=0.5, background=True)
    try:
        idle = [connect(srv.port) for _ in range(20)]
        deadline = time.monotonic() + 30
        while srv.server.clients and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not srv.server.clients
        for c in idle:
            with pytest.raises(pymysql.err.MySQLError):
                c.cursor().execute("SELECT 1")
    finally:
        srv.stop()
