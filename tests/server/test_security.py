"""Who can connect, how, and what the server refuses to do."""
from __future__ import annotations

import socket
import ssl
import subprocess
import time

import pymysql
import pytest

import tesseradb
from tesseradb.clients.server import ConfigError
from tests.server.support import SERVE, connect, mariadb


@pytest.fixture
def guarded(db_file):
    srv = tesseradb.serve(db_file, port=0, user="app", password="s3cret 'pw'", background=True)
    yield srv
    srv.stop()


# -- passwords ----------------------------------------------------------------------------------------
def test_right_password_connects(guarded):
    with connect(guarded.port, password="s3cret 'pw'") as c, c.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)


@pytest.mark.parametrize("user, password", [("app", "wrong"), ("app", ""), ("root", "s3cret 'pw'")])
def test_wrong_password_or_user_is_denied(guarded, user, password):
    with pytest.raises(pymysql.err.OperationalError) as info:
        connect(guarded.port, user=user, password=password)
    assert info.value.args[0] == 1045
    assert info.value.sqlstate == "28000"


def test_mariadb_cli_with_password(guarded):
    ok = mariadb(guarded.port, "-B", "-psecret-is-wrong", sql="SELECT 1;")
    assert ok.returncode == 1 and "ERROR 1045 (28000)" in ok.stderr
    good = mariadb(guarded.port, "-B", "-ps3cret 'pw'", sql="SELECT 1 AS one;", check=True)
    assert good.stdout.splitlines() == ["one", "1"]


def test_without_a_password_only_an_empty_one_is_accepted(server):
    with pytest.raises(pymysql.err.OperationalError) as info:
        connect(server.port, password="anything")
    assert info.value.args[0] == 1045


# -- binding -------------------------------------------------------------------------------------------
def test_non_loopback_without_password_is_refused(db_file):
    with pytest.raises(ConfigError, match="refusing to listen on 0.0.0.0 without a password"):
        tesseradb.serve(db_file, host="0.0.0.0", port=0, background=True)


