"""Vector columns and knn() through SQL: values, distances, documents (MaxP), filters, ordering,
doc-id search, transactions, persistence of the FAISS index, OPTIMIZE, EXPLAIN, errors."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tesseradb
METRICS = ["l2", "ip", "cosine"]


def rows(con, sql, params=None):
    return con.execute(sql, params).fetchall()


def make(con, name="t", kind="float_vector_array", dims=4, metric="l2", extra="tag int, "):
    con.execute(f"CREATE TABLE {name} ({extra}v {kind} knn_type='hnsw' knn_dims='{dims}' "
                f"hnsw_similarity='{metric}')")


def reference(docs: dict[int, np.ndarray], q: np.ndarray, metric: str) -> dict[int, float]:
    """Brute force in float64: each document's distance is that of its closest vector (MaxP)."""
    q = np.asarray(q, np.float64)
    out = {}
    for doc, vecs in docs.items():
        x = np.asarray(vecs, np.float64)
        if not len(x):
            continue
        if metric == "l2":
            d = ((x - q) ** 2).sum(axis=1)
        elif metric == "ip":
            d = 1.0 - x @ q
        else:
            d = 1.0 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        out[doc] = float(d.min())
    return out


def top(ref: dict[int, float], k: int, allowed=None) -> list[tuple[int, float]]:
    items = [(d, v) for d, v in ref.items() if allowed is None or d in allowed]
    return sorted(items, key=lambda h: (h[1], h[0]))[:k]


def assert_hits(got, expected, tol=1e-5):
    assert [g[0] for g in got] == [e[0] for e in expected], (got, expected)
    for (_, gd), (_, ed) in zip(got, expected):
        assert gd == pytest.approx(ed, abs=tol, rel=tol)


# -- values -----------------------------------------------------------------------------------------
def test_literals_and_empty_values(con):
    make(con, "a", "float_vector_array", 3)
    make(con, "s", "float_vector", 3)
    con.execute("INSERT INTO a (id, v) VALUES (1, [[1,2,3]]), (2, [[1,0,0],[0,1.5,-2]]), (3, []), (4, NULL)")
    con.execute("INSERT INTO a (id) VALUES (5)")
    con.execute("INSERT INTO s (id, v) VALUES (1, (1,2,3)), (2, (-1, 0.5, 1e3)), (3, ()), (4, NULL)")
    con.execute("INSERT INTO s (id) VALUES (5)")
    assert rows(con, "SELECT id, v, LENGTH(v) FROM a ORDER BY id") == [
        (1, [[1.0, 2.0, 3.0]], 1), (2, [[1.0, 0.0, 0.0], [0.0, 1.5, -2.0]], 2), (3, [], 0), (4, [], 0), (5, [], 0)]
    assert rows(con, "SELECT id, v, LENGTH(v) FROM s ORDER BY id") == [
        (1, [1.0, 2.0, 3.0], 3), (2, [-1.0, 0.5, 1000.0], 3), (3, None, 0), (4, None, 0), (5, None, 0)]


def test_parameters_list_list_of_lists_and_numpy(con):
    make(con, "a", "float_vector_array", 2)
    make(con, "s", "float_vector", 2)
    con.execute("INSERT INTO a (id, v) VALUES (?, ?), (?, ?), (?, ?)",
                [1, [[1, 2], [3, 4]], 2, np.array([[5, 6]], np.float32), 3, [np.array([7.0, 8.0])]])
    con.execute("INSERT INTO a (id, v) VALUES (:id, :v)", {"id": 4, "v": []})
    con.executemany("INSERT INTO s (id, v) VALUES (?, ?)",
                    [(1, [1, 2]), (2, (3.5, 4)), (3, np.array([5, 6], np.float64)), (4, np.arange(2, dtype=np.int32))])
    assert rows(con, "SELECT v FROM a ORDER BY id") == [([[1.0, 2.0], [3.0, 4.0]],), ([[5.0, 6.0]],),
                                                        ([[7.0, 8.0]],), ([],)]
    assert rows(con, "SELECT v FROM s ORDER BY id") == [([1.0, 2.0],), ([3.5, 4.0],), ([5.0, 6.0],), ([0.0, 1.0],)]
    q = np.array([5, 6], np.float32)
    assert rows(con, "SELECT id, knn_dist() FROM a WHERE knn(v, 1, ?)", [q]) == [(2, 0.0)]
    assert rows(con, "SELECT id, knn_dist() FROM s WHERE knn(v, ?, ?)", [1, [5, 6]]) == [(3, 0.0)]
    assert rows(con, "SELECT id FROM s WHERE knn(v, :k, :q)", {"k": 1, "q": (3.5, 4)}) == [(2,)]


