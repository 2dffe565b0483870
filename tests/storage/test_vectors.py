"""storage.vectors.VectorIndex against a numpy brute-force reference."""
from __future__ import annotations

import os
import struct
import threading

import faiss
import numpy as np
import pytest

from tesseradb.storage import index_file, vector_plan
from tesseradb.storage.errors import IndexCorrupt, StorageError
from tesseradb.storage.vectors import VectorIndex

METRICS = ["l2", "ip", "cosine"]


# ---- helpers -----------------------------------------------------------------------------------

def normalized(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def make_docs(rng: np.random.Generator, n_docs: int, dims: int, metric: str, per_doc: tuple[int, int] = (1, 8)):
    """Random documents with a random number of chunks each; chunk ids are sparse and arbitrary."""
    counts = rng.integers(per_doc[0], per_doc[1] + 1, n_docs)
    doc_ids = np.repeat(rng.choice(10**9, n_docs, replace=False), counts).astype(np.int64)
    chunk_ids = rng.choice(np.arange(-(10**12), 10**12, 9_973), len(doc_ids), replace=False).astype(np.int64)
    x = rng.standard_normal((len(doc_ids), dims)).astype(np.float32)
    return chunk_ids, doc_ids, normalized(x) if metric == "cosine" else x


def query(rng: np.random.Generator, dims: int, metric: str) -> np.ndarray:
    q = rng.standard_normal(dims).astype(np.float32)
    return normalized(q) if metric == "cosine" else q


def brute_force(x, chunk_ids, doc_ids, q, k, metric, *, allowed=None, exclude=None, dead=()):
    """(doc, distance, chunk) of the k nearest documents, in float64, MaxP, ties by doc id."""
    x64, q64 = x.astype(np.float64), np.asarray(q, np.float64)
    dist = ((x64 - q64) ** 2).sum(axis=1) if metric == "l2" else 1.0 - x64 @ q64
    allowed = None if allowed is None else {int(d) for d in allowed}
    dead = {int(c) for c in dead}
    best: dict[int, tuple[float, int]] = {}
    for d, c, doc in zip(dist, chunk_ids.tolist(), doc_ids.tolist()):
        if c in dead or doc == exclude or (allowed is not None and doc not in allowed):
            continue
        if doc not in best or (d, c) < best[doc]:
            best[doc] = (d, c)
    return sorted(((doc, d, c) for doc, (d, c) in best.items()), key=lambda r: (r[1], r[0]))[:k]


def assert_same(got, want):
    assert [r[0] for r in got] == [r[0] for r in want]
    assert [r[2] for r in got] == [r[2] for r in want]
    np.testing.assert_allclose([r[1] for r in got], [r[1] for r in want], rtol=0, atol=1e-5)


def build(chunk_ids, doc_ids, x, metric, **kw) -> VectorIndex:
    index = VectorIndex(x.shape[1], metric, **kw)
    index.add(chunk_ids, doc_ids, x)
    return index




# ---- distances and MaxP ------------------------------------------------------------------------

@pytest.mark.parametrize("metric", METRICS)
def test_distances_equal_numpy(metric, path, one_thread):
    rng = np.random.default_rng(1)
    chunk_ids, doc_ids, x = make_docs(rng, 300, 24, metric, per_doc=(1, 1))
    x *= 3.0  # distances well away from 0 and 1, so that errors would show
    if metric == "cosine":
        x = normalized(x)
    index = build(chunk_ids, doc_ids, x, metric)
    for _ in range(5):
        q = query(rng, 24, metric)
        got = index.search(q, 20, ef=400)
        assert index.explain(20, ef=400)["path"] == path
        assert_same(got, brute_force(x, chunk_ids, doc_ids, q, 20, metric))


@pytest.mark.parametrize("metric", METRICS)
def test_multi_vector_documents_collapse_to_their_closest_chunk(metric, path, one_thread):
    rng = np.random.default_rng(2)
    chunk_ids, doc_ids, x = make_docs(rng, 60, 16, metric, per_doc=(1, 8))
    index = build(chunk_ids, doc_ids, x, metric)
    assert len(index) == len(chunk_ids) and index.live_docs == 60
    for k in (1, 3, 10, 59, 60, 61, 500):
        q = query(rng, 16, metric)
        got = index.search(q, k)
        assert len(got) == min(k, 60)
        assert len({r[0] for r in got}) == len(got)  # each document once
        assert_same(got, brute_force(x, chunk_ids, doc_ids, q, k, metric))


def test_results_are_sorted_by_distance_then_doc_id():
    index = VectorIndex(2, "l2")
    # Four documents at the same distance from the query, added out of order.
    index.add(np.array([1, 2, 3, 4]), np.array([40, 10, 30, 20]),
              np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], np.float32))
    assert [r[0] for r in index.search(np.zeros(2, np.float32), 4)] == [10, 20, 30, 40]


