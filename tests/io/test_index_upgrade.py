"""Issue 32: a table `tessera index` made before (``modified timestamp``, Unix seconds) is upgraded when
the file is opened: ``modified`` becomes a DATETIME holding the same instants, as ISO text."""
from __future__ import annotations

import tesseradb

OLD_LAYOUT = ("CREATE TABLE docs (path string UNIQUE, title text, body text, meta json, modified timestamp, "
              "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
              "model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='markdown' "
              "max_tokens='256' overlap_tokens='32')")


def test_an_old_index_table_gets_a_datetime_modified_with_the_same_instants(db_path):
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    cur.execute(OLD_LAYOUT)
    cur.execute("CREATE TABLE mine (path string, modified timestamp)")        # another layout: left alone
    cur.execute("INSERT INTO docs (id, path, title, body, modified) VALUES (1, 'a.md', 'A', 'alpha', 1796173302)")
    cur.execute("INSERT INTO mine (id, path, modified) VALUES (1, 'a.md', 1796173302)")
    con.commit()
    con.close()
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    types = {r[0]: r[1] for r in cur.execute("SHOW COLUMNS FROM docs").fetchall()}
    assert types["modified"].lower().startswith("datetime")
    (value,) = cur.execute("SELECT CAST(modified AS CHAR) FROM docs WHERE id = 1").fetchone()
    assert value == "2026-12-02 01:01:42"
    assert cur.execute("SELECT id FROM docs WHERE modified >= '2026-12-02' AND modified < '2026-12-03'").fetchall() \
        == [(1,)]
    assert cur.execute("SELECT modified FROM mine").fetchone() == (1796173302,)
    con.close()