def test_insert_select_copies_vectors(con):
    make(con, "src", "float_vector_array", 2)
    make(con, "dst", "float_vector_array", 2)
    con.execute("INSERT INTO src (id, tag, v) VALUES (1, 1, [[1,1],[2,2]]), (2, 2, [[3,3]]), (3, 3, [])")
    con.execute("INSERT INTO dst (id, tag, v) SELECT id + 10, tag, v FROM src")
    assert rows(con, "SELECT id, v FROM dst ORDER BY id") == [(11, [[1.0, 1.0], [2.0, 2.0]]), (12, [[3.0, 3.0]]),
                                                              (13, [])]
    assert rows(con, "SELECT id, knn_dist() FROM dst WHERE knn(v, 5, (2,2))") == [(11, 0.0), (12, 2.0)]


ARRAY_ERRORS = [
    ("(1,0,0,0)", "float_vector_array requires an array of vectors, e.g. [[1,2],[3,4]]"),
    ("[1,0,0,0]", "float_vector_array requires an array of vectors, e.g. [[1,2],[3,4]]"),
    ("[[]]", "vector #1 is empty; vectors must have at least one entry"),
    ("[[1,0,0,0],[]]", "vector #2 is empty; vectors must have at least one entry"),
    ("[[1,2,3,4],[5,6,7]]", "vector #2 has 3 entries, expected 4"),
    ("[[1,2],[3,4]]", "vectors have 2 values, index 'v' needs 4 values"),
    ("'[[1,0,0,0]]'", "incompatible value specified for a float vector column"),
    ("7", "incompatible value specified for a float vector column"),
    ("[[1,0,0,'x']]", "incompatible value specified for a float vector column"),
    ("[[1,0,0,NULL]]", "incompatible value specified for a float vector column"),
    ("[[1,0,0,1e39]]", "vector #1 has a value out of the float32 range"),
]


@pytest.mark.parametrize("value, message", ARRAY_ERRORS)
def test_malformed_array_values_name_row_and_column_and_insert_nothing(con, value, message):
    make(con, dims=4)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0,0,0,1]])")
    con.commit()
    with pytest.raises(tesseradb.DataError) as info:
        con.execute(f"INSERT INTO t (id, v) VALUES (10, [[1,0,0,0]]), (11, []), (12, {value}), (13, [[1,1,1,1]])")
    assert f"row 3, column 'v': {message}" in info.value.msg
    assert (info.value.errno, info.value.sqlstate) == (1366, "HY000")
    assert rows(con, "SELECT id FROM t") == [(1,)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 10, (1,0,0,0))") == [(1,)]


SINGLE_ERRORS = [
    ("(1,2,3)", "data has 3 values, index 'v' needs 4 values"),
    ("[[1,2,3,4]]", "nested vector syntax is only valid for float_vector_array attributes"),
    ("'1,2,3,4'", "incompatible value specified for a float vector column"),
    ("(1,2,'x',4)", "incompatible value specified for a float vector column"),
]


@pytest.mark.parametrize("value, message", SINGLE_ERRORS)
def test_malformed_single_vectors(con, value, message):
    make(con, kind="float_vector", dims=4)
    with pytest.raises(tesseradb.DataError) as info:
        con.execute(f"INSERT INTO t (id, v) VALUES (1, (1,1,1,1)), (2, {value})")
    assert f"row 2, column 'v': {message}" in info.value.msg
    assert rows(con, "SELECT COUNT(*) FROM t") == [(0,)]


@pytest.mark.parametrize("value, message", [
    ([[1.0, float("nan"), 0.0, 0.0]], "vector #1 contains NaN or infinity"),
    ([[1.0, 0.0, 0.0, float("inf")]], "vector #1 contains NaN or infinity"),
    (np.array([[1, 0, 0, 0], [np.nan, 0, 0, 0]], np.float32), "vector #2 contains NaN or infinity"),
    ([1.0, 0.0, 0.0, 0.0], "float_vector_array requires an array of vectors"),
    (np.ones(4), "float_vector_array requires an array of vectors"),
    (np.ones((2, 3)), "vectors have 3 values, index 'v' needs 4 values"),
    ("[[1,0,0,0]]", "incompatible value specified for a float vector column"),
    ([["1", "0", "0", "0"]], "incompatible value specified for a float vector column"),
])
def test_malformed_parameters(con, value, message):
    make(con, dims=4)
    with pytest.raises(tesseradb.DataError) as info:
        con.executemany("INSERT INTO t (v) VALUES (?)", [([[1, 1, 1, 1]],), (value,)])
    assert f"row 2, column 'v': {message}" in info.value.msg
    assert rows(con, "SELECT COUNT(*) FROM t") == [(0,)]