def test_a_document_far_away_in_every_chunk_but_one_is_still_near(path, one_thread):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((400, 8)).astype(np.float32) + 50  # everything far from the origin
    doc_ids = np.arange(400) // 4
    x[397] = 0.01  # ... except one chunk of document 99
    index = build(np.arange(400) * 3, doc_ids, x, "l2")
    doc, dist, chunk = index.search(np.zeros(8, np.float32), 1)[0]
    assert (doc, chunk) == (99, 397 * 3)
    assert dist == pytest.approx(8 * 0.01**2, abs=1e-6)


def test_one_document_with_many_near_chunks_widens_the_graph_search(path, one_thread):
    rng = np.random.default_rng(4)
    near = rng.normal(0, 0.01, (700, 8)).astype(np.float32)  # doc 0: 700 chunks around the query
    far = rng.normal(0, 1, (300, 8)).astype(np.float32) + 3
    x = np.vstack([near, far])
    doc_ids = np.r_[np.zeros(700, np.int64), np.arange(1, 301)]
    chunk_ids = np.arange(1000, dtype=np.int64) + 10**15
    index = build(chunk_ids, doc_ids, x, "l2")
    q = np.zeros(8, np.float32)
    assert_same(index.search(q, 5), brute_force(x, chunk_ids, doc_ids, q, 5, "l2"))


# ---- filters ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def filter_data():
    rng = np.random.default_rng(5)
    chunk_ids, doc_ids, x = make_docs(rng, 2000, 12, "cosine", per_doc=(1, 5))
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        index = build(chunk_ids, doc_ids, x, "cosine")
    finally:
        faiss.omp_set_num_threads(before)
    return rng, chunk_ids, doc_ids, x, index


@pytest.mark.parametrize("size,expected_path", [(1, "exact"), (5, "exact"), (60, "exact"), (400, "exact"),
                                                (1500, "graph"), (2000, "graph")])
def test_filtered_search_returns_the_k_nearest_allowed_docs(filter_data, size, expected_path):
    rng, chunk_ids, doc_ids, x, index = filter_data
    docs = np.unique(doc_ids)
    allowed = rng.choice(docs, size, replace=False)
    assert index.explain(10, allowed_docs=allowed)["path"] == expected_path
    for k in (1, 10, 25):
        q = query(rng, 12, "cosine")
        got = index.search(q, k, allowed_docs=allowed)
        assert len(got) == min(k, size)
        assert {r[0] for r in got} <= set(allowed.tolist())
        assert_same(got, brute_force(x, chunk_ids, doc_ids, q, k, "cosine", allowed=allowed))


