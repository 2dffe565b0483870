"""hybrid_match()'s defaults (sql/hybrid_defaults.py): the chunk-level index stems English whatever
the table's morphology (an older file's index is rebuilt once on open), each side gets at least 50
candidates, and the unfiltered text side ranks exactly as the filtered one and as
every chunk's own BM25 says (MaxP)."""
from __future__ import annotations

import logging

import apsw

import tesseradb

MODEL = "model_name='Xenova/all-MiniLM-L6-v2' from='body'"
WORDS = ["rotation", "rotate", "rotating", "certificate", "certificates", "daemon", "logs", "log", "backup",
         "replication", "cluster", "nodes", "node", "index", "indexes", "table", "tables", "query", "queries"]


def _make(cur, rows: int = 80):
    cur.execute(f"CREATE TABLE t (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='12' overlap_tokens='0')")
    bodies = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(5 + i % 23)) for i in range(rows)]
    cur.executemany("INSERT INTO t (id, body) VALUES (?, ?)", list(enumerate(bodies, start=1)))


def test_the_chunk_index_stems_whatever_the_tables_morphology(cur):
    cur.execute(f"CREATE TABLE n (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='32' overlap_tokens='0')")     # morphology 'none'
    cur.execute("INSERT INTO n (id, body) VALUES (1, 'log rotation happens weekly'), (2, 'cats sleep')")
    found = [r[0] for r in cur.execute("SELECT id, weight() FROM n WHERE hybrid_match('rotating logs')") if r[1]]
    assert found == [1]                                    # rotating ~ rotation, logs ~ log: stemmed
    assert cur.execute("SELECT id FROM n WHERE MATCH('rotating')").fetchall() == []   # rows: as the table says


def test_each_side_gets_at_least_fifty_candidates(cur):
    _make(cur)
    plan = dict(cur.execute("EXPLAIN SELECT id FROM t WHERE hybrid_match('rotate logs') LIMIT 5").fetchall()[:1])
    assert plan["hybrid"].endswith("50 candidates")
    rows = cur.execute("EXPLAIN SELECT id FROM t WHERE hybrid_match('rotate logs') LIMIT 5 OPTION window_size=7")
    assert rows.fetchall()[0][1].endswith("7 candidates")


def test_the_unfiltered_text_side_ranks_as_the_filtered_one(cur):
    _make(cur, 120)
    for text in ("rotate the logs", "certificate replication", "tables and queries", "node"):
        fast = cur.execute("SELECT id, weight() FROM t WHERE hybrid_match(?) LIMIT 60", (text,)).fetchall()
        slow = cur.execute("SELECT id, weight() FROM t WHERE hybrid_match(?) AND id > 0 LIMIT 60", (text,)).fetchall()
        assert fast == slow and sum(w is not None for _, w in fast) >= 30


def test_the_text_side_keeps_each_documents_best_chunk_of_every_match(con):
    """MaxP over every matching chunk: the documents, their BM25 and their best chunk equal what every
    chunk's own score gives, also when one long document holds most of the matching chunks (where the
    old top-m rounds rescored every match several times)."""
    from tesseradb.catalog import fulltext as catalog_fulltext
    from tesseradb.sql.search.hybrid_defaults import best_chunks
    from tesseradb.storage.catalog import quote
    cur = con.cursor()
    _make(cur, 60)
    long_doc = " ".join(f"{WORDS[i % len(WORDS)]} rotation log" for i in range(200))
    cur.execute("INSERT INTO t (id, body) VALUES (1000, ?)", (long_doc,))
    index = catalog_fulltext.chunk_index(con.db.tables["t"], "v")
    fts, chunks = quote(index.name), quote(index.chunks)
    store = con.db.store
    doc_of = dict(store.execute(f"SELECT chunk_id, doc_id FROM {chunks}"))
    assert sum(d == 1000 for d in doc_of.values()) > 40
    for query in ('("rotation" OR "log")', '"certificate"', '("daemon" OR "backup" OR "nodes")', '"absent"'):
        best: dict[int, tuple[float, int]] = {}
        for chunk, rank in store.execute(f"SELECT rowid, rank FROM {fts}(?)", (query,)):
            doc = doc_of[chunk]
            if doc not in best or (-rank, -chunk) > (best[doc][0], -best[doc][1]):
                best[doc] = (-rank, chunk)
        expected = sorted(((doc, s, c) for doc, (s, c) in best.items()), key=lambda h: (-h[1], h[0]))
        for window in (1, 5, 50, 500):
            got = best_chunks(store, fts, chunks, "q", {"q": query}, window)
            assert [(d, s) for d, s, _ in got] == [(d, s) for d, s, _ in expected[:window]]
            own = {c: -r for c, r in store.execute(f"SELECT rowid, rank FROM {fts}(?)", (query,))}
            assert all(doc_of[c] == d and own[c] == s for d, s, c in got)   # a chunk holding the best score


