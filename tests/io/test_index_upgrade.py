"""Issue 32: a table `tessera index` made before (``modified timestamp``, Unix seconds) is upgraded when
the file is opened: ``modified`` becomes a DATETIME holding the same instants, as ISO text."""
from __future__ import annotations

import json
import logging

import apsw

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
    _as_previous_release(db_path)
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


def _as_previous_release(path: str) -> None:
    """The previous release wrote no ``mysql_dates`` mark in its catalog entries."""
    raw = apsw.Connection(path)
    for name, text in list(raw.execute("SELECT name, definition FROM _tessera_catalog")):
        definition = json.loads(text)
        del definition["mysql_dates"]
        raw.execute("UPDATE _tessera_catalog SET definition = ? WHERE name = ?", (json.dumps(definition), name))
    raw.close()


def test_a_table_made_now_in_that_layout_keeps_its_timestamp(db_path, caplog):
    con = tesseradb.connect(db_path)
    con.execute(OLD_LAYOUT)
    con.execute("INSERT INTO docs (id, path, title, body, modified) VALUES (1, 'a.md', 'A', 'alpha', 1796173302)")
    con.commit()
    con.close()
    with caplog.at_level(logging.WARNING, logger="tesseradb.dates"):
        con = tesseradb.connect(db_path)
    assert caplog.text == ""
    types = {r[0]: r[1] for r in con.execute("SHOW COLUMNS FROM docs").fetchall()}
    assert types["modified"].lower() == "timestamp"
    assert con.execute("SELECT modified FROM docs WHERE id = 1").fetchone() == (1796173302,)
    con.close()
