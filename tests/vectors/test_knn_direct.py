"""A cached knn() SELECT of its table's own rows takes the direct form (sql/search/knn_direct.py): the
hits' rows read by id, no TEMP table; like every SELECT whose plan is cached it runs without the
statement bracket, the catalog checked after the read (sql/executor._direct). Each query here runs by that path and by the general one (the plan's direct
form taken away), and the rows must be the same: values and their types to the last bit, order,
column names; shapes that need SQL's join (filters, ORDER BY, GROUP BY, joins) never take it; another
connection's writes and DDL are seen as the general path sees them."""
from __future__ import annotations

import numpy as np
import pytest

import tesseradb
from tesseradb.sql.search import knn_direct, select_plan
from tesseradb.sql.mysql.time_limit import EXCEEDED
from direct_paths import both, cached, taken  # noqa: F401  (tests/vectors/direct_paths.py; fixtures)

DIMS = 8


def _table(con, metric: str = "cosine", docs: int = 80, seed: int = 3) -> None:
    rng = np.random.default_rng(seed)
    con.execute(f"CREATE TABLE t (tag int, title string, v float_vector_array knn_type='hnsw' knn_dims='{DIMS}' "
                f"hnsw_similarity='{metric}')")
    rows = []
    for doc in range(1, docs + 1):
        x = rng.normal(size=(int(rng.integers(1, 5)), DIMS))
        rows.append((doc, doc % 4, f"doc {doc}", x.astype(np.float32).tolist()))
    rows.append((docs + 1, 0, "twin", rows[2][3]))     # a document equal to another: a tie the id breaks
    con.executemany("INSERT INTO t (id, tag, title, v) VALUES (?, ?, ?, ?)", rows)
    con.commit()


DIRECT = [
    "SELECT id FROM t WHERE knn(v, 10, ?)",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)",
    "SELECT * FROM t WHERE knn(v, 7, ?)",
    "SELECT t.*, knn_dist() AS d FROM t WHERE knn(v, 7, ?)",
    "SELECT title, knn_dist(), id * 2 AS twice, knn_score(), UPPER(title) FROM t WHERE knn(v, 12, ?) LIMIT 4 OFFSET 2",
    "SELECT id, knn_dist() FROM t WHERE knn(v, ?) LIMIT 5",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 70, ?)",
    "SELECT id, title FROM t WHERE knn(v, 70, ?)",
    "SELECT x.id, x.title, @knn_dist FROM t AS x WHERE knn(v, 9, ?)",
    "SELECT id, knn_score(), knn_dist() FROM t WHERE knn(v, 10, ?, {mmr=0.5})",
    "SELECT id, knn_score() FROM t WHERE knn(v, 10, ?, {length_penalty=0.25})",
    "SELECT id, (SELECT o.title FROM t AS o WHERE o.id = t.id + 1) FROM t WHERE knn(v, 6, ?)",
]


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_direct_rows_equal_the_general_paths(taken, metric):
    con = tesseradb.connect()
    _table(con, metric)
    con.execute("DELETE FROM t WHERE id % 9 = 4")       # dead positions in the index
    con.commit()
    rng = np.random.default_rng(7)
    for i in range(6):
        q = rng.normal(size=DIMS).astype(np.float32).tolist()
        for sql in DIRECT:
            direct, general = both(con, sql, (q,), taken)
            assert direct == general and direct[0], (sql, i)
            assert [[type(v) for v in r] for r in direct[0]] == [[type(v) for v in r] for r in general[0]]
    direct, general = both(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)", (3,), taken)   # a document
    assert direct == general and 3 not in [r[0] for r in direct[0]]


