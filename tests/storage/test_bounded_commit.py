"""What a large COMMIT and the load of a saved index hold besides the index (issue 37 item 4): the
chunk ids a transaction changed are read from its TEMP rows a page at a time (``PendingIds``), the
id maps grow in place when ids arrive in order (``KeyIndex``), and a saved index's id arrays are read
straight into the buffers the index keeps. Memory is asserted on Python's own allocations
(tracemalloc: numpy arrays included, FAISS's and SQLite's not), never on RSS: the part above the
index's own maps must stay within a bound set by the page size, not by the number of rows."""
from __future__ import annotations

import tracemalloc

import faiss
import numpy as np
import pytest

import tesseradb
from tesseradb.storage import chunks
from tesseradb.storage.positions import KeyIndex
from tesseradb.storage.vectors import VectorIndex

DIMS = 4
PAGE = 256
DDL = (f"CREATE TABLE t (n int, v float_vector knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='l2' "
       "hnsw_m='16' hnsw_ef_construction='40')")


def _rows(n: int, seed: int = 5) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)


def _index(con):
    return con.db.column_index(con.db.table("t"), "v")


def _knn_ids(con, q: np.ndarray, k: int = 5) -> list[int]:
    return [r[0] for r in con.execute(f"SELECT id FROM t WHERE knn(v, {k}, ?)", (q.tolist(),))]


def test_key_index_appends_in_order_in_place_and_finds_what_a_sort_finds():
    rng = np.random.default_rng(1)
    keys = np.sort(rng.integers(0, 500, 3000))            # ascending, with repeats (doc ids of chunks)
    index = KeyIndex(np.empty(0, np.int64))
    index.reserve(len(keys))
    room = index._sorted_keys._data
    for start in range(0, len(keys), 300):
        index.append(keys[start:start + 300], start)
    assert index._sorted_keys._data is room and not index._tail_keys.n    # no copy, no tail
    shuffled = rng.permutation(600) + 10_000             # then keys out of order: the tail, merged
    index.append(shuffled, len(keys))
    everything = np.concatenate([keys, shuffled])
    alive = np.ones(len(everything), bool)
    alive[::7] = False
    wanted = np.unique(rng.choice(everything, 200))
    pos, n_keys = index.live(wanted, alive)
    expected = np.flatnonzero(np.isin(everything, wanted) & alive)
    assert sorted(pos.tolist()) == expected.tolist()
    assert n_keys == len(np.unique(everything[expected]))
    assert sorted(KeyIndex(everything).live(wanted, alive)[0].tolist()) == sorted(pos.tolist())


def test_a_commit_into_a_loaded_index_applies_adds_and_removes_in_pages(tmp_path, monkeypatch, one_thread):
    """Rows added, rows deleted, rows added and deleted again in one transaction of many pages: the
    index equals one built from the table, and every change reached it in pages."""
    monkeypatch.setattr(chunks, "PAGE_ROWS", PAGE)
    rows = _rows(3000)
    con = tesseradb.connect(str(tmp_path / "mixed.db"))
    con.execute(DDL)
    con.executemany("INSERT INTO t (id, n, v) VALUES (?, ?, ?)", [(i + 1, i, r.tolist()) for i, r in enumerate(rows[:1000])])
    con.commit()
    _knn_ids(con, rows[0])                                     # the index is loaded
    index = _index(con).index
    calls = {"add": [], "remove": []}
    real_add, real_remove = index.add, index.remove_chunks
    monkeypatch.setattr(index, "add", lambda c, d, v: (calls["add"].append(len(c)), real_add(c, d, v))[1])
    monkeypatch.setattr(index, "remove_chunks", lambda c: (calls["remove"].append(len(c)), real_remove(c))[1])
    con.executemany("INSERT INTO t (id, n, v) VALUES (?, ?, ?)",
                    [(i + 1, i, r.tolist()) for i, r in enumerate(rows[1000:], start=1000)])
    con.execute("DELETE FROM t WHERE id % 3 = 0")          # old rows and rows of this transaction
    con.commit()
    kept = [i + 1 for i in range(3000) if (i + 1) % 3]
    assert sorted(index.chunk_ids().tolist()) == sorted(
        r[0] for r in con.db.store.execute(f"SELECT chunk_id FROM {_index(con).layout.chunks}"))
    assert max(calls["add"]) <= PAGE and max(calls["remove"]) <= PAGE
    assert sum(calls["add"]) == len([i for i in kept if i > 1000])           # added and deleted again: never added
    assert sum(calls["remove"]) == 1000 // 3                                  # only committed rows are removed
    assert len(index) == len(kept)
    for i in (0, 1000, 2998):                                  # ids 1, 1001, 2999: kept
        assert _knn_ids(con, rows[i], 1) == [i + 1]
    con.close()