def test_a_non_knn_vector_column_takes_any_width(con):
    con.execute("CREATE TABLE p (v float_vector, w float_vector_array)")
    con.execute("INSERT INTO p (v, w) VALUES ((1), [[1,2,3]]), ((1,2,3,4,5), [[1],[2]])")
    assert rows(con, "SELECT LENGTH(v), LENGTH(w) FROM p ORDER BY id") == [(1, 1), (5, 2)]
    with pytest.raises(tesseradb.DataError, match="vector #2 has 2 entries, expected 1"):
        con.execute("INSERT INTO p (w) VALUES ([[1],[2,3]])")


# -- distances ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("kind", ["float_vector", "float_vector_array"])
def test_distances_match_numpy(con, metric, kind):
    rng = np.random.default_rng(7)
    make(con, kind=kind, dims=8, metric=metric)
    docs = {}
    for doc in range(1, 41):
        n = 1 if kind == "float_vector" else int(rng.integers(1, 4))
        docs[doc] = rng.normal(size=(n, 8)).astype(np.float32)
        con.execute("INSERT INTO t (id, v) VALUES (?, ?)", [doc, docs[doc][0] if kind == "float_vector" else docs[doc]])
    con.commit()
    for _ in range(3):
        q = rng.normal(size=8).astype(np.float32)
        expected = top(reference(docs, q, metric), 40)
        got = rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 40, ?)", [q])
        assert_hits(got, expected)


def test_the_three_metrics_by_hand(con):
    for metric in METRICS:
        make(con, f"t_{metric}", "float_vector", 2, metric, extra="")
        con.execute(f"INSERT INTO t_{metric} (id, v) VALUES (1, (3, 4)), (2, (1, 0))")
    assert rows(con, "SELECT id, knn_dist() FROM t_l2 WHERE knn(v, 2, (0, 0))") == [(2, 1.0), (1, 25.0)]
    assert rows(con, "SELECT id, knn_dist() FROM t_ip WHERE knn(v, 2, (1, 1))") == [(1, -6.0), (2, 0.0)]
    got = rows(con, "SELECT id, knn_dist() FROM t_cosine WHERE knn(v, 2, (1, 1))")
    assert [g[0] for g in got] == [1, 2]
    assert got[0][1] == pytest.approx(1 - 7 / (5 * 2 ** 0.5), abs=1e-6)
    assert got[1][1] == pytest.approx(1 - 1 / 2 ** 0.5, abs=1e-6)


def test_cosine_normalizes_each_vector_on_its_own(con):
    make(con, kind="float_vector_array", dims=2, metric="cosine")
    con.execute("INSERT INTO t (id, v) VALUES (1, [[10, 0], [0, 0.001]])")
    assert rows(con, "SELECT v FROM t") == [([[1.0, 0.0], [0.0, 1.0]],)]
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 1, (0, 5))") == [(1, 0.0)]


# -- documents, not chunks ------------------------------------------------------------------------------
def sixty_documents(con, metric):
    """60 documents with 0..4 vectors each (a few with none), tags 0..5, in two batches."""
    rng = np.random.default_rng(60)
    make(con, dims=6, metric=metric)
    docs, tags = {}, {}
    for doc in range(1, 61):
        n = 0 if doc % 13 == 0 else int(rng.integers(1, 5))
        docs[doc] = rng.normal(size=(n, 6)).astype(np.float32)
        tags[doc] = doc % 6
    for batch in (range(1, 31), range(31, 61)):
        con.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)", [(d, tags[d], docs[d]) for d in batch])
        con.commit()
    return rng, docs, tags


@pytest.mark.parametrize("metric", METRICS)
def test_sixty_multi_vector_documents_against_brute_force(con, metric):
    rng, docs, tags = sixty_documents(con, metric)
    filters = {
        "": None,
        "AND tag = 2": {d for d in docs if tags[d] == 2},
        "AND tag < 3": {d for d in docs if tags[d] < 3},
        "AND id BETWEEN 20 AND 40": set(range(20, 41)),
        "AND (tag = 1 OR id > 55)": {d for d in docs if tags[d] == 1 or d > 55},
        "AND id IN (13, 26, 39)": set(),                         # only documents without vectors
    }
    for _ in range(4):
        q = rng.normal(size=6).astype(np.float32)
        ref = reference(docs, q, metric)
        for k in (1, 3, 10, 25, 60, 100):
            for where, allowed in filters.items():
                got = rows(con, f"SELECT id, knn_dist() FROM t WHERE knn(v, {k}, ?) {where}", [q])
                assert_hits(got, top(ref, k, allowed))
                assert len({g[0] for g in got}) == len(got)      # each document once


def test_k_counts_documents_and_each_document_appears_once(con):
    make(con, dims=1)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0],[0.1],[0.2],[0.3]]), (2, [[0.05],[0.15]]), (3, [[5]])")
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 2, (0))") == [(1, 0.0), (2, pytest.approx(0.0025))]
    assert rows(con, "SELECT COUNT(*), COUNT(DISTINCT id) FROM t WHERE knn(v, 10, (0))") == [(3, 3)]