def test_the_open_transactions_own_writes_are_seen(taken):
    """Inside an open transaction the direct form shows its own inserts, updates and deletes as the
    general path does (the transaction's chunks merged into the search, its deleted rows left out),
    and after ROLLBACK the committed rows again."""
    con = tesseradb.connect()
    _table(con)
    q = np.random.default_rng(5).normal(size=DIMS).astype(np.float32).tolist()
    shapes = ["SELECT id, title FROM t WHERE knn(v, 10, ?)", "SELECT id, title, knn_dist() FROM t WHERE knn(v, 10, ?)"]
    before = con.execute(shapes[0], (q,)).fetchall()
    ids_only = "SELECT id FROM t WHERE knn(v, 10, ?)"       # no row read by id: the hits are the rows
    assert con.execute(ids_only, (q,)).fetchall() == [r[:1] for r in before]
    con.execute("INSERT INTO t (id, title, v) VALUES (500, 'mine', ?)", ([q],))
    con.execute(f"DELETE FROM t WHERE id = {before[1][0]}")
    con.execute(f"UPDATE t SET title = 'changed' WHERE id = {before[2][0]}")
    assert con.in_transaction
    for sql in shapes:
        direct, general = both(con, sql, (q,), taken)
        ids = [r[0] for r in direct[0]]
        assert direct == general and ids[0] == 500 and before[1][0] not in ids, sql
        assert direct[0][ids.index(before[2][0])][1] == "changed"
    direct, general = both(con, ids_only, (q,), taken)
    assert direct == general and direct[0][0] == (500,) and (before[1][0],) not in direct[0]
    con.rollback()
    for sql in shapes:
        direct, general = both(con, sql, (q,), taken)
        assert direct == general and [r[:2] for r in direct[0]] == before, sql
    direct, general = both(con, ids_only, (q,), taken)
    assert direct == general and direct[0] == [r[:1] for r in before]


@pytest.mark.parametrize("sql", ["SELECT id, title FROM t WHERE knn(v, 10, ?)",
                                 "SELECT id, knn_dist(), title FROM t WHERE knn(v, 10, ?)",
                                 "SELECT title, id FROM t WHERE knn(v, 70, ?)"])
def test_a_hit_whose_row_is_gone_is_left_out(taken, monkeypatch, sql):
    """A hit whose row the table does not hold (here: ids the search is made to return among its
    hits, first, inside and last) is left out by the direct read, as the general path's join leaves
    it out; the other rows keep their order."""
    con = tesseradb.connect()
    _table(con)
    q = np.random.default_rng(6).normal(size=DIMS).astype(np.float32).tolist()
    shown = con.execute(sql, (q,)).fetchall()
    real = knn_direct.run_knn

    def with_ghosts(db, request):
        hits = real(db, request)
        return [(9001, hits[0][1], None)] + hits[:3] + [(9002, hits[3][1], None)] + hits[3:] + [(9003, hits[-1][1], None)]
    monkeypatch.setattr(knn_direct, "run_knn", with_ghosts)
    monkeypatch.setattr(select_plan, "run_knn", with_ghosts)
    direct, general = both(con, sql, (q,), taken)
    assert direct == general and direct[0] == shown


GENERAL = [
    "SELECT id FROM t WHERE knn(v, 10, ?) AND tag = 1",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?) ORDER BY title",
    "SELECT tag, COUNT(*) FROM t WHERE knn(v, 10, ?) GROUP BY tag",
    "SELECT DISTINCT tag FROM t WHERE knn(v, 10, ?)",
    "SELECT t.id, u.title FROM t JOIN t AS u ON u.id = t.id WHERE knn(t.v, 10, ?)",
    "SELECT id, knn_dist() * 2 FROM t WHERE knn(v, 10, ?)",
    "SELECT id FROM t WHERE knn(v, 10, ?) LIMIT ?",
    "SELECT id, knn_chunk() FROM t WHERE knn(v, 10, ?)",
    "SELECT id, (SELECT COUNT(*) FROM t AS o WHERE o.tag = t.tag) FROM t WHERE knn(v, 6, ?)",
]


def test_what_needs_sql_takes_the_general_path(taken):
    con = tesseradb.connect()
    _table(con)
    q = np.random.default_rng(1).normal(size=DIMS).astype(np.float32).tolist()
    for sql in GENERAL:
        params = (q, 3) if sql.endswith("LIMIT ?") else (q,)
        first = con.execute(sql, params).fetchall()
        assert con.execute(sql, params).fetchall() == first and first, sql
    assert taken[0] == 0


def test_session_settings_send_it_the_general_way(taken):
    con = tesseradb.connect()
    _table(con)
    q = np.random.default_rng(2).normal(size=DIMS).astype(np.float32).tolist()
    sql = "SELECT id, title FROM t WHERE knn(v, 10, ?)"
    assert len(con.execute(sql, (q,)).fetchall()) == 10
    con.execute("SET sql_select_limit = 3")
    assert len(con.execute(sql, (q,)).fetchall()) == 3          # the general path's row bound
    con.execute("SET sql_select_limit = DEFAULT")
    con.max_result_bytes = 1
    assert len(con.execute(sql, (q,)).fetchall()) == 1
    con.max_result_bytes = None
    assert taken[0] == 0
    assert len(con.execute(sql, (q,)).fetchall()) == 10
    assert taken[0] == 1


