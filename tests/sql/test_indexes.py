"""CREATE INDEX / DROP INDEX / SHOW INDEX: SQLite B-tree indexes on scalar columns, so that the
filters beside knn() (and any WHERE) can avoid scanning the table."""
from __future__ import annotations

import pytest

import tesseradb
@pytest.fixture
def tagged(cur):
    cur.execute("CREATE TABLE t (tag string, n int, v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.executemany("INSERT INTO t (id, tag, n, v) VALUES (?, ?, ?, ?)",
                    [(i, "even" if i % 2 == 0 else "odd", i, [float(i), 0.0]) for i in range(1, 41)])
    return cur


def test_index_is_used_by_the_knn_filter(tagged):
    tagged.execute("CREATE INDEX by_tag ON t (tag)")
    plan = tagged.execute("EXPLAIN SELECT id FROM t WHERE knn(v, 3, (10, 0)) AND tag = 'odd'").fetchall()
    assert any(step == "filter plan" and "USING" in detail and "by_tag" in detail for step, detail in plan)
    got = tagged.execute("SELECT id FROM t WHERE knn(v, 3, (10, 0)) AND tag = 'odd'").fetchall()
    assert got == [(9,), (11,), (7,)]


def test_show_index_and_drop_index(tagged):
    tagged.execute("CREATE INDEX by_tag ON t (tag, n DESC)")
    shown = tagged.execute("SHOW INDEX FROM t").fetchall()        # MySQL's columns (issue 36)
    assert [d[0] for d in tagged.description][:6] == ["Table", "Non_unique", "Key_name", "Seq_in_index",
                                                      "Column_name", "Collation"]
    assert [r[:6] for r in shown] == [("t", 0, "PRIMARY", 1, "id", "A"), ("t", 1, "by_tag", 1, "tag", "A"),
                                      ("t", 1, "by_tag", 2, "n", "D")]
    tagged.execute("DROP INDEX by_tag ON t")
    assert [r[2] for r in tagged.execute("SHOW INDEX FROM t").fetchall()] == ["PRIMARY"]
    tagged.execute("DROP INDEX IF EXISTS by_tag")


def test_unique_index_rejects_duplicates_and_changes_nothing(tagged):
    tagged.execute("CREATE UNIQUE INDEX by_n ON t (n)")
    with pytest.raises(tesseradb.IntegrityError):
        tagged.execute("INSERT INTO t (id, tag, n) VALUES (100, 'x', 5)")
    assert tagged.execute("SELECT COUNT(*) FROM t").fetchone() == (40,)


def test_index_survives_reopen(db_path):
    con = tesseradb.connect(db_path)
    con.execute("CREATE TABLE t (tag string)")
    con.execute("CREATE INDEX by_tag ON t (tag)")
    con.commit()
    con.close()
    con = tesseradb.connect(db_path)
    assert [r[2] for r in con.execute("SHOW INDEX FROM t").fetchall()] == ["PRIMARY", "by_tag"]
    con.close()


@pytest.mark.parametrize("sql, errno, message", [
    ("CREATE INDEX x ON t (nope)", 1054, "Key column 'nope' doesn't exist in table"),
    ("CREATE INDEX x ON t (v)", 1064, "is a vector column"),
    ("CREATE INDEX x ON missing (tag)", 1146, "table 'missing' does not exist"),
    ("DROP INDEX missing", 1064, "Can't DROP 'missing'"),
    ("CREATE INDEX _tessera_x ON t (tag)", 1064, "is reserved"),
])
def test_index_errors(tagged, sql, errno, message):
    with pytest.raises(tesseradb.Error) as err:
        tagged.execute(sql)
    assert err.value.errno == errno and message in err.value.msg
    assert [r[2] for r in tagged.execute("SHOW INDEX FROM t").fetchall()] == ["PRIMARY"]     # the id alone


def test_duplicate_index_name(tagged):
    tagged.execute("CREATE INDEX by_tag ON t (tag)")
    with pytest.raises(tesseradb.ProgrammingError, match="Duplicate key name 'by_tag'"):
        tagged.execute("CREATE INDEX by_tag ON t (n)")
    tagged.execute("CREATE INDEX IF NOT EXISTS by_tag ON t (n)")