def test_documents_without_vectors_never_match(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 1, []), (2, 1, [[0,0]])")
    con.execute("INSERT INTO t (id, tag) VALUES (3, 1)")
    make(con, "s", "float_vector", 2)
    con.execute("INSERT INTO s (id, tag, v) VALUES (1, 1, ()), (2, 1, (0,0))")
    con.execute("INSERT INTO s (id, tag) VALUES (3, 1)")
    for table in ("t", "s"):
        assert rows(con, f"SELECT id FROM {table} WHERE knn(v, 10, (0,0))") == [(2,)]
        assert rows(con, f"SELECT id FROM {table} WHERE knn(v, 10, (0,0)) AND id IN (1, 3)") == []
    con.commit()
    for table in ("t", "s"):
        assert rows(con, f"SELECT id FROM {table} WHERE knn(v, 10, (0,0)) AND tag = 1") == [(2,)]


# -- filters -----------------------------------------------------------------------------------------------
def big_table(con, n=3000, dims=8, seed=3):
    """Enough chunks (n documents, 1-2 vectors) for the graph path; a low ef_construction keeps it quick."""
    rng = np.random.default_rng(seed)
    con.execute(f"CREATE TABLE big (tag int, v float_vector_array knn_type='hnsw' knn_dims='{dims}' "
                "hnsw_similarity='l2' hnsw_ef_construction='40')")
    docs = {d: rng.normal(size=(1 + d % 2, dims)).astype(np.float32) for d in range(1, n + 1)}
    con.executemany("INSERT INTO big (id, tag, v) VALUES (?, ?, ?)", [(d, d % 100, docs[d]) for d in docs])
    con.commit()
    return rng, docs


def test_a_filtered_query_returns_exactly_the_k_nearest_matching_documents(con):
    rng, docs = big_table(con)
    for _ in range(5):
        q = rng.normal(size=8).astype(np.float32)
        ref = reference(docs, q, "l2")
        for where, allowed in (("tag = 7", {d for d in docs if d % 100 == 7}),
                               ("tag < 10", {d for d in docs if d % 100 < 10}),
                               ("id > 2900", {d for d in docs if d > 2900})):
            got = rows(con, f"SELECT id, knn_dist() FROM big WHERE knn(v, 10, ?) AND {where}", [q])
            assert_hits(got, top(ref, 10, allowed))
            assert len(got) == 10


def test_graph_search_finds_the_nearest_documents(con):
    rng, docs = big_table(con)
    plan = dict(rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 10, (0,0,0,0,0,0,0,0))"))["knn"]
    found = total = 0
    for _ in range(20):
        q = rng.normal(size=8).astype(np.float32)
        ref = reference(docs, q, "l2")
        for where, allowed in (("", None), ("AND tag < 60", {d for d in docs if d % 100 < 60})):
            got = rows(con, f"SELECT id, knn_dist() FROM big WHERE knn(v, 10, ?) {where}", [q])
            assert len(got) == 10
            assert all(allowed is None or g[0] in allowed for g in got)
            for doc, dist in got:                               # every distance is the true one
                assert dist == pytest.approx(ref[doc], rel=1e-5, abs=1e-5)
            found += len({g[0] for g in got} & {d for d, _ in top(ref, 10, allowed)})
            total += 10
    assert found / total >= 0.95
    assert "path=graph" in plan


def test_filters_with_parameters_joins_and_subqueries(con):
    make(con, dims=2)
    con.execute("CREATE TABLE meta (doc bigint, lang string)")
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 1, [[0,0]]), (2, 2, [[1,0]]), (3, 1, [[2,0]]), (4, 2, [[3,0]])")
    con.execute("INSERT INTO meta (doc, lang) VALUES (1, 'en'), (2, 'de'), (3, 'de'), (4, 'en')")
    assert rows(con, "SELECT id FROM t WHERE knn(v, 1, ?) AND tag = ?", [[0, 0], 2]) == [(2,)]
    assert rows(con, "SELECT t.id, m.lang FROM t JOIN meta m ON m.doc = t.id WHERE knn(t.v, 2, (0,0)) AND m.lang = 'de'") \
        == [(2, "de"), (3, "de")]
    assert rows(con, "SELECT id FROM t WHERE id IN (SELECT doc FROM meta WHERE lang = :l) AND knn(v, 1, :q)",
                {"l": "en", "q": [3, 0]}) == [(4,)]


# -- ordering and knn_dist() ------------------------------------------------------------------------------
def test_default_order_is_distance_then_id(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, v) VALUES (5, [[1,0]]), (3, [[0,1]]), (4, [[-1,0]]), (1, [[2,0]]), (2, [[0,-1]])")
    assert [r[0] for r in rows(con, "SELECT id FROM t WHERE knn(v, 5, (0,0))")] == [2, 3, 4, 5, 1]