def test_another_connections_writes_and_ddl_are_seen(taken, tmp_path):
    path = str(tmp_path / "db.tessera")
    con = tesseradb.connect(path)
    _table(con)
    other = tesseradb.connect(path)
    q = np.random.default_rng(4).normal(size=DIMS).astype(np.float32)
    sql = "SELECT id, title, knn_dist() FROM t WHERE knn(v, 5, ?)"
    params = (q.tolist(),)
    con.execute(sql, params).fetchall()
    before = con.execute(sql, params).fetchall()
    assert taken[0] == 1
    other.execute("INSERT INTO t (id, title, v) VALUES (900, 'new', ?)", ([q.tolist()],))   # the nearest now
    other.commit()
    rows = con.execute(sql, params).fetchall()
    assert rows[0][:2] == (900, "new") and rows[1:] == before[:4]
    other.execute(f"DELETE FROM t WHERE id = {before[0][0]}")
    other.commit()
    assert before[0][0] not in [r[0] for r in con.execute(sql, params).fetchall()]
    other.execute("DROP TABLE t")
    other.execute(f"CREATE TABLE t (title string, extra int, v float_vector_array knn_type='hnsw' knn_dims='{DIMS}' "
                  "hnsw_similarity='cosine')")
    other.execute("INSERT INTO t (id, title, extra, v) VALUES (7, 'seven', 70, ?)", ([q.tolist()],))
    other.commit()
    assert con.execute("SELECT * FROM t WHERE knn(v, 5, ?)", params).fetchall()[0][:3] == (7, "seven", 70)
    assert [r[:2] for r in con.execute(sql, params).fetchall()] == [(7, "seven")]
    other.execute("DROP TABLE t")
    other.commit()
    with pytest.raises(tesseradb.Error) as seen:
        con.execute(sql, params)
    fresh = tesseradb.connect(path)
    with pytest.raises(tesseradb.Error) as expected:      # what a connection that never ran it says
        fresh.execute(sql, params)
    assert str(seen.value) == str(expected.value) and type(seen.value) is type(expected.value)
    fresh.close()
    con.close()
    other.close()


def test_the_id_alone_sees_another_connections_writes(taken, tmp_path):
    """``SELECT id`` alone reads no row by id (the index holds exactly the table's documents: a row's
    id cannot change, deleting it deletes its chunks); its one read, which returns no row, still brings
    SQLite's data version up to date, so another connection's commit sends it the general way."""
    path = str(tmp_path / "ids.tessera")
    con = tesseradb.connect(path)
    _table(con)
    other = tesseradb.connect(path)
    q = np.random.default_rng(8).normal(size=DIMS).astype(np.float32)
    sql, params = "SELECT id FROM t WHERE knn(v, 5, ?)", (q.tolist(),)
    con.execute(sql, params).fetchall()
    before = con.execute(sql, params).fetchall()
    assert taken[0] == 1 and con.db.statements.plan_for(con.db.statements.parse(sql).expr).direct.ids_only
    other.execute("INSERT INTO t (id, title, v) VALUES (900, 'new', ?)", ([q.tolist()],))   # the nearest now
    other.commit()
    assert con.execute(sql, params).fetchall() == [(900,)] + before[:4]
    other.execute(f"DELETE FROM t WHERE id IN (900, {before[0][0]})")
    other.commit()
    after = con.execute(sql, params).fetchall()
    assert after[:4] == before[1:] and (before[0][0],) not in after
    for _ in range(2):
        direct, general = both(con, sql, params, taken)
        assert direct == general and len(direct[0]) == 5
    con.close()
    other.close()


def test_a_query_text_takes_it_with_the_model(taken):
    """The short path serves text queries (the model's vector cached or not) exactly as vectors."""
    con = tesseradb.connect()
    con.execute("CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' model_name='all-MiniLM-L6-v2' "
                "from='body')")
    con.executemany("INSERT INTO d (id, body) VALUES (?, ?)",
                    [(1, "cats purr on the sofa"), (2, "the stock market fell"), (3, "kittens chase yarn")])
    con.commit()
    sql = "SELECT id, body, knn_dist() FROM d WHERE knn(v, 2, ?)"
    first = con.execute(sql, ("a small cat",)).fetchall()
    again = con.execute(sql, ("a small cat",)).fetchall()
    assert again == first and {r[0] for r in first} == {1, 3} and taken[0] == 1


