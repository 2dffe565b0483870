"""The client's character set over the wire (clients/server/charsets.py), with real clients: PyMySQL
(``charset='latin1'``: its handshake's collation, then SET NAMES), mysql-connector-python (its
server-side prepared statements: the binary protocol) and the mariadb command-line client (the raw
bytes it prints). MySQL's latin1 is cp1252: 0x80 is the euro sign; what latin1 cannot hold is '?'."""
from __future__ import annotations

import subprocess

import mysql.connector
import pymysql
import pytest

from tests.server.support import connect

TEXTS = [(1, "café"), (2, "naïve"), (3, "€ 5"), (4, "日本"), (5, "plain")]


@pytest.fixture
def stored(server):
    """A table written by a utf8mb4 client."""
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (body text, data string)")
        cur.executemany("INSERT INTO t (id, body) VALUES (%s, %s)", TEXTS)
        cur.execute("CREATE TABLE names (`crème` text, `日本` text)")     # column names latin1 cannot all hold
        cur.execute("INSERT INTO names (id, `crème`, `日本`) VALUES (1, 'café', '日本')")
    return server


def rows(cur, sql: str, *params) -> list[tuple]:
    cur.execute(sql, params or None)
    return [tuple(r) for r in cur.fetchall()]


def charsetnrs(cur) -> list[int]:
    return [f.charsetnr for f in cur._result.fields]        # what each column definition said