def test_filtered_graph_search_finds_allowed_docs_far_from_the_query(path, one_thread):
    """The allowed documents sit in a distant cluster: the first graph pass finds none of them."""
    rng = np.random.default_rng(6)
    x = np.vstack([rng.normal(0, 1, (3000, 8)), rng.normal(0, 1, (60, 8)) + 20]).astype(np.float32)
    doc_ids = np.arange(3060, dtype=np.int64)
    index = build(doc_ids + 7, doc_ids, x, "l2")
    allowed = np.arange(3000, 3060)
    q = np.zeros(8, np.float32)
    got = index.search(q, 10, allowed_docs=allowed)
    assert_same(got, brute_force(x, doc_ids + 7, doc_ids, q, 10, "l2", allowed=allowed))


def test_filter_accepts_any_iterable_and_ignores_unknown_docs(filter_data):
    rng, chunk_ids, doc_ids, x, index = filter_data
    allowed = [int(d) for d in np.unique(doc_ids)[:30]] + [-5, 10**18]
    q = query(rng, 12, "cosine")
    got = index.search(q, 50, allowed_docs=allowed)
    assert len(got) == 30
    assert_same(got, brute_force(x, chunk_ids, doc_ids, q, 50, "cosine", allowed=allowed))
    assert index.search(q, 5, allowed_docs=[]) == []
    assert index.search(q, 5, allowed_docs=np.array([-1, -2])) == []


def test_exclude_doc(filter_data, path):
    rng, chunk_ids, doc_ids, x, index = filter_data
    for _ in range(3):
        q = query(rng, 12, "cosine")
        nearest = index.search(q, 1)[0][0]
        got = index.search(q, 10, exclude_doc=nearest)
        assert nearest not in {r[0] for r in got}
        assert_same(got, brute_force(x, chunk_ids, doc_ids, q, 10, "cosine", exclude=nearest))
        allowed = np.unique(doc_ids)[::2]
        got = index.search(q, 10, allowed_docs=allowed, exclude_doc=int(allowed[0]))
        assert_same(got, brute_force(x, chunk_ids, doc_ids, q, 10, "cosine", allowed=allowed,
                                     exclude=int(allowed[0])))


def test_query_by_a_documents_own_vector_leaves_it_out(path, one_thread):
    rng = np.random.default_rng(7)
    chunk_ids, doc_ids, x = make_docs(rng, 200, 8, "l2", per_doc=(1, 1))
    index = build(chunk_ids, doc_ids, x, "l2")
    got = index.search(x[17], 3, exclude_doc=int(doc_ids[17]))
    assert int(doc_ids[17]) not in [r[0] for r in got]
    assert len(got) == 3


# ---- tombstones ---------------------------------------------------------------------------------

@pytest.mark.parametrize("metric", METRICS)
def test_removed_docs_and_chunks_are_never_returned(metric, path, one_thread):
    rng = np.random.default_rng(8)
    chunk_ids, doc_ids, x = make_docs(rng, 300, 10, metric, per_doc=(1, 6))
    index = build(chunk_ids, doc_ids, x, metric)
    q = query(rng, 10, metric)
    first = index.search(q, 10)
    gone_docs = [first[0][0], first[3][0]]
    multi = [d for d in np.unique(doc_ids) if (doc_ids == d).sum() > 1 and d not in gone_docs]
    gone_chunks = [int(chunk_ids[doc_ids == multi[0]][0]), int(chunk_ids[doc_ids == multi[1]][-1]), first[1][2]]
    index.remove_docs(gone_docs)
    index.remove_chunks(gone_chunks)
    dead = set(gone_chunks) | set(chunk_ids[np.isin(doc_ids, gone_docs)].tolist())
    assert index.tombstones == len(dead)
    assert len(index) == len(chunk_ids) - len(dead)
    assert sorted(index.chunk_ids().tolist()) == sorted(set(chunk_ids.tolist()) - dead)
    for k in (1, 10, 400):
        q2 = query(rng, 10, metric)
        for q_ in (q, q2):
            got = index.search(q_, k)
            assert not {r[0] for r in got} & set(gone_docs)
            assert not {r[2] for r in got} & dead
            assert_same(got, brute_force(x, chunk_ids, doc_ids, q_, k, metric, dead=dead))
    compacted = index.compact()
    assert compacted.tombstones == 0 and len(compacted) == len(index)
    assert compacted.live_docs == index.live_docs
    for _ in range(3):
        q3 = query(rng, 10, metric)
        assert compacted.search(q3, 10) == index.search(q3, 10)