def test_cached_selects_see_another_connections_ddl_and_writes(cached, tmp_path):
    """Any SELECT whose plan is cached skips the catalog check before it runs: a commit since the
    last check sends it down the general path, which checks first."""
    path = str(tmp_path / "plain.tessera")
    con, other = tesseradb.connect(path), tesseradb.connect(path)
    con.execute("CREATE TABLE p (a int, b string)")
    con.execute("INSERT INTO p (id, a, b) VALUES (1, 10, 'x'), (2, 20, 'y')")
    con.commit()
    sql = "SELECT * FROM p WHERE a >= ? ORDER BY id"
    assert con.execute(sql, (0,)).fetchall() == [(1, 10, "x"), (2, 20, "y")]
    assert con.execute(sql, (15,)).fetchall() == [(2, 20, "y")] and cached[0] == 1
    other.execute("INSERT INTO p (id, a, b) VALUES (3, 30, 'z')")
    other.commit()
    assert con.execute(sql, (15,)).fetchall() == [(2, 20, "y"), (3, 30, "z")]
    other.execute("ALTER TABLE p ADD COLUMN c int")
    other.commit()
    cur = con.execute(sql, (25,))
    assert cur.fetchall() == [(3, 30, "z", None)] and [d[0] for d in cur.description] == ["id", "a", "b", "c"]
    assert con.execute(sql, (25,)).fetchall() == [(3, 30, "z", None)]
    other.execute("DROP TABLE p")
    other.commit()
    with pytest.raises(tesseradb.Error) as seen:
        con.execute(sql, (25,))
    with pytest.raises(tesseradb.Error) as expected:
        other.execute(sql, (25,))
    assert str(seen.value) == str(expected.value)
    con.close()
    other.close()


def test_a_cached_select_keeps_its_time_limits(cached):
    """MAX_EXECUTION_TIME holds on every execute of a cached plan: the hint's (such a statement takes
    the general path) and the session's (the cached path arms it: ``tessera serve`` sets one for every
    client, so its SELECTs take that path too). The plan is made by a fast execute, then a slow one
    must stop."""
    con = tesseradb.connect()
    con.execute("CREATE TABLE p (a int, b int)")
    con.executemany("INSERT INTO p (id, a, b) VALUES (?, ?, 1)", [(i, i) for i in range(1, 401)])
    con.commit()
    three = "SELECT {hint} x.id FROM p AS x, p AS y, p AS z WHERE x.b = ? AND x.a + y.a + z.a = -1"
    for hint in ("/*+ MAX_EXECUTION_TIME(50) */", ""):
        if not hint:
            con.execute("SET max_execution_time = 50")
        sql = three.format(hint=hint)
        before = cached[0]
        assert con.execute(sql, (2,)).fetchall() == [] and con.execute(sql, (2,)).fetchall() == []
        assert cached[0] - before == (0 if hint else 1)     # the hint: the general path; the session's: cached
        with pytest.raises(tesseradb.OperationalError, match="maximum statement execution time exceeded"):
            con.execute(sql, (1,))          # 64 million rows to look at
        assert con.execute("SHOW WARNINGS").fetchall() == [("Error", 3024, EXCEEDED)]
    con.execute("SET max_execution_time = 0")
    sql = three.format(hint="")
    before = cached[0]
    assert con.execute(sql, (2,)).fetchall() == [] and con.execute(sql, (2,)).fetchall() == []
    assert cached[0] - before == 1      # that shape takes the cached path when nothing limits it too
    con.close()


@pytest.mark.parametrize("sql, message", [
    ("SELECT t WHERE knn(v, 3, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8))", "requested KNN search attribute 'v' not found"),
    ("SELECT id, knn_dist() WHERE knn(v, 5, ?)", "requested KNN search attribute 'v' not found"),
    ("SELECT 1 WHERE hybrid_match('sofa')", "hybrid_match() needs a table in FROM"),
    ("SELECT 1 WHERE MATCH('sofa') AND knn(v, 3, ?)", "MATCH() needs a table in FROM"),
])
def test_a_search_without_from_is_a_user_error(sql, message):
    """The fuzzer's finding: a search call in a SELECT with no FROM (a typo that swallowed it) got
    ``internal error: KeyError`` from the direct form's shape check and hybrid's planner."""
    con = tesseradb.connect()
    _table(con)
    params = ([0.1] * DIMS,) if "?" in sql else None
    for _ in range(2):                       # the second time too (a plan is cached only after a run)
        with pytest.raises(tesseradb.ProgrammingError) as caught:
            con.execute(sql, params)
        assert message in str(caught.value) and "internal error" not in str(caught.value)
    assert len(con.execute("SELECT id FROM t WHERE knn(v, 3, ?)", ([0.1] * DIMS,)).fetchall()) == 3
