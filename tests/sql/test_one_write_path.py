"""Issue 20: one INSERT path for execute and executemany, MySQL's key rules deciding; the same UNIQUE
violation gives the same 1062 text whichever way the row arrives; EXPLAIN names the passes."""
from __future__ import annotations

import pytest

import tesseradb

DUPLICATE = "Duplicate entry 'a@x' for key 'email'"


@pytest.fixture
def cur():
    con = tesseradb.connect(":memory:", autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE people (name string, email varchar(40), UNIQUE KEY email (email))")
    cur.execute("INSERT INTO people (name, email) VALUES ('Ada', 'a@x'), ('Bob', 'b@x')")
    yield cur
    con.close()


def _fails_with_the_1062(cur, sql, params=None, many=None):
    with pytest.raises(tesseradb.IntegrityError) as info:
        cur.executemany(sql, many) if many is not None else cur.execute(sql, params)
    assert info.value.errno == 1062 and info.value.msg.endswith(DUPLICATE), info.value.msg
    assert cur.execute("SELECT name, email FROM people ORDER BY id").fetchall() == [("Ada", "a@x"), ("Bob", "b@x")]


def test_insert_update_executemany_and_load_data_give_the_same_1062(cur, tmp_path):
    _fails_with_the_1062(cur, "INSERT INTO people (name, email) VALUES ('Cy', 'a@x')")
    _fails_with_the_1062(cur, "INSERT INTO people (name, email) VALUES (?, ?)", ("Cy", "a@x"))
    _fails_with_the_1062(cur, "INSERT INTO people (name, email) VALUES (?, ?)", many=[("Cy", "c@x"), ("Di", "a@x")])
    _fails_with_the_1062(cur, "UPDATE people SET email = 'a@x' WHERE name = 'Bob'")
    _fails_with_the_1062(cur, "INSERT INTO people (name, email) SELECT 'Cy', email FROM people WHERE name = 'Ada'")
    path = tmp_path / "people.csv"
    path.write_text("name,email\nCy,c@x\nDi,a@x\n")
    _fails_with_the_1062(cur, f"LOAD DATA INFILE '{path}' INTO TABLE people")


def test_two_new_rows_that_share_a_key_are_refused_with_the_same_text(cur):
    cur.execute("DELETE FROM people WHERE email = 'a@x'")
    with pytest.raises(tesseradb.IntegrityError, match=DUPLICATE):
        cur.execute("INSERT INTO people (name, email) VALUES ('Cy', 'a@x'), ('Di', 'a@x')")
    assert cur.execute("SELECT name FROM people").fetchall() == [("Bob",)]


def test_replace_and_ignore_follow_the_key_rules_for_execute_and_executemany(cur):
    cur.executemany("REPLACE INTO people (name, email) VALUES (?, ?)", [("Ann", "a@x")])
    cur.executemany("INSERT IGNORE INTO people (name, email) VALUES (?, ?)", [("Ben", "b@x"), ("Cy", "c@x")])
    assert cur.connection.warnings == [("Warning", 1062, "Duplicate entry 'b@x' for key 'email'")]
    assert sorted(cur.execute("SELECT name, email FROM people").fetchall()) == [
        ("Ann", "a@x"), ("Bob", "b@x"), ("Cy", "c@x")]


@pytest.mark.parametrize("sql", ["INSERT IGNORE INTO missing_table VALUES (1)",
                                 "INSERT INTO missing_table (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
                                 "INSERT INTO missing_table VALUES (1)"])
def test_a_missing_table_says_so_whatever_the_insert(cur, sql):
    with pytest.raises(tesseradb.ProgrammingError, match="table 'missing_table' does not exist"):
        cur.execute(sql)
    with pytest.raises(tesseradb.ProgrammingError, match="table 'missing_table' does not exist"):
        cur.executemany(sql, [(), ()])


def test_explain_names_the_passes_that_changed_the_statement(cur):
    cur.execute("SET @who = 'Ada'")
    rows = cur.execute("EXPLAIN SELECT name, 1/4 FROM people WHERE name = @who").fetchall()
    assert [d for step, d in rows if step == "pass"] == ["session_variables", "exact_division"]
    assert ("sqlite", "SELECT name, ROUND(CAST(1 AS REAL) / 4, 4) AS \"1/4\" FROM people WHERE name = 'Ada'") in rows
    named = cur.execute("EXPLAIN SELECT UPPER(name) FROM people").fetchall()
    assert [d for step, d in named if step == "pass"] == ["name_as_written"]
    plain = cur.execute("EXPLAIN SELECT name FROM people").fetchall()
    assert [d for step, d in plain if step == "pass"] == []