def test_user_order_by_is_obeyed(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 30, [[0,0]]), (2, 10, [[1,0]]), (3, 20, [[2,0]])")
    assert rows(con, "SELECT id FROM t WHERE knn(v, 3, (0,0)) ORDER BY tag") == [(2,), (3,), (1,)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 3, (0,0)) ORDER BY id DESC") == [(3,), (2,), (1,)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 3, (0,0)) ORDER BY knn_dist() DESC") == [(3,), (2,), (1,)]
    assert rows(con, "SELECT id, knn_dist() AS d FROM t WHERE knn(v, 3, (0,0)) ORDER BY d DESC LIMIT 1") == [(3, 4.0)]


def test_knn_dist_in_select_where_and_order_by(con):
    make(con, dims=1)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0]]), (2, [[1]]), (3, [[2]]), (4, [[3]])")
    assert rows(con, "SELECT id, knn_dist(), knn_dist() * 2 AS twice FROM t WHERE knn(v, 4, (0)) AND knn_dist() > 0.5 "
                     "AND knn_dist() < 5 ORDER BY knn_dist() DESC") == [(3, 4.0, 8.0), (2, 1.0, 2.0)]
    assert rows(con, "SELECT id, knn_dist() AS d FROM t WHERE knn(v, 4, (0)) AND d >= 4") == [(3, 4.0), (4, 9.0)]
    # k is chosen before the knn_dist() condition (as Manticore): the 2 nearest, then the distance test
    assert rows(con, "SELECT id FROM t WHERE knn(v, 2, (0)) AND knn_dist() > 0.5") == [(2,)]


def test_result_column_names(con):
    make(con, dims=1)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0]])")
    # named as written, like MySQL
    cur = con.execute("SELECT id, knn_dist(), LENGTH(v), knn_dist() AS d, v FROM t WHERE knn(v, 1, (0))")
    assert [d[0] for d in cur.description] == ["id", "knn_dist()", "LENGTH(v)", "d", "v"]


# -- search by document id ------------------------------------------------------------------------------
def test_knn_by_document_id_uses_its_vectors_and_leaves_it_out(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 0, [[0,0],[10,10]]), (2, 0, [[0,1]]), (3, 1, [[10,11]]), "
                "(4, 1, [[5,5]]), (5, 1, [])")
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 2, 1)") == [(2, 1.0), (3, 1.0)]
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)", [1]) == [(2, 1.0), (3, 1.0), (4, 50.0)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 10, 1) AND tag = 1") == [(3,), (4,)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 10, 5)") == []       # no vectors: no query
    assert rows(con, "SELECT id FROM t WHERE knn(v, 10, 99)") == []      # no such document
    con.commit()
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 2, 1)") == [(2, 1.0), (3, 1.0)]


# -- writes, transactions, deletes ------------------------------------------------------------------------
def test_a_rolled_back_insert_is_never_found(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[5,5]])")
    con.commit()
    con.execute("INSERT INTO t (id, v) VALUES (2, [[0,0]])")
    assert rows(con, "SELECT id FROM t WHERE knn(v, 1, (0,0))") == [(2,)]      # the transaction sees its own
    con.rollback()
    assert rows(con, "SELECT id FROM t WHERE knn(v, 5, (0,0))") == [(1,)]
    con.execute("INSERT INTO t (id, v) VALUES (3, [[9,9]])")                    # may reuse the chunk ids
    con.commit()
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 5, (0,0))") == [(1, 50.0), (3, 162.0)]


def test_rollback_after_optimize_in_a_transaction(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[5,5]])")
    con.commit()
    con.execute("INSERT INTO t (id, v) VALUES (2, [[0,0]])")
    con.execute("OPTIMIZE TABLE t")                    # commits first, like MySQL
    assert not con.in_transaction
    con.execute("INSERT INTO t (id, v) VALUES (3, [[1,1]])")
    con.execute("OPTIMIZE TABLE t")
    con.execute("INSERT INTO t (id, v) VALUES (4, [[0,1]])")
    con.rollback()
    con.execute("INSERT INTO t (id, v) VALUES (5, [[0,0.5]])")
    con.commit()
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 10, (0,0))") == \
        [(2, 0.0), (5, 0.25), (3, 2.0), (1, 50.0)]


