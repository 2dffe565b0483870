"""The per-connection cache of parsed and planned SELECTs: parameters bound per execute, plans
dropped by DDL (this connection's or another's) and by ROLLBACK, session values never frozen."""
from __future__ import annotations

import numpy as np
import pytest

import tesseradb


def make(con, dims=4):
    con.execute(f"CREATE TABLE t (tag int, v float_vector knn_type='hnsw' knn_dims='{dims}' hnsw_similarity='l2')")
    rng = np.random.default_rng(dims)
    con.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)",
                    [(i, i % 3, rng.standard_normal(dims).tolist()) for i in range(1, 60)])
    con.commit()


@pytest.fixture
def con(tmp_path):
    c = tesseradb.connect(str(tmp_path / "c.db"))
    make(c)
    yield c
    c.close()


KNN = "SELECT id, knn_dist() FROM t WHERE knn(v, ?, ?) AND tag = ?"


def test_a_repeated_select_is_parsed_and_planned_once(con):
    cache = con.db.statements
    q = [0.1, 0.2, 0.3, 0.4]
    first = con.execute(KNN, (3, q, 1)).fetchall()
    misses = cache.misses
    for _ in range(5):
        assert con.execute(KNN, (3, q, 1)).fetchall() == first
    assert cache.misses == misses and cache.hits >= 5
    assert cache.plan_for(cache.parse(KNN).expr) is not None


def test_parameters_are_bound_per_execute(con):
    q1, q2 = [1, 0, 0, 0], [0, 0, 0, 1]
    a = con.execute(KNN, (3, q1, 1)).fetchall()
    b = con.execute(KNN, (5, q2, 2)).fetchall()
    fresh = tesseradb.connect(con.db.path)
    assert a == fresh.execute(KNN, (3, q1, 1)).fetchall()
    assert b == fresh.execute(KNN, (5, q2, 2)).fetchall()
    fresh.close()
    assert len(b) == 5 and all(i % 3 == 2 for i, _ in b)
    named = "SELECT id FROM t WHERE tag = :tag AND id < :top ORDER BY id"
    assert con.execute(named, {"tag": 0, "top": 10}).fetchall() == [(3,), (6,), (9,)]
    assert con.execute(named, {"tag": 1, "top": 5}).fetchall() == [(1,), (4,)]


def test_a_wrong_number_of_parameters_is_still_an_error(con):
    con.execute(KNN, (3, [0, 0, 0, 0], 1)).fetchall()
    with pytest.raises(tesseradb.ProgrammingError, match="Incorrect number of bindings"):
        con.execute(KNN, (3, [0, 0, 0, 0]))
    with pytest.raises(tesseradb.ProgrammingError, match="binding parameter :top"):
        con.execute("SELECT id FROM t WHERE id < :top", {"top": 3})
        con.execute("SELECT id FROM t WHERE id < :top", {"bottom": 3})


def test_ddl_drops_the_plans(con):
    star = "SELECT * FROM t WHERE id = 1"
    assert len(con.execute(star).fetchall()[0]) == 3
    con.execute("ALTER TABLE t ADD COLUMN note text")
    assert con.execute(star).fetchall()[0][3] is None            # the new column is there
    q = [0.0] * 4
    assert len(con.execute(KNN, (2, q, 0)).fetchall()) == 2
    con.execute("DROP TABLE t")
    con.commit()
    with pytest.raises(tesseradb.Error) as cached:
        con.execute(KNN, (2, q, 0))
    fresh = tesseradb.connect(con.db.path)
    with pytest.raises(tesseradb.Error) as uncached:
        fresh.execute(KNN, (2, q, 0))
    fresh.close()
    assert str(cached.value) == str(uncached.value)               # as if never planned before
    make(con, dims=3)                                              # same name, other vectors
    with pytest.raises(tesseradb.Error, match="3"):
        con.execute(KNN, (2, q, 0))
    assert len(con.execute(KNN, (2, [0.0] * 3, 0)).fetchall()) == 2


def test_another_connections_ddl_drops_the_plans(con):
    star = "SELECT * FROM t WHERE id = 2"
    before = con.execute(star).fetchall()
    other = tesseradb.connect(con.db.path)
    other.execute("ALTER TABLE t ADD COLUMN extra int")
    other.execute("UPDATE t SET extra = 7 WHERE id = 2")
    other.commit()
    other.close()
    after = con.execute(star).fetchall()
    assert after[0][:3] == before[0] and after[0][3] == 7


def test_ddl_inside_a_transaction_commits_and_drops_the_plans(con):
    star = "SELECT * FROM t WHERE id = 3"
    assert len(con.execute(star).fetchall()[0]) == 3
    con.execute("BEGIN")
    con.execute("ALTER TABLE t ADD COLUMN tmp int")
    assert len(con.execute(star).fetchall()[0]) == 4
    con.rollback()                           # DDL committed implicitly, as in MySQL (issue 22)
    assert len(con.execute(star).fetchall()[0]) == 4


def test_session_variables_are_read_at_every_execute(con):
    sql = "SELECT id FROM t WHERE tag = @tag AND id < 8 ORDER BY id"
    con.execute("SET @tag = 1")
    assert con.execute(sql).fetchall() == [(1,), (4,), (7,)]
    con.execute("SET @tag = 2")
    assert con.execute(sql).fetchall() == [(2,), (5,)]


def test_text_queries_embed_each_new_text(tmp_path):
    con = tesseradb.connect(str(tmp_path / "m.db"))
    con.execute("CREATE TABLE d (body text, c float_vector knn_type='hnsw' model_name='all-MiniLM-L6-v2' from='body')")
    con.executemany("INSERT INTO d (id, body) VALUES (?, ?)",
                    [(1, "rotating TLS certificates on a server"), (2, "a recipe for banana bread"),
                     (3, "how to replicate a table to another node")])
    con.commit()
    sql = "SELECT id FROM d WHERE knn(c, 1, ?)"
    assert con.execute(sql, ("baking a cake",)).fetchall() == [(2,)]
    assert con.execute(sql, ("certificate renewal",)).fetchall() == [(1,)]
    assert con.execute(sql, ("cluster replication",)).fetchall() == [(3,)]
    con.close()