def test_removing_every_chunk_of_a_doc_removes_the_doc():
    index = VectorIndex(2, "l2")
    index.add(np.array([1, 2, 3]), np.array([7, 7, 8]), np.array([[0, 0], [1, 1], [5, 5]], np.float32))
    assert index.live_docs == 2
    index.remove_chunks([1])
    assert index.live_docs == 2
    assert index.search(np.zeros(2, np.float32), 5)[0] == (7, 2.0, 2)
    index.remove_chunks([2, 999])  # unknown ids are ignored
    assert index.live_docs == 1
    assert [r[0] for r in index.search(np.zeros(2, np.float32), 5)] == [8]
    index.remove_docs([8, 12345])
    assert index.search(np.zeros(2, np.float32), 5) == [] and len(index) == 0 and index.tombstones == 3
    assert index.compact().search(np.zeros(2, np.float32), 5) == []


def test_adding_a_live_chunk_id_replaces_its_vector():
    index = VectorIndex(2, "l2")
    index.add(np.array([1, 2]), np.array([10, 20]), np.array([[0, 0], [1, 0]], np.float32))
    index.add(np.array([2]), np.array([30]), np.array([[9, 9]], np.float32))  # chunk 2 moves to doc 30
    assert (len(index), index.tombstones, index.live_docs) == (2, 1, 2)
    assert index.search(np.array([1, 0], np.float32), 5) == [(10, 1.0, 1), (30, 145.0, 2)]
    with pytest.raises(ValueError, match="duplicate"):
        index.add(np.array([5, 5]), np.array([30, 30]), np.array([[9, 9], [8, 8]], np.float32))
    assert (len(index), index.tombstones) == (2, 1)  # a failed add changes nothing


def test_a_removed_chunk_id_may_be_added_again():
    """SQLite reuses the largest rowid once it is deleted."""
    index = VectorIndex(2, "l2")
    index.add(np.array([1, 2]), np.array([10, 20]), np.array([[0, 0], [1, 0]], np.float32))
    index.remove_chunks([2])
    index.add(np.array([2]), np.array([30]), np.array([[0.5, 0]], np.float32))
    assert index.search(np.array([1, 0], np.float32), 5) == [(30, 0.25, 2), (10, 1.0, 1)]
    assert sorted(index.chunk_ids().tolist()) == [1, 2] and index.tombstones == 1


def test_re_adding_a_replaced_document(path, one_thread):
    """REPLACE: the engine removes the old chunks and adds the new ones under the same doc id."""
    index = VectorIndex(2, "l2")
    index.add(np.array([1, 2]), np.array([10, 10]), np.array([[0, 0], [1, 1]], np.float32))
    index.remove_docs([10])
    index.add(np.array([3]), np.array([10]), np.array([[4, 4]], np.float32))
    assert index.live_docs == 1
    assert index.search(np.zeros(2, np.float32), 5) == [(10, 32.0, 3)]


# ---- recall ------------------------------------------------------------------------------------

def test_recall_at_10_on_20000_clustered_vectors_at_default_settings():
    rng = np.random.default_rng(9)
    dims, n = 64, 20_000
    centres = rng.standard_normal((200, dims)).astype(np.float32)
    x = normalized(centres[rng.integers(0, 200, n)] + rng.standard_normal((n, dims)).astype(np.float32))
    q = normalized(centres[rng.integers(0, 200, 100)] + rng.standard_normal((100, dims)).astype(np.float32))
    ids = np.arange(n, dtype=np.int64)
    index = build(ids * 2 + 1, ids, x, "cosine")
    assert index.explain(10)["path"] == "graph"
    truth = np.argsort(-(q @ x.T), axis=1)[:, :10]
    hits = [len({r[0] for r in index.search(qi, 10)} & set(t.tolist())) for qi, t in zip(q, truth)]
    assert sum(hits) / (10 * len(q)) >= 0.95


