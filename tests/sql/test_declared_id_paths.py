"""A key named ``id`` declared MySQL's way keeps 0 on the paths a .test file cannot drive: DB-API
executemany (one batch) and LOAD DATA from a file; a repeat is ``Duplicate entry 'v' for key 'PRIMARY'``
there too, and the failed statement changes nothing (issue 36)."""
from __future__ import annotations

import pytest

import tesseradb


@pytest.fixture
def cur(tmp_path):
    con = tesseradb.connect(str(tmp_path / "t.db"))
    yield con.cursor()
    con.close()


def test_executemany_keeps_zero_and_the_next_batch_goes_on(cur):
    cur.execute("CREATE TABLE notes (id int PRIMARY KEY, body text)")
    cur.executemany("INSERT INTO notes (id, body) VALUES (?, ?)", [(0, "a"), (1, "b"), (2, "c")])
    cur.executemany("INSERT INTO notes (id, body) VALUES (?, ?)", [(3, "d")])
    cur.execute("SELECT id, body FROM notes ORDER BY id")
    assert cur.fetchall() == [(0, "a"), (1, "b"), (2, "c"), (3, "d")]
    with pytest.raises(tesseradb.IntegrityError, match=r"^ERROR 1062 \(23000\): Duplicate entry '1' for key 'PRIMARY'$"):
        cur.executemany("INSERT INTO notes (id, body) VALUES (?, ?)", [(4, "e"), (1, "again")])
    cur.execute("SELECT count(*) FROM notes")
    assert cur.fetchone() == (4,)


def test_load_data_keeps_zero_and_names_the_repeat(cur, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("0,zero\n7,seven\n")
    cur.execute("CREATE TABLE t (id bigint NOT NULL, body text, PRIMARY KEY (id))")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ','")
    cur.execute("SELECT id, body FROM t ORDER BY id")
    assert cur.fetchall() == [(0, "zero"), (7, "seven")]
    path.write_text("8,eight\n0,again\n")
    with pytest.raises(tesseradb.IntegrityError, match=r"line 2: Duplicate entry '0' for key 'PRIMARY'$"):
        cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ','")
    cur.execute("SELECT count(*) FROM t")
    assert cur.fetchone() == (2,)
    cur.execute(f"LOAD DATA INFILE '{path}' IGNORE INTO TABLE t FIELDS TERMINATED BY ','")
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == [("Warning", 1062, "Duplicate entry '0' for key 'PRIMARY'")]
