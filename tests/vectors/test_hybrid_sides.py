"""How hybrid_match()'s two sides run (sql/search/hybrid.py): with a core free, the text side runs in a
worker thread and the knn side, whose index was caught up before that thread took the connection,
runs on the caller's thread beside it without touching the connection; in a transaction that wrote
rows the index does not hold yet, the knn side waits for the text side and reads them from SQLite.
The rows are the inline run's either way."""
from __future__ import annotations

import threading
import time

import pytest

from tesseradb.sql.search import hybrid, hybrid_defaults

MODEL = "model_name='Xenova/all-MiniLM-L6-v2' from='body'"
SQL = "SELECT id, weight(), knn_dist(), hybrid_score() FROM t WHERE hybrid_match(?) LIMIT 20"
TEXTS = ("rotate the logs", "certificate replication", "tables and queries")
WORDS = ["rotation", "rotate", "certificate", "daemon", "logs", "backup", "replication", "cluster", "nodes",
         "index", "tables", "query", "queries"]


@pytest.fixture
def table(cur):
    cur.execute(f"CREATE TABLE t (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='12' overlap_tokens='0')")
    bodies = [" ".join(WORDS[(i * 5 + j * 3) % len(WORDS)] for j in range(4 + i % 17)) for i in range(60)]
    cur.executemany("INSERT INTO t (id, body) VALUES (?, ?)", list(enumerate(bodies, start=1)))
    cur.connection.commit()
    return cur


def _slow_text_side(con, monkeypatch, events):
    """The text side holds the connection in a long statement first (as a slow FTS5 query would)."""
    inner = hybrid_defaults.best_chunks

    def slow(store, *args):
        events.append(("text", "start", threading.get_ident()))
        store.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000) "
                      "SELECT COUNT(*) FROM n").fetchall()
        try:
            return inner(store, *args)
        finally:
            events.append(("text", "end", time.perf_counter()))
    monkeypatch.setattr(hybrid_defaults, "best_chunks", slow)


def _timed_knn_side(monkeypatch, events):
    inner = hybrid.knn_search

    def knn_search(*args, **kwargs):
        search = inner(*args, **kwargs)
        run = search.run

        def timed(*a):
            try:
                return run(*a)
            finally:
                events.append(("knn", "end", time.perf_counter()))
        search.run = timed
        return search
    monkeypatch.setattr(hybrid, "knn_search", knn_search)


def test_the_knn_side_runs_beside_the_text_sides_thread(con, table, monkeypatch):
    inline = []
    monkeypatch.setattr(hybrid, "spare_core", lambda: False)
    for text in TEXTS:
        inline.append(table.execute(SQL, (text,)).fetchall())
    events: list[tuple] = []
    _slow_text_side(con, monkeypatch, events)
    _timed_knn_side(monkeypatch, events)
    monkeypatch.setattr(hybrid, "spare_core", lambda: True)
    for text, expected in zip(TEXTS, inline):
        events.clear()
        assert table.execute(SQL, (text,)).fetchall() == expected and len(expected) == 20
        ends = {side: at for side, what, at in events if what == "end"}
        starts = [who for side, what, who in events if what == "start"]
        assert starts and starts[0] != threading.get_ident()       # the text side ran in the worker thread
        assert ends["knn"] < ends["text"]                           # the knn side did not wait for it


def test_in_a_transaction_the_knn_side_waits_and_sees_its_writes(con, table, monkeypatch):
    table.execute("INSERT INTO t (id, body) VALUES (500, 'rotate the logs of the certificate daemon')")
    monkeypatch.setattr(hybrid, "spare_core", lambda: False)
    inline = [table.execute(SQL, (text,)).fetchall() for text in TEXTS]
    assert any(row[0] == 500 and row[2] is not None for row in inline[0])   # found by the knn side too
    events: list[tuple] = []
    _slow_text_side(con, monkeypatch, events)
    _timed_knn_side(monkeypatch, events)
    monkeypatch.setattr(hybrid, "spare_core", lambda: True)
    for text, expected in zip(TEXTS, inline):
        events.clear()
        assert table.execute(SQL, (text,)).fetchall() == expected
        ends = {side: at for side, what, at in events if what == "end"}
        assert ends["text"] < ends["knn"]               # it read the transaction's chunks after the text side
    con.rollback()


