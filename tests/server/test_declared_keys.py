"""Keys declared MySQL's way over ``tessera serve`` (issue 36): a key named ``id`` keeps every value it
is given (0 included) through PyMySQL's execute and executemany, and a repeat is MySQL's 1062 naming
PRIMARY, as the mariadb client shows it."""
from __future__ import annotations

import pymysql
import pytest

from tests.server.support import connect, mariadb


def test_a_key_named_id_keeps_zero_over_the_wire(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE b (id int PRIMARY KEY, body text)")
        cur.execute("INSERT INTO b (id, body) VALUES (0, 'zero'), (5, 'five')")
        cur.execute("SELECT id, body FROM b ORDER BY id")
        assert cur.fetchall() == ((0, "zero"), (5, "five"))
        cur.execute("CREATE TABLE notes (id bigint NOT NULL PRIMARY KEY, body text)")
        cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", [(0, "a"), (1, "b"), (2, "c")])
        cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", [(3, "d"), (4, "e")])
        cur.execute("SELECT id, body FROM notes ORDER BY id")
        assert cur.fetchall() == ((0, "a"), (1, "b"), (2, "c"), (3, "d"), (4, "e"))
        with pytest.raises(pymysql.err.IntegrityError) as info:
            cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", [(5, "f"), (2, "again")])
        assert info.value.args == (1062, "Duplicate entry '2' for key 'PRIMARY'")
        cur.execute("SELECT count(*) FROM notes")
        assert cur.fetchone() == (5,)                   # the failed batch changed nothing
    shown = mariadb(server.port, sql="INSERT INTO b (id, body) VALUES (0, 'again');\n")
    assert "ERROR 1062 (23000)" in shown.stderr and "Duplicate entry '0' for key 'PRIMARY'" in shown.stderr
