"""The common knn() (one query vector, no filter, nothing of the open transaction's to merge) takes a
short path: ``vectors/search._nearest`` hands the index's ranked hits straight on, and the index scans
every live float32 vector without sizing a plan (``Searching._scan_live`` through ``_live_sizes``).
Each query here runs twice, by that path and by the general one (``_general``, the index planned
as for any other search), and the rows must be the same: ids, order and knn_dist() to the last bit,
with deleted documents, k 10 and 50, a document id as the query, LIMIT/OFFSET, knn_score(), filters
and a transaction's own writes (which take the general path both times)."""
from __future__ import annotations

import numpy as np
import pytest

import tesseradb
from tesseradb.storage import vector_search
from tesseradb.vectors import search as vector_search_sql

DIMS = 16


@pytest.fixture
def general(monkeypatch):
    """Run the general path while active (``general.on()`` / ``general.off()``)."""
    fast_nearest, fast_sizes = vector_search_sql._nearest, vector_search.Searching._live_sizes

    class Switch:
        def on(self):
            monkeypatch.setattr(vector_search_sql, "_nearest", vector_search_sql._general)
            monkeypatch.setattr(vector_search.Searching, "_live_sizes", lambda self, *a: ())

        def off(self):
            monkeypatch.setattr(vector_search_sql, "_nearest", fast_nearest)
            monkeypatch.setattr(vector_search.Searching, "_live_sizes", fast_sizes)
    return Switch()


def _table(con, metric: str, docs: int = 120, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    con.execute(f"CREATE TABLE t (tag int, v float_vector_array knn_type='hnsw' knn_dims='{DIMS}' "
                f"hnsw_similarity='{metric}')")
    centers = rng.normal(size=(6, DIMS))
    rows = []
    for doc in range(1, docs + 1):
        n = int(rng.integers(1, 9))
        x = centers[doc % 6] + 0.3 * rng.normal(size=(n, DIMS))
        if doc % 17 == 0:
            x[0] = x[-1]                    # two equal chunks in one document
        rows.append((doc, doc % 5, x.astype(np.float32).tolist()))
    rows.append((docs + 1, 0, rows[3][2]))  # a document equal to another: a tie the doc id breaks
    con.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)", rows)
    con.commit()


QUERIES = [
    "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 50, ?)",
    "SELECT id, knn_dist(), knn_score() FROM t WHERE knn(v, ?) LIMIT 5 OFFSET 3",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?) AND tag = 2",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?, {prefilter=0}) AND tag < 3",
    "SELECT * FROM t WHERE knn(v, 7, ?) ORDER BY id DESC",
]


def _both(con, general, sql, params):
    general.off()
    fast = con.execute(sql, params).fetchall()
    general.on()
    slow = con.execute(sql, params).fetchall()
    general.off()
    return fast, slow


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_fast_path_rows_equal_the_general_paths(general, metric):
    con = tesseradb.connect()
    _table(con, metric)
    con.execute("DELETE FROM t WHERE id % 7 = 3")          # dead positions in the index
    con.commit()
    rng = np.random.default_rng(11)
    for i in range(12):
        q = rng.normal(size=DIMS).astype(np.float32).tolist()
        for sql in QUERIES:
            fast, slow = _both(con, general, sql, (q,))
            assert fast == slow and fast, (sql, i)
            assert [type(r[1]) for r in fast] == [type(r[1]) for r in slow]
    for doc in (5, 40, 121):                                  # a document's own vectors as the query
        fast, slow = _both(con, general, "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)", (doc,))
        assert fast == slow and doc not in [r[0] for r in fast]


def test_fast_path_sees_writes_and_leaves_the_transactions_own_to_the_general_path(general):
    con = tesseradb.connect()
    _table(con, "cosine", docs=60)
    q = np.random.default_rng(2).normal(size=DIMS).astype(np.float32).tolist()
    sql = "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)"
    before, _ = _both(con, general, sql, (q,))
    con.execute("INSERT INTO t (id, v) VALUES (500, ?)", ([q],))    # not committed: the statement merges it
    fast, slow = _both(con, general, sql, (q,))
    assert fast == slow and fast[0][0] == 500
    con.commit()
    fast, slow = _both(con, general, sql, (q,))
    assert fast == slow and fast[0][0] == 500
    con.execute(f"DELETE FROM t WHERE id IN ({', '.join(str(r[0]) for r in before[:3])})")
    con.commit()
    fast, slow = _both(con, general, sql, (q,))
    assert fast == slow and not {r[0] for r in before[:3]} & {r[0] for r in fast}