def test_a_filtered_query_runs_its_knn_side_after_the_text_side(con, table, monkeypatch):
    sql = "SELECT id, weight(), knn_dist() FROM t WHERE hybrid_match(?) AND id > 10 LIMIT 20"
    monkeypatch.setattr(hybrid, "spare_core", lambda: False)
    inline = [table.execute(sql, (text,)).fetchall() for text in TEXTS]
    events: list[tuple] = []
    _timed_knn_side(monkeypatch, events)
    monkeypatch.setattr(hybrid, "spare_core", lambda: True)
    assert [table.execute(sql, (text,)).fetchall() for text in TEXTS] == inline
    assert all(row[0] > 10 for rows in inline for row in rows)


def test_a_quantized_column_rescores_after_the_text_side(cur, monkeypatch):
    """A quantized index rescores its shortlist with the exact vectors SQLite holds: its knn side waits
    for the text side's thread (the connection is used by one thread at a time)."""
    cur.execute(f"CREATE TABLE t (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "quantization='8bit' chunk_strategy='recursive' max_tokens='12' overlap_tokens='0')")
    bodies = [" ".join(WORDS[(i * 5 + j * 3) % len(WORDS)] for j in range(4 + i % 17)) for i in range(300)]
    cur.executemany("INSERT INTO t (id, body) VALUES (?, ?)", list(enumerate(bodies, start=1)))
    cur.connection.commit()
    monkeypatch.setattr(hybrid, "spare_core", lambda: False)
    inline = [cur.execute(SQL, (text,)).fetchall() for text in TEXTS]
    events: list[tuple] = []
    _slow_text_side(cur.connection, monkeypatch, events)
    _timed_knn_side(monkeypatch, events)
    monkeypatch.setattr(hybrid, "spare_core", lambda: True)
    for text, expected in zip(TEXTS, inline):
        events.clear()
        assert cur.execute(SQL, (text,)).fetchall() == expected and len(expected) == 20
        ends = {side: at for side, what, at in events if what == "end"}
        assert ends["text"] < ends["knn"]


def test_the_worker_thread_reads_the_text_as_the_caller_would(table, monkeypatch):
    """Beside the model, the worker thread also turns the text into the FTS5 query: stop words only,
    operators and quotes, words the index lacks give the inline run's rows (or its error)."""
    texts = ["the of and", "rotate the logs", '"rotate -logs" +(cluster | nodes)*', "zzqx nothing", "a", "ROTATION?!"]

    def run(text):
        try:
            return table.execute(SQL, (text,)).fetchall()
        except Exception as exc:            # the same error either way, if any
            return (type(exc).__name__, str(exc))
    monkeypatch.setattr(hybrid, "spare_core", lambda: False)
    inline = [run(text) for text in texts]
    started = []
    start = hybrid.Search.start
    monkeypatch.setattr(hybrid.Search, "start", lambda self, *a: (started.append(a), start(self, *a))[1])
    monkeypatch.setattr(hybrid, "spare_core", lambda: True)
    assert [run(text) for text in texts] == inline
    assert len(started) == len(texts) and all(isinstance(rows, list) and rows for rows in inline)


def test_without_a_thread_the_knn_side_also_searches_the_index_alone(con, table, monkeypatch):
    """No core free: the text side runs on the caller's thread, and the knn side still takes the caught-up
    index's own search (no SQLite), the rows of run_knn's search to the last bit."""
    monkeypatch.setattr(hybrid, "spare_core", lambda: False)
    free = []
    inner = hybrid.knn_search
    monkeypatch.setattr(hybrid, "knn_search", lambda *a, **k: free.append(inner(*a, **k)) or free[-1])
    table.execute(SQL, ("planned",)).fetchall()     # the first execute plans (its filter is known after)
    free.clear()
    alone = [table.execute(SQL, (text,)).fetchall() for text in TEXTS]
    assert len(free) == len(TEXTS) and all(search.free for search in free)
    monkeypatch.setattr(hybrid, "ready_index", lambda *a, **k: None)       # run_knn, as before
    free.clear()
    assert [table.execute(SQL, (text,)).fetchall() for text in TEXTS] == alone and all(len(r) == 20 for r in alone)
    assert len(free) == len(TEXTS) and not any(search.free for search in free)