def test_latin1_results_are_latin1_bytes_and_what_it_cannot_hold_is_a_question_mark(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        assert rows(cur, "SELECT id, body FROM t ORDER BY id") == [(1, "café"), (2, "naïve"), (3, "€ 5"),
                                                                  (4, "??"), (5, "plain")]
        assert charsetnrs(cur) == [255, 8]          # the text column: latin1_swedish_ci
        cur.execute("SELECT * FROM names")
        assert [d[0] for d in cur.description] == ["id", "crème", "??"]
        assert cur.fetchall() == ((1, "café", "??"),)


def test_latin1_statement_text_is_stored_as_what_it_says(stored):
    """PyMySQL sends the statement in cp1252 (its latin1): é is 0xE9 and € 0x80, read back as such
    by a utf8mb4 client. Parameters are pasted by PyMySQL into that text, in the same bytes."""
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        cur.execute("INSERT INTO t (id, body) VALUES (10, 'crème brûlée €')")
        cur.execute("INSERT INTO t (id, body) VALUES (%s, %s)", (11, "façade ï"))
        assert rows(cur, "SELECT id FROM t WHERE body = %s", "crème brûlée €") == [(10,)]
    with connect(stored.port) as c, c.cursor() as cur:
        assert rows(cur, "SELECT body FROM t WHERE id >= 10 ORDER BY id") == [("crème brûlée €",), ("façade ï",)]


def test_set_names_switches_both_ways_and_the_kept_headers_follow(stored):
    with connect(stored.port) as c, c.cursor() as cur:
        for charset, japan, number in [("utf8mb4", "日本", 255), ("latin1", "??", 8)] * 2:
            c.set_character_set(charset)
            for _ in range(2):                  # the second run: the connection's kept header packets
                cur.execute("SELECT * FROM names")
                assert cur.fetchall() == ((1, "café", japan),)
                assert [d[0] for d in cur.description] == ["id", "crème", japan]
                assert charsetnrs(cur) == [255, number, number]


def test_blob_columns_are_never_converted(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        assert rows(cur, "SELECT x'c3a9ff00' AS payload") == [(b"\xc3\xa9\xff\x00",)]
        assert charsetnrs(cur) == [63]


def test_results_null_and_binary_convert_nothing(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        cur.execute("SET character_set_results = NULL")
        assert rows(cur, "SELECT @@character_set_results") == [(None,)]
        cur.execute("SELECT body FROM t WHERE id = 1")
        assert cur.fetchall() == (("cafÃ©",),)     # the UTF-8 bytes as stored, read by PyMySQL as cp1252
        assert charsetnrs(cur) == [255]
        cur.execute("SET character_set_results = 'binary'")
        assert rows(cur, "SELECT body FROM t WHERE id = 4") == [("日本".encode(),)]  # bytes: charset 63
        assert charsetnrs(cur) == [63]


def test_show_variables_reports_what_was_set(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        assert dict(rows(cur, "SHOW VARIABLES LIKE 'character_set%'")) == {
            "character_set_client": "latin1", "character_set_connection": "latin1",
            "character_set_results": "latin1", "character_set_database": "utf8mb4",
            "character_set_server": "utf8mb4"}
        assert rows(cur, "SELECT @@collation_connection") == [("latin1_swedish_ci",)]
        cur.execute("SET NAMES Latin1 COLLATE latin1_bin")
        assert rows(cur, "SELECT @@character_set_results, @@collation_connection") == [("latin1", "latin1_bin")]
        cur.execute("SET CHARACTER SET utf8mb4")
        assert dict(rows(cur, "SHOW VARIABLES LIKE 'character_set%'"))["character_set_results"] == "utf8mb4"


def test_the_default_is_utf8mb4_and_stays_so(stored):
    with connect(stored.port) as c, c.cursor() as cur:
        assert dict(rows(cur, "SHOW VARIABLES LIKE 'c%'")) == {
            "character_set_client": "utf8mb4", "character_set_connection": "utf8mb4",
            "character_set_results": "utf8mb4", "character_set_database": "utf8mb4",
            "character_set_server": "utf8mb4", "collation_connection": "utf8mb4_general_ci",
            "collation_database": "utf8mb4_general_ci", "collation_server": "utf8mb4_general_ci"}
        assert rows(cur, "SELECT body FROM t ORDER BY id") == [(b,) for _, b in TEXTS]
        assert charsetnrs(cur) == [255]


@pytest.mark.parametrize("sql, errno, message", [
    ("SET NAMES xyz", 1115, "Unknown character set: 'xyz'"),
    ("SET CHARACTER SET xyz", 1115, "Unknown character set: 'xyz'"),
    ("SET character_set_results = 'xyz'", 1115, "Unknown character set: 'xyz'"),
    ("SET NAMES latin1, character_set_results = 'xyz'", 1115, "Unknown character set: 'xyz'"),
    ("SET NAMES ucs2", 1231, "Variable 'character_set_client' can't be set to the value of 'ucs2'"),
    ("SET character_set_results = 'swe7'", 1231,        # MySQL has it, Python no codec: refused here
     "Variable 'character_set_results' can't be set to the value of 'swe7'"),
    ("SET character_set_client = NULL", 1231, "Variable 'character_set_client' can't be set to the value of 'NULL'"),
    ("SET NAMES latin1 COLLATE utf8mb4_bin", 1253, "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'"),
    ("SET NAMES latin1 COLLATE nope", 1273, "Unknown collation: 'nope'"),
])
def test_a_wrong_name_is_mysqls_error_and_changes_nothing(stored, sql, errno, message):
    with connect(stored.port) as c, c.cursor() as cur:
        before = rows(cur, "SHOW VARIABLES LIKE 'c%'")
        with pytest.raises(pymysql.err.MySQLError) as caught:
            cur.execute(sql)
        assert caught.value.args == (errno, message)
        assert rows(cur, "SHOW VARIABLES LIKE 'c%'") == before
        assert rows(cur, "SELECT body FROM t WHERE id = 4") == [("日本",)]


class HandshakeOnly(pymysql.connections.Connection):
    """PyMySQL, its SET NAMES after connecting left out: the character set is the handshake's only."""

    def set_character_set(self, charset, collation=None):
        self.charset, self.encoding = charset, "cp1252"


def test_the_handshakes_character_set_decides_results_too(stored):
    c = HandshakeOnly(host="127.0.0.1", port=stored.port, user="app", database="docs", autocommit=True,
                      charset="latin1")
    with c, c.cursor() as cur:
        assert rows(cur, "SELECT @@character_set_client, @@character_set_results, @@collation_connection") == \
            [("latin1", "latin1", "latin1_swedish_ci")]
        assert rows(cur, "SELECT body FROM t WHERE id IN (1, 3, 4) ORDER BY id") == [("café",), ("€ 5",), ("??",)]


def test_prepared_statements_convert_the_same(stored):
    """mysql-connector's prepared cursor: COM_STMT_PREPARE/EXECUTE and binary result rows."""
    con = mysql.connector.connect(host="127.0.0.1", port=stored.port, user="app", database="docs",
                                  charset="latin1", autocommit=True)
    try:
        cur = con.cursor(prepared=True)
        cur.execute("SELECT body AS `crème` FROM t WHERE id IN (?, ?, ?) ORDER BY id", (1, 2, 4))
        assert cur.fetchall() == [("café",), ("naïve",), ("??",)]
        assert cur.description[0][0] == "crème" and cur.description[0][8] == 8
        cur.execute("INSERT INTO t (id, body) VALUES (?, ?)", (20, "brûlée"))
        cur.execute("SELECT id FROM t WHERE body = ?", ("brûlée",))
        assert cur.fetchall() == [(20,)]
        cur.execute("SELECT x'c3a9ff00' AS payload FROM t WHERE id = ?", (1,))
        assert [bytes(v) for (v,) in cur.fetchall()] == [b"\xc3\xa9\xff\x00"]
    finally:
        con.close()
    with connect(stored.port) as c, c.cursor() as cur:
        assert rows(cur, "SELECT body FROM t WHERE id = 20") == [("brûlée",)]


def test_the_mariadb_client_prints_latin1_bytes(stored):
    """The command-line client with --default-character-set=latin1 writes what the server sent."""
    cmd = ["mariadb", "--no-defaults", "-h", "127.0.0.1", "-P", str(stored.port), "-u", "app", "-B", "-N",
           "--default-character-set=latin1", "docs"]
    out = subprocess.run(cmd, input="SELECT body FROM t WHERE id <= 4 ORDER BY id;".encode(),
                         capture_output=True, timeout=60, check=True).stdout
    assert out.splitlines() == [b"caf\xe9", b"na\xefve", b"\x80 5", b"??"]


def test_mysqls_latin1_is_cp1252_with_its_five_holes_kept():
    """As MySQL's strings/ctype-latin1.cc: 0x80 is €, the five bytes cp1252 leaves unassigned are
    the C1 controls of the same number, every byte reads back as itself; U+0080 has no byte."""
    from tesseradb.clients.server.charsets import CHARSETS
    latin1 = CHARSETS["latin1"]
    every = bytes(range(256))
    assert latin1.encode(latin1.decode(every)) == every
    assert latin1.decode(b"\x80\x81\x8d\x9f\xe9") == "€\x81\x8dŸé"
    assert latin1.encode("\x80 日本 🚀") == b"? ?? ?"
    assert CHARSETS["utf8mb3"].encode("é🚀") == "é?".encode()      # 3-byte UTF-8 holds no emoji


def test_set_results_to_binary_unquoted_as_mysql_writes_it(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        cur.execute("SET character_set_results = binary")
        assert rows(cur, "SELECT @@character_set_results") == [(b"binary",)]     # 63 on text columns: bytes
        assert rows(cur, "SELECT body FROM t WHERE id = 1") == [("café".encode(),)]
        cur.execute("SET NAMES latin1")
        assert rows(cur, "SELECT body FROM t WHERE id = 1") == [("café",)]
        with pytest.raises(pymysql.err.ProgrammingError) as caught:
            cur.execute("SET character_set_results = (")
        assert caught.value.args[0] == 1064


def test_change_user_takes_the_character_set_its_packet_names(stored):
    con = mysql.connector.connect(host="127.0.0.1", port=stored.port, user="app", database="docs", autocommit=True)
    try:
        for collation, expected in [(8, ("latin1", "latin1", "latin1_swedish_ci")),
                                    (45, ("utf8mb4", "utf8mb4", "utf8mb4_general_ci"))]:
            con.cmd_change_user(username="app", database="docs", charset=collation)
            cur = con.cursor()
            cur.execute("SELECT @@character_set_client, @@character_set_results, @@collation_connection")
            assert tuple(cur.fetchall()[0]) == expected
            cur.close()
    finally:
        con.close()


def test_statements_after_set_names_in_one_query_are_read_in_the_new_set(stored):
    """As MySQL parses a multi-statement query one statement at a time: after SET NAMES latin1, the
    rest of the same bytes is latin1. This utf8mb4 client sends é as C3 A9: latin1 reads 'Ã©'."""
    with connect(stored.port, client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS) as c, c.cursor() as cur:
        cur.execute("INSERT INTO t (id, body) VALUES (30, 'é'); SET NAMES latin1; "
                    "INSERT INTO t (id, body) VALUES (31, 'é'); SET NAMES utf8mb4; "
                    "INSERT INTO t (id, body) VALUES (32, 'é')")
        while cur.nextset():
            pass
        assert rows(cur, "SELECT id, body FROM t WHERE id >= 30 ORDER BY id") == [(30, "é"), (31, "Ã©"), (32, "é")]


def test_field_list_names_come_in_the_results_set(stored):
    """COM_FIELD_LIST (the mysql client's completion; PyMySQL's command, read as it reads a result)."""
    with connect(stored.port, charset="latin1") as c:
        c._execute_command(pymysql.constants.COMMAND.COM_FIELD_LIST, "names\0")
        names = []
        while not (packet := c._read_packet()).is_eof_packet() and not packet.is_ok_packet():
            names.append(pymysql.protocol.FieldDescriptorPacket(packet._data, c.encoding).name)
        assert names == ["id", "crème", "??"]
