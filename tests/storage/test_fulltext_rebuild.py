"""A rebuilt full-text index (REPAIR TABLE, an upgrade at open) is one FTS5 segment: FTS5 writes a
segment whenever its pending entries outgrow its hash and merges them only by fours of a size, and a
query reads every segment for each of its words (storage/fulltext.py ``REBUILT_SEGMENTS``). What a
query finds, and its BM25, are the same."""
from __future__ import annotations

import pytest

from tesseradb.storage import fulltext
from tesseradb.storage.chunk_table import ColumnLayout, create_chunk_table
from tesseradb.storage.fulltext import ChunkTextIndex, TextIndex
from tesseradb.storage.rowstore import RowStore

WORDS = [f"w{i}" for i in range(3000)] + ["replica", "cluster", "vector", "index"]
QUERIES = ['"replica"', '("cluster" OR "vector")', '"w17" OR "w2999" OR "index"', '"index" NOT "vector"']
# FTS5's data pages: (segment id << 37) + page; ids below 1 << 37 are its own records
SEGMENTS = "SELECT COUNT(DISTINCT id >> 37) FROM \"{}_data\" WHERE id >= 1 << 37"


def _body(n: int) -> str:
    return " ".join(WORDS[(n * 7919 + i * 104729) % len(WORDS)] for i in range(600))


@pytest.fixture
def store(tmp_path):
    store = RowStore(str(tmp_path / "f.db"))
    store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    layout = ColumnLayout("t", "v", "t_chunks", False, 4, "cosine", 16, 40)
    create_chunk_table(store, layout)
    docs = [(n, _body(n)) for n in range(1, 701)]           # ~3 MB of text: more than FTS5 holds in its hash
    store.executemany("INSERT INTO t (id, body) VALUES (?, ?)", docs)
    store.executemany('INSERT INTO t_chunks (doc_id, ord, start, "end") VALUES (?, ?, ?, ?)',
                      [(n, part, part * (len(body) // 2), (part + 1) * (len(body) // 2)) for n, body in docs
                       for part in (0, 1)])
    yield store
    store.close()


def _rebuilt(store: RowStore, index, merged: bool, monkeypatch) -> tuple[int, list]:
    with monkeypatch.context() as m:
        if not merged:
            m.setattr(type(index), "optimize", lambda self, store: None)     # as before: FTS5's segments
        index.create(store)
        index.rebuild(store)
    found = [store.execute(f'SELECT rowid, rank FROM "{index.name}"(?) ORDER BY rowid', (q,)).fetchall()
             for q in QUERIES]
    segments = store.one(SEGMENTS.format(index.name))[0]
    index.drop(store)
    return segments, found


@pytest.mark.parametrize("kind", ["chunks", "table"])
def test_a_rebuilt_index_is_one_segment_with_the_same_matches_and_scores(store, monkeypatch, kind):
    index = ChunkTextIndex("t", "t_chunks", ("body",), "porter unicode61") if kind == "chunks" else \
        TextIndex("t", ("body",), "unicode61")
    before, unmerged = _rebuilt(store, index, False, monkeypatch)
    after, merged = _rebuilt(store, index, True, monkeypatch)
    assert before > 1 and after == 1
    assert merged == unmerged and all(merged)