def test_deleted_and_replaced_documents_are_excluded(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0,0]]), (2, [[1,0]]), (3, [[2,0]]), (4, [[3,0]])")
    con.commit()
    query = "SELECT id, knn_dist() FROM t WHERE knn(v, 2, (0,0))"
    con.execute("DELETE FROM t WHERE id = 1")
    con.execute("REPLACE INTO t (id, v) VALUES (2, [[100,0]])")
    assert rows(con, query) == [(3, 4.0), (4, 9.0)]                 # inside the transaction
    con.commit()
    assert rows(con, query) == [(3, 4.0), (4, 9.0)]                 # after COMMIT
    con.execute("UPDATE t SET v = [[0,0.5]] WHERE id = 4")
    con.commit()
    assert rows(con, query) == [(4, 0.25), (3, 4.0)]
    con.execute("UPDATE t SET v = [] WHERE id = 4")
    con.commit()
    assert rows(con, query) == [(3, 4.0), (2, 10000.0)]
    con.execute("TRUNCATE TABLE t")
    con.commit()
    assert rows(con, query) == []


def test_optimize_table_keeps_results_and_drops_tombstones(con):
    rng, docs = big_table(con, n=600)
    rows(con, "SELECT id FROM big WHERE knn(v, 1, (0,0,0,0,0,0,0,0))")     # the index is loaded
    con.execute("DELETE FROM big WHERE id % 3 = 0")
    con.execute("REPLACE INTO big (id, tag, v) VALUES (1, 1, [[0,0,0,0,0,0,0,0]])")
    con.commit()
    docs = {d: v for d, v in docs.items() if d % 3}
    docs[1] = np.zeros((1, 8), np.float32)
    queries = [rng.normal(size=8).astype(np.float32) for _ in range(5)]
    before = [rows(con, "SELECT id, knn_dist() FROM big WHERE knn(v, 15, ?)", [q]) for q in queries]
    explain = dict(rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 15, (0,0,0,0,0,0,0,0))")[1:2])["knn"]
    assert "tombstones=0" not in explain
    assert rows(con, "OPTIMIZE TABLE big") == [("big", "optimize", "status", "OK")]
    after = [rows(con, "SELECT id, knn_dist() FROM big WHERE knn(v, 15, ?)", [q]) for q in queries]
    assert after == before
    for q, got in zip(queries, after):
        assert_hits(got, top(reference(docs, q, "l2"), 15))
    explain = dict(rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 15, (0,0,0,0,0,0,0,0))")[1:2])["knn"]
    assert "tombstones=0" in explain


def test_update_of_a_knn_vector_reindexes_it_and_the_id_cannot_change(con):
    make(con, dims=2)
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 1, [[0,0]]), (2, 2, [[5,5]])")
    con.commit()
    con.execute("UPDATE t SET v = [[9,9],[1,1]], tag = 3 WHERE id = 2")
    con.commit()
    assert rows(con, "SELECT id, tag, knn_dist() FROM t WHERE knn(v, 1, (1,1))") == [(2, 3, 0.0)]
    with pytest.raises(tesseradb.ProgrammingError, match="the id of a row with vector columns cannot be updated"):
        con.execute("UPDATE t SET id = 10 WHERE id = 1")
    assert rows(con, "SELECT id FROM t WHERE knn(v, 5, (0,0))") == [(1,), (2,)]


# -- persistence --------------------------------------------------------------------------------------
def test_the_index_persists_inside_the_database(db_path, saved_indexes):
    con = tesseradb.connect(db_path)
    rng, docs = big_table(con, n=500)
    queries = [rng.normal(size=8).astype(np.float32) for _ in range(3)]
    expected = [rows(con, "SELECT id, knn_dist() FROM big WHERE knn(v, 7, ?) AND tag < 50", [q]) for q in queries]
    con.close()
    assert sorted(os.listdir(os.path.dirname(db_path))) == [os.path.basename(db_path)]   # one file
    assert len(saved_indexes(db_path).names()) == 1
    con = tesseradb.connect(db_path)
    assert [rows(con, "SELECT id, knn_dist() FROM big WHERE knn(v, 7, ?) AND tag < 50", [q]) for q in queries] \
        == expected
    con.close()


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage", "stale"])
def test_a_missing_corrupt_or_stale_saved_index_is_rebuilt(db_path, damage, saved_indexes):
    con = tesseradb.connect(db_path)
    make(con, dims=2)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0,0]]), (2, [[1,1]]), (3, [[2,2]])")
    con.commit()
    rows(con, "SELECT id FROM t WHERE knn(v, 1, (0,0))")
    con.close()
    saved = saved_indexes(db_path)
    (name,) = saved.names()
    data = saved.read(name)
    if damage == "delete":
        saved.delete(name)
    elif damage == "truncate":
        saved.write(name, data[:len(data) // 2])
    elif damage == "garbage":
        middle = len(data) // 2
        saved.write(name, data[:middle] + b"\xde\xad\xbe\xef" * 8 + data[middle + 32:])
    else:                                              # the saved index is older than the rows
        con = tesseradb.connect(db_path)
        con.execute("DELETE FROM t WHERE id = 1")
        con.execute("INSERT INTO t (id, v) VALUES (4, [[0.1,0]])")
        con.commit()
        con.close()
        saved.write(name, data)
    con = tesseradb.connect(db_path)
    expected = [(4, pytest.approx(0.01)), (2, 2.0), (3, 8.0)] if damage == "stale" else [(1, 0.0), (2, 2.0), (3, 8.0)]
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 5, (0,0))") == expected
    con.close()
    assert len(saved.names()) == 1


def test_drop_table_removes_the_saved_index(db_path, saved_indexes):
    con = tesseradb.connect(db_path)
    make(con, dims=2)
    con.execute("INSERT INTO t (id, v) VALUES (1, [[0,0]])")
    con.commit()
    rows(con, "SELECT id FROM t WHERE knn(v, 1, (0,0))")
    con.close()
    con = tesseradb.connect(db_path)
    rows(con, "SELECT id FROM t WHERE knn(v, 1, (0,0))")
    assert len(saved_indexes(db_path).names()) == 1
    con.execute("DROP TABLE t")
    con.commit()
    con.close()
    assert saved_indexes(db_path).names() == []


def test_alter_table_add_and_drop_a_vector_column(con):
    con.execute("CREATE TABLE t (title text)")
    con.execute("INSERT INTO t (id, title) VALUES (1, 'old')")
    con.execute("ALTER TABLE t ADD COLUMN v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2'")
    con.execute("INSERT INTO t (id, title, v) VALUES (2, 'new', [[1,1]])")
    assert rows(con, "SELECT id, v FROM t ORDER BY id") == [(1, []), (2, [[1.0, 1.0]])]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 5, (0,0))") == [(2,)]
    con.commit()
    con.execute("ALTER TABLE t DROP COLUMN v")
    con.commit()
    with pytest.raises(tesseradb.ProgrammingError, match="requested KNN search attribute 'v' not found"):
        con.execute("SELECT id FROM t WHERE knn(v, 5, (0,0))")