def _python_peak_above_maps(con, statement_rows: int) -> float:
    """Bytes of Python allocations the COMMIT of ``statement_rows`` new rows peaks at, beyond what the
    index's id maps grew by (memory the index keeps)."""
    index = _index(con).index
    maps_before = index.footprint()["maps"]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        con.commit()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert len(index) >= statement_rows
    return peak - (index.footprint()["maps"] - maps_before)


def test_the_python_memory_of_a_large_commit_is_bounded_by_the_page_not_the_rows(tmp_path, monkeypatch, one_thread):
    """A COMMIT of 24,000 new rows into a loaded index: what Python holds beyond the index's own id maps
    is about one page (chunk rows, vectors, ids) and the save's one part: the whole transaction's
    chunk ids (8 bytes a row) and a copy of the sorted id maps (12 bytes a row each) were 20 bytes a
    row more, about 0.5 MiB here."""
    monkeypatch.setattr(chunks, "PAGE_ROWS", PAGE)
    monkeypatch.setattr(chunks.ColumnIndex, "save", lambda self, **kw: None)   # the save has its own test
    con = tesseradb.connect(str(tmp_path / "bounded.db"))
    con.execute(DDL)
    con.execute("INSERT INTO t (id, n, v) VALUES (1, 0, (0, 0, 0, 1))")
    con.commit()
    _knn_ids(con, np.array([0, 0, 0, 1], np.float32))          # the index is loaded
    rows = _rows(24_000)
    con.executemany("INSERT INTO t (id, n, v) VALUES (?, ?, ?)", [(i + 2, i, r.tolist()) for i, r in enumerate(rows)])
    above = _python_peak_above_maps(con, 24_000)
    assert above < 0.25 * 2**20, above          # one page of 256 rows is about 0.1 MiB here
    assert _knn_ids(con, rows[23_999], 1) == [24_001]
    con.close()


def test_loading_a_saved_index_keeps_its_id_arrays_without_copies(tmp_path, one_thread):
    """The id arrays of a saved index are read into the buffers the loaded index keeps: loading peaks
    at the maps it keeps plus a few block-sized buffers (it peaked at about three times the id arrays)."""
    n = 120_000
    index = VectorIndex(DIMS, "l2", m=4, ef_construction=8)
    ids = np.arange(1, n + 1, dtype=np.int64)
    index.add(ids, ids // 3, _rows(n))
    index.remove_chunks(ids[::11])
    path = str(tmp_path / "saved.faiss")
    index.save(path, "mark")
    maps = index.footprint()["maps"]
    del index
    tracemalloc.start()
    try:
        loaded, mark = VectorIndex.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    alive = np.ones(n, bool)
    alive[::11] = False
    assert mark == "mark" and len(loaded) == alive.sum() and loaded.live_docs == len(np.unique((ids // 3)[alive]))
    assert np.array_equal(loaded.chunk_ids(), ids[alive])
    assert peak - maps < 3 * 2**20, (peak, maps)       # the graph is read in 1 MiB blocks, the checksum too
    x = _rows(n)
    assert loaded.search(x[1], 1, ef=64)[0][2] == 2          # a live row finds itself
    assert all(chunk % 11 != 1 for _, _, chunk in loaded.search(x[0], 20, ef=64))   # a removed one stays removed


def test_a_large_commit_into_a_loaded_untrained_quantized_index_trains_on_a_spread(tmp_path, monkeypatch, one_thread):
    """The 8-bit index of a small table is not trained yet (its vectors are staged); a commit of many
    pages of rows that drift (the later ones up to 4x larger) trains it on ids sampled across the whole
    transaction (``PendingIds.sample``), not on its first page, whose ranges would clip most rows."""
    monkeypatch.setattr(chunks, "PAGE_ROWS", 128)
    n = 1500
    rows = _rows(n) * np.linspace(1, 4, n, dtype=np.float32)[:, None]
    con = tesseradb.connect(str(tmp_path / "quantized.db"))
    con.execute(DDL.replace("hnsw_similarity='l2'", "hnsw_similarity='l2' quantization='8bit'"))
    con.executemany("INSERT INTO t (id, n, v) VALUES (?, ?, ?)", [(i + 1, i, r.tolist()) for i, r in enumerate(rows[:20])])
    con.commit()
    _knn_ids(con, rows[0])                                     # loaded, untrained: 20 staged vectors
    assert _index(con).index.untrained
    con.executemany("INSERT INTO t (id, n, v) VALUES (?, ?, ?)",
                    [(i + 1, i, r.tolist()) for i, r in enumerate(rows[20:], start=20)])
    con.commit()
    index = _index(con).index
    assert not index.untrained and len(index) == n and len(index._staged) == 0
    trained = faiss.vector_to_array(faiss.downcast_index(index._index.storage).sq.trained).reshape(2, DIMS)
    low, high = trained[0], trained[0] + trained[1]
    assert ((rows >= low) & (rows <= high)).all(1).mean() >= 0.7
    for i in (0, 700, 1499):                                   # rescored from the exact vectors
        assert con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 1, ?)", (rows[i].tolist(),)).fetchall() == [(i + 1, 0.0)]
    con.close()