# ---- persistence ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def persisted_index():
    rng = np.random.default_rng(10)
    chunk_ids, doc_ids, x = make_docs(rng, 2000, 16, "cosine", per_doc=(1, 3))
    index = build(chunk_ids, doc_ids, x, "cosine", m=12, ef_construction=80)
    index.remove_docs(np.unique(doc_ids)[:50])
    return rng, index


@pytest.fixture
def saved(persisted_index, tmp_path):
    rng, index = persisted_index
    path = str(tmp_path / "chunks.vidx")
    index.save(path, "txn:42")
    return rng, index, path


def test_save_and_load_round_trip(saved):
    rng, index, path = saved
    loaded, watermark = VectorIndex.load(path)
    assert watermark == "txn:42"
    assert (loaded.dims, loaded.metric, loaded.m, loaded.ef_construction) == (16, "cosine", 12, 80)
    assert (len(loaded), loaded.tombstones, loaded.live_docs) == (len(index), index.tombstones, index.live_docs)
    assert np.array_equal(loaded.chunk_ids(), index.chunk_ids())
    assert index.explain(10)["path"] == "graph"
    allowed = np.unique(index._doc.view)[::3]
    for _ in range(5):
        q = query(rng, 16, "cosine")
        assert loaded.search(q, 10) == index.search(q, 10)
        assert loaded.search(q, 10, allowed_docs=allowed) == index.search(q, 10, allowed_docs=allowed)
    assert os.listdir(os.path.dirname(path)) == ["chunks.vidx"]  # no temp files left


def test_a_loaded_index_keeps_working(saved):
    rng, index, path = saved
    loaded, _ = VectorIndex.load(path)
    v = normalized(np.ones((1, 16), np.float32))
    loaded.add(np.array([123456789]), np.array([-7]), v)
    assert loaded.search(v[0], 1) == [(-7, pytest.approx(0.0, abs=1e-6), 123456789)]
    loaded.remove_docs([-7])
    loaded.save(path, "txn:43")
    again, watermark = VectorIndex.load(path)
    assert watermark == "txn:43" and again.tombstones == index.tombstones + 1


def test_save_replaces_the_old_file(saved):
    rng, index, path = saved
    empty = VectorIndex(4, "l2")
    empty.save(path, "")
    loaded, watermark = VectorIndex.load(path)
    assert (loaded.dims, watermark, len(loaded)) == (4, "", 0)
    assert loaded.search(np.zeros(4, np.float32), 3) == []


def test_load_of_a_missing_file_is_none(tmp_path):
    assert VectorIndex.load(str(tmp_path / "nope.vidx")) is None


@pytest.mark.parametrize("keep", [0, 10, 56, 300, -1000, -1])
def test_a_truncated_file_is_corrupt(saved, keep):
    _, _, path = saved
    data = open(path, "rb").read()
    open(path, "wb").write(data[:keep])
    with pytest.raises(IndexCorrupt):
        VectorIndex.load(path)


@pytest.mark.parametrize("where", [0, 20, 40, 60, 0.3, 0.6, 0.99, -1])
def test_a_flipped_byte_is_corrupt(saved, where):
    _, _, path = saved
    data = bytearray(open(path, "rb").read())
    at = int(where * len(data)) if isinstance(where, float) else where
    data[at] ^= 0x40
    open(path, "wb").write(bytes(data))
    with pytest.raises(IndexCorrupt) as err:
        VectorIndex.load(path)
    assert isinstance(err.value, StorageError) and path in str(err.value)