def test_the_text_side_gives_the_same_results_beside_the_model_or_before_it(cur, monkeypatch):
    """hybrid_match's text side runs in a worker thread while the model embeds the query when a core is
    free (hybrid.spare_core), else on the caller's thread first: the rows are the same either way."""
    from tesseradb.sql.search import hybrid
    _make(cur, 60)
    sql = "SELECT id, weight(), knn_dist(), hybrid_score() FROM t WHERE hybrid_match(?) LIMIT 20"
    started = []
    start = hybrid.Search.start
    monkeypatch.setattr(hybrid.Search, "start", lambda self, *a: (started.append(a), start(self, *a))[1])
    for text in ("rotate the logs", "certificate replication", "tables and queries", "the"):
        runs = []
        for threaded in (True, False, True):
            monkeypatch.setattr(hybrid, "spare_core", lambda threaded=threaded: threaded)
            runs.append(cur.execute(sql, (text,)).fetchall())
        assert runs[0] == runs[1] == runs[2] and len(runs[0]) == 20
    assert len(started) >= 6                # the worker thread ran the text side (a re-executed statement)


def test_a_limited_query_shows_the_rows_of_the_whole_fused_list(cur):
    """With a LIMIT and nothing that reorders or filters after fusion, only the fused rows that can be
    shown (scoring at least the last shown one) fill the TEMP table the query joins: the rows, scores
    and their order are those of the whole fused list ordered as the query orders it."""
    _make(cur, 60)
    cols = "id, weight(), knn_dist(), hybrid_score()"
    for text in ("rotate the logs", "certificate replication", "tables and queries", "the", "node"):
        whole = cur.execute(f"SELECT {cols} FROM t WHERE hybrid_match(?) ORDER BY hybrid_score() DESC, id LIMIT 50",
                            (text,)).fetchall()
        assert len(whole) == 50
        for limit, offset in ((1, 0), (5, 0), (10, 3), (20, 0), (7, 40)):
            got = cur.execute(f"SELECT {cols} FROM t WHERE hybrid_match(?) LIMIT {limit} OFFSET {offset}", (text,)).fetchall()
            assert got == whole[offset:offset + limit], (text, limit, offset)


def test_a_core_is_spare_while_fewer_threads_are_runnable_than_cores(monkeypatch, tmp_path):
    from tesseradb.embed.model import cpu_count
    from tesseradb.sql.search import cores
    n = cpu_count()
    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(cores, "LOADAVG", str(loadavg))
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (float(n + 5), 0.0, 0.0))  # the minute's average does not decide
    loadavg.write_text(f"{n + 5}.00 0.50 0.25 {n - 1}/412 90210\n")
    assert cores.running_now() == n - 1 and cores.spare_core() is True
    loadavg.write_text(f"0.00 0.00 0.00 {n}/412 90210\n")
    assert cores.spare_core() is False


def test_a_core_is_spare_while_the_load_average_leaves_one_where_no_count_is_given(monkeypatch, tmp_path):
    from tesseradb.embed.model import cpu_count
    from tesseradb.sql.search import cores
    monkeypatch.setattr(cores, "LOADAVG", str(tmp_path / "missing"))
    assert cores.running_now() is None
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert cores.spare_core() is True
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (float(cpu_count()), 0.0, 0.0))
    assert cores.spare_core() is False