# -- EXPLAIN ------------------------------------------------------------------------------------------
def test_explain_shows_exact_or_graph(con):
    big_table(con, n=3000)
    small = dict(rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 5, (0,0,0,0,0,0,0,0)) AND tag = 3"))
    assert small["knn"].startswith("path=exact")
    plan = rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 5, (0,0,0,0,0,0,0,0), {ef=60})")
    assert plan[0] == ("knn", "big.v: k=5, all documents")
    assert plan[1][1].startswith("path=graph") and "ef=60," in plan[1][1]
    # a large ef makes the graph search cost more than computing every distance: exact
    wide = dict(rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 5, (0,0,0,0,0,0,0,0), {ef=1000})"))
    assert wide["knn"].startswith("path=exact")
    filtered = rows(con, "EXPLAIN SELECT id FROM big WHERE knn(v, 5, (0,0,0,0,0,0,0,0)) AND tag < 90")
    assert filtered[0] == ("knn", "big.v: k=5, 2700 documents pass the filter")
    assert "candidates=4050" in filtered[1][1]
    assert any(step == "sqlite" for step, _ in plan)
    assert rows(con, "SELECT COUNT(*) FROM big") == [(3000,)]                   # EXPLAIN ran nothing


# -- errors --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sql, params, cls, message", [
    ("SELECT id FROM t WHERE knn(v, ?, (0,0))", [0], tesseradb.ProgrammingError, "k parameter must be positive"),
    ("SELECT id FROM t WHERE knn(v, -3, (0,0))", None, tesseradb.ProgrammingError, "k parameter must be positive"),
    ("SELECT id FROM t WHERE knn(v, 1, ?)", [[0, 0, 0]], tesseradb.ProgrammingError,
     "KNN index 'v' requires a vector of 2 entries; 3 entries specified"),
    ("SELECT id FROM t WHERE knn(v, 1, ?)", [np.zeros(1)], tesseradb.ProgrammingError,
     "KNN index 'v' requires a vector of 2 entries; 1 entries specified"),
    ("SELECT id FROM t WHERE knn(tag, 1, (0,0))", None, tesseradb.ProgrammingError,
     "KNN index not enabled for attribute 'tag'"),
    ("SELECT id FROM t WHERE knn(plain, 1, (0,0))", None, tesseradb.ProgrammingError,
     "KNN index not enabled for attribute 'plain'"),
    ("SELECT id FROM t WHERE knn(nope, 1, (0,0))", None, tesseradb.ProgrammingError,
     "requested KNN search attribute 'nope' not found"),
    ("SELECT id FROM t WHERE knn(v, 1, (0,0)) AND knn(v, 2, (1,1))", None, tesseradb.ProgrammingError,
     "only one knn() is supported per query"),
    ("SELECT knn_dist() FROM t", None, tesseradb.ProgrammingError, "knn_dist() is only allowed for KNN() queries"),
    ("SELECT id FROM t ORDER BY knn_dist()", None, tesseradb.ProgrammingError, "knn_dist() is only allowed for KNN() queries"),
    ("SELECT id FROM t WHERE knn(v, 1, ?)", [[0, float("nan")]], tesseradb.DataError, "NaN or infinity"),
])
def test_knn_errors(con, sql, params, cls, message):
    con.execute("CREATE TABLE t (tag int, plain float_vector, "
                "v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    con.execute("INSERT INTO t (id, v) VALUES (1, (0,0))")
    with pytest.raises(cls) as info:
        con.execute(sql, params)
    assert message in info.value.msg
    assert rows(con, "SELECT id FROM t WHERE knn(v, 1, (0,0))") == [(1,)]


# -- Manticore case 25: a filtered 100-document array table -------------------------------------------------
def test_manticore_case_25_filtered_paths(con):
    con.execute("CREATE TABLE t (tag int, v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    con.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)",
                    [(d, d % 10, [[d, 0], [d + 1000, 0]]) for d in range(1, 101)])
    con.commit()
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 3, (1, 0)) AND tag = 5") == \
        [(5, 16.0), (15, 196.0), (25, 576.0)]
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 3, (1, 0)) AND tag < 4") == \
        [(1, 0.0), (2, 1.0), (3, 4.0)]
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 3, (48, 0)) AND tag < 7") == \
        [(46, 4.0), (50, 4.0), (45, 9.0)]