def test_another_format_version_is_corrupt(saved):
    _, _, path = saved
    data = bytearray(open(path, "rb").read())
    struct.pack_into("<I", data, 8, index_file.FORMAT_VERSION + 1)
    open(path, "wb").write(bytes(data))
    with pytest.raises(IndexCorrupt, match="version"):
        VectorIndex.load(path)


def test_appended_garbage_is_corrupt(saved):
    _, _, path = saved
    with open(path, "ab") as f:
        f.write(b"\0")
    with pytest.raises(IndexCorrupt):
        VectorIndex.load(path)


# ---- edges and input checks ---------------------------------------------------------------------

def test_empty_index():
    index = VectorIndex(3, "cosine")
    assert index.search(np.array([1, 0, 0], np.float32), 10) == []
    assert len(index) == 0 and index.tombstones == 0 and index.chunk_ids().tolist() == []
    index.add(np.array([], np.int64), np.array([], np.int64), np.empty((0, 3), np.float32))
    index.remove_docs([1])
    assert index.search(np.array([1, 0, 0], np.float32), 10, allowed_docs=[1]) == []
    assert index.explain(10)["path"] == "exact"


def test_k_larger_than_the_number_of_docs_returns_every_doc(path, one_thread):
    rng = np.random.default_rng(11)
    chunk_ids, doc_ids, x = make_docs(rng, 25, 6, "ip", per_doc=(1, 4))
    index = build(chunk_ids, doc_ids, x, "ip")
    q = query(rng, 6, "ip")
    got = index.search(q, 1000)
    assert sorted(r[0] for r in got) == sorted(set(doc_ids.tolist()))
    assert_same(got, brute_force(x, chunk_ids, doc_ids, q, 1000, "ip"))


def test_cosine_normalizes_defensively():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((50, 5)).astype(np.float32)
    a, b = VectorIndex(5, "cosine"), VectorIndex(5, "cosine")
    a.add(np.arange(50), np.arange(50), x * 7)
    b.add(np.arange(50), np.arange(50), normalized(x))
    q = rng.standard_normal(5).astype(np.float32)
    got, want = a.search(q * 3, 10), b.search(normalized(q), 10)
    assert [r[0] for r in got] == [r[0] for r in want]
    np.testing.assert_allclose([r[1] for r in got], [r[1] for r in want], atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda i: i.add(np.array([1]), np.array([1]), np.zeros((1, 3), np.float32)),  # wrong width
    lambda i: i.add(np.array([1, 2]), np.array([1]), np.zeros((2, 4), np.float32)),  # ids/doc ids differ
    lambda i: i.add(np.array([1]), np.array([1]), np.full((1, 4), np.nan, np.float32)),
    lambda i: i.search(np.zeros(3, np.float32), 1),
    lambda i: i.search(np.zeros(4, np.float32), 0),
    lambda i: i.search(np.zeros(4, np.float32), 1, ef=-1),
    lambda i: i.search(np.array([np.inf, 0, 0, 0], np.float32), 1),
    lambda i: i.remove_docs([1.5]),
])
def test_bad_input_is_a_value_error_and_changes_nothing(call):
    index = VectorIndex(4, "l2")
    index.add(np.array([9]), np.array([9]), np.ones((1, 4), np.float32))
    with pytest.raises(ValueError):
        call(index)
    assert len(index) == 1 and index.tombstones == 0
    assert index.search(np.ones(4, np.float32), 5) == [(9, 0.0, 9)]


@pytest.mark.parametrize("args", [(0, "l2"), (4, "hamming")])
def test_bad_parameters(args):
    with pytest.raises(ValueError):
        VectorIndex(*args)


def test_explain_describes_the_plan(filter_data):
    rng, chunk_ids, doc_ids, x, index = filter_data
    plan = index.explain(10)
    assert plan["path"] == "graph" and plan["candidates"] is None
    assert plan["ef"] >= vector_plan.EF_FLOOR and plan["live_chunks"] == len(chunk_ids)
    assert index.explain(10, ef=5000)["ef"] == 5000  # an explicit ef only raises the automatic one
    assert index.explain(10, ef=1)["ef"] == plan["ef"]
    small = index.explain(10, allowed_docs=np.unique(doc_ids)[:3])
    assert small["path"] == "exact" and small["candidates"] == np.isin(doc_ids, np.unique(doc_ids)[:3]).sum()


