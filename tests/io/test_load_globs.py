"""LOAD DATA INFILE with a glob: every matching file in name order, in one transaction."""
from __future__ import annotations

import pytest

import tesseradb


def test_a_glob_loads_every_file_in_name_order(cur, tmp_path):
    (tmp_path / "b.csv").write_text("id,title\n3,three\n4,four\n")
    (tmp_path / "a.csv").write_text("id,title\n1,one\n2,two\n")
    (tmp_path / "c.txt").write_text("not matched")
    cur.execute("CREATE TABLE t (title string)")
    cur.execute(f"LOAD DATA INFILE '{tmp_path}/*.csv' INTO TABLE t")
    assert cur.rowcount == 4
    assert cur.execute("SELECT id, title FROM t ORDER BY id").fetchall() == \
        [(1, "one"), (2, "two"), (3, "three"), (4, "four")]


def test_a_bad_file_loads_nothing_of_the_others(cur, tmp_path):
    (tmp_path / "a.csv").write_text("id,title\n1,one\n")
    (tmp_path / "b.csv").write_text("id,colour\n2,red\n")
    cur.execute("CREATE TABLE t (title string)")
    with pytest.raises(tesseradb.ProgrammingError, match=r"b\.csv.*Unknown column 'colour'"):
        cur.execute(f"LOAD DATA INFILE '{tmp_path}/?.csv' INTO TABLE t")
    assert cur.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_a_glob_without_a_match_is_file_not_found(cur, tmp_path):
    cur.execute("CREATE TABLE t (title string)")
    with pytest.raises(tesseradb.OperationalError, match=r"File '.*nothing-\*\.csv' not found") as info:
        cur.execute(f"LOAD DATA INFILE '{tmp_path}/nothing-*.csv' INTO TABLE t")
    assert info.value.errno == 29
