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


def _fresh_rows(path, sql, params):
    other = tesseradb.connect(path)
    try:
        return other.execute(sql, params).fetchall()
    finally:
        other.close()


def test_a_cached_knn_plan_returns_what_a_fresh_plan_returns(con):
    """Many executes of one knn statement (its plan, table, layout kept between them) return exactly
    the rows a connection that never planned it returns."""
    rng = np.random.default_rng(7)
    sql = "SELECT id, knn_dist() FROM t WHERE knn(v, ?, ?)"
    for _ in range(25):
        params = (int(rng.integers(1, 12)), rng.standard_normal(4).tolist())
        assert con.execute(sql, params).fetchall() == _fresh_rows(con.db.path, sql, params)
    assert con.db.statements.plan_for(con.db.statements.parse(sql).expr) is not None


@pytest.mark.parametrize("change", ["this connection", "another connection"])
def test_a_table_made_again_with_another_metric_is_searched_with_it(con, change):
    """DROP + CREATE of the same name between two identical knn statements: the second is planned
    again, against the new table's layout (cosine, not l2), whoever made the change."""
    sql = "SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?)"
    q = [0.3, -0.2, 0.9, 0.1]
    before = con.execute(sql, (q,)).fetchall()
    actor = con if change == "this connection" else tesseradb.connect(con.db.path)
    actor.execute("DROP TABLE t")
    actor.execute("CREATE TABLE t (tag int, v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='cosine')")
    rng = np.random.default_rng(4)                  # the same vectors as make(): only the metric changed
    actor.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)",
                      [(i, i % 3, rng.standard_normal(4).tolist()) for i in range(1, 60)])
    actor.commit()
    if actor is not con:
        actor.close()
    after = con.execute(sql, (q,)).fetchall()
    assert after == _fresh_rows(con.db.path, sql, (q,))
    assert all(0.0 <= d <= 2.0 for _, d in after) and after != before     # cosine distances now


def test_alter_and_rebuild_between_two_identical_knn_statements(con):
    sql = "SELECT * FROM t WHERE knn(v, 3, ?)"
    q = [0.5, 0.5, -0.5, 0.1]
    assert len(con.execute(sql, (q,)).fetchall()[0]) == 4            # id, tag, v, @knn_dist
    con.execute("ALTER TABLE t ADD COLUMN note text")
    rows = con.execute(sql, (q,)).fetchall()
    assert len(rows[0]) == 5 and rows == _fresh_rows(con.db.path, sql, (q,))
    con.execute("ALTER TABLE t REBUILD KNN")
    assert con.execute(sql, (q,)).fetchall() == rows
    con.execute("ALTER TABLE t DROP COLUMN note")
    assert len(con.execute(sql, (q,)).fetchall()[0]) == 4


@pytest.mark.parametrize("who", ["this connection", "another connection"])
def test_a_statement_that_wanted_no_session_pass_is_asked_again_after_ddl(tmp_path, who):
    """Whether a session pass is wanted is kept per cached statement until the catalog changes: the same
    text compares a TIMESTAMP with a date string once the column has become one (the pass converts it)."""
    path = str(tmp_path / "p.db")
    con = tesseradb.connect(path)
    rows = "INSERT INTO ev (id, name, ts) VALUES (1, 'old', 5), (2, 'new', 1800000000)"
    con.execute("CREATE TABLE ev (name string, ts bigint)")
    con.execute(rows)
    con.commit()
    sql = "SELECT name FROM ev WHERE ts > '2024-01-01' ORDER BY name"
    for _ in range(2):
        assert con.execute(sql).fetchall() != [("new",)]      # a number and a string: no date conversion
    other = con if who == "this connection" else tesseradb.connect(path)
    other.execute("DROP TABLE ev")
    other.execute("CREATE TABLE ev (name string, ts timestamp)")
    other.execute(rows)
    other.commit()
    assert con.execute(sql).fetchall() == [("new",)]