def test_cli_refuses_non_loopback_without_password(db_file):
    result = subprocess.run(SERVE + [db_file, "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a password" in result.stderr
    assert "--password-file" in result.stderr


def test_cli_password_file(start_process, db_file, tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("from-a-file\n")
    proc = start_process(db_file, "--user", "app", "--password-file", str(secret))
    with connect(proc.port, password="from-a-file") as c, c.cursor() as cur:
        cur.execute("SELECT 2")
        assert cur.fetchall() == ((2,),)
    with pytest.raises(pymysql.err.OperationalError):
        connect(proc.port, password="from-a-file\n")


def test_memory_database_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="needs a database file"):
        tesseradb.serve(":memory:", port=0, background=True)


# -- TLS -----------------------------------------------------------------------------------------------
@pytest.fixture
def certificate(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


@pytest.fixture
def tls_server(db_file, certificate):
    cert, key = certificate
    srv = tesseradb.serve(db_file, port=0, ssl_cert=cert, ssl_key=key, user="app", password="pw",
                          background=True)
    yield srv
    srv.stop()


def test_pymysql_uses_tls_when_offered(tls_server):
    with connect(tls_server.port, password="pw") as c:     # PyMySQL starts TLS on its own
        assert isinstance(c._sock, ssl.SSLSocket)


def test_pymysql_over_tls_verifies_the_certificate(tls_server, certificate):
    cert, _ = certificate
    with connect(tls_server.port, password="pw", ssl_ca=cert, ssl_verify_cert=True) as c, c.cursor() as cur:
        assert isinstance(c._sock, ssl.SSLSocket) and c._sock.version() in ("TLSv1.2", "TLSv1.3")
        cur.execute("CREATE TABLE t (s text)")
        cur.execute("INSERT INTO t (s) VALUES (%s)", ("over tls",))
        cur.execute("SELECT s FROM t")
        assert cur.fetchall() == (("over tls",),)


def test_tls_handshake_never_loses_the_client_hello(tls_server, certificate):
    """Clients send their TLS hello right behind the SSLRequest; when both arrive in one read the
    hello must still reach TLS (it used to hang the handshake now and then)."""
    cert, _ = certificate
    for _ in range(60):
        with connect(tls_server.port, password="pw", ssl_ca=cert, read_timeout=20) as c, c.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchall() == ((1,),)


def test_mariadb_cli_over_tls(tls_server, certificate):
    cert, _ = certificate
    result = mariadb(tls_server.port, "-t", "-ppw", "--ssl", f"--ssl-ca={cert}", sql="status", check=True)
    assert "Cipher in use is TLS" in result.stdout


def test_plain_client_still_connects_to_a_tls_server(tls_server):
    with connect(tls_server.port, password="pw", ssl_disabled=True) as c, c.cursor() as cur:
        assert not isinstance(c._sock, ssl.SSLSocket)
        cur.execute("SELECT 1")


# -- limits ---------------------------------------------------------------------------------------------
def test_read_only_refuses_writes(db_file):
    with tesseradb.connect(db_file, autocommit=True) as con:
        con.executescript("CREATE TABLE t (n int); INSERT INTO t (n) VALUES (1);")
        con.close()
    srv = tesseradb.serve(db_file, port=0, read_only=True, background=True)
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute("SELECT n FROM t")
            assert cur.fetchall() == ((1,),)
            for sql in ["INSERT INTO t (n) VALUES (2)", "DROP TABLE t", "CREATE TABLE u (n int)",
                        "UPDATE t SET n = 5", "SELECT n FROM t INTO OUTFILE '/tmp/x.csv'",
                        "WITH x AS (SELECT 1) DELETE FROM t"]:
                with pytest.raises(pymysql.err.MySQLError) as info:
                    cur.execute(sql)
                assert info.value.args[0] == 1290, sql
            cur.execute("SELECT n FROM t")
            assert cur.fetchall() == ((1,),)
    finally:
        srv.stop()


def test_max_connections(db_file):
    srv = tesseradb.serve(db_file, port=0, max_connections=2, background=True)
    try:
        first, second = connect(srv.port), connect(srv.port)
        with pytest.raises(pymysql.err.OperationalError) as info:
            connect(srv.port)
        assert info.value.args[0] == 1040
        first.close()
        third = None
        for _ in range(100):                    # the server notices the close asynchronously
            try:
                third = connect(srv.port)
                break
            except pymysql.err.OperationalError:
                time.sleep(0.05)
        assert third is not None
        third.close()
        second.close()
    finally:
        srv.stop()


def _assert_disconnected(c) -> None:
    """The server has ended ``c``'s connection: its next statement fails with 4031 (the idle
    timeout's error) or 2013 (the connection lost)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        c.cursor().execute("SELECT 1")
    assert info.value.args[0] in (4031, 2013)


def test_idle_client_is_disconnected(db_file):
    srv = tesseradb.serve(db_file, port=0, idle_timeout=0.5, background=True)
    try:
        c = connect(srv.port)
        time.sleep(1.5)
        _assert_disconnected(c)
    finally:
        srv.stop()


def test_silent_socket_is_closed_by_the_idle_timeout(db_file):
    srv = tesseradb.serve(db_file, port=0, idle_timeout=0.5, background=True)
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
            s.recv(4096)                        # the handshake; then say nothing
            data = b"x"
            while data:
                data = s.recv(4096)             # ends (b"") when the server hangs up
    finally:
        srv.stop()


def test_malformed_handshake_does_not_freeze_the_server(server):
    """A handshake response whose user name has no terminating NUL made mysql-mimic's parser spin
    forever on the event loop; it is refused (1835 / closed) and other clients carry on."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.recv(4096)
        payload = (0xFFFFFFFF).to_bytes(4, "little") + bytes(28) + b"no-terminator"
        s.sendall(len(payload).to_bytes(3, "little") + b"\x01" + payload)
        reply = s.recv(4096)
        assert reply[4] == 0xFF and int.from_bytes(reply[5:7], "little") in (1043, 1835)
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)


def test_the_idle_timeout_counts_each_silence_on_its_own(db_file):
    """One timer per connection: a client that speaks more often than the timeout stays connected
    however long it stays, and the first silence longer than the timeout ends it."""
    srv = tesseradb.serve(db_file, port=0, idle_timeout=0.6, background=True)
    try:
        c = connect(srv.port)
        for _ in range(8):                      # 8 x 0.25 s: far past the timeout in all
            time.sleep(0.25)
            with c.cursor() as cur:
                cur.execute("SELECT 1")
                assert cur.fetchall() == ((1,),)
        time.sleep(1.5)
        _assert_disconnected(c)
    finally:
        srv.stop()