def test_an_older_chunk_index_is_rebuilt_once_on_open(db_path, caplog):
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    cur.execute(f"CREATE TABLE n (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='32' overlap_tokens='0')")
    cur.execute("INSERT INTO n (id, body) VALUES (1, 'log rotation happens weekly'), (2, 'cats sleep')")
    con.commit()
    con.close()
    raw = apsw.Connection(db_path)          # what the previous release built: the table's tokenizer (unstemmed)
    name = raw.execute("SELECT name FROM sqlite_master WHERE name LIKE '\\_tessera\\_ftsc\\_%' ESCAPE '\\' "
                       "AND type = 'table' AND sql LIKE 'CREATE VIRTUAL%'").fetchone()[0]
    sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    raw.execute(f'DROP TABLE "{name}"')
    raw.execute(sql.replace("porter unicode61", "unicode61"))
    raw.execute(f"INSERT INTO \"{name}\" (rowid, body) SELECT chunk_id, 'log rotation happens weekly' FROM "
                f"\"{name.replace('_tessera_ftsc_', '_tessera_chunks_')}\" WHERE doc_id = 1")
    raw.close()
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        con = tesseradb.connect(db_path)
    assert any("rebuilt with its new tokenizer" in r.message for r in caplog.records)
    assert any(" of " in r.message and "full-text index" in r.message for r in caplog.records)    # progress
    found = [r[0] for r in con.execute("SELECT id, weight() FROM n WHERE hybrid_match('rotating logs')") if r[1]]
    assert found == [1]
    assert con.execute("CHECK TABLE n").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        tesseradb.connect(db_path).close()
    assert not any("building" in r.message for r in caplog.records)       # once


def test_a_chunk_index_without_the_heading_field_is_rebuilt_once_on_open(db_path, caplog):
    """A file whose chunk-level index holds each chunk's span only (the layout before the entries got
    the chunk's context line or heading path as a field): its chunks are findable by their own words
    only until the index is rebuilt, once, on open."""
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    cur.execute(f"CREATE TABLE h (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='24' overlap_tokens='0')")
    body = "# Zeppelins\n\n" + " ".join(WORDS[i % 10] + " rides the train today." for i in range(40))
    cur.execute("INSERT INTO h (id, body) VALUES (1, ?)", (body,))
    con.commit()
    chunks = con.execute("SELECT LENGTH(v) FROM h WHERE id = 1").fetchone()[0]
    con.close()
    raw = apsw.Connection(db_path)
    table, trigger = raw.execute("SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE "
                                 "'\\_tessera\\_ftsc\\_%\\_ai' ESCAPE '\\'").fetchone()    # on the chunk table
    fts = trigger[:-len("_ai")]
    span = """substr(COALESCE(CAST(r."body" AS TEXT), ''), NEW.start + 1, NEW."end" - NEW.start)"""
    with raw:                                  # the previous layout: one field, the span
        raw.execute(f'DROP TRIGGER "{trigger}"')
        raw.execute(f'DROP TABLE "{fts}"')
        raw.execute(f"""CREATE VIRTUAL TABLE "{fts}" USING fts5(body, content='', contentless_delete=1, """
                    """tokenize='porter unicode61 tokenchars ''_''')""")
        raw.execute(f'CREATE TRIGGER "{trigger}" AFTER INSERT ON "{table}" WHEN NEW.start IS NOT NULL BEGIN '
                    f'INSERT INTO "{fts}" (rowid, body) SELECT NEW.chunk_id, {span} FROM "h" r WHERE r.id = NEW.doc_id; END')
        raw.execute(f'INSERT INTO "{fts}" (rowid, body) SELECT k.chunk_id, substr(r.body, k.start + 1, '
                    f'k."end" - k.start) FROM "{table}" k JOIN h r ON r.id = k.doc_id')
    count = f"""SELECT COUNT(*) FROM "{fts}"('zeppelins')"""
    assert raw.execute(count).fetchone()[0] == 1            # only the chunk whose text holds the heading
    raw.close()
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        con = tesseradb.connect(db_path)
    assert any("heading path" in r.message and "rebuilt" in r.message for r in caplog.records)
    assert con.execute("CHECK TABLE h").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    assert apsw.Connection(db_path).execute(count).fetchone()[0] == chunks > 3   # each chunk: its heading path
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        tesseradb.connect(db_path).close()
    assert not any("building" in r.message for r in caplog.records)       # once


def test_the_heading_path_is_a_field_weighted_above_the_text(cur):
    """hybrid_match's text side finds a chunk by the headings above it, and a query word in a chunk's
    heading path counts more than the same word in another chunk's text."""
    cur.execute(f"CREATE TABLE m (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='24' overlap_tokens='0')")
    filler = " ".join(WORDS[i % 8] + " waits." for i in range(30))
    cur.executemany("INSERT INTO m (id, body) VALUES (?, ?)", [
        (1, "# Zeppelins\n\n" + filler),                      # the word: the heading, over every chunk
        (2, filler + " A zeppelins note. " + filler)])         # the word once in one chunk's text
    text = cur.execute("SELECT id, weight() FROM m WHERE hybrid_match('zeppelins') ORDER BY weight() DESC").fetchall()
    assert [d for d, w in text if w is not None] == [1, 2]