def test_the_vectors_example_script():
    """sql_examples/vectors.sql (tests/docs/test_sql_examples.py runs it through the shell too)."""
    script = (Path(__file__).resolve().parents[2] / "sql_examples" / "vectors.sql").read_text()
    con = tesseradb.connect()
    con.executescript(script)
    assert rows(con, "SELECT id FROM photos WHERE knn(v, 3, (1.0, 0.2, 0.0, 0.0))") == [(1,), (2,), (3,)]
    assert rows(con, "SELECT id FROM photos WHERE knn(v, 2, (1.0, 0.2, 0.0, 0.0)) AND album = 'hikes'") == [(3,), (4,)]
    assert rows(con, "SELECT id FROM photos WHERE knn(v, 3, 2) ORDER BY taken DESC") == [(1,), (4,), (3,)]
    assert rows(con, "SELECT id, knn_dist() FROM pages WHERE knn(chunks, 2, (0, 1, 0))") == [(1, 0.0), (3, 41.0)]
    con.close()


def test_the_hits_drive_the_join(con):
    """SQLite reads the k hits and looks the rows up by id, instead of scanning the table."""
    make(con, dims=2)
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 1, [[0,0]]), (2, 2, [[1,1]])")
    plan = [d for step, d in rows(con, "EXPLAIN SELECT * FROM t WHERE knn(v, 1, (0,0))") if step == "plan"]
    assert plan[0].strip() == "SCAN _knn"
    assert plan[1].strip().startswith("SEARCH t USING INTEGER PRIMARY KEY")


def test_select_star_with_subqueries_and_joins(con):
    make(con, dims=2)
    con.execute("CREATE TABLE tags (tag int, label string)")
    con.execute("INSERT INTO t (id, tag, v) VALUES (1, 1, [[0,0]]), (2, 2, [[1,1]])")
    con.execute("INSERT INTO tags (tag, label) VALUES (1, 'one'), (2, 'two')")
    assert rows(con, "SELECT * FROM t WHERE knn(v, 5, (0,0)) AND tag IN (SELECT tag FROM tags WHERE label = 'two')") \
        == [(2, 2, [[1.0, 1.0]], 2.0)]            # SELECT * of a knn query ends with @knn_dist
    assert rows(con, "SELECT * FROM tags g JOIN t ON t.tag = g.tag WHERE knn(t.v, 1, (0,0))") == \
        [(1, 1, "one", 1, 1, [[0.0, 0.0]], 0.0)]
    assert rows(con, "SELECT * FROM t JOIN (SELECT tag, label FROM tags) s ON s.tag = t.tag WHERE knn(v, 1, (1,1))") \
        == [(2, 2, [[1.0, 1.0]], 2, "two", 0.0)]


def test_insert_select_with_knn_and_length(con):
    make(con, "src", dims=2)
    con.execute("CREATE TABLE hits (tag int, dist float, n int)")
    con.execute("INSERT INTO src (id, tag, v) VALUES (1, 1, [[0,0]]), (2, 2, [[1,1],[2,2]]), (3, 3, [[2,2]])")
    con.execute("INSERT INTO hits (id, tag, dist, n) SELECT id, tag, knn_dist(), LENGTH(v) FROM src "
                "WHERE knn(v, 2, (0,0)) AND tag > 1")
    assert rows(con, "SELECT * FROM hits ORDER BY id") == [(2, 2, 2.0, 2), (3, 3, 8.0, 1)]