def test_searches_run_concurrently_with_writers():
    rng = np.random.default_rng(13)
    chunk_ids, doc_ids, x = make_docs(rng, 2000, 8, "l2", per_doc=(1, 2))
    index = build(chunk_ids, doc_ids, x, "l2")
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader(seed: int) -> None:
        r = np.random.default_rng(seed)
        try:
            while not stop.is_set():
                got = index.search(r.standard_normal(8).astype(np.float32), 10)
                assert len(got) == 10 and len({g[0] for g in got}) == 10
                assert [g[1] for g in got] == sorted(g[1] for g in got)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(30):
            index.add(np.array([10**13 + i]), np.array([10**13 + i]), rng.standard_normal((1, 8)).astype(np.float32))
            index.remove_docs([int(doc_ids[i])])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert index.tombstones == int(np.isin(doc_ids, doc_ids[:30]).sum())


# ---- bookkeeping against a plain model ----------------------------------------------------------

def test_random_adds_and_removes_agree_with_a_model(monkeypatch):
    """Thousands of small writes (so the id lookups' tails get merged); chunk ids reused, live or removed."""
    monkeypatch.setattr(vector_plan, "EXACT_MIN_CHUNKS", 10**12)  # exact search: results must match exactly
    rng = np.random.default_rng(14)
    index = VectorIndex(4, "l2", m=4, ef_construction=8)
    live: dict[int, tuple[int, np.ndarray]] = {}  # chunk id -> (doc id, vector)
    next_chunk = added = 0
    for step in range(400):
        op = rng.random()
        if op < 0.6 or not live:
            n = int(rng.integers(1, 30))
            # Reuse a few ids, removed or live (a live one is replaced).
            reuse = list(rng.choice(next_chunk, min(next_chunk, n, int(rng.integers(0, 3))), replace=False))
            chunks = np.array(reuse + list(range(next_chunk, next_chunk + n - len(reuse))), np.int64)
            next_chunk += n - len(reuse)
            docs = rng.integers(0, 300, len(chunks))
            x = rng.standard_normal((len(chunks), 4)).astype(np.float32)
            index.add(chunks, docs, x)
            added += len(chunks)
            live.update({int(c): (int(d), v) for c, d, v in zip(chunks, docs, x)})
        elif op < 0.8:
            gone = rng.integers(0, 300, int(rng.integers(1, 4)))
            index.remove_docs(gone)
            live = {c: dv for c, dv in live.items() if dv[0] not in set(gone.tolist())}
        else:
            gone = rng.integers(0, next_chunk + 5, int(rng.integers(1, 6)))
            index.remove_chunks(gone.tolist())
            live = {c: dv for c, dv in live.items() if c not in set(gone.tolist())}
        assert len(index) == len(live)
        assert index.live_docs == len({d for d, _ in live.values()})
        if step % 40 == 39 or step == 399:
            assert sorted(index.chunk_ids().tolist()) == sorted(live)
            chunk_ids = np.array(list(live), np.int64)
            doc_ids = np.array([live[c][0] for c in live], np.int64)
            x = np.array([live[c][1] for c in live], np.float32)
            q = rng.standard_normal(4).astype(np.float32)
            allowed = rng.integers(0, 300, 40)
            assert_same(index.search(q, 15), brute_force(x, chunk_ids, doc_ids, q, 15, "l2"))
            assert_same(index.search(q, 15, allowed_docs=allowed),
                        brute_force(x, chunk_ids, doc_ids, q, 15, "l2", allowed=allowed))
    assert index.tombstones == added - len(live)
    assert added > 3 * 1024  # the lookups' tails were merged several times
